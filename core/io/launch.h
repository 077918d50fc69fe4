#pragma once
// Launch commands for serving engines: a plan's degrees, batch, context length, dtypes and memory headroom as
// vLLM or SGLang flags, plus notes on what the plan says that those flags cannot express (per-operator
// sharding choices outside the engine's fixed scheme, mesh order, expert groups, the pipeline split,
// multi-node launching). The flag names, and the documentation they were checked against, are in launch.cpp.

#include "core/common/error.h"
#include "core/model/scenario.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sp {

/// The serving engines a plan can be exported to (sp::Engine is the search engine).
enum class ServingEngine { Vllm, Sglang };
/// "vllm", "sglang".
std::string_view nameOf(ServingEngine e);
std::optional<ServingEngine> servingEngineFromName(std::string_view s);

/// One engine launch: the command line and what it leaves out.
struct LaunchCommand {
    ServingEngine engine = ServingEngine::Vllm;
    /// The command line, one argument per entry. An argument may hold a `${NAME}` placeholder (e.g.
    /// `${NODE_RANK}`) that the user sets on each node; text() leaves those for the shell to expand.
    std::vector<std::string> argv;
    /// What the plan says that the engine's flags cannot express, one sentence or two each.
    std::vector<std::string> notes;
    /// The shell-quoted command (one option per line, joined by backslashes), then the notes as `# `
    /// comments.
    std::string text() const;
};

/// A model's path for the engines: its `source` turned into a Hugging Face repo id when it is a
/// huggingface.co URL (https://huggingface.co/deepseek-ai/DeepSeek-V3/blob/main/config.json ->
/// deepseek-ai/DeepSeek-V3), else the model's name.
std::string defaultModelPath(const Model& m);

/// One argument quoted for a POSIX shell: as is when it is made of safe characters only, in double quotes
/// when its only specials are `${NAME}` placeholders, else in single quotes.
std::string shellQuote(const std::string& arg);

/// The engine's launch command for `plan` on `scenario`, serving `modelPath` (empty: defaultModelPath()).
/// An error, naming what is wrong, when the plan does not fit the scenario (CostModel::checkPlan).
Result<LaunchCommand> launchCommand(const Scenario& scenario, const Plan& plan, ServingEngine engine,
                                    const std::string& modelPath = {});

} // namespace sp
