#include "launchexportdialog.h"

#include "views/format.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QFileDialog>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QToolButton>
#include <QVBoxLayout>

namespace sp::app {

namespace {
constexpr ServingEngine kEngines[] = {ServingEngine::Vllm, ServingEngine::Sglang, ServingEngine::Trtllm,
                                      ServingEngine::Dynamo};
constexpr ServingEngine kWorkers[] = {ServingEngine::Vllm, ServingEngine::Sglang, ServingEngine::Trtllm};

QString engineTitle(ServingEngine e) {
    switch (e) {
    case ServingEngine::Vllm:
        return QStringLiteral("vLLM");
    case ServingEngine::Sglang:
        return QStringLiteral("SGLang");
    case ServingEngine::Trtllm:
        return QStringLiteral("TensorRT-LLM");
    case ServingEngine::Dynamo:
        return QStringLiteral("NVIDIA Dynamo");
    }
    return {};
}
} // namespace

LaunchExportDialog::LaunchExportDialog(const QString& startDir, QWidget* parent) : QDialog(parent) {
    setWindowTitle(tr("Export Launch Files"));
    auto* form = new QFormLayout;
    m_engine = new QComboBox(this);
    for (ServingEngine e : kEngines) m_engine->addItem(engineTitle(e), int(e));
    form->addRow(tr("&Engine"), m_engine);
    m_version = new QComboBox(this);
    m_version->setToolTip(tr("The engine release whose argument parser the flags were read from"));
    form->addRow(tr("&Version"), m_version);
    m_worker = new QComboBox(this);
    for (ServingEngine e : kWorkers) m_worker->addItem(engineTitle(e), int(e));
    m_worker->setToolTip(tr("The engine Dynamo's workers run"));
    form->addRow(tr("Dynamo &worker"), m_worker);
    m_adapt = new QCheckBox(
        tr("Export the nearest layout the version can run (with a note) instead of refusing"), this);
    m_adapt->setChecked(true);
    form->addRow(QString(), m_adapt);
    auto* dirRow = new QHBoxLayout;
    m_dir = new QLineEdit(startDir, this);
    m_dir->setToolTip(tr("Receives node0.sh, node1.sh, ..., plan.yaml and NOTES.txt"));
    auto* browse = new QToolButton(this);
    browse->setText(QStringLiteral("..."));
    dirRow->addWidget(m_dir, 1);
    dirRow->addWidget(browse);
    auto* dirLabel = new QLabel(tr("&Folder"), this);
    dirLabel->setBuddy(m_dir);
    form->addRow(dirLabel, dirRow);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
    m_ok = buttons->button(QDialogButtonBox::Ok);
    m_ok->setText(tr("Export"));
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(form);
    layout->addWidget(buttons);

    connect(m_engine, &QComboBox::currentIndexChanged, this, [this] { fillVersions(); });
    connect(m_dir, &QLineEdit::textChanged, this, [this] { updateOk(); });
    connect(browse, &QToolButton::clicked, this, [this] {
        const QString d = QFileDialog::getExistingDirectory(this, tr("Launch Files Folder"), m_dir->text());
        if (!d.isEmpty()) m_dir->setText(d);
    });
    connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    fillVersions();
}

void LaunchExportDialog::fillVersions() {
    const auto e = ServingEngine(m_engine->currentData().toInt());
    m_version->clear();
    const auto& rows = engineVersions(e);
    for (auto it = rows.rbegin(); it != rows.rend(); ++it) // newest first
        m_version->addItem(views::qs(it->version), views::qs(it->version));
    m_worker->setEnabled(e == ServingEngine::Dynamo);
    updateOk();
}

void LaunchExportDialog::updateOk() {
    m_ok->setEnabled(!m_dir->text().trimmed().isEmpty() && m_version->count() > 0);
}

ExportOptions LaunchExportDialog::options() const {
    ExportOptions o;
    o.engine = ServingEngine(m_engine->currentData().toInt());
    o.version = m_version->currentData().toString().toStdString();
    o.dynamoWorker = ServingEngine(m_worker->currentData().toInt());
    o.adapt = m_adapt->isChecked();
    return o;
}

QString LaunchExportDialog::directory() const {
    return m_dir->text().trimmed();
}

void LaunchExportDialog::setOptions(const ExportOptions& o) {
    m_engine->setCurrentIndex(std::max(0, m_engine->findData(int(o.engine))));
    if (!o.version.empty()) {
        const int i = m_version->findData(views::qs(o.version));
        if (i >= 0) m_version->setCurrentIndex(i);
    }
    m_worker->setCurrentIndex(std::max(0, m_worker->findData(int(o.dynamoWorker))));
    m_adapt->setChecked(o.adapt);
}

void LaunchExportDialog::setDirectory(const QString& dir) {
    m_dir->setText(dir);
}

} // namespace sp::app
