// shardplan simulate: the request-level serving simulation (core/sim); capacity is in capacity_command.cpp.
#include "sim_commands.h"

#include "args.h"
#include "common.h"
#include "interrupt.h"
#include "metrics_json.h"
#include "search_util.h"
#include "sim_common.h"
#include "verbs.h"

#include "core/io/formats.h"
#include "core/io/gpudb.h"
#include "core/searchers/registry.h"
#include "core/sim/capacity.h"
#include "core/sim/simulator.h"
#include "core/sim/trace.h"

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <iostream>
#include <set>
#include <sstream>

namespace sp::cli {

namespace {

void printSim(const SimResult& r, const Workload& w) {
    std::printf("setup      %s; %lld tokens a step; %s's scheduler\n", r.plan.c_str(),
                (long long)r.tokenBudget, r.scheduler.c_str());
    std::printf("completed  %lld of %lld requests in %.1f s simulated (%s steps)%s\n", (long long)r.completed,
                (long long)r.requests, r.durationS, thousands(double(r.steps)).c_str(),
                r.stopped ? ", stopped early" : "");
    if (!r.error.empty()) std::printf("note       %s\n", r.error.c_str());
    std::printf("           %10s %10s %10s %10s %10s\n", "mean", "p50", "p90", "p99", "max");
    const auto row = [](const char* name, const Percentiles& p) {
        std::printf("%-10s %10.1f %10.1f %10.1f %10.1f %10.1f\n", name, p.mean, p.p50, p.p90, p.p99, p.max);
    };
    row("TTFT ms", r.ttftMs);
    row("TPOT ms", r.tpotMs);
    row("ITL ms", r.itlMs);
    row("E2E ms", r.e2eMs);
    std::printf("throughput %.2f requests/s, %s output tokens/s (sustained %s), %s tokens/s in and out\n",
                r.requestsPerS, thousands(r.outputTokensPerS).c_str(),
                thousands(r.sustainedOutputTokensPerS).c_str(), thousands(r.totalTokensPerS).c_str());
    const SloCheck c = checkSlo(r, w);
    if (w.ttftMs > 0 || w.tpotMs > 0) {
        std::string line = sloName(w) + ":";
        if (w.ttftMs > 0)
            line += " TTFT " + thousands(c.ttftMs, "%.1f") + " of " + thousands(w.ttftMs, "%.4g") + " ms" +
                    (c.ttftRatio <= 1 ? " (met)" : " (missed)");
        if (w.tpotMs > 0)
            line += std::string(w.ttftMs > 0 ? "," : "") + " TPOT " + thousands(c.tpotMs, "%.2f") + " of " +
                    thousands(w.tpotMs, "%.4g") + " ms" + (c.tpotRatio <= 1 ? " (met)" : " (missed)");
        std::printf("SLOs       %s\n", line.c_str());
        std::printf("goodput    %.2f requests/s meet every SLO (%.1f%% of the requests)\n",
                    r.goodputRequestsPerS, 100.0 * r.sloAttainment);
    }
    std::printf(
        "memory     KV pool peak %.1f%%, mean %.1f%% of %s blocks a lane; %lld preemptions, %lld steps with "
        "requests waiting for blocks\n",
        100.0 * r.kvPeakShare, 100.0 * r.kvMeanShare, thousands(double(r.kvBlocksPerLane)).c_str(),
        (long long)r.preemptions, (long long)r.admissionsBlockedByKv);
    std::printf("in flight mean %.1f requests (Little's law: %.2f requests/s x %.3f s = %.1f)\n",
                r.meanInFlight, r.requestsPerS, r.e2eMs.mean / 1e3, r.requestsPerS * r.e2eMs.mean / 1e3);
}

/// The plan a verb runs: --plan (a file), --searcher (its best), or Megatron's.
struct PlanArgs {
    std::optional<std::string> path, searcher;
    int64_t budget = 2000;
    uint64_t seed = 1;
};

/// A plan for the scenario, or an exit code after reporting why not.
std::optional<Plan> planFor(const CostModel& model, const PlanArgs& a, std::string& name, int& exitCode) {
    const Scenario& s = model.scenario();
    if (a.path) {
        const auto p = loadPlanOrReport(*a.path);
        if (!p) {
            exitCode = kBadInput;
            return std::nullopt;
        }
        if (auto why = model.checkPlan(*p)) {
            std::cerr << *a.path << ": plan does not fit the scenario: " << *why << "\n";
            exitCode = kBadInput;
            return std::nullopt;
        }
        name = *a.path;
        return *p;
    }
    if (a.searcher) {
        PlanChoice c;
        {
            InterruptToStop interrupt;
            c = choosePlan(model, *a.searcher, a.budget, a.seed, interrupt.token());
        }
        if (!c.ok) {
            std::cerr << "shardplan: " << *a.searcher << " found no feasible plan: " << c.why << "\n";
            exitCode = kBadInput;
            return std::nullopt;
        }
        name = *a.searcher + " (seed " + std::to_string(a.seed) + ")";
        std::cerr << "shardplan: " << name << ": best " << degreesText(c.plan, s.model.moe.present()) << ", "
                  << static_cast<long long>(c.metrics.throughput) << " tokens/s\n";
        return c.plan;
    }
    name = "megatron";
    return model.megatronPlan();
}

} // namespace

int cmdSimulate(const std::vector<std::string>& argv) {
    ScenarioVerb start = startScenarioVerb(argv, "simulate");
    if (start.exit) return *start.exit;
    Args& a = start.args;
    const std::string& usage = start.usage;
    const std::optional<std::string>& scenarioPath = start.scenario;
    SimOptions o;
    if (auto e = readSimOptions(a, o); !e.empty()) return usageError(e, usage);
    const auto budget = a.integer("budget");
    if (!a.ok()) return usageError(a.error(), usage);
    const auto tracePath = a.option("trace");
    if (tracePath && a.option("rate")) return usageError("give --rate or --trace, not both", usage);
    if (!tracePath && !a.option("rate")) return usageError("--rate or --trace is required", usage);
    if (tracePath && a.option("burst-cv")) return usageError("--burst-cv goes with --rate", usage);
    if (a.option("plan") && a.option("searcher"))
        return usageError("give --plan or --searcher, not both", usage);
    if (budget && !a.option("searcher")) return usageError("--budget goes with --searcher", usage);
    if (auto n = a.option("searcher"); n && !searcherError(*n).empty())
        return usageError(searcherError(*n), usage);
    if (tracePath && !a.option("requests")) o.requests = 0; // the whole trace
    const auto s = loadScenarioOrReport(*scenarioPath);
    if (!s) return kBadInput;
    if (s->workload.phase != Phase::Serving) {
        std::cerr << *scenarioPath
                  << ": the simulation serves requests: the workload's phase must be serving\n";
        return kBadInput;
    }
    if (tracePath) {
        auto t = loadTrace(*tracePath);
        if (!t) {
            std::cerr << t.error().str() << "\n";
            return kBadInput;
        }
        o.trace = std::move(t).value();
    }
    const bool json = a.flag("json");
    std::shared_ptr<const SimResult> r;
    nlohmann::ordered_json planJson;
    std::string planName;
    Metrics analytic;
    ServingCost cost;
    bool disaggregated = false;
    if (auto pp = a.option("plan")) {
        auto dis = isDisaggregatedPlan(*pp);
        if (!dis) {
            std::cerr << dis.error().str() << "\n";
            return kBadInput;
        }
        disaggregated = dis.value();
    }
    InterruptToStop interrupt;
    if (disaggregated) {
        const auto dp = loadDisaggPlan(*a.option("plan"), &s.value());
        if (!dp) {
            std::cerr << dp.error().str() << "\n";
            return kBadInput;
        }
        const DisaggModel model(s.value());
        const DisaggMetrics dm = model.evaluate(dp.value());
        if (!dm.valid) {
            std::cerr << *a.option("plan") << ": " << dm.violation << "\n";
            return kBadInput;
        }
        r = simulate(model, dp.value(), o, {}, interrupt.token());
        planName = *a.option("plan");
        planJson = nlohmann::ordered_json::parse(toJson(dp.value(), s->model));
        analytic.throughput = dm.throughput, analytic.ttftMs = dm.ttftMs, analytic.tpotMs = dm.tpotMs;
        analytic.batch = dm.decode.batch;
        cost = poolsCost(
            *s, dm, r->sustainedOutputTokensPerS > 0 ? r->sustainedOutputTokensPerS : r->outputTokensPerS);
    } else {
        const CostModel model(s.value());
        PlanArgs pa;
        pa.path = a.option("plan");
        pa.searcher = a.option("searcher");
        pa.budget = budget.value_or(2000);
        pa.seed = o.seed;
        int code = kOk;
        const auto plan = planFor(model, pa, planName, code);
        if (!plan) return code;
        analytic = model.evaluate(*plan);
        r = simulate(model, *plan, o, {}, interrupt.token());
        planJson = nlohmann::ordered_json::parse(toJson(*plan, s->model));
        if (!json)
            std::printf("scenario   %s\nplan       %s: %s\n", s->name.c_str(), planName.c_str(),
                        degreesText(*plan, s->model.moe.present()).c_str());
        cost = servingCost(s->cluster, s->gpus(),
                           r->sustainedOutputTokensPerS > 0 ? r->sustainedOutputTokensPerS
                                                            : r->outputTokensPerS);
    }
    if (!r->ok) {
        std::cerr << "shardplan: " << r->error << "\n";
        return kBadInput;
    }
    if (interrupt.interrupted()) std::cerr << "shardplan: interrupted; the figures cover what completed\n";
    if (json) {
        nlohmann::ordered_json j;
        j["scenario"] = s->name;
        j["plan_name"] = planName;
        j["plan"] = planJson;
        j["arrivals"] = o.trace.empty()
                            ? nlohmann::ordered_json{{"process", o.burstCv == 1 ? "poisson" : "gamma"},
                                                     {"rate", o.rate},
                                                     {"cv", o.burstCv},
                                                     {"requests", o.requests},
                                                     {"seed", o.seed}}
                            : nlohmann::ordered_json{{"trace", *tracePath}, {"requests", o.trace.size()}};
        j["simulation"] = simJson(*r, s->workload);
        j["analytical"] = {{"throughput_tokens_per_s", analytic.throughput},
                           {"ttft_ms", analytic.ttftMs},
                           {"tpot_ms", analytic.tpotMs},
                           {"batch", analytic.batch}};
        j["cost"] = costJson(cost);
        std::cout << jsonText(j) << "\n";
        return kOk;
    }
    if (disaggregated)
        std::printf("scenario   %s\nplan       %s (disaggregated)\n", s->name.c_str(), planName.c_str());
    if (o.trace.empty())
        std::printf("arrivals   %s at %.4g requests/s, %lld requests, seed %llu\n",
                    o.burstCv == 1 ? "Poisson" : ("gamma gaps of CV " + thousands(o.burstCv, "%.3g")).c_str(),
                    o.rate, (long long)o.requests, (unsigned long long)o.seed);
    else
        std::printf("arrivals   the trace %s (%zu requests)\n", tracePath->c_str(), o.trace.size());
    printSim(*r, s->workload);
    std::printf("analytical steady state %s tokens/s, TTFT %.1f ms, TPOT %.2f ms at batch %lld\n",
                thousands(analytic.throughput).c_str(), analytic.ttftMs, analytic.tpotMs,
                (long long)analytic.batch);
    std::printf("cost       %s\n", costText(cost).c_str());
    return kOk;
}

} // namespace sp::cli
