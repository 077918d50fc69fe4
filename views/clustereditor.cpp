#include "views/clustereditor.h"

#include "core/io/formats.h"
#include "views/format.h"
#include "views/scenarioeditor_p.h"

#include <QComboBox>
#include <QDialogButtonBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QTimer>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

namespace sp::views {

using editor::kErrorStyle;
using editor::kInfoStyle;
using editor::makeNote;

namespace {

/// 3.35 -> "3.35", 1979 -> "1,979", 0.5 -> "0.5": figures as the database writes them, with separators.
QString num(double v) {
    if (v == std::floor(v) && std::abs(v) < 1e15) return formatInteger(v);
    return QString::number(v, 'g', 6);
}
/// A field's text for a value: exact, so that an unchanged field gives back the value it showed.
QString exact(double v) {
    return QString::number(v, 'g', 12);
}

/// A number in [lo, hi]; empty text is `empty`.
QString parseNumber(const QString& text, double lo, double hi, double empty, double& out) {
    QString t = text.trimmed();
    t.remove(QLatin1Char(','));
    if (t.isEmpty()) {
        out = empty;
        return {};
    }
    bool ok = false;
    out = t.toDouble(&ok);
    if (!ok || !std::isfinite(out) || out < lo || out > hi)
        return QObject::tr("expected a number from %1 to %2").arg(num(lo), num(hi));
    return {};
}
/// The cluster file's readers refuse line breaks and other control characters in names.
QString checkText(const QString& t) {
    for (QChar ch : t)
        if (ch.category() == QChar::Other_Control) return QObject::tr("no line breaks or control characters");
    return {};
}

} // namespace

ClusterEditor::ClusterEditor(const Cluster& c, QWidget* parent)
    : QDialog(parent), m_cluster(c), m_original(c), m_hasOwnGpu(!databaseGpu(c.gpu)) {
    setWindowTitle(tr("Edit Cluster"));
    auto* lay = new QVBoxLayout(this);
    auto* columns = new QHBoxLayout;
    lay->addLayout(columns);
    auto* left = new QVBoxLayout;
    columns->addLayout(left, 1);
    auto form = [](QGroupBox* g) {
        auto* f = new QFormLayout(g);
        f->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
        f->setLabelAlignment(Qt::AlignRight | Qt::AlignVCenter);
        f->setVerticalSpacing(4);
        return f;
    };

    auto* cg = new QGroupBox(tr("Cluster"), this);
    cg->setMinimumWidth(440); // room for the fields beside their labels in each column
    QFormLayout* cf = form(cg);
    left->addWidget(cg);
    addField(cf, QStringLiteral("name"), tr("Name"),
             tr("The cluster's name, as the panel and the exports show it"));
    m_gpu = new QComboBox(this);
    // As wide as the database's entries (fillGpus): a cluster file's own GPU may have a long name, of which the
    // box shows what fits and the list all.
    m_gpu->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    m_gpu->setToolTip(tr("The GPU from the built-in database (resources/gpus.yaml): its figures, its NVLink "
                         "domain and link, its reference NIC and its family's efficiency factors"));
    cf->addRow(tr("GPU type"), m_gpu);
    addField(cf, QStringLiteral("nodes"), tr("Nodes (NVLink domains)"),
             tr("Scale-up domains in the cluster: an 8-GPU HGX host is one, a GB200 NVL72 rack is one"));
    addField(cf, QStringLiteral("gpus_per_node"), tr("GPUs per NVLink domain"),
             tr("GPUs joined by NVLink (Infinity Fabric) in one domain; collectives among them use the "
                "scale-up link, wider ones the NIC"));
    addField(cf, QStringLiteral("gpus_per_host"), tr("GPUs per host"),
             tr("GPUs per server (compute tray); must divide the GPUs per NVLink domain; empty: one host per "
                "domain. Used by the exports (one launch script per host) and the topology drawing"),
             tr("one host per domain"));
    addField(
        cf, QStringLiteral("price_per_gpu_hour"), tr("Price per GPU-hour (USD)"),
        tr("What one GPU costs an hour: the cost per million tokens is all the GPUs' price over the tokens "
           "served. Choosing a GPU type puts in the database's cloud list price (its source and date "
           "below); empty: unknown"),
        tr("unknown"));
    left->addStretch(1);
    // Three columns and the long texts across the width below (in two, wrapped figures were cut at 1280x720).
    auto* middle = new QVBoxLayout;
    columns->addLayout(middle, 1);
    auto* ng = new QGroupBox(tr("Network"), this);
    ng->setMinimumWidth(300);
    QFormLayout* nf = form(ng);
    middle->addWidget(ng);
    addField(nf, QStringLiteral("nvlink_name"), tr("Scale-up link"),
             tr("The NVLink / Infinity Fabric's name"));
    addField(nf, QStringLiteral("nvlink_gb_s"), tr("Scale-up GB/s per GPU"),
             tr("NVLink bandwidth per GPU, one direction (the datasheets' totals count both)"));
    addField(nf, QStringLiteral("nvlink_latency_us"), tr("Scale-up latency (\u00b5s)"),
             tr("Per message step"));
    addField(nf, QStringLiteral("mesh_link_gb_s"), tr("Mesh link GB/s"),
             tr("For a domain wired point to point (AMD Infinity Fabric): one link's GB/s, one direction; "
                "empty for a switched domain (NVSwitch)"),
             tr("switched"));
    addField(nf, QStringLiteral("nic_name"), tr("Scale-out network"),
             tr("The NICs' network (InfiniBand, RoCE)"));
    addField(nf, QStringLiteral("nic_gbit_s"), tr("NIC Gb/s per GPU"),
             tr("Scale-out NIC line rate per GPU; needed when the cluster has more than one node"),
             tr("none (one node)"));
    addField(nf, QStringLiteral("nic_latency_us"), tr("NIC latency (\u00b5s)"), tr("Per message step"));
    middle->addStretch(1);

    auto* fg = new QGroupBox(tr("GPU figures (resources/gpus.yaml)"), this);
    m_figures = form(fg);
    fg->setMinimumWidth(320);
    auto* right = new QVBoxLayout;
    columns->addLayout(right, 1);
    right->addWidget(fg);
    right->addStretch(1);
    auto* sg = new QGroupBox(tr("Efficiency, price and sources"), this);
    m_sources = form(sg);
    lay->addWidget(sg);

    // What the last GPU choice set, across the dialog's width (a list of changes is long).
    m_gpuNote = makeNote(this, kInfoStyle);
    lay->addWidget(m_gpuNote);
    m_summary = new QLabel(this);
    m_summary->setWordWrap(true);
    lay->addWidget(m_summary);
    m_status = makeNote(this, kErrorStyle);
    lay->addWidget(m_status);
    m_buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
    applyButton()->setText(tr("Apply to Scenario"));
    applyButton()->setToolTip(tr("Use this cluster in the scenario (Edit > Undo takes it back)"));
    QPushButton* save = m_buttons->addButton(tr("Save As..."), QDialogButtonBox::ActionRole);
    save->setToolTip(tr("Write the cluster as a cluster file (YAML)"));
    lay->addWidget(m_buttons);
    connect(m_buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(m_buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    connect(save, &QPushButton::clicked, this, &ClusterEditor::saveDialog);

    fillGpus();
    connect(m_gpu, &QComboBox::currentIndexChanged, this, &ClusterEditor::gpuChosen);
    showCluster();
    validate();
}

QWidget* ClusterEditor::addField(QFormLayout* form, const QString& key, const QString& label,
                                 const QString& tip, const QString& placeholder) {
    Field f;
    f.label = label;
    f.edit = new QLineEdit(this);
    f.edit->setToolTip(tip);
    f.edit->setPlaceholderText(placeholder);
    f.error = makeNote(this, kErrorStyle);
    auto* box = new QWidget(this);
    auto* v = new QVBoxLayout(box);
    v->setContentsMargins(0, 0, 0, 0);
    v->setSpacing(1);
    v->addWidget(f.edit);
    v->addWidget(f.error);
    form->addRow(label, box);
    m_fields.insert(key, f);
    const bool counts = key == QStringLiteral("nodes") || key == QStringLiteral("gpus_per_node");
    connect(f.edit, &QLineEdit::textEdited, this, [this, counts] {
        if (counts) followName();
        validate();
    });
    return box;
}

QLineEdit* ClusterEditor::field(const QString& key) const {
    return m_fields.value(key).edit;
}

QString ClusterEditor::fieldError(const QString& key) const {
    return m_errors.value(key);
}

QStringList ClusterEditor::errors() const {
    QStringList out;
    for (auto it = m_errors.begin(); it != m_errors.end(); ++it) out << it.value();
    out.sort();
    return out;
}

QString ClusterEditor::gpuNote() const {
    return m_gpuNote->isVisibleTo(this) ? m_gpuNote->text() : QString();
}

QPushButton* ClusterEditor::applyButton() const {
    return m_buttons->button(QDialogButtonBox::Ok);
}

void ClusterEditor::fillGpus() {
    m_loading = true;
    m_gpu->clear();
    if (m_hasOwnGpu) {
        m_gpu->addItem(tr("%1 (the cluster file's own figures)").arg(qs(m_original.gpu.name)), QString());
        m_gpu->setItemData(0, tr("Not in resources/gpus.yaml: the figures the cluster file gives"),
                           Qt::ToolTipRole);
    }
    qsizetype longest = 0;
    for (const GpuSpec& s : gpuDatabase()) {
        m_gpu->addItem(QStringLiteral("%1  [%2]").arg(qs(s.gpu.name), qs(s.id)), qs(s.id));
        m_gpu->setItemData(m_gpu->count() - 1, qs(s.source), Qt::ToolTipRole);
        longest = std::max(longest, m_gpu->itemText(m_gpu->count() - 1).size());
    }
    m_gpu->setMinimumContentsLength(int(longest) + 2);
    const GpuSpec* spec = databaseGpu(m_cluster.gpu);
    m_gpu->setCurrentIndex(spec ? m_gpu->findData(qs(spec->id)) : 0);
    m_loading = false;
    showFigures();
}

/// "16x8 H200 SXM 141GB": what the editor names a cluster whose name the user has not typed.
QString ClusterEditor::generatedName() const {
    return QStringLiteral("%1x%2 %3")
        .arg(m_fields[QStringLiteral("nodes")].edit->text().trimmed(),
             m_fields[QStringLiteral("gpus_per_node")].edit->text().trimmed(), qs(m_cluster.gpu.name));
}

void ClusterEditor::followName() {
    // A name the user typed stays; the one the cluster came with, or one the editor wrote, follows the GPU and
    // the counts ("32x8 H100 SXM" is not the name of 16 x 8 H200s).
    QLineEdit* name = m_fields[QStringLiteral("name")].edit;
    if (m_followedName.isEmpty() || name->text() != m_followedName) return;
    const bool loading = m_loading;
    m_loading = true;
    name->setText(generatedName());
    m_followedName = name->text();
    m_loading = loading;
}

bool ClusterEditor::chooseGpu(const QString& id) {
    const int i = m_gpu->findData(id);
    if (i < 0 || id.isEmpty()) return false;
    m_gpu->setCurrentIndex(i);
    return true;
}

void ClusterEditor::gpuChosen(int index) {
    if (m_loading || index < 0) return;
    const QString id = m_gpu->itemData(index).toString();
    Cluster next = m_cluster;
    if (const GpuSpec* spec = findGpu(id.toStdString())) {
        next = withGpu(m_cluster, *spec);
    } else {
        // The cluster's own GPU back, with the factors it came with and the links as they are.
        next.gpu = m_original.gpu;
        next.efficiency = m_original.efficiency;
        next.efficiencySource = m_original.efficiencySource;
    }
    const QStringList changes = clusterChanges(m_cluster, next);
    // The GPU's parts and the fields it sets; the others (name, nodes) keep what the user typed.
    m_cluster.gpu = next.gpu;
    m_cluster.efficiency = next.efficiency;
    m_cluster.efficiencySource = next.efficiencySource;
    m_loading = true;
    auto set = [this](const char* key, const QString& text) {
        m_fields[QLatin1String(key)].edit->setText(text);
    };
    set("gpus_per_node", exact(next.gpusPerNode));
    set("gpus_per_host", next.gpusPerHost > 0 ? exact(next.gpusPerHost) : QString());
    set("nvlink_name", qs(next.intraNode.name));
    set("nvlink_gb_s", exact(next.intraNode.gbPerS));
    set("nvlink_latency_us", exact(next.intraNode.latencyUs));
    set("mesh_link_gb_s",
        next.intraNode.meshLinkGbPerS > 0 ? exact(next.intraNode.meshLinkGbPerS) : QString());
    set("nic_name", qs(next.interNode.name));
    set("nic_gbit_s", next.interNode.gbPerS > 0 ? exact(next.interNode.gbPerS * 8) : QString());
    set("nic_latency_us", exact(next.interNode.latencyUs));
    set("price_per_gpu_hour", next.pricePerGpuHour > 0 ? exact(next.pricePerGpuHour) : QString());
    m_cluster.pricePerGpuHour = next.pricePerGpuHour;
    m_cluster.priceSource = next.priceSource;
    followName();
    m_loading = false;
    m_gpuNote->setText(
        changes.isEmpty()
            ? QString()
            : tr("Set from the database: %1; nodes kept%2.")
                  .arg(changes.join(QStringLiteral("; ")),
                       m_fields[QStringLiteral("name")].edit->text() == m_followedName
                           ? QString()
                           : tr(" and the name")));
    m_gpuNote->setVisible(!changes.isEmpty());
    validate();
    showFigures();
}

void ClusterEditor::fitHeight() {
    // A top-level window does not grow for its word-wrapped labels' heights at its width by itself.
    QLayout* l = layout();
    if (!l || !isVisible()) return;
    l->activate();
    const int h = l->hasHeightForWidth() ? l->totalHeightForWidth(width()) : l->totalSizeHint().height();
    if (h > height()) resize(width(), h);
}

void ClusterEditor::showEvent(QShowEvent* e) {
    QDialog::showEvent(e);
    fitHeight();
}

void ClusterEditor::showCluster() {
    m_loading = true;
    const Cluster& c = m_cluster;
    auto set = [this](const char* key, const QString& text) {
        m_fields[QLatin1String(key)].edit->setText(text);
    };
    set("name", qs(c.name));
    // A name that counts the cluster ("32x8 H100 SXM", "2x GB200 NVL72") follows its GPU and counts; any other
    // ("prod pod A") is the user's.
    m_followedName = qs(c.name).startsWith(QStringLiteral("%1x").arg(c.nodes)) ? qs(c.name) : QString();
    set("nodes", exact(c.nodes));
    set("gpus_per_node", exact(c.gpusPerNode));
    set("gpus_per_host", c.gpusPerHost > 0 ? exact(c.gpusPerHost) : QString());
    set("nvlink_name", qs(c.intraNode.name));
    set("nvlink_gb_s", exact(c.intraNode.gbPerS));
    set("nvlink_latency_us", exact(c.intraNode.latencyUs));
    set("mesh_link_gb_s", c.intraNode.meshLinkGbPerS > 0 ? exact(c.intraNode.meshLinkGbPerS) : QString());
    set("nic_name", qs(c.interNode.name));
    set("nic_gbit_s", c.interNode.gbPerS > 0 ? exact(c.interNode.gbPerS * 8) : QString());
    set("nic_latency_us", exact(c.interNode.latencyUs));
    set("price_per_gpu_hour", c.pricePerGpuHour > 0 ? exact(c.pricePerGpuHour) : QString());
    m_loading = false;
}

void ClusterEditor::validate() {
    if (m_loading) return;
    Cluster c = m_cluster;
    QHash<QString, QString> errors;
    auto text = [this](const char* key) { return m_fields[QLatin1String(key)].edit->text(); };
    auto err = [&errors](const char* key, const QString& e) {
        if (!e.isEmpty() && !errors.contains(QLatin1String(key))) errors.insert(QLatin1String(key), e);
    };
    qint64 n = 0;
    double x = 0;

    err("name", checkText(text("name")));
    c.name = text("name").trimmed().toStdString();
    err("nodes", parseWholeNumber(text("nodes"), 1, 100000, n));
    if (!errors.contains(QStringLiteral("nodes"))) c.nodes = int(n);
    // 1,024 at most: the limit of a cluster file that gives its GPU inline, as a saved one does.
    err("gpus_per_node", parseWholeNumber(text("gpus_per_node"), 1, 1024, n));
    if (!errors.contains(QStringLiteral("gpus_per_node"))) c.gpusPerNode = int(n);
    if (text("gpus_per_host").trimmed().isEmpty()) {
        c.gpusPerHost = 0;
    } else {
        err("gpus_per_host", parseWholeNumber(text("gpus_per_host"), 1, 1024, n));
        if (!errors.contains(QStringLiteral("gpus_per_host"))) {
            if (n > c.gpusPerNode || c.gpusPerNode % n != 0)
                err("gpus_per_host", tr("must divide the GPUs per NVLink domain (%1): a host's GPUs sit in "
                                        "one domain")
                                         .arg(c.gpusPerNode));
            c.gpusPerHost = n == c.gpusPerNode ? 0 : int(n);
        }
    }

    err("nvlink_name", checkText(text("nvlink_name")));
    c.intraNode.name = text("nvlink_name").trimmed().toStdString();
    err("nvlink_gb_s", parseNumber(text("nvlink_gb_s"), 1e-3, 1e6, 0, x));
    if (x <= 0) err("nvlink_gb_s", tr("give the link's GB/s per GPU"));
    c.intraNode.gbPerS = x;
    err("nvlink_latency_us", parseNumber(text("nvlink_latency_us"), 0, 1e6, 0, x));
    c.intraNode.latencyUs = x;
    err("mesh_link_gb_s", parseNumber(text("mesh_link_gb_s"), 0, 1e6, 0, x));
    c.intraNode.meshLinkGbPerS = x;

    err("nic_name", checkText(text("nic_name")));
    err("nic_gbit_s", parseNumber(text("nic_gbit_s"), 0, 1e7, 0, x));
    const double nic = x;
    err("nic_latency_us", parseNumber(text("nic_latency_us"), 0, 1e6, 0, x));
    if (nic > 0) {
        c.interNode = Link{text("nic_name").trimmed().toStdString(), nic / 8.0, x};
    } else {
        if (c.nodes > 1)
            err("nic_gbit_s", tr("%1 nodes need a NIC bandwidth: collectives across nodes run over it")
                                  .arg(formatInteger(c.nodes)));
        c.interNode = Link{}; // one node: no scale-out network (the file leaves inter_node out)
    }

    err("price_per_gpu_hour", parseNumber(text("price_per_gpu_hour"), 0, 1e4, 0, x));
    if (!errors.contains(QStringLiteral("price_per_gpu_hour")) && x != c.pricePerGpuHour) {
        // The user's own price: the file says so (the database's source no longer describes it).
        c.pricePerGpuHour = x;
        c.priceSource = x > 0 ? "the cluster file's price_per_gpu_hour" : "";
    }

    m_errors.clear();
    for (auto it = m_fields.begin(); it != m_fields.end(); ++it) {
        const QString e = errors.value(it.key());
        if (!e.isEmpty()) m_errors.insert(it.key(), tr("%1: %2").arg(it->label, e));
        it->edit->setStyleSheet(
            e.isEmpty() ? QString()
                        : QStringLiteral("QLineEdit { border: 1px solid #dc2626; background: #fef2f2; }"));
        it->edit->setProperty("invalid", !e.isEmpty());
        it->error->setText(e);
        it->error->setVisible(!e.isEmpty());
    }
    if (m_errors.isEmpty()) m_cluster = c;
    applyButton()->setEnabled(m_errors.isEmpty());
    m_status->setStyleSheet(QString::fromLatin1(kErrorStyle));
    m_status->setText(m_errors.isEmpty() ? QString()
                                         : tr("Fix the outlined fields to apply or save the cluster."));
    m_status->setVisible(!m_errors.isEmpty());

    const Cluster& v = m_cluster;
    QString summary = tr("%1 GPUs: %2 NVLink domain(s) of %3, %4 host(s) of %5")
                          .arg(formatInteger(v.gpus()), formatInteger(v.nodes), formatInteger(v.gpusPerNode),
                               formatInteger(v.hosts()), formatInteger(v.hostGpus()));
    if (v.pricePerGpuHour > 0)
        summary += tr("; $%1 an hour").arg(formatInteger(v.pricePerGpuHour * v.gpus()));
    m_summary->setText(summary);
}

void ClusterEditor::showFigures() {
    while (m_figures->rowCount() > 0) m_figures->removeRow(0);
    while (m_sources->rowCount() > 0) m_sources->removeRow(0);
    const QString id = m_gpu->currentData().toString();
    const GpuSpec* spec = findGpu(id.toStdString());
    const Gpu& g = spec ? spec->gpu : m_original.gpu;
    auto row = [this](const QString& label, const QString& value, QFormLayout* form = nullptr) {
        auto* l = new QLabel(value);
        l->setWordWrap(true);
        l->setTextInteractionFlags(Qt::TextSelectableByMouse);
        (form ? form : m_figures)->addRow(label, l);
    };
    row(tr("GPU"), spec ? tr("%1 (%2)").arg(qs(g.name), qs(spec->id)) : qs(g.name));
    const GpuFamily* family = spec ? findGpuFamily(spec->family) : nullptr;
    row(tr("Family"), family ? qs(family->name) : tr("unknown"));
    QString mem = tr("%1 GB").arg(num(g.hbmGB));
    if (g.memoryMiB > 0) mem += tr(" (%1 MiB as the driver reports it)").arg(num(g.memoryMiB));
    row(tr("Memory"), mem);
    row(tr("Bandwidth"), tr("%1 TB/s").arg(num(g.hbmTBs)));
    for (int d = 0; d < kDtypeCount; ++d) {
        const QString name = qs(kDtypeNames[d]).toUpper();
        row(tr("%1 TFLOP/s").arg(name), g.tflops[d] > 0 ? tr("%1 dense").arg(num(g.tflops[d])) : tr("none"));
    }
    if (spec) {
        QString link = tr("%1: %2 GB/s per GPU one way, %3 GPUs per domain")
                           .arg(qs(spec->scaleUp.name), num(spec->scaleUp.gbPerS), num(spec->scaleUpDomain));
        if (spec->scaleUp.meshLinkGbPerS > 0)
            link += tr(" (point to point, %1 GB/s a link)").arg(num(spec->scaleUp.meshLinkGbPerS));
        row(tr("NVLink"), link);
        row(tr("NIC"), tr("%1 Gb/s per GPU in the reference system").arg(num(spec->nicGbitPerGpu)));
        row(tr("Efficiency"), qs(familySource(family, spec->gpu.name)), m_sources);
        row(tr("Price"),
            spec->pricePerHourUsd > 0
                ? tr("$%1 a GPU-hour (%2)").arg(num(spec->pricePerHourUsd), qs(spec->priceSource))
                : tr("no public list price found"),
            m_sources);
        row(tr("Source"), qs(spec->source), m_sources);
    } else {
        row(tr("Efficiency"), qs(m_cluster.efficiencySource), m_sources);
        row(tr("Source"), tr("the cluster file's own figures (not in resources/gpus.yaml)"), m_sources);
    }
    // Once the new rows are shown (a shown layout shows the widgets added to it from a queued call).
    QTimer::singleShot(0, this, &ClusterEditor::fitHeight);
}

QString ClusterEditor::figuresText() const {
    QStringList lines;
    for (QFormLayout* f : {m_figures, m_sources})
        for (int r = 0; r < f->rowCount(); ++r) {
            QLayoutItem* label = f->itemAt(r, QFormLayout::LabelRole);
            auto* l = qobject_cast<QLabel*>(label ? label->widget() : nullptr);
            auto* v = qobject_cast<QLabel*>(f->itemAt(r, QFormLayout::FieldRole)->widget());
            lines << (l ? l->text() + QStringLiteral(": ") : QString()) + (v ? v->text() : QString());
        }
    return lines.join(QLatin1Char('\n'));
}

bool ClusterEditor::saveAs(const QString& path, QString* error) {
    QString e;
    if (!isValid()) {
        e = tr("The cluster was not saved: %1").arg(errors().join(QStringLiteral("; ")));
    } else if (saveClusterFile(m_cluster, path, &e)) {
        m_status->setStyleSheet(QString::fromLatin1(kInfoStyle));
        m_status->setText(tr("Saved to %1").arg(QFileInfo(path).fileName()));
        m_status->show();
        emit saved(path, m_cluster);
        return true;
    }
    m_status->setStyleSheet(QString::fromLatin1(kErrorStyle));
    m_status->setText(e);
    m_status->show();
    if (error) *error = e;
    return false;
}

void ClusterEditor::saveDialog() {
    const QString title = tr("Save Cluster As");
    const QString filter = tr("Cluster file (*.yaml *.yml)");
    QString path = m_askPath ? m_askPath(title, clusterFileName(m_cluster), filter)
                             : QFileDialog::getSaveFileName(this, title, clusterFileName(m_cluster), filter);
    if (path.isEmpty()) return;
    if (QFileInfo(path).suffix().isEmpty()) path += QStringLiteral(".yaml");
    saveAs(path);
}

void ClusterEditor::done(int r) {
    if (r == QDialog::Accepted && !isValid()) return; // the outlined fields say what to fix
    QDialog::done(r);
}

} // namespace sp::views
