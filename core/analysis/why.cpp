#include "core/analysis/why.h"

#include "core/cost/validity.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace sp {

namespace {

std::string fmt(const char* f, double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, f, v);
    return buf;
}

/// A ratio to three significant figures: "3.2x", "0.897x", "12.5x".
std::string ratioText(double q) {
    return fmt(q >= 10 ? "%.1fx" : q >= 1 ? "%.2fx" : "%.3gx", q);
}

bool near(double q, double v) {
    return std::abs(q - v) < 0.005 * v;
}

const Breakdown& settingBreakdown(const Scenario& s, const Evaluation& e) {
    // The phase whose step sets the throughput: prefill for a prefill workload, else decode.
    if (s.workload.phase == Phase::Prefill || e.decode.ops.empty()) return e.prefill;
    return e.decode;
}

} // namespace

int layerOccurrences(const Breakdown& b, LayerKind k) {
    switch (k) {
    case LayerKind::Dense:
        return b.denseLayers;
    case LayerKind::Moe:
        return b.moeLayers;
    case LayerKind::Embedding:
    case LayerKind::Head:
    case LayerKind::Draft:
        return 1; // listed only when the slowest stage holds them (the draft: once a step)
    }
    return 0;
}

StepParts stepParts(const Breakdown& b) {
    StepParts s;
    for (const OpCost& o : b.ops)
        (o.memoryBound ? s.memoryMs : s.computeMs) += o.timeMs * layerOccurrences(b, o.layer);
    for (const CommCost& c : b.comms) {
        const double t = c.timeMs * layerOccurrences(b, c.layer);
        switch (c.link) {
        case LinkClass::Local:
            s.localMs += t;
            break;
        case LinkClass::NvLink:
            s.nvlinkMs += t;
            break;
        case LinkClass::Network:
            s.networkMs += t;
            break;
        }
    }
    s.pipelineMs = b.pipelineTransferMs;
    s.bubbleMs = b.bubbleMs;
    return s;
}

PlanFigures planFigures(const Scenario& s, const Plan& p, const Metrics& m) {
    PlanFigures f;
    f.replicas = p.degrees.dp;
    f.stages = p.degrees.pp;
    f.batch = m.batch;
    f.inFlight = int64_t(f.replicas) * f.stages * m.batch;
    f.throughput = m.throughput;
    f.feasible = m.feasible;
    f.weightsGiB = m.weightsGiB;
    f.kvCacheGiB = m.kvCacheGiB;
    f.capacityGiB = m.capacityGiB;
    // throughput = inFlight x tokens per sequence per step / cycle.
    const double perStep =
        s.workload.phase == Phase::Prefill ? double(s.workload.inputTokens) : m.tokensPerStep;
    if (m.feasible && m.throughput > 0) f.stepMs = 1e3 * double(f.inFlight) * perStep / m.throughput;
    return f;
}

std::string degreesName(const Plan& p, bool moe) {
    std::string out;
    const Degrees& d = p.degrees;
    const std::pair<const char*, int> parts[] = {
        {"pp", d.pp}, {"dp", d.dp}, {"tp", d.tp}, {"ep", moe ? d.ep : 1}, {"etp", moe ? d.etp : 1}};
    for (const auto& [name, v] : parts)
        if (v > 1) out += (out.empty() ? "" : " ") + std::string(name) + std::to_string(v);
    if (out.empty()) out = "tp1";
    if (p.spec.on()) out += " " + specText(p.spec);
    return out;
}

std::string timesWord(double q) {
    if (near(q, 2)) return "twice";
    if (near(q, 3)) return "three times";
    if (near(q, 4)) return "four times";
    if (near(q, 8)) return "eight times";
    if (near(q, 0.5)) return "half";
    if (near(q, 0.25)) return "a quarter of";
    return ratioText(q);
}

Why explainWhy(const Scenario& s, const Plan& pa, const Evaluation& ea, const Plan& pb, const Evaluation& eb,
               std::string nameA, std::string nameB) {
    const bool moe = s.model.moe.present();
    if (nameA.empty()) nameA = degreesName(pa, moe);
    if (nameB.empty()) nameB = degreesName(pb, moe);
    if (nameA == nameB) nameA += " (A)", nameB += " (B)";
    Why w;
    w.a = planFigures(s, pa, ea.metrics);
    w.b = planFigures(s, pb, eb.metrics);
    const PlanFigures &A = w.a, &B = w.b;

    w.rows = {
        {"replicas", "Replicas (dp)", double(A.replicas), double(B.replicas),
         "Independent copies of the model; each serves its own sequences"},
        {"in_flight_per_replica", "In flight per replica", double(A.stages * A.batch),
         double(B.stages * B.batch),
         "Sequences one replica advances at once: pp micro-batches of the batch each"},
        {"in_flight", "Sequences in flight", double(A.inFlight), double(B.inFlight),
         "Sequences the whole cluster advances in one step: replicas x pp x batch"},
        {"step_ms", "Step time (ms)", A.stepMs, B.stepMs,
         "One cycle, in which every micro-batch in flight advances once; throughput is sequences in flight "
         "over the step"},
        {"weights_gib", "Weights per GPU (GiB)", A.weightsGiB, B.weightsGiB,
         "The weight shards one GPU holds; what they leave of the HBM holds the KV cache"},
        {"kv_cache_gib", "KV cache per GPU (GiB)", A.kvCacheGiB, B.kvCacheGiB,
         "KV cache of the sequences in flight on one GPU"},
    };

    const StepParts sa = stepParts(settingBreakdown(s, ea)), sb = stepParts(settingBreakdown(s, eb));
    w.step = {{"compute", sa.computeMs, sb.computeMs},
              {"memory", sa.memoryMs, sb.memoryMs},
              {"NVLink", sa.nvlinkMs + sa.localMs, sb.nvlinkMs + sb.localMs},
              {"network", sa.networkMs, sb.networkMs},
              {"pipeline", sa.pipelineMs, sb.pipelineMs},
              {"bubble", sa.bubbleMs, sb.bubbleMs}};

    if (!A.feasible || !B.feasible || A.throughput <= 0 || A.inFlight <= 0 || A.stepMs <= 0 ||
        B.stepMs <= 0) {
        const auto why = [](const Metrics& m) {
            return m.violation.empty() ? std::string("infeasible") : m.violation;
        };
        if (!A.feasible && !B.feasible)
            w.sentence = "Neither plan is feasible: " + nameA + ": " + why(ea.metrics) + "; " + nameB + ": " +
                         why(eb.metrics) + ".";
        else if (!B.feasible)
            w.sentence = nameB + " is infeasible: " + why(eb.metrics) + ".";
        else
            w.sentence = nameA + " is infeasible: " + why(ea.metrics) + ".";
        return w;
    }
    w.throughputRatio = B.throughput / A.throughput;
    w.inFlightRatio = double(B.inFlight) / double(A.inFlight);
    w.stepRatio = B.stepMs / A.stepMs;
    w.replicaRatio = double(B.replicas) / double(A.replicas);

    // Sentence 1: the throughput ratio as in flight over step.
    std::string s1;
    const bool sameInFlight = near(w.inFlightRatio, 1), sameStep = std::abs(w.stepRatio - 1) < 0.005;
    if (std::abs(w.throughputRatio - 1) < 0.005)
        s1 = nameB + " and " + nameA + " reach the same throughput";
    else
        s1 = nameB + " reaches " + ratioText(w.throughputRatio) + " the throughput of " + nameA;
    std::string because;
    if (!near(w.replicaRatio, 1))
        because = nameB + " runs " + timesWord(w.replicaRatio) + " the replicas" +
                  (sameInFlight ? " with as many sequences in flight in all"
                                : ", so " + ratioText(w.inFlightRatio) + " the sequences are in flight");
    else if (!sameInFlight)
        because = ratioText(w.inFlightRatio) + " the sequences are in flight (" +
                  std::to_string(B.stages * B.batch) + " per replica against " +
                  std::to_string(A.stages * A.batch) + ")";
    std::string step =
        sameStep ? "the step is as long" : "the step is " + ratioText(w.stepRatio) + " as long";
    // The part of the step that moved most the way the step did (a longer step: what grew most).
    const double sign = w.stepRatio >= 1 ? 1.0 : -1.0;
    const auto moved =
        std::max_element(w.step.begin(), w.step.end(), [sign](const WhyStepPart& x, const WhyStepPart& y) {
            return sign * (x.bMs - x.aMs) < sign * (y.bMs - y.aMs);
        });
    if (!sameStep && moved != w.step.end() && sign * (moved->bMs - moved->aMs) > 0.02 * A.stepMs)
        step += " (" + moved->name + " " + fmt("%.3g", std::abs(moved->bMs - moved->aMs)) + " ms " +
                (moved->bMs < moved->aMs ? "less" : "more") + ")";
    s1 += because.empty() ? ": " + step + "." : ": " + because + "; " + step + ".";
    w.headline = s1;

    // Sentence 2: which factor carries the difference, and memory when it is what let more in.
    std::string s2;
    const double inLog = std::log(w.inFlightRatio), stepLog = -std::log(w.stepRatio);
    const double perReplica = double(B.stages * B.batch) / double(A.stages * A.batch);
    if (std::abs(w.throughputRatio - 1) >= 0.005 && std::abs(inLog) + std::abs(stepLog) > 0) {
        const bool fromInFlight = std::abs(inLog) >= std::abs(stepLog);
        s2 = "Most of the difference comes from ";
        s2 += fromInFlight ? (inLog > 0 ? "the sequences in flight" : "fewer sequences in flight")
                           : (stepLog > 0 ? "the shorter step" : "the longer step");
        if (fromInFlight && perReplica > 1.05 && B.weightsGiB < 0.9 * A.weightsGiB)
            s2 += ": each GPU holds " + fmt("%.3g", B.weightsGiB) + " GiB of weights against " +
                  fmt("%.3g", A.weightsGiB) + ", which leaves room for more KV cache";
        s2 += ".";
    }
    w.sentence = s2.empty() ? s1 : s1 + " " + s2;
    return w;
}

// ------------------------------------------------------------------ with the cost model

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
    return fmt("%.1f", v);
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
        b.name = "the TTFT SLO of " + fmt("%.4g", w.ttftMs) + " ms";
    } else if (v.rfind("TPOT", 0) == 0) {
        b.kind = BatchLimit::Tpot;
        b.name = "the TPOT SLO of " + fmt("%.4g", w.tpotMs) + " ms";
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
            out.push_back({std::string(kAxisNames[int(ax)]), std::to_string(a.degrees.get(ax)),
                           std::to_string(b.degrees.get(ax)), false});
    }
    if (a.meshOrder != b.meshOrder) out.push_back({"mesh order", meshWords(a), meshWords(b), true});
    if (a.stageLayers != b.stageLayers)
        out.push_back({"layers per stage", a.stageLayers.empty() ? "balanced" : stageLayersText(a),
                       b.stageLayers.empty() ? "balanced" : stageLayersText(b), false});
    if (a.layerGroups != b.layerGroups)
        out.push_back({"layer groups", a.layerGroups.empty() ? "none" : layerGroupsText(a),
                       b.layerGroups.empty() ? "none" : layerGroupsText(b), false});
    if (a.batch != b.batch)
        out.push_back({"batch", a.batch ? std::to_string(a.batch) : "auto",
                       b.batch ? std::to_string(b.batch) : "auto", true});
    if (a.overlap != b.overlap)
        out.push_back({"overlap", std::string(kOverlapNames[size_t(a.overlap)]),
                       std::string(kOverlapNames[size_t(b.overlap)]), true});
    if (a.prefillBudget != b.prefillBudget)
        out.push_back({"prefill budget", a.prefillBudget ? std::to_string(a.prefillBudget) : "default",
                       b.prefillBudget ? std::to_string(b.prefillBudget) : "default", true});
    if (!(a.spec == b.spec))
        out.push_back({"speculative decoding", specWords(a.spec), specWords(b.spec), true});
    for (int o = 0; o < kOpCount; ++o)
        if (opRelevant(m, Op(o)) && a.choices[size_t(o)] != b.choices[size_t(o)])
            out.push_back({opField(Op(o)), std::string(choiceNames(Op(o))[size_t(a.choices[size_t(o)])]),
                           std::string(choiceNames(Op(o))[size_t(b.choices[size_t(o)])]), true});
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

std::string partsMoved(const std::vector<WhyStepPart>& parts, double stepMs) {
    std::vector<WhyStepPart> moved;
    for (const WhyStepPart& p : parts)
        if (std::abs(p.bMs - p.aMs) > 0.01 * stepMs) moved.push_back(p);
    std::sort(moved.begin(), moved.end(), [](const WhyStepPart& x, const WhyStepPart& y) {
        return std::abs(x.bMs - x.aMs) > std::abs(y.bMs - y.aMs);
    });
    std::string out;
    for (size_t i = 0; i < moved.size() && i < 3; ++i) {
        const WhyStepPart& p = moved[i];
        const std::string what = p.name == "NVLink" || p.name == "network" ? p.name + " collectives" : p.name;
        out += (out.empty() ? "" : ", ") + what + " " + fmt("%.3g", std::abs(p.bMs - p.aMs)) + " ms " +
               (p.bMs < p.aMs ? "less" : "more");
    }
    return out;
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
    // What stops each batch.
    if (w.bindingA.kind == w.bindingB.kind && w.bindingA.name == w.bindingB.name)
        text += " Both batches stop at " + w.bindingA.name + ".";
    else
        text += " " + nameA + "'s batch stops at " + w.bindingA.name + ", " + nameB + "'s at " +
                w.bindingB.name + ".";
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
            const Breakdown& ba = s.workload.phase == Phase::Prefill ? ea.prefill : ea.decode;
            const Breakdown& bq = s.workload.phase == Phase::Prefill ? eq.prefill : eq.decode;
            const StepParts pa2 = stepParts(ba), pq = stepParts(bq);
            w.equalBatch = ea.metrics.batch;
            w.stepAtEqualBatch = {{"compute", pa2.computeMs, pq.computeMs},
                                  {"memory", pa2.memoryMs, pq.memoryMs},
                                  {"NVLink", pa2.nvlinkMs + pa2.localMs, pq.nvlinkMs + pq.localMs},
                                  {"network", pa2.networkMs, pq.networkMs},
                                  {"pipeline", pa2.pipelineMs, pq.pipelineMs},
                                  {"bubble", pa2.bubbleMs, pq.bubbleMs}};
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
            std::sort(all.begin(), all.end(), [](const CommMove& x, const CommMove& y) {
                return std::abs(x.bMs - x.aMs) > std::abs(y.bMs - y.aMs);
            });
            const double stepA = pa2.total(), stepQ = pq.total();
            for (const CommMove& m : all)
                if (w.commsMoved.size() < 3 && std::abs(m.bMs - m.aMs) > 0.01 * stepA)
                    w.commsMoved.push_back(m);
            const std::string parts = partsMoved(w.stepAtEqualBatch, stepA);
            if (!parts.empty() && std::abs(stepQ - stepA) > 0.005 * stepA) {
                equal = true;
                text += " At " + nameA + "'s batch of " + std::to_string(ea.metrics.batch) + ", " + nameB +
                        "'s step takes " + fmt("%.3g", std::abs(stepQ - stepA)) + " ms " +
                        (stepQ < stepA ? "less" : "more") + " (" + parts + ")";
                if (!w.commsMoved.empty()) {
                    text += "; most: ";
                    for (size_t i = 0; i < w.commsMoved.size() && i < 2; ++i) {
                        const CommMove& m = w.commsMoved[i];
                        text += (i ? ", " : "") + m.name + " " + fmt("%.3g", m.aMs) + " -> " +
                                fmt("%.3g", m.bMs) + " ms";
                    }
                }
                text += ".";
                if (stepQ < stepA && eb.metrics.batch > ea.metrics.batch &&
                    w.bindingB.kind != BatchLimit::None)
                    text += " So under " + w.bindingB.name + " its step holds a batch of " +
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
