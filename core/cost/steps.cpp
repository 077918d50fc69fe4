// A step's time: operators on the roofline, collectives, two-batch overlap, the pipeline's stages, and the
// phases' throughput and latency at a batch.

#include "core/cost/impl.h"

#include "core/common/text.h"

namespace sp {

// ------------------------------------------------------------------ stages, times, memory

void CostModel::Impl::stageAt(const Compiled& c, int i, int pp, int begin, int n, Stage& st) const {
    st.dense = st.moe = 0;
    st.first = i == 0;
    st.last = i == pp - 1;
    st.lastMoe = n > 0 && layerTypeIsMoe(mix.typeOf(begin + n - 1));
    st.lastGroup = 0;
    st.gathers = 0;
    if (c.nGroups <= 1) {
        for (int k = 0; k < nTypes; ++k) {
            st.n[k] = mix.count(types[k], begin, n);
            (layerTypeIsMoe(types[k]) ? st.moe : st.dense) += st.n[k];
        }
        return;
    }
    std::fill(st.n.begin(), st.n.begin() + c.nSlots, 0);
    const int end = begin + n;
    for (int g = 0; g < c.nGroups; ++g) {
        const int gb = c.groupBegin[size_t(g)], ge = c.groupBegin[size_t(g + 1)];
        const int lo = std::max(begin, gb), hi = std::min(end, ge);
        if (hi <= lo) continue;
        for (int k = 0; k < nTypes; ++k) {
            const int slot = g * nTypes + k;
            st.n[slot] = mix.count(types[k], lo, hi - lo);
            (layerTypeIsMoe(types[k]) ? st.moe : st.dense) += st.n[slot];
        }
        if (hi == end) st.lastGroup = int8_t(g);
        // The boundary at this group's first layer, when the stage holds it.
        if (g > 0 && gb >= begin && gb < end && c.d.tp > 1 &&
            resOf(c.groupChoices[size_t(g - 1)], layerTypeIsMoe(mix.typeOf(gb - 1))) == Lay::T &&
            resOf(c.groupChoices[size_t(g)], layerTypeIsMoe(mix.typeOf(gb))) == Lay::R)
            ++st.gathers;
    }
}

void CostModel::Impl::classifyStages(Compiled& c) {
    const int pp = int(c.stages.size());
    c.classOf.resize(size_t(pp));
    c.classStage.clear();
    for (int i = 0; i < pp; ++i) {
        const Stage& a = c.stages[size_t(i)];
        int q = 0;
        const int nc = int(c.classStage.size());
        for (; q < nc; ++q) {
            const Stage& b = c.stages[size_t(c.classStage[size_t(q)])];
            if (a.first == b.first && a.last == b.last && a.lastMoe == b.lastMoe &&
                a.lastGroup == b.lastGroup && a.gathers == b.gathers &&
                std::equal(a.n.begin(), a.n.begin() + c.nSlots, b.n.begin()))
                break;
        }
        if (q == nc) c.classStage.push_back(i);
        c.classOf[size_t(i)] = q;
    }
    c.classTime.resize(c.classStage.size());
}

std::vector<std::array<int, kLayerTypes>> stageLayerTypes(const Model& m, int pp) {
    Plan p;
    p.degrees.pp = pp;
    return stageLayerTypes(m, p);
}

std::vector<std::array<int, kLayerTypes>> stageLayerTypes(const Model& m, const Plan& p) {
    const LayerMix mix(m);
    std::vector<std::array<int, kLayerTypes>> out;
    for (const auto& [begin, n] : pipelineStages(mix.layers(), p)) {
        auto& row = out.emplace_back();
        for (int t = 0; t < kLayerTypes; ++t) row[size_t(t)] = mix.count(t, begin, n);
    }
    return out;
}

/// Items (tokens, prompts) of the busiest of div shards when x of them arrive per step on average. Whole
/// items split as ceil(x / div); under one item per step (a serving step starts B / O new prompts, often
/// far below one) a step holds a whole item with probability x, so the busiest shard's expected share is
/// x, not one item. `inv` is 1 / div, a product in place of a division: for whole x (tokens and sequences
/// mostly are) x (1 / div) rounds to the whole quotient wherever div divides x, as x / div does, since 1 /
/// div is within half an ulp and the product's error stays under half the quotient's ulp. A quotient within
/// rounding of a whole number is that number: a share that is whole in exact arithmetic can land an ulp above
/// it as a product of rounded factors (the busiest data-parallel rank's one prompt, prompts x preCrit / pre
/// = 1.0000000000000002 at every other batch), where ceil would count a second item.
static double busiestShare(double x, double div, double inv) {
    if (x < 1.0) return x;
    const double q = div == 1.0 ? x : x * inv; // x / 1 is x exactly
    return std::ceil(q - q * 0x1p-40);
}

CostModel::Impl::Roof CostModel::Impl::opRoofline(const OpTerm& t, double M, double B,
                                                  double copiesPerReplicaGroup, Roof* half, double fq) const {
    const double inv = t.invPeak;
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
    // Only the attention core has sequence terms; elsewhere they would add exact zeros, so they are skipped.
    const bool seqTerms = t.fSeq != 0 || t.bSeq != 0;
    const double div = double(t.tokDiv), tok = busiestShare(M, div, t.invTokDiv);
    if (half) {
        const double tokH = busiestShare(0.5 * M, div, t.invTokDiv);
        if (seqTerms) {
            const double seqH = busiestShare(0.5 * B, double(t.seqDiv), t.invSeqDiv);
            half->compute = (t.fTok * tokH * perTokH + t.fSeq * fq * seqH) * inv;
            half->memory = (fixedH + t.bTok * tokH * perTokH) * invBw + t.bSeq * seqH * invBwKv;
        } else {
            half->compute = t.fTok * tokH * perTokH * inv;
            half->memory = (fixedH + t.bTok * tokH * perTokH) * invBw;
        }
    }
    if (!seqTerms) return {t.fTok * tok * perTok * inv, (fixed + t.bTok * tok * perTok) * invBw};
    const double seq = busiestShare(B, double(t.seqDiv), t.invSeqDiv);
    return {(t.fTok * tok * perTok + t.fSeq * fq * seq) * inv,
            (fixed + t.bTok * tok * perTok) * invBw + t.bSeq * seq * invBwKv};
}

double CostModel::Impl::commTime(const CommTerm& k, double M) {
    return M <= 0 ? 0.0 : k.time(std::ceil(M / k.tokDiv));
}

double CostModel::Impl::copiesOf(const Compiled& c, double M) const {
    return double(c.d.dp) * M * double(s.model.moe.topK) / double(std::max(1, c.d.edp));
}

/// Compute and communication seconds of one layer kind in a step (and, with `half`, of a half-batch).
/// The attention core serves the decode tokens (against their context) and the prefill tokens (causal
/// over their prompt) in one kernel; every other operator sees all the step's tokens at once, so its
/// weights are read once. A step with prefill tokens uses the prefill block's collectives (DeepEP normal
/// kernels), a decode-only step the decode block's (low-latency kernels). The routed experts see every
/// rank's tokens spread by the all-to-all; the rest runs on the busiest rank's.
[[gnu::flatten]] CostModel::Impl::Parts CostModel::Impl::blockParts(const Compiled& c, const Block& bd,
                                                                    const Block& bp, const Step& st,
                                                                    Parts* half) const {
    const Block& main = st.pre > 0 ? bp : bd;
    const Step cr = st.critical();
    const double M = cr.tokens(), copies = copiesOf(c, st.tokens()), rows = st.rows();
    // The plain operators first, in one loop over arrays (opRoofline's terms for an operator with neither
    // sequence nor expert terms, in the same order of operations), summed below in the operators' order.
    double tPlain[10], tPlainH[10];
    const int np = main.nPlain;
    for (int k = 0; k < np; ++k) {
        const double tok = M < 1.0 ? M : std::ceil(M * main.pInvDiv[k]);
        const double comp = main.pF[k] * tok * main.pInvPeak[k],
                     mem = (main.pB0[k] + main.pB1[k] * tok) * invBw;
        tPlain[k] = std::max(comp, mem) + unhidden * std::min(comp, mem) + launch;
    }
    if (half) {
        const double MH = 0.5 * M;
        for (int k = 0; k < np; ++k) {
            const double tok = MH < 1.0 ? MH : std::ceil(MH * main.pInvDiv[k]);
            const double comp = main.pF[k] * tok * main.pInvPeak[k],
                         mem = (main.pB0[k] + main.pB1[k] * tok) * invBw;
            tPlainH[k] = std::max(comp, mem) + unhidden * std::min(comp, mem) + launch;
        }
    }
    Parts p;
    Parts h;
    Roof hr;
    Roof* hp = half ? &hr : nullptr;
    for (int i = 0, k = 0; i < main.nOps; ++i) {
        if (main.plain[i]) {
            p.ops += tPlain[k];
            if (half) h.ops += tPlainH[k];
            ++k;
        } else if (main.ops[i].attention) {
            const bool both = cr.dec > 0 && cr.pre > 0;
            if (cr.dec > 0) {
                p.ops += opTime(opRoofline(bd.ops[i], cr.dec, cr.decSeqs(), copies, hp, cr.q));
                if (half) h.ops += opTime(hr);
            }
            if (cr.pre > 0) {
                p.ops += opTime(opRoofline(bp.ops[i], cr.pre, cr.prompts, copies, hp));
                if (half) h.ops += opTime(hr);
            }
            if (both) p.ops -= launch, h.ops -= launch; // one varlen kernel
        } else {
            const OpTerm& o = main.ops[i];
            const double m = o.op == Op::LmHead ? rows : o.experts ? st.tokens() : M;
            p.ops += opTime(opRoofline(o, m, cr.dec + cr.prompts, copies, hp));
            if (half) h.ops += opTime(hr);
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
double CostModel::Impl::blockTime(const Compiled& c, const Block& bd, const Block& bp, const Step& st,
                                  bool moe, bool& twoBatch) const {
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

double CostModel::Impl::twoBatchTime(const Parts& half) const {
    const double ov = s.cluster.efficiency.overlap;
    return 2.0 * (std::max(half.ops, half.comms) + (1.0 - ov) * std::min(half.ops, half.comms));
}

double CostModel::Impl::p2pTime(const Compiled& c, const Stage& st, double M) const {
    if (st.last) return 0.0;
    const bool tokenSharded = resOf(c.groupChoices[size_t(st.lastGroup)], st.lastMoe) == Lay::T;
    return c.p2pAlpha + c.p2pSecPerTok * M / (tokenSharded ? c.d.tp : 1);
}

/// One step of a replica's micro-batch through every stage: each slot's (layer group's and type's) time once,
/// weighed by the stage's layers of that slot.
PassTimes CostModel::Impl::passTimes(const Compiled& c, const Step& st, bool* typeTbo,
                                     double draftKnown) const {
    PassTimes r;
    bool unused = false;
    std::array<double, kMaxSlots> tt; // only the first nSlots are written and read
    const int slots = c.nSlots;
    for (int k = 0; k < slots; ++k) {
        const bool moe = slotMoe[k];
        bool tbo = false;
        tt[k] = blockTime(c, c.body[k][0], c.body[k][1], st, moe, tbo);
        r.twoBatch = r.twoBatch || tbo;
        if (typeTbo) typeTbo[k] = tbo;
    }
    const double te = blockTime(c, c.emb[0], c.emb[1], st, false, unused);
    const double th = blockTime(c, c.head[0], c.head[1], st, false, unused);
    const double gather = c.nGroups > 1 ? commTime(c.regather, st.critical().tokens()) : 0.0;
    const double draft = draftKnown >= 0 ? draftKnown : c.spec.on() && st.dec > 0 ? draftTime(c, st) : 0.0;
    r.draft = draft;
    // Each class of alike stages once (compile()'s, see classifyStages), then the stages in order.
    const int nc = int(c.classStage.size());
    double* tc = c.classTime.data();
    for (int q = 0; q < nc; ++q) {
        const Stage& sg = c.stages[size_t(c.classStage[size_t(q)])];
        double body = 0.0;
        for (int k = 0; k < slots; ++k) body += sg.n[k] * tt[k];
        if (sg.gathers > 0) body += sg.gathers * gather;
        tc[q] = body + (sg.first ? te : 0.0) + (sg.last ? th + draft : 0.0) + p2pTime(c, sg, st.tokens());
    }
    const int pp = c.d.pp;
    const int* cls = c.classOf.data();
    double sum = 0.0, most = 0.0;
    int slowest = 0;
    for (int i = 0; i < pp; ++i) {
        const double t = tc[cls[i]];
        sum += t;
        if (t > most) most = t, slowest = i;
    }
    r.stageSum = sum, r.stageMax = most, r.slowest = slowest;
    return r;
}

/// The step a phase runs at B sequences per micro-batch.
///  prefill: B prompts of I tokens; decode: B tokens; serving: B decode tokens plus the prefill tokens
///  of the B / O prompts that replace the finished sequences (B I / O tokens), in one pass.
///  With data-parallel attention, the r ranks that meet at the all-to-alls start n = r B / O prompts a
///  step between them, each whole on one rank (in chunks of at most budget - B tokens): the busiest rank
///  starts min(n, n/r + sqrt(2 (n/r) ln r)) of them (the maximum of r Poisson loads).
Step CostModel::Impl::stepAt(const Compiled& c, double B) const {
    const Workload& w = s.workload;
    const double I = double(w.inputTokens), O = double(w.outputTokens);
    // Speculative decoding: a sequence verifies q = K + 1 tokens a step and yields E of them, so it finishes
    // in O / E steps and B E / O prompts replace the finished ones each step.
    const double q = c.specQ, E = c.specE;
    switch (w.phase) {
    case Phase::Prefill:
        return {0.0, B * I, B, B * I};
    case Phase::Decode:
        return {B * q, 0.0, 0.0, 0.0, q};
    case Phase::Serving: {
        Step st{B * q, B * E * I / O, B * E / O, B * E * I / O, q};
        const double r = c.syncRanks;
        if (r > 1) {
            const double n = r * B * E / O, per = n / r;
            const double busiest = std::min(n, per + std::sqrt(2.0 * per * c.logSyncRanks));
            const double chunk = std::min(I, std::max(1.0, c.budget - B * q));
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
///  serving (continuous batching with chunked prefill): TPOT = cycle; throughput = dp pp B / cycle (the
///           steady step carries the average prefill, B I / O tokens); TTFT: see chunkedTtft. With `exact`
///           false, TTFT is its lower bound (1 + k) cycle, which needs no further pass (the batch search's
///           first round; finishTtft completes it).
AtBatch CostModel::Impl::atBatch(const Compiled& c, double B, bool exact) const {
    const Workload& w = s.workload;
    const double pp = c.d.pp, dp = c.d.dp;
    const Step st = stepAt(c, B);
    const PassTimes t = passTimes(c, st);
    const double cycle = std::max(pp * t.stageMax, t.stageSum);
    AtBatch r;
    r.twoBatch = t.twoBatch;
    r.overTokenBudget =
        st.tokens() > std::max(c.budget, w.phase == Phase::Prefill ? double(w.inputTokens) : 0.0) + 1e-9;
    if (w.phase == Phase::Prefill) {
        r.throughput = dp * pp * B * double(w.inputTokens) / cycle;
        r.ttft = t.stageSum;
        return r;
    }
    // A step yields E tokens a sequence (1 without speculative decoding).
    r.cycle = cycle;
    r.tpot = cycle / c.specE;
    r.throughput = dp * pp * B * c.specE / cycle;
    if (w.phase == Phase::Serving) {
        r.ttft = chunkedTtft(c, st, t, cycle, !exact, &r.chunks, &r.chunkPeriod);
        r.ttftDone = exact;
        r.step = st, r.times = t;
    }
    return r;
}

void CostModel::Impl::finishTtft(const Compiled& c, AtBatch& r) const {
    if (r.ttftDone) return;
    r.ttft = chunkedTtft(c, r.step, r.times, r.cycle, false, &r.chunks, &r.chunkPeriod);
    r.ttftDone = true;
}

/// TTFT under chunked prefill: a new prompt waits for the step in flight (one cycle: at most that; on average
/// half for random arrivals, the whole kept as a margin for the scheduler and the tail), then its I tokens
/// run in k = ceil(I / (budget - B)) steps of the spare budget, k chunks of I / k tokens. Those steps are not
/// the steady one: each carries the B decode tokens and a whole chunk (at least the average prefill; with
/// data-parallel attention the chunk lands on one rank, whose step every rank waits for). A chunk step
/// occupies its micro-batch's place in the pipeline: its own stages, with the other pp - 1 micro-batches'
/// steady steps at the slowest stage between two of its chunks, so one chunk takes
///   period = max(sum of the chunk step's stages, its slowest stage + (pp - 1) x the steady slowest stage)
/// (one step's time for pp 1), and TTFT = cycle + k x period. The prompt's FLOPs, and each chunk's reading
/// of the weights beside the decode tokens, are in it; a larger budget takes fewer, longer steps. (The
/// model before charged k + 1 steady cycles, below the prompt's own compute when the steady step carries
/// little prefill: 150 ms for an 8,192-token prompt on Llama-3.1-70B over eight H100s, whose FLOPs alone
/// take 240 ms at the peak.)
/// Each chunk takes at least a steady cycle, so (1 + k) cycle bounds TTFT from below; `bound` returns it
/// without the chunk step's pass.
double CostModel::Impl::chunkedTtft(const Compiled& c, const Step& st, const PassTimes& t, double cycle,
                                    bool bound, double* chunks, double* period) const {
    const double I = double(s.workload.inputTokens);
    const double spare = std::max(1.0, c.budget - st.dec); // the decode tokens' share: B, or B (K + 1)
    const double k = std::ceil(I / spare);
    *chunks = k, *period = cycle;
    if (bound) return (1.0 + k) * cycle;
    const double chunk = I / k;
    const double r = std::max(1.0, c.syncRanks);
    Step cs = st;
    cs.pre = std::max(st.pre, chunk / r);
    cs.preCrit = std::max(st.preCrit, chunk);
    cs.prompts = cs.pre / I;
    // Where the steady step already carries a whole chunk (data-parallel attention's busiest rank, or short
    // answers, whose B I / O prefill tokens a step exceed a chunk), the chunk step is the steady one.
    if (cs.pre == st.pre && cs.preCrit == st.preCrit) return cycle + k * cycle;
    const PassTimes tc = passTimes(c, cs, nullptr, t.draft); // the same decode tokens: the same draft
    *period = std::max(tc.stageSum, tc.stageMax + (double(c.d.pp) - 1.0) * t.stageMax);
    return cycle + k * *period;
}

double CostModel::Impl::sloRatio(const AtBatch& r) const {
    const Workload& w = s.workload;
    double f = 0.0;
    if (w.ttftMs > 0 && w.phase != Phase::Decode) f = std::max(f, r.ttft * 1e3 / w.ttftMs);
    if (w.tpotMs > 0 && w.phase != Phase::Prefill) f = std::max(f, r.tpot * 1e3 / w.tpotMs);
    return f; // <= 1: met
}

void CostModel::Impl::describeSlo(const AtBatch& r, int64_t B, Metrics& m) const {
    const Workload& w = s.workload;
    auto say = [&](const char* what, double ms, double slo) {
        m.violations.push_back((Sentence() << what << Fixed{ms, 1} << " ms at batch " << (long long)B
                                           << " exceeds the SLO of " << General{slo, 3} << " ms")
                                   .take());
    };
    if (w.ttftMs > 0 && w.phase != Phase::Decode && r.ttft * 1e3 > w.ttftMs)
        say("TTFT ", r.ttft * 1e3, w.ttftMs);
    if (w.tpotMs > 0 && w.phase != Phase::Prefill && r.tpot * 1e3 > w.tpotMs)
        say("TPOT ", r.tpot * 1e3, w.tpotMs);
}

} // namespace sp

namespace sp {

// ------------------------------------------------------------------ speculative decoding

double CostModel::Impl::draftPass(const Compiled& c, double n, double b, double headTime) const {
    if (n <= 0) return 0.0;
    if (c.spec.method == SpecMethod::Mtp) {
        // The MTP module is one more layer of the model's last layer's kind (DeepSeek-V3: an MLA + MoE layer)
        // over n tokens, under the plan's sharding and collectives, plus its eh_proj (the token's embedding
        // and the previous hidden state, 2 hidden -> hidden, replicated) and the shared head, whose logits
        // are taken for one position a sequence (headTime: the same b rows in every pass, priced once).
        // The layer runs whole, without two-batch overlap: the engines split only the target model's forward
        // into micro-batches (SGLang's DeepseekModelNextN calls its decoder layer directly, outside
        // model_forward_maybe_tbo: python/sglang/srt/models/deepseek_nextn.py at 0114f9c9; vLLM's
        // EagleProposer.propose runs the draft under a forward context without micro-batch slices:
        // vllm/v1/spec_decode/eagle.py at 008603a3).
        bool tbo = false;
        const Step st{n, 0.0, 0.0, 0.0, n / b};
        double t = blockTime(c, c.body[size_t(c.mtpSlot)][0], c.body[size_t(c.mtpSlot)][1], st, false, tbo);
        const double h = double(s.model.hidden);
        t += opTime({2.0 * 2.0 * h * h * n / peakFlops, c.mtpExtraWeights / bw});
        return t + headTime;
    }
    // An EAGLE-3 head or a draft model: a small dense transformer at the activation precision, sharded over
    // the tp group (the engines run the draft with the target's tensor parallelism).
    const Compiled::DraftTerms& d = c.draft;
    const double ctx = ctxDecode;
    const Roof r{d.flopsPerTok * n / attnFlops + d.attnFlops * n * ctx / attnFlops,
                 d.weightBytes / bw + d.kvBytes * b * ctx / bwKv};
    return std::max(r.compute, r.memory) + unhidden * std::min(r.compute, r.memory) + d.kernels * launch +
           d.allReduces * d.ar.time(n);
}

/// The draft passes of a step: the first over every token the step verified (the accepted tokens' hidden
/// states, padded to K + 1 a sequence: TensorRT-LLM's "MTP Eagle" feeds "all of them along with their
/// corresponding hidden states" to the first MTP forward, then "the token ID and the hidden state of one
/// token" to each later one, NVIDIA/TensorRT-LLM docs/source/blogs/tech_blog/
/// blog2_DeepSeek_R1_MTP_Implementation_and_Optimization.md at fbbc05dd1445; vLLM's EAGLE proposer alike),
/// then K - 1 over one token a sequence. N-gram drafting is a lookup in the prompt on the CPU: free here.
double CostModel::Impl::draftTime(const Compiled& c, const Step& st) const {
    if (!c.spec.on() || c.spec.method == SpecMethod::Ngram) return 0.0;
    const double b = st.decSeqs();
    bool tbo = false;
    const double head = c.spec.method == SpecMethod::Mtp && b > 0
                            ? blockTime(c, c.head[0], c.head[1], Step{b, 0.0, 0.0, 0.0, 1.0}, false, tbo)
                            : 0.0;
    const double first = draftPass(c, st.dec, b, head);
    return c.spec.draftTokens > 1 ? first + double(c.spec.draftTokens - 1) * draftPass(c, b, b, head) : first;
}

void CostModel::Impl::draftMemory(const Compiled& c, double& weights, double& kvPerToken) const {
    weights = kvPerToken = 0.0;
    if (!c.spec.on()) return;
    if (c.spec.method == SpecMethod::Mtp) {
        const int k = c.mtpSlot;
        weights = c.body[size_t(k)][0].weights() + c.mtpExtraWeights;
        kvPerToken = c.kv[size_t(k)] * attnScale[size_t(slotType[size_t(k)])].kvHeld;
    } else if (c.spec.method != SpecMethod::Ngram) {
        weights = c.draft.weightsResident;
        kvPerToken = c.draft.kvPerToken;
    }
}

} // namespace sp
