// Constraints files: what bounds the search (degrees, pinned operators, the engine's memory rule, the
// granularity, speculative decoding); reading and writing.

#include "core/io/formatsimpl.h"
#include "core/io/modelfields.h"

namespace sp::formats {

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
    c.memoryFraction = r.numberOr("memory_fraction", 0.0, kMinMemoryFraction, 1.0);
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

} // namespace sp::formats
