#include "core/cost/calibration.h"
#include "core/io/gpudb.h"

#include "core/cost/costmodel.h"
#include "core/io/formats.h"
#include "core/io/reader.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <tuple>

namespace sp {

namespace {

// How each measurement's fields map onto a scenario and a plan:
//  - model: samples/models/<model>.yaml; precision fp8 sets FP8 weights (FP8 GEMMs) and an FP8 KV cache, as
//  the
//    MLPerf and TensorRT-LLM FP8 configurations use; DeepSeek keeps its file's dtypes (FP8 weights, BF16
//    latent).
//  - precision: bf16 (default), fp8, or nvfp4 (ModelOpt FP4 checkpoints: NVFP4 linear weights); kv_cache
//    (bf16 or fp8) where the source states it.
//  - gpu: the H100, H200, B200 or GB200 sample cluster, or the H800 file beside the measurements, with the
//    node count set.
//  - plan: tp, pp, dp as given (a missing one takes what is left of the GPUs); with ep given, experts are
//  expert-
//    parallel over ep with the rest as replicas; without it, each replica shards its experts over its tp GPUs
//    (TensorRT-LLM's default MoE tensor parallelism). With tp 1 and dp > 1 on an MoE model the attention is
//    data-parallel, as in the DP-attention deployments.
//  - prefill_budget: the engine's tokens per step when stated (else the default budget).
//  - overlap: auto, off (default) or two-batch, as the source ran it.
//  - batch: fixed when given (per replica), else chosen by the model; SLOs when given, else none (max
//  throughput).
Result<CalibrationCase> buildCase(const io::MapReader& e, const std::string& samples,
                                  const std::string& here) {
    CalibrationCase row;
    row.id = e.string("id");
    row.source = publicationOf(e.stringOr("source", ""));
    row.metric = e.string("metric");
    row.measured = e.number("value", 1e-9, 1e12);
    static const std::vector<std::string_view> kMetrics{"output_tokens_per_s", "input_tokens_per_s",
                                                        "total_tokens_per_s", "ttft_ms", "tpot_ms"};
    e.oneOf("metric", kMetrics);
    const std::string modelName = e.string("model");
    auto model = loadModel(samples + "/models/" + modelName + ".yaml");
    if (!model) return model.error();
    Model m = model.value();
    // An unknown precision is an error, never read as the model file's dtypes.
    const int precision = e.oneOfOr("precision", {"bf16", "fp8", "nvfp4"}, 0);
    if (precision == 1 && m.attention.type != AttentionType::MLA)
        m.weights = Dtype::FP8, m.kvCache = Dtype::FP8;
    // NVIDIA's ModelOpt FP4 checkpoints, which TensorRT-LLM's Blackwell tables run (e.g.
    // nvidia/Llama-3.1-405B-Instruct-FP4, whose card says "only the weights and activations of the linear
    // operators within transformers blocks are quantized"): NVFP4 attention and FFN weights, the head,
    // embedding and router in the compute dtype, as core/io/hfconfig.cpp reads such a checkpoint.
    if (precision == 2) m.quant = nvfp4Quant();
    // The KV cache where the source states it (an FP8 KV cache is a separate choice of the checkpoint or
    // the engine); else the precision's default above.
    if (e.has("kv_cache")) m.kvCache = e.oneOf("kv_cache", {"bf16", "fp8"}) == 1 ? Dtype::FP8 : Dtype::BF16;
    // The sample cluster of each GPU (its figures, its fitted factors), with the row's node count; a GPU with
    // none is a row the model cannot predict (skipped and listed), not an error in the file.
    struct Known {
        std::string_view gpu;
        std::string file;
    };
    const Known known[] = {{"h100-sxm", samples + "/clusters/h100-4x8.yaml"},
                           {"h200-sxm", samples + "/clusters/h200-16x8.yaml"},
                           {"h800", here + "/clusters/h800-1x8.yaml"},
                           {"b200", samples + "/clusters/b200-1x8.yaml"},
                           {"gb200", samples + "/clusters/gb200-nvl72-x2.yaml"}};
    const std::string gpu = e.string("gpu");
    std::string clusterFile, names;
    for (const Known& k : known) {
        if (k.gpu == gpu) clusterFile = k.file;
        names += (names.empty() ? "" : ", ") + std::string(k.gpu);
    }
    // Any other GPU of the database: a cluster of it, with the database's links and factors.
    const bool fromDatabase = clusterFile.empty() && findGpu(gpu);
    if (clusterFile.empty() && !fromDatabase)
        return Error{e.file(), 0, 0, row.id,
                     "no cluster for GPU '" + gpu + "' (known: " + names +
                         ", or a GPU database id: " + knownGpuIds() + ")"};
    auto cluster = fromDatabase ? parseCluster("version: 1\nkind: cluster\nnodes: 1\ngpu: " + gpu + "\n", gpu)
                                : loadCluster(clusterFile);
    if (!cluster) return cluster.error();
    Cluster c = cluster.value();
    c.nodes = int(e.integer("nodes", 1, 100000));
    c.gpusPerNode = int(e.integer("gpus_per_node", 1, 1024));
    if (fromDatabase && c.interNode.gbPerS <= 0)
        c.interNode = {"NIC", findGpu(gpu)->nicGbitPerGpu / 8.0, 6.0};
    if (c.interNode.gbPerS <= 0) c.interNode = {"InfiniBand NDR", 50.0, 6.0}; // 400 Gb/s per GPU
    Workload w;
    w.phase = static_cast<Phase>(e.oneOf("phase", {"prefill", "decode", "serving"}));
    // TensorRT-LLM's default capacity scheduler (GUARANTEED_NO_EVICT) admits a request only with KV
    // blocks for its whole input + output (TensorRT-LLM docs, "KV cache reuse"/scheduler policy:
    // CapacitySchedulerPolicy.GUARANTEED_NO_EVICT is the default); vLLM and SGLang page optimistically.
    const std::string src = e.stringOr("source", "");
    const bool trtllm =
        src.find("TensorRT-LLM") != std::string::npos || src.find("mlcommons") != std::string::npos ||
        src.find("/closed/NVIDIA/") != std::string::npos; // NVIDIA's MLPerf harness, wherever mirrored
    if (trtllm) w.kvReservation = Workload::KvReservation::Worst;
    if (!e.has("input_tokens")) return Error{e.file(), 0, 0, row.id, "input length not stated"};
    w.inputTokens = e.integer("input_tokens", 1, 10'000'000);
    w.outputTokens = e.has("output_tokens") ? e.integer("output_tokens", 1, 10'000'000) : 1;
    if (w.phase == Phase::Serving && !e.has("output_tokens"))
        return Error{e.file(), 0, 0, row.id, "output length not stated"};
    if (e.has("slo") && row.metric != "ttft_ms" && row.metric != "tpot_ms") {
        const io::MapReader slo = e.map("slo");
        w.ttftMs = slo.numberOr("ttft_ms", 0, 0, 1e9);
        w.tpotMs = slo.numberOr("tpot_ms", 0, 0, 1e9);
    }
    Scenario s;
    s.name = row.id;
    s.model = m;
    s.cluster = c;
    s.workload = w;
    // The KV pool by the rule of the engine that ran it: `engine` where the row says, else TensorRT-LLM for
    // its own documents and NVIDIA's MLPerf harness, SGLang for its blog's runs, vLLM otherwise.
    const bool sglang = src.find("lmsys.org") != std::string::npos || src.find("sglang") != std::string::npos;
    s.constraints.memoryRule = trtllm ? MemoryRule::Trtllm : sglang ? MemoryRule::Sglang : MemoryRule::Vllm;
    if (e.has("engine"))
        s.constraints.memoryRule = MemoryRule(e.oneOf(
            "engine", std::vector<std::string_view>(kMemoryRuleNames.begin(), kMemoryRuleNames.end())));
    // The engine's memory fraction where the run's config states it (TensorRT-LLM's
    // kvcache_free_gpu_mem_frac, vLLM's gpu_memory_utilization, SGLang's mem_fraction_static); else the
    // engine's default for the plan.
    s.constraints.memoryFraction = e.numberOr("memory_fraction", 0.0, kMinMemoryFraction, 1.0);
    const int G = c.gpus();
    const io::MapReader p = e.map("plan");
    Degrees d;
    d.tp = int(p.integerOr("tp", 0, 0, 100000));
    d.pp = int(p.integerOr("pp", 1, 1, 100000));
    d.dp = int(p.integerOr("dp", 0, 0, 100000));
    if (d.tp == 0) d.tp = d.dp > 0 ? G / (d.dp * d.pp) : G / d.pp;
    if (d.dp == 0) d.dp = G / (d.tp * d.pp);
    // The engines' layout: tensor parallelism without Megatron's sequence parallelism, the residual whole on
    // every GPU and each block ending in an all-reduce (vLLM's RowParallelLinear, TensorRT-LLM's AllReduce
    // with the fused norm), not a reduce-scatter and an all-gather.
    Plan plan = Plan::engineChoices(d);
    if (m.moe.present()) {
        if (p.has("ep")) {
            plan.degrees.ep = int(p.integer("ep", 1, 100000));
            plan.degrees.etp = 1;
            plan.degrees.edp = d.dp * d.tp / plan.degrees.ep;
        } else {
            plan.degrees.ep = 1, plan.degrees.etp = d.tp, plan.degrees.edp = d.dp;
        }
    } else {
        plan.degrees.ep = d.dp * d.tp;
    }
    if (e.has("batch")) plan.batch = e.integer("batch", 1, 10'000'000);
    // Two-batch overlap only where the source says the engine ran it (SGLang's and DeepSeek's EP
    // deployments); TensorRT-LLM's TP runs of the perf overview do not split the batch.
    plan.overlap = static_cast<Overlap>(
        e.oneOfOr("overlap", std::vector<std::string_view>(kOverlapNames.begin(), kOverlapNames.end()), 1));
    // The engine's token budget per step where the source states it or the harness derives it
    // (trtllm-bench's max_num_tokens, see tests/data/calibration/README.md).
    plan.prefillBudget = e.integerOr("prefill_budget", 0, 0, 100'000'000);
    const CostModel cm(s);
    if (auto why = cm.checkPlan(plan)) return Error{e.file(), 0, 0, row.id, "plan: " + *why};
    row.scenario = std::move(s);
    row.plan = plan;
    return row;
}

double median(std::vector<double> v) {
    if (v.empty()) return 0.0;
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
}

} // namespace

CalibrationRow predictCase(const CalibrationCase& c) {
    CalibrationRow row;
    row.id = c.id;
    row.metric = c.metric;
    row.measured = c.measured;
    const Workload& w = c.scenario.workload;
    const Metrics r = CostModel(c.scenario).evaluate(c.plan);
    row.feasible = r.feasible;
    if (c.metric == "output_tokens_per_s" || c.metric == "input_tokens_per_s")
        row.predicted = r.throughput;
    else if (c.metric == "total_tokens_per_s")
        row.predicted = r.throughput * double(w.inputTokens + w.outputTokens) / double(w.outputTokens);
    else {
        // A lightly loaded server: the prefill of one prompt (TTFT), or a decode step at batch 1 (TPOT),
        // unless the case fixes the batch. A serving case with its batch (the sequences in flight) is taken
        // as served: TTFT is the step in flight and the prompt's chunk steps beside the decode tokens.
        Scenario one = c.scenario;
        if (c.metric == "ttft_ms" && !(w.phase == Phase::Serving && c.plan.batch > 0))
            one.workload.phase = Phase::Prefill;
        if (!one.workload.fixedBatch && c.plan.batch == 0)
            one.workload.fixedBatch = true, one.workload.batch = 1;
        const Metrics m = CostModel(one).evaluate(c.plan);
        row.predicted = c.metric == "ttft_ms" ? m.ttftMs : m.tpotMs;
    }
    row.error = row.predicted / row.measured - 1.0;
    return row;
}

std::string gpuFamilyOf(const Scenario& s) {
    const GpuSpec* g = findGpuByName(s.cluster.gpu.name);
    return g && !g->family.empty() ? g->family : "other";
}

std::string engineOf(const Scenario& s) {
    return std::string(kMemoryRuleNames[size_t(s.constraints.memoryRule)]);
}

std::vector<ErrorGroup> groupErrors(const std::vector<GroupedError>& errors) {
    std::vector<GroupedError> sorted = errors;
    std::stable_sort(sorted.begin(), sorted.end(), [](const GroupedError& a, const GroupedError& b) {
        return std::tie(a.family, a.engine) < std::tie(b.family, b.engine);
    });
    std::vector<ErrorGroup> out;
    for (size_t i = 0; i < sorted.size();) {
        size_t j = i;
        std::vector<double> abs;
        while (j < sorted.size() && sorted[j].family == sorted[i].family &&
               sorted[j].engine == sorted[i].engine)
            abs.push_back(std::fabs(sorted[j++].error));
        out.push_back({sorted[i].family, sorted[i].engine, abs.size(), median(abs)});
        i = j;
    }
    return out;
}

CalibrationReport calibrationReport(const CalibrationSet& set) {
    CalibrationReport rep;
    rep.skipped = set.skipped;
    std::vector<double> errs;
    std::vector<GroupedError> grouped;
    for (const auto& c : set.cases) {
        CalibrationRow& row = rep.rows.emplace_back(predictCase(c));
        row.family = gpuFamilyOf(c.scenario);
        row.engine = engineOf(c.scenario);
        errs.push_back(std::fabs(row.error));
        grouped.push_back({row.family, row.engine, row.error});
    }
    rep.medianAbsError = median(errs);
    rep.groups = groupErrors(grouped);
    return rep;
}

Result<CalibrationSet> loadCalibrationSet(const std::string& path, const std::string& samplesDir) {
    try {
        const YAML::Node root = io::parseDocument(io::readFile(path), path);
        const io::MapReader r(path, root, "");
        const YAML::Node list = r.node("measurements");
        if (!list.IsSequence()) r.failAt("measurements", "expected a list");
        const std::string here = std::filesystem::path(path).parent_path().string();
        CalibrationSet set;
        for (size_t i = 0; i < list.size(); ++i) {
            // Null fields ("not stated by the source") read as absent: MapReader::has and the *Or readers
            // take a null as unset. The node is read in place (a clone would lose every line and column).
            const io::MapReader e(path, list[i], "measurements[" + std::to_string(i) + "]");
            auto c = buildCase(e, samplesDir, here);
            if (c)
                set.cases.push_back(std::move(c.value()));
            else
                set.skipped.push_back(e.string("id") + ": " + c.error().message);
        }
        return set;
    } catch (const InputError& e) {
        return e.error();
    }
}

std::string publicationOf(const std::string& source) {
    std::string s = source.substr(0, source.find_first_of("?#"));
    const std::string gh = "https://github.com/";
    if (s.rfind(gh, 0) != 0) return s;
    // https://github.com/OWNER/REPO/blob/COMMIT/PATH (or tree/): the repository and the path.
    std::vector<std::string> parts;
    for (size_t i = gh.size(), j; i <= s.size(); i = j + 1) {
        j = s.find('/', i);
        if (j == std::string::npos) j = s.size();
        parts.push_back(s.substr(i, j - i));
    }
    if (parts.size() < 2) return s;
    const std::string repo = gh + parts[0] + "/" + parts[1];
    if (parts.size() < 5 || (parts[2] != "blob" && parts[2] != "tree")) return repo;
    std::string path;
    for (size_t k = 4; k < parts.size(); ++k) path += (path.empty() ? "" : "/") + parts[k];
    if (path.rfind("closed/", 0) == 0 || path.rfind("open/", 0) == 0) return repo; // an MLPerf round
    return repo + "/" + path;
}

Result<CalibrationSet> loadVllmBenchResult(const std::string& path, const Scenario& base, const Plan& plan) {
    try {
        const YAML::Node root = io::parseDocument(io::readFile(path), path); // JSON is YAML
        const io::MapReader r(path, root, "");
        const double completed = r.number("completed", 1, 1e12);
        const double in = r.number("total_input_tokens", 1, 1e15),
                     out = r.number("total_output_tokens", 1, 1e15);
        CalibrationSet set;
        CalibrationCase c;
        c.scenario = base;
        c.scenario.workload.phase = Phase::Serving;
        c.scenario.workload.inputTokens = std::max<int64_t>(1, std::llround(in / completed));
        c.scenario.workload.outputTokens = std::max<int64_t>(1, std::llround(out / completed));
        c.scenario.workload.ttftMs = c.scenario.workload.tpotMs = 0;
        c.plan = plan;
        const std::string stem = std::filesystem::path(path).stem().string();
        c.source = path; // one run: its own source
        if (r.has("max_concurrency") && !r.node("max_concurrency").IsNull()) {
            // Concurrent requests spread over the replicas.
            const double conc = r.number("max_concurrency", 1, 1e9);
            c.plan.batch =
                std::max<int64_t>(1, std::llround(conc / double(plan.degrees.dp * plan.degrees.pp)));
        }
        if (auto why = CostModel(c.scenario).checkPlan(c.plan))
            return Error{path, 0, 0, "", "plan does not fit the scenario: " + *why};
        c.id = stem + " output throughput";
        c.metric = "output_tokens_per_s";
        c.measured = r.number("output_throughput", 1e-9, 1e12);
        set.cases.push_back(c);
        if (c.plan.batch > 0 && r.has("mean_tpot_ms")) {
            c.id = stem + " mean TPOT";
            c.metric = "tpot_ms";
            c.measured = r.number("mean_tpot_ms", 1e-6, 1e9);
            set.cases.push_back(c);
        }
        if (c.plan.batch > 0 && r.has("mean_ttft_ms")) {
            c.id = stem + " mean TTFT";
            c.metric = "ttft_ms";
            c.measured = r.number("mean_ttft_ms", 1e-6, 1e9);
            set.cases.push_back(c);
        }
        return set;
    } catch (const InputError& e) {
        return e.error();
    }
}

Result<CalibrationReport> runCalibration(const std::string& path, const std::string& samplesDir) {
    auto set = loadCalibrationSet(path, samplesDir);
    if (!set) return set.error();
    return calibrationReport(set.value());
}

} // namespace sp
