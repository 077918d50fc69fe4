// The serving simulation's result summary: latency percentiles, rates over the run, the KV pool's use,
// and the SLO check of a result.

#include "core/sim/simstats.h"
#include "core/sim/simstate.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <numeric>
#include <string>
#include <string_view>

namespace sp {

namespace simimpl {

namespace {

Percentiles summarize(const std::vector<double>& sorted) {
    Percentiles p;
    p.count = int64_t(sorted.size());
    if (sorted.empty()) return p;
    p.mean = std::accumulate(sorted.begin(), sorted.end(), 0.0) / double(sorted.size());
    p.p50 = percentileOf(sorted, 50), p.p90 = percentileOf(sorted, 90), p.p99 = percentileOf(sorted, 99);
    p.max = sorted.back();
    return p;
}

} // namespace

void fillResult(Sim& sim, SimResult& r, bool finished) {
    r.ok = true;
    r.stopped = !finished;
    r.requests = sim.arrived;
    r.completed = sim.completed - sim.rejected;
    std::sort(sim.ttft.begin(), sim.ttft.end());
    std::sort(sim.tpot.begin(), sim.tpot.end());
    std::sort(sim.e2e.begin(), sim.e2e.end());
    r.ttftMs = summarize(sim.ttft), r.tpotMs = summarize(sim.tpot), r.e2eMs = summarize(sim.e2e);
    r.itlMs.count = int64_t(sim.itl.weight());
    r.itlMs.mean = sim.itl.mean() * 1e3;
    r.itlMs.p50 = sim.itl.quantile(50) * 1e3, r.itlMs.p90 = sim.itl.quantile(90) * 1e3,
    r.itlMs.p99 = sim.itl.quantile(99) * 1e3, r.itlMs.max = sim.itl.max() * 1e3;
    r.ttftSortedMs = std::move(sim.ttft);
    r.tpotSortedMs = std::move(sim.tpot);
    const double start = std::max(0.0, sim.firstArrival), end = sim.lastT;
    r.durationS = std::max(0.0, end - start);
    r.offeredRate = sim.arrived > 1 && sim.lastArrival > start
                        ? double(sim.arrived - 1) / (sim.lastArrival - start)
                        : 0.0;
    if (r.durationS > 0) {
        r.requestsPerS = double(r.completed) / r.durationS;
        r.outputTokensPerS = sim.tokensOut / r.durationS;
        r.totalTokensPerS = (sim.tokensOut + sim.tokensIn) / r.durationS;
        r.goodputRequestsPerS = double(sim.metSlo) / r.durationS;
        r.meanInFlight = sim.inFlightArea / r.durationS;
        r.kvMeanShare = sim.kvArea / r.durationS;
    }
    r.sloAttainment = sim.arrived > 0 ? double(sim.metSlo) / double(sim.arrived) : 0.0;
    const auto& d = sim.doneTokens;
    if (d.size() >= 8) {
        const auto& a = d[d.size() / 4];
        const auto& b = d[(3 * d.size()) / 4];
        if (b.first > a.first) r.sustainedOutputTokensPerS = (b.second - a.second) / (b.first - a.first);
    }
    r.preemptions = sim.preemptions;
    r.firstPreemptionS = sim.firstPreemption < 0 ? -1.0 : sim.firstPreemption - start;
    r.admissionsBlockedByKv = sim.blockedByKv;
    r.kvPeakShare = sim.kvPeak;
    r.steps = sim.steps;
    r.mixedSteps = sim.mixedSteps;
    r.timeline = std::move(sim.timeline);
    const Lanes& L = sim.pools[sim.nPools - 1];
    r.lanes = int64_t(L.ranks.size());
    r.batchCap = L.cap;
    r.kvBlocksPerLane = L.ranks.empty() ? 0 : L.ranks.front().capacity;
    r.tokenBudget = L.budget;
    r.blockTokens = sim.bs;
    static constexpr std::array<std::string_view, 3> kSchedulers{"vLLM V1", "SGLang", "TensorRT-LLM"};
    r.scheduler = std::string(kSchedulers[size_t(L.engine)]); // kMemoryRuleNames' order
    if (sim.rejected > 0)
        r.error = std::to_string(sim.rejected) + " requests longer than a lane's KV pool were turned away";
}

} // namespace simimpl

double percentileOf(const std::vector<double>& sorted, double p) {
    if (sorted.empty()) return 0.0;
    if (p <= 0) return std::accumulate(sorted.begin(), sorted.end(), 0.0) / double(sorted.size());
    const double rank = std::ceil(std::min(100.0, p) / 100.0 * double(sorted.size()));
    return sorted[size_t(std::clamp(rank, 1.0, double(sorted.size()))) - 1];
}

SloCheck checkSlo(const SimResult& r, const Workload& w) {
    SloCheck c;
    const double p = w.sloPercentile;
    c.ttftMs = percentileOf(r.ttftSortedMs, p);
    c.tpotMs = percentileOf(r.tpotSortedMs, p);
    if (w.ttftMs > 0) c.ttftRatio = c.ttftMs / w.ttftMs;
    if (w.tpotMs > 0) c.tpotRatio = c.tpotMs / w.tpotMs;
    c.met = c.ttftRatio <= 1.0 && c.tpotRatio <= 1.0 && r.completed > 0 && !r.stopped;
    if (w.ttftMs > 0 || w.tpotMs > 0) c.binding = c.ttftRatio >= c.tpotRatio ? "ttft" : "tpot";
    return c;
}

} // namespace sp
