#pragma once
// A plan: parallelism degrees, mesh order, one sharding choice per operator type (or per run of layers), and
// the batch.

#include "core/model/speculative.h"

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sp {

struct Model;

enum class Axis : uint8_t { PP, DP, TP, EP, ETP, EDP };
inline constexpr int kAxisCount = 6;
inline constexpr std::array<std::string_view, kAxisCount> kAxisNames{"pp", "dp", "tp", "ep", "etp", "edp"};

/// Operator types. The first eleven apply to every layer; the Moe* four override norms/qkv/attention/out_proj
/// in MoE layers (so attention can be, e.g., head-sharded in dense layers and batch-sharded in MoE layers).
enum class Op : uint8_t {
    Embedding,
    Norms,
    Qkv,
    Attention,
    OutProj,
    FfnUp,
    FfnDown,
    Router,
    Experts,
    SharedExperts,
    LmHead,
    MoeNorms,
    MoeQkv,
    MoeAttention,
    MoeOutProj
};
inline constexpr int kOpCount = 15;
inline constexpr int kBaseOpCount = 11;
inline constexpr std::array<std::string_view, kOpCount> kOpNames{
    "embedding", "norms",          "qkv",     "attention", "out_proj", "ffn_up",    "ffn_down", "router",
    "experts",   "shared_experts", "lm_head", "norms",     "qkv",      "attention", "out_proj"};

// Choice indices per operator (see choiceNames()).
namespace choice {
enum Embedding : int8_t { EmbVocab, EmbReplicated };
enum Norms : int8_t { NormReplicated, NormToken };
enum Qkv : int8_t { QkvColumn, QkvRow, QkvToken };
enum Attn : int8_t { AttnHead, AttnSequence, AttnBatch };
enum OutProj : int8_t { OutRow, OutColumn, OutToken };
enum FfnUp : int8_t { UpColumn, UpRow, UpToken };
enum FfnDown : int8_t { DownRow, DownColumn, DownToken };
enum Router : int8_t { RouterReplicated, RouterToken };
enum Experts : int8_t { ExpExpert, ExpTensor, ExpToken };
enum Shared : int8_t { SharedColumnRow, SharedToken };
enum LmHead : int8_t { HeadVocab, HeadRow, HeadToken };
} // namespace choice

/// The names of an operator's choices, in index order.
const std::vector<std::string_view>& choiceNames(Op op);
std::optional<int> choiceFromName(Op op, std::string_view name);
/// The Megatron recipe's choice for an operator (column/row linears, sequence-parallel norms, expert
/// parallelism).
int megatronChoice(Op op);
/// The serving engines' fixed scheme on a tensor-parallel group (vLLM, SGLang and TensorRT-LLM alike, after
/// Megatron-LM): the Megatron recipe's choices with replicated norms and router, each block ending in an
/// all-reduce (no sequence parallelism).
int engineChoice(Op op);
/// For the Moe* overrides: the base operator they override (MoeQkv -> Qkv); identity otherwise.
Op baseOp(Op op);

struct Degrees {
    int pp = 1, dp = 1, tp = 1;   ///< attention and dense layers: pp x dp x tp GPUs
    int ep = 1, etp = 1, edp = 1; ///< MoE layers regroup the dp*tp GPUs of a stage as ep x etp x edp
    int get(Axis a) const;
    void set(Axis a, int v);
    bool operator==(const Degrees&) const = default;
};

/// How a MoE layer's communication meets its compute. TwoBatch splits each micro-batch in two and runs one
/// half's all-to-alls and collectives under the other half's compute (SGLang --enable-two-batch-overlap,
/// DeepSeek's inference system); each half re-reads the weights and launches its own kernels.
enum class Overlap : int8_t { Auto, Off, TwoBatch };
inline constexpr std::array<std::string_view, 3> kOverlapNames{"auto", "off", "two-batch"};

/// How finely a plan chooses its per-layer operators' sharding. Type: one choice per operator type, for every
/// layer (Plan::choices); Stage: the first pipeline stage, the middle stages and the last stage each choose
/// their own; LayerGroup: Constraints::layerGroups runs of consecutive layers (the balanced split of the
/// layers) each choose their own. A stage or a run that holds more memory, or a larger share of the
/// pipeline's time, can then replicate what another shards.
enum class Granularity : int8_t { Type, Stage, LayerGroup };
inline constexpr std::array<std::string_view, 3> kGranularityNames{"type", "stage", "layer-group"};
/// The most layer groups a plan may carry (the search's Stage granularity makes three).
inline constexpr int kMaxLayerGroups = 4;

/// Whether an operator's choice is made per layer (and so may differ between layer groups): all but the
/// embedding, the LM head and the routed experts' form, which the expert degrees follow.
bool isLayerOp(Op op);

/// A run of consecutive layers with its own operator choices (Plan::layerGroups).
struct LayerGroup {
    int layers = 0; ///< layers in the run, after the previous run's
    /// The choices these layers run with: the per-layer operators' (isLayerOp) are the group's own, the
    /// others equal Plan::choices.
    std::array<int8_t, kOpCount> choices{};
    bool operator==(const LayerGroup&) const = default;
};

struct Plan {
    Degrees degrees;
    /// Axes tp, dp, pp from innermost (packed inside a node first) to outermost.
    std::array<Axis, 3> meshOrder{Axis::TP, Axis::DP, Axis::PP};
    std::array<int8_t, kOpCount> choices{}; ///< resolved choice per operator
    int64_t batch = 0;                      ///< sequences per replica; 0: chosen by the cost model
    Overlap overlap = Overlap::Auto;        ///< Auto: the cost model takes the faster, per pass
    /// Tokens one forward pass of a replica may carry (chunked prefill: vLLM max_num_batched_tokens, SGLang
    /// chunked_prefill_size, TensorRT-LLM max_num_tokens); 0: the engines' default, kDefaultPrefillBudget.
    int64_t prefillBudget = 0;
    /// Layers per pipeline stage, first to last (vLLM's VLLM_PP_LAYER_PARTITION, SGLang's
    /// SGLANG_PP_LAYER_PARTITION); empty: the balanced split (core/cost pipelineStages). When set it has pp
    /// entries, each at least one, summing to the model's layers (CostModel::checkPlan).
    std::vector<int> stageLayers;
    /// Operator choices by runs of consecutive layers, first to last; empty: Plan::choices for every layer.
    /// When set it has 2 to kMaxLayerGroups groups, each of at least one layer, summing to the model's
    /// layers; the first group's choices are Plan::choices, and no two neighbours choose alike
    /// (normalizeLayerGroups; CostModel::checkPlan).
    std::vector<LayerGroup> layerGroups;
    /// Speculative decoding (core/model/speculative.h): none by default.
    Speculative spec;

    /// The choices layer `layer` runs with.
    const std::array<int8_t, kOpCount>& choicesAt(int layer) const;
    /// A plan with the given degrees and the Megatron recipe's choices.
    static Plan megatronChoices(Degrees d);
    /// A plan with the given degrees and the engines' fixed choices (engineChoice).
    static Plan engineChoices(Degrees d);
    int8_t choice(Op op) const { return choices[static_cast<int>(op)]; }
    void setChoice(Op op, int c) { choices[static_cast<int>(op)] = static_cast<int8_t>(c); }
    bool operator==(const Plan&) const = default;
};

/// vLLM's default max_num_batched_tokens for its OpenAI server on GPUs with 70 GiB or more
/// (vllm/engine/arg_utils.py, EngineArgs.get_batch_defaults), and TensorRT-LLM's default max_num_tokens
/// (docs/source/performance/performance-tuning-guide/tuning-max-batch-size-and-max-num-tokens.md).
inline constexpr int64_t kDefaultPrefillBudget = 8192;
/// The budgets the search weighs when Constraints::searchPrefillBudget is set: powers of two around the
/// default, as the engines' tuning guides sweep them (TensorRT-LLM's tuning-max-batch-size-and-max-num-tokens
/// guide; vLLM's chunked-prefill docs: smaller for inter-token latency, larger for TTFT and throughput).
inline constexpr std::array<int64_t, 5> kSearchedPrefillBudgets{2048, 4096, 8192, 16384, 32768};

/// "38 + 42": a plan's own layers per stage, first to last; empty for the balanced split.
std::string stageLayersText(const Plan& p);

/// Puts layer groups in their one form: neighbours that choose alike are merged, the first group's choices
/// become Plan::choices' per-layer ones, every group's other choices Plan::choices', and a single group is
/// dropped (the plan chooses per type).
void normalizeLayerGroups(Plan& p);

/// "layers 0-29 | 30-60: qkv token, attention batch": each group after the first with the operators whose
/// choice differs from the first group's (layers counted from 0); empty without layer groups. Only operators
/// in `ops` are named (all when empty).
std::string layerGroupsText(const Plan& p, const std::vector<Op>& ops = {});

/// The serving engine whose memory rule sizes the KV pool (core/cost memoryFraction says each):
///  - vLLM: gpu_memory_utilization x the GPU's memory holds everything (weights, activations, KV, the rest);
///  - SGLang: mem_fraction_static x the memory holds the weights and the KV pool, the rest activations and
///    CUDA graphs;
///  - TensorRT-LLM: free_gpu_memory_fraction x what the weights and activations leave is the KV pool.
enum class MemoryRule : int8_t { Vllm, Sglang, Trtllm };
inline constexpr std::array<std::string_view, 3> kMemoryRuleNames{"vllm", "sglang", "trtllm"};

/// How the search splits the layers over pipeline stages. Balanced: the engines' even split (pipelineStages);
/// Tuned: the first and last stage may hold a few layers more or fewer than the balanced split (the middle
/// stages share the rest evenly), so the search can weigh the embedding, the head and the memory of the ends.
enum class StageSplit : int8_t { Balanced, Tuned };
inline constexpr std::array<std::string_view, 2> kStageSplitNames{"balanced", "tuned"};

/// The least memory fraction an input may give (the files' memory_fraction, the scenario editor's field); 0
/// stands for the engine's own default.
inline constexpr double kMinMemoryFraction = 0.05;

struct Constraints {
    int gpus = 0;                                     ///< GPUs to use; 0: the whole cluster
    std::array<std::vector<int>, kAxisCount> allowed; ///< empty: any value
    std::array<int8_t, kOpCount> pinned;              ///< -1: free
    /// Whose rule sizes the KV pool (the engine that serves the plan) and its memory fraction: vLLM's
    /// gpu_memory_utilization, SGLang's mem_fraction_static, TensorRT-LLM's free_gpu_memory_fraction; 0:
    /// the engine's own default for the plan (core/cost memoryFraction).
    MemoryRule memoryRule = MemoryRule::Vllm;
    double memoryFraction = 0; ///< 0, or kMinMemoryFraction to 1
    StageSplit stageSplit = StageSplit::Balanced;     ///< what the search explores; plans may carry any split
    Granularity granularity = Granularity::Type; ///< what the search explores; plans may carry any groups
    int layerGroups = 2; ///< Granularity::LayerGroup: runs of layers, 2 to kMaxLayerGroups
    /// Whether the search chooses the plan's prefill token budget (Plan::prefillBudget, among
    /// kSearchedPrefillBudgets) for serving and prefill workloads; otherwise plans keep the engines' default.
    bool searchPrefillBudget = false;
    /// Speculative decoding: Search weighs every method the model has with the acceptance rates at hand (and
    /// none); Off keeps it off; Pinned runs `specPin` in every plan.
    enum class SpecPolicy : int8_t { Search, Off, Pinned } specPolicy = SpecPolicy::Search;
    Speculative specPin;
    Constraints() { pinned.fill(-1); }
    bool allows(Axis a, int v) const;
    bool operator==(const Constraints&) const = default;
};

/// A short name for the layout: its attention parallelism ("TP" by head, "attention-DP" by batch, "CP" by
/// sequence; none at tp 1), "PP" when pp > 1, "EP" for experts spread over ep > 1 (else "expert-TP" when
/// etp > 1), joined by " + "; "DP" for plain replicas. MoE models are named by their MoE layers' attention.
std::string layoutFamily(const Plan& plan, const Model& model);

} // namespace sp
