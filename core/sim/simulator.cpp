// The request-level serving simulation (see simulator.h for what it models).

#include "core/sim/simulator.h"

#include "core/cost/stepcost.h"
#include "core/sim/draws.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <deque>
#include <limits>
#include <numeric>
#include <queue>

namespace sp {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

/// Inter-token latencies: one per output token, 10^8 of them in a long run, so they go into a histogram of
/// logarithmic bins 0.2% wide (percentiles to within that), from 1 us to 10^5 s.
class LogHistogram {
public:
    LogHistogram() : m_bins(size_t(std::ceil(std::log(1e11) / kStep)) + 2, 0.0) {}
    void add(double seconds, double weight) {
        if (weight <= 0) return;
        m_sum += seconds * weight, m_weight += weight;
        m_max = std::max(m_max, seconds);
        m_bins[index(seconds)] += weight;
    }
    double weight() const { return m_weight; }
    double mean() const { return m_weight > 0 ? m_sum / m_weight : 0.0; }
    double max() const { return m_max; }
    /// The bin holding the p-th percentile (nearest rank), at its geometric middle.
    double quantile(double p) const {
        if (m_weight <= 0) return 0.0;
        const double rank = std::ceil(p / 100.0 * m_weight);
        double seen = 0;
        for (size_t i = 0; i < m_bins.size(); ++i) {
            seen += m_bins[i];
            if (seen >= rank && m_bins[i] > 0)
                return std::min(m_max, i == 0 ? kMin : kMin * std::exp((double(i) - 0.5) * kStep));
        }
        return m_max;
    }

private:
    static constexpr double kMin = 1e-6, kStep = 0.002;
    size_t index(double s) const {
        if (s <= kMin) return 0;
        return std::min(m_bins.size() - 1, size_t(1 + std::floor(std::log(s / kMin) / kStep)));
    }
    std::vector<double> m_bins;
    double m_sum = 0, m_weight = 0, m_max = 0;
};

Percentiles summarize(const std::vector<double>& sorted) {
    Percentiles p;
    p.count = int64_t(sorted.size());
    if (sorted.empty()) return p;
    p.mean = std::accumulate(sorted.begin(), sorted.end(), 0.0) / double(sorted.size());
    p.p50 = percentileOf(sorted, 50), p.p90 = percentileOf(sorted, 90), p.p99 = percentileOf(sorted, 99);
    p.max = sorted.back();
    return p;
}

struct Req {
    double arrival = 0, firstToken = -1, lastEmit = 0;
    int32_t input = 0, output = 0, cached = 0;
    int32_t promptLen = 0; ///< tokens to prefill: the prompt, or prompt and output so far after preemption
    int32_t computed = 0;  ///< prefill progress
    int32_t generated = 0; ///< output tokens emitted
    int32_t ctx = 0;       ///< tokens in the cache while decoding (promptLen + generated - 1)
    int32_t blocks = 0;    ///< KV blocks held
    int32_t sched = 0;     ///< tokens in the step in flight
    int32_t rank = -1;     ///< the rank (in its pool) that holds it
    bool decoding = false;
};

enum class Pool { Aggregated, Prefill, Decode };

struct Rank {
    std::deque<int32_t> waiting;
    std::vector<int32_t> running;
    int64_t capacity = 0, used = 0;
    int group = 0;
    double linkFree = 0; ///< prefill pool: when its NICs are free for the next KV transfer
    int64_t load() const { return int64_t(waiting.size() + running.size()); }
};

/// One pool's replicas: its step cost, lanes, and the groups of lanes that step together.
struct Lanes {
    Pool kind = Pool::Aggregated;
    std::unique_ptr<StepCost> cost;
    std::vector<Rank> ranks;
    std::vector<std::vector<int>> groups;
    std::vector<char> busy;
    std::vector<double> stepStart;
    int64_t cap = 1, budget = 1;
    int q = 1;
    size_t next = 0; ///< round-robin position
    // Prefill pool: KV transfer per prompt token, bytes, and a replica's NIC bytes/s and latency.
    double kvBytesPerToken = 0, nicBytesPerS = 0, latencyS = 0;
};

struct Sim {
    const Scenario& s;
    const SimOptions& o;
    std::vector<TraceRequest> trace; ///< o.trace in arrival order
    Rng rng;
    LengthSampler inputLengths, outputLengths;
    std::vector<Req> reqs;
    Lanes pools[2]; ///< [0]: aggregated or prefill; [1]: decode (disaggregated)
    int nPools = 1;
    std::vector<double> acceptCum; ///< P(draft tokens accepted >= j), j = 1..K
    int bs = 16;

    // Arrivals.
    double nextArrival = kInf;
    int64_t arrived = 0;
    size_t traceAt = 0;
    double firstArrival = -1, lastArrival = 0;

    // Events: step ends (kind 0, id pool * 2^24 + group) and KV transfers done (kind 1, id request).
    struct Event {
        double t;
        int kind;
        int64_t id;
        bool operator>(const Event& e) const {
            if (t != e.t) return t > e.t;
            if (kind != e.kind) return kind > e.kind;
            return id > e.id;
        }
    };
    std::priority_queue<Event, std::vector<Event>, std::greater<Event>> events;

    double now = 0;
    int64_t completed = 0, inTransfer = 0, rejected = 0;
    double inFlightArea = 0, kvArea = 0, lastT = 0;
    std::vector<double> ttft, tpot, e2e;
    std::vector<std::pair<double, double>> doneTokens; ///< (time, output tokens so far) at each completion
    double tokensOut = 0, tokensIn = 0;
    int64_t metSlo = 0, preemptions = 0, blockedByKv = 0, steps = 0;
    double firstPreemption = -1;
    double kvPeak = 0;
    LogHistogram itl;
    std::vector<SimResult::Point> timeline;
    double sampleEvery = 0, nextSample = 0;

    Sim(const Scenario& sc, const SimOptions& op)
        : s(sc), o(op), trace(op.trace), rng(op.seed),
          inputLengths(sc.workload.inputLengths, sc.workload.inputTokens),
          outputLengths(sc.workload.outputLengths, sc.workload.outputTokens) {
        bs = std::max(1, op.blockTokens);
        std::stable_sort(trace.begin(), trace.end(), [](const TraceRequest& a, const TraceRequest& b) {
            return a.arrivalS < b.arrivalS;
        });
    }

    int64_t totalExpected() const {
        if (!trace.empty())
            return o.requests > 0 ? std::min<int64_t>(o.requests, int64_t(trace.size()))
                                  : int64_t(trace.size());
        return o.requests;
    }

    // ------------------------------------------------------------------ arrivals

    double gap() {
        if (o.burstCv <= 0 || std::abs(o.burstCv - 1.0) < 1e-12) return -std::log1p(-rng.uniform()) / o.rate;
        // Gamma gaps of shape k = 1 / cv^2 and mean 1 / rate. A CV under 0.01 (the CLI's bound) is taken as
        // 0.01: the shape stays finite (1e-160 made it infinite), and the gaps are regular to 1% either way.
        const double cv = std::max(o.burstCv, 0.01);
        const double k = 1.0 / (cv * cv);
        return drawGamma(rng, k) / (k * o.rate);
    }

    void scheduleArrival() {
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

    void arrive() {
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
        x.cached = int32_t(
            std::min<int64_t>(int64_t(std::floor(w.prefixCacheHit * x.input / bs)) * bs, x.input - 1));
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

    // ------------------------------------------------------------------ routing and queues

    int64_t blocksFor(int64_t tokens) const { return (tokens + bs - 1) / bs; }

    void enqueue(int pool, int32_t id) {
        Lanes& L = pools[pool];
        Req& x = reqs[size_t(id)];
        // A request whose whole context can never fit one lane's pool would wait (or be preempted) forever.
        const int64_t need =
            blocksFor(L.kind == Pool::Prefill ? int64_t(x.input) : int64_t(x.input) + x.output + L.q);
        int best = -1;
        if (o.routing == Routing::RoundRobin) {
            best = int(L.next++ % L.ranks.size());
        } else {
            for (size_t i = 0; i < L.ranks.size(); ++i)
                if (best < 0 || L.ranks[i].load() < L.ranks[size_t(best)].load()) best = int(i);
        }
        if (need > L.ranks[size_t(best)].capacity) {
            ++rejected, ++completed;
            return;
        }
        x.rank = best;
        L.ranks[size_t(best)].waiting.push_back(id);
        kick(pool, L.ranks[size_t(best)].group);
    }

    void kick(int pool, int g) {
        if (!pools[pool].busy[size_t(g)]) startStep(pool, g);
    }

    // ------------------------------------------------------------------ a step

    struct Sums {
        double dec = 0, ctx = 0, pre = 0, prompts = 0, pairs = 0;
    };

    void allocate(Rank& r, Req& x, int64_t blocks) {
        x.blocks += int32_t(blocks);
        r.used += blocks;
    }
    void release(Rank& r, Req& x) {
        r.used -= x.blocks;
        x.blocks = 0;
    }

    void preempt(Lanes& L, Rank& r) {
        const int32_t id = r.running.back();
        r.running.pop_back();
        Req& x = reqs[size_t(id)];
        release(r, x);
        // Recomputed as one prefill of the prompt and the output so far (vLLM's recompute preemption).
        if (x.decoding) x.promptLen = x.input + x.generated;
        x.decoding = false;
        x.computed = 0, x.ctx = 0, x.sched = 0;
        r.waiting.push_front(id);
        if (preemptions++ == 0) firstPreemption = now;
        (void)L;
    }

    /// Tokens and KV blocks a request needs for `n` more tokens this step.
    void plan(const Lanes& L, const Req& x, int64_t budget, int64_t& n, int64_t& needBlocks) const {
        if (x.decoding) {
            n = L.q;
            needBlocks = blocksFor(int64_t(x.ctx) + L.q) - x.blocks;
        } else {
            n = std::min<int64_t>(x.promptLen - x.computed, budget);
            needBlocks = blocksFor(int64_t(x.computed) + n) - x.blocks;
        }
    }

    void count(const Req& x, int64_t n, Sums& u) const {
        if (x.decoding) {
            u.dec += 1, u.ctx += x.ctx;
        } else {
            u.pre += double(n), u.prompts += 1;
            u.pairs += double(n) * (double(x.computed) + (double(n) + 1.0) / 2.0);
        }
    }

    /// One rank's part of a step, as vLLM V1's scheduler composes it: running requests first, then (unless
    /// one was preempted) waiting ones while the batch cap, the budget and the KV pool allow.
    Sums schedule(Lanes& L, Rank& r) {
        Sums u;
        int64_t budget = L.budget;
        bool preempted = false;
        for (size_t i = 0; i < r.running.size(); ++i) {
            Req& x = reqs[size_t(r.running[i])];
            x.sched = 0;
            if (budget <= 0 || (x.decoding && budget < L.q)) break;
            int64_t n = 0, need = 0;
            plan(L, x, budget, n, need);
            bool self = false;
            while (need > r.capacity - r.used) {
                preempted = true;
                const bool last = r.running.size() - 1 == i;
                preempt(L, r);
                if (last) {
                    self = true;
                    break;
                }
            }
            if (self) break;
            allocate(r, x, std::max<int64_t>(0, need));
            x.sched = int32_t(n);
            budget -= n;
            count(x, n, u);
        }
        if (preempted) return u;
        while (budget > 0 && int64_t(r.running.size()) < L.cap && !r.waiting.empty()) {
            const int32_t id = r.waiting.front();
            Req& x = reqs[size_t(id)];
            if (x.decoding && budget < L.q) break;
            if (!x.decoding && x.computed == 0) x.computed = x.cached;
            int64_t n = 0, need = 0;
            plan(L, x, budget, n, need);
            if (need > r.capacity - r.used) {
                ++blockedByKv;
                break;
            }
            r.waiting.pop_front();
            r.running.push_back(id);
            allocate(r, x, std::max<int64_t>(0, need));
            x.sched = int32_t(n);
            budget -= n;
            count(x, n, u);
        }
        return u;
    }

    void startStep(int pool, int g) {
        Lanes& L = pools[pool];
        const std::vector<int>& members = L.groups[size_t(g)];
        Sums all;
        double busiest = 0;
        for (int k : members) {
            const Sums u = schedule(L, L.ranks[size_t(k)]);
            all.dec += u.dec, all.ctx += u.ctx, all.pre += u.pre, all.prompts += u.prompts,
                all.pairs += u.pairs;
            busiest = std::max(busiest, u.dec * L.q + u.pre);
        }
        if (all.dec <= 0 && all.pre <= 0) {
            L.busy[size_t(g)] = 0;
            return;
        }
        const double r = double(members.size());
        StepLoad load;
        load.decodeSeqs = all.dec / r;
        load.decodeContext = all.dec > 0 ? all.ctx / all.dec : 0.0;
        load.prefillTokens = all.pre / r;
        load.prefillPrompts = all.prompts / r;
        load.prefillContext = all.pre > 0 ? all.pairs / all.pre : 0.0;
        load.busiestPrefill = r > 1 ? busiest - load.decodeSeqs * L.q : -1.0;
        const double dt = std::max(1e-9, L.cost->seconds(load));
        L.busy[size_t(g)] = 1;
        L.stepStart[size_t(g)] = now;
        events.push({now + dt, 0, (int64_t(pool) << 24) + g});
        ++steps;
        sampleKv();
    }

    // ------------------------------------------------------------------ tokens and completions

    int accepted() {
        if (acceptCum.empty()) return 0;
        const double u = rng.uniform();
        int a = 0;
        while (a < int(acceptCum.size()) && u < acceptCum[size_t(a)]) ++a;
        return a;
    }

    /// `k` output tokens of x at time t. `bulk`: where the gaps of requests that emitted at the start of
    /// the step being applied (m_stepStart) are counted, by tokens emitted, to be added at once.
    void emit(Req& x, int k, double t, std::array<double, 16>* bulk) {
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
    double m_stepStart = -1; ///< the start of the step being applied

    void finish(Rank& r, Req& x, double t) {
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
        const bool ok = (w.ttftMs <= 0 || first * 1e3 <= w.ttftMs) &&
                        (w.tpotMs <= 0 || x.output < 2 || perToken <= w.tpotMs);
        metSlo += ok;
        doneTokens.emplace_back(t, tokensOut);
    }

    void endStep(int pool, int g) {
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

    void startTransfer(Lanes& L, Rank& r, int32_t id) {
        Req& x = reqs[size_t(id)];
        const double start = std::max(now, r.linkFree);
        const double seconds = double(x.input) * L.kvBytesPerToken / L.nicBytesPerS + L.latencyS;
        r.linkFree = start + seconds;
        ++inTransfer;
        events.push({r.linkFree, 1, id});
    }

    void endTransfer(int32_t id) {
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

    void finishNoRank(Req& x, double t) {
        Rank dummy;
        dummy.used = x.blocks;
        finish(dummy, x, t);
    }

    // ------------------------------------------------------------------ time

    void sampleKv() {
        const Lanes& L = pools[nPools - 1];
        int64_t used = 0, cap = 0;
        for (const Rank& r : L.ranks) used += r.used, cap += r.capacity;
        if (cap > 0) kvPeak = std::max(kvPeak, double(used) / double(cap));
    }

    void advance(double t) {
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

    bool run(const SimProgressFn& progress, std::stop_token stop) {
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
};

/// Lanes of one pool: pp micro-batch lanes of each of dp replicas, grouped by the replicas that step
/// together.
void buildLanes(Lanes& L, const Scenario& s, const CostModel& model, const Plan& plan, const Metrics& m,
                const SimOptions& o, Pool kind, int replicas) {
    L.kind = kind;
    L.cost = std::make_unique<StepCost>(model, plan);
    L.q = L.cost->tokensVerified();
    L.budget = std::max<int64_t>(L.q, L.cost->tokenBudget());
    L.cap = o.batchCap > 0 ? o.batchCap : std::max<int64_t>(1, m.batch);
    const int pp = std::max(1, plan.degrees.pp);
    const int bs = std::max(1, o.blockTokens);
    const int64_t blocks =
        o.kvBlocks > 0 ? o.kvBlocks
                       : int64_t(std::floor(L.cost->kvTokens(double(m.batch)) / double(pp) / double(bs)));
    const int lock = std::min(replicas, L.cost->lockstepReplicas());
    L.ranks.resize(size_t(replicas * pp));
    for (int lane = 0; lane < pp; ++lane)
        for (int rep = 0; rep < replicas; ++rep) {
            const int k = lane * replicas + rep;
            Rank& r = L.ranks[size_t(k)];
            r.capacity = std::max<int64_t>(0, blocks);
            const int g = lane * ((replicas + lock - 1) / lock) + rep / lock;
            if (size_t(g) >= L.groups.size()) L.groups.resize(size_t(g) + 1);
            L.groups[size_t(g)].push_back(k);
            r.group = g;
        }
    L.busy.assign(L.groups.size(), 0);
    L.stepStart.assign(L.groups.size(), 0.0);
    (void)s;
}

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
    r.timeline = std::move(sim.timeline);
    const Lanes& L = sim.pools[sim.nPools - 1];
    r.lanes = int64_t(L.ranks.size());
    r.batchCap = L.cap;
    r.kvBlocksPerLane = L.ranks.empty() ? 0 : L.ranks.front().capacity;
    r.tokenBudget = L.budget;
    r.blockTokens = sim.bs;
    if (sim.rejected > 0)
        r.error = std::to_string(sim.rejected) + " requests longer than a lane's KV pool were turned away";
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
    P.latencyS = s.cluster.interNode.latencyUs * 1e-6;
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
