#pragma once
// The answers the Serving tab shows and a session keeps, as plain values: the capacity of the plan served
// (maxRatePerGpu on the scenario's cluster) and the GPU sizing for a rate (fewestGpus per GPU type), both of
// core/sim/capacity.h, without their simulated runs.

#include "core/sim/capacity.h"

#include <QString>

#include <string>
#include <vector>

namespace sp::views {

/// Which plan the Serving tab simulates.
enum class ServedPlan {
    Best,     ///< the best feasible plan the search has found so far (Megatron's until there is one)
    Selected, ///< the plan shown in the other views (a selected elite row or an opened plan)
    Megatron, ///< the cost model's Megatron recipe
    /// The disaggregated (prefill/decode split) point selected on the Pareto tab
    ParetoSplit,
};
/// "best", "selected", "megatron", "pareto-split" (a session's words), and back (nullopt: none of them).
QString servedPlanKey(ServedPlan p);
std::optional<ServedPlan> servedPlanFromKey(const QString& key);

/// "p99" for SLOs at a percentile, "mean" without.
QString sloPercentileName(double percentile);
/// The workload's SLOs in words: "p99 TTFT 2,000 ms, TPOT 50 ms" ("-" where it sets none).
QString sloText(const Workload& w);
/// 1234.5 at 2 decimals: "1,234.50".
QString formatGrouped(double v, int decimals);

/// A plan's shape as the elite table's Degrees column shows it: "pp1 dp2 tp4 | ep8 etp1 edp1", then its own
/// pipeline split and speculative decoding when it has them.
QString planShapeText(const Plan& p, bool moe);

/// The capacity answer: the highest rate the plan served sustains under the SLOs on the scenario's cluster,
/// what it produces and costs there, and how long its runs were.
struct CapacityAnswer {
    /// maxRatePerGpu's row (planName: the plan served, named as the tab names it); its runs (rate.at,
    /// rate.above) dropped.
    MaxRateRow row;
    int64_t requestsGiven = 0;  ///< the Requests box: each run simulates at least these
    int64_t requestsAtRate = 0; ///< the run at the rate: 20 request latencies of arrivals when more (0: none)
};
/// The answer of a row with its runs, which it drops.
CapacityAnswer capacityAnswer(const MaxRateRow& row, int64_t requestsGiven);

/// A sizing answer: the question, and fewestGpus's rows in the order asked (their runs dropped: the table
/// shows their figures).
struct GpuSizing {
    double rate = 0;               ///< requests/s to sustain
    std::vector<std::string> gpus; ///< database ids, in the order asked
    int64_t requests = 0; ///< the Requests given (each run lasts 20 request latencies, at least these)
    bool moe = false;     ///< the model has experts: the plans' degrees show ep, etp, edp
    bool stopped = false; ///< Stop ended it: the rows done (the last perhaps not the fewest)
    Workload workload;    ///< whose SLOs the rows meet
    std::vector<CapacityRow> rows;
};

/// fewestGpus's options for a sizing, as `shardplan capacity --rate R --gpus LIST --requests N` sets them:
/// the Megatron plan on each cluster, seed 1.
CapacityOptions sizingOptions(double rate, const std::vector<std::string>& gpus, int64_t requests);

} // namespace sp::views
