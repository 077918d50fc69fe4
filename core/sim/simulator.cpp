// The request-level serving simulation (see simulator.h for what it models): the event loop, over arrivals,
// step ends and KV transfers. The scheduler is in scheduler.cpp, the statistics in simstats.cpp.

#include "core/sim/simulator.h"

#include "core/sim/simstate.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace sp {

namespace simimpl {

// ------------------------------------------------------------------ arrivals

double Sim::gap() {
    if (o.burstCv <= 0 || std::abs(o.burstCv - 1.0) < 1e-12) return -std::log1p(-rng.uniform()) / o.rate;
    // Gamma gaps of shape k = 1 / cv^2 and mean 1 / rate. A CV under 0.01 (the CLI's bound) is taken as
    // 0.01: the shape stays finite (1e-160 made it infinite), and the gaps are regular to 1% either way.
    const double cv = std::max(o.burstCv, 0.01);
    const double k = 1.0 / (cv * cv);
    return drawGamma(rng, k) / (k * o.rate);
}

void Sim::scheduleArrival() {
    nextArrival = kInf;
    const int64_t limit = totalExpected();
    if (limit > 0 && arrived >= limit) return;
    double t;
    if (!trace.empty()) {
        if (traceAt >= trace.size()) return;
        t = trace[traceAt].arrivalS - trace.front().arrivalS;
    } else {
        if (!(o.rate > 0)) return;
        t = (arrived == 0 ? 0.0 : lastArrival) + gap();
    }
    if (o.duration > 0 && t > o.duration) return;
    nextArrival = t;
}

void Sim::arrive() {
    Req x;
    x.arrival = nextArrival;
    const Workload& w = s.workload;
    if (!trace.empty()) {
        const TraceRequest& tr = trace[traceAt++];
        x.input = int32_t(std::clamp<int64_t>(tr.inputTokens, 1, INT32_MAX / 4));
        x.output = int32_t(std::clamp<int64_t>(tr.outputTokens, 1, INT32_MAX / 4));
    } else {
        x.input = int32_t(std::min<int64_t>(inputLengths.draw(rng), INT32_MAX / 4));
        x.output = int32_t(std::min<int64_t>(outputLengths.draw(rng), INT32_MAX / 4));
    }
    // The prefix cache holds whole blocks; a prompt's last token is always computed.
    x.cached =
        int32_t(std::min<int64_t>(int64_t(std::floor(w.prefixCacheHit * x.input / bs)) * bs, x.input - 1));
    x.promptLen = x.input;
    ++arrived;
    if (firstArrival < 0) firstArrival = x.arrival;
    lastArrival = x.arrival;
    tokensIn += x.input;
    const int32_t id = int32_t(reqs.size());
    reqs.push_back(x);
    enqueue(0, id);
    scheduleArrival();
}

// ------------------------------------------------------------------ tokens and completions

int Sim::accepted() {
    if (acceptCum.empty()) return 0;
    const double u = rng.uniform();
    int a = 0;
    while (a < int(acceptCum.size()) && u < acceptCum[size_t(a)]) ++a;
    return a;
}

/// `k` output tokens of x at time t. `bulk`: where the gaps of requests that emitted at the start of
/// the step being applied (m_stepStart) are counted, by tokens emitted, to be added at once.
void Sim::emit(Req& x, int k, double t, std::array<double, 16>* bulk) {
    k = std::min(k, x.output - x.generated);
    if (k <= 0) return;
    if (x.generated == 0)
        x.firstToken = t;
    else if (bulk && k < int(bulk->size()) && x.lastEmit == m_stepStart)
        (*bulk)[size_t(k)] += 1;
    else
        itl.add((t - x.lastEmit) / k, double(k));
    x.generated += k;
    x.lastEmit = t;
    tokensOut += k;
}

void Sim::finish(Rank& r, Req& x, double t) {
    release(r, x);
    ++completed;
    const double first = x.firstToken - x.arrival, whole = t - x.arrival;
    ttft.push_back(first * 1e3);
    e2e.push_back(whole * 1e3);
    double perToken = 0;
    if (x.output >= 2) {
        perToken = (t - x.firstToken) / double(x.output - 1) * 1e3;
        tpot.push_back(perToken);
    }
    const Workload& w = s.workload;
    const bool ok =
        (w.ttftMs <= 0 || first * 1e3 <= w.ttftMs) && (w.tpotMs <= 0 || x.output < 2 || perToken <= w.tpotMs);
    metSlo += ok;
    doneTokens.emplace_back(t, tokensOut);
}

void Sim::endStep(int pool, int g) {
    Lanes& L = pools[pool];
    const double t = now;
    m_stepStart = L.stepStart[size_t(g)];
    const double dt = t - m_stepStart;
    std::array<double, 16> bulk{}; // requests whose gap was this step, by tokens emitted
    for (int k : L.groups[size_t(g)]) {
        Rank& r = L.ranks[size_t(k)];
        size_t keep = 0;
        for (size_t i = 0; i < r.running.size(); ++i) {
            const int32_t id = r.running[i];
            Req& x = reqs[size_t(id)];
            bool stays = true;
            if (x.sched > 0) {
                if (!x.decoding) {
                    x.computed += x.sched;
                    if (x.computed >= x.promptLen) {
                        x.decoding = true;
                        x.ctx = x.promptLen;
                        if (L.kind == Pool::Prefill) {
                            startTransfer(L, r, id);
                            stays = false;
                        } else {
                            emit(x, 1, t, &bulk);
                        }
                    }
                } else {
                    const int tokens = 1 + accepted();
                    x.ctx += tokens;
                    emit(x, tokens, t, &bulk);
                }
                x.sched = 0;
                if (stays && x.generated >= x.output) {
                    finish(r, x, t);
                    stays = false;
                }
            }
            if (stays) r.running[keep++] = id;
        }
        r.running.resize(keep);
    }
    for (size_t k = 1; k < bulk.size(); ++k)
        if (bulk[k] > 0) itl.add(dt / double(k), bulk[k] * double(k));
    startStep(pool, g);
}

// ------------------------------------------------------------------ disaggregated: the KV transfer

void Sim::startTransfer(Lanes& L, Rank& r, int32_t id) {
    Req& x = reqs[size_t(id)];
    const double start = std::max(now, r.linkFree);
    const double seconds = double(x.input) * L.kvBytesPerToken / L.nicBytesPerS + L.latencyS;
    r.linkFree = start + seconds;
    ++inTransfer;
    events.push({r.linkFree, 1, id});
}

void Sim::endTransfer(int32_t id) {
    Req& x = reqs[size_t(id)];
    Lanes& P = pools[0];
    Rank& r = P.ranks[size_t(x.rank)];
    release(r, x);
    --inTransfer;
    // The decode pool streams the first token once the KV has arrived.
    x.lastEmit = now;
    emit(x, 1, now, nullptr);
    if (x.generated >= x.output) {
        // Nothing to decode: done at the prefill replica (its blocks are already freed).
        finishNoRank(x, now);
    } else {
        x.decoding = true;
        x.ctx = x.input;
        x.computed = x.promptLen;
        enqueue(1, id);
    }
    kick(0, r.group);
}

void Sim::finishNoRank(Req& x, double t) {
    Rank dummy;
    dummy.used = x.blocks;
    finish(dummy, x, t);
}

// ------------------------------------------------------------------ time

void Sim::sampleKv() {
    const Lanes& L = pools[nPools - 1];
    int64_t used = 0, cap = 0;
    for (const Rank& r : L.ranks) used += r.used, cap += r.capacity;
    if (cap > 0) kvPeak = std::max(kvPeak, double(used) / double(cap));
}

void Sim::advance(double t) {
    const double dt = t - lastT;
    if (dt > 0) {
        inFlightArea += double(arrived - completed) * dt;
        const Lanes& L = pools[nPools - 1];
        int64_t used = 0, cap = 0;
        for (const Rank& r : L.ranks) used += r.used, cap += r.capacity;
        if (cap > 0) kvArea += double(used) / double(cap) * dt;
    }
    lastT = t;
    now = t;
    while (sampleEvery > 0 && now >= nextSample) {
        SimResult::Point p;
        p.t = nextSample;
        int64_t used = 0, cap = 0;
        for (int k = 0; k < nPools; ++k)
            for (const Rank& r : pools[k].ranks)
                p.waiting += int64_t(r.waiting.size()), p.running += int64_t(r.running.size());
        p.waiting += inTransfer;
        for (const Rank& r : pools[nPools - 1].ranks) used += r.used, cap += r.capacity;
        p.kvShare = cap > 0 ? double(used) / double(cap) : 0.0;
        timeline.push_back(p);
        nextSample += sampleEvery;
        if (timeline.size() > size_t(std::max(2, o.timelinePoints)) * 4) sampleEvery *= 2; // long drains
    }
}

bool Sim::run(const SimProgressFn& progress, std::stop_token stop) {
    const int64_t total = totalExpected();
    double expectedSpan = 0;
    if (!trace.empty())
        expectedSpan = trace[size_t(std::max<int64_t>(0, total - 1))].arrivalS - trace.front().arrivalS;
    else if (o.rate > 0)
        expectedSpan = total > 0 ? double(total) / o.rate : o.duration;
    if (o.duration > 0 && (expectedSpan <= 0 || o.duration < expectedSpan)) expectedSpan = o.duration;
    sampleEvery = expectedSpan > 0 ? expectedSpan / std::max(1, o.timelinePoints) : 0.0;
    scheduleArrival();
    int64_t n = 0;
    while (true) {
        const double tE = events.empty() ? kInf : events.top().t;
        if (nextArrival == kInf && tE == kInf) break;
        if (tE <= nextArrival) {
            const Event e = events.top();
            events.pop();
            advance(e.t);
            if (e.kind == 0)
                endStep(int(e.id >> 24), int(e.id & 0xffffff));
            else
                endTransfer(int32_t(e.id));
        } else {
            advance(nextArrival);
            arrive();
        }
        if ((++n & 1023) == 0) {
            if (progress) progress({arrived, completed, total, now});
            if (stop.stop_requested()) return false;
        }
    }
    if (progress) progress({arrived, completed, total, now});
    return true;
}

} // namespace simimpl

using namespace simimpl;

namespace {

void setAcceptance(Sim& sim, const Scenario& s, const Plan& plan) {
    if (!plan.spec.on()) return;
    const std::vector<double>& rates = acceptanceRates(s, plan.spec.method);
    double p = 1.0;
    for (int j = 0; j < plan.spec.draftTokens && j < int(rates.size()); ++j)
        sim.acceptCum.push_back(p *= rates[size_t(j)]);
}

std::shared_ptr<SimResult> failed(std::string why) {
    auto r = std::make_shared<SimResult>();
    r->error = std::move(why);
    return r;
}

std::string optionsError(const SimOptions& o) {
    if (o.trace.empty() && !(o.rate > 0)) return "give a request rate above 0 or a trace";
    if (o.trace.empty() && o.requests <= 0 && !(o.duration > 0))
        return "give a number of requests or a duration";
    if (!(o.burstCv > 0)) return "the arrivals' coefficient of variation must be above 0";
    if (o.blockTokens < 1) return "the KV block must hold at least one token";
    return "";
}

} // namespace

std::shared_ptr<const SimResult> simulate(const Scenario& scenario, const Plan& plan,
                                          const SimOptions& options, const SimProgressFn& progress,
                                          std::stop_token stop) {
    const CostModel model(scenario);
    return simulate(model, plan, options, progress, stop);
}

std::shared_ptr<const SimResult> simulate(const CostModel& model, const Plan& plan, const SimOptions& o,
                                          const SimProgressFn& progress, std::stop_token stop) {
    const Scenario& s = model.scenario();
    if (auto e = optionsError(o); !e.empty()) return failed(e);
    if (s.workload.phase != Phase::Serving)
        return failed("the simulation serves requests: the workload's phase must be serving");
    if (auto why = model.checkPlan(plan)) return failed("the plan does not fit the scenario: " + *why);
    const Metrics m = model.evaluate(plan);
    Sim sim(s, o);
    buildLanes(sim.pools[0], s, model, plan, m, o, Pool::Aggregated, plan.degrees.dp);
    setAcceptance(sim, s, plan);
    const bool finished = sim.run(progress, stop);
    auto r = std::make_shared<SimResult>();
    fillResult(sim, *r, finished);
    char buf[200];
    std::snprintf(
        buf, sizeof buf, "%d replica%s x %d micro-batch%s, batch cap %lld, %lld KV blocks of %d tokens each",
        plan.degrees.dp, plan.degrees.dp == 1 ? "" : "s", plan.degrees.pp, plan.degrees.pp == 1 ? "" : "es",
        (long long)r->batchCap, (long long)r->kvBlocksPerLane, r->blockTokens);
    r->plan = buf;
    return r;
}

std::shared_ptr<const SimResult> simulate(const DisaggModel& model, const DisaggPlan& plan,
                                          const SimOptions& o, const SimProgressFn& progress,
                                          std::stop_token stop) {
    const Scenario& s = model.scenario();
    if (auto e = optionsError(o); !e.empty()) return failed(e);
    if (auto e = model.checkSplit(plan.prefill.nodes, plan.decode.nodes)) return failed(*e);
    const DisaggMetrics dm = model.evaluate(plan);
    if (!dm.valid) return failed(dm.violation);
    Sim sim(s, o);
    sim.nPools = 2;
    const CostModel& pm = model.prefillModel(plan.prefill.nodes);
    const CostModel& dmod = model.decodeModel(plan.decode.nodes);
    SimOptions prefillOptions = o;
    prefillOptions.batchCap = 0, prefillOptions.kvBlocks = 0; // the options size the decode pool
    buildLanes(sim.pools[0], s, pm, plan.prefill.plan, dm.prefill, prefillOptions, Pool::Prefill,
               plan.prefill.plan.degrees.dp);
    buildLanes(sim.pools[1], s, dmod, plan.decode.plan, dm.decode, o, Pool::Decode,
               plan.decode.plan.degrees.dp);
    Lanes& P = sim.pools[0];
    const double I = std::max<double>(1.0, double(s.workload.inputTokens));
    P.kvBytesPerToken = model.kvBytesPerPrompt() / I;
    const Degrees& d = plan.prefill.plan.degrees;
    P.nicBytesPerS = double(std::max(1, d.pp * d.tp)) * model.nicBytesPerS();
    // The larger of the two clusters' latencies (pools on one cluster: its own), and a TP re-layout's extra
    // messages (DisaggMetrics::relayoutMs).
    P.latencyS = model.linkLatencyS() + dm.relayoutMs * 1e-3;
    setAcceptance(sim, s, plan.decode.plan);
    const bool finished = sim.run(progress, stop);
    auto r = std::make_shared<SimResult>();
    fillResult(sim, *r, finished);
    char buf[240];
    std::snprintf(
        buf, sizeof buf,
        "prefill pool %d replica%s (%d nodes), decode pool %d replica%s (%d nodes) of batch cap %lld, "
        "%lld KV blocks of %d tokens each",
        d.dp, d.dp == 1 ? "" : "s", plan.prefill.nodes, plan.decode.plan.degrees.dp,
        plan.decode.plan.degrees.dp == 1 ? "" : "s", plan.decode.nodes, (long long)r->batchCap,
        (long long)r->kvBlocksPerLane, r->blockTokens);
    r->plan = buf;
    return r;
}

} // namespace sp
