#pragma once
// The figures of a search benchmark, from the runs of one searcher at one budget against a best-known
// throughput: how often a run comes within 0.1% and 1% of it, the median fraction of it reached, and how long
// (evaluations, processor seconds) runs take to come within 1%; both at the end of each run and cut at a
// given processor time (searchers compared at equal time rather than equal evaluations).

#include "core/search/engine.h"

#include <cstdint>
#include <utility>
#include <vector>

namespace sp {

/// What a benchmark keeps of one run.
struct BenchRun {
    double best = 0; ///< best feasible throughput; 0 when nothing feasible was found
    int64_t evaluations = 0;
    double cpuSeconds = 0;
    std::vector<std::pair<int64_t, double>> curve; ///< SearchResult::curve
    std::vector<double> curveCpuSeconds;           ///< SearchResult::curveCpuSeconds (same length)

    static BenchRun of(const SearchResult& r);
    /// The best feasible throughput reached within `cpuSeconds` of processor time (0 if none).
    double bestWithin(double cpuSeconds) const;
};

struct BenchSummary {
    int runs = 0;
    double medianBest = 0, minBest = 0, maxBest = 0;
    double within01 = 0;       ///< share of runs with best >= (1 - 0.001) x reference
    double within1 = 0;        ///< share of runs with best >= 0.99 x reference
    double medianFraction = 0; ///< median of best / reference
    /// Medians over all runs of the first evaluation count / processor time at which a run came within 1%
    /// of the reference; +infinity unless more than half the runs did.
    double evalsTo1 = 0, cpuTo1 = 0;
    double medianCpuSeconds = 0; ///< per run
    // The same runs cut at a processor time (summarize's equalCpuSeconds; NaN when not given).
    double timeWithin01 = 0, timeWithin1 = 0, timeMedianFraction = 0;
};

/// The summary of `runs` against `reference` (> 0), cut at `equalCpuSeconds` for the equal-time figures
/// (<= 0: not computed, NaN). Medians of an even count are the mean of the middle two.
BenchSummary summarize(const std::vector<BenchRun>& runs, double reference, double equalCpuSeconds);

/// The median (NaN for none; +infinity entries count as larger than all others).
double medianOf(std::vector<double> v);

} // namespace sp
