// A fleet's candidates, their rates, the least-cost answer and what binds it (see fleet.h).

#include "core/sim/fleet.h"

#include "core/common/text.h"
#include "core/io/gpudb.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <exception>
#include <thread>

namespace sp {

namespace {

std::string degreesOf(const Plan& p) {
    const Degrees& d = p.degrees;
    return "pp" + std::to_string(d.pp) + " x dp" + std::to_string(d.dp) + " x tp" + std::to_string(d.tp);
}

/// "8 GPUs (1 node)", "4 GPUs (1/2 of a node)", "16 GPUs (2 nodes)".
std::string sizeText(const FleetReplica& r, int gpusPerNode) {
    std::string s = std::to_string(r.gpus) + (r.gpus == 1 ? " GPU" : " GPUs");
    if (r.nodes > 0) return s + " (" + std::to_string(r.nodes) + (r.nodes == 1 ? " node)" : " nodes)");
    return s + " (1/" + std::to_string(gpusPerNode / r.gpus) + " of a node)";
}

/// The analytical rate's limit: the SLO the plan's batch came nearest, else the batch itself (memory or the
/// engine's cap).
void analyticalBinding(FleetReplica& r, const Workload& w) {
    const Metrics& m = r.metrics;
    const double tpot = w.tpotMs > 0 ? m.tpotMs / w.tpotMs : 0, ttft = w.ttftMs > 0 ? m.ttftMs / w.ttftMs : 0;
    const std::string at = " at batch " + std::to_string(m.batch);
    if (tpot >= 0.9 && tpot >= ttft) {
        r.binding = "tpot";
        r.bindingWhy = "mean TPOT " + formatDouble("%.1f", m.tpotMs) + " ms of the SLO's " +
                       formatDouble("%g", w.tpotMs) + " ms" + at;
    } else if (ttft >= 0.9) {
        r.binding = "ttft";
        r.bindingWhy = "mean TTFT " + formatDouble("%.0f", m.ttftMs) + " ms of the SLO's " +
                       formatDouble("%g", w.ttftMs) + " ms" + at;
    } else {
        r.binding = "batch";
        r.bindingWhy = "the batch the memory or the engine's cap allows (" + std::to_string(m.batch) +
                       "; KV pool " + formatDouble("%.1f", m.kvPoolGiB) + " GiB a GPU), below the SLOs";
    }
}

/// The replica sizes tried on a type, in GPUs, smallest first: a node's ..., quarter, half (while the GPUs
/// halve evenly), then 1, 2, 4, ... whole nodes.
std::vector<int> replicaSizes(const FleetGpuType& t, const FleetOptions& o) {
    std::vector<int> out;
    for (int i = 30; i >= 1; --i)
        if (t.gpusPerNode % (1 << i) == 0) out.push_back(t.gpusPerNode >> i);
    for (int k = 1; k <= std::min(t.nodes, std::max(1, o.maxReplicaNodes)); k *= 2)
        out.push_back(k * t.gpusPerNode);
    return out;
}

/// Plans and rates one candidate (fills r; r.ok when it is one).
void rateReplica(FleetReplica& r, const Fleet& f, const FleetOptions& o, std::stop_token stop) {
    const FleetModel& fm = f.models[size_t(r.model)];
    const FleetGpuType& t = f.inventory[size_t(r.type)];
    const Scenario sc = fleetScenario(fm, t, r.nodes, r.gpus);
    const std::string size = sizeText(r, t.gpusPerNode);
    if (sc.cluster.gpu.tflops[int(fm.model.activations)] <= 0) {
        r.why = t.id + " has no " + std::string(nameOf(fm.model.activations)) + " TFLOP/s";
        return;
    }
    const CostModel model(sc);
    const uint64_t seed = o.search.sim.seed;
    const PlanChoice pc =
        choosePlan(model, o.searcher.empty() ? "megatron" : o.searcher, o.budget, seed, stop);
    r.plan = pc.plan;
    r.metrics = pc.metrics;
    r.planName = o.searcher.empty() ? "megatron" : o.searcher + " (seed " + std::to_string(seed) + ")";
    r.usdPerHour = r.gpus * t.pricePerGpuHour;
    if (!pc.ok) {
        r.why = "no plan on " + size + ": " + pc.why;
        return;
    }
    // A dense model's data parallelism is plain copies: dp replicas of the pp x tp one, which the program
    // counts as they are when that size is a candidate.
    const int replicaGpus = pc.plan.degrees.pp * pc.plan.degrees.tp;
    const auto sizes = replicaSizes(t, o);
    if (!fm.model.moe.present() && pc.plan.degrees.dp > 1 &&
        std::find(sizes.begin(), sizes.end(), replicaGpus) != sizes.end()) {
        r.copies = true;
        r.why = std::to_string(pc.plan.degrees.dp) + " copies of a " + std::to_string(replicaGpus) +
                "-GPU replica, a candidate of its own";
        return;
    }
    const double outTokens = std::max(1.0, double(fm.workload.outputTokens));
    if (o.analytical) {
        r.rate = pc.metrics.throughput / outTokens;
        r.outputTokensPerS = pc.metrics.throughput;
        analyticalBinding(r, fm.workload);
    } else {
        const MaxRate mr = maxRate(model, pc.plan, o.search, {}, stop);
        r.simulations = mr.simulations;
        if (!mr.ok) {
            r.why = mr.error;
            return;
        }
        r.rate = mr.rate;
        r.binding = mr.binding;
        r.bindingWhy = mr.why;
        r.outputTokensPerS = mr.at ? mr.at->sustainedOutputTokensPerS : 0.0;
        if (stop.stop_requested()) return;
    }
    if (!(r.rate > 0)) {
        r.why = "not one request at a time meets the SLOs on " + size + ": " + r.bindingWhy;
        return;
    }
    r.ok = true;
}

/// The program with only the models of `keep` (the others asked for nothing, their candidates gone).
FleetProblem restrict(const FleetProblem& p, const std::vector<bool>& keep) {
    FleetProblem q = p;
    q.candidates.clear();
    for (size_t m = 0; m < q.rates.size(); ++m)
        if (!keep[m]) q.rates[m] = 0;
    for (const FleetCandidate& c : p.candidates)
        if (keep[size_t(c.model)]) q.candidates.push_back(c);
    return q;
}

/// The most rate model m could have from the whole inventory, alone: per type, the best filling of its GPUs
/// with the model's replicas (an unbounded knapsack; sizes on one type divide one another).
double mostAlone(const FleetProblem& p, int m) {
    double total = 0;
    for (size_t g = 0; g < p.types.size(); ++g) {
        std::vector<const FleetCandidate*> cs;
        int unit = 0;
        for (const FleetCandidate& c : p.candidates)
            if (c.model == m && c.type == int(g))
                cs.push_back(&c), unit = unit ? std::min(unit, c.gpus) : c.gpus;
        if (cs.empty()) continue;
        const int64_t slots = int64_t(p.types[g].nodes) * p.types[g].gpusPerNode / unit;
        if (slots > 4'000'000) { // too many for the table: the best rate per GPU bounds it from above
            double perGpu = 0;
            for (const auto* c : cs) perGpu = std::max(perGpu, c->rate / c->gpus);
            total += perGpu * double(slots * unit);
            continue;
        }
        std::vector<double> best(size_t(slots) + 1, 0.0);
        for (int64_t s = 1; s <= slots; ++s)
            for (const auto* c : cs)
                if (c->gpus / unit <= s)
                    best[size_t(s)] = std::max(best[size_t(s)], best[size_t(s - c->gpus / unit)] + c->rate);
        total += best[size_t(slots)];
    }
    return total;
}

std::string join(const std::vector<std::string>& parts, const char* sep) {
    std::string s;
    for (const auto& p : parts) s += (s.empty() ? "" : sep) + p;
    return s;
}

/// Which model cannot be served, and why: one without a candidate, one the whole inventory cannot carry
/// alone, or the first (in the file's order) that does not fit beside the ones before it.
std::string explainInfeasible(const Fleet& f, const FleetAnswer& a, std::stop_token stop) {
    const FleetProblem& p = a.problem;
    const int M = int(f.models.size());
    for (int m = 0; m < M; ++m) {
        bool any = false;
        std::vector<std::string> whys;
        for (const FleetReplica& r : a.replicas) {
            if (r.model != m || r.copies) continue;
            any = any || r.ok;
            // The largest size tried on each type says the most (a smaller one fails for the same reason or
            // for memory).
            const std::string& id = f.inventory[size_t(r.type)].id;
            if (!whys.empty() && whys.back().rfind(id + ":", 0) == 0) whys.pop_back();
            whys.push_back(id + ": " + r.why);
        }
        if (!any)
            return "model '" + f.models[size_t(m)].name +
                   "' cannot be served: no replica of it fits and meets its SLOs on any GPU of the "
                   "inventory (" +
                   join(whys, "; ") + ")";
    }
    const std::string held = p.nMinus1 ? ", keeping one node's worth in reserve (N-1)" : "";
    for (int m = 0; m < M; ++m) {
        std::vector<bool> keep(size_t(M), false);
        keep[size_t(m)] = true;
        if (solveFleet(restrict(p, keep), stop).feasible) continue;
        return "model '" + f.models[size_t(m)].name + "' cannot be served: it asks for " +
               formatDouble("%.4g", p.rates[size_t(m)]) +
               " requests/s, and the whole inventory gives it at most " +
               formatDouble("%.4g", mostAlone(p, m)) + held;
    }
    std::vector<bool> keep(size_t(M), false);
    for (int m = 0; m < M; ++m) {
        keep[size_t(m)] = true;
        if (solveFleet(restrict(p, keep), stop).feasible) continue;
        std::vector<std::string> before;
        for (int k = 0; k < m; ++k) before.push_back("'" + f.models[size_t(k)].name + "'");
        return "model '" + f.models[size_t(m)].name + "' cannot be served beside " + join(before, ", ") +
               ": each alone fits the inventory, together they need more GPUs than it has" + held;
    }
    return "no assignment meets every rate";
}

/// What binds the answer: each GPU type all in use or whose one more node would lower the cost; each
/// model's replica rate limit; with N-1, each model's worst node.
std::vector<FleetBind> bindsOf(const Fleet& f, const FleetAnswer& a, std::stop_token stop) {
    std::vector<FleetBind> out;
    const FleetProblem& p = a.problem;
    const auto& x = a.solution.counts;
    for (size_t g = 0; g < p.types.size(); ++g) {
        int64_t used = 0;
        for (size_t j = 0; j < x.size(); ++j)
            if (p.candidates[j].type == int(g)) used += int64_t(x[j]) * p.candidates[j].gpus;
        const int gpn = p.types[g].gpusPerNode;
        const int64_t nodesUsed = (used + gpn - 1) / gpn;
        FleetProblem more = p;
        more.types[g].nodes += 1;
        const FleetSolution s = solveFleet(more, stop);
        const double saving = s.feasible ? a.solution.usdPerHour - s.usdPerHour : 0.0;
        const int64_t all = int64_t(p.types[g].nodes) * gpn;
        const bool binds = saving > 1e-6 * std::max(1.0, a.solution.usdPerHour);
        if (!binds && used < all) continue;
        FleetBind b;
        b.what = "inventory " + f.inventory[g].id;
        b.why = used == all ? "all " + std::to_string(all) + " GPUs in use"
                            : std::to_string(used) + " of " + std::to_string(all) + " GPUs in use (" +
                                  std::to_string(nodesUsed) + " of " + std::to_string(p.types[g].nodes) +
                                  " nodes), too few left for a cheaper assignment";
        if (binds) {
            b.savingUsdPerHour = saving;
            b.why += "; one more node would save $" + formatDouble("%.2f", saving) + "/hour";
        } else {
            b.why += "; one more node would not lower the cost";
        }
        out.push_back(std::move(b));
    }
    for (size_t m = 0; m < p.rates.size(); ++m) {
        double supplied = 0;
        int mainJ = -1;
        for (size_t j = 0; j < x.size(); ++j) {
            if (p.candidates[j].model != int(m) || x[j] == 0) continue;
            supplied += x[j] * p.candidates[j].rate;
            if (mainJ < 0 ||
                x[j] * p.candidates[j].gpus > x[size_t(mainJ)] * p.candidates[size_t(mainJ)].gpus)
                mainJ = int(j);
        }
        if (mainJ < 0) continue;
        const FleetReplica& r = a.replicas[size_t(a.replicaOf[size_t(mainJ)])];
        const FleetGpuType& t = f.inventory[size_t(r.type)];
        FleetBind b;
        b.what = "model " + f.models[m].name;
        b.why = "capacity " + formatDouble("%.4g", supplied) + " requests/s for " +
                formatDouble("%.4g", p.rates[m]) + "; a replica (" + degreesOf(r.plan) + " on " +
                sizeText(r, t.gpusPerNode) + " " + t.id + ") stops at " + formatDouble("%.3g", r.rate) +
                " requests/s: " + (r.binding.empty() ? "" : r.binding + ", ") + r.bindingWhy;
        out.push_back(std::move(b));
        if (p.nMinus1) {
            const double loss = worstNodeLoss(p, x, int(m));
            out.push_back({"n-1 " + f.models[m].name,
                           "the worst node carries " + formatDouble("%.4g", loss) +
                               " requests/s of it; the rest, " + formatDouble("%.4g", supplied - loss) +
                               ", meets " + formatDouble("%.4g", p.rates[m]),
                           0.0});
        }
    }
    return out;
}

} // namespace

Scenario fleetScenario(const FleetModel& m, const FleetGpuType& t, int nodes, int gpus) {
    Scenario base;
    base.name = m.name;
    base.model = m.model;
    base.workload = m.workload;
    base.constraints = m.constraints;
    const int n = std::max(1, nodes);
    Scenario s = scenarioOn(base, t.id, n);
    s.cluster.gpusPerNode = t.gpusPerNode;
    s.cluster.name = std::to_string(n) + "x" + std::to_string(t.gpusPerNode) + " " + s.cluster.gpu.name;
    s.cluster.pricePerGpuHour = t.pricePerGpuHour;
    s.cluster.priceSource = t.priceSource;
    if (nodes == 0) s.constraints.gpus = gpus;
    s.name =
        m.name + " on " + (nodes == 0 ? std::to_string(gpus) + " GPUs of " : std::string()) + s.cluster.name;
    return s;
}

int64_t fleetGpus(const FleetAnswer& a, int type, int model) {
    int64_t n = 0;
    for (size_t j = 0; j < a.solution.counts.size(); ++j) {
        const FleetCandidate& c = a.problem.candidates[j];
        if ((type < 0 || c.type == type) && (model < 0 || c.model == model))
            n += int64_t(a.solution.counts[j]) * c.gpus;
    }
    return n;
}

double fleetUsdPerHour(const FleetAnswer& a, int model) {
    double usd = 0;
    for (size_t j = 0; j < a.solution.counts.size(); ++j)
        if (model < 0 || a.problem.candidates[j].model == model)
            usd += a.solution.counts[j] * a.problem.candidates[j].usdPerHour;
    return usd;
}

std::string fleetSizeText(const FleetReplica& r, int gpusPerNode) {
    if (r.nodes > 0)
        return std::to_string(r.gpus) + " (" + std::to_string(r.nodes) +
               (r.nodes == 1 ? " node)" : " nodes)");
    return std::to_string(r.gpus) + " (1/" + std::to_string(gpusPerNode / std::max(1, r.gpus)) + " node)";
}

FleetAnswer planFleet(const Fleet& f, const FleetOptions& o, std::stop_token stop) {
    FleetAnswer a;
    a.nMinus1 = f.nMinus1 || o.nMinus1;
    for (const FleetGpuType& t : f.inventory)
        if (!findGpu(t.id) || t.gpusPerNode <= 0 || t.nodes <= 0) {
            a.error = "inventory: '" + t.id + "' is not a GPU database id with nodes and GPUs per node";
            return a;
        }
    // Candidates: each model on each type, a node's half, quarter, ... and 1, 2, 4, ... whole nodes.
    for (int m = 0; m < int(f.models.size()); ++m)
        for (int g = 0; g < int(f.inventory.size()); ++g) {
            const FleetGpuType& t = f.inventory[size_t(g)];
            for (int gpus : replicaSizes(t, o)) {
                FleetReplica r;
                r.model = m, r.type = g, r.gpus = gpus;
                r.nodes = gpus < t.gpusPerNode ? 0 : gpus / t.gpusPerNode;
                a.replicas.push_back(std::move(r));
            }
        }
    // Rate them on every core, the largest (slowest to simulate) first.
    std::vector<size_t> order(a.replicas.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t x, size_t y) { return a.replicas[x].gpus > a.replicas[y].gpus; });
    std::atomic<size_t> next{0};
    auto work = [&] {
        for (size_t i; (i = next++) < order.size() && !stop.stop_requested();) {
            FleetReplica& r = a.replicas[order[i]];
            try {
                rateReplica(r, f, o, stop);
            } catch (const std::exception& e) {
                r.ok = false;
                r.why = e.what();
            }
        }
    };
    const int threads = std::max(
        1, std::min(int(order.size()), o.threads > 0 ? o.threads : int(std::thread::hardware_concurrency())));
    {
        std::vector<std::jthread> pool;
        for (int i = 1; i < threads; ++i) pool.emplace_back(work);
        work();
    }
    if (stop.stop_requested()) {
        a.stopped = true;
        a.error = "stopped before every candidate was rated";
        return a;
    }
    // The program over the rated candidates.
    for (const FleetModel& m : f.models) a.problem.rates.push_back(m.rate);
    for (const FleetGpuType& t : f.inventory) a.problem.types.push_back({t.nodes, t.gpusPerNode});
    a.problem.nMinus1 = a.nMinus1;
    for (size_t i = 0; i < a.replicas.size(); ++i) {
        const FleetReplica& r = a.replicas[i];
        if (!r.ok) continue;
        a.problem.candidates.push_back({r.model, r.type, r.gpus, r.rate, r.usdPerHour});
        a.replicaOf.push_back(int(i));
    }
    a.solution = solveFleet(a.problem, stop);
    if (stop.stop_requested()) {
        a.stopped = true;
        a.error = "stopped before the assignment was solved";
        return a;
    }
    if (!a.solution.feasible) {
        a.error = a.solution.exact ? explainInfeasible(f, a, stop)
                                   : "no assignment found within " + std::to_string(a.problem.nodeLimit) +
                                         " branch-and-bound nodes";
        return a;
    }
    a.ok = true;
    a.binds = bindsOf(f, a, stop);
    return a;
}

} // namespace sp
