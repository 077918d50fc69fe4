#pragma once
// The throughput-interactivity Pareto front (issue 13): throughput per GPU against tokens/s per user
// (1000 / TPOT ms), each point a plan searched under a TPOT target and the workload's TTFT SLO.
//
// The sweep:
//  1. bounds: the plan of the highest throughput with no TPOT limit (its TPOT is the loosest target), and the
//     plan of the lowest TPOT at batch 1 (a search that maximizes 1000 / TPOT; its TPOT is the tightest);
//  2. N targets spread log-uniformly between them; each searched from the tightest up, warm-started
//     (SearchOptions::starts) from the tighter neighbour's elite, the unconstrained search's best plans and
//     the Megatron plan of that target, so a later search begins where the last one ended (a learning
//     searcher, rl, also carries its policy from search to search: SearchOptions::learned);
//  3. the exchange: the best plans of every search are re-evaluated under every target (cheap), since a
//     plan found for one target may serve a neighbour better than what that neighbour's search kept;
//  4. each target's best plan is a point (with its batch fixed, so the plan file reproduces the point);
//     dominated points are dropped.
// The Megatron recipe's frontier is its plan (CostModel::megatronPlan for that SLO) at each target.
//
// Cancellable (a stop token and a wall-clock limit; a stopped sweep returns the points found so far) and
// observable (ParetoObserver, called on the sweeping thread).

#include "core/search/engine.h"
#include "core/searchers/disagg_search.h"

#include <stop_token>
#include <string>
#include <vector>

namespace sp {

struct ParetoOptions {
    std::string searcher = "sa"; ///< any name makeSearcher() knows (core/searchers/registry.h)
    int points = 16;             ///< TPOT targets, the two ends included (at least 2)
    int64_t budget = 2000;       ///< evaluations of each search (the two bounds and every target)
    uint64_t seed = 1;           ///< target k searches with seed + k
    int threads = 0;             ///< evaluation threads; 0: all cores
    double seconds = 0;          ///< wall-clock limit of the whole sweep; 0: none
    int warmStarts = 16;         ///< elite plans of the neighbour handed to the next search
    /// false: every search starts from nothing (no neighbour, loose-end or Megatron starts), to measure
    /// what the warm starts buy; the exchange still runs.
    bool warm = true;
};

struct ParetoPoint {
    double targetTpotMs = 0;     ///< the TPOT SLO it was searched under; 0: none (the loose end)
    double throughputPerGpu = 0; ///< tokens/s per GPU
    double userTokensPerS = 0;   ///< 1000 / tpotMs
    double ttftMs = 0, tpotMs = 0;
    Plan plan;          ///< with the batch the cost model chose fixed (plan.batch = metrics.batch)
    Metrics metrics;    ///< under the TPOT target and the workload's TTFT SLO
    std::string family; ///< layoutFamily(plan)
    std::string searcher;
};

/// Called on the sweeping thread (which is the caller's: paretoFront blocks).
class ParetoObserver {
public:
    virtual ~ParetoObserver() = default;
    /// The targets are known (loosest last); `targets` of them will be searched.
    virtual void targetsChosen(const std::vector<double>& /*tpotMs*/) {}
    /// A point was found: a target's search ended (megatron = false) or the Megatron plan at a target was
    /// evaluated (megatron = true). `done` of `total` targets are finished. Dominated points are dropped
    /// only at the end, so a point may later leave the frontier.
    virtual void pointFound(const ParetoPoint&, bool /*megatron*/, int /*done*/, int /*total*/) {}
    /// The running search's throttled progress (engine.h). `target` is -2 for the min-TPOT search, -1 for
    /// the unconstrained one, else the target's index.
    virtual void searchProgress(int /*target*/, const Progress&) {}
};

struct ParetoResult {
    std::vector<ParetoPoint> frontier; ///< non-dominated, by tokens/s per user ascending
    std::vector<ParetoPoint> megatron; ///< the Megatron recipe's frontier, same order
    std::vector<double> targetsMs;     ///< the TPOT targets, tightest first
    double minTpotMs = 0, maxTpotMs = 0;
    int64_t evaluations = 0; ///< of all searches and the exchange
    int searches = 0;
    double seconds = 0;    ///< wall clock of the sweep
    double cpuSeconds = 0; ///< processor time of the whole process during the sweep
    bool stopped = false;  ///< ended by the stop token or the time limit, with the points found so far
    bool refused = false;  ///< nothing was searched (message says why)
    std::string message;   ///< why there is no frontier, or what the searcher said
    /// What a learning searcher (rl) learned by the sweep's last search, carried through all of them: a
    /// later sweep or search can start from it (SearchOptions::learned). Null for the others.
    std::shared_ptr<const LearnedState> learned;
};

/// The sweep described above. Refuses a prefill workload (it has no TPOT) and an unknown searcher.
ParetoResult paretoFront(const Scenario& scenario, const ParetoOptions& options,
                         ParetoObserver* observer = nullptr, std::stop_token stop = {});

/// a is at least as good as b on both axes (throughput per GPU, tokens/s per user) and better on one.
bool dominates(const ParetoPoint& a, const ParetoPoint& b);
/// The points no other point dominates (equal points kept once), by tokens/s per user ascending.
std::vector<ParetoPoint> nonDominated(std::vector<ParetoPoint> points);

/// What a CSV of the front holds besides the sweep's own two series: every other series drawn beside it.
struct ParetoCsvExtras {
    std::string scenario;         ///< the sweep's scenario name, in each row of its series
    const Model* model = nullptr; ///< names the disaggregated rows' decode layout family (none when null)
    std::vector<DisaggFrontierPoint> disaggregated; ///< the disaggregated frontier at the sweep's targets
    std::string overlayScenario;                    ///< the overlaid scenario's name
    std::vector<ParetoPoint> overlay;               ///< its frontier
    /// The sweep's cluster: adds each point's dollars per million tokens and tokens/s per MW of GPU TDP
    /// (empty where unknown, and for the overlay, of another cluster), so cost can be plotted against
    /// interactivity. None when null.
    const Cluster* cluster = nullptr;
};

/// The frontier, the Megatron frontier, then the extras' disaggregated and overlay frontiers as CSV, one row
/// per point: frontier (searched, megatron, disaggregated or overlay), tokens/s per user, per GPU, TPOT,
/// TTFT, target, batch, family, the degrees (a disaggregated row's: its decode pool's, with its batch),
/// prefill and decode nodes and the bounding side (disaggregated rows only), with a cluster
/// usd_per_million_tokens and tokens_per_s_per_mw, and the scenario. The target is
/// empty for the loose end, which was searched with no TPOT limit (its TPOT is the loosest target).
std::string paretoCsv(const ParetoResult& result, const ParetoCsvExtras& extras = {});

/// The highest-throughput point whose TPOT is at most tpotMs; null when none is.
const ParetoPoint* pointAtTpot(const std::vector<ParetoPoint>& frontier, double tpotMs);

} // namespace sp
