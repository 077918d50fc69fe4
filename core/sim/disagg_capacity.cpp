// The cheapest disaggregated deployment for a request rate (capacity.h, cheapestDisaggregated): the pool
// searches of searchDisaggregated, every pairing of pool sizes ranked by what it costs, the cheapest
// simulated.

#include "core/sim/capacity.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace sp {

DisaggCapacity cheapestDisaggregated(const Scenario& s, const DisaggCapacityOptions& o,
                                     std::stop_token stop) {
    DisaggCapacity out;
    if (!(o.rate > 0)) {
        out.why = "the rate must be above 0";
        return out;
    }
    const DisaggSearchResult searched = searchDisaggregated(s, o.search, stop);
    out.evaluations = searched.evaluations;
    out.stopped = searched.stopped;
    if (searched.refused) {
        out.why = searched.message;
        return out;
    }
    DisaggOptions mo = o.search.model;
    mo.spareNodes = true;
    const DisaggModel dm(s, mo);
    const bool two = dm.twoClusters();
    const int N = s.cluster.nodes;
    const int Np = int(searched.prefillPlans.size()) - 1, Nd = int(searched.decodePlans.size()) - 1;

    // Every pairing that fits and whose rate-matched rate reaches the target, with its batches fixed.
    std::vector<DisaggSplit> fits;
    DisaggSplit closest; // the fastest pairing, for the answer's why when none reaches the rate
    for (int kp = 1; kp <= Np && !stop.stop_requested(); ++kp)
        for (int kd = 1; kd <= Nd; ++kd) {
            if (!two && kp + kd > N) break;
            const auto& pp = searched.prefillPlans[size_t(kp)];
            const auto& dp = searched.decodePlans[size_t(kd)];
            if (!pp || !dp) continue;
            DisaggSplit x = withFixedBatches(dm, {{kp, *pp}, {kd, *dp}});
            if (!x.metrics.feasible) continue;
            if (x.metrics.requestsPerS > closest.metrics.requestsPerS) closest = x;
            if (x.metrics.requestsPerS >= o.rate) fits.push_back(std::move(x));
        }
    out.candidates = int(fits.size());
    if (fits.empty()) {
        char buf[300];
        if (closest.metrics.requestsPerS > 0)
            std::snprintf(
                buf, sizeof buf,
                "no pairing of pool sizes reaches %.4g requests/s: the most, %.4g, on %d prefill and %d "
                "decode nodes (%s-bound)",
                o.rate, closest.metrics.requestsPerS, closest.plan.prefill.nodes, closest.plan.decode.nodes,
                closest.metrics.bound.c_str());
        else
            std::snprintf(buf, sizeof buf, "no pairing of pool sizes is feasible under the SLOs");
        out.why = buf;
        out.split = closest;
        return out;
    }
    // Cheapest first: dollars an hour where both pools are priced, else GPUs; then the faster.
    const auto usd = [](const DisaggSplit& x) { return x.metrics.usdPerHour; };
    const auto gpus = [](const DisaggSplit& x) { return x.metrics.prefillGpus + x.metrics.decodeGpus; };
    std::stable_sort(fits.begin(), fits.end(), [&](const DisaggSplit& a, const DisaggSplit& b) {
        if (usd(a) > 0 && usd(b) > 0 && usd(a) != usd(b)) return usd(a) < usd(b);
        if (gpus(a) != gpus(b)) return gpus(a) < gpus(b);
        return a.metrics.requestsPerS > b.metrics.requestsPerS;
    });

    const Workload& w = s.workload;
    for (const DisaggSplit& x : fits) {
        if (out.simulations >= o.maxSimulations || stop.stop_requested()) break;
        SimOptions so = o.sim;
        so.rate = o.rate;
        // A run starts empty: it lasts at least steadyLatencies analytical request latencies.
        const double latency =
            (x.metrics.ttftMs + std::max(0.0, double(w.outputTokens) - 1.0) * x.metrics.tpotMs) * 1e-3;
        so.requests = std::max<int64_t>(
            so.requests,
            int64_t(std::ceil(std::min(1e7, o.rate * o.steadyLatencies * std::max(0.0, latency)))));
        auto run = simulate(dm, x.plan, so, {}, stop);
        ++out.simulations;
        if (!run) continue;
        const SloCheck slo = checkSlo(*run, w);
        out.split = x, out.run = run, out.slo = slo;
        out.cost = poolsCost(s, x.metrics,
                             run->sustainedOutputTokensPerS > 0 ? run->sustainedOutputTokensPerS
                                                                : run->outputTokensPerS);
        if (slo.met) {
            out.met = true;
            return out;
        }
    }
    if (stop.stop_requested()) out.stopped = true;
    char buf[300];
    std::snprintf(
        buf, sizeof buf,
        "the %d cheapest pairings that reach %.4g requests/s analytically miss the SLOs when simulated "
        "(the last: %s %.4g ms against %.4g)",
        out.simulations, o.rate, out.slo.binding == "ttft" ? "TTFT" : "TPOT",
        out.slo.binding == "ttft" ? out.slo.ttftMs : out.slo.tpotMs,
        out.slo.binding == "ttft" ? w.ttftMs : w.tpotMs);
    out.why = buf;
    return out;
}

} // namespace sp
