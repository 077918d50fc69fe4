#include "core/sim/servingchecks.h"

#include "core/io/formatsimpl.h"
#include "core/io/gpudb.h"
#include "core/model/quant.h"
#include "core/sim/simulator.h"

#include <algorithm>
#include <cmath>

namespace sp {

namespace {

constexpr const char* kFigures[] = {"ttft_mean_ms", "ttft_p99_ms", "tpot_mean_ms", "tpot_p99_ms",
                                    "output_tokens_per_s"};

ServingCheck readCheck(const io::MapReader& e, const std::string& samples) {
    e.allowKeys({"id", "source", "model", "precision", "kv_cache", "cluster", "gpu", "nodes", "engine",
                 "capacity_policy", "memory_fraction", "plan", "rate", "workload", "measured",
                 "offline_tokens_per_s"});
    ServingCheck c;
    c.id = e.string("id");
    c.source = e.string("source");
    auto model = loadModel(samples + "/models/" + e.string("model") + ".yaml");
    if (!model) throw InputError(model.error());
    Model m = model.value();
    // As the calibration rows read them (core/cost/calibration.cpp): FP8 weights and KV, or NVIDIA's NVFP4
    // checkpoints; the KV cache where the source states it.
    const int precision = e.oneOfOr("precision", {"bf16", "fp8", "nvfp4"}, 0);
    if (precision == 1) m.weights = Dtype::FP8, m.kvCache = Dtype::FP8;
    if (precision == 2) m.quant = nvfp4Quant();
    if (e.has("kv_cache")) m.kvCache = e.oneOf("kv_cache", {"bf16", "fp8"}) == 1 ? Dtype::FP8 : Dtype::BF16;
    // A sample cluster by name, or nodes of a GPU of the database (its links, factors, power and price).
    Scenario s;
    s.name = c.id;
    s.model = m;
    if (e.has("cluster")) {
        auto cluster = loadCluster(samples + "/clusters/" + e.string("cluster") + ".yaml");
        if (!cluster) throw InputError(cluster.error());
        s.cluster = cluster.value();
    } else {
        const GpuSpec* g = findGpu(e.string("gpu"));
        if (!g) e.failAt("gpu", "unknown GPU; known: " + knownGpuIds());
        s.cluster = clusterOf(*g, int(e.integer("nodes", 1, 100000)));
    }
    s.workload = formats::readWorkload(e.map("workload"));
    s.constraints.memoryRule = MemoryRule(
        e.oneOf("engine", std::vector<std::string_view>(kMemoryRuleNames.begin(), kMemoryRuleNames.end())));
    if (e.has("capacity_policy")) {
        if (s.constraints.memoryRule != MemoryRule::Trtllm)
            e.failAt("capacity_policy", "a TensorRT-LLM setting: only with engine: trtllm");
        c.trtllmCapacity = e.oneOf("capacity_policy", {"guaranteed_no_evict", "max_utilization"}) == 1
                               ? SimOptions::TrtllmCapacity::MaxUtilization
                               : SimOptions::TrtllmCapacity::GuaranteedNoEvict;
    }
    const io::MapReader p = e.map("plan");
    p.allowKeys({"tp", "pp", "dp", "batch", "prefill_budget"});
    Degrees d;
    d.tp = int(p.integer("tp", 1, 100000));
    d.pp = int(p.integerOr("pp", 1, 1, 100000));
    d.dp = int(p.integer("dp", 1, 100000));
    if (d.tp * d.pp * d.dp != s.cluster.gpus())
        p.failHere("tp x pp x dp must be the cluster's " + std::to_string(s.cluster.gpus()) + " GPUs");
    // The engine's layout: tensor parallelism ending each block in an all-reduce, no sequence parallelism.
    c.plan = Plan::engineChoices(d);
    c.plan.degrees.ep = d.dp * d.tp; // dense models: the expert axes span the stage
    c.plan.batch = p.integerOr("batch", 0, 0, 10'000'000);
    c.plan.prefillBudget = p.integerOr("prefill_budget", 0, 0, 100'000'000);
    // The engine's memory fraction where the run's config sets it (TensorRT-LLM's kvcache_free_gpu_mem_frac,
    // vLLM's gpu_memory_utilization, SGLang's mem_fraction_static); else the engine's default for the plan.
    s.constraints.memoryFraction = e.numberOr("memory_fraction", 0.0, kMinMemoryFraction, 1.0);
    const CostModel cm(s);
    if (auto why = cm.checkPlan(c.plan)) p.failHere("the plan does not fit: " + *why);
    c.scenario = std::move(s);
    c.rate = e.number("rate", 1e-6, 1e9);
    c.offlineTokensPerS = e.numberOr("offline_tokens_per_s", 0.0, 1e-6, 1e12);
    const io::MapReader mm = e.map("measured");
    mm.allowKeys({kFigures[0], kFigures[1], kFigures[2], kFigures[3], kFigures[4]});
    for (const char* f : kFigures)
        if (mm.has(f)) c.measured.emplace_back(f, mm.number(f, 1e-9, 1e12));
    if (c.measured.empty()) mm.failHere("no measured figures");
    return c;
}

} // namespace

Result<std::vector<ServingCheck>> loadServingChecks(const std::string& path, const std::string& samplesDir) {
    try {
        const io::MapReader root(path, io::parseDocument(io::readFile(path), path), "");
        root.allowKeys({"version", "checks"});
        const YAML::Node list = root.node("checks");
        if (!list.IsSequence()) root.failAt("checks", "expected a list of checks");
        std::vector<ServingCheck> out;
        for (size_t i = 0; i < list.size(); ++i)
            out.push_back(
                readCheck(io::MapReader(path, list[i], "checks[" + std::to_string(i) + "]"), samplesDir));
        return out;
    } catch (const InputError& e) {
        return e.error();
    } catch (const YAML::Exception& e) {
        return Error{path, e.mark.line + 1, e.mark.column + 1, {}, e.msg};
    }
}

double servingCapacity(const ServingCheck& c) {
    // The simulator's cap: the plan's batch, or where it states none the batch the cost model chooses for it
    // (buildLanes).
    const int64_t cap = c.plan.batch > 0 ? c.plan.batch : CostModel(c.scenario).evaluate(c.plan).batch;
    Scenario s = c.scenario;
    s.workload.ttftMs = s.workload.tpotMs = 0;
    const CostModel model(s);
    Plan p = c.plan;
    p.batch = 0; // the largest batch the budget and memory allow
    Metrics m = model.evaluate(p);
    if (m.batch > cap) {
        p.batch = cap; // the cap binds
        m = model.evaluate(p);
    }
    return m.throughput;
}

ServingCheckReport runServingChecks(const std::vector<ServingCheck>& checks, int64_t requests, uint64_t seed,
                                    double durationS, std::stop_token stop) {
    ServingCheckReport rep;
    std::vector<double> errors;
    std::vector<GroupedError> grouped;
    auto figure = [](const SimResult& r, const std::string& name) {
        if (name == "ttft_mean_ms") return r.ttftMs.mean;
        if (name == "ttft_p99_ms") return r.ttftMs.p99;
        if (name == "tpot_mean_ms") return r.tpotMs.mean;
        if (name == "tpot_p99_ms") return r.tpotMs.p99;
        if (name == "output_tokens_per_s") return r.sustainedOutputTokensPerS;
        return 0.0;
    };
    for (const ServingCheck& c : checks) {
        if (stop.stop_requested()) break;
        SimOptions o;
        o.rate = c.rate;
        o.requests = std::max(requests, int64_t(std::ceil(c.rate * durationS)));
        o.seed = seed;
        o.trtllmCapacity = c.trtllmCapacity;
        const CostModel model(c.scenario);
        const auto r = simulate(model, c.plan, o, {}, stop);
        if (stop.stop_requested()) break; // a simulation cut short is no figure
        ServingCheckReport::Load load{c.id, servingCapacity(c), 0.0};
        for (const auto& [name, measured] : c.measured)
            if (name == "output_tokens_per_s") load.measuredTokensPerS = measured;
        for (const auto& [name, measured] : c.measured) {
            const double v = figure(*r, name);
            ServingCheckRow row{
                c.id, name, measured, v, v / measured - 1.0, gpuFamilyOf(c.scenario), engineOf(c.scenario)};
            errors.push_back(std::abs(row.error));
            grouped.push_back({row.family, row.engine, row.error});
            rep.rows.push_back(row);
        }
        if (c.offlineTokensPerS > 0 && load.measuredTokensPerS > 0 && load.analyticalTokensPerS > 0) {
            // The real run's load, carried on the model's capacity: the same output rate share of each, so
            // the requests/s scale with the capacities' ratio.
            ServingCheckReport::Matched m;
            m.id = c.id;
            m.load = load.measuredTokensPerS / c.offlineTokensPerS;
            m.rate = c.rate * load.analyticalTokensPerS / c.offlineTokensPerS;
            SimOptions om = o;
            om.rate = m.rate;
            om.requests = std::max(requests, int64_t(std::ceil(m.rate * durationS)));
            const auto rm = simulate(model, c.plan, om, {}, stop);
            if (stop.stop_requested()) break;
            for (const auto& [name, measured] : c.measured) {
                if (name == "output_tokens_per_s") continue;
                const double v = figure(*rm, name);
                m.rows.push_back({c.id, name, measured, v, v / measured - 1.0, gpuFamilyOf(c.scenario),
                                  engineOf(c.scenario)});
            }
            rep.matched.push_back(std::move(m));
        }
        rep.loads.push_back(load);
    }
    rep.interrupted = stop.stop_requested();
    rep.groups = groupErrors(grouped);
    if (!errors.empty()) {
        std::sort(errors.begin(), errors.end());
        const size_t n = errors.size();
        rep.medianAbsError = n % 2 ? errors[n / 2] : (errors[n / 2 - 1] + errors[n / 2]) / 2.0;
    }
    return rep;
}

} // namespace sp
