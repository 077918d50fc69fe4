#include "core/rl/rlsearcher.h"

#include "core/search/moves.h"
#include "core/search/rng.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <set>
#include <span>

namespace sp {

namespace {

/// Raw reward: log-throughput when feasible; below every feasible plan otherwise, by how far it misses.
double rewardOf(const Metrics& m, double logWorstFeasible) {
    if (m.feasible && m.throughput > 0) return std::log(m.throughput);
    if (!m.valid) return logWorstFeasible - 10.0;
    return logWorstFeasible - 1.0 - std::log(std::max(1.0, m.shortfall));
}

} // namespace

SearchResult RlSearcher::run(const SearchSpace& space, Engine& engine, const SearchOptions& options,
                             Observer* observer, std::stop_token stop) {
    SearchRun run(engine, space, options, observer, stop, name());
    if (space.empty()) return run.refuse("no valid plan: " + space.emptyReason());
    if (options.budget.unlimited()) return run.refuse("rl needs a budget (evaluations or seconds)");

    std::vector<int> counts;
    for (const auto& d : space.decisions()) counts.push_back(int(d.values.size()));
    rl::Policy policy(counts, m_o.network, options.seed * 0x9E3779B97F4A7C15ull + 17);
    // What it starts from: an earlier search's policy, else the shipped prior for this scenario, else random.
    const rl::SpaceKeys keys = rl::keysOf(space);
    std::shared_ptr<const rl::Knowledge> start;
    if (m_o.carry) start = std::dynamic_pointer_cast<const rl::Knowledge>(options.learned);
    bool fromPrior = false;
    if (!start && m_o.prior) start = rl::priorFor(rl::shippedPrior(), space.scenario()), fromPrior = true;
    if (start) {
        rl::load(*start, keys, policy.params());
        // Its choices at a strength: a carried policy's (RlOptions::carryStrength), or the prior's, fading
        // with the scenario's distance from what it learned on (RlOptions::priorStrength, priorReach).
        const double d = start->distance / std::max(1e-9, m_o.priorReach);
        const double strength = fromPrior ? m_o.priorStrength * std::exp(-d * d) : m_o.carryStrength;
        if (strength != 1.0) {
            for (auto& e : policy.params().emb) e *= strength;
            for (auto& b : policy.params().bias) b *= strength;
        }
    }
    rl::Adam adam(policy.params(), m_o.learningRate);
    rl::Params grad = policy.params().zerosLike();
    // The policy runs on this thread, each batch as one prefix tree through batched matrix products: split
    // over the engine's threads (four fixed parts, as it once was), the parts lose a fifth of their shared
    // prefixes and most of the batching, and cost 1.6x the processor time; evaluation stays parallel.
    Rng rng(options.seed);
    const rl::MaskFn mask = [&space](int i, const std::vector<int>& prefix, std::vector<uint8_t>& out) {
        space.mask(i, prefix, out);
    };

    // A warm start heads the elite, which the policy attends to and imitates.
    if (!warmStart(run, engine, rng) && m_o.warmStart)
        if (auto p = engine.objective().megatronPlan()) run.evaluatePlan(*p);

    double logWorstFeasible = 0;
    bool anyFeasible = false;
    double temperature = 1.0;
    int staleIterations = 0;
    int64_t iteration = 0;
    std::vector<uint8_t> localMask;
    std::vector<int> rankedFor; ///< the plan whose neighbourhood rankedQueue holds
    int64_t rankedAt = -1;      ///< the policy update it was ranked after
    std::vector<std::vector<int>> rankedQueue;
    // The layout families (layoutFamily) of the starts: a chain's earlier elite and the loose end's plans,
    // each family a basin the edit may have moved the best plan to (RlOptions::familyShare).
    std::vector<std::string> startFamilies;
    for (const auto& a : options.starts)
        if (space.valid(a)) {
            const std::string f = layoutFamily(space.toPlan(a), space.scenario().model);
            if (std::find(startFamilies.begin(), startFamilies.end(), f) == startFamilies.end())
                startFamilies.push_back(f);
        }
    std::set<std::vector<int>> spent; ///< family heads whose whole neighbourhood has been evaluated
    const auto counterparts = detail::groupCounterparts(space);
    const int eliteK = std::min({m_o.eliteK, options.eliteK, 256}); // attentionBackward keeps K on the stack
    const int64_t budget = options.budget.evaluations;
    const int batchSize = m_o.batch > 0 ? m_o.batch
                          : budget > 0  ? int(std::clamp<int64_t>(budget / 25, 8, 32))
                                        : 32;
    const int localPlaces =
        std::clamp(int(std::lround(m_o.localShare * batchSize)), 0, std::max(0, batchSize - 2));
    int nChains = m_o.localChains > 0                  ? m_o.localChains
                  : m_o.localChains < 0 || budget <= 0 ? 0
                                                       : int(std::min<int64_t>(budget / 2000, 8));
    nChains = std::min(nChains, localPlaces);
    if (nChains < 2 && m_o.localChains == 0) nChains = 0;
    struct Chain {
        std::vector<int> current;
        double energy = 0, bestEnergy = 1e300;
        int stall = 0;
        bool live = false;
        detail::MovableCache movable;
    };
    std::vector<Chain> chains(static_cast<size_t>(nChains));
    const int policyEvery = chains.empty()        ? 1
                            : m_o.policyEvery > 0 ? m_o.policyEvery
                                                  : int(std::max<int64_t>(1, budget / 1000));
    const int epochs = m_o.epochs > 0 ? m_o.epochs : policyEvery > 1 ? 1 : 2;
    int64_t round = 0;
    const int patience = 6 * space.decisionCount();
    const AnnealingParams sa; // the chains cool and restart as sa's
    const double t0 = sa.startTemperature, t1 = sa.endTemperature;

    while (!run.done()) {
        const double sampledAt = temperature;
        std::vector<rl::Trace> traces;
        std::vector<std::vector<int>> batch;
        // Neighbours of elite plans (RlOptions::localShare) fill the first places of the batch, the policy's
        // samples the rest. Only plans the run has not seen: a seen one costs neither budget nor policy work
        // and teaches nothing; the places not filled go to the policy.
        std::vector<const std::vector<int>*> eliteChoices;
        for (const auto& c : run.elite())
            if (!c.choices.empty()) eliteChoices.push_back(&c.choices);
        const auto seen = [&run](const std::vector<int>& p) { return run.seen(p); };
        // With chains, each takes an equal share of the local places: fresh neighbours of its current plan.
        std::vector<int> chainEnd(chains.size(), 0); ///< one past each chain's last proposal in the batch
        // Every unseen neighbour of `plan`, in the policy's order (worst first: taken from the back).
        const auto rankedNeighbours = [&](const std::vector<int>& plan) {
            auto queue = detail::allNeighbours(space, plan, seen, rng, localMask);
            const auto scored = policy.traces(queue, mask);
            std::vector<std::pair<double, size_t>> order;
            for (size_t k = 0; k < scored.size(); ++k) {
                double lp = 0;
                for (double x : scored[k].oldLogp) lp += x;
                order.emplace_back(-lp, k);
            }
            std::stable_sort(order.begin(), order.end());
            std::vector<std::vector<int>> sorted;
            for (auto it = order.rbegin(); it != order.rend(); ++it)
                sorted.push_back(std::move(queue[it->second]));
            return sorted;
        };
        // Plans from the back of `queue` that the run has not seen, until the batch holds `until`.
        const auto takeFrom = [&](std::vector<std::vector<int>>& queue, size_t until) {
            while (batch.size() < until && !queue.empty()) {
                if (!run.seen(queue.back()) &&
                    std::find(batch.begin(), batch.end(), queue.back()) == batch.end())
                    batch.push_back(std::move(queue.back()));
                queue.pop_back();
            }
        };
        // The best plan's neighbourhood, ranked by the policy once per best plan (and per policy update),
        // then taken in that order as far as it is unseen: up to `count` more plans into the batch; with
        // starts of other layout families, those families' best plans' neighbourhoods take the places it
        // leaves (RlOptions::familyShare).
        const auto takeRanked = [&](int count) {
            if (count <= 0 || eliteChoices.empty() || !m_o.usePolicy) return;
            if (rankedFor != *eliteChoices[0] ||
                (m_o.rerankEvery > 0 && iteration - rankedAt >= m_o.rerankEvery)) {
                rankedFor = *eliteChoices[0], rankedAt = iteration;
                rankedQueue = rankedNeighbours(rankedFor);
            }
            const size_t until = batch.size() + size_t(count);
            if (startFamilies.empty() || m_o.familyShare < 0) return takeFrom(rankedQueue, until);
            takeFrom(rankedQueue, until - size_t(std::lround(m_o.familyShare * count)));
            // Each start family's best plan in the elite (the elite's order), unless it is the best plan or
            // its neighbourhood is spent; what they leave goes back to the best plan's neighbourhood.
            std::vector<std::string> families;
            for (const auto* e : eliteChoices) {
                if (batch.size() >= until) break;
                std::string f = layoutFamily(space.toPlan(*e), space.scenario().model);
                if (std::find(startFamilies.begin(), startFamilies.end(), f) == startFamilies.end() ||
                    std::find(families.begin(), families.end(), f) != families.end())
                    continue;
                families.push_back(std::move(f));
                if (e == eliteChoices[0] || spent.count(*e)) continue;
                auto queue = rankedNeighbours(*e);
                if (queue.empty()) spent.insert(*e);
                takeFrom(queue, until);
            }
            takeFrom(rankedQueue, until);
        };
        if (chains.empty()) {
            takeRanked(std::clamp(int(std::lround(m_o.rankedShare * localPlaces)), 0, localPlaces));
            for (auto& p : detail::freshNeighbours(space, eliteChoices, localPlaces - int(batch.size()),
                                                   m_o.localSecondMove, seen, rng, localMask, counterparts,
                                                   m_o.localGroupMove))
                if (std::find(batch.begin(), batch.end(), p) == batch.end()) batch.push_back(std::move(p));
        } else if (!eliteChoices.empty()) {
            const auto& elite = run.elite();
            for (size_t c = 0; c < chains.size(); ++c) {
                Chain& ch = chains[c];
                if (!ch.live || ch.stall >= patience) {
                    // (Re)start at an elite plan: the run's best, or (on a restart, half the time) another.
                    const size_t from = !ch.live ? std::min(c, eliteChoices.size() - 1)
                                        : rng.chance(sa.restartFromBest)
                                            ? 0
                                            : size_t(rng.below(int(eliteChoices.size())));
                    ch.current = *eliteChoices[from];
                    for (const auto& e : elite)
                        if (&e.choices == eliteChoices[from])
                            ch.energy = detail::energy(planScore(e.metrics));
                    ch.bestEnergy = ch.energy, ch.stall = 0, ch.live = true;
                }
                const int share =
                    localPlaces / int(chains.size()) + (int(c) < localPlaces % int(chains.size()));
                auto mine =
                    detail::freshNeighbours(space, {&ch.current}, share, m_o.localSecondMove, seen, rng,
                                            localMask, counterparts, m_o.localGroupMove, &ch.movable);
                for (auto& p : mine)
                    if (std::find(batch.begin(), batch.end(), p) == batch.end())
                        batch.push_back(std::move(p));
                chainEnd[c] = int(batch.size());
                if (mine.empty()) ch.stall = patience; // its neighbourhood is spent: restart next time
            }
            // Beside the chains, a few of the best plan's neighbours in the policy's order.
            takeRanked(
                std::clamp(int(std::lround(m_o.rankedShare * m_o.rankedBesideChains)), 0, localPlaces));
        }
        const int local = int(batch.size());
        // With chains, the policy samples and learns on one iteration in policyEvery, and samples whenever
        // the chains propose nothing; on the others the batch is the chains' steps alone.
        const bool scheduled = round++ % policyEvery == 0;
        const bool policyRound = scheduled || local == 0;
        if (policyRound) {
            // The elite history as tokens: choices plus the z-score of log-throughput among the elite.
            std::vector<rl::EliteToken> tokens;
            {
                const auto& elite = run.elite();
                std::vector<double> r;
                for (const auto& c : elite) {
                    if (c.choices.empty() || int(tokens.size()) >= eliteK) continue;
                    tokens.push_back({c.choices, 0.0});
                    r.push_back(c.metrics.feasible ? std::log(std::max(1e-12, c.metrics.throughput)) : NAN);
                }
                double mean = 0, n = 0;
                for (double x : r)
                    if (!std::isnan(x)) mean += x, ++n;
                mean = n > 0 ? mean / n : 0;
                double var = 0;
                for (double x : r)
                    if (!std::isnan(x)) var += (x - mean) * (x - mean);
                const double sd = n > 1 ? std::sqrt(var / n) : 1.0;
                for (size_t i = 0; i < tokens.size(); ++i)
                    tokens[i].reward = std::isnan(r[i]) ? -2.0 : (r[i] - mean) / (sd + 1e-3);
            }
            policy.setElite(std::move(tokens));
            // Each sample draws from its own generator, seeded from this iteration's draw.
            const uint64_t iterationSeed = rng.next();
            std::vector<Rng> rngs;
            for (int b = 0; b < batchSize - local; ++b)
                rngs.emplace_back(iterationSeed + 0x9E3779B97F4A7C15ull * uint64_t(b + 1));
            if (m_o.usePolicy) {
                traces = policy.sampleBatch(mask, rngs, temperature);
            } else { // the ablation without a policy: uniform plans in its places
                traces.resize(rngs.size());
                for (auto& t : traces) t.actions = space.sample(rng);
            }
        }
        for (const auto& t : traces) batch.push_back(t.actions);
        // A policy that keeps proposing plans it has seen spends no budget: after a while, random valid plans
        // replace half its samples, so the run always advances.
        const bool filled = staleIterations >= 8;
        if (filled)
            for (size_t b = 0; b < traces.size(); b += 2)
                batch[size_t(local) + b] = space.sample(rng), traces[b].actions = batch[size_t(local) + b];
        const auto outcomes = run.evaluate(batch);
        // Each chain steps to the best of its proposals by the Metropolis rule.
        if (!chains.empty()) {
            const double t = t0 * std::pow(t1 / t0, run.fraction());
            int begin = 0;
            for (size_t c = 0; c < chains.size(); ++c) {
                Chain& ch = chains[c];
                int pick = -1;
                double e = 0;
                for (int b = begin; b < chainEnd[c]; ++b)
                    if (outcomes[size_t(b)].evaluated() &&
                        (pick < 0 || detail::energy(outcomes[size_t(b)].score) < e))
                        pick = b, e = detail::energy(outcomes[size_t(b)].score);
                begin = chainEnd[c];
                if (pick < 0) continue;
                if (e <= ch.energy || rng.uniform() < std::exp(-(e - ch.energy) / t))
                    ch.current = batch[size_t(pick)], ch.energy = e;
                if (e < ch.bestEnergy - 1e-12)
                    ch.bestEnergy = e, ch.stall = 0;
                else
                    ++ch.stall;
            }
        }

        int fresh = 0, freshSampled = 0;
        for (size_t b = 0; b < outcomes.size(); ++b) {
            const auto& o = outcomes[b];
            if (!o.evaluated()) continue;
            fresh += o.fresh;
            if (int(b) >= local) freshSampled += o.fresh;
            if (o.metrics->feasible && o.metrics->throughput > 0) {
                const double lr = std::log(o.metrics->throughput);
                logWorstFeasible = anyFeasible ? std::min(logWorstFeasible, lr) : lr;
                anyFeasible = true;
            }
        }
        std::vector<rl::Trace> used;
        std::vector<double> rewards;
        for (size_t b = 0; b < traces.size(); ++b) {
            const auto& o = outcomes[size_t(local) + b];
            if (!o.evaluated() || (filled && b % 2 == 0)) continue; // fill-ins are not the policy's
            used.push_back(std::move(traces[b]));
            rewards.push_back(rewardOf(*o.metrics, logWorstFeasible));
        }
        if (!policyRound) continue; // the chains' steps alone: nothing for the policy
        staleIterations = fresh == 0 ? staleIterations + 1 : 0;
        const double freshShare = double(freshSampled) / double(std::max<size_t>(1, traces.size()));
        // Exploration control: a converged policy keeps proposing plans it has already seen, which costs time
        // and no budget. Raising the sampling temperature while fewer than half the samples are new keeps it
        // exploring around its mode (the search analogue of annealing's neighbourhood), and lowers again once
        // they are.
        temperature = freshShare < m_o.freshTarget ? std::min(m_o.maxTemperature, temperature * 1.1)
                                                   : std::max(1.0, temperature * 0.97);
        if (used.size() < 2 || !m_o.usePolicy) continue;
        // A round whose samples were all seen before brings no reward the policy has not already learned
        // from; the raised temperature is what changes its next samples, so the update is skipped.
        if (freshSampled == 0) continue;
        // Off the schedule (the chains proposed nothing) the samples keep the run advancing; learning from
        // them would cost an update per round where the space is nearly spent (RlOptions::learnOffSchedule).
        if (!scheduled && !m_o.learnOffSchedule) continue;

        // Advantages over the batch (its mean is the baseline): centered ranks, or z-scores of the rewards.
        std::vector<double> adv(rewards.size(), 0.0);
        if (m_o.rankAdvantages) {
            std::vector<size_t> order(rewards.size());
            std::iota(order.begin(), order.end(), size_t(0));
            std::stable_sort(order.begin(), order.end(),
                             [&](size_t a, size_t b) { return rewards[a] < rewards[b]; });
            const double n = double(rewards.size()), sd = n / std::sqrt(12.0);
            for (size_t r = 0; r < order.size(); ++r) {
                // ties share their mean rank
                size_t e = r;
                while (e + 1 < order.size() && rewards[order[e + 1]] == rewards[order[r]]) ++e;
                for (size_t k = r; k <= e; ++k)
                    adv[order[k]] = ((double(r + e) / 2.0) - (n - 1.0) / 2.0) / sd;
                r = e;
            }
        } else {
            const double mean = std::accumulate(rewards.begin(), rewards.end(), 0.0) / double(rewards.size());
            double var = 0;
            for (double r : rewards) var += (r - mean) * (r - mean);
            const double sd = std::sqrt(var / double(rewards.size()));
            for (size_t k = 0; k < rewards.size(); ++k) adv[k] = sd > 1e-9 ? (rewards[k] - mean) / sd : 0.0;
        }
        // Self-imitation: the best plans so far, pulled up with a fixed positive advantage.
        std::vector<std::vector<int>> imitated;
        for (const auto& c : run.elite()) {
            if (int(imitated.size()) >= m_o.imitate) break;
            if (c.choices.empty() || !c.metrics.feasible) continue;
            imitated.push_back(c.choices);
        }
        const double entropy = policy.update(used, adv, imitated, m_o.imitationAdvantage, mask, m_o.clip,
                                             m_o.entropyWeight, epochs, grad, adam);
        LearningPoint lp;
        lp.iteration = ++iteration;
        lp.evaluations = run.evaluations();
        lp.meanReward = std::accumulate(rewards.begin(), rewards.end(), 0.0) / double(rewards.size());
        lp.entropy = entropy;
        lp.temperature = sampledAt;
        double eliteSum = 0;
        int eliteN = 0;
        for (const auto& c : run.elite())
            if (c.metrics.feasible) eliteSum += c.metrics.throughput, ++eliteN;
        lp.eliteMean = eliteN > 0 ? eliteSum / eliteN : 0.0;
        run.recordLearning(lp);
        if (run.stopRequested()) break;
    }
    SearchResult result = run.finish();
    result.learned = std::make_shared<const rl::Knowledge>(rl::save(policy.params(), keys, start.get()));
    return result;
}

} // namespace sp
