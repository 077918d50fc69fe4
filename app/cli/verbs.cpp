#include "verbs.h"

#include "common.h"

#include <set>
#include <stdexcept>

namespace sp::cli {

namespace {

// Shared option lines.
constexpr OptionSpec kScenario{"scenario", "S", "the scenario file (model, cluster, workload, constraints)"};
constexpr OptionSpec kJson{"json", "", "JSON on stdout (a failure too: {\"error\", \"exit_status\"})"};
constexpr OptionSpec kThreads{"threads", "T", "evaluation threads (default 0: all cores)"};
constexpr OptionSpec kSeed{"seed", "K", "the search's seed (default 1)"};
constexpr const char* kSearchers =
    "megatron, exhaustive, random, random-seq, cd, cd-restarts, sa, ga, rl (Learn to Shard: the learned\n"
    "policy over the elite history), rl:FLAG+FLAG (an ablation)";

std::vector<VerbSpec> makeVerbs() {
    std::vector<VerbSpec> v;
    v.push_back({"validate",
                 {"validate [--json] [--kind KIND] FILE..."},
                 "check model, cluster, workload, constraints, scenario, plan,\n"
                 "fleet or price-list files (a model may be a Hugging Face\n"
                 "config.json)",
                 {kJson, {"kind", "KIND", "read every FILE as this kind (default: told by the file)"}}});
    v.push_back({"evaluate",
                 {"evaluate --scenario S [--plan P] [--load L] [--json]"},
                 "the metrics and breakdown of a plan (default: the Megatron\n"
                 "plan); a disaggregated plan: rate-matched pools, KV transfer,\n"
                 "queueing at load L",
                 {kScenario,
                  {"plan", "P", "the plan file (default: the Megatron plan)"},
                  {"load", "L", "a disaggregated plan's arrival rate, a share of its capacity (0-0.99)"},
                  kJson}});
    v.push_back({"calibrate",
                 {"calibrate [--json] [MEASUREMENTS.yaml]",
                  "calibrate --serving [--requests N] [--json] [CHECKS.yaml]",
                  "calibrate --fit FILE[,FILE...] [--cluster C] [--factors F1,F2...]",
                  "          [--family F] [--scenario S [--plan P]] [--out FITTED.yaml] [--json]"},
                 "the cost model against public measurements; --serving: the\n"
                 "serving simulation against MLPerf server runs (p99 TTFT and\n"
                 "TPOT at their rates); --fit: fit a cluster's efficiency factors\n"
                 "to measured runs (Ctrl-C stops it with the factors fitted so far)",
                 {{"fit", "FILE",
                   "measurements to fit to (several, comma separated, fit together), or a "
                   "`vllm bench serve --save-result` JSON"},
                  {"cluster", "C", "the cluster whose factors start the fit (default: the H100 4x8 sample)"},
                  {"factors", "F1,F2",
                   "fit only these (compute, compute_fp4, memory, ...); the rest keep "
                   "their start values"},
                  {"family", "F",
                   "fit only the runs on this GPU family's GPUs (hopper, blackwell, cdna3, ...: "
                   "resources/gpus.yaml)"},
                  {"scenario", "S", "with a vLLM JSON: the model and cluster it ran on"},
                  {"plan", "P", "with --scenario: the layout it ran (default: the Megatron plan)"},
                  {"out", "F", "write the cluster with the fitted factors to F"},
                  {"serving", "", "simulate the MLPerf server runs of CHECKS.yaml at their rates"},
                  {"requests", "N", "--serving: requests a run at least (default 1000; each run 600 s)"},
                  kJson},
                 "without --fit: MEASUREMENTS.yaml defaults to the measurements installed with the program;\n"
                 "with --serving, CHECKS.yaml to mlperf-server-sim.yaml beside them"});
    v.push_back({"bench --eval-speed",
                 {"bench --eval-speed [--json] [--scenario S]... [--seconds T]"},
                 "plan evaluations per second on one core",
                 {{"eval-speed", "", "this mode"},
                  {"scenario", "S", "a scenario to time (repeatable; default: the samples')"},
                  {"seconds", "T", "time per scenario (default 2)"},
                  kJson}});
    v.push_back({"bench --sim-speed",
                 {"bench --sim-speed [--scenario S] [--requests N] [--rate R] [--runs K] [--json]"},
                 "CPU seconds of a serving simulation on one core (default:\n"
                 "100,000 chat requests, DeepSeek-V3 on 256 H100), the median\n"
                 "of K runs",
                 {{"sim-speed", "", "this mode"},
                  {"scenario", "S", "the scenario (default: deepseek-v3-h100-32x8.yaml)"},
                  {"requests", "N", "requests a run (default 100000)"},
                  {"rate", "R", "requests/s (default: 90% of the Megatron plan's capacity)"},
                  {"runs", "K", "runs with seeds 1..K, the median reported (default 5)"},
                  kJson}});
    v.push_back({"simulate",
                 {"simulate --scenario S [--plan P | --searcher NAME [--budget N]] (--rate R | --trace F)",
                  "         [--requests N] [--duration T] [--seed K] [--json]"},
                 "requests served by the plan, step by step: TTFT, TPOT,\n"
                 "inter-token and end-to-end percentiles, goodput, KV occupancy,\n"
                 "preemptions; Ctrl-C stops it with what completed",
                 {{"scenario", "S", "the scenario file (a serving workload)"},
                  {"plan", "P", "the plan (default: Megatron's); a disaggregated plan: both pools"},
                  {"searcher", "NAME", "search first (sa, ga, rl, ...) and simulate its best"},
                  {"budget", "N", "the search's evaluations (default 2000)"},
                  {"rate", "R", "requests/s, Poisson (or gamma gaps with --burst-cv)"},
                  {"burst-cv", "C", "coefficient of variation of the gaps (default 1: Poisson)"},
                  {"trace", "F", "replay a CSV or JSONL trace (the Azure LLM inference layout reads)"},
                  {"requests", "N", "requests to simulate (default 1000; with --trace: all of it)"},
                  {"duration", "T", "stop arrivals after T seconds"},
                  {"seed", "K", "the seed of the arrivals, lengths and the search (default 1)"},
                  {"routing", "R", "least-loaded (default) or round-robin over the replicas"},
                  {"batch-cap", "N", "sequences per micro-batch (default: the plan's batch)"},
                  {"json", "", "percentiles, CDFs and the timeline as JSON (a failure too)"}}});
    v.push_back(
        {"capacity",
         {"capacity --scenario S (--rate R | --max-rate) [--gpus b200,h200,mi300x] [--json]",
          "capacity --scenario S --rate R --disaggregated [--searcher NAME] [--budget N] [--json]",
          "capacity --fleet FLEET.yaml [--n-1] [--analytical] [--searcher NAME] [--json]"},
         "the fewest GPUs of each type that sustain R requests/s under\n"
         "the workload's SLOs, or the highest rate the scenario's cluster\n"
         "sustains; with $/hour, $/M tokens and what binds. --fleet:\n"
         "several models on one inventory at least cost, exactly",
         {{"scenario", "S", "the scenario file (a serving workload with SLOs)"},
          {"fleet", "FILE", "models, rates and SLOs, and a GPU inventory: assign them at least cost"},
          {"n-1", "", "--fleet: every rate still met with any one node gone"},
          {"analytical", "", "--fleet: each replica's rate from the steady state, not simulated"},
          {"rate", "R", "the fewest GPUs that sustain R requests/s under the SLOs"},
          {"max-rate", "", "the highest rate the scenario's cluster sustains"},
          {"disaggregated", "", "--rate: the cheapest prefill and decode pools (of decode_cluster too)"},
          {"gpus", "LIST", "GPU types to size (b200,h200,mi300x; default: the scenario's)"},
          {"plan", "P", "--max-rate: the plan (default: Megatron's)"},
          {"searcher", "NAME", "each cluster's plan from a search (default: Megatron's)"},
          {"budget", "N", "the search's evaluations (default 500)"},
          {"requests", "N", "requests a simulation at least (default 1000)"},
          {"burst-cv", "C", "coefficient of variation of the gaps (default 1: Poisson)"},
          {"seed", "K", "the seed (default 1)"},
          {"max-nodes", "N", "the most nodes tried (default 4096; --fleet: a replica's, default 4)"},
          kJson},
         "each run lasts at least 20 analytical request latencies (a run starts empty);\n"
         "--fleet: docs/serving.md (Fleets) has the file and the method"});
    v.push_back(
        {"search",
         {"search --scenario S --searcher NAME [--budget N] [--seconds T] [--seed K] [--threads T]",
          "       [--warm-start none|megatron|cd] [--out plan.json|plan.yaml] [--check N] [--requests N]",
          "       [--json]",
          "search --scenario S --disaggregated [--searcher NAME] [--budget N] [--seconds T] [--seed K]",
          "       [--threads T] [--no-warm-start] [--out plan.json|plan.yaml] [--json]"},
         "the best plan a searcher finds; Ctrl-C stops it with the best so\n"
         "far; exit 1 when no plan is feasible. --disaggregated: a prefill\n"
         "pool and a decode pool, every node split, each pool searched",
         {kScenario,
          {"searcher", "NAME", "the searcher (required; --disaggregated: default sa)"},
          {"budget", "N", "evaluations (default 2000; --disaggregated: 1000 per pool size)"},
          {"seconds", "T", "a wall-clock limit, 0.1 s to 1e6 s"},
          kSeed,
          kThreads,
          {"warm-start", "W", "none (default), megatron or cd: the plans the search starts from"},
          {"disaggregated", "", "search prefill and decode pools apart"},
          {"no-warm-start", "", "--disaggregated: each pool size from scratch (to compare)"},
          {"out", "F", "write the best plan to F (.json, .yaml or .yml)"},
          {"check", "N", "percentile SLOs: simulate the N best plans, show the best (default 4)"},
          {"requests", "N", "percentile SLOs: requests a simulation at least (default 1000)"},
          kJson},
         kSearchers});
    v.push_back({"compare",
                 {"compare --scenario S A B [--json]"},
                 "two plans' metrics side by side (ratios B/A) and what differs;\n"
                 "either may be a disaggregated plan",
                 {kScenario, kJson}});
    v.push_back({"export",
                 {"export --scenario S (--plan P | --searcher NAME [--budget N] [--seed K])",
                  "       (--format json|yaml | --engine E [--engine-version V] [--worker W] [--strict]",
                  "        [--model PATH]) [--out F | --out-dir DIR]"},
                 "a plan file, or the plan as an engine's launch",
                 {{"scenario", "S", "the scenario file"},
                  {"plan", "P", "the plan (default: Megatron's); a disaggregated plan: both pools"},
                  {"searcher", "NAME", "search first (sa, ga, rl, ...); Ctrl-C exports the best so far"},
                  {"budget", "N", "the search's evaluations (default 2000)"},
                  kSeed,
                  {"format", "F", "json|yaml: a plan file; vllm|sglang: as --engine"},
                  {"engine", "E", "vllm|sglang|trtllm|dynamo: the engine's launch"},
                  {"engine-version", "V", "a row of the engine's version table (default: newest)"},
                  {"worker", "W", "Dynamo's worker: vllm (default), sglang or trtllm"},
                  {"strict", "", "refuse a plan the version cannot run (default: adapt it)"},
                  {"model", "PATH", "the path the engine loads (default: the model's Hub id)"},
                  {"out", "F", "write the text to F"},
                  {"out-dir", "DIR", "write the node scripts, plan.yaml and NOTES.txt into DIR"}}});
    v.push_back(
        {"bench",
         {"bench --scenario S... [--searchers LIST] [--budgets LIST | --budget N] [--seeds K]",
          "      [--threads T] [--warm-start none|megatron|cd] [--best FILE] [--json] [--csv F]",
          "bench --refresh-best FILE --scenario S... [--searchers LIST] [--budget N] [--seeds K]",
          "bench --rl-speed --scenario S... [--searchers NAME] [--budget N] [--seeds K] [--threads T]",
          "bench --chain pareto|pools|rerun|policy --scenario S... [--searchers LIST] [--budgets LIST]",
          "      [--seeds K] [--points N] [--reference-budget N] [--threads T]",
          "bench --pretrain FILE --scenario S... [--budget N] [--rounds R] [--held-out NAME]..."},
         "searchers over seeds 1..K: best throughput, against Megatron\n"
         "and a best-known plan, evaluations and CPU time to 1%;\n"
         "--refresh-best: long runs that find the best-known plans;\n"
         "--rl-speed: rl's wall and CPU time beside random's;\n"
         "--chain: chains of searches (a Pareto sweep, the pool sizes,\n"
         "a rerun after tightening the TPOT SLO, from the last elite and\n"
         "policy, as the window reruns; policy: from the policy alone)\n"
         "against a long one;\n"
         "--pretrain: rl's prior, learned over the scenarios",
         {{"scenario", "S", "a scenario (repeatable)"},
          {"searchers", "LIST", "comma separated (default random,random-seq,cd,cd-restarts,sa,ga,rl)"},
          {"budgets", "LIST", "evaluation budgets, comma separated (default 100,500,2000,20000)"},
          {"budget", "N", "one budget (--refresh-best: default 200000)"},
          {"seeds", "K", "seeds 1..K per searcher (default 20; --refresh-best: 3)"},
          {"threads", "T", "benchmark runs in parallel (default 1; 0: all cores)"},
          {"warm-start", "W", "none (default), megatron or cd"},
          {"best", "FILE", "the best-known plans to measure against (default: the best of this bench)"},
          {"refresh-best", "FILE", "find the best-known plans and store them in FILE"},
          {"rl-speed", "", "time rl beside random, seed by seed"},
          {"chain", "KIND", "pareto, pools, rerun or policy: evaluations until a chain is within 1%"},
          {"points", "N", "--chain pareto: TPOT targets (default 8)"},
          {"reference-budget", "N", "--chain: evaluations of the reference chain in all (default 200000)"},
          {"pretrain", "FILE", "learn rl's prior over the scenarios and write it to FILE"},
          {"rounds", "R", "--pretrain: passes over the scenarios (default 2)"},
          {"held-out", "NAME", "--pretrain: a scenario left out, named in the file (repeatable)"},
          {"csv", "F", "also write the table to F"},
          kJson},
         "--eval-speed is its own mode: shardplan help bench --eval-speed"});
    v.push_back(
        {"pareto",
         {"pareto --scenario S [--searcher NAME] [--points N] [--budget B] [--seed K] [--threads T]",
          "       [--seconds T] [--no-warm-start] [--json] [--csv F]",
          "       [--at-tpot MS | --at-user-tps X] [--disaggregated [--pool-budget N]]"},
         "throughput per GPU against tokens/s per user under the TTFT\n"
         "SLO: N TPOT targets searched, dominated points dropped, the\n"
         "Megatron recipe's frontier beside; Ctrl-C stops it with the\n"
         "points found so far",
         {kScenario,
          {"searcher", "NAME", "the searcher of each target (default sa)"},
          {"points", "N", "TPOT targets, both ends included (default 16)"},
          {"budget", "B", "evaluations of each search (default 2000)"},
          {"seed", "K", "target k searches with seed K + k (default 1)"},
          kThreads,
          {"seconds", "T", "a wall-clock limit for the whole sweep, 0.1 s to 1e6 s"},
          {"no-warm-start", "", "each search from scratch, not from its neighbour's elite (to compare)"},
          {"at-tpot", "MS", "print the frontier plan at this TPOT"},
          {"at-user-tps", "X", "print the frontier plan at this many tokens/s per user"},
          {"disaggregated", "", "the best prefill/decode split at each target beside it"},
          {"pool-budget", "N", "--disaggregated: evaluations of each pool search (default 200)"},
          {"csv", "F", "also write the points to F"},
          kJson}});
    return v;
}

std::string optionLine(const OptionSpec& o) {
    std::string left = std::string("  --") + o.name + (*o.value ? std::string(" ") + o.value : "");
    if (left.size() < 24)
        left.resize(24, ' ');
    else
        left += "  ";
    return left + o.help + "\n";
}

/// Lines indented by `indent` spaces.
std::string indented(std::string_view text, int indent) {
    std::string out;
    size_t at = 0;
    while (at < text.size()) {
        const size_t nl = std::min(text.find('\n', at), text.size());
        out += std::string(size_t(indent), ' ') + std::string(text.substr(at, nl - at)) + "\n";
        at = nl + 1;
    }
    return out;
}

} // namespace

const std::vector<VerbSpec>& verbs() {
    static const std::vector<VerbSpec> table = makeVerbs();
    return table;
}

const VerbSpec& verb(std::string_view name) {
    for (const VerbSpec& v : verbs())
        if (name == v.name) return v;
    throw std::logic_error("no verb " + std::string(name));
}

Args parseArgs(const std::vector<std::string>& argv, const VerbSpec& v) {
    std::set<std::string> flags, values;
    for (const OptionSpec& o : v.options) (*o.value ? values : flags).insert(o.name);
    return Args(argv, flags, values);
}

std::string synopsisText(const VerbSpec& v, int indent) {
    std::string out;
    for (const char* line : v.synopsis) {
        if (!out.empty()) out += "\n" + std::string(size_t(indent), ' ');
        // A continuation line lines up under the verb's options.
        out += line[0] == ' ' ? std::string("          ") + line : std::string("shardplan ") + line;
    }
    return out;
}

std::string verbHelp(std::string_view name) {
    for (const VerbSpec& v : verbs()) {
        if (name != v.name) continue;
        std::string out =
            "usage:\n  " + synopsisText(v, 2) + "\n\n" + indented(v.summary, 2) + "\noptions:\n";
        for (const OptionSpec& o : v.options) out += optionLine(o);
        out +=
            optionLine({"prices", "FILE", "a price list replacing the GPU database's prices (any command)"});
        if (*v.notes) out += "\n" + indented(v.notes, 2);
        return out + "\nexit status: 0 ok, 1 bad input, 2 usage error\n";
    }
    return {};
}

std::string programUsage() {
    std::string out = "usage: shardplan <command> [options]\n\ncommands:\n";
    for (const VerbSpec& v : verbs()) {
        for (const char* line : v.synopsis) out += std::string("  ") + line + "\n";
        out += indented(v.summary, 6);
    }
    return out + "  help COMMAND            one command's usage and options (also: COMMAND --help)\n"
                 "  --version               the version\n\n"
                 "every command also takes:\n"
                 "  --prices FILE           a price list replacing the GPU database's prices whole\n"
                 "                          (basis: and usd_per_gpu_hour: {GPU id: USD}; docs/inputs.md)\n\n"
                 "exit status: 0 ok, 1 bad input, 2 usage error\n";
}

ScenarioVerb startScenarioVerb(const std::vector<std::string>& argv, std::string_view name) {
    const VerbSpec& spec = verb(name);
    ScenarioVerb v{parseArgs(argv, spec), synopsisText(spec), std::nullopt, std::nullopt};
    if (!v.args.ok())
        v.exit = usageError(v.args.error(), v.usage);
    else if (!v.args.positionals().empty())
        v.exit = usageError("unexpected argument '" + v.args.positionals()[0] + "'", v.usage);
    else if (!(v.scenario = v.args.option("scenario")))
        v.exit = usageError("--scenario is required", v.usage);
    return v;
}

} // namespace sp::cli
