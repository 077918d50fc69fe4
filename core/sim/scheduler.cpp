// The simulation's scheduler: where a request queues, and what each step runs (admission, batching,
// chunked prefill, preemption), as the scenario's engine composes a step; and the lanes it fills.
//  - vLLM V1 (vllm/v1/core/sched/scheduler.py): the running requests first, each decoding one a token, each
//    prefilling one its next chunk of the token budget; then waiting ones while the budget, the batch cap and
//    the KV pool allow; a running request that cannot grow preempts the latest admitted (recompute).
//  - TensorRT-LLM: the same composition under its default capacity policy, GUARANTEED_NO_EVICT
//    (SchedulerConfig.capacity_scheduler_policy, tensorrt_llm/llmapi/llm_args.py at fcd3f316): a request is
//    admitted only when the blocks for its whole prompt and output are free, and they are held from
//    admission, so nothing is ever preempted and the pool admits fewer requests than it could hold at once.
//  - SGLang: prefill first, batches not mixed (Scheduler.get_next_batch_to_run, python/sglang/srt/managers/
//    scheduler.py at d51c1c21: a prefill batch of the chunked prompt and new requests runs whenever one can
//    be formed, decoding only when none can; --enable-mixed-chunk is off by default): a step is all prefill
//    or all decode, so arrivals pause the decoding requests for their prefill.

#include "core/sim/simstate.h"

#include <algorithm>
#include <cmath>

namespace sp::simimpl {

// ------------------------------------------------------------------ routing and queues

void Sim::enqueue(int pool, int32_t id) {
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
    // With a pipeline, an idle micro-batch of the same replica may take it (gatherWaiting).
    if (L.pp > 1)
        for (int lane = 0; lane < L.pp; ++lane) kick(pool, L.ranks[L.laneRank(lane, size_t(best))].group);
}

// ------------------------------------------------------------------ a step

void Sim::preempt(Lanes& L, Rank& r) {
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
void Sim::plan(const Lanes& L, const Req& x, int64_t budget, int64_t& n, int64_t& needBlocks) const {
    if (x.decoding) {
        n = L.q;
        needBlocks = blocksFor(int64_t(x.ctx) + L.q) - x.blocks;
    } else {
        n = std::min<int64_t>(x.promptLen - x.computed, budget);
        needBlocks = blocksFor(int64_t(x.computed) + n) - x.blocks;
    }
}

void Sim::count(const Req& x, int64_t n, Sums& u) const {
    if (x.decoding) {
        u.dec += 1, u.ctx += x.ctx;
    } else {
        u.pre += double(n), u.prompts += 1;
        u.pairs += double(n) * (double(x.computed) + (double(n) + 1.0) / 2.0);
    }
}

/// One rank's part of a step, as vLLM V1's scheduler composes it: running requests first, then (unless
/// one was preempted) waiting ones while the batch cap, the budget and the KV pool allow.
Sim::Sums Sim::schedule(Lanes& L, Rank& r) {
    if (L.engine == MemoryRule::Sglang && L.kind == Pool::Aggregated) {
        const Sums p = schedulePrefillOnly(L, r);
        if (p.pre > 0) return p;
    }
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
    if (preempted || L.engine == MemoryRule::Sglang) return u; // SGLang: a decode batch admits nobody
    if (L.pp > 1) gatherWaiting(L, r);
    admit(L, r, budget, u);
    return u;
}

/// A replica's pp micro-batches are composed by one scheduler from one queue (vLLM V1 schedules each batch of
/// its pipeline's batch queue from every request not in flight; TensorRT-LLM's micro-batches alike): the
/// micro-batch composed now takes the replica's waiting requests, whichever lane they queued at, as many as
/// its batch cap leaves room for (the rest stay where the next micro-batch composed finds them). Those that
/// hold no blocks move to this lane's queue, in arrival order; a request already running stays in its lane.
void Sim::gatherWaiting(Lanes& L, Rank& r) {
    const size_t k = size_t(&r - L.ranks.data());
    int64_t room = L.cap - int64_t(r.running.size() + r.waiting.size());
    bool moved = false;
    for (int lane = 0; lane < L.pp && room > 0; ++lane) {
        Rank& o = L.ranks[L.laneRank(lane, k)];
        if (&o == &r) continue;
        for (auto it = o.waiting.begin(); it != o.waiting.end() && room > 0;) {
            Req& x = reqs[size_t(*it)];
            if (x.blocks != 0) {
                ++it;
                continue;
            }
            x.rank = int32_t(k);
            r.waiting.push_back(*it);
            it = o.waiting.erase(it);
            moved = true, --room;
        }
    }
    if (moved) std::stable_sort(r.waiting.begin(), r.waiting.end()); // ids are in arrival order
}

void Sim::admit(Lanes& L, Rank& r, int64_t& budget, Sums& u) {
    // TensorRT-LLM holds each admitted request's blocks to its last token (decoding pools hold the output's;
    // a prefill pool hands the prompt's KV on).
    const bool reserve = L.engine == MemoryRule::Trtllm && L.kind != Pool::Prefill &&
                         o.trtllmCapacity == SimOptions::TrtllmCapacity::GuaranteedNoEvict;
    while (budget > 0 && int64_t(r.running.size()) < L.cap && !r.waiting.empty()) {
        const int32_t id = r.waiting.front();
        Req& x = reqs[size_t(id)];
        if (x.decoding && budget < L.q) break;
        if (!x.decoding && x.computed == 0) x.computed = x.cached;
        int64_t n = 0, need = 0;
        plan(L, x, budget, n, need);
        if (reserve) need = blocksFor(int64_t(x.input) + x.output + L.q) - x.blocks;
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
}

Sim::Sums Sim::schedulePrefillOnly(Lanes& L, Rank& r) {
    Sums u;
    int64_t budget = L.budget;
    for (int32_t id : r.running) reqs[size_t(id)].sched = 0;
    // The prompt being chunked goes on first (SGLang's chunked_req), then new requests.
    for (int32_t id : r.running) {
        Req& x = reqs[size_t(id)];
        if (x.decoding || budget <= 0) continue;
        int64_t n = 0, need = 0;
        plan(L, x, budget, n, need);
        if (need > r.capacity - r.used) break;
        allocate(r, x, std::max<int64_t>(0, need));
        x.sched = int32_t(n);
        budget -= n;
        count(x, n, u);
    }
    admit(L, r, budget, u);
    return u;
}

void Sim::startStep(int pool, int g) {
    Lanes& L = pools[pool];
    const std::vector<int>& members = L.groups[size_t(g)];
    Sums all;
    double busiest = 0;
    for (int k : members) {
        const Sums u = schedule(L, L.ranks[size_t(k)]);
        all.dec += u.dec, all.ctx += u.ctx, all.pre += u.pre, all.prompts += u.prompts, all.pairs += u.pairs;
        busiest = std::max(busiest, u.dec * L.q + u.pre);
    }
    if (all.dec <= 0 && all.pre <= 0) {
        L.busy[size_t(g)] = 0;
        return;
    }
    if (all.dec > 0 && all.pre > 0) ++mixedSteps;
    const double r = double(members.size());
    StepLoad load;
    load.decodeSeqs = all.dec / r;
    load.decodeContext = all.dec > 0 ? all.ctx / all.dec : 0.0;
    load.prefillTokens = all.pre / r;
    load.prefillPrompts = all.prompts / r;
    load.prefillContext = all.pre > 0 ? all.pairs / all.pre : 0.0;
    load.busiestPrefill = r > 1 ? busiest - load.decodeSeqs * L.q : -1.0;
    double dt;
    if (L.pp > 1) {
        // Through the replica's stages in turn, each taken when the micro-batch ahead leaves it (see Lanes).
        L.cost->stageSeconds(load, L.stageTimes.data());
        double* freeAt = L.stageFree.data() + size_t(g % L.groupsPerLane) * size_t(L.pp);
        double t = now;
        for (int i = 0; i < L.pp; ++i) {
            t = std::max(t, freeAt[i]) + L.stageTimes[size_t(i)];
            freeAt[i] = t;
        }
        dt = std::max(1e-9, t - now);
    } else {
        dt = std::max(1e-9, L.cost->seconds(load));
    }
    L.busy[size_t(g)] = 1;
    L.stepStart[size_t(g)] = now;
    events.push({now + dt, 0, (int64_t(pool) << 24) + g});
    ++steps;
    sampleKv();
}

/// Lanes of one pool: pp micro-batch lanes of each of dp replicas, grouped by the replicas that step
/// together.
void buildLanes(Lanes& L, const Scenario& s, const CostModel& model, const Plan& plan, const Metrics& m,
                const SimOptions& o, Pool kind, int replicas) {
    L.kind = kind;
    L.engine = s.constraints.memoryRule;
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
    L.pp = L.cost->stages();
    L.groupsPerLane = std::max(1, (replicas + lock - 1) / lock);
    L.stageFree.assign(size_t(L.groupsPerLane) * size_t(L.pp), 0.0);
    L.stageTimes.assign(size_t(L.pp), 0.0);
}

} // namespace sp::simimpl
