#include "core/model/quant.h"

#include "core/model/weights.h"

namespace sp {

namespace {
Quantization linearWeights(QuantMethod method, Dtype storage) {
    Quantization q;
    q.method = method;
    q.storage = storage;
    for (ParamGroup g :
         {ParamGroup::Attention, ParamGroup::DenseFfn, ParamGroup::Experts, ParamGroup::SharedExperts})
        q.quantized[int(g)] = true;
    return q;
}
} // namespace

// DeepSeek-V3's config.json: "quant_method": "fp8", "fmt": "e4m3", "weight_block_size": [128, 128]; each
// weight has a float32 weight_scale_inv of shape [ceil(out/128), ceil(in/128)] (deepseek-ai/DeepSeek-V3
// README_WEIGHTS.md).
Quantization fp8BlockQuant(int64_t block) {
    Quantization q = linearWeights(QuantMethod::Fp8, Dtype::FP8);
    q.blockSize = block;
    q.scaleBytes = 4.0;
    return q;
}

// Per-tensor FP8 (vLLM's Fp8LinearMethod for "activation_scheme": "static"): a float32 weight_scale and a
// float32 input_scale per linear layer (vllm/model_executor/layers/quantization/fp8.py, v0.10).
Quantization fp8PerTensorQuant() {
    Quantization q = linearWeights(QuantMethod::Fp8, Dtype::FP8);
    q.tensorScaleBytes = 8.0;
    return q;
}

// OCP Microscaling Formats (MX) v1.0 spec, section 5: MXFP4 = blocks of 32 FP4 E2M1 elements sharing one
// 8-bit E8M0 scale. gpt-oss stores its experts so (openai/gpt-oss README "MXFP4"; *_blocks and *_scales
// tensors).
Quantization mxfp4Quant() {
    Quantization q = linearWeights(QuantMethod::Mxfp4, Dtype::FP4);
    q.groupSize = 32;
    q.scaleBytes = 1.0;
    return q;
}

// NVFP4 as TensorRT Model Optimizer writes it (hf_quant_config.json "quant_algo": "NVFP4", "group_size": 16):
// packed E2M1 weight, an FP8 E4M3 weight_scale per 16 values, and per linear a float32 weight_scale_2 (the
// global scale) and a float32 input_scale (NVIDIA/TensorRT-Model-Optimizer
// modelopt/torch/export/quant_utils.py, 0.35).
Quantization nvfp4Quant() {
    Quantization q = linearWeights(QuantMethod::Nvfp4, Dtype::FP4);
    q.groupSize = 16;
    q.scaleBytes = 1.0;
    q.tensorScaleBytes = 8.0;
    return q;
}

// compressed-tensors "W8A8" (llm-compressor's INT8 scheme, "strategy": "channel"): int8 weights and one
// weight_scale per output channel in the model dtype (neuralmagic/compressed-tensors
// quantization/quant_scheme.py).
Quantization int8ChannelQuant() {
    Quantization q = linearWeights(QuantMethod::CompressedTensors, Dtype::INT8);
    q.perChannel = true;
    q.scaleBytes = 2.0;
    return q;
}

// compressed-tensors "W4A16" (pack-quantized, "strategy": "group", "group_size": 128, symmetric): int4 packed
// into int32, one weight_scale per group in the model dtype (same source).
Quantization int4GroupQuant(int64_t group) {
    Quantization q = linearWeights(QuantMethod::CompressedTensors, Dtype::INT4);
    q.groupSize = group;
    q.scaleBytes = 2.0;
    return q;
}

// ---------------------------------------------------------------- weight bytes

Dtype unquantizedDtype(const Model& m) {
    return m.quant.present() ? m.activations : m.weights;
}

// The vectors of the model: two RMSNorms per layer and the final one, q/k norms, attention sinks, and per
// linear layer dt_bias, A_log and the gated norm.
double normParams(const Model& m) {
    const auto& a = m.attention;
    const double softmax = double(m.layers - m.layersOf(LayerAttention::Linear));
    const double linear = double(m.layersOf(LayerAttention::Linear));
    double perSoftmax = 0;
    if (a.qkNorm == QkNorm::PerHead) perSoftmax += 2.0 * double(a.headDim);
    if (a.qkNorm == QkNorm::PerLayer) perSoftmax += double((a.heads + a.kvHeads) * a.headDim);
    if (a.sinks) perSoftmax += double(a.heads);
    const double perLinear =
        a.linear.present() ? 2.0 * double(a.linear.valueHeads) + double(a.linear.valueHeadDim) : 0;
    return double(m.layers) * 2.0 * double(m.hidden) + double(m.hidden) + softmax * perSoftmax +
           linear * perLinear;
}

double paramsOf(const Model& m, ParamGroup g) {
    const ParamCounts p = countParams(m);
    const double dense = double(m.denseLayers()), moe = double(m.moeLayers());
    switch (g) {
    case ParamGroup::Embedding:
        return p.embedding;
    case ParamGroup::LmHead:
        return p.lmHead;
    case ParamGroup::DenseFfn:
        return dense * p.denseFfn;
    case ParamGroup::Router:
        return moe * p.router;
    case ParamGroup::Experts:
        return moe * p.routedExpert * double(m.moe.experts);
    case ParamGroup::SharedExperts:
        return moe * p.sharedExperts;
    case ParamGroup::Norms:
        return normParams(m);
    case ParamGroup::Attention:
        return p.total - p.vision - p.embedding - p.lmHead - dense * p.denseFfn -
               moe * (p.router + p.routedExpert * double(m.moe.experts) + p.sharedExperts) - normParams(m);
    }
    return 0.0;
}

double matricesOf(const Model& m, ParamGroup g) {
    const double dense = double(m.denseLayers()), moe = double(m.moeLayers());
    switch (g) {
    case ParamGroup::Embedding:
        return 1.0;
    case ParamGroup::LmHead:
        return m.tiedEmbeddings ? 0.0 : 1.0;
    case ParamGroup::DenseFfn:
        return 3.0 * dense;
    case ParamGroup::Router:
        return moe;
    case ParamGroup::Experts:
        return 3.0 * moe * double(m.moe.experts);
    case ParamGroup::SharedExperts:
        return 3.0 * moe * double(m.moe.sharedExperts);
    case ParamGroup::Norms:
        return 0.0;
    case ParamGroup::Attention: {
        const double softmax = double(m.layers - m.layersOf(LayerAttention::Linear));
        const double linear = double(m.layersOf(LayerAttention::Linear));
        const double perSoftmax =
            m.attention.type == AttentionType::MLA ? (m.attention.mla.qLoraRank > 0 ? 5.0 : 4.0) : 4.0;
        return softmax * perSoftmax + linear * 3.0; // Gated DeltaNet: in_proj_qkvz, in_proj_ba, out_proj
    }
    }
    return 0.0;
}

double weightBytesPerParam(const Model& m, ParamGroup g) {
    const Quantization& q = m.quant;
    if (!q.present() || !q.quantized[int(g)]) return bytesOf(unquantizedDtype(m));
    double b = bytesOf(q.storage);
    if (q.groupSize > 0) b += q.scaleBytes / double(q.groupSize);
    if (q.blockSize > 0) b += q.scaleBytes / double(q.blockSize * q.blockSize);
    // One scale per output row: a row holds about `hidden` inputs (all but the down projections, whose rows
    // are longer, so this slightly overcounts).
    if (q.perChannel && m.hidden > 0) b += q.scaleBytes / double(m.hidden);
    return b;
}

double weightBytes(const Model& m, ParamGroup g) {
    double b = paramsOf(m, g) * weightBytesPerParam(m, g);
    if (m.quant.present() && m.quant.quantized[int(g)]) b += matricesOf(m, g) * m.quant.tensorScaleBytes;
    return b;
}

double weightBytes(const Model& m) {
    double b = double(m.visionParams) * bytesOf(unquantizedDtype(m));
    for (int g = 0; g < kParamGroupCount; ++g) b += weightBytes(m, ParamGroup(g));
    return b;
}

} // namespace sp
