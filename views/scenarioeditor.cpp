#include "views/scenarioeditor.h"

#include "core/cost/validity.h"
#include "core/search/space.h"
#include "views/clustereditor.h"
#include "views/format.h"
#include "views/scenarioeditor_p.h"

#include <QComboBox>
#include <QDir>
#include <QDoubleSpinBox>
#include <QEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QGridLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QSpinBox>
#include <QToolButton>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

namespace sp::views {

using editor::kErrorStyle;
using editor::kInfoStyle;
using editor::kNoticeStyle;
using editor::makeNote;

namespace {

QString parseNumber(const QString& text, double lo, double hi, double& out) {
    QString t = text.trimmed();
    if (t.isEmpty()) t = QStringLiteral("0");
    bool ok = false;
    out = t.toDouble(&ok);
    if (!ok || !std::isfinite(out) || out < lo || out > hi)
        return QObject::tr("expected a number from %1 to %2").arg(lo).arg(formatInteger(hi));
    return {};
}

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

QString phaseName(Phase p) {
    switch (p) {
    case Phase::Prefill:
        return QObject::tr("prefill");
    case Phase::Decode:
        return QObject::tr("decode");
    case Phase::Serving:
        return QObject::tr("serving (prefill + decode)");
    }
    return {};
}

/// Two fields on one form row: "first [....]  second label [....]" (a compact panel: the constraints fit
/// below without scrolling at 1600x1000). Each field's box keeps its error note under it.
QWidget* pairRow(QWidget* parent, QWidget* first, const QString& secondLabel, QWidget* second) {
    auto* w = new QWidget(parent);
    auto* h = new QHBoxLayout(w);
    h->setContentsMargins(0, 0, 0, 0);
    h->addWidget(first, 1);
    auto* l = new QLabel(secondLabel, w);
    h->addWidget(l, 0, Qt::AlignTop);
    h->addWidget(second, 1);
    // The label sits level with the line edits (their boxes grow downwards with an error).
    l->setMinimumHeight(first->sizeHint().height());
    return w;
}

/// kSearchedPrefillBudgets as "2,048, 4,096, ... or 32,768".
QString budgetList() {
    QStringList l;
    for (int64_t v : kSearchedPrefillBudgets) l << formatInteger(double(v));
    const QString last = l.takeLast();
    return QObject::tr("%1 or %2").arg(l.join(QStringLiteral(", ")), last);
}

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

    // Model.
    QFormLayout* mf = group(tr("Model"));
    mf->addRow(buildPicker(m_model, QStringLiteral("models"), tr("model")));
    mf->addRow(m_model.info);
    mf->addRow(m_model.error);
    const char* dtypeLabels[3] = {"Weights", "Act.", "KV"};
    const char* dtypeTips[3] = {"Data type of the weights (fp8 weights run fp8 GEMMs where the GPU has them)",
                                "Data type of the activations (sets the GEMM rate otherwise)",
                                "Data type of the KV cache"};
    // One row: "Weights [fp8]  Act. [bf16]  KV [bf16]".
    auto* dtypes = new QWidget(this);
    auto* dh = new QHBoxLayout(dtypes);
    dh->setContentsMargins(0, 0, 0, 0);
    for (int i = 0; i < 3; ++i) {
        m_dtypes[i] = new QComboBox(this);
        for (auto n : kDtypeNames) m_dtypes[i]->addItem(qs(n));
        m_dtypes[i]->setToolTip(tr(dtypeTips[i]));
        if (i > 0) {
            auto* l = new QLabel(tr(dtypeLabels[i]), dtypes);
            l->setToolTip(tr(dtypeTips[i]));
            dh->addWidget(l);
        }
        dh->addWidget(m_dtypes[i], 1);
        connect(m_dtypes[i], &QComboBox::activated, this, [this, i](int idx) {
            Dtype* target[3] = {&m_scenario.model.weights, &m_scenario.model.activations,
                                &m_scenario.model.kvCache};
            *target[i] = Dtype(idx);
            checkDtypes();
            refreshInfo();
            changed();
        });
    }
    mf->addRow(tr(dtypeLabels[0]), dtypes);
    m_dtypeError = makeNote(this, kErrorStyle);
    mf->addRow(m_dtypeError);

    // Cluster.
    QFormLayout* cf = group(tr("Cluster"));
    QWidget* clusterRow = buildPicker(m_cluster, QStringLiteral("clusters"), tr("cluster"));
    auto* editCluster = new QToolButton(clusterRow);
    editCluster->setText(tr("Edit\u2026"));
    editCluster->setToolTip(tr("Edit the cluster: GPU type, nodes, GPUs per NVLink domain and host, network; "
                               "save it as a cluster file"));
    clusterRow->layout()->addWidget(editCluster);
    connect(editCluster, &QToolButton::clicked, this, &ScenarioEditor::editCluster);
    cf->addRow(clusterRow);
    cf->addRow(m_cluster.info);
    m_clusterNote = makeNote(this, kNoticeStyle);
    cf->addRow(m_clusterNote);
    cf->addRow(m_cluster.error);
    QWidget* nodes = addField(
        nullptr, QStringLiteral("nodes"), tr("Nodes"), tr("Nodes in the cluster (each an NVLink domain)"),
        [this](const QString& t) {
            qint64 v;
            QString e = parseWholeNumber(t, 1, 100000, v);
            // Collectives across nodes run over the NICs: a one-node cluster file may have none.
            if (e.isEmpty() && v > 1 && m_scenario.cluster.interNode.gbPerS <= 0)
                e = tr("the cluster has no NIC between nodes; give it one in the cluster editor (Edit...)");
            if (e.isEmpty()) m_scenario.cluster.nodes = int(v);
            return e;
        },
        [this] { return QString::number(m_scenario.cluster.nodes); });
    QWidget* perNode = addField(
        nullptr, QStringLiteral("gpus_per_node"), tr("GPUs per node"), tr("GPUs in one node's NVLink domain"),
        [this](const QString& t) {
            qint64 v;
            QString e = parseWholeNumber(t, 1, 1024, v);
            // A host's GPUs sit in one domain (an NVL72 rack: 18 hosts of 4), as the cluster file's reader
            // checks.
            const int host = m_scenario.cluster.gpusPerHost;
            if (e.isEmpty() && host > 0 && v % host != 0)
                e = tr("must be a multiple of the GPUs per host (%1): a host's GPUs sit in one NVLink "
                       "domain; "
                       "change the host size in the cluster editor (Edit...)")
                        .arg(host);
            if (e.isEmpty()) m_scenario.cluster.gpusPerNode = int(v);
            return e;
        },
        [this] { return QString::number(m_scenario.cluster.gpusPerNode); });
    cf->addRow(tr("Nodes"), pairRow(this, nodes, tr("GPUs per node"), perNode));

    // Workload.
    QFormLayout* wf = group(tr("Workload"));
    wf->addRow(buildPicker(m_workload, QStringLiteral("workloads"), tr("workload")));
    wf->addRow(m_workload.info);
    wf->addRow(m_workload.error);
    m_phase = new QComboBox(this);
    for (Phase p : {Phase::Prefill, Phase::Decode, Phase::Serving}) m_phase->addItem(phaseName(p));
    m_phase->setToolTip(tr("Prefill only (prompt tokens/s), decode only, or serving both under both SLOs"));
    // The prefill token budget per pass (Constraints::searchPrefillBudget): the engines' default, or one of
    // kSearchedPrefillBudgets chosen by the search. On the phase's row: decode has no prefill, and the row
    // costs no height (the constraints fit unscrolled at 1600x1000, tst_layout).
    m_prefillBudget = new QComboBox(this);
    m_prefillBudget->addItem(tr("default (%1)").arg(formatInteger(double(kDefaultPrefillBudget))));
    m_prefillBudget->addItem(tr("searched"));
    m_prefillBudget->setToolTip(
        tr("Prefill tokens per forward pass (vLLM max_num_batched_tokens, SGLang chunked_prefill_size, "
           "TensorRT-LLM max_num_tokens): the engines' default, or searched among %1 tokens")
            .arg(budgetList()));
    connect(m_prefillBudget, &QComboBox::currentIndexChanged, this, [this](int i) {
        if (m_loading || i < 0) return;
        m_scenario.constraints.searchPrefillBudget = i == 1;
        refreshSpace();
        changed();
    });
    wf->addRow(tr("Phase"), pairRow(this, m_phase, tr("Prefill budget"), m_prefillBudget));
    connect(m_phase, &QComboBox::activated, this, [this](int i) {
        m_scenario.workload.phase = Phase(i);
        m_prefillBudget->setEnabled(Phase(i) != Phase::Decode);
        refreshSpec();  // prefill drafts nothing: no options to pin
        refreshSpace(); // the budget's and speculative decoding's decisions come and go with the phase
        changed();
    });
    QWidget* input = addField(
        nullptr, QStringLiteral("input_tokens"), tr("Input tokens"), tr("Prompt length per request"),
        [this](const QString& t) {
            qint64 v;
            QString e = parseWholeNumber(t, 1, 100'000'000, v);
            if (e.isEmpty()) m_scenario.workload.inputTokens = v;
            return e;
        },
        [this] { return QString::number(m_scenario.workload.inputTokens); });
    QWidget* output = addField(
        nullptr, QStringLiteral("output_tokens"), tr("Output tokens"), tr("Generated tokens per request"),
        [this](const QString& t) {
            qint64 v;
            QString e = parseWholeNumber(t, 1, 100'000'000, v);
            if (e.isEmpty()) m_scenario.workload.outputTokens = v;
            return e;
        },
        [this] { return QString::number(m_scenario.workload.outputTokens); });
    wf->addRow(tr("Input tokens"), pairRow(this, input, tr("Output"), output));
    QWidget* ttft = addField(
        nullptr, QStringLiteral("ttft_ms"), tr("TTFT SLO (ms)"),
        tr("Time-to-first-token limit; empty or 0: no limit"),
        [this](const QString& t) {
            double v;
            QString e = parseNumber(t, 0, 1e9, v);
            if (e.isEmpty()) m_scenario.workload.ttftMs = v;
            return e;
        },
        [this] {
            return m_scenario.workload.ttftMs > 0 ? QString::number(m_scenario.workload.ttftMs) : QString();
        },
        tr("no limit"));
    QWidget* tpot = addField(
        nullptr, QStringLiteral("tpot_ms"), tr("TPOT SLO (ms)"),
        tr("Time-per-output-token limit; empty or 0: no limit"),
        [this](const QString& t) {
            double v;
            QString e = parseNumber(t, 0, 1e9, v);
            if (e.isEmpty()) m_scenario.workload.tpotMs = v;
            return e;
        },
        [this] {
            return m_scenario.workload.tpotMs > 0 ? QString::number(m_scenario.workload.tpotMs) : QString();
        },
        tr("no limit"));
    wf->addRow(tr("TTFT SLO (ms)"), pairRow(this, ttft, tr("TPOT (ms)"), tpot));

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
    m_cluster.info->setText(ci);
    const Workload& w = m_scenario.workload;
    m_workload.info->setText(
        tr("%1: %2 batch").arg(qs(w.name), w.fixedBatch ? tr("fixed %1").arg(w.batch) : tr("automatic")));
}

void ScenarioEditor::checkDtypes() {
    const Gpu& g = m_scenario.cluster.gpu;
    const Dtype act = m_scenario.model.activations, w = m_scenario.model.weights;
    const bool fp8Gemm = w == Dtype::FP8 && g.tflops[size_t(Dtype::FP8)] > 0;
    QString e;
    if (!fp8Gemm && g.tflops[size_t(act)] <= 0)
        e = tr("Activations: %1 has no %2 tensor throughput in its cluster file")
                .arg(qs(g.name), qs(nameOf(act)));
    m_dtypeError->setText(e);
    m_dtypeError->setVisible(!e.isEmpty());
    m_dtypes[1]->setStyleSheet(e.isEmpty() ? QString()
                                           : QStringLiteral("QComboBox { border: 1px solid #dc2626; }"));
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

void ScenarioEditor::replaceModel(const Model& m, const QString&) {
    m_scenario.model = m;
    m_model.error->hide(); // a failed open before is no longer the model shown
    // Pins of operators this model does not have would only confuse.
    for (int i = 0; i < kOpCount; ++i)
        if (!opRelevant(m, Op(i))) m_scenario.constraints.pinned[size_t(i)] = -1;
    refreshFields();
    changed();
}

void ScenarioEditor::replaceCluster(const Cluster& c, const QString& origin) {
    const Cluster before = m_scenario.cluster;
    if (!origin.isEmpty() && !m_cluster.paths.contains(QFileInfo(origin).absoluteFilePath())) {
        m_clusterFile = QFileInfo(origin).absoluteFilePath();
        m_clusterFileCluster = c;
    }
    m_scenario.cluster = c;
    m_cluster.error->hide();
    setScenario(m_scenario);
    showClusterNote(origin.isEmpty() ? tr("Cluster replaced") : QFileInfo(origin).completeBaseName(), before);
    changed();
}

void ScenarioEditor::showClusterNote(const QString& what, const Cluster& before) {
    const QStringList changes = clusterChanges(before, m_scenario.cluster);
    m_clusterNote->setText(
        changes.isEmpty()
            ? QString()
            : tr("%1: %2. Edit > Undo takes it back.").arg(what, changes.join(QStringLiteral("; "))));
    m_clusterNote->setVisible(!changes.isEmpty());
}

QString ScenarioEditor::clusterNote() const {
    return m_clusterNote->isVisibleTo(this) ? m_clusterNote->text() : QString();
}

QComboBox* ScenarioEditor::pickerCombo(FileKind kind) const {
    return kind == FileKind::Model      ? m_model.combo
           : kind == FileKind::Cluster  ? m_cluster.combo
           : kind == FileKind::Workload ? m_workload.combo
                                        : nullptr;
}

void ScenarioEditor::refreshClusterPicker() {
    if (m_sampleClusters.size() != size_t(m_cluster.paths.size())) {
        m_sampleClusters.clear();
        for (const QString& path : m_cluster.paths) {
            auto c = loadCluster(path.toStdString());
            m_sampleClusters.push_back(c.ok() ? std::optional<Cluster>(c.value()) : std::nullopt);
        }
    }
    const Cluster& now = m_scenario.cluster;
    QComboBox* combo = m_cluster.combo;
    const QSignalBlocker b(combo);
    combo->clear();
    int match = -1;
    QString edited, editedTip; // the file whose cluster this one was, before edits
    for (int i = 0; i < m_cluster.paths.size(); ++i) {
        const QString& path = m_cluster.paths[i];
        const QString name = QFileInfo(path).completeBaseName();
        const std::optional<Cluster>& c = m_sampleClusters[size_t(i)];
        if (c && *c == now) match = combo->count();
        if (c && edited.isEmpty() && c->name == now.name) {
            edited = name;
            editedTip = tr("%1, changed since it was read from %2: %3")
                            .arg(qs(now.name), QFileInfo(path).fileName(),
                                 clusterChanges(*c, now).join(QStringLiteral("; ")));
        }
        combo->addItem(name, path);
        combo->setItemData(combo->count() - 1, path, Qt::ToolTipRole);
    }
    if (match < 0 && !m_clusterFile.isEmpty()) {
        const QString name = QFileInfo(m_clusterFile).completeBaseName();
        if (m_clusterFileCluster == now) {
            combo->insertItem(0, name, m_clusterFile);
            combo->setItemData(0, m_clusterFile, Qt::ToolTipRole);
            match = 0;
        } else if (m_clusterFileCluster.name == now.name) {
            edited = name;
            editedTip = tr("%1, changed since it was read from %2: %3")
                            .arg(qs(now.name), QFileInfo(m_clusterFile).fileName(),
                                 clusterChanges(m_clusterFileCluster, now).join(QStringLiteral("; ")));
        }
    }
    if (match < 0) {
        if (!edited.isEmpty()) {
            combo->insertItem(0, tr("%1 (edited)").arg(edited));
            combo->setItemData(0, editedTip, Qt::ToolTipRole);
        } else {
            combo->insertItem(0, tr("%1 (custom)").arg(qs(now.name)));
            combo->setItemData(0, tr("%1: not one of the sample clusters").arg(qs(now.name)),
                               Qt::ToolTipRole);
        }
        match = 0;
    }
    combo->setCurrentIndex(match);
}

void ScenarioEditor::editCluster() {
    if (m_clusterDialog) {
        m_clusterDialog->raise();
        m_clusterDialog->activateWindow();
        return;
    }
    auto* dialog = new ClusterEditor(m_scenario.cluster, this);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    if (m_askSavePath) dialog->setAskPath(m_askSavePath);
    m_clusterDialog = dialog;
    connect(dialog, &ClusterEditor::saved, this, [this](const QString& path, const Cluster& c) {
        m_clusterFile = QFileInfo(path).absoluteFilePath();
        m_clusterFileCluster = c;
        refreshClusterPicker();
    });
    connect(dialog, &QDialog::accepted, this, [this, dialog] {
        const Cluster c = dialog->cluster();
        if (c == m_scenario.cluster) return;
        const Cluster before = m_scenario.cluster;
        m_scenario.cluster = c;
        m_cluster.error->hide();
        setScenario(m_scenario);
        showClusterNote(tr("Cluster editor"), before);
        changed();
    });
    dialog->open();
}

bool ScenarioEditor::saveCluster(const QString& path, QString* error) {
    if (!saveClusterFile(m_scenario.cluster, path, error)) return false;
    m_clusterFile = QFileInfo(path).absoluteFilePath();
    m_clusterFileCluster = m_scenario.cluster;
    refreshClusterPicker();
    return true;
}

void ScenarioEditor::replaceWorkload(const Workload& w, const QString&) {
    m_scenario.workload = w;
    m_workload.error->hide();
    setScenario(m_scenario);
    changed();
}

void ScenarioEditor::replaceConstraints(const Constraints& c) {
    m_scenario.constraints = c;
    refreshFields();
    changed();
}

} // namespace sp::views
