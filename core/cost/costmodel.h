#pragma once
// The analytical cost model: per-operator roofline, resharding collectives on the two-level cluster
// hierarchy, pipeline stages, memory per GPU, and SLO-aware batch selection. Deterministic and fast (no
// allocation on the evaluate() path beyond the returned value); explain() adds the full breakdown.

#include "core/model/scenario.h"

#include <array>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace sp {

enum class LinkClass { Local, NvLink, Network };
enum class Collective { AllReduce, ReduceScatter, AllGather, AllToAll, SendRecv, Gather };
std::string_view nameOf(LinkClass l);
std::string_view nameOf(Collective c);

/// Draft: speculative decoding's draft passes of a step (one row a step, on the last stage).
enum class LayerKind { Dense, Moe, Embedding, Head, Draft };
std::string_view nameOf(LayerKind k);

/// Results of one plan. Throughput is the objective: output tokens/s (decode, serving) or prompt tokens/s
/// (prefill), for the whole cluster.
struct Metrics {
    bool valid = false;    ///< the plan is well formed for this scenario (degrees divide, pins kept)
    bool feasible = false; ///< valid, fits memory and meets the SLOs at the chosen batch
    std::string violation; ///< the first reason it is not feasible (or not valid)
    std::vector<std::string> violations;
    double shortfall = 0;  ///< >= 1 when infeasible: how far the binding limit is missed (1.5: 50% over)
    double throughput = 0; ///< tokens/s, whole cluster
    double throughputPerGpu = 0;
    double ttftMs = 0;
    double tpotMs = 0;
    /// Serving: TTFT is the step in flight (tpotMs) and ttftChunks chunk steps of the prompt, chunkMs each.
    int ttftChunks = 0;
    double chunkMs = 0;
    int64_t batch = 0;          ///< sequences per replica per micro-batch
    double memoryPerGpuGiB = 0; ///< peak over stages
    double weightsGiB = 0, kvCacheGiB = 0, activationsGiB = 0, reserveGiB = 0;
    /// What the engine's memory rule lets the plan's weights, activations, KV and reserve take per GPU (the
    /// figure memoryPerGpuGiB is held to): vLLM gpu_memory_utilization x the GPU's memory; TensorRT-LLM the
    /// weights, activations and reserve plus free_gpu_memory_fraction of the rest; SGLang all of it, split
    /// at mem_fraction_static (weights and KV below, activations and the reserve above).
    double capacityGiB = 0;
    MemoryRule memoryRule = MemoryRule::Vllm;
    double memoryFraction = 0;     ///< the engine's flag the plan assumes (see memoryFraction())
    double gpuMemoryGiB = 0;       ///< what the driver reports (Gpu::memoryBytes)
    double kvPoolGiB = 0;          ///< the KV pool the rule leaves at the plan's batch
    double rooflineThroughput = 0; ///< physical bound of the workload on this cluster (same units)
    double rooflineFraction = 0;
    int64_t prefillBudget = 0;    ///< tokens per forward pass of a replica that the plan ran with
    bool twoBatchOverlap = false; ///< the MoE layers ran as two overlapped half-batches
    /// Speculative decoding as the plan ran it; tokensPerStep is E (1 without), a step's time stepMs (decode
    /// and serving), so tpotMs = stepMs / tokensPerStep.
    Speculative spec;
    double tokensPerStep = 1;
    double stepMs = 0;
};

struct OpCost {
    LayerKind layer;
    std::string op;       ///< operator name (e.g. "qkv", "attention", "experts")
    std::string choice;   ///< its sharding choice
    double computeMs = 0; ///< per occurrence (one layer), at the chosen batch, decode step or prefill pass
    double memoryMs = 0;
    double timeMs = 0; ///< max(compute, memory) + launch
    bool memoryBound = false;
    double weightBytes = 0; ///< per GPU
    int layerGroup = 0;     ///< the layer group (Plan::layerGroups) whose layers the row is of; 0 without
    double groupShare =
        1.0; ///< the group's share of the stage's layers of this kind (the row is weighed by it)
};

struct CommCost {
    LayerKind layer;
    std::string where; ///< e.g. "qkv -> attention"
    Collective kind;
    LinkClass link;
    int group = 1;           ///< GPUs in the collective
    double bytes = 0;        ///< per GPU payload
    double timeMs = 0;       ///< per occurrence (one layer); under two-batch overlap, the part left exposed
    double fullMs = 0;       ///< per occurrence, whole (equals timeMs without overlap)
    bool overlapped = false; ///< runs under the other half-batch's compute (two-batch overlap)
    int layerGroup = 0;      ///< the layer group (Plan::layerGroups) whose layers the row is of; 0 without
    double groupShare =
        1.0; ///< the group's share of the stage's layers of this kind (the row is weighed by it)
};

struct Breakdown {
    std::vector<OpCost> ops;
    std::vector<CommCost> comms;
    int denseLayers = 0, moeLayers = 0; ///< in the slowest stage
    double stageMs = 0;                 ///< slowest stage, one step
    double pipelineTransferMs = 0;      ///< per stage boundary
    double bubbleMs = 0;                ///< per step, from unequal stages
    std::string phase;                  ///< "decode step", "prefill pass" or "serving step (...)"
    bool twoBatchOverlap = false;       ///< MoE layers as two half-batches: their layer time is
                                        ///< 2 x (longer + (1 - overlap) x shorter) of a half's parts
    /// Speculative decoding: the draft passes' time in the step (on the last stage, after the verify pass)
    /// and what they were ("mtp x3: 1 pass over 768 tokens + 2 over 256"); 0 and empty without.
    double draftMs = 0;
    std::string draft;
};

struct Evaluation {
    Metrics metrics;
    Breakdown decode;  ///< decode or serving: one decode step
    Breakdown prefill; ///< prefill or serving: one prefill pass
};

/// The pipeline's stages: contiguous layers, balanced; the layers % pp extra layers go to the middle stages
/// so the ends, which also carry the embedding and the head, stay lighter. One (first layer, layer count) per
/// stage.
std::vector<std::pair<int, int>> pipelineStages(int layers, int pp);
/// (first layer, layer count) of stage i of pipelineStages; evaluated per stage on hot paths, so no vector.
inline std::pair<int, int> stageSpan(int layers, int pp, int i) {
    const int base = layers / pp, extra = layers % pp;
    const int shift = (extra > 0 && extra < pp - 1) ? 1 : 0;
    auto count = [&](int j) { return base + ((j - shift) >= 0 && (j - shift) < extra ? 1 : 0); };
    int begin = 0;
    for (int j = 0; j < i; ++j) begin += count(j);
    return {begin, count(i)};
}

/// A plan's stages: its stageLayers when set, else pipelineStages(layers, pp). The plan must be well formed
/// (checkPlan) when stageLayers is set.
std::vector<std::pair<int, int>> pipelineStages(int layers, const Plan& p);

/// The layers of each type (core/model's layerTypeOf: dense or MoE FFN, times how the layer attends) in
/// each stage of pipelineStages, as they lie in the model: the counts the cost model prices a stage by.
std::vector<std::array<int, kLayerTypes>> stageLayerTypes(const Model& m, int pp);
std::vector<std::array<int, kLayerTypes>> stageLayerTypes(const Model& m, const Plan& p);

/// How evaluate() finds the largest batch meeting the SLOs; both give the same batch (latency grows with
/// the batch). Secant: a guess from the SLO ratios at the bracket's ends, a few probes. Bisection: the plain
/// search, kept as the reference for tests and benchmarks.
enum class BatchSearch { Secant, Bisection };

/// The memory fraction the planner assumes for `plan` under `rule`: the scenario's memory_fraction where its
/// rule is `rule` and it sets one, else the engine's own default for the plan (engineDefault true):
///  - vLLM: gpu_memory_utilization 0.9 (vllm/config/cache.py CacheConfig, as core/export/vllm.cpp reads it);
///  - TensorRT-LLM: free_gpu_memory_fraction 0.9 (tensorrt_llm/llmapi KvCacheConfig, core/export/trtllm.cpp);
///  - SGLang: mem_fraction_static = round((M - reserved) / M, 3) for the GPU's M MiB, reserved from the
///    chunked-prefill size, the CUDA-graph batch, tp x pp and DP attention
///    (ServerArgs._handle_gpu_memory_settings, see core/cost/memory.cpp).
struct MemoryFraction {
    double value = 0;
    bool engineDefault = true;
    /// The engine's own default where it cannot start the plan and `value` stands in for it: SGLang's formula
    /// reserves cuda_graph_max_bs x dp x 4.5 MiB for DP attention, more than the GPU at a few dozen ranks;
    /// `value` is then its reserve without that term. Equal to `value` otherwise.
    double engineOwn = 0;
};
MemoryFraction memoryFraction(const Scenario& s, const Plan& plan, MemoryRule rule);
/// SGLang's default mem_fraction_static for a launch, as ServerArgs._handle_gpu_memory_settings computes it
/// (sgl-project/sglang python/sglang/srt/server_args.py, the 0.5.6 row's commit 001067fffe33 that
/// core/export/sglang.cpp reads): with M the GPU's memory in MiB,
///   chunked_prefill_size: 2048 below 35 GiB, 4096 below 60, 8192 below 160, else 16384 (or the launch's);
///   cuda_graph_max_bs: 8 below 20 GiB; below 35, 24 (tp < 4) or 80; below 60, 32 or 160; below 160, 256
///     (tp < 4) or 512; else 512;
///   reserved = 512 + max(chunked_prefill_size, 2048) x 1.5 + cuda_graph_max_bs x 2 + tp x pp / 8 x 1024,
///     with DP attention (dpAttention ranks) + cuda_graph_max_bs x dp x 3 (x 1.5 more above 300), at least
///     10,240 above 60 GiB, + 2,048 for EAGLE/MTP drafts and 6,144 for a draft model;
///   mem_fraction_static = round((M - reserved) / M, 3).
double sglangMemFractionStatic(double memoryMiB, int tpSize, int ppSize, int dpAttention,
                               int64_t chunkedPrefill, SpecMethod spec);

class CostModel {
public:
    explicit CostModel(Scenario s);
    ~CostModel();
    CostModel(CostModel&&) noexcept;
    CostModel& operator=(CostModel&&) noexcept;

    const Scenario& scenario() const;

    /// Why the plan is not well formed for this scenario (degrees that do not divide GPUs, heads, experts;
    /// pins or allowed degrees broken), or nullopt.
    std::optional<std::string> checkPlan(const Plan& p) const;
    /// The metrics of a plan, choosing the batch unless the plan or workload fixes it. Thread-safe.
    Metrics evaluate(const Plan& p) const;
    /// evaluate() plus the per-operator and per-collective breakdown.
    Evaluation explain(const Plan& p) const;
    /// The physical bound: throughput at peak FLOP/s and bandwidth with no communication (same units).
    double rooflineThroughput() const;
    /// The standard recipe (see megatron.cpp).
    Plan megatronPlan() const;
    /// The batch search evaluate() uses (Secant unless set); not thread-safe against evaluations in flight.
    void setBatchSearch(BatchSearch b);

    /// The model's internals (core/cost/impl.h, not part of the interface; named here so that the tests that
    /// check them against plain calculations can build one).
    struct Impl;

private:
    friend class StepCost; // core/cost/stepcost.h: the step at a simulation's compositions
    std::unique_ptr<Impl> d;
};

} // namespace sp
