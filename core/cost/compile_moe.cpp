// The MoE layers' terms for compile(): the router, the expert dispatch and combine (DeepEP's all-to-alls, or
// the gather and reduce-scatter of tensor-parallel experts), the routed and the shared experts.

#include "core/cost/impl.h"

namespace sp {

/// Expected copies, per top-k pick of a token, that must travel to other GPUs. A pick goes to the etp
/// shards of one ep rank of the token's own expert replica (MoE ranks: etp innermost, then ep, over the
/// stage's GPUs taken tp-first). With a replicated residual the token is already on every GPU of its tp
/// group, so ranks inside that group need nothing (pure MoE tensor parallelism, ep 1 and etp = tp, needs
/// no dispatch at all); with token-sharded norms only its one owner has it.
double CostModel::Impl::dispatchedCopies(const Degrees& d, Lay res) {
    const double ep = d.ep, etp = d.etp, tp = d.tp;
    if (res == Lay::T) return etp - 1.0 / ep;
    if (etp >= tp) return etp - tp / ep; // the pick's rank holds the tp group with probability 1/ep
    return etp * (1.0 - std::min(ep, tp / etp) / ep);
}

/// Tensor-parallel experts under data-parallel attention, as the engines run them without DeepEP: SGLang
/// gathers the tokens of the attention-DP ranks into one buffer before the MoE layer and reduce-scatters
/// its output after it (sgl-project/sglang python/sglang/srt/layers/dp_attention.py at 0016109,
/// `_dp_gather_via_all_gather`, `dp_reduce_scatter_tensor`); vLLM's default all2all backend for data
/// parallelism is "allgather_reducescatter" (vllm-project/vllm vllm/config/parallel.py at 840e797); DeepEP,
/// the one sparse dispatch they offer, takes experts whole (moe tp 1). So every GPU of the replica outside
/// the token's holders receives it once: size - tp with a replicated residual (pure MoE tensor parallelism,
/// ep 1 and etp = tp, still needs none), size - 1 with token-sharded norms.
double CostModel::Impl::gatheredCopies(const Degrees& d, Lay res, int size) {
    const double holders = res == Lay::T ? 1.0 : std::min(d.tp, size);
    return std::max(0.0, double(size) - holders);
}

/// Expected number of the cluster's `nodes` nodes that a token's k picks reach: uniform routing, or
/// DeepSeek-V3's node-limited routing (topk_group of n_group expert groups, the groups laid out over
/// the nodes in order, as the expert-parallel ranks hold consecutive experts).
double CostModel::Impl::nodesReached(double k, int nodes) const {
    if (nodes <= 1) return 1.0;
    const double N = nodes;
    double reach = N * (1.0 - std::pow(1.0 - 1.0 / N, k));
    const Moe& e = s.model.moe;
    if (e.groups > 0 && e.topkGroups < e.groups) {
        const double G = double(e.groups), t = double(e.topkGroups);
        if (e.groups % nodes == 0) {
            // t groups of G drawn without replacement, G/N groups on a node: P(node missed).
            const double g = G / N;
            double miss = 1.0;
            for (int i = 0; i < int(t); ++i) miss *= std::max(0.0, (G - g - i) / (G - i));
            reach = std::min(reach, N * (1.0 - miss));
        } else {
            reach = std::min(reach, t * std::ceil(N / G)); // a group spans N/G nodes
        }
    }
    return reach;
}

/// One direction of the expert all-to-all, per replica token, for a GPU of the expert replica `g`, with
/// `copies` picks of a token travelling (the tp GPUs holding a token share its sending).
///  - prefill passes use DeepEP's normal kernels: a token crosses the network once per destination node
///    and fans out over NVLink there (deepseek-ai/DeepEP README, "normal kernels ... forwarding from
///    NVLink to RDMA");
///  - decode steps use its low-latency kernels: pure RDMA, one message per destination GPU;
///  - dispatch sends FP8 (with one fp32 scale per 128 values) when the experts run FP8 GEMMs, as DeepEP
///    and DeepSeek's inference system do; the combine returns BF16;
///  - tensor-parallel experts (`gather`) take a NCCL all-gather before and a reduce-scatter after, priced
///    as every other all-gather is (collectiveSecondsPerByte: NVLink inside the node, each NIC carrying
///    1/perNode of what crosses), not as a GPU sending each token to every remote GPU.
CommTerm CostModel::Impl::moeAllToAll(const GroupShape& g, const Degrees& d, double copies, double holders,
                                      bool decode, bool fp8, bool gather, bool combine) const {
    CommTerm t;
    t.kind = !gather ? Collective::AllToAll : combine ? Collective::ReduceScatter : Collective::AllGather;
    t.group = g;
    const double h = double(s.model.hidden);
    const double bytes = fp8 ? h * (1.0 + 4.0 / 128.0) : h * ab;
    if (gather) {
        // A GPU receives `copies` tokens per replica token, (p - 1) / p of the gathered buffer; the
        // collective's time per byte of that buffer, times p / (p - 1), is its time per byte received.
        t.bytesPerTok = copies * bytes / double(d.tp);
        t.alpha = collectiveAlpha(t.kind, g, net);
        t.secPerTok =
            t.bytesPerTok * collectiveSecondsPerByte(t.kind, g, net) * double(g.size) / double(g.size - 1);
        return t;
    }
    // The all-to-all ends when its slowest GPU does: where the group is uneven over the nodes, the one
    // with the fewest peers on its own node sends the largest share over its NIC.
    const double p = g.size, n = g.fewestPerNode();
    const double others = std::max(1.0, p - holders);
    const double cross = g.nodes > 1 ? (p - n) / others : 0.0; // share of travelling copies leaving
    double nic = copies * cross, nvlink = copies * (1.0 - cross);
    if (!decode && g.nodes > 1) {
        // Whole experts here (etp 1: tensor-parallel ones gather above).
        const double remoteNodes = nodesReached(copies, g.nodes) * (g.nodes - 1.0) / g.nodes;
        nvlink += nic * (n - 1.0) / n; // forwarded inside the destination node
        nic = std::min(nic, remoteNodes);
    }
    const double perGpu = bytes / double(d.tp);
    t.bytesPerTok = (nic + nvlink) * perGpu;
    t.alpha = collectiveAlpha(t.kind, g, net);
    t.secPerTok = std::max(nic * perGpu / net.bwInter, nvlink * perGpu / net.intra(g.perNode));
    return t;
}

void CostModel::Impl::compileMoe(Walker& x) const {
    const Moe& e = s.model.moe;
    const Degrees& d = x.c.d;
    const int tp = x.tp(), G = d.dp * d.tp;
    const double h = double(s.model.hidden), k = double(e.topK);
    const Lay res = x.lay;
    const int8_t cRouter = x.c.choiceOf(Op::Router), cExp = x.c.choiceOf(Op::Experts),
                 cShared = x.c.choiceOf(Op::SharedExperts);
    const Lay rNeed = cRouter == choice::RouterReplicated ? Lay::R : Lay::T;
    x.to(rNeed, Op::Router);
    {
        OpTerm t;
        t.op = Op::Router;
        t.choice = cRouter;
        t.tokDiv = rNeed == Lay::T ? tp : 1;
        t.fTok = 2.0 * h * double(e.experts);
        t.weightBytes = t.bFixed = h * double(e.experts) * wbOf(ParamGroup::Router);
        t.bTok = h * ab;
        x.b.add(t);
    }
    // Where the tokens are once the router has read them: a replicated router gathers token-sharded
    // residuals first (Megatron's sequence parallelism gathers before the MoE block and reduce-scatters
    // after it), and the dispatch, the shared experts and the combine all start from that gathered copy.
    const Lay tok = rNeed == Lay::R || res == Lay::R ? Lay::R : Lay::T;
    // Dispatch and combine (see moeAllToAll): only the copies whose expert shard is not already on a GPU
    // that holds the token travel, one a pick with whole experts (DeepEP), one a GPU with tensor-parallel
    // experts (gatheredCopies).
    const bool gather = d.etp > 1;
    const double remote = gather ? gatheredCopies(d, tok, x.c.a2aG.size) : dispatchedCopies(d, tok) * k;
    const double holders = tok == Lay::T ? 1.0 : std::min(d.tp, x.c.a2aG.perNode);
    const bool travels = x.c.a2aG.size > 1 && remote > 0;
    if (travels) {
        const bool fp8 = s.model.weights == Dtype::FP8 && !gather;
        for (int dir = 0; dir < 2; ++dir) {
            CommTerm t = moeAllToAll(x.c.a2aG, d, remote, holders, true, dir == 0 && fp8, gather, dir == 1);
            t.from = dir == 0 ? Op::Router : Op::Experts;
            t.to = Op::Experts;
            if (x.c.a2aG.nodes > 1 && !gather) { // within a node the two kernels move the same bytes
                CommTerm& u = x.pre.comms[size_t(x.pre.nComms)];
                u = moeAllToAll(x.c.a2aG, d, remote, holders, false, dir == 0 && fp8);
                u.from = t.from, u.to = t.to;
                x.pre.commAt[size_t(x.pre.nComms++)] = x.b.nComms;
            }
            x.b.add(t);
        }
    }
    {
        OpTerm t;
        t.op = Op::Experts;
        t.choice = cExp;
        t.experts = true;
        t.peak = expertFlops;
        t.ep = d.ep;
        t.imbalanceK = d.ep > 1 ? std::sqrt(2.0 * std::log(double(d.ep))) : 0.0;
        const double params = 3.0 * h * double(e.expertFfn);
        const double copiesPerGpu = double(d.dp) * k / double(G); // per replica token
        t.fTok = copiesPerGpu * 2.0 * params;
        const double perGpu = std::ceil(double(e.experts) / d.ep); // experts on the busiest GPU
        t.weightBytes = t.bFixed = perGpu * params / d.etp * wbOf(ParamGroup::Experts);
        // Without a DeepEP dispatch (tensor-parallel experts on gathered tokens, EP inside a tp group,
        // replicated experts) the engines run their fused-MoE kernel, whose weight stream a cluster may
        // rate apart from the other streams (Efficiency::fusedMoeMemory); the time is what counts, so the
        // bytes held stay as they are.
        const Efficiency& eff = s.cluster.efficiency;
        const bool dispatched = travels && !gather;
        if (!dispatched) t.bFixed *= eff.memory / eff.fusedMoeStream();
        t.bTok = copiesPerGpu * (2.0 * h + 3.0 * double(e.expertFfn) / d.etp) * ab;
        x.b.add(t);
        x.b.actBytesPerTok += copiesPerGpu * (4.0 * h + 3.0 * double(e.expertFfn) / d.etp) * ab;
    }
    if (e.sharedExperts > 0) {
        const double sf = double(e.sharedExperts * e.sharedExpertFfn);
        x.produced(tok, Op::Router, h); // shared experts read the same input as the router
        const Lay need = cShared == choice::SharedColumnRow ? Lay::R : Lay::T;
        x.to(need, Op::SharedExperts);
        OpTerm se =
            gemm(Op::SharedExperts, ParamGroup::SharedExperts, cShared, tp, need, h, 3.0 * sf, 3.0 * h * sf);
        if (e.sharedExpertGate) {
            // Qwen's sigmoid gate on the shared expert's output (hidden -> 1), whole on every GPU.
            se.fTok += 2.0 * h;
            se.weightBytes += h * wbOf(ParamGroup::SharedExperts);
            se.bFixed = se.weightBytes;
        }
        x.b.add(se);
        x.produced(cShared == choice::SharedColumnRow ? Lay::P : Lay::T, Op::SharedExperts, h);
        // Partial sums meet the routed experts' all-reduce in one collective (the engines add the
        // shared and routed outputs before reducing).
        if (!(tok == Lay::R && x.lay == Lay::P)) x.to(res, Op::Norms);
    }
    // The routed output: with the tokens on every GPU of the tp group, each holds partial sums (its own
    // experts' results for every token, and the returned copies of the tokens it sent), so an all-reduce
    // (or a reduce-scatter into token-sharded norms) completes it; with token-sharded tokens every token's
    // results come back to its one owner.
    x.produced(tok == Lay::T ? Lay::T : Lay::P, Op::Experts, h);
    x.to(res, Op::Norms);
    x.produced(res, Op::Norms, h);
}

} // namespace sp
