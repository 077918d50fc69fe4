#pragma once
// The compiled plan (compile()'s output, which the stage times and the memory account read): operator and
// collective terms per layer block, the stages, and the step and its times at a batch. Internal to core/cost.

#include "core/cost/collectives.h"
#include "core/cost/costmodel.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

namespace sp::costimpl {

/// A compiled plan's layer blocks: one per layer group and present layer type, slot g * nTypes + k for group
/// g (Plan::layerGroups; one group without them) and the k-th of Impl::types.
constexpr int kMaxSlots = kLayerTypes * kMaxLayerGroups;

/// One operator in one layer: its compute and memory roofs (Impl::opTime combines them), where
/// flops = fTok*tok + fSeq*seq and bytes = bFixed + bTok*tok at the weight bandwidth plus bSeq*seq (the
/// attention core's KV traffic) at the KV bandwidth; tok = ceil(M / tokDiv) are the local tokens and
/// seq = ceil(B / seqDiv) the local sequences of a replica's micro-batch of M tokens and B sequences
/// (a fraction below one stays a fraction: busiestShare).
struct OpTerm {
    Op op = Op::Embedding;
    int8_t choice = 0;
    int tokDiv = 1, seqDiv = 1;
    double fTok = 0, fSeq = 0, bFixed = 0, bTok = 0, bSeq = 0;
    double weightBytes = 0; ///< resident per GPU
    bool experts = false;   ///< routed experts: only the experts that receive tokens are read
    bool attention = false; ///< the attention core: its sequence terms depend on decode or prefill tokens
    double peak = 0;        ///< achieved FLOP/s of this operator's math; 0: the GEMM rate
    double invPeak = 0;     ///< 1 / (peak, or the GEMM rate): set by compile() once its blocks are built
    double invTokDiv = 1, invSeqDiv = 1; ///< 1 / tokDiv, 1 / seqDiv: set by compile() with invPeak
    int ep = 1;             ///< routed experts: GPUs the experts are spread over (load imbalance)
    double imbalanceK = 0;  ///< routed experts: sqrt(2 ln ep), see opRoofline
};

/// One collective in one layer: time = alpha + secPerTok * ceil(M / tokDiv), or the least of `lines` such
/// lines (collectiveLines: NCCL's protocols for an all-reduce inside a node).
struct CommTerm {
    Collective kind = Collective::AllReduce;
    GroupShape group;
    Op from = Op::Embedding, to = Op::Embedding;
    int tokDiv = 1;
    double alpha = 0, secPerTok = 0, bytesPerTok = 0; ///< the one line (unused where `multi` is set)
    /// Where the collective has several lines (collectiveLines), the scenario's table entry for its kind
    /// and group (CommLineTable: one per scenario, so a plan's terms only point at it); null: alpha and
    /// secPerTok alone.
    const CommLines* multi = nullptr;
    /// The term's cost from kind, group and bytesPerTok: the table's lines, or its one line.
    void price(const Net& net, const CommLineTable& table) {
        multi = table.find(kind, group);
        if (!multi) {
            alpha = collectiveAlpha(kind, group, net);
            secPerTok = bytesPerTok * collectiveSecondsPerByte(kind, group, net);
        }
    }
    /// Seconds for `units` payload units (tokens, or tokens / tokDiv).
    double time(double units) const {
        return multi ? multi->fast(bytesPerTok * units) : alpha + secPerTok * units;
    }
};

/// A layer kind (or the embedding, or the head) in one pass.
struct Block {
    // Only the first nOps and nComms terms are ever written (add) or read, so the arrays are left
    // uninitialised, and so are the counts until compile() clears the blocks it fills: evaluate() constructs
    // a Compiled, with room for kMaxSlots blocks a pass, for every plan and uses a few.
    union {
        OpTerm ops[10];
    };
    union {
        CommTerm comms[14];
    };
    int nOps, nComms;
    double actBytesPerTok; ///< working activation memory per replica token
    /// The plain operators (all but the attention core, the routed experts and the head's logits: each sees
    /// the step's M tokens, with no sequence or expert terms), as arrays blockParts prices in one loop the
    /// compiler vectorises; plain[i]: ops[i] is one, and the k-th plain operator is the k-th such i. Set by
    /// preparePlain() once the terms are final (compile()).
    int nPlain;
    bool plain[10];
    double pF[10], pInvPeak[10], pB0[10], pB1[10], pInvDiv[10];
    Block() {}
    void clear() {
        nOps = nComms = 0;
        actBytesPerTok = 0;
    }
    void add(const OpTerm& t) { ops[nOps++] = t; }
    void preparePlain() {
        nPlain = 0;
        for (int i = 0; i < nOps; ++i) {
            const OpTerm& t = ops[i];
            plain[i] = !t.attention && !t.experts && t.op != Op::LmHead;
            if (!plain[i]) continue;
            pF[nPlain] = t.fTok, pInvPeak[nPlain] = t.invPeak, pB0[nPlain] = t.bFixed, pB1[nPlain] = t.bTok;
            pInvDiv[nPlain] = t.invTokDiv;
            ++nPlain;
        }
    }
    void add(const CommTerm& c) { comms[nComms++] = c; }
    /// Its terms into o (only those in use are copied).
    void copyTo(Block& o) const {
        o.nOps = nOps, o.nComms = nComms;
        o.actBytesPerTok = actBytesPerTok;
        std::copy(ops, ops + nOps, o.ops);
        std::copy(comms, comms + nComms, o.comms);
    }
    double weights() const {
        double w = 0;
        for (int i = 0; i < nOps; ++i) w += ops[i].weightBytes;
        return w;
    }
};

/// One pipeline stage's layers: by FFN kind, and by layer group and type (core/model: dense or MoE, times how
/// it attends), slot g * nTypes + k for the k-th of Impl::types in layer group g.
struct Stage {
    int dense = 0, moe = 0;
    std::array<int, kMaxSlots> n; ///< layers of each slot: the first Compiled::nSlots are set (stageAt)
    bool first = false, last = false;
    bool lastMoe = false; ///< the stage ends on a MoE layer (the layout its activations leave in)
    int8_t lastGroup = 0; ///< the layer group of its last layer
    /// Layer-group boundaries in the stage (at its first layer or inside it) where a token-sharded residual
    /// meets a group that keeps it replicated: an all-gather over the tp group (Compiled::regather). The
    /// other way a GPU keeps its slice, free.
    int gathers = 0;
};

struct Compiled {
    Degrees d;
    /// The choices being compiled (the Walker reads them): the first layer group's outside compile().
    std::array<int8_t, kOpCount> choices{};
    /// Layer groups: one without Plan::layerGroups; group g holds layers [groupBegin[g], groupBegin[g + 1]).
    int nGroups = 1, nSlots = 0;
    std::array<std::array<int8_t, kOpCount>, kMaxLayerGroups> groupChoices{};
    std::array<int, kMaxLayerGroups + 1> groupBegin{};
    CommTerm regather; ///< a token-sharded residual gathered where a layer group keeps it replicated
    /// [slot][pass] for each slot (see Stage), and the embedding and the head; pass [0] is a decode step
    /// (M = B), [1] a prefill pass (M = B*S, the head sees B).
    std::array<std::array<Block, 2>, kMaxSlots> body;
    Block emb[2], head[2];
    GroupShape tpG, a2aG;
    LinkClass p2pLink = LinkClass::Local;
    double p2pAlpha = 0, p2pSecPerTok = 0;
    /// Per slot: KV bytes per GPU per sequence per context token per layer (before its type's AttnScale).
    std::array<double, kMaxSlots> kv{};
    Overlap overlap = Overlap::Auto;
    double budget = double(kDefaultPrefillBudget); ///< tokens per forward pass of a replica
    double syncRanks = 1; ///< attention replicas that meet at every MoE all-to-all (data-parallel attention)
    double logSyncRanks = 0; ///< log(syncRanks), once a plan (stepAt's busiest rank)
    /// Per pipeline stage, its layers by type (stageOf): compile() fills them once, so the batch search's
    /// probes and the memory account do not recount them.
    std::vector<Stage> stages;
    /// Stages alike in everything a stage's time and memory depend on (layers per slot, the boundaries it
    /// holds, first, last, the layout it hands on) form a class: a balanced pipeline of pp stages has at most
    /// a few (the first, the last, the middle ones with and without an extra layer). The batch search's
    /// probes and the memory account work out each class once. classOf[i] is stage i's class; class q's
    /// first stage is classStage[q], so classes come in the order their first stages do.
    std::vector<int> classOf, classStage;
    mutable std::vector<double> classTime; ///< passTimes' scratch: a class's stage time in the step at hand
    int8_t choiceOf(Op o) const { return choices[int(o)]; }
    /// Speculative decoding (Plan::spec): K draft tokens, q = K + 1 tokens a sequence verifies per step,
    /// E tokens it yields per step on average; q = E = 1 without it.
    Speculative spec;
    double specQ = 1, specE = 1;
    /// MTP: the slot whose layer the MTP module is (the last layer's), priced with that layer's terms.
    int mtpSlot = 0;
    /// An EAGLE-3 head or draft model on the tp group: per pass over n tokens of b sequences at context
    /// ctx, compute = flopsPerTok n + attnFlops n ctx, memory = weightBytes + kvBytes b ctx (the roofs),
    /// `kernels` launches, and `allReduces` all-reduces (`ar`) of n x hidden over the tp group.
    struct DraftTerms {
        double flopsPerTok = 0, attnFlops = 0, weightBytes = 0, kvBytes = 0;
        double kernels = 0, allReduces = 0;
        CommTerm ar; ///< one all-reduce of n x hidden over the tp group
        double weightsResident = 0, kvPerToken = 0; ///< memory per GPU: weights, KV per context token
    } draft;
    /// MTP's own weights beside its layer (eh_proj: 2 hidden -> hidden), bytes per GPU.
    double mtpExtraWeights = 0;
    /// The memory fraction of the scenario's engine rule for this plan (memoryFraction()).
    double memFraction = 0.9;
};

/// One forward pass of a replica's micro-batch: `dec` decode tokens (one per running sequence) and `pre`
/// prefill tokens of `prompts` prompts, in one pass as engines with chunked prefill run them (vLLM,
/// TensorRT-LLM in-flight batching).
struct Step {
    double dec = 0, pre = 0, prompts = 0;
    /// Prefill tokens of the busiest of the attention ranks that meet at the MoE all-to-alls (data-parallel
    /// attention): prompts land whole on one rank, and every rank waits for it. pre when ranks are
    /// independent.
    double preCrit = 0;
    /// Decode tokens per decoding sequence: 1, or K + 1 in a speculative verify pass (the sequence's last
    /// token and its K draft tokens, each a query over the same cache, which the kernel reads once).
    double q = 1;
    double tokens() const { return dec + pre; }
    double rows() const { return dec + prompts; } ///< positions whose logits are computed (sampled)
    double decSeqs() const { return dec / q; }    ///< decoding sequences
    Step half() const { return {dec / 2, pre / 2, prompts / 2, preCrit / 2, q}; }
    Step critical() const { return {dec, preCrit, pre > 0 ? prompts * preCrit / pre : 0.0, preCrit, q}; }
};

struct PassTimes {
    double stageMax = 0, stageSum = 0;
    int slowest = 0;
    bool twoBatch = false; ///< the MoE layers ran with two-batch overlap
    /// The speculative draft's seconds in the last stage (draftTime): it reads only the step's decode tokens,
    /// so a chunk step with the same decode tokens reuses it (chunkedTtft).
    double draft = 0;
};

struct AtBatch {
    double throughput = 0, ttft = 0, tpot = 0; // tokens/s, s, s
    bool overTokenBudget = false;              // a step needs more tokens than the prefill budget allows
    bool twoBatch = false;                     // the MoE layers ran with two-batch overlap
    bool ttftDone = true;                      // ttft is exact, not its lower bound (serving)
    double chunks = 0, chunkPeriod = 0;        // serving: a new prompt's chunk steps and one's time, s
    double cycle = 0;                          // a step's time through the pipeline, s (tpot x E)
    Step step;                                 // serving: the steady step and its pass, for finishTtft
    PassTimes times;
};

} // namespace sp::costimpl
