#include "core/io/modelfields.h"

#include <algorithm>

namespace sp::io {

namespace {
constexpr int64_t kMaxTokens = 100'000'000; // as the workload reader bounds lengths
constexpr int64_t kMaxDim = 10'000'000; // as the model and config readers bound sizes
std::vector<std::string_view> dtypeOptions() {
    return {kDtypeNames.begin(), kDtypeNames.end()};
}
} // namespace

void readMlaDims(const MapReader& r, MlaDims& mla) {
    mla.qLoraRank = r.integerOr("q_lora_rank", 0, 0, kMaxDim);
    mla.kvLoraRank = r.integer("kv_lora_rank", 1, kMaxDim);
    mla.qkNopeHeadDim = r.integer("qk_nope_head_dim", 1, 65536);
    mla.qkRopeHeadDim = r.integer("qk_rope_head_dim", 1, 65536);
    mla.vHeadDim = r.integer("v_head_dim", 1, 65536);
}

void readAttentionExtras(const MapReader& at, Attention& a) {
    a.qkNorm = QkNorm(at.oneOfOr("qk_norm", {kQkNormNames.begin(), kQkNormNames.end()}, 0));
    a.outputGate = at.boolean("output_gate", false);
    a.sinks = at.boolean("sinks", false);
    a.rotaryFraction = at.numberOr("rotary_fraction", 1.0, 0.0, 1.0);
    a.slidingWindow = at.integerOr("sliding_window", 0, 0, int64_t(1) << 40);
    a.chunkSize = at.integerOr("chunk_size", 0, 0, int64_t(1) << 40);
    if (at.has("indexer")) {
        const MapReader x = at.map("indexer");
        x.allowKeys({"top_k", "heads", "head_dim"});
        a.indexer.topK = x.integer("top_k", 1, int64_t(1) << 40);
        a.indexer.heads = x.integer("heads", 1, 100000);
        a.indexer.headDim = x.integer("head_dim", 1, 65536);
    }
    if (at.has("linear")) {
        const MapReader l = at.map("linear");
        l.allowKeys({"key_heads", "value_heads", "key_head_dim", "value_head_dim", "conv_kernel"});
        a.linear.keyHeads = l.integer("key_heads", 1, 100000);
        a.linear.valueHeads = l.integer("value_heads", 1, 100000);
        a.linear.keyHeadDim = l.integer("key_head_dim", 1, 65536);
        a.linear.valueHeadDim = l.integer("value_head_dim", 1, 65536);
        a.linear.convKernel = l.integerOr("conv_kernel", 4, 1, 1024);
    }
}

Quantization readQuantization(const MapReader& q) {
    q.allowKeys({"method", "storage", "group_size", "block_size", "per_channel", "scale_bytes",
                 "tensor_scale_bytes", "groups"});
    Quantization z;
    z.method = QuantMethod(q.oneOf("method", {kQuantMethodNames.begin(), kQuantMethodNames.end()}));
    z.storage = static_cast<Dtype>(q.oneOf("storage", dtypeOptions()));
    z.groupSize = q.integerOr("group_size", 0, 0, 1 << 20);
    z.blockSize = q.integerOr("block_size", 0, 0, 1 << 20);
    z.perChannel = q.boolean("per_channel", false);
    z.scaleBytes = q.numberOr("scale_bytes", 0.0, 0.0, 64.0);
    z.tensorScaleBytes = q.numberOr("tensor_scale_bytes", 0.0, 0.0, 1024.0);
    if (z.method != QuantMethod::None && !q.has("groups"))
        q.failAt("method",
                 "give the quantized parameter groups too (groups: [attention, dense_ffn, experts, ...])");
    if (q.has("groups")) {
        const YAML::Node n = q.node("groups");
        if (!n.IsSequence()) q.failAt("groups", "expected a list of parameter groups");
        const std::vector<std::string_view> names{kParamGroupNames.begin(), kParamGroupNames.end()};
        for (size_t i = 0; i < n.size(); ++i) {
            const std::string g = asString(q.file(), n[i], q.field("groups") + "[" + std::to_string(i) + "]");
            const auto it = std::find(names.begin(), names.end(), g);
            if (it == names.end())
                fail(q.file(), n[i], q.field("groups") + "[" + std::to_string(i) + "]",
                     "unknown parameter group '" + g + "'" + didYouMean(g, names));
            z.quantized[size_t(it - names.begin())] = true;
        }
    }
    return z;
}

void emitAttentionExtras(YAML::Emitter& e, const Attention& a) {
    if (a.qkNorm != QkNorm::None)
        e << YAML::Key << "qk_norm" << YAML::Value << std::string(kQkNormNames[int(a.qkNorm)]);
    if (a.outputGate) e << YAML::Key << "output_gate" << YAML::Value << true;
    if (a.sinks) e << YAML::Key << "sinks" << YAML::Value << true;
    if (a.rotaryFraction != 1.0) e << YAML::Key << "rotary_fraction" << YAML::Value << a.rotaryFraction;
    if (a.slidingWindow > 0) e << YAML::Key << "sliding_window" << YAML::Value << a.slidingWindow;
    if (a.chunkSize > 0) e << YAML::Key << "chunk_size" << YAML::Value << a.chunkSize;
    if (a.indexer.present()) {
        e << YAML::Key << "indexer" << YAML::Value << YAML::Flow << YAML::BeginMap;
        e << YAML::Key << "top_k" << YAML::Value << a.indexer.topK << YAML::Key << "heads" << YAML::Value
          << a.indexer.heads << YAML::Key << "head_dim" << YAML::Value << a.indexer.headDim << YAML::EndMap;
    }
    if (a.linear.present()) {
        const auto& l = a.linear;
        e << YAML::Key << "linear" << YAML::Value << YAML::Flow << YAML::BeginMap;
        e << YAML::Key << "key_heads" << YAML::Value << l.keyHeads << YAML::Key << "value_heads"
          << YAML::Value << l.valueHeads << YAML::Key << "key_head_dim" << YAML::Value << l.keyHeadDim
          << YAML::Key << "value_head_dim" << YAML::Value << l.valueHeadDim << YAML::Key << "conv_kernel"
          << YAML::Value << l.convKernel << YAML::EndMap;
    }
}

void emitQuantization(YAML::Emitter& e, const Quantization& q) {
    e << YAML::Key << "quantization" << YAML::Value << YAML::BeginMap;
    e << YAML::Key << "method" << YAML::Value << std::string(kQuantMethodNames[int(q.method)]);
    e << YAML::Key << "storage" << YAML::Value << std::string(nameOf(q.storage));
    if (q.groupSize > 0) e << YAML::Key << "group_size" << YAML::Value << q.groupSize;
    if (q.blockSize > 0) e << YAML::Key << "block_size" << YAML::Value << q.blockSize;
    if (q.perChannel) e << YAML::Key << "per_channel" << YAML::Value << true;
    e << YAML::Key << "scale_bytes" << YAML::Value << q.scaleBytes;
    e << YAML::Key << "tensor_scale_bytes" << YAML::Value << q.tensorScaleBytes;
    e << YAML::Key << "groups" << YAML::Value << YAML::Flow << YAML::BeginSeq;
    for (int g = 0; g < kParamGroupCount; ++g)
        if (q.quantized[g]) e << std::string(kParamGroupNames[g]);
    e << YAML::EndSeq << YAML::EndMap;
}

// ---------------------------------------------------------------- speculative decoding

std::vector<double> readAcceptanceRates(const MapReader& r, std::string_view key) {
    const YAML::Node n = r.node(key);
    const std::string field = r.field(key);
    if (!n.IsSequence() || n.size() == 0)
        fail(r.file(), n, field,
             "expected a list of acceptance rates (a_i: draft token i accepted given the "
             "ones before it were), e.g. [0.8, 0.7, 0.6]");
    if (n.size() > size_t(kMaxDraftTokens))
        fail(r.file(), n, field,
             "at most " + std::to_string(kMaxDraftTokens) + " rates (one per draft token)");
    std::vector<double> out;
    for (size_t i = 0; i < n.size(); ++i) {
        const double a = asNumber(r.file(), n[i], field + "[" + std::to_string(i) + "]", 0.0, 1.0);
        if (a <= 0.0) fail(r.file(), n[i], field + "[" + std::to_string(i) + "]", "must be above 0");
        out.push_back(a);
    }
    return out;
}

namespace {

DraftModule readDraftModule(const MapReader& r, bool eagle) {
    DraftModule d;
    d.hubId = r.stringOr("hub_id", "");
    d.source = r.stringOr("source", "");
    d.layers = r.integer("layers", 1, 1000);
    d.hidden = r.integer("hidden", 1, 1'000'000);
    d.ffn = r.integer("ffn", 1, 10'000'000);
    d.heads = r.integer("heads", 1, 100'000);
    d.kvHeads = r.integerOr("kv_heads", d.heads, 1, 100'000);
    d.headDim = r.integerOr("head_dim", d.hidden / d.heads, 1, 65'536);
    d.vocab = r.integer("vocab", 1, 100'000'000);
    d.fusedStates = eagle ? r.integerOr("fused_states", 3, 1, 64) : 0;
    d.ownEmbedding = !eagle;
    return d;
}

void emitDraftModule(YAML::Emitter& e, const DraftModule& d, bool eagle) {
    if (!d.hubId.empty()) e << YAML::Key << "hub_id" << YAML::Value << d.hubId;
    if (!d.source.empty()) e << YAML::Key << "source" << YAML::Value << d.source;
    e << YAML::Key << "layers" << YAML::Value << d.layers << YAML::Key << "hidden" << YAML::Value << d.hidden;
    e << YAML::Key << "ffn" << YAML::Value << d.ffn << YAML::Key << "heads" << YAML::Value << d.heads;
    e << YAML::Key << "kv_heads" << YAML::Value << d.kvHeads << YAML::Key << "head_dim" << YAML::Value
      << d.headDim;
    e << YAML::Key << "vocab" << YAML::Value << d.vocab;
    if (eagle) e << YAML::Key << "fused_states" << YAML::Value << d.fusedStates;
}

} // namespace

SpecSupport readSpecSupport(const MapReader& r) {
    r.allowKeys({"mtp", "eagle3", "draft", "ngram"});
    SpecSupport s;
    for (int m = 1; m < kSpecMethodCount; ++m) {
        const std::string_view name = kSpecMethodNames[size_t(m)];
        if (!r.has(name)) continue;
        const MapReader x = r.map(name);
        const bool module = SpecMethod(m) == SpecMethod::Eagle3 || SpecMethod(m) == SpecMethod::Draft;
        if (module)
            x.allowKeys({"hub_id", "source", "layers", "hidden", "ffn", "heads", "kv_heads", "head_dim",
                         "vocab", "fused_states", "acceptance_rates", "acceptance_source"});
        else
            x.allowKeys({"acceptance_rates", "acceptance_source"});
        if (SpecMethod(m) == SpecMethod::Eagle3) s.eagle3 = readDraftModule(x, true);
        if (SpecMethod(m) == SpecMethod::Draft) s.draft = readDraftModule(x, false);
        if (x.has("acceptance_rates")) {
            s.acceptance[size_t(m)] = readAcceptanceRates(x, "acceptance_rates");
            // A default is a claim about text the user has not seen: it must say where it comes from.
            if (!x.has("acceptance_source"))
                x.failAt("acceptance_rates", "give acceptance_source: where the default rates were measured");
            s.acceptanceSource[size_t(m)] = x.string("acceptance_source");
        }
    }
    return s;
}

void emitSpecSupport(YAML::Emitter& e, const SpecSupport& s) {
    e << YAML::BeginMap;
    for (int m = 1; m < kSpecMethodCount; ++m) {
        const SpecMethod method = SpecMethod(m);
        const bool module = method == SpecMethod::Eagle3 || method == SpecMethod::Draft;
        const DraftModule& d = method == SpecMethod::Eagle3 ? s.eagle3 : s.draft;
        const auto& rates = s.acceptance[size_t(m)];
        if (!(module && d.present()) && rates.empty()) continue;
        e << YAML::Key << std::string(kSpecMethodNames[size_t(m)]) << YAML::Value << YAML::BeginMap;
        if (module && d.present()) emitDraftModule(e, d, method == SpecMethod::Eagle3);
        if (!rates.empty()) {
            e << YAML::Key << "acceptance_rates" << YAML::Value << YAML::Flow << rates;
            e << YAML::Key << "acceptance_source" << YAML::Value << s.acceptanceSource[size_t(m)];
        }
        e << YAML::EndMap;
    }
    e << YAML::EndMap;
}

Speculative readSpeculative(const MapReader& r) {
    r.allowKeys({"method", "draft_tokens"});
    Speculative s;
    s.method = SpecMethod(
        r.oneOf("method", std::vector<std::string_view>(kSpecMethodNames.begin(), kSpecMethodNames.end())));
    s.draftTokens = s.method == SpecMethod::None ? 0 : int(r.integer("draft_tokens", 1, kMaxDraftTokens));
    if (s.method == SpecMethod::None && r.has("draft_tokens"))
        r.failAt("draft_tokens", "not with method: none");
    return s;
}

// ---------------------------------------------------------------- efficiency factors

Efficiency readEfficiency(const MapReader& e, const Efficiency& d) {
    e.allowKeys({"compute", "compute_fp4", "memory", "intra_node", "inter_node", "launch_us", "grouped_gemm",
                 "overlap", "kv_read", "op_overlap", "fused_moe_memory"});
    Efficiency f = d;
    f.compute = e.numberOr("compute", d.compute, 0.01, 1.0);
    f.computeFp4 = e.numberOr("compute_fp4", d.computeFp4, 0.0, 1.0);
    f.memory = e.numberOr("memory", d.memory, 0.01, 1.0);
    f.intraNode = e.numberOr("intra_node", d.intraNode, 0.01, 1.0);
    f.interNode = e.numberOr("inter_node", d.interNode, 0.01, 1.0);
    f.launchUs = e.numberOr("launch_us", d.launchUs, 0.0, 1e5);
    f.groupedGemm = e.numberOr("grouped_gemm", d.groupedGemm, 0.01, 1.0);
    f.overlap = e.numberOr("overlap", d.overlap, 0.0, 1.0);
    f.kvRead = e.numberOr("kv_read", d.kvRead, 0.01, 1.0);
    f.opOverlap = e.numberOr("op_overlap", d.opOverlap, 0.0, 1.0);
    f.fusedMoeMemory = e.numberOr("fused_moe_memory", d.fusedMoeMemory, 0.0, 1.0);
    return f;
}

/// A length: a whole number of tokens (every request alike), or how the simulation draws it,
/// {distribution: uniform, min, max}, {distribution: lognormal, mean, cv[, min][, max]} or
/// {distribution: histogram, bins: [[lo, hi, weight], ...]}. `tokens` receives the number, or the
/// distribution's mean rounded (what the analytical model prices).
LengthDist readLength(const MapReader& r, std::string_view key, int64_t& tokens) {
    LengthDist d;
    if (!r.node(key).IsMap()) {
        tokens = r.integer(key, 1, kMaxTokens);
        return d;
    }
    const MapReader m = r.map(key);
    d.kind =
        static_cast<LengthDist::Kind>(1 + m.oneOf("distribution", {"uniform", "lognormal", "histogram"}));
    switch (d.kind) {
    case LengthDist::Kind::Uniform:
        m.allowKeys({"distribution", "min", "max"});
        d.min = m.integer("min", 1, kMaxTokens);
        d.max = m.integer("max", 1, kMaxTokens);
        if (d.max < d.min) m.failAt("max", "must be at least min (" + std::to_string(d.min) + ")");
        break;
    case LengthDist::Kind::Lognormal:
        m.allowKeys({"distribution", "mean", "cv", "min", "max"});
        d.mean = m.number("mean", 1.0, double(kMaxTokens));
        d.cv = m.number("cv", 0.0, 100.0);
        d.min = m.integerOr("min", 1, 1, kMaxTokens);
        d.max = m.integerOr("max", 0, 0, kMaxTokens);
        if (d.max > 0 && d.max < d.min)
            m.failAt("max", "must be at least min (" + std::to_string(d.min) + "), or 0 for no limit");
        break;
    case LengthDist::Kind::Histogram: {
        m.allowKeys({"distribution", "bins"});
        const YAML::Node bins = m.node("bins");
        const std::string field = m.field("bins");
        if (!bins.IsSequence() || bins.size() == 0)
            fail(m.file(), bins, field, "expected a list of [lo, hi, weight] bins, e.g. [[1, 512, 0.6]]");
        // Published length histograms have tens to hundreds of bins; past this a file is no histogram.
        constexpr size_t kMaxBins = 10'000;
        if (bins.size() > kMaxBins)
            fail(m.file(), bins, field,
                 std::to_string(bins.size()) + " bins; a histogram has at most " + std::to_string(kMaxBins));
        double total = 0;
        for (size_t i = 0; i < bins.size(); ++i) {
            const std::string f = field + "[" + std::to_string(i) + "]";
            if (!bins[i].IsSequence() || bins[i].size() != 3)
                fail(m.file(), bins[i], f, "expected [lo, hi, weight]: lengths lo to hi, the bin's weight");
            LengthDist::Bin b;
            b.lo = asInteger(m.file(), bins[i][0], f + "[0]", 1, kMaxTokens);
            b.hi = asInteger(m.file(), bins[i][1], f + "[1]", 1, kMaxTokens);
            if (b.hi < b.lo) fail(m.file(), bins[i][1], f + "[1]", "hi must be at least lo");
            b.weight = asNumber(m.file(), bins[i][2], f + "[2]", 0.0, 1e12);
            total += b.weight;
            d.bins.push_back(b);
        }
        if (total <= 0) fail(m.file(), bins, field, "at least one bin needs a weight above 0");
        break;
    }
    case LengthDist::Kind::Fixed:
        break;
    }
    tokens = std::max<int64_t>(1, std::llround(d.expected()));
    return d;
}

void emitLength(YAML::Emitter& e, const LengthDist& d, int64_t tokens) {
    if (d.kind == LengthDist::Kind::Fixed) {
        e << tokens;
        return;
    }
    e << YAML::Flow << YAML::BeginMap;
    e << YAML::Key << "distribution" << YAML::Value << kLengthDistNames[int(d.kind)];
    switch (d.kind) {
    case LengthDist::Kind::Uniform:
        e << YAML::Key << "min" << YAML::Value << d.min << YAML::Key << "max" << YAML::Value << d.max;
        break;
    case LengthDist::Kind::Lognormal:
        e << YAML::Key << "mean" << YAML::Value << d.mean << YAML::Key << "cv" << YAML::Value << d.cv;
        e << YAML::Key << "min" << YAML::Value << d.min;
        if (d.max > 0) e << YAML::Key << "max" << YAML::Value << d.max;
        break;
    case LengthDist::Kind::Histogram:
        e << YAML::Key << "bins" << YAML::Value << YAML::BeginSeq;
        for (const auto& b : d.bins)
            e << YAML::Flow << YAML::BeginSeq << b.lo << b.hi << b.weight << YAML::EndSeq;
        e << YAML::EndSeq;
        break;
    case LengthDist::Kind::Fixed:
        break;
    }
    e << YAML::EndMap;
}

} // namespace sp::io
