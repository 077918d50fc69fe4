// shardplan: the headless planner. Exit codes: 0 ok, 1 bad input, 2 usage.

#include "args.h"
#include "common.h"
#include "cost_commands.h"
#include "export_commands.h"
#include "fleet_command.h"
#include "jsonerror.h"
#include "pareto_command.h"
#include "search_commands.h"
#include "sim_commands.h"
#include "verbs.h"

#include "core/common/error.h"
#include "core/common/version.h"
#include "core/io/formats.h"
#include "core/io/gpudb.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

namespace {

using sp::cli::Args;

constexpr int kOk = 0, kBadInput = 1, kUsage = 2;

bool wantsHelp(const std::vector<std::string>& args) {
    for (const auto& a : args) {
        if (a == "--") return false;
        if (a == "--help" || a == "-h") return true;
    }
    return false;
}

int usage(const std::string& why);
int run(const std::string& cmd, const std::vector<std::string>& rest);

/// `help VERB` / `VERB --help`: that verb's usage and options, from the table its parser is built from.
int printCommandUsage(const std::string& cmd) {
    const std::string u = sp::cli::verbHelp(cmd);
    if (u.empty()) return usage("unknown command '" + cmd + "'");
    std::cout << u;
    return kOk;
}

int usage(const std::string& why) {
    if (!why.empty()) std::cerr << "shardplan: " << why << "\n\n";
    std::cerr << sp::cli::programUsage();
    return kUsage;
}

int cmdValidate(const std::vector<std::string>& argv) {
    Args a = sp::cli::parseArgs(argv, sp::cli::verb("validate"));
    if (!a.ok()) return usage(a.error());
    if (a.positionals().empty()) return usage("validate needs at least one FILE");
    std::optional<sp::FileKind> kind;
    if (auto k = a.option("kind")) {
        kind = sp::fileKindFromName(*k);
        if (!kind)
            return usage(
                "--kind must be model, cluster, workload, constraints, scenario, plan, fleet or prices");
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
        std::cout << sp::cli::programUsage();
        return kOk;
    }
    if (cmd == "--version" || cmd == "-V") {
        std::cout << "shardplan " << sp::kVersion << "\n";
        return kOk;
    }
    // "bench --eval-speed" and "bench --sim-speed" are modes parsed on their own, with their own help.
    const auto has = [&rest](const char* o) { return std::find(rest.begin(), rest.end(), o) != rest.end(); };
    const char* benchMode = cmd != "bench"        ? nullptr
                            : has("--eval-speed") ? "bench --eval-speed"
                            : has("--sim-speed")  ? "bench --sim-speed"
                                                  : nullptr;
    if (cmd == "help") {
        if (rest.size() == 2 && rest[0] == "bench" && (rest[1] == "--eval-speed" || rest[1] == "--sim-speed"))
            return printCommandUsage("bench " + rest[1]);
        if (rest.size() > 1) return usage("help takes one command");
        return printCommandUsage(rest[0]);
    }
    if (!sp::cli::verbHelp(cmd).empty() && wantsHelp(rest))
        return printCommandUsage(benchMode ? benchMode : cmd);
    const auto dashes = std::find(rest.begin(), rest.end(), "--");
    if (std::find(rest.begin(), dashes, "--json") == dashes) return run(cmd, rest);
    // --json: a failure that printed nothing to stdout prints its error there as JSON too.
    nlohmann::ordered_json failure;
    {
        sp::cli::JsonErrorOnFailure guard;
        const int code = run(cmd, rest);
        if (code == kOk || guard.wroteOutput()) return code;
        failure["error"] = guard.errors();
        failure["exit_status"] = code;
    }
    std::cout << sp::cli::jsonText(failure) << "\n";
    return failure["exit_status"].get<int>();
}

namespace {
/// `--prices FILE`, before a `--`, on any command: a price list that replaces the GPU database's prices
/// (sp::usePriceList). Taken out of the arguments; false, with the error printed, where the file is bad.
bool takePriceList(std::vector<std::string>& args) {
    std::optional<std::string> file;
    for (size_t i = 0; i < args.size() && args[i] != "--";) {
        if (args[i] == "--prices") {
            if (i + 1 >= args.size()) {
                std::cerr << "shardplan: --prices needs a FILE\n";
                return false;
            }
            file = args[i + 1];
            args.erase(args.begin() + long(i), args.begin() + long(i) + 2);
        } else if (args[i].rfind("--prices=", 0) == 0) {
            file = args[i].substr(9);
            args.erase(args.begin() + long(i));
        } else {
            ++i;
        }
    }
    if (!file) return true;
    try {
        sp::usePriceList(sp::loadPriceList(*file));
        return true;
    } catch (const sp::InputError& e) {
        std::cerr << e.what() << "\n";
        return false;
    }
}

int run(const std::string& cmd, const std::vector<std::string>& given) {
    std::vector<std::string> rest = given;
    if (!takePriceList(rest)) return kBadInput;
    if (cmd == "validate") return cmdValidate(rest);
    if (cmd == "evaluate") return sp::cli::cmdEvaluate(rest);
    if (cmd == "calibrate") return sp::cli::cmdCalibrate(rest);
    if (cmd == "bench" && std::find(rest.begin(), rest.end(), "--eval-speed") != rest.end())
        return sp::cli::cmdEvalSpeed(rest);
    if (cmd == "bench" && std::find(rest.begin(), rest.end(), "--sim-speed") != rest.end())
        return sp::cli::cmdSimSpeed(rest);
    if (cmd == "simulate") return sp::cli::cmdSimulate(rest);
    if (cmd == "capacity" && std::any_of(rest.begin(), rest.end(), [](const std::string& a) {
            return a == "--fleet" || a.rfind("--fleet=", 0) == 0;
        }))
        return sp::cli::cmdFleet(rest);
    if (cmd == "capacity") return sp::cli::cmdCapacity(rest);
    if (cmd == "search") return sp::cli::cmdSearch(rest);
    if (cmd == "compare") return sp::cli::cmdCompare(rest);
    if (cmd == "export") return sp::cli::cmdExport(rest);
    if (cmd == "bench") return sp::cli::cmdBench(rest);
    if (cmd == "pareto") return sp::cli::cmdPareto(rest);
    return usage("unknown command '" + cmd + "'");
}
} // namespace
