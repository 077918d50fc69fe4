// Fleet files: the inventory (GPU database ids, nodes, GPUs a node, prices) and the models with their
// workloads and rates. Models, workloads and constraints are read as a scenario reads its parts.

#include "core/io/fleetfiles.h"

#include "core/io/formatsimpl.h"
#include "core/io/gpudb.h"

#include <map>

namespace sp {

using namespace formats;

namespace {

std::string itemPath(std::string_view list, size_t i) {
    return std::string(list) + "[" + std::to_string(i) + "]";
}

int lineOf(const YAML::Node& n) {
    return n.IsDefined() && n.Mark().line >= 0 ? n.Mark().line + 1 : 0;
}

/// The items of a required, non-empty list of at most `most` entries.
YAML::Node listOf(const MapReader& r, std::string_view key, int most) {
    const YAML::Node n = r.node(key);
    if (!n.IsSequence()) r.failAt(key, "expected a list");
    if (n.size() == 0) r.failAt(key, "the list is empty");
    if (n.size() > size_t(most))
        r.failAt(key, "at most " + std::to_string(most) + " entries, found " + std::to_string(n.size()));
    return n;
}

FleetGpuType readGpuType(const MapReader& g) {
    g.allowKeys({"gpu", "nodes", "gpus_per_node", "price_per_gpu_hour", "price_source"});
    FleetGpuType t;
    t.line = lineOf(g.self());
    t.id = g.string("gpu");
    const GpuSpec* spec = findGpu(t.id);
    if (!spec) g.failAt("gpu", "unknown GPU '" + t.id + "'; known: " + knownGpuIds());
    // A node is a scale-up domain (core/model/cluster.h): a file may count smaller nodes (a 4-GPU host of
    // an 8-GPU board family), never larger ones.
    t.gpusPerNode = int(g.integerOr("gpus_per_node", spec->scaleUpDomain, 1, spec->scaleUpDomain));
    t.nodes = int(g.integer("nodes", 1, kMaxClusterGpus / t.gpusPerNode));
    if (g.has("price_per_gpu_hour")) {
        t.pricePerGpuHour = g.number("price_per_gpu_hour", 0.001, 1e4);
        t.priceSource = g.stringOr("price_source", "the fleet file");
    } else if (g.has("price_source")) {
        g.failAt("price_source", "only with price_per_gpu_hour");
    } else if (spec->pricePerHourUsd > 0) {
        t.pricePerGpuHour = spec->pricePerHourUsd;
        t.priceSource = spec->priceSource;
    } else {
        g.failAt("gpu", "the price list in force (" + priceBasis() + ") has no price for '" + t.id +
                            "': give price_per_gpu_hour (USD per GPU-hour) for it, or --prices FILE");
    }
    return t;
}

FleetModel readFleetModel(const MapReader& m) {
    m.allowKeys({"name", "model", "workload", "constraints", "rate"});
    FleetModel f;
    f.line = lineOf(m.self());
    f.model = readModelPart(m, "model");
    // An inline workload is a serving one unless it says otherwise (the fleet serves requests).
    if (YAML::Node w = m.node("workload"); w.IsMap() && !w["phase"]) w["phase"] = "serving";
    f.workload = readWorkloadPart(m, "workload");
    if (f.workload.phase != Phase::Serving)
        m.failAt("workload", "a fleet serves requests: the workload's phase must be serving");
    if (f.workload.ttftMs <= 0 && f.workload.tpotMs <= 0)
        m.failAt("workload", "the workload sets no SLO: a fleet sizes each model under its TTFT or TPOT SLO "
                             "(slo: {ttft_ms, tpot_ms, percentile})");
    if (m.has("constraints")) {
        f.constraints = readConstraintsPart(m, "constraints");
        if (f.constraints.gpus > 0)
            m.failAt("constraints", "gpus: the fleet chooses each replica's GPUs; leave it out");
        if (f.constraints.specPolicy == Constraints::SpecPolicy::Pinned) {
            Scenario s;
            s.model = f.model, s.workload = f.workload, s.constraints = f.constraints;
            if (auto why = checkSpeculative(s, f.constraints.specPin)) m.failAt("constraints", *why);
        }
    }
    f.rate = m.number("rate", 1e-6, 1e9);
    f.name = m.stringOr("name", f.model.name);
    if (f.name.empty()) m.failAt("name", "a model needs a name (the model file has none)");
    return f;
}

Fleet readFleet(const MapReader& r) {
    checkHeader(r, FileKind::Fleet); // a file of another kind says so before its keys are judged
    r.allowKeys({"version", "kind", "name", "headroom", "inventory", "models"});
    Fleet fleet;
    fleet.name = r.stringOr("name", "");
    fleet.nMinus1 = r.oneOfOr("headroom", {"none", "n-1"}, 0) == 1;
    const YAML::Node inv = listOf(r, "inventory", kMaxFleetGpuTypes);
    std::map<std::string, int> seen;
    int64_t gpus = 0;
    for (size_t i = 0; i < inv.size(); ++i) {
        const MapReader g(r.file(), inv[i], itemPath("inventory", i));
        FleetGpuType t = readGpuType(g);
        if (auto it = seen.find(t.id); it != seen.end())
            g.failAt("gpu", "'" + t.id + "' is listed twice (first at line " + std::to_string(it->second) +
                                "): give its nodes once");
        seen[t.id] = t.line;
        gpus += int64_t(t.nodes) * t.gpusPerNode;
        if (gpus > kMaxClusterGpus)
            g.failAt("nodes", "the inventory passes " + std::to_string(kMaxClusterGpus) + " GPUs");
        fleet.inventory.push_back(std::move(t));
    }
    const YAML::Node models = listOf(r, "models", kMaxFleetModels);
    std::map<std::string, int> names;
    for (size_t i = 0; i < models.size(); ++i) {
        const MapReader m(r.file(), models[i], itemPath("models", i));
        FleetModel f = readFleetModel(m);
        if (auto it = names.find(f.name); it != names.end())
            m.failAt(m.has("name") ? "name" : "model", "a second model named '" + f.name +
                                                           "' (first at line " + std::to_string(it->second) +
                                                           "): give each a distinct name");
        names[f.name] = f.line;
        fleet.models.push_back(std::move(f));
    }
    return fleet;
}

} // namespace

Result<Fleet> parseFleet(const std::string& text, const std::string& file) {
    return parseWith<Fleet>(text, file, readFleet);
}

Result<Fleet> loadFleet(const std::string& path) {
    return loadWith<Fleet>(path, readFleet);
}

std::string toYaml(const Fleet& f) {
    YAML::Emitter e;
    e << YAML::BeginMap;
    e << YAML::Key << "version" << YAML::Value << 1 << YAML::Key << "kind" << YAML::Value << "fleet";
    e << YAML::Key << "name" << YAML::Value << f.name;
    e << YAML::Key << "headroom" << YAML::Value << (f.nMinus1 ? "n-1" : "none");
    e << YAML::Key << "inventory" << YAML::Value << YAML::BeginSeq;
    for (const FleetGpuType& t : f.inventory) {
        const GpuSpec* spec = findGpu(t.id);
        e << YAML::BeginMap << YAML::Key << "gpu" << YAML::Value << t.id;
        e << YAML::Key << "nodes" << YAML::Value << t.nodes;
        if (!spec || t.gpusPerNode != spec->scaleUpDomain)
            e << YAML::Key << "gpus_per_node" << YAML::Value << t.gpusPerNode;
        if (!spec || t.pricePerGpuHour != spec->pricePerHourUsd || t.priceSource != spec->priceSource)
            e << YAML::Key << "price_per_gpu_hour" << YAML::Value << Num{t.pricePerGpuHour} << YAML::Key
              << "price_source" << YAML::Value << t.priceSource;
        e << YAML::EndMap;
    }
    e << YAML::EndSeq;
    e << YAML::Key << "models" << YAML::Value << YAML::BeginSeq;
    for (const FleetModel& m : f.models) {
        e << YAML::BeginMap << YAML::Key << "name" << YAML::Value << m.name;
        e << YAML::Key << "model" << YAML::Value;
        emitModel(e, m.model);
        e << YAML::Key << "workload" << YAML::Value;
        emitWorkload(e, m.workload);
        e << YAML::Key << "constraints" << YAML::Value;
        emitConstraints(e, m.constraints);
        e << YAML::Key << "rate" << YAML::Value << Num{m.rate};
        e << YAML::EndMap;
    }
    e << YAML::EndSeq << YAML::EndMap;
    return emitted(e);
}

} // namespace sp
