#pragma once
// The serving simulation's verbs (core/sim): simulate (sim_commands.cpp), capacity (capacity_command.cpp), and
// bench --sim-speed (sim_bench.cpp).

#include <string>
#include <vector>

namespace sp::cli {

/// shardplan simulate --scenario S [--plan P | --searcher NAME [--budget N]] (--rate R | --trace F) ...
int cmdSimulate(const std::vector<std::string>& argv);
/// shardplan capacity --scenario S (--rate R | --max-rate) [--gpus LIST] ...
int cmdCapacity(const std::vector<std::string>& argv);
/// shardplan bench --sim-speed [--scenario S] [--requests N] [--runs K] [--json]: CPU seconds of a
/// simulation on one core.
int cmdSimSpeed(const std::vector<std::string>& argv);

} // namespace sp::cli
