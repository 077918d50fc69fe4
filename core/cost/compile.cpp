// compile(): a plan into per-layer operator and collective terms, with the resharding collectives between
// layouts (the MoE layers' terms and all-to-alls are in compile_moe.cpp).

#include "core/cost/impl.h"

namespace sp {

Lay CostModel::Impl::needOfLinear(int8_t c) {
    return c == 0 ? Lay::R : c == 1 ? Lay::H : Lay::T;
} // column/row/token

Lay CostModel::Impl::outOfLinear(int8_t c) {
    return c == 0 ? Lay::H : c == 1 ? Lay::P : Lay::T;
}

/// A GEMM [tokens, k] x [k, n]: column shards n (needs R, gives H), row shards k (needs H, gives P),
/// token shards the tokens with the weights replicated.
OpTerm CostModel::Impl::gemm(Op op, ParamGroup g, int8_t ch, int tp, Lay need, double k, double n,
                             double params) const {
    OpTerm t;
    t.op = op;
    t.choice = ch;
    t.peak = gemmRate[int(g)];
    const double shard = need == Lay::T ? 1.0 : double(tp);
    t.tokDiv = need == Lay::T ? tp : 1;
    t.fTok = 2.0 * params / shard;
    t.weightBytes = params * wbOf(g) / shard;
    t.bFixed = t.weightBytes;
    const double kin = need == Lay::H ? k / tp : k, nout = need == Lay::R ? n / tp : n;
    t.bTok = (kin + nout) * ab;
    return t;
}

double CostModel::Impl::kvDivisor(int8_t cAttn, int tp, LayerAttention kind) const {
    if (cAttn != choice::AttnHead) return double(tp); // sequence or batch sharding splits the cache
    const Attention& a = s.model.attention;
    // A linear-attention layer's state and convolution split with its heads (the key heads are the fewer).
    if (kind == LayerAttention::Linear) return double(std::min<int64_t>(tp, a.linear.keyHeads));
    if (a.type == AttentionType::MLA) return 1.0;    // one latent serves every head
    return double(std::min<int64_t>(tp, a.kvHeads)); // KV heads replicate when tp exceeds them
}

void CostModel::Impl::compileAttention(Walker& x, int slot) const {
    const Model& mo = s.model;
    const Attention& a = mo.attention;
    const bool moeLayer = layerTypeIsMoe(types[slot]);
    const bool linear = layerTypeAttention(types[slot]) == LayerAttention::Linear;
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
        // The two residual norms, and the layer's other vectors (paramsOf's Norms group, kept whole on every
        // GPU, a few thousand parameters): q/k norms and sinks, or a linear-attention layer's dt_bias and
        // A_log per value head and its gated norm.
        double vectors = 0.0;
        if (linear) {
            vectors = 2.0 * double(a.linear.valueHeads) + double(a.linear.valueHeadDim);
        } else {
            if (a.qkNorm == QkNorm::PerHead) vectors += 2.0 * double(a.headDim);
            if (a.qkNorm == QkNorm::PerLayer) vectors += double((a.heads + a.kvHeads) * a.headDim);
            if (a.sinks) vectors += double(a.heads);
        }
        t.bFixed = t.weightBytes = (2.0 * h + vectors) * wbOf(ParamGroup::Norms);
        x.b.add(t);
    }
    x.produced(res, opNorm, h);
    double qkvWidth, oWidth, shardedParams, replicatedParams = 0;
    if (linear) {
        // Gated DeltaNet (transformers' Qwen3NextGatedDeltaNet): in_proj_qkvz gives q, k (key heads) and v,
        // z (value heads), in_proj_ba a beta and an alpha per value head; the depthwise causal conv1d over
        // q, k, v splits with the heads, as vLLM's column-parallel in_proj does.
        const auto& d = a.linear;
        const double kd = double(d.keyHeads * d.keyHeadDim), vd = double(d.valueHeads * d.valueHeadDim);
        qkvWidth = 2.0 * kd + 2.0 * vd + 2.0 * double(d.valueHeads);
        oWidth = vd;
        shardedParams = h * qkvWidth + (2.0 * kd + vd) * double(d.convKernel);
    } else if (a.type == AttentionType::MLA) {
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
        // An output gate (Qwen3-Next) is projected with the queries: heads x head_dim more.
        qkvWidth = double((a.heads * (a.outputGate ? 2 : 1) + 2 * a.kvHeads) * a.headDim);
        oWidth = double(a.heads * a.headDim);
        shardedParams = h * qkvWidth;
    }
    const Lay qNeed = needOfLinear(cQkv);
    x.to(qNeed, opQkv);
    OpTerm q = gemm(opQkv, ParamGroup::Attention, cQkv, tp, qNeed, h, qkvWidth, shardedParams);
    if (replicatedParams > 0) {
        // Replicated latent projections: full weights on every GPU; their FLOPs split only with the
        // tokens.
        q.fTok += 2.0 * replicatedParams;
        q.weightBytes += replicatedParams * wbOf(ParamGroup::Attention);
        q.bFixed = q.weightBytes;
    }
    x.b.add(q);
    x.produced(outOfLinear(cQkv), opQkv, qkvWidth);
    // attention core: head -> needs H gives H; sequence (context parallel) -> needs R (every GPU scores
    // all queries against its KV shard) gives P (partial outputs combined with their softmax statistics);
    // batch -> needs T gives T.
    const Lay aNeed = cAttn == choice::AttnHead ? Lay::H : cAttn == choice::AttnSequence ? Lay::R : Lay::T;
    x.to(aNeed, opAttn);
    {
        OpTerm t;
        t.op = opAttn;
        t.choice = cAttn;
        t.attention = true;
        t.peak = attnFlops;
        const double pairDec = attnPairFlops(true), pairPre = attnPairFlops(false), kvTok = kvBytesPerToken();
        const double S = double(s.workload.inputTokens);
        const bool byBatch = cAttn == choice::AttnBatch;
        const double workDiv = byBatch ? 1.0 : double(tp); // per sequence: heads or context split over tp
        const double kvDiv = byBatch ? 1.0 : kvDivisor(cAttn, tp, layerTypeAttention(types[slot]));
        if (byBatch) t.seqDiv = tp, t.tokDiv = tp;
        const AttnScale& sc = attnScale[slot];
        // decode: each step reads the (attended) cache; prefill: causal over the prompt, which writes its
        // cache once.
        t.fSeq = pairDec * ctxDecode / workDiv * sc.decodeRead;
        t.bSeq = kvTok * ctxDecode / kvDiv * sc.decodeRead;
        x.pre.attention = x.b.nOps;
        x.pre.fSeq = pairPre * S * (S + 1.0) / 2.0 / workDiv * sc.prefillPairs;
        x.pre.bSeq = kvTok * S / kvDiv * sc.prefillWrite;
        t.bTok = (qkvWidth + oWidth) * ab / workDiv;
        x.b.add(t);
    }
    x.produced(cAttn == choice::AttnHead       ? Lay::H
               : cAttn == choice::AttnSequence ? Lay::P
                                               : Lay::T,
               opAttn, oWidth);
    const Lay oNeed = cOut == choice::OutRow ? Lay::H : cOut == choice::OutColumn ? Lay::R : Lay::T;
    x.to(oNeed, opOut);
    x.b.add(gemm(opOut, ParamGroup::Attention, cOut, tp, oNeed, oWidth, h, oWidth * h));
    x.produced(cOut == choice::OutRow ? Lay::P : cOut == choice::OutColumn ? Lay::H : Lay::T, opOut, h);
    x.to(res, opNorm); // residual add, then norm 2 in the same layout
    x.produced(res, opNorm, h);
    x.b.actBytesPerTok += (4.0 * h + qkvWidth + oWidth) * ab / (res == Lay::T ? tp : 1);
}

void CostModel::Impl::compileDenseFfn(Walker& x) const {
    const int tp = x.tp();
    const double h = double(s.model.hidden), f = double(s.model.ffn);
    const int8_t cUp = x.c.choiceOf(Op::FfnUp), cDown = x.c.choiceOf(Op::FfnDown);
    const Lay res = x.lay;
    const Lay upNeed = needOfLinear(cUp);
    x.to(upNeed, Op::FfnUp);
    OpTerm up = gemm(Op::FfnUp, ParamGroup::DenseFfn, cUp, tp, upNeed, h, 2.0 * f, 2.0 * h * f); // gate, up
    x.b.add(up);
    x.produced(outOfLinear(cUp), Op::FfnUp, f); // after SiLU(gate) * up: width f
    const Lay downNeed = cDown == choice::DownRow ? Lay::H : cDown == choice::DownColumn ? Lay::R : Lay::T;
    x.to(downNeed, Op::FfnDown);
    x.b.add(gemm(Op::FfnDown, ParamGroup::DenseFfn, cDown, tp, downNeed, f, h, f * h));
    x.produced(cDown == choice::DownRow      ? Lay::P
               : cDown == choice::DownColumn ? Lay::H
                                             : Lay::T,
               Op::FfnDown, h);
    x.to(res, Op::Norms);
    x.produced(res, Op::Norms, h);
    x.b.actBytesPerTok += 3.0 * f * ab / (upNeed == Lay::T ? 1.0 : tp);
}

void CostModel::Impl::compileEmbedding(Walker& x, Lay firstRes) const {
    const double h = double(s.model.hidden), V = double(s.model.vocab);
    const int8_t c = x.c.choiceOf(Op::Embedding);
    OpTerm t;
    t.op = Op::Embedding;
    t.choice = c;
    t.weightBytes = V * h * wbOf(ParamGroup::Embedding) / (c == choice::EmbVocab ? x.tp() : 1);
    t.bTok = h * ab; // a row lookup per token
    x.b.add(t);
    x.produced(c == choice::EmbVocab ? Lay::P : Lay::R, Op::Embedding, h);
    x.to(firstRes, Op::Norms);
}

void CostModel::Impl::compileHead(Walker& x, Lay lastRes) const {
    const double h = double(s.model.hidden), V = double(s.model.vocab);
    const int tp = x.tp();
    const int8_t c = x.c.choiceOf(Op::LmHead);
    x.produced(lastRes, Op::Norms, h);
    const Lay need = needOfLinear(c);
    x.to(need, Op::LmHead);
    x.b.add(gemm(Op::LmHead, ParamGroup::LmHead, c, tp, need, h, V, V * h));
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
        t.price(net, lineTable);
        x.b.add(t);
    }
}

Lay CostModel::Impl::resOf(const Compiled& c, bool moeLayer) {
    return resOf(c.choices, moeLayer);
}

Lay CostModel::Impl::resOf(const std::array<int8_t, kOpCount>& choices, bool moeLayer) {
    return choices[int(moeLayer ? Op::MoeNorms : Op::Norms)] == choice::NormToken ? Lay::T : Lay::R;
}

int CostModel::Impl::strideOf(const Plan& p, Axis a) {
    int stride = 1;
    for (Axis o : p.meshOrder) {
        if (o == a) return stride;
        stride *= p.degrees.get(o);
    }
    return stride;
}

void CostModel::Impl::compile(const Plan& p, Compiled& c) const {
    // A Compiled may be reused (CostModel::evaluate): what only some plans set starts from its default.
    c.a2aG = GroupShape{}, c.syncRanks = 1.0, c.logSyncRanks = 0.0;
    c.p2pLink = LinkClass::Local, c.p2pAlpha = c.p2pSecPerTok = 0.0;
    c.regather = CommTerm{};
    c.d = p.degrees;
    // Layer groups first: the stages count their layers by group.
    c.nGroups = p.layerGroups.empty() ? 1 : int(p.layerGroups.size());
    c.nSlots = c.nGroups * nTypes;
    c.groupBegin[0] = 0;
    for (int g = 0; g < c.nGroups; ++g) {
        c.groupChoices[size_t(g)] = p.layerGroups.empty() ? p.choices : p.layerGroups[size_t(g)].choices;
        c.groupBegin[size_t(g + 1)] =
            c.groupBegin[size_t(g)] +
            (p.layerGroups.empty() ? int(s.model.layers) : p.layerGroups[size_t(g)].layers);
    }
    // Stage spans in one pass: the plan's own split, else the balanced one (the extra layers go to the middle
    // stages, as stageSpan and pipelineStages).
    const int pp = std::max(1, p.degrees.pp), L = int(s.model.layers);
    c.stages.resize(size_t(pp));
    if (!p.stageLayers.empty()) {
        for (int i = 0, begin = 0; i < pp; ++i) {
            const int n = p.stageLayers[size_t(i)];
            stageAt(c, i, pp, begin, n, c.stages[size_t(i)]);
            begin += n;
        }
    } else {
        const int base = L / pp, extra = L % pp, shift = (extra > 0 && extra < pp - 1) ? 1 : 0;
        for (int i = 0, begin = 0; i < pp; ++i) {
            const int n = base + ((i - shift) >= 0 && (i - shift) < extra ? 1 : 0);
            stageAt(c, i, pp, begin, n, c.stages[size_t(i)]);
            begin += n;
        }
    }
    classifyStages(c);
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
        // tp-first; the all-to-all spans one expert replica (the first ep*etp of them), which may end
        // part-way through a tp group.
        const int k = d.ep * d.etp;
        const int kt = std::min(k, d.tp), kd = (k + d.tp - 1) / d.tp;
        c.a2aG =
            k > d.tp && k % d.tp != 0 ? placeFirst(k, d.tp, sTp, sDp, gpn) : place(kt, sTp, kd, sDp, gpn);
        c.syncRanks = moeLayers > 0 ? double(std::min(d.dp, kd)) : 1.0;
        c.logSyncRanks = std::log(c.syncRanks);
    }
    if (d.pp > 1) {
        const GroupShape ppG = place(d.pp, sPp, 1, sPp * d.pp, gpn);
        c.p2pLink = ppG.nodes > 1 ? LinkClass::Network : LinkClass::NvLink;
        const bool inter = c.p2pLink == LinkClass::Network;
        c.p2pAlpha = inter ? net.alphaInter : net.alphaIntra;
        c.p2pSecPerTok = double(m.hidden) * ab / (inter ? net.bwInter : net.intra(2)); // one peer
    }
    const double kvTok = kvBytesPerToken();
    // Each layer walked once, for the decode step; its prefill block is that with PrefillTerms' terms.
    for (int g = 0; g < c.nGroups; ++g) {
        c.choices = c.groupChoices[size_t(g)];
        for (int k = 0; k < nTypes; ++k) {
            const int slot = g * nTypes + k;
            const bool moe = layerTypeIsMoe(types[k]);
            c.body[slot][0].clear();
            PrefillTerms pre;
            Walker x{*this, c, c.body[slot][0], pre};
            x.produced(resOf(c, moe), moe ? Op::MoeNorms : Op::Norms, double(m.hidden));
            compileAttention(x, k);
            if (moe)
                compileMoe(x);
            else
                compileDenseFfn(x);
            c.body[slot][0].copyTo(c.body[slot][1]);
            pre.applyTo(c.body[slot][1]);
            c.kv[slot] = kvTok / kvDivisor(c.choiceOf(moe ? Op::MoeAttention : Op::Attention), d.tp,
                                           layerTypeAttention(types[k]));
        }
    }
    // The embedding hands its output to the first layer's residual layout, the head takes the last's
    // (their own choices are the same in every group); neither differs between the passes.
    c.choices = c.groupChoices[0];
    c.emb[0].clear(), c.head[0].clear();
    PrefillTerms none;
    Walker xe{*this, c, c.emb[0], none};
    compileEmbedding(xe, resOf(c, firstMoe));
    Walker xh{*this, c, c.head[0], none};
    compileHead(xh, resOf(c.groupChoices[size_t(c.nGroups - 1)], lastMoe));
    c.emb[0].copyTo(c.emb[1]);
    c.head[0].copyTo(c.head[1]);
    if (c.nGroups > 1 && d.tp > 1) {
        // Where a layer group keeps the residual replicated after one that token-shards it: the tp group's
        // slices are gathered (the same all-gather a Walker inserts between T and R).
        CommTerm& t = c.regather;
        t = CommTerm{};
        t.kind = Collective::AllGather;
        t.group = c.tpG;
        t.from = t.to = Op::Norms;
        t.bytesPerTok = double(m.hidden) * ab;
        t.price(net, lineTable);
    }
    compileSpeculative(p, c);
    c.memFraction = memoryFraction(s, p, s.constraints.memoryRule).value;
    // Each operator's seconds per FLOP and its divisors' reciprocals, once per plan instead of on every
    // probe of the batch search.
    auto invert = [&](Block& b) {
        for (int i = 0; i < b.nOps; ++i) {
            OpTerm& t = b.ops[i];
            t.invPeak = 1.0 / (t.peak > 0 ? t.peak : peakFlops);
            t.invTokDiv = 1.0 / double(t.tokDiv), t.invSeqDiv = 1.0 / double(t.seqDiv);
        }
        b.preparePlain();
    };
    for (int pass = 0; pass < 2; ++pass) {
        for (int k = 0; k < c.nSlots; ++k) invert(c.body[k][pass]);
        invert(c.emb[pass]), invert(c.head[pass]);
    }
}

} // namespace sp

namespace sp {

void CostModel::Impl::computeAttentionScales() {
    const Model& m = s.model;
    const double perToken = kvBytesPerToken();
    if (perToken <= 0) return;
    const double indexer =
        m.attention.indexer.present() ? double(m.attention.indexer.headDim) * kb / perToken : 0.0;
    const double state = linearStateBytesPerLayer(m) / perToken; // in tokens of a full layer's KV
    const double held = std::max(1.0, kvContext()), read = std::max(1.0, ctxDecode),
                 S = std::max(1.0, double(s.workload.inputTokens));
    // Mean past tokens a query attends to over a causal prompt of S tokens when it sees at most W of them.
    auto causalMean = [](double S, double W) {
        return W <= 0 || S <= W ? (S + 1.0) / 2.0 : (W * (W + 1.0) / 2.0 + (S - W) * W) / S;
    };
    std::array<AttnScale, kLayerTypes> sum{};
    for (auto& x : sum) x = {0, 0, 0, 0};
    std::array<int, kLayerTypes> n{};
    for (const LayerSpec& l : layerSpecs(m)) {
        AttnScale a;
        if (l.attention == LayerAttention::Linear) {
            a = {state / held, state / read, 0.0, state / S};
        } else {
            const double window = l.window > 0 ? double(l.window) : 0.0;
            const double topk = m.attention.indexer.present() ? double(m.attention.indexer.topK) : 0.0;
            const double span = window > 0 && topk > 0 ? std::min(window, topk) : std::max(window, topk);
            a.kvHeld = (window > 0 ? std::min(held, window) / held : 1.0) + indexer;
            a.decodeRead = attendedTokens(m, l, read) / read + indexer;
            a.prefillPairs = causalMean(S, span) / ((S + 1.0) / 2.0);
            a.prefillWrite = 1.0 + indexer;
        }
        const int k = slotOf[layerTypeOf(l.moe, l.attention)];
        sum[k].kvHeld += a.kvHeld, sum[k].decodeRead += a.decodeRead;
        sum[k].prefillPairs += a.prefillPairs, sum[k].prefillWrite += a.prefillWrite;
        ++n[k];
    }
    for (int k = 0; k < nTypes; ++k)
        if (n[k] > 0)
            attnScale[k] = {sum[k].kvHeld / n[k], sum[k].decodeRead / n[k], sum[k].prefillPairs / n[k],
                            sum[k].prefillWrite / n[k]};
}

} // namespace sp

namespace sp {

void CostModel::Impl::compileSpeculative(const Plan& p, Compiled& c) const {
    c.spec = p.spec;
    c.specQ = c.specE = 1.0;
    c.draft = Compiled::DraftTerms{};
    c.mtpExtraWeights = 0.0;
    c.mtpSlot = 0;
    if (!p.spec.on()) return;
    const int K = p.spec.draftTokens;
    c.specQ = double(K + 1);
    c.specE = tokensPerStep(acceptanceRates(s, p.spec.method), K);
    const Model& m = s.model;
    if (p.spec.method == SpecMethod::Mtp) {
        // The MTP module is a layer like the model's last one, in the last layer group.
        const int last = int(m.layers) - 1;
        c.mtpSlot = (c.nGroups - 1) * nTypes + slotOf[size_t(mix.typeOf(last))];
        const double h = double(m.hidden);
        c.mtpExtraWeights = 2.0 * h * h * wbOf(ParamGroup::Attention);
        return;
    }
    if (p.spec.method == SpecMethod::Ngram) return;
    const DraftModule& d = p.spec.method == SpecMethod::Eagle3 ? m.spec.eagle3 : m.spec.draft;
    // Attention by batch (data-parallel attention) runs the draft whole on each rank's own sequences;
    // otherwise its linears are sharded over the tp group, two all-reduces a layer.
    const bool byBatch =
        c.choiceOf(opRelevant(m, Op::MoeAttention) ? Op::MoeAttention : Op::Attention) == choice::AttnBatch;
    const double shard = byBatch ? 1.0 : double(c.d.tp);
    const double h = double(d.hidden), hd = double(d.headDim);
    const double heads = double(d.heads), kv = double(d.kvHeads);
    // EAGLE-3's layer projects [the token's embedding, the fused hidden state] (2 hidden wide) into q, k, v.
    const double qIn = d.fusedStates > 0 ? 2.0 * h : h;
    const double perLayer = qIn * (heads + 2.0 * kv) * hd + heads * hd * h + 3.0 * h * double(d.ffn);
    // fc fuses the target's hidden states (fusedStates x the target's hidden) into one.
    const double fuse = double(d.fusedStates) * double(m.hidden) * h;
    const double gemm = double(d.layers) * perLayer + double(d.vocab) * h + fuse;
    const double embed = d.ownEmbedding ? double(d.vocab) * h : 0.0;
    const double kvShard = shard > 1 ? std::min(shard, kv) : 1.0;
    Compiled::DraftTerms& t = c.draft;
    t.flopsPerTok = 2.0 * gemm / shard;
    t.attnFlops = double(d.layers) * heads * 2.0 * 2.0 * hd / shard;
    t.weightBytes = gemm * ab / shard;
    t.weightsResident = (gemm + embed) * ab / shard;
    t.kvPerToken = double(d.layers) * 2.0 * kv * hd * kb / kvShard;
    t.kvBytes = t.kvPerToken;
    t.kernels = double(d.layers) * 6.0 + 2.0 + (d.fusedStates > 0 ? 1.0 : 0.0);
    if (shard > 1) {
        t.allReduces = 2.0 * double(d.layers);
        t.ar.kind = Collective::AllReduce;
        t.ar.group = c.tpG;
        t.ar.bytesPerTok = h * ab;
        t.ar.price(net, lineTable);
    }
}

} // namespace sp
