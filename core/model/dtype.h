#pragma once
#include <array>
#include <optional>
#include <string_view>

namespace sp {

/// FP4 is E2M1 (the element of MXFP4 and NVFP4); INT4 the element of w4a16 checkpoints. The scales that go
/// with the 4- and 8-bit formats are in the model's Quantization (core/model/quant.h), not in the dtype.
enum class Dtype { FP32, BF16, FP16, FP8, INT8, FP4, INT4 };
inline constexpr int kDtypeCount = 7;
inline constexpr std::array<std::string_view, kDtypeCount> kDtypeNames{"fp32", "bf16", "fp16", "fp8",
                                                                       "int8", "fp4",  "int4"};

constexpr double bytesOf(Dtype d) {
    constexpr std::array<double, kDtypeCount> b{4.0, 2.0, 2.0, 1.0, 1.0, 0.5, 0.5};
    return b[static_cast<int>(d)];
}
constexpr std::string_view nameOf(Dtype d) {
    return kDtypeNames[static_cast<int>(d)];
}
std::optional<Dtype> dtypeFromName(std::string_view s);

} // namespace sp
