// shardplan bench: searchers against a best-known plan, at several budgets, over many seeds; and
// --refresh-best, which finds those plans with long runs and stores them with how they were found.
#include "args.h"
#include "common.h"
#include "rl_bench.h"
#include "search_commands.h"
#include "search_util.h"
#include "verbs.h"

#include "core/common/text.h"
#include "core/io/formats.h"
#include "core/search/benchmark.h"
#include "core/searchers/registry.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <map>
#include <sstream>

namespace sp::cli {

namespace {

using json = nlohmann::ordered_json;

/// "--budgets 100,500": positive integers, or an error message.
std::optional<std::vector<int64_t>> parseBudgets(const std::string& text, std::string& error) {
    std::vector<int64_t> out;
    for (const auto& part : splitList(text)) {
        char* end = nullptr;
        errno = 0;
        const long long v = std::strtoll(part.c_str(), &end, 10);
        if (errno || end == part.c_str() || *end || v < 1) {
            error = "--budgets: '" + part + "' is not a positive integer";
            return std::nullopt;
        }
        out.push_back(v);
    }
    if (out.empty()) error = "--budgets is empty";
    if (out.empty()) return std::nullopt;
    return out;
}

/// The best-known file: {"version": 1, "scenarios": {stem: {"throughput", "plan", "found_by", ...}}}.
struct BestKnownFile {
    std::string path;
    json doc;
};

std::optional<BestKnownFile> readBestKnown(const std::string& path, bool mayBeMissing) {
    BestKnownFile f{path, json::object()};
    std::error_code ec;
    // A missing file is a new one for --refresh-best; a dangling symlink is not missing (writing would
    // replace the link), so symlink_status, not exists.
    if (mayBeMissing && !std::filesystem::exists(std::filesystem::symlink_status(path, ec))) {
        f.doc["version"] = 1;
        f.doc["scenarios"] = json::object();
        return f;
    }
    // The same reader as every input: regular files of at most 64 MiB, depth, syntax and duplicate keys
    // checked with line and column before the JSON library sees the text.
    const auto text = readJsonFile(path);
    if (!text) {
        std::cerr << text.error().str() << "\n";
        return std::nullopt;
    }
    try {
        f.doc = json::parse(text.value());
    } catch (const std::exception& e) {
        std::cerr << "shardplan: " << path << ": not valid JSON: " << e.what() << "\n";
        return std::nullopt;
    }
    if (!f.doc.is_object() || !f.doc.contains("scenarios") || !f.doc["scenarios"].is_object()) {
        std::cerr << "shardplan: " << path << ": expected an object with a \"scenarios\" object\n";
        return std::nullopt;
    }
    return f;
}

/// The stored plan of a scenario re-evaluated under today's cost model, or nullopt (with a warning when the
/// entry exists but is unusable).
std::optional<std::pair<Plan, Metrics>> storedPlan(const BestKnownFile& f, const std::string& key,
                                                   const CostModel& model) {
    const json& all = f.doc["scenarios"];
    if (!all.contains(key)) return std::nullopt;
    const json& e = all[key];
    if (!e.is_object() || !e.contains("plan")) {
        std::cerr << "shardplan: " << f.path << ": scenarios." << key << " has no plan; ignored\n";
        return std::nullopt;
    }
    auto plan = parsePlan(e["plan"].dump(), f.path + ": scenarios." + key + ".plan");
    if (!plan) {
        std::cerr << plan.error().str() << "\n";
        return std::nullopt;
    }
    if (auto why = model.checkPlan(plan.value())) {
        std::cerr << "shardplan: " << f.path << ": scenarios." << key << ".plan does not fit the scenario ("
                  << *why << "); ignored\n";
        return std::nullopt;
    }
    return std::make_pair(plan.value(), model.evaluate(plan.value()));
}

std::string utcNow() {
    const std::time_t t = std::time(nullptr);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
    return buf;
}

std::string cell(double x, const char* fmt) {
    if (std::isinf(x)) return "never";
    if (!std::isfinite(x)) return "-";
    char buf[64];
    std::snprintf(buf, sizeof buf, fmt, x);
    return buf;
}

std::string percent(double share) {
    return cell(100.0 * share, "%.0f%%");
}

/// Long runs of several searchers and seeds; the best plan replaces the stored one when it is better, or
/// when the stored one no longer fits; the stored one is re-evaluated and kept otherwise.
int refreshBest(Args& a, const std::vector<std::string>& scenarios, const std::string& usage) {
    const std::string path = *a.option("refresh-best");
    auto file = readBestKnown(path, true);
    if (!file) return kBadInput;
    std::vector<std::string> names = splitList(a.option("searchers").value_or("sa,ga,cd-restarts,rl"));
    for (const auto& n : names)
        if (const std::string e = searcherError(n); !e.empty()) return usageError(e, usage);
    const auto budget = a.integer("budget");
    const auto seeds = a.integer("seeds");
    const auto threads = a.integer("threads");
    if (!a.ok()) return usageError(a.error(), usage);
    if (budget && *budget < 1) return usageError("--budget must be at least 1", usage);
    if (seeds && (*seeds < 1 || *seeds > 10000))
        return usageError("--seeds must be between 1 and 10000", usage);
    InterruptToStop interrupt;
    for (const auto& scenarioPath : scenarios) {
        const auto scenario = loadScenarioOrReport(scenarioPath);
        if (!scenario) return kBadInput;
        const CostModel model(*scenario);
        const CostModelObjective objective(model);
        const SearchSpace space(*scenario);
        Engine engine(objective);
        const std::string key = stem(scenarioPath);
        const auto old = storedPlan(*file, key, model);
        double best = old && old->second.feasible ? old->second.throughput : 0;
        std::optional<Candidate> found;
        json how;
        SearchOptions o;
        o.budget.evaluations = budget.value_or(200'000);
        o.threads = int(threads.value_or(0));
        for (const auto& name : names)
            for (int64_t seed = 1; seed <= seeds.value_or(3) && !interrupt.interrupted(); ++seed) {
                o.seed = uint64_t(seed);
                const SearchResult r = makeSearcher(name)->run(space, engine, o, nullptr, interrupt.token());
                std::fprintf(stderr, "%s: %s seed %lld: %.1f tokens/s (%lld evaluations, %.1f CPU s)\n",
                             key.c_str(), name.c_str(), (long long)seed,
                             r.feasible() ? r.best.metrics.throughput : 0.0, (long long)r.evaluations,
                             r.cpuSeconds);
                if (r.feasible() && r.best.metrics.throughput > best * (1 + 1e-12)) {
                    best = r.best.metrics.throughput;
                    found = r.best;
                    how = {{"searcher", name},
                           {"seed", seed},
                           {"budget_evaluations", o.budget.evaluations},
                           {"evaluations", r.evaluations},
                           {"found_at", utcNow()}};
                }
            }
        if (interrupt.interrupted()) {
            std::cerr << "shardplan: interrupted; " << path << " left unchanged\n";
            return kBadInput;
        }
        json& entry = file->doc["scenarios"][key];
        if (found) {
            entry = json::object();
            entry["scenario"] = scenarioPath;
            entry["throughput"] = found->metrics.throughput;
            entry["plan"] = json::parse(toJson(found->plan));
            entry["found_by"] = how;
        } else if (old) {
            entry["throughput"] = old->second.throughput;
            entry["reevaluated_at"] = utcNow();
        } else {
            std::cerr << "shardplan: " << key << ": no feasible plan found; no entry written\n";
            continue;
        }
        entry["refresh"] = {{"searchers", names},
                            {"seeds", seeds.value_or(3)},
                            {"budget_evaluations", o.budget.evaluations},
                            {"at", utcNow()}};
        std::printf("%s: best known %.1f tokens/s (%s)\n", key.c_str(), entry["throughput"].get<double>(),
                    found ? ("new: " + how["searcher"].get<std::string>() + " seed " +
                             std::to_string(how["seed"].get<int64_t>()))
                                .c_str()
                          : "the stored plan, re-evaluated");
    }
    file->doc["version"] = 1;
    file->doc["about"] =
        "Best-known plans of the search benchmark (shardplan bench --best FILE). Written by shardplan bench "
        "--refresh-best FILE --scenario S...: long runs of several searchers and seeds; each entry says "
        "which "
        "run found its plan. Throughputs are the cost model's at that time: refresh after changing it.";
    if (auto w = writeFileAtomic(path, file->doc.dump(2) + "\n"); !w) {
        std::cerr << w.error().str() << "\n";
        return kBadInput;
    }
    return kOk;
}

/// rl's cost beside random's: runs of each at one budget, interleaved seed by seed so that a noisy machine
/// slows both alike; medians of wall and processor time, their ratios, and the policy's processor time per
/// new plan, (rl - random) / evaluations: everything rl does that random does not (sampling through the
/// network, the updates) less nothing, since both evaluate the same number of new plans.
int rlSpeed(Args& a, const std::vector<std::string>& scenarios, const std::string& usage) {
    const auto budget = a.integer("budget");
    const auto seeds = a.integer("seeds");
    const auto threads = a.integer("threads");
    if (!a.ok()) return usageError(a.error(), usage);
    if (budget && *budget < 1) return usageError("--budget must be at least 1", usage);
    if (seeds && (*seeds < 1 || *seeds > 10000))
        return usageError("--seeds must be between 1 and 10000", usage);
    const std::string other = a.option("searchers").value_or("rl");
    if (const std::string e = searcherError(other); !e.empty()) return usageError(e, usage);
    InterruptToStop interrupt;
    std::printf("%-28s %8s %10s %10s %10s %10s %8s %8s %14s  (%s against random)\n", "scenario", "evals",
                "random s", "s", "random CPU", "CPU", "wall x", "CPU x", "policy us/plan", other.c_str());
    for (const auto& path : scenarios) {
        const auto scenario = loadScenarioOrReport(path);
        if (!scenario) return kBadInput;
        const CostModel model(*scenario);
        const CostModelObjective objective(model);
        const SearchSpace space(*scenario);
        SearchOptions o;
        o.threads = int(threads.value_or(1));
        o.budget.evaluations = budget.value_or(20'000);
        std::vector<double> wall[2], cpu[2], wallRatio, cpuRatio, evals;
        for (int64_t seed = 1; seed <= seeds.value_or(5) && !interrupt.interrupted(); ++seed) {
            o.seed = uint64_t(seed);
            SearchResult r[2];
            for (int k = 0; k < 2; ++k) {
                Engine fresh(objective);
                r[k] =
                    makeSearcher(k == 0 ? "random" : other)->run(space, fresh, o, nullptr, interrupt.token());
                wall[k].push_back(r[k].seconds);
                cpu[k].push_back(r[k].cpuSeconds);
            }
            wallRatio.push_back(r[1].seconds / r[0].seconds);
            cpuRatio.push_back(r[1].cpuSeconds / r[0].cpuSeconds);
            evals.push_back(double(r[1].evaluations));
            if (r[1].evaluations != r[0].evaluations)
                std::fprintf(stderr, "%s seed %lld: random %lld evaluations, %s %lld\n", stem(path).c_str(),
                             (long long)seed, (long long)r[0].evaluations, other.c_str(),
                             (long long)r[1].evaluations);
        }
        const double ev = medianOf(evals);
        std::printf("%-28s %8.0f %10.4f %10.4f %10.4f %10.4f %8.2f %8.2f %14.1f\n", stem(path).c_str(), ev,
                    medianOf(wall[0]), medianOf(wall[1]), medianOf(cpu[0]), medianOf(cpu[1]),
                    medianOf(wallRatio), medianOf(cpuRatio),
                    1e6 * (medianOf(cpu[1]) - medianOf(cpu[0])) / ev);
        std::fflush(stdout);
    }
    std::printf("(medians over %lld seeds, --threads %d; ratios: the median of per-seed ratios)\n",
                (long long)seeds.value_or(5), int(threads.value_or(1)));
    if (interrupt.interrupted()) std::cerr << "shardplan: interrupted; the rows above are partial\n";
    return kOk;
}

struct Row {
    std::string scenario, searcher;
    int64_t budget = 0;
    double reference = 0, megatron = 0, equalCpu = 0;
    BenchSummary s;
    std::string note;
};

} // namespace

int cmdBench(const std::vector<std::string>& argv) {
    const VerbSpec& spec = verb("bench");
    const std::string usage = synopsisText(spec);
    Args a = parseArgs(argv, spec);
    if (!a.ok()) return usageError(a.error(), usage);
    if (!a.positionals().empty())
        return usageError("unexpected argument '" + a.positionals()[0] + "'", usage);
    const auto scenarios = a.all("scenario");
    if (scenarios.empty()) return usageError("at least one --scenario is required", usage);
    if (a.option("refresh-best")) return refreshBest(a, scenarios, usage);
    if (a.flag("rl-speed")) return rlSpeed(a, scenarios, usage);
    if (a.option("chain")) return chainBench(a, scenarios, usage);
    if (a.option("pretrain")) {
        std::string line = "shardplan bench";
        for (const auto& x : argv) line += " " + x;
        return pretrainCommand(a, scenarios, usage, line);
    }

    const std::vector<std::string> names =
        splitList(a.option("searchers").value_or("random,random-seq,cd,cd-restarts,sa,ga,rl"));
    if (names.empty()) return usageError("--searchers is empty", usage);
    for (const auto& n : names)
        if (const std::string e = searcherError(n); !e.empty()) return usageError(e, usage);
    const auto budget = a.integer("budget");
    const auto seeds = a.integer("seeds");
    const auto threads = a.integer("threads");
    if (!a.ok()) return usageError(a.error(), usage);
    if (budget && a.option("budgets")) return usageError("give --budget or --budgets, not both", usage);
    if (budget && *budget < 1) return usageError("--budget must be at least 1", usage);
    if (seeds && (*seeds < 1 || *seeds > 10000))
        return usageError("--seeds must be between 1 and 10000", usage);
    if (threads && *threads < 0) return usageError("--threads must not be negative (0: all cores)", usage);
    std::vector<int64_t> budgets{100, 500, 2000, 20000};
    if (budget) budgets = {*budget};
    if (auto b = a.option("budgets")) {
        std::string error;
        auto parsed = parseBudgets(*b, error);
        if (!parsed) return usageError(error, usage);
        budgets = *parsed;
    }
    const auto warm = parseWarmStart(a.option("warm-start").value_or("none"));
    if (!warm) return usageError("--warm-start must be none, megatron or cd", usage);
    std::optional<BestKnownFile> bestFile;
    if (auto p = a.option("best")) {
        bestFile = readBestKnown(*p, false);
        if (!bestFile) return kBadInput;
    }
    const int64_t seedCount = seeds.value_or(20);
    const bool asJson = a.flag("json");
    // The reference searcher for equal time: random when listed (the cheapest per plan), else the first.
    const std::string timeReference =
        std::find(names.begin(), names.end(), "random") != names.end() ? "random" : names.front();

    int nameWidth = 12;
    for (const auto& n : names) nameWidth = std::max(nameWidth, int(n.size()));
    std::vector<Row> rows;
    InterruptToStop interrupt;
    for (const auto& path : scenarios) {
        const auto scenario = loadScenarioOrReport(path);
        if (!scenario) return kBadInput;
        const CostModel model(*scenario);
        const CostModelObjective objective(model);
        const SearchSpace space(*scenario);
        // A fresh engine per run: a cache warmed by earlier runs would make later ones look cheaper.
        Engine engine(objective);
        SearchOptions o;
        o.threads = int(threads.value_or(1));
        o.warmStart = *warm;
        const SearchResult megatron = MegatronSearcher().run(space, engine, o, nullptr, {});
        const double megatronBest = megatron.feasible() ? megatron.best.metrics.throughput : 0;
        // All runs first: the reference may be the best of them.
        std::map<std::pair<int64_t, std::string>, std::vector<BenchRun>> runs;
        std::map<std::pair<int64_t, std::string>, std::string> notes;
        double benchBest = 0;
        for (int64_t b : budgets) {
            o.budget.evaluations = b;
            for (const auto& name : names) {
                auto& list = runs[{b, name}];
                for (int64_t seed = 1; seed <= seedCount && !interrupt.interrupted(); ++seed) {
                    o.seed = uint64_t(seed);
                    Engine fresh(objective);
                    const SearchResult r =
                        makeSearcher(name)->run(space, fresh, o, nullptr, interrupt.token());
                    if (r.refused) {
                        notes[{b, name}] = r.message;
                        break;
                    }
                    list.push_back(BenchRun::of(r));
                    benchBest = std::max(benchBest, list.back().best);
                    if (name == "megatron" || name == "exhaustive") break; // deterministic: one run
                }
            }
        }
        const std::string key = stem(path);
        double reference = benchBest;
        std::string referenceText = "the best of this bench";
        if (bestFile) {
            if (auto stored = storedPlan(*bestFile, key, model); stored && stored->second.feasible) {
                reference = stored->second.throughput;
                const json& e = bestFile->doc["scenarios"][key];
                const double recorded = e.value("throughput", 0.0);
                referenceText = bestFile->path;
                if (e.contains("found_by") && e["found_by"].is_object())
                    referenceText += ": " + e["found_by"].value("searcher", std::string("?")) + ", seed " +
                                     std::to_string(e["found_by"].value("seed", int64_t(0))) + ", " +
                                     std::to_string(e["found_by"].value("budget_evaluations", int64_t(0))) +
                                     " evaluations";
                if (std::abs(recorded - reference) > 1e-9 * reference)
                    std::fprintf(
                        stderr,
                        "shardplan: %s: the best-known plan is stale: stored %.1f tokens/s, the cost "
                        "model now gives %.1f; run shardplan bench --refresh-best %s\n",
                        key.c_str(), recorded, reference, bestFile->path.c_str());
            } else {
                std::fprintf(stderr,
                             "shardplan: %s: no usable best-known plan in %s; using the best of "
                             "this bench\n",
                             key.c_str(), bestFile->path.c_str());
            }
        }
        if (benchBest > reference * (1 + 1e-12))
            std::fprintf(stderr,
                         "shardplan: %s: a run found %.1f tokens/s, %.3f%% above the best-known plan; "
                         "refresh it\n",
                         key.c_str(), benchBest, 100.0 * (benchBest / reference - 1));
        if (!asJson) {
            const SpaceSize size = space.size();
            std::printf("%s: %s\n  %.4g%s valid plans; megatron %.1f tokens/s%s; best known %.1f tokens/s "
                        "(%s)\n",
                        key.c_str(), scenario->name.c_str(), size.count, size.exact ? "" : " (rounded)",
                        megatronBest, megatron.feasible() ? "" : " (infeasible)", reference,
                        referenceText.c_str());
        }
        for (int64_t b : budgets) {
            const auto& ref = runs[{b, timeReference}];
            std::vector<double> refCpu;
            for (const auto& r : ref) refCpu.push_back(r.cpuSeconds);
            const double equalCpu = medianOf(refCpu);
            if (!asJson) {
                std::printf("  budget %lld evaluations, %lld seeds; equal time: %.4g CPU s (%s's median)\n",
                            (long long)b, (long long)seedCount, equalCpu, timeReference.c_str());
                std::printf("  %-*s %7s %7s %9s %11s %11s %10s | %7s %7s %9s\n", nameWidth, "searcher",
                            "<=0.1%", "<=1%", "median", "evals to 1%", "CPU s to 1%", "CPU s/run", "<=0.1%",
                            "<=1%", "median");
            }
            for (const auto& name : names) {
                Row row;
                row.scenario = key;
                row.searcher = name;
                row.budget = b;
                row.reference = reference;
                row.megatron = megatronBest;
                row.equalCpu = equalCpu;
                row.note = notes[{b, name}];
                row.s = summarize(runs[{b, name}], reference, std::isfinite(equalCpu) ? equalCpu : 0);
                rows.push_back(row);
                if (asJson) continue;
                if (!row.note.empty()) {
                    std::printf("  %-*s %s\n", nameWidth, name.c_str(), row.note.c_str());
                    continue;
                }
                const BenchSummary& s = row.s;
                std::printf("  %-*s %7s %7s %9s %11s %11s %10s | %7s %7s %9s\n", nameWidth, name.c_str(),
                            percent(s.within01).c_str(), percent(s.within1).c_str(),
                            cell(s.medianFraction, "%.4f").c_str(), cell(s.evalsTo1, "%.0f").c_str(),
                            cell(s.cpuTo1, "%.4f").c_str(), cell(s.medianCpuSeconds, "%.4f").c_str(),
                            percent(s.timeWithin01).c_str(), percent(s.timeWithin1).c_str(),
                            cell(s.timeMedianFraction, "%.4f").c_str());
            }
            if (!asJson) std::fflush(stdout);
        }
        if (!asJson) std::printf("\n");
        if (interrupt.interrupted()) break;
    }
    if (interrupt.interrupted()) std::cerr << "shardplan: interrupted; the rows above are partial\n";

    static const char* kColumns[] = {"scenario",
                                     "searcher",
                                     "budget",
                                     "runs",
                                     "best_known",
                                     "megatron",
                                     "median_best",
                                     "min_best",
                                     "max_best",
                                     "within_0.1pct",
                                     "within_1pct",
                                     "median_fraction",
                                     "evals_to_1pct",
                                     "cpu_s_to_1pct",
                                     "cpu_s_per_run",
                                     "equal_time_cpu_s",
                                     "time_within_0.1pct",
                                     "time_within_1pct",
                                     "time_median_fraction"};
    auto values = [](const Row& r) {
        const BenchSummary& s = r.s;
        return std::vector<double>{double(s.runs),   r.reference,    r.megatron,    s.medianBest,
                                   s.minBest,        s.maxBest,      s.within01,    s.within1,
                                   s.medianFraction, s.evalsTo1,     s.cpuTo1,      s.medianCpuSeconds,
                                   r.equalCpu,       s.timeWithin01, s.timeWithin1, s.timeMedianFraction};
    };
    if (asJson) {
        nlohmann::ordered_json j;
        j["budgets"] = budgets;
        j["seeds"] = seedCount;
        j["equal_time_reference"] = timeReference;
        auto& out = j["results"] = nlohmann::ordered_json::array();
        for (const Row& r : rows) {
            nlohmann::ordered_json row;
            row["scenario"] = r.scenario;
            row["searcher"] = r.searcher;
            row["budget"] = r.budget;
            const auto v = values(r);
            for (size_t k = 0; k < v.size(); ++k)
                row[kColumns[k + 3]] =
                    std::isinf(v[k]) && v[k] > 0 ? nlohmann::ordered_json("never") : num(v[k]);
            if (!r.note.empty()) row["note"] = r.note;
            out.push_back(row);
        }
        std::cout << jsonText(j) << "\n";
    }
    if (auto csv = a.option("csv")) {
        std::ostringstream s;
        for (size_t k = 0; k < std::size(kColumns); ++k) s << (k ? "," : "") << kColumns[k];
        s << "\n";
        for (const Row& r : rows) {
            s << csvField(r.scenario) << "," << csvField(r.searcher) << "," << r.budget;
            for (double x : values(r)) {
                char buf[64] = "";
                if (std::isinf(x))
                    std::snprintf(buf, sizeof buf, "inf");
                else if (std::isfinite(x))
                    std::snprintf(buf, sizeof buf, "%.10g", x);
                s << "," << buf;
            }
            s << "\n";
        }
        if (auto w = writeFileAtomic(*csv, s.str()); !w) {
            std::cerr << w.error().str() << "\n";
            return kBadInput;
        }
    }
    return kOk;
}

} // namespace sp::cli
