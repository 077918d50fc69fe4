#pragma once
// What the CLI verbs share: exit codes, usage errors, how a plan's degrees read.
#include "core/common/paths.h"
#include "core/io/formats.h"
#include "core/model/plan.h"

#include <iostream>
#include <optional>
#include <string>

namespace sp::cli {

inline constexpr int kOk = 0, kBadInput = 1, kUsage = 2;

/// Prints why and the verb's usage line; returns the usage exit code.
inline int usageError(const std::string& why, const std::string& usage) {
    std::cerr << "shardplan: " << why << "\n\nusage: " << usage << "\n";
    return kUsage;
}

/// JSON text for output; invalid UTF-8 (from a name or a file name) is replaced, never thrown on.
template <class Json> std::string jsonText(const Json& j, int indent = 2) {
    return j.dump(indent, ' ', false, Json::error_handler_t::replace);
}

/// "pp1 x dp4 x tp8", and for MoE models "  (moe: ep32 x etp1 x edp1)"; a plan with its own layers per
/// stage adds them: ", layers per stage 38 + 42", and one with layer groups its groups: ", layer groups:
/// layers 0-29 | 30-60: qkv token".
inline std::string degreesText(const Plan& p, bool moe) {
    const Degrees& d = p.degrees;
    std::string s =
        "pp" + std::to_string(d.pp) + " x dp" + std::to_string(d.dp) + " x tp" + std::to_string(d.tp);
    if (moe)
        s += " (moe: ep" + std::to_string(d.ep) + " x etp" + std::to_string(d.etp) + " x edp" +
             std::to_string(d.edp) + ")";
    if (!p.stageLayers.empty()) s += ", layers per stage " + stageLayersText(p);
    if (!p.layerGroups.empty()) s += ", layer groups: " + layerGroupsText(p);
    if (p.spec.on()) s += ", speculative " + specText(p.spec);
    return s;
}

/// The scenario, or nullopt after printing where and why it is bad input.
inline std::optional<Scenario> loadScenarioOrReport(const std::string& path) {
    auto s = loadScenario(path);
    if (!s) {
        std::cerr << s.error().str() << "\n";
        return std::nullopt;
    }
    return std::move(s).value();
}

/// A plan file, or nullopt after printing its error to stderr.
inline std::optional<Plan> loadPlanOrReport(const std::string& path) {
    auto p = loadPlan(path);
    if (!p) {
        std::cerr << p.error().str() << "\n";
        return std::nullopt;
    }
    return std::move(p).value();
}

} // namespace sp::cli
