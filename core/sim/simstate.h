#pragma once
// The serving simulation's state, shared by its files: simulator.cpp (the event loop), scheduler.cpp (what
// each step runs) and simstats.cpp (the result summary). Internal to core/sim.

#include "core/cost/stepcost.h"
#include "core/sim/draws.h"
#include "core/sim/simstats.h"
#include "core/sim/simulator.h"

#include <algorithm>
#include <array>
#include <deque>
#include <limits>
#include <memory>
#include <queue>
#include <vector>

namespace sp::simimpl {

constexpr double kInf = std::numeric_limits<double>::infinity();

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
    /// Whose scheduler composes the steps: the scenario's engine (Constraints::memoryRule, the engine the
    /// plan is exported for). scheduler.cpp says what each one does.
    MemoryRule engine = MemoryRule::Vllm;
    size_t next = 0; ///< round-robin position
    /// The pipeline: a replica's pp micro-batch lanes (groups g, g + G, ..., G groups a lane) pass through
    /// the same pp stages, one micro-batch at a time in each: stageFree[(g % G) pp + i] is when stage i of
    /// group g's replicas is next free. A step's stage i starts once its stage i - 1 is done and stage i is
    /// free, so a micro-batch that carries a prompt's chunk holds up the others behind it.
    int pp = 1, groupsPerLane = 1;
    std::vector<double> stageFree;
    std::vector<double> stageTimes; ///< scratch: the step's seconds per stage
    /// The rank of micro-batch `lane` of the replica that rank k belongs to (ranks are lane x replicas +
    /// replica).
    size_t laneRank(int lane, size_t k) const {
        const size_t replicas = ranks.size() / size_t(pp);
        return size_t(lane) * replicas + k % replicas;
    }
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
    int64_t metSlo = 0, preemptions = 0, blockedByKv = 0, steps = 0, mixedSteps = 0;
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

    // Defined in scheduler.cpp: routing and queues, and a step; in simulator.cpp: the rest.

    // ------------------------------------------------------------------ arrivals

    double gap();
    void scheduleArrival();
    void arrive();

    // ------------------------------------------------------------------ routing and queues

    int64_t blocksFor(int64_t tokens) const { return (tokens + bs - 1) / bs; }

    void enqueue(int pool, int32_t id);
    void gatherWaiting(Lanes& L, Rank& r);

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

    void preempt(Lanes& L, Rank& r);
    void plan(const Lanes& L, const Req& x, int64_t budget, int64_t& n, int64_t& needBlocks) const;
    void count(const Req& x, int64_t n, Sums& u) const;
    Sums schedule(Lanes& L, Rank& r);
    /// SGLang's prefill batch: the prompt being chunked and waiting requests, no decoding one.
    Sums schedulePrefillOnly(Lanes& L, Rank& r);
    /// Admits waiting requests into the step while the batch cap, the budget and the KV pool allow.
    void admit(Lanes& L, Rank& r, int64_t& budget, Sums& u);
    void startStep(int pool, int g);

    // ------------------------------------------------------------------ tokens and completions

    int accepted();
    void emit(Req& x, int k, double t, std::array<double, 16>* bulk);
    double m_stepStart = -1; ///< the start of the step being applied
    void finish(Rank& r, Req& x, double t);
    void endStep(int pool, int g);

    // ------------------------------------------------------------------ disaggregated: the KV transfer

    void startTransfer(Lanes& L, Rank& r, int32_t id);
    void endTransfer(int32_t id);
    void finishNoRank(Req& x, double t);

    // ------------------------------------------------------------------ time

    void sampleKv();
    void advance(double t);
    bool run(const SimProgressFn& progress, std::stop_token stop);
};

void buildLanes(Lanes& L, const Scenario& s, const CostModel& model, const Plan& plan, const Metrics& m,
                const SimOptions& o, Pool kind, int replicas);

} // namespace sp::simimpl
