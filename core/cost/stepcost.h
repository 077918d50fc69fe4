#pragma once
// One forward pass's time at any composition, for a request-level simulation (core/sim): the cost model's
// own step (costmodel.h's atBatch prices the steady one) with the attention core's context terms set from
// what the pass really carries. A plan is compiled once; a call is one pass through the plan's terms.

#include "core/cost/costmodel.h"

#include <memory>

namespace sp {

/// What one forward pass of a replica's micro-batch carries, as continuous batching composes it.
struct StepLoad {
    double decodeSeqs = 0;     ///< sequences decoding (each verifies K + 1 tokens under speculative decoding)
    double decodeContext = 0;  ///< their mean context: the tokens in the cache each one's attention reads
    double prefillTokens = 0;  ///< prompt tokens prefilled (whole prompts or chunks)
    double prefillPrompts = 0; ///< the prompts those tokens belong to
    /// Mean keys a prefill token attends to: a chunk of c tokens after o tokens already in the cache attends
    /// o + (c + 1) / 2 on average; a whole prompt of S, (S + 1) / 2.
    double prefillContext = 0;
    /// Data-parallel attention (ranks that meet at every MoE all-to-all and so step together): the busiest
    /// rank's tokens less the mean decode tokens, the prefill it is priced with (Step::preCrit); the fields
    /// above are then means over the ranks. Below prefillTokens (the default -1): prefillTokens.
    double busiestPrefill = -1;
};

/// A plan's step time at any composition. Built from a CostModel (which must outlive it) and a plan that is
/// valid for its scenario. Not thread-safe (it keeps the compiled plan as scratch): one per thread.
///
/// seconds() is the cost model's step (Metrics::stepMs): max(pp x slowest stage, sum of stages) of the pass,
/// every operator on its roofline at the pass's tokens. The attention core is the only operator whose work
/// depends on context: its per-sequence terms, compiled at the workload's mean context (decode: I + O/2;
/// prefill: causal over I), are scaled to the load's (decode: linear in the context read; prefill: in the
/// key-query pairs and the keys written). Sliding-window and linear-attention layers scale alike (their
/// window's share of the mean context is kept), an approximation where contexts differ much from the mean.
/// At steadyLoad(B) it gives exactly the step evaluate() prices at batch B.
class StepCost {
public:
    StepCost(const CostModel& model, const Plan& plan);
    ~StepCost();
    StepCost(StepCost&&) noexcept;
    StepCost& operator=(StepCost&&) noexcept;

    /// Seconds of one step through the pipeline; 0 for an empty step.
    double seconds(const StepLoad& load) const;
    /// Pipeline stages of the plan (pp).
    int stages() const;
    /// Each stage's seconds of the pass (its layers, the boundary's send to the next stage; the last stage
    /// also the head and any speculative draft), into out[0, stages()): a simulation that runs the pp
    /// micro-batches of a replica through the same stages uses them; seconds() is max(pp x the slowest, their
    /// sum), the cycle when every micro-batch carries the same. All zeros for an empty step.
    void stageSeconds(const StepLoad& load, double* out) const;
    /// The composition evaluate() prices at B sequences per micro-batch (stepAt): B decoding at the mean
    /// context, and the B E / O prompts that replace the finished ones prefilled whole.
    StepLoad steadyLoad(double batch) const;

    /// Tokens per pass the plan runs with (the prefill budget: vLLM's max_num_batched_tokens).
    int64_t tokenBudget() const;
    /// Tokens a decoding sequence verifies per step: K + 1 under speculative decoding, else 1.
    int tokensVerified() const;
    /// Replicas that meet at every MoE all-to-all (data-parallel attention whose experts span them), and so
    /// step together at the pace of the busiest: the load's fields are then means over them. 1 otherwise.
    int lockstepReplicas() const;
    /// KV-cache tokens a replica holds (all its micro-batches together) in the pool the engine's memory rule
    /// leaves at B sequences per micro-batch: the pool of each kind of stage over its KV bytes per token per
    /// GPU (its layers' KV, a speculative draft's on the last stage), the smallest.
    double kvTokens(double batch) const;

    struct Impl;

private:
    std::unique_ptr<Impl> d;
};

} // namespace sp
