// Memory per GPU per stage, and the batch limits of memory and of the token budget.

#include "core/cost/impl.h"

namespace sp {

/// The largest B whose step fits the token budget (serving: B (1 + I / O); prefill: B I, where one
/// prompt longer than the budget runs in chunks; decode: B).
int64_t CostModel::Impl::budgetBatchLimit(const Compiled& c) const {
    const Workload& w = s.workload;
    const double I = double(w.inputTokens), O = double(w.outputTokens);
    // Speculative decoding: a sequence verifies q = K + 1 tokens a step, and B E / O prompts start a step.
    double lim = c.budget / c.specQ;
    if (w.phase == Phase::Prefill) lim = c.budget / I;
    if (w.phase == Phase::Serving)
        lim = c.specQ == 1.0 && c.specE == 1.0 ? c.budget * O / (I + O)
                                               : c.budget / (c.specQ + c.specE * I / O);
    return std::max<int64_t>(1, int64_t(std::floor(lim + 1e-9)));
}

/// KV context held per sequence: what it has written (paged caches: input + output / 2 on average in
/// serving and decode) or the worst case (input + output).
double CostModel::Impl::kvContext() const {
    const Workload& w = s.workload;
    if (w.phase == Phase::Prefill) return double(w.inputTokens);
    return w.kvReservation == Workload::KvReservation::Worst ? ctxMax : ctxDecode;
}

/// Bytes per GPU of stage i: fixed + perSeq * B. Activations: the body's per token of the largest pass
/// (serving: the token budget, as engines size activations by profiling a pass of max_num_batched_tokens);
/// logits only for the positions that are sampled (one per sequence).
void CostModel::Impl::stageMemory(const Compiled& c, int i, double& fixed, double& perSeq, double& weights,
                                  double& kvPerSeq) const {
    const Workload& w = s.workload;
    const Stage& st = c.stages[size_t(i)];
    // Each slot's weights and KV (or linear-attention state) times the stage's layers of that slot.
    const int pass = w.phase == Phase::Decode ? 0 : 1;
    double layerWeights = 0.0, kvLayers = 0.0, body = 0.0;
    for (int k = 0; k < c.nSlots; ++k) {
        layerWeights += st.n[k] * c.body[k][0].weights();
        kvLayers += st.n[k] * c.kv[k] * attnScale[slotType[k]].kvHeld;
        if (st.n[k] > 0) body = std::max(body, c.body[k][pass].actBytesPerTok);
    }
    weights = layerWeights + (st.first ? c.emb[0].weights() : 0.0) + (st.last ? c.head[0].weights() : 0.0);
    // Speculative decoding: the draft (MTP module, EAGLE-3 head or draft model) and its KV sit on the last
    // stage; every layer keeps K more slots a sequence for the tokens in verification.
    double draftKv = 0.0;
    if (st.last && c.spec.on()) {
        double draftWeights = 0.0;
        draftMemory(c, draftWeights, draftKv);
        weights += draftWeights;
    }
    // Every in-flight sequence (pp micro-batches of B) keeps the KV of this stage's layers.
    const double held = kvContext() + double(c.spec.on() ? c.spec.draftTokens : 0);
    kvPerSeq = double(c.d.pp) * held * (kvLayers + draftKv);
    const double logits = st.last ? c.head[pass].actBytesPerTok : 0.0;
    fixed = weights + kReserveBytes;
    perSeq = kvPerSeq + logits;
    switch (w.phase) {
    case Phase::Prefill:
        perSeq += body * double(w.inputTokens);
        break;
    case Phase::Decode:
        perSeq += body * c.specQ;
        break;
    case Phase::Serving:
        fixed += body * c.budget;
        break;
    }
}

// ------------------------------------------------------------------ the engines' memory rules
//
// With M the GPU's memory as the driver reports it, w the stage's weights, a(B) its activations and r the
// reserve (CUDA context, NCCL buffers), KV(B) the cache of B sequences:
//  - vLLM: w + a(B) + r + KV(B) <= f M (gpu_memory_utilization f: "the fraction of GPU memory to be used for
//    the model executor", the KV cache getting what the profiled weights and activations leave of it);
//  - SGLang: w + KV(B) <= f M (mem_fraction_static f: "(model weights + KV cache pool) / GPU memory
//    capacity"), and a(B) + r <= (1 - f) M, the rest it keeps for activations and CUDA graphs;
//  - TensorRT-LLM: KV(B) <= f (M - w - a - r) (free_gpu_memory_fraction f of the memory free after the
//    weights and the activations are allocated).

double CostModel::Impl::stageBatchLimit(const Compiled& c, double fixed, double perSeq, double weights,
                                        double kvPerSeq) const {
    const double f = c.memFraction, M = totalBytes;
    const double actFixed = fixed - weights, actPer = perSeq - kvPerSeq; // activations and the reserve
    double b = 0;
    switch (s.constraints.memoryRule) {
    case MemoryRule::Vllm:
        b = (f * M - fixed) / perSeq;
        break;
    case MemoryRule::Trtllm:
        b = (M - fixed) / (actPer + kvPerSeq / f);
        break;
    case MemoryRule::Sglang:
        b = kvPerSeq > 0 ? (f * M - weights) / kvPerSeq : double(kMaxBatch);
        if (actPer > 0)
            b = std::min(b, ((1.0 - f) * M - actFixed) / actPer);
        else if (actFixed > (1.0 - f) * M)
            b = 0;
        break;
    }
    return b < 1.0 ? -1.0 : std::floor(b);
}

void CostModel::Impl::stageCapacity(const Compiled& c, double fixed, double perSeq, double weights,
                                    double kvPerSeq, double B, double& capacity, double& pool) const {
    const double f = c.memFraction, M = totalBytes;
    const double act = (fixed - weights) + (perSeq - kvPerSeq) * B;
    switch (s.constraints.memoryRule) {
    case MemoryRule::Vllm:
        capacity = f * M, pool = f * M - weights - act;
        break;
    case MemoryRule::Trtllm:
        pool = f * (M - weights - act), capacity = weights + act + pool;
        break;
    case MemoryRule::Sglang:
        capacity = M, pool = f * M - weights;
        break;
    }
}

int64_t CostModel::Impl::memoryBatchLimit(const Compiled& c) const {
    // Alike stages need alike memory: each class once (see classifyStages).
    double best = double(kMaxBatch);
    for (const int i : c.classStage) {
        double fixed, perSeq, wts, kv;
        stageMemory(c, i, fixed, perSeq, wts, kv);
        const double b = stageBatchLimit(c, fixed, perSeq, wts, kv);
        if (b < 1.0) return 0;
        best = std::min(best, b);
    }
    return int64_t(best);
}

void CostModel::Impl::fillMemory(const Compiled& c, double B, Metrics& m) const {
    double worst = -1;
    for (const int i : c.classStage) { // classes in the order of their first stages: the same first maximum
        double fixed, perSeq, wts, kv;
        stageMemory(c, i, fixed, perSeq, wts, kv);
        const double total = fixed + perSeq * B;
        if (total <= worst) continue;
        worst = total;
        m.memoryPerGpuGiB = total / kGiB;
        m.weightsGiB = wts / kGiB;
        m.kvCacheGiB = kv * B / kGiB;
        m.reserveGiB = kReserveBytes / kGiB;
        m.activationsGiB = (total - wts - kv * B - kReserveBytes) / kGiB;
        double capacity = 0, pool = 0;
        stageCapacity(c, fixed, perSeq, wts, kv, B, capacity, pool);
        m.capacityGiB = capacity / kGiB;
        m.kvPoolGiB = pool / kGiB;
    }
    m.memoryRule = s.constraints.memoryRule;
    m.memoryFraction = c.memFraction;
    m.gpuMemoryGiB = totalBytes / kGiB;
}

} // namespace sp

namespace sp {

double sglangMemFractionStatic(double memoryMiB, int tpSize, int ppSize, int dpAttention,
                               int64_t chunkedPrefill, SpecMethod spec) {
    const double M = memoryMiB, G = 1024.0;
    double cps = 0, cgbs = 0;
    if (M < 20 * G)
        cps = 2048, cgbs = 8;
    else if (M < 35 * G)
        cps = 2048, cgbs = tpSize < 4 ? 24 : 80;
    else if (M < 60 * G)
        cps = 4096, cgbs = tpSize < 4 ? 32 : 160;
    else if (M < 160 * G)
        cps = 8192, cgbs = tpSize < 4 ? 256 : 512;
    else
        cps = 16384, cgbs = 512;
    if (chunkedPrefill > 0) cps = double(chunkedPrefill);
    double reserved =
        512.0 + std::max(cps, 2048.0) * 1.5 + cgbs * 2.0 + double(tpSize) * double(ppSize) / 8.0 * G;
    if (dpAttention > 0) {
        reserved += cgbs * double(dpAttention) * 3.0;
        if (cgbs > 300) reserved += cgbs * double(dpAttention) * 1.5;
    }
    if (M > 60 * G) reserved = std::max(reserved, 10.0 * G);
    if (spec == SpecMethod::Draft)
        reserved += 6.0 * G;
    else if (spec != SpecMethod::None && spec != SpecMethod::Ngram)
        reserved += 2.0 * G;
    return std::round((M - reserved) / M * 1000.0) / 1000.0;
}

/// The SGLang launch a plan is served by, as core/export/sglang.cpp maps it: one server over the expert
/// group where the experts span data-parallel replicas (its attention then data-parallel, --dp-size the
/// replicas it holds, --enable-dp-attention), else tp; attention by batch is data-parallel attention over
/// the whole --tp-size.
static MemoryFraction sglangDefault(const Scenario& s, const Plan& p) {
    const Degrees& d = p.degrees;
    int tpSize = d.tp, dpAttention = 0;
    if (s.model.moe.present() && d.ep * d.etp > d.tp) {
        tpSize = std::min(d.ep * d.etp, d.tp * d.dp);
        dpAttention = tpSize / d.tp;
    }
    const Op attn = opRelevant(s.model, Op::MoeAttention) ? Op::MoeAttention : Op::Attention;
    if (tpSize > 1 && d.tp > 1 && p.choice(attn) == choice::AttnBatch) dpAttention = tpSize;
    if (dpAttention == 1) dpAttention = 0;
    const double mib = s.cluster.gpu.memoryBytes() / 1048576.0;
    const SpecMethod spec = p.spec.on() ? p.spec.method : SpecMethod::None;
    const double own = sglangMemFractionStatic(mib, tpSize, d.pp, dpAttention, p.prefillBudget, spec);
    // Below half the memory the default cannot hold a model's weights and cache (at a few dozen DP-attention
    // ranks it goes negative): SGLang's reserve without the DP-attention term stands in, and the export says
    // so (core/export/sglang.cpp).
    const double value =
        own >= 0.5 ? own : sglangMemFractionStatic(mib, tpSize, d.pp, 0, p.prefillBudget, spec);
    return {value, true, own};
}

MemoryFraction memoryFraction(const Scenario& s, const Plan& plan, MemoryRule rule) {
    if (s.constraints.memoryRule == rule && s.constraints.memoryFraction > 0)
        return {s.constraints.memoryFraction, false, s.constraints.memoryFraction};
    switch (rule) {
    case MemoryRule::Sglang:
        return sglangDefault(s, plan);
    case MemoryRule::Trtllm:
    case MemoryRule::Vllm:
        return {0.9, true, 0.9};
    }
    return {0.9, true, 0.9};
}

} // namespace sp
