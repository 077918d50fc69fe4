// The comparison's figures and words (views/comparison.h): the metrics with ratios, the settings with the
// differences marked, the what-if rows, and the verdict above them with the why's sentence.
#include "views/comparison.h"

#include "core/analysis/why.h"
#include "core/cost/economics.h"
#include "core/cost/validity.h"
#include "views/format.h"
#include "views/meshgroups.h"

#include <QCheckBox>
#include <QComboBox>
#include <QHeaderView>
#include <QLabel>
#include <QTableWidget>

#include <cmath>
#include <optional>

namespace sp::views {

namespace {
const QColor kDiffBg(0xfe, 0xf3, 0xc7), kBetter(0x15, 0x80, 0x3d), kWorse(0xb9, 0x1c, 0x1c);

QTableWidgetItem* item(const QString& text, Qt::Alignment a = Qt::AlignLeft | Qt::AlignVCenter) {
    auto* it = new QTableWidgetItem(text);
    it->setTextAlignment(a);
    return it;
}
} // namespace

void ComparisonView::refresh() {
    const PlanRecordPtr L = left(), R = right();
    m_metrics->setRowCount(0);
    m_settings->setRowCount(0);
    m_whatIf->setRowCount(0);
    m_whatIfs.clear();
    m_diff.clear();
    m_why.clear();
    const std::shared_ptr<const Scenario> sL = scenarioOf(0), sR = scenarioOf(1);
    if (!L || !R || !sL || !sR) {
        m_verdict->setText(
            tr("<i>Pick two plans to compare (Megatron against the best found by default).</i>"));
        m_whatIf->hide();
        refreshBars();
        return;
    }
    // Plans of two scenarios (another GPU, another workload) compare as they stand; what limits a batch,
    // the step at equal load and the what-ifs need one scenario.
    const bool same = sL == sR || *sL == *sR;
    const Metrics &a = L->metrics(), &b = R->metrics();
    m_metrics->setHorizontalHeaderLabels({tr("Metric"), qs(L->label), qs(R->label), tr("Right / left")});
    m_settings->setHorizontalHeaderLabels({tr("Setting"), qs(L->label), qs(R->label)});
    for (QTableWidget* t : {m_metrics, m_settings})
        for (int c : {1, 2}) t->horizontalHeaderItem(c)->setToolTip(qs(c == 1 ? L->label : R->label));

    // Metrics. higher: +1 when larger is better, -1 when smaller is, 0 when neither.
    auto metric = [&](const QString& name, double va, double vb, const QString& ta, const QString& tb,
                      int higher) {
        // "Only differences" leaves out the figures both plans share (the throughput stays: it is what the
        // comparison is about).
        if (m_onlyDiff->isChecked() && ta == tb && m_metrics->rowCount() > 0) return;
        const int row = m_metrics->rowCount();
        m_metrics->insertRow(row);
        m_metrics->setItem(row, 0, item(name));
        m_metrics->item(row, 0)->setToolTip(name);
        m_metrics->setItem(row, 1, item(ta, Qt::AlignRight | Qt::AlignVCenter));
        m_metrics->setItem(row, 2, item(tb, Qt::AlignRight | Qt::AlignVCenter));
        QString ratio;
        QColor color = palette().color(QPalette::Text);
        if (va > 0 && vb >= 0 && std::isfinite(va) && std::isfinite(vb)) {
            const double q = vb / va;
            ratio = QStringLiteral("%1x").arg(q, 0, 'f', 3); // as `shardplan compare` prints it
            if (higher != 0 && std::abs(q - 1) > 0.005) color = ((q > 1) == (higher > 0)) ? kBetter : kWorse;
        }
        auto* it = item(ratio, Qt::AlignRight | Qt::AlignVCenter);
        it->setForeground(color);
        if (color != palette().color(QPalette::Text)) {
            QFont f = it->font();
            f.setBold(true);
            it->setFont(f);
        }
        m_metrics->setItem(row, 3, it);
    };
    metric(tr("Throughput"), a.throughput, b.throughput, formatRate(a.throughput), formatRate(b.throughput),
           +1);
    metric(tr("Per GPU"), a.throughputPerGpu, b.throughputPerGpu, formatRate(a.throughputPerGpu),
           formatRate(b.throughputPerGpu), +1);
    metric(tr("Of the roofline bound"), a.rooflineFraction, b.rooflineFraction,
           QStringLiteral("%1%").arg(100 * a.rooflineFraction, 0, 'f', 1),
           QStringLiteral("%1%").arg(100 * b.rooflineFraction, 0, 'f', 1), +1);
    // A workload without prefill (decode) has no TTFT, one without decode (prefill) no TPOT.
    if (a.ttftMs > 0 || b.ttftMs > 0)
        metric(tr("TTFT"), a.ttftMs, b.ttftMs, formatMs(a.ttftMs), formatMs(b.ttftMs), -1);
    if (a.tpotMs > 0 || b.tpotMs > 0) {
        metric(tr("TPOT"), a.tpotMs, b.tpotMs, formatMs(a.tpotMs), formatMs(b.tpotMs), -1);
        if (a.spec.on() || b.spec.on()) {
            // Speculative decoding: a step yields E tokens a sequence, and TPOT is the step over E.
            const int row = m_metrics->rowCount() - 1;
            for (int side : {1, 2}) {
                const Metrics& x = side == 1 ? a : b;
                if (x.spec.on() && x.stepMs > 0)
                    m_metrics->item(row, side)->setToolTip(tr("TPOT = step %1 / %2 tokens a step (%3)")
                                                               .arg(formatMs(x.stepMs))
                                                               .arg(x.tokensPerStep, 0, 'f', 2)
                                                               .arg(specSummary(x.spec)));
            }
            metric(tr("Tokens a step (E)"), a.tokensPerStep, b.tokensPerStep,
                   QString::number(a.tokensPerStep, 'f', 2), QString::number(b.tokensPerStep, 'f', 2), 0);
            QTableWidgetItem* named = m_metrics->item(m_metrics->rowCount() - 1, 0);
            named->setToolTip(named->text() + tr(": tokens a step yields a sequence under speculative "
                                                 "decoding (1 without); TPOT is the step over it"));
        }
    }
    metric(tr("Batch per replica"), double(a.batch), double(b.batch), QString::number(a.batch),
           QString::number(b.batch), 0);
    // What the throughput is made of: sequences in flight over the step, and what stops each batch
    // (core/analysis/why.h).
    Why why;
    if (same) {
        std::optional<CostModel> own;
        const CostModel* model = m_model.get();
        if (!model || !(model->scenario() == *sL)) model = &own.emplace(*sL);
        why = explainWhy(*model, L->plan, R->plan, L->label, R->label);
        m_why = QString::fromStdString(why.sentence);
        const int before = m_metrics->rowCount();
        metric(tr("Batch stops at"), 0, 0, qs(why.bindingA.name), qs(why.bindingB.name), 0);
        if (m_metrics->rowCount() > before) {
            const int row = before;
            m_metrics->item(row, 0)->setToolTip(
                tr("Batch stops at: the limit one more sequence a micro-batch would break"));
            m_metrics->item(row, 1)->setToolTip(qs(why.bindingA.detail));
            m_metrics->item(row, 2)->setToolTip(qs(why.bindingB.detail));
        }
    } else {
        const PlanFigures fa = planFigures(*sL, L->plan, a), fb = planFigures(*sR, R->plan, b);
        why.rows = {
            {"replicas", "Replicas (dp)", double(fa.replicas), double(fb.replicas), "model copies"},
            {"in_flight", "Sequences in flight", double(fa.inFlight), double(fb.inFlight),
             "replicas x stages x batch: sequences advancing at once"},
            {"step_ms", "Step (ms)", fa.stepMs, fb.stepMs, "one cycle: every micro-batch advances once"}};
    }
    for (const WhyRow& w : why.rows) {
        // Memory has its row below; tokens a step (E) its row above, where speculative decoding runs.
        if (w.key == "weights_gib" || w.key == "kv_cache_gib" || w.key == "tokens_per_step") continue;
        const bool step = w.key == "step_ms";
        if (step && (w.a <= 0 || w.b <= 0)) continue;
        metric(qs(w.label).remove(QStringLiteral(" (ms)")), w.a, w.b,
               step ? formatMs(w.a) : formatInteger(w.a), step ? formatMs(w.b) : formatInteger(w.b),
               step ? -1 : 0);
        QTableWidgetItem* named = m_metrics->item(m_metrics->rowCount() - 1, 0);
        named->setToolTip(named->text() + QStringLiteral(": ") + qs(w.tip));
    }
    // What a million tokens cost on each side's GPUs (the cluster's price per GPU-hour;
    // core/cost/economics.h): the figure two scenarios on two GPU types are compared by.
    {
        const ServingCost ca = servingCost(sL->cluster, sL->gpus(), a.feasible ? a.throughput : 0),
                          cb = servingCost(sR->cluster, sR->gpus(), b.feasible ? b.throughput : 0);
        const auto usd = [](const ServingCost& c) {
            return c.priced && c.usdPerMillionTokens > 0
                       ? QStringLiteral("$%1").arg(c.usdPerMillionTokens, 0, 'f', 3)
                       : tr("unknown");
        };
        if (ca.priced || cb.priced) {
            metric(tr("Per million tokens"), ca.usdPerMillionTokens, cb.usdPerMillionTokens, usd(ca), usd(cb),
                   -1);
            QTableWidgetItem* named = m_metrics->item(m_metrics->rowCount() - 1, 0);
            if (named && named->text() == tr("Per million tokens")) {
                named->setToolTip(tr("Per million tokens: dollars at the cluster's price per GPU-hour "
                                     "(%1 a GPU-hour left, %2 right)")
                                      .arg(ca.usdPerGpuHour, 0, 'f', 2)
                                      .arg(cb.usdPerGpuHour, 0, 'f', 2));
                for (int side : {1, 2}) {
                    const ServingCost& c = side == 1 ? ca : cb;
                    m_metrics->item(m_metrics->rowCount() - 1, side)->setToolTip(qs(c.priceSource));
                }
            }
        }
    }
    metric(tr("Memory per GPU"), a.memoryPerGpuGiB, b.memoryPerGpuGiB,
           QStringLiteral("%1 GiB").arg(a.memoryPerGpuGiB, 0, 'f', 1),
           QStringLiteral("%1 GiB").arg(b.memoryPerGpuGiB, 0, 'f', 1), 0);
    const bool prefill = m_phase->currentIndex() == 1;
    const double sa = L->breakdown(prefill).stageMs, sb = R->breakdown(prefill).stageMs;
    metric(prefill && L->hasPrefill() ? tr("Slowest stage, prefill") : tr("Slowest stage"), sa, sb,
           formatMs(sa), formatMs(sb), -1);
    if (m_metrics->item(m_metrics->rowCount() - 1, 0)->text().startsWith(tr("Slowest stage"))) {
        // Each side's pass in full ("serving step (253 decode + 1,410 prefill tokens)").
        const int row = m_metrics->rowCount() - 1;
        m_metrics->item(row, 1)->setToolTip(qs(L->breakdown(prefill).phase));
        m_metrics->item(row, 2)->setToolTip(qs(R->breakdown(prefill).phase));
    }
    metric(tr("Feasible"), 0, 0, a.feasible ? tr("yes") : tr("no: %1").arg(qs(a.violation)),
           b.feasible ? tr("yes") : tr("no: %1").arg(qs(b.violation)), 0);
    fitMetricsHeight();

    // Settings.
    const bool moe = sL->model.moe.present() || sR->model.moe.present();
    QFont bold = font();
    bold.setBold(true);
    auto setting = [&](const QString& name, const QString& va, const QString& vb) {
        const bool differs = va != vb;
        if (differs) m_diff << name;
        if (m_onlyDiff->isChecked() && !differs) return;
        const int row = m_settings->rowCount();
        m_settings->insertRow(row);
        QTableWidgetItem* cells[3] = {item(differs ? QStringLiteral("\u2260 ") + name : name), item(va),
                                      item(vb)};
        for (int c = 0; c < 3; ++c) {
            if (differs) {
                cells[c]->setBackground(kDiffBg);
                cells[c]->setFont(bold);
                cells[c]->setToolTip(tr("Differs between the two plans"));
            }
            cells[c]->setData(Qt::UserRole, differs);
            m_settings->setItem(row, c, cells[c]);
        }
    };
    if (!same) {
        const auto gpus = [](const Scenario& x) {
            return tr("%1 x %2 (%3)").arg(x.cluster.nodes).arg(x.cluster.gpusPerNode).arg(x.gpus());
        };
        const auto workload = [](const Scenario& x) {
            const Workload& w = x.workload;
            QString t = tr("%1 in, %2 out").arg(w.inputTokens).arg(w.outputTokens);
            if (w.ttftMs > 0) t += tr("; TTFT %1 ms").arg(w.ttftMs);
            if (w.tpotMs > 0) t += tr("; TPOT %1 ms").arg(w.tpotMs);
            return t;
        };
        setting(tr("scenario"), qs(sL->name), qs(sR->name));
        setting(tr("model"), qs(sL->model.name), qs(sR->model.name));
        setting(tr("GPU"), qs(sL->cluster.gpu.name), qs(sR->cluster.gpu.name));
        setting(tr("GPUs"), gpus(*sL), gpus(*sR));
        setting(tr("workload"), workload(*sL), workload(*sR));
    }
    const Degrees &da = L->plan.degrees, &db = R->plan.degrees;
    const Axis axes[] = {Axis::PP, Axis::DP, Axis::TP, Axis::EP, Axis::ETP, Axis::EDP};
    for (Axis ax : axes) {
        if (!moe && (ax == Axis::EP || ax == Axis::ETP || ax == Axis::EDP)) continue;
        setting(qs(kAxisNames[size_t(ax)]), QString::number(da.get(ax)), QString::number(db.get(ax)));
    }
    if (!L->plan.stageLayers.empty() || !R->plan.stageLayers.empty()) {
        // Either plan splits the layers its own way: both splits, first stage first.
        setting(tr("layers per stage"), qs(stageCountsText(int(sL->model.layers), L->plan)),
                qs(stageCountsText(int(sR->model.layers), R->plan)));
    }
    if (!L->plan.layerGroups.empty() || !R->plan.layerGroups.empty()) {
        // Either plan chooses its per-layer operators by runs of layers; the operator rows below are each
        // plan's first group.
        const auto groups = [](const Plan& p) {
            return p.layerGroups.empty() ? tr("none (every layer alike)") : qs(layerGroupsText(p));
        };
        setting(tr("layer groups"), groups(L->plan), groups(R->plan));
    }
    setting(tr("mesh order"), meshText(L->plan), meshText(R->plan));
    setting(tr("speculative decoding"), specSummary(L->plan.spec), specSummary(R->plan.spec));
    for (int i = 0; i < kOpCount; ++i) {
        const Op op = Op(i);
        if (!opRelevant(sL->model, op) && !opRelevant(sR->model, op)) continue;
        setting(opDisplayName(op), choiceName(op, L->plan.choice(op)), choiceName(op, R->plan.choice(op)));
    }

    // What if: each of the right plan's settings taken back to the left's alone, costliest first.
    m_whatIfs = why.whatIf;
    for (const WhatIf& w : m_whatIfs) {
        const int row = m_whatIf->rowCount();
        m_whatIf->insertRow(row);
        QString ratio = !w.valid             ? tr("not valid")
                        : w.metrics.feasible ? QStringLiteral("%1x").arg(w.ratio, 0, 'f', 3)
                                             : tr("does not fit");
        // An operator is named as in the settings above ("qkv (MoE layers)", its choices' names).
        QString field = qs(w.diff.field), vb = qs(w.diff.b), va = qs(w.diff.a);
        for (int i = 0; i < kOpCount; ++i)
            if (opField(Op(i)) == w.diff.field) {
                field = opDisplayName(Op(i));
                vb = choiceName(Op(i), R->plan.choice(Op(i)));
                va = choiceName(Op(i), L->plan.choice(Op(i)));
            }
        QTableWidgetItem* cells[5] = {
            item(field), item(vb), item(va), item(ratio, Qt::AlignRight | Qt::AlignVCenter),
            item(w.valid && w.metrics.feasible ? QString::number(w.metrics.batch) : QString(),
                 Qt::AlignRight | Qt::AlignVCenter)};
        if (w.valid && w.metrics.feasible && std::abs(w.ratio - 1) > 0.005)
            cells[3]->setForeground(w.ratio < 1 ? kWorse : kBetter);
        for (int c = 0; c < 5; ++c) {
            cells[c]->setToolTip(qs(w.summary));
            m_whatIf->setItem(row, c, cells[c]);
        }
    }
    m_whatIf->setVisible(!m_whatIfs.empty());

    // The verdict: the why whole, as `shardplan compare` prints it (its first sentence in bold: the ratio as
    // its factors), then the settings that differ.
    QString verdict;
    if (!same) {
        verdict = tr("The plans serve two scenarios, <b>%1</b> and <b>%2</b>: their figures compare as they "
                     "stand (what stops each batch and the what-ifs need one scenario).<br>")
                      .arg(qs(sL->name).toHtmlEscaped(), qs(sR->name).toHtmlEscaped());
        if (a.feasible && b.feasible && a.throughput > 0)
            verdict += tr("<b>%1</b> reaches <b>%2x</b> the throughput of <b>%3</b>")
                           .arg(qs(R->label).toHtmlEscaped())
                           .arg(b.throughput / a.throughput, 0, 'f', 3)
                           .arg(qs(L->label).toHtmlEscaped());
        else
            verdict += tr("<b>%1</b> is %2; <b>%3</b> is %4")
                           .arg(qs(L->label).toHtmlEscaped(), a.feasible ? tr("feasible") : tr("infeasible"),
                                qs(R->label).toHtmlEscaped(), b.feasible ? tr("feasible") : tr("infeasible"));
        verdict += QStringLiteral(". ");
    } else {
        // Its opening words in bold: "<b>B reaches 13.13x the throughput of A</b>: 13.12x the sequences ...".
        const qsizetype colon = m_why.indexOf(QStringLiteral(": "));
        verdict = colon > 0 ? QStringLiteral("<b>%1</b>%2")
                                  .arg(m_why.left(colon).toHtmlEscaped(), m_why.mid(colon).toHtmlEscaped())
                            : m_why.toHtmlEscaped();
        verdict += QStringLiteral("<br>");
    }
    verdict += m_diff.isEmpty() ? tr("The two plans are identical.")
                                : tr("%n setting(s) differ: %1.", "", int(m_diff.size()))
                                      .arg(m_diff.join(QStringLiteral(", ")).toHtmlEscaped());
    m_verdict->setText(verdict);
    m_settings->resizeRowsToContents();
    m_whatIf->resizeRowsToContents();
    arrange();
    refreshBars();
}

} // namespace sp::views
