#pragma once
// The search engine shared by every searcher: the objective, budgets, a thread-safe cache of evaluated plans,
// batch evaluation on worker threads, and the bookkeeping of one search run (best, elite set, curve, progress
// events, stop requests).
//
// Determinism: a searcher hands the engine batches of assignments; the engine decides in batch order which
// are new, which fit the budget and what they score, and evaluates them in parallel only for speed. With an
// evaluation budget, the same seed gives the same result on any number of threads. (A time budget or a stop
// request ends a run at a timing-dependent point; everything before it is still deterministic.)
//
// Cache and budget: plans are keyed by their assignment. An Engine keeps the metrics of plans it evaluated
// (shared by all runs on it, capacity-bounded), so a repeated plan costs no objective call. A run counts a
// plan against its evaluation budget the first time the run asks for it, whether or not the Engine had it
// cached, and never again; so a run's result does not depend on what ran before it on the same Engine.

#include "core/cost/costmodel.h"
#include "core/search/space.h"

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <stop_token>
#include <string>
#include <utility>
#include <vector>

namespace sp {

/// What a search maximizes. evaluate() is called from several threads at once and must be thread-safe.
class Objective {
public:
    virtual ~Objective() = default;
    virtual Metrics evaluate(const Plan& plan) const = 0;
    /// The standard recipe's plan, when the objective knows one (the cost model does).
    virtual std::optional<Plan> megatronPlan() const { return std::nullopt; }
};

/// The cost model as an objective. The CostModel must outlive it.
class CostModelObjective final : public Objective {
public:
    explicit CostModelObjective(const CostModel& model) : m_model(model) {}
    Metrics evaluate(const Plan& plan) const override { return m_model.evaluate(plan); }
    std::optional<Plan> megatronPlan() const override { return m_model.megatronPlan(); }

private:
    const CostModel& m_model;
};

/// The objective as one number, larger is better: throughput (>= 0) for a feasible plan; -shortfall (<= -1)
/// for a valid infeasible one (infeasible plans rank below every feasible one, closer misses higher);
/// -infinity for a malformed one.
double planScore(const Metrics& m);

/// 0 means unlimited; a searcher that needs a budget wants at least one of them set.
struct Budget {
    int64_t evaluations = 0; ///< distinct plans evaluated (see the cache note above)
    double seconds = 0;      ///< wall clock
    bool unlimited() const { return evaluations <= 0 && seconds <= 0; }
};

/// Where a searcher starts (offered to every searcher alike; megatron, exhaustive and cd ignore it): nowhere
/// in particular, at the Megatron plan, or at the local optimum coordinate descent reaches from it. The
/// start's evaluations count against the budget; sa starts a chain there, ga puts it in its first
/// generation, rl attends to it and imitates it (it heads the elite).
enum class WarmStart : uint8_t { None, Megatron, Descent };

/// What a learning searcher (rl) learned in a run, to start a later run from (SearchOptions::learned,
/// SearchResult::learned): opaque to everything but the searcher that made it, and immutable once made.
struct LearnedState {
    virtual ~LearnedState() = default;
};

struct SearchOptions {
    Budget budget;
    WarmStart warmStart = WarmStart::None;
    uint64_t seed = 1;
    int threads = 0; ///< evaluation threads; 0: all cores
    int eliteK = 32; ///< size of the elite set (distinct best plans) reported and kept
    /// More places to start (e.g. the elite of a search under a neighbouring SLO, core/searchers/pareto.h):
    /// assignments of this space, evaluated as one batch after warmStart's own start and against the
    /// budget; the best plan so far then becomes the start (see warmStart() in searcher.h). Assignments
    /// that are not valid in the space are skipped. cd and cd-restarts descend from the best of them and the
    /// Megatron plan; megatron and exhaustive ignore them.
    std::vector<std::vector<int>> starts;
    /// What an earlier run learned (its SearchResult::learned), for a learning searcher to start from: a
    /// chain of related searches (the targets of a Pareto sweep, the pool sizes of a disaggregated search, a
    /// rerun after an edit) then does not learn each scenario from nothing. Other searchers ignore it; null:
    /// the searcher's own start (rl: its shipped prior).
    std::shared_ptr<const LearnedState> learned;
};

struct Candidate {
    Plan plan;
    Metrics metrics;
    std::vector<int> choices; ///< the assignment in the space; empty for a plan outside it (e.g. Megatron's)
};

/// One iteration of a learning searcher (rl): what the GUI's learning-curve tab plots.
struct LearningPoint {
    int64_t iteration = 0;
    int64_t evaluations = 0; ///< of the run, after the iteration
    double meanReward = 0;   ///< mean raw reward of the iteration's samples (log tokens/s when feasible)
    double entropy = 0;      ///< mean policy entropy per sampled plan (nats, summed over decisions)
    double eliteMean = 0;    ///< mean throughput of the feasible elite plans
    double temperature = 1;  ///< sampling temperature the iteration used (rl raises it to keep exploring)
};

/// A progress event, sent on the searching thread at most every ~40 ms, and once more when the run ends.
struct Progress {
    int64_t evaluations = 0;
    double seconds = 0;
    double bestThroughput = 0;    ///< best feasible throughput so far; 0 while none is feasible
    std::vector<Candidate> elite; ///< sorted best first
    std::vector<std::pair<int64_t, double>> curveDelta; ///< (evaluations, best) points since the last event
    std::vector<LearningPoint> learningDelta;           ///< learning-curve points since the last event
    bool final = false;                                 ///< the run's last event
};

class Observer {
public:
    virtual ~Observer() = default;
    virtual void progress(const Progress&) {}
};

struct SearchResult {
    Candidate
        best; ///< the best plan by planScore (possibly infeasible: see message); empty if none evaluated
    std::vector<Candidate> elite; ///< the top distinct plans, best first (SearchOptions::eliteK)
    int64_t evaluations = 0;      ///< distinct plans evaluated by this run
    double seconds = 0;
    std::vector<std::pair<int64_t, double>>
        curve; ///< (evaluations, best feasible throughput) at each improvement
    /// Processor time of the whole process (all threads) since the run began, at each curve point, in
    /// seconds: what a benchmark on a shared machine compares (wall time counts other people's work).
    std::vector<double> curveCpuSeconds;
    double cpuSeconds = 0;               ///< processor time of the whole process during the run
    std::vector<LearningPoint> learning; ///< one point per iteration of a learning searcher
    bool stopped = false;                ///< ended by a stop request
    bool refused = false;                ///< the searcher did not run (no budget, space too large...)
    /// Why it refused, or when no feasible plan was found: the binding constraint, from the closest plan's
    /// violation and shortfall. Empty otherwise.
    std::string message;
    std::string searcher;
    /// What a learning searcher learned by the end of the run (null for the others), to hand to the next
    /// search of a chain (SearchOptions::learned).
    std::shared_ptr<const LearnedState> learned;
    bool feasible() const { return best.metrics.feasible; }
};

/// Evaluates batches of plans on worker threads, through a cache. One Engine serves one Objective; spaces
/// used with it must be built from the objective's scenario (a space of another scenario clears the cache).
/// Thread-safe: several runs may share an Engine (their batches take turns on the workers).
class Engine {
public:
    using Clock = std::chrono::steady_clock;

    /// cacheCapacity: plans whose metrics are kept (about 0.5 KB each); older ones are dropped past it.
    explicit Engine(const Objective& objective, size_t cacheCapacity = size_t(1) << 18);
    ~Engine();
    Engine(const Engine&) = delete;
    Engine& operator=(const Engine&) = delete;

    const Objective& objective() const;

    /// Metrics of each assignment of `space`, in order, from the cache or evaluated on up to `threads`
    /// threads (0: all cores; the calling thread is one of them). An entry is null when it was skipped
    /// because `stop` was requested or `deadline` passed before its evaluation began. The objective's
    /// exceptions become invalid metrics carrying the message.
    std::vector<std::shared_ptr<const Metrics>>
    evaluate(const SearchSpace& space, std::span<const std::vector<int>> batch, int threads,
             std::stop_token stop = {}, Clock::time_point deadline = Clock::time_point::max());
    /// One plan, outside the cache (for plans that are not in a space).
    std::shared_ptr<const Metrics> evaluatePlan(const Plan& plan);

    /// Runs fn(0), ..., fn(count - 1) on up to `threads` threads of the evaluation pool (0: all cores; the
    /// calling thread is one of them) and waits: work of a searcher (rl's policy) without starting threads.
    /// Takes turns with evaluate(); fn must not call back into this Engine.
    void parallelFor(size_t count, int threads, const std::function<void(size_t)>& fn);

    int64_t objectiveCalls() const; ///< all runs together
    size_t cacheSize() const;
    void clearCache();

private:
    struct Impl;
    std::unique_ptr<Impl> d;
};

/// The bookkeeping of one search: what searchers call to evaluate, and what they return. Create one at the
/// start of Searcher::run, evaluate batches until done(), and return finish().
class SearchRun {
public:
    SearchRun(Engine& engine, const SearchSpace& space, const SearchOptions& options, Observer* observer,
              std::stop_token stop, std::string searcher);
    ~SearchRun();
    SearchRun(const SearchRun&) = delete;
    SearchRun& operator=(const SearchRun&) = delete;

    struct Outcome {
        std::shared_ptr<const Metrics> metrics; ///< null: not evaluated (budget spent, stop, time)
        double score = 0;                       ///< planScore; -infinity when not evaluated
        bool fresh = false; ///< first time this run saw the plan (it counted against the budget)
        bool evaluated() const { return metrics != nullptr; }
    };
    /// Evaluates a batch of complete, valid assignments (in order; duplicates allowed). Plans beyond the
    /// remaining evaluation budget come back unevaluated. Sends a throttled progress event.
    std::vector<Outcome> evaluate(std::span<const std::vector<int>> batch);
    Outcome evaluate(const std::vector<int>& assignment);
    /// A plan that may lie outside the space (counts as one evaluation; cached only if it maps into the
    /// space).
    Outcome evaluatePlan(const Plan& plan);

    /// The searcher promises never to repeat an assignment (exhaustive enumeration): the run then keeps no
    /// per-plan record, which saves memory on millions of plans; seen() and scoreOf() know nothing.
    void assumeDistinct();

    /// Budget spent, stop requested, or every plan of the space evaluated. Searchers loop until this is true.
    bool done() const;
    bool stopRequested() const;
    /// The share of the budget spent, in [0, 1]: the larger of evaluations and time (for cooling schedules).
    double fraction() const;
    int64_t evaluations() const;
    double seconds() const;
    /// Whether this run has evaluated the assignment already (a repeat costs nothing).
    bool seen(std::span<const int> assignment) const;
    /// The score this run got for an assignment, if it evaluated it.
    std::optional<double> scoreOf(std::span<const int> assignment) const;

    const SearchSpace& space() const;
    const SearchOptions& options() const;
    /// The top distinct plans so far, best first (the elite history an RL searcher conditions on).
    const std::vector<Candidate>& elite() const;
    /// Records one iteration of a learning searcher; sent with the next progress event and in the result.
    void recordLearning(const LearningPoint& point);
    /// The best so far, or null before the first evaluation.
    const Candidate* best() const;

    /// The run's result: best, elite, curve, counts; a message naming the binding constraint when nothing was
    /// feasible. Sends the final progress event.
    SearchResult finish();
    /// A result for a searcher that refuses to run, with the reason.
    SearchResult refuse(std::string message);

private:
    struct Impl;
    std::unique_ptr<Impl> d;
};

} // namespace sp
