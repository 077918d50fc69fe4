#include "core/model/model.h"

#include <algorithm>

namespace sp {

std::optional<Dtype> dtypeFromName(std::string_view s) {
    for (int i = 0; i < kDtypeCount; ++i)
        if (kDtypeNames[i] == s) return static_cast<Dtype>(i);
    return std::nullopt;
}

bool Model::isMoeLayer(int64_t i) const {
    if (!moe.present() || i < moe.firstDenseLayers || i < 0 || i >= layers) return false;
    if (moe.layerStep > 1 && (i + 1) % moe.layerStep != 0) return false;
    return std::find(moe.denseLayerList.begin(), moe.denseLayerList.end(), i) == moe.denseLayerList.end();
}

LayerAttention Model::layerAttention(int64_t i) const {
    if (attentionPattern.empty()) return LayerAttention::Full;
    return attentionPattern[size_t(i % int64_t(attentionPattern.size()))];
}

int64_t Model::moeLayers() const {
    // Closed form (the cost model asks for it on every evaluation): layers i in [firstDenseLayers, layers)
    // with (i + 1) % step == 0 are the multiples of step in [firstDenseLayers + 1, layers], less the listed
    // dense layers among them (a list entry counts once however often it is repeated).
    if (!moe.present() || layers <= 0) return 0;
    const int64_t step = std::max<int64_t>(1, moe.layerStep),
                  first = std::clamp<int64_t>(moe.firstDenseLayers, 0, layers);
    int64_t n = layers / step - first / step;
    for (size_t k = 0; k < moe.denseLayerList.size(); ++k) {
        const int64_t i = moe.denseLayerList[k];
        const bool repeated =
            std::find(moe.denseLayerList.begin(), moe.denseLayerList.begin() + std::ptrdiff_t(k), i) !=
            moe.denseLayerList.begin() + std::ptrdiff_t(k);
        if (!repeated && i >= first && i < layers && (i + 1) % step == 0) --n;
    }
    return n;
}

int64_t Model::layersOf(LayerAttention kind) const {
    int64_t n = 0;
    for (int64_t i = 0; i < layers; ++i) n += layerAttention(i) == kind;
    return n;
}

double kvElementsPerTokenPerLayer(const Model& m) {
    const auto& a = m.attention;
    if (a.type == AttentionType::MLA) return double(a.mla.kvLoraRank + a.mla.qkRopeHeadDim);
    return 2.0 * double(a.kvHeads * a.headDim);
}

std::vector<LayerSpec> layerSpecs(const Model& m) {
    std::vector<LayerSpec> out(size_t(std::max<int64_t>(m.layers, 0)));
    for (int64_t i = 0; i < m.layers; ++i) {
        auto& l = out[size_t(i)];
        l.moe = m.isMoeLayer(i);
        l.attention = m.layerAttention(i);
        l.window = l.attention == LayerAttention::Sliding   ? m.attention.slidingWindow
                   : l.attention == LayerAttention::Chunked ? m.attention.chunkSize
                                                            : 0;
        l.rope = std::find(m.nopeLayers.begin(), m.nopeLayers.end(), i) == m.nopeLayers.end();
    }
    return out;
}

LayerMix::LayerMix(const Model& m) {
    const int64_t L = std::max<int64_t>(m.layers, 0);
    m_type.resize(size_t(L));
    m_prefix.assign(size_t(L) + 1, {});
    for (int64_t i = 0; i < L; ++i) {
        const int t = layerTypeOf(m.isMoeLayer(i), m.layerAttention(i));
        m_type[size_t(i)] = int8_t(t);
        m_prefix[size_t(i) + 1] = m_prefix[size_t(i)];
        ++m_prefix[size_t(i) + 1][size_t(t)];
    }
}

double attendedTokens(const Model& m, const LayerSpec& l, double ctx) {
    if (l.attention == LayerAttention::Linear) return 0.0;
    double t = ctx;
    if (l.window > 0) t = std::min(t, double(l.window));
    if (m.attention.indexer.present()) t = std::min(t, double(m.attention.indexer.topK));
    return t;
}

double linearStateBytesPerLayer(const Model& m) {
    const auto& d = m.attention.linear;
    if (!d.present()) return 0.0;
    // Gated DeltaNet: the recurrent state (v heads x dk x dv) and the causal convolution's last kernel-1
    // inputs over q, k and v (2 * keyHeads*dk + valueHeads*dv channels), as vLLM's MambaStateShapeCalculator
    // gated_delta_net_state_shape sizes them (vllm/model_executor/layers/mamba/mamba_utils.py, v0.10.2).
    const double state = double(d.valueHeads) * double(d.keyHeadDim) * double(d.valueHeadDim);
    const double convChannels =
        2.0 * double(d.keyHeads * d.keyHeadDim) + double(d.valueHeads * d.valueHeadDim);
    const double conv = convChannels * double(std::max<int64_t>(d.convKernel - 1, 0));
    return (state + conv) * bytesOf(m.kvCache);
}

double kvBytesPerSequence(const Model& m, int64_t contextTokens) {
    const double ctx = double(std::max<int64_t>(contextTokens, 0));
    const double perToken = kvElementsPerTokenPerLayer(m) * bytesOf(m.kvCache);
    const double indexerPerToken =
        m.attention.indexer.present() ? double(m.attention.indexer.headDim) * bytesOf(m.kvCache) : 0.0;
    double total = 0;
    for (const LayerSpec& l : layerSpecs(m)) {
        if (l.attention == LayerAttention::Linear) {
            total += linearStateBytesPerLayer(m);
            continue;
        }
        const double kept = l.window > 0 ? std::min(ctx, double(l.window)) : ctx;
        total += kept * (perToken + indexerPerToken);
    }
    return total;
}

namespace {

double softmaxAttentionParams(const Model& m) {
    const double h = double(m.hidden);
    const auto& a = m.attention;
    double p = 0;
    if (a.type == AttentionType::MLA) {
        const auto& d = a.mla;
        const double qkDim = double(d.qkNopeHeadDim + d.qkRopeHeadDim);
        const double q = d.qLoraRank > 0
                             ? h * d.qLoraRank + double(d.qLoraRank) * a.heads * qkDim + d.qLoraRank
                             : h * a.heads * qkDim;
        const double kv = h * double(d.kvLoraRank + d.qkRopeHeadDim) + double(d.kvLoraRank) +
                          double(d.kvLoraRank) * a.heads * double(d.qkNopeHeadDim + d.vHeadDim);
        const double o = double(a.heads * d.vHeadDim) * h;
        p = q + kv + o;
    } else {
        const double qWidth = double(a.heads * a.headDim) * (a.outputGate ? 2.0 : 1.0);
        p = h * qWidth + h * double(a.heads * a.headDim) + h * double(a.kvHeads * a.headDim) * 2.0;
        if (a.qkNorm == QkNorm::PerHead) p += 2.0 * double(a.headDim);
        if (a.qkNorm == QkNorm::PerLayer) p += double((a.heads + a.kvHeads) * a.headDim);
    }
    if (a.sinks) p += double(a.heads);
    if (a.indexer.present()) {
        // DeepSeek-V3.2's indexer (inference/model.py, class Indexer): wq_b from the query latent, wk from
        // the hidden state with a LayerNorm (weight and bias), and weights_proj giving each head's weight.
        const auto& x = a.indexer;
        const double qIn = a.type == AttentionType::MLA && a.mla.qLoraRank > 0 ? double(a.mla.qLoraRank) : h;
        p += qIn * double(x.heads * x.headDim) + h * double(x.headDim) + 2.0 * double(x.headDim) +
             h * double(x.heads);
    }
    return p;
}

// Gated DeltaNet as in transformers' Qwen3NextGatedDeltaNet: in_proj_qkvz (q, k, v, z), in_proj_ba (b, a per
// value head), the depthwise conv1d over q/k/v, dt_bias and A_log per value head, a gated RMSNorm of the
// value head dim, out_proj.
double linearAttentionParams(const Model& m) {
    const auto& d = m.attention.linear;
    if (!d.present()) return 0.0;
    const double h = double(m.hidden);
    const double kd = double(d.keyHeads * d.keyHeadDim), vd = double(d.valueHeads * d.valueHeadDim);
    return h * (2.0 * kd + 2.0 * vd) + h * 2.0 * double(d.valueHeads) +
           (2.0 * kd + vd) * double(d.convKernel) + 2.0 * double(d.valueHeads) + double(d.valueHeadDim) +
           vd * h;
}

} // namespace

ParamCounts countParams(const Model& m) {
    ParamCounts p;
    const double h = double(m.hidden);
    p.embedding = double(m.vocab) * h;
    p.lmHead = m.tiedEmbeddings ? 0.0 : double(m.vocab) * h;
    p.attention = softmaxAttentionParams(m);
    p.linearAttention = linearAttentionParams(m);
    p.norms = 2.0 * h;
    p.denseFfn = 3.0 * h * double(m.ffn);
    if (m.moe.present()) {
        p.router = h * double(m.moe.experts);
        p.routedExpert = 3.0 * h * double(m.moe.expertFfn);
        p.sharedExperts = 3.0 * h * double(m.moe.sharedExpertFfn) * double(m.moe.sharedExperts) +
                          (m.moe.sharedExpertGate && m.moe.sharedExperts > 0 ? h : 0.0);
    }
    p.finalNorm = h;
    p.denseLayer = p.attention + p.norms + p.denseFfn;
    p.moeLayer = p.attention + p.norms + p.router + p.routedExpert * double(m.moe.experts) + p.sharedExperts;
    p.moeLayerActive =
        p.attention + p.norms + p.router + p.routedExpert * double(m.moe.topK) + p.sharedExperts;
    for (int64_t i = 0; i < m.layers; ++i) {
        const double attn = m.layerAttention(i) == LayerAttention::Linear ? p.linearAttention : p.attention;
        if (m.isMoeLayer(i)) {
            p.moeLayers += p.moeLayer - p.attention + attn;
            p.moeLayersActive += p.moeLayerActive - p.attention + attn;
        } else {
            p.denseLayers += p.denseLayer - p.attention + attn;
        }
    }
    p.vision = double(m.visionParams);
    p.total = p.embedding + p.lmHead + p.finalNorm + p.denseLayers + p.moeLayers + p.vision;
    p.active = (m.tiedEmbeddings ? p.embedding : p.lmHead) + p.finalNorm + p.denseLayers + p.moeLayersActive;
    // An MTP module (DeepSeek-V3): one full layer plus a projection of 2h -> h and two norms; it shares the
    // embedding and the head with the main model.
    const double mtpLayer = (m.moe.present() ? p.moeLayer : p.denseLayer) + 2.0 * h * h + 2.0 * h;
    p.mtp = double(m.mtpLayers) * mtpLayer;
    return p;
}

} // namespace sp
