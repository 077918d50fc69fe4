// The disaggregated search (disagg_search.h): one search per pool size, warm-started along the pool sizes,
// then every split evaluated with its pools' best plans.

#include "core/searchers/disagg_search.h"

#include "core/search/space.h"
#include "core/searchers/registry.h"

#include <algorithm>
#include <chrono>
#include <optional>

namespace sp {

namespace {

using Clock = std::chrono::steady_clock;

/// The prefill pool as a search objective: prompt tokens/s under the TTFT SLO less the KV transfer.
class PrefillObjective final : public Objective {
public:
    PrefillObjective(const DisaggModel& m, int nodes) : m_model(m), m_nodes(nodes) {}
    Metrics evaluate(const Plan& p) const override { return m_model.evaluatePrefill(p, m_nodes); }
    std::optional<Plan> megatronPlan() const override { return m_model.prefillModel(m_nodes).megatronPlan(); }

private:
    const DisaggModel& m_model;
    int m_nodes;
};

/// Better by the search's own order: feasible first, then the lower cost per million tokens where both are
/// priced (pools on two clusters: their GPUs differ) or else the throughput per GPU, then the smaller
/// shortfall.
bool better(const DisaggMetrics& a, const DisaggMetrics& b, bool byCost) {
    if (a.feasible != b.feasible) return a.feasible;
    if (a.feasible && byCost && a.usdPerMTokens > 0 && b.usdPerMTokens > 0)
        return a.usdPerMTokens < b.usdPerMTokens;
    if (a.feasible) return a.throughputPerGpu > b.throughputPerGpu;
    if (a.valid != b.valid) return a.valid;
    return a.shortfall < b.shortfall;
}

} // namespace

std::optional<Plan> rescalePlan(const Plan& p, int fromGpus, int toGpus) {
    Plan q = p;
    Degrees& d = q.degrees;
    const int unit = d.pp * d.tp;
    if (unit < 1 || toGpus % unit != 0 || int64_t(d.pp) * d.dp * d.tp != fromGpus) return std::nullopt;
    const int oldStage = d.dp * d.tp;
    d.dp = toGpus / unit;
    const int stage = d.dp * d.tp;
    if (int64_t(d.ep) * d.etp * d.edp == oldStage) {
        if (stage % (d.etp * d.edp) == 0)
            d.ep = stage / (d.etp * d.edp);
        else if (stage % (d.ep * d.etp) == 0)
            d.edp = stage / (d.ep * d.etp);
        else
            return std::nullopt;
    }
    q.batch = 0;
    return q;
}

DisaggSearchResult searchDisaggregated(const Scenario& s, const DisaggSearchOptions& o,
                                       std::stop_token stop) {
    DisaggSearchResult res;
    const auto start = Clock::now();
    const DisaggModel dm(s, o.model);
    if (auto why = dm.checkScenario()) {
        res.refused = true;
        res.message = *why;
        return res;
    }
    if (std::string e = searcherError(o.searcher); !e.empty()) {
        res.refused = true;
        res.message = std::move(e);
        return res;
    }
    // One cluster: its N nodes split k + (N - k). Two (decode_cluster): 1..Np prefill nodes of the first,
    // 1..Nd decode nodes of the second, in any pairing.
    const bool two = dm.twoClusters();
    const int N = s.cluster.nodes;
    const int Np = two ? N : N - 1, Nd = two ? dm.poolCluster(Phase::Decode).nodes : N - 1;
    const int perP = s.cluster.gpusPerNode, perD = dm.poolCluster(Phase::Decode).gpusPerNode;
    const int searches = Np + Nd;
    const auto deadline =
        o.seconds > 0
            ? start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(o.seconds))
            : Clock::time_point::max();
    const auto outOfTime = [&] { return stop.stop_requested() || Clock::now() >= deadline; };

    // One pool size's search; `previous` is the elite of the pool one node smaller.
    // A learning searcher also carries its policy from each pool to the next larger (SearchOptions::learned).
    const auto searchPool = [&](const Objective& objective, const SearchSpace& space, int gpus,
                                const SearchResult* smaller, uint64_t seed) {
        static const std::vector<Candidate> none;
        const std::vector<Candidate>& previous = smaller ? smaller->elite : none;
        SearchOptions so;
        so.budget.evaluations = o.budget;
        if (deadline != Clock::time_point::max()) {
            const double left = std::chrono::duration<double>(deadline - Clock::now()).count();
            so.budget.seconds = std::max(1e-3, left / double(std::max(1, searches - res.searches)));
        }
        so.seed = seed;
        so.threads = o.threads;
        so.warmStart = WarmStart::Megatron;
        if (o.warm && smaller) so.learned = smaller->learned;
        if (o.warm)
            for (const Candidate& c : previous) {
                if (int(so.starts.size()) >= o.warmStarts) break;
                const Degrees& d = c.plan.degrees;
                if (auto q = rescalePlan(c.plan, d.pp * d.dp * d.tp, gpus))
                    if (auto a = space.fromPlan(*q)) so.starts.push_back(std::move(*a));
            }
        Engine engine(objective);
        SearchResult r = makeSearcher(o.searcher)->run(space, engine, so, nullptr, stop);
        res.evaluations += r.evaluations;
        ++res.searches;
        if (r.stopped) res.stopped = true;
        return r;
    };

    std::vector<SearchResult> pre(size_t(Np) + 1), dec(size_t(Nd) + 1); // by pool nodes 1..Np, 1..Nd
    for (int k = 1; k <= std::max(Np, Nd) && !outOfTime(); ++k) {
        if (k <= Np) {
            const PrefillObjective po(dm, k);
            const SearchSpace ps(dm.prefillModel(k).scenario());
            pre[size_t(k)] =
                searchPool(po, ps, k * perP, k > 1 ? &pre[size_t(k - 1)] : nullptr, o.seed + uint64_t(k));
        }
        if (k <= Nd && !outOfTime()) {
            const CostModelObjective dob(dm.decodeModel(k));
            const SearchSpace ds(dm.decodeModel(k).scenario());
            dec[size_t(k)] = searchPool(dob, ds, k * perD, k > 1 ? &dec[size_t(k - 1)] : nullptr,
                                        o.seed + uint64_t(N + k));
        }
    }
    if (outOfTime()) res.stopped = true;
    res.prefillPlans.resize(size_t(Np) + 1), res.decodePlans.resize(size_t(Nd) + 1);
    for (int k = 1; k <= Np; ++k)
        if (pre[size_t(k)].evaluations > 0) res.prefillPlans[size_t(k)] = pre[size_t(k)].best.plan;
    for (int k = 1; k <= Nd; ++k)
        if (dec[size_t(k)].evaluations > 0) res.decodePlans[size_t(k)] = dec[size_t(k)].best.plan;

    // A split with its pools' best plans.
    const auto evaluateSplit = [&](int kp, int kd) -> std::optional<DisaggSplit> {
        const auto &pp = res.prefillPlans[size_t(kp)], &dp = res.decodePlans[size_t(kd)];
        if (!pp || !dp) return std::nullopt;
        return withFixedBatches(dm, {{kp, *pp}, {kd, *dp}});
    };
    for (int k = 1; k <= Np; ++k) {
        // Two clusters: for each prefill pool, the decode pool that serves it best.
        std::optional<DisaggSplit> sp;
        for (int kd = two ? 1 : N - k; kd <= (two ? Nd : N - k); ++kd)
            if (auto c = evaluateSplit(k, kd); c && (!sp || better(c->metrics, sp->metrics, two)))
                sp = std::move(c);
        if (!sp) continue;
        res.splits.push_back(*sp);
        if (!res.found || better(sp->metrics, res.best.metrics, two)) res.best = *sp, res.found = true;
    }
    res.seconds = std::chrono::duration<double>(Clock::now() - start).count();
    if (!res.found)
        res.message = res.stopped ? "stopped before a split was searched" : "no split could be evaluated";
    else if (!res.best.metrics.feasible)
        res.message = "no feasible split: the closest misses by " + res.best.metrics.violation;
    return res;
}

DisaggSplit withFixedBatches(const DisaggModel& model, DisaggPlan plan) {
    DisaggSplit sp{std::move(plan), {}};
    sp.metrics = model.evaluate(sp.plan);
    if (sp.metrics.valid) {
        sp.plan.prefill.plan.batch = sp.metrics.prefill.batch;
        sp.plan.decode.plan.batch = sp.metrics.decode.batch;
        sp.metrics = model.evaluate(sp.plan);
    }
    return sp;
}

std::vector<DisaggFrontierPoint> disaggregatedFrontier(const Scenario& s, const std::vector<double>& targets,
                                                       const DisaggSearchOptions& o, std::stop_token stop,
                                                       DisaggFrontierTotals* totals) {
    std::vector<DisaggFrontierPoint> all;
    DisaggFrontierTotals sum;
    for (size_t i = 0; i < targets.size() && !stop.stop_requested(); ++i) {
        Scenario at = s;
        at.workload.tpotMs = targets[i];
        DisaggSearchOptions oi = o;
        oi.seed = o.seed + uint64_t(i);
        const DisaggSearchResult r = searchDisaggregated(at, oi, stop);
        sum.searches += r.searches, sum.evaluations += r.evaluations, sum.seconds += r.seconds;
        if (!r.found || !r.best.metrics.feasible || !(r.best.metrics.tpotMs > 0)) continue;
        all.push_back({targets[i], r.best.metrics.throughputPerGpu, 1000.0 / r.best.metrics.tpotMs,
                       r.best.metrics.usdPerMTokens, r.best});
    }
    // Pools on two GPU types: tokens per dollar, not per GPU (their GPUs differ).
    const bool byCost =
        s.decodeCluster &&
        std::all_of(all.begin(), all.end(), [](const DisaggFrontierPoint& p) { return p.usdPerMTokens > 0; });
    const auto value = [&](const DisaggFrontierPoint& p) {
        return byCost ? 1.0 / p.usdPerMTokens : p.throughputPerGpu;
    };
    const auto dominated = [&](const DisaggFrontierPoint& p) {
        for (const auto& q : all)
            if (value(q) >= value(p) && q.userTokensPerS >= p.userTokensPerS &&
                (value(q) > value(p) || q.userTokensPerS > p.userTokensPerS))
                return true;
        return false;
    };
    if (totals) *totals = sum;
    std::vector<DisaggFrontierPoint> out;
    for (const auto& p : all) {
        const bool twin = std::any_of(out.begin(), out.end(), [&](const DisaggFrontierPoint& q) {
            return q.throughputPerGpu == p.throughputPerGpu && q.userTokensPerS == p.userTokensPerS;
        });
        if (!dominated(p) && !twin) out.push_back(p);
    }
    std::sort(out.begin(), out.end(),
              [](const auto& a, const auto& b) { return a.userTokensPerS < b.userTokensPerS; });
    return out;
}

} // namespace sp
