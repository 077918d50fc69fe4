// shardplan capacity --fleet: which model runs on which GPUs, with what plan and how many replicas, at the
// lowest cost per hour that meets every model's rate under its SLOs (core/sim/fleet.h).
#include "fleet_command.h"

#include "args.h"
#include "common.h"
#include "interrupt.h"
#include "metrics_json.h"
#include "search_util.h"
#include "sim_common.h"
#include "verbs.h"

#include "core/io/fleetfiles.h"
#include "core/searchers/registry.h"
#include "core/sim/fleet.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>

namespace sp::cli {

namespace {

using J = nlohmann::ordered_json;

std::string ratesText(const FleetOptions& o) {
    if (o.analytical)
        return "analytical: each replica's steady state (throughput / output tokens at the plan's batch; the "
               "SLOs held on means, not percentiles)";
    return "simulated: each replica's highest rate under its SLOs (capacity --max-rate's bisection; runs of "
           "20 "
           "request latencies, at least " +
           std::to_string(o.search.sim.requests) + " requests)";
}

J replicaJson(const FleetReplica& r, const Fleet& f) {
    const FleetModel& m = f.models[size_t(r.model)];
    J j;
    j["model"] = m.name;
    j["gpu"] = f.inventory[size_t(r.type)].id;
    j["nodes"] = r.nodes;
    j["gpus"] = r.gpus;
    j["ok"] = r.ok;
    if (!r.ok) {
        j["why"] = r.why;
        return j;
    }
    j["plan_name"] = r.planName;
    j["degrees"] = degreesText(r.plan, m.model.moe.present());
    j["rate"] = r.rate;
    j["usd_per_hour"] = r.usdPerHour;
    j["output_tokens_per_s"] = r.outputTokensPerS;
    j["binding"] = r.binding;
    j["why"] = r.bindingWhy;
    j["simulations"] = r.simulations;
    return j;
}

J answerJson(const FleetAnswer& a, const Fleet& f, const std::string& path, const FleetOptions& o,
             double seconds) {
    J out;
    out["fleet"] = f.name;
    out["file"] = path;
    out["rates"] = o.analytical ? "analytical" : "simulated";
    out["headroom"] = a.nMinus1 ? "n-1" : "none";
    out["usd_per_hour"] = fleetUsdPerHour(a);
    out["gpus"] = fleetGpus(a);
    auto assignments = J::array();
    auto models = J::array();
    for (size_t m = 0; m < f.models.size(); ++m) {
        double capacity = 0;
        for (size_t j = 0; j < a.solution.counts.size(); ++j) {
            const int n = a.solution.counts[j];
            if (n == 0 || a.problem.candidates[j].model != int(m)) continue;
            const FleetReplica& r = a.replicas[size_t(a.replicaOf[j])];
            const FleetModel& fm = f.models[m];
            capacity += n * r.rate;
            J x;
            x["model"] = fm.name;
            x["gpu"] = f.inventory[size_t(r.type)].id;
            x["replicas"] = n;
            x["nodes_per_replica"] = r.nodes;
            x["gpus_per_replica"] = r.gpus;
            x["plan_name"] = r.planName;
            x["plan"] = J::parse(toJson(r.plan, fm.model));
            x["rate_per_replica"] = r.rate;
            x["capacity"] = n * r.rate;
            x["usd_per_hour"] = n * r.usdPerHour;
            x["binding"] = r.binding;
            x["why"] = r.bindingWhy;
            assignments.push_back(x);
        }
        J mj;
        mj["name"] = f.models[m].name;
        mj["rate"] = f.models[m].rate;
        mj["capacity"] = capacity;
        if (a.nMinus1) mj["worst_node_loss"] = worstNodeLoss(a.problem, a.solution.counts, int(m));
        models.push_back(mj);
    }
    out["assignments"] = assignments;
    out["models"] = models;
    auto inventory = J::array();
    for (size_t g = 0; g < f.inventory.size(); ++g) {
        const FleetGpuType& ft = f.inventory[g];
        const int64_t used = fleetGpus(a, int(g));
        inventory.push_back({{"gpu", ft.id},
                             {"nodes", ft.nodes},
                             {"gpus_per_node", ft.gpusPerNode},
                             {"nodes_used", (used + ft.gpusPerNode - 1) / ft.gpusPerNode},
                             {"gpus_used", used},
                             {"usd_per_gpu_hour", ft.pricePerGpuHour},
                             {"price_source", ft.priceSource}});
    }
    out["inventory"] = inventory;
    auto binds = J::array();
    for (const FleetBind& b : a.binds)
        binds.push_back({{"what", b.what}, {"why", b.why}, {"saving_usd_per_hour", b.savingUsdPerHour}});
    out["binds"] = binds;
    auto candidates = J::array();
    for (const FleetReplica& r : a.replicas) candidates.push_back(replicaJson(r, f));
    out["candidates"] = candidates;
    out["solver"] = {{"method", "branch and bound"},
                     {"exact", a.solution.exact},
                     {"nodes", a.solution.nodes},
                     {"candidates", a.problem.candidates.size()},
                     {"seconds", seconds}};
    return out;
}

void printAnswer(const FleetAnswer& a, const Fleet& f, const std::string& path, const FleetOptions& o,
                 double seconds) {
    std::printf("fleet     %s (%s)\n", f.name.empty() ? "-" : f.name.c_str(), path.c_str());
    std::printf("rates     %s\n", ratesText(o).c_str());
    std::printf("headroom  %s\n\n", a.nMinus1 ? "n-1: every rate still met with any one node gone"
                                              : "none (--n-1 to lose a node)");
    int width = 5; // the model column: the longest name
    for (const FleetModel& fm : f.models) width = std::max(width, int(fm.name.size()));
    std::printf("%-*s %8s  %-10s %8s  %-14s %9s %9s %9s  %s\n", width, "model", "rate/s", "gpu", "replicas",
                "GPUs each", "rate each", "capacity", "$/hour", "plan");
    for (size_t m = 0; m < f.models.size(); ++m) {
        const FleetModel& fm = f.models[m];
        bool first = true;
        for (size_t j = 0; j < a.solution.counts.size(); ++j) {
            const int n = a.solution.counts[j];
            if (n == 0 || a.problem.candidates[j].model != int(m)) continue;
            const FleetReplica& r = a.replicas[size_t(a.replicaOf[j])];
            const FleetGpuType& t = f.inventory[size_t(r.type)];
            std::printf("%-*s %8s  %-10s %8d  %-14s %9.3g %9.2f %9s  %s\n", width,
                        first ? fm.name.c_str() : "", first ? thousands(fm.rate, "%.4g").c_str() : "",
                        t.id.c_str(), n, fleetSizeText(r, t.gpusPerNode).c_str(), r.rate, n * r.rate,
                        thousands(n * r.usdPerHour, "%.2f").c_str(),
                        degreesText(r.plan, fm.model.moe.present()).c_str());
            first = false;
        }
    }
    std::printf("total     $%s/hour on %lld GPUs\n\n", thousands(fleetUsdPerHour(a), "%.2f").c_str(),
                (long long)fleetGpus(a));
    std::printf("%-10s %12s %12s %11s  %s\n", "gpu", "nodes used", "GPUs used", "$/GPU-hour", "price");
    for (size_t g = 0; g < f.inventory.size(); ++g) {
        const FleetGpuType& ft = f.inventory[g];
        const int64_t used = fleetGpus(a, int(g));
        const std::string nodes =
            std::to_string((used + ft.gpusPerNode - 1) / ft.gpusPerNode) + " of " + std::to_string(ft.nodes);
        const std::string gpus =
            std::to_string(used) + " of " + std::to_string(int64_t(ft.nodes) * ft.gpusPerNode);
        std::printf("%-10s %12s %12s %11.4g  %s\n", ft.id.c_str(), nodes.c_str(), gpus.c_str(),
                    ft.pricePerGpuHour, ft.priceSource.c_str());
    }
    std::printf("\nwhat binds\n");
    for (const FleetBind& b : a.binds) std::printf("  %s: %s\n", b.what.c_str(), b.why.c_str());
    int rated = 0;
    for (const FleetReplica& r : a.replicas) rated += r.ok;
    std::printf("\nSLOs      ");
    for (size_t m = 0; m < f.models.size(); ++m)
        std::printf("%s%s: %s", m ? "; " : "", f.models[m].name.c_str(),
                    sloText(f.models[m].workload).c_str());
    std::printf(
        "\nsolved    %s by branch and bound: %zu candidates (%d of %zu sizes have a plan and a rate), "
        "%lld nodes; %.1f s in all\n",
        a.solution.exact ? "exactly" : "NOT proven optimal", a.problem.candidates.size(), rated,
        a.replicas.size(), (long long)a.solution.nodes, seconds);
}

} // namespace

int cmdFleet(const std::vector<std::string>& argv) {
    const VerbSpec& spec = verb("capacity");
    Args a = parseArgs(argv, spec);
    const std::string usage = synopsisText(spec);
    if (!a.ok()) return usageError(a.error(), usage);
    if (!a.positionals().empty())
        return usageError("unexpected argument '" + a.positionals()[0] + "'", usage);
    for (const char* other : {"scenario", "rate", "gpus", "plan"})
        if (a.option(other))
            return usageError("--" + std::string(other) + " does not go with --fleet", usage);
    if (a.flag("max-rate")) return usageError("--max-rate does not go with --fleet", usage);
    const std::string path = *a.option("fleet");
    FleetOptions o;
    o.search.sim.requests = a.integer("requests").value_or(1000);
    o.search.sim.burstCv = a.number("burst-cv").value_or(1.0);
    o.search.sim.seed = uint64_t(a.integer("seed").value_or(1));
    o.budget = a.integer("budget").value_or(500);
    o.maxReplicaNodes = int(a.integer("max-nodes").value_or(4));
    if (!a.ok()) return usageError(a.error(), usage);
    o.analytical = a.flag("analytical");
    o.nMinus1 = a.flag("n-1");
    if (auto s = a.option("searcher")) {
        if (!searcherError(*s).empty()) return usageError(searcherError(*s), usage);
        o.searcher = *s;
    } else if (a.option("budget")) {
        return usageError("--budget goes with --searcher", usage);
    }
    if (o.analytical && (a.option("requests") || a.option("burst-cv")))
        return usageError("--requests and --burst-cv set the simulations; --analytical runs none", usage);
    auto loaded = loadFleet(path);
    if (!loaded) {
        std::cerr << loaded.error().str() << "\n";
        return kBadInput;
    }
    const Fleet& f = loaded.value();
    const bool json = a.flag("json");
    const auto t0 = std::chrono::steady_clock::now();
    FleetAnswer answer;
    {
        InterruptToStop interrupt;
        answer = planFleet(f, o, interrupt.token());
        if (interrupt.interrupted()) {
            std::cerr
                << "shardplan: interrupted; no fleet answer (the candidates' rates or the assignment did "
                   "not finish)\n";
            return kBadInput;
        }
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (!answer.ok) {
        std::cerr << path << ": " << answer.error << "\n";
        return kBadInput;
    }
    if (json)
        std::cout << jsonText(answerJson(answer, f, path, o, seconds)) << "\n";
    else
        printAnswer(answer, f, path, o, seconds);
    return kOk;
}

} // namespace sp::cli
