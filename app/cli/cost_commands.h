#pragma once
#include <string>
#include <vector>

namespace sp::cli {
/// shardplan evaluate --scenario S [--plan P] [--json]
int cmdEvaluate(const std::vector<std::string>& argv);
/// shardplan bench --eval-speed [--json] [--scenario S...] [--seconds T]
int cmdEvalSpeed(const std::vector<std::string>& argv);
/// shardplan calibrate [--json] [FILE]: the cost model against public measurements
int cmdCalibrate(const std::vector<std::string>& argv);
} // namespace sp::cli
