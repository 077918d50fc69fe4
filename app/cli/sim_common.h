#pragma once
// What simulate, capacity and capacity --fleet share: the simulation options they read, the SLOs in words and
// a simulation's JSON.

#include "args.h"

#include "core/sim/simulator.h"

#include <nlohmann/json.hpp>

#include <string>

namespace sp::cli {

inline constexpr int64_t kDefaultRequests = 1000;

/// "mean" or "p99": where the workload's SLOs are taken.
std::string sloName(const Workload& w);
/// The SLOs in words: "p99 TTFT 2,000 ms, TPOT 50 ms".
std::string sloText(const Workload& w);
/// A simulation's figures as --json writes them.
nlohmann::ordered_json simJson(const SimResult& r, const Workload& w);
/// Reads the options simulate and capacity share into SimOptions; an empty string, or what is wrong.
std::string readSimOptions(Args& a, SimOptions& o);

} // namespace sp::cli
