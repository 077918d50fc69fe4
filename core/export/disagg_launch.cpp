// Disaggregated SGLang launches: each pool exported by the SGLang exporter (sglang.cpp) on its own nodes,
// then marked as a prefill or decode server.
//
// Flags: python/sglang/srt/server_args.py of sgl-project/sglang at commit 001067fffe33 (the version the
// SGLang exporter reads): ServerArgs._handle_load_balance_method accepts disaggregation_mode "null",
// "prefill" or "decode" (the CLI flag --disaggregation-mode derives from the field name, as the ServerArgs
// docstring says of every field), and DISAGG_TRANSFER_BACKEND_CHOICES lists the KV transfer backends of
// --disaggregation-transfer-backend ("mooncake", "nixl", ...). Mooncake is the backend whose measured
// bandwidth the cost layer uses (core/cost/disagg.h, kKvTransferEfficiency).
//
// Dynamo (ai-dynamo/dynamo): one frontend for both pools, and workers marked by role.
//  - components/src/dynamo/vllm/backend_args.py at d195d280e13e: `--disaggregation-mode` with the
//    DisaggregationMode values agg, prefill, decode (`--is-prefill-worker` is deprecated there);
//    components/src/dynamo/vllm/args.py at 000a36a7399a: a prefill worker must be given
//    `--kv-transfer-config` (its error message's example: {"kv_connector":"NixlConnector",
//    "kv_role":"kv_both"}), which the decode worker takes too to receive the cache;
//  - dynamo.sglang takes SGLang's own server arguments, so its workers carry SGLang's
//    `--disaggregation-mode` with the NIXL transfer backend (DISAGG_TRANSFER_BACKEND_CHOICES above);
//  - dynamo.trtllm's prefill/decode workers also need TensorRT-LLM's cache transceiver options in
//    their engine YAML, which this exporter has not read: refused.

#include "core/export/disagg_launch.h"

#include "core/cost/disagg.h"
#include "core/export/common.h"

#include <algorithm>

namespace sp {

namespace {

/// The SGLang server in `argv` (after an `env NAME=VALUE` prefix), if it is one.
bool sglangServer(const std::vector<std::string>& argv) {
    size_t i = 0;
    if (!argv.empty() && argv[0] == "env")
        for (i = 1; i < argv.size() && argv[i].find('=') != std::string::npos; ++i) {
        }
    return argv.size() >= i + 3 && argv[i] == "python3" && argv[i + 2] == "sglang.launch_server";
}

/// SGLang's defaults (python/sglang/srt/server_args.py at 7ae368efde14): the HTTP port 30000 and
/// disaggregation_bootstrap_port 8998, on host 127.0.0.1, which only the server's own node reaches.
constexpr int kSglangPort = 30000, kBootstrapPort = 8998;

/// The pool's servers as SGLang's PD servers: --disaggregation-mode, Mooncake, --host 0.0.0.0 so the router
/// on another host reaches them, and for prefill servers sharing a node a bootstrap port each (8998 + k,
/// beside the export's --port 8000 + k).
void markServers(LaunchCommand& lc, const char* mode) {
    const bool prefill = std::string(mode) == "prefill";
    const auto mark = [mode, prefill](std::vector<std::string>& argv) {
        if (!sglangServer(argv)) return;
        argv.insert(argv.end(), {"--disaggregation-mode", mode, "--disaggregation-transfer-backend",
                                 "mooncake", "--host", "0.0.0.0"});
        if (const auto port = exporting::flagValue(argv, "--port"); prefill && port)
            exporting::add(argv, "--disaggregation-bootstrap-port",
                           int64_t(kBootstrapPort + std::stoi(*port) - 8000));
    };
    mark(lc.argv);
    // The single-pool export's remark that a prefill-only or decode-only workload would need these flags.
    std::erase_if(lc.notes, [](const std::string& n) {
        return n.find("(the disaggregation flags are not mapped)") != std::string::npos;
    });
    for (NodeLaunch& n : lc.nodes)
        for (auto& cmd : n.commands) mark(cmd);
}

const char* const kNixlKvTransfer = R"({"kv_connector":"NixlConnector","kv_role":"kv_both"})";

/// Dynamo's workers as prefill or decode workers; the decode pool drops its copy of the frontend (one
/// frontend routes to both pools).
void markDynamoWorkers(LaunchCommand& lc, const char* mode, bool keepFrontend) {
    const auto mark = [mode](std::vector<std::string>& argv) {
        for (size_t i = 0; i + 2 < argv.size(); ++i) {
            if (argv[i] != "python3" || argv[i + 1] != "-m") continue;
            if (argv[i + 2] == "dynamo.vllm")
                argv.insert(argv.end(),
                            {"--disaggregation-mode", mode, "--kv-transfer-config", kNixlKvTransfer});
            else if (argv[i + 2] == "dynamo.sglang")
                argv.insert(argv.end(),
                            {"--disaggregation-mode", mode, "--disaggregation-transfer-backend", "nixl"});
            return;
        }
    };
    const auto isFrontend = [](const std::vector<std::string>& argv) {
        return std::find(argv.begin(), argv.end(), "dynamo.frontend") != argv.end();
    };
    mark(lc.argv);
    std::erase_if(lc.notes, [](const std::string& n) {
        return n.find("(the disaggregation flags are not mapped)") != std::string::npos;
    });
    for (NodeLaunch& n : lc.nodes) {
        if (!keepFrontend) {
            const auto before = n.commands.size();
            std::erase_if(n.commands, isFrontend);
            n.background -= std::min(n.background, before - n.commands.size());
        }
        for (auto& cmd : n.commands) mark(cmd);
    }
}

/// The pool's servers that serve an API (a multi-node server's node 0), as (node index, port, bootstrap).
struct ServerAddress {
    int node = 0;
    int port = kSglangPort;
    int bootstrap = kBootstrapPort;
};
std::vector<ServerAddress> apiServers(const LaunchCommand& lc) {
    std::vector<ServerAddress> out;
    for (size_t k = 0; k < lc.nodes.size(); ++k) {
        const NodeLaunch& node = lc.nodes[k];
        for (const auto& cmd : node.commands) {
            if (!sglangServer(cmd)) continue;
            bool head = true;
            for (const auto& [name, value] : node.env)
                if (name == "NODE_RANK" && value != "0") head = false;
            if (!head) continue;
            ServerAddress a;
            a.node = int(k);
            if (const auto p = exporting::flagValue(cmd, "--port")) a.port = std::stoi(*p);
            if (const auto b = exporting::flagValue(cmd, "--disaggregation-bootstrap-port"))
                a.bootstrap = std::stoi(*b);
            out.push_back(a);
        }
    }
    return out;
}

/// SGLang's router in PD mode, from sgl-router/bindings/python/sglang_router/router_args.py at 7ae368efde14
/// (SGLang 0.5.6): `--pd-disaggregation`, `--prefill URL [BOOTSTRAP_PORT]` (nargs="+", action="append"),
/// `--decode URL` (action="append"), `--host` (default 0.0.0.0) and `--port` (default 30000, taken by the
/// servers' own default: the router gets 8080); launch_router.py's usage runs it as `python -m
/// sglang_router.launch_router`. Each URL names the node that serves that server's API, whose address the
/// user sets (PREFILL_NODE<k>_IP, DECODE_NODE<k>_IP).
NodeLaunch routerLaunch(const LaunchCommand& prefill, const LaunchCommand& decode) {
    NodeLaunch r;
    std::vector<std::string> argv = {"python3", "-m", "sglang_router.launch_router", "--pd-disaggregation"};
    std::vector<std::string> vars;
    const auto url = [&](const char* pool, const ServerAddress& a) {
        const std::string var = std::string(pool) + "_NODE" + std::to_string(a.node) + "_IP";
        if (std::find(vars.begin(), vars.end(), var) == vars.end()) vars.push_back(var);
        return "http://${" + var + "}:" + std::to_string(a.port);
    };
    for (const ServerAddress& a : apiServers(prefill))
        argv.insert(argv.end(), {"--prefill", url("PREFILL", a), std::to_string(a.bootstrap)});
    for (const ServerAddress& a : apiServers(decode)) argv.insert(argv.end(), {"--decode", url("DECODE", a)});
    argv.insert(argv.end(), {"--host", "0.0.0.0", "--port", "8080"});
    for (const auto& v : vars) r.env.emplace_back(v, "");
    r.commands = {argv};
    return r;
}

} // namespace

std::string DisaggLaunch::text() const {
    std::string out = "# prefill pool\n" + prefill.text() + "\n# decode pool\n" + decode.text();
    if (!router.commands.empty()) {
        std::vector<std::string> vars;
        for (const auto& [name, value] : router.env) vars.push_back(name);
        out += "\n# router\n" +
               exporting::commentLines("Set " + exporting::joined(vars, ", ") +
                                       " to the addresses of the nodes that serve the pools' APIs.") +
               exporting::commandText(router.commands[0]);
    }
    if (!notes.empty()) {
        out += "\n";
        for (const auto& n : notes) out += exporting::commentLines(n);
    }
    return out;
}

std::vector<ExportFile> DisaggLaunch::files(const std::string& prefillYaml,
                                            const std::string& decodeYaml) const {
    std::vector<ExportFile> out = launchFiles(prefill, prefillYaml, "prefill/");
    for (ExportFile& f : launchFiles(decode, decodeYaml, "decode/")) out.push_back(std::move(f));
    for (const auto& [name, content] : deployFiles) out.push_back({name, content, false});
    if (!router.commands.empty())
        out.push_back({"router.sh",
                       exporting::nodeScript(std::string(nameOf(prefill.engine)) + " " + prefill.version +
                                                 ": the PD router in front of both pools (see NOTES.txt)",
                                             router),
                       true});
    std::string text =
        std::string(nameOf(prefill.engine)) + " " + prefill.version +
        ", disaggregated: prefill/ and decode/ hold each pool's node scripts, plan and notes.\n\n";
    for (const auto& n : notes) text += n + "\n\n";
    out.push_back({"NOTES.txt", text, false});
    return out;
}

namespace {
/// "AMD" for an Instinct GPU (amdGpu: the exports' one test of it), else "NVIDIA".
std::string vendorOf(const Gpu& g) {
    return amdGpu(g) ? "AMD" : "NVIDIA";
}
} // namespace

Result<DisaggLaunch> disaggregatedLaunch(const Scenario& s, const DisaggPlan& p, const ExportOptions& o) {
    const bool dynamo = o.engine == ServingEngine::Dynamo;
    if (o.engine != ServingEngine::Sglang && !dynamo)
        return Error{
            "", 0, 0, "",
            "a disaggregated plan exports to SGLang (its --disaggregation-mode prefill/decode) or to "
            "Dynamo with vLLM or SGLang workers"};
    if (dynamo && o.dynamoWorker == ServingEngine::Trtllm)
        return Error{"", 0, 0, "",
                     "Dynamo's TensorRT-LLM prefill and decode workers need the engine's cache transceiver "
                     "options, which this exporter does not write: use --worker vllm or sglang"};
    const auto& versions = engineVersions(ServingEngine::Sglang);
    if (!dynamo && !o.version.empty() && o.version != versions.back().version)
        return Error{"", 0, 0, "",
                     "the disaggregation flags were read from SGLang " + versions.back().version +
                         " only; export without --engine-version or with " + versions.back().version};
    const DisaggModel dm(s);
    if (auto why = dm.checkSplit(p.prefill.nodes, p.decode.nodes)) return Error{"", 0, 0, "", *why};
    // Pools on two GPU types: one engine and version on both, the same KV cache dtype (the scenario's) and
    // page size (each pool's export writes the engine's default), so the decode pool reads what the prefill
    // pool wrote. Across vendors the pools would run a CUDA build and a ROCm build of the engine, whose KV
    // layouts and transfer backends (Mooncake, NIXL) this exporter has not checked against each other.
    const Cluster& dc = dm.poolCluster(Phase::Decode);
    const bool mixed = s.decodeCluster && !(s.cluster.gpu == dc.gpu);
    if (mixed && vendorOf(s.cluster.gpu) != vendorOf(dc.gpu))
        return Error{
            "", 0, 0, "",
            "the prefill pool runs on " + vendorOf(s.cluster.gpu) + " GPUs (" + s.cluster.gpu.name +
                ") and the decode pool on " + vendorOf(dc.gpu) + " GPUs (" + dc.gpu.name +
                "): the engines' CUDA and ROCm builds would have to read each other's KV cache, which "
                "no exporter here has checked; put both pools on one vendor's GPUs"};
    DisaggLaunch out;
    const auto pool = [&](const char* name, Phase phase, const DisaggPool& q, LaunchCommand& lc) -> Error {
        Scenario ps = poolScenario(s, phase, q.nodes);
        auto r = launchCommand(ps, q.plan, o);
        if (!r) {
            Error e = r.error();
            e.message = std::string(name) + " pool: " + e.message;
            return e;
        }
        lc = std::move(r).value();
        if (dynamo)
            markDynamoWorkers(lc, name, phase == Phase::Prefill);
        else
            markServers(lc, name);
        return {};
    };
    if (Error e = pool("prefill", Phase::Prefill, p.prefill, out.prefill); !e.message.empty()) return e;
    if (Error e = pool("decode", Phase::Decode, p.decode, out.decode); !e.message.empty()) return e;
    if (out.prefill.adapted || out.decode.adapted) {
        // A pool moved to a layout its engine launches (its own note says which and what it costs that
        // pool): the split with the layouts exported, evaluated beside the plan's as a whole.
        DisaggPlan exported = p;
        exported.prefill.plan = out.prefill.plan, exported.decode.plan = out.decode.plan;
        const DisaggMetrics was = dm.evaluate(p), now = dm.evaluate(exported);
        std::string pct;
        if (was.throughputPerGpu > 0)
            pct = " (" + std::string(now.throughputPerGpu >= was.throughputPerGpu ? "+" : "") +
                  exporting::fraction(100.0 * (now.throughputPerGpu - was.throughputPerGpu) /
                                      was.throughputPerGpu) +
                  "%)";
        out.notes.push_back(
            "Layout changed in the " +
            std::string(out.prefill.adapted && out.decode.adapted ? "prefill and decode pools"
                        : out.prefill.adapted                     ? "prefill pool"
                                                                  : "decode pool") +
            " (see its notes), on the same " + std::to_string(p.prefill.nodes) + " + " +
            std::to_string(p.decode.nodes) + " nodes: the cost model gives " +
            std::to_string(int64_t(was.throughputPerGpu + 0.5)) +
            " output tokens/s per GPU for the plan and " +
            std::to_string(int64_t(now.throughputPerGpu + 0.5)) + " for the layouts exported" + pct +
            (now.feasible ? std::string(".") : "; these layouts are infeasible: " + now.violation + "."));
    }
    const std::string split = "Disaggregated: " + std::to_string(p.prefill.nodes) + " prefill node(s) and " +
                              std::to_string(p.decode.nodes) +
                              " decode node(s); the decode pool's node numbers start again at 0. ";
    if (mixed)
        out.notes.push_back(
            "Two GPU types: the prefill pool's scripts run on " + s.cluster.gpu.name +
            " nodes, the decode pool's on " + dc.gpu.name +
            " nodes. Both run the same engine and version with the scenario's KV cache dtype (" +
            std::string(nameOf(s.model.kvCache)) +
            ") and the engine's default page size, so the decode pool reads the cache as the "
            "prefill pool wrote it; keep them so if you edit either." +
            (dynamo ? " On Kubernetes, pin each worker to its GPU type (a nodeSelector on the "
                      "nvidia.com/gpu.product label of GPU Feature Discovery): "
                      "dynamo-graph.yaml does not."
                    : ""));
    if (dynamo) {
        // One graph for both pools (each pool's own, made by its export, would have a frontend each).
        for (LaunchCommand* lc : {&out.prefill, &out.decode}) {
            lc->deployFiles.clear();
            std::erase_if(lc->notes, [](const std::string& n) { return n.rfind("Kubernetes:", 0) == 0; });
        }
        std::string why;
        const int gpn = std::max(1, s.cluster.hostGpus());
        if (const auto graph = exporting::dynamoGraph(
                "shardplan-" + s.model.name + "-disagg", o.dynamoWorker,
                {{"prefill", "prefill", &out.prefill, poolScenario(s, Phase::Prefill, p.prefill.nodes).gpus(),
                  !s.model.moe.present()},
                 {"decode", "decode", &out.decode, poolScenario(s, Phase::Decode, p.decode.nodes).gpus(),
                  !s.model.moe.present()}},
                gpn, why)) {
            out.deployFiles.push_back({"dynamo-graph.yaml", *graph});
            out.notes.push_back("Kubernetes: dynamo-graph.yaml is the same deployment as one "
                                "DynamoGraphDeployment, a frontend and the prefill and decode workers "
                                "(subComponentType prefill, decode), for the Dynamo operator.");
        } else {
            out.notes.push_back("Kubernetes: no dynamo-graph.yaml, because " + why + ".");
        }
    }
    if (dynamo)
        out.notes.push_back(split +
                            "The frontend on the prefill pool's node 0 routes to both pools' workers (they "
                            "register through the same etcd and NATS); the KV cache moves over NIXL.");
    else {
        out.router = routerLaunch(out.prefill, out.decode);
        std::vector<std::string> vars;
        for (const auto& [name, value] : out.router.env) vars.push_back(name);
        out.notes.push_back(
            split +
            "router.sh starts SGLang's PD router (python3 -m sglang_router.launch_router "
            "--pd-disaggregation, "
            "the sglang-router package) in front of both pools, on port 8080: run it on any host that "
            "reaches "
            "the pools' nodes (the prefill pool's node 0 will do) with " +
            exporting::joined(vars, ", ") +
            " set to the addresses of those nodes; clients send requests to it. The servers listen on all "
            "interfaces (--host 0.0.0.0) so that it reaches them. The KV cache moves over the NICs with "
            "Mooncake, which needs its RDMA devices named for SGLang on clusters with several.");
    }
    return out;
}

} // namespace sp
