// shardplan export: a plan file (JSON, YAML) or a serving engine's launch command (vLLM, SGLang).
#include "export_commands.h"

#include "args.h"
#include "common.h"

#include "core/io/formats.h"
#include "core/io/launch.h"
#include "core/search/searcher.h"

#include <iostream>
#include <optional>

namespace sp::cli {

namespace {

constexpr int64_t kDefaultBudget = 2000;

std::string searcherList() {
    std::string s;
    for (const auto& n : searcherNames()) s += (s.empty() ? "" : ", ") + n;
    return s;
}

} // namespace

int cmdExport(const std::vector<std::string>& argv) {
    const char* usage = "shardplan export --scenario S (--plan P | --searcher NAME [--budget N] [--seed K])\n"
                        "                        --format json|yaml|vllm|sglang [--model PATH] [--out F]";
    Args a(argv, {}, {"scenario", "plan", "searcher", "budget", "seed", "format", "model", "out"});
    if (!a.ok()) return usageError(a.error(), usage);
    if (!a.positionals().empty())
        return usageError("unexpected argument '" + a.positionals()[0] + "'", usage);
    const auto scenarioPath = a.option("scenario");
    if (!scenarioPath) return usageError("--scenario is required", usage);
    const auto format = a.option("format");
    if (!format) return usageError("--format is required (json, yaml, vllm or sglang)", usage);
    const bool planFile = *format == "json" || *format == "yaml";
    const std::optional<ServingEngine> engine = servingEngineFromName(*format);
    if (!planFile && !engine) return usageError("--format must be json, yaml, vllm or sglang", usage);
    if (planFile && a.option("model"))
        return usageError("--model applies to --format vllm and sglang", usage);
    const auto planPath = a.option("plan");
    const auto searcherName = a.option("searcher");
    if (planPath && searcherName) return usageError("give --plan or --searcher, not both", usage);
    const auto budget = a.integer("budget");
    const auto seed = a.integer("seed");
    if (!a.ok()) return usageError(a.error(), usage);
    if (!searcherName && (budget || seed)) return usageError("--budget and --seed go with --searcher", usage);
    if (budget && *budget < 1) return usageError("--budget must be at least 1", usage);
    if (seed && *seed < 0) return usageError("--seed must not be negative", usage);
    std::unique_ptr<Searcher> searcher;
    if (searcherName) {
        searcher = makeSearcher(*searcherName);
        if (!searcher)
            return usageError("unknown searcher '" + *searcherName + "' (" + searcherList() + ")", usage);
    }

    const auto scenario = loadScenarioOrReport(*scenarioPath);
    if (!scenario) return kBadInput;
    const CostModel model(scenario.value());
    Plan plan;
    if (planPath) {
        auto p = loadPlan(*planPath);
        if (!p) {
            std::cerr << p.error().str() << "\n";
            return kBadInput;
        }
        plan = p.value();
        if (auto why = model.checkPlan(plan)) {
            std::cerr << *planPath << ": plan does not fit the scenario: " << *why << "\n";
            return kBadInput;
        }
    } else if (searcher) {
        const CostModelObjective objective(model);
        const SearchSpace space(scenario.value());
        Engine searchEngine(objective);
        SearchOptions o;
        o.budget.evaluations = budget.value_or(kDefaultBudget);
        o.seed = uint64_t(seed.value_or(1));
        const SearchResult r = searcher->run(space, searchEngine, o, nullptr, {});
        if (r.refused || r.evaluations == 0) {
            std::cerr << "shardplan: " << r.message << "\n";
            return kBadInput;
        }
        if (!r.feasible()) {
            std::cerr << "shardplan: " << *searcherName << " found no feasible plan in " << r.evaluations
                      << " evaluations: " << r.best.metrics.violation << "\n";
            return kBadInput;
        }
        plan = r.best.plan;
        std::cerr << "shardplan: " << *searcherName << ", seed " << o.seed << ": " << r.evaluations
                  << " evaluations, best " << degreesText(plan, scenario->model.moe.present()) << ", "
                  << static_cast<long long>(r.best.metrics.throughput) << " tokens/s\n";
    } else {
        plan = model.megatronPlan();
    }

    std::string text;
    if (*format == "json") {
        text = toJson(plan);
    } else if (*format == "yaml") {
        text = toYaml(plan);
    } else {
        auto cmd = launchCommand(scenario.value(), plan, *engine, a.option("model").value_or(""));
        if (!cmd) {
            std::cerr << planPath.value_or("shardplan") << ": " << cmd.error().str() << "\n";
            return kBadInput;
        }
        text = cmd->text();
    }
    if (const auto out = a.option("out")) {
        if (auto w = writeFileAtomic(*out, text); !w) {
            std::cerr << w.error().str() << "\n";
            return kBadInput;
        }
    } else {
        std::cout << text;
    }
    return kOk;
}

} // namespace sp::cli
