#pragma once
// Speculative decoding: the methods a plan may run, what a model brings for them (its MTP modules, an
// EAGLE-3 head, a draft model) and the acceptance rates that decide what a step yields.
//
// One step of speculative decoding: K draft passes propose K tokens per sequence, then one verify pass of
// the target reads its weights once for B x (K + 1) tokens and accepts a prefix of the proposal. With a_i
// the probability that draft token i is accepted given the ones before it were, a step yields on average
// E = 1 + a_1 + a_1 a_2 + ... + a_1 ... a_K tokens per sequence (the target's own token always counts).
// core/cost prices the passes on the roofline; this header holds the plan's choice and the data.

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sp {

/// None; MTP: the model's own multi-token-prediction module, run K times (DeepSeek-V3's one module reused,
/// as TensorRT-LLM's "MTP Eagle" and SGLang/vLLM do); Eagle3: an EAGLE-3 head on the target's hidden
/// states; Draft: a separate, smaller model; Ngram: prompt lookup, no model.
enum class SpecMethod : int8_t { None, Mtp, Eagle3, Draft, Ngram };
inline constexpr int kSpecMethodCount = 5;
inline constexpr std::array<std::string_view, kSpecMethodCount> kSpecMethodNames{"none", "mtp", "eagle3",
                                                                                 "draft", "ngram"};
std::optional<SpecMethod> specMethodFromName(std::string_view s);
inline std::string_view nameOf(SpecMethod m) {
    return kSpecMethodNames[size_t(m)];
}

/// The most draft tokens a plan may carry (the engines' recipes use 1 to 7).
inline constexpr int kMaxDraftTokens = 8;

/// A plan's speculative decoding: method and draft tokens per step (K); off when either is none/0.
struct Speculative {
    SpecMethod method = SpecMethod::None;
    int draftTokens = 0;
    bool on() const { return method != SpecMethod::None && draftTokens > 0; }
    bool operator==(const Speculative&) const = default;
};

/// "mtp x3", "none".
std::string specText(const Speculative& s);

/// A small dense transformer that drafts: an EAGLE-3 head (one decoder layer over the target's hidden
/// states, three of them fused by a linear layer, with its own, smaller vocabulary) or a draft model.
struct DraftModule {
    int64_t layers = 0;
    int64_t hidden = 0;
    int64_t ffn = 0; ///< gated FFN intermediate size
    int64_t heads = 0, kvHeads = 0, headDim = 0;
    int64_t vocab = 0;        ///< the head's vocabulary (EAGLE-3: its draft vocabulary)
    int64_t fusedStates = 0;  ///< EAGLE-3: target hidden states fused into its input (3); 0 for a draft model
    bool ownEmbedding = true; ///< a draft model has its own; an EAGLE-3 head reads the target's
    std::string hubId;        ///< where the engines load it from
    std::string source;       ///< its config
    bool present() const { return layers > 0 && hidden > 0; }
    bool operator==(const DraftModule&) const = default;
};

/// What a model brings for speculative decoding, with cited default acceptance rates per method.
struct SpecSupport {
    DraftModule eagle3, draft;
    std::array<std::vector<double>, kSpecMethodCount> acceptance; ///< defaults; empty: none
    std::array<std::string, kSpecMethodCount> acceptanceSource;
    bool operator==(const SpecSupport&) const = default;
};

/// Mean tokens a step yields per sequence: 1 + a_1 + a_1 a_2 + ... (K terms). `rates` must hold K values.
double tokensPerStep(const std::vector<double>& rates, int k);

} // namespace sp
