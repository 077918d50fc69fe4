#pragma once
// Why one plan beats another, in figures and in words, from two evaluations of the same scenario.
//
// Throughput is sequences in flight, times what each gains in a step, over the step:
//   decode, serving:  throughput = dp x (pp x B) x E / cycle      (output tokens/s; E: tokens a sequence
//                                                                   gains a step, 1 without speculative
//                                                                   decoding, MTP x1 about 1.85)
//   prefill:          throughput = dp x (pp x B) x I / cycle      (prompt tokens/s)
// (core/cost/steps.cpp atBatch). So the throughput ratio of two plans is exactly the product of four factors:
// replicas, sequences in flight per replica, tokens a step, and the inverse of the step ratio. The why names
// them in that order, every one that is not 1, and shows they multiply to the ratio; the step's change is
// split by kind (compute, memory, draft passes, NVLink, network, pipeline) into parts that add up to it.
// docs/desktop-planner.md ("Why a plan wins") shows an example.
//
// Uses the cost model's public results only (Metrics, Breakdown), so it keeps working as they grow.

#include "core/analysis/whatif.h"
#include "core/cost/costmodel.h"
#include "core/model/scenario.h"

#include <string>
#include <vector>

namespace sp {

/// One step of the slowest stage, by where the time goes (ms).
struct StepParts {
    double computeMs = 0;  ///< compute-bound operators
    double memoryMs = 0;   ///< memory-bound operators
    double nvlinkMs = 0;   ///< collectives inside a node
    double networkMs = 0;  ///< collectives across nodes
    double localMs = 0;    ///< collectives of one GPU (normally 0)
    double pipelineMs = 0; ///< stage-to-stage transfers
    double bubbleMs = 0;   ///< pipeline bubble
    /// Communication that runs under compute. The breakdown does not report overlap yet: 0, and every
    /// collective counts in full. When it does, set this from it and the step shrinks by it.
    double hiddenMs = 0;
    double total() const {
        return computeMs + memoryMs + nvlinkMs + networkMs + localMs + pipelineMs + bubbleMs - hiddenMs;
    }
};
/// How often a breakdown entry of this layer kind occurs in the slowest stage.
int layerOccurrences(const Breakdown& b, LayerKind k);
StepParts stepParts(const Breakdown& b);

/// The figures of one plan that throughput is made of: throughput = inFlight x tokensPerStep / stepMs.
struct PlanFigures {
    int replicas = 1;     ///< dp: independent copies of the model
    int stages = 1;       ///< pp: micro-batches in flight per replica
    int64_t batch = 0;    ///< sequences per micro-batch
    int64_t inFlight = 0; ///< replicas x stages x batch: sequences advancing at once, whole cluster
    /// Tokens a sequence gains in one step: E (speculative decoding's expected tokens a step; 1 without) in
    /// decode and serving, the prompt length in prefill.
    double tokensPerStep = 1;
    /// One cycle (every micro-batch advances once): the cost model's step where it reports one (decode,
    /// serving), else what the throughput gives; 0 when infeasible.
    double stepMs = 0;
    double throughput = 0; ///< tokens/s
    double weightsGiB = 0, kvCacheGiB = 0, capacityGiB = 0;
    Speculative spec; ///< speculative decoding as the plan ran it
    bool feasible = false;
};
PlanFigures planFigures(const Scenario& s, const Plan& p, const Metrics& m);

/// One cause of the throughput ratio: `factor` is what it multiplies the ratio by, and the factors of a Why
/// multiply to its throughputRatio.
struct WhyFactor {
    /// "replicas", "in_flight_per_replica", "tokens_per_step", "step"; "unexplained" only if the cost model's
    /// throughput ever stops being in flight x tokens a step / step (it carries the rest, never hidden).
    std::string key;
    std::string label; ///< "Replicas (dp)", ...
    double a = 0, b = 0;
    double factor = 1; ///< b / a; for the step a / b (a longer step divides the throughput)
    std::string words; ///< "four times the replicas (512 against 128)"
};

struct WhyRow {
    std::string key;   ///< "replicas", "in_flight", ...
    std::string label; ///< "Replicas (dp)"
    double a = 0, b = 0;
    std::string tip; ///< what the row means
};

struct WhyStepPart {
    /// "compute", "memory", "draft" (speculative decoding's draft passes), "NVLink", "network", "pipeline"
    std::string name;
    double aMs = 0, bMs = 0;
};

/// A collective of the step whose time differs between two evaluations (per step of the slowest stage).
struct CommMove {
    std::string name; ///< "all-reduce qkv -> attention (dense layers, NVLink)"
    std::string link; ///< "NVLink", "network", "local"
    double aMs = 0, bMs = 0;
};

struct Why {
    PlanFigures a, b;
    std::vector<WhyRow> rows;
    /// Each plan's step (the phase that sets the throughput) by kind: the pp turns of its slowest stage's
    /// operators and collectives, and "pipeline" for the rest of the cycle (transfers between stages), so
    /// the parts add up to PlanFigures::stepMs.
    std::vector<WhyStepPart> step;
    double throughputRatio = 0; ///< b / a (0 when either is infeasible)
    double inFlightRatio = 0, stepRatio = 0, replicaRatio = 0, tokensPerStepRatio = 0;
    /// The causes of throughputRatio, in the order above; empty when either plan is infeasible.
    std::vector<WhyFactor> factors;
    /// The explanation: the ratio as its factors, what carries it, and (from explainWhy(model, ...)) what
    /// speculative decoding's share is, what stops each batch, B at A's batch and the settings that decide.
    /// The CLI and the GUI show it whole.
    std::string sentence;
    std::string headline; ///< its first sentence: the throughput ratio as the product of its factors

    // From explainWhy(model, ...) only: what the plans' evaluations alone cannot tell.
    Binding bindingA, bindingB;
    std::vector<PlanDiff> differences;
    /// B's step at A's batch (both plans carrying the same load): the parts of the step (aMs: A's, bMs: B's
    /// at A's batch) and the collectives whose time changed most; empty when the batches are equal or B
    /// cannot run A's batch.
    int64_t equalBatch = 0;
    std::vector<WhyStepPart> stepAtEqualBatch;
    std::vector<CommMove> commsMoved;
    std::vector<WhatIf> whatIf;
    /// The plans run different speculative decoding: B's throughput over B's with A's speculative decoding
    /// (its share of throughputRatio; the rest, throughputRatio / specShare, is the sharding's). 0 when they
    /// run the same, or B cannot run A's.
    double specShare = 0;
};

/// `nameA`, `nameB`: how the sentence names the plans (e.g. "dp512 tp2"); empty: from their degrees.
Why explainWhy(const Scenario& s, const Plan& a, const Evaluation& ea, const Plan& b, const Evaluation& eb,
               std::string nameA = {}, std::string nameB = {});

/// The same, with what the evaluations alone cannot tell: speculative decoding's share of the ratio, what
/// limits each plan's batch (and, under a TPOT SLO with speculative decoding, the step and the tokens it
/// yields), the settings that differ, B's step at A's batch (which parts and collectives the settings move
/// at equal load), and what B loses with each of its settings taken back to A's. Plans with the same degrees
/// are named by the setting that costs B most when taken back (e.g. "dp18 tp8 ep16, attention batch").
Why explainWhy(const CostModel& model, const Plan& a, const Plan& b, std::string nameA = {},
               std::string nameB = {});

/// A plan's degrees in a few words: the ones above 1 ("dp512 tp2"; "tp1" when all are 1).
std::string degreesName(const Plan& p, bool moe);
/// A ratio in words: "twice", "four times", "half", "a quarter of" (exactly those), else ratioText's "3.2x".
std::string timesWord(double ratio);
/// Speculative decoding in words: "MTP x1", "EAGLE-3 x3", "a draft model x4", "none".
std::string specName(const Speculative& s);

} // namespace sp
