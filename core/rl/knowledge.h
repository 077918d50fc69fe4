#pragma once
// What a Learn-to-Shard policy has learned, keyed by what its parameters mean rather than by where they sit
// in one scenario's search space, so that it carries to another space: the next target of a Pareto sweep, a
// pool one node larger, a rerun after an edit, or a scenario it has never seen (the shipped prior, prior.h).
//
//  - a choice's embedding and logit bias under "decision=value" ("tp=8", "qkv=column", "attention=batch",
//    "experts=expert", "mesh_order=tp,dp,pp"); a decision's position embedding under its name ("tp",
//    "g2.qkv");
//  - the network shared by every decision (attention, MLP, the reward feature) as it is.
//
// Loading into a space (load()): a key the knowledge has is taken as it is; a per-layer-group decision
// ("g2.qkv", "middle.qkv", "last.qkv") falls back to its base ("qkv"); a degree it has not seen ("tp=16"
// after "tp=4" and "tp=8") starts from its nearest degrees' (by log2; the mean of two at equal distance);
// anything else keeps the fresh policy's random start. Saving (save()) writes the space's keys over a base
// knowledge, so what was learned on other spaces and not touched here survives.

#include "core/rl/policy.h"
#include "core/search/engine.h"

#include <map>
#include <string>
#include <vector>

namespace sp {
class SearchSpace;
}

namespace sp::rl {

/// The keys of a space's parameters: per decision its position key, and per choice its choice key.
struct SpaceKeys {
    std::vector<std::string> position;
    std::vector<std::vector<std::string>> choice;
};
SpaceKeys keysOf(const SearchSpace& space);

struct Knowledge final : LearnedState {
    std::map<std::string, VecD, std::less<>> choice;   ///< "tp=8": embedding
    std::map<std::string, double, std::less<>> bias;   ///< "tp=8": logit bias
    std::map<std::string, VecD, std::less<>> position; ///< "tp": position embedding
    /// The shared network: rewardVec, tokenBias, Wq, Wk, Wv, Wo, W1, b1, W2, b2 (emb, bias, pos empty).
    Params shared;
    bool hasShared = false;
    int searches = 0; ///< how many searches it has learned from
    /// A prior's blend (prior.h): the feature distance to its nearest pretraining scenario (0 otherwise).
    double distance = 0;
};

/// Sets `p` (a fresh policy's parameters for the space whose keys are `keys`) from `k` as described above.
/// Returns the number of choice embeddings taken from `k` (exactly or from a neighbour).
int load(const Knowledge& k, const SpaceKeys& keys, Params& p);
/// The knowledge of `p`, written over `base` (null: nothing else).
Knowledge save(const Params& p, const SpaceKeys& keys, const Knowledge* base);

/// The base of a per-layer-group decision name ("g2.qkv" -> "qkv", "middle.moe.mlp" -> "moe.mlp"), else the
/// name itself.
std::string baseDecisionName(const std::string& name);

} // namespace sp::rl
