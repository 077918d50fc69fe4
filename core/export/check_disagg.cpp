// A disaggregated launch read back (checkDisaggLaunch): each pool checked as checkLaunch does, then
// SGLang's router against the servers it fronts (beside disagg_launch.cpp, which writes them).
#include "core/export/check_impl.h"

#include "core/cost/disagg.h"
#include "core/export/common.h"
#include "core/export/disagg_launch.h"

namespace sp {

using namespace exporting;
using namespace checking;

namespace {

/// The value of an option in a command's words (the engine's own, after any `env NAME=VALUE` prefix).
std::optional<std::string> wordAfter(const std::vector<std::string>& w, const std::string& flag) {
    for (size_t i = 0; i + 1 < w.size(); ++i)
        if (w[i] == flag) return w[i + 1];
    return std::nullopt;
}

} // namespace

std::vector<std::string> checkDisaggLaunch(const DisaggLaunch& l, const Scenario& s, const DisaggPlan& p,
                                           const EngineVersion& version, ServingEngine worker) {
    std::vector<std::string> v;
    const auto add = [&v](const std::string& what) {
        if (std::find(v.begin(), v.end(), what) == v.end()) v.push_back(what);
    };
    for (const auto& [name, lc, phase, nodes] :
         {std::tuple{"prefill", &l.prefill, Phase::Prefill, p.prefill.nodes},
          std::tuple{"decode", &l.decode, Phase::Decode, p.decode.nodes}})
        for (const auto& x : checkLaunch(*lc, poolScenario(s, phase, nodes), version, worker))
            // Dynamo: one frontend, on the prefill pool's node 0, routes to both pools (disagg_launch.cpp).
            if (!(version.engine == ServingEngine::Dynamo && phase == Phase::Decode &&
                  x == "Dynamo without a frontend"))
                add(std::string(name) + " pool: " + x);
    if (version.engine != ServingEngine::Sglang) return v;

    // The servers that serve an API (a multi-node server's node 0), as the router must name them:
    // SGLang's defaults port 30000, disaggregation_bootstrap_port 8998, host 127.0.0.1 (server_args.py at
    // 7ae368efde14).
    struct Server {
        std::string pool;
        size_t node;
        std::string port, bootstrap;
    };
    std::vector<Server> servers;
    for (const auto& [pool, lc] : {std::pair{"PREFILL", &l.prefill}, std::pair{"DECODE", &l.decode}}) {
        const auto scripts = lc->scripts();
        for (size_t k = 0; k < scripts.size(); ++k) {
            std::set<std::string> ports, bootstraps;
            for (const auto& words : parseScript(scripts[k].second)) {
                const auto c = parseEngineCommand(words);
                if (!c || c->program != "sglang.launch_server") continue;
                const std::string port = wordAfter(words, "--port").value_or("30000");
                const std::string boot = wordAfter(words, "--disaggregation-bootstrap-port").value_or("8998");
                if (wordAfter(words, "--host").value_or("127.0.0.1") != "0.0.0.0")
                    add(std::string(pool) + " node " + str(int64_t(k)) +
                        ": a server on host 127.0.0.1, which the router on another host cannot reach");
                if (!ports.insert(port).second)
                    add(std::string(pool) + " node " + str(int64_t(k)) + ": two servers on port " + port);
                if (std::string(pool) == "PREFILL" && !bootstraps.insert(boot).second)
                    add(std::string(pool) + " node " + str(int64_t(k)) + ": two servers on bootstrap port " +
                        boot);
                const std::string rank = wordAfter(words, "--node-rank").value_or("0");
                bool head = rank == "0";
                if (rank == "${NODE_RANK}") {
                    head = false;
                    for (const auto& [var, value] : lc->nodes[k].env)
                        if (var == "NODE_RANK") head = value == "0";
                }
                if (head) servers.push_back({pool, k, port, boot});
            }
        }
    }
    // The router, from router/bindings/python/sglang_router/router_args.py at 7ae368efde14:
    // --pd-disaggregation, --prefill URL [BOOTSTRAP_PORT] (append), --decode URL (append).
    if (l.router.commands.empty()) {
        add("no router in front of the pools");
        return v;
    }
    const std::string script = exporting::nodeScript("router", l.router);
    const auto cmds = parseScript(script);
    if (cmds.size() != 1 || cmds[0].size() < 4 || cmds[0][0] != "python3" ||
        cmds[0][2] != "sglang_router.launch_router") {
        add("router.sh does not run python3 -m sglang_router.launch_router");
        return v;
    }
    const auto& w = cmds[0];
    std::set<std::string> env;
    for (const auto& [var, value] : l.router.env) env.insert(var);
    if (std::find(w.begin(), w.end(), "--pd-disaggregation") == w.end())
        add("the router is not in PD mode (--pd-disaggregation)");
    std::vector<std::tuple<std::string, std::string, std::string>> named; // pool, URL, bootstrap
    for (size_t i = 0; i < w.size(); ++i) {
        if ((w[i] == "--prefill" || w[i] == "--decode") && i + 1 < w.size()) {
            const bool prefill = w[i] == "--prefill";
            std::string boot = "none";
            if (prefill && i + 2 < w.size() && w[i + 2].rfind("--", 0) != 0) boot = w[i + 2];
            named.emplace_back(prefill ? "PREFILL" : "DECODE", w[i + 1], boot);
            for (const auto& ph : placeholders(w[i + 1]))
                if (!env.count(ph)) add("router.sh uses ${" + ph + "} without requiring it");
        }
    }
    for (const Server& sv : servers) {
        const std::string url = "http://${" + sv.pool + "_NODE" + str(int64_t(sv.node)) + "_IP}:" + sv.port;
        const auto it = std::find_if(named.begin(), named.end(), [&](const auto& t) {
            return std::get<0>(t) == sv.pool && std::get<1>(t) == url;
        });
        if (it == named.end()) {
            add("the router does not name the " + lower(sv.pool) + " server at " + url);
            continue;
        }
        if (sv.pool == "PREFILL" && std::get<2>(*it) != sv.bootstrap)
            add("the router gives " + url + " bootstrap port " + std::get<2>(*it) +
                ", the server listens on " + sv.bootstrap);
    }
    if (named.size() != servers.size())
        add("the router names " + str(int64_t(named.size())) + " servers, the pools run " +
            str(int64_t(servers.size())));
    return v;
}

} // namespace sp
