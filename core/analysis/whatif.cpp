// Two plans setting by setting: what differs, what stops each batch, and what the second plan gives with one
// of its settings taken back to the first's (core/analysis/whatif.h).
#include "core/analysis/whatif.h"

#include "core/common/text.h"
#include "core/cost/validity.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace sp {

std::string ratioText(double q) {
    return formatDouble("%.4g", q) + "x";
}

std::string opField(Op op) {
    return std::string(op >= Op::MoeNorms ? "moe." : "") + std::string(kOpNames[int(op)]);
}

namespace {

std::string meshWords(const Plan& p) {
    std::string out;
    for (Axis a : p.meshOrder) out += (out.empty() ? "" : " > ") + std::string(kAxisNames[int(a)]);
    return out;
}

std::string specWords(const Speculative& s) {
    return s.on() ? specText(s) : "none";
}

std::string gib(double v) {
    return formatDouble("%.1f", v);
}

} // namespace

Binding bindingLimit(const CostModel& model, const Plan& p, const Metrics& m) {
    Binding b;
    const Workload& w = model.scenario().workload;
    if (!m.feasible) {
        b.kind = BatchLimit::Infeasible;
        b.name = "nothing: the plan is infeasible (" + m.violation + ")";
        return b;
    }
    if (p.batch > 0 || w.fixedBatch) {
        b.kind = BatchLimit::Fixed;
        b.name = "the batch fixed at " + std::to_string(m.batch);
        return b;
    }
    // The token budget caps the batch before any SLO is probed (CostModel::Impl::budgetBatchLimit, repeated
    // here from the plan's figures: a fixed batch past it is only flagged outside prefill).
    const double I = double(w.inputTokens), O = double(w.outputTokens), budget = double(m.prefillBudget);
    const double q = m.spec.on() ? double(m.spec.draftTokens + 1) : 1.0, E = m.tokensPerStep;
    double lim = budget / q;
    if (w.phase == Phase::Prefill) lim = budget / I;
    if (w.phase == Phase::Serving)
        lim = q == 1.0 && E == 1.0 ? budget * O / (I + O) : budget / (q + E * I / O);
    if (budget > 0 && m.batch >= std::max<int64_t>(1, int64_t(std::floor(lim + 1e-9)))) {
        b.kind = BatchLimit::TokenBudget;
        b.name = "the token budget of " + std::to_string(m.prefillBudget) + " tokens a step";
        b.detail = "a batch of " + std::to_string(m.batch + 1) + " would need more tokens in one step";
        return b;
    }
    Plan more = p;
    more.batch = m.batch + 1;
    const Metrics n = model.evaluate(more);
    if (n.feasible || n.violations.empty()) {
        b.name = "no limit the model checks (one more sequence would still fit)";
        return b;
    }
    // The cost model's violations, in its order: memory, the token budget, then TTFT and TPOT (costmodel.cpp,
    // steps.cpp describeSlo).
    const std::string& v = n.violations.front();
    b.detail = v; // "TPOT 30.0 ms at batch 1089 exceeds the SLO of 30 ms"
    if (v.rfind("memory", 0) == 0) {
        b.kind = BatchLimit::Memory;
        b.name = "memory (a KV pool of " + gib(m.kvPoolGiB) + " GiB per GPU)";
    } else if (v.rfind("prefill budget", 0) == 0) {
        b.kind = BatchLimit::TokenBudget;
        b.name = "the token budget of " + std::to_string(m.prefillBudget) + " tokens a step";
    } else if (v.rfind("TTFT", 0) == 0) {
        b.kind = BatchLimit::Ttft;
        b.name = "the TTFT SLO of " + formatDouble("%.4g", w.ttftMs) + " ms";
    } else if (v.rfind("TPOT", 0) == 0) {
        b.kind = BatchLimit::Tpot;
        b.name = "the TPOT SLO of " + formatDouble("%.4g", w.tpotMs) + " ms";
    } else {
        b.name = v;
    }
    return b;
}

std::vector<PlanDiff> planDifferences(const Model& m, const Plan& a, const Plan& b) {
    std::vector<PlanDiff> out;
    const bool moe = m.moe.present();
    for (Axis ax : {Axis::PP, Axis::DP, Axis::TP, Axis::EP, Axis::ETP, Axis::EDP}) {
        if (!moe && (ax == Axis::EP || ax == Axis::ETP || ax == Axis::EDP)) continue;
        if (a.degrees.get(ax) != b.degrees.get(ax))
            out.push_back({std::string(kAxisNames[int(ax)]),
                           std::to_string(a.degrees.get(ax)),
                           std::to_string(b.degrees.get(ax)),
                           false,
                           {}});
    }
    if (a.meshOrder != b.meshOrder) out.push_back({"mesh order", meshWords(a), meshWords(b), true, {}});
    if (a.stageLayers != b.stageLayers)
        out.push_back({"layers per stage",
                       a.stageLayers.empty() ? "balanced" : stageLayersText(a),
                       b.stageLayers.empty() ? "balanced" : stageLayersText(b),
                       false,
                       {}});
    if (a.layerGroups != b.layerGroups)
        out.push_back({"layer groups",
                       a.layerGroups.empty() ? "none" : layerGroupsText(a),
                       b.layerGroups.empty() ? "none" : layerGroupsText(b),
                       false,
                       {}});
    if (a.batch != b.batch)
        out.push_back({"batch",
                       a.batch ? std::to_string(a.batch) : "auto",
                       b.batch ? std::to_string(b.batch) : "auto",
                       true,
                       {}});
    if (a.overlap != b.overlap)
        out.push_back({"overlap",
                       std::string(kOverlapNames[size_t(a.overlap)]),
                       std::string(kOverlapNames[size_t(b.overlap)]),
                       true,
                       {}});
    if (a.prefillBudget != b.prefillBudget)
        out.push_back({"prefill budget",
                       a.prefillBudget ? std::to_string(a.prefillBudget) : "default",
                       b.prefillBudget ? std::to_string(b.prefillBudget) : "default",
                       true,
                       {}});
    if (!(a.spec == b.spec))
        out.push_back({"speculative decoding", specWords(a.spec), specWords(b.spec), true, {}});
    for (int o = 0; o < kOpCount; ++o)
        if (opRelevant(m, Op(o)) && a.choices[size_t(o)] != b.choices[size_t(o)])
            out.push_back({opField(Op(o)),
                           std::string(choiceNames(Op(o))[size_t(a.choices[size_t(o)])]),
                           std::string(choiceNames(Op(o))[size_t(b.choices[size_t(o)])]),
                           true,
                           {}});
    static const std::pair<std::string_view, std::string_view> keys[] = {
        {"mesh order", "mesh_order"},
        {"layers per stage", "stage_layers"},
        {"layer groups", "layer_groups"},
        {"prefill budget", "prefill_budget"},
        {"speculative decoding", "speculative"}};
    for (PlanDiff& d : out) {
        d.key = d.field;
        for (const auto& [words, key] : keys)
            if (d.field == words) d.key = key;
    }
    return out;
}

std::optional<Plan> withSettingOf(const Plan& b, const Plan& a, const std::string& field) {
    Plan q = b;
    if (field == "mesh order")
        q.meshOrder = a.meshOrder;
    else if (field == "batch")
        q.batch = a.batch;
    else if (field == "overlap")
        q.overlap = a.overlap;
    else if (field == "prefill budget")
        q.prefillBudget = a.prefillBudget;
    else if (field == "speculative decoding")
        q.spec = a.spec;
    else {
        int op = -1;
        for (int o = 0; o < kOpCount; ++o)
            if (opField(Op(o)) == field) op = o;
        if (op < 0) return std::nullopt;
        q.choices[size_t(op)] = a.choices[size_t(op)];
        // Layer groups start with Plan::choices; a per-layer operator takes A's choice in every group.
        for (LayerGroup& g : q.layerGroups) g.choices[size_t(op)] = a.choices[size_t(op)];
        normalizeLayerGroups(q);
    }
    return q;
}

std::vector<WhatIf> whatIfs(const CostModel& model, const Plan& a, const Plan& b, const Metrics& mb) {
    std::vector<WhatIf> out;
    for (const PlanDiff& d : planDifferences(model.scenario().model, a, b)) {
        if (!d.flippable) continue;
        const auto q = withSettingOf(b, a, d.field);
        if (!q) continue;
        WhatIf w;
        w.diff = d;
        w.plan = *q;
        const std::string head = d.field + " " + d.a + " (as A)";
        if (auto why = model.checkPlan(w.plan)) {
            w.summary = head + ": not a valid plan with B's other settings (" + *why + ")";
            w.metrics.violation = *why;
        } else {
            w.valid = true;
            w.metrics = model.evaluate(w.plan);
            if (w.metrics.feasible && mb.throughput > 0) {
                w.ratio = w.metrics.throughput / mb.throughput;
                w.summary = head + ": " + ratioText(w.ratio) + " B's throughput (batch " +
                            std::to_string(w.metrics.batch) + ")";
            } else {
                w.summary = head + ": infeasible (" + w.metrics.violation + ")";
            }
        }
        out.push_back(std::move(w));
    }
    // The costliest first: valid and feasible by ratio, then infeasible, then invalid ones.
    auto rank = [](const WhatIf& w) { return w.valid ? (w.ratio > 0 ? w.ratio : -1.0) : -2.0; };
    std::stable_sort(out.begin(), out.end(), [&](const WhatIf& x, const WhatIf& y) {
        const double rx = rank(x), ry = rank(y);
        if ((rx > 0) != (ry > 0)) return rx > 0;
        return rx > 0 ? rx < ry : rx > ry;
    });
    return out;
}

} // namespace sp
