#pragma once
// Searchers and their registry. A searcher proposes assignments of a SearchSpace and evaluates them through a
// SearchRun (core/search/engine.h), which enforces the budget, keeps the best and elite plans and reports
// progress. Same seed, same result (with an evaluation budget, on any number of threads).
//
// Adding one (e.g. `rl`): derive from Searcher, write run() as
//     SearchRun run(engine, space, options, observer, stop, name());
//     while (!run.done()) { ...propose a batch...; auto outcomes = run.evaluate(batch); ...learn...; }
//     return run.finish();
// and add a line to the registry's table (core/searchers/registry.cpp), which finds searchers by name.

#include "core/search/engine.h"

#include <functional>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

namespace sp {

class Rng;

class Searcher {
public:
    virtual ~Searcher() = default;
    virtual std::string name() const = 0;
    /// Searches `space` with `engine` until the budget is spent, the space is exhausted or `stop` is
    /// requested (then it returns within about 100 ms, with the best so far). `observer` may be null.
    virtual SearchResult run(const SearchSpace& space, Engine& engine, const SearchOptions& options,
                             Observer* observer, std::stop_token stop) = 0;
};

/// Spends the start of a run on options.warmStart (engine.h) and returns the start's assignment, or nullopt
/// (no warm start, or a Megatron plan outside the space). Then evaluates options.starts, if any, and returns
/// the run's best plan so far instead. Searchers call it first thing after creating their generator, so a
/// Descent warm start walks the same path as `cd` with the same seed.
std::optional<std::vector<int>> warmStart(SearchRun& run, Engine& engine, Rng& rng);

// ---------------------------------------------------------------------------------------------------------------
// The baselines.

/// The standard recipe, one evaluation: CostModel::megatronPlan() when the objective provides it, otherwise
/// Plan::megatronChoices on SearchSpace::megatronLike()'s degrees. Ignores the budget.
class MegatronSearcher final : public Searcher {
public:
    std::string name() const override { return "megatron"; }
    SearchResult run(const SearchSpace&, Engine&, const SearchOptions&, Observer*, std::stop_token) override;
};

/// Every valid plan, in order: the true optimum. Ignores the evaluation budget (honours seconds and stop: a
/// run cut short says so in its message) and refuses spaces larger than `limit` valid plans.
class ExhaustiveSearcher final : public Searcher {
public:
    static constexpr double kDefaultLimit = 2'000'000;
    explicit ExhaustiveSearcher(double limit = kDefaultLimit) : m_limit(limit) {}
    std::string name() const override { return "exhaustive"; }
    SearchResult run(const SearchSpace&, Engine&, const SearchOptions&, Observer*, std::stop_token) override;

private:
    double m_limit;
};

/// Uniformly random valid plans (SearchSpace::sample), in batches of 64. Needs a budget.
class RandomSearcher final : public Searcher {
public:
    std::string name() const override { return "random"; }
    SearchResult run(const SearchSpace&, Engine&, const SearchOptions&, Observer*, std::stop_token) override;
};

/// Random valid plans drawn one decision at a time (SearchSpace::sampleByDecision: each decision uniform
/// among the values its mask allows), in batches of 64: even over degrees, unlike `random`, which is uniform
/// over plans and so rarely visits tp 1. Needs a budget.
class RandomSequentialSearcher final : public Searcher {
public:
    std::string name() const override { return "random-seq"; }
    SearchResult run(const SearchSpace&, Engine&, const SearchOptions&, Observer*, std::stop_token) override;
};

/// Coordinate descent from the Megatron plan (or from the best of SearchOptions::starts, when one scores
/// higher): for each decision in turn, every other allowed value is
/// evaluated (one batch; later decisions kept where still valid, else repaired) and the best replaces the
/// current plan if it scores higher; sweeps repeat until one improves nothing. Without restarts (`cd`) it
/// stops there, possibly under budget, and needs no budget; with restarts (`cd-restarts`) it descends again
/// from a plan drawn decision by decision until the budget is spent. The Megatron plan is always evaluated
/// first, so the result is never worse than it.
class CoordinateDescentSearcher final : public Searcher {
public:
    explicit CoordinateDescentSearcher(bool restarts = false) : m_restarts(restarts) {}
    std::string name() const override { return m_restarts ? "cd-restarts" : "cd"; }
    SearchResult run(const SearchSpace&, Engine&, const SearchOptions&, Observer*, std::stop_token) override;

private:
    bool m_restarts;
};

/// Simulated annealing. Energy: -log(throughput) for feasible plans, 100 + log(shortfall) for infeasible ones
/// (so chains climb out of infeasibility and never trade a feasible plan for an infeasible one). Independent
/// chains step together, one batch per step, so the batch size (and the result) does not depend on the thread
/// count. Neighbour: one decision (sometimes two) changed to another valid value, later decisions repaired
/// (SearchSpace::repair). Geometric cooling over the budget; a chain that stalls restarts.
///
/// Defaults tuned on the seven sample scenarios (budgets 200, 500, 1500; 30 seeds; best / best known): one
/// chain beats several at small budgets (0.996 vs 0.976 for 8 chains), so chains grow with the budget.
struct AnnealingParams {
    /// Independent chains (the batch size); 0: budget / 2000 clamped to 1..8, or 4 on a time-only budget.
    int chains = 0;
    double startTemperature = 0.1; ///< in log-throughput: a 10% worse move is accepted with probability 1/e
    double endTemperature = 0.001; ///< at the end of the budget: practically greedy
    double secondMove = 0.4;       ///< probability that a neighbour also changes a second decision
    /// Under layer groups (Constraints::granularity): probability that the group move follows a neighbour's
    /// first change (detail::copyGroup). Measured on the layer-group hard-suite scenario (20 seeds, 20,000
    /// evaluations; cold / warm-started from cd): within 0.1% of the best known 100 / 95% of the runs at 1,
    /// 85 / 85% at 0.5, 65 / 70% at 0; within 1% 100 / 100%, 100 / 100%, 95 / 100%.
    double groupMove = 1.0;
    int patience = 0;             ///< steps without a better chain-best before a restart; 0: 6 x decisions
    double restartFromBest = 0.5; ///< probability that a restart begins at the run's best plan (else random)
};
class AnnealingSearcher final : public Searcher {
public:
    explicit AnnealingSearcher(AnnealingParams p = {}) : m_p(p) {}
    std::string name() const override { return "sa"; }
    SearchResult run(const SearchSpace&, Engine&, const SearchOptions&, Observer*, std::stop_token) override;

private:
    AnnealingParams m_p;
};

/// Genetic algorithm: generational with elitism. The first generation is drawn decision by decision
/// (SearchSpace::sampleByDecision: even over degrees; tuned, 0.992 vs 0.985 at 200 evaluations). Tournament
/// selection; uniform crossover in decision order, each gene from either parent when the masks allow it, else
/// the other parent's, else repaired; per-decision mutation; a child this run has already evaluated is moved
/// to a neighbour (up to `noveltyTries` times) so the budget buys new plans. Needs a budget.
///
/// Defaults tuned like AnnealingParams: a population of 64 wastes small budgets on few generations (0.968 vs
/// 0.994 for 16), so the population grows with the budget and reaches 64 from 2,560 evaluations.
struct GeneticParams {
    /// Also the batch size; 0: budget / 40 clamped to 16..64, or 32 on a time-only budget.
    int population = 0;
    int tournament = 4; ///< candidates per tournament
    int elites = 0;     ///< best distinct plans carried into the next generation unchanged; 0: population / 8
    double crossover = 0.9; ///< probability a child mixes two parents (else it copies one, then mutates)
    double mutation = 0;    ///< per-decision mutation probability; 0: 1.5 / decisions
    int noveltyTries = 8;
    /// Under layer groups: probability that the group move (detail::copyGroup) follows a child's first
    /// mutated per-layer choice, as sa's neighbours (AnnealingParams::groupMove).
    double groupMove = 1.0;
};
class GeneticSearcher final : public Searcher {
public:
    explicit GeneticSearcher(GeneticParams p = {}) : m_p(p) {}
    std::string name() const override { return "ga"; }
    SearchResult run(const SearchSpace&, Engine&, const SearchOptions&, Observer*, std::stop_token) override;

private:
    GeneticParams m_p;
};

} // namespace sp
