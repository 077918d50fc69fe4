#include "core/io/formats.h"

#include "core/io/gpudb.h"
#include "core/io/hfconfig.h"
#include "core/io/modelfields.h"
#include "core/io/reader.h"

#include <nlohmann/json.hpp>
#include <yaml-cpp/yaml.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <system_error>
#include <type_traits>

namespace sp {

using io::MapReader;

namespace {

constexpr int64_t kMaxDim =
    10'000'000; // generous upper bound on any size; keeps arithmetic far from overflow
constexpr int64_t kMaxLayers = 10'000;
constexpr int64_t kMaxTokens = 100'000'000;

std::vector<std::string_view> dtypeOptions() {
    return {kDtypeNames.begin(), kDtypeNames.end()};
}
std::vector<std::string_view> kindOptions() {
    return {kFileKindNames.begin(), kFileKindNames.end()};
}

void checkHeader(const MapReader& r, FileKind expected) {
    if (r.has("version")) {
        const int64_t v = r.integer("version", 0, 1000000);
        if (v != 1) r.failAt("version", "unsupported version " + std::to_string(v) + ", expected 1");
    }
    if (r.has("kind")) {
        const int k = r.oneOf("kind", kindOptions());
        if (k != static_cast<int>(expected))
            r.failAt("kind", "expected a " + std::string(nameOf(expected)) + " file, found kind '" +
                                 std::string(kFileKindNames[k]) + "'");
    }
}

// ---------------------------------------------------------------- model

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
    r.allowKeys({"version", "kind", "name", "source", "hub_id", "max_position_embeddings", "layers", "hidden",
                 "vocab", "tied_embeddings", "attention", "ffn", "moe", "mtp_layers", "attention_pattern",
                 "nope_layers", "vision_params", "dtypes", "quantization"});
    Model m;
    m.name = r.stringOr("name", "");
    m.source = r.stringOr("source", "");
    m.hubId = r.stringOr("hub_id", "");
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
        a.mla.qLoraRank = at.integerOr("q_lora_rank", 0, 0, kMaxDim);
        a.mla.kvLoraRank = at.integer("kv_lora_rank", 1, kMaxDim);
        a.mla.qkNopeHeadDim = at.integer("qk_nope_head_dim", 1, 65536);
        a.mla.qkRopeHeadDim = at.integer("qk_rope_head_dim", 1, 65536);
        a.mla.vHeadDim = at.integer("v_head_dim", 1, 65536);
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
    checkModel(m, r);
    return m;
}

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
                 "inter_node", "efficiency"});
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
    c.gpusPerHost = int(r.integerOr("gpus_per_host", 0, 0, 100000));
    if (c.gpusPerHost > 0 && (c.gpusPerHost > c.gpusPerNode || c.gpusPerNode % c.gpusPerHost != 0))
        r.failAt("gpus_per_host", "must divide gpus_per_node (" + std::to_string(c.gpusPerNode) +
                                      "): a host's GPUs sit in one scale-up domain");
    if (c.gpusPerHost == c.gpusPerNode) c.gpusPerHost = 0;
    if (spec) {
        c.gpu = spec->gpu;
    } else {
        const MapReader g = r.map("gpu");
        g.allowKeys({"name", "tflops", "hbm_gb", "hbm_tb_s"});
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
        c.gpu.hbmTBs = g.number("hbm_tb_s", 1e-3, 1e4);
    }
    if (spec && !r.has("intra_node")) {
        c.intraNode = spec->scaleUp;
    } else {
        const MapReader in = r.map("intra_node");
        in.allowKeys({"name", "gb_s_per_gpu", "latency_us"});
        c.intraNode.name = in.stringOr("name", spec ? spec->scaleUp.name : "");
        c.intraNode.gbPerS = spec ? in.numberOr("gb_s_per_gpu", spec->scaleUp.gbPerS, 1e-3, 1e6)
                                  : in.number("gb_s_per_gpu", 1e-3, 1e6);
        c.intraNode.latencyUs = in.numberOr("latency_us", 3.0, 0.0, 1e6);
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
    if (r.has("efficiency")) {
        const MapReader e = r.map("efficiency");
        e.allowKeys({"compute", "memory", "intra_node", "inter_node", "launch_us", "grouped_gemm", "overlap",
                     "kv_read", "op_overlap"});
        const Efficiency d;
        c.efficiency.compute = e.numberOr("compute", d.compute, 0.01, 1.0);
        c.efficiency.memory = e.numberOr("memory", d.memory, 0.01, 1.0);
        c.efficiency.intraNode = e.numberOr("intra_node", d.intraNode, 0.01, 1.0);
        c.efficiency.interNode = e.numberOr("inter_node", d.interNode, 0.01, 1.0);
        c.efficiency.launchUs = e.numberOr("launch_us", d.launchUs, 0.0, 1e5);
        c.efficiency.groupedGemm = e.numberOr("grouped_gemm", d.groupedGemm, 0.01, 1.0);
        c.efficiency.overlap = e.numberOr("overlap", d.overlap, 0.0, 1.0);
        c.efficiency.kvRead = e.numberOr("kv_read", d.kvRead, 0.01, 1.0);
        c.efficiency.opOverlap = e.numberOr("op_overlap", d.opOverlap, 0.0, 1.0);
    }
    return c;
}

// ---------------------------------------------------------------- workload

Workload readWorkload(const MapReader& r) {
    checkHeader(r, FileKind::Workload);
    r.allowKeys({"version", "kind", "name", "phase", "input_tokens", "output_tokens", "slo", "batch",
                 "kv_reservation"});
    Workload w;
    w.name = r.stringOr("name", "");
    w.phase = static_cast<Phase>(r.oneOf("phase", {"prefill", "decode", "serving"}));
    w.inputTokens = r.integer("input_tokens", 1, kMaxTokens);
    w.outputTokens = r.integerOr("output_tokens", 1, 1, kMaxTokens);
    if (r.has("slo")) {
        const MapReader s = r.map("slo");
        s.allowKeys({"ttft_ms", "tpot_ms"});
        w.ttftMs = s.numberOr("ttft_ms", 0.0, 0.0, 1e9);
        w.tpotMs = s.numberOr("tpot_ms", 0.0, 0.0, 1e9);
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
    w.kvReservation = static_cast<Workload::KvReservation>(r.oneOfOr("kv_reservation", {"paged", "worst"}, 0));
    return w;
}

// ---------------------------------------------------------------- constraints, plan

Constraints readConstraints(const MapReader& r) {
    checkHeader(r, FileKind::Constraints);
    r.allowKeys({"version", "kind", "gpus", "degrees", "pinned", "memory_headroom"});
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
    c.memoryHeadroom = r.numberOr("memory_headroom", 0.05, 0.0, 0.9);
    return c;
}

Plan readPlanFields(const MapReader& r);

Plan readPlan(const MapReader& r) {
    checkHeader(r, FileKind::Plan);
    if (r.has("disaggregated"))
        r.failAt("disaggregated",
                 "a disaggregated plan (a prefill and a decode pool) where a single plan was "
                 "expected");
    r.allowKeys({"version", "kind", "degrees", "mesh_order", "operators", "moe_layer_operators", "batch",
                 "overlap", "prefill_budget"});
    return readPlanFields(r);
}

/// A disaggregated plan: `disaggregated: {prefill: {nodes: N, <plan fields>}, decode: {...}}`. With a
/// scenario, the pools must add up to its nodes and each plan must use its pool's GPUs.
DisaggPlan readDisaggPlan(const MapReader& r, const Scenario* s) {
    checkHeader(r, FileKind::Plan);
    r.allowKeys({"version", "kind", "disaggregated"});
    const MapReader d = r.map("disaggregated");
    d.allowKeys({"prefill", "decode"});
    DisaggPlan out;
    const std::array<const char*, 2> names{"prefill", "decode"};
    const std::array<MapReader, 2> pools{d.map(names[0]), d.map(names[1])};
    for (int i = 0; i < 2; ++i) {
        const MapReader& pr = pools[size_t(i)];
        pr.allowKeys({"nodes", "degrees", "mesh_order", "operators", "moe_layer_operators", "batch",
                      "overlap", "prefill_budget"});
        DisaggPool& pool = i == 0 ? out.prefill : out.decode;
        pool.nodes = int(pr.integer("nodes", 1, 1'000'000));
        pool.plan = readPlanFields(pr);
    }
    if (!s) return out;
    const int total = out.prefill.nodes + out.decode.nodes;
    if (total != s->cluster.nodes)
        pools[1].failAt("nodes", "prefill " + std::to_string(out.prefill.nodes) + " + decode " +
                                     std::to_string(out.decode.nodes) + " nodes = " + std::to_string(total) +
                                     ", but the cluster has " + std::to_string(s->cluster.nodes));
    for (int i = 0; i < 2; ++i) {
        const DisaggPool& pool = i == 0 ? out.prefill : out.decode;
        const int64_t gpus = int64_t(pool.nodes) * s->cluster.gpusPerNode;
        const Degrees& g = pool.plan.degrees;
        if (int64_t(g.pp) * g.dp * g.tp != gpus)
            pools[size_t(i)].failAt("degrees", "pp*dp*tp = " + std::to_string(int64_t(g.pp) * g.dp * g.tp) +
                                                   " does not match the " + names[size_t(i)] + " pool's " +
                                                   std::to_string(pool.nodes) + " nodes x " +
                                                   std::to_string(s->cluster.gpusPerNode) +
                                                   " GPUs = " + std::to_string(gpus));
    }
    return out;
}

Plan readPlanFields(const MapReader& r) {
    Plan p = Plan::megatronChoices({});
    const MapReader d = r.map("degrees");
    d.allowKeys({"pp", "dp", "tp", "ep", "etp", "edp"});
    for (int a = 0; a < kAxisCount; ++a)
        p.degrees.set(Axis(a), int(d.integerOr(kAxisNames[a], 1, 1, 1'000'000)));
    // Without expert degrees, MoE layers spread their experts over the whole stage: ep = dp*tp.
    if (!d.has("ep") && !d.has("etp") && !d.has("edp")) p.degrees.ep = p.degrees.dp * p.degrees.tp;
    const auto& g = p.degrees;
    if (int64_t(g.ep) * g.etp * g.edp != int64_t(g.dp) * g.tp)
        d.failHere("ep*etp*edp (" + std::to_string(int64_t(g.ep) * g.etp * g.edp) + ") must equal dp*tp (" +
                   std::to_string(int64_t(g.dp) * g.tp) + "): MoE layers regroup the same GPUs of a stage");
    if (r.has("mesh_order")) {
        const YAML::Node n = r.node("mesh_order");
        if (!n.IsSequence() || n.size() != 3)
            io::fail(r.file(), n, "mesh_order", "expected a list of tp, dp and pp in some order");
        std::array<bool, 3> seen{};
        for (size_t i = 0; i < 3; ++i) {
            const std::string s = io::asString(r.file(), n[i], "mesh_order[" + std::to_string(i) + "]");
            const Axis a = s == "tp" ? Axis::TP : s == "dp" ? Axis::DP : s == "pp" ? Axis::PP : Axis::EP;
            if (a == Axis::EP || seen[int(a)])
                io::fail(r.file(), n[i], "mesh_order[" + std::to_string(i) + "]",
                         "expected each of tp, dp and pp once, found '" + s + "'" +
                             io::didYouMean(s, {"tp", "dp", "pp"}));
            seen[int(a)] = true;
            p.meshOrder[i] = a;
        }
    }
    if (r.has("operators")) {
        const MapReader o = r.map("operators");
        o.allowKeys({"embedding", "norms", "qkv", "attention", "out_proj", "ffn_up", "ffn_down", "router",
                     "experts", "shared_experts", "lm_head"});
        for (int i = 0; i < kBaseOpCount; ++i)
            if (o.has(kOpNames[i])) p.choices[i] = int8_t(o.oneOf(kOpNames[i], choiceNames(Op(i))));
    }
    for (Op moeOp : {Op::MoeNorms, Op::MoeQkv, Op::MoeAttention, Op::MoeOutProj})
        p.choices[int(moeOp)] = p.choices[int(baseOp(moeOp))];
    if (r.has("moe_layer_operators")) {
        const MapReader o = r.map("moe_layer_operators");
        o.allowKeys({"norms", "qkv", "attention", "out_proj"});
        for (Op moeOp : {Op::MoeNorms, Op::MoeQkv, Op::MoeAttention, Op::MoeOutProj})
            if (o.has(kOpNames[int(moeOp)]))
                p.setChoice(moeOp, o.oneOf(kOpNames[int(moeOp)], choiceNames(moeOp)));
    }
    p.batch = r.integerOr("batch", 0, 0, 10'000'000);
    p.overlap = static_cast<Overlap>(
        r.oneOfOr("overlap", std::vector<std::string_view>(kOverlapNames.begin(), kOverlapNames.end()), 0));
    p.prefillBudget = r.integerOr("prefill_budget", 0, 0, 100'000'000);
    return p;
}

// ---------------------------------------------------------------- scenario

std::string baseDir(const std::string& file) {
    const auto parent = std::filesystem::path(file).parent_path();
    return parent.empty() ? std::string(".") : parent.string();
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

/// The kind a document declares (kind:) or, without one, looks like from its keys; nullopt when it cannot tell.
std::optional<FileKind> kindOfDocument(const YAML::Node& n) {
    if (!n.IsMap()) return std::nullopt;
    if (const YAML::Node k = n["kind"]; k && k.IsScalar()) {
        const auto options = kindOptions();
        const auto it = std::find(options.begin(), options.end(), k.Scalar());
        if (it == options.end()) return std::nullopt;
        return FileKind(it - options.begin());
    }
    if (io::isHfConfig(n)) return FileKind::Model;
    if (n["degrees"] && (n["operators"] || n["mesh_order"] || !n["gpus"])) return FileKind::Plan;
    if (n["layers"] || n["hidden"]) return FileKind::Model;
    if (n["disaggregated"]) return FileKind::Plan;
    if (n["nodes"] || n["gpu"]) return FileKind::Cluster;
    if (n["phase"]) return FileKind::Workload;
    if (n["model"] && n["cluster"]) return FileKind::Scenario;
    if (n["pinned"] || n["degrees"] || n["memory_headroom"]) return FileKind::Constraints;
    return std::nullopt;
}

template <class T> constexpr FileKind kindFor() {
    if constexpr (std::is_same_v<T, Model>) return FileKind::Model;
    else if constexpr (std::is_same_v<T, Cluster>) return FileKind::Cluster;
    else if constexpr (std::is_same_v<T, Workload>) return FileKind::Workload;
    else return FileKind::Constraints;
}

// A scenario part: a path relative to the scenario file, or the object inline. A referenced file that is not
// of the expected kind is reported by name and kind only: its text is never quoted, since a relative path
// may reach any file.
template <class T, class Fn> T readPart(const MapReader& r, std::string_view key, Fn read) {
    const YAML::Node n = r.node(key);
    if (n.IsScalar()) {
        constexpr FileKind expected = kindFor<T>();
        const std::string rel = n.Scalar();
        if constexpr (std::is_same_v<T, Model>) {
            std::error_code ec;
            const auto local = std::filesystem::path(baseDir(r.file())) / rel;
            if (!std::filesystem::exists(local, ec) && io::looksLikeHubId(rel)) {
                const std::string path = resolveHubId(rel, r.file(), n, r.field(key));
                Model m = read(MapReader(path, io::parseDocument(io::readFile(path), path), ""));
                nameFromHubId(m, rel, path);
                return m;
            }
            if (std::filesystem::is_directory(local, ec)) {
                const std::string path = (local / "config.json").lexically_normal().string();
                return read(MapReader(path, io::parseDocument(io::readFile(path), path), ""));
            }
        }
        const std::filesystem::path p = std::filesystem::path(rel).is_absolute()
                                            ? std::filesystem::path(rel)
                                            : std::filesystem::path(baseDir(r.file())) / rel;
        std::error_code ec;
        if (!std::filesystem::is_regular_file(p, ec))
            io::fail(r.file(), n, r.field(key), "no such file '" + p.lexically_normal().string() + "'");
        const std::string path = p.lexically_normal().string();
        const std::string text = io::readFile(path);
        const std::string notOfKind = "'" + path + "' is not a " + std::string(nameOf(expected)) + " file";
        YAML::Node doc;
        try {
            doc = io::parseDocument(text, path);
        } catch (const InputError&) {
            io::fail(r.file(), n, r.field(key), notOfKind + " (it is not a YAML or JSON mapping)");
        }
        const auto kind = kindOfDocument(doc);
        if (kind && *kind != expected)
            io::fail(r.file(), n, r.field(key), notOfKind + " (it is a " + std::string(nameOf(*kind)) + " file)");
        if (!kind)
            io::fail(r.file(), n, r.field(key),
                     notOfKind + " (it has no 'kind: " + std::string(nameOf(expected)) + "' and does not look like one)");
        return read(MapReader(path, doc, ""));
    }
    return read(MapReader(r.file(), n, r.field(key)));
}

Scenario readScenario(const MapReader& r) {
    checkHeader(r, FileKind::Scenario);
    r.allowKeys({"version", "kind", "name", "model", "cluster", "workload", "constraints"});
    Scenario s;
    s.name = r.stringOr("name", "");
    s.model = readPart<Model>(r, "model", readAnyModel);
    s.cluster = readPart<Cluster>(r, "cluster", readCluster);
    s.workload = readPart<Workload>(r, "workload", readWorkload);
    if (r.has("constraints")) s.constraints = readPart<Constraints>(r, "constraints", readConstraints);
    if (s.cluster.gpu.tflops[int(s.model.activations)] <= 0)
        r.failAt("cluster", "the GPU has no TFLOP/s figure for the model's activation dtype '" +
                                std::string(nameOf(s.model.activations)) + "'");
    if (s.constraints.gpus > s.cluster.gpus())
        r.failAt("constraints", "gpus (" + std::to_string(s.constraints.gpus) + ") exceeds the cluster's " +
                                    std::to_string(s.cluster.gpus()));
    return s;
}

template <class T, class Fn> Result<T> parseWith(const std::string& text, const std::string& file, Fn read) {
    try {
        return read(MapReader(file, io::parseDocument(text, file), ""));
    } catch (const InputError& e) {
        return e.error();
    } catch (const YAML::Exception& e) {
        return Error{file, e.mark.line + 1, e.mark.column + 1, {}, e.msg};
    } catch (const std::exception& e) {
        return Error{file, 0, 0, {}, e.what()};
    }
}

template <class T, class Fn> Result<T> loadWith(const std::string& path, Fn read) {
    std::string text;
    try {
        text = io::readFile(path);
    } catch (const InputError& e) {
        return e.error();
    }
    return parseWith<T>(text, path, read);
}

// ---------------------------------------------------------------- writers

void emitDtypes(YAML::Emitter& e, const Model& m) {
    e << YAML::Key << "dtypes" << YAML::Value << YAML::BeginMap;
    e << YAML::Key << "weights" << YAML::Value << std::string(nameOf(m.weights));
    e << YAML::Key << "activations" << YAML::Value << std::string(nameOf(m.activations));
    e << YAML::Key << "kv_cache" << YAML::Value << std::string(nameOf(m.kvCache));
    e << YAML::EndMap;
}

void emitModel(YAML::Emitter& e, const Model& m) {
    e << YAML::BeginMap;
    e << YAML::Key << "version" << YAML::Value << 1 << YAML::Key << "kind" << YAML::Value << "model";
    e << YAML::Key << "name" << YAML::Value << m.name;
    if (!m.source.empty()) e << YAML::Key << "source" << YAML::Value << m.source;
    if (!m.hubId.empty()) e << YAML::Key << "hub_id" << YAML::Value << m.hubId;
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
    e << YAML::Key << "hbm_gb" << YAML::Value << c.gpu.hbmGB << YAML::Key << "hbm_tb_s" << YAML::Value
      << c.gpu.hbmTBs;
    e << YAML::EndMap;
    e << YAML::Key << "intra_node" << YAML::Value << YAML::BeginMap << YAML::Key << "name" << YAML::Value
      << c.intraNode.name;
    e << YAML::Key << "gb_s_per_gpu" << YAML::Value << c.intraNode.gbPerS;
    e << YAML::Key << "latency_us" << YAML::Value << c.intraNode.latencyUs << YAML::EndMap;
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
    e << YAML::Key << "op_overlap" << YAML::Value << f.opOverlap << YAML::EndMap;
    e << YAML::EndMap;
}

void emitWorkload(YAML::Emitter& e, const Workload& w) {
    static const char* phases[] = {"prefill", "decode", "serving"};
    e << YAML::BeginMap;
    e << YAML::Key << "version" << YAML::Value << 1 << YAML::Key << "kind" << YAML::Value << "workload";
    e << YAML::Key << "name" << YAML::Value << w.name << YAML::Key << "phase" << YAML::Value
      << phases[int(w.phase)];
    e << YAML::Key << "input_tokens" << YAML::Value << w.inputTokens;
    e << YAML::Key << "output_tokens" << YAML::Value << w.outputTokens;
    e << YAML::Key << "slo" << YAML::Value << YAML::BeginMap << YAML::Key << "ttft_ms" << YAML::Value
      << w.ttftMs;
    e << YAML::Key << "tpot_ms" << YAML::Value << w.tpotMs << YAML::EndMap;
    e << YAML::Key << "batch" << YAML::Value << YAML::BeginMap;
    e << YAML::Key << "policy" << YAML::Value << (w.fixedBatch ? "fixed" : "auto");
    if (w.fixedBatch) e << YAML::Key << "size" << YAML::Value << w.batch;
    e << YAML::EndMap;
    if (w.kvReservation == Workload::KvReservation::Worst)
        e << YAML::Key << "kv_reservation" << YAML::Value << "worst";
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
    e << YAML::Key << "memory_headroom" << YAML::Value << c.memoryHeadroom;
    e << YAML::EndMap;
}

std::string emitted(const YAML::Emitter& e) {
    return std::string(e.c_str()) + "\n";
}

/// `dense`: the model has no MoE layers, so the expert degrees, the router and expert operators and the
/// MoE-layer operators are left out (the reader fills them in).
nlohmann::ordered_json planJson(const Plan& p, bool dense = false) {
    nlohmann::ordered_json j;
    j["version"] = 1;
    j["kind"] = "plan";
    auto& d = j["degrees"];
    const int axes = dense ? int(Axis::EP) : kAxisCount;
    for (int a = 0; a < axes; ++a) d[std::string(kAxisNames[a])] = p.degrees.get(Axis(a));
    j["mesh_order"] = nlohmann::ordered_json::array();
    for (Axis a : p.meshOrder) j["mesh_order"].push_back(std::string(kAxisNames[int(a)]));
    auto& o = j["operators"];
    for (int i = 0; i < kBaseOpCount; ++i) {
        const Op op = Op(i);
        if (dense && (op == Op::Router || op == Op::Experts || op == Op::SharedExperts)) continue;
        o[std::string(kOpNames[i])] = std::string(choiceNames(op)[p.choices[i]]);
    }
    if (!dense) {
        auto& mo = j["moe_layer_operators"];
        for (Op op : {Op::MoeNorms, Op::MoeQkv, Op::MoeAttention, Op::MoeOutProj})
            mo[std::string(kOpNames[int(op)])] = std::string(choiceNames(op)[p.choice(op)]);
    }
    if (p.batch > 0) j["batch"] = p.batch;
    if (p.overlap != Overlap::Auto) j["overlap"] = std::string(kOverlapNames[int(p.overlap)]);
    if (p.prefillBudget > 0) j["prefill_budget"] = p.prefillBudget;
    return j;
}

std::string planYaml(const nlohmann::ordered_json& j) {
    // Same content as the JSON form (YAML::Load reads JSON); the nodes come back in flow style, so set block
    // style for the document and the operator maps, and keep the degrees and the mesh order on one line each.
    YAML::Node root = YAML::Load(j.dump());
    root.SetStyle(YAML::EmitterStyle::Block);
    for (auto it : root) {
        YAML::Node v = it.second;
        const bool oneLine = it.first.Scalar() == "degrees" || v.IsSequence();
        v.SetStyle(oneLine ? YAML::EmitterStyle::Flow : YAML::EmitterStyle::Block);
    }
    YAML::Emitter e;
    e << root;
    return emitted(e);
}

} // namespace

const std::vector<std::string_view>& supportedHfArchitectures() {
    return io::hfArchitectures();
}

std::optional<FileKind> fileKindFromName(std::string_view s) {
    for (int i = 0; i < int(kFileKindNames.size()); ++i)
        if (kFileKindNames[i] == s) return FileKind(i);
    return std::nullopt;
}

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
Result<Scenario> parseScenario(const std::string& t, const std::string& f) {
    return parseWith<Scenario>(t, f, readScenario);
}
Result<Plan> parsePlan(const std::string& t, const std::string& f) {
    return parseWith<Plan>(t, f, readPlan);
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
Result<Scenario> loadScenario(const std::string& p) {
    return loadWith<Scenario>(p, readScenario);
}
Result<Plan> loadPlan(const std::string& p) {
    return loadWith<Plan>(p, readPlan);
}
Result<DisaggPlan> parseDisaggPlan(const std::string& t, const std::string& f, const Scenario* s) {
    return parseWith<DisaggPlan>(t, f, [s](const MapReader& r) { return readDisaggPlan(r, s); });
}
Result<DisaggPlan> loadDisaggPlan(const std::string& p, const Scenario* s) {
    return loadWith<DisaggPlan>(p, [s](const MapReader& r) { return readDisaggPlan(r, s); });
}
Result<bool> isDisaggregatedPlan(const std::string& p) {
    return loadWith<bool>(p, [](const MapReader& r) { return r.self().IsMap() && r.has("disaggregated"); });
}

Result<FileKind> detectKind(const std::string& path) {
    return loadWith<FileKind>(path, [](const MapReader& r) -> FileKind {
        if (r.has("kind")) return FileKind(r.oneOf("kind", kindOptions()));
        if (const auto k = kindOfDocument(r.self())) return *k;
        r.failHere(
            "cannot tell what kind of file this is: add 'kind:' (model, cluster, workload, constraints, "
            "scenario or plan)");
    });
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
std::string toYaml(const Scenario& s) {
    YAML::Emitter e;
    e << YAML::BeginMap;
    e << YAML::Key << "version" << YAML::Value << 1 << YAML::Key << "kind" << YAML::Value << "scenario";
    e << YAML::Key << "name" << YAML::Value << s.name;
    e << YAML::Key << "model" << YAML::Value;
    emitModel(e, s.model);
    e << YAML::Key << "cluster" << YAML::Value;
    emitCluster(e, s.cluster);
    e << YAML::Key << "workload" << YAML::Value;
    emitWorkload(e, s.workload);
    e << YAML::Key << "constraints" << YAML::Value;
    emitConstraints(e, s.constraints);
    e << YAML::EndMap;
    return emitted(e);
}
std::string toYaml(const Plan& p) {
    return planYaml(planJson(p));
}
std::string toYaml(const Plan& p, const Model& m) {
    return planYaml(planJson(p, !m.moe.present()));
}
std::string toJson(const Plan& p, const Model& m) {
    return planJson(p, !m.moe.present()).dump(2) + "\n";
}
std::string toJson(const Plan& p) {
    return planJson(p).dump(2) + "\n";
}

namespace {
nlohmann::ordered_json disaggJson(const DisaggPlan& p, bool dense) {
    nlohmann::ordered_json j;
    j["version"] = 1;
    j["kind"] = "plan";
    auto& d = j["disaggregated"];
    for (const auto* pool : {&p.prefill, &p.decode}) {
        nlohmann::ordered_json one = planJson(pool->plan, dense);
        one.erase("version");
        one.erase("kind");
        nlohmann::ordered_json withNodes;
        withNodes["nodes"] = pool->nodes;
        for (auto it = one.begin(); it != one.end(); ++it) withNodes[it.key()] = it.value();
        d[pool == &p.prefill ? "prefill" : "decode"] = withNodes;
    }
    return j;
}
} // namespace

std::string toJson(const DisaggPlan& p, const Model& m) {
    return disaggJson(p, !m.moe.present()).dump(2) + "\n";
}
std::string toYaml(const DisaggPlan& p, const Model& m) {
    YAML::Node root = YAML::Load(disaggJson(p, !m.moe.present()).dump());
    root.SetStyle(YAML::EmitterStyle::Block);
    YAML::Node d = root["disaggregated"];
    d.SetStyle(YAML::EmitterStyle::Block);
    for (auto pool : d) {
        YAML::Node v = pool.second;
        v.SetStyle(YAML::EmitterStyle::Block);
        for (auto it : v) {
            YAML::Node f = it.second;
            const bool oneLine = it.first.Scalar() == "degrees" || f.IsSequence();
            f.SetStyle(oneLine ? YAML::EmitterStyle::Flow : YAML::EmitterStyle::Block);
        }
    }
    YAML::Emitter e;
    e << root;
    return emitted(e);
}

Result<bool> writeFileAtomic(const std::string& path, const std::string& content) {
    namespace fs = std::filesystem;
    const fs::path target(path);
    const fs::path folder = target.parent_path().empty() ? fs::path(".") : target.parent_path();
    // A unique temporary in the target's folder (so the rename stays on one file system), created by mkstemp
    // with O_EXCL: two writers never share one, and a symlink planted at a guessable name is never followed.
    std::string tmpl = (folder / ("." + target.filename().string() + ".XXXXXX")).string();
    const int fd = ::mkstemp(tmpl.data());
    if (fd < 0) {
        const int err = errno; // read before anything else can overwrite it
        return Error{path, 0, 0, {}, "cannot write the file: " + std::string(std::strerror(err))};
    }
    auto failWith = [&](const std::string& what, int err) -> Result<bool> {
        ::close(fd);
        ::unlink(tmpl.c_str());
        return Error{path, 0, 0, {}, what + ": " + std::string(std::strerror(err))};
    };
    // mkstemp makes the file 0600; a plan or launch script is for the user's other tools as well.
    const mode_t mask = ::umask(0);
    ::umask(mask);
    if (::fchmod(fd, 0666 & ~mask) != 0) return failWith("cannot write the file", errno);
    size_t done = 0;
    while (done < content.size()) {
        const ssize_t n = ::write(fd, content.data() + done, content.size() - done);
        if (n < 0) {
            if (errno == EINTR) continue;
            return failWith("writing failed", errno);
        }
        done += size_t(n);
    }
    if (::fsync(fd) != 0) return failWith("writing failed", errno);
    if (::close(fd) != 0) {
        const int err = errno;
        ::unlink(tmpl.c_str());
        return Error{path, 0, 0, {}, "writing failed: " + std::string(std::strerror(err))};
    }
    if (::rename(tmpl.c_str(), path.c_str()) != 0) {
        const int err = errno; // read before unlink can overwrite it
        ::unlink(tmpl.c_str());
        return Error{path, 0, 0, {}, "cannot replace the file: " + std::string(std::strerror(err))};
    }
    return true;
}

std::string formatCount(double n) {
    char buf[32];
    if (n >= 1e12)
        std::snprintf(buf, sizeof buf, "%.2fT", n / 1e12);
    else if (n >= 1e9)
        std::snprintf(buf, sizeof buf, "%.2fB", n / 1e9);
    else if (n >= 1e6)
        std::snprintf(buf, sizeof buf, "%.1fM", n / 1e6);
    else
        std::snprintf(buf, sizeof buf, "%.0f", n);
    return buf;
}

namespace {
std::string modelSummary(const Model& m, FileReport& rep) {
    const ParamCounts p = countParams(m);
    rep.paramsTotal = p.total;
    rep.paramsActive = p.active;
    std::string s =
        m.name + ": " + formatCount(p.total) + " parameters, " + formatCount(p.active) + " active";
    if (m.moe.present())
        s += ", " + std::to_string(m.moe.experts) + " experts top-" + std::to_string(m.moe.topK);
    if (m.mtpLayers > 0) s += ", MTP " + formatCount(p.mtp);
    return s;
}
} // namespace

FileReport validateFile(const std::string& path, std::optional<FileKind> kind) {
    FileReport rep;
    rep.file = path;
    std::error_code ec;
    if (!kind && !std::filesystem::exists(path, ec) && io::looksLikeHubId(path)) kind = FileKind::Model;
    if (!kind) {
        auto k = detectKind(path);
        if (!k) {
            rep.error = k.error();
            return rep;
        }
        kind = *k;
    }
    rep.kind = kind;
    auto finish = [&](const auto& res, auto summarize) {
        if (!res) {
            rep.error = res.error();
            return;
        }
        rep.ok = true;
        rep.summary = summarize(res.value());
    };
    static const char* phases[] = {"prefill", "decode", "serving"};
    switch (*kind) {
    case FileKind::Model:
        finish(loadModel(path), [&](const Model& m) { return modelSummary(m, rep); });
        break;
    case FileKind::Cluster:
        finish(loadCluster(path), [](const Cluster& c) {
            std::string hosts;
            if (c.gpusPerHost > 0)
                hosts = ", " + std::to_string(c.hosts()) + " hosts of " + std::to_string(c.gpusPerHost);
            return c.name + ": " + std::to_string(c.gpus()) + " GPUs (" + std::to_string(c.nodes) + "x" +
                   std::to_string(c.gpusPerNode) + " " + c.gpu.name + hosts + ")";
        });
        break;
    case FileKind::Workload:
        finish(loadWorkload(path), [](const Workload& w) {
            return w.name + ": " + phases[int(w.phase)] + ", " + std::to_string(w.inputTokens) + " in / " +
                   std::to_string(w.outputTokens) + " out";
        });
        break;
    case FileKind::Constraints:
        finish(loadConstraints(path), [](const Constraints& c) {
            int pins = 0;
            for (int i = 0; i < kBaseOpCount; ++i) pins += c.pinned[i] >= 0;
            return std::to_string(pins) + " pinned operators, memory headroom " +
                   std::to_string(int(std::lround(c.memoryHeadroom * 100))) + "%";
        });
        break;
    case FileKind::Scenario:
        finish(loadScenario(path), [&](const Scenario& s) {
            return s.name + ": " + modelSummary(s.model, rep) + "; " + std::to_string(s.gpus()) + " GPUs; " +
                   phases[int(s.workload.phase)];
        });
        break;
    case FileKind::Plan:
        if (auto dis = isDisaggregatedPlan(path); dis && dis.value()) {
            finish(loadDisaggPlan(path), [](const DisaggPlan& p) {
                const auto pool = [](const char* name, const DisaggPool& q) {
                    const auto& d = q.plan.degrees;
                    return std::string(name) + " " + std::to_string(q.nodes) + " nodes (pp" +
                           std::to_string(d.pp) + " x dp" + std::to_string(d.dp) + " x tp" +
                           std::to_string(d.tp) + " = " + std::to_string(int64_t(d.pp) * d.dp * d.tp) +
                           " GPUs)";
                };
                return "disaggregated: " + pool("prefill", p.prefill) + ", " + pool("decode", p.decode);
            });
            break;
        }
        finish(loadPlan(path), [](const Plan& p) {
            const auto& d = p.degrees;
            return "pp" + std::to_string(d.pp) + " x dp" + std::to_string(d.dp) + " x tp" +
                   std::to_string(d.tp) + " (ep" + std::to_string(d.ep) + " etp" + std::to_string(d.etp) +
                   " edp" + std::to_string(d.edp) + ") = " + std::to_string(int64_t(d.pp) * d.dp * d.tp) +
                   " GPUs";
        });
        break;
    }
    return rep;
}

} // namespace sp
