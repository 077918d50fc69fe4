// Plan files (YAML or JSON) and disaggregated plans (a prefill and a decode pool): reading and writing.

#include "core/io/formatsimpl.h"
#include "core/io/modelfields.h"

#include <nlohmann/json.hpp>

#include <array>

namespace sp {

using namespace formats;

namespace {

Plan readPlanFields(const MapReader& r);

Plan readPlan(const MapReader& r) {
    checkHeader(r, FileKind::Plan);
    if (r.has("disaggregated"))
        r.failAt("disaggregated",
                 "a disaggregated plan (a prefill and a decode pool) where a single plan was "
                 "expected");
    r.allowKeys({"version", "kind", "degrees", "mesh_order", "operators", "moe_layer_operators", "batch",
                 "overlap", "prefill_budget", "stage_layers", "layer_groups", "speculative"});
    return readPlanFields(r);
}

/// A disaggregated plan: `disaggregated: {prefill: {nodes: N, <plan fields>}, decode: {...}}`. With a
/// scenario, the pools must add up to its nodes (with a decode_cluster: each fit its own cluster) and each
/// plan must use its pool's GPUs.
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
                      "overlap", "prefill_budget", "stage_layers", "layer_groups", "speculative"});
        DisaggPool& pool = i == 0 ? out.prefill : out.decode;
        pool.nodes = int(pr.integer("nodes", 1, 1'000'000));
        pool.plan = readPlanFields(pr);
    }
    if (!s) return out;
    const int total = out.prefill.nodes + out.decode.nodes;
    const Cluster& dc = s->decodeCluster ? *s->decodeCluster : s->cluster;
    if (s->decodeCluster) {
        // Two clusters: each pool takes some of its own cluster's nodes.
        if (out.prefill.nodes > s->cluster.nodes)
            pools[0].failAt("nodes", "the prefill pool's " + std::to_string(out.prefill.nodes) +
                                         " nodes exceed its cluster's " + std::to_string(s->cluster.nodes));
        if (out.decode.nodes > dc.nodes)
            pools[1].failAt("nodes", "the decode pool's " + std::to_string(out.decode.nodes) +
                                         " nodes exceed the decode cluster's " + std::to_string(dc.nodes));
    } else if (total != s->cluster.nodes) {
        pools[1].failAt("nodes", "prefill " + std::to_string(out.prefill.nodes) + " + decode " +
                                     std::to_string(out.decode.nodes) + " nodes = " + std::to_string(total) +
                                     ", but the cluster has " + std::to_string(s->cluster.nodes));
    }
    for (int i = 0; i < 2; ++i) {
        const DisaggPool& pool = i == 0 ? out.prefill : out.decode;
        const int perNode = i == 0 ? s->cluster.gpusPerNode : dc.gpusPerNode;
        const int64_t gpus = int64_t(pool.nodes) * perNode;
        const Degrees& g = pool.plan.degrees;
        if (int64_t(g.pp) * g.dp * g.tp != gpus)
            pools[size_t(i)].failAt("degrees", "pp*dp*tp = " + std::to_string(int64_t(g.pp) * g.dp * g.tp) +
                                                   " does not match the " + names[size_t(i)] + " pool's " +
                                                   std::to_string(pool.nodes) + " nodes x " +
                                                   std::to_string(perNode) +
                                                   " GPUs = " + std::to_string(gpus));
    }
    return out;
}

/// One `operators` / `moe_layer_operators` pair onto `choices`. At the top level an `operators` entry sets
/// the MoE layers' operator too (moe_layer_operators overrides it); in a layer group (`inGroup`) each entry
/// sets only the operator it names, and the whole-model operators (not isLayerOp) are refused.
void readOperatorMaps(const MapReader& r, std::array<int8_t, kOpCount>& choices, bool inGroup) {
    if (r.has("operators")) {
        const MapReader o = r.map("operators");
        o.allowKeys({"embedding", "norms", "qkv", "attention", "out_proj", "ffn_up", "ffn_down", "router",
                     "experts", "shared_experts", "lm_head"});
        for (int i = 0; i < kBaseOpCount; ++i) {
            if (!o.has(kOpNames[i])) continue;
            if (inGroup && !isLayerOp(Op(i)))
                o.failAt(kOpNames[i], std::string(kOpNames[i]) +
                                          " is chosen once for the whole model: give it in the top-level "
                                          "operators, not in a layer group");
            choices[i] = int8_t(o.oneOf(kOpNames[i], choiceNames(Op(i))));
        }
    }
    if (!inGroup)
        for (Op moeOp : {Op::MoeNorms, Op::MoeQkv, Op::MoeAttention, Op::MoeOutProj})
            choices[int(moeOp)] = choices[int(baseOp(moeOp))];
    if (r.has("moe_layer_operators")) {
        const MapReader o = r.map("moe_layer_operators");
        o.allowKeys({"norms", "qkv", "attention", "out_proj"});
        for (Op moeOp : {Op::MoeNorms, Op::MoeQkv, Op::MoeAttention, Op::MoeOutProj})
            if (o.has(kOpNames[int(moeOp)]))
                choices[int(moeOp)] = int8_t(o.oneOf(kOpNames[int(moeOp)], choiceNames(moeOp)));
    }
}

/// `layer_groups: [{layers: N, operators: {...}, moe_layer_operators: {...}}, ...]`: runs of consecutive
/// layers, first to last, each starting from the top-level choices and overriding the operators it names.
/// Whether the layers add up to the model's is checked against the scenario (CostModel::checkPlan).
void readLayerGroups(const MapReader& r, Plan& p) {
    const YAML::Node n = r.node("layer_groups");
    if (!n.IsSequence())
        r.failAt("layer_groups", "expected a list of runs of layers ({layers: N, operators: {...}})");
    if (n.size() > size_t(kMaxLayerGroups))
        r.failAt("layer_groups", std::to_string(n.size()) + " layer groups listed, at most " +
                                     std::to_string(kMaxLayerGroups) + " are allowed");
    for (size_t i = 0; i < n.size(); ++i) {
        const MapReader g(r.file(), n[i], r.field("layer_groups") + "[" + std::to_string(i) + "]");
        g.allowKeys({"layers", "operators", "moe_layer_operators"});
        LayerGroup lg;
        const int64_t layers = g.integer("layers", -kMaxLayers, kMaxLayers);
        if (layers < 1)
            g.failAt("layers", "a layer group holds at least 1 layer, found " + std::to_string(layers));
        lg.layers = int(layers);
        lg.choices = p.choices;
        readOperatorMaps(g, lg.choices, true);
        p.layerGroups.push_back(lg);
    }
    // The first group's own operators become the plan's (normalizeLayerGroups), as the file's reader expects.
    normalizeLayerGroups(p);
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
    readOperatorMaps(r, p.choices, false);
    p.batch = r.integerOr("batch", 0, 0, 10'000'000);
    p.overlap = static_cast<Overlap>(
        r.oneOfOr("overlap", std::vector<std::string_view>(kOverlapNames.begin(), kOverlapNames.end()), 0));
    p.prefillBudget = r.integerOr("prefill_budget", 0, 0, 100'000'000);
    if (r.has("stage_layers")) {
        // Layers per pipeline stage, first to last; whether they add up to the model's layers is checked
        // against the scenario (CostModel::checkPlan).
        for (int64_t n : r.integerList("stage_layers", 1, 1'000'000)) p.stageLayers.push_back(int(n));
        if (int(p.stageLayers.size()) != p.degrees.pp)
            r.failAt("stage_layers", std::to_string(p.stageLayers.size()) + " stages listed for pp " +
                                         std::to_string(p.degrees.pp));
    }
    if (r.has("layer_groups")) readLayerGroups(r, p);
    // Whether the model and workload can run it is checked against the scenario (CostModel::checkPlan).
    if (r.has("speculative")) p.spec = io::readSpeculative(r.map("speculative"));
    return p;
}

/// Whether a plan file for a dense model (`dense`) names the operator: not the MoE layers' ones.
bool writtenOp(Op op, bool dense) {
    return !dense ||
           (op != Op::Router && op != Op::Experts && op != Op::SharedExperts && int(op) < kBaseOpCount);
}

/// The groups as the reader takes them: the first with its layers only (its choices are the top-level ones),
/// each later one with the operators whose choice differs from the first group's.
nlohmann::ordered_json layerGroupsJson(const Plan& p, bool dense) {
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    for (size_t g = 0; g < p.layerGroups.size(); ++g) {
        const LayerGroup& lg = p.layerGroups[g];
        nlohmann::ordered_json j;
        j["layers"] = lg.layers;
        nlohmann::ordered_json ops = nlohmann::ordered_json::object(), moe = nlohmann::ordered_json::object();
        for (int i = 0; g > 0 && i < kOpCount; ++i) {
            const Op op = Op(i);
            if (!isLayerOp(op) || !writtenOp(op, dense) || lg.choices[size_t(i)] == p.choices[size_t(i)])
                continue;
            (i < kBaseOpCount ? ops : moe)[std::string(kOpNames[size_t(i)])] =
                std::string(choiceNames(op)[size_t(lg.choices[size_t(i)])]);
        }
        if (!ops.empty()) j["operators"] = ops;
        if (!moe.empty()) j["moe_layer_operators"] = moe;
        list.push_back(j);
    }
    return list;
}

/// `dense`: the model has no MoE layers, so the expert degrees, the router and expert operators and the
/// MoE-layer operators are left out (the reader fills them in).
nlohmann::ordered_json planJson(const Plan& plan, bool dense = false) {
    // Layer groups are written in their one form, so the first group's choices are the top-level ones.
    Plan normalized;
    if (!plan.layerGroups.empty()) {
        normalized = plan;
        normalizeLayerGroups(normalized);
    }
    const Plan& p = plan.layerGroups.empty() ? plan : normalized;
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
    if (!p.stageLayers.empty()) j["stage_layers"] = p.stageLayers;
    if (!p.layerGroups.empty()) j["layer_groups"] = layerGroupsJson(p, dense);
    if (p.spec.on())
        j["speculative"] = {{"method", std::string(nameOf(p.spec.method))},
                            {"draft_tokens", p.spec.draftTokens}};
    return j;
}

/// Degrees and lists on one line each; the layer groups one group a line; the operator maps in block style.
void setPlanFieldStyle(const std::string& key, YAML::Node v) {
    if (key == "layer_groups") {
        v.SetStyle(YAML::EmitterStyle::Block);
        for (YAML::Node g : v) g.SetStyle(YAML::EmitterStyle::Flow);
        return;
    }
    const bool oneLine = key == "degrees" || v.IsSequence();
    v.SetStyle(oneLine ? YAML::EmitterStyle::Flow : YAML::EmitterStyle::Block);
}

std::string planYaml(const nlohmann::ordered_json& j) {
    // Same content as the JSON form (YAML::Load reads JSON); the nodes come back in flow style, so set block
    // style for the document and the operator maps, and keep the degrees and the mesh order on one line each.
    YAML::Node root = YAML::Load(j.dump());
    root.SetStyle(YAML::EmitterStyle::Block);
    for (auto it : root) setPlanFieldStyle(it.first.Scalar(), it.second);
    YAML::Emitter e;
    e << root;
    return emitted(e);
}

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

Result<Plan> parsePlan(const std::string& t, const std::string& f) {
    return parseWith<Plan>(t, f, readPlan);
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
        for (auto it : v) setPlanFieldStyle(it.first.Scalar(), it.second);
    }
    YAML::Emitter e;
    e << root;
    return emitted(e);
}

} // namespace sp
