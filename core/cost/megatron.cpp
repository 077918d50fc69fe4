// The Megatron recipe, written down.

#include "core/cost/impl.h"

namespace sp {

// ---------------------------------------------------------------------- Megatron

/// The standard recipe, written down (Megatron-LM, and the default of vLLM/SGLang/TensorRT-LLM deployments):
///  - TP = the GPUs of a node, or the largest divisor of it that divides the attention heads (and the KV
///  heads);
///  - column-parallel QKV and FFN up, row-parallel output and FFN down, head-parallel attention,
///  vocab-parallel
///    embedding and LM head, sequence-parallel (token-sharded) norms;
///  - MoE: experts expert-parallel with all-to-all dispatch, EP = the largest divisor of the experts that
///  divides
///    the stage's GPUs, no expert TP, the rest as expert replicas;
///  - PP: the smallest that fits memory; DP: the rest.
/// Allowed degrees and pinned operators of the scenario's constraints are honoured where the recipe has a
/// choice.
Plan CostModel::Impl::megatronPlan() const {
    const Model& m = s.model;
    const int G = s.gpus(), gpn = s.cluster.gpusPerNode;
    Plan best;
    bool haveBest = false;
    double bestShortfall = 1e300;
    std::vector<int> tps;
    for (int t = std::min(gpn, G); t >= 1; --t)
        if (G % t == 0 && gpn % t == 0) tps.push_back(t);
    for (int tp : tps) {
        Plan p = Plan::megatronChoices({});
        for (int i = 0; i < kOpCount; ++i)
            if (s.constraints.pinned[i] >= 0) p.choices[i] = s.constraints.pinned[i];
        bool ok = true;
        for (int i = 0; i < kOpCount && ok; ++i)
            if (opRelevant(m, Op(i)) && checkChoice(s, Degrees{1, G / tp, tp, 1, 1, 1}, Op(i), p.choices[i]))
                ok = false;
        if (!ok) continue;
        for (int pp = 1; pp <= G / tp; ++pp) {
            if ((G / tp) % pp != 0) continue;
            Degrees d{pp, G / tp / pp, tp, 1, 1, 1};
            if (m.moe.present()) {
                const int stage = d.dp * d.tp;
                int ep = 1;
                for (int e = 1; e <= stage; ++e)
                    if (stage % e == 0 && m.moe.experts % e == 0 && s.constraints.allows(Axis::EP, e)) ep = e;
                d.ep = ep;
                d.etp = 1;
                d.edp = stage / ep;
            } else {
                d.ep = d.dp * d.tp;
            }
            p.degrees = d;
            if (checkPlan(p)) continue;
            Compiled c;
            const Metrics mt = evaluate(p, c);
            const bool fits = mt.feasible || (mt.valid && mt.violation.rfind("memory", 0) != 0);
            if (fits) return p;
            if (mt.valid && mt.shortfall < bestShortfall)
                bestShortfall = mt.shortfall, best = p, haveBest = true;
        }
    }
    if (haveBest) return best;
    Plan p = Plan::megatronChoices({1, G, 1, G, 1, 1});
    return p;
}

} // namespace sp
