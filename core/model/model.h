#pragma once
// The model: the structure of a (dense or MoE) decoder-only transformer, and the parameter counts derived from it.

#include "core/model/dtype.h"

#include <cstdint>
#include <string>

namespace sp {

enum class AttentionType { GQA, MLA };

/// Multi-head latent attention (DeepSeek-V2/V3) dimensions.
struct MlaDims {
    int64_t qLoraRank = 0; ///< 0: queries are not compressed
    int64_t kvLoraRank = 0;
    int64_t qkNopeHeadDim = 0;
    int64_t qkRopeHeadDim = 0;
    int64_t vHeadDim = 0;
    bool operator==(const MlaDims&) const = default;
};

struct Attention {
    AttentionType type = AttentionType::GQA;
    int64_t heads = 0;
    int64_t kvHeads = 0; ///< GQA only (MHA: == heads)
    int64_t headDim = 0; ///< GQA only
    MlaDims mla;
    bool operator==(const Attention&) const = default;
};

struct Moe {
    int64_t experts = 0; ///< routed experts per MoE layer; 0: dense model
    int64_t topK = 0;
    int64_t expertFfn = 0;
    int64_t sharedExperts = 0;
    int64_t sharedExpertFfn = 0; ///< intermediate size of one shared expert
    int64_t firstDenseLayers = 0;
    /// Node-limited routing (DeepSeek-V3 config.json n_group, topk_group): the experts form `groups` equal
    /// groups and a token picks its top-k experts from only `topkGroups` of them. 0: unrestricted.
    int64_t groups = 0;
    int64_t topkGroups = 0;
    bool present() const { return experts > 0; }
    bool operator==(const Moe&) const = default;
};

struct Model {
    std::string name;
    std::string source;
    std::string hubId;                 ///< Hugging Face repository id (ORG/NAME) when known: the exports' model path
    int64_t maxPositionEmbeddings = 0; ///< the longest context the model supports; 0: not stated
    int64_t layers = 0;
    int64_t hidden = 0;
    int64_t vocab = 0;
    bool tiedEmbeddings = false;
    Attention attention;
    int64_t ffn = 0; ///< dense gated FFN intermediate size
    Moe moe;
    int64_t mtpLayers = 0;
    Dtype weights = Dtype::BF16;
    Dtype activations = Dtype::BF16;
    Dtype kvCache = Dtype::BF16;

    int64_t moeLayers() const { return moe.present() ? layers - moe.firstDenseLayers : 0; }
    int64_t denseLayers() const { return layers - moeLayers(); }
    bool operator==(const Model&) const = default;
};

/// Parameter counts (not bytes), derived from the structure. Biases are left out (<0.01% of any supported model).
struct ParamCounts {
    double embedding = 0;    ///< input embedding table
    double lmHead = 0;       ///< 0 when tied to the embedding
    double attention = 0;    ///< per layer: projections and their norms
    double norms = 0;        ///< per layer: the two residual norms
    double denseFfn = 0;     ///< per dense layer
    double router = 0;       ///< per MoE layer
    double routedExpert = 0; ///< one routed expert
    double sharedExperts = 0;///< per MoE layer, all shared experts
    double finalNorm = 0;
    double denseLayer = 0;      ///< attention + norms + dense FFN
    double moeLayer = 0;        ///< attention + norms + router + all experts
    double moeLayerActive = 0;  ///< attention + norms + router + top-k routed + shared
    double total = 0;  ///< everything but the MTP layers
    /// Parameters a token computes with: total minus the unrouted experts and minus the input embedding table
    /// (a lookup, not a matmul). With this convention DeepSeek-V3 gives 36.6B ("37B activated").
    double active = 0;
    double mtp = 0; ///< multi-token-prediction layers, counted separately (DeepSeek-V3: about 14B with shared parts)
};

ParamCounts countParams(const Model& m);

/// KV-cache elements stored per token per layer (MLA: the compressed latent plus the rope key).
double kvElementsPerTokenPerLayer(const Model& m);

} // namespace sp
