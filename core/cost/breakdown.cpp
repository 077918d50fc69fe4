// explain()'s per-operator and per-collective rows.

#include "core/cost/impl.h"

namespace sp {

// ------------------------------------------------------------------ explain

Breakdown CostModel::Impl::breakdown(const Compiled& c, const Step& step, std::string phase) const {
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
                compute += r.compute, memory += r.memory, time += opTime(r);
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

} // namespace sp
