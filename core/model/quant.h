#pragma once
// How a quantized checkpoint stores its weights: the element dtype, the scales beside them, and which
// parameter groups are quantized. Read from config.json's quantization_config or ModelOpt's
// hf_quant_config.json.

#include "core/model/dtype.h"

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace sp {

/// Groups of parameters that a checkpoint may store differently.
/// Norms are the layers' and the final RMSNorm weights (and the small per-head vectors: sinks, dt_bias,
/// A_log).
enum class ParamGroup { Embedding, Attention, DenseFfn, Router, Experts, SharedExperts, LmHead, Norms };
inline constexpr int kParamGroupCount = 8;
inline constexpr std::array<std::string_view, kParamGroupCount> kParamGroupNames{
    "embedding", "attention", "dense_ffn", "router", "experts", "shared_experts", "lm_head", "norms"};

enum class QuantMethod { None, Fp8, Mxfp4, Nvfp4, CompressedTensors };
inline constexpr std::array<std::string_view, 5> kQuantMethodNames{"none", "fp8", "mxfp4", "nvfp4",
                                                                   "compressed-tensors"};

struct Quantization {
    QuantMethod method = QuantMethod::None;
    Dtype storage = Dtype::BF16; ///< element dtype of a quantized weight
    /// Scales: one per `groupSize` consecutive values along a row (MXFP4 32, NVFP4 16, w4a16 128), or one per
    /// `blockSize` x `blockSize` tile (DeepSeek's FP8 128x128), or one per output row (`perChannel`), or only
    /// per tensor when all of these are 0.
    int64_t groupSize = 0;
    int64_t blockSize = 0;
    bool perChannel = false;
    double scaleBytes = 0;       ///< bytes of one group/block/channel scale
    double tensorScaleBytes = 0; ///< bytes per weight matrix (per-tensor weight and input scales)
    /// Which groups are quantized. Embeddings, routers and the LM head stay in the compute dtype unless the
    /// checkpoint says otherwise (every supported format excludes them by default).
    std::array<bool, kParamGroupCount> quantized{};
    bool present() const { return method != QuantMethod::None; }
    bool operator==(const Quantization&) const = default;
};

/// The formats of the supported checkpoints, with their quantized groups set to attention and all FFN
/// weights. Sources beside the definitions (core/model/quant.cpp).
Quantization fp8BlockQuant(int64_t block);  ///< DeepSeek-V3 style: FP8 E4M3, one FP32 scale per block x block
Quantization fp8PerTensorQuant();           ///< FP8 E4M3, one FP32 weight scale (and input scale) per matrix
Quantization mxfp4Quant();                  ///< OCP MX FP4 (E2M1), one E8M0 scale per 32 values
Quantization nvfp4Quant();                  ///< NVFP4 (E2M1), one FP8 E4M3 scale per 16, FP32 global scale
Quantization int8ChannelQuant();            ///< compressed-tensors w8a8: INT8, one BF16 scale per output row
Quantization int4GroupQuant(int64_t group); ///< compressed-tensors w4a16: INT4, one BF16 scale per group

} // namespace sp
