#pragma once
// Internal to the check*.cpp files: the Checker that gathers one launch's violations, with the rules every
// engine shares (check.cpp) and each engine's own (check_vllm.cpp, check_sglang.cpp, check_trtllm.cpp).

#include "core/export/check.h"

#include <algorithm>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace YAML {
class Node;
}

namespace sp::checking {

// Shared helpers (check.cpp).
std::vector<std::string> placeholders(const std::string& w);
std::set<std::string> specMethodNames(const EngineVersion& v, const std::string& architecture);

struct Checker {
    const LaunchCommand& lc;
    const Scenario& s;
    std::vector<std::string> v; ///< the violations
    /// The plan's speculative decoding, which the command must run as it is; null when the plan is not known
    /// (a Dynamo graph read on its own).
    const Speculative* plan = nullptr;

    // The rules every engine shares (check.cpp).
    void specAgainstPlan(const std::string& who, const EngineVersion& ver, const std::string& method,
                         int64_t k, const std::string& draft, const std::string& flag);
    void fail(const std::string& what) {
        if (std::find(v.begin(), v.end(), what) == v.end()) v.push_back(what);
    }
    int gpn() const { return std::max(1, s.cluster.hostGpus()); } // GPUs a launch node (host) has
    void allowedFlags(const ParsedCommand& c, const std::set<std::string>& allowed, const std::string& who);
    void context(int64_t length, const char* flag);
    void layerPartition(const std::string& var, const std::string& value, int64_t pp, const std::string& who);
    void kvCacheDtype(const ParsedCommand& c, const EngineVersion& ver, const std::string& who);
    void model(const ParsedCommand& c);

    // Each engine's own, beside its exporter: check_vllm.cpp, check_sglang.cpp, check_trtllm.cpp.
    void vllm(const ParsedCommand& c, const EngineVersion& ver);
    void vllmSpec(const ParsedCommand& c, const EngineVersion& ver, int64_t tp, int64_t pp);
    void sglang(const ParsedCommand& c, const EngineVersion& ver);
    void sglangSpec(const ParsedCommand& c, const EngineVersion& ver, int64_t pp, bool dpAttn);
    void trtllm(const ParsedCommand& c, const EngineVersion& ver, bool dynamo);
    void trtllmSpec(const YAML::Node& y, const EngineVersion& ver);
};

// The checks of one engine command of a node (check.cpp), for checkLaunch and checkDynamoGraph.
void checkCommand(Checker& k, const std::string& name, const ParsedCommand& c,
                  const std::vector<std::pair<std::string, std::string>>& nodeEnv,
                  const EngineVersion& version, ServingEngine worker);

} // namespace sp::checking
