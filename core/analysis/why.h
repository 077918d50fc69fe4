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

struct Why {
    PlanFigures a, b;
    std::vector<WhyRow> rows;
    std::vector<WhyStepPart> step; ///< the step of each plan, by part (the phase that sets the throughput)
    double throughputRatio = 0;    ///< b / a (0 when either is infeasible)
    double inFlightRatio = 0, stepRatio = 0, replicaRatio = 0;
    std::string sentence; ///< one or two sentences naming the main causes
};

/// `nameA`, `nameB`: how the sentence names the plans (e.g. "dp512 tp2"); empty: from their degrees.
Why explainWhy(const Scenario& s, const Plan& a, const Evaluation& ea, const Plan& b, const Evaluation& eb,
               std::string nameA = {}, std::string nameB = {});

/// A plan's degrees in a few words: the ones above 1 ("dp512 tp2"; "tp1" when all are 1).
std::string degreesName(const Plan& p, bool moe);
/// A ratio in words: "twice", "four times", "half", "a quarter of", else "3.2x".
std::string timesWord(double ratio);

} // namespace sp
