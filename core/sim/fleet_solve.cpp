// The fleet's integer program, solved exactly by branch and bound (see fleet.h for the program and why the
// cuts keep every optimum).

#include "core/sim/fleet.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace sp {

namespace {

/// Rates and costs are sums of a few products; a rate met to within this share is met.
constexpr double kTol = 1e-9;

bool met(double supplied, double needed) {
    return supplied >= needed * (1 - kTol) - 1e-12;
}

/// The most rate one node of type g can carry from model m's replicas of these counts (0 without any).
double nodeLoss(const FleetProblem& p, const std::vector<int>& counts, const std::vector<int>& ofModel,
                int g) {
    const int gpn = p.types[size_t(g)].gpusPerNode;
    double loss = 0;
    std::vector<double> best(size_t(gpn) + 1, 0.0); // the best rate in at most c GPUs of the node
    for (int j : ofModel) {
        const FleetCandidate& c = p.candidates[size_t(j)];
        if (c.type != g || counts[size_t(j)] <= 0) continue;
        if (c.gpus >= gpn) { // whole nodes: a node belongs to one replica
            loss = std::max(loss, c.rate);
            continue;
        }
        const int copies = std::min(counts[size_t(j)], gpn / c.gpus);
        for (int k = 0; k < copies; ++k) // a bounded knapsack, one copy at a time
            for (int cap = gpn; cap >= c.gpus; --cap)
                best[size_t(cap)] = std::max(best[size_t(cap)], best[size_t(cap - c.gpus)] + c.rate);
    }
    return std::max(loss, best[size_t(gpn)]);
}

std::vector<int> candidatesOf(const FleetProblem& p, int m) {
    std::vector<int> out;
    for (size_t j = 0; j < p.candidates.size(); ++j)
        if (p.candidates[j].model == m) out.push_back(int(j));
    return out;
}

double lossOf(const FleetProblem& p, const std::vector<int>& counts, const std::vector<int>& ofModel) {
    double loss = 0;
    for (int g = 0; g < int(p.types.size()); ++g) loss = std::max(loss, nodeLoss(p, counts, ofModel, g));
    return loss;
}

/// One model's replicas on one GPU type: their counts, the GPUs they use, what they cost, the rate they give
/// and the most of it one node carries.
struct Config {
    int64_t gpus = 0;
    double usdPerHour = 0, rate = 0, loss = 0;
    double smallest = 0;                     ///< the lowest rate of a replica in it
    std::vector<std::pair<int, int>> counts; ///< (candidate, replicas)
};

/// The search (see fleet.h). Under N-1 a model's worst node is fixed first, as a level L among the losses its
/// configurations can have: then the model must give rate_m + L from configurations that lose at most L, a
/// sum like the one without N-1, and on each type only the configurations no other beats on GPUs, cost and
/// rate (at a loss within L) are tried. Without N-1, L = 0.
class Solver {
public:
    Solver(const FleetProblem& p, std::stop_token stop) : m_p(p), m_stop(stop) {
        const int M = int(p.rates.size()), T = int(p.types.size());
        m_scratch.assign(p.candidates.size(), 0);
        m_used.assign(size_t(T), 0);
        for (int g = 0; g < T; ++g)
            m_cap.push_back(int64_t(p.types[size_t(g)].nodes) * p.types[size_t(g)].gpusPerNode);
        std::vector<std::vector<double>> eff(size_t(M), std::vector<double>(size_t(T), kInf));
        m_perGpu.assign(size_t(M), std::vector<double>(size_t(T), 0.0));
        m_lossCap.assign(size_t(M), 0.0);
        m_lossMin.assign(size_t(M), kInf);
        for (const FleetCandidate& c : p.candidates) {
            const size_t m = size_t(c.model), g = size_t(c.type);
            const int gpn = p.types[g].gpusPerNode;
            m_lossCap[m] = std::max(m_lossCap[m], c.gpus >= gpn ? c.rate : c.rate / c.gpus * gpn);
            m_lossMin[m] = std::min(m_lossMin[m], c.rate); // a node holds at least one replica
            m_perGpu[m][g] = std::max(m_perGpu[m][g], c.rate / c.gpus);
            eff[m][g] = std::min(eff[m][g], c.usdPerHour / c.rate);
        }
        if (!p.nMinus1) m_lossCap.assign(size_t(M), 0.0), m_lossMin.assign(size_t(M), 0.0);
        m_models.resize(size_t(M));
        for (int m = 0; m < M; ++m) {
            Demand& md = m_models[size_t(m)];
            for (int g = 0; g < T; ++g)
                if (eff[size_t(m)][size_t(g)] < kInf) md.types.push_back(g);
            // The model's types cheapest per request/s first, with the cheapest from each position on.
            std::stable_sort(md.types.begin(), md.types.end(), [&](int a, int b) {
                return eff[size_t(m)][size_t(a)] < eff[size_t(m)][size_t(b)];
            });
            md.effFrom.assign(md.types.size() + 1, kInf);
            for (size_t i = md.types.size(); i-- > 0;)
                md.effFrom[i] = std::min(md.effFrom[i + 1], eff[size_t(m)][size_t(md.types[i])]);
            for (int g : md.types) md.configs.push_back(configsOf(m, g));
            levelsOf(md);
            md.choice.assign(md.types.size(), 0);
        }
        // Each model's floor: its cheapest answer alone, on the whole inventory (exact for one model), else
        // its rate at its cheapest $ per request/s.
        m_floor.resize(size_t(M));
        for (int m = 0; m < M; ++m) {
            const double need = p.rates[size_t(m)];
            m_floor[size_t(m)] =
                need > 0 ? (need + m_lossMin[size_t(m)]) * m_models[size_t(m)].effFrom[0] : 0.0;
            if (M == 1 || need <= 0 || std::isinf(m_floor[size_t(m)])) continue;
            FleetProblem alone = p; // the model as model 0 of a program of its own
            alone.rates = {need};
            alone.candidates.clear();
            for (FleetCandidate c : p.candidates)
                if (c.model == m) c.model = 0, alone.candidates.push_back(c);
            alone.nodeLimit = p.nodeLimit - m_nodes;
            const FleetSolution s = Solver(alone, stop).run();
            m_nodes += s.nodes;
            if (s.exact) m_floor[size_t(m)] = s.feasible ? std::max(m_floor[size_t(m)], s.usdPerHour) : kInf;
        }
        // Models whose cheapest answer costs most go first: their choices decide the most.
        m_order.resize(size_t(M));
        std::iota(m_order.begin(), m_order.end(), 0);
        std::stable_sort(m_order.begin(), m_order.end(), [&](int a, int b) {
            const double fa = floorOf(a), fb = floorOf(b);
            if (std::isinf(fa) != std::isinf(fb)) return std::isinf(fa); // no candidate: fail at once
            return fa > fb;
        });
        m_rest.assign(size_t(M) + 1, 0.0);
        for (int k = M; k-- > 0;) m_rest[size_t(k)] = m_rest[size_t(k) + 1] + floorOf(m_order[size_t(k)]);
    }

    FleetSolution run() {
        m_best.counts.assign(m_p.candidates.size(), 0);
        const bool hopeless =
            std::any_of(m_floor.begin(), m_floor.end(), [](double f) { return std::isinf(f); });
        if (!m_cut && !hopeless) model(0);
        m_best.nodes = m_nodes;
        m_best.exact = !m_cut;
        return m_best;
    }

private:
    static constexpr double kInf = std::numeric_limits<double>::infinity();

    struct Level {
        double loss = 0;
        std::vector<std::vector<int>>
            configs; ///< [type position]: indices into Model::configs, fewest GPUs first
    };
    struct Demand {
        std::vector<int> types;      ///< cheapest per request/s first
        std::vector<double> effFrom; ///< [i]: the cheapest $/hour per request/s from position i on
        std::vector<std::vector<Config>> configs; ///< [i]: every useful configuration on types[i]
        std::vector<Level> levels;                ///< by loss, lowest first
        std::vector<int> choice;                  ///< [i]: the configuration chosen on types[i]
    };

    double floorOf(int m) const { return m_floor[size_t(m)]; }
    int64_t left(int g) const { return m_cap[size_t(g)] - m_used[size_t(g)]; }
    bool count() {
        if (++m_nodes > m_p.nodeLimit || ((m_nodes & 1023) == 0 && m_stop.stop_requested())) m_cut = true;
        return !m_cut;
    }

    /// Model m's configurations on type g: every count vector within the type's GPUs of which one replica
    /// fewer would not meet any rate the model could need. The empty one is first.
    std::vector<Config> configsOf(int m, int g) {
        std::vector<int> cs;
        for (size_t j = 0; j < m_p.candidates.size(); ++j)
            if (m_p.candidates[j].model == m && m_p.candidates[j].type == g) cs.push_back(int(j));
        std::vector<Config> all;
        const double enough = m_p.rates[size_t(m)] + m_lossCap[size_t(m)];
        Config cur;
        cur.smallest = kInf;
        auto walk = [&](auto&& self, size_t i) -> void {
            if (m_cut) return;
            if (i == cs.size()) {
                Config c = cur;
                for (const auto& [j, n] : c.counts) m_scratch[size_t(j)] = n;
                c.loss = m_p.nMinus1 ? nodeLoss(m_p, m_scratch, cs, g) : 0.0;
                for (const auto& [j, n] : c.counts) m_scratch[size_t(j)] = 0;
                all.push_back(std::move(c));
                count();
                return;
            }
            const FleetCandidate& c = m_p.candidates[size_t(cs[i])];
            for (int64_t n = 0; cur.gpus + n * c.gpus <= m_cap[size_t(g)]; ++n) {
                const double smallest = n > 0 ? std::min(cur.smallest, c.rate) : cur.smallest;
                if (n > 0 && cur.rate + double(n) * c.rate - smallest >= enough * (1 + kTol)) break;
                const Config saved = cur;
                cur.gpus += n * c.gpus;
                cur.usdPerHour += double(n) * c.usdPerHour;
                cur.rate += double(n) * c.rate;
                cur.smallest = smallest;
                if (n > 0) cur.counts.emplace_back(cs[i], int(n));
                self(self, i + 1);
                cur = saved;
            }
        };
        walk(walk, 0);
        std::stable_sort(all.begin(), all.end(), [](const Config& a, const Config& b) {
            return a.gpus != b.gpus ? a.gpus < b.gpus : a.usdPerHour < b.usdPerHour;
        });
        return all;
    }

    /// The loss levels of a model and, at each, the configurations worth trying on each type: a loss within
    /// the level, and no configuration with no more GPUs and no higher cost giving as much rate.
    void levelsOf(Demand& md) {
        std::vector<double> losses{0.0};
        if (m_p.nMinus1)
            for (const auto& cs : md.configs)
                for (const Config& c : cs)
                    if (c.loss > 0) losses.push_back(c.loss);
        std::sort(losses.begin(), losses.end());
        losses.erase(std::unique(losses.begin(), losses.end()), losses.end());
        for (double L : losses) {
            Level lv;
            lv.loss = L;
            for (const auto& cs : md.configs) {
                std::vector<int> kept;
                for (int c = 0; c < int(cs.size()); ++c) {
                    if (cs[size_t(c)].loss > L) continue;
                    bool beaten = false; // by one kept: no more GPUs (the order), no higher cost
                    for (int k : kept)
                        if (cs[size_t(k)].rate >= cs[size_t(c)].rate &&
                            cs[size_t(k)].usdPerHour <= cs[size_t(c)].usdPerHour) {
                            beaten = true;
                            break;
                        }
                    if (!beaten) kept.push_back(c);
                }
                lv.configs.push_back(std::move(kept));
            }
            md.levels.push_back(std::move(lv));
        }
    }

    /// The most rate the GPUs left could give model m from its types i.. on (no model beside it).
    double coverable(int m, size_t i) const {
        double r = 0;
        const auto& ts = m_models[size_t(m)].types;
        for (; i < ts.size(); ++i) r += double(left(ts[i])) * m_perGpu[size_t(m)][size_t(ts[i])];
        return r;
    }

    bool laterCoverable(size_t k) const {
        for (; k < m_order.size(); ++k) {
            const int m = m_order[k];
            if (!met(coverable(m, 0), m_p.rates[size_t(m)] + m_lossMin[size_t(m)])) return false;
        }
        return true;
    }

    bool bounded(double unmet, double eff, size_t k) const {
        return m_best.feasible && m_cost + unmet * eff + m_rest[k] >= m_best.usdPerHour * (1 - kTol) - 1e-12;
    }

    void record() {
        if (m_best.feasible && m_cost >= m_best.usdPerHour) return;
        m_best.feasible = true;
        m_best.usdPerHour = m_cost;
        std::fill(m_best.counts.begin(), m_best.counts.end(), 0);
        for (const Demand& md : m_models)
            for (size_t i = 0; i < md.choice.size(); ++i)
                for (const auto& [j, n] : md.configs[i][size_t(md.choice[i])].counts)
                    m_best.counts[size_t(j)] = n;
    }

    /// The model at position k (all before it chosen): each loss level, lowest first.
    void model(size_t k) {
        if (!count()) return;
        if (k == m_order.size()) {
            record();
            return;
        }
        const int m = m_order[k];
        Demand& md = m_models[size_t(m)];
        const double need = m_p.rates[size_t(m)];
        if (need <= 0) {
            std::fill(md.choice.begin(), md.choice.end(), 0);
            model(k + 1);
            return;
        }
        for (size_t l = 0; l < md.levels.size() && !m_cut; ++l) {
            const double target = need + md.levels[l].loss;
            if (bounded(target, md.effFrom[0], k + 1)) break; // higher levels cost more still
            if (m_p.nMinus1 && md.levels[l].loss <= 0) continue;
            types(k, l, 0, 0.0);
        }
    }

    /// Model k at loss level l, its types from position i on, with `rate` from the configurations before.
    void types(size_t k, size_t l, size_t i, double rate) {
        if (!count()) return;
        const int m = m_order[k];
        Demand& md = m_models[size_t(m)];
        const double target = m_p.rates[size_t(m)] + md.levels[l].loss;
        if (met(rate, target)) { // more replicas of a model that meets its rate are never cheaper
            if (!laterCoverable(k + 1)) return;
            std::fill(md.choice.begin() + long(i), md.choice.end(), 0);
            model(k + 1);
            return;
        }
        if (i == md.types.size() || bounded(target - rate, md.effFrom[i], k + 1)) return;
        if (!met(coverable(m, i), target - rate)) return;
        const int g = md.types[i];
        const std::vector<int>& cs = md.levels[l].configs[i];
        for (size_t c = cs.size(); c-- > 0 && !m_cut;) {
            const Config& cf = md.configs[i][size_t(cs[c])];
            if (cf.gpus > left(g)) continue;
            // One replica fewer would do: never part of a cheapest answer.
            if (cf.gpus > 0 && rate + cf.rate - cf.smallest >= target * (1 + kTol) + 1e-12) continue;
            md.choice[i] = cs[c];
            m_used[size_t(g)] += cf.gpus;
            m_cost += cf.usdPerHour;
            types(k, l, i + 1, rate + cf.rate);
            m_cost -= cf.usdPerHour;
            m_used[size_t(g)] -= cf.gpus;
        }
        md.choice[i] = 0;
    }

    const FleetProblem& m_p;
    std::stop_token m_stop;
    std::vector<Demand> m_models;
    std::vector<int> m_order;                  ///< models in the order searched
    std::vector<std::vector<double>> m_perGpu; ///< [model][type]: the best rate per GPU
    std::vector<double> m_lossCap;             ///< the most one node could carry of each model (N-1)
    std::vector<double> m_lossMin;             ///< the least: one replica (N-1; else 0)
    std::vector<double> m_floor;               ///< each model's least cost, alone
    std::vector<double> m_rest;                ///< [k]: the cost floor of the models from position k on
    std::vector<int> m_scratch;
    std::vector<int64_t> m_used, m_cap;
    double m_cost = 0;
    int64_t m_nodes = 0;
    bool m_cut = false;
    FleetSolution m_best;
};

} // namespace

double worstNodeLoss(const FleetProblem& p, const std::vector<int>& counts, int model) {
    return lossOf(p, counts, candidatesOf(p, model));
}

bool fleetFeasible(const FleetProblem& p, const std::vector<int>& counts) {
    if (counts.size() != p.candidates.size()) return false;
    std::vector<int64_t> used(p.types.size(), 0);
    std::vector<double> supplied(p.rates.size(), 0.0);
    for (size_t j = 0; j < counts.size(); ++j) {
        if (counts[j] < 0) return false;
        const FleetCandidate& c = p.candidates[j];
        used[size_t(c.type)] += int64_t(counts[j]) * c.gpus;
        supplied[size_t(c.model)] += counts[j] * c.rate;
    }
    for (size_t g = 0; g < p.types.size(); ++g)
        if (used[g] > int64_t(p.types[g].nodes) * p.types[g].gpusPerNode) return false;
    for (size_t m = 0; m < p.rates.size(); ++m) {
        if (!met(supplied[m], p.rates[m])) return false;
        if (p.nMinus1 && p.rates[m] > 0 && !met(supplied[m] - worstNodeLoss(p, counts, int(m)), p.rates[m]))
            return false;
    }
    return true;
}

FleetSolution solveFleet(const FleetProblem& p, std::stop_token stop) {
    for (const FleetCandidate& c : p.candidates)
        if (!(c.rate > 0) || c.gpus <= 0 || c.usdPerHour < 0 || c.type < 0 || c.type >= int(p.types.size()) ||
            c.model < 0 || c.model >= int(p.rates.size()))
            return {}; // not a program this solver takes (planFleet never builds one)
    return Solver(p, stop).run();
}

} // namespace sp
