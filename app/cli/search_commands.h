#pragma once
// The search verbs of the command line. Exit codes: 0 ok, 1 bad input (or no feasible plan), 2 usage.
#include <string>
#include <vector>

namespace sp::cli {

/// shardplan search --scenario S --searcher NAME [--budget N] [--seconds T] [--seed K] [--threads T]
///                  [--out plan.json|plan.yaml] [--json]
int cmdSearch(const std::vector<std::string>& argv);
/// shardplan compare --scenario S A B [--json]: metrics side by side, ratios B/A, and what differs.
int cmdCompare(const std::vector<std::string>& argv);
/// shardplan bench --scenario S... [--searchers LIST] [--budgets LIST] [--seeds K] [--best FILE] [--json]
///                 [--csv F]: success rates against the best-known plans (search_bench.cpp); with
///                 --refresh-best FILE, long runs that find and store those plans.
int cmdBench(const std::vector<std::string>& argv);

} // namespace sp::cli
