#pragma once
// The model: the structure of a (dense or MoE) decoder-only transformer, and the parameter counts derived
// from it.

#include "core/model/dtype.h"
#include "core/model/quant.h"
#include "core/model/speculative.h"

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

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

/// How one layer attends. Full: every past token. Sliding: the last `slidingWindow` tokens (Mistral,
/// gpt-oss). Chunked: the tokens of its own chunk of `chunkSize` (Llama 4). Linear: a recurrent state of
/// fixed size and no KV cache (Qwen3-Next's Gated DeltaNet).
enum class LayerAttention { Full, Sliding, Chunked, Linear };
inline constexpr std::array<std::string_view, 4> kLayerAttentionNames{"full", "sliding", "chunked", "linear"};

/// Norms on the queries and keys: none, one of head_dim per head shared over heads (Qwen3), or one over all
/// heads' width (MiniMax-M2, "qk_norm_type": "per_layer").
enum class QkNorm { None, PerHead, PerLayer };
inline constexpr std::array<std::string_view, 3> kQkNormNames{"none", "per_head", "per_layer"};

/// A linear-attention layer (Gated DeltaNet, as in Qwen3-Next): projections to q, k (keyHeads x keyHeadDim),
/// v and the output gate (valueHeads x valueHeadDim), a short causal convolution over q/k/v, and per value
/// head a keyHeadDim x valueHeadDim recurrent state.
struct LinearAttentionDims {
    int64_t keyHeads = 0;
    int64_t valueHeads = 0;
    int64_t keyHeadDim = 0;
    int64_t valueHeadDim = 0;
    int64_t convKernel = 0;
    bool present() const { return keyHeads > 0; }
    bool operator==(const LinearAttentionDims&) const = default;
};

/// DeepSeek sparse attention's lightning indexer: it scores past tokens with `heads` small heads of `headDim`
/// and the attention then reads only the `topK` best, so attention work stops growing past topK tokens.
struct SparseIndexer {
    int64_t topK = 0; ///< 0: no indexer
    int64_t heads = 0;
    int64_t headDim = 0;
    bool present() const { return topK > 0; }
    bool operator==(const SparseIndexer&) const = default;
};

struct Attention {
    AttentionType type = AttentionType::GQA;
    int64_t heads = 0;
    int64_t kvHeads = 0; ///< GQA only (MHA: == heads)
    int64_t headDim = 0; ///< GQA only
    MlaDims mla;
    QkNorm qkNorm = QkNorm::None;
    bool outputGate =
        false;          ///< a sigmoid gate on the attention output, projected with the queries (Qwen3-Next)
    bool sinks = false; ///< a learned sink logit per head (gpt-oss)
    double rotaryFraction = 1.0; ///< fraction of head_dim that is rotated (GLM-4.5: 0.5, Qwen3-Next: 0.25)
    int64_t slidingWindow = 0;   ///< tokens a Sliding layer sees; 0: none
    int64_t chunkSize = 0;       ///< tokens per chunk of a Chunked layer; 0: none
    SparseIndexer indexer;
    LinearAttentionDims linear;
    bool operator==(const Attention&) const = default;
};

struct Moe {
    int64_t experts = 0; ///< routed experts per MoE layer; 0: dense model
    int64_t topK = 0;
    int64_t expertFfn = 0;
    int64_t sharedExperts = 0;
    int64_t sharedExpertFfn = 0; ///< intermediate size of one shared expert
    int64_t firstDenseLayers = 0;
    /// Past the first dense layers, layer i (from 0) is MoE when (i + 1) % layerStep == 0 (Llama 4's
    /// interleave_moe_layer_step, Qwen2-MoE's decoder_sparse_step)...
    int64_t layerStep = 1;
    std::vector<int64_t> denseLayerList; ///< ...and it is not in this list (Qwen's mlp_only_layers)
    bool sharedExpertGate = false; ///< a sigmoid gate (hidden -> 1) on the shared expert's output (Qwen)
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
    std::string hubId; ///< Hugging Face repository id (ORG/NAME) when known: the exports' model path
    /// The checkpoint's architecture as its config.json names it (architectures[0], e.g. "LlamaForCausalLM"):
    /// what the engines' model registries look up. Empty: not known (the exports do not check it).
    std::string architecture;
    int64_t maxPositionEmbeddings = 0; ///< the longest context the model supports; 0: not stated
    int64_t layers = 0;
    int64_t hidden = 0;
    int64_t vocab = 0;
    bool tiedEmbeddings = false;
    Attention attention;
    int64_t ffn = 0; ///< dense gated FFN intermediate size
    Moe moe;
    int64_t mtpLayers = 0;
    /// Speculative decoding: an EAGLE-3 head or draft model, and cited default acceptance rates.
    SpecSupport spec;
    /// How the layers attend: the list repeats over the layers (gpt-oss: sliding, full). Empty: all Full.
    std::vector<LayerAttention> attentionPattern;
    std::vector<int64_t> nopeLayers; ///< layers without rotary position embedding (Llama 4's global layers)
    /// Parameters of an image encoder the checkpoint carries (Llama 4's vision tower and projector): in the
    /// total and in memory, not in the per-token active count.
    int64_t visionParams = 0;
    Dtype weights = Dtype::BF16;
    Dtype activations = Dtype::BF16;
    Dtype kvCache = Dtype::BF16;
    Quantization quant; ///< how a quantized checkpoint stores its weights (core/model/quant.h)

    bool isMoeLayer(int64_t layer) const;
    LayerAttention layerAttention(int64_t layer) const;
    int64_t moeLayers() const;
    int64_t denseLayers() const { return layers - moeLayers(); }
    int64_t layersOf(LayerAttention kind) const;
    bool operator==(const Model&) const = default;
};

/// Parameter counts (not bytes), derived from the structure. Biases are left out (<0.01% of any supported
/// model).
struct ParamCounts {
    double embedding = 0;       ///< input embedding table
    double lmHead = 0;          ///< 0 when tied to the embedding
    double attention = 0;       ///< per softmax-attention layer: projections, their norms, sinks, the indexer
    double linearAttention = 0; ///< per linear-attention layer: projections, convolution, gates, norm
    double norms = 0;           ///< per layer: the two residual norms
    double denseFfn = 0;        ///< per dense layer
    double router = 0;          ///< per MoE layer
    double routedExpert = 0;    ///< one routed expert
    double sharedExperts = 0;   ///< per MoE layer, all shared experts
    double finalNorm = 0;
    double denseLayer = 0;     ///< attention + norms + dense FFN (softmax-attention layer)
    double moeLayer = 0;       ///< attention + norms + router + all experts (softmax-attention layer)
    double moeLayerActive = 0; ///< attention + norms + router + top-k routed + shared
    double denseLayers = 0;    ///< all dense layers together, each with its own attention kind
    double moeLayers = 0;      ///< all MoE layers together
    double moeLayersActive = 0;
    double vision = 0; ///< Model::visionParams
    double total = 0;  ///< everything but the MTP layers (the vision encoder included)
    /// Parameters a token computes with: total minus the unrouted experts and minus the input embedding table
    /// (a lookup, not a matmul). With this convention DeepSeek-V3 gives 36.6B ("37B activated").
    double active = 0;
    double mtp =
        0; ///< multi-token-prediction layers, counted separately (DeepSeek-V3: about 14B with shared parts)
};

ParamCounts countParams(const Model& m);

/// KV-cache elements stored per token per softmax-attention layer (MLA: the compressed latent plus the rope
/// key).
double kvElementsPerTokenPerLayer(const Model& m);

/// One layer as the cost model sees it.
struct LayerSpec {
    bool moe = false;
    LayerAttention attention = LayerAttention::Full;
    int64_t window =
        0; ///< tokens attended at most (Sliding: the window, Chunked: the chunk); 0: the whole context
    bool rope = true; ///< false for a NoPE layer
};
std::vector<LayerSpec> layerSpecs(const Model& m);

/// A layer's type as the cost model prices it: a dense or a MoE FFN, times how it attends.
inline constexpr int kAttentionKinds = int(kLayerAttentionNames.size());
inline constexpr int kLayerTypes = 2 * kAttentionKinds;
inline constexpr int layerTypeOf(bool moe, LayerAttention a) {
    return (moe ? kAttentionKinds : 0) + int(a);
}
inline constexpr bool layerTypeIsMoe(int type) {
    return type >= kAttentionKinds;
}
inline constexpr LayerAttention layerTypeAttention(int type) {
    return LayerAttention(type % kAttentionKinds);
}

/// The layers' types as they lie (dense or MoE by Model::isMoeLayer, attention by Model::layerAttention),
/// with prefix sums built once per model, so the layers of each type in any span (a pipeline stage) cost
/// kLayerTypes subtractions, not a walk over the span.
class LayerMix {
public:
    LayerMix() = default;
    explicit LayerMix(const Model& m);
    int layers() const { return int(m_type.size()); }
    int typeOf(int layer) const { return m_type[size_t(layer)]; }
    /// Layers of `type` among layers [begin, begin + n).
    int count(int type, int begin, int n) const {
        return m_prefix[size_t(begin + n)][size_t(type)] - m_prefix[size_t(begin)][size_t(type)];
    }
    int total(int type) const { return m_prefix.empty() ? 0 : m_prefix.back()[size_t(type)]; }

private:
    std::vector<int8_t> m_type;
    std::vector<std::array<int, kLayerTypes>> m_prefix; ///< [i][t]: layers of type t among the first i
};

/// Past tokens one query token of a layer attends to at a context of `contextTokens`: the context, capped at
/// the window (Sliding), at the chunk (Chunked, up to a whole chunk) or at the indexer's top-k (DeepSeek
/// sparse attention); 0 for a linear-attention layer (its cost is per token, not per pair).
double attendedTokens(const Model& m, const LayerSpec& layer, double contextTokens);

/// Bytes of the recurrent state of one linear-attention layer for one sequence: the state (value heads x key
/// head dim x value head dim) and the convolution's last kernel-1 inputs, in the KV-cache dtype.
double linearStateBytesPerLayer(const Model& m);

/// KV-cache (and linear-attention state) bytes one sequence holds at `contextTokens`, summed over the layers:
/// full layers keep every token, sliding-window layers at most the window, chunked layers at most one chunk
/// (vLLM frees the blocks before the current chunk: ChunkedLocalAttentionManager in vllm/v1/core/
/// single_type_kv_cache_manager.py, v0.10), linear-attention layers a constant state, MLA layers the latent.
/// DeepSeek sparse attention keeps the whole latent cache (the indexer picks from it) plus the indexer's key
/// cache (headDim per token per layer).
double kvBytesPerSequence(const Model& m, int64_t contextTokens);

} // namespace sp
