#pragma once
// The serving simulation's verbs (core/sim): simulate, capacity, and bench --sim-speed.
#include "export_commands.h"

#include <string>
#include <vector>

namespace sp::cli {

/// simulate's and capacity's options: the tables their parsers and help come from (as export's).
const std::vector<OptionSpec>& simulateOptions();
const std::vector<OptionSpec>& capacityOptions();
std::string simulateUsage();
std::string capacityUsage();

/// shardplan simulate --scenario S [--plan P | --searcher NAME [--budget N]] (--rate R | --trace F) ...
int cmdSimulate(const std::vector<std::string>& argv);
/// shardplan capacity --scenario S (--rate R | --max-rate) [--gpus LIST] ...
int cmdCapacity(const std::vector<std::string>& argv);
/// shardplan bench --sim-speed [--scenario S] [--requests N] [--runs K] [--json]: CPU seconds of a
/// simulation on one core.
int cmdSimSpeed(const std::vector<std::string>& argv);

} // namespace sp::cli
