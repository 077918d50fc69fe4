#pragma once
// What the engine exporters share: the plan as the engines' fixed sharding scheme, notes, shell quoting,
// the model path and context length, per-node scripts, and the nearest runnable layout when a version
// cannot run a plan. Internal to core/export.

#include "core/cost/costmodel.h"
#include "core/export/launch.h"

#include <functional>
#include <variant>

namespace sp::exporting {

std::string lower(std::string s);
std::string str(int64_t v);
/// 0.95, 0.9, 0.925: a fraction with at most three decimals and no trailing zeros.
std::string fraction(double x);
std::string gib(double x);
std::string joined(const std::vector<std::string>& v, const char* sep);
/// "1 GPU", "8 GPUs".
std::string count(int64_t n, const char* what);
int64_t ceilDiv(int64_t a, int64_t b);

/// `text` as shell comment lines of at most `width` characters, each starting with "# " (continuations
/// "#   "), wrapped at spaces (longer words stay whole). Its control characters are written as escapes
/// (core/common/text.h), so no text, whatever it holds, ends a comment: every line is a comment.
std::string commentLines(const std::string& text, size_t width = 110);

/// One command as shell text: the program and its positional arguments on the first line, then one option
/// (with its values) a line, every argument shell-quoted.
std::string commandText(const std::vector<std::string>& argv);
/// A POSIX shell script for one node: `header` as a comment, the node's environment (an empty value is one
/// the user must set: the script stops without it), its comment or commands.
std::string nodeScript(const std::string& header, const NodeLaunch& node);

/// Whether a choice divides the operator's weights, heads or sequences among the tp group, as opposed to
/// running it whole on each GPU's own tokens (token, replicated, batch).
bool splitsOverTp(Op op, int c);

/// Whether an operator exists in the model: the dense-layer operators need dense layers, the router, experts
/// and Moe* overrides MoE layers, the shared experts shared experts.
bool opApplies(const Model& m, Op op);

/// What every engine's mapping starts from.
struct Ctx {
    Ctx(const Scenario& scenario, const Plan& plan, const CostModel& cost)
        : s(scenario), p(plan), m(scenario.model), d(plan.degrees), cost(cost) {}
    const Scenario& s;
    const Plan& p;
    const Model& m;
    Degrees d;
    const CostModel& cost;
    EngineVersion version;
    bool moe = false;
    int gpus = 0, gpn = 0;
    Metrics metrics;
    int64_t batch = 0;       ///< sequences per replica per micro-batch; 0: unknown
    std::string batchSource; ///< where the batch comes from
    Op attnOp = Op::Attention;
    bool attnBatch = false;    ///< attention by batch (DP attention) in the (MoE) layers
    bool tpIsData = false;     ///< tp > 1 but no operator splits over it: the tp axis is data parallelism
    std::string model;         ///< the path the engine loads
    int64_t contextLength = 0; ///< input + output tokens, capped by the model's max_position_embeddings
    std::string contextNote;   ///< why it was capped, when it was
};

/// A plan the engine version cannot run: why, and the layouts nearest to it that it can, each with what
/// changed ("etp 2 -> 4, edp 2 -> 1").
struct Refusal {
    std::string reason;
    std::vector<std::pair<std::string, Plan>> candidates;
};
using EngineResult = std::variant<LaunchCommand, Refusal>;

/// The engines shard attention by head: an attention tensor-parallel group of `attnTp` GPUs must divide the
/// heads (vLLM's ModelConfig.verify_with_parallel_config; SGLang and TensorRT-LLM alike). A refusal with
/// the nearest layouts when it does not: tp down to gcd(tp, heads) with dp up, and (`batchAttention`)
/// attention by batch over the same tp.
std::optional<Refusal> headsRefusal(const Ctx& c, int attnTp, const char* engine, bool batchAttention);

/// The plan's speculative decoding when `c.version` cannot run it (a method the release lacks, MTP for an
/// architecture it has no MTP module for, a draft without a Hub id, a pipeline the release refuses it
/// with): why, with the nearest layouts it runs (the plan without speculative decoding; with a pipeline,
/// also the plan at pp 1), which exportPlan ranks by the cost model. nullopt when it runs it or the plan
/// has none.
std::optional<Refusal> specRefusal(const Ctx& c, const char* engine);
/// A refusal of the plan's speculative decoding for `reason`, with the plan without it as the nearest layout
/// and, when a pipeline (`pipeline`) is why, the plan at pp 1 (dp, and the expert replicas, taking its
/// stages).
Refusal specOff(const Ctx& c, const std::string& reason, bool pipeline);
/// The Hub id of the model the plan's method drafts with (the EAGLE-3 head's or the draft model's); empty
/// for MTP and n-gram, which need none.
std::string specDraftModel(const Ctx& c);
/// The note every speculative export carries: the method and K as `flags` write them, the acceptance rates
/// the plan assumed (acceptanceRates, and where they come from), E (Metrics::tokensPerStep), and that real
/// acceptance depends on the text served.
void specNote(const Ctx& c, const char* engine, const std::string& flags, LaunchCommand& lc);

/// The per-operator choices that differ from the engine's fixed scheme. `group(op)` is the number of GPUs
/// the engine shards that operator over; ops for which it returns 0 are left out.
std::vector<std::string> operatorDifferences(const Ctx& c, const char* engine,
                                             const std::function<int(Op)>& group);
/// Notes every engine shares: context parallelism, the plan's layers per stage against the engine's own
/// split (`layerEnv`: the variable that sets it, null when none does), dtypes the flags do not set,
/// infeasibility, SLOs (`batchFlag`), phase.
void addCommonNotes(const Ctx& c, const char* engine, LaunchCommand& lc, const char* batchFlag,
                    const char* layerEnv);

/// The layers per pipeline stage, first to last, that an engine loads when nothing sets the split (each
/// engine's rule and its source are beside the code).
std::vector<int> engineDefaultStages(const EngineVersion& v, int layers, int pp);
/// The plan's layers per stage, first to last (pipelineStages: its stageLayers, else the balanced split).
std::vector<int> planStages(const Ctx& c);
/// The value of the engine's layer-partition variable ("27,27,26") when the plan's stages are its own
/// (Plan::stageLayers) or differ from the engine's default split; empty when the engine's default is the
/// plan's split.
std::string layerPartition(const Ctx& c);
/// Sets `layerEnv` to layerPartition(c) on every node that starts something (call after placeNodes), so
/// the engine (and a Dynamo worker, which keeps the nodes' environment) splits the layers as the plan.
void setLayerPartition(const Ctx& c, const char* layerEnv, LaunchCommand& lc);
/// The plan's mesh order against the engine's rank layout, when one launch (`launchGpus`) spans nodes.
void meshNote(const Ctx& c, const char* engine, const std::vector<Axis>& engineOrder, bool tpIsData,
              int launchGpus, LaunchCommand& lc);
/// --dtype and --quantization (vLLM and SGLang spell them alike).
void dtypeFlags(const Ctx& c, const char* engine, LaunchCommand& lc);
/// Whether the checkpoint is taken to be FP8 already (DeepSeek-V3/R1, names with FP8).
bool fp8Checkpoint(const Ctx& c);

/// Whether the checkpoint's config.json names custom code (an `auto_map` of configuration_*.py and
/// modeling_*.py in its repository), which the engines load only with trust-remote-code: known by
/// architecture, for the published configs we hold (tests/data/hf/SOURCES.md).
bool configNamesCustomCode(const Model& m);

/// Whether the cluster's GPU is an NVIDIA Hopper (H100, H200, H20, H800, GH200), by its name.
bool hopperGpu(const Gpu& gpu);
/// Whether the cluster's GPU is a data-center Blackwell of compute capability 10.x (B200, B300, GB200, GB300;
/// not the RTX parts of 12.x), by its name: what SGLang's is_sm100_supported() tests.
bool sm100Gpu(const Gpu& gpu);
/// SGLang's default --chunked-prefill-size on `gpu` by the version row's table (its memory in MiB); 0: none.
int64_t sglangDefaultChunk(const EngineVersion& v, const Gpu& gpu);
/// The ROCm image, environment and notes of the version row (EngineVersion::rocmImage) on every node that
/// starts something, when the cluster's GPU is AMD (call after placeNodes).
void rocmSetup(const Ctx& c, const char* engine, const std::string& attention, LaunchCommand& lc);

/// Flags appended as "--name value".
void add(std::vector<std::string>& argv, const char* name, const std::string& value);
void add(std::vector<std::string>& argv, const char* name, int64_t value);
/// The value after `flag` in argv, if the flag is there.
std::optional<std::string> flagValue(const std::vector<std::string>& argv, std::string_view flag);

/// Nodes for `deployments` identical launches of `deploymentGpus` GPUs each on nodes of `gpn` GPUs.
/// `commandFor(rank)` is the command on node `rank` of one deployment (rank 0 serves the API). Launches
/// smaller than a node share nodes, each given its GPUs (CUDA_VISIBLE_DEVICES) and its own `portFlag`
/// port from 8000; launches larger than a node get NODE_RANK set and HEAD_NODE_IP required.
void placeNodes(LaunchCommand& lc, int deployments, int deploymentGpus, int gpn,
                const std::function<std::vector<std::vector<std::string>>(int rank)>& commandFor,
                const char* portFlag = "--port");

/// The engines, each given the version row in `c.version`.
EngineResult vllmCommand(const Ctx& c);
EngineResult sglangCommand(const Ctx& c);
EngineResult trtllmCommand(const Ctx& c);
EngineResult dynamoCommand(const Ctx& c, ServingEngine worker);

/// One role of a Dynamo deployment on Kubernetes: its service name, subComponentType ("" for aggregated
/// serving, "prefill", "decode"), the Dynamo launch of that role and the GPUs it runs on.
struct GraphRole {
    std::string service;
    std::string subComponentType;
    const LaunchCommand* launch = nullptr;
    int64_t gpus = 0;
    /// The model's replicas are independent (a dense model): vLLM data-parallel ranks over nodes become
    /// worker replicas of their own.
    bool independentReplicas = false;
};
/// The NVIDIA Dynamo DynamoGraphDeployment (apiVersion nvidia.com/v1alpha1) of the roles, a frontend and
/// each role's workers (replicas, multinode nodeCount, GPU limit per pod, the worker's arguments and
/// environment), preceded by a ConfigMap for files the workers read; or why there is none (`why`).
std::optional<std::string> dynamoGraph(const std::string& name, ServingEngine worker,
                                       const std::vector<GraphRole>& roles, int gpn, std::string& why);

const std::vector<EngineVersion>& vllmVersions();
const std::vector<EngineVersion>& sglangVersions();
const std::vector<EngineVersion>& trtllmVersions();
const std::vector<EngineVersion>& dynamoVersions();

} // namespace sp::exporting
