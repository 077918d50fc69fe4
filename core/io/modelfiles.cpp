// Model files: reading (a model file or a Hugging Face config.json, and a Hub id in the local cache), their
// cross-field checks, and writing.

#include "core/io/formatsimpl.h"
#include "core/io/hfconfig.h"
#include "core/io/modelfields.h"

#include <algorithm>
#include <filesystem>

namespace sp {

using namespace formats;

namespace {

// Cross-field checks. `r` is the model's mapping: a model file, or a Hugging Face config.json whose keys
// differ, so an error points at the named sub-field when the file has it and at the mapping otherwise.
void checkModel(const Model& m, const MapReader& r) {
    auto failAt = [&r](std::string_view group, std::string_view key, const std::string& msg) {
        if (r.has(group)) {
            const MapReader g = r.map(group);
            if (g.has(key)) g.failAt(key, msg);
        }
        io::fail(r.file(), r.self(), std::string(group) + "." + std::string(key), msg);
    };
    const auto& a = m.attention;
    if (a.type == AttentionType::GQA && a.heads % a.kvHeads != 0)
        failAt("attention", "kv_heads",
               "heads (" + std::to_string(a.heads) + ") must be a multiple of kv_heads (" +
                   std::to_string(a.kvHeads) + ")");
    if (m.moe.present()) {
        if (m.moe.topK > m.moe.experts)
            failAt("moe", "top_k",
                   "top_k (" + std::to_string(m.moe.topK) + ") exceeds experts (" +
                       std::to_string(m.moe.experts) + ")");
        if (m.moe.firstDenseLayers >= m.layers)
            failAt("moe", "first_dense_layers",
                   "must be less than layers (" + std::to_string(m.layers) + ")");
    }
    if (m.denseLayers() > 0 && m.ffn <= 0) {
        if (r.has("ffn"))
            r.failAt("ffn", "the model has dense layers, so the dense FFN size must be positive");
        io::fail(r.file(), r.self(), "ffn",
                 "the model has dense layers, so the dense FFN size must be positive");
    }
}

Model readModel(const MapReader& r) {
    checkHeader(r, FileKind::Model);
    r.allowKeys({"version",
                 "kind",
                 "name",
                 "source",
                 "hub_id",
                 "max_position_embeddings",
                 "layers",
                 "hidden",
                 "vocab",
                 "tied_embeddings",
                 "attention",
                 "ffn",
                 "moe",
                 "mtp_layers",
                 "attention_pattern",
                 "nope_layers",
                 "vision_params",
                 "dtypes",
                 "quantization",
                 "speculative",
                 "architecture"});
    Model m;
    m.name = r.stringOr("name", "");
    m.source = r.stringOr("source", "");
    m.hubId = r.stringOr("hub_id", "");
    m.architecture = r.stringOr("architecture", ""); // config.json's architectures[0]
    m.maxPositionEmbeddings = r.integerOr("max_position_embeddings", 0, 0, int64_t(1) << 40);
    m.layers = r.integer("layers", 1, kMaxLayers);
    m.hidden = r.integer("hidden", 1, kMaxDim);
    m.vocab = r.integer("vocab", 1, kMaxDim * 10);
    m.tiedEmbeddings = r.boolean("tied_embeddings", false);
    const MapReader at = r.map("attention");
    at.allowKeys({"type", "heads", "kv_heads", "head_dim", "q_lora_rank", "kv_lora_rank", "qk_nope_head_dim",
                  "qk_rope_head_dim", "v_head_dim", "qk_norm", "output_gate", "sinks", "rotary_fraction",
                  "sliding_window", "chunk_size", "indexer", "linear"});
    auto& a = m.attention;
    a.type = static_cast<AttentionType>(at.oneOfOr("type", {"gqa", "mla"}, 0));
    a.heads = at.integer("heads", 1, 100000);
    if (a.type == AttentionType::GQA) {
        a.kvHeads = at.integerOr("kv_heads", a.heads, 1, 100000);
        a.headDim = at.integerOr("head_dim", 0, 1, 65536);
        if (a.headDim == 0) {
            if (m.hidden % a.heads != 0)
                at.failAt("head_dim", "missing, and hidden is not a multiple of heads");
            a.headDim = m.hidden / a.heads;
        }
        for (auto k : {"q_lora_rank", "kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim"})
            if (at.has(k)) at.failAt(k, "only for type: mla");
    } else {
        for (auto k : {"kv_heads", "head_dim"})
            if (at.has(k)) at.failAt(k, "not used by type: mla (give the MLA ranks and head dimensions)");
        a.kvHeads = a.heads;
        io::readMlaDims(at, a.mla);
    }
    io::readAttentionExtras(at, a);
    m.ffn = r.integerOr("ffn", 0, 0, kMaxDim);
    if (r.has("moe")) {
        const MapReader mo = r.map("moe");
        mo.allowKeys({"experts", "top_k", "expert_ffn", "shared_experts", "shared_expert_ffn",
                      "first_dense_layers", "layer_step", "dense_layers", "shared_expert_gate", "groups",
                      "topk_groups"});
        m.moe.experts = mo.integer("experts", 1, 1'000'000);
        m.moe.topK = mo.integer("top_k", 1, 1'000'000);
        m.moe.expertFfn = mo.integer("expert_ffn", 1, kMaxDim);
        m.moe.sharedExperts = mo.integerOr("shared_experts", 0, 0, 1024);
        m.moe.sharedExpertFfn =
            m.moe.sharedExperts > 0 ? mo.integerOr("shared_expert_ffn", m.moe.expertFfn, 1, kMaxDim) : 0;
        m.moe.firstDenseLayers = mo.integerOr("first_dense_layers", 0, 0, kMaxLayers);
        m.moe.groups = mo.integerOr("groups", 0, 0, m.moe.experts);
        m.moe.topkGroups = m.moe.groups > 0 ? mo.integerOr("topk_groups", m.moe.groups, 1, m.moe.groups) : 0;
        if (m.moe.groups > 0 && m.moe.experts % m.moe.groups != 0)
            mo.failAt("groups", "must divide the experts (" + std::to_string(m.moe.experts) + ")");
        m.moe.layerStep = mo.integerOr("layer_step", 1, 1, kMaxLayers);
        if (mo.has("dense_layers") && mo.node("dense_layers").size() > 0)
            m.moe.denseLayerList = mo.integerList("dense_layers", 0, m.layers - 1);
        m.moe.sharedExpertGate = mo.boolean("shared_expert_gate", false);
    }
    m.mtpLayers = r.integerOr("mtp_layers", 0, 0, 64);
    if (r.has("attention_pattern")) {
        const YAML::Node n = r.node("attention_pattern");
        if (!n.IsSequence() || n.size() == 0)
            r.failAt("attention_pattern", "expected a list of full, sliding, chunked or linear (it repeats)");
        const std::vector<std::string_view> kinds{kLayerAttentionNames.begin(), kLayerAttentionNames.end()};
        for (size_t i = 0; i < n.size(); ++i) {
            const std::string k =
                io::asString(r.file(), n[i], r.field("attention_pattern") + "[" + std::to_string(i) + "]");
            const auto it = std::find(kinds.begin(), kinds.end(), k);
            if (it == kinds.end())
                io::fail(r.file(), n[i], r.field("attention_pattern") + "[" + std::to_string(i) + "]",
                         "expected full, sliding, chunked or linear, found '" + k + "'" +
                             io::didYouMean(k, kinds));
            m.attentionPattern.push_back(LayerAttention(it - kinds.begin()));
        }
    }
    if (r.has("nope_layers") && r.node("nope_layers").size() > 0)
        m.nopeLayers = r.integerList("nope_layers", 0, m.layers - 1);
    m.visionParams = r.integerOr("vision_params", 0, 0, int64_t(1) << 50);
    if (r.has("dtypes")) {
        const MapReader d = r.map("dtypes");
        d.allowKeys({"weights", "activations", "kv_cache"});
        m.weights = static_cast<Dtype>(d.oneOfOr("weights", dtypeOptions(), int(Dtype::BF16)));
        m.activations = static_cast<Dtype>(d.oneOfOr("activations", dtypeOptions(), int(Dtype::BF16)));
        m.kvCache = static_cast<Dtype>(d.oneOfOr("kv_cache", dtypeOptions(), int(Dtype::BF16)));
    }
    if (r.has("quantization")) m.quant = io::readQuantization(r.map("quantization"));
    if (r.has("speculative")) {
        m.spec = io::readSpecSupport(r.map("speculative"));
        if (!m.spec.acceptance[size_t(SpecMethod::Mtp)].empty() && m.mtpLayers <= 0)
            r.map("speculative").failAt("mtp", "acceptance rates for MTP, but the model has no mtp_layers");
    }
    checkModel(m, r);
    return m;
}

void emitDtypes(YAML::Emitter& e, const Model& m) {
    e << YAML::Key << "dtypes" << YAML::Value << YAML::BeginMap;
    e << YAML::Key << "weights" << YAML::Value << std::string(nameOf(m.weights));
    e << YAML::Key << "activations" << YAML::Value << std::string(nameOf(m.activations));
    e << YAML::Key << "kv_cache" << YAML::Value << std::string(nameOf(m.kvCache));
    e << YAML::EndMap;
}

} // namespace

namespace formats {

Model readAnyModel(const MapReader& r) {
    if (!io::isHfConfig(r.self())) return readModel(r);
    Model m = io::readHfModel(r);
    checkModel(m, r);
    return m;
}

// A model read from the cache is named by its Hub id, not by its snapshot folder.
void nameFromHubId(Model& m, const std::string& id, const std::string& path) {
    m.hubId = id;
    if (m.name.empty() || m.name == std::filesystem::path(path).parent_path().filename().string())
        m.name = id;
}

// The config.json of a Hub id in the local Hugging Face cache, or an error at `at` saying where it looked.
std::string resolveHubId(const std::string& id, const std::string& file, const YAML::Node& at,
                         const std::string& field) {
    std::vector<std::string> searched;
    if (auto path = io::findCachedConfig(id, &searched)) return *path;
    std::string where;
    for (const auto& d : searched) where += (where.empty() ? "" : ", ") + d;
    const std::string msg = "'" + id +
                            "' is neither a file nor a model in the local Hugging Face cache (looked in " +
                            (where.empty() ? std::string("no folder: set HF_HOME or HOME") : where) +
                            "; download it with `huggingface-cli download " + id + " config.json`)";
    if (at.IsDefined()) io::fail(file, at, field, msg);
    throw InputError(Error{file, 0, 0, field, msg});
}

void emitModel(YAML::Emitter& e, const Model& m) {
    e << YAML::BeginMap;
    e << YAML::Key << "version" << YAML::Value << 1 << YAML::Key << "kind" << YAML::Value << "model";
    e << YAML::Key << "name" << YAML::Value << m.name;
    if (!m.source.empty()) e << YAML::Key << "source" << YAML::Value << m.source;
    if (!m.hubId.empty()) e << YAML::Key << "hub_id" << YAML::Value << m.hubId;
    if (!m.architecture.empty()) e << YAML::Key << "architecture" << YAML::Value << m.architecture;
    if (m.maxPositionEmbeddings > 0)
        e << YAML::Key << "max_position_embeddings" << YAML::Value << m.maxPositionEmbeddings;
    e << YAML::Key << "layers" << YAML::Value << m.layers << YAML::Key << "hidden" << YAML::Value << m.hidden;
    e << YAML::Key << "vocab" << YAML::Value << m.vocab;
    e << YAML::Key << "tied_embeddings" << YAML::Value << m.tiedEmbeddings;
    const auto& a = m.attention;
    e << YAML::Key << "attention" << YAML::Value << YAML::BeginMap;
    e << YAML::Key << "type" << YAML::Value << (a.type == AttentionType::MLA ? "mla" : "gqa");
    e << YAML::Key << "heads" << YAML::Value << a.heads;
    if (a.type == AttentionType::GQA) {
        e << YAML::Key << "kv_heads" << YAML::Value << a.kvHeads << YAML::Key << "head_dim" << YAML::Value
          << a.headDim;
    } else {
        e << YAML::Key << "q_lora_rank" << YAML::Value << a.mla.qLoraRank;
        e << YAML::Key << "kv_lora_rank" << YAML::Value << a.mla.kvLoraRank;
        e << YAML::Key << "qk_nope_head_dim" << YAML::Value << a.mla.qkNopeHeadDim;
        e << YAML::Key << "qk_rope_head_dim" << YAML::Value << a.mla.qkRopeHeadDim;
        e << YAML::Key << "v_head_dim" << YAML::Value << a.mla.vHeadDim;
    }
    io::emitAttentionExtras(e, a);
    e << YAML::EndMap;
    e << YAML::Key << "ffn" << YAML::Value << m.ffn;
    if (m.moe.present()) {
        e << YAML::Key << "moe" << YAML::Value << YAML::BeginMap;
        e << YAML::Key << "experts" << YAML::Value << m.moe.experts << YAML::Key << "top_k" << YAML::Value
          << m.moe.topK;
        e << YAML::Key << "expert_ffn" << YAML::Value << m.moe.expertFfn;
        e << YAML::Key << "shared_experts" << YAML::Value << m.moe.sharedExperts;
        if (m.moe.sharedExperts > 0)
            e << YAML::Key << "shared_expert_ffn" << YAML::Value << m.moe.sharedExpertFfn;
        e << YAML::Key << "first_dense_layers" << YAML::Value << m.moe.firstDenseLayers;
        if (m.moe.groups > 0)
            e << YAML::Key << "groups" << YAML::Value << m.moe.groups << YAML::Key << "topk_groups"
              << YAML::Value << m.moe.topkGroups;
        if (m.moe.layerStep != 1) e << YAML::Key << "layer_step" << YAML::Value << m.moe.layerStep;
        if (!m.moe.denseLayerList.empty())
            e << YAML::Key << "dense_layers" << YAML::Value << YAML::Flow << m.moe.denseLayerList;
        if (m.moe.sharedExpertGate) e << YAML::Key << "shared_expert_gate" << YAML::Value << true;
        e << YAML::EndMap;
    }
    e << YAML::Key << "mtp_layers" << YAML::Value << m.mtpLayers;
    if (!m.attentionPattern.empty()) {
        e << YAML::Key << "attention_pattern" << YAML::Value << YAML::Flow << YAML::BeginSeq;
        for (LayerAttention k : m.attentionPattern) e << std::string(kLayerAttentionNames[int(k)]);
        e << YAML::EndSeq;
    }
    if (!m.nopeLayers.empty()) e << YAML::Key << "nope_layers" << YAML::Value << YAML::Flow << m.nopeLayers;
    if (m.visionParams > 0) e << YAML::Key << "vision_params" << YAML::Value << m.visionParams;
    emitDtypes(e, m);
    if (m.quant.present()) io::emitQuantization(e, m.quant);
    if (m.spec != SpecSupport{}) {
        e << YAML::Key << "speculative" << YAML::Value;
        io::emitSpecSupport(e, m.spec);
    }
    e << YAML::EndMap;
}

} // namespace formats

} // namespace sp
