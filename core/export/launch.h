#pragma once
// Launch commands for serving engines, per engine version: a plan's degrees, batch, context length, dtypes
// and memory headroom as vLLM, SGLang, TensorRT-LLM or NVIDIA Dynamo flags, one script per node, plus notes
// on what the plan says that the flags cannot express. Each engine's flags and constraints, with the
// parser file and release they were read from, are in its own file (vllm.cpp, sglang.cpp, trtllm.cpp,
// dynamo.cpp); this layer sits above the cost model, which it uses to evaluate what it exports.

#include "core/common/error.h"
#include "core/model/scenario.h"

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sp {

/// The serving engines a plan can be exported to (sp::Engine is the search engine).
enum class ServingEngine { Vllm, Sglang, Trtllm, Dynamo };
/// "vllm", "sglang", "trtllm", "dynamo".
std::string_view nameOf(ServingEngine e);
std::optional<ServingEngine> servingEngineFromName(std::string_view s);
/// Every serving engine, in the order above.
const std::vector<ServingEngine>& servingEngines();

/// One row of an engine's version table: what that release's argument parser accepts and checks. The
/// flags a field names are those of the engine it belongs to (see the engine's file for the citations).
struct EngineVersion {
    ServingEngine engine = ServingEngine::Vllm;
    std::string version; ///< "0.11.1"
    std::string source;  ///< the parser file(s) and the release or commit they were read from
    /// The options the exports write for this version, as its parser spells them; a command with any other
    /// is one this version refuses (core/export/check.h).
    std::vector<std::string> flags;
    /// The asserts of its parser that a layout can break, one sentence each with where they are.
    std::vector<std::string> constraints;
    // vLLM
    bool nnodes = false; ///< --nnodes/--node-rank/--master-addr (multi-node multiprocessing)
    /// A world size (tp x pp) above the host's GPUs falls back to the Ray executor when
    /// --distributed-executor-backend is not given (instead of being refused).
    bool rayByDefault = false;
    bool all2allFlag = false;       ///< --all2all-backend (before: the VLLM_ALL2ALL_BACKEND variable)
    bool rayDpPackStrategy = false; ///< the VLLM_RAY_DP_PACK_STRATEGY variable
    // SGLang
    bool moeDpSize = false;     ///< --moe-dp-size
    bool moeA2aBackend = false; ///< --moe-a2a-backend deepep (before: --enable-deepep-moe)
    /// --ep-size below --tp-size shards the experts (expert TP inside EP); before, the MoE layers ran
    /// expert-parallel over the whole tp-size (--enable-ep-moe, --enable-deepep-moe) or not at all.
    bool partialExpertParallel = false;
    /// The default --chunked-prefill-size by the GPU's memory: (below this many GiB, tokens), the last
    /// pair's tokens for any larger GPU.
    std::vector<std::pair<int, int64_t>> chunkedPrefill;
    /// The KV page size SGLang's default attention backend forces for DeepseekV3ForCausalLM on SM100 GPUs
    /// (B200, B300, GB200, GB300: trtllm_mla, page 32 or 64, else 64); 0: none known for the release. DP
    /// attention divides --chunked-prefill-size by the DP size before check_server_args asserts that it
    /// divides by the page size.
    int sm100MlaPageSize = 0;
    /// Architectures whose MTP (NEXTN/EAGLE) draft path defaults to the model's own: an explicit
    /// --speculative-draft-model-path only draws a warning ("DeepSeek MTP does not require setting
    /// speculative_draft_model_path.").
    std::vector<std::string> mtpDraftImplicit;
    /// With SGLANG_PP_LAYER_PARTITION unset, the layers % pp extra layers go one each on the last stages
    /// (else all on the last stage); see engineDefaultStages in core/export/common.cpp.
    bool ppExtraOnLastStages = false;
    /// The MoE layers divide the experts evenly over the expert-parallel size (FusedMoE's assert); the
    /// architectures whose model code adds --ep-num-redundant-experts slots to fill the gap (empty: none).
    bool evenExperts = false;
    std::vector<std::string> redundantExpertArchitectures;
    // vLLM and SGLang
    std::vector<std::string> kvCacheDtypes; ///< the --kv-cache-dtype choices (empty: not checked)
    // all engines
    /// Of the architectures shardplan imports (supportedHfArchitectures()), those the release's model
    /// registry has, read where `architecturesSource` says; empty: not checked.
    std::vector<std::string> architectures;
    std::string architecturesSource;
    /// On AMD GPUs (vLLM and SGLang): the ROCm image, the environment every node sets, and where both
    /// were read; empty image: the release has no ROCm build (refused there).
    std::string rocmImage;
    std::vector<std::pair<std::string, std::string>> rocmEnv;
    std::string rocmSource;
    int64_t defaultPrefillTokens = 0; ///< the engine's default prefill token budget per step (0: derived)
    double defaultMemoryFraction = 0; ///< the engine's default memory fraction
    // Speculative decoding (Plan::spec): what the release runs, read where `specSource` says.
    /// The architectures the release has an MTP draft module for, each with the method name its speculative
    /// config takes for it (vLLM 0.10.2 "deepseek_mtp", SGLang "EAGLE", TensorRT-LLM "MTP"); empty: no MTP.
    std::vector<std::pair<std::string, std::string>> mtpArchitectures;
    bool eagle3 = false;            ///< EAGLE-3 heads
    bool draftModel = false;        ///< a separate draft model
    bool ngram = false;             ///< prompt lookup (n-gram) drafting
    bool specNoPipeline = false;    ///< speculative decoding refused with a pipeline (pp > 1)
    std::string specSource;         ///< where the methods were read
    std::string specPipelineSource; ///< where the pipeline refusal was read
    /// The speculative method name the release takes for the plan's method on `architecture`; empty when
    /// it cannot run it.
    std::string specMethodName(SpecMethod method, const std::string& architecture) const;
};

/// The known versions of an engine, oldest first.
const std::vector<EngineVersion>& engineVersions(ServingEngine e);
/// "0.10.2, 0.11.1" (oldest first).
std::string knownVersionsText(ServingEngine e);
/// The row for `version` (empty: the newest known); an error listing the known ones for any other.
Result<EngineVersion> findEngineVersion(ServingEngine e, std::string_view version);

struct ExportOptions {
    ServingEngine engine = ServingEngine::Vllm;
    std::string version;   ///< empty: the newest known
    std::string modelPath; ///< empty: the model's Hub id (Model::hubId, else its huggingface.co source)
    /// A plan the version cannot run: export the nearest runnable layout with a note (true) or refuse.
    bool adapt = true;
    /// Dynamo's worker engine (vllm, sglang or trtllm).
    ServingEngine dynamoWorker = ServingEngine::Vllm;
};

/// What one node runs.
struct NodeLaunch {
    /// Environment set before the commands; an empty value is one the user must set (e.g. HEAD_NODE_IP).
    std::vector<std::pair<std::string, std::string>> env;
    /// Commands, one argument per entry, run in order; the first `background` of them in the background
    /// (the Dynamo frontend), the others each to its end (the last one for as long as it serves).
    std::vector<std::vector<std::string>> commands;
    size_t background = 0;
    /// Why a node has nothing to start (its processes are started from another node), else empty.
    std::string comment;
};

/// One engine launch: the command line(s), per node, and what they leave out.
struct LaunchCommand {
    ServingEngine engine = ServingEngine::Vllm;
    std::string version; ///< the engine version the flags are for
    /// Node 0's engine command, one argument per entry. An argument may hold a `${NAME}` placeholder (e.g.
    /// `${NODE_RANK}`) that the user sets on each node; text() leaves those for the shell to expand.
    std::vector<std::string> argv;
    /// What the plan says that the engine's flags cannot express, one sentence or two each.
    std::vector<std::string> notes;
    /// Every node's commands (node 0 first); the nodes of one deployment, then the next.
    std::vector<NodeLaunch> nodes;
    /// Files the commands read, written beside the scripts: (file name, content).
    std::vector<std::pair<std::string, std::string>> files;
    /// Files for another way to deploy the same launch, written beside the scripts but read by none of them
    /// (Dynamo's Kubernetes DynamoGraphDeployment, dynamo-graph.yaml): (file name, content).
    std::vector<std::pair<std::string, std::string>> deployFiles;
    /// The plan exported: the plan given, or the nearest layout the version can run (adapted).
    Plan plan;
    bool adapted = false;
    /// Node 0's commands, shell-quoted (one option per line, joined by backslashes), then the notes as `# `
    /// comments.
    std::string text() const;
    /// One POSIX shell script per node: ("node0.sh", text), ...
    std::vector<std::pair<std::string, std::string>> scripts() const;
    /// The notes, one paragraph each.
    std::string notesText() const;
};

/// One file of an export folder: its path inside the folder ("node0.sh", "prefill/node0.sh").
struct ExportFile {
    std::string name;
    std::string content;
    bool executable = false;
};

/// The file that lists what an export wrote into its folder, one name a line.
inline constexpr const char* kExportManifest = ".shardplan-export";
/// The most node scripts one export folder holds: 16,384 hosts are 131,072 GPUs on 8-GPU hosts, past the
/// largest clusters built (about 200,000 GPUs run as several).
inline constexpr long kMaxNodeScripts = 16'384;

/// Writes `files` into `dir` (created when missing), each atomically, then removes what the previous export
/// there wrote and this one does not (a 4-node export over a 32-node one leaves no node4.sh .. node31.sh
/// that still start the old plan), and lists the new files in kExportManifest. A folder that holds
/// anything and is no previous export (no manifest, and not the NOTES.txt + plan.yaml of an export written
/// before the manifest) is refused before anything is written; files of the user's beside an export are
/// left alone. A new or empty folder is written whole or not at all (a staging folder beside it, renamed).
/// More than kMaxNodeScripts node scripts are refused. The paths written, or the first error.
Result<std::vector<std::string>> writeExportFiles(const std::string& dir,
                                                  const std::vector<ExportFile>& files);

/// The files of one launch: one script per node (node0.sh, ... executable), the files the commands read,
/// `plan.yaml` (`planYaml`) and NOTES.txt (what the engine cannot express), under `prefix` ("" or
/// "decode/").
std::vector<ExportFile> launchFiles(const LaunchCommand& launch, const std::string& planYaml,
                                    const std::string& prefix = {});

/// writeExportFiles(dir, launchFiles(launch, planYaml)).
Result<std::vector<std::string>> writeLaunchDirectory(const std::string& dir, const LaunchCommand& launch,
                                                      const std::string& planYaml);

/// A model's path for the engines: its Hub id, else its `source` turned into a Hugging Face repo id when
/// it is a huggingface.co URL of the model's own repository
/// (https://huggingface.co/deepseek-ai/DeepSeek-V3/blob/main/config.json -> deepseek-ai/DeepSeek-V3);
/// empty when neither says (a file stem or display name is not something an engine can load).
std::string defaultModelPath(const Model& m);

/// Whether the cluster's GPU is an AMD Instinct (the GPU database's mi300x, mi325x, mi355x, or a cluster
/// file's own GPU named so): by its name, "Instinct", "AMD" or "MI" and three digits. The one place the
/// exports decide it (ROCm builds, engines that run on NVIDIA GPUs only).
bool amdGpu(const Gpu& gpu);

/// One argument quoted for a POSIX shell: as is when it is made of safe characters only, in double quotes
/// when its only specials are `${NAME}` placeholders, else in single quotes.
std::string shellQuote(const std::string& arg);

/// The engine's launch for `plan` on `scenario`. An error, naming what is wrong, when the plan does not
/// fit the scenario (CostModel::checkPlan), the version is unknown, the model path is unknown, the
/// workload needs a longer context than the model has, or the version cannot run the plan and
/// `adapt` is off.
Result<LaunchCommand> launchCommand(const Scenario& scenario, const Plan& plan, const ExportOptions& options);
/// The newest known version of `engine`, serving `modelPath` (empty: defaultModelPath()).
Result<LaunchCommand> launchCommand(const Scenario& scenario, const Plan& plan, ServingEngine engine,
                                    const std::string& modelPath = {});

} // namespace sp
