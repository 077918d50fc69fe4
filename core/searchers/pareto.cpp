// The throughput-interactivity Pareto front: a sweep of TPOT targets, each searched warm from its neighbour.
#include "core/searchers/pareto.h"

#include "core/common/text.h"
#include "core/cost/economics.h"
#include "core/cost/validity.h"
#include "core/search/space.h"
#include "core/searchers/registry.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <string_view>
#include <utility>

namespace sp {

namespace {

using Clock = std::chrono::steady_clock;

/// Elite plans of each search that the exchange re-evaluates under every target.
constexpr size_t kExchange = 8;

double processCpuSeconds() {
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
}

/// The lowest TPOT as an objective: each plan at batch 1 (the fastest step it has), scored by tokens/s per
/// user (1000 / TPOT) when it fits and meets the TTFT SLO. The model's workload has no TPOT limit.
class MinTpotObjective final : public Objective {
public:
    explicit MinTpotObjective(const CostModel& model) : m_model(model) {}
    Metrics evaluate(const Plan& plan) const override {
        Plan p = plan;
        p.batch = 1;
        Metrics m = m_model.evaluate(p);
        if (m.feasible) m.throughput = m.tpotMs > 0 ? 1000.0 / m.tpotMs : 0.0;
        return m;
    }
    std::optional<Plan> megatronPlan() const override { return m_model.megatronPlan(); }

private:
    const CostModel& m_model;
};

/// Forwards a search's progress events to the sweep's observer, tagged with the target.
class Relay final : public Observer {
public:
    Relay(ParetoObserver* o, int target) : m_o(o), m_target(target) {}
    void progress(const Progress& p) override {
        if (m_o) m_o->searchProgress(m_target, p);
    }

private:
    ParetoObserver* m_o;
    int m_target;
};

Scenario withTpot(const Scenario& s, double tpotMs) {
    Scenario t = s;
    t.workload.tpotMs = tpotMs;
    return t;
}

ParetoPoint pointOf(const Candidate& c, double target, const Model& model, const std::string& searcher) {
    ParetoPoint p;
    p.targetTpotMs = target;
    p.metrics = c.metrics;
    p.plan = c.plan;
    p.plan.batch = c.metrics.batch;
    p.throughputPerGpu = c.metrics.throughputPerGpu;
    p.tpotMs = c.metrics.tpotMs;
    p.ttftMs = c.metrics.ttftMs;
    p.userTokensPerS = c.metrics.tpotMs > 0 ? 1000.0 / c.metrics.tpotMs : 0.0;
    p.family = layoutFamily(p.plan, model);
    p.searcher = searcher;
    return p;
}

/// The assignments of a result's elite (best first, at most `count`), for the next search's starts.
void appendElite(const SearchResult& r, size_t count, std::vector<std::vector<int>>& out) {
    for (const auto& c : r.elite) {
        if (count == 0) break;
        if (c.choices.empty()) continue;
        out.push_back(c.choices);
        --count;
    }
}

/// One sweep; holds what the searches share.
class Sweep {
public:
    Sweep(const Scenario& s, const ParetoOptions& o, ParetoObserver* obs, std::stop_token stop)
        : m_s(s), m_o(o), m_obs(obs), m_stop(std::move(stop)), m_space(s), m_start(Clock::now()),
          m_deadline(o.seconds > 0 ? m_start + std::chrono::duration_cast<Clock::duration>(
                                                   std::chrono::duration<double>(o.seconds))
                                   : Clock::time_point::max()) {}

    ParetoResult run();

private:
    bool outOfTime() const { return m_stop.stop_requested() || Clock::now() >= m_deadline; }

    SearchResult search(const Objective& objective, uint64_t seed, std::vector<std::vector<int>> starts,
                        int tag) {
        auto searcher = makeSearcher(m_o.searcher);
        Engine engine(objective);
        SearchOptions so;
        so.budget.evaluations = m_o.budget;
        if (m_deadline != Clock::time_point::max())
            so.budget.seconds =
                std::max(1e-3, std::chrono::duration<double>(m_deadline - Clock::now()).count());
        so.seed = seed;
        so.threads = m_o.threads;
        // The recipe's plan at this SLO is always among the starts.
        so.warmStart = m_o.warm ? WarmStart::Megatron : WarmStart::None;
        if (m_o.warm) so.starts = std::move(starts), so.learned = m_learned;
        Relay relay(m_obs, tag);
        SearchResult r = searcher->run(m_space, engine, so, &relay, m_stop);
        if (r.learned) m_learned = r.learned;
        m_result.evaluations += r.evaluations;
        ++m_result.searches;
        if (r.stopped || outOfTime()) m_result.stopped = true;
        return r;
    }

    const Scenario& m_s;
    const ParetoOptions& m_o;
    ParetoObserver* m_obs;
    std::stop_token m_stop;
    SearchSpace m_space;
    Clock::time_point m_start, m_deadline;
    /// What the last search learned (a learning searcher's policy), carried to the next in sweep order.
    std::shared_ptr<const LearnedState> m_learned;
    ParetoResult m_result;
};

ParetoResult Sweep::run() {
    const double cpu0 = processCpuSeconds();
    ParetoResult& res = m_result;
    const auto finish = [&](std::vector<ParetoPoint> found, std::vector<ParetoPoint> megatron) {
        res.frontier = nonDominated(std::move(found));
        res.megatron = nonDominated(std::move(megatron));
        res.seconds = std::chrono::duration<double>(Clock::now() - m_start).count();
        res.cpuSeconds = processCpuSeconds() - cpu0;
        res.learned = m_learned;
        if (res.frontier.empty() && res.message.empty())
            res.message = res.stopped ? "stopped before any point was found" : "no feasible plan";
        return std::move(res);
    };
    const int n = std::max(2, m_o.points);
    const Model& model = m_s.model;

    // The loose end: the highest throughput with no TPOT limit.
    const CostModel looseModel(withTpot(m_s, 0));
    const CostModelObjective looseObjective(looseModel);
    const SearchResult loose = search(looseObjective, m_o.seed, {}, -1);
    if (loose.refused) {
        res.refused = true;
        res.message = loose.message;
        return finish({}, {});
    }
    if (!loose.feasible()) {
        res.message = "no feasible plan without a TPOT limit: " + loose.message;
        return finish({}, {});
    }
    const ParetoPoint loosePoint = pointOf(loose.best, 0, model, loose.searcher);
    std::vector<ParetoPoint> found, megatron;
    res.maxTpotMs = loosePoint.tpotMs;
    if (m_obs) m_obs->pointFound(loosePoint, false, 1, n);

    // The tight end: the lowest TPOT any plan reaches (at batch 1).
    std::optional<SearchResult> tight;
    if (!outOfTime()) {
        const MinTpotObjective tightObjective(looseModel);
        std::vector<std::vector<int>> starts;
        appendElite(loose, 4, starts);
        tight = search(tightObjective, m_o.seed + uint64_t(n), std::move(starts), -2);
    }
    res.minTpotMs =
        tight && tight->feasible() ? std::min(tight->best.metrics.tpotMs, res.maxTpotMs) : res.maxTpotMs;

    // Targets, tightest first, log-uniform; the loosest is the unconstrained search's TPOT.
    std::vector<double>& targets = res.targetsMs;
    const double ratio = res.maxTpotMs / std::max(1e-9, res.minTpotMs);
    for (int k = 0; k < n; ++k) {
        double t = res.minTpotMs * std::pow(ratio, double(k) / double(n - 1));
        if (k == 0) t = res.minTpotMs;
        if (k == n - 1) t = res.maxTpotMs;
        targets.push_back(t);
    }
    if (m_obs) m_obs->targetsChosen(targets);

    // The Megatron recipe at each target: cheap (one evaluation each), so all of it, even after a stop.
    for (int k = 0; k < n; ++k) {
        const CostModel mm(withTpot(m_s, k == n - 1 ? 0.0 : targets[size_t(k)]));
        Candidate c;
        c.plan = mm.megatronPlan();
        c.metrics = mm.evaluate(c.plan);
        if (!c.metrics.feasible) continue;
        megatron.push_back(pointOf(c, k == n - 1 ? 0.0 : targets[size_t(k)], model, "megatron"));
        if (m_obs) m_obs->pointFound(megatron.back(), true, k + 1, n);
    }

    // The sweep, tightest first: each search starts from the previous one's elite and the loose end's best.
    struct Searched {
        double target;
        Candidate best;
    };
    std::vector<Searched> searched{{0.0, loose.best}};
    std::set<std::vector<int>> pool; // the best plans of every search, for the exchange below
    const auto addToPool = [&pool](const SearchResult& r) {
        std::vector<std::vector<int>> e;
        appendElite(r, kExchange, e);
        pool.insert(e.begin(), e.end());
    };
    addToPool(loose);
    std::vector<std::vector<int>> previous;
    if (tight) {
        appendElite(*tight, size_t(std::max(0, m_o.warmStarts)), previous);
        addToPool(*tight);
    }
    for (int k = 0; k + 1 < n && !outOfTime(); ++k) {
        // A target within rounding of the tight end's TPOT keeps that plan feasible.
        const double target = k == 0 ? targets[0] * (1 + 1e-9) : targets[size_t(k)];
        const CostModel mk(withTpot(m_s, target));
        const CostModelObjective objective(mk);
        std::vector<std::vector<int>> starts = std::move(previous);
        appendElite(loose, 4, starts);
        const SearchResult r = search(objective, m_o.seed + uint64_t(k) + 1, std::move(starts), k);
        previous.clear();
        appendElite(r, size_t(std::max(0, m_o.warmStarts)), previous);
        addToPool(r);
        // Kept even when nothing feasible was found: the exchange may still fill it.
        searched.push_back({target, r.best});
        if (r.feasible() && m_obs)
            m_obs->pointFound(pointOf(r.best, target, model, r.searcher), false, k + 2, n);
    }

    // The exchange: every search's best plans re-evaluated under every searched target (a few thousand
    // evaluations against the searches' tens of thousands). A plan found for one target often serves a
    // looser neighbour, at a larger batch, better than what that neighbour's own search kept.
    const std::vector<std::vector<int>> poolList(pool.begin(), pool.end());
    for (Searched& t : searched) {
        const CostModel mt(withTpot(m_s, t.target));
        const CostModelObjective objective(mt);
        Engine engine(objective);
        const auto metrics = engine.evaluate(m_space, poolList, m_o.threads, m_stop);
        bool improved = false;
        for (size_t i = 0; i < metrics.size(); ++i) {
            if (!metrics[i]) continue;
            ++res.evaluations;
            if (metrics[i]->feasible &&
                (!t.best.metrics.feasible || metrics[i]->throughput > t.best.metrics.throughput)) {
                t.best = {m_space.toPlan(poolList[i]), *metrics[i], poolList[i]};
                improved = true;
            }
        }
        if (!t.best.metrics.feasible) continue;
        found.push_back(pointOf(t.best, t.target, model, m_o.searcher));
        if (improved && m_obs) m_obs->pointFound(found.back(), false, int(searched.size()), n);
    }
    // A stop or the time limit between searches leaves targets unsearched.
    res.stopped = res.stopped || res.searches < n + 1;
    return finish(std::move(found), std::move(megatron));
}

} // namespace

ParetoResult paretoFront(const Scenario& scenario, const ParetoOptions& options, ParetoObserver* observer,
                         std::stop_token stop) {
    ParetoResult r;
    if (scenario.workload.phase == Phase::Prefill) {
        r.refused = true;
        r.message = "pareto: a prefill workload has no TPOT; use a decode or serving workload";
        return r;
    }
    if (std::string e = searcherError(options.searcher); !e.empty()) {
        r.refused = true;
        r.message = "pareto: " + e;
        return r;
    }
    return Sweep(scenario, options, observer, std::move(stop)).run();
}

bool dominates(const ParetoPoint& a, const ParetoPoint& b) {
    return a.throughputPerGpu >= b.throughputPerGpu && a.userTokensPerS >= b.userTokensPerS &&
           (a.throughputPerGpu > b.throughputPerGpu || a.userTokensPerS > b.userTokensPerS);
}

std::vector<ParetoPoint> nonDominated(std::vector<ParetoPoint> points) {
    // Throughput descending, then tokens/s per user descending: a point survives when it is faster per user
    // than every point of higher (or equal) throughput before it.
    std::stable_sort(points.begin(), points.end(), [](const ParetoPoint& a, const ParetoPoint& b) {
        if (a.throughputPerGpu != b.throughputPerGpu) return a.throughputPerGpu > b.throughputPerGpu;
        return a.userTokensPerS > b.userTokensPerS;
    });
    std::vector<ParetoPoint> out;
    double bestUser = -1;
    for (auto& p : points)
        if (p.userTokensPerS > bestUser) {
            bestUser = p.userTokensPerS;
            out.push_back(std::move(p));
        }
    return out; // throughput descending, so tokens/s per user ascending
}

std::string paretoCsv(const ParetoResult& r, const ParetoCsvExtras& x) {
    std::ostringstream s;
    s << "frontier,user_tokens_per_s,throughput_per_gpu,tpot_ms,ttft_ms,target_tpot_ms,batch,family,pp,dp,tp,"
         "ep,etp,edp,prefill_nodes,decode_nodes,bound,"
      << (x.cluster ? "usd_per_million_tokens,tokens_per_s_per_mw," : "") << "scenario\n";
    // One row; target 0 (the loose end: no TPOT limit) is left empty rather than read as a 0 ms limit.
    const auto row = [&s, &x](const char* kind, double user, double perGpu, double tpot, double ttft,
                              double target, int64_t batch, const std::string& family, const Degrees& d,
                              const std::string& split, const std::string& scenario) {
        char buf[256];
        std::snprintf(buf, sizeof buf, "%s,%.10g,%.10g,%.10g,%.10g,", kind, user, perGpu, tpot, ttft);
        s << buf;
        if (target > 0) {
            std::snprintf(buf, sizeof buf, "%.10g", target);
            s << buf;
        }
        s << ',' << batch << ',' << csvField(family) << ',' << d.pp << ',' << d.dp << ',' << d.tp << ','
          << d.ep << ',' << d.etp << ',' << d.edp << ',' << split << ',';
        if (x.cluster) {
            // Per GPU: the point's throughput per GPU on one GPU's price and power; the overlay ran on
            // another cluster.
            const bool own = std::string_view(kind) != "overlay";
            const ServingCost c = servingCost(*x.cluster, 1, perGpu);
            if (own && c.priced && c.usdPerMillionTokens > 0) s << c.usdPerMillionTokens;
            s << ',';
            if (own && c.powered) s << c.tokensPerSPerMegawatt;
            s << ',';
        }
        s << csvField(scenario) << "\n";
    };
    const auto rows = [&](const char* kind, const std::vector<ParetoPoint>& ps, const std::string& scenario) {
        for (const auto& p : ps)
            row(kind, p.userTokensPerS, p.throughputPerGpu, p.tpotMs, p.ttftMs, p.targetTpotMs,
                p.metrics.batch, p.family, p.plan.degrees, ",,", scenario);
    };
    rows("searched", r.frontier, x.scenario);
    rows("megatron", r.megatron, x.scenario);
    for (const auto& p : x.disaggregated) {
        const DisaggPlan& plan = p.split.plan;
        const std::string split = std::to_string(plan.prefill.nodes) + ',' +
                                  std::to_string(plan.decode.nodes) + ',' + csvField(p.split.metrics.bound);
        row("disaggregated", p.userTokensPerS, p.throughputPerGpu, p.split.metrics.tpotMs,
            p.split.metrics.ttftMs, p.targetTpotMs, p.split.metrics.decode.batch,
            x.model ? layoutFamily(plan.decode.plan, *x.model) : std::string(), plan.decode.plan.degrees,
            split, x.scenario);
    }
    rows("overlay", x.overlay, x.overlayScenario);
    return s.str();
}

const ParetoPoint* pointAtTpot(const std::vector<ParetoPoint>& frontier, double tpotMs) {
    const ParetoPoint* best = nullptr;
    for (const auto& p : frontier)
        if (p.tpotMs <= tpotMs && (!best || p.throughputPerGpu > best->throughputPerGpu)) best = &p;
    return best;
}

} // namespace sp
