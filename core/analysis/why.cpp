#include "core/analysis/why.h"

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
    // The part of the step that moved most.
    const auto moved =
        std::max_element(w.step.begin(), w.step.end(), [](const WhyStepPart& x, const WhyStepPart& y) {
            return std::abs(x.bMs - x.aMs) < std::abs(y.bMs - y.aMs);
        });
    if (!sameStep && moved != w.step.end() && std::abs(moved->bMs - moved->aMs) > 0.02 * A.stepMs)
        step += " (" + moved->name + " " + fmt("%.3g", std::abs(moved->bMs - moved->aMs)) + " ms " +
                (moved->bMs < moved->aMs ? "less" : "more") + ")";
    s1 += because.empty() ? ": " + step + "." : ": " + because + "; " + step + ".";

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

} // namespace sp
