#pragma once
// Reading and writing the input and plan files (YAML; plans also JSON), Hugging Face config.json import,
// and the per-file validation behind `shardplan validate`.

#include "core/common/error.h"
#include "core/model/disaggplan.h"
#include "core/model/scenario.h"

#include <optional>
#include <string>

namespace sp {

/// Fleet files (core/io/fleetfiles.h) and price lists (core/io/gpudb.h) are read by their own loaders;
/// validate and the desktop planner's File > Open tell them by kind like the others.
enum class FileKind { Model, Cluster, Workload, Constraints, Scenario, Plan, Fleet, Prices };
inline constexpr std::array<std::string_view, 8> kFileKindNames{
    "model", "cluster", "workload", "constraints", "scenario", "plan", "fleet", "prices"};
std::optional<FileKind> fileKindFromName(std::string_view s);
inline std::string_view nameOf(FileKind k) {
    return kFileKindNames[static_cast<int>(k)];
}

/// The architectures a Hugging Face config.json may name.
const std::vector<std::string_view>& supportedHfArchitectures();

// Loading from a file. `path` is used in every error message. A model may be a Hugging Face config.json.
Result<Model> loadModel(const std::string& path);
Result<Cluster> loadCluster(const std::string& path);
Result<Workload> loadWorkload(const std::string& path);
Result<Constraints> loadConstraints(const std::string& path);
Result<Scenario> loadScenario(const std::string& path);
Result<Plan> loadPlan(const std::string& path);

// Parsing text; `file` names it in errors and, for a scenario, is the base for relative paths.
Result<Model> parseModel(const std::string& text, const std::string& file);
Result<Cluster> parseCluster(const std::string& text, const std::string& file);
Result<Workload> parseWorkload(const std::string& text, const std::string& file);
Result<Constraints> parseConstraints(const std::string& text, const std::string& file);
Result<Scenario> parseScenario(const std::string& text, const std::string& file);
Result<Plan> parsePlan(const std::string& text, const std::string& file);

/// A disaggregated plan file (`kind: plan` with `disaggregated: {prefill: {nodes: N, degrees: ...}, decode:
/// {...}}`). With a scenario, the pools' nodes must add up to the cluster's and each pool's pp*dp*tp must be
/// its nodes' GPUs; the errors point at the field.
Result<DisaggPlan> loadDisaggPlan(const std::string& path, const Scenario* scenario = nullptr);
Result<DisaggPlan> parseDisaggPlan(const std::string& text, const std::string& file,
                                   const Scenario* scenario = nullptr);
/// Whether a plan file is a disaggregated one (false for other files; an error if it cannot be read).
Result<bool> isDisaggregatedPlan(const std::string& path);
/// A whole input file read as every input file is: a regular file of at most 64 MiB (a FIFO, a device or a
/// folder is an error, never a wait).
Result<std::string> readTextFile(const std::string& path);
/// The same, for a JSON document read with a JSON library: also refuses malformed JSON (with line and
/// column), nesting deeper than 2,000 levels, a top level that is not an object, and duplicate keys.
Result<std::string> readJsonFile(const std::string& path);
std::string toYaml(const DisaggPlan& p, const Model& m);
std::string toJson(const DisaggPlan& p, const Model& m);

/// The kind of a file: its `kind:` key, a Hugging Face config (model), or guessed from its keys.
Result<FileKind> detectKind(const std::string& path);

// Writing. A scenario is written self-contained (its parts inline).
std::string toYaml(const Model& m);
std::string toYaml(const Cluster& c);
std::string toYaml(const Workload& w);
std::string toYaml(const Constraints& c);
std::string toYaml(const Scenario& s);
std::string toYaml(const Plan& p);
std::string toJson(const Plan& p);
/// The plan file for a model: a dense model's file leaves out the expert degrees and the MoE operators.
std::string toYaml(const Plan& p, const Model& m);
std::string toJson(const Plan& p, const Model& m);

/// Writes atomically (a temporary file beside the target, then rename): a failed write leaves no half file.
Result<bool> writeFileAtomic(const std::string& path, const std::string& content);

/// What `validate` reports for one file.
struct FileReport {
    std::string file;
    std::optional<FileKind> kind;
    bool ok = false;
    Error error;
    std::string summary;    ///< one line, e.g. "model Llama-3.1-70B: 70.55B parameters (70.55B active)"
    double paramsTotal = 0; ///< models (and scenarios: their model)
    double paramsActive = 0;
};
FileReport validateFile(const std::string& path, std::optional<FileKind> kind = std::nullopt);

/// "70.55B", "1.61T", "405M".
std::string formatCount(double n);

} // namespace sp
