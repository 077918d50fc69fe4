// The why from two evaluations (core/analysis/why.h): each plan's figures, the factors of the throughput
// ratio and its first sentences. why_model.cpp adds what only the cost model can tell.
#include "core/analysis/why.h"

#include "core/analysis/why_p.h"
#include "core/common/text.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace sp {

namespace why {

std::string ms(double v) {
    return formatDouble("%.4g", v) + " ms";
}

bool unit(double factor) {
    // What ratioText would print as "1x": a factor of 1 to its four figures is not named.
    return std::abs(factor - 1) < 5e-5;
}

const Breakdown& settingBreakdown(const Scenario& s, const Evaluation& e) {
    // The phase whose step sets the throughput: prefill for a prefill workload, else decode.
    if (s.workload.phase == Phase::Prefill || e.decode.ops.empty()) return e.prefill;
    return e.decode;
}

std::vector<WhyStepPart> stepKinds(const Breakdown& ba, int ppA, double stepA, const Breakdown& bb, int ppB,
                                   double stepB) {
    std::vector<WhyStepPart> out{{"compute"}, {"memory"}, {"draft"}, {"NVLink"}, {"network"}, {"pipeline"}};
    auto fill = [&out](const Breakdown& b, int pp, double step, double WhyStepPart::*side) {
        // The cycle is pp turns of the slowest stage, each its operators and collectives (the breakdown's
        // rows); what it holds beyond them is the pipeline's (the transfers between stages).
        double rows = 0;
        for (const OpCost& o : b.ops) {
            const double t = pp * o.timeMs * layerOccurrences(b, o.layer);
            out[o.layer == LayerKind::Draft ? 2 : o.memoryBound ? 1 : 0].*side += t;
            rows += t;
        }
        for (const CommCost& c : b.comms) {
            const double t = pp * c.timeMs * layerOccurrences(b, c.layer);
            out[c.link == LinkClass::Network ? 4 : 3].*side += t;
            rows += t;
        }
        out[5].*side = step - rows;
    };
    fill(ba, ppA, stepA, &WhyStepPart::aMs);
    fill(bb, ppB, stepB, &WhyStepPart::bMs);
    return out;
}

std::string partsMoved(const std::vector<WhyStepPart>& parts, double stepMs, size_t most) {
    std::vector<WhyStepPart> moved;
    for (const WhyStepPart& p : parts)
        if (std::abs(p.bMs - p.aMs) > 0.01 * stepMs) moved.push_back(p);
    std::stable_sort(moved.begin(), moved.end(), [](const WhyStepPart& x, const WhyStepPart& y) {
        return std::abs(x.bMs - x.aMs) > std::abs(y.bMs - y.aMs);
    });
    std::string out;
    for (size_t i = 0; i < moved.size() && i < most; ++i) {
        const WhyStepPart& p = moved[i];
        const std::string what = p.name == "NVLink" || p.name == "network" ? p.name + " collectives"
                                 : p.name == "draft"                       ? "draft passes"
                                                                           : p.name;
        out += (out.empty() ? "" : ", ") + what + " " + formatDouble("%.3g", std::abs(p.bMs - p.aMs)) +
               " ms " + (p.bMs < p.aMs ? "less" : "more");
    }
    return out;
}

} // namespace why

using namespace why;

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
    f.spec = m.spec;
    // throughput = inFlight x tokens a sequence gains a step / cycle (core/cost/steps.cpp atBatch).
    const bool prefill = s.workload.phase == Phase::Prefill;
    f.tokensPerStep = prefill ? double(s.workload.inputTokens) : m.tokensPerStep;
    if (m.feasible && m.throughput > 0)
        f.stepMs =
            !prefill && m.stepMs > 0 ? m.stepMs : 1e3 * double(f.inFlight) * f.tokensPerStep / m.throughput;
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
    // Only where the ratio is exactly that (replicas are whole numbers): the words must not round.
    const auto is = [q](double v) { return std::abs(q - v) < 1e-9 * v; };
    if (is(2)) return "twice";
    if (is(3)) return "three times";
    if (is(4)) return "four times";
    if (is(8)) return "eight times";
    if (is(0.5)) return "half";
    if (is(0.25)) return "a quarter of";
    return ratioText(q);
}

std::string specName(const Speculative& s) {
    if (!s.on()) return "none";
    static const char* const names[kSpecMethodCount] = {"none", "MTP", "EAGLE-3", "a draft model",
                                                        "n-gram lookup"};
    return std::string(names[size_t(s.method)]) + " x" + std::to_string(s.draftTokens);
}

namespace {

/// The factors of B's throughput over A's (why.h): each plan's figures and the words for each.
std::vector<WhyFactor> factorsOf(const Scenario& s, const Why& w) {
    const PlanFigures &A = w.a, &B = w.b;
    const bool prefill = s.workload.phase == Phase::Prefill;
    std::vector<WhyFactor> f;
    const double perA = double(A.stages * A.batch), perB = double(B.stages * B.batch);
    // A factor of 1 in words too ("as many replicas (32)"): compare --json lists every factor.
    f.push_back({"replicas", "Replicas (dp)", double(A.replicas), double(B.replicas), w.replicaRatio,
                 unit(w.replicaRatio)
                     ? "as many replicas (" + std::to_string(B.replicas) + ")"
                     : timesWord(w.replicaRatio) + " the replicas (" + std::to_string(B.replicas) +
                           " against " + std::to_string(A.replicas) + ")"});
    f.push_back({"in_flight_per_replica", "In flight per replica", perA, perB, perB / perA,
                 unit(perB / perA)
                     ? "as many sequences in flight per replica (" + formatDouble("%.0f", perB) + ")"
                     : ratioText(perB / perA) + " the sequences in flight per replica (" +
                           formatDouble("%.0f", perB) + " against " + formatDouble("%.0f", perA) + ")"});
    std::string tokens = unit(w.tokensPerStepRatio) ? "as many" : ratioText(w.tokensPerStepRatio);
    if (prefill) {
        tokens += std::string(unit(w.tokensPerStepRatio) ? "" : " the") + " prompt tokens a sequence (" +
                  formatDouble("%.0f", B.tokensPerStep) +
                  (unit(w.tokensPerStepRatio) ? "" : " against " + formatDouble("%.0f", A.tokensPerStep)) +
                  ")";
    } else {
        // Speculative decoding: a step yields E tokens a sequence. It is the method's, not the sharding's.
        const auto side = [](const PlanFigures& x) {
            return formatDouble("%.3g", x.tokensPerStep) +
                   (x.spec.on() ? " with " + specName(x.spec) : " without");
        };
        tokens += unit(w.tokensPerStepRatio)
                      ? " tokens a sequence gains a step (" + side(B) + ", " + side(A) + ")"
                      : " the tokens a sequence gains a step (speculative decoding's, not the sharding's: " +
                            side(B) + " against " + side(A) + ")";
    }
    f.push_back({"tokens_per_step", prefill ? "Prompt tokens a sequence" : "Tokens a step (E)",
                 A.tokensPerStep, B.tokensPerStep, w.tokensPerStepRatio, tokens});
    std::string step = unit(w.stepRatio) ? "a step as long (" + ms(B.stepMs) + ")"
                                         : "a step " + ratioText(w.stepRatio) + " as long (" + ms(B.stepMs) +
                                               " against " + ms(A.stepMs) + ")";
    // Every part of the step that moved (by more than 1% of A's step), the way the step did first: with the
    // parts too small to name, they add up to the difference.
    if (!unit(w.stepRatio)) {
        std::vector<WhyStepPart> parts = w.step;
        const double sign = w.stepRatio >= 1 ? 1.0 : -1.0;
        std::stable_sort(parts.begin(), parts.end(), [sign](const WhyStepPart& x, const WhyStepPart& y) {
            return sign * (x.bMs - x.aMs) > sign * (y.bMs - y.aMs);
        });
        std::string list;
        for (const WhyStepPart& p : parts) {
            if (std::abs(p.bMs - p.aMs) <= 0.01 * A.stepMs) continue;
            const std::string what = p.name == "draft" ? "draft passes" : p.name;
            list += (list.empty() ? "" : ", ") + what + " " + formatDouble("%+.3g", p.bMs - p.aMs) + " ms";
        }
        if (!list.empty()) step.insert(step.size() - 1, ": " + list);
    }
    f.push_back({"step", "Step time (ms)", A.stepMs, B.stepMs, A.stepMs / B.stepMs, step});
    // The identity holds by the cost model's formula; if it ever stops holding, the rest is named.
    double product = 1;
    for (const WhyFactor& x : f) product *= x.factor;
    const double rest = w.throughputRatio / product;
    if (std::abs(rest - 1) > 1e-9)
        f.push_back({"unexplained", "Not in the figures above", 1, rest, rest,
                     ratioText(rest) + " that the figures above do not explain"});
    return f;
}

/// "13.12 x 1.85 / 1.848 = 13.13": the named factors multiplied out (a step factor as the ratio it divides
/// by); empty when one factor or none is named.
std::string arithmetic(const std::vector<WhyFactor>& f, double total) {
    std::string out;
    int named = 0;
    for (const WhyFactor& x : f) {
        if (unit(x.factor)) continue;
        const bool step = x.key == "step";
        const double shown = step ? 1 / x.factor : x.factor;
        out += named++ == 0 ? (step ? "1 / " : "") + formatDouble("%.4g", shown)
                            : (step ? " / " : " x ") + formatDouble("%.4g", shown);
    }
    return named < 2 ? std::string() : out + " = " + formatDouble("%.4g", total);
}

} // namespace

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
    const bool prefill = s.workload.phase == Phase::Prefill;

    w.rows = {
        {"replicas", "Replicas (dp)", double(A.replicas), double(B.replicas),
         "Independent copies of the model; each serves its own sequences"},
        {"in_flight_per_replica", "In flight per replica", double(A.stages * A.batch),
         double(B.stages * B.batch),
         "Sequences one replica advances at once: pp micro-batches of the batch each"},
        {"in_flight", "Sequences in flight", double(A.inFlight), double(B.inFlight),
         "Sequences the whole cluster advances in one step: replicas x pp x batch"},
        {"tokens_per_step", prefill ? "Prompt tokens a sequence" : "Tokens a step (E)", A.tokensPerStep,
         B.tokensPerStep,
         prefill ? "Tokens each sequence in flight brings in one pass: the prompt"
                 : "Tokens each sequence in flight gains in one step: 1, or speculative decoding's expected "
                   "tokens a step"},
        {"step_ms", "Step time (ms)", A.stepMs, B.stepMs,
         "One cycle, in which every micro-batch in flight advances once; throughput is sequences in flight "
         "times tokens a step over the step"},
        {"weights_gib", "Weights per GPU (GiB)", A.weightsGiB, B.weightsGiB,
         "The weight shards one GPU holds; what they leave of the HBM holds the KV cache"},
        {"kv_cache_gib", "KV cache per GPU (GiB)", A.kvCacheGiB, B.kvCacheGiB,
         "KV cache of the sequences in flight on one GPU"},
    };

    if (!A.feasible || !B.feasible || A.throughput <= 0 || A.inFlight <= 0 || A.stepMs <= 0 ||
        B.stepMs <= 0 || B.inFlight <= 0) {
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
        w.headline = w.sentence;
        return w;
    }
    w.step =
        stepKinds(settingBreakdown(s, ea), A.stages, A.stepMs, settingBreakdown(s, eb), B.stages, B.stepMs);
    w.throughputRatio = B.throughput / A.throughput;
    w.inFlightRatio = double(B.inFlight) / double(A.inFlight);
    w.stepRatio = B.stepMs / A.stepMs;
    w.replicaRatio = double(B.replicas) / double(A.replicas);
    w.tokensPerStepRatio = B.tokensPerStep / A.tokensPerStep;
    w.factors = factorsOf(s, w);

    // Sentence 1: the ratio as its factors, every one that is not 1, multiplied out.
    const bool same = unit(w.throughputRatio);
    std::string s1 = same
                         ? nameB + " and " + nameA + " reach the same throughput"
                         : nameB + " reaches " + ratioText(w.throughputRatio) + " the throughput of " + nameA;
    std::vector<std::string> clauses;
    const WhyFactor &replicas = w.factors[0], &perReplica = w.factors[1], &tokens = w.factors[2],
                    &step = w.factors[3];
    if (!unit(replicas.factor)) {
        clauses.push_back("runs " + replicas.words);
        if (unit(perReplica.factor))
            clauses.back() +=
                " with as many sequences in flight per replica (" + formatDouble("%.0f", perReplica.b) + ")";
    }
    if (!unit(perReplica.factor)) clauses.push_back(perReplica.words);
    if (unit(replicas.factor) && unit(perReplica.factor))
        clauses.push_back("as many sequences in flight (" + std::to_string(B.inFlight) + ")");
    if (!unit(tokens.factor)) clauses.push_back(tokens.words);
    for (size_t i = 4; i < w.factors.size(); ++i) clauses.push_back(w.factors[i].words);
    clauses.push_back(step.words);
    s1 += ": ";
    for (size_t i = 0; i < clauses.size(); ++i)
        s1 += (i == 0 ? "" : i + 1 == clauses.size() ? " and " : "; ") + clauses[i];
    if (const std::string sum = arithmetic(w.factors, w.throughputRatio); !sum.empty()) s1 += "; " + sum;
    s1 += ".";
    w.headline = s1;

    // Sentence 2: the factor that carries the ratio (the largest the way the ratio goes), and memory when it
    // is what let more sequences in.
    std::string s2;
    const WhyFactor* most = nullptr;
    int named = 0;
    for (const WhyFactor& f : w.factors) {
        if (unit(f.factor)) continue;
        ++named;
        if ((std::log(f.factor) > 0) != (w.throughputRatio > 1)) continue;
        if (!most || std::abs(std::log(f.factor)) > std::abs(std::log(most->factor))) most = &f;
    }
    if (!same && named > 1 && most) {
        s2 = "Most of it comes from ";
        if (most->key == "replicas")
            s2 += w.replicaRatio > 1 ? "the replicas" : "fewer replicas";
        else if (most->key == "in_flight_per_replica")
            s2 += most->factor > 1 ? "the sequences in flight" : "fewer sequences in flight";
        else if (most->key == "tokens_per_step")
            s2 += prefill ? "the longer prompts" : "speculative decoding's tokens a step";
        else if (most->key == "step")
            s2 += most->factor > 1 ? "the shorter step" : "the longer step";
        else
            s2 += "what the figures do not explain";
        if (most->key == "in_flight_per_replica" && most->factor > 1.05 && B.weightsGiB < 0.9 * A.weightsGiB)
            s2 += ": each GPU holds " + formatDouble("%.3g", B.weightsGiB) + " GiB of weights against " +
                  formatDouble("%.3g", A.weightsGiB) + ", which leaves room for more KV cache";
        s2 += ".";
    }
    w.sentence = s2.empty() ? s1 : s1 + " " + s2;
    return w;
}

} // namespace sp
