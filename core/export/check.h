#pragma once
// Reading exported launches back: the node scripts parsed as a POSIX shell would split them, and each
// engine command checked against what its version's argument parser accepts and asserts (the rules and
// their sources are beside each check: check.cpp for what every engine shares, check_<engine>.cpp for each
// engine's). The exporters' tests run every export through it.

#include "core/export/launch.h"

#include <map>
#include <string>
#include <vector>

namespace sp {

/// A script's commands, each split into words: quotes removed, `\`-newline continuations joined, `${NAME}`
/// left as written. Comments, blank lines, `set`, `cd`, `export`, `:` and `wait` lines are skipped; a
/// leading `exec` and a trailing `&` are dropped (an `env NAME=VALUE` prefix stays).
std::vector<std::vector<std::string>> parseScript(const std::string& script);

/// An engine command read back: the program ("vllm serve", "sglang.launch_server", "trtllm-serve",
/// "dynamo.vllm", ...), the model it loads, its options (name -> values; a flag without a value maps to
/// "") and what launches it (mpirun/srun with trtllm-llmapi-launch).
struct ParsedCommand {
    std::string program;
    std::string model;
    std::map<std::string, std::string> options;
    std::vector<std::string>
        launcher;        ///< the words before the engine program (mpirun ... trtllm-llmapi-launch)
    int visibleGpus = 0; ///< GPUs in an `env CUDA_VISIBLE_DEVICES=...` prefix; 0: none
    bool has(const std::string& flag) const { return options.count(flag) > 0; }
    int64_t integer(const std::string& flag, int64_t otherwise) const;
};

/// The engine command in `words`, if it is one (ray, the Dynamo frontend: nullopt).
std::optional<ParsedCommand> parseEngineCommand(const std::vector<std::string>& words);

/// Every rule of `version` (and of the scenario: GPUs, nodes, the model's context) that the exported
/// launch breaks, one sentence each; empty when it breaks none. `worker` is Dynamo's worker engine.
std::vector<std::string> checkLaunch(const LaunchCommand& launch, const Scenario& scenario,
                                     const EngineVersion& version,
                                     ServingEngine worker = ServingEngine::Vllm);

/// A Dynamo Kubernetes graph (dynamo-graph.yaml) read back: its documents parsed, one
/// DynamoGraphDeployment (nvidia.com/v1alpha1) with one frontend, its workers' replicas x nodes x GPUs per
/// pod adding up to `gpus`, and each worker's command and arguments checked as checkLaunch checks a node's
/// (with the multinode rank and leader the Dynamo operator gives, and the files of its ConfigMap).
std::vector<std::string> checkDynamoGraph(const std::string& yaml, const Scenario& scenario, int64_t gpus,
                                          ServingEngine worker);

struct DisaggLaunch;
struct DisaggPlan;

/// A disaggregated launch (core/export/disagg_launch.h) read back: each pool checked as checkLaunch does on
/// its own nodes, then SGLang's router against the servers it fronts (one --prefill URL with the server's
/// bootstrap port per prefill server, one --decode URL per decode server, each on the address of the node
/// that serves that server's API, which router.sh requires) and the servers reachable from it (--host
/// 0.0.0.0; prefill servers sharing a node on ports and bootstrap ports of their own).
std::vector<std::string> checkDisaggLaunch(const DisaggLaunch& launch, const Scenario& scenario,
                                           const DisaggPlan& plan, const EngineVersion& version,
                                           ServingEngine worker = ServingEngine::Vllm);

} // namespace sp
