#pragma once
// The request-level serving simulation: a discrete-event replay of requests arriving at a plan, step by step
// with the cost model (core/cost/stepcost.h), for percentiles, goodput and capacity (DESIGN.md section 7: the
// analytical steady state ranks plans; this checks the chosen ones under arrivals, length distributions,
// chunked prefill, KV allocation and preemption).
//
// What it models, per replica (a data-parallel rank; with pipeline parallelism each of its pp micro-batches
// is a lane of its own, with 1/pp of the replica's KV pool), as the scenario's engine runs continuous batching
// (scheduler.cpp: TensorRT-LLM holds each request's whole context from admission, SGLang never mixes prefill
// and decode in a step; below, vLLM V1, whose composition TensorRT-LLM shares):
//  - a step first carries the running requests in admission order: each decoding one verifies K + 1 tokens
//    (1 without speculative decoding), each one still prefilling takes its next chunk of the token budget
//    left (the plan's prefill budget, vLLM's max_num_batched_tokens); then waiting requests are admitted in
//    arrival order while the batch cap (the plan's batch, max_num_seqs) and the budget allow;
//  - KV blocks of 16 tokens (vLLM's default --block-size, vllm/config/cache.py) are allocated as a request's
//    tokens enter the cache and freed when it finishes; the pool is what the engine's memory rule leaves
//    (Metrics::kvPoolGiB) over the plan's KV bytes per token. A waiting request that does not fit waits; a
//    running one that cannot grow preempts the latest admitted running request, which frees its blocks and
//    goes back to the front of the queue to be recomputed (prompt and output so far as one prefill), as
//    vLLM's scheduler does (`self.running.pop()`, `self.waiting.prepend_request`);
//  - a step's time is the cost model's at the step's composition: decoding sequences and their mean context,
//    prefill tokens, prompts and their attended context (StepCost); replicas that meet at every MoE
//    all-to-all (data-parallel attention) step together, at the pace of the busiest;
//  - speculative decoding: each decoding sequence accepts a draw of draft tokens a step at the workload's
//    acceptance rates (draft i accepted given the ones before, a_i), and yields that many plus one;
//  - a prefix-cache hit share skips that share of each prompt's prefill (whole blocks; its KV is still held).
// Disaggregated plans: a prefill pool (prefill-only steps), each finished prompt's KV queued on its prefill
// replica's NICs (the DisaggModel's transfer rate), then a decode pool that admits the request decoding.
//
// Deterministic for a seed: one xoshiro stream (core/search/rng.h) draws arrivals, lengths and acceptances in
// event order; ties between events break by kind and index.

#include "core/cost/costmodel.h"
#include "core/cost/disagg.h"
#include "core/model/disaggplan.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <stop_token>
#include <string>
#include <vector>

namespace sp {

/// One request of a trace: arrival (seconds from the trace's start), prompt and output tokens.
struct TraceRequest {
    double arrivalS = 0;
    int64_t inputTokens = 0, outputTokens = 0;
    bool operator==(const TraceRequest&) const = default;
};

enum class Routing { LeastLoaded, RoundRobin };

struct SimOptions {
    /// Requests per second drawn as a renewal process: exponential gaps (Poisson) at burstCv 1, gamma gaps
    /// of that coefficient of variation otherwise (above 1: bursty). Ignored when `trace` is given.
    double rate = 0;
    double burstCv = 1;
    /// Replayed arrivals and lengths (the workload's prefix-cache share still applies).
    std::vector<TraceRequest> trace;
    /// Requests drawn (or the trace's first); with duration, whichever ends first. 0 with duration: no limit.
    int64_t requests = 1000;
    double duration = 0; ///< seconds of arrivals; 0: no limit
    uint64_t seed = 1;
    Routing routing = Routing::LeastLoaded;
    int blockTokens = 16; ///< vLLM's default --block-size (vllm/config/cache.py, CacheConfig.block_size)
    int64_t batchCap = 0; ///< sequences per micro-batch; 0: the plan's (Metrics::batch)
    int64_t kvBlocks = 0; ///< KV blocks per lane; 0: the plan's pool (StepCost::kvTokens / pp / blockTokens)
    int timelinePoints = 200; ///< samples of queue length and KV occupancy over the run
    /// TensorRT-LLM's capacity scheduler policy (SchedulerConfig.capacity_scheduler_policy): its default
    /// holds each request's blocks from admission to completion; MAX_UTILIZATION admits what fits now and
    /// pauses the latest request when the pool runs out, as vLLM does (NVIDIA's MLPerf harness runs it:
    /// 'max_util').
    enum class TrtllmCapacity {
        GuaranteedNoEvict,
        MaxUtilization
    } trtllmCapacity = TrtllmCapacity::GuaranteedNoEvict;
};

struct SimProgress {
    int64_t arrived = 0, completed = 0, total = 0; ///< total: requests expected (0: unknown)
    double simSeconds = 0;
};
using SimProgressFn = std::function<void(const SimProgress&)>;

/// A distribution's summary; nearest-rank percentiles.
struct Percentiles {
    double mean = 0, p50 = 0, p90 = 0, p99 = 0, max = 0;
    int64_t count = 0;
};

struct SimResult {
    bool ok = false;
    std::string error;    ///< why it could not run (an invalid plan, no arrivals)
    bool stopped = false; ///< the stop token ended it early: the figures cover what completed
    std::string plan;     ///< what ran, in words ("32 replicas of batch 75 ...")
    int64_t requests = 0, completed = 0;
    /// Per request: TTFT (arrival to first token), TPOT ((end - first token) / (output - 1), requests of two
    /// or more output tokens), end-to-end; per token: inter-token latency (the gap between a request's
    /// consecutive emissions, shared among the tokens of a speculative step).
    Percentiles ttftMs, tpotMs, itlMs, e2eMs;
    /// Sorted per-request values for CDFs and percentile checks.
    std::vector<double> ttftSortedMs, tpotSortedMs;
    double durationS = 0;   ///< first arrival to last completion
    double offeredRate = 0; ///< requests/s arrived (arrivals over their span)
    double requestsPerS = 0, outputTokensPerS = 0, totalTokensPerS = 0;
    /// Output tokens/s between the completions of the first and the third quarter of the requests: the
    /// sustained rate, without the ramp-up and the drain.
    double sustainedOutputTokensPerS = 0;
    /// Requests meeting every SLO of the workload (TTFT and TPOT, each where set), per second and as a share.
    double goodputRequestsPerS = 0, sloAttainment = 0;
    /// Time-average of requests in the system (arrived, not finished): Little's law says rate x mean latency.
    double meanInFlight = 0;
    int64_t preemptions = 0;
    double firstPreemptionS =
        -1; ///< when the first preemption happened (seconds from the first arrival); -1: none
    int64_t admissionsBlockedByKv = 0; ///< steps where a waiting request did not fit the KV pool
    double kvPeakShare = 0, kvMeanShare = 0;
    int64_t steps = 0; ///< forward passes simulated (all lanes)
    /// Steps that carried both prefill and decode tokens (0 under SGLang's scheduler, whose steps are one or
    /// the other).
    int64_t mixedSteps = 0;
    /// Whose scheduler composed the steps: "vLLM V1", "SGLang" or "TensorRT-LLM" (the scenario's engine).
    std::string scheduler;
    struct Point {
        double t = 0;        ///< seconds from the first arrival
        int64_t waiting = 0; ///< requests queued (all replicas; disaggregated: both pools and the transfer)
        int64_t running = 0; ///< requests in batches
        double kvShare = 0;  ///< KV blocks in use over the pool (aggregated or the decode pool)
    };
    std::vector<Point> timeline;
    /// The setup: lanes (replicas x micro-batches; disaggregated: of the decode pool), the batch cap and KV
    /// blocks per lane, the token budget; the steady step the cost model prices at the batch cap.
    int64_t lanes = 0, batchCap = 0, kvBlocksPerLane = 0, tokenBudget = 0;
    int blockTokens = 0;
};

/// The simulation of `plan` serving the scenario's workload (aggregated: prefill and decode on the same
/// replicas). The plan must be valid; an invalid one gives a result with ok false and the reason. progress
/// is called now and then from this thread; stop ends the run early (the result says so).
std::shared_ptr<const SimResult> simulate(const Scenario& scenario, const Plan& plan,
                                          const SimOptions& options, const SimProgressFn& progress = {},
                                          std::stop_token stop = {});
std::shared_ptr<const SimResult> simulate(const CostModel& model, const Plan& plan, const SimOptions& options,
                                          const SimProgressFn& progress = {}, std::stop_token stop = {});
/// A disaggregated plan: prefill pool, KV transfer over the prefill replica's NICs, decode pool.
std::shared_ptr<const SimResult> simulate(const DisaggModel& model, const DisaggPlan& plan,
                                          const SimOptions& options, const SimProgressFn& progress = {},
                                          std::stop_token stop = {});

/// The SLO check of a simulation against the workload's SLOs at its percentile (Workload::sloPercentile; 0:
/// the mean): met, and the ratio of each figure to its limit (> 1: missed).
struct SloCheck {
    bool met = true;
    double ttftRatio = 0, tpotRatio = 0; ///< 0 where the workload sets no limit
    double ttftMs = 0, tpotMs = 0;       ///< the figures checked
    std::string binding;                 ///< "ttft" or "tpot": the larger ratio ("" without SLOs)
};
SloCheck checkSlo(const SimResult& r, const Workload& w);
/// The value at percentile p (0 < p <= 100) of sorted values, nearest rank; the mean at p = 0.
double percentileOf(const std::vector<double>& sorted, double p);

} // namespace sp
