#pragma once
// The searchers by name: the baselines (core/search/searcher.h) and rl (core/rl/rlsearcher.h). It sits above
// both, as do the drivers that run a searcher by name (the Pareto sweep, the disaggregated search), so search
// never depends on rl.

#include "core/search/searcher.h"

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace sp {

/// A searcher by name ("megatron", "exhaustive", "random", "random-seq", "cd", "cd-restarts", "sa", "ga",
/// "rl", and any registered later; "rl:FLAG+FLAG" for rl with mechanisms off or set: no-elite, no-imitation,
/// no-temperature, reinforce, one-epoch, no-local, no-policy, no-chains, no-megatron, no-rank, no-families,
/// no-carry, no-prior, fallback-updates, batch=N (4..4096), every=N (1..1000), rerank=N (0..1000), rank=F,
/// families=F and local=F (0..1), carry=F and prior=F (0..4)); null if unknown.
std::unique_ptr<Searcher> makeSearcher(std::string_view name);
/// "" if makeSearcher(name) would make a searcher, otherwise what is wrong with the name, for the user: the
/// known names, or the bad rl flag and what it takes.
std::string searcherError(std::string_view name);
/// What a learning searcher learned (SearchResult::learned) as text for a session file; "" for a state this
/// build does not write.
std::string learnedStateJson(const LearnedState& state);
/// Reads learnedStateJson's text; throws InputError naming the field that is wrong.
std::shared_ptr<const LearnedState> parseLearnedState(std::string_view json, const std::string& file);
/// The registered names, in registration order.
std::vector<std::string> searcherNames();
/// Adds (or replaces) a searcher (call it before use: a static registration object in a static library may
/// be dropped by the linker).
void registerSearcher(std::string name, std::function<std::unique_ptr<Searcher>()> factory);

} // namespace sp
