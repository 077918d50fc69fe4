#include "core/io/hfconfig.h"
#include "core/common/text.h"
#include "core/io/modelfields.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>

namespace sp::io {

namespace {

namespace fs = std::filesystem;

constexpr int64_t kMaxDim = 10'000'000;
constexpr int64_t kMaxLayers = 10'000;
constexpr int64_t kMaxExperts = 1'000'000;

const std::vector<std::pair<std::string_view, std::string_view>>& archByModelType() {
    static const std::vector<std::pair<std::string_view, std::string_view>> t{
        {"llama", "LlamaForCausalLM"},
        {"mistral", "MistralForCausalLM"},
        {"qwen2", "Qwen2ForCausalLM"},
        {"qwen3", "Qwen3ForCausalLM"},
        {"mixtral", "MixtralForCausalLM"},
        {"qwen2_moe", "Qwen2MoeForCausalLM"},
        {"qwen3_moe", "Qwen3MoeForCausalLM"},
        {"deepseek_v3", "DeepseekV3ForCausalLM"},
        {"deepseek_v32", "DeepseekV32ForCausalLM"},
        {"llama4", "Llama4ForConditionalGeneration"},
        {"gpt_oss", "GptOssForCausalLM"},
        {"glm4_moe", "Glm4MoeForCausalLM"},
        {"minimax_m2", "MiniMaxM2ForCausalLM"},
        {"qwen3_next", "Qwen3NextForCausalLM"}};
    return t;
}

Dtype dtypeOfTorchName(const MapReader& r, std::string_view key) {
    const std::string t = r.string(key);
    if (t == "float32") return Dtype::FP32;
    if (t == "float16") return Dtype::FP16;
    if (t == "bfloat16") return Dtype::BF16;
    r.failAt(key, "unsupported dtype '" + t + "'; expected bfloat16, float16 or float32");
}

std::vector<std::string> stringList(const MapReader& r, std::string_view key) {
    std::vector<std::string> out;
    if (!r.has(key)) return out;
    const YAML::Node n = r.node(key);
    if (n.IsNull()) return out;
    if (!n.IsSequence()) r.failAt(key, "expected a list");
    for (size_t i = 0; i < n.size(); ++i)
        out.push_back(asString(r.file(), n[i], r.field(key) + "[" + std::to_string(i) + "]"));
    return out;
}

// "layer_types" (gpt-oss, Qwen3-Next): one entry per layer.
std::vector<LayerAttention> layerTypes(const MapReader& r, int64_t layers) {
    std::vector<LayerAttention> out;
    const auto names = stringList(r, "layer_types");
    if (names.empty()) return out;
    if (int64_t(names.size()) != layers)
        r.failAt("layer_types", "has " + std::to_string(names.size()) + " entries for " +
                                    std::to_string(layers) + " layers");
    for (size_t i = 0; i < names.size(); ++i) {
        const auto& s = names[i];
        if (s == "full_attention")
            out.push_back(LayerAttention::Full);
        else if (s == "sliding_attention")
            out.push_back(LayerAttention::Sliding);
        else if (s == "linear_attention")
            out.push_back(LayerAttention::Linear);
        else if (s == "chunked_attention")
            out.push_back(LayerAttention::Chunked);
        else
            fail(r.file(), r.node("layer_types")[i], r.field("layer_types") + "[" + std::to_string(i) + "]",
                 "unknown layer type '" + s +
                     "'; expected full_attention, sliding_attention, chunked_attention "
                     "or linear_attention");
    }
    return out;
}

// A per-layer list that is a repetition of its first period is stored as that period.
std::vector<LayerAttention> shortestPeriod(const std::vector<LayerAttention>& v) {
    for (size_t p = 1; p < v.size(); ++p) {
        if (v.size() % p != 0) continue;
        bool ok = true;
        for (size_t i = p; i < v.size() && ok; ++i) ok = v[i] == v[i - p];
        if (ok) return {v.begin(), v.begin() + long(p)};
    }
    if (!v.empty() && std::all_of(v.begin(), v.end(), [&](LayerAttention a) { return a == v[0]; }))
        return {v[0]};
    return v;
}

int64_t slidingWindowOf(const MapReader& r) {
    if (!r.has("sliding_window") || r.node("sliding_window").IsNull()) return 0;
    return r.integer("sliding_window", 1, int64_t(1) << 40);
}

// The quantization of the checkpoint: config.json's quantization_config, or ModelOpt's hf_quant_config.json
// next to it. Returns the element dtype of the quantized weights, or nullopt when unquantized.
void readQuantization(const MapReader& r, Model& m, const std::string& arch) {
    const fs::path modelopt = fs::path(r.file()).parent_path() / "hf_quant_config.json";
    std::error_code ec;
    if (!r.has("quantization_config") && fs::is_regular_file(modelopt, ec)) {
        const std::string path = modelopt.string();
        const MapReader h(path, parseDocument(readFile(path), path), "");
        const MapReader q = h.map("quantization");
        const std::string algo = q.string("quant_algo");
        if (algo == "NVFP4") {
            m.quant = nvfp4Quant();
            m.quant.groupSize = q.integerOr("group_size", 16, 1, 4096);
        } else if (algo == "FP8") {
            m.quant = fp8PerTensorQuant();
        } else {
            q.failAt("quant_algo", "unsupported ModelOpt quant_algo '" + algo + "'; supported: NVFP4, FP8");
        }
        if (q.has("kv_cache_quant_algo") && !q.node("kv_cache_quant_algo").IsNull() &&
            q.string("kv_cache_quant_algo") == "FP8")
            m.kvCache = Dtype::FP8;
    } else if (r.has("quantization_config")) {
        const MapReader q = r.map("quantization_config");
        const std::string method = q.string("quant_method");
        if (method == "fp8") {
            if (q.has("weight_block_size")) {
                const auto b = q.integerList("weight_block_size", 1, 65536);
                if (b.size() != 2 || b[0] != b[1])
                    q.failAt("weight_block_size", "expected two equal sizes, e.g. [128, 128]");
                m.quant = fp8BlockQuant(b[0]);
            } else {
                m.quant = fp8PerTensorQuant();
            }
        } else if (method == "mxfp4") {
            m.quant = mxfp4Quant();
        } else if (method == "modelopt") {
            const std::string algo = q.string("quant_algo");
            if (algo == "NVFP4") {
                m.quant = nvfp4Quant();
                m.quant.groupSize = q.integerOr("group_size", 16, 1, 4096);
            } else if (algo == "FP8") {
                m.quant = fp8PerTensorQuant();
            } else {
                q.failAt("quant_algo",
                         "unsupported ModelOpt quant_algo '" + algo + "'; supported: NVFP4, FP8");
            }
        } else if (method == "compressed-tensors") {
            const MapReader groups = q.map("config_groups");
            const YAML::Node first = groups.self().begin()->second;
            const MapReader g(r.file(), first, groups.field(groups.self().begin()->first.Scalar()));
            const MapReader w = g.map("weights");
            const int64_t bits = w.integer("num_bits", 1, 64);
            const std::string type = w.stringOr("type", "int");
            const std::string strategy = w.stringOr("strategy", "tensor");
            if (type == "int" && bits == 8) {
                m.quant = int8ChannelQuant();
                if (strategy != "channel") m.quant.perChannel = false, m.quant.tensorScaleBytes = 2.0;
            } else if (type == "int" && bits == 4) {
                m.quant = int4GroupQuant(w.integerOr("group_size", 128, 1, 1 << 20));
            } else if (type == "float" && bits == 8) {
                m.quant = fp8PerTensorQuant();
                if (strategy == "channel")
                    m.quant.perChannel = true, m.quant.scaleBytes = 2.0, m.quant.tensorScaleBytes = 0;
            } else if (type == "float" && bits == 4) {
                m.quant = nvfp4Quant();
            } else {
                w.failAt("num_bits", "unsupported compressed-tensors weights: " + type + " with " +
                                         std::to_string(bits) + " bits; supported: int8, int4, fp8, fp4");
            }
        } else {
            q.failAt("quant_method", "unsupported quant_method '" + method +
                                         "'; supported: fp8, mxfp4, modelopt, compressed-tensors");
        }
        // Formats that name the layers they leave alone: "modules_to_not_convert" (gpt-oss: attention,
        // router, embeddings, head) or compressed-tensors' "ignore".
        for (const auto& key : {"modules_to_not_convert", "ignore"})
            for (const auto& mod : stringList(q, key))
                if (mod.find("self_attn") != std::string::npos || mod.find(".attn") != std::string::npos)
                    m.quant.quantized[int(ParamGroup::Attention)] = false;
    }
    if (!m.quant.present()) return;
    (void)arch;
    m.weights = m.quant.storage;
}

// transformers' Llama4VisionModel (modeling_llama4.py, v4.51): the unfolded patch embedding, class and
// position embeddings, pre/post LayerNorms, encoder layers (q/k/v/o and fc1/fc2 with biases, two LayerNorms),
// the pixel- shuffle MLP (fc1: intermediate_size -> projector_input_dim, fc2: projector_output_dim squared)
// and the projector to the text model (vision_output_dim -> hidden).
int64_t llama4VisionParams(const MapReader& v, int64_t textHidden) {
    const int64_t h = v.integer("hidden_size", 1, kMaxDim), f = v.integer("intermediate_size", 1, kMaxDim);
    const int64_t layers = v.integer("num_hidden_layers", 1, kMaxLayers);
    const int64_t patch = v.integer("patch_size", 1, 4096), image = v.integer("image_size", 1, 1 << 20);
    const int64_t channels = v.integerOr("num_channels", 3, 1, 64);
    const int64_t projIn = v.integer("projector_input_dim", 1, kMaxDim);
    const int64_t projOut = v.integer("projector_output_dim", 1, kMaxDim);
    const int64_t out = v.integer("vision_output_dim", 1, kMaxDim);
    const int64_t positions = (image / patch) * (image / patch) + 1;
    const int64_t layer = 4 * (h * h + h) + 2 * h * f + f + h + 4 * h;
    return channels * patch * patch * h + h + positions * h + 4 * h + layers * layer + f * projIn +
           projOut * projOut + out * textHidden;
}

} // namespace

bool isHfConfig(const YAML::Node& n) {
    return n["architectures"].IsDefined() || n["model_type"].IsDefined();
}

const std::vector<std::string_view>& hfArchitectures() {
    static const std::vector<std::string_view> a{"LlamaForCausalLM",       "MistralForCausalLM",
                                                 "Qwen2ForCausalLM",       "Qwen3ForCausalLM",
                                                 "MixtralForCausalLM",     "Qwen2MoeForCausalLM",
                                                 "Qwen3MoeForCausalLM",    "DeepseekV3ForCausalLM",
                                                 "DeepseekV32ForCausalLM", "Llama4ForConditionalGeneration",
                                                 "GptOssForCausalLM",      "Glm4MoeForCausalLM",
                                                 "MiniMaxM2ForCausalLM",   "Qwen3NextForCausalLM"};
    return a;
}

Model readHfModel(const MapReader& r) {
    std::string arch;
    if (r.has("architectures")) {
        const YAML::Node list = r.node("architectures");
        if (!list.IsSequence() || list.size() == 0)
            r.failAt("architectures", "expected a list with one architecture");
        arch = asString(r.file(), list[0], "architectures[0]");
    } else {
        const std::string type = r.string("model_type");
        for (auto& [t, a] : archByModelType())
            if (t == type) arch = a;
        if (arch.empty()) arch = type;
    }
    const auto& supported = hfArchitectures();
    if (std::find(supported.begin(), supported.end(), arch) == supported.end()) {
        std::string list;
        for (auto s : supported) list += (list.empty() ? "" : ", ") + std::string(s);
        r.failAt(r.has("architectures") ? "architectures" : "model_type",
                 "unsupported architecture '" + arch + "'; supported: " + list);
    }
    // Llama 4 wraps the language model's settings in text_config.
    const bool llama4 = arch == "Llama4ForConditionalGeneration";
    const MapReader t = llama4 ? r.map("text_config") : r;

    Model m;
    m.name = r.stringOr("_name_or_path", "");
    if (m.name.empty()) {
        m.name = fs::path(r.file()).filename().string();
        if (m.name == "config.json") m.name = fs::path(r.file()).parent_path().filename().string();
        m.name = printable(m.name); // a folder's name may hold anything but '/'; the model's name is one line
        for (auto suffix : {".config.json", ".json"})
            if (m.name.size() > std::strlen(suffix) && m.name.ends_with(suffix)) {
                m.name.resize(m.name.size() - std::strlen(suffix));
                break;
            }
    }
    m.source = "Hugging Face config.json (" + arch + ")";
    m.architecture = arch;
    m.maxPositionEmbeddings = t.integerOr("max_position_embeddings", 0, 0, int64_t(1) << 40);
    m.layers = t.integer("num_hidden_layers", 1, kMaxLayers);
    m.hidden = t.integer("hidden_size", 1, kMaxDim);
    m.vocab = t.integer("vocab_size", 1, kMaxDim * 10);
    m.tiedEmbeddings = t.boolean("tie_word_embeddings", r.boolean("tie_word_embeddings", false));
    auto& a = m.attention;
    a.heads = t.integer("num_attention_heads", 1, 100000);
    const bool deepseek = arch == "DeepseekV3ForCausalLM" || arch == "DeepseekV32ForCausalLM";
    if (deepseek) {
        a.type = AttentionType::MLA;
        a.kvHeads = a.heads;
        io::readMlaDims(t, a.mla);
        if (arch == "DeepseekV32ForCausalLM") {
            a.indexer.topK = t.integer("index_topk", 1, int64_t(1) << 40);
            a.indexer.heads = t.integer("index_n_heads", 1, 100000);
            a.indexer.headDim = t.integer("index_head_dim", 1, 65536);
        }
    } else {
        a.kvHeads = t.integerOr("num_key_value_heads", a.heads, 1, 100000);
        a.headDim =
            t.has("head_dim") && t.node("head_dim").IsNull() ? 0 : t.integerOr("head_dim", 0, 1, 65536);
        if (a.headDim == 0) {
            if (m.hidden % a.heads != 0)
                t.failAt("num_attention_heads", "hidden_size is not a multiple of it");
            a.headDim = m.hidden / a.heads;
        }
    }
    if (t.has("partial_rotary_factor")) a.rotaryFraction = t.number("partial_rotary_factor", 0.0, 1.0);
    m.ffn = t.integerOr("intermediate_size", 0, 0, kMaxDim);

    if (arch == "MistralForCausalLM" || arch == "MixtralForCausalLM") {
        a.slidingWindow = slidingWindowOf(t);
        if (a.slidingWindow > 0) m.attentionPattern = {LayerAttention::Sliding};
    }
    if (arch == "Qwen3ForCausalLM" || arch == "Qwen3MoeForCausalLM" || arch == "Qwen3NextForCausalLM")
        a.qkNorm = QkNorm::PerHead; // q_norm and k_norm of head_dim (transformers' Qwen3Attention)
    if (arch == "MixtralForCausalLM") {
        m.moe.experts = t.integer("num_local_experts", 1, kMaxExperts);
        m.moe.topK = t.integer("num_experts_per_tok", 1, kMaxExperts);
        m.moe.expertFfn = t.integer("intermediate_size", 1, kMaxDim);
        m.ffn = 0;
    } else if (arch == "Qwen2MoeForCausalLM" || arch == "Qwen3MoeForCausalLM" ||
               arch == "Qwen3NextForCausalLM") {
        m.moe.experts = t.integer("num_experts", 1, kMaxExperts);
        m.moe.topK = t.integer("num_experts_per_tok", 1, kMaxExperts);
        m.moe.expertFfn = t.integer("moe_intermediate_size", 1, kMaxDim);
        m.moe.layerStep = t.integerOr("decoder_sparse_step", 1, 1, kMaxLayers);
        if (t.has("mlp_only_layers") && t.node("mlp_only_layers").IsSequence() &&
            t.node("mlp_only_layers").size() > 0)
            for (int64_t l : t.integerList("mlp_only_layers", 0, m.layers - 1))
                m.moe.denseLayerList.push_back(l);
        const int64_t shared = t.integerOr("shared_expert_intermediate_size", 0, 0, kMaxDim);
        if (shared > 0)
            m.moe.sharedExperts = 1, m.moe.sharedExpertFfn = shared, m.moe.sharedExpertGate = true;
        if (m.moe.layerStep == 1 && m.moe.denseLayerList.empty()) m.ffn = 0;
    } else if (deepseek || arch == "Glm4MoeForCausalLM") {
        m.moe.experts = t.integer("n_routed_experts", 1, kMaxExperts);
        m.moe.topK = t.integer("num_experts_per_tok", 1, kMaxExperts);
        m.moe.expertFfn = t.integer("moe_intermediate_size", 1, kMaxDim);
        m.moe.sharedExperts = t.integerOr("n_shared_experts", 0, 0, 1024);
        m.moe.sharedExpertFfn = m.moe.sharedExperts > 0 ? m.moe.expertFfn : 0;
        m.moe.firstDenseLayers = t.integerOr("first_k_dense_replace", 0, 0, kMaxLayers);
        // Node-limited routing: a token's experts come from topk_group of n_group expert groups.
        m.moe.groups = t.integerOr("n_group", 0, 0, m.moe.experts);
        if (m.moe.groups > 0 && m.moe.experts % m.moe.groups != 0)
            t.failAt("n_group", "must divide n_routed_experts");
        m.moe.topkGroups = m.moe.groups > 0 ? t.integerOr("topk_group", m.moe.groups, 1, m.moe.groups) : 0;
        if (t.integerOr("moe_layer_freq", 1, 1, kMaxLayers) != 1)
            t.failAt("moe_layer_freq", "only 1 is supported");
        m.mtpLayers = t.integerOr("num_nextn_predict_layers", 0, 0, 64);
        if (m.moe.firstDenseLayers == 0) m.ffn = 0;
        if (arch == "Glm4MoeForCausalLM" && t.boolean("use_qk_norm", false)) a.qkNorm = QkNorm::PerHead;
    } else if (llama4) {
        // transformers' Llama4TextConfig: experts and the shared expert of intermediate_size, dense layers of
        // intermediate_size_mlp; moe_layers defaults to every interleave_moe_layer_step-th layer;
        // no_rope_layers (1: rotary, 0: NoPE) defaults to NoPE every 4th layer; rotary layers use chunked
        // attention.
        m.moe.experts = t.integer("num_local_experts", 1, kMaxExperts);
        m.moe.topK = t.integer("num_experts_per_tok", 1, kMaxExperts);
        m.moe.expertFfn = t.integer("intermediate_size", 1, kMaxDim);
        m.moe.sharedExperts = 1;
        m.moe.sharedExpertFfn = m.moe.expertFfn;
        m.moe.layerStep = t.integerOr("interleave_moe_layer_step", 1, 1, kMaxLayers);
        if (t.has("moe_layers") && !t.node("moe_layers").IsNull()) {
            const auto moeList = t.integerList("moe_layers", 0, m.layers - 1);
            m.moe.layerStep = 1;
            for (int64_t l = 0; l < m.layers; ++l)
                if (std::find(moeList.begin(), moeList.end(), l) == moeList.end())
                    m.moe.denseLayerList.push_back(l);
        }
        m.ffn = t.integerOr("intermediate_size_mlp", 0, 0, kMaxDim);
        a.chunkSize = t.has("attention_chunk_size") && !t.node("attention_chunk_size").IsNull()
                          ? t.integer("attention_chunk_size", 1, int64_t(1) << 40)
                          : 0;
        std::vector<int64_t> rope;
        if (t.has("no_rope_layers") && t.node("no_rope_layers").IsSequence() &&
            t.node("no_rope_layers").size() > 0) {
            rope = t.integerList("no_rope_layers", 0, 1);
            if (int64_t(rope.size()) != m.layers)
                t.failAt("no_rope_layers", "has " + std::to_string(rope.size()) + " entries for " +
                                               std::to_string(m.layers) + " layers");
        } else {
            for (int64_t l = 0; l < m.layers; ++l) rope.push_back((l + 1) % 4 != 0 ? 1 : 0);
        }
        std::vector<LayerAttention> kinds;
        for (int64_t l = 0; l < m.layers; ++l) {
            if (!rope[size_t(l)]) m.nopeLayers.push_back(l);
            kinds.push_back(rope[size_t(l)] && a.chunkSize > 0 ? LayerAttention::Chunked
                                                               : LayerAttention::Full);
        }
        m.attentionPattern = shortestPeriod(kinds);
        if (m.attentionPattern.size() == 1 && m.attentionPattern[0] == LayerAttention::Full)
            m.attentionPattern.clear();
    } else if (arch == "GptOssForCausalLM") {
        m.moe.experts = t.integer("num_local_experts", 1, kMaxExperts);
        m.moe.topK = t.integer("num_experts_per_tok", 1, kMaxExperts);
        m.moe.expertFfn = t.integer("intermediate_size", 1, kMaxDim);
        m.ffn = 0;
        a.sinks = true;
        a.slidingWindow = slidingWindowOf(t);
        m.attentionPattern = shortestPeriod(layerTypes(t, m.layers));
    } else if (arch == "MiniMaxM2ForCausalLM") {
        // transformers' MiniMaxM2Config: routed experts of intermediate_size, no shared expert, q/k norms
        // over all heads ("qk_norm_type": "per_layer"), rotary_dim of head_dim rotated; MTP modules.
        m.moe.experts = t.integer("num_local_experts", 1, kMaxExperts);
        m.moe.topK = t.integer("num_experts_per_tok", 1, kMaxExperts);
        m.moe.expertFfn = t.integer("intermediate_size", 1, kMaxDim);
        m.ffn = 0;
        if (t.boolean("use_qk_norm", false))
            a.qkNorm =
                t.stringOr("qk_norm_type", "per_layer") == "per_head" ? QkNorm::PerHead : QkNorm::PerLayer;
        if (t.has("rotary_dim"))
            a.rotaryFraction = double(t.integer("rotary_dim", 1, a.headDim)) / double(a.headDim);
        if (t.boolean("use_mtp", false)) m.mtpLayers = t.integerOr("num_mtp_modules", 0, 0, 64);
    }
    if (arch == "Qwen3NextForCausalLM") {
        a.outputGate = true;
        a.linear.keyHeads = t.integer("linear_num_key_heads", 1, 100000);
        a.linear.valueHeads = t.integer("linear_num_value_heads", 1, 100000);
        a.linear.keyHeadDim = t.integer("linear_key_head_dim", 1, 65536);
        a.linear.valueHeadDim = t.integer("linear_value_head_dim", 1, 65536);
        a.linear.convKernel = t.integerOr("linear_conv_kernel_dim", 4, 1, 1024);
        auto kinds = layerTypes(t, m.layers);
        if (kinds.empty()) {
            // transformers' Qwen3NextConfig: every full_attention_interval-th layer is full attention.
            const int64_t every = t.integerOr("full_attention_interval", 4, 1, kMaxLayers);
            for (int64_t l = 0; l < m.layers; ++l)
                kinds.push_back((l + 1) % every == 0 ? LayerAttention::Full : LayerAttention::Linear);
        }
        m.attentionPattern = shortestPeriod(kinds);
        m.mtpLayers =
            t.integerOr("num_nextn_predict_layers", t.integerOr("mtp_num_hidden_layers", 0, 0, 64), 0, 64);
    }
    if (llama4 && r.has("vision_config"))
        m.visionParams = llama4VisionParams(r.map("vision_config"), m.hidden);
    for (const auto& key : {"dtype", "torch_dtype"}) {
        if (t.has(key) && !t.node(key).IsNull()) {
            m.weights = m.activations = m.kvCache = dtypeOfTorchName(t, key);
            break;
        }
        if (r.has(key) && !r.node(key).IsNull()) {
            m.weights = m.activations = m.kvCache = dtypeOfTorchName(r, key);
            break;
        }
    }
    readQuantization(r, m, arch);
    return m;
}

// ---------------------------------------------------------------- Hub ids in the local cache

bool looksLikeHubId(const std::string& s) {
    const auto slash = s.find('/');
    if (slash == std::string::npos || slash == 0 || slash + 1 == s.size()) return false;
    if (s.find('/', slash + 1) != std::string::npos) return false;
    if (s.starts_with(".") || s.find("..") != std::string::npos) return false;
    for (char c : s)
        if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.' || c == '/'))
            return false;
    return true;
}

std::vector<std::string> hfCacheDirs() {
    std::vector<std::string> dirs;
    auto env = [](const char* name) -> std::string {
        const char* v = std::getenv(name);
        return v && *v ? std::string(v) : std::string();
    };
    if (auto v = env("HF_HUB_CACHE"); !v.empty()) dirs.push_back(v);
    if (auto v = env("HF_HOME"); !v.empty()) dirs.push_back((fs::path(v) / "hub").string());
    if (auto v = env("XDG_CACHE_HOME"); !v.empty())
        dirs.push_back((fs::path(v) / "huggingface" / "hub").string());
    if (auto v = env("HOME"); !v.empty())
        dirs.push_back((fs::path(v) / ".cache" / "huggingface" / "hub").string());
    std::vector<std::string> unique;
    for (auto& d : dirs)
        if (std::find(unique.begin(), unique.end(), d) == unique.end()) unique.push_back(d);
    return unique;
}

std::optional<std::string> findCachedConfig(const std::string& hubId, std::vector<std::string>* searched) {
    std::string folder = "models--" + hubId;
    for (size_t p = folder.find('/'); p != std::string::npos; p = folder.find('/'))
        folder.replace(p, 1, "--");
    std::error_code ec;
    for (const auto& dir : hfCacheDirs()) {
        const fs::path repo = fs::path(dir) / folder;
        if (searched) searched->push_back((repo / "snapshots").string());
        if (!fs::is_directory(repo / "snapshots", ec)) continue;
        // refs/main holds the commit of the snapshot the Hub's main branch resolved to.
        std::string mainRev;
        if (fs::is_regular_file(repo / "refs" / "main", ec)) {
            try {
                mainRev = readFile((repo / "refs" / "main").string());
            } catch (const InputError&) {
            }
            while (!mainRev.empty() && std::isspace(static_cast<unsigned char>(mainRev.back())))
                mainRev.pop_back();
        }
        if (!mainRev.empty()) {
            const fs::path c = repo / "snapshots" / mainRev / "config.json";
            if (fs::is_regular_file(c, ec)) return c.string();
        }
        std::optional<fs::path> newest;
        fs::file_time_type newestTime{};
        for (const auto& e : fs::directory_iterator(repo / "snapshots", ec)) {
            const fs::path c = e.path() / "config.json";
            if (!fs::is_regular_file(c, ec)) continue;
            const auto tm = fs::last_write_time(c, ec);
            if (!newest || tm > newestTime) newest = c, newestTime = tm;
        }
        if (newest) return newest->string();
    }
    return std::nullopt;
}

} // namespace sp::io
