#pragma once
// Why one plan beats another, in figures and in words, from two evaluations of the same scenario.
//
// Throughput is sequences in flight over the time of one step (times the prompt length in prefill):
//   decode, serving:  throughput = dp x pp x B / cycle           (output tokens/s)
//   prefill:          throughput = dp x pp x B x I / cycle       (prompt tokens/s)
// so the throughput ratio of two plans is exactly (in-flight ratio) / (step ratio), and the in-flight ratio
// is (replica ratio) x (in-flight per replica ratio). The step's change is split by where its time goes
// (compute, memory, communication per link, pipeline, bubble) from the cost model's breakdown.
//
// Uses the cost model's public results only (Metrics, Breakdown), so it keeps working as they grow.

#include "core/cost/costmodel.h"
#include "core/model/scenario.h"

#include <optional>
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

/// The figures of one plan that throughput is made of.
struct PlanFigures {
    int replicas = 1;      ///< dp: independent copies of the model
    int stages = 1;        ///< pp: micro-batches in flight per replica
    int64_t batch = 0;     ///< sequences per micro-batch
    int64_t inFlight = 0;  ///< replicas x stages x batch: sequences advancing at once, whole cluster
    double stepMs = 0;     ///< one cycle (every micro-batch advances once); 0 when infeasible
    double throughput = 0; ///< tokens/s
    double weightsGiB = 0, kvCacheGiB = 0, capacityGiB = 0;
    bool feasible = false;
};
PlanFigures planFigures(const Scenario& s, const Plan& p, const Metrics& m);

struct WhyRow {
    std::string key;   ///< "replicas", "in_flight", ...
    std::string label; ///< "Replicas (dp)"
    double a = 0, b = 0;
    std::string tip; ///< what the row means
};

struct WhyStepPart {
    std::string name; ///< "compute", "memory", "NVLink", "network", "pipeline", "bubble"
    double aMs = 0, bMs = 0;
};

/// What stops a plan's batch from growing (the largest batch that fits memory, the token budget and the SLOs
/// is the one the cost model takes): found by evaluating the plan one sequence past its batch.
enum class BatchLimit { None, Fixed, Tpot, Ttft, Memory, TokenBudget, Infeasible };
struct Binding {
    BatchLimit kind = BatchLimit::None;
    /// "the TPOT SLO of 30 ms", "memory (the KV pool of 52.1 GiB per GPU)", "the batch fixed at 64"
    std::string name;
    /// What one more sequence a micro-batch would do: "at batch 1089, TPOT 30.02 ms exceeds the SLO of 30 ms"
    std::string detail;
};
Binding bindingLimit(const CostModel& model, const Plan& p, const Metrics& m);

/// A setting in which two plans differ: a degree, the mesh order, the layers per stage or layer groups, the
/// batch, the overlap, the prefill budget, speculative decoding, or an operator's choice.
struct PlanDiff {
    std::string field; ///< "tp", "mesh order", "qkv", "moe.attention", "speculative decoding", ...
    std::string a, b;  ///< the two values in words
    /// B can take A's value alone (an operator's choice, speculative decoding, the mesh order, the overlap,
    /// the batch, the prefill budget); a degree cannot, as other degrees must change with it.
    bool flippable = false;
    /// The plan file's key for it ("mesh_order", "stage_layers", "layer_groups", "moe.qkv", ...): what
    /// compare --json names it by.
    std::string key;
};
/// An operator as PlanDiff::field names it: "qkv", "moe.qkv" (the MoE layers' own).
std::string opField(Op op);
std::vector<PlanDiff> planDifferences(const Model& m, const Plan& a, const Plan& b);
/// `b` with `a`'s value of a flippable setting (PlanDiff::field); nullopt for another field.
std::optional<Plan> withSettingOf(const Plan& b, const Plan& a, const std::string& field);

/// What B would give with one of its settings taken back to A's.
struct WhatIf {
    PlanDiff diff;
    Plan plan;           ///< B with A's value of diff.field
    bool valid = false;  ///< the plan is well formed for the scenario; else `violation` says why
    Metrics metrics;     ///< its evaluation (feasible or not)
    double ratio = 0;    ///< its throughput over B's (0 when infeasible)
    std::string summary; ///< "qkv column (as A): 0.61x B's throughput (TPOT limit, batch 612)"
};
/// One WhatIf per flippable difference, the costliest (lowest ratio) first.
std::vector<WhatIf> whatIfs(const CostModel& model, const Plan& a, const Plan& b, const Metrics& mb);

/// A collective of the step whose time differs between two evaluations (per step of the slowest stage).
struct CommMove {
    std::string name; ///< "all-reduce qkv -> attention (dense layers, NVLink)"
    std::string link; ///< "NVLink", "network", "local"
    double aMs = 0, bMs = 0;
};

struct Why {
    PlanFigures a, b;
    std::vector<WhyRow> rows;
    std::vector<WhyStepPart> step; ///< the step of each plan, by part (the phase that sets the throughput)
    double throughputRatio = 0;    ///< b / a (0 when either is infeasible)
    double inFlightRatio = 0, stepRatio = 0, replicaRatio = 0;
    std::string sentence; ///< one or two sentences naming the main causes
    std::string headline; ///< its first sentence: the throughput ratio as in flight over step

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
};

/// `nameA`, `nameB`: how the sentence names the plans (e.g. "dp512 tp2"); empty: from their degrees.
Why explainWhy(const Scenario& s, const Plan& a, const Evaluation& ea, const Plan& b, const Evaluation& eb,
               std::string nameA = {}, std::string nameB = {});

/// The same, with what the evaluations alone cannot tell: what limits each plan's batch, the settings that
/// differ, B's step at A's batch (which parts and collectives the settings move at equal load), and what B
/// loses with each of its settings taken back to A's. Plans with the same degrees are named by the setting
/// that costs B most when taken back (e.g. "dp18 tp8 ep16, attention batch").
Why explainWhy(const CostModel& model, const Plan& a, const Plan& b, std::string nameA = {},
               std::string nameB = {});

/// A plan's degrees in a few words: the ones above 1 ("dp512 tp2"; "tp1" when all are 1).
std::string degreesName(const Plan& p, bool moe);
/// A ratio in words: "twice", "four times", "half", "a quarter of", else "3.2x".
std::string timesWord(double ratio);

} // namespace sp
