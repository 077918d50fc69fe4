// explain()'s per-operator and per-collective rows.

#include "core/cost/impl.h"

namespace sp {

// ------------------------------------------------------------------ explain

Breakdown CostModel::Impl::breakdown(const Compiled& c, const Step& step, std::string phase) const {
    Breakdown out;
    out.phase = std::move(phase);
    std::array<bool, kMaxSlots> tbo{};
    const PassTimes t = passTimes(c, step, tbo.data());
    const Stage& st = c.stages[size_t(t.slowest)];
    out.denseLayers = st.dense;
    out.moeLayers = st.moe;
    out.stageMs = t.stageMax * 1e3;
    out.twoBatchOverlap = t.twoBatch;
    out.pipelineTransferMs = c.d.pp > 1 ? p2pTime(c, c.stages[0], step.tokens()) * 1e3 : 0.0;
    out.bubbleMs = c.d.pp > 1 ? (double(c.d.pp) * t.stageMax - t.stageSum) / double(c.d.pp) * 1e3 : 0.0;
    // The same terms as blockParts, one row each (the attention core sums its decode and prefill parts).
    // Under two-batch overlap a MoE layer's rows are its two halves' work: the operators at twice a
    // half's time, the collectives at the part that stays exposed (fullMs keeps their whole time), so
    // the rows still add up to the stage.
    auto add = [&](Breakdown& out, const Block& bd, const Block& bp, LayerKind kind, bool overlapped) {
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
                if (cr.dec > 0) {
                    const Roof r = opRoofline(bd.ops[i], cr.dec, cr.decSeqs(), copies, nullptr, cr.q);
                    compute += r.compute, memory += r.memory, time += opTime(r);
                }
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
    // A dense or MoE row is per occurrence, so a reader multiplies it by the stage's layers of its kind.
    // Where the stage mixes layer types of one kind (gpt-oss: sliding and full attention; Qwen3-Next: linear
    // and full), each type's rows are weighed by its share of those layers and summed row by row (every type
    // of a kind walks the same operators and collectives: they follow from the plan's choices).
    // With layer groups, each group's rows come separately (OpCost::layerGroup), weighed by the group's share
    // of the stage's layers of the kind, so that the rows of every group together still add up to the stage.
    for (int g = 0; g < c.nGroups; ++g)
        for (int moe = 0; moe < 2; ++moe) {
            const int total = moe ? st.moe : st.dense;
            if (total == 0) continue;
            int inGroup = 0;
            for (int k = 0; k < nTypes; ++k)
                if (layerTypeIsMoe(types[k]) == bool(moe)) inGroup += st.n[g * nTypes + k];
            if (inGroup == 0) continue;
            const LayerKind kind = moe ? LayerKind::Moe : LayerKind::Dense;
            Breakdown acc;
            bool any = false;
            for (int t = 0; t < nTypes; ++t) {
                const int k = g * nTypes + t;
                if (layerTypeIsMoe(types[t]) != bool(moe) || st.n[k] == 0) continue;
                Breakdown one;
                add(one, c.body[k][0], c.body[k][1], kind, tbo[k]);
                if (st.n[k] == total) {
                    acc = std::move(one);
                    any = true;
                    break;
                }
                const double w = double(st.n[k]) / double(total);
                for (auto& o : one.ops) o.computeMs *= w, o.memoryMs *= w, o.timeMs *= w, o.weightBytes *= w;
                for (auto& k2 : one.comms) k2.bytes *= w, k2.timeMs *= w, k2.fullMs *= w;
                bool same = any && acc.ops.size() == one.ops.size() && acc.comms.size() == one.comms.size();
                for (size_t i = 0; same && i < one.ops.size(); ++i)
                    same = acc.ops[i].op == one.ops[i].op && acc.ops[i].choice == one.ops[i].choice;
                for (size_t i = 0; same && i < one.comms.size(); ++i)
                    same = acc.comms[i].where == one.comms[i].where && acc.comms[i].kind == one.comms[i].kind;
                if (!same) {
                    acc.ops.insert(acc.ops.end(), one.ops.begin(), one.ops.end());
                    acc.comms.insert(acc.comms.end(), one.comms.begin(), one.comms.end());
                    any = true;
                    continue;
                }
                for (size_t i = 0; i < one.ops.size(); ++i) {
                    OpCost& a = acc.ops[i];
                    a.computeMs += one.ops[i].computeMs, a.memoryMs += one.ops[i].memoryMs;
                    a.timeMs += one.ops[i].timeMs, a.weightBytes += one.ops[i].weightBytes;
                    a.memoryBound = a.memoryMs >= a.computeMs;
                }
                for (size_t i = 0; i < one.comms.size(); ++i) {
                    CommCost& a = acc.comms[i];
                    a.bytes += one.comms[i].bytes, a.timeMs += one.comms[i].timeMs,
                        a.fullMs += one.comms[i].fullMs;
                    a.overlapped = a.overlapped || one.comms[i].overlapped;
                }
            }
            const double share = double(inGroup) / double(total);
            for (auto& o : acc.ops) o.layerGroup = g, o.groupShare = share;
            for (auto& k2 : acc.comms) k2.layerGroup = g, k2.groupShare = share;
            out.ops.insert(out.ops.end(), acc.ops.begin(), acc.ops.end());
            out.comms.insert(out.comms.end(), acc.comms.begin(), acc.comms.end());
        }
    if (st.gathers > 0) {
        // The layer-group boundaries' all-gathers, as one row per stage (not per layer).
        CommCost cc;
        cc.layer = st.moe > 0 ? LayerKind::Moe : LayerKind::Dense;
        cc.where = "layer group boundary";
        cc.kind = c.regather.kind;
        cc.link = linkOf(c.regather.group);
        cc.group = c.regather.group.size;
        const double M = step.critical().tokens();
        cc.bytes = st.gathers * c.regather.bytesPerTok * M;
        cc.fullMs = cc.timeMs = st.gathers * commTime(c.regather, M) * 1e3;
        const int kindLayers = st.moe > 0 ? st.moe : st.dense;
        cc.fullMs /= kindLayers, cc.timeMs /= kindLayers, cc.bytes /= kindLayers; // per layer, as every row
        out.comms.push_back(std::move(cc));
    }
    if (st.first) add(out, c.emb[0], c.emb[1], LayerKind::Embedding, false);
    if (st.last) add(out, c.head[0], c.head[1], LayerKind::Head, false);
    if (st.last && c.spec.on() && step.dec > 0) {
        // The draft passes of the step, one row (they follow the verify pass on the last stage).
        const double b = step.decSeqs(), K = double(c.spec.draftTokens);
        OpCost oc;
        oc.layer = LayerKind::Draft;
        oc.op = "draft";
        oc.choice = specText(c.spec);
        oc.timeMs = draftTime(c, step) * 1e3;
        double weights = 0, kv = 0;
        draftMemory(c, weights, kv);
        oc.weightBytes = weights;
        out.ops.push_back(std::move(oc));
        out.draftMs = out.ops.back().timeMs;
        char buf[160];
        if (c.spec.method == SpecMethod::Ngram)
            std::snprintf(buf, sizeof buf, "%s: prompt lookup on the CPU", specText(c.spec).c_str());
        else if (K > 1)
            std::snprintf(buf, sizeof buf, "%s: 1 pass over %.0f tokens + %.0f over %.0f",
                          specText(c.spec).c_str(), step.dec, K - 1, b);
        else // one draft token: the pass over the verified tokens is the only one
            std::snprintf(buf, sizeof buf, "%s: 1 pass over %.0f tokens", specText(c.spec).c_str(), step.dec);
        out.draft = buf;
    }
    return out;
}

} // namespace sp
