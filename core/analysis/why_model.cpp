// The why with the cost model at hand (core/analysis/why.h): speculative decoding's share of the ratio, what
// stops each batch, B's step at A's batch, and the settings that decide it.
#include "core/analysis/why.h"

#include "core/analysis/why_p.h"

#include <algorithm>
#include <cmath>

namespace sp {

using namespace why;

namespace {

/// Each collective's time per step of the slowest stage (as stepParts counts it), keyed by what it is.
std::vector<CommMove> commTimes(const Breakdown& b) {
    std::vector<CommMove> out;
    for (const CommCost& c : b.comms) {
        const double t = c.timeMs * layerOccurrences(b, c.layer);
        const std::string layer = c.layer == LayerKind::Moe     ? "MoE layers"
                                  : c.layer == LayerKind::Dense ? "dense layers"
                                                                : std::string(nameOf(c.layer));
        const std::string link = c.link == LinkClass::NvLink    ? "NVLink"
                                 : c.link == LinkClass::Network ? "network"
                                                                : "local";
        const std::string name =
            std::string(nameOf(c.kind)) + " " + c.where + " (" + layer + ", " + link + ")";
        auto it = std::find_if(out.begin(), out.end(), [&](const CommMove& m) { return m.name == name; });
        if (it == out.end()) out.push_back({name, link, 0, 0}), it = out.end() - 1;
        it->aMs += t;
    }
    return out;
}

/// A plan's step whether or not it meets the SLOs (B at A's batch may not): the cost model's where it
/// reports one, else what the throughput gives (planFigures' rule).
double stepOf(const Scenario& s, const Plan& p, const Metrics& m) {
    Metrics feasible = m;
    feasible.feasible = true;
    return planFigures(s, p, feasible).stepMs;
}

/// Under a TPOT SLO a plan that speculates runs a step longer than the SLO: TPOT is the step over the tokens
/// it yields. "With MTP x1, B's step of 92.36 ms yields 1.85 tokens a sequence: a TPOT of 49.92 ms
/// (92.36 / 1.85) under the SLO of 50 ms."
std::string tpotNote(const std::string& name, const Metrics& m, const Binding& b, double sloMs) {
    if (b.kind != BatchLimit::Tpot || !m.spec.on() || m.stepMs <= 0) return {};
    return " With " + specName(m.spec) + ", " + name + "'s step of " + ms(m.stepMs) + " yields " +
           formatDouble("%.3g", m.tokensPerStep) + " tokens a sequence: a TPOT of " + ms(m.tpotMs) + " (" +
           formatDouble("%.4g", m.stepMs) + " / " + formatDouble("%.3g", m.tokensPerStep) +
           ") under the SLO of " + ms(sloMs) + ".";
}

} // namespace

Why explainWhy(const CostModel& model, const Plan& pa, const Plan& pb, std::string nameA, std::string nameB) {
    const Scenario& s = model.scenario();
    const bool moe = s.model.moe.present();
    const Evaluation ea = model.explain(pa), eb = model.explain(pb);
    const std::vector<PlanDiff> diffs = planDifferences(s.model, pa, pb);
    std::vector<WhatIf> flips;
    if (ea.metrics.feasible && eb.metrics.feasible) flips = whatIfs(model, pa, pb, eb.metrics);
    // Plans of the same degrees are told apart by the setting that matters most: the flip that costs B most,
    // else the first that differs.
    // Without names: "B (dp18 tp8 ep16, attention batch)" where first named, then "A" and "B".
    std::string fullA = nameA, fullB = nameB;
    if (nameA.empty() && nameB.empty()) {
        std::string da = degreesName(pa, moe), db = degreesName(pb, moe);
        if (da == db && !diffs.empty()) {
            const PlanDiff* d = &diffs.front();
            if (!flips.empty() && flips.front().valid && flips.front().ratio > 0) d = &flips.front().diff;
            da += ", " + d->field + " " + d->a;
            db += ", " + d->field + " " + d->b;
        }
        nameA = "A", nameB = "B";
        fullA = "A (" + da + ")", fullB = "B (" + db + ")";
    }
    if (nameA.empty()) nameA = fullA = degreesName(pa, moe);
    if (nameB.empty()) nameB = fullB = degreesName(pb, moe);
    Why w = explainWhy(s, pa, ea, pb, eb, fullA, fullB);
    if (nameA == nameB) nameA += " (A)", nameB += " (B)";
    w.differences = diffs;
    w.whatIf = std::move(flips);
    w.bindingA = bindingLimit(model, pa, ea.metrics);
    w.bindingB = bindingLimit(model, pb, eb.metrics);
    if (w.throughputRatio <= 0) return w; // an infeasible side: the base sentence says which and why

    std::string text = w.headline;
    // Speculative decoding's share: B with A's speculative decoding, all else kept (its batch found again).
    // The rest of the ratio is the sharding's, and the two multiply to it.
    for (const WhatIf& f : w.whatIf) {
        if (f.diff.field != "speculative decoding" || !f.valid || f.ratio <= 0) continue;
        w.specShare = 1 / f.ratio;
        const double rest = w.throughputRatio * f.ratio;
        text += " Of the " + ratioText(w.throughputRatio) + ", " + ratioText(w.specShare) +
                " is speculative decoding's (" + specName(pb.spec) + " against " + specName(pa.spec) +
                "), not the sharding's: with " + nameA + "'s (" + specName(pa.spec) + "), " + nameB +
                " reaches " + ratioText(rest) + " " + nameA + "'s throughput (batch " +
                std::to_string(f.metrics.batch) + "), and " + formatDouble("%.4g", w.specShare) + " x " +
                formatDouble("%.4g", rest) + " = " + formatDouble("%.4g", w.throughputRatio) + ".";
    }
    // What stops each batch.
    if (w.bindingA.kind == w.bindingB.kind && w.bindingA.name == w.bindingB.name)
        text += " Both batches stop at " + w.bindingA.name + ".";
    else
        text += " " + nameA + "'s batch stops at " + w.bindingA.name + ", " + nameB + "'s at " +
                w.bindingB.name + ".";
    text += tpotNote(nameA, ea.metrics, w.bindingA, s.workload.tpotMs);
    text += tpotNote(nameB, eb.metrics, w.bindingB, s.workload.tpotMs);
    // B at A's batch: what its settings change at equal load.
    // Only where the plans hold the same sequences at the same batch (as many replicas and stages); else
    // "the same batch" is not the same load.
    bool equal = false;
    if (ea.metrics.batch != eb.metrics.batch && pa.degrees.dp == pb.degrees.dp &&
        pa.degrees.pp == pb.degrees.pp) {
        Plan q = pb;
        q.batch = ea.metrics.batch;
        if (!model.checkPlan(q)) {
            const Evaluation eq = model.explain(q);
            const Breakdown &ba = settingBreakdown(s, ea), &bq = settingBreakdown(s, eq);
            const double stepA = w.a.stepMs, stepQ = stepOf(s, q, eq.metrics);
            w.equalBatch = ea.metrics.batch;
            w.stepAtEqualBatch = stepKinds(ba, pa.degrees.pp, stepA, bq, q.degrees.pp, stepQ);
            // The collectives: A's against B's at A's batch, the largest changes first.
            std::vector<CommMove> all = commTimes(ba);
            for (const CommMove& m : commTimes(bq)) {
                auto it =
                    std::find_if(all.begin(), all.end(), [&](const CommMove& x) { return x.name == m.name; });
                if (it == all.end())
                    all.push_back({m.name, m.link, 0, m.aMs});
                else
                    it->bMs += m.aMs;
            }
            std::stable_sort(all.begin(), all.end(), [](const CommMove& x, const CommMove& y) {
                return std::abs(x.bMs - x.aMs) > std::abs(y.bMs - y.aMs);
            });
            for (const CommMove& m : all)
                if (w.commsMoved.size() < 3 && std::abs(m.bMs - m.aMs) > 0.01 * stepA)
                    w.commsMoved.push_back(m);
            const std::string parts = partsMoved(w.stepAtEqualBatch, stepA, 3);
            if (stepQ > 0 && !parts.empty() && std::abs(stepQ - stepA) > 0.005 * stepA) {
                equal = true;
                text += " At " + nameA + "'s batch of " + std::to_string(ea.metrics.batch) + ", " + nameB +
                        "'s step takes " + formatDouble("%.3g", std::abs(stepQ - stepA)) + " ms " +
                        (stepQ < stepA ? "less" : "more") + " (" + parts + ")";
                if (!w.commsMoved.empty()) {
                    text += "; most: ";
                    for (size_t i = 0; i < w.commsMoved.size() && i < 2; ++i) {
                        const CommMove& m = w.commsMoved[i];
                        text += (i ? ", " : "") + m.name + " " + formatDouble("%.3g", m.aMs) + " -> " +
                                formatDouble("%.3g", m.bMs) + " ms";
                    }
                }
                text += ".";
                if (stepQ < stepA && eb.metrics.batch > ea.metrics.batch &&
                    w.bindingB.kind != BatchLimit::None)
                    text += " So under " + w.bindingB.name + " " + nameB + " holds a batch of " +
                            std::to_string(eb.metrics.batch) + " against " +
                            std::to_string(ea.metrics.batch) + ".";
            }
        }
    }
    if (!equal) {
        // The base analysis' second sentence, when the equal-batch view has nothing to add.
        const std::string rest = w.sentence.substr(std::min(w.sentence.size(), w.headline.size()));
        text += rest;
    }
    // The settings that decide it: B's settings taken back to A's one at a time, the costliest first.
    std::string decide;
    int named = 0;
    for (const WhatIf& f : w.whatIf) {
        if (named == 3 || !f.valid || f.ratio <= 0 || f.ratio > 0.995) continue;
        decide += (named ? ", " : "") + f.diff.field + " " + f.diff.a + " (" + ratioText(f.ratio) + ")";
        ++named;
    }
    if (named > 0 && w.throughputRatio > 1)
        text += " Taken back to " + nameA + "'s one at a time, " + nameB +
                "'s settings that cost most: " + decide + ".";
    w.sentence = text;
    return w;
}

} // namespace sp
