#pragma once
// The search over disaggregated deployments (core/cost/disagg.h): the node split and both pools' plans.
//
// A pool's best plan depends only on its own node count (its scenario), and the rate-matched throughput of a
// split grows with each pool's own throughput (it is their minimum, with the network's, which depends on the
// GPU counts alone). So:
//  1. for each prefill pool of k = 1..N-1 nodes, the chosen searcher maximizes its prompt tokens/s under the
//     TTFT SLO less the KV transfer (DisaggModel::evaluatePrefill); for each decode pool of k nodes, its
//     output tokens/s under the TPOT SLO;
//  2. each search is warm-started from the elite of the same pool one node smaller, with dp (and ep) scaled
//  to
//     the new GPUs (SearchOptions::starts), and rl from its policy (SearchOptions::learned), so neighbouring
//     splits cost less than fresh searches;
//  3. every split k + (N - k) is evaluated with its pools' best plans; the best rate-matched output tokens/s
//     per GPU wins (feasible ones first).
// With a decode_cluster (pools on two GPU types) the prefill pool is searched on 1..N nodes of the scenario's
// cluster and the decode pool on 1..M of the decode cluster; every pairing is evaluated, and the least cost
// per million output tokens wins (each pool's GPUs at its cluster's price; unpriced: throughput per GPU).
// `splits` then holds, for each prefill size, its cheapest decode pool.

#include "core/cost/disagg.h"
#include "core/search/engine.h"

#include <optional>
#include <stop_token>
#include <string>
#include <vector>

namespace sp {

struct DisaggSearchOptions {
    std::string searcher = "sa"; ///< any name makeSearcher() knows
    int64_t budget = 1000;       ///< evaluations of each pool search
    double seconds = 0;          ///< wall-clock limit of the whole search; 0: none
    uint64_t seed = 1;
    int threads = 0;
    int warmStarts = 8; ///< elite plans handed from a pool to the pool one node larger
    bool warm = true;   ///< false: every pool search starts from nothing but its Megatron plan
    DisaggOptions model;
};

struct DisaggSplit {
    DisaggPlan plan;
    DisaggMetrics metrics;
};

struct DisaggSearchResult {
    bool refused = false; ///< nothing was searched (message says why)
    bool stopped = false; ///< ended by the stop token or the time limit (best of what was searched)
    bool found = false;   ///< a split was evaluated
    DisaggSplit best;     ///< the best split, with its batches fixed (the plan file reproduces it)
    std::vector<DisaggSplit> splits; ///< every split evaluated, by prefill nodes ascending
    /// Each pool size's best plan, by nodes (index 0 unused; nullopt where that size was not searched).
    std::vector<std::optional<Plan>> prefillPlans, decodePlans;
    int64_t evaluations = 0;
    int searches = 0;
    double seconds = 0;
    std::string message;
};

DisaggSearchResult searchDisaggregated(const Scenario& scenario, const DisaggSearchOptions& options,
                                       std::stop_token stop = {});

/// A split evaluated, with the batches the layer chose fixed in its plans (so a plan file reproduces the
/// metrics), evaluated again; a split that does not fit is returned as evaluated.
DisaggSplit withFixedBatches(const DisaggModel& model, DisaggPlan plan);

/// One point of the disaggregated frontier: the best split searched under a TPOT target.
struct DisaggFrontierPoint {
    double targetTpotMs = 0;
    double throughputPerGpu = 0; ///< output tokens/s per GPU, both pools
    double userTokensPerS = 0;   ///< 1000 / tpotMs
    double usdPerMTokens = 0;    ///< both pools at their prices (0: unpriced)
    DisaggSplit split;           ///< its plan and metrics under the target
};

/// What a disaggregated frontier's searches did, summed over its TPOT targets.
struct DisaggFrontierTotals {
    int searches = 0;        ///< pool searches
    int64_t evaluations = 0; ///< plans evaluated
    double seconds = 0;      ///< wall-clock of the searches
};

/// The disaggregated side of the throughput-interactivity frontier (core/searchers/pareto.h): for each TPOT
/// target, searchDisaggregated under it (the workload's TTFT SLO kept); the feasible points that no other
/// dominates (throughput per GPU, tokens/s per user; with a decode_cluster and both pools priced, output
/// tokens per dollar in place of per GPU), by tokens/s per user ascending. `totals`, when given, receives
/// what the searches did (a sweep's status counts both of its parts).
std::vector<DisaggFrontierPoint> disaggregatedFrontier(const Scenario& scenario,
                                                       const std::vector<double>& targetsMs,
                                                       const DisaggSearchOptions& options,
                                                       std::stop_token stop = {},
                                                       DisaggFrontierTotals* totals = nullptr);

/// A plan of one pool size carried to another: pp, tp, etp and the choices kept, dp (and ep, or edp where
/// ep would pass the experts) scaled to the new GPUs; nullopt when they do not divide.
std::optional<Plan> rescalePlan(const Plan& p, int fromGpus, int toGpus);

} // namespace sp
