#include "core/model/model.h"

namespace sp {

std::optional<Dtype> dtypeFromName(std::string_view s) {
    for (int i = 0; i < kDtypeCount; ++i)
        if (kDtypeNames[i] == s) return static_cast<Dtype>(i);
    return std::nullopt;
}

double kvElementsPerTokenPerLayer(const Model& m) {
    const auto& a = m.attention;
    if (a.type == AttentionType::MLA) return double(a.mla.kvLoraRank + a.mla.qkRopeHeadDim);
    return 2.0 * double(a.kvHeads * a.headDim);
}

ParamCounts countParams(const Model& m) {
    ParamCounts p;
    const double h = double(m.hidden);
    const auto& a = m.attention;
    p.embedding = double(m.vocab) * h;
    p.lmHead = m.tiedEmbeddings ? 0.0 : double(m.vocab) * h;
    if (a.type == AttentionType::MLA) {
        const auto& d = a.mla;
        const double qkDim = double(d.qkNopeHeadDim + d.qkRopeHeadDim);
        const double q = d.qLoraRank > 0 ? h * d.qLoraRank + double(d.qLoraRank) * a.heads * qkDim + d.qLoraRank
                                         : h * a.heads * qkDim;
        const double kv = h * double(d.kvLoraRank + d.qkRopeHeadDim) + double(d.kvLoraRank) +
                          double(d.kvLoraRank) * a.heads * double(d.qkNopeHeadDim + d.vHeadDim);
        const double o = double(a.heads * d.vHeadDim) * h;
        p.attention = q + kv + o;
    } else {
        p.attention = h * double(a.heads * a.headDim) * 2.0 + h * double(a.kvHeads * a.headDim) * 2.0;
    }
    p.norms = 2.0 * h;
    p.denseFfn = 3.0 * h * double(m.ffn);
    if (m.moe.present()) {
        p.router = h * double(m.moe.experts);
        p.routedExpert = 3.0 * h * double(m.moe.expertFfn);
        p.sharedExperts = 3.0 * h * double(m.moe.sharedExpertFfn) * double(m.moe.sharedExperts);
    }
    p.finalNorm = h;
    p.denseLayer = p.attention + p.norms + p.denseFfn;
    p.moeLayer = p.attention + p.norms + p.router + p.routedExpert * double(m.moe.experts) + p.sharedExperts;
    p.moeLayerActive = p.attention + p.norms + p.router + p.routedExpert * double(m.moe.topK) + p.sharedExperts;
    const double dl = double(m.denseLayers()), ml = double(m.moeLayers());
    p.total = p.embedding + p.lmHead + p.finalNorm + dl * p.denseLayer + ml * p.moeLayer;
    p.active = (m.tiedEmbeddings ? p.embedding : p.lmHead) + p.finalNorm + dl * p.denseLayer + ml * p.moeLayerActive;
    // An MTP module (DeepSeek-V3): one full layer plus a projection of 2h -> h and two norms; it shares the
    // embedding and the head with the main model.
    const double mtpLayer = (m.moe.present() ? p.moeLayer : p.denseLayer) + 2.0 * h * h + 2.0 * h;
    p.mtp = double(m.mtpLayers) * mtpLayer;
    return p;
}

} // namespace sp
