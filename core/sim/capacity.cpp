// Capacity planning on the simulation (see capacity.h).

#include "core/sim/capacity.h"

#include "core/io/gpudb.h"
#include "core/search/space.h"
#include "core/searchers/registry.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace sp {

namespace {

/// Why a run missed the SLOs, in the terms the answer gives: the KV pool when it preempted or kept requests
/// waiting for blocks, else the SLO furthest over.
void explainMiss(const SimResult& r, const SloCheck& c, const Workload& w, std::string& binding,
                 std::string& why) {
    char buf[240];
    if (r.preemptions > 0 || r.admissionsBlockedByKv > 0) {
        binding = "memory";
        std::snprintf(
            buf, sizeof buf,
            "the KV pool: %lld preemptions, %lld steps with requests waiting for blocks (peak %.0f%% of "
            "%lld blocks a lane)",
            (long long)r.preemptions, (long long)r.admissionsBlockedByKv, 100.0 * r.kvPeakShare,
            (long long)r.kvBlocksPerLane);
        why = buf;
        return;
    }
    binding = c.binding;
    char at[24] = "mean";
    if (w.sloPercentile > 0) std::snprintf(at, sizeof at, "p%g", w.sloPercentile);
    if (c.binding == "ttft")
        std::snprintf(buf, sizeof buf, "%s TTFT %.0f ms over the SLO of %.0f ms", at, c.ttftMs, w.ttftMs);
    else if (c.binding == "tpot")
        std::snprintf(buf, sizeof buf, "%s TPOT %.1f ms over the SLO of %.1f ms", at, c.tpotMs, w.tpotMs);
    else
        std::snprintf(buf, sizeof buf, "the run did not complete");
    why = buf;
}

} // namespace

int64_t steadyRequests(const Metrics& m, const Workload& w, double rate, double latencies) {
    const double latency = (m.ttftMs + std::max(0.0, double(w.outputTokens) - 1.0) * m.tpotMs) * 1e-3;
    return int64_t(std::ceil(std::min(1e7, rate * latencies * std::max(0.0, latency))));
}

MaxRate maxRate(const CostModel& model, const Plan& plan, const RateSearchOptions& o,
                const SimProgressFn& progress, std::stop_token stop) {
    MaxRate out;
    const Scenario& s = model.scenario();
    const Workload& w = s.workload;
    if (auto why = model.checkPlan(plan)) {
        out.error = "the plan does not fit the scenario: " + *why;
        return out;
    }
    const Metrics m = model.evaluate(plan);
    // The analytical capacity bounds the search from above: requests/s at the steady state's throughput.
    const double analytic = m.throughput / std::max<double>(1.0, double(w.outputTokens));
    if (!(analytic > 0)) {
        out.error = "the plan serves no tokens: " + m.violation;
        return out;
    }
    auto run = [&](double rate) {
        SimOptions so = o.sim;
        so.rate = rate;
        so.trace.clear();
        so.requests = std::max(so.requests, steadyRequests(m, w, rate, o.steadyLatencies));
        ++out.simulations;
        return simulate(model, plan, so, progress, stop);
    };
    auto meets = [&](const std::shared_ptr<const SimResult>& r) { return r->ok && checkSlo(*r, w).met; };
    double lo = 0, hi = 1.2 * analytic;
    std::shared_ptr<const SimResult> atLo, atHi = run(hi);
    if (!atHi->ok) {
        out.error = atHi->error;
        return out;
    }
    // Above the steady state a queue grows without bound; should the SLOs still hold over a short run, go on.
    for (int i = 0; i < 6 && meets(atHi) && !stop.stop_requested(); ++i) {
        lo = hi, atLo = atHi;
        hi *= 2;
        atHi = run(hi);
    }
    while (hi - lo > o.tolerance * hi && !stop.stop_requested()) {
        const double mid = lo > 0 ? (lo + hi) / 2 : hi / 2;
        auto r = run(mid);
        if (meets(r))
            lo = mid, atLo = r;
        else
            hi = mid, atHi = r;
        if (lo == 0 && hi < analytic * 1e-4) break; // not even a trickle meets the SLOs
    }
    out.ok = true;
    out.stopped = stop.stop_requested();
    out.rate = lo;
    out.rateAbove = hi;
    out.at = atLo;
    out.above = atHi;
    explainMiss(*atHi, checkSlo(*atHi, w), w, out.binding, out.why);
    return out;
}

SimulatedRanking rankBySimulation(const CostModel& model, const std::vector<Plan>& plans,
                                  const RateSearchOptions& o, std::stop_token stop) {
    SimulatedRanking out;
    double bestTokens = 0;
    for (size_t i = 0; i < plans.size() && !stop.stop_requested(); ++i) {
        out.rates.push_back(maxRate(model, plans[i], o, {}, stop));
        const MaxRate& m = out.rates.back();
        const double tokens = m.ok && m.at && m.rate > 0 ? m.rate : 0.0;
        if (tokens > bestTokens) bestTokens = tokens, out.best = int(i);
    }
    return out;
}

Scenario scenarioOn(const Scenario& s, const std::string& gpuId, int nodes) {
    Scenario out = s;
    out.constraints.gpus = 0;
    if (gpuId.empty()) {
        out.cluster.nodes = nodes;
        if (nodes > 1 && out.cluster.interNode.gbPerS <= 0)
            if (const GpuSpec* g = findGpuByName(out.cluster.gpu.name))
                out.cluster.interNode = Link{"NIC", g->nicGbitPerGpu / 8.0, 6.0};
    } else if (const GpuSpec* g = findGpu(gpuId)) {
        out.cluster = clusterOf(*g, nodes);
    }
    out.name = s.name + " on " + out.cluster.name;
    return out;
}

PlanChoice choosePlan(const CostModel& model, const std::string& searcher, int64_t budget, uint64_t seed,
                      std::stop_token stop) {
    PlanChoice c;
    if (searcher.empty() || searcher == "megatron") {
        c.plan = model.megatronPlan();
        c.metrics = model.evaluate(c.plan);
    } else {
        auto srch = makeSearcher(searcher);
        if (!srch) {
            c.why = searcherError(searcher);
            return c;
        }
        const CostModelObjective objective(model);
        const SearchSpace space(model.scenario());
        Engine engine(objective);
        SearchOptions so;
        so.budget.evaluations = budget;
        so.seed = seed;
        so.threads = 1;
        const SearchResult r = srch->run(space, engine, so, nullptr, stop);
        if (r.refused || r.evaluations == 0) {
            c.why = r.message;
            return c;
        }
        c.plan = r.best.plan;
        c.metrics = r.best.metrics;
    }
    c.ok = c.metrics.feasible;
    if (!c.ok) c.why = c.metrics.violation.empty() ? "no feasible plan" : c.metrics.violation;
    return c;
}

std::vector<CapacityRow> fewestGpus(const Scenario& s, const CapacityOptions& o,
                                    const SimProgressFn& progress, std::stop_token stop) {
    std::vector<std::string> ids = o.gpus;
    if (ids.empty()) ids.push_back("");
    std::vector<CapacityRow> rows;
    for (const std::string& id : ids) {
        CapacityRow row;
        const GpuSpec* spec = id.empty() ? nullptr : findGpu(id);
        row.gpu = id.empty() ? s.cluster.gpu.name : id;
        if (!id.empty() && !spec) {
            row.why = "unknown GPU '" + id + "'; known: " + knownGpuIds();
            rows.push_back(std::move(row));
            continue;
        }
        // One node count's trial: the plan, its analytical check, the run at the rate.
        struct Trial {
            bool met = false;
            std::string why;
            CapacityRow r;
        };
        auto trial = [&](int nodes) {
            Trial t;
            const Scenario sc = scenarioOn(s, id, nodes);
            const CostModel model(sc);
            const PlanChoice pc = choosePlan(model, o.searcher, o.budget, o.sim.seed, stop);
            t.r.nodes = nodes;
            t.r.gpus = sc.cluster.gpus();
            t.r.plan = pc.plan;
            t.r.metrics = pc.metrics;
            if (!pc.ok) {
                t.why = "no plan fits " + std::to_string(t.r.gpus) + " GPUs: " + pc.why;
                return t;
            }
            SimOptions so = o.sim;
            so.rate = o.rate;
            so.trace.clear();
            so.requests =
                std::max(so.requests, steadyRequests(pc.metrics, sc.workload, o.rate, o.steadyLatencies));
            ++row.simulations;
            t.r.run = simulate(model, pc.plan, so, progress, stop);
            if (!t.r.run->ok) {
                t.why = t.r.run->error;
                return t;
            }
            t.r.slo = checkSlo(*t.r.run, sc.workload);
            t.met = t.r.slo.met;
            if (!t.met) {
                std::string binding, why;
                explainMiss(*t.r.run, t.r.slo, sc.workload, binding, why);
                t.why = std::to_string(t.r.gpus) + " GPUs: " + binding + " (" + why + ")";
            }
            t.r.cost = servingCost(sc.cluster, t.r.gpus,
                                   t.r.run->sustainedOutputTokensPerS > 0 ? t.r.run->sustainedOutputTokensPerS
                                                                          : t.r.run->outputTokensPerS);
            return t;
        };
        int lo = 0, hi = 0; // lo fails (0: none tried), hi meets
        Trial best, lastFail;
        for (int n = 1; n <= o.maxNodes && !stop.stop_requested(); n *= 2) {
            Trial t = trial(n);
            if (t.met) {
                hi = n, best = std::move(t);
                break;
            }
            lo = n, lastFail = std::move(t);
        }
        if (hi == 0) {
            row.why = lastFail.why.empty()
                          ? "stopped"
                          : "not met up to " + std::to_string(lo) + " nodes: " + lastFail.why;
            row.nodes = lastFail.r.nodes, row.gpus = lastFail.r.gpus, row.plan = lastFail.r.plan;
            row.metrics = lastFail.r.metrics, row.run = lastFail.r.run, row.slo = lastFail.r.slo;
            row.cost = lastFail.r.cost;
            rows.push_back(std::move(row));
            continue;
        }
        while (hi - lo > 1 && !stop.stop_requested()) {
            const int mid = lo + (hi - lo) / 2;
            Trial t = trial(mid);
            if (t.met)
                hi = mid, best = std::move(t);
            else
                lo = mid, lastFail = std::move(t);
        }
        const int sims = row.simulations;
        row = std::move(best.r);
        row.simulations = sims;
        row.gpu = id.empty() ? s.cluster.gpu.name : id;
        row.met = true;
        row.why = lo > 0 ? "at " + lastFail.why : "one node suffices";
        rows.push_back(std::move(row));
    }
    return rows;
}

std::vector<MaxRateRow> maxRatePerGpu(const Scenario& s, const MaxRateOptions& o,
                                      const SimProgressFn& progress, std::stop_token stop,
                                      const MaxRateRowFn& onRow) {
    std::vector<std::string> ids = o.gpus;
    if (ids.empty()) ids.push_back("");
    std::vector<MaxRateRow> rows;
    for (const std::string& id : ids) {
        MaxRateRow& row = rows.emplace_back();
        row.gpu = id.empty() ? s.cluster.gpu.name : id;
        const GpuSpec* spec = id.empty() ? nullptr : findGpu(id);
        if (!id.empty() && !spec) {
            row.error = "unknown GPU '" + id + "'; known: " + knownGpuIds();
        } else {
            // As many GPUs as the scenario's, in whole scale-up domains; the scenario itself on its own.
            const Scenario sc =
                spec ? scenarioOn(s, id,
                                  std::max(1, (s.gpus() + spec->scaleUpDomain - 1) / spec->scaleUpDomain))
                     : s;
            const CostModel model(sc);
            row.gpus = sc.gpus();
            if (o.plan) {
                row.plan = *o.plan;
                row.planName = o.planName;
                row.metrics = model.evaluate(row.plan);
            } else {
                const uint64_t seed = o.search.sim.seed;
                const PlanChoice pc = choosePlan(model, o.searcher, o.budget, seed, stop);
                row.plan = pc.plan;
                row.metrics = pc.metrics;
                row.planName =
                    o.searcher.empty() ? "megatron" : o.searcher + " (seed " + std::to_string(seed) + ")";
                if (!o.searcher.empty() && !pc.ok)
                    row.error = o.searcher + " found no feasible plan: " + pc.why;
            }
            if (stop.stop_requested()) {
                row.stopped = true;
            } else if (row.error.empty()) {
                row.rate = maxRate(model, row.plan, o.search, progress, stop);
                row.stopped = row.rate.stopped || stop.stop_requested();
                if (!row.rate.ok) row.error = row.rate.error;
                row.outputTokensPerS = row.rate.at ? row.rate.at->sustainedOutputTokensPerS : 0.0;
                row.cost = servingCost(sc.cluster, row.gpus, row.outputTokensPerS);
            }
        }
        if (onRow && !onRow(row)) break;
        if (row.stopped) break;
    }
    return rows;
}

} // namespace sp
