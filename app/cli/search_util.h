#pragma once
// What the search verbs (search, compare, bench) share: Ctrl-C as a stop request (interrupt.h), and small text
// helpers.
#include "interrupt.h"

#include "core/search/engine.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace sp::cli {

/// "--warm-start none|megatron|cd" (core/search/engine.h, WarmStart); nullopt for anything else.
inline std::optional<WarmStart> parseWarmStart(const std::string& s) {
    if (s == "none") return WarmStart::None;
    if (s == "megatron") return WarmStart::Megatron;
    if (s == "cd") return WarmStart::Descent;
    return std::nullopt;
}

inline std::string joined(const std::vector<std::string>& v, const char* sep = ", ") {
    std::string s;
    for (const auto& x : v) s += (s.empty() ? "" : sep) + x;
    return s;
}

/// "a,b,,c": the non-empty parts between commas ("--searchers", "--budgets").
inline std::vector<std::string> splitList(const std::string& text) {
    std::vector<std::string> out;
    std::stringstream ss(text);
    for (std::string n; std::getline(ss, n, ',');)
        if (!n.empty()) out.push_back(n);
    return out;
}

/// The file name without its folders and extension: the short name of a scenario in tables.
inline std::string stem(const std::string& path) {
    std::string s = path.substr(path.find_last_of('/') + 1);
    if (auto dot = s.find_last_of('.'); dot != std::string::npos && dot > 0) s = s.substr(0, dot);
    return s;
}

/// JSON for a number that may be undefined (NaN or infinite -> null).
inline nlohmann::ordered_json num(double x) {
    return std::isfinite(x) ? nlohmann::ordered_json(x) : nullptr;
}

} // namespace sp::cli
