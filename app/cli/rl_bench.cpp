// shardplan bench --pretrain and bench --chain: Learn to Shard's shipped prior, and the chained searches it
// and the metaheuristics are measured on (docs/search.md ("What rl carries, and the prior it ships with") and
// docs/benchmarks.md ("Chains of searches")).
#include "rl_bench.h"

#include "common.h"
#include "search_util.h"

#include "core/rl/prior.h"
#include "core/search/benchmark.h"
#include "core/searchers/disagg_search.h"
#include "core/searchers/pareto.h"
#include "core/searchers/pretrain.h"
#include "core/searchers/registry.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>

namespace sp::cli {

namespace {

/// One chained run: its evaluations and processor time, and its value at each of the chain's points.
struct ChainRun {
    int64_t evaluations = 0;
    double cpu = 0;
    std::vector<double> values;
    std::string refused; ///< why the chain did not run (the disaggregated search's refusal)
};

} // namespace

int pretrainCommand(Args& a, const std::vector<std::string>& scenarios, const std::string& usage,
                    const std::string& commandLine) {
    const auto budget = a.integer("budget");
    const auto rounds = a.integer("rounds");
    const auto threads = a.integer("threads");
    if (!a.ok()) return usageError(a.error(), usage);
    PretrainOptions o;
    o.budget = budget.value_or(2000);
    o.rounds = int(rounds.value_or(2));
    o.threads = int(threads.value_or(1));
    // Where it goes, checked before minutes of training; written whole at the end (a temporary file renamed
    // over it), so a stopped or failed run leaves the old prior as it was.
    const std::string out = *a.option("pretrain");
    {
        std::error_code ec;
        const auto dir = std::filesystem::path(out).parent_path();
        if (!dir.empty() && !std::filesystem::is_directory(dir, ec)) {
            std::cerr << "shardplan: --pretrain " << out << ": no folder " << dir.string() << "\n";
            return kBadInput;
        }
    }
    std::vector<Scenario> loaded;
    for (const auto& path : scenarios) {
        auto s = loadScenarioOrReport(path);
        if (!s) return kBadInput;
        s->name = stem(path);
        loaded.push_back(std::move(*s));
    }
    InterruptToStop interrupt;
    rl::Prior prior = pretrainPrior(
        loaded, o,
        [](const std::string& name, int round, double best) {
            std::fprintf(stderr, "round %d  %-52s best %.1f tok/s\n", round + 1, name.c_str(), best);
        },
        interrupt.token());
    if (interrupt.interrupted()) {
        std::cerr << "shardplan: interrupted; nothing written\n";
        return kBadInput;
    }
    if (prior.empty()) {
        std::cerr << "shardplan: no scenario had a valid plan; nothing written\n";
        return kBadInput;
    }
    prior.command = commandLine;
    for (const auto& h : a.all("held-out")) prior.heldOut.push_back(h);
    const std::string tmp = out + ".part";
    {
        std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
        if (!(f << rl::priorJson(prior)) || !(f.flush())) {
            std::cerr << "shardplan: cannot write " << tmp << "\n";
            return kBadInput;
        }
    }
    std::error_code ec;
    std::filesystem::rename(tmp, out, ec);
    if (ec) {
        std::cerr << "shardplan: cannot replace " << out << ": " << ec.message() << " (the prior is in "
                  << tmp << ")\n";
        return kBadInput;
    }
    std::printf(
        "wrote %s: %zu entries (%zu scenarios with their variations), %d rounds of %lld evaluations\n",
        out.c_str(), prior.entries.size(), loaded.size(), o.rounds, (long long)o.budget);
    return kOk;
}

int chainBench(Args& a, const std::vector<std::string>& scenarios, const std::string& usage) {
    const std::string kind = *a.option("chain");
    if (kind != "pareto" && kind != "pools" && kind != "rerun" && kind != "policy")
        return usageError("--chain must be pareto, pools, rerun or policy", usage);
    // policy: the rerun from the last run's policy alone (no elite carried: sa, ga and cd-restarts start
    // afresh), what the carried policy is worth by itself.
    const bool rerun = kind == "rerun" || kind == "policy";
    const auto seeds = a.integer("seeds");
    const auto threads = a.integer("threads");
    const auto points = a.integer("points");
    const auto reference = a.integer("reference-budget");
    if (!a.ok()) return usageError(a.error(), usage);
    if (points && (*points < 2 || *points > 64))
        return usageError("--points must be between 2 and 64", usage);
    const std::vector<std::string> names = splitList(a.option("searchers").value_or("sa,ga,rl"));
    for (const auto& n : names)
        if (const std::string e = searcherError(n); !e.empty()) return usageError(e, usage);
    std::vector<int64_t> budgets;
    for (const auto& b : splitList(a.option("budgets").value_or("100,200,500,1000"))) {
        char* end = nullptr;
        const long long v = std::strtoll(b.c_str(), &end, 10);
        if (end == b.c_str() || *end || v < 1)
            return usageError("--budgets: '" + b + "' is not a positive integer", usage);
        budgets.push_back(v);
    }
    std::sort(budgets.begin(), budgets.end());
    const int64_t seedCount = seeds.value_or(3);
    const int pointCount = int(points.value_or(8));
    const int64_t referenceBudget = reference.value_or(200'000);
    const int evalThreads = int(threads.value_or(1));
    InterruptToStop interrupt;

    std::printf(
        "chain: %s. Each cell: the runs within 1%% of the best found at every point (of the seeds), and "
        "the median\nof the runs' mean ratio to the best over the points. evals: all / mean: the median "
        "evaluations of the chain\nuntil every point is within 1%% / the mean ratio is 0.99 (the first "
        "budget that gets there; -: none does)\n\n",
        kind.c_str());
    for (const auto& path : scenarios) {
        auto loaded = loadScenarioOrReport(path);
        if (!loaded) return kBadInput;
        Scenario scenario = *loaded;
        // The rerun's edit: the TPOT SLO tightened to 80% of what a long search's best plan runs at.
        Scenario edited = scenario;
        std::optional<SearchResult> before;
        if (rerun) {
            const CostModel model(scenario);
            const CostModelObjective objective(model);
            Engine engine(objective);
            SearchOptions so;
            so.budget.evaluations = 20'000;
            so.threads = evalThreads;
            const SearchResult r =
                makeSearcher("sa")->run(SearchSpace(scenario), engine, so, nullptr, interrupt.token());
            if (!r.feasible()) {
                std::fprintf(stderr, "%s: no feasible plan to tighten the SLO from; skipped\n",
                             stem(path).c_str());
                continue;
            }
            edited.workload.tpotMs = 0.8 * r.best.metrics.tpotMs;
        }
        const SearchSpace editedSpace(edited);

        // One chain of `searcher` at `budget` per search.
        std::vector<double> targets; // pareto: the reference sweep's targets
        const auto runChain = [&](const std::string& searcher, int64_t budget, uint64_t seed) -> ChainRun {
            ChainRun out;
            if (kind == "pareto") {
                ParetoOptions po;
                po.searcher = searcher;
                po.points = pointCount;
                po.budget = budget;
                po.seed = seed;
                po.threads = evalThreads;
                const ParetoResult r = paretoFront(scenario, po, nullptr, interrupt.token());
                out.evaluations = r.evaluations, out.cpu = r.cpuSeconds;
                if (targets.empty()) targets = r.targetsMs, targets.push_back(r.maxTpotMs * 1.0001);
                for (double t : targets) {
                    const ParetoPoint* p = pointAtTpot(r.frontier, t);
                    out.values.push_back(p ? p->throughputPerGpu : 0.0);
                }
            } else if (kind == "pools") {
                DisaggSearchOptions d;
                d.searcher = searcher;
                d.budget = budget;
                d.seed = seed;
                d.threads = evalThreads;
                const DisaggSearchResult r = searchDisaggregated(scenario, d, interrupt.token());
                out.evaluations = r.evaluations;
                if (r.refused) out.refused = r.message;
                out.values.push_back(r.found && r.best.metrics.feasible ? r.best.metrics.throughput : 0.0);
            } else {
                // The search before the edit (its budget is the user's earlier work, not counted), then the
                // rerun from its elite (SearchOptions::starts) and, for a learning searcher, its policy.
                const CostModel m0(scenario), m1(edited);
                const CostModelObjective o0(m0), o1(m1);
                Engine e0(o0), e1(o1);
                SearchOptions so;
                so.budget.evaluations = 2000;
                so.seed = seed;
                so.threads = evalThreads;
                const SearchResult first =
                    makeSearcher(searcher)->run(SearchSpace(scenario), e0, so, nullptr, interrupt.token());
                so.budget.evaluations = budget;
                so.learned = first.learned;
                if (kind == "rerun")
                    for (const Candidate& c : first.elite)
                        if (auto x = editedSpace.fromPlan(c.plan); x && so.starts.size() < 16)
                            so.starts.push_back(*x);
                const SearchResult r =
                    makeSearcher(searcher)->run(editedSpace, e1, so, nullptr, interrupt.token());
                out.evaluations = r.evaluations, out.cpu = r.cpuSeconds;
                out.values.push_back(r.feasible() ? r.best.metrics.throughput : 0.0);
            }
            return out;
        };
        // The reference: sa with the whole reference budget spread over the chain's searches.
        const int searches = kind == "pareto"  ? pointCount + 2
                             : kind == "pools" ? 2 * (scenario.cluster.nodes - 1)
                                               : 1;
        const ChainRun ref = runChain("sa", std::max<int64_t>(1, referenceBudget / std::max(1, searches)), 1);
        if (!ref.refused.empty() ||
            std::none_of(ref.values.begin(), ref.values.end(), [](double v) { return v > 0; })) {
            std::fprintf(stderr, "%s: %s; skipped\n", stem(path).c_str(),
                         ref.refused.empty() ? "the reference chain found no feasible plan"
                                             : ref.refused.c_str());
            continue;
        }
        std::vector<double> best = ref.values;
        std::map<std::pair<std::string, int64_t>, std::vector<ChainRun>> runs;
        for (const auto& n : names)
            for (int64_t b : budgets)
                for (int64_t s = 1; s <= seedCount && !interrupt.interrupted(); ++s) {
                    ChainRun r = runChain(n, b, uint64_t(s));
                    for (size_t i = 0; i < best.size() && i < r.values.size(); ++i)
                        best[i] = std::max(best[i], r.values[i]);
                    runs[{n, b}].push_back(std::move(r));
                }
        // Each point's ratio to the best any run found there (the reference's at least).
        const auto ratios = [&best](const ChainRun& r) {
            std::vector<double> out;
            for (size_t i = 0; i < best.size(); ++i)
                if (best[i] > 0) out.push_back(i < r.values.size() ? r.values[i] / best[i] : 0.0);
            return out;
        };
        std::printf("%s (%s; reference: sa, %lld evaluations in all; %zu points)\n", stem(path).c_str(),
                    kind.c_str(), (long long)ref.evaluations, best.size());
        std::printf("%-22s", "searcher");
        for (int64_t b : budgets) std::printf(" %18s", ("budget " + std::to_string(b)).c_str());
        std::printf(" %12s %12s %8s\n", "evals: all", "evals: mean", "CPU s");
        for (const auto& n : names) {
            std::printf("%-22s", n.c_str());
            std::vector<double> toAll(size_t(seedCount), std::numeric_limits<double>::infinity()),
                toMean = toAll;
            std::vector<double> cpuAtLargest;
            for (int64_t b : budgets) {
                const auto& rs = runs[{n, b}];
                int within = 0;
                std::vector<double> means;
                for (size_t s = 0; s < rs.size(); ++s) {
                    const auto r = ratios(rs[s]);
                    double mean = 0, worst = 1;
                    for (double x : r) mean += x / double(r.size()), worst = std::min(worst, x);
                    means.push_back(mean);
                    if (worst >= 0.99) {
                        ++within;
                        if (!std::isfinite(toAll[s])) toAll[s] = double(rs[s].evaluations);
                    }
                    if (mean >= 0.99 && !std::isfinite(toMean[s])) toMean[s] = double(rs[s].evaluations);
                    if (b == budgets.back()) cpuAtLargest.push_back(rs[s].cpu);
                }
                char cell[64];
                std::snprintf(cell, sizeof cell, "%d/%zu %.3f", within, rs.size(),
                              means.empty() ? 0.0 : medianOf(means));
                std::printf(" %18s", cell);
            }
            for (const auto* v : {&toAll, &toMean}) {
                const double med = medianOf(*v);
                if (std::isfinite(med))
                    std::printf(" %12.0f", med);
                else
                    std::printf(" %12s", "-");
            }
            std::printf(" %8.2f\n", cpuAtLargest.empty() ? 0.0 : medianOf(cpuAtLargest));
        }
        std::printf("\n");
        std::fflush(stdout);
        if (interrupt.interrupted()) break;
    }
    if (interrupt.interrupted()) std::cerr << "shardplan: interrupted; the rows above are partial\n";
    return kOk;
}

} // namespace sp::cli
