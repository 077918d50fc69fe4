// shardplan: the headless planner. Exit codes: 0 ok, 1 bad input, 2 usage.

#include "args.h"
#include "common.h"
#include "cost_commands.h"
#include "export_commands.h"
#include "pareto_command.h"
#include "search_commands.h"
#include "sim_commands.h"

#include "core/common/version.h"
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
  evaluate --scenario S [--plan P] [--json] the metrics and breakdown of a plan (default: the Megatron plan);
           [--load L]                       a disaggregated plan: rate-matched pools, KV transfer, queueing at
                                            load L (a share of its capacity)
  calibrate [--json] [FILE]                 the cost model against public measurements
  bench --eval-speed [--json] [--scenario S]...
                                            plan evaluations per second on one core
  bench --sim-speed [--scenario S] [--requests N] [--runs K] [--json]
                                            CPU seconds of a serving simulation on one core
                                            (default: 100,000 chat requests, DeepSeek-V3 on 256 H100)
@SIMULATE@@CAPACITY@  search --scenario S --searcher NAME [--budget N] [--seconds T] [--seed K] [--threads T]
         [--out FILE] [--json]              the best plan a searcher finds (megatron, exhaustive, random, sa,
                                            ga, rl; default budget 2000); Ctrl-C stops it with the best so far;
                                            exit 1 when no plan is feasible
  search --scenario S --disaggregated [--searcher NAME] [--budget N] ...
                                            a prefill pool and a decode pool: every node split, each pool's
                                            plan searched (default sa, budget 1000 per pool size)
  compare --scenario S A B [--json]         two plans' metrics side by side (ratios B/A) and what differs;
                                            either may be a disaggregated plan
@EXPORT@
  bench --scenario S... [--searchers LIST] [--budget N] [--seeds K] [--threads T] [--json] [--csv F]
                                            searchers over seeds 1..K: best throughput, vs Megatron, evals to 99%
  bench --rl-speed --scenario S... [--searchers NAME] [--budget N] [--seeds K]
                                            rl's wall and CPU time beside random's, seed by seed, and its
                                            policy time per evaluation
  pareto --scenario S [--searcher NAME] [--points N] [--budget B] [--seed K] [--threads T]
         [--seconds T] [--no-warm-start] [--json] [--csv F] [--at-tpot MS | --at-user-tps X]
                                            throughput per GPU against tokens/s per user under the TTFT SLO:
                                            N TPOT targets searched (default sa, 16 points, budget 2000 each),
                                            dominated points dropped, the Megatron recipe's frontier beside;
                                            --at-tpot/--at-user-tps: the frontier plan at that interactivity;
                                            --no-warm-start: each search from scratch (to compare);
                                            Ctrl-C stops it with the points found so far;
                                            --disaggregated [--pool-budget N]: the best prefill/decode
                                            split at each target beside it (default 200 a pool)

  help COMMAND                              one command's usage (also: COMMAND --help)
  --version                                 the version

exit status: 0 ok, 1 bad input, 2 usage error
)";

/// The usage text, with export's, simulate's and capacity's entries generated from the option tables their
/// parsers use (sp::cli::exportUsage, simulateUsage, capacityUsage), so the help cannot drift from what the
/// verbs accept.
std::string usageText() {
    std::string text = kUsageText;
    const auto put = [&](const std::string& marker, const std::string& with) {
        text.replace(text.find(marker), marker.size(), with);
    };
    put("@EXPORT@\n", sp::cli::exportUsage());
    put("@SIMULATE@", sp::cli::simulateUsage());
    put("@CAPACITY@", sp::cli::capacityUsage());
    return text;
}

/// The lines of the usage text that describe one command ("bench" has two entries); empty when unknown.
std::string commandUsage(const std::string& cmd) {
    std::string out;
    bool inside = false;
    size_t pos = 0;
    const std::string text = usageText();
    while (pos < text.size()) {
        const size_t end = text.find('\n', pos);
        const std::string line = text.substr(pos, end == std::string::npos ? std::string::npos : end - pos);
        pos = end == std::string::npos ? text.size() : end + 1;
        const bool entry = line.rfind("  ", 0) == 0 && line.size() > 2 && line[2] != ' ';
        if (entry)
            inside = line.compare(2, cmd.size() + 1, cmd + " ") == 0;
        else if (line.rfind("   ", 0) != 0)
            inside = false;
        // "  verb ..." becomes "  shardplan verb ...": continuation lines move right by as much.
        if (inside) out += (entry ? "  shardplan " + line.substr(2) : std::string(10, ' ') + line) + "\n";
    }
    return out;
}

bool wantsHelp(const std::vector<std::string>& args) {
    for (const auto& a : args) {
        if (a == "--") return false;
        if (a == "--help" || a == "-h") return true;
    }
    return false;
}

int usage(const std::string& why);

int printCommandUsage(const std::string& cmd) {
    const std::string u = commandUsage(cmd);
    if (u.empty()) return usage("unknown command '" + cmd + "'");
    std::cout << "usage:\n" << u << "\nexit status: 0 ok, 1 bad input, 2 usage error\n";
    return kOk;
}

int usage(const std::string& why) {
    if (!why.empty()) std::cerr << "shardplan: " << why << "\n\n";
    std::cerr << usageText();
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
            // A kind that could not be told is null (a ternary of string and nullptr would build a string
            // from a null pointer).
            if (r.kind)
                j["kind"] = std::string(sp::nameOf(*r.kind));
            else
                j["kind"] = nullptr;
            j["ok"] = r.ok;
            j["error"] = r.ok ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(r.error.str());
            if (r.ok && (r.kind == sp::FileKind::Model || r.kind == sp::FileKind::Scenario)) {
                j["params_total"] = r.paramsTotal;
                j["params_active"] = r.paramsActive;
            }
            if (r.ok) j["summary"] = r.summary;
            // Names, keys and file names may hold invalid UTF-8: replace it rather than throw.
            std::cout << sp::cli::jsonText(j, -1) << "\n";
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
    if (cmd == "-h" || cmd == "--help" || (cmd == "help" && rest.empty())) {
        std::cout << usageText();
        return kOk;
    }
    if (cmd == "--version" || cmd == "-V") {
        std::cout << "shardplan " << sp::kVersion << "\n";
        return kOk;
    }
    if (cmd == "help") {
        if (rest.size() > 1) return usage("help takes one command");
        return printCommandUsage(rest[0]);
    }
    if (!commandUsage(cmd).empty() && wantsHelp(rest)) return printCommandUsage(cmd);
    if (cmd == "validate") return cmdValidate(rest);
    if (cmd == "evaluate") return sp::cli::cmdEvaluate(rest);
    if (cmd == "calibrate") return sp::cli::cmdCalibrate(rest);
    if (cmd == "bench" && std::find(rest.begin(), rest.end(), "--eval-speed") != rest.end())
        return sp::cli::cmdEvalSpeed(rest);
    if (cmd == "bench" && std::find(rest.begin(), rest.end(), "--sim-speed") != rest.end())
        return sp::cli::cmdSimSpeed(rest);
    if (cmd == "simulate") return sp::cli::cmdSimulate(rest);
    if (cmd == "capacity") return sp::cli::cmdCapacity(rest);
    if (cmd == "search") return sp::cli::cmdSearch(rest);
    if (cmd == "compare") return sp::cli::cmdCompare(rest);
    if (cmd == "export") return sp::cli::cmdExport(rest);
    if (cmd == "bench") return sp::cli::cmdBench(rest);
    if (cmd == "pareto") return sp::cli::cmdPareto(rest);
    return usage("unknown command '" + cmd + "'");
}
