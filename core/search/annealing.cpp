// Simulated annealing: independent chains stepped together, geometric cooling over the budget, restarts on
// stalls.
#include "core/search/moves.h"
#include "core/search/searcher.h"

#include <algorithm>
#include <cmath>

namespace sp {

SearchResult AnnealingSearcher::run(const SearchSpace& space, Engine& engine, const SearchOptions& options,
                                    Observer* observer, std::stop_token stop) {
    SearchRun run(engine, space, options, observer, std::move(stop), name());
    if (space.empty()) return run.refuse("no valid plan: " + space.emptyReason());
    if (options.budget.unlimited()) return run.refuse("sa: needs a budget (evaluations or seconds)");
    Rng rng(options.seed);
    const auto start = warmStart(run, engine, rng);
    const int64_t budget = options.budget.evaluations;
    const int chains = m_p.chains > 0 ? m_p.chains
                       : budget > 0   ? int(std::clamp<int64_t>(budget / 2000, 1, 8))
                                      : 4;
    const int patience = m_p.patience > 0 ? m_p.patience : 6 * space.decisionCount();
    const double t0 = m_p.startTemperature, t1 = std::min(m_p.endTemperature, m_p.startTemperature);

    struct Chain {
        std::vector<int> current;
        double energy = 1e300;
        double bestEnergy = 1e300;
        int stall = 0;
        bool live = false; ///< current has been evaluated
    };
    std::vector<Chain> cs(chains);
    std::vector<std::vector<int>> proposals(chains);
    std::vector<char> force(chains, 0); ///< restart proposals replace the current state unconditionally
    std::vector<uint8_t> mk;
    const auto counterparts = detail::groupCounterparts(space);

    for (int c = 0; c < chains; ++c) proposals[c] = space.sample(rng), force[c] = 1;
    if (start) proposals[0] = *start; // evaluated already: a repeat costs nothing
    while (!run.done()) {
        const auto outcomes = run.evaluate(proposals);
        const double temperature = t0 * std::pow(t1 / t0, run.fraction());
        for (int c = 0; c < chains; ++c) {
            Chain& ch = cs[c];
            const auto& o = outcomes[c];
            if (!o.evaluated()) continue; // out of budget or stopped: the loop ends
            const double e = detail::energy(o.score);
            const bool accept = force[c] || !ch.live || e <= ch.energy ||
                                rng.uniform() < std::exp(-(e - ch.energy) / temperature);
            if (accept) ch.current = proposals[c], ch.energy = e, ch.live = true;
            if (e < ch.bestEnergy - 1e-12) {
                ch.bestEnergy = e;
                ch.stall = 0;
            } else {
                ++ch.stall;
            }
        }
        if (run.done()) break;
        // Next proposals, in chain order (the order of random draws fixes the result).
        for (int c = 0; c < chains; ++c) {
            Chain& ch = cs[c];
            force[c] = 0;
            if (!ch.live) {
                proposals[c] = space.sample(rng), force[c] = 1;
                continue;
            }
            if (ch.stall >= patience) {
                ch.stall = 0;
                ch.bestEnergy = 1e300;
                const Candidate* best = run.best();
                if (best && !best->choices.empty() && rng.chance(m_p.restartFromBest)) {
                    // Continue from the run's best: its energy is known, so only the neighbour is new.
                    ch.current = best->choices;
                    ch.energy = detail::energy(planScore(best->metrics));
                } else {
                    proposals[c] = space.sample(rng), force[c] = 1;
                    continue;
                }
            }
            std::vector<int>& p = proposals[c];
            p = ch.current;
            if (!detail::neighbour(space, p, rng, mk, counterparts, m_p.groupMove))
                continue; // a space of one plan: done() ends the run
            if (rng.chance(m_p.secondMove)) detail::neighbour(space, p, rng, mk);
        }
    }
    return run.finish();
}

} // namespace sp
