#pragma once
// Pretraining Learn to Shard's shipped prior (core/rl/prior.h): one policy carried through rl searches of a
// set of scenarios and generated variations of them, round after round, the way a chain of a user's searches
// carries it (SearchOptions::learned); after the last round each scenario's choice embeddings and biases
// become its entry, and the shared network and position embeddings the prior's.

#include "core/rl/prior.h"

#include <functional>
#include <stop_token>
#include <string>
#include <vector>

namespace sp {

struct PretrainOptions {
    int64_t budget = 2000; ///< evaluations of each search
    int rounds = 2;        ///< passes over the scenarios (each in an order drawn from the seed)
    uint64_t seed = 1;
    int threads = 1;
    bool variations = true; ///< add pretrainVariations of each scenario
};

/// A scenario and the variations pretraining adds beside it: half and twice the GPUs (where the scenario
/// does not fix its GPU count), four times the prompt, and a TPOT SLO at 60% of the scenario's (where it has
/// one). Each is named after the scenario with what changed ("x (2x GPUs)").
std::vector<Scenario> pretrainVariations(const Scenario& s);

/// Called after each search: the scenario's name, the round (from 0), the best throughput (0: none feasible).
using PretrainLog = std::function<void(const std::string&, int, double)>;

/// The prior learned over `scenarios` (with variations when asked). Scenarios whose space is empty are
/// skipped. Deterministic for a seed. A stop request ends it after the running search, with what was learned.
rl::Prior pretrainPrior(const std::vector<Scenario>& scenarios, const PretrainOptions& options,
                        const PretrainLog& log = {}, std::stop_token stop = {});

} // namespace sp
