#include "args.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string_view>

namespace sp::cli {

namespace {

/// The accepted range of every numeric option, so a huge or non-finite value is a usage error here rather
/// than an overflow in the search (lookups x budget, or seconds cast to a clock duration).
struct Bounds {
    std::string_view name;
    double min, max;
    bool minExclusive;
};
constexpr double kMaxInt = 9007199254740992.0; // 2^53: every integer up to it is exact in a double
constexpr Bounds kBounds[] = {
    {"budget", 1, 1e12, false}, // evaluations: far more than a search can run (see bench --eval-speed)
    {"seconds", 0.1, 1e6,
     false},                     // wall-clock limit: below 0.1 s no plan may be evaluated; 1e6 s is 11.6 days
    {"seed", 0, kMaxInt, false}, //
    {"seeds", 1, 10000, false},  //
    {"threads", 0, 4096, false}, // 0: all cores
    {"load", 0, 0.99, false},    // arrival rate as a share of a disaggregated plan's capacity (queueing)
    // pareto --disaggregated: evaluations of each pool search
    {"pool-budget", 1, 1e12, false},
    // simulate and capacity
    {"rate", 0, 1e9, true}, // requests/s
    // coefficient of variation of the arrival gaps (1: Poisson); gamma gaps of shape 1 / cv^2: below 0.01 the
    // shape passes 10,000 and the gaps are regular to within 1% anyway (1e-160 made the shape infinite)
    {"burst-cv", 0.01, 100, false},
    {"requests", 1, 1e9, false},          //
    {"duration", 0, 1e9, true},           // seconds of arrivals
    {"batch-cap", 1, 1e7, false},         //
    {"max-nodes", 1, 1e5, false},         //
    {"check", 1, 100, false},             // search: plans simulated for a percentile SLO
    {"runs", 1, 1000, false},             // bench --sim-speed
    {"rounds", 1, 100, false},            // bench --pretrain
    {"reference-budget", 1, 1e12, false}, // bench --chain
};

const Bounds* boundsOf(const std::string& name) {
    for (const auto& b : kBounds)
        if (b.name == name) return &b;
    return nullptr;
}

std::string numText(double v) {
    if (v == std::floor(v) && std::fabs(v) < 1e15) return std::to_string(static_cast<long long>(v));
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.15g", v);
    return buf;
}

std::string rangeText(const Bounds& b) {
    return (b.minExclusive ? "greater than " + numText(b.min) + " and at most "
                           : "from " + numText(b.min) + " to ") +
           numText(b.max);
}

} // namespace

Args::Args(std::vector<std::string> argv, std::set<std::string> flags, std::set<std::string> options) {
    for (size_t i = 0; i < argv.size(); ++i) {
        const std::string& a = argv[i];
        if (a.rfind("--", 0) != 0 || a == "--") {
            m_positionals.push_back(a);
            continue;
        }
        std::string name = a.substr(2), value;
        const auto eq = name.find('=');
        const bool inlineValue = eq != std::string::npos;
        if (inlineValue) value = name.substr(eq + 1), name = name.substr(0, eq);
        if (flags.count(name)) {
            if (inlineValue) m_error = "--" + name + " takes no value";
            m_flags.insert(name);
        } else if (options.count(name)) {
            if (!inlineValue) {
                if (i + 1 >= argv.size()) {
                    m_error = "--" + name + " needs a value";
                    return;
                }
                value = argv[++i];
            }
            m_options.emplace(name, value);
        } else {
            m_error = "unknown option --" + name;
            return;
        }
    }
}

std::optional<std::string> Args::option(const std::string& name) const {
    auto it = m_options.find(name);
    if (it == m_options.end()) return std::nullopt;
    return it->second;
}

std::vector<std::string> Args::all(const std::string& name) const {
    std::vector<std::string> out;
    auto [b, e] = m_options.equal_range(name);
    for (auto it = b; it != e; ++it) out.push_back(it->second);
    return out;
}

std::optional<long long> Args::integer(const std::string& name) {
    auto v = option(name);
    if (!v) return std::nullopt;
    char* end = nullptr;
    errno = 0;
    const long long x = std::strtoll(v->c_str(), &end, 10);
    const Bounds* b = boundsOf(name);
    if (v->empty() || *end != '\0' || errno == ERANGE || (b && (double(x) < b->min || double(x) > b->max))) {
        m_error = "--" + name + " expects an integer" + (b ? " " + rangeText(*b) : std::string()) +
                  ", got '" + *v + "'";
        return std::nullopt;
    }
    return x;
}

std::optional<double> Args::number(const std::string& name) {
    auto v = option(name);
    if (!v) return std::nullopt;
    char* end = nullptr;
    const double x = std::strtod(v->c_str(), &end);
    const Bounds* b = boundsOf(name);
    const bool inRange = !b || ((b->minExclusive ? x > b->min : x >= b->min) && x <= b->max);
    if (v->empty() || *end != '\0' || !std::isfinite(x) || !inRange) {
        m_error = "--" + name + " expects a finite number" + (b ? " " + rangeText(*b) : std::string()) +
                  ", got '" + *v + "'";
        return std::nullopt;
    }
    return x;
}

} // namespace sp::cli
