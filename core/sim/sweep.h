#pragma once
// A sweep over request rates: the plan simulated at each of a list of rates, each run kept as its figures
// (percentiles, throughput, the SLO check), for latency-against-load curves and the highest rate of the list
// that meets the workload's SLOs. Each run is the one `simulate` gives at that rate with the options given,
// its requests raised as maxRate raises them (RateSearchOptions::steadyLatencies), so a point is the single
// run at its rate and its requests, and the sweep agrees with the capacity bisection.

#include "core/sim/simulator.h"

#include <functional>
#include <stop_token>
#include <string>
#include <vector>

namespace sp {

/// `steps` rates evenly from `from` to `to`, both included (one step: `from`); empty for steps < 1 or rates
/// that are not positive and ascending.
std::vector<double> sweepRates(double from, double to, int steps);

struct RateSweepOptions {
    std::vector<double> rates; ///< requests/s, simulated in this order
    SimOptions sim; ///< the runs' options (requests, seed, burstiness); rate and trace are the sweep's
    /// As RateSearchOptions::steadyLatencies: each run lasts at least this many analytical request latencies
    /// at its rate (0: sim.requests as given).
    double steadyLatencies = 20;
};

/// One rate's run, as its figures (the run itself is dropped: a sweep holds tens of them).
struct SweepPoint {
    double rate = 0;                     ///< requests/s asked
    int64_t requests = 0, completed = 0; ///< simulated (sim.requests, or more at a high rate)
    Percentiles ttftMs, tpotMs, e2eMs;
    double requestsPerS = 0, outputTokensPerS = 0, goodputRequestsPerS = 0, sloAttainment = 0;
    double kvPeakShare = 0;
    int64_t preemptions = 0;
    SloCheck slo; ///< against the workload's SLOs at their percentile
    bool operator==(const SweepPoint&) const;
};
/// The figures of a run at `rate`, checked against `w`'s SLOs.
SweepPoint sweepPoint(double rate, const SimResult& r, const Workload& w);

struct RateSweep {
    bool ok = false;
    std::string error;              ///< why it could not run (an invalid plan, a failed run)
    std::vector<SweepPoint> points; ///< the rates done, in the order asked
    bool stopped = false;           ///< the stop token ended it: the points done, the run cut short dropped
    std::string plan;               ///< what ran, in words (SimResult::plan of the first run)
};
/// The point of the highest rate that meets the SLOs; -1 where none does.
int highestMeeting(const std::vector<SweepPoint>& points);

/// Called with each point as its run ends (before the next starts), with its index.
using SweepPointFn = std::function<void(const SweepPoint&, size_t index)>;

/// The plan simulated at each rate of o.rates (see above). progress is each run's; stop ends the sweep,
/// keeping the points done.
RateSweep sweepRates(const CostModel& model, const Plan& plan, const RateSweepOptions& o,
                     const SimProgressFn& progress = {}, std::stop_token stop = {},
                     const SweepPointFn& onPoint = {});
/// A disaggregated plan simulated at each rate of o.rates, as above; the analytical request latency that
/// sizes each run is the split's (DisaggModel::evaluate: TTFT, then TPOT for each further token).
RateSweep sweepRates(const DisaggModel& model, const DisaggPlan& plan, const RateSweepOptions& o,
                     const SimProgressFn& progress = {}, std::stop_token stop = {},
                     const SweepPointFn& onPoint = {});

} // namespace sp
