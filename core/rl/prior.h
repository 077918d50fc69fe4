#pragma once
// The prior that ships with the program: what Learn to Shard learned on a pretraining set of scenarios, so a
// new scenario's search does not start from a random policy.
//
// It holds the shared network and the position embeddings once, and per pretraining scenario its features
// (scenarioFeatures) and the choice embeddings and biases its search ended with (knowledge.h keys). A new
// scenario starts from the blend of its nearest pretraining scenarios by features (priorFor): each key the
// weighted mean over the neighbours that have it, weights 1 / (distance + 0.25). The choices mean the same in
// every scenario ("tp=8"), so what was learned on DeepSeek-V3 at 256 GPUs says something about a 128-GPU run,
// and the features say how much.
//
// The weights are resources/rl-prior.json, compiled in; `shardplan bench --pretrain` writes it (the file
// names its own command, and the scenarios held out of it).

#include "core/model/scenario.h"
#include "core/rl/knowledge.h"

#include <array>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace sp::rl {

inline constexpr int kScenarioFeatures = 7;
using ScenarioFeatures = std::array<double, kScenarioFeatures>;
/// log2 of total and active parameters (billions) / 4, MoE (0 / 1), log2 GPUs / 4, log2 GPUs per scale-up
/// domain / 2, log2 input and output tokens / 4, and the TPOT SLO's tightness (log2 of the SLO in ms / 2;
/// 4 for none): each about unit range over the samples.
ScenarioFeatures scenarioFeatures(const Scenario& s);

struct PriorEntry {
    std::string scenario; ///< its name, for the file's reader
    ScenarioFeatures features{};
    std::map<std::string, VecD, std::less<>> choice;
    std::map<std::string, double, std::less<>> bias;
};

struct Prior {
    Params shared; ///< as Knowledge::shared
    bool hasShared = false;
    std::map<std::string, VecD, std::less<>> position;
    std::vector<PriorEntry> entries;
    std::string command;              ///< what wrote it
    std::vector<std::string>
        heldOut; ///< scenarios left out of pretraining (where docs/benchmarks.md ("The prior") checks it)
    bool empty() const { return entries.empty(); }
};

/// Reads a prior file; throws InputError naming the field that is wrong.
Prior parsePrior(std::string_view json, const std::string& file = "rl-prior.json");
std::string priorJson(const Prior& prior);
/// A carried policy (what one chain of searches learned) as text, for a session file: the prior file's
/// layout with the one entry and the number of searches it learned from, format "shardplanner-rl-policy";
/// the weights at four significant digits, as the prior's.
std::string knowledgeJson(const Knowledge& k);
/// Reads knowledgeJson's text; throws InputError naming the field that is wrong.
Knowledge parseKnowledge(std::string_view json, const std::string& file);

/// The compiled-in prior, parsed on first use (thread-safe). Empty when the build has none.
const Prior& shippedPrior();
/// The milliseconds the first shippedPrior() call took to parse it (0 before it).
double shippedPriorParseMs();

/// The knowledge a search of `s` starts from: the blend of its `nearest` nearest entries. Null for an empty
/// prior.
std::shared_ptr<const Knowledge> priorFor(const Prior& prior, const Scenario& s, int nearest = 3);

} // namespace sp::rl
