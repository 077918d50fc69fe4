// A sweep over request rates (see sweep.h).

#include "core/sim/sweep.h"

#include "core/sim/capacity.h"

#include <algorithm>
#include <cmath>

namespace sp {

namespace {
bool samePercentiles(const Percentiles& a, const Percentiles& b) {
    return a.mean == b.mean && a.p50 == b.p50 && a.p90 == b.p90 && a.p99 == b.p99 && a.max == b.max &&
           a.count == b.count;
}
} // namespace

bool SweepPoint::operator==(const SweepPoint& o) const {
    return rate == o.rate && requests == o.requests && completed == o.completed &&
           samePercentiles(ttftMs, o.ttftMs) && samePercentiles(tpotMs, o.tpotMs) &&
           samePercentiles(e2eMs, o.e2eMs) && requestsPerS == o.requestsPerS &&
           outputTokensPerS == o.outputTokensPerS && goodputRequestsPerS == o.goodputRequestsPerS &&
           sloAttainment == o.sloAttainment && kvPeakShare == o.kvPeakShare && preemptions == o.preemptions &&
           slo.met == o.slo.met && slo.ttftRatio == o.slo.ttftRatio && slo.tpotRatio == o.slo.tpotRatio &&
           slo.ttftMs == o.slo.ttftMs && slo.tpotMs == o.slo.tpotMs && slo.binding == o.slo.binding;
}

std::vector<double> sweepRates(double from, double to, int steps) {
    if (steps < 1 || !(from > 0) || !std::isfinite(to) || to < from) return {};
    if (steps == 1) return {from};
    std::vector<double> rates(static_cast<size_t>(steps));
    // Each rate from the ends, not by adding steps: the last is `to` exactly.
    for (int i = 0; i < steps; ++i) rates[size_t(i)] = from + (to - from) * double(i) / double(steps - 1);
    rates.back() = to;
    return rates;
}

SweepPoint sweepPoint(double rate, const SimResult& r, const Workload& w) {
    SweepPoint p;
    p.rate = rate;
    p.requests = r.requests;
    p.completed = r.completed;
    p.ttftMs = r.ttftMs;
    p.tpotMs = r.tpotMs;
    p.e2eMs = r.e2eMs;
    p.requestsPerS = r.requestsPerS;
    p.outputTokensPerS = r.outputTokensPerS;
    p.goodputRequestsPerS = r.goodputRequestsPerS;
    p.sloAttainment = r.sloAttainment;
    p.kvPeakShare = r.kvPeakShare;
    p.preemptions = r.preemptions;
    p.slo = checkSlo(r, w);
    return p;
}

int highestMeeting(const std::vector<SweepPoint>& points) {
    int best = -1;
    for (size_t i = 0; i < points.size(); ++i)
        if (points[i].slo.met && (best < 0 || points[i].rate > points[size_t(best)].rate)) best = int(i);
    return best;
}

namespace {
/// The sweep over rates of one simulation `run(options)`, each run of at least `steady(rate)` requests.
template <class Run, class Steady>
RateSweep sweepWith(const Workload& w, const RateSweepOptions& o, std::stop_token stop,
                    const SweepPointFn& onPoint, Run run, Steady steady) {
    RateSweep out;
    for (double rate : o.rates)
        if (!(rate > 0) || !std::isfinite(rate)) {
            out.error = "a sweep's rates must be positive requests/s";
            return out;
        }
    for (double rate : o.rates) {
        if (stop.stop_requested()) break;
        SimOptions so = o.sim;
        so.rate = rate;
        so.trace.clear();
        so.requests = std::max(so.requests, steady(rate));
        const auto r = run(so);
        if (!r->ok) {
            out.error = r->error;
            return out;
        }
        if (r->stopped) break; // cut short: its figures are not the rate's
        if (out.plan.empty()) out.plan = r->plan;
        out.points.push_back(sweepPoint(rate, *r, w));
        if (onPoint) onPoint(out.points.back(), out.points.size() - 1);
    }
    out.ok = true;
    out.stopped = stop.stop_requested() && out.points.size() < o.rates.size();
    return out;
}
} // namespace

RateSweep sweepRates(const CostModel& model, const Plan& plan, const RateSweepOptions& o,
                     const SimProgressFn& progress, std::stop_token stop, const SweepPointFn& onPoint) {
    const Workload& w = model.scenario().workload;
    if (auto why = model.checkPlan(plan)) {
        RateSweep out;
        out.error = "the plan does not fit the scenario: " + *why;
        return out;
    }
    const Metrics m = model.evaluate(plan);
    return sweepWith(
        w, o, stop, onPoint, [&](const SimOptions& so) { return simulate(model, plan, so, progress, stop); },
        [&](double rate) { return steadyRequests(m, w, rate, o.steadyLatencies); });
}

RateSweep sweepRates(const DisaggModel& model, const DisaggPlan& plan, const RateSweepOptions& o,
                     const SimProgressFn& progress, std::stop_token stop, const SweepPointFn& onPoint) {
    const Workload& w = model.scenario().workload;
    const DisaggMetrics dm = model.evaluate(plan);
    if (!dm.valid) {
        RateSweep out;
        out.error = "the plan does not fit the scenario: " + dm.violation;
        return out;
    }
    // steadyRequests reads a request's latency as TTFT + (output - 1) TPOT: the split's.
    Metrics m;
    m.ttftMs = dm.ttftMs;
    m.tpotMs = dm.tpotMs;
    return sweepWith(
        w, o, stop, onPoint, [&](const SimOptions& so) { return simulate(model, plan, so, progress, stop); },
        [&](double rate) { return steadyRequests(m, w, rate, o.steadyLatencies); });
}

} // namespace sp
