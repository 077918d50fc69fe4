#pragma once
// The Serving tab in a session (session.h): its inputs (the plan served, arrivals at a rate or from a trace,
// the requests, the sweep's range, the sizing's rate and GPU types) and what it shows (the run drawn, with
// the workload whose SLOs it is drawn against and its name; the capacity answer; the rate sweep's points; the
// pinned run and sweep; the GPU sizing), enough to redraw the tab as it was. Runs are kept as the simulation
// gave them, never simulated again on opening: a capacity answer, a sweep or a sizing is tens of simulations.
// The sweep and the pin: session_serving_sweep.cpp.
//
// The sorted TTFT and TPOT values (the CDFs) are kept exactly, as base64 of little-endian doubles. A run of
// more requests than kMaxSavedValues keeps that many nearest-rank quantiles of each: quantile j of m is
// value ceil(j n / m) of n, so a percentile p of the kept values is the run's where p m / 100 is whole (p50,
// p90, p95, p99 with m = 200,000); the summary's figures are the run's own.

#include "core/sim/capacity.h"
#include "core/sim/simulator.h"
#include "views/servinganswers.h"
#include "views/servingcompare.h"

#include <QJsonObject>
#include <QString>

#include <memory>
#include <optional>
#include <vector>

namespace sp::app {

struct SessionServing {
    bool useTrace = false;
    double rate = 1;
    int64_t requests = 1000;
    QString tracePath;
    views::ServedPlan served = views::ServedPlan::Best; ///< absent in older sessions: the default
    /// The disaggregated point selected on the Pareto tab (served as ServedPlan::ParetoSplit), by its TPOT
    /// target, which is one point's alone; 0: none.
    double servedSplitTpotMs = 0;
    std::shared_ptr<const SimResult> result; ///< the run drawn; null: none
    Workload resultWorkload;
    QString resultPlan; ///< the name of the plan it simulated, as the tab showed it
    /// Its load ("2.5 requests/s", "trace chat.csv") and GPUs ("8x H200 SXM"): "" in older sessions.
    QString resultLoad, resultGpus;
    std::optional<views::CapacityAnswer> capacity; ///< the answer shown
    Workload capacityWorkload;
    double sizingRate = 10;
    std::vector<std::string> sizingGpus;    ///< the GPU types checked
    std::optional<views::GpuSizing> sizing; ///< the sizing shown
    bool sizingShown = false;               ///< the tab showed its "GPUs for a rate" page
    bool sweepShown = false;                ///< the tab showed its "Rate sweep" page
    /// The sweep's range; absent in older sessions (sweepRangeSet false: the tab suggests one).
    double sweepFrom = 1, sweepTo = 8;
    int sweepSteps = 8;
    bool sweepRangeSet = false;
    std::optional<views::ShownSweep> sweep; ///< the sweep shown
    views::ServingPin pin;                  ///< the pinned run and sweep
    /// Why the saved results were left out (a field that does not read): the inputs still apply.
    QString error;
};

/// At most this many sorted values of each distribution are saved.
inline constexpr size_t kMaxSavedValues = 200'000;
/// The values kept of sorted ones: all up to `max`, else `max` nearest-rank quantiles (see above).
std::vector<double> thinSorted(const std::vector<double>& sorted, size_t max = kMaxSavedValues);

QJsonObject servingJson(const SessionServing& s);
/// The tab from a session's "serving" object; `file` names it in errors. Results that do not read are left
/// out with the reason in `error`, as a learned policy that does not read is: the rest of the session opens.
SessionServing servingFrom(const QJsonObject& o, const QString& file);

} // namespace sp::app
