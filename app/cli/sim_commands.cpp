// shardplan simulate, capacity and bench --sim-speed: the request-level serving simulation (core/sim).
#include "sim_commands.h"

#include "args.h"
#include "common.h"
#include "interrupt.h"
#include "metrics_json.h"
#include "search_util.h"
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

constexpr int64_t kDefaultRequests = 1000;

std::string group(double x, const char* fmt = "%.0f") {
    return thousands(x, fmt);
}

nlohmann::ordered_json percentilesJson(const Percentiles& p) {
    return {{"mean", p.mean}, {"p50", p.p50}, {"p90", p.p90},
            {"p99", p.p99},   {"max", p.max}, {"count", p.count}};
}

/// 100 points of a CDF: the value at each percentile 1..100.
nlohmann::ordered_json cdfJson(const std::vector<double>& sorted) {
    auto a = nlohmann::ordered_json::array();
    if (sorted.empty()) return a;
    for (int p = 1; p <= 100; ++p) a.push_back(percentileOf(sorted, p));
    return a;
}

std::string sloName(const Workload& w) {
    char buf[24] = "mean";
    if (w.sloPercentile > 0) std::snprintf(buf, sizeof buf, "p%g", w.sloPercentile);
    return buf;
}

nlohmann::ordered_json simJson(const SimResult& r, const Workload& w) {
    nlohmann::ordered_json j;
    j["setup"] = r.plan;
    j["requests"] = r.requests;
    j["completed"] = r.completed;
    j["stopped"] = r.stopped;
    if (!r.error.empty()) j["note"] = r.error;
    j["duration_s"] = r.durationS;
    j["offered_rate"] = r.offeredRate;
    j["steps"] = r.steps;
    j["mixed_steps"] = r.mixedSteps;
    j["ttft_ms"] = percentilesJson(r.ttftMs);
    j["tpot_ms"] = percentilesJson(r.tpotMs);
    j["itl_ms"] = percentilesJson(r.itlMs);
    j["e2e_ms"] = percentilesJson(r.e2eMs);
    j["throughput"] = {{"requests_per_s", r.requestsPerS},
                       {"output_tokens_per_s", r.outputTokensPerS},
                       {"total_tokens_per_s", r.totalTokensPerS},
                       {"sustained_output_tokens_per_s", r.sustainedOutputTokensPerS}};
    const SloCheck c = checkSlo(r, w);
    j["slo"] = {{"percentile", w.sloPercentile > 0 ? nlohmann::ordered_json(w.sloPercentile) : nullptr},
                {"ttft_ms", w.ttftMs > 0 ? nlohmann::ordered_json(w.ttftMs) : nullptr},
                {"tpot_ms", w.tpotMs > 0 ? nlohmann::ordered_json(w.tpotMs) : nullptr},
                {"ttft_at_percentile_ms", c.ttftMs},
                {"tpot_at_percentile_ms", c.tpotMs},
                {"met", c.met},
                {"goodput_requests_per_s", r.goodputRequestsPerS},
                {"attainment", r.sloAttainment}};
    j["mean_in_flight"] = r.meanInFlight;
    j["kv"] = {{"blocks_per_lane", r.kvBlocksPerLane}, {"block_tokens", r.blockTokens},
               {"peak_share", r.kvPeakShare},          {"mean_share", r.kvMeanShare},
               {"preemptions", r.preemptions},         {"admissions_blocked", r.admissionsBlockedByKv}};
    j["lanes"] = r.lanes;
    j["batch_cap"] = r.batchCap;
    j["token_budget"] = r.tokenBudget;
    j["scheduler"] = r.scheduler;
    j["cdf"] = {{"ttft_ms", cdfJson(r.ttftSortedMs)}, {"tpot_ms", cdfJson(r.tpotSortedMs)}};
    auto tl = nlohmann::ordered_json::array();
    for (const auto& p : r.timeline)
        tl.push_back({{"t_s", p.t}, {"waiting", p.waiting}, {"running", p.running}, {"kv_share", p.kvShare}});
    j["timeline"] = tl;
    return j;
}

void printSim(const SimResult& r, const Workload& w) {
    std::printf("setup      %s; %lld tokens a step; %s's scheduler\n", r.plan.c_str(),
                (long long)r.tokenBudget, r.scheduler.c_str());
    std::printf("completed  %lld of %lld requests in %.1f s simulated (%s steps)%s\n", (long long)r.completed,
                (long long)r.requests, r.durationS, group(double(r.steps)).c_str(),
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
                r.requestsPerS, group(r.outputTokensPerS).c_str(), group(r.sustainedOutputTokensPerS).c_str(),
                group(r.totalTokensPerS).c_str());
    const SloCheck c = checkSlo(r, w);
    if (w.ttftMs > 0 || w.tpotMs > 0) {
        std::string line = sloName(w) + ":";
        if (w.ttftMs > 0)
            line += " TTFT " + group(c.ttftMs, "%.1f") + " of " + group(w.ttftMs, "%.4g") + " ms" +
                    (c.ttftRatio <= 1 ? " (met)" : " (missed)");
        if (w.tpotMs > 0)
            line += std::string(w.ttftMs > 0 ? "," : "") + " TPOT " + group(c.tpotMs, "%.2f") + " of " +
                    group(w.tpotMs, "%.4g") + " ms" + (c.tpotRatio <= 1 ? " (met)" : " (missed)");
        std::printf("SLOs       %s\n", line.c_str());
        std::printf("goodput    %.2f requests/s meet every SLO (%.1f%% of the requests)\n",
                    r.goodputRequestsPerS, 100.0 * r.sloAttainment);
    }
    std::printf(
        "memory     KV pool peak %.1f%%, mean %.1f%% of %s blocks a lane; %lld preemptions, %lld steps with "
        "requests waiting for blocks\n",
        100.0 * r.kvPeakShare, 100.0 * r.kvMeanShare, group(double(r.kvBlocksPerLane)).c_str(),
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

/// Reads the options simulate and capacity share into SimOptions; an empty string, or what is wrong.
std::string readSimOptions(Args& a, SimOptions& o) {
    o.requests = a.integer("requests").value_or(kDefaultRequests);
    o.rate = a.number("rate").value_or(0.0);
    o.burstCv = a.number("burst-cv").value_or(1.0);
    o.duration = a.number("duration").value_or(0.0);
    o.seed = uint64_t(a.integer("seed").value_or(1));
    o.batchCap = a.integer("batch-cap").value_or(0);
    if (!a.ok()) return a.error();
    if (auto r = a.option("routing")) {
        if (*r == "least-loaded")
            o.routing = Routing::LeastLoaded;
        else if (*r == "round-robin")
            o.routing = Routing::RoundRobin;
        else
            return "--routing must be least-loaded or round-robin, not '" + *r + "'";
    }
    return "";
}

/// The capacity verb's SLOs in words: "p99 TTFT 2,000 ms, TPOT 50 ms".
std::string sloText(const Workload& w) {
    char buf[160];
    std::snprintf(buf, sizeof buf, "%s TTFT %s ms, TPOT %s ms", sloName(w).c_str(),
                  w.ttftMs > 0 ? group(w.ttftMs, "%.4g").c_str() : "-",
                  w.tpotMs > 0 ? group(w.tpotMs, "%.4g").c_str() : "-");
    return buf;
}

/// One cluster's --max-rate answer, printed (or appended to `json`); an exit code, after saying why there is
/// no answer.
int reportMaxRateRow(const MaxRateRow& r, const Scenario& s, bool searcher, nlohmann::ordered_json* json) {
    const bool moe = s.model.moe.present();
    if (searcher && r.metrics.feasible)
        std::cerr << "shardplan: " << r.planName << ": best " << degreesText(r.plan, moe) << ", "
                  << static_cast<long long>(r.metrics.throughput) << " tokens/s\n";
    // A bisection cut short has bracketed nothing: its "rate" is no answer.
    if (r.stopped) {
        std::cerr << "shardplan: interrupted; no capacity answer (the rate search did not finish)\n";
        return kBadInput;
    }
    if (!r.error.empty()) {
        std::cerr << "shardplan: " << r.error << "\n";
        return kBadInput;
    }
    const MaxRate& mr = r.rate;
    if (json) {
        nlohmann::ordered_json j;
        j["gpu"] = r.gpu;
        j["gpus"] = r.gpus;
        j["plan_name"] = r.planName;
        j["plan"] = nlohmann::ordered_json::parse(toJson(r.plan, s.model));
        j["max_rate"] = mr.rate;
        j["missed_at"] = mr.rateAbove;
        j["binding"] = mr.binding;
        j["why"] = mr.why;
        j["simulations"] = mr.simulations;
        j["output_tokens_per_s"] = r.outputTokensPerS;
        if (mr.at) j["at_max_rate"] = simJson(*mr.at, s.workload);
        j["cost"] = costJson(r.cost);
        json->push_back(j);
        return kOk;
    }
    std::printf("\n%s, %d GPUs, %s: %s\n", r.gpu.c_str(), r.gpus, r.planName.c_str(),
                degreesText(r.plan, moe).c_str());
    std::printf("  max rate %.3g requests/s (%s output tokens/s); at %.3g it misses: %s (%s)\n", mr.rate,
                group(r.outputTokensPerS).c_str(), mr.rateAbove, mr.binding.c_str(), mr.why.c_str());
    if (mr.at) {
        const SloCheck c = checkSlo(*mr.at, s.workload);
        std::printf("  at the max rate: %s TTFT %.1f ms, TPOT %.2f ms; %lld preemptions; %d simulations\n",
                    sloName(s.workload).c_str(), c.ttftMs, c.tpotMs, (long long)mr.at->preemptions,
                    mr.simulations);
    }
    std::printf("  cost     %s\n", costText(r.cost).c_str());
    return kOk;
}

nlohmann::ordered_json fewestGpusJson(const std::vector<CapacityRow>& rows, const Scenario& s, double rate) {
    const Workload& w = s.workload;
    nlohmann::ordered_json out;
    out["scenario"] = s.name;
    out["rate"] = rate;
    out["slo"] = {{"percentile", w.sloPercentile > 0 ? nlohmann::ordered_json(w.sloPercentile) : nullptr},
                  {"ttft_ms", w.ttftMs},
                  {"tpot_ms", w.tpotMs}};
    auto arr = nlohmann::ordered_json::array();
    for (const auto& r : rows) {
        nlohmann::ordered_json j;
        j["gpu"] = r.gpu;
        j["met"] = r.met;
        j["nodes"] = r.nodes;
        j["gpus"] = r.gpus;
        j["why"] = r.why;
        if (r.gpus > 0) j["plan"] = nlohmann::ordered_json::parse(toJson(r.plan, s.model));
        j["ttft_at_percentile_ms"] = r.slo.ttftMs;
        j["tpot_at_percentile_ms"] = r.slo.tpotMs;
        j["simulations"] = r.simulations;
        if (r.run) j["simulation"] = simJson(*r.run, w);
        j["cost"] = costJson(r.cost);
        arr.push_back(j);
    }
    out["rows"] = arr;
    return out;
}

void printFewestGpus(const std::vector<CapacityRow>& rows, const Scenario& s, double rate, int64_t requests) {
    std::printf("GPUs for %.4g requests/s under %s (%s); each run lasts 20 request latencies, at least %lld "
                "requests\n\n",
                rate, sloText(s.workload).c_str(), s.workload.name.c_str(), (long long)requests);
    std::printf("%-16s %5s %5s %10s %10s %10s %12s %14s  %s\n", "gpu", "nodes", "gpus", "TTFT ms", "TPOT ms",
                "$/hour", "$/M tokens", "tokens/s/MW", "plan");
    for (const auto& r : rows) {
        if (!r.met) {
            std::printf("%-16s %s\n", r.gpu.c_str(), r.why.c_str());
            continue;
        }
        std::printf("%-16s %5d %5d %10.1f %10.2f %10s %12s %14s  %s\n", r.gpu.c_str(), r.nodes, r.gpus,
                    r.slo.ttftMs, r.slo.tpotMs,
                    r.cost.priced ? group(r.cost.usdPerHour, "%.2f").c_str() : "-",
                    r.cost.priced ? group(r.cost.usdPerMillionTokens, "%.3f").c_str() : "-",
                    r.cost.powered ? group(r.cost.tokensPerSPerMegawatt).c_str() : "-",
                    degreesText(r.plan, s.model.moe.present()).c_str());
    }
    std::printf("\nwhat binds one size down:\n");
    for (const auto& r : rows)
        if (r.met) std::printf("  %-14s %s\n", r.gpu.c_str(), r.why.c_str());
    std::printf("prices: ");
    bool first = true;
    for (const auto& r : rows)
        if (r.cost.priced)
            std::printf("%s%s $%.4g/GPU-hour (%s)", first ? "" : "; ", r.gpu.c_str(), r.cost.usdPerGpuHour,
                        r.cost.priceSource.c_str()),
                first = false;
    std::printf("%s\nenergy: tokens/s per MW of GPU board power (TDP), not measured draw\n",
                first ? "none known" : "");
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
                    o.burstCv == 1 ? "Poisson" : ("gamma gaps of CV " + group(o.burstCv, "%.3g")).c_str(),
                    o.rate, (long long)o.requests, (unsigned long long)o.seed);
    else
        std::printf("arrivals   the trace %s (%zu requests)\n", tracePath->c_str(), o.trace.size());
    printSim(*r, s->workload);
    std::printf("analytical steady state %s tokens/s, TTFT %.1f ms, TPOT %.2f ms at batch %lld\n",
                group(analytic.throughput).c_str(), analytic.ttftMs, analytic.tpotMs,
                (long long)analytic.batch);
    std::printf("cost       %s\n", costText(cost).c_str());
    return kOk;
}

namespace {
/// capacity --disaggregated's answer: the pools, the analytical and simulated rates, what it costs.
int reportDisaggCapacity(const DisaggCapacity& r, const Scenario& s, const DisaggCapacityOptions& o,
                         bool json) {
    const DisaggSplit& x = r.split;
    const DisaggMetrics& m = x.metrics;
    const Cluster& dc = s.decodeCluster ? *s.decodeCluster : s.cluster;
    if (json) {
        nlohmann::ordered_json j{{"scenario", s.name},
                                 {"mode", "disaggregated"},
                                 {"rate", o.rate},
                                 {"met", r.met},
                                 {"why", r.why},
                                 {"candidates", r.candidates},
                                 {"simulations", r.simulations},
                                 {"evaluations", r.evaluations}};
        if (m.valid) {
            j["plan"] = nlohmann::ordered_json::parse(toJson(x.plan, s.model));
            j["prefill"] = {
                {"nodes", x.plan.prefill.nodes}, {"gpus", m.prefillGpus}, {"gpu", s.cluster.gpu.name}};
            j["decode"] = {{"nodes", x.plan.decode.nodes}, {"gpus", m.decodeGpus}, {"gpu", dc.gpu.name}};
            j["analytical_requests_per_s"] = m.requestsPerS;
            j["bound"] = m.bound;
        }
        if (r.run) {
            j["slo"] = {{"met", r.slo.met},
                        {"ttft_ms", r.slo.ttftMs},
                        {"tpot_ms", r.slo.tpotMs},
                        {"binding", r.slo.binding}};
            j["cost"] = costJson(r.cost);
        }
        std::cout << jsonText(j) << "\n";
        return r.met ? kOk : kBadInput;
    }
    const Workload& w = s.workload;
    std::printf("the cheapest prefill and decode pools for %.4g requests/s under %s (%s)\n", o.rate,
                sloText(w).c_str(), w.name.c_str());
    std::printf("searched   %s per pool size, %lld evaluations; %d pairings of pool sizes reach the rate "
                "analytically, %d simulated (cheapest first)\n",
                o.search.searcher.c_str(), (long long)r.evaluations, r.candidates, r.simulations);
    if (m.valid) {
        const bool moe = s.model.moe.present();
        std::printf("prefill    %d nodes, %d %s: %s, batch %lld\n", x.plan.prefill.nodes, m.prefillGpus,
                    s.cluster.gpu.name.c_str(), degreesText(x.plan.prefill.plan, moe).c_str(),
                    (long long)m.prefill.batch);
        std::printf("decode     %d nodes, %d %s: %s, batch %lld\n", x.plan.decode.nodes, m.decodeGpus,
                    dc.gpu.name.c_str(), degreesText(x.plan.decode.plan, moe).c_str(),
                    (long long)m.decode.batch);
        std::printf("analytical %.2f requests/s at saturation, %s-bound\n", m.requestsPerS, m.bound.c_str());
    }
    if (r.run) {
        const double pct = w.sloPercentile > 0 ? w.sloPercentile : 0;
        std::printf("simulated  %s TTFT %.1f ms, TPOT %.2f ms at %.4g requests/s: %s\n",
                    pct > 0 ? ("p" + group(pct, "%.4g")).c_str() : "mean", r.slo.ttftMs, r.slo.tpotMs, o.rate,
                    r.slo.met ? "the SLOs are met" : "the SLOs are missed");
        std::printf("cost       %s\n", costText(r.cost).c_str());
    }
    if (!r.met) std::fprintf(stderr, "shardplan: %s\n", r.why.c_str());
    return r.met ? kOk : kBadInput;
}
} // namespace

int cmdCapacity(const std::vector<std::string>& argv) {
    ScenarioVerb start = startScenarioVerb(argv, "capacity");
    if (start.exit) return *start.exit;
    Args& a = start.args;
    const std::string& usage = start.usage;
    const std::optional<std::string>& scenarioPath = start.scenario;
    SimOptions so;
    if (auto e = readSimOptions(a, so); !e.empty()) return usageError(e, usage);
    const auto budget = a.integer("budget");
    const auto maxNodes = a.integer("max-nodes");
    if (!a.ok()) return usageError(a.error(), usage);
    if (a.flag("n-1") || a.flag("analytical"))
        return usageError("--n-1 and --analytical go with --fleet", usage);
    const bool maxRateMode = a.flag("max-rate");
    const auto planPath = a.option("plan");
    const auto searcher = a.option("searcher");
    if (a.flag("disaggregated") && (maxRateMode || planPath || a.option("gpus")))
        return usageError("--disaggregated goes with --rate (the scenario's clusters)", usage);
    if (maxRateMode == bool(a.option("rate"))) return usageError("give --rate R or --max-rate", usage);
    if (planPath && !maxRateMode) return usageError("--plan goes with --max-rate", usage);
    if (planPath && searcher) return usageError("give --plan or --searcher, not both", usage);
    if (planPath && a.option("gpus")) return usageError("--plan is for the scenario's own cluster", usage);
    if (searcher && !searcherError(*searcher).empty()) return usageError(searcherError(*searcher), usage);
    std::vector<std::string> gpus;
    if (auto list = a.option("gpus")) {
        std::stringstream ss(*list);
        for (std::string id; std::getline(ss, id, ',');) {
            if (id.empty()) continue;
            if (!findGpu(id)) return usageError("unknown GPU '" + id + "'; known: " + knownGpuIds(), usage);
            gpus.push_back(id);
        }
    }
    const auto s = loadScenarioOrReport(*scenarioPath);
    if (!s) return kBadInput;
    const Workload& w = s->workload;
    if (w.phase != Phase::Serving) {
        std::cerr << *scenarioPath << ": capacity serves requests: the workload's phase must be serving\n";
        return kBadInput;
    }
    if (w.ttftMs <= 0 && w.tpotMs <= 0) {
        std::cerr << *scenarioPath << ": capacity is the rate under the SLOs, and the workload sets none\n";
        return kBadInput;
    }
    std::optional<Plan> plan;
    if (planPath) {
        if (!(plan = loadPlanOrReport(*planPath))) return kBadInput;
        if (auto why = CostModel(s.value()).checkPlan(*plan)) {
            std::cerr << *planPath << ": plan does not fit the scenario: " << *why << "\n";
            return kBadInput;
        }
    }
    const bool json = a.flag("json");
    InterruptToStop interrupt;
    if (maxRateMode) {
        MaxRateOptions mo;
        mo.gpus = gpus;
        mo.plan = plan;
        mo.planName = planPath.value_or("");
        mo.searcher = searcher.value_or("");
        mo.budget = budget.value_or(500);
        mo.search.sim = so;
        if (!json)
            std::printf("the highest rate under %s (%s); each run lasts 20 request latencies, at least %lld "
                        "requests\n",
                        sloText(w).c_str(), w.name.c_str(), (long long)so.requests);
        auto rows = nlohmann::ordered_json::array();
        int code = kOk;
        // Each row as it comes, as a verb that stops at its first failure.
        maxRatePerGpu(s.value(), mo, {}, interrupt.token(), [&](const MaxRateRow& r) {
            code = reportMaxRateRow(r, s.value(), bool(searcher), json ? &rows : nullptr);
            return code == kOk;
        });
        if (code != kOk) return code;
        if (json)
            std::cout << jsonText(nlohmann::ordered_json{
                             {"scenario", s->name}, {"mode", "max-rate"}, {"rows", rows}})
                      << "\n";
        return kOk;
    }
    if (a.flag("disaggregated")) {
        DisaggCapacityOptions dco;
        dco.rate = *a.number("rate");
        dco.search.searcher = searcher.value_or("sa");
        dco.search.budget = budget.value_or(500);
        dco.search.seed = so.seed;
        dco.sim = so;
        const DisaggCapacity r = cheapestDisaggregated(s.value(), dco, interrupt.token());
        if (interrupt.interrupted()) {
            std::cerr << "shardplan: interrupted; no capacity answer\n";
            return kBadInput;
        }
        return reportDisaggCapacity(r, s.value(), dco, json);
    }
    CapacityOptions co;
    co.rate = *a.number("rate");
    co.gpus = gpus;
    co.maxNodes = int(maxNodes.value_or(4096));
    co.searcher = searcher.value_or("");
    co.budget = budget.value_or(500);
    co.sim = so;
    const auto rows = fewestGpus(s.value(), co, {}, interrupt.token());
    if (interrupt.interrupted()) {
        std::cerr
            << "shardplan: interrupted; no capacity answer (the search for the fewest GPUs did not finish)\n";
        return kBadInput;
    }
    if (json)
        std::cout << jsonText(fewestGpusJson(rows, s.value(), co.rate)) << "\n";
    else
        printFewestGpus(rows, s.value(), co.rate, so.requests);
    return kOk;
}

} // namespace sp::cli
