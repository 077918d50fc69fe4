#include "views/scenarioeditor.h"

#include "views/format.h"
#include "views/scenarioeditor_p.h"

#include <QComboBox>
#include <QDir>
#include <QDoubleSpinBox>
#include <QEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QSpinBox>
#include <QToolButton>
#include <QVBoxLayout>

namespace sp::views {

using editor::kErrorStyle;
using editor::kInfoStyle;
using editor::makeNote;

namespace {

/// Combo and spin boxes take the wheel only when focused: scrolling the panel over them scrolls the panel.
class WheelGuard : public QObject {
public:
    using QObject::QObject;
    bool eventFilter(QObject* o, QEvent* e) override {
        if (e->type() == QEvent::Wheel) {
            auto* w = qobject_cast<QWidget*>(o);
            if (w && !w->hasFocus()) {
                e->ignore(); // goes on to the parent: the scroll area
                return true;
            }
        }
        return false;
    }
};

} // namespace

// ---------------------------------------------------------------------------------------------------------------

ScenarioEditor::ScenarioEditor(const QString& samplesDir, QWidget* parent)
    : QWidget(parent), m_samplesDir(samplesDir) {
    auto* lay = new QVBoxLayout(this);
    lay->setContentsMargins(6, 6, 6, 6);
    lay->setSpacing(6);
    auto group = [this, lay](const QString& title) {
        auto* g = new QGroupBox(title, this);
        auto* f = new QFormLayout(g);
        f->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
        f->setLabelAlignment(Qt::AlignRight | Qt::AlignVCenter);
        f->setContentsMargins(8, 4, 8, 4);
        f->setVerticalSpacing(4);
        lay->addWidget(g);
        return f;
    };

    buildModel(group(tr("Model")));
    buildCluster(group(tr("Cluster")));
    buildWorkload(group(tr("Workload")));
    buildConstraints(group(tr("Constraints")));
    lay->addStretch(1);

    auto* guard = new WheelGuard(this);
    QList<QWidget*> wheelTakers;
    for (QComboBox* c : findChildren<QComboBox*>()) wheelTakers << c;
    for (QAbstractSpinBox* b : findChildren<QAbstractSpinBox*>()) wheelTakers << b;
    for (QWidget* w : wheelTakers) {
        w->setFocusPolicy(Qt::StrongFocus); // not WheelFocus: a wheel over it does not focus it
        w->installEventFilter(guard);
    }
}

QString ScenarioEditor::pickerError(FileKind kind) const {
    const Picker* p = kind == FileKind::Model      ? &m_model
                      : kind == FileKind::Cluster  ? &m_cluster
                      : kind == FileKind::Workload ? &m_workload
                                                   : nullptr;
    return p && p->error->isVisibleTo(this) ? p->error->text() : QString();
}

QWidget* ScenarioEditor::buildPicker(Picker& p, const QString& subdir, const QString& what) {
    auto* w = new QWidget(this);
    auto* h = new QHBoxLayout(w);
    h->setContentsMargins(0, 0, 0, 0);
    p.combo = new QComboBox(w);
    p.combo->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    p.combo->setMinimumContentsLength(12);
    p.combo->setToolTip(tr("A sample %1 from %2").arg(what, QDir(m_samplesDir).filePath(subdir)));
    auto* open = new QToolButton(w);
    open->setText(QStringLiteral("\u2026"));
    open->setToolTip(tr("Open a %1 file...").arg(what));
    h->addWidget(p.combo, 1);
    h->addWidget(open);
    p.info = makeNote(this, kInfoStyle);
    p.info->show();
    p.error = makeNote(this, kErrorStyle);
    const QDir dir(QDir(m_samplesDir).filePath(subdir));
    for (const QFileInfo& fi :
         dir.entryInfoList({QStringLiteral("*.yaml"), QStringLiteral("*.yml"), QStringLiteral("*.json")},
                           QDir::Files, QDir::Name))
        p.paths << fi.absoluteFilePath();
    Picker* pp = &p;
    connect(p.combo, &QComboBox::activated, this, [this, pp](int i) { pickerActivated(*pp, i); });
    connect(open, &QToolButton::clicked, this, [this, pp] { openPart(*pp); });
    return w;
}

QWidget* ScenarioEditor::addField(QFormLayout* form, const QString& key, const QString& label,
                                  const QString& tip, std::function<QString(const QString&)> apply,
                                  std::function<QString()> show, const QString& placeholder) {
    Field f;
    f.edit = new QLineEdit(this);
    f.edit->setToolTip(tip);
    f.edit->setPlaceholderText(placeholder);
    f.error = makeNote(this, kErrorStyle);
    f.apply = std::move(apply);
    f.show = std::move(show);
    auto* box = new QWidget(this);
    auto* v = new QVBoxLayout(box);
    v->setContentsMargins(0, 0, 0, 0);
    v->setSpacing(1);
    v->addWidget(f.edit);
    v->addWidget(f.error);
    if (form) form->addRow(label, box);
    m_fields.insert(key, f);
    connect(f.edit, &QLineEdit::textEdited, this, [this, key, label](const QString& text) {
        Field& fld = m_fields[key];
        const QString e = fld.apply(text);
        setFieldError(fld, e.isEmpty() ? QString() : tr("%1: %2").arg(label, e));
        if (!e.isEmpty()) return;
        if (key == QLatin1String("nodes") || key == QLatin1String("gpus_per_node")) {
            m_clusterNote->hide(); // it told what the last picked file changed; the box now says "edited"
            refreshInfo();
            refreshClusterPicker();
            rebuildConstraints();
        } else {
            refreshSpace();
        }
        changed();
    });
    return box;
}

void ScenarioEditor::setFieldError(Field& f, const QString& error) {
    f.edit->setStyleSheet(
        error.isEmpty() ? QString()
                        : QStringLiteral("QLineEdit { border: 1px solid #dc2626; background: #fef2f2; }"));
    f.edit->setProperty("invalid", !error.isEmpty());
    f.error->setText(error);
    f.error->setVisible(!error.isEmpty());
}

QLineEdit* ScenarioEditor::field(const QString& key) const {
    return m_fields.value(key).edit;
}
QString ScenarioEditor::fieldError(const QString& key) const {
    const Field f = m_fields.value(key);
    return f.error && f.error->isVisibleTo(this) ? f.error->text() : QString();
}
DegreeChecks* ScenarioEditor::degreeChecks(Axis a) const {
    return m_degrees[size_t(a)];
}
QComboBox* ScenarioEditor::pinCombo(Op op) const {
    return m_pins[size_t(op)];
}

bool ScenarioEditor::isValid() const {
    return errors().isEmpty();
}

QStringList ScenarioEditor::errors() const {
    QStringList out;
    for (const Field& f : m_fields)
        if (f.error->isVisibleTo(this) && !f.error->text().isEmpty()) out << f.error->text();
    if (m_dtypeError->isVisibleTo(this)) out << m_dtypeError->text();
    if (m_specError->isVisibleTo(this)) out << m_specError->text();
    for (DegreeChecks* d : m_degrees)
        if (d && d->isVisibleTo(this) && d->noneChecked())
            out << tr("Constraints: allow at least one degree per axis");
    return out;
}

void ScenarioEditor::setScenario(const Scenario& s) {
    m_scenario = s;
    m_loading = true;
    for (Field& f : m_fields) {
        f.edit->setText(f.show());
        setFieldError(f, {});
    }
    for (Picker* p : {&m_model, &m_cluster, &m_workload}) p->error->hide();
    m_clusterNote->hide();
    m_loading = false;
    refreshFields();
}

void ScenarioEditor::refreshFields() {
    m_loading = true;
    m_phase->setCurrentIndex(int(m_scenario.workload.phase));
    m_prefillBudget->setCurrentIndex(m_scenario.constraints.searchPrefillBudget ? 1 : 0);
    m_prefillBudget->setEnabled(m_scenario.workload.phase != Phase::Decode);
    m_dtypes[0]->setCurrentIndex(int(m_scenario.model.weights));
    m_dtypes[1]->setCurrentIndex(int(m_scenario.model.activations));
    m_dtypes[2]->setCurrentIndex(int(m_scenario.model.kvCache));
    m_memoryRule->setCurrentIndex(int(m_scenario.constraints.memoryRule));
    m_headroom->setValue(m_scenario.constraints.memoryFraction);
    m_gpus->setValue(m_scenario.constraints.gpus);
    m_stageSplit->setCurrentIndex(int(m_scenario.constraints.stageSplit));
    m_granularity->setCurrentIndex(int(m_scenario.constraints.granularity));
    m_layerGroups->setValue(m_scenario.constraints.layerGroups);
    m_layerGroups->setEnabled(m_scenario.constraints.granularity == Granularity::LayerGroup);
    m_loading = false;
    checkDtypes();
    refreshPickers();
    refreshInfo();
    rebuildConstraints();
}

void ScenarioEditor::refreshPickers() {
    auto fill = [](Picker& p, const QString& currentName, auto&& equalsCurrent) {
        const QSignalBlocker b(p.combo);
        p.combo->clear();
        int match = -1;
        for (const QString& path : p.paths) {
            QString name = QFileInfo(path).completeBaseName();
            if (equalsCurrent(path, name)) match = p.combo->count();
            p.combo->addItem(name, path);
            p.combo->setItemData(p.combo->count() - 1, path, Qt::ToolTipRole);
        }
        if (match < 0) {
            p.combo->insertItem(0, QObject::tr("%1 (custom)").arg(currentName));
            match = 0;
        }
        p.combo->setCurrentIndex(match);
    };
    fill(m_model, qs(m_scenario.model.name), [this](const QString& path, QString&) {
        const auto m = loadModel(path.toStdString());
        return m.ok() && m.value() == m_scenario.model;
    });
    refreshClusterPicker();
    fill(m_workload, qs(m_scenario.workload.name), [this](const QString& path, QString&) {
        const auto w = loadWorkload(path.toStdString());
        return w.ok() && w.value() == m_scenario.workload;
    });
}

void ScenarioEditor::refreshInfo() {
    const Model& m = m_scenario.model;
    const ParamCounts pc = countParams(m);
    QString mi = tr("%1: %2 parameters (%3 active), %4 layers, hidden %5")
                     .arg(qs(m.name), qs(formatCount(pc.total)), qs(formatCount(pc.active)))
                     .arg(m.layers)
                     .arg(m.hidden);
    mi += m.attention.type == AttentionType::MLA
              ? tr(", MLA %1 heads").arg(m.attention.heads)
              : tr(", GQA %1/%2 heads").arg(m.attention.heads).arg(m.attention.kvHeads);
    if (m.moe.present()) mi += tr(", %1 experts top-%2").arg(m.moe.experts).arg(m.moe.topK);
    m_model.info->setText(mi);
    const Cluster& c = m_scenario.cluster;
    QString ci = tr("%1 GPUs: %2, %3 GB at %4 TB/s; NVLink %5 GB/s")
                     .arg(c.gpus())
                     .arg(qs(c.gpu.name))
                     .arg(c.gpu.hbmGB)
                     .arg(c.gpu.hbmTBs)
                     .arg(c.intraNode.gbPerS);
    if (c.nodes > 1) ci += tr("; NIC %1 Gb/s per GPU").arg(c.interNode.gbPerS * 8);
    if (const auto& d = m_scenario.decodeCluster)
        ci += tr(". A disaggregated plan's decode pool runs on the decode cluster: %1 GPUs: %2")
                  .arg(d->gpus())
                  .arg(qs(d->gpu.name));
    m_cluster.info->setText(ci);
    const Workload& w = m_scenario.workload;
    m_workload.info->setText(
        tr("%1: %2 batch").arg(qs(w.name), w.fixedBatch ? tr("fixed %1").arg(w.batch) : tr("automatic")));
}

void ScenarioEditor::changed() {
    if (m_loading) return;
    emit edited();
}

void ScenarioEditor::pickerActivated(Picker& p, int index) {
    const QString path = p.combo->itemData(index).toString();
    if (path.isEmpty()) return;
    loadPart(p.kind, path);
}

void ScenarioEditor::openPart(Picker& p) {
    const QString what = qs(nameOf(p.kind));
    const QString path = QFileDialog::getOpenFileName(
        this, tr("Open %1").arg(what), m_samplesDir, tr("YAML or JSON (*.yaml *.yml *.json);;All files (*)"));
    if (!path.isEmpty()) loadPart(p.kind, path);
}

bool ScenarioEditor::loadPart(FileKind kind, const QString& path, QString* error) {
    const std::string file = path.toStdString();
    Picker* picker = kind == FileKind::Model      ? &m_model
                     : kind == FileKind::Cluster  ? &m_cluster
                     : kind == FileKind::Workload ? &m_workload
                                                  : nullptr;
    auto fail = [&](const Error& e) {
        const QString msg = qs(e.str());
        if (picker) {
            picker->error->setText(msg);
            picker->error->show();
            refreshPickers();
        }
        if (error) *error = msg;
        emit failed(msg);
        return false;
    };
    switch (kind) {
    case FileKind::Model: {
        auto r = loadModel(file);
        if (!r) return fail(r.error());
        replaceModel(r.value(), path);
        break;
    }
    case FileKind::Cluster: {
        auto r = loadCluster(file);
        if (!r) return fail(r.error());
        replaceCluster(r.value(), path);
        break;
    }
    case FileKind::Workload: {
        auto r = loadWorkload(file);
        if (!r) return fail(r.error());
        replaceWorkload(r.value(), path);
        break;
    }
    case FileKind::Constraints: {
        auto r = loadConstraints(file);
        if (!r) return fail(r.error());
        replaceConstraints(r.value());
        break;
    }
    default: {
        Error e;
        e.file = file;
        e.message = "expected a model, cluster, workload or constraints file";
        return fail(e);
    }
    }
    if (picker) picker->error->hide();
    return true;
}

QComboBox* ScenarioEditor::pickerCombo(FileKind kind) const {
    return kind == FileKind::Model      ? m_model.combo
           : kind == FileKind::Cluster  ? m_cluster.combo
           : kind == FileKind::Workload ? m_workload.combo
                                        : nullptr;
}

void ScenarioEditor::replaceConstraints(const Constraints& c) {
    m_scenario.constraints = c;
    refreshFields();
    changed();
}

} // namespace sp::views
