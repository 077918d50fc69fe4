// shardplan pareto: throughput per GPU against tokens/s per user, each point a plan
// (core/searchers/pareto.h).
#include "pareto_command.h"

#include "args.h"
#include "common.h"
#include "interrupt.h"
#include "metrics_json.h"
#include "search_util.h"
#include "verbs.h"

#include "core/io/formats.h"
#include "core/searchers/disagg_search.h"
#include "core/searchers/pareto.h"
#include "core/searchers/registry.h"

#include <cstdio>
#include <iostream>
#include <optional>
#include <unistd.h>

namespace sp::cli {

namespace {

constexpr int kMaxPoints = 256; // far more than a chart can show apart; each point is one search

/// The live progress line on stderr: rewritten in place on a terminal; elsewhere nothing.
class ParetoProgressLine final : public ParetoObserver {
public:
    ParetoProgressLine() : m_tty(isatty(fileno(stderr))) {}
    ~ParetoProgressLine() override {
        if (m_tty && m_written) std::fprintf(stderr, "\n");
    }
    void targetsChosen(const std::vector<double>& t) override { m_total = int(t.size()); }
    void pointFound(const ParetoPoint&, bool megatron, int done, int) override {
        if (!megatron) m_done = done;
    }
    void searchProgress(int target, const Progress& p) override {
        if (!m_tty) return;
        const char* what = target == -1 ? "unconstrained" : target == -2 ? "lowest TPOT" : "target";
        std::fprintf(stderr, "\rpareto: %s search, %d of %d targets done, %lld evaluations in this one   ",
                     what, m_done, m_total, (long long)p.evaluations);
        std::fflush(stderr);
        m_written = true;
    }

private:
    bool m_tty;
    bool m_written = false;
    int m_done = 0, m_total = 0;
};

nlohmann::ordered_json pointJson(const ParetoPoint& p, const Scenario& s) {
    const Model& model = s.model;
    nlohmann::ordered_json j;
    j["user_tokens_per_s"] = num(p.userTokensPerS);
    j["throughput_per_gpu"] = p.throughputPerGpu;
    j["tpot_ms"] = p.tpotMs;
    j["ttft_ms"] = p.ttftMs;
    j["target_tpot_ms"] = p.targetTpotMs > 0 ? nlohmann::ordered_json(p.targetTpotMs) : nullptr;
    j["batch"] = p.metrics.batch;
    j["family"] = p.family;
    j["searcher"] = p.searcher;
    j["plan"] = nlohmann::ordered_json::parse(toJson(p.plan, model));
    j["metrics"] = metricsJson(p.metrics);
    // Per GPU: a frontier point's dollars per million tokens and tokens/s per MW follow its throughput per
    // GPU.
    j["cost"] = costJson(servingCost(s.cluster, 1, p.throughputPerGpu));
    return j;
}

void printPoints(const char* title, const std::vector<ParetoPoint>& points, const Cluster& cluster,
                 bool moe) {
    std::printf("%s (%zu point%s)\n", title, points.size(), points.size() == 1 ? "" : "s");
    std::printf("  %10s %9s %9s %11s %9s %7s  %-24s %s\n", "tok/s/user", "TPOT ms", "TTFT ms", "tok/s/GPU",
                "$/M tok", "batch", "family", "degrees");
    for (const auto& p : points) {
        const ServingCost c = servingCost(cluster, 1, p.throughputPerGpu);
        char usd[32] = "-";
        if (c.priced && c.usdPerMillionTokens > 0)
            std::snprintf(usd, sizeof usd, "%.3f", c.usdPerMillionTokens);
        std::printf("  %10.2f %9.2f %9.1f %11.1f %9s %7lld  %-24s %s\n", p.userTokensPerS, p.tpotMs, p.ttftMs,
                    p.throughputPerGpu, usd, (long long)p.metrics.batch, p.family.c_str(),
                    degreesText(p.plan, moe).c_str());
    }
}

} // namespace

int cmdPareto(const std::vector<std::string>& argv) {
    ScenarioVerb start = startScenarioVerb(argv, "pareto");
    if (start.exit) return *start.exit;
    Args& a = start.args;
    const std::string& usage = start.usage;
    const std::optional<std::string>& scenarioPath = start.scenario;
    ParetoOptions o;
    if (auto s = a.option("searcher")) o.searcher = *s;
    if (const std::string e = searcherError(o.searcher); !e.empty()) return usageError(e, usage);
    const auto points = a.integer("points");
    const auto budget = a.integer("budget");
    const auto seed = a.integer("seed");
    const auto threads = a.integer("threads");
    const auto seconds = a.number("seconds");
    const auto atTpot = a.number("at-tpot");
    const auto atUser = a.number("at-user-tps");
    const auto poolBudget = a.integer("pool-budget");
    if (!a.ok()) return usageError(a.error(), usage);
    const bool disaggregated = a.flag("disaggregated");
    if (poolBudget && !disaggregated) return usageError("--pool-budget goes with --disaggregated", usage);
    if (poolBudget && *poolBudget < 1) return usageError("--pool-budget must be at least 1", usage);
    if (disaggregated && (atTpot || atUser))
        return usageError("--at-tpot/--at-user-tps read the aggregated frontier; drop --disaggregated",
                          usage);
    if (points && (*points < 2 || *points > kMaxPoints))
        return usageError("--points must be from 2 to " + std::to_string(kMaxPoints) + ", got " +
                              std::to_string(*points),
                          usage);
    if (atTpot && atUser) return usageError("give --at-tpot or --at-user-tps, not both", usage);
    if (atTpot && !(*atTpot > 0)) return usageError("--at-tpot must be a positive number of ms", usage);
    if (atUser && !(*atUser > 0)) return usageError("--at-user-tps must be a positive tokens/s", usage);
    if (points) o.points = int(*points);
    if (budget) o.budget = *budget;
    if (seed) o.seed = uint64_t(*seed);
    if (threads) o.threads = int(*threads);
    if (seconds) o.seconds = *seconds;
    o.warm = !a.flag("no-warm-start");

    const auto scenario = loadScenarioOrReport(*scenarioPath);
    if (!scenario) return kBadInput;
    const bool moe = scenario->model.moe.present();

    ParetoResult r;
    {
        ParetoProgressLine line;
        InterruptToStop interrupt;
        r = paretoFront(*scenario, o, &line, interrupt.token());
    }
    if (r.refused) {
        std::cerr << "shardplan: " << r.message << "\n";
        return kBadInput;
    }

    // The disaggregated frontier at the same TPOT targets, each point's best split beside the aggregated
    // frontier's best plan at that TPOT (core/searchers/disagg_search.h).
    std::vector<DisaggFrontierPoint> dis;
    DisaggFrontierTotals disTotals;
    if (disaggregated) {
        DisaggSearchOptions d;
        d.searcher = o.searcher;
        d.budget = poolBudget.value_or(200);
        d.seed = o.seed;
        d.threads = o.threads;
        d.warm = o.warm;
        InterruptToStop interrupt;
        dis = disaggregatedFrontier(*scenario, r.targetsMs, d, interrupt.token(), &disTotals);
    }
    const auto aggregatedAt = [&](double tpotMs) {
        const ParetoPoint* q = pointAtTpot(r.frontier, tpotMs * (1 + 1e-9));
        return q ? q->throughputPerGpu : 0.0;
    };
    // The aggregated frontier's best at a TPOT, per million output tokens on the scenario's cluster (0: none
    // or unpriced).
    const auto aggregatedUsd = [&](double tpotMs) {
        const double perGpu = aggregatedAt(tpotMs);
        const ServingCost c = servingCost(scenario->cluster, 1, perGpu);
        return perGpu > 0 && c.priced ? c.usdPerMillionTokens : 0.0;
    };

    // The interactivity asked for, as a TPOT in ms; 0: none.
    const double atMs = atTpot ? *atTpot : atUser ? 1000.0 / *atUser : 0.0;
    const bool at = atMs > 0;
    const ParetoPoint* chosen = at ? pointAtTpot(r.frontier, atMs) : nullptr;

    if (auto csv = a.option("csv")) {
        ParetoCsvExtras extras;
        extras.scenario = scenario->name;
        extras.model = &scenario->model;
        extras.disaggregated = dis;
        extras.cluster = &scenario->cluster;
        if (auto w = writeFileAtomic(*csv, paretoCsv(r, extras)); !w) {
            std::cerr << w.error().str() << "\n";
            return kBadInput;
        }
    }
    if (a.flag("json")) {
        nlohmann::ordered_json j;
        j["scenario"] = scenario->name;
        j["searcher"] = o.searcher;
        j["points"] = o.points;
        j["budget"] = o.budget;
        j["seed"] = o.seed;
        j["ttft_slo_ms"] =
            scenario->workload.ttftMs > 0 ? nlohmann::ordered_json(scenario->workload.ttftMs) : nullptr;
        j["min_tpot_ms"] = r.minTpotMs;
        j["max_tpot_ms"] = r.maxTpotMs;
        j["targets_tpot_ms"] = r.targetsMs;
        j["searches"] = r.searches;
        j["evaluations"] = r.evaluations;
        j["seconds"] = r.seconds;
        j["cpu_seconds"] = r.cpuSeconds;
        j["stopped"] = r.stopped;
        j["message"] =
            r.message.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(r.message);
        auto& f = j["frontier"] = nlohmann::ordered_json::array();
        for (const auto& p : r.frontier) f.push_back(pointJson(p, *scenario));
        auto& m = j["megatron"] = nlohmann::ordered_json::array();
        for (const auto& p : r.megatron) m.push_back(pointJson(p, *scenario));
        if (disaggregated) {
            j["disaggregated_searches"] = disTotals.searches;
            j["disaggregated_evaluations"] = disTotals.evaluations;
            j["disaggregated_seconds"] = disTotals.seconds;
            auto& dj = j["disaggregated"] = nlohmann::ordered_json::array();
            for (const auto& p : dis)
                dj.push_back(
                    {{"target_tpot_ms", p.targetTpotMs},
                     {"tpot_ms", p.split.metrics.tpotMs},
                     {"ttft_ms", p.split.metrics.ttftMs},
                     {"user_tokens_per_s", p.userTokensPerS},
                     {"throughput_per_gpu", p.throughputPerGpu},
                     {"aggregated_per_gpu", aggregatedAt(p.targetTpotMs)},
                     {"usd_per_million_tokens", p.usdPerMTokens > 0 ? nlohmann::ordered_json(p.usdPerMTokens)
                                                                    : nlohmann::ordered_json(nullptr)},
                     {"aggregated_usd_per_million_tokens",
                      aggregatedUsd(p.targetTpotMs) > 0
                          ? nlohmann::ordered_json(aggregatedUsd(p.targetTpotMs))
                          : nlohmann::ordered_json(nullptr)},
                     {"prefill_nodes", p.split.plan.prefill.nodes},
                     {"decode_nodes", p.split.plan.decode.nodes},
                     {"bound", p.split.metrics.bound},
                     {"plan", nlohmann::ordered_json::parse(toJson(p.split.plan, scenario->model))}});
        }
        if (at) {
            j["at_tpot_ms"] = atMs;
            j["at"] = chosen ? pointJson(*chosen, *scenario) : nlohmann::ordered_json(nullptr);
        }
        std::cout << jsonText(j) << "\n";
    } else {
        std::printf("scenario    %s (%s)\n", scenario->name.c_str(), scenarioPath->c_str());
        std::printf(
            "sweep       %s, seed %llu, %zu TPOT targets from %.2f to %.2f ms under TTFT %s: %d "
            "searches, %lld evaluations in %.2f s (CPU %.2f s)%s\n",
            o.searcher.c_str(), (unsigned long long)o.seed, r.targetsMs.size(), r.minTpotMs, r.maxTpotMs,
            scenario->workload.ttftMs > 0 ? (std::to_string(int(scenario->workload.ttftMs)) + " ms").c_str()
                                          : "unlimited",
            r.searches, (long long)r.evaluations, r.seconds, r.cpuSeconds, r.stopped ? " (stopped)" : "");
        if (disaggregated)
            std::printf(
                "splits      %d pool searches, %lld evaluations in %.2f s (the disaggregated frontier)\n",
                disTotals.searches, (long long)disTotals.evaluations, disTotals.seconds);
        if (!at) {
            printPoints("frontier", r.frontier, scenario->cluster, moe);
            printPoints("megatron", r.megatron, scenario->cluster, moe);
            if (disaggregated && scenario->decodeCluster) {
                // Pools on two GPU types: compared by cost with the aggregated frontier on the prefill
                // cluster.
                std::printf(
                    "\ndisaggregated over two clusters (best split per TPOT target, cheapest per million "
                    "output tokens; aggregated: the frontier's best under the same target on %s)\n  "
                    "%10s %10s %12s %12s %8s  %s\n",
                    scenario->cluster.gpu.name.c_str(), "user tok/s", "TPOT ms", "$/M tokens", "aggregated",
                    "saving", "split");
                for (const auto& p : dis) {
                    const double agg = aggregatedUsd(p.targetTpotMs);
                    char gain[32] = "-";
                    if (agg > 0 && p.usdPerMTokens > 0)
                        std::snprintf(gain, sizeof gain, "%.2fx", agg / p.usdPerMTokens);
                    std::printf("  %10.2f %10.2f %12.3f %12.3f %8s  %d+%d nodes, %s-bound\n",
                                p.userTokensPerS, p.split.metrics.tpotMs, p.usdPerMTokens, agg, gain,
                                p.split.plan.prefill.nodes, p.split.plan.decode.nodes,
                                p.split.metrics.bound.c_str());
                }
            } else if (disaggregated) {
                std::printf(
                    "\ndisaggregated (best split per TPOT target; aggregated: the frontier's best under the "
                    "same target)\n  %10s %10s %12s %12s %8s  %s\n",
                    "user tok/s", "TPOT ms", "tok/s/GPU", "aggregated", "gain", "split");
                for (const auto& p : dis) {
                    const double agg = aggregatedAt(p.targetTpotMs);
                    char gain[32] = "-";
                    if (agg > 0) std::snprintf(gain, sizeof gain, "%.2fx", p.throughputPerGpu / agg);
                    std::printf("  %10.2f %10.2f %12.1f %12.1f %8s  %d+%d nodes, %s-bound\n",
                                p.userTokensPerS, p.split.metrics.tpotMs, p.throughputPerGpu, agg, gain,
                                p.split.plan.prefill.nodes, p.split.plan.decode.nodes,
                                p.split.metrics.bound.c_str());
                }
            }
        } else if (chosen) {
            std::printf("at TPOT <= %.2f ms (%.2f tokens/s per user): %s, %s\n", atMs, 1000.0 / atMs,
                        chosen->family.c_str(), degreesText(chosen->plan, moe).c_str());
            std::printf("throughput  %.1f tokens/s per GPU (%.1f total), %.2f tokens/s per user\n",
                        chosen->throughputPerGpu, chosen->metrics.throughput, chosen->userTokensPerS);
            std::printf("latency     TTFT %.1f ms, TPOT %.2f ms, batch %lld per replica\n", chosen->ttftMs,
                        chosen->tpotMs, (long long)chosen->metrics.batch);
            std::printf("plan file\n%s", toYaml(chosen->plan, scenario->model).c_str());
        }
    }
    if (!r.message.empty()) std::cerr << "shardplan: " << r.message << "\n";
    if (r.frontier.empty()) return kBadInput;
    if (at && !chosen) {
        char buf[200];
        std::snprintf(buf, sizeof buf, "no frontier point has TPOT <= %.2f ms (the lowest is %.2f ms)", atMs,
                      r.frontier.back().tpotMs);
        std::cerr << "shardplan: " << buf << "\n";
        return kBadInput;
    }
    return kOk;
}

} // namespace sp::cli
