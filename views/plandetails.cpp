#include "views/plandetails.h"

#include "core/cost/validity.h"
#include "core/io/formats.h"
#include "views/format.h"
#include "views/meshgroups.h"

#include <QFontDatabase>
#include <QHBoxLayout>
#include <QLabel>
#include <QPlainTextEdit>
#include <QSplitter>
#include <QTextBrowser>

namespace sp::views {

PlanDetails::PlanDetails(QWidget* parent) : QWidget(parent) {
    m_summary = new QTextBrowser(this);
    m_summary->setOpenLinks(false);
    m_summary->setFrameShape(QFrame::NoFrame);
    m_yaml = new QPlainTextEdit(this);
    m_yaml->setReadOnly(true);
    m_yaml->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    m_yaml->setToolTip(tr("The plan file (File > Export > Plan writes it)"));
    auto* right = new QWidget(this);
    auto* rl = new QVBoxLayout(right);
    rl->setContentsMargins(0, 6, 6, 0);
    auto* cap = new QLabel(tr("<b>Plan file</b>"), right);
    rl->addWidget(cap);
    rl->addWidget(m_yaml, 1);
    auto* split = new QSplitter(Qt::Horizontal, this);
    split->addWidget(m_summary);
    split->addWidget(right);
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 2);
    auto* lay = new QHBoxLayout(this);
    lay->setContentsMargins(0, 0, 0, 0);
    lay->addWidget(split);
}

QString PlanDetails::summaryText() const {
    return m_summary->toPlainText();
}
QString PlanDetails::planText() const {
    return m_yaml->toPlainText();
}

void PlanDetails::setPlan(std::shared_ptr<const Scenario> scenario, PlanRecordPtr plan) {
    if (!scenario || !plan) {
        m_summary->setHtml(tr("<p style='color:#6b7280'>No plan selected.</p>"));
        m_yaml->clear();
        return;
    }
    const Metrics& m = plan->metrics();
    const Workload& w = scenario->workload;
    const bool moe = scenario->model.moe.present();
    auto esc = [](const QString& s) { return s.toHtmlEscaped(); };
    auto tile = [](const QString& label, const QString& value, const QString& note) {
        return QStringLiteral("<td style='padding:6px 14px 6px 0'><div style='color:#6b7280'>%1</div>"
                              "<div style='font-size:15pt; font-weight:600'>%2</div>"
                              "<div style='color:#6b7280'>%3</div></td>")
            .arg(label, value, note);
    };
    auto slo = [](double v, double limit) {
        if (limit <= 0) return QObject::tr("no limit");
        const bool ok = v <= limit * (1 + 1e-9);
        return QStringLiteral("<span style='color:%1'>%2 %3 ms</span>")
            .arg(ok ? QStringLiteral("#15803d") : QStringLiteral("#b91c1c"),
                 ok ? QStringLiteral("&le;") : QStringLiteral("&gt;"))
            .arg(limit);
    };
    QString h;
    h += QStringLiteral("<h2 style='margin-bottom:2px'>%1</h2>").arg(esc(qs(plan->label)));
    h += QStringLiteral("<p style='color:#4b5563; margin-top:0'>%1 &middot; mesh %2%3</p>")
             .arg(esc(degreesText(plan->plan.degrees, moe)), esc(meshText(plan->plan)),
                  plan->searcher.empty() ? QString()
                                         : tr(" &middot; found by %1").arg(esc(qs(plan->searcher))));
    if (plan->plan.degrees.pp > 1) {
        // The layers each pipeline stage holds, first to last (the plan's own split or the balanced one).
        h += QStringLiteral("<p>%1 %2 <span style='color:#6b7280'>(%3)</span></p>")
                 .arg(tr("Layers per stage:"), qs(stageCountsText(int(scenario->model.layers), plan->plan)),
                      plan->plan.stageLayers.empty() ? tr("balanced") : tr("the plan's own split"));
    }
    if (!plan->plan.layerGroups.empty()) {
        // Runs of layers with their own per-layer operator choices; the operator table below is the first
        // group's.
        h += QStringLiteral("<p>%1 %2 <span style='color:#6b7280'>(%3)</span></p>")
                 .arg(tr("Layer groups:"), esc(qs(layerGroupsText(plan->plan))),
                      tr("the operators below are the first group's"));
    }
    if (!m.feasible)
        h += QStringLiteral("<p style='background:#fdecec; padding:6px; color:#991b1b'><b>%1</b> %2</p>")
                 .arg(m.valid ? tr("Infeasible:") : tr("Not a valid plan:"), esc(qs(m.violation)));
    h += QStringLiteral("<table><tr>");
    h += tile(tr("Throughput"), formatRate(m.throughput),
              tr("%1 per GPU").arg(formatRate(m.throughputPerGpu)));
    h += tile(tr("Roofline"), QStringLiteral("%1%").arg(100 * m.rooflineFraction, 0, 'f', 1),
              tr("of %1").arg(formatRate(m.rooflineThroughput)));
    if (m.ttftMs > 0) h += tile(tr("TTFT"), formatMs(m.ttftMs), slo(m.ttftMs, w.ttftMs));
    // Under speculative decoding a step yields E tokens a sequence: TPOT is the step over E.
    const bool drafts = m.spec.on() && m.tokensPerStep > 0 && m.stepMs > 0;
    if (m.tpotMs > 0)
        h += tile(tr("TPOT"), formatMs(m.tpotMs),
                  drafts ? tr("%1<br>step %2 / %3")
                               .arg(slo(m.tpotMs, w.tpotMs), formatMs(m.stepMs))
                               .arg(m.tokensPerStep, 0, 'f', 2)
                         : slo(m.tpotMs, w.tpotMs));
    h += tile(tr("Batch"), QString::number(m.batch), tr("sequences per replica"));
    h += QStringLiteral("</tr></table>");
    if (m.spec.on()) {
        // The method, its draft tokens and E, then how TPOT follows from the step and where the drafts go.
        QString spec = tr("Speculative decoding: %1.").arg(specSummary(m.spec, m.tokensPerStep));
        if (drafts)
            spec += QStringLiteral(" ") + tr("TPOT is the step over the tokens it yields: %1 / %2 = %3.")
                                              .arg(formatMs(m.stepMs))
                                              .arg(m.tokensPerStep, 0, 'f', 2)
                                              .arg(formatMs(m.stepMs / m.tokensPerStep));
        if (const Breakdown& d = plan->breakdown(false); !d.draft.empty())
            spec += QStringLiteral(" ") + tr("The draft passes take %1 of the step, after the verify pass on "
                                             "the last stage (%2).")
                                              .arg(formatMs(d.draftMs), qs(d.draft));
        h += QStringLiteral("<p style='color:#4b5563'>%1</p>").arg(esc(spec));
    }
    if (m.ttftChunks > 0) {
        const QString budget = formatInteger(double(m.prefillBudget));
        const QString why =
            m.ttftChunks == 1
                ? tr("TTFT: the step in flight (%1), then one chunk step of the prompt, %2 (prefill budget %3 "
                     "tokens a step)")
                      .arg(formatMs(m.tpotMs), formatMs(m.chunkMs), budget)
                : tr("TTFT: the step in flight (%1), then %2 chunk steps of the prompt, %3 each (prefill budget "
                     "%4 tokens a step)")
                      .arg(formatMs(m.tpotMs), QString::number(m.ttftChunks), formatMs(m.chunkMs), budget);
        h += QStringLiteral("<p style='color:#4b5563'>%1</p>").arg(esc(why));
    }
    h += tr("<h3>Memory per GPU (peak stage)</h3>");
    h += QStringLiteral("<p>%1 of %2 GiB usable: weights %3, KV cache %4, activations %5, reserve %6 GiB</p>")
             .arg(m.memoryPerGpuGiB, 0, 'f', 1)
             .arg(m.capacityGiB, 0, 'f', 1)
             .arg(m.weightsGiB, 0, 'f', 1)
             .arg(m.kvCacheGiB, 0, 'f', 1)
             .arg(m.activationsGiB, 0, 'f', 1)
             .arg(m.reserveGiB, 0, 'f', 1);
    h += tr("<h3>Operators</h3>");
    const Degrees& deg = plan->plan.degrees;
    if (deg.tp == 1 && (!moe || deg.ep * deg.etp == 1))
        h +=
            tr("<p style='color:#6b7280'>tp 1: every operator runs whole on its GPU, so these choices do not "
               "change the plan.</p>");
    h += QStringLiteral("<table cellspacing='0' cellpadding='3'>");
    for (int i = 0; i < kOpCount; ++i) {
        const Op op = Op(i);
        if (!opRelevant(scenario->model, op)) continue;
        const QColor c = familyColor(familyOf(op, plan->plan.choice(op)));
        h += QStringLiteral("<tr><td style='color:#4b5563'>%1</td><td><span style='background:%2; "
                            "color:%3'>&nbsp;%4&nbsp;</span></td>"
                            "<td style='color:#6b7280'>%5</td></tr>")
                 .arg(esc(opDisplayName(op)), c.name(), textOn(c).name(),
                      esc(choiceName(op, plan->plan.choice(op))),
                      esc(familyName(familyOf(op, plan->plan.choice(op)))));
    }
    h += QStringLiteral("</table>");
    // The collectives of the step, the "why" behind the communication time.
    const Breakdown& b = plan->breakdown(false);
    if (!b.comms.empty()) {
        h += tr("<h3>Collectives per %1 (slowest stage)</h3>").arg(esc(qs(b.phase)));
        h += QStringLiteral(
                 "<table cellspacing='0' cellpadding='3'><tr style='color:#6b7280'><td>%1</td><td>%2</td>"
                 "<td>%3</td><td>%4</td><td align='right'>%5</td><td align='right'>%6</td><td "
                 "align='right'>%7</td></tr>")
                 .arg(tr("layer"), tr("where"), tr("collective"), tr("link"), tr("GPUs"), tr("bytes/GPU"),
                      tr("time x layers"));
        for (const CommCost& c : b.comms) {
            const int n = occurrences(b, c.layer);
            h += QStringLiteral("<tr><td>%1</td><td>%2</td><td>%3</td><td>%4</td><td align='right'>%5</td>"
                                "<td align='right'>%6</td><td align='right'>%7 x %8</td></tr>")
                     .arg(esc(qs(nameOf(c.layer))), esc(qs(c.where)), esc(qs(nameOf(c.kind))),
                          esc(qs(nameOf(c.link))))
                     .arg(c.group)
                     .arg(formatBytes(c.bytes), formatMs(c.timeMs))
                     .arg(n);
        }
        h += QStringLiteral("</table>");
        if (b.pipelineTransferMs > 0 || b.bubbleMs > 0)
            h += tr("<p>Pipeline: %1 per stage boundary, bubble %2 per step.</p>")
                     .arg(formatMs(b.pipelineTransferMs), formatMs(b.bubbleMs));
    }
    if (m.violations.size() > 1) {
        h += tr("<h3>Constraints missed</h3><ul>");
        for (const auto& v : m.violations) h += QStringLiteral("<li>%1</li>").arg(esc(qs(v)));
        h += QStringLiteral("</ul>");
    }
    m_summary->setHtml(h);
    m_yaml->setPlainText(QString::fromStdString(toYaml(plan->plan, scenario->model)));
}

} // namespace sp::views
