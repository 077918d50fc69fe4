#pragma once
// Capacity planning on the simulation: the highest request rate a plan sustains under the workload's SLOs
// (bisection on simulated runs), that rate on each of several GPU types, and for a target rate the fewest
// GPUs of each type, with what they cost. The CLI's `capacity` and the GUI both run these.

#include "core/cost/economics.h"
#include "core/searchers/disagg_search.h"
#include "core/sim/simulator.h"

#include <functional>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <vector>

namespace sp {

struct RateSearchOptions {
    /// The runs' options (requests, seed, arrivals' burstiness, routing); the rate is the search's.
    SimOptions sim;
    /// Bisection ends when the bracket is within this share of its top.
    double tolerance = 0.01;
    /// Each run lasts at least this many analytical request latencies (TTFT + (O - 1) TPOT at the plan's
    /// batch), its requests raised to rate x that time: a run starts empty, and its concurrency takes a few
    /// latencies to settle, so short runs report the ramp-up (0: sim.requests as given).
    double steadyLatencies = 20;
};
/// The requests a run at `rate` needs to last `latencies` of the plan's analytical request latency.
int64_t steadyRequests(const Metrics& m, const Workload& w, double rate, double latencies);

/// The highest rate (requests/s) whose simulated run meets the workload's SLOs at its percentile.
struct MaxRate {
    bool ok = false;
    std::string error;
    double rate = 0;      ///< requests/s that met the SLOs; 0: not even one request at a time does
    double rateAbove = 0; ///< the lowest rate tried that missed them
    std::shared_ptr<const SimResult> at;    ///< the run at `rate` (null at 0)
    std::shared_ptr<const SimResult> above; ///< the run at rateAbove
    /// What failed above the rate: "ttft", "tpot" or "memory" (the KV pool: preemptions, or requests that
    /// waited for blocks), and in words why.
    std::string binding, why;
    int simulations = 0;
    bool stopped = false;
};
MaxRate maxRate(const CostModel& model, const Plan& plan, const RateSearchOptions& o,
                const SimProgressFn& progress = {}, std::stop_token stop = {});

/// A percentile SLO checked on the plans a search ranked analytically (Workload::sloPercentile): each plan's
/// highest rate under the SLOs at that percentile, and which of them sustains the most output tokens/s.
struct SimulatedRanking {
    std::vector<MaxRate> rates; ///< one per plan, in the order given
    int best = -1;              ///< the plan with the highest sustained rate meeting the SLOs; -1: none does
};
SimulatedRanking rankBySimulation(const CostModel& model, const std::vector<Plan>& plans,
                                  const RateSearchOptions& o, std::stop_token stop = {});

/// One GPU type's answer for a target rate.
struct CapacityRow {
    std::string gpu;  ///< database id, or the scenario's GPU name
    bool met = false; ///< some node count up to the limit sustains the rate
    std::string why;  ///< why not, or what binds at one node fewer
    int nodes = 0, gpus = 0;
    Plan plan;
    Metrics metrics;                      ///< the plan's analytical metrics on those nodes
    std::shared_ptr<const SimResult> run; ///< the simulation at the target rate
    SloCheck slo;
    ServingCost cost; ///< at the simulated output tokens/s
    int simulations = 0;
};

struct CapacityOptions {
    double rate = 0;               ///< requests/s to sustain
    std::vector<std::string> gpus; ///< database ids; empty: the scenario's own cluster, scaled in nodes
    int maxNodes = 4096;
    /// The plan on each cluster: the cost model's Megatron recipe, or a searcher's best (core/search).
    std::string searcher; ///< empty: megatron
    int64_t budget = 500;
    SimOptions sim;              ///< the runs' options (requests, seed, arrivals)
    double steadyLatencies = 20; ///< as RateSearchOptions::steadyLatencies
};

/// For each GPU type, the fewest nodes that sustain the rate under the SLOs: node counts doubled until one
/// does, then bisected (the cost model's plan on each count; whole scale-up domains). Rows in the order
/// asked.
std::vector<CapacityRow> fewestGpus(const Scenario& s, const CapacityOptions& o,
                                    const SimProgressFn& progress = {}, std::stop_token stop = {});

/// The scenario on `nodes` nodes of a database GPU (its links, factors, power and price), or of its own GPU
/// when gpuId is empty; the GPU-count constraint dropped.
Scenario scenarioOn(const Scenario& s, const std::string& gpuId, int nodes);

/// The plan a capacity answer uses on a scenario: Megatron's, or the searcher's best feasible (nullopt with
/// the reason when it finds none).
struct PlanChoice {
    bool ok = false;
    Plan plan;
    Metrics metrics;
    std::string why;
};
PlanChoice choosePlan(const CostModel& model, const std::string& searcher, int64_t budget, uint64_t seed,
                      std::stop_token stop = {});

/// One cluster's answer of maxRatePerGpu.
struct MaxRateRow {
    std::string gpu; ///< database id, or the scenario's GPU name
    int gpus = 0;
    /// Non-empty: no answer on this cluster (an unknown GPU, no feasible plan, a plan that does not fit, a
    /// failed run).
    std::string error;
    /// The stop token ended the work on this row: its rate is no answer (a bisection cut short has bracketed
    /// nothing), and no row follows.
    bool stopped = false;
    Plan plan;
    /// "megatron", "<searcher> (seed N)", or MaxRateOptions::planName for a fixed plan.
    std::string planName;
    Metrics metrics; ///< the plan's analytical metrics
    MaxRate rate;
    double outputTokensPerS = 0; ///< sustained in the run at the max rate (0: no rate met the SLOs)
    ServingCost cost;            ///< the cluster's GPUs at those tokens/s
};

struct MaxRateOptions {
    /// Database ids, each on as many of its GPUs as the scenario has, rounded up to whole scale-up domains;
    /// empty: the scenario's own cluster.
    std::vector<std::string> gpus;
    /// A fixed plan, used as given on each cluster (a row's error where it does not fit); else the
    /// searcher's.
    std::optional<Plan> plan;
    std::string planName = "plan"; ///< the fixed plan's name in the rows (the CLI: its file)
    /// Empty: the cost model's Megatron plan, unchecked (the bisection answers for it, or says why it
    /// cannot); else choosePlan's, which must be feasible ("megatron" too).
    std::string searcher;
    int64_t budget = 500;
    RateSearchOptions search; ///< the bisection and its runs; search.sim.seed also seeds the searcher
};

/// Called with each row as it is done (before the next starts); false: no further rows.
using MaxRateRowFn = std::function<bool(const MaxRateRow&)>;

/// The highest rate under the SLOs on each cluster asked: the plan (fixed, or chosen on that cluster), its
/// bisection (maxRate) and what the GPUs cost at the tokens/s it sustains. Rows in the order asked.
std::vector<MaxRateRow> maxRatePerGpu(const Scenario& s, const MaxRateOptions& o,
                                      const SimProgressFn& progress = {}, std::stop_token stop = {},
                                      const MaxRateRowFn& onRow = {});

/// The cheapest disaggregated deployment that serves `rate` requests/s under the workload's SLOs: each pool
/// size searched (searchDisaggregated), every pairing of pool sizes that fits (one cluster: k_p + k_d <= N,
/// nodes left over stay off; two clusters: each within its own) and whose rate-matched requests/s reach the
/// rate, ranked by cost an hour (unpriced: by GPUs), then the cheapest few simulated at the rate until one
/// meets the SLOs at their percentile (core/sim/disagg_capacity.cpp).
struct DisaggCapacity {
    bool met = false;
    std::string why; ///< why nothing met the rate, or nothing searched
    bool stopped = false;
    DisaggSplit split;  ///< the answer (or the closest candidate simulated)
    int candidates = 0; ///< pairings whose analytical rate reaches the rate
    int simulations = 0;
    int64_t evaluations = 0;              ///< of the pool searches
    std::shared_ptr<const SimResult> run; ///< the simulation of `split` at the rate
    SloCheck slo;
    ServingCost cost; ///< both pools' GPUs at their prices, at the simulated output tokens/s
};
struct DisaggCapacityOptions {
    double rate = 0;             ///< requests/s to sustain
    DisaggSearchOptions search;  ///< the pool searches
    SimOptions sim;              ///< the runs' options (requests, seed, arrivals); the rate is `rate`
    double steadyLatencies = 20; ///< as RateSearchOptions::steadyLatencies
    int maxSimulations = 6;      ///< candidates simulated, cheapest first, before giving up
};
DisaggCapacity cheapestDisaggregated(const Scenario& s, const DisaggCapacityOptions& o,
                                     std::stop_token stop = {});

} // namespace sp
