#include "cost_commands.h"

#include "args.h"
#include "common.h"
#include "disagg_commands.h"
#include "interrupt.h"
#include "metrics_json.h"
#include "verbs.h"

#include "core/io/formats.h"
#include "core/search/rng.h"
#include "core/search/space.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <iostream>

namespace sp::cli {

namespace {

void printBreakdown(const Breakdown& b) {
    std::printf("\n%s: slowest stage %.3f ms (%d dense + %d moe layers)", b.phase.c_str(), b.stageMs,
                b.denseLayers, b.moeLayers);
    if (b.bubbleMs > 0 || b.pipelineTransferMs > 0)
        std::printf(", stage transfer %.3f ms, bubble %.3f ms", b.pipelineTransferMs, b.bubbleMs);
    if (b.twoBatchOverlap) std::printf(", MoE layers as two overlapped half-batches");
    std::printf("\n  %-12s %-15s %-11s %10s %10s %10s  %s\n", "layer", "operator", "choice", "compute ms",
                "memory ms", "time ms", "bound");
    for (const auto& o : b.ops) {
        if (o.layer == LayerKind::Draft) { // the draft passes: one row a step, their own roofs inside
            std::printf("  %-12s %-15s %-11s %10s %10s %10.4f  %s\n", "draft", "passes", o.choice.c_str(),
                        "-", "-", o.timeMs, b.draft.c_str());
            continue;
        }
        std::printf("  %-12s %-15s %-11s %10.4f %10.4f %10.4f  %s\n", std::string(nameOf(o.layer)).c_str(),
                    o.op.c_str(), o.choice.c_str(), o.computeMs, o.memoryMs, o.timeMs,
                    o.memoryBound ? "memory" : "compute");
    }
    if (b.comms.empty()) return;
    std::printf("  %-12s %-26s %-15s %-8s %5s %12s %10s\n", "layer", "collective", "kind", "link", "group",
                "bytes/GPU", "time ms");
    for (const auto& c : b.comms) {
        std::printf("  %-12s %-26s %-15s %-8s %5d %12.0f %10.4f", std::string(nameOf(c.layer)).c_str(),
                    c.where.c_str(), std::string(nameOf(c.kind)).c_str(), std::string(nameOf(c.link)).c_str(),
                    c.group, c.bytes, c.timeMs);
        if (c.overlapped) std::printf("  (exposed; %.4f ms whole)", c.fullMs);
        std::printf("\n");
    }
}

} // namespace

int cmdEvaluate(const std::vector<std::string>& argv) {
    ScenarioVerb start = startScenarioVerb(argv, "evaluate");
    if (start.exit) return *start.exit;
    Args& a = start.args;
    const std::string& usage = start.usage;
    const std::optional<std::string>& scenarioPath = start.scenario;
    const auto load = a.number("load");
    if (!a.ok()) return usageError(a.error(), usage);
    const auto s = loadScenarioOrReport(*scenarioPath);
    if (!s) return kBadInput;
    if (auto pp = a.option("plan")) {
        auto dis = isDisaggregatedPlan(*pp);
        if (!dis) {
            std::cerr << dis.error().str() << "\n";
            return kBadInput;
        }
        if (dis.value()) return evaluateDisaggregated(s.value(), *pp, a.flag("json"), load.value_or(0));
    }
    if (load) return usageError("--load applies to a disaggregated plan only", usage);
    const CostModel model(s.value());
    Plan plan;
    std::string planName = "megatron";
    if (auto pp = a.option("plan")) {
        const auto p = loadPlanOrReport(*pp);
        if (!p) return kBadInput;
        plan = *p;
        planName = *pp;
        if (auto why = model.checkPlan(plan)) {
            std::cerr << *pp << ": plan does not fit the scenario: " << *why << "\n";
            return kBadInput;
        }
    } else {
        plan = model.megatronPlan();
    }
    const Evaluation e = model.explain(plan);
    const Metrics& m = e.metrics;
    const bool moe = s->model.moe.present();
    if (a.flag("json")) {
        nlohmann::ordered_json j = metricsJson(m);
        j["cost"] = costJson(planCost(*s, m));
        j["efficiency_source"] = s->cluster.efficiencySource;
        j["plan"] = nlohmann::ordered_json::parse(toJson(plan, s->model));
        nlohmann::ordered_json br;
        if (!e.decode.ops.empty()) br["decode"] = breakdownJson(e.decode);
        if (!e.prefill.ops.empty()) br["prefill"] = breakdownJson(e.prefill);
        j["breakdown"] = br;
        std::cout << jsonText(j) << "\n";
        return kOk;
    }
    std::printf("scenario   %s\nplan       %s: %s\n", s->name.c_str(), planName.c_str(),
                degreesText(plan, moe).c_str());
    std::printf("feasible   %s\n", m.feasible ? "yes" : "no");
    for (const auto& v : m.violations) std::printf("  violation: %s\n", v.c_str());
    std::printf("throughput %.0f tokens/s (%.1f per GPU), %.1f%% of the roofline bound %.0f\n", m.throughput,
                m.throughputPerGpu, 100.0 * m.rooflineFraction, m.rooflineThroughput);
    std::printf("latency    %s, TPOT %.2f ms, batch %lld per replica\n", ttftText(m).c_str(), m.tpotMs,
                (long long)m.batch);
    if (m.spec.on())
        std::printf("speculate  %s: a step of %.2f ms yields %.3f tokens a sequence, so TPOT = %.2f / %.3f\n",
                    specText(m.spec).c_str(), m.stepMs, m.tokensPerStep, m.stepMs, m.tokensPerStep);
    std::printf("step       up to %lld tokens per pass%s\n", (long long)m.prefillBudget,
                m.twoBatchOverlap ? ", MoE layers as two overlapped half-batches" : "");
    std::printf(
        "memory     %.1f of %.1f GiB per GPU: weights %.1f, KV cache %.1f, activations %.1f, reserve %.1f\n",
        m.memoryPerGpuGiB, m.capacityGiB, m.weightsGiB, m.kvCacheGiB, m.activationsGiB, m.reserveGiB);
    static const char* const kFlag[] = {"gpu_memory_utilization", "mem_fraction_static",
                                        "free_gpu_memory_fraction"};
    std::printf("           %s's rule: %s %.3g of the %.1f GiB the driver reports; KV pool %.1f GiB\n",
                std::string(kMemoryRuleNames[size_t(m.memoryRule)]).c_str(), kFlag[size_t(m.memoryRule)],
                m.memoryFraction, m.gpuMemoryGiB, m.kvPoolGiB);
    std::printf("cost       %s\n", costText(planCost(*s, m), tokensWord(*s)).c_str());
    if (!s->cluster.efficiencySource.empty())
        std::printf("factors    %s\n", s->cluster.efficiencySource.c_str());
    if (!e.decode.ops.empty()) printBreakdown(e.decode);
    if (!e.prefill.ops.empty()) printBreakdown(e.prefill);
    return kOk;
}

namespace {

double threadCpuSeconds() {
    timespec t{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return double(t.tv_sec) + 1e-9 * double(t.tv_nsec);
}

/// Evaluations per CPU-second of `model` over `pool`, for at least `seconds` of CPU time.
struct Rate {
    double perCpuSecond = 0, batchMean = 0, sink = 0;
};
Rate measure(const CostModel& model, const std::vector<Plan>& pool, double seconds) {
    Rate r;
    int64_t n = 0;
    double batchSum = 0;
    const double t0 = threadCpuSeconds();
    double elapsed = 0;
    do {
        for (int i = 0; i < 256; ++i, ++n) {
            const Metrics m = model.evaluate(pool[size_t(n) % pool.size()]);
            r.sink += m.throughput;
            batchSum += double(m.batch);
        }
        elapsed = threadCpuSeconds() - t0;
    } while (elapsed < seconds);
    r.perCpuSecond = double(n) / elapsed;
    r.batchMean = batchSum / double(n);
    return r;
}

} // namespace

int cmdEvalSpeed(const std::vector<std::string>& argv) {
    const VerbSpec& spec = verb("bench --eval-speed");
    const std::string usage = synopsisText(spec);
    Args a = parseArgs(argv, spec);
    if (!a.ok()) return usageError(a.error(), usage);
    const double seconds = a.number("seconds").value_or(2.0);
    if (!a.ok() || seconds <= 0) return usageError("--seconds must be a positive number", usage);
    std::vector<std::string> scenarios = a.all("scenario");
    if (scenarios.empty())
        scenarios = {samplesDir() + "/scenarios/deepseek-v3-h100-32x8.yaml",
                     samplesDir() + "/scenarios/moe-1.6t-h100-128x8.yaml"};
    nlohmann::ordered_json rows = nlohmann::ordered_json::array();
    if (!a.flag("json"))
        std::printf("%-46s %11s %11s %6s %6s %7s %6s\n", "scenario", "evals/CPU-s", "bisection", "ratio",
                    "plans", "max pp", "batch");
    for (const auto& path : scenarios) {
        const auto s = loadScenarioOrReport(path);
        if (!s) return kBadInput;
        CostModel model(s.value());
        // 512 plans drawn from the search space (uniformly over valid plans, and one decision at a time,
        // which reaches the deep pipelines uniform sampling rarely draws), so the figure covers what a search
        // evaluates, batch selection included; the Megatron plan if the space is empty.
        std::vector<Plan> pool;
        const SearchSpace space(s.value());
        Rng rng(88172645463325252ull);
        int maxPp = 1;
        for (int i = 0; i < 512 && !space.empty(); ++i) {
            const std::vector<int> x = i % 2 ? space.sampleByDecision(rng) : space.sample(rng);
            if (x.empty()) continue;
            pool.push_back(space.toPlan(x));
            maxPp = std::max(maxPp, pool.back().degrees.pp);
        }
        if (pool.empty()) pool.push_back(model.megatronPlan());
        // The two batch searches side by side: each must choose the same batch for every plan.
        size_t differ = 0;
        std::vector<int64_t> secantBatch;
        for (const Plan& p : pool) secantBatch.push_back(model.evaluate(p).batch);
        model.setBatchSearch(BatchSearch::Bisection);
        for (size_t i = 0; i < pool.size(); ++i) differ += model.evaluate(pool[i]).batch != secantBatch[i];
        Rate fast, slow;
        for (int round = 0; round < 3; ++round) { // alternated, so that load on the machine hits both alike
            model.setBatchSearch(BatchSearch::Bisection);
            const Rate b = measure(model, pool, seconds / 6);
            model.setBatchSearch(BatchSearch::Secant);
            const Rate f = measure(model, pool, seconds / 6);
            fast.perCpuSecond += f.perCpuSecond / 3, slow.perCpuSecond += b.perCpuSecond / 3;
            fast.batchMean = f.batchMean, fast.sink += f.sink + b.sink;
        }
        if (differ > 0) {
            std::fprintf(stderr, "%s: the two batch searches chose different batches for %zu of %zu plans\n",
                         path.c_str(), differ, pool.size());
            return kBadInput;
        }
        if (a.flag("json")) {
            rows.push_back({{"scenario", path},
                            {"evals_per_cpu_second", fast.perCpuSecond},
                            {"bisection_evals_per_cpu_second", slow.perCpuSecond},
                            {"plans", pool.size()},
                            {"max_pp", maxPp},
                            {"batch_mean", fast.batchMean}});
        } else {
            std::printf("%-46s %11.0f %11.0f %6.2f %6zu %7d %6.1f\n", path.c_str(), fast.perCpuSecond,
                        slow.perCpuSecond, fast.perCpuSecond / slow.perCpuSecond, pool.size(), maxPp,
                        fast.batchMean);
        }
        if (fast.sink < 0) std::printf("impossible\n"); // keeps the loop from being optimised away
    }
    if (!a.flag("json"))
        std::printf("(evaluations per CPU-second on one thread; bisection: the plain batch search, measured "
                    "alternately in the same run)\n");
    if (a.flag("json")) std::cout << jsonText(rows) << "\n";
    return kOk;
}

} // namespace sp::cli
