// Coordinate descent (from the Megatron plan, optionally with random restarts) and random plans drawn one
// decision at a time: the baselines a person would try before a learned searcher.
#include "core/search/rng.h"
#include "core/search/searcher.h"

#include <limits>

namespace sp {

namespace {

/// One descent from `start` (already evaluated, score `score`): for each decision in order, every other value
/// the masks allow (later decisions kept where still valid, else repaired), evaluated as one batch; the best
/// replaces the current plan when it scores higher. Sweeps until one improves nothing (a local optimum in the
/// one-decision neighbourhood) or the run is done. Returns the number of sweeps.
int descend(SearchRun& run, const SearchSpace& space, std::vector<int> current, double score, Rng& rng) {
    std::vector<uint8_t> mk;
    std::vector<std::vector<int>> batch;
    int sweeps = 0;
    for (bool improved = true; improved && !run.done();) {
        improved = false;
        ++sweeps;
        for (int i = 0; i < space.decisionCount() && !run.done(); ++i) {
            space.mask(i, current, mk);
            batch.clear();
            for (int k = 0; k < int(mk.size()); ++k) {
                if (!mk[k] || k == current[size_t(i)]) continue;
                std::vector<int> c = current;
                c[size_t(i)] = k;
                space.repair(c, i + 1, rng);
                batch.push_back(std::move(c));
            }
            if (batch.empty()) continue;
            const auto outcomes = run.evaluate(batch);
            size_t best = batch.size();
            double bestScore = score;
            for (size_t b = 0; b < outcomes.size(); ++b)
                if (outcomes[b].evaluated() && outcomes[b].score > bestScore)
                    best = b, bestScore = outcomes[b].score;
            if (best < batch.size()) {
                current = std::move(batch[best]);
                score = bestScore;
                improved = true;
            }
        }
    }
    return sweeps;
}

/// The start of a descent: the cost model's Megatron plan (evaluated even when it lies outside the space, so
/// the result is never worse than it), as an assignment when it has one, else the space's Megatron-like plan.
std::pair<std::optional<std::vector<int>>, double> megatronStart(SearchRun& run, Engine& engine) {
    const SearchSpace& space = run.space();
    std::optional<std::vector<int>> start;
    double score = -std::numeric_limits<double>::infinity();
    if (auto plan = engine.objective().megatronPlan()) {
        const auto o = run.evaluatePlan(*plan);
        if (auto a = space.fromPlan(*plan); a && space.toPlan(*a) == *plan && o.evaluated())
            start = *a, score = o.score;
    }
    if (!start && !run.done()) {
        const auto o = run.evaluate(*space.megatronLike());
        if (o.evaluated()) start = space.megatronLike(), score = o.score;
    }
    return {start, score};
}

} // namespace

namespace {

std::optional<std::vector<int>> optionStart(SearchRun& run, Engine& engine, Rng& rng) {
    const WarmStart w = run.options().warmStart;
    if (w == WarmStart::None || run.space().empty()) return std::nullopt;
    auto [start, score] = megatronStart(run, engine);
    if (w == WarmStart::Descent && start) descend(run, run.space(), *start, score, rng);
    if (w == WarmStart::Megatron) return start;
    const Candidate* best = run.best();
    if (best && !best->choices.empty()) return best->choices;
    return start;
}

} // namespace

std::optional<std::vector<int>> warmStart(SearchRun& run, Engine& engine, Rng& rng) {
    auto start = optionStart(run, engine, rng);
    const SearchSpace& space = run.space();
    std::vector<std::vector<int>> batch;
    for (const auto& a : run.options().starts)
        if (int(a.size()) == space.decisionCount() && space.valid(a)) batch.push_back(a);
    if (batch.empty() || run.done()) return start;
    run.evaluate(batch);
    const Candidate* best = run.best();
    if (best && !best->choices.empty()) return best->choices;
    return start;
}

SearchResult CoordinateDescentSearcher::run(const SearchSpace& space, Engine& engine,
                                            const SearchOptions& options, Observer* observer,
                                            std::stop_token stop) {
    SearchRun run(engine, space, options, observer, std::move(stop), name());
    if (space.empty()) return run.refuse("no valid plan: " + space.emptyReason());
    if (m_restarts && options.budget.unlimited())
        return run.refuse("cd-restarts: needs a budget (evaluations or seconds)");
    Rng rng(options.seed);
    auto [start, startScore] = megatronStart(run, engine);
    // Given starts (SearchOptions::starts): the descent begins at the best of them and the Megatron plan.
    std::vector<std::vector<int>> given;
    for (const auto& a : options.starts)
        if (int(a.size()) == space.decisionCount() && space.valid(a)) given.push_back(a);
    if (!given.empty() && !run.done()) {
        const auto outcomes = run.evaluate(given);
        for (size_t i = 0; i < outcomes.size(); ++i)
            if (outcomes[i].evaluated() && (!start || outcomes[i].score > startScore))
                start = given[i], startScore = outcomes[i].score;
    }
    if (start) descend(run, space, *start, startScore, rng);
    while (m_restarts && !run.done()) {
        std::vector<int> a = space.sampleByDecision(rng);
        const auto o = run.evaluate(a);
        if (!o.evaluated()) break;
        descend(run, space, std::move(a), o.score, rng);
    }
    return run.finish();
}

SearchResult RandomSequentialSearcher::run(const SearchSpace& space, Engine& engine,
                                           const SearchOptions& options, Observer* observer,
                                           std::stop_token stop) {
    SearchRun run(engine, space, options, observer, std::move(stop), name());
    if (space.empty()) return run.refuse("no valid plan: " + space.emptyReason());
    if (options.budget.unlimited()) return run.refuse("random-seq: needs a budget (evaluations or seconds)");
    Rng rng(options.seed);
    warmStart(run, engine, rng);
    constexpr int kBatch = 64;
    std::vector<std::vector<int>> batch(kBatch);
    while (!run.done()) {
        for (auto& a : batch) a = space.sampleByDecision(rng);
        run.evaluate(batch);
    }
    return run.finish();
}

} // namespace sp
