#pragma once
#include "core/model/speculative.h"

#include <array>
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
    /// KV-cache memory per sequence: Paged holds what in-flight sequences have written (input + output/2 on
    /// average under continuous batching, as vLLM's and SGLang's paged caches do); Worst reserves input +
    /// output for every sequence.
    enum class KvReservation { Paged, Worst } kvReservation = KvReservation::Paged;
    /// Speculative decoding's acceptance rates on this workload's text, per method (a_i: draft token i
    /// accepted given the ones before it were); empty: the model's defaults.
    std::array<std::vector<double>, kSpecMethodCount> acceptance;
    bool operator==(const Workload&) const = default;
};

} // namespace sp
