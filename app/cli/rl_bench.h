#pragma once
// bench --pretrain (Learn to Shard's shipped prior) and bench --chain (chained searches), rl_bench.cpp.
#include "args.h"

#include <string>
#include <vector>

namespace sp::cli {

/// bench --pretrain FILE --scenario S... [--budget N] [--rounds R] [--threads T] [--held-out NAME]...
int pretrainCommand(Args& a, const std::vector<std::string>& scenarios, const std::string& usage,
                    const std::string& commandLine);
/// bench --chain pareto|pools|rerun --scenario S... [--searchers LIST] [--budgets LIST] [--seeds K]
///       [--points N] [--reference-budget N] [--threads T]
int chainBench(Args& a, const std::vector<std::string>& scenarios, const std::string& usage);

} // namespace sp::cli
