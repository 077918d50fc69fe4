#pragma once
// The cost model's internals, shared by its files (compile.cpp: a plan into per-layer terms, compile_moe.cpp:
// the MoE layers' terms; steps.cpp: a step's time through the stages; memory.cpp: memory per GPU and the
// batch limits; breakdown.cpp: explain's rows; megatron.cpp: the recipe; costmodel.cpp: evaluate and the
// public API). Not part of the library's interface. The compiled plan's structures are in compiled.h, the
// placement of its groups on the nodes in placement.h.
//
//  1. compile(): a plan becomes, per layer kind (dense, MoE, embedding, head) and per pass (a decode step, a
//     prefill pass), a short list of operator terms and collective terms, each affine in the local tokens and
//     sequences. A resharding collective is inserted wherever an operator needs a layout other than the one
//     the previous operator produced (R replicated, T token-sharded, H feature-sharded, P partial sums).
//  2. stage times at a batch: those terms times the layer counts of each pipeline stage.
//  3. the batch: the largest that fits memory (closed form: memory is affine in the batch) and meets the SLOs
//     (binary search: latency grows with the batch).
// The evaluate() path works on fixed-size arrays and allocates nothing but the returned Metrics' strings.

#include "core/cost/collectives.h"
#include "core/cost/compiled.h"
#include "core/cost/costmodel.h"
#include "core/cost/placement.h"
#include "core/cost/validity.h"
#include "core/model/weights.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <memory>

namespace sp {
namespace costimpl {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
/// Kept outside the KV pool for the CUDA context, NCCL buffers and allocator fragmentation (serving engines
/// leave a few GiB: vLLM's default gpu_memory_utilization 0.9 leaves 8 GB of an 80 GB H100).
constexpr double kReserveBytes = 2.0 * kGiB;
constexpr int64_t kMaxBatch = 1 << 20;

enum class Lay : uint8_t { R, T, H, P };

} // namespace costimpl
using namespace costimpl;

struct CostModel::Impl {
    Scenario s;
    Net net;
    CommLineTable lineTable; ///< the multi-line collectives' lines (built with net)
    double ctxDecode = 0;                  ///< mean context of a decode step: I + O/2
    double ctxMax = 0;                     ///< KV reserved per sequence: I + O (prefill: I)
    double peakFlops = 0;                  ///< achieved FLOP/s of the GEMMs (peak * eta)
    double attnFlops = 0;                  ///< achieved FLOP/s of the attention core (activation precision)
    double expertFlops = 0;                ///< achieved FLOP/s of the routed experts' grouped GEMMs
    double bw = 0;                         ///< achieved HBM bytes/s (weights, activations)
    double bwKv = 0;                       ///< achieved HBM bytes/s of the attention core's KV-cache traffic
    double invBw = 0, invBwKv = 0;         ///< 1 / bw, 1 / bwKv: the batch search's probes multiply
    double unhidden = 0;                   ///< share of an operator's shorter roof not hidden (1 - opOverlap)
    double launch = 0;                     ///< seconds per kernel
    double logMissOne = 0;                 ///< log(1 - 1/E): an expert missed by one token copy
    std::array<bool, kOpCount> relevant{}; ///< opRelevant for each operator, once per scenario (checkPlan)
    /// choiceAllowed for each relevant operator's choices at tensor-parallel degree tp, for tp up to
    /// kAllowedTp: bit 3 op + c for choice c of operator op, bit 63 once the entry is filled. The rules read
    /// only tp and the scenario and checkPlan asks them on every evaluation; an entry is filled the first
    /// time its tp is asked (allowedMask), so building a CostModel costs nothing for it. Threads that meet an
    /// empty entry each fill it with the same value (relaxed atomics: no torn reads). Wider tp asks
    /// choiceAllowed.
    static constexpr int kAllowedTp = 1024;
    std::unique_ptr<std::atomic<uint64_t>[]> allowedByTp;
    uint64_t allowedMask(int tp) const {
        std::atomic<uint64_t>& e = allowedByTp[size_t(tp)];
        uint64_t m = e.load(std::memory_order_relaxed);
        if (m >> 63) return m;
        m = uint64_t(1) << 63;
        Degrees d;
        d.tp = tp;
        for (int i = 0; i < kOpCount; ++i)
            for (int c = 0; c < int(choiceNames(Op(i)).size()); ++c)
                if (relevant[size_t(i)] && choiceAllowed(s, d, Op(i), c)) m |= uint64_t(1) << (3 * i + c);
        e.store(m, std::memory_order_relaxed);
        return m;
    }
    double totalBytes = 0;                 ///< the GPU's memory as the driver reports it (Gpu::memoryBytes)
    double ab = 2, kb = 2;
    /// Per parameter group (embedding, attention, dense FFN, router, experts, shared experts, LM head,
    /// norms): the bytes a weight takes with its scales, and the achieved FLOP/s of the group's GEMMs. A
    /// quantized checkpoint keeps some groups in the compute dtype (gpt-oss: BF16 attention beside MXFP4
    /// experts).
    std::array<double, kParamGroupCount> wbg{}, gemmRate{};
    double roofline = 0;
    /// The layers' types as they lie (LayerMix), and the types present, in increasing order: the cost model
    /// compiles one block per present type and weighs it by the stage's layers of that type.
    LayerMix mix;
    std::array<int8_t, kLayerTypes> types{};
    std::array<int8_t, kLayerTypes> slotOf{}; ///< index into types of a type; -1: absent
    int nTypes = 0;
    /// Per slot (see Stage): the index into `types` of its layer type, and whether that type is MoE.
    std::array<int8_t, kMaxSlots> slotType{};
    std::array<bool, kMaxSlots> slotMoe{};
    int64_t denseLayers = 0, moeLayers = 0;
    bool firstMoe = false, lastMoe = false; ///< the first and the last layer are MoE layers
    /// Per each of `types`, the average over its layers of what a layer's attention holds and touches
    /// relative to a full-attention layer: sliding-window and chunked layers keep at most their window,
    /// linear-attention layers a constant state, DeepSeek sparse attention reads the indexer's top-k plus its
    /// key cache (see computeAttentionScales).
    struct AttnScale {
        double kvHeld = 1, decodeRead = 1, prefillPairs = 1, prefillWrite = 1;
    };
    std::array<AttnScale, kLayerTypes> attnScale{};

    explicit Impl(Scenario sc) : s(std::move(sc)) {
        const Cluster& c = s.cluster;
        net = Net::of(c);
        lineTable = CommLineTable(net, c.gpusPerNode);
        const Workload& w = s.workload;
        ctxDecode = double(w.inputTokens) + double(w.outputTokens) / 2.0;
        ctxMax = double(w.inputTokens) + (w.phase == Phase::Prefill ? 0.0 : double(w.outputTokens));
        peakFlops = computePeak() * 1e12 * c.efficiency.compute;
        for (int g = 0; g < kParamGroupCount; ++g) {
            wbg[g] = weightBytesPerParam(s.model, ParamGroup(g));
            gemmRate[g] = groupPeak(ParamGroup(g)) * 1e12 *
                          (groupRunsFp4(ParamGroup(g)) ? c.efficiency.fp4Compute() : c.efficiency.compute);
        }
        // The attention core (QK^T, softmax, PV) runs at the activation precision: FP8 weights make the
        // GEMMs FP8, not the attention, unless FP8 attention is configured (FlashAttention-3's FP8 path is
        // opt-in in the engines).
        attnFlops = c.gpu.tflops[int(s.model.activations)] * 1e12 * c.efficiency.compute;
        if (attnFlops <= 0) attnFlops = peakFlops;
        expertFlops = gemmRate[int(ParamGroup::Experts)] * c.efficiency.groupedGemm;
        if (s.model.moe.present()) logMissOne = std::log1p(-1.0 / double(s.model.moe.experts));
        for (int i = 0; i < kOpCount; ++i) relevant[size_t(i)] = opRelevant(s.model, Op(i));
        allowedByTp = std::make_unique<std::atomic<uint64_t>[]>(size_t(kAllowedTp) + 1); // zeroed: empty
        bw = c.gpu.hbmTBs * 1e12 * c.efficiency.memory;
        bwKv = c.gpu.hbmTBs * 1e12 * c.efficiency.kvRead;
        invBw = 1.0 / bw, invBwKv = 1.0 / bwKv;
        unhidden = 1.0 - c.efficiency.opOverlap;
        launch = c.efficiency.launchUs * 1e-6;
        totalBytes = c.gpu.memoryBytes();
        ab = bytesOf(s.model.activations);
        kb = bytesOf(s.model.kvCache);
        mix = LayerMix(s.model);
        slotOf.fill(-1);
        for (int t = 0; t < kLayerTypes; ++t)
            if (mix.total(t) > 0) slotOf[t] = int8_t(nTypes), types[nTypes++] = int8_t(t);
        for (int k = 0; k < nTypes; ++k)
            (layerTypeIsMoe(types[k]) ? moeLayers : denseLayers) += mix.total(types[k]);
        for (int k = 0; nTypes > 0 && k < kMaxSlots; ++k)
            slotType[k] = int8_t(k % nTypes), slotMoe[k] = layerTypeIsMoe(types[k % nTypes]);
        firstMoe = mix.layers() > 0 && layerTypeIsMoe(mix.typeOf(0));
        lastMoe = mix.layers() > 0 && layerTypeIsMoe(mix.typeOf(mix.layers() - 1));
        computeAttentionScales();
        roofline = computeRoofline(); // after the attention scales: windows and linear layers attend less
    }

    void computeAttentionScales();

    /// Dense TFLOP/s of the GEMMs: FP8 weights run FP8 GEMMs (activations quantized on the fly, as
    /// DeepSeek-V3's "activation_scheme: dynamic" and TensorRT-LLM's FP8 do); otherwise the activation
    /// dtype's rate.
    double computePeak() const;
    /// Dense TFLOP/s of one parameter group's GEMMs, from how the checkpoint stores it (see costmodel.cpp).
    double groupPeak(ParamGroup g) const;
    /// Whether groupPeak runs the group on FP4 tensor cores (NVFP4 weights and activations on Blackwell).
    bool groupRunsFp4(ParamGroup g) const;
    double wbOf(ParamGroup g) const { return wbg[int(g)]; }

    /// Attention FLOPs per (query token, context token) pair over all heads (QK^T and PV; 2 FLOPs per MAC).
    double attnPairFlops(bool decode) const;
    double kvBytesPerToken() const;

    /// The physical bound: peak FLOP/s and HBM bandwidth of every GPU, no efficiency factors, no
    /// communication, weights read once for an unbounded batch; only the FLOPs and the KV reads remain.
    double computeRoofline() const;
    /// The bound with q tokens verified and E yielded per sequence a decode step (1, 1: no speculation).
    double rooflineAt(double q, double E) const;

    // ------------------------------------------------------------------ compile

    /// What a prefill pass's block has other than the decode step's: the attention core's sequence terms
    /// (causal over the prompt instead of the context read per step) and the expert all-to-all's terms
    /// across nodes (DeepEP's normal kernels instead of its low-latency ones). The rest is the same, so
    /// compile() walks a layer once, for the decode block, and copies it into the prefill block with these.
    struct PrefillTerms {
        int attention = -1; ///< index of the attention core among the ops; -1: none
        double fSeq = 0, bSeq = 0;
        int nComms = 0;
        std::array<int, 2> commAt{};
        std::array<CommTerm, 2> comms{};
        void applyTo(Block& pre) const {
            if (attention >= 0) pre.ops[attention].fSeq = fSeq, pre.ops[attention].bSeq = bSeq;
            for (int i = 0; i < nComms; ++i) pre.comms[commAt[size_t(i)]] = comms[size_t(i)];
        }
    };

    /// Walks one layer's operators, tracking the activation's layout and inserting resharding collectives,
    /// into the decode step's block `b`, keeping in `pre` what a prefill pass has instead.
    struct Walker {
        const Impl& m;
        const Compiled& c;
        Block& b;
        PrefillTerms& pre;
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
                t.price(m.net, m.lineTable);
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

    static Lay needOfLinear(int8_t c);
    static Lay outOfLinear(int8_t c);

    /// A GEMM [tokens, k] x [k, n]: column shards n (needs R, gives H), row shards k (needs H, gives P),
    /// token shards the tokens with the weights replicated.
    OpTerm gemm(Op op, ParamGroup g, int8_t ch, int tp, Lay need, double k, double n, double params) const;

    double kvDivisor(int8_t cAttn, int tp, LayerAttention kind) const;

    /// The attention half of a layer of type types[slot]: norms, projections (softmax attention's, or a
    /// linear-attention layer's), the attention core, the output projection.
    void compileAttention(Walker& x, int slot) const;

    void compileDenseFfn(Walker& x) const;

    /// Expected copies, per top-k pick of a token, that must travel to other GPUs. A pick goes to the etp
    /// shards of one ep rank of the token's own expert replica (MoE ranks: etp innermost, then ep, over the
    /// stage's GPUs taken tp-first). With a replicated residual the token is already on every GPU of its tp
    /// group, so ranks inside that group need nothing (pure MoE tensor parallelism, ep 1 and etp = tp, needs
    /// no dispatch at all); with token-sharded norms only its one owner has it.
    static double dispatchedCopies(const Degrees& d, Lay res);

    /// Copies of a token that travel when the experts are tensor-parallel (etp > 1): the engines run such
    /// layers on gathered tokens, so every GPU of the expert replica (`size` GPUs) that does not hold the
    /// token gets it once, whatever its picks, and its partial sums come back the same way.
    static double gatheredCopies(const Degrees& d, Lay res, int size);

    /// Expected number of the cluster's `nodes` nodes that a token's k picks reach: uniform routing, or
    /// DeepSeek-V3's node-limited routing (topk_group of n_group expert groups, the groups laid out over
    /// the nodes in order, as the expert-parallel ranks hold consecutive experts).
    double nodesReached(double k, int nodes) const;

    /// One direction of the expert all-to-all, per replica token, for a GPU of the expert replica `g`, with
    /// `copies` picks of a token travelling (the tp GPUs holding a token share its sending).
    ///  - prefill passes use DeepEP's normal kernels: a token crosses the network once per destination node
    ///    and fans out over NVLink there (deepseek-ai/DeepEP README, "normal kernels ... forwarding from
    ///    NVLink to RDMA");
    ///  - decode steps use its low-latency kernels: pure RDMA, one message per destination GPU;
    ///  - dispatch sends FP8 (with one fp32 scale per 128 values) when the experts run FP8 GEMMs, as DeepEP
    ///    and DeepSeek's inference system do; the combine returns BF16;
    ///  - `gather` (tensor-parallel experts): an all-gather of BF16 tokens and a reduce-scatter of the
    ///    partial sums instead, every copy to its own GPU.
    CommTerm moeAllToAll(const GroupShape& g, const Degrees& d, double copies, double holders, bool decode,
                         bool fp8, bool gather = false, bool combine = false) const;

    void compileMoe(Walker& x) const;

    void compileEmbedding(Walker& x, Lay firstRes) const;

    void compileHead(Walker& x, Lay lastRes) const;

    static Lay resOf(const Compiled& c, bool moeLayer);
    static Lay resOf(const std::array<int8_t, kOpCount>& choices, bool moeLayer);

    static int strideOf(const Plan& p, Axis a);

    struct Probe {
        int64_t b = 0;
        AtBatch r;
    };
    BatchSearch batchSearch = BatchSearch::Secant;
    /// The largest batch up to `limit` that meets the SLOs (serving: TTFT exact, or its lower bound).
    int64_t largestBatch(const Compiled& c, int64_t limit, Probe* known, bool exact) const;
    void compile(const Plan& p, Compiled& c) const;
    /// Compiled's speculative-decoding terms (q, E, the MTP slot or the draft module's roofline terms).
    void compileSpeculative(const Plan& p, Compiled& c) const;

    // ------------------------------------------------------------------ stages, times, memory

    /// A stage of `n` layers from `begin`, counted by group and type from the prefix sums (c's groups).
    void stageAt(const Compiled& c, int i, int pp, int begin, int n, Stage& st) const;
    /// Compiled::classOf and classStage from the stages.
    static void classifyStages(Compiled& c);

    /// Compute and memory seconds of one operator for M local-replica tokens and B sequences; with `half`,
    /// also for a half-batch (M/2, B/2) in the same pass (two-batch overlap).
    struct Roof {
        double compute = 0, memory = 0;
    };
    /// An operator's time: the longer roof, the unhidden share of the shorter, and the launch.
    double opTime(const Roof& r) const {
        return std::max(r.compute, r.memory) + unhidden * std::min(r.compute, r.memory) + launch;
    }
    /// `fq`: the attention core's queries per sequence (its FLOPs per sequence grow with them, its KV reads
    /// do not): Step::q for the decode part, 1 elsewhere.
    Roof opRoofline(const OpTerm& t, double M, double B, double copiesPerReplicaGroup, Roof* half = nullptr,
                    double fq = 1.0) const;

    static double commTime(const CommTerm& k, double M);

    double copiesOf(const Compiled& c, double M) const;

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
                     Parts* half = nullptr) const;

    /// One layer kind's time in a step; MoE layers may run as two half-batches, one's communication under
    /// the other's compute: 2 x (longer + (1 - overlap) x shorter) of a half, each half re-reading weights.
    double blockTime(const Compiled& c, const Block& bd, const Block& bp, const Step& st, bool moe,
                     bool& twoBatch) const;

    double twoBatchTime(const Parts& half) const;

    double p2pTime(const Compiled& c, const Stage& st, double M) const;

    /// Speculative decoding's draft passes in a step (on the last stage, after the verify pass): the first
    /// over every token the step verified (the accepted ones' hidden states, padded to K + 1 a sequence
    /// under CUDA graphs), then K - 1 over one token a sequence. 0 without speculative decoding.
    double draftTime(const Compiled& c, const Step& st) const;
    /// One draft pass over n tokens of b sequences; headTime: MTP's shared head over the b sequences' rows.
    double draftPass(const Compiled& c, double n, double b, double headTime = 0.0) const;
    /// The draft's resident weights and KV per context token per sequence on the last stage (bytes per GPU).
    void draftMemory(const Compiled& c, double& weights, double& kvPerToken) const;

    /// One step of a replica's micro-batch through every stage; `typeTbo`, when given, receives whether each
    /// slot ran with two-batch overlap.
    /// `draftKnown`: the draft's seconds where the caller has them for the same decode tokens (else < 0).
    PassTimes passTimes(const Compiled& c, const Step& st, bool* typeTbo = nullptr,
                        double draftKnown = -1) const;

    /// The step a phase runs at B sequences per micro-batch.
    ///  prefill: B prompts of I tokens; decode: B tokens; serving: B decode tokens plus the prefill tokens
    ///  of the B / O prompts that replace the finished sequences (B I / O tokens), in one pass.
    ///  With data-parallel attention, the r ranks that meet at the all-to-alls start n = r B / O prompts a
    ///  step between them, each whole on one rank (in chunks of at most budget - B tokens): the busiest rank
    ///  starts min(n, n/r + sqrt(2 (n/r) ln r)) of them (the maximum of r Poisson loads).
    Step stepAt(const Compiled& c, double B) const;

    /// Throughput, TTFT and TPOT at B sequences per micro-batch per replica, pp micro-batches in flight;
    /// cycle = max(pp x slowest stage, sum of stages) of the phase's step (stepAt).
    ///  prefill: throughput = dp pp B I / cycle; TTFT = sum of stages.
    ///  decode:  TPOT = cycle; throughput = dp pp B / cycle.
    ///  serving (continuous batching with chunked prefill): TPOT = cycle; throughput = dp pp B / cycle;
    ///           a new prompt's I tokens take I / (budget - B) steps of the spare budget, so
    ///           TTFT = (1 + ceil(I / (budget - B))) x cycle (it waits for the step in progress).
    AtBatch atBatch(const Compiled& c, double B, bool exact = true) const;
    /// Serving: the exact TTFT where atBatch gave its lower bound.
    void finishTtft(const Compiled& c, AtBatch& r) const;
    /// Serving TTFT; `chunks` and `period` get the prompt's chunk steps and one's time.
    double chunkedTtft(const Compiled& c, const Step& st, const PassTimes& t, double cycle, bool bound,
                       double* chunks, double* period) const;

    /// The largest B whose step fits the token budget (serving: B (1 + I / O); prefill: B I, where one
    /// prompt longer than the budget runs in chunks; decode: B).
    int64_t budgetBatchLimit(const Compiled& c) const;

    /// KV context held per sequence: what it has written (paged caches: input + output / 2 on average in
    /// serving and decode) or the worst case (input + output).
    double kvContext() const;

    /// Bytes per GPU of stage i: fixed + perSeq * B. Activations: the body's per token of the largest pass
    /// (serving: the token budget, as engines size activations by profiling a pass of
    /// max_num_batched_tokens); logits only for the positions that are sampled (one per sequence).
    void stageMemory(const Compiled& c, int i, double& fixed, double& perSeq, double& weights,
                     double& kvPerSeq) const;

    int64_t memoryBatchLimit(const Compiled& c) const;
    /// The largest batch stage i's memory allows under the scenario's engine rule (fixed + perSeq B the
    /// stage's bytes, of which weights and kvPerSeq B; the rest activations and the reserve); -1 when even
    /// one sequence does not fit.
    double stageBatchLimit(const Compiled& c, double fixed, double perSeq, double weights,
                           double kvPerSeq) const;
    /// The bytes the rule lets stage i use in all (Metrics::capacityGiB) and its KV pool at batch B.
    void stageCapacity(const Compiled& c, double fixed, double perSeq, double weights, double kvPerSeq,
                       double B, double& capacity, double& pool) const;

    void fillMemory(const Compiled& c, double B, Metrics& m) const;

    double sloRatio(const AtBatch& r) const;

    void describeSlo(const AtBatch& r, int64_t B, Metrics& m) const;

    Metrics evaluate(const Plan& p, Compiled& c) const;

    // ------------------------------------------------------------------ validity

    std::optional<std::string> checkPlan(const Plan& p) const;

    // ------------------------------------------------------------------ explain

    Breakdown breakdown(const Compiled& c, const Step& step, std::string phase) const;

    Plan megatronPlan() const;
};

} // namespace sp
