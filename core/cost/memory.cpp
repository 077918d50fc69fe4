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

int64_t CostModel::Impl::memoryBatchLimit(const Compiled& c) const {
    // Alike stages need alike memory: each class once (see classifyStages).
    double best = double(kMaxBatch);
    for (const int i : c.classStage) {
        double fixed, perSeq, wts, kv;
        stageMemory(c, i, fixed, perSeq, wts, kv);
        const double room = capBytes - fixed;
        if (room < perSeq) return 0;
        best = std::min(best, std::floor(room / perSeq));
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
    }
    m.capacityGiB = capBytes / kGiB;
}

} // namespace sp
