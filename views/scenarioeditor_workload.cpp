// The scenario editor's Workload group: the workload picker, the phase and prefill budget, the request's
// input and output tokens, and the TTFT and TPOT SLOs.
#include "views/scenarioeditor.h"

#include "core/search/space.h"
#include "views/format.h"
#include "views/scenarioeditor_p.h"

#include <QComboBox>
#include <QFormLayout>

#include <cmath>

namespace sp::views {

using editor::pairRow;

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

/// kSearchedPrefillBudgets as "2,048, 4,096, ... or 32,768".
QString budgetList() {
    QStringList l;
    for (int64_t v : kSearchedPrefillBudgets) l << formatInteger(double(v));
    const QString last = l.takeLast();
    return QObject::tr("%1 or %2").arg(l.join(QStringLiteral(", ")), last);
}

} // namespace

void ScenarioEditor::buildWorkload(QFormLayout* wf) {
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
}

void ScenarioEditor::replaceWorkload(const Workload& w, const QString&) {
    m_scenario.workload = w;
    m_workload.error->hide();
    setScenario(m_scenario);
    changed();
}

} // namespace sp::views
