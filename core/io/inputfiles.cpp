// Model, cluster, workload and constraints files: reading (a model may also be a Hugging Face config.json or
// a Hub id in the local cache), writing, and their cross-field checks.

#include "core/io/formatsimpl.h"
#include "core/io/gpudb.h"
#include "core/io/hfconfig.h"
#include "core/io/modelfields.h"

#include <algorithm>
#include <filesystem>
#include <system_error>

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

} // namespace

namespace formats {

Model readAnyModel(const MapReader& r) {
    if (!io::isHfConfig(r.self())) return readModel(r);
    Model m = io::readHfModel(r);
    checkModel(m, r);
    return m;
}

// ---------------------------------------------------------------- cluster

Cluster readCluster(const MapReader& r) {
    checkHeader(r, FileKind::Cluster);
    r.allowKeys({"version", "kind", "name", "nodes", "gpus_per_node", "gpus_per_host", "gpu", "intra_node",
                 "inter_node", "efficiency", "price_per_gpu_hour"});
    Cluster c;
    c.name = r.stringOr("name", "");
    // `gpu: b200` names a GPU of the database: its figures, and defaults for the domain size and the links.
    const GpuSpec* spec = nullptr;
    if (r.node("gpu").IsScalar()) {
        const std::string id = r.string("gpu");
        spec = findGpu(id);
        if (!spec) {
            std::vector<std::string_view> ids;
            for (const auto& g : gpuDatabase()) ids.push_back(g.id);
            r.failAt("gpu", "unknown GPU '" + id + "'" + io::didYouMean(id, ids) + "; known: " +
                                knownGpuIds() + " (or give the GPU inline: name, tflops, hbm_gb, hbm_tb_s)");
        }
    }
    c.nodes = int(r.integer("nodes", 1, 100000));
    c.gpusPerNode = spec ? int(r.integerOr("gpus_per_node", spec->scaleUpDomain, 1, 100000))
                         : int(r.integer("gpus_per_node", 1, 1024));
    if (int64_t(c.nodes) * c.gpusPerNode > kMaxClusterGpus)
        r.failAt(r.has("gpus_per_node") ? "gpus_per_node" : "nodes",
                 std::to_string(c.nodes) + " nodes of " + std::to_string(c.gpusPerNode) + " GPUs are " +
                     std::to_string(int64_t(c.nodes) * c.gpusPerNode) + " GPUs; a cluster has at most " +
                     std::to_string(kMaxClusterGpus) + " (2^20)");
    c.gpusPerHost = int(r.integerOr("gpus_per_host", 0, 0, 100000));
    if (c.gpusPerHost > 0 && (c.gpusPerHost > c.gpusPerNode || c.gpusPerNode % c.gpusPerHost != 0))
        r.failAt("gpus_per_host", "must divide gpus_per_node (" + std::to_string(c.gpusPerNode) +
                                      "): a host's GPUs sit in one scale-up domain");
    if (c.gpusPerHost == c.gpusPerNode) c.gpusPerHost = 0;
    if (spec) {
        c.gpu = spec->gpu;
        c.pricePerGpuHour = spec->pricePerHourUsd, c.priceSource = spec->priceSource;
    } else {
        const MapReader g = r.map("gpu");
        g.allowKeys({"name", "tflops", "hbm_gb", "memory_mib", "hbm_tb_s", "tdp_w"});
        c.gpu.name = g.stringOr("name", "");
        const MapReader t = g.map("tflops");
        t.allowKeys({"fp32", "bf16", "fp16", "fp8", "int8", "fp4", "int4"});
        bool any = false;
        for (int i = 0; i < kDtypeCount; ++i) {
            c.gpu.tflops[i] = t.numberOr(kDtypeNames[i], 0.0, 0.0, 1e7);
            any = any || c.gpu.tflops[i] > 0;
        }
        if (!any) g.failAt("tflops", "give the dense TFLOP/s of at least one dtype");
        c.gpu.hbmGB = g.number("hbm_gb", 1e-3, 1e7);
        // What the driver reports, MiB (nvidia-smi, rocm-smi); without it the datasheet's 10^9 bytes.
        c.gpu.memoryMiB = g.numberOr("memory_mib", 0.0, 1e-3, 1e10);
        c.gpu.hbmTBs = g.number("hbm_tb_s", 1e-3, 1e4);
        // Board power and price: the file's, else those of the database's GPU of the same name.
        const GpuSpec* named = findGpuByName(c.gpu.name);
        c.gpu.tdpW = g.numberOr("tdp_w", named ? named->gpu.tdpW : 0.0, 1, 1e5);
        if (named) c.pricePerGpuHour = named->pricePerHourUsd, c.priceSource = named->priceSource;
    }
    if (r.has("price_per_gpu_hour")) {
        c.pricePerGpuHour = r.number("price_per_gpu_hour", 0.0, 1e4);
        c.priceSource = "the cluster file's price_per_gpu_hour";
    }
    if (c.pricePerGpuHour <= 0) c.priceSource.clear();
    if (spec && !r.has("intra_node")) {
        c.intraNode = spec->scaleUp;
    } else {
        const MapReader in = r.map("intra_node");
        in.allowKeys({"name", "gb_s_per_gpu", "latency_us", "mesh_link_gb_s"});
        c.intraNode.name = in.stringOr("name", spec ? spec->scaleUp.name : "");
        c.intraNode.gbPerS = spec ? in.numberOr("gb_s_per_gpu", spec->scaleUp.gbPerS, 1e-3, 1e6)
                                  : in.number("gb_s_per_gpu", 1e-3, 1e6);
        c.intraNode.latencyUs = in.numberOr("latency_us", 3.0, 0.0, 1e6);
        // A point-to-point domain (AMD Infinity Fabric): one link's GB/s, one way (Link::meshLinkGbPerS).
        c.intraNode.meshLinkGbPerS =
            in.numberOr("mesh_link_gb_s", spec ? spec->scaleUp.meshLinkGbPerS : 0.0, 0.0, 1e6);
    }
    if (spec && c.nodes > 1 && !r.has("inter_node")) {
        c.interNode = Link{"NIC", spec->nicGbitPerGpu / 8.0, 6.0};
    } else if (c.nodes > 1 || r.has("inter_node")) {
        const MapReader out = r.map("inter_node");
        out.allowKeys({"name", "nic_gbit_s_per_gpu", "latency_us"});
        c.interNode.name = out.stringOr("name", "");
        c.interNode.gbPerS = (spec ? out.numberOr("nic_gbit_s_per_gpu", spec->nicGbitPerGpu, 1e-3, 1e7)
                                   : out.number("nic_gbit_s_per_gpu", 1e-3, 1e7)) /
                             8.0;
        c.interNode.latencyUs = out.numberOr("latency_us", 6.0, 0.0, 1e6);
    }
    // Efficiency: the cluster file's own factors where it gives them (each one it names replaces the GPU
    // family's), else the factors the database fitted for the GPU's family, else Hopper's with a warning.
    const GpuFamily* family = spec ? findGpuFamily(spec->family) : nullptr;
    if (family && family->fitted) c.efficiency = family->efficiency;
    c.efficiencySource = familySource(family, spec ? spec->gpu.name : c.gpu.name);
    if (r.has("efficiency")) {
        c.efficiency = io::readEfficiency(r.map("efficiency"), c.efficiency);
        c.efficiencySource =
            "the cluster file's own factors" +
            (family && family->fitted ? " (over " + c.efficiencySource + ")" : std::string());
    }
    return c;
}

// ---------------------------------------------------------------- workload

Workload readWorkload(const MapReader& r) {
    checkHeader(r, FileKind::Workload);
    r.allowKeys({"version", "kind", "name", "phase", "input_tokens", "output_tokens", "slo", "batch",
                 "kv_reservation", "acceptance_rates", "prefix_cache_hit"});
    Workload w;
    w.name = r.stringOr("name", "");
    w.phase = static_cast<Phase>(r.oneOf("phase", {"prefill", "decode", "serving"}));
    w.inputLengths = io::readLength(r, "input_tokens", w.inputTokens);
    w.outputTokens = 1;
    if (r.has("output_tokens")) w.outputLengths = io::readLength(r, "output_tokens", w.outputTokens);
    // Share of a prompt's tokens found in the prefix cache: below 1, since a prompt's last token is always
    // computed (its logits give the first output token).
    w.prefixCacheHit = r.numberOr("prefix_cache_hit", 0.0, 0.0, 0.99);
    if (r.has("slo")) {
        const MapReader s = r.map("slo");
        s.allowKeys({"ttft_ms", "tpot_ms", "percentile"});
        w.ttftMs = s.numberOr("ttft_ms", 0.0, 0.0, 1e9);
        w.tpotMs = s.numberOr("tpot_ms", 0.0, 0.0, 1e9);
        // 99: p99 TTFT and TPOT (MLPerf's server scenario); absent: the mean, as the analytical model checks.
        w.sloPercentile = s.numberOr("percentile", 0.0, 1.0, 100.0);
    }
    if (r.has("batch")) {
        const MapReader b = r.map("batch");
        b.allowKeys({"policy", "size"});
        w.fixedBatch = b.oneOfOr("policy", {"auto", "fixed"}, 0) == 1;
        if (w.fixedBatch)
            w.batch = b.integer("size", 1, 10'000'000);
        else if (b.has("size"))
            b.failAt("size", "only with policy: fixed");
    }
    w.kvReservation =
        static_cast<Workload::KvReservation>(r.oneOfOr("kv_reservation", {"paged", "worst"}, 0));
    // Speculative decoding's acceptance on this workload's text: one list for every method, or one per method
    // ({mtp: [...], eagle3: [...]}).
    if (r.has("acceptance_rates")) {
        if (r.node("acceptance_rates").IsMap()) {
            const MapReader a = r.map("acceptance_rates");
            a.allowKeys({"mtp", "eagle3", "draft", "ngram"});
            for (int m = 1; m < kSpecMethodCount; ++m)
                if (a.has(kSpecMethodNames[size_t(m)]))
                    w.acceptance[size_t(m)] = io::readAcceptanceRates(a, kSpecMethodNames[size_t(m)]);
        } else {
            const auto rates = io::readAcceptanceRates(r, "acceptance_rates");
            for (int m = 1; m < kSpecMethodCount; ++m) w.acceptance[size_t(m)] = rates;
        }
    }
    return w;
}

Constraints readConstraints(const MapReader& r) {
    checkHeader(r, FileKind::Constraints);
    r.allowKeys({"version", "kind", "gpus", "degrees", "pinned", "engine", "memory_fraction",
                 "memory_headroom", "stage_layers", "granularity", "layer_groups", "prefill_budget",
                 "speculative"});
    Constraints c;
    c.gpus = int(r.integerOr("gpus", 0, 0, 10'000'000));
    if (r.has("degrees")) {
        const MapReader d = r.map("degrees");
        d.allowKeys({"pp", "dp", "tp", "ep", "etp", "edp"});
        for (int a = 0; a < kAxisCount; ++a)
            if (d.has(kAxisNames[a]))
                for (auto v : d.integerList(kAxisNames[a], 1, 1'000'000)) c.allowed[a].push_back(int(v));
    }
    if (r.has("pinned")) {
        const MapReader p = r.map("pinned");
        p.allowKeys({"embedding", "norms", "qkv", "attention", "out_proj", "ffn_up", "ffn_down", "router",
                     "experts", "shared_experts", "lm_head"});
        for (int i = 0; i < kBaseOpCount; ++i) {
            const Op op = static_cast<Op>(i);
            if (p.has(kOpNames[i])) c.pinned[i] = int8_t(p.oneOf(kOpNames[i], choiceNames(op)));
        }
        // A pin applies to the operator in every layer kind.
        for (Op moeOp : {Op::MoeNorms, Op::MoeQkv, Op::MoeAttention, Op::MoeOutProj})
            c.pinned[int(moeOp)] = c.pinned[int(baseOp(moeOp))];
    }
    // The engine whose memory rule sizes the KV pool, and its memory fraction (gpu_memory_utilization,
    // mem_fraction_static, free_gpu_memory_fraction); unset: that engine's own default for the plan.
    c.memoryRule = MemoryRule(r.oneOfOr(
        "engine", std::vector<std::string_view>(kMemoryRuleNames.begin(), kMemoryRuleNames.end()), 0));
    c.memoryFraction = r.numberOr("memory_fraction", 0.0, 0.05, 1.0);
    // The older spelling: the share of memory kept free, i.e. a memory fraction of 1 - headroom.
    if (r.has("memory_headroom")) {
        if (r.has("memory_fraction"))
            r.failAt("memory_headroom",
                     "give memory_fraction or memory_headroom (its older spelling), not both");
        c.memoryFraction = 1.0 - r.number("memory_headroom", 0.0, 0.9);
    }
    c.stageSplit = static_cast<StageSplit>(r.oneOfOr(
        "stage_layers", std::vector<std::string_view>(kStageSplitNames.begin(), kStageSplitNames.end()), 0));
    // The prefill token budget per pass: the engines' default, or searched (kSearchedPrefillBudgets).
    c.searchPrefillBudget =
        r.oneOfOr("prefill_budget", std::vector<std::string_view>{"default", "searched"}, 0) == 1;
    // Speculative decoding: searched (every method the model has, with known acceptance), off, or pinned to
    // one method and draft count (whether the model and workload can run it is checked with the scenario).
    if (r.has("speculative")) {
        if (r.node("speculative").IsMap()) {
            c.specPin = io::readSpeculative(r.map("speculative"));
            c.specPolicy = c.specPin.on() ? Constraints::SpecPolicy::Pinned : Constraints::SpecPolicy::Off;
        } else {
            c.specPolicy = r.oneOf("speculative", {"search", "off"}) == 0 ? Constraints::SpecPolicy::Search
                                                                          : Constraints::SpecPolicy::Off;
        }
    }
    // How finely the search chooses the per-layer operators: per type (every layer alike), per stage, or per
    // run of layers (layer_groups of them).
    c.granularity = static_cast<Granularity>(r.oneOfOr(
        "granularity", std::vector<std::string_view>(kGranularityNames.begin(), kGranularityNames.end()), 0));
    if (r.has("layer_groups") && c.granularity != Granularity::LayerGroup)
        r.failAt("layer_groups", "layer_groups counts the runs of layers of granularity: layer-group; this "
                                 "file's granularity is " +
                                     std::string(kGranularityNames[int(c.granularity)]));
    c.layerGroups = int(r.integerOr("layer_groups", 2, 2, kMaxLayerGroups));
    return c;
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

} // namespace formats

namespace {

void emitDtypes(YAML::Emitter& e, const Model& m) {
    e << YAML::Key << "dtypes" << YAML::Value << YAML::BeginMap;
    e << YAML::Key << "weights" << YAML::Value << std::string(nameOf(m.weights));
    e << YAML::Key << "activations" << YAML::Value << std::string(nameOf(m.activations));
    e << YAML::Key << "kv_cache" << YAML::Value << std::string(nameOf(m.kvCache));
    e << YAML::EndMap;
}

} // namespace

namespace formats {

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

void emitCluster(YAML::Emitter& e, const Cluster& c) {
    e << YAML::BeginMap;
    e << YAML::Key << "version" << YAML::Value << 1 << YAML::Key << "kind" << YAML::Value << "cluster";
    e << YAML::Key << "name" << YAML::Value << c.name;
    e << YAML::Key << "nodes" << YAML::Value << c.nodes << YAML::Key << "gpus_per_node" << YAML::Value
      << c.gpusPerNode;
    if (c.gpusPerHost > 0) e << YAML::Key << "gpus_per_host" << YAML::Value << c.gpusPerHost;
    e << YAML::Key << "gpu" << YAML::Value << YAML::BeginMap << YAML::Key << "name" << YAML::Value
      << c.gpu.name;
    e << YAML::Key << "tflops" << YAML::Value << YAML::Flow << YAML::BeginMap;
    for (int i = 0; i < kDtypeCount; ++i)
        if (c.gpu.tflops[i] > 0)
            e << YAML::Key << std::string(kDtypeNames[i]) << YAML::Value << c.gpu.tflops[i];
    e << YAML::EndMap;
    e << YAML::Key << "hbm_gb" << YAML::Value << c.gpu.hbmGB;
    if (c.gpu.memoryMiB > 0) e << YAML::Key << "memory_mib" << YAML::Value << c.gpu.memoryMiB;
    e << YAML::Key << "hbm_tb_s" << YAML::Value << c.gpu.hbmTBs;
    if (c.gpu.tdpW > 0) e << YAML::Key << "tdp_w" << YAML::Value << c.gpu.tdpW;
    e << YAML::EndMap;
    if (c.pricePerGpuHour > 0) e << YAML::Key << "price_per_gpu_hour" << YAML::Value << c.pricePerGpuHour;
    e << YAML::Key << "intra_node" << YAML::Value << YAML::BeginMap << YAML::Key << "name" << YAML::Value
      << c.intraNode.name;
    e << YAML::Key << "gb_s_per_gpu" << YAML::Value << c.intraNode.gbPerS;
    e << YAML::Key << "latency_us" << YAML::Value << c.intraNode.latencyUs;
    if (c.intraNode.meshLinkGbPerS > 0)
        e << YAML::Key << "mesh_link_gb_s" << YAML::Value << c.intraNode.meshLinkGbPerS;
    e << YAML::EndMap;
    if (c.interNode.gbPerS > 0) {
        e << YAML::Key << "inter_node" << YAML::Value << YAML::BeginMap << YAML::Key << "name" << YAML::Value
          << c.interNode.name;
        e << YAML::Key << "nic_gbit_s_per_gpu" << YAML::Value << c.interNode.gbPerS * 8.0;
        e << YAML::Key << "latency_us" << YAML::Value << c.interNode.latencyUs << YAML::EndMap;
    }
    const auto& f = c.efficiency;
    e << YAML::Key << "efficiency" << YAML::Value << YAML::BeginMap;
    e << YAML::Key << "compute" << YAML::Value << f.compute << YAML::Key << "memory" << YAML::Value
      << f.memory;
    e << YAML::Key << "intra_node" << YAML::Value << f.intraNode << YAML::Key << "inter_node" << YAML::Value
      << f.interNode;
    e << YAML::Key << "launch_us" << YAML::Value << f.launchUs;
    e << YAML::Key << "grouped_gemm" << YAML::Value << f.groupedGemm << YAML::Key << "overlap" << YAML::Value
      << f.overlap << YAML::Key << "kv_read" << YAML::Value << f.kvRead;
    e << YAML::Key << "op_overlap" << YAML::Value << f.opOverlap;
    if (f.fusedMoeMemory > 0) e << YAML::Key << "fused_moe_memory" << YAML::Value << f.fusedMoeMemory;
    if (f.computeFp4 > 0) e << YAML::Key << "compute_fp4" << YAML::Value << f.computeFp4;
    e << YAML::EndMap;
    e << YAML::EndMap;
}

void emitWorkload(YAML::Emitter& e, const Workload& w) {
    static const char* phases[] = {"prefill", "decode", "serving"};
    e << YAML::BeginMap;
    e << YAML::Key << "version" << YAML::Value << 1 << YAML::Key << "kind" << YAML::Value << "workload";
    e << YAML::Key << "name" << YAML::Value << w.name << YAML::Key << "phase" << YAML::Value
      << phases[int(w.phase)];
    e << YAML::Key << "input_tokens" << YAML::Value;
    io::emitLength(e, w.inputLengths, w.inputTokens);
    e << YAML::Key << "output_tokens" << YAML::Value;
    io::emitLength(e, w.outputLengths, w.outputTokens);
    if (w.prefixCacheHit > 0) e << YAML::Key << "prefix_cache_hit" << YAML::Value << w.prefixCacheHit;
    e << YAML::Key << "slo" << YAML::Value << YAML::BeginMap << YAML::Key << "ttft_ms" << YAML::Value
      << w.ttftMs;
    e << YAML::Key << "tpot_ms" << YAML::Value << w.tpotMs;
    if (w.sloPercentile > 0) e << YAML::Key << "percentile" << YAML::Value << w.sloPercentile;
    e << YAML::EndMap;
    e << YAML::Key << "batch" << YAML::Value << YAML::BeginMap;
    e << YAML::Key << "policy" << YAML::Value << (w.fixedBatch ? "fixed" : "auto");
    if (w.fixedBatch) e << YAML::Key << "size" << YAML::Value << w.batch;
    e << YAML::EndMap;
    if (w.kvReservation == Workload::KvReservation::Worst)
        e << YAML::Key << "kv_reservation" << YAML::Value << "worst";
    bool anyRates = false, alike = true;
    for (int m = 1; m < kSpecMethodCount; ++m) {
        anyRates = anyRates || !w.acceptance[size_t(m)].empty();
        alike = alike && w.acceptance[size_t(m)] == w.acceptance[1];
    }
    if (anyRates && alike) {
        e << YAML::Key << "acceptance_rates" << YAML::Value << YAML::Flow << w.acceptance[1];
    } else if (anyRates) {
        e << YAML::Key << "acceptance_rates" << YAML::Value << YAML::BeginMap;
        for (int m = 1; m < kSpecMethodCount; ++m)
            if (!w.acceptance[size_t(m)].empty())
                e << YAML::Key << std::string(kSpecMethodNames[size_t(m)]) << YAML::Value << YAML::Flow
                  << w.acceptance[size_t(m)];
        e << YAML::EndMap;
    }
    e << YAML::EndMap;
}

void emitConstraints(YAML::Emitter& e, const Constraints& c) {
    e << YAML::BeginMap;
    e << YAML::Key << "version" << YAML::Value << 1 << YAML::Key << "kind" << YAML::Value << "constraints";
    if (c.gpus > 0) e << YAML::Key << "gpus" << YAML::Value << c.gpus;
    e << YAML::Key << "degrees" << YAML::Value << YAML::BeginMap;
    for (int a = 0; a < kAxisCount; ++a)
        if (!c.allowed[a].empty())
            e << YAML::Key << std::string(kAxisNames[a]) << YAML::Value << YAML::Flow << c.allowed[a];
    e << YAML::EndMap;
    e << YAML::Key << "pinned" << YAML::Value << YAML::BeginMap;
    for (int i = 0; i < kBaseOpCount; ++i)
        if (c.pinned[i] >= 0)
            e << YAML::Key << std::string(kOpNames[i]) << YAML::Value
              << std::string(choiceNames(Op(i))[c.pinned[i]]);
    e << YAML::EndMap;
    if (c.memoryRule != MemoryRule::Vllm)
        e << YAML::Key << "engine" << YAML::Value << std::string(kMemoryRuleNames[int(c.memoryRule)]);
    if (c.memoryFraction > 0) e << YAML::Key << "memory_fraction" << YAML::Value << c.memoryFraction;
    if (c.stageSplit != StageSplit::Balanced)
        e << YAML::Key << "stage_layers" << YAML::Value << std::string(kStageSplitNames[int(c.stageSplit)]);
    if (c.granularity != Granularity::Type)
        e << YAML::Key << "granularity" << YAML::Value << std::string(kGranularityNames[int(c.granularity)]);
    if (c.granularity == Granularity::LayerGroup)
        e << YAML::Key << "layer_groups" << YAML::Value << c.layerGroups;
    if (c.searchPrefillBudget) e << YAML::Key << "prefill_budget" << YAML::Value << "searched";
    if (c.specPolicy == Constraints::SpecPolicy::Off) e << YAML::Key << "speculative" << YAML::Value << "off";
    if (c.specPolicy == Constraints::SpecPolicy::Pinned)
        e << YAML::Key << "speculative" << YAML::Value << YAML::Flow << YAML::BeginMap << YAML::Key
          << "method" << YAML::Value << std::string(nameOf(c.specPin.method)) << YAML::Key << "draft_tokens"
          << YAML::Value << c.specPin.draftTokens << YAML::EndMap;
    e << YAML::EndMap;
}

} // namespace formats

Result<Model> parseModel(const std::string& t, const std::string& f) {
    return parseWith<Model>(t, f, readAnyModel);
}
Result<Cluster> parseCluster(const std::string& t, const std::string& f) {
    return parseWith<Cluster>(t, f, readCluster);
}
Result<Workload> parseWorkload(const std::string& t, const std::string& f) {
    return parseWith<Workload>(t, f, readWorkload);
}
Result<Constraints> parseConstraints(const std::string& t, const std::string& f) {
    return parseWith<Constraints>(t, f, readConstraints);
}

Result<Model> loadModel(const std::string& p) {
    std::error_code ec;
    if (!std::filesystem::exists(p, ec) && io::looksLikeHubId(p)) {
        std::string path;
        try {
            path = resolveHubId(p, p, YAML::Node(), "");
        } catch (const InputError& e) {
            return e.error();
        }
        auto m = loadWith<Model>(path, readAnyModel);
        if (m) nameFromHubId(m.value(), p, path);
        return m;
    }
    if (std::filesystem::is_directory(p, ec))
        return loadWith<Model>((std::filesystem::path(p) / "config.json").string(), readAnyModel);
    return loadWith<Model>(p, readAnyModel);
}
Result<Cluster> loadCluster(const std::string& p) {
    return loadWith<Cluster>(p, readCluster);
}
Result<Workload> loadWorkload(const std::string& p) {
    return loadWith<Workload>(p, readWorkload);
}
Result<Constraints> loadConstraints(const std::string& p) {
    return loadWith<Constraints>(p, readConstraints);
}

std::string toYaml(const Model& m) {
    YAML::Emitter e;
    emitModel(e, m);
    return emitted(e);
}
std::string toYaml(const Cluster& c) {
    YAML::Emitter e;
    emitCluster(e, c);
    return emitted(e);
}
std::string toYaml(const Workload& w) {
    YAML::Emitter e;
    emitWorkload(e, w);
    return emitted(e);
}
std::string toYaml(const Constraints& c) {
    YAML::Emitter e;
    emitConstraints(e, c);
    return emitted(e);
}

} // namespace sp
