// Disaggregated prefill/decode plans on the command line: evaluate, compare and search --disaggregated.
#include "disagg_commands.h"

#include "common.h"
#include "interrupt.h"
#include "metrics_json.h"

#include "core/cost/disagg.h"
#include "core/export/disagg_launch.h"
#include "core/io/formats.h"
#include "core/searchers/disagg_search.h"

#include <cmath>
#include <cstdio>
#include <iostream>
#include <optional>

namespace sp::cli {

namespace {

nlohmann::ordered_json disaggJson(const DisaggMetrics& m) {
    nlohmann::ordered_json j;
    j["disaggregated"] = true;
    j["valid"] = m.valid;
    j["feasible"] = m.feasible;
    j["violations"] = m.violations;
    j["throughput_tokens_per_s"] = m.throughput;
    j["throughput_per_gpu"] = m.throughputPerGpu;
    j["ttft_ms"] = m.ttftMs;
    j["tpot_ms"] = m.tpotMs;
    j["requests_per_s"] = m.requestsPerS;
    j["bound"] = m.bound;
    j["prefill"] = {{"gpus", m.prefillGpus},
                    {"instances", m.prefillInstances},
                    {"requests_per_s", m.prefillRequestsPerS},
                    {"idle_share", m.prefillIdle},
                    {"metrics", metricsJson(m.prefill)}};
    j["decode"] = {{"gpus", m.decodeGpus},
                   {"instances", m.decodeInstances},
                   {"requests_per_s", m.decodeRequestsPerS},
                   {"idle_share", m.decodeIdle},
                   {"metrics", metricsJson(m.decode)}};
    j["network_requests_per_s"] = m.networkRequestsPerS;
    j["kv_bytes_per_prompt"] = m.kvBytesPerPrompt;
    j["kv_transfer_ms"] = m.transferMs;
    j["queue_ms"] = m.queueMs;
    return j;
}

std::string nodesText(int n) {
    return std::to_string(n) + (n == 1 ? " node" : " nodes");
}

void printDisagg(const Scenario& s, const DisaggPlan& p, const DisaggMetrics& m) {
    const bool moe = s.model.moe.present();
    // Two clusters: each pool's GPU named.
    const auto gpus = [&](int n, const Cluster& c) {
        return std::to_string(n) + (s.decodeCluster ? " " + c.gpu.name : std::string(" GPUs"));
    };
    std::printf("prefill    %d nodes, %s, %d instances: %s, batch %lld\n", p.prefill.nodes,
                gpus(m.prefillGpus, s.cluster).c_str(), m.prefillInstances,
                degreesText(p.prefill.plan, moe).c_str(), (long long)m.prefill.batch);
    std::printf("decode     %s, %s, %d instances: %s, batch %lld\n", nodesText(p.decode.nodes).c_str(),
                gpus(m.decodeGpus, s.decodeCluster ? *s.decodeCluster : s.cluster).c_str(), m.decodeInstances,
                degreesText(p.decode.plan, moe).c_str(), (long long)m.decode.batch);
    std::printf("feasible   %s\n", m.feasible ? "yes" : "no");
    for (const auto& v : m.violations) std::printf("  violation: %s\n", v.c_str());
    if (!m.valid) return;
    std::printf("throughput %.0f tokens/s (%.1f per GPU), %.2f requests/s, %s-bound\n", m.throughput,
                m.throughputPerGpu, m.requestsPerS, m.bound.c_str());
    std::printf("rates      prefill %.2f, decode %.2f, network %.2f requests/s; idle: prefill %.0f%%, decode "
                "%.0f%%\n",
                m.prefillRequestsPerS, m.decodeRequestsPerS, m.networkRequestsPerS, 100 * m.prefillIdle,
                100 * m.decodeIdle);
    std::printf("latency    TTFT %.1f ms (prefill %.1f + KV transfer %.1f + queue %.1f), TPOT %.2f ms\n",
                m.ttftMs, m.prefill.ttftMs - m.transferMs, m.transferMs, m.queueMs, m.tpotMs);
    if (m.relayoutMs > 0)
        std::printf("           the transfer re-lays the KV heads from TP %d to TP %d: %.3f ms of it\n",
                    p.prefill.plan.degrees.tp, p.decode.plan.degrees.tp, m.relayoutMs);
    std::printf("KV         %.1f MB per prompt\n", m.kvBytesPerPrompt / 1e6);
    std::printf("memory     prefill %.1f of %.1f GiB per GPU, decode %.1f of %.1f\n",
                m.prefill.memoryPerGpuGiB, m.prefill.capacityGiB, m.decode.memoryPerGpuGiB,
                m.decode.capacityGiB);
}

/// One side of a comparison: an aggregated plan (the scenario's cost model) or a disaggregated one.
struct Side {
    std::string file;
    bool disaggregated = false;
    Plan plan;
    DisaggPlan dplan;
    Metrics agg;
    DisaggMetrics dis;
    bool feasible() const { return disaggregated ? dis.feasible : agg.feasible; }
    double throughput() const { return disaggregated ? dis.throughput : agg.throughput; }
    double perGpu() const { return disaggregated ? dis.throughputPerGpu : agg.throughputPerGpu; }
    double ttft() const { return disaggregated ? dis.ttftMs : agg.ttftMs; }
    double tpot() const { return disaggregated ? dis.tpotMs : agg.tpotMs; }
    const std::vector<std::string>& violations() const {
        return disaggregated ? dis.violations : agg.violations;
    }
};

} // namespace

int evaluateDisaggregated(const Scenario& s, const std::string& path, bool json, double load) {
    auto p = loadDisaggPlan(path, &s);
    if (!p) {
        std::cerr << p.error().str() << "\n";
        return kBadInput;
    }
    DisaggOptions o;
    o.load = load;
    const DisaggModel dm(s, o);
    if (auto why = dm.checkScenario()) {
        std::cerr << path << ": " << *why << "\n";
        return kBadInput;
    }
    const DisaggMetrics m = dm.evaluate(p.value());
    if (!m.valid) {
        std::cerr << path << ": plan does not fit the scenario: " << m.violation << "\n";
        return kBadInput;
    }
    if (json) {
        nlohmann::ordered_json j = disaggJson(m);
        j["cost"] = costJson(poolsCost(s, m, m.throughput));
        j["plan"] = nlohmann::ordered_json::parse(toJson(p.value(), s.model));
        std::cout << jsonText(j) << "\n";
        return kOk;
    }
    std::printf("scenario   %s\nplan       %s: disaggregated prefill/decode\n", s.name.c_str(), path.c_str());
    printDisagg(s, p.value(), m);
    std::printf("cost       %s\n", costText(poolsCost(s, m, m.throughput)).c_str());
    return kOk;
}

int compareDisaggregated(const Scenario& s, const std::vector<std::string>& files, bool json) {
    const CostModel model(s);
    const DisaggModel dm(s);
    std::vector<Side> sides;
    for (const auto& f : files) {
        Side side;
        side.file = f;
        auto dis = isDisaggregatedPlan(f);
        if (!dis) {
            std::cerr << dis.error().str() << "\n";
            return kBadInput;
        }
        side.disaggregated = dis.value();
        if (side.disaggregated) {
            auto p = loadDisaggPlan(f, &s);
            if (!p) {
                std::cerr << p.error().str() << "\n";
                return kBadInput;
            }
            if (auto why = dm.checkScenario()) {
                std::cerr << f << ": " << *why << "\n";
                return kBadInput;
            }
            side.dplan = p.value();
            side.dis = dm.evaluate(side.dplan);
            if (!side.dis.valid) {
                std::cerr << f << ": plan does not fit the scenario: " << side.dis.violation << "\n";
                return kBadInput;
            }
        } else {
            auto p = loadPlan(f);
            if (!p) {
                std::cerr << p.error().str() << "\n";
                return kBadInput;
            }
            if (auto why = model.checkPlan(p.value())) {
                std::cerr << f << ": plan does not fit the scenario: " << *why << "\n";
                return kBadInput;
            }
            side.plan = p.value();
            side.agg = model.evaluate(side.plan);
        }
        sides.push_back(std::move(side));
    }
    struct Row {
        const char* key;
        const char* label;
        double a, b;
    };
    const Side &A = sides[0], &B = sides[1];
    // What each side's GPUs cost per million output tokens (a disaggregated side's pools at their own
    // clusters' prices: with a decode_cluster, per GPU compares unlike GPUs); 0 unpriced.
    const auto usdPerM = [&](const Side& x) {
        const ServingCost c = x.disaggregated ? poolsCost(s, x.dis, x.dis.throughput)
                                              : servingCost(s.cluster, s.gpus(), x.agg.throughput);
        return c.priced ? c.usdPerMillionTokens : 0.0;
    };
    const std::vector<Row> rows{
        {"throughput_tokens_per_s", "throughput tokens/s", A.throughput(), B.throughput()},
        {"throughput_per_gpu", "throughput per GPU", A.perGpu(), B.perGpu()},
        {"usd_per_million_tokens", "$ per M output tokens", usdPerM(A), usdPerM(B)},
        {"ttft_ms", "TTFT ms", A.ttft(), B.ttft()},
        {"tpot_ms", "TPOT ms", A.tpot(), B.tpot()},
    };
    const auto ratio = [](double x, double y) { return x != 0 ? y / x : std::nan(""); };
    if (json) {
        nlohmann::ordered_json j;
        for (int k = 0; k < 2; ++k) {
            const Side& x = sides[size_t(k)];
            nlohmann::ordered_json side;
            side["file"] = x.file;
            side["disaggregated"] = x.disaggregated;
            side["plan"] = nlohmann::ordered_json::parse(x.disaggregated ? toJson(x.dplan, s.model)
                                                                         : toJson(x.plan, s.model));
            side["metrics"] = x.disaggregated ? disaggJson(x.dis) : metricsJson(x.agg);
            j[k == 0 ? "a" : "b"] = side;
        }
        nlohmann::ordered_json ratios;
        for (const Row& r : rows) {
            const double q = ratio(r.a, r.b);
            ratios[r.key] = std::isfinite(q) ? nlohmann::ordered_json(q) : nlohmann::ordered_json(nullptr);
        }
        j["ratios"] = ratios;
        std::cout << jsonText(j) << "\n";
        return kOk;
    }
    const bool moe = s.model.moe.present();
    std::printf("scenario  %s\n", s.name.c_str());
    for (int k = 0; k < 2; ++k) {
        const Side& x = sides[size_t(k)];
        if (x.disaggregated)
            std::printf("%c         %s: disaggregated, prefill %d nodes (%s), decode %d nodes (%s)\n",
                        'A' + k, x.file.c_str(), x.dplan.prefill.nodes,
                        degreesText(x.dplan.prefill.plan, moe).c_str(), x.dplan.decode.nodes,
                        degreesText(x.dplan.decode.plan, moe).c_str());
        else
            std::printf("%c         %s: aggregated, %s\n", 'A' + k, x.file.c_str(),
                        degreesText(x.plan, moe).c_str());
    }
    std::printf("\n%-22s %14s %14s %10s\n", "", "A", "B", "B/A");
    for (const Row& r : rows) {
        const double q = ratio(r.a, r.b);
        char cell[32] = "-";
        if (std::isfinite(q)) std::snprintf(cell, sizeof cell, "%.3f", q);
        std::printf("%-22s %14.6g %14.6g %10s\n", r.label, r.a, r.b, cell);
    }
    std::printf("%-22s %14s %14s\n", "feasible", A.feasible() ? "yes" : "no", B.feasible() ? "yes" : "no");
    for (int k = 0; k < 2; ++k)
        for (const auto& v : sides[size_t(k)].violations())
            std::printf("  %c violation: %s\n", k == 0 ? 'A' : 'B', v.c_str());
    for (int k = 0; k < 2; ++k) {
        const Side& x = sides[size_t(k)];
        if (!x.disaggregated) continue;
        std::printf(
            "\n%c: %s-bound; prefill %.2f, decode %.2f, network %.2f requests/s; KV transfer %.1f ms\n",
            'A' + k, x.dis.bound.c_str(), x.dis.prefillRequestsPerS, x.dis.decodeRequestsPerS,
            x.dis.networkRequestsPerS, x.dis.transferMs);
    }
    return kOk;
}

int exportDisaggregated(const Scenario& s, const std::string& planPath,
                        const std::optional<std::string>& format, const ExportOptions& options,
                        const std::optional<std::string>& out, const std::optional<std::string>& outDir) {
    auto p = loadDisaggPlan(planPath, &s);
    if (!p) {
        std::cerr << p.error().str() << "\n";
        return kBadInput;
    }
    std::string text;
    if (format) {
        text = *format == "json" ? toJson(p.value(), s.model) : toYaml(p.value(), s.model);
    } else {
        auto launch = disaggregatedLaunch(s, p.value(), options);
        if (!launch) {
            std::cerr << planPath << ": " << launch.error().str() << "\n";
            return kBadInput;
        }
        for (const LaunchCommand* lc : {&launch->prefill, &launch->decode})
            if (lc->adapted) std::cerr << "shardplan: " << lc->notes.front() << "\n";
        if (outDir) {
            auto written = writeExportFiles(*outDir, launch->files(toYaml(launch->prefill.plan, s.model),
                                                                   toYaml(launch->decode.plan, s.model)));
            if (!written) {
                std::cerr << written.error().str() << "\n";
                return kBadInput;
            }
            for (const auto& path : written.value()) std::cout << path << "\n";
            return kOk;
        }
        text = launch->text();
    }
    if (out) {
        if (auto w = writeFileAtomic(*out, text); !w) {
            std::cerr << w.error().str() << "\n";
            return kBadInput;
        }
    } else {
        std::cout << text;
    }
    return kOk;
}

int searchDisaggregated(const Scenario& s, const std::string& scenarioPath, const DisaggSearchArgs& a) {
    DisaggSearchOptions o;
    o.searcher = a.searcher;
    if (a.budget > 0) o.budget = a.budget;
    o.seconds = a.seconds;
    o.seed = a.seed;
    o.threads = a.threads;
    o.warm = a.warm;
    DisaggSearchResult r;
    {
        InterruptToStop interrupt;
        r = searchDisaggregated(s, o, interrupt.token());
    }
    if (r.refused || !r.found) {
        std::cerr << "shardplan: " << r.message << "\n";
        return kBadInput;
    }
    const DisaggSplit& best = r.best;
    if (!a.out.empty()) {
        const bool isJson = a.out.size() >= 5 && a.out.compare(a.out.size() - 5, 5, ".json") == 0;
        const std::string text = isJson ? toJson(best.plan, s.model) : toYaml(best.plan, s.model);
        if (auto w = writeFileAtomic(a.out, text); !w) {
            std::cerr << w.error().str() << "\n";
            return kBadInput;
        }
    }
    if (a.json) {
        nlohmann::ordered_json j;
        j["plan"] = nlohmann::ordered_json::parse(toJson(best.plan, s.model));
        j["metrics"] = disaggJson(best.metrics);
        j["cost"] = costJson(poolsCost(s, best.metrics, best.metrics.throughput));
        auto& sp = j["splits"] = nlohmann::ordered_json::array();
        for (const DisaggSplit& x : r.splits)
            sp.push_back({{"prefill_nodes", x.plan.prefill.nodes},
                          {"decode_nodes", x.plan.decode.nodes},
                          {"feasible", x.metrics.feasible},
                          {"throughput_per_gpu", x.metrics.throughputPerGpu},
                          {"usd_per_million_tokens", x.metrics.usdPerMTokens > 0
                                                         ? nlohmann::ordered_json(x.metrics.usdPerMTokens)
                                                         : nlohmann::ordered_json(nullptr)},
                          {"bound", x.metrics.bound}});
        j["evaluations"] = r.evaluations;
        j["searches"] = r.searches;
        j["seconds"] = r.seconds;
        j["searcher"] = o.searcher;
        j["seed"] = o.seed;
        j["stopped"] = r.stopped;
        j["message"] =
            r.message.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(r.message);
        std::cout << jsonText(j) << "\n";
    } else {
        std::printf("scenario   %s (%s)\n", s.name.c_str(), scenarioPath.c_str());
        std::printf("searcher   %s per pool, seed %llu: %d searches, %lld evaluations in %.2f s%s\n",
                    o.searcher.c_str(), (unsigned long long)o.seed, r.searches, (long long)r.evaluations,
                    r.seconds, r.stopped ? " (stopped)" : "");
        // Two clusters: pools of different GPUs, compared by their cost (each prefill pool with the decode
        // pool that serves it at the least).
        const bool byCost = s.decodeCluster && best.metrics.usdPerMTokens > 0;
        std::printf("splits     ");
        for (const DisaggSplit& x : r.splits)
            if (byCost)
                std::printf("%d+%d $%.3f%s  ", x.plan.prefill.nodes, x.plan.decode.nodes,
                            x.metrics.usdPerMTokens, x.metrics.feasible ? "" : "(infeasible)");
            else
                std::printf("%d+%d %.0f%s  ", x.plan.prefill.nodes, x.plan.decode.nodes,
                            x.metrics.throughputPerGpu, x.metrics.feasible ? "" : "(infeasible)");
        std::printf(byCost ? "per million output tokens (prefill + decode nodes)\n" : "tokens/s per GPU\n");
        printDisagg(s, best.plan, best.metrics);
        std::printf("cost       %s\n", costText(poolsCost(s, best.metrics, best.metrics.throughput)).c_str());
        if (!a.out.empty()) std::printf("written    %s\n", a.out.c_str());
    }
    if (!r.message.empty()) std::cerr << "shardplan: " << r.message << "\n";
    return best.metrics.feasible ? kOk : kBadInput;
}

} // namespace sp::cli
