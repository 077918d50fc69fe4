// shardplan: the headless planner. Exit codes: 0 ok, 1 bad input, 2 usage.

#include "args.h"
#include "cost_commands.h"
#include "export_commands.h"
#include "search_commands.h"

#include "core/io/formats.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

namespace {

using sp::cli::Args;

constexpr int kOk = 0, kBadInput = 1, kUsage = 2;

const char* kUsageText = R"(usage: shardplan <command> [options]

commands:
  validate [--json] [--kind KIND] FILE...   check model, cluster, workload, constraints, scenario or plan files
                                            (a model may be a Hugging Face config.json)
  evaluate --scenario S [--plan P] [--json] the metrics and breakdown of a plan (default: the Megatron plan)
  calibrate [--json] [FILE]                 the cost model against public measurements
  bench --eval-speed [--json] [--scenario S]...
                                            plan evaluations per second on one core
  search --scenario S --searcher NAME [--budget N] [--seconds T] [--seed K] [--threads T]
         [--out FILE] [--json]              the best plan a searcher finds (megatron, exhaustive, random, sa,
                                            ga, rl; default budget 2000); Ctrl-C stops it with the best so far;
                                            exit 1 when no plan is feasible
  compare --scenario S A B [--json]         two plans' metrics side by side (ratios B/A) and what differs
  export --scenario S (--plan P | --searcher NAME [--budget N] [--seed K])
         --format json|yaml|vllm|sglang [--model PATH] [--out F]
                                            a plan file, or the plan as a vLLM or SGLang launch command
                                            (default plan: the Megatron plan)
  bench --scenario S... [--searchers LIST] [--budget N] [--seeds K] [--threads T] [--json] [--csv F]
                                            searchers over seeds 1..K: best throughput, vs Megatron, evals to 99%

exit status: 0 ok, 1 bad input, 2 usage error
)";

int usage(const std::string& why) {
    if (!why.empty()) std::cerr << "shardplan: " << why << "\n\n";
    std::cerr << kUsageText;
    return kUsage;
}

int cmdValidate(const std::vector<std::string>& argv) {
    Args a(argv, {"json"}, {"kind"});
    if (!a.ok()) return usage(a.error());
    if (a.positionals().empty()) return usage("validate needs at least one FILE");
    std::optional<sp::FileKind> kind;
    if (auto k = a.option("kind")) {
        kind = sp::fileKindFromName(*k);
        if (!kind) return usage("--kind must be model, cluster, workload, constraints, scenario or plan");
    }
    bool allOk = true;
    for (const auto& file : a.positionals()) {
        const sp::FileReport r = sp::validateFile(file, kind);
        allOk = allOk && r.ok;
        if (a.flag("json")) {
            nlohmann::ordered_json j;
            j["file"] = r.file;
            j["kind"] = r.kind ? std::string(sp::nameOf(*r.kind)) : nullptr;
            j["ok"] = r.ok;
            j["error"] = r.ok ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(r.error.str());
            if (r.ok && (r.kind == sp::FileKind::Model || r.kind == sp::FileKind::Scenario)) {
                j["params_total"] = r.paramsTotal;
                j["params_active"] = r.paramsActive;
            }
            if (r.ok) j["summary"] = r.summary;
            std::cout << j.dump() << "\n";
        } else if (r.ok) {
            std::cout << r.file << ": " << sp::nameOf(*r.kind) << " " << r.summary << "\n";
        } else {
            std::cerr << r.error.str() << "\n";
        }
    }
    return allOk ? kOk : kBadInput;
}

} // namespace

int main(int argc, char** argv) {
    if (argc < 2) return usage("");
    const std::string cmd = argv[1];
    const std::vector<std::string> rest(argv + 2, argv + argc);
    if (cmd == "-h" || cmd == "--help" || cmd == "help") {
        std::cout << kUsageText;
        return kOk;
    }
    if (cmd == "validate") return cmdValidate(rest);
    if (cmd == "evaluate") return sp::cli::cmdEvaluate(rest);
    if (cmd == "calibrate") return sp::cli::cmdCalibrate(rest);
    if (cmd == "bench" && std::find(rest.begin(), rest.end(), "--eval-speed") != rest.end())
        return sp::cli::cmdEvalSpeed(rest);
    if (cmd == "search") return sp::cli::cmdSearch(rest);
    if (cmd == "compare") return sp::cli::cmdCompare(rest);
    if (cmd == "export") return sp::cli::cmdExport(rest);
    if (cmd == "bench") return sp::cli::cmdBench(rest);
    return usage("unknown command '" + cmd + "'");
}
