// The analytical cost model. How it works, in order:
//  1. compile(): a plan becomes, per layer kind (dense, MoE, embedding, head) and per pass (a decode step, a
//     prefill pass), a short list of operator terms and collective terms, each affine in the local tokens and
//     sequences. A resharding collective is inserted wherever an operator needs a layout other than the one
//     the previous operator produced (R replicated, T token-sharded, H feature-sharded, P partial sums).
//  2. stage times at a batch: those terms times the layer counts of each pipeline stage.
//  3. the batch: the largest that fits memory (closed form: memory is affine in the batch) and meets the SLOs
//     (binary search: latency grows with the batch).
// The evaluate() path works on fixed-size arrays and allocates nothing but the returned Metrics' strings.

#include "core/cost/costmodel.h"

#include "core/cost/collectives.h"
#include "core/cost/validity.h"

#include <algorithm>
#include <array>
#include <cmath>

namespace sp {

std::string_view nameOf(LinkClass l) {
    switch (l) {
    case LinkClass::Local:
        return "local";
    case LinkClass::NvLink:
        return "nvlink";
    case LinkClass::Network:
        return "network";
    }
    return "";
}
std::string_view nameOf(Collective c) {
    switch (c) {
    case Collective::AllReduce:
        return "all-reduce";
    case Collective::ReduceScatter:
        return "reduce-scatter";
    case Collective::AllGather:
        return "all-gather";
    case Collective::AllToAll:
        return "all-to-all";
    case Collective::SendRecv:
        return "send/recv";
    case Collective::Gather:
        return "gather";
    }
    return "";
}
std::string_view nameOf(LayerKind k) {
    switch (k) {
    case LayerKind::Dense:
        return "dense layer";
    case LayerKind::Moe:
        return "moe layer";
    case LayerKind::Embedding:
        return "embedding";
    case LayerKind::Head:
        return "lm head";
    }
    return "";
}

namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
/// Kept outside the KV pool for the CUDA context, NCCL buffers and allocator fragmentation (serving engines
/// leave a few GiB: vLLM's default gpu_memory_utilization 0.9 leaves 8 GB of an 80 GB H100).
constexpr double kReserveBytes = 2.0 * kGiB;
constexpr int64_t kMaxBatch = 1 << 20;

enum class Lay : uint8_t { R, T, H, P };

LinkClass linkOf(const GroupShape& g) {
    return g.size <= 1 ? LinkClass::Local : g.nodes > 1 ? LinkClass::Network : LinkClass::NvLink;
}

/// One operator in one layer: time = max(flops / peak, bytes / bandwidth) + launch, where
/// flops = fTok*tok + fSeq*seq and bytes = bFixed + bTok*tok + bSeq*seq; tok = ceil(M / tokDiv) are the local
/// tokens and seq = ceil(B / seqDiv) the local sequences of a replica's micro-batch of M tokens and B
/// sequences.
struct OpTerm {
    Op op = Op::Embedding;
    int8_t choice = 0;
    int tokDiv = 1, seqDiv = 1;
    double fTok = 0, fSeq = 0, bFixed = 0, bTok = 0, bSeq = 0;
    double weightBytes = 0; ///< resident per GPU
    bool experts = false;   ///< routed experts: only the experts that receive tokens are read
    bool attention = false; ///< the attention core: its sequence terms depend on decode or prefill tokens
    double peak = 0;        ///< achieved FLOP/s of this operator's math; 0: the GEMM rate
    int ep = 1;             ///< routed experts: GPUs the experts are spread over (load imbalance)
    double imbalanceK = 0;  ///< routed experts: sqrt(2 ln ep), see opRoofline
};

/// One collective in one layer: time = alpha + secPerTok * ceil(M / tokDiv).
struct CommTerm {
    Collective kind = Collective::AllReduce;
    GroupShape group;
    Op from = Op::Embedding, to = Op::Embedding;
    int tokDiv = 1;
    double alpha = 0, secPerTok = 0, bytesPerTok = 0;
};

/// A layer kind (or the embedding, or the head) in one pass.
struct Block {
    std::array<OpTerm, 10> ops;
    std::array<CommTerm, 14> comms;
    int nOps = 0, nComms = 0;
    double actBytesPerTok = 0; ///< working activation memory per replica token
    void add(const OpTerm& t) { ops[nOps++] = t; }
    void add(const CommTerm& c) { comms[nComms++] = c; }
    double weights() const {
        double w = 0;
        for (int i = 0; i < nOps; ++i) w += ops[i].weightBytes;
        return w;
    }
};

struct Stage {
    int dense = 0, moe = 0;
    bool first = false, last = false;
};

/// (first layer, layer count) of stage i; evaluated per stage on the hot path, so no vector.
std::pair<int, int> stageSpan(int layers, int pp, int i) {
    const int base = layers / pp, extra = layers % pp;
    const int shift = (extra > 0 && extra < pp - 1) ? 1 : 0;
    auto count = [&](int j) { return base + ((j - shift) >= 0 && (j - shift) < extra ? 1 : 0); };
    int begin = 0;
    for (int j = 0; j < i; ++j) begin += count(j);
    return {begin, count(i)};
}

/// Members {a*sa + b*sb : a < ka, b < kb} of a mesh with gpn GPUs per node: how many nodes they span and the
/// most on one node. With the larger stride outermost the ids increase, so one pass counts them.
GroupShape place(int ka, int sa, int kb, int sb, int gpn) {
    if (sa > sb) std::swap(ka, kb), std::swap(sa, sb);
    GroupShape g;
    g.size = ka * kb;
    if (g.size <= 1) return g;
    int nodes = 0, run = 0, most = 0, last = -1;
    for (int b = 0; b < kb; ++b)
        for (int a = 0; a < ka; ++a) {
            const int node = (a * sa + b * sb) / gpn;
            if (node != last) ++nodes, run = 0, last = node;
            most = std::max(most, ++run);
        }
    g.nodes = nodes;
    g.perNode = most;
    return g;
}

struct Compiled {
    Degrees d;
    std::array<int8_t, kOpCount> choices{};
    Block dense[2], moe[2], emb[2],
        head[2]; ///< [0] decode step (M = B), [1] prefill pass (M = B*S, head sees B)
    GroupShape tpG, a2aG;
    LinkClass p2pLink = LinkClass::Local;
    double p2pAlpha = 0, p2pSecPerTok = 0;
    double kvDense = 0, kvMoe = 0; ///< KV bytes per GPU per sequence per context token per layer
    Overlap overlap = Overlap::Auto;
    double budget = double(kDefaultPrefillBudget); ///< tokens per forward pass of a replica
    double syncRanks = 1; ///< attention replicas that meet at every MoE all-to-all (data-parallel attention)
    int8_t choiceOf(Op o) const { return choices[int(o)]; }
};

/// One forward pass of a replica's micro-batch: `dec` decode tokens (one per running sequence) and `pre` prefill
/// tokens of `prompts` prompts, in one pass as engines with chunked prefill run them (vLLM, TensorRT-LLM
/// in-flight batching).
struct Step {
    double dec = 0, pre = 0, prompts = 0;
    /// Prefill tokens of the busiest of the attention ranks that meet at the MoE all-to-alls (data-parallel
    /// attention): prompts land whole on one rank, and every rank waits for it. pre when ranks are
    /// independent.
    double preCrit = 0;
    double tokens() const { return dec + pre; }
    double rows() const { return dec + prompts; } ///< positions whose logits are computed (sampled)
    Step half() const { return {dec / 2, pre / 2, prompts / 2, preCrit / 2}; }
    Step critical() const {
        return {dec, preCrit, pre > 0 ? prompts * preCrit / pre : 0.0, preCrit};
    }
};

struct PassTimes {
    double stageMax = 0, stageSum = 0;
    int slowest = 0;
    bool twoBatch = false; ///< the MoE layers ran with two-batch overlap
};

struct AtBatch {
    double throughput = 0, ttft = 0, tpot = 0; // tokens/s, s, s
    bool overTokenBudget = false;              // a step needs more tokens than the prefill budget allows
    bool twoBatch = false;                     // the MoE layers ran with two-batch overlap
};

} // namespace

struct CostModel::Impl {
    Scenario s;
    Net net;
    double ctxDecode = 0; ///< mean context of a decode step: I + O/2
    double ctxMax = 0;    ///< KV reserved per sequence: I + O (prefill: I)
    double peakFlops = 0; ///< achieved FLOP/s of the GEMMs (peak * eta)
    double attnFlops = 0; ///< achieved FLOP/s of the attention core (activation precision)
    double expertFlops = 0; ///< achieved FLOP/s of the routed experts' grouped GEMMs
    double budget = 0;    ///< tokens per forward pass of a replica (chunked prefill)
    double bw = 0;        ///< achieved HBM bytes/s
    double launch = 0;    ///< seconds per kernel
    double logMissOne = 0; ///< log(1 - 1/E): an expert missed by one token copy
    double capBytes = 0;  ///< usable HBM per GPU
    double ab = 2, wb = 2, kb = 2;
    double roofline = 0;

    explicit Impl(Scenario sc) : s(std::move(sc)) {
        const Cluster& c = s.cluster;
        net = Net::of(c);
        const Workload& w = s.workload;
        ctxDecode = double(w.inputTokens) + double(w.outputTokens) / 2.0;
        ctxMax = double(w.inputTokens) + (w.phase == Phase::Prefill ? 0.0 : double(w.outputTokens));
        peakFlops = computePeak() * 1e12 * c.efficiency.compute;
        // The attention core (QK^T, softmax, PV) runs at the activation precision: FP8 weights make the
        // GEMMs FP8, not the attention, unless FP8 attention is configured (FlashAttention-3's FP8 path is
        // opt-in in the engines).
        attnFlops = c.gpu.tflops[int(s.model.activations)] * 1e12 * c.efficiency.compute;
        if (attnFlops <= 0) attnFlops = peakFlops;
        expertFlops = peakFlops * c.efficiency.groupedGemm;
        if (s.model.moe.present()) logMissOne = std::log1p(-1.0 / double(s.model.moe.experts));
        bw = c.gpu.hbmTBs * 1e12 * c.efficiency.memory;
        launch = c.efficiency.launchUs * 1e-6;
        capBytes = c.gpu.hbmGB * 1e9 * (1.0 - s.constraints.memoryHeadroom);
        ab = bytesOf(s.model.activations);
        wb = bytesOf(s.model.weights);
        kb = bytesOf(s.model.kvCache);
        roofline = computeRoofline();
    }

    /// Dense TFLOP/s of the GEMMs: FP8 weights run FP8 GEMMs (activations quantized on the fly, as
    /// DeepSeek-V3's "activation_scheme: dynamic" and TensorRT-LLM's FP8 do); otherwise the activation
    /// dtype's rate.
    double computePeak() const {
        const Gpu& g = s.cluster.gpu;
        if (s.model.weights == Dtype::FP8 && g.tflops[int(Dtype::FP8)] > 0) return g.tflops[int(Dtype::FP8)];
        return g.tflops[int(s.model.activations)];
    }

    /// Attention FLOPs per (query token, context token) pair over all heads (QK^T and PV; 2 FLOPs per MAC).
    double attnPairFlops(bool decode) const {
        const Attention& a = s.model.attention;
        if (a.type == AttentionType::MLA) {
            // Decode runs MLA absorbed: scores over latent + rope key, values over the latent, per head.
            if (decode) return double(a.heads) * 2.0 * double(2 * a.mla.kvLoraRank + a.mla.qkRopeHeadDim);
            return double(a.heads) * 2.0 * double(a.mla.qkNopeHeadDim + a.mla.qkRopeHeadDim + a.mla.vHeadDim);
        }
        return double(a.heads) * 2.0 * 2.0 * double(a.headDim);
    }
    double kvBytesPerToken() const { return kvElementsPerTokenPerLayer(s.model) * kb; }

    /// The physical bound: peak FLOP/s and HBM bandwidth of every GPU, no efficiency factors, no
    /// communication, weights read once for an unbounded batch; only the FLOPs and the KV reads remain.
    double computeRoofline() const {
        const Cluster& c = s.cluster;
        const double g = double(s.gpus());
        const double flopsAll = g * computePeak() * 1e12, bwAll = g * c.gpu.hbmTBs * 1e12;
        const ParamCounts pc = countParams(s.model);
        const double L = double(s.model.layers);
        const Workload& w = s.workload;
        const double I = double(w.inputTokens), O = double(w.outputTokens);
        const double decFlops = 2.0 * pc.active + L * attnPairFlops(true) * ctxDecode;
        const double decBytes = L * kvBytesPerToken() * ctxDecode;
        const double preFlops = 2.0 * pc.active + L * attnPairFlops(false) * (I + 1.0) / 2.0;
        switch (w.phase) {
        case Phase::Decode:
            return std::min(flopsAll / decFlops, bwAll / decBytes);
        case Phase::Prefill:
            return flopsAll / preFlops;
        case Phase::Serving:
            return O / std::max((I * preFlops + O * decFlops) / flopsAll, O * decBytes / bwAll);
        }
        return 0;
    }

    // ------------------------------------------------------------------ compile

    /// Walks one layer's operators, tracking the activation's layout and inserting resharding collectives.
    struct Walker {
        const Impl& m;
        const Compiled& c;
        bool decode;
        Block& b;
        Lay lay = Lay::R;
        Op lastOp = Op::Embedding;
        double width = 0; ///< feature width of the current activation

        int tp() const { return c.d.tp; }

        /// Converts the current activation to `need` over the tp group. R -> anything is a local slice.
        void to(Lay need, Op op) {
            if (lay != need && tp() > 1 && lay != Lay::R && need != Lay::P) {
                CommTerm t;
                t.from = lastOp;
                t.to = op;
                t.group = c.tpG;
                if (lay == Lay::P)
                    t.kind = need == Lay::R ? Collective::AllReduce : Collective::ReduceScatter;
                else
                    t.kind = need == Lay::R ? Collective::AllGather : Collective::AllToAll;
                // Payload: the full tensor (M x width), or for an all-to-all the local share (M/tp x width).
                t.tokDiv = t.kind == Collective::AllToAll ? tp() : 1;
                t.bytesPerTok = width * m.ab;
                t.alpha = collectiveAlpha(t.kind, t.group, m.net);
                t.secPerTok = t.bytesPerTok * collectiveSecondsPerByte(t.kind, t.group, m.net);
                b.add(t);
            }
            lay = need;
        }
        void produced(Lay l, Op op, double w) {
            lay = l;
            lastOp = op;
            width = w;
        }
    };

    static Lay needOfLinear(int8_t c) {
        return c == 0 ? Lay::R : c == 1 ? Lay::H : Lay::T;
    } // column/row/token
    static Lay outOfLinear(int8_t c) { return c == 0 ? Lay::H : c == 1 ? Lay::P : Lay::T; }

    /// A GEMM [tokens, k] x [k, n]: column shards n (needs R, gives H), row shards k (needs H, gives P),
    /// token shards the tokens with the weights replicated.
    OpTerm gemm(Op op, int8_t ch, int tp, Lay need, double k, double n, double params) const {
        OpTerm t;
        t.op = op;
        t.choice = ch;
        const double shard = need == Lay::T ? 1.0 : double(tp);
        t.tokDiv = need == Lay::T ? tp : 1;
        t.fTok = 2.0 * params / shard;
        t.weightBytes = params * wb / shard;
        t.bFixed = t.weightBytes;
        const double kin = need == Lay::H ? k / tp : k, nout = need == Lay::R ? n / tp : n;
        t.bTok = (kin + nout) * ab;
        return t;
    }

    double kvDivisor(int8_t cAttn, int tp) const {
        if (cAttn != choice::AttnHead) return double(tp); // sequence or batch sharding splits the cache
        const Attention& a = s.model.attention;
        if (a.type == AttentionType::MLA) return 1.0;    // one latent serves every head
        return double(std::min<int64_t>(tp, a.kvHeads)); // KV heads replicate when tp exceeds them
    }

    void compileAttention(Walker& x, bool moeLayer) const {
        const Model& mo = s.model;
        const Attention& a = mo.attention;
        const int tp = x.tp();
        const double h = double(mo.hidden);
        const Op opNorm = moeLayer ? Op::MoeNorms : Op::Norms, opQkv = moeLayer ? Op::MoeQkv : Op::Qkv;
        const Op opAttn = moeLayer ? Op::MoeAttention : Op::Attention,
                 opOut = moeLayer ? Op::MoeOutProj : Op::OutProj;
        const int8_t cNorm = x.c.choiceOf(opNorm), cQkv = x.c.choiceOf(opQkv), cAttn = x.c.choiceOf(opAttn),
                     cOut = x.c.choiceOf(opOut);
        const Lay res = cNorm == choice::NormToken ? Lay::T : Lay::R;
        x.to(res, opNorm);
        {
            OpTerm t;
            t.op = opNorm;
            t.choice = cNorm;
            t.tokDiv = res == Lay::T ? tp : 1;
            t.fTok = 8.0 * h; // two RMS norms and the residual add
            t.bTok = 4.0 * h * ab;
            t.bFixed = t.weightBytes = 2.0 * h * wb;
            x.b.add(t);
        }
        x.produced(res, opNorm, h);
        double qkvWidth, oWidth, shardedParams, replicatedParams = 0;
        if (a.type == AttentionType::MLA) {
            const auto& d = a.mla;
            const double qk = double(d.qkNopeHeadDim + d.qkRopeHeadDim);
            // q_a and kv_a map hidden to the latents and have no head dimension: engines replicate them under
            // head sharding (vLLM's ReplicatedLinear for DeepSeek's q_a_proj and kv_a_proj_with_mqa).
            replicatedParams = h * double(d.qLoraRank) + h * double(d.kvLoraRank + d.qkRopeHeadDim) +
                               double(d.qLoraRank + d.kvLoraRank); // with the norms of the two latents
            shardedParams = (d.qLoraRank > 0 ? double(d.qLoraRank) : h) * double(a.heads) * qk +
                            double(d.kvLoraRank) * double(a.heads) * double(d.qkNopeHeadDim + d.vHeadDim);
            qkvWidth = double(a.heads) * (qk + qk + double(d.vHeadDim));
            oWidth = double(a.heads * d.vHeadDim);
        } else {
            qkvWidth = double((a.heads + 2 * a.kvHeads) * a.headDim);
            oWidth = double(a.heads * a.headDim);
            shardedParams = h * qkvWidth;
        }
        const Lay qNeed = needOfLinear(cQkv);
        x.to(qNeed, opQkv);
        OpTerm q = gemm(opQkv, cQkv, tp, qNeed, h, qkvWidth, shardedParams);
        if (replicatedParams > 0) {
            // Replicated latent projections: full weights on every GPU; their FLOPs split only with the
            // tokens.
            q.fTok += 2.0 * replicatedParams;
            q.weightBytes += replicatedParams * wb;
            q.bFixed = q.weightBytes;
        }
        x.b.add(q);
        x.produced(outOfLinear(cQkv), opQkv, qkvWidth);
        // attention core: head -> needs H gives H; sequence (context parallel) -> needs R (every GPU scores
        // all queries against its KV shard) gives P (partial outputs combined with their softmax statistics);
        // batch -> needs T gives T.
        const Lay aNeed = cAttn == choice::AttnHead       ? Lay::H
                          : cAttn == choice::AttnSequence ? Lay::R
                                                          : Lay::T;
        x.to(aNeed, opAttn);
        {
            OpTerm t;
            t.op = opAttn;
            t.choice = cAttn;
            t.attention = true;
            t.peak = attnFlops;
            const double pairF = attnPairFlops(x.decode), kvTok = kvBytesPerToken();
            const double S = double(s.workload.inputTokens);
            const bool byBatch = cAttn == choice::AttnBatch;
            const double workDiv = byBatch ? 1.0 : double(tp); // per sequence: heads or context split over tp
            const double kvDiv = byBatch ? 1.0 : kvDivisor(cAttn, tp);
            if (byBatch) t.seqDiv = tp, t.tokDiv = tp;
            if (x.decode) {
                t.fSeq = pairF * ctxDecode / workDiv;
                t.bSeq = kvTok * ctxDecode / kvDiv; // read the whole cache every step
            } else {
                t.fSeq = pairF * S * (S + 1.0) / 2.0 / workDiv; // causal
                t.bSeq = kvTok * S / kvDiv;                     // write the prompt's cache once
            }
            t.bTok = (qkvWidth + oWidth) * ab / workDiv;
            x.b.add(t);
        }
        x.produced(cAttn == choice::AttnHead       ? Lay::H
                   : cAttn == choice::AttnSequence ? Lay::P
                                                   : Lay::T,
                   opAttn, oWidth);
        const Lay oNeed = cOut == choice::OutRow ? Lay::H : cOut == choice::OutColumn ? Lay::R : Lay::T;
        x.to(oNeed, opOut);
        x.b.add(gemm(opOut, cOut, tp, oNeed, oWidth, h, oWidth * h));
        x.produced(cOut == choice::OutRow ? Lay::P : cOut == choice::OutColumn ? Lay::H : Lay::T, opOut, h);
        x.to(res, opNorm); // residual add, then norm 2 in the same layout
        x.produced(res, opNorm, h);
        x.b.actBytesPerTok += (4.0 * h + qkvWidth + oWidth) * ab / (res == Lay::T ? tp : 1);
    }

    void compileDenseFfn(Walker& x) const {
        const int tp = x.tp();
        const double h = double(s.model.hidden), f = double(s.model.ffn);
        const int8_t cUp = x.c.choiceOf(Op::FfnUp), cDown = x.c.choiceOf(Op::FfnDown);
        const Lay res = x.lay;
        const Lay upNeed = needOfLinear(cUp);
        x.to(upNeed, Op::FfnUp);
        OpTerm up = gemm(Op::FfnUp, cUp, tp, upNeed, h, 2.0 * f, 2.0 * h * f); // gate and up, fused
        x.b.add(up);
        x.produced(outOfLinear(cUp), Op::FfnUp, f); // after SiLU(gate) * up: width f
        const Lay downNeed = cDown == choice::DownRow      ? Lay::H
                             : cDown == choice::DownColumn ? Lay::R
                                                           : Lay::T;
        x.to(downNeed, Op::FfnDown);
        x.b.add(gemm(Op::FfnDown, cDown, tp, downNeed, f, h, f * h));
        x.produced(cDown == choice::DownRow      ? Lay::P
                   : cDown == choice::DownColumn ? Lay::H
                                                 : Lay::T,
                   Op::FfnDown, h);
        x.to(res, Op::Norms);
        x.produced(res, Op::Norms, h);
        x.b.actBytesPerTok += 3.0 * f * ab / (upNeed == Lay::T ? 1.0 : tp);
    }

    /// Expected copies, per top-k pick of a token, that must travel to other GPUs. A pick goes to the etp
    /// shards of one ep rank of the token's own expert replica (MoE ranks: etp innermost, then ep, over the
    /// stage's GPUs taken tp-first). With a replicated residual the token is already on every GPU of its tp
    /// group, so ranks inside that group need nothing (pure MoE tensor parallelism, ep 1 and etp = tp, needs
    /// no dispatch at all); with token-sharded norms only its one owner has it.
    static double dispatchedCopies(const Degrees& d, Lay res) {
        const double ep = d.ep, etp = d.etp, tp = d.tp;
        if (res == Lay::T) return etp - 1.0 / ep;
        if (etp >= tp) return etp - tp / ep; // the pick's rank holds the tp group with probability 1/ep
        return etp * (1.0 - std::min(ep, tp / etp) / ep);
    }

    /// Expected number of the cluster's `nodes` nodes that a token's k picks reach: uniform routing, or
    /// DeepSeek-V3's node-limited routing (topk_group of n_group expert groups, the groups laid out over
    /// the nodes in order, as the expert-parallel ranks hold consecutive experts).
    double nodesReached(double k, int nodes) const {
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
    ///    and DeepSeek's inference system do; the combine returns BF16.
    CommTerm moeAllToAll(const GroupShape& g, const Degrees& d, double copies, double holders, bool decode,
                         bool fp8) const {
        CommTerm t;
        t.kind = Collective::AllToAll;
        t.group = g;
        const double h = double(s.model.hidden);
        const double bytes = fp8 ? h * (1.0 + 4.0 / 128.0) : h * ab;
        const double p = g.size, n = g.perNode;
        const double others = std::max(1.0, p - holders);
        const double cross = g.nodes > 1 ? (p - n) / others : 0.0; // share of travelling copies leaving
        double nic = copies * cross, nvlink = copies * (1.0 - cross);
        if (!decode && g.nodes > 1) {
            const double perNodeCopies = copies / double(d.etp);
            const double remoteNodes = nodesReached(perNodeCopies, g.nodes) * (g.nodes - 1.0) / g.nodes;
            nvlink += nic * (n - 1.0) / n; // forwarded inside the destination node
            nic = std::min(nic, remoteNodes * double(d.etp));
        }
        const double perGpu = bytes / double(d.tp);
        t.bytesPerTok = (nic + nvlink) * perGpu;
        t.alpha = collectiveAlpha(t.kind, g, net);
        t.secPerTok = std::max(nic * perGpu / net.bwInter, nvlink * perGpu / net.bwIntra);
        return t;
    }

    void compileMoe(Walker& x) const {
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
            t.weightBytes = t.bFixed = h * double(e.experts) * wb;
            t.bTok = h * ab;
            x.b.add(t);
        }
        // Dispatch and combine (see moeAllToAll): only the copies whose expert shard is not already on a GPU
        // that holds the token travel.
        const double remote = dispatchedCopies(d, res);
        const double holders = res == Lay::T ? 1.0 : std::min(d.tp, x.c.a2aG.perNode);
        if (x.c.a2aG.size > 1 && remote > 0) {
            const bool fp8 = s.model.weights == Dtype::FP8;
            for (int dir = 0; dir < 2; ++dir) {
                CommTerm t = moeAllToAll(x.c.a2aG, d, remote * k, holders, x.decode, dir == 0 && fp8);
                t.from = dir == 0 ? Op::Router : Op::Experts;
                t.to = Op::Experts;
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
            t.weightBytes = t.bFixed = perGpu * params / d.etp * wb;
            t.bTok = copiesPerGpu * (2.0 * h + 3.0 * double(e.expertFfn) / d.etp) * ab;
            x.b.add(t);
            x.b.actBytesPerTok += copiesPerGpu * (4.0 * h + 3.0 * double(e.expertFfn) / d.etp) * ab;
        }
        if (e.sharedExperts > 0) {
            const double sf = double(e.sharedExperts * e.sharedExpertFfn);
            x.produced(res, Op::Router, h); // shared experts read the same input as the router
            const Lay need = cShared == choice::SharedColumnRow ? Lay::R : Lay::T;
            x.to(need, Op::SharedExperts);
            x.b.add(gemm(Op::SharedExperts, cShared, tp, need, h, 3.0 * sf, 3.0 * h * sf));
            x.produced(cShared == choice::SharedColumnRow ? Lay::P : Lay::T, Op::SharedExperts, h);
            // Partial sums meet the routed experts' all-reduce in one collective (the engines add the
            // shared and routed outputs before reducing).
            if (!(res == Lay::R && x.lay == Lay::P)) x.to(res, Op::Norms);
        }
        // The routed output: with a replicated residual, each GPU of the tp group holds partial sums (its
        // own experts' results for every token, and the returned copies of the tokens it sent), so an
        // all-reduce (or a reduce-scatter into token-sharded norms) completes it; with token-sharded norms
        // every token's results come back to its one owner.
        x.produced(res == Lay::T ? Lay::T : Lay::P, Op::Experts, h);
        x.to(res, Op::Norms);
        x.produced(res, Op::Norms, h);
    }

    void compileEmbedding(Walker& x, Lay firstRes) const {
        const double h = double(s.model.hidden), V = double(s.model.vocab);
        const int8_t c = x.c.choiceOf(Op::Embedding);
        OpTerm t;
        t.op = Op::Embedding;
        t.choice = c;
        t.weightBytes = V * h * wb / (c == choice::EmbVocab ? x.tp() : 1);
        t.bTok = h * ab; // a row lookup per token
        x.b.add(t);
        x.produced(c == choice::EmbVocab ? Lay::P : Lay::R, Op::Embedding, h);
        x.to(firstRes, Op::Norms);
    }

    void compileHead(Walker& x, Lay lastRes) const {
        const double h = double(s.model.hidden), V = double(s.model.vocab);
        const int tp = x.tp();
        const int8_t c = x.c.choiceOf(Op::LmHead);
        x.produced(lastRes, Op::Norms, h);
        const Lay need = needOfLinear(c);
        x.to(need, Op::LmHead);
        x.b.add(gemm(Op::LmHead, c, tp, need, h, V, V * h));
        x.b.actBytesPerTok += V * 4.0 / (need == Lay::T ? tp : 1); // fp32 logits
        if (tp > 1 && c != choice::HeadToken) {
            // Sampling needs whole rows of logits on one GPU: vocab-sharded logits are gathered (fp32);
            // row-parallel partial logits are all-reduced.
            CommTerm t;
            t.kind = c == choice::HeadVocab ? Collective::Gather : Collective::AllReduce;
            t.group = x.c.tpG;
            t.from = t.to = Op::LmHead;
            t.bytesPerTok = V * ab; // in the activation dtype, converted to fp32 after the gather (vLLM's
                                      // LogitsProcessor gathers the model-dtype logits)
            t.alpha = collectiveAlpha(t.kind, t.group, net);
            t.secPerTok = t.bytesPerTok * collectiveSecondsPerByte(t.kind, t.group, net);
            x.b.add(t);
        }
    }

    static Lay resOf(const Compiled& c, bool moeLayer) {
        return c.choiceOf(moeLayer ? Op::MoeNorms : Op::Norms) == choice::NormToken ? Lay::T : Lay::R;
    }

    static int strideOf(const Plan& p, Axis a) {
        int stride = 1;
        for (Axis o : p.meshOrder) {
            if (o == a) return stride;
            stride *= p.degrees.get(o);
        }
        return stride;
    }

    void compile(const Plan& p, Compiled& c) const {
        c.d = p.degrees;
        c.choices = p.choices;
        c.overlap = p.overlap;
        c.budget = double(p.prefillBudget > 0 ? p.prefillBudget : kDefaultPrefillBudget);
        const Degrees& d = p.degrees;
        const Model& m = s.model;
        const int gpn = s.cluster.gpusPerNode;
        const int sTp = strideOf(p, Axis::TP), sDp = strideOf(p, Axis::DP), sPp = strideOf(p, Axis::PP);
        c.tpG = place(d.tp, sTp, 1, sTp * d.tp, gpn);
        if (m.moe.present()) {
            // MoE ranks within a stage: etp innermost, then ep, then edp, over the stage's GPUs taken
            // tp-first; the all-to-all spans one expert replica (the first ep*etp of them).
            const int k = d.ep * d.etp;
            const int kt = std::min(k, d.tp), kd = std::max(1, k / d.tp);
            c.a2aG = place(kt, sTp, kd, sDp, gpn);
            c.syncRanks = m.moeLayers() > 0 ? double(std::min(d.dp, kd)) : 1.0;
        }
        if (d.pp > 1) {
            const GroupShape ppG = place(d.pp, sPp, 1, sPp * d.pp, gpn);
            c.p2pLink = ppG.nodes > 1 ? LinkClass::Network : LinkClass::NvLink;
            const bool inter = c.p2pLink == LinkClass::Network;
            c.p2pAlpha = inter ? net.alphaInter : net.alphaIntra;
            c.p2pSecPerTok = double(m.hidden) * ab / (inter ? net.bwInter : net.bwIntra);
        }
        for (int pass = 0; pass < 2; ++pass) {
            const bool decode = pass == 0;
            if (m.denseLayers() > 0) {
                Walker x{*this, c, decode, c.dense[pass]};
                x.produced(resOf(c, false), Op::Norms, double(m.hidden));
                compileAttention(x, false);
                compileDenseFfn(x);
            }
            if (m.moeLayers() > 0) {
                Walker x{*this, c, decode, c.moe[pass]};
                x.produced(resOf(c, true), Op::MoeNorms, double(m.hidden));
                compileAttention(x, true);
                compileMoe(x);
            }
            Walker xe{*this, c, decode, c.emb[pass]};
            compileEmbedding(xe, resOf(c, m.denseLayers() == 0));
            Walker xh{*this, c, decode, c.head[pass]};
            compileHead(xh, resOf(c, m.moeLayers() > 0));
        }
        const double kvTok = kvBytesPerToken();
        c.kvDense = kvTok / kvDivisor(c.choiceOf(Op::Attention), d.tp);
        c.kvMoe = kvTok / kvDivisor(c.choiceOf(Op::MoeAttention), d.tp);
    }

    // ------------------------------------------------------------------ stages, times, memory

    /// Stage i of pp, by layer kind (see pipelineStages).
    Stage stageOf(int i, int pp) const {
        const int L = int(s.model.layers);
        const auto [begin, n] = stageSpan(L, pp, i);
        const int firstDense = int(s.model.moe.present() ? s.model.moe.firstDenseLayers : L);
        Stage st;
        st.dense = std::clamp(firstDense - begin, 0, n);
        st.moe = n - st.dense;
        st.first = i == 0;
        st.last = i == pp - 1;
        return st;
    }

    /// Compute and memory seconds of one operator for M local-replica tokens and B sequences; with `half`,
    /// also for a half-batch (M/2, B/2) in the same pass (two-batch overlap).
    struct Roof {
        double compute = 0, memory = 0;
        double time(double launch) const { return std::max(compute, memory) + launch; }
    };
    Roof opRoofline(const OpTerm& t, double M, double B, double copiesPerReplicaGroup, Roof* half = nullptr) const {
        const double inv = 1.0 / (t.peak > 0 ? t.peak : peakFlops);
        double fixed = t.bFixed, perTok = 1.0, fixedH = fixed, perTokH = 1.0;
        if (t.experts) {
            // With n token copies over E experts, an expert receives one with probability 1 - (1 - 1/E)^n;
            // only those experts' weights are read (this is what makes small-batch MoE decode cheap and
            // memory-bound). A half-batch's miss probability is the square root of the whole one's.
            const double miss = std::exp(copiesPerReplicaGroup * logMissOne);
            fixed *= 1.0 - miss;
            fixedH *= 1.0 - std::sqrt(miss);
            // The layer waits for the busiest GPU: with lambda copies per GPU on average, the most loaded
            // of ep GPUs gets about lambda + sqrt(2 lambda ln ep) (the maximum of ep Poisson loads, uniform
            // routing; skewed routing is worse, EPLB's redundant experts bring it back towards this).
            const double lambda = copiesPerReplicaGroup / double(t.ep);
            if (t.imbalanceK > 0 && lambda > 0) {
                const double k = t.imbalanceK / std::sqrt(lambda);
                perTok = 1.0 + k;
                perTokH = 1.0 + k * std::sqrt(2.0);
            }
        }
        const double tok = std::ceil(M / t.tokDiv), seq = std::ceil(B / t.seqDiv);
        if (half) {
            const double tokH = std::ceil(M / 2 / t.tokDiv), seqH = std::ceil(B / 2 / t.seqDiv);
            half->compute = (t.fTok * tokH * perTokH + t.fSeq * seqH) * inv;
            half->memory = (fixedH + t.bTok * tokH * perTokH + t.bSeq * seqH) / bw;
        }
        return {(t.fTok * tok * perTok + t.fSeq * seq) * inv, (fixed + t.bTok * tok * perTok + t.bSeq * seq) / bw};
    }

    static double commTime(const CommTerm& k, double M) {
        return M <= 0 ? 0.0 : k.alpha + k.secPerTok * std::ceil(M / k.tokDiv);
    }

    double copiesOf(const Compiled& c, double M) const {
        return double(c.d.dp) * M * double(s.model.moe.topK) / double(std::max(1, c.d.edp));
    }

    struct Parts {
        double ops = 0, comms = 0;
    };

    /// Compute and communication seconds of one layer kind in a step (and, with `half`, of a half-batch).
    /// The attention core serves the decode tokens (against their context) and the prefill tokens (causal
    /// over their prompt) in one kernel; every other operator sees all the step's tokens at once, so its
    /// weights are read once. A step with prefill tokens uses the prefill block's collectives (DeepEP normal
    /// kernels), a decode-only step the decode block's (low-latency kernels). The routed experts see every
    /// rank's tokens spread by the all-to-all; the rest runs on the busiest rank's.
    Parts blockParts(const Compiled& c, const Block& bd, const Block& bp, const Step& st,
                     Parts* half = nullptr) const {
        const Block& main = st.pre > 0 ? bp : bd;
        const Step cr = st.critical();
        const double M = cr.tokens(), copies = copiesOf(c, st.tokens()), rows = st.rows();
        Parts p;
        Parts h;
        Roof hr;
        Roof* hp = half ? &hr : nullptr;
        for (int i = 0; i < main.nOps; ++i) {
            if (main.ops[i].attention) {
                const bool both = cr.dec > 0 && cr.pre > 0;
                if (cr.dec > 0) {
                    p.ops += opRoofline(bd.ops[i], cr.dec, cr.dec, copies, hp).time(launch);
                    if (half) h.ops += hr.time(launch);
                }
                if (cr.pre > 0) {
                    p.ops += opRoofline(bp.ops[i], cr.pre, cr.prompts, copies, hp).time(launch);
                    if (half) h.ops += hr.time(launch);
                }
                if (both) p.ops -= launch, h.ops -= launch; // one varlen kernel
            } else {
                const OpTerm& o = main.ops[i];
                const double m = o.op == Op::LmHead ? rows : o.experts ? st.tokens() : M;
                p.ops += opRoofline(o, m, cr.dec + cr.prompts, copies, hp).time(launch);
                if (half) h.ops += hr.time(launch);
            }
        }
        for (int i = 0; i < main.nComms; ++i) {
            const CommTerm& k = main.comms[i];
            const double m = k.from == Op::LmHead ? rows : M;
            p.comms += commTime(k, m);
            if (half) h.comms += commTime(k, m / 2);
        }
        if (half) *half = h;
        return p;
    }

    /// One layer kind's time in a step; MoE layers may run as two half-batches, one's communication under
    /// the other's compute: 2 x (longer + (1 - overlap) x shorter) of a half, each half re-reading weights.
    double blockTime(const Compiled& c, const Block& bd, const Block& bp, const Step& st, bool moe,
                     bool& twoBatch) const {
        twoBatch = false;
        const bool tryTbo = moe && c.overlap != Overlap::Off && st.dec + st.prompts >= 2;
        Parts h;
        const Parts full = blockParts(c, bd, bp, st, tryTbo ? &h : nullptr);
        const double serial = full.ops + full.comms;
        if (!tryTbo || full.comms <= 0) return serial;
        const double tbo = twoBatchTime(h);
        if (c.overlap == Overlap::TwoBatch || tbo < serial) {
            twoBatch = true;
            return tbo;
        }
        return serial;
    }

    double twoBatchTime(const Parts& half) const {
        const double ov = s.cluster.efficiency.overlap;
        return 2.0 * (std::max(half.ops, half.comms) + (1.0 - ov) * std::min(half.ops, half.comms));
    }

    double p2pTime(const Compiled& c, const Stage& st, double M) const {
        if (st.last) return 0.0;
        const bool tokenSharded = resOf(c, st.moe > 0) == Lay::T;
        return c.p2pAlpha + c.p2pSecPerTok * M / (tokenSharded ? c.d.tp : 1);
    }

    /// One step of a replica's micro-batch through every stage.
    PassTimes passTimes(const Compiled& c, const Step& st) const {
        PassTimes r;
        bool tbo = false, unused = false;
        const double td = s.model.denseLayers() > 0 ? blockTime(c, c.dense[0], c.dense[1], st, false, unused) : 0.0;
        const double tm = s.model.moeLayers() > 0 ? blockTime(c, c.moe[0], c.moe[1], st, true, tbo) : 0.0;
        const double te = blockTime(c, c.emb[0], c.emb[1], st, false, unused);
        const double th = blockTime(c, c.head[0], c.head[1], st, false, unused);
        r.twoBatch = tbo;
        const int pp = c.d.pp;
        const int L = int(s.model.layers);
        const int firstDense = int(s.model.moe.present() ? s.model.moe.firstDenseLayers : L);
        // Stage spans in one pass (the extra layers go to the middle stages, see pipelineStages).
        const int base = L / pp, extra = L % pp, shift = (extra > 0 && extra < pp - 1) ? 1 : 0;
        int begin = 0;
        for (int i = 0; i < pp; ++i) {
            const int n = base + ((i - shift) >= 0 && (i - shift) < extra ? 1 : 0);
            Stage sg;
            sg.dense = std::clamp(firstDense - begin, 0, n);
            sg.moe = n - sg.dense;
            sg.first = i == 0;
            sg.last = i == pp - 1;
            begin += n;
            const double t = sg.dense * td + sg.moe * tm + (sg.first ? te : 0.0) + (sg.last ? th : 0.0) +
                             p2pTime(c, sg, st.tokens());
            r.stageSum += t;
            if (t > r.stageMax) r.stageMax = t, r.slowest = i;
        }
        return r;
    }

    /// The step a phase runs at B sequences per micro-batch.
    ///  prefill: B prompts of I tokens; decode: B tokens; serving: B decode tokens plus the prefill tokens
    ///  of the B / O prompts that replace the finished sequences (B I / O tokens), in one pass.
    ///  With data-parallel attention, the r ranks that meet at the all-to-alls start n = r B / O prompts a
    ///  step between them, each whole on one rank (in chunks of at most budget - B tokens): the busiest rank
    ///  starts min(n, n/r + sqrt(2 (n/r) ln r)) of them (the maximum of r Poisson loads).
    Step stepAt(const Compiled& c, double B) const {
        const Workload& w = s.workload;
        const double I = double(w.inputTokens), O = double(w.outputTokens);
        switch (w.phase) {
        case Phase::Prefill:
            return {0.0, B * I, B, B * I};
        case Phase::Decode:
            return {B, 0.0, 0.0, 0.0};
        case Phase::Serving: {
            Step st{B, B * I / O, B / O, B * I / O};
            const double r = c.syncRanks;
            if (r > 1) {
                const double n = r * B / O, per = n / r;
                const double busiest = std::min(n, per + std::sqrt(2.0 * per * std::log(r)));
                const double chunk = std::min(I, std::max(1.0, c.budget - B));
                st.preCrit = std::max(st.pre, std::min(busiest * I, std::max(chunk, st.pre)));
            }
            return st;
        }
        }
        return {};
    }

    /// Throughput, TTFT and TPOT at B sequences per micro-batch per replica, pp micro-batches in flight;
    /// cycle = max(pp x slowest stage, sum of stages) of the phase's step (stepAt).
    ///  prefill: throughput = dp pp B I / cycle; TTFT = sum of stages.
    ///  decode:  TPOT = cycle; throughput = dp pp B / cycle.
    ///  serving (continuous batching with chunked prefill): TPOT = cycle; throughput = dp pp B / cycle;
    ///           a new prompt's I tokens take I / (budget - B) steps of the spare budget, so
    ///           TTFT = (1 + ceil(I / (budget - B))) x cycle (it waits for the step in progress).
    AtBatch atBatch(const Compiled& c, double B) const {
        const Workload& w = s.workload;
        const double pp = c.d.pp, dp = c.d.dp;
        const Step st = stepAt(c, B);
        const PassTimes t = passTimes(c, st);
        const double cycle = std::max(pp * t.stageMax, t.stageSum);
        AtBatch r;
        r.twoBatch = t.twoBatch;
        r.overTokenBudget = st.tokens() > std::max(c.budget, w.phase == Phase::Prefill ? double(w.inputTokens) : 0.0) + 1e-9;
        if (w.phase == Phase::Prefill) {
            r.throughput = dp * pp * B * double(w.inputTokens) / cycle;
            r.ttft = t.stageSum;
            return r;
        }
        r.tpot = cycle;
        r.throughput = dp * pp * B / cycle;
        if (w.phase == Phase::Serving) {
            const double spare = std::max(1.0, c.budget - B);
            r.ttft = (1.0 + std::ceil(double(w.inputTokens) / spare)) * cycle;
        }
        return r;
    }

    /// The largest B whose step fits the token budget (serving: B (1 + I / O); prefill: B I, where one
    /// prompt longer than the budget runs in chunks; decode: B).
    int64_t budgetBatchLimit(const Compiled& c) const {
        const Workload& w = s.workload;
        const double I = double(w.inputTokens), O = double(w.outputTokens);
        double lim = c.budget;
        if (w.phase == Phase::Prefill) lim = c.budget / I;
        if (w.phase == Phase::Serving) lim = c.budget * O / (I + O);
        return std::max<int64_t>(1, int64_t(std::floor(lim + 1e-9)));
    }

    /// KV context held per sequence: what it has written (paged caches: input + output / 2 on average in
    /// serving and decode) or the worst case (input + output).
    double kvContext() const {
        const Workload& w = s.workload;
        if (w.phase == Phase::Prefill) return double(w.inputTokens);
        return w.kvReservation == Workload::KvReservation::Worst ? ctxMax : ctxDecode;
    }

    /// Bytes per GPU of stage i: fixed + perSeq * B. Activations: the body's per token of the largest pass
    /// (serving: the token budget, as engines size activations by profiling a pass of max_num_batched_tokens);
    /// logits only for the positions that are sampled (one per sequence).
    void stageMemory(const Compiled& c, int i, double& fixed, double& perSeq, double& weights,
                     double& kvPerSeq) const {
        const Workload& w = s.workload;
        const Stage st = stageOf(i, c.d.pp);
        weights = st.dense * c.dense[0].weights() + st.moe * c.moe[0].weights() +
                  (st.first ? c.emb[0].weights() : 0.0) + (st.last ? c.head[0].weights() : 0.0);
        // Every in-flight sequence (pp micro-batches of B) keeps the KV of this stage's layers.
        kvPerSeq = double(c.d.pp) * kvContext() * (st.dense * c.kvDense + st.moe * c.kvMoe);
        const int pass = w.phase == Phase::Decode ? 0 : 1;
        const double body = std::max(st.dense > 0 ? c.dense[pass].actBytesPerTok : 0.0,
                                     st.moe > 0 ? c.moe[pass].actBytesPerTok : 0.0);
        const double logits = st.last ? c.head[pass].actBytesPerTok : 0.0;
        fixed = weights + kReserveBytes;
        perSeq = kvPerSeq + logits;
        switch (w.phase) {
        case Phase::Prefill:
            perSeq += body * double(w.inputTokens);
            break;
        case Phase::Decode:
            perSeq += body;
            break;
        case Phase::Serving:
            fixed += body * c.budget;
            break;
        }
    }

    int64_t memoryBatchLimit(const Compiled& c) const {
        double best = double(kMaxBatch);
        for (int i = 0; i < c.d.pp; ++i) {
            double fixed, perSeq, wts, kv;
            stageMemory(c, i, fixed, perSeq, wts, kv);
            const double room = capBytes - fixed;
            if (room < perSeq) return 0;
            best = std::min(best, std::floor(room / perSeq));
        }
        return int64_t(best);
    }

    void fillMemory(const Compiled& c, double B, Metrics& m) const {
        double worst = -1;
        for (int i = 0; i < c.d.pp; ++i) {
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

    double sloRatio(const AtBatch& r) const {
        const Workload& w = s.workload;
        double f = 0.0;
        if (w.ttftMs > 0 && w.phase != Phase::Decode) f = std::max(f, r.ttft * 1e3 / w.ttftMs);
        if (w.tpotMs > 0 && w.phase != Phase::Prefill) f = std::max(f, r.tpot * 1e3 / w.tpotMs);
        return f; // <= 1: met
    }

    void describeSlo(const AtBatch& r, int64_t B, Metrics& m) const {
        const Workload& w = s.workload;
        char buf[160];
        if (w.ttftMs > 0 && w.phase != Phase::Decode && r.ttft * 1e3 > w.ttftMs) {
            std::snprintf(buf, sizeof buf, "TTFT %.1f ms at batch %lld exceeds the SLO of %.3g ms",
                          r.ttft * 1e3, (long long)B, w.ttftMs);
            m.violations.emplace_back(buf);
        }
        if (w.tpotMs > 0 && w.phase != Phase::Prefill && r.tpot * 1e3 > w.tpotMs) {
            std::snprintf(buf, sizeof buf, "TPOT %.1f ms at batch %lld exceeds the SLO of %.3g ms",
                          r.tpot * 1e3, (long long)B, w.tpotMs);
            m.violations.emplace_back(buf);
        }
    }

    Metrics evaluate(const Plan& p, Compiled& c) const {
        Metrics m;
        m.rooflineThroughput = roofline;
        if (auto why = checkPlan(p)) {
            m.violation = *why;
            m.violations.push_back(*why);
            m.shortfall = 1e9;
            return m;
        }
        m.valid = true;
        compile(p, c);
        const Workload& w = s.workload;
        const int64_t fixedB = p.batch > 0 ? p.batch : w.fixedBatch ? w.batch : 0;
        const int64_t memLimit = memoryBatchLimit(c);
        const int64_t limit = std::min(memLimit, budgetBatchLimit(c));
        int64_t B;
        bool memOk = true;
        if (fixedB > 0) {
            B = fixedB;
            memOk = B <= memLimit;
        } else if (limit < 1) {
            B = 1;
            memOk = false;
        } else {
            // The largest batch meeting the SLOs: latency grows with the batch, so binary search on [1,
            // limit].
            int64_t lo = 1, hi = limit;
            if (sloRatio(atBatch(c, double(hi))) <= 1.0)
                lo = hi;
            else if (sloRatio(atBatch(c, 1.0)) > 1.0)
                hi = 1;
            else {
                while (hi - lo > 1) { // invariant: lo meets the SLOs, hi does not
                    const int64_t mid = lo + (hi - lo) / 2;
                    (sloRatio(atBatch(c, double(mid))) <= 1.0 ? lo : hi) = mid;
                }
            }
            B = lo;
        }
        const AtBatch r = atBatch(c, double(B));
        m.batch = B;
        m.throughput = r.throughput;
        m.throughputPerGpu = r.throughput / double(s.gpus());
        m.ttftMs = r.ttft * 1e3;
        m.tpotMs = r.tpot * 1e3;
        m.prefillBudget = int64_t(c.budget);
        m.twoBatchOverlap = r.twoBatch;
        fillMemory(c, double(B), m);
        m.rooflineFraction = roofline > 0 ? m.throughput / roofline : 0.0;
        const double slo = sloRatio(r);
        double shortfall = 1.0;
        if (!memOk) {
            char buf[200];
            std::snprintf(buf, sizeof buf, "memory: %.1f GiB per GPU needed at batch %lld, %.1f GiB usable",
                          m.memoryPerGpuGiB, (long long)B, m.capacityGiB);
            m.violations.emplace_back(buf);
            shortfall = std::max(shortfall, m.memoryPerGpuGiB / m.capacityGiB);
        }
        if (r.overTokenBudget && w.phase != Phase::Prefill) {
            const double need = stepAt(c, double(B)).tokens();
            char buf[200];
            std::snprintf(buf, sizeof buf,
                          "prefill budget: a step at batch %lld needs %.0f tokens, the budget is %.0f",
                          (long long)B, need, c.budget);
            m.violations.emplace_back(buf);
            shortfall = std::max(shortfall, need / c.budget);
        }
        if (slo > 1.0) {
            describeSlo(r, B, m);
            shortfall = std::max(shortfall, slo);
        }
        m.feasible = m.violations.empty();
        m.shortfall = m.feasible ? 0.0 : shortfall;
        if (!m.feasible) m.violation = m.violations.front();
        return m;
    }

    // ------------------------------------------------------------------ validity

    std::optional<std::string> checkPlan(const Plan& p) const {
        if (auto e = checkDegrees(s, p.degrees, p.choice(Op::Experts))) return e;
        for (int i = 0; i < kOpCount; ++i) {
            const Op op = Op(i);
            if (!opRelevant(s.model, op)) continue;
            if (auto e = checkChoice(s, p.degrees, op, p.choices[i])) return e;
        }
        return std::nullopt;
    }

    // ------------------------------------------------------------------ explain

    Breakdown breakdown(const Compiled& c, const Step& step, std::string phase) const {
        Breakdown out;
        out.phase = std::move(phase);
        const PassTimes t = passTimes(c, step);
        const Stage st = stageOf(t.slowest, c.d.pp);
        out.denseLayers = st.dense;
        out.moeLayers = st.moe;
        out.stageMs = t.stageMax * 1e3;
        out.twoBatchOverlap = t.twoBatch;
        out.pipelineTransferMs = c.d.pp > 1 ? p2pTime(c, stageOf(0, c.d.pp), step.tokens()) * 1e3 : 0.0;
        out.bubbleMs = c.d.pp > 1 ? (double(c.d.pp) * t.stageMax - t.stageSum) / double(c.d.pp) * 1e3 : 0.0;
        // The same terms as blockParts, one row each (the attention core sums its decode and prefill parts).
        // Under two-batch overlap a MoE layer's rows are its two halves' work: the operators at twice a
        // half's time, the collectives at the part that stays exposed (fullMs keeps their whole time), so
        // the rows still add up to the stage.
        auto add = [&](const Block& bd, const Block& bp, LayerKind kind, bool overlapped) {
            const Step at = overlapped ? step.half() : step;
            const double reps = overlapped ? 2.0 : 1.0;
            double commShare = 1.0;
            if (overlapped) {
                Parts h;
                blockParts(c, bd, bp, step, &h);
                commShare = h.comms > 0 ? (twoBatchTime(h) - 2.0 * h.ops) / (2.0 * h.comms) : 0.0;
            }
            const Step cr = at.critical();
            const double M = cr.tokens(), rows = at.rows(), copies = copiesOf(c, at.tokens());
            const Block& b = at.pre > 0 ? bp : bd;
            for (int i = 0; i < b.nOps; ++i) {
                const OpTerm& o = b.ops[i];
                double compute = 0, memory = 0, time = 0;
                auto part = [&](const OpTerm& term, double m, double seqs) {
                    const Roof r = opRoofline(term, m, seqs, copies);
                    compute += r.compute, memory += r.memory, time += r.time(launch);
                };
                if (o.attention) {
                    if (cr.dec > 0) part(bd.ops[i], cr.dec, cr.dec);
                    if (cr.pre > 0) part(bp.ops[i], cr.pre, cr.prompts);
                    if (cr.dec > 0 && cr.pre > 0) time -= launch; // one varlen kernel
                } else {
                    part(o, o.op == Op::LmHead ? rows : o.experts ? at.tokens() : M, cr.dec + cr.prompts);
                }
                OpCost oc;
                oc.layer = kind;
                oc.op = std::string(kOpNames[int(o.op)]);
                oc.choice = std::string(choiceNames(o.op)[o.choice]);
                oc.computeMs = reps * compute * 1e3;
                oc.memoryMs = reps * memory * 1e3;
                oc.timeMs = reps * time * 1e3;
                oc.memoryBound = oc.memoryMs >= oc.computeMs;
                oc.weightBytes = o.weightBytes;
                out.ops.push_back(std::move(oc));
            }
            for (int i = 0; i < b.nComms; ++i) {
                const CommTerm& k = b.comms[i];
                const double m = k.from == Op::LmHead ? rows : M;
                CommCost cc;
                cc.layer = kind;
                cc.where = std::string(kOpNames[int(k.from)]) +
                           (k.from == k.to ? "" : " -> " + std::string(kOpNames[int(k.to)]));
                if (k.from == Op::Router && k.to == Op::Experts) cc.where = "experts dispatch";
                if (k.from == Op::Experts && k.to == Op::Experts) cc.where = "experts combine";
                cc.kind = k.kind;
                cc.link = linkOf(k.group);
                cc.group = k.group.size;
                cc.bytes = reps * k.bytesPerTok * std::ceil(m / k.tokDiv);
                cc.fullMs = reps * commTime(k, m) * 1e3;
                cc.timeMs = cc.fullMs * commShare;
                cc.overlapped = overlapped;
                out.comms.push_back(std::move(cc));
            }
        };
        if (st.dense > 0) add(c.dense[0], c.dense[1], LayerKind::Dense, false);
        if (st.moe > 0) add(c.moe[0], c.moe[1], LayerKind::Moe, t.twoBatch);
        if (st.first) add(c.emb[0], c.emb[1], LayerKind::Embedding, false);
        if (st.last) add(c.head[0], c.head[1], LayerKind::Head, false);
        return out;
    }

    Plan megatronPlan() const;
};

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

// ---------------------------------------------------------------------- public

std::vector<std::pair<int, int>> pipelineStages(int layers, int pp) {
    pp = std::max(1, pp);
    std::vector<std::pair<int, int>> out;
    for (int i = 0; i < pp; ++i) out.push_back(stageSpan(layers, pp, i));
    return out;
}

CostModel::CostModel(Scenario s) : d(std::make_unique<Impl>(std::move(s))) {}
CostModel::~CostModel() = default;
CostModel::CostModel(CostModel&&) noexcept = default;
CostModel& CostModel::operator=(CostModel&&) noexcept = default;

const Scenario& CostModel::scenario() const {
    return d->s;
}
std::optional<std::string> CostModel::checkPlan(const Plan& p) const {
    return d->checkPlan(p);
}

Metrics CostModel::evaluate(const Plan& p) const {
    Compiled c;
    return d->evaluate(p, c);
}

Evaluation CostModel::explain(const Plan& p) const {
    Compiled c;
    Evaluation e;
    e.metrics = d->evaluate(p, c);
    if (!e.metrics.valid) return e;
    const Workload& w = d->s.workload;
    const double B = double(e.metrics.batch);
    const double I = double(w.inputTokens);
    if (w.phase == Phase::Decode) e.decode = d->breakdown(c, {B, 0.0, 0.0}, "decode step");
    if (w.phase == Phase::Prefill) e.prefill = d->breakdown(c, {0.0, B * I, B, B * I}, "prefill pass");
    if (w.phase == Phase::Serving) {
        // The serving step as it runs (decode tokens and the new prompts' prefill tokens in one pass), and
        // one prompt's prefill alone for reference.
        char name[96];
        const Step st = d->stepAt(c, B);
        std::snprintf(name, sizeof name, "serving step (%.0f decode + %.0f prefill tokens)", st.dec, st.pre);
        e.decode = d->breakdown(c, st, name);
        e.prefill = d->breakdown(c, {0.0, I, 1.0, I}, "prefill pass (one prompt)");
    }
    return e;
}

double CostModel::rooflineThroughput() const {
    return d->roofline;
}
Plan CostModel::megatronPlan() const {
    return d->megatronPlan();
}

} // namespace sp
