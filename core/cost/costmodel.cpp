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
    int8_t choiceOf(Op o) const { return choices[int(o)]; }
};

struct PassTimes {
    double stageMax = 0, stageSum = 0;
    int slowest = 0;
};

struct AtBatch {
    double throughput = 0, ttft = 0, tpot = 0; // tokens/s, s, s
};

} // namespace

struct CostModel::Impl {
    Scenario s;
    Net net;
    double ctxDecode = 0; ///< mean context of a decode step: I + O/2
    double ctxMax = 0;    ///< KV reserved per sequence: I + O (prefill: I)
    double peakFlops = 0; ///< achieved FLOP/s (peak * eta)
    double bw = 0;        ///< achieved HBM bytes/s
    double launch = 0;    ///< seconds per kernel
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
        // Dispatch and combine: the stage's dp*M tokens are spread over its G GPUs (a free slice of R); each
        // of the k copies goes to every etp shard of its expert, among the ep x etp GPUs of one expert
        // replica.
        if (x.c.a2aG.size > 1) {
            CommTerm t;
            t.kind = Collective::AllToAll;
            t.group = x.c.a2aG;
            t.from = Op::Router;
            t.to = Op::Experts;
            t.bytesPerTok = double(d.dp) / double(G) * k * h * ab * double(d.etp);
            t.alpha = collectiveAlpha(t.kind, t.group, net);
            t.secPerTok = t.bytesPerTok * collectiveSecondsPerByte(t.kind, t.group, net);
            x.b.add(t);
            t.from = t.to = Op::Experts; // combine: the same volume back
            x.b.add(t);
        }
        {
            OpTerm t;
            t.op = Op::Experts;
            t.choice = cExp;
            t.experts = true;
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
            x.to(res, Op::Norms);
        }
        // The routed output comes back spread over the GPUs (T): an all-gather when the residual is
        // replicated.
        x.produced(Lay::T, Op::Experts, h);
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
            t.bytesPerTok = V * 4.0;
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

    /// Compute and memory seconds of one operator for a replica micro-batch of M tokens and B sequences.
    std::pair<double, double> opRoofline(const OpTerm& t, double M, double B,
                                         double copiesPerReplicaGroup) const {
        const double tok = std::ceil(M / t.tokDiv), seq = std::ceil(B / t.seqDiv);
        double fixed = t.bFixed;
        if (t.experts) {
            // With n token copies over E experts, an expert receives one with probability 1 - (1 - 1/E)^n;
            // only those experts' weights are read (this is what makes small-batch MoE decode cheap and
            // memory-bound).
            const double E = double(s.model.moe.experts);
            fixed *= 1.0 - std::exp(copiesPerReplicaGroup * std::log1p(-1.0 / E));
        }
        return {(t.fTok * tok + t.fSeq * seq) / peakFlops, (fixed + t.bTok * tok + t.bSeq * seq) / bw};
    }

    double opTime(const OpTerm& t, double M, double B, double copiesPerReplicaGroup) const {
        const auto [compute, memory] = opRoofline(t, M, B, copiesPerReplicaGroup);
        return std::max(compute, memory) + launch;
    }

    static double commTime(const CommTerm& k, double M) {
        return k.alpha + k.secPerTok * std::ceil(M / k.tokDiv);
    }

    double blockTime(const Block& b, const Compiled& c, double M, double B) const {
        const double copies = double(c.d.dp) * M * double(s.model.moe.topK) / double(std::max(1, c.d.edp));
        double t = 0;
        for (int i = 0; i < b.nOps; ++i) t += opTime(b.ops[i], M, B, copies);
        for (int i = 0; i < b.nComms; ++i) t += commTime(b.comms[i], M);
        return t;
    }

    double p2pTime(const Compiled& c, const Stage& st, double M) const {
        if (st.last) return 0.0;
        const bool tokenSharded = resOf(c, st.moe > 0) == Lay::T;
        return c.p2pAlpha + c.p2pSecPerTok * M / (tokenSharded ? c.d.tp : 1);
    }

    /// One pass (pass 0: decode step of B sequences; 1: prefill of B prompts) through every stage.
    PassTimes passTimes(const Compiled& c, int pass, double M, double B, double headM) const {
        const double td = s.model.denseLayers() > 0 ? blockTime(c.dense[pass], c, M, B) : 0.0;
        const double tm = s.model.moeLayers() > 0 ? blockTime(c.moe[pass], c, M, B) : 0.0;
        const double te = blockTime(c.emb[pass], c, M, B), th = blockTime(c.head[pass], c, headM, B);
        PassTimes r;
        for (int i = 0; i < c.d.pp; ++i) {
            const Stage st = stageOf(i, c.d.pp);
            const double t = st.dense * td + st.moe * tm + (st.first ? te : 0.0) + (st.last ? th : 0.0) +
                             p2pTime(c, st, M);
            r.stageSum += t;
            if (t > r.stageMax) r.stageMax = t, r.slowest = i;
        }
        return r;
    }

    /// Throughput, TTFT and TPOT at B sequences per micro-batch per replica (pp micro-batches in flight).
    ///  prefill: a pass of B prompts of I tokens; cycle = max(pp * slowest stage, sum of stages);
    ///           throughput = dp * pp * B * I / cycle; TTFT = sum of stages.
    ///  decode:  cycle = max(pp * slowest stage, sum of stages) of a step of B tokens; TPOT = cycle;
    ///           throughput = dp * pp * B / cycle.
    ///  serving (continuous batching): each cycle, each micro-batch advances one token and its B/O finished
    ///           sequences are replaced by new requests whose prefills run inside the cycle:
    ///           cycle = decode cycle(B) + pp * (B / O) * slowest stage of a one-prompt prefill;
    ///           TPOT = cycle; throughput = dp * pp * B / cycle; TTFT = prefill of one prompt + cycle.
    AtBatch atBatch(const Compiled& c, double B, const PassTimes& pre1) const {
        const Workload& w = s.workload;
        const double pp = c.d.pp, dp = c.d.dp;
        AtBatch r;
        if (w.phase == Phase::Prefill) {
            const double I = double(w.inputTokens);
            const PassTimes t = passTimes(c, 1, B * I, B, B);
            const double cycle = std::max(pp * t.stageMax, t.stageSum);
            r.throughput = dp * pp * B * I / cycle;
            r.ttft = t.stageSum;
            return r;
        }
        const PassTimes t = passTimes(c, 0, B, B, B);
        double cycle = std::max(pp * t.stageMax, t.stageSum);
        if (w.phase == Phase::Serving) {
            cycle += pp * (B / double(w.outputTokens)) * pre1.stageMax;
            r.ttft = pre1.stageSum + cycle;
        }
        r.tpot = cycle;
        r.throughput = dp * pp * B / cycle;
        return r;
    }

    /// Bytes per GPU of stage i: fixed + perSeq * B.
    void stageMemory(const Compiled& c, int i, double& fixed, double& perSeq, double& weights,
                     double& kvPerSeq) const {
        const Workload& w = s.workload;
        const Stage st = stageOf(i, c.d.pp);
        weights = st.dense * c.dense[0].weights() + st.moe * c.moe[0].weights() +
                  (st.first ? c.emb[0].weights() : 0.0) + (st.last ? c.head[0].weights() : 0.0);
        // Every in-flight sequence (pp micro-batches of B) keeps the KV of this stage's layers.
        kvPerSeq = double(c.d.pp) * ctxMax * (st.dense * c.kvDense + st.moe * c.kvMoe);
        const int pass = w.phase == Phase::Prefill ? 1 : 0;
        const double act = std::max(st.dense > 0 ? c.dense[pass].actBytesPerTok : 0.0,
                                    st.moe > 0 ? c.moe[pass].actBytesPerTok : 0.0) +
                           (st.last ? c.head[pass].actBytesPerTok : 0.0);
        const double tokPerSeq = w.phase == Phase::Prefill ? double(w.inputTokens) : 1.0;
        fixed = weights + kReserveBytes;
        if (w.phase == Phase::Serving) fixed += act * double(w.inputTokens); // a prompt being prefilled
        perSeq = kvPerSeq + act * tokPerSeq;
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
            std::snprintf(buf, sizeof buf, "TTFT %.1f ms at batch %lld exceeds the SLO of %g ms",
                          r.ttft * 1e3, (long long)B, w.ttftMs);
            m.violations.emplace_back(buf);
        }
        if (w.tpotMs > 0 && w.phase != Phase::Prefill && r.tpot * 1e3 > w.tpotMs) {
            std::snprintf(buf, sizeof buf, "TPOT %.1f ms at batch %lld exceeds the SLO of %g ms",
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
        PassTimes pre1;
        if (w.phase == Phase::Serving) pre1 = passTimes(c, 1, double(w.inputTokens), 1.0, 1.0);
        const int64_t fixedB = p.batch > 0 ? p.batch : w.fixedBatch ? w.batch : 0;
        const int64_t memLimit = memoryBatchLimit(c);
        int64_t B;
        bool memOk = true;
        if (fixedB > 0) {
            B = fixedB;
            memOk = B <= memLimit;
        } else if (memLimit < 1) {
            B = 1;
            memOk = false;
        } else {
            // The largest batch meeting the SLOs: latency grows with the batch, so binary search on [1,
            // memLimit].
            int64_t lo = 1, hi = memLimit;
            if (sloRatio(atBatch(c, double(hi), pre1)) <= 1.0)
                lo = hi;
            else if (sloRatio(atBatch(c, 1.0, pre1)) > 1.0)
                hi = 1;
            else {
                while (hi - lo > 1) { // invariant: lo meets the SLOs, hi does not
                    const int64_t mid = lo + (hi - lo) / 2;
                    (sloRatio(atBatch(c, double(mid), pre1)) <= 1.0 ? lo : hi) = mid;
                }
            }
            B = lo;
        }
        const AtBatch r = atBatch(c, double(B), pre1);
        m.batch = B;
        m.throughput = r.throughput;
        m.throughputPerGpu = r.throughput / double(s.gpus());
        m.ttftMs = r.ttft * 1e3;
        m.tpotMs = r.tpot * 1e3;
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

    Breakdown breakdown(const Compiled& c, int pass, double M, double B, double headM) const {
        Breakdown out;
        out.phase = pass == 0 ? "decode step" : "prefill pass";
        const PassTimes t = passTimes(c, pass, M, B, headM);
        const Stage st = stageOf(t.slowest, c.d.pp);
        out.denseLayers = st.dense;
        out.moeLayers = st.moe;
        out.stageMs = t.stageMax * 1e3;
        out.pipelineTransferMs = c.d.pp > 1 ? p2pTime(c, stageOf(0, c.d.pp), M) * 1e3 : 0.0;
        out.bubbleMs = c.d.pp > 1 ? (double(c.d.pp) * t.stageMax - t.stageSum) / double(c.d.pp) * 1e3 : 0.0;
        const double copies = double(c.d.dp) * M * double(s.model.moe.topK) / double(std::max(1, c.d.edp));
        auto add = [&](const Block& b, LayerKind kind, double m) {
            for (int i = 0; i < b.nOps; ++i) {
                const OpTerm& o = b.ops[i];
                const auto [compute, memory] = opRoofline(o, m, B, copies);
                OpCost oc;
                oc.layer = kind;
                oc.op = std::string(kOpNames[int(o.op)]);
                oc.choice = std::string(choiceNames(o.op)[o.choice]);
                oc.computeMs = compute * 1e3;
                oc.memoryMs = memory * 1e3;
                oc.timeMs = std::max(oc.computeMs, oc.memoryMs) + launch * 1e3;
                oc.memoryBound = oc.memoryMs >= oc.computeMs;
                oc.weightBytes = o.weightBytes;
                out.ops.push_back(std::move(oc));
            }
            for (int i = 0; i < b.nComms; ++i) {
                const CommTerm& k = b.comms[i];
                CommCost cc;
                cc.layer = kind;
                cc.where = std::string(kOpNames[int(k.from)]) +
                           (k.from == k.to ? (k.kind == Collective::AllToAll ? " combine" : "")
                                           : " -> " + std::string(kOpNames[int(k.to)]));
                if (k.from == Op::Router && k.to == Op::Experts) cc.where = "experts dispatch";
                if (k.from == Op::Experts && k.to == Op::Experts) cc.where = "experts combine";
                cc.kind = k.kind;
                cc.link = linkOf(k.group);
                cc.group = k.group.size;
                cc.bytes = k.bytesPerTok * std::ceil(m / k.tokDiv);
                cc.timeMs = commTime(k, m) * 1e3;
                out.comms.push_back(std::move(cc));
            }
        };
        if (st.dense > 0) add(c.dense[pass], LayerKind::Dense, M);
        if (st.moe > 0) add(c.moe[pass], LayerKind::Moe, M);
        if (st.first) add(c.emb[pass], LayerKind::Embedding, M);
        if (st.last) add(c.head[pass], LayerKind::Head, headM);
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
    if (w.phase != Phase::Prefill) e.decode = d->breakdown(c, 0, B, B, B);
    if (w.phase == Phase::Prefill) e.prefill = d->breakdown(c, 1, B * double(w.inputTokens), B, B);
    if (w.phase == Phase::Serving) e.prefill = d->breakdown(c, 1, double(w.inputTokens), 1.0, 1.0);
    return e;
}

double CostModel::rooflineThroughput() const {
    return d->roofline;
}
Plan CostModel::megatronPlan() const {
    return d->megatronPlan();
}

} // namespace sp
