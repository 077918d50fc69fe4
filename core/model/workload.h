#pragma once
#include "core/model/speculative.h"

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace sp {

enum class Phase { Prefill, Decode, Serving };

/// How a request's input or output length is drawn in the request-level simulation (core/sim). The analytical
/// cost model prices one length, the distribution's mean (Workload::inputTokens and outputTokens hold it).
struct LengthDist {
    enum class Kind { Fixed, Uniform, Lognormal, Histogram };
    Kind kind = Kind::Fixed;
    /// Fixed (the default): the workload's own inputTokens or outputTokens, every request alike. Uniform:
    /// every length in [min, max] alike. Lognormal: the draws clamped to [min, max] (max 0: no upper clamp).
    int64_t min = 0, max = 0;
    double mean = 0, cv = 0; ///< lognormal: mean and coefficient of variation before clamping
    struct Bin {
        int64_t lo = 0, hi = 0; ///< lengths in [lo, hi], alike
        double weight = 0;      ///< the bin's share (the weights need not add up to 1)
        bool operator==(const Bin&) const = default;
    };
    std::vector<Bin> bins; ///< histogram
    /// The expected length (lognormal: of the clamped draws, before rounding to whole tokens); Fixed: min.
    double expected() const;
    bool operator==(const LengthDist&) const = default;
};
inline constexpr const char* kLengthDistNames[] = {"fixed", "uniform", "lognormal", "histogram"};

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
    /// The simulation's length distributions; Kind::Fixed (the default) draws inputTokens / outputTokens.
    LengthDist inputLengths, outputLengths;
    /// Share of each prompt's tokens already in the prefix cache (a shared system prompt, earlier turns):
    /// they skip prefill in the simulation. The analytical model does not use it.
    double prefixCacheHit = 0;
    /// The SLOs hold at this percentile of the requests (99: p99 TTFT and p99 TPOT); 0: on the mean, as the
    /// analytical model checks them. A percentile SLO is checked by simulation (core/sim).
    double sloPercentile = 0;
    bool operator==(const Workload&) const = default;
};

} // namespace sp
