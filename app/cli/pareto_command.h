#pragma once
// shardplan pareto: the throughput-interactivity frontier (core/searchers/pareto.h) on the command line.
#include <string>
#include <vector>

namespace sp::cli {

/// shardplan pareto --scenario S [--searcher NAME] [--points N] [--budget B] [--seed K] [--threads T]
///                  [--seconds T] [--no-warm-start] [--json] [--csv F] [--at-tpot MS | --at-user-tps X]
/// Exit codes: 0 ok, 1 bad input (or no feasible point, or none at the interactivity asked), 2 usage.
int cmdPareto(const std::vector<std::string>& argv);

} // namespace sp::cli
