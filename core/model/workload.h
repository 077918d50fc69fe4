#pragma once
#include <cstdint>
#include <string>

namespace sp {

enum class Phase { Prefill, Decode, Serving };

struct Workload {
    std::string name;
    Phase phase = Phase::Serving;
    int64_t inputTokens = 0;
    int64_t outputTokens = 0;
    double ttftMs = 0; ///< 0: no limit
    double tpotMs = 0; ///< 0: no limit
    bool fixedBatch = false;
    int64_t batch = 0; ///< sequences per model replica, when fixed
    bool operator==(const Workload&) const = default;
};

} // namespace sp
