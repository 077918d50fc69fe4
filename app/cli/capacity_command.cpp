// shardplan capacity: the highest rate under the SLOs, the fewest GPUs of each type for a rate, and the
// cheapest disaggregated pools for one, on the serving simulation (core/sim/capacity.h); --fleet is in
// fleet_command.cpp.
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
                thousands(r.outputTokensPerS).c_str(), mr.rateAbove, mr.binding.c_str(), mr.why.c_str());
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
                    r.cost.priced ? thousands(r.cost.usdPerHour, "%.2f").c_str() : "-",
                    r.cost.priced ? thousands(r.cost.usdPerMillionTokens, "%.3f").c_str() : "-",
                    r.cost.powered ? thousands(r.cost.tokensPerSPerMegawatt).c_str() : "-",
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
                    pct > 0 ? ("p" + thousands(pct, "%.4g")).c_str() : "mean", r.slo.ttftMs, r.slo.tpotMs,
                    o.rate, r.slo.met ? "the SLOs are met" : "the SLOs are missed");
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
