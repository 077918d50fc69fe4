#pragma once
// shardplan capacity --fleet: several models on one GPU inventory at least cost (core/sim/fleet.h).

#include <string>
#include <vector>

namespace sp::cli {

/// shardplan capacity --fleet FLEET.yaml [--n-1] [--analytical] [--searcher NAME [--budget N]] [--requests N]
/// [--seed K] [--max-nodes N] [--json]
int cmdFleet(const std::vector<std::string>& argv);

} // namespace sp::cli
