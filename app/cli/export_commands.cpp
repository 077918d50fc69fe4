// shardplan export: a plan file (JSON, YAML) or a serving engine's launch (vLLM, SGLang, TensorRT-LLM,
// Dynamo), printed or written as one script per node.
#include "export_commands.h"

#include "args.h"
#include "common.h"
#include "disagg_commands.h"
#include "interrupt.h"
#include "verbs.h"

#include "core/export/launch.h"
#include "core/io/formats.h"
#include "core/searchers/registry.h"

#include <iostream>
#include <optional>
#include <set>

namespace sp::cli {

namespace {

constexpr int64_t kDefaultBudget = 2000;

} // namespace

int cmdExport(const std::vector<std::string>& argv) {
    ScenarioVerb start = startScenarioVerb(argv, "export");
    if (start.exit) return *start.exit;
    Args& a = start.args;
    const std::string& usage = start.usage;
    const std::optional<std::string>& scenarioPath = start.scenario;
    const auto format = a.option("format");
    const auto engineName = a.option("engine");
    if (format && engineName) return usageError("give --format or --engine, not both", usage);
    if (!format && !engineName)
        return usageError("--format (json, yaml) or --engine (vllm, sglang, trtllm, dynamo) is required",
                          usage);
    const bool planFile = format && (*format == "json" || *format == "yaml");
    std::optional<ServingEngine> engine;
    if (format && !planFile) {
        // --format vllm|sglang: the alias of --engine for the two engines it always had.
        engine = servingEngineFromName(*format);
        if (engine != ServingEngine::Vllm && engine != ServingEngine::Sglang)
            return usageError("--format must be json, yaml, vllm or sglang", usage);
    }
    if (engineName) {
        engine = servingEngineFromName(*engineName);
        if (!engine)
            return usageError("--engine must be vllm, sglang, trtllm or dynamo, not '" + *engineName + "'",
                              usage);
    }
    if (planFile)
        for (const char* o : {"model", "engine-version", "worker", "out-dir"})
            if (a.option(o)) return usageError(std::string("--") + o + " applies to engine exports", usage);
    if (planFile && a.flag("strict")) return usageError("--strict applies to engine exports", usage);
    ExportOptions options;
    if (engine) {
        options.engine = *engine;
        options.version = a.option("engine-version").value_or("");
        options.modelPath = a.option("model").value_or("");
        options.adapt = !a.flag("strict");
        if (auto v = findEngineVersion(*engine, options.version); !v)
            return usageError(v.error().message, usage);
        if (const auto w = a.option("worker")) {
            if (*engine != ServingEngine::Dynamo)
                return usageError("--worker goes with --engine dynamo", usage);
            const auto we = servingEngineFromName(*w);
            if (!we || *we == ServingEngine::Dynamo)
                return usageError("--worker must be vllm, sglang or trtllm", usage);
            options.dynamoWorker = *we;
        }
    }
    if (a.option("out") && a.option("out-dir")) return usageError("give --out or --out-dir, not both", usage);
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
        if (!searcher) return usageError(searcherError(*searcherName), usage);
    }

    const auto scenario = loadScenarioOrReport(*scenarioPath);
    if (!scenario) return kBadInput;
    if (planPath) {
        auto dis = isDisaggregatedPlan(*planPath);
        if (!dis) {
            std::cerr << dis.error().str() << "\n";
            return kBadInput;
        }
        if (dis.value())
            return exportDisaggregated(scenario.value(), *planPath, planFile ? format : std::nullopt, options,
                                       a.option("out"), a.option("out-dir"));
    }
    // An engine export needs the path the engine loads: say so before a search, not after it.
    if (engine && options.modelPath.empty() && defaultModelPath(scenario->model).empty()) {
        std::cerr << *scenarioPath << ": the model '" << scenario->model.name
                  << "' has no Hugging Face id (hub_id) and no huggingface.co source: give the path or "
                     "repository id the engine should load with --model\n";
        return kBadInput;
    }
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
        SearchResult r;
        {
            // Ctrl-C stops the search; the best plan so far is exported.
            InterruptToStop interrupt;
            r = searcher->run(space, searchEngine, o, nullptr, interrupt.token());
        }
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
                  << " evaluations" << (r.stopped ? " (stopped)" : "") << ", best "
                  << degreesText(plan, scenario->model.moe.present()) << ", "
                  << static_cast<long long>(r.best.metrics.throughput) << " tokens/s\n";
    } else {
        plan = model.megatronPlan();
    }

    std::string text;
    if (format && *format == "json") {
        text = toJson(plan, scenario->model);
    } else if (format && *format == "yaml") {
        text = toYaml(plan, scenario->model);
    } else {
        auto cmd = launchCommand(scenario.value(), plan, options);
        if (!cmd) {
            std::cerr << planPath.value_or("shardplan") << ": " << cmd.error().str() << "\n";
            return kBadInput;
        }
        if (cmd->adapted) std::cerr << "shardplan: " << cmd->notes.front() << "\n";
        if (const auto dir = a.option("out-dir")) {
            auto written = writeLaunchDirectory(*dir, cmd.value(), toYaml(cmd->plan, scenario->model));
            if (!written) {
                std::cerr << written.error().str() << "\n";
                return kBadInput;
            }
            for (const auto& path : written.value()) std::cout << path << "\n";
            return kOk;
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
