// shardplan search, compare and bench: the searchers of core/search on the command line.
#include "search_commands.h"

#include "args.h"
#include "common.h"
#include "disagg_commands.h"
#include "interrupt.h"
#include "metrics_json.h"
#include "search_util.h"
#include "verbs.h"

#include "core/analysis/why.h"
#include "core/cost/validity.h"
#include "core/io/formats.h"
#include "core/searchers/registry.h"
#include "core/sim/capacity.h"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <iostream>
#include <optional>
#include <sstream>
#include <thread>
#include <unistd.h>

namespace sp::cli {

namespace {

constexpr int64_t kDefaultBudget = 2000;

/// The live progress line on stderr: rewritten in place on a terminal; elsewhere only the final state.
class ProgressLine : public Observer {
public:
    explicit ProgressLine(std::string searcher)
        : m_searcher(std::move(searcher)), m_tty(isatty(fileno(stderr))) {}
    void progress(const Progress& p) override {
        if ((!m_tty && !p.final) || (p.final && p.evaluations == 0)) return;
        const double rate = p.seconds > 0 ? double(p.evaluations) / p.seconds : 0;
        std::fprintf(stderr, "\r%s: %lld evaluations, %.0f evals/s, best %.1f tokens/s   %s",
                     m_searcher.c_str(), (long long)p.evaluations, rate, p.bestThroughput,
                     p.final ? "\n" : "");
        std::fflush(stderr);
    }

private:
    std::string m_searcher;
    bool m_tty;
};

std::string opName(Op op) {
    return std::string(op >= Op::MoeNorms ? "moe." : "") + std::string(kOpNames[int(op)]);
}

std::string meshText(const Plan& p) {
    std::string s;
    for (Axis a : p.meshOrder) {
        if (!s.empty()) s.push_back(',');
        s.append(kAxisNames[int(a)]);
    }
    return s;
}

std::string degreesAndMesh(const Plan& p, bool moe) {
    return degreesText(p, moe) + ", mesh " + meshText(p);
}

std::string operatorsText(const Plan& p, const Model& m) {
    std::vector<std::string> parts;
    for (int o = 0; o < kOpCount; ++o)
        if (opRelevant(m, Op(o)))
            parts.push_back(opName(Op(o)) + " " + std::string(choiceNames(Op(o))[p.choices[o]]));
    return joined(parts);
}

void printMetrics(const Scenario& s, const Metrics& m) {
    std::printf("feasible    %s\n", m.feasible ? "yes" : "no");
    for (const auto& v : m.violations) std::printf("  violation: %s\n", v.c_str());
    std::printf("throughput  %.1f tokens/s (%.1f per GPU), %.1f%% of the roofline bound\n", m.throughput,
                m.throughputPerGpu, 100.0 * m.rooflineFraction);
    std::printf("latency     %s, TPOT %.2f ms, batch %lld per replica\n", ttftText(m).c_str(), m.tpotMs,
                (long long)m.batch);
    std::printf("memory      %.1f of %.1f GiB per GPU\n", m.memoryPerGpuGiB, m.capacityGiB);
    std::printf("cost        %s\n", costText(planCost(s, m), tokensWord(s)).c_str());
}

bool endsWith(const std::string& s, const std::string& suffix) {
    return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

} // namespace

// -----------------------------------------------------------------------------------------------------------------

int cmdSearch(const std::vector<std::string>& argv) {
    ScenarioVerb start = startScenarioVerb(argv, "search");
    if (start.exit) return *start.exit;
    Args& a = start.args;
    const std::string& usage = start.usage;
    const std::optional<std::string>& scenarioPath = start.scenario;
    const bool disaggregated = a.flag("disaggregated");
    const auto searcherName = disaggregated ? std::optional<std::string>(a.option("searcher").value_or("sa"))
                                            : a.option("searcher");
    if (!searcherName) return usageError("--searcher is required (" + joined(searcherNames()) + ")", usage);
    auto searcher = makeSearcher(*searcherName);
    if (!searcher) return usageError(searcherError(*searcherName), usage);
    const auto budget = a.integer("budget");
    const auto seconds = a.number("seconds");
    const auto seed = a.integer("seed");
    const auto threads = a.integer("threads");
    const auto check = a.integer("check");
    const auto requests = a.integer("requests");
    if (!a.ok()) return usageError(a.error(), usage);
    if (budget && *budget < 1) return usageError("--budget must be at least 1", usage);
    if (seconds && !(*seconds > 0)) return usageError("--seconds must be positive", usage);
    if (seed && *seed < 0) return usageError("--seed must not be negative", usage);
    if (threads && *threads < 0) return usageError("--threads must not be negative (0: all cores)", usage);
    const auto warm = parseWarmStart(a.option("warm-start").value_or("none"));
    if (!warm) return usageError("--warm-start must be none, megatron or cd", usage);
    const auto out = a.option("out");
    if (out && !endsWith(*out, ".json") && !endsWith(*out, ".yaml") && !endsWith(*out, ".yml"))
        return usageError("--out must end in .json, .yaml or .yml", usage);

    if (!disaggregated && a.flag("no-warm-start"))
        return usageError("--no-warm-start applies to --disaggregated only (else: --warm-start none)", usage);
    if (disaggregated && a.option("warm-start"))
        return usageError(
            "--warm-start does not apply to --disaggregated (each pool starts from its Megatron "
            "plan and its neighbour's best plans)",
            usage);
    const auto scenario = loadScenarioOrReport(*scenarioPath);
    if (!scenario) return kBadInput;
    if (disaggregated) {
        DisaggSearchArgs d;
        d.searcher = *searcherName;
        d.budget = budget.value_or(0);
        d.seconds = seconds.value_or(0);
        d.seed = uint64_t(seed.value_or(1));
        d.threads = int(threads.value_or(0));
        d.out = out.value_or("");
        d.json = a.flag("json");
        d.warm = !a.flag("no-warm-start");
        return searchDisaggregated(*scenario, *scenarioPath, d);
    }
    const CostModel model(*scenario);
    const CostModelObjective objective(model);
    const SearchSpace space(*scenario);
    Engine engine(objective);
    SearchOptions o;
    o.budget.evaluations = budget.value_or(0);
    o.budget.seconds = seconds.value_or(0);
    if (o.budget.unlimited()) o.budget.evaluations = kDefaultBudget;
    o.seed = uint64_t(seed.value_or(1));
    o.threads = int(threads.value_or(0));
    o.warmStart = *warm;

    ProgressLine line(*searcherName);
    SearchResult r;
    {
        InterruptToStop interrupt;
        r = searcher->run(space, engine, o, &line, interrupt.token());
    }
    if (r.refused || r.evaluations == 0) {
        std::cerr << "shardplan: " << r.message << "\n";
        return kBadInput;
    }
    Candidate best = r.best;
    // A percentile SLO (slo: {percentile: 99}): the analytical search ranked the plans on the mean; the best
    // few are simulated, each at the highest rate that meets the SLOs at the percentile, and the plan shown
    // is the one that sustains the most.
    const Workload& w = scenario->workload;
    SimulatedRanking ranking;
    std::vector<Plan> checked;
    if (w.sloPercentile > 0 && w.phase == Phase::Serving && (w.ttftMs > 0 || w.tpotMs > 0)) {
        for (const Candidate& c : r.elite)
            if (c.metrics.feasible && int64_t(checked.size()) < check.value_or(4)) checked.push_back(c.plan);
        RateSearchOptions ro;
        ro.sim.requests = requests.value_or(1000);
        ro.sim.seed = o.seed;
        {
            InterruptToStop interrupt;
            ranking = rankBySimulation(model, checked, ro, interrupt.token());
        }
        if (ranking.best >= 0) {
            best.plan = checked[size_t(ranking.best)];
            best.metrics = model.evaluate(best.plan);
        }
    }
    if (!checked.empty() && ranking.best < 0) {
        std::cerr << "shardplan: none of the " << checked.size() << " best plans meets the p"
                  << w.sloPercentile << " SLOs in simulation, at any rate\n";
        best.metrics.feasible = false;
    }
    if (out) {
        const std::string text =
            endsWith(*out, ".json") ? toJson(best.plan, scenario->model) : toYaml(best.plan, scenario->model);
        if (auto w = writeFileAtomic(*out, text); !w) {
            std::cerr << w.error().str() << "\n";
            return kBadInput;
        }
    }
    if (a.flag("json")) {
        nlohmann::ordered_json j;
        j["plan"] = nlohmann::ordered_json::parse(toJson(best.plan, scenario->model));
        j["metrics"] = metricsJson(best.metrics);
        j["metrics"]["cost"] = costJson(planCost(*scenario, best.metrics));
        j["evaluations"] = r.evaluations;
        j["seconds"] = r.seconds;
        j["searcher"] = r.searcher;
        j["seed"] = o.seed;
        j["stopped"] = r.stopped;
        j["message"] =
            r.message.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(r.message);
        if (!checked.empty()) {
            auto& pc = j["percentile_check"] = nlohmann::ordered_json::array();
            for (size_t i = 0; i < ranking.rates.size(); ++i) {
                const MaxRate& m = ranking.rates[i];
                pc.push_back({{"plan", nlohmann::ordered_json::parse(toJson(checked[i], scenario->model))},
                              {"analytical_tokens_per_s", model.evaluate(checked[i]).throughput},
                              {"max_rate", m.rate},
                              {"output_tokens_per_s", m.at ? m.at->sustainedOutputTokensPerS : 0.0},
                              {"binding", m.binding},
                              {"why", m.why},
                              {"chosen", int(i) == ranking.best}});
            }
        }
        std::cout << jsonText(j) << "\n";
    } else {
        std::printf("scenario    %s (%s)\n", scenario->name.c_str(), scenarioPath->c_str());
        std::printf("searcher    %s, seed %llu: %lld evaluations in %.2f s%s\n", r.searcher.c_str(),
                    (unsigned long long)o.seed, (long long)r.evaluations, r.seconds,
                    r.stopped ? " (stopped)" : "");
        std::printf("plan        %s\n", degreesAndMesh(best.plan, scenario->model.moe.present()).c_str());
        std::printf("operators   %s\n", operatorsText(best.plan, scenario->model).c_str());
        printMetrics(*scenario, best.metrics);
        if (!checked.empty()) {
            std::printf("p%g SLOs   simulated (%lld requests a run): the highest rate each of the best plans "
                        "sustains\n",
                        w.sloPercentile, (long long)requests.value_or(1000));
            for (size_t i = 0; i < ranking.rates.size(); ++i) {
                const MaxRate& m = ranking.rates[i];
                std::printf("  %c %-44s analytical %9.0f tokens/s, simulated %7.3g requests/s (%9.0f "
                            "tokens/s); above: %s\n",
                            int(i) == ranking.best ? '*' : ' ',
                            degreesText(checked[i], scenario->model.moe.present()).c_str(),
                            model.evaluate(checked[i]).throughput, m.rate,
                            m.at ? m.at->sustainedOutputTokensPerS : 0.0, m.binding.c_str());
            }
        }
        if (out) std::printf("written     %s\n", out->c_str());
    }
    if (!r.message.empty()) std::cerr << "shardplan: " << r.message << "\n";
    return best.metrics.feasible ? kOk : kBadInput;
}

// -----------------------------------------------------------------------------------------------------------------

int cmdCompare(const std::vector<std::string>& argv) {
    const VerbSpec& spec = verb("compare");
    const std::string usage = synopsisText(spec);
    Args a = parseArgs(argv, spec);
    if (!a.ok()) return usageError(a.error(), usage);
    const auto scenarioPath = a.option("scenario");
    if (!scenarioPath) return usageError("--scenario is required", usage);
    if (a.positionals().size() != 2) return usageError("compare needs two plan files, A and B", usage);
    const auto scenario = loadScenarioOrReport(*scenarioPath);
    if (!scenario) return kBadInput;
    const auto& files = a.positionals();
    for (const auto& f : files)
        if (auto dis = isDisaggregatedPlan(f); dis && dis.value())
            return compareDisaggregated(*scenario, files, a.flag("json"));
    const CostModel model(*scenario);
    std::vector<Plan> plans;
    std::vector<Metrics> metrics;
    std::vector<Evaluation> evals;
    for (const auto& f : files) {
        auto p = loadPlan(f);
        if (!p) {
            std::cerr << p.error().str() << "\n";
            return kBadInput;
        }
        if (auto why = model.checkPlan(p.value())) {
            std::cerr << f << ": plan does not fit the scenario: " << *why << "\n";
            return kBadInput;
        }
        plans.push_back(p.value());
        evals.push_back(model.explain(p.value()));
        metrics.push_back(evals.back().metrics);
    }
    const Metrics &ma = metrics[0], &mb = metrics[1];
    const Plan &pa = plans[0], &pb = plans[1];
    const bool moe = scenario->model.moe.present();

    struct Row {
        const char* key;
        const char* label;
        double a, b;
    };
    const std::vector<Row> rows{
        {"throughput_tokens_per_s", "throughput tokens/s", ma.throughput, mb.throughput},
        {"throughput_per_gpu", "throughput per GPU", ma.throughputPerGpu, mb.throughputPerGpu},
        {"ttft_ms", "TTFT ms", ma.ttftMs, mb.ttftMs},
        {"tpot_ms", "TPOT ms", ma.tpotMs, mb.tpotMs},
        {"batch", "batch", double(ma.batch), double(mb.batch)},
        {"memory_per_gpu_gib", "memory per GPU GiB", ma.memoryPerGpuGiB, mb.memoryPerGpuGiB},
        {"roofline_fraction", "roofline fraction", ma.rooflineFraction, mb.rooflineFraction},
    };
    auto ratio = [](double x, double y) { return x != 0 ? y / x : std::nan(""); };
    // Why B differs from A: replicas, sequences in flight and step time, what limits each batch, B's step at
    // A's batch, the settings that differ and what B loses with each taken back to A's.
    const Why why = explainWhy(model, pa, pb);
    struct Diff {
        std::string field, a, b;
    };
    std::vector<Diff> diffs;
    for (const PlanDiff& d : why.differences) diffs.push_back({d.key, d.a, d.b});

    if (a.flag("json")) {
        nlohmann::ordered_json j;
        for (int k = 0; k < 2; ++k) {
            nlohmann::ordered_json side;
            side["file"] = files[k];
            side["plan"] = nlohmann::ordered_json::parse(toJson(plans[k], scenario->model));
            side["metrics"] = metricsJson(metrics[k]);
            side["metrics"]["cost"] = costJson(planCost(*scenario, metrics[k]));
            j[k == 0 ? "a" : "b"] = side;
        }
        nlohmann::ordered_json ratios;
        for (const Row& r : rows) ratios[r.key] = num(ratio(r.a, r.b));
        j["ratios"] = ratios;
        auto& d = j["differences"] = nlohmann::ordered_json::array();
        for (const Diff& x : diffs) d.push_back({{"field", x.field}, {"a", x.a}, {"b", x.b}});
        nlohmann::ordered_json w;
        auto& wr = w["rows"] = nlohmann::ordered_json::array();
        for (const WhyRow& r : why.rows)
            wr.push_back({{"key", r.key},
                          {"label", r.label},
                          {"a", num(r.a)},
                          {"b", num(r.b)},
                          {"ratio", num(ratio(r.a, r.b))}});
        auto& ws = w["step_ms"] = nlohmann::ordered_json::array();
        for (const WhyStepPart& p : why.step)
            ws.push_back({{"part", p.name}, {"a", num(p.aMs)}, {"b", num(p.bMs)}});
        w["throughput_ratio"] = num(why.throughputRatio);
        w["in_flight_ratio"] = num(why.inFlightRatio);
        w["tokens_per_step_ratio"] = num(why.tokensPerStepRatio);
        w["step_ratio"] = num(why.stepRatio);
        // The causes of the throughput ratio: their factors multiply to it.
        auto& wf = w["factors"] = nlohmann::ordered_json::array();
        for (const WhyFactor& f : why.factors)
            wf.push_back({{"key", f.key},
                          {"label", f.label},
                          {"a", num(f.a)},
                          {"b", num(f.b)},
                          {"factor", num(f.factor)},
                          {"words", f.words}});
        w["speculative_share"] = num(why.specShare);
        w["sentence"] = why.sentence;
        w["batch_limit_a"] = {{"limit", why.bindingA.name}, {"detail", why.bindingA.detail}};
        w["batch_limit_b"] = {{"limit", why.bindingB.name}, {"detail", why.bindingB.detail}};
        if (why.equalBatch > 0) {
            auto& eq = w["b_at_a_batch"];
            eq["batch"] = why.equalBatch;
            auto& parts = eq["step_ms"] = nlohmann::ordered_json::array();
            for (const WhyStepPart& p : why.stepAtEqualBatch)
                parts.push_back({{"part", p.name}, {"a", num(p.aMs)}, {"b", num(p.bMs)}});
            auto& moved = eq["collectives_moved"] = nlohmann::ordered_json::array();
            for (const CommMove& m : why.commsMoved)
                moved.push_back({{"collective", m.name}, {"a_ms", num(m.aMs)}, {"b_ms", num(m.bMs)}});
        }
        auto& flips = w["what_if"] = nlohmann::ordered_json::array();
        for (const WhatIf& f : why.whatIf)
            flips.push_back({{"field", f.diff.field},
                             {"value", f.diff.a},
                             {"valid", f.valid},
                             {"feasible", f.metrics.feasible},
                             {"throughput_ratio", num(f.ratio)},
                             {"summary", f.summary}});
        j["why"] = w;
        std::cout << jsonText(j) << "\n";
        return kOk;
    }
    std::printf("scenario  %s\nA         %s: %s\nB         %s: %s\n\n", scenario->name.c_str(),
                files[0].c_str(), degreesAndMesh(pa, moe).c_str(), files[1].c_str(),
                degreesAndMesh(pb, moe).c_str());
    std::printf("%-22s %14s %14s %10s\n", "", "A", "B", "B/A");
    for (const Row& r : rows) {
        const double q = ratio(r.a, r.b);
        char cell[32] = "-";
        if (std::isfinite(q)) std::snprintf(cell, sizeof cell, "%.3f", q);
        std::printf("%-22s %14.6g %14.6g %10s\n", r.label, r.a, r.b, cell);
    }
    for (const WhyRow& r : why.rows) {
        if (r.key == "weights_gib" || r.key == "kv_cache_gib") continue; // memory is in the rows above
        const double q = ratio(r.a, r.b);
        char cell[32] = "-";
        if (std::isfinite(q)) std::snprintf(cell, sizeof cell, "%.3f", q);
        std::string label = r.label; // "Tokens a step (E)" -> "tokens a step (E)"
        if (!label.empty()) label[0] = char(std::tolower(static_cast<unsigned char>(label[0])));
        std::printf("%-22s %14.6g %14.6g %10s\n", label.c_str(), r.a, r.b, cell);
    }
    {
        // Cost and energy per million tokens: the same GPUs, so their ratio is the throughputs' inverse.
        const ServingCost ca = planCost(*scenario, ma), cb = planCost(*scenario, mb);
        if (ca.priced && ca.usdPerMillionTokens > 0 && cb.usdPerMillionTokens > 0)
            std::printf("%-22s %14.4g %14.4g %10.3f\n", "$ per M tokens", ca.usdPerMillionTokens,
                        cb.usdPerMillionTokens, cb.usdPerMillionTokens / ca.usdPerMillionTokens);
        if (ca.powered && ca.tokensPerSPerMegawatt > 0)
            std::printf("%-22s %14.6g %14.6g %10.3f\n", "tokens/s per MW (TDP)", ca.tokensPerSPerMegawatt,
                        cb.tokensPerSPerMegawatt, cb.tokensPerSPerMegawatt / ca.tokensPerSPerMegawatt);
    }
    std::printf("%-22s %14s %14s\n", "feasible", ma.feasible ? "yes" : "no", mb.feasible ? "yes" : "no");
    for (int k = 0; k < 2; ++k)
        for (const auto& v : metrics[k].violations)
            std::printf("  %c violation: %s\n", k == 0 ? 'A' : 'B', v.c_str());
    if (diffs.empty()) {
        std::printf("\nthe plans make the same choices\n");
    } else {
        std::printf("\n%-22s %14s %14s\n", "differs", "A", "B");
        for (const Diff& x : diffs)
            std::printf("%-22s %14s %14s\n", x.field.c_str(), x.a.c_str(), x.b.c_str());
    }
    std::printf("\nbatch limit A: %s%s%s\n", why.bindingA.name.c_str(),
                why.bindingA.detail.empty() ? "" : ": ", why.bindingA.detail.c_str());
    std::printf("batch limit B: %s%s%s\n", why.bindingB.name.c_str(), why.bindingB.detail.empty() ? "" : ": ",
                why.bindingB.detail.c_str());
    if (why.equalBatch > 0) {
        std::printf("\nB at A's batch of %lld, ms per step: %s\n", (long long)why.equalBatch, "A -> B");
        for (const WhyStepPart& p : why.stepAtEqualBatch)
            if (p.aMs > 0 || p.bMs > 0) std::printf("  %-20s %10.3f %10.3f\n", p.name.c_str(), p.aMs, p.bMs);
        for (const CommMove& m : why.commsMoved)
            std::printf("  %s: %.3f -> %.3f\n", m.name.c_str(), m.aMs, m.bMs);
    }
    if (!why.whatIf.empty()) {
        std::printf("\nwhat if B took A's setting (one at a time):\n");
        for (const WhatIf& f : why.whatIf) std::printf("  %s\n", f.summary.c_str());
    }
    std::printf("\nwhy: %s\n", why.sentence.c_str());
    return kOk;
}

} // namespace sp::cli
