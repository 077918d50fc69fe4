// shardplan bench --sim-speed: the serving simulation's speed, CPU seconds of one run on one core (a
// benchmark, apart from the verbs that answer with the simulation, sim_commands.cpp).
#include "sim_commands.h"

#include "args.h"
#include "common.h"
#include "interrupt.h"
#include "metrics_json.h"
#include "verbs.h"

#include "core/cost/costmodel.h"
#include "core/sim/simulator.h"

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <iostream>

#include <nlohmann/json.hpp>

namespace sp::cli {

namespace {

double processCpuSeconds() {
    timespec t{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return double(t.tv_sec) + 1e-9 * double(t.tv_nsec);
}

} // namespace

int cmdSimSpeed(const std::vector<std::string>& argv) {
    const VerbSpec& spec = verb("bench --sim-speed");
    const std::string usage = synopsisText(spec);
    Args a = parseArgs(argv, spec);
    if (!a.ok()) return usageError(a.error(), usage);
    const int64_t requests = a.integer("requests").value_or(100000);
    const int runs = int(a.integer("runs").value_or(5));
    const auto rateOpt = a.number("rate");
    if (!a.ok()) return usageError(a.error(), usage);
    const std::string path =
        a.option("scenario").value_or(samplesDir() + "/scenarios/deepseek-v3-h100-32x8.yaml");
    const auto s = loadScenarioOrReport(path);
    if (!s) return kBadInput;
    const CostModel model(s.value());
    const Plan plan = model.megatronPlan();
    const Metrics m = model.evaluate(plan);
    // By default 90% of the analytical capacity: every replica busy, queues stable.
    const double rate =
        rateOpt.value_or(0.9 * m.throughput / std::max<double>(1.0, double(s->workload.outputTokens)));
    SimOptions o;
    o.rate = rate;
    o.requests = requests;
    std::vector<double> cpu;
    std::shared_ptr<const SimResult> last;
    InterruptToStop interrupt;
    for (int i = 0; i < runs && !interrupt.interrupted(); ++i) {
        o.seed = uint64_t(i + 1);
        const double t0 = processCpuSeconds();
        auto r = simulate(model, plan, o, {}, interrupt.token());
        const double spent = processCpuSeconds() - t0;
        if (interrupt.interrupted()) break; // a run cut short is no timing
        if (!r->ok) {
            std::cerr << "shardplan: " << r->error << "\n";
            return kBadInput;
        }
        cpu.push_back(spent);
        last = std::move(r);
    }
    if (cpu.empty()) {
        std::cerr << "shardplan: interrupted before the first run completed; no timing\n";
        return kBadInput;
    }
    if (interrupt.interrupted())
        std::cerr << "shardplan: interrupted; the median is of the " << cpu.size()
                  << " runs that completed, of " << runs << "\n";
    std::vector<double> sorted = cpu;
    std::sort(sorted.begin(), sorted.end());
    const double median = sorted[sorted.size() / 2];
    if (a.flag("json")) {
        nlohmann::ordered_json j;
        j["scenario"] = path;
        j["plan"] = degreesText(plan, s->model.moe.present());
        j["requests"] = requests;
        j["rate"] = rate;
        j["cpu_seconds"] = cpu;
        j["median_cpu_seconds"] = median;
        j["steps"] = last->steps;
        j["simulated_seconds"] = last->durationS;
        std::cout << jsonText(j) << "\n";
        return kOk;
    }
    std::printf("scenario   %s\nplan       megatron: %s\n", path.c_str(),
                degreesText(plan, s->model.moe.present()).c_str());
    std::printf(
        "simulation %lld requests at %.4g requests/s (90%% of the analytical capacity unless --rate), "
        "%s steps, %.0f s simulated\n",
        (long long)requests, rate, thousands(double(last->steps)).c_str(), last->durationS);
    std::printf("CPU s      ");
    for (double c : cpu) std::printf("%.3f ", c);
    std::printf("\nmedian     %.3f CPU-seconds (one thread), %s requests per CPU-second\n", median,
                thousands(double(requests) / median).c_str());
    return kOk;
}

} // namespace sp::cli
