#pragma once
#include <array>
#include <optional>
#include <string_view>

namespace sp {

enum class Dtype { FP32, BF16, FP16, FP8, INT8, FP4 };
inline constexpr int kDtypeCount = 6;
inline constexpr std::array<std::string_view, kDtypeCount> kDtypeNames{"fp32", "bf16", "fp16", "fp8", "int8", "fp4"};

constexpr double bytesOf(Dtype d) {
    constexpr std::array<double, kDtypeCount> b{4.0, 2.0, 2.0, 1.0, 1.0, 0.5};
    return b[static_cast<int>(d)];
}
constexpr std::string_view nameOf(Dtype d) { return kDtypeNames[static_cast<int>(d)]; }
std::optional<Dtype> dtypeFromName(std::string_view s);

} // namespace sp
