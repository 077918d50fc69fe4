#include "core/searchers/pretrain.h"

#include "core/cost/costmodel.h"
#include "core/search/rng.h"
#include "core/searchers/registry.h"

#include <algorithm>

namespace sp {

std::vector<Scenario> pretrainVariations(const Scenario& s) {
    std::vector<Scenario> out{s};
    const auto variant = [&](const char* what) {
        Scenario v = s;
        v.name = s.name + " (" + what + ")";
        return v;
    };
    if (s.constraints.gpus == 0) {
        if (s.cluster.nodes >= 2) {
            Scenario v = variant("half the GPUs");
            v.cluster.nodes /= 2;
            out.push_back(std::move(v));
        }
        Scenario v = variant("2x GPUs");
        v.cluster.nodes *= 2;
        out.push_back(std::move(v));
    }
    {
        Scenario v = variant("4x prompt");
        v.workload.inputTokens *= 4;
        out.push_back(std::move(v));
    }
    if (s.workload.tpotMs > 0) {
        Scenario v = variant("TPOT SLO 0.6x");
        v.workload.tpotMs *= 0.6;
        out.push_back(std::move(v));
    }
    return out;
}

rl::Prior pretrainPrior(const std::vector<Scenario>& scenarios, const PretrainOptions& o,
                        const PretrainLog& log, std::stop_token stop) {
    std::vector<Scenario> all;
    for (const Scenario& s : scenarios) {
        if (o.variations)
            for (auto& v : pretrainVariations(s)) all.push_back(std::move(v));
        else
            all.push_back(s);
    }
    // The spaces once; a scenario without a valid plan teaches nothing.
    std::vector<std::pair<const Scenario*, SearchSpace>> work;
    for (const Scenario& s : all) {
        SearchSpace space(s);
        if (!space.empty()) work.emplace_back(&s, std::move(space));
    }
    std::shared_ptr<const LearnedState> learned;
    std::vector<std::shared_ptr<const LearnedState>> last(work.size());
    Rng rng(o.seed);
    for (int round = 0; round < o.rounds && !stop.stop_requested(); ++round) {
        std::vector<size_t> order(work.size());
        for (size_t i = 0; i < order.size(); ++i) order[i] = i;
        for (size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[size_t(rng.below(i))]);
        for (size_t i : order) {
            if (stop.stop_requested()) break;
            const auto& [scenario, space] = work[i];
            const CostModel model(*scenario);
            const CostModelObjective objective(model);
            Engine engine(objective);
            SearchOptions so;
            so.budget.evaluations = o.budget;
            so.seed = o.seed + uint64_t(round) * 1000 + i;
            so.threads = o.threads;
            so.learned = learned;
            // From a random policy at the very start (not from the prior being replaced). The recipe is
            // pinned, not rl's defaults: the policy carried from scenario to scenario at full strength, half
            // the local places ranked, as when resources/rl-prior.json was written (before carryStrength went
            // to 0.5 and rankedShare to 1), so that its command writes it again to the byte.
            const SearchResult r =
                makeSearcher("rl:no-prior+rank=0.5+carry=1")->run(space, engine, so, nullptr, stop);
            if (r.learned) learned = r.learned, last[i] = r.learned;
            if (log) log(scenario->name, round, r.feasible() ? r.best.metrics.throughput : 0.0);
        }
    }
    rl::Prior prior;
    const auto* k = dynamic_cast<const rl::Knowledge*>(learned.get());
    if (!k) return prior;
    prior.shared = k->shared;
    prior.hasShared = k->hasShared;
    prior.position = k->position;
    for (size_t i = 0; i < work.size(); ++i) {
        const auto* ki = dynamic_cast<const rl::Knowledge*>(last[i].get());
        if (!ki) continue;
        rl::PriorEntry e;
        e.scenario = work[i].first->name;
        e.features = rl::scenarioFeatures(*work[i].first);
        const rl::SpaceKeys keys = rl::keysOf(work[i].second);
        for (const auto& choices : keys.choice)
            for (const auto& key : choices) {
                if (const auto c = ki->choice.find(key); c != ki->choice.end()) e.choice[key] = c->second;
                if (const auto b = ki->bias.find(key); b != ki->bias.end()) e.bias[key] = b->second;
            }
        prior.entries.push_back(std::move(e));
    }
    return prior;
}

} // namespace sp
