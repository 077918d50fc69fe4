// NVIDIA Dynamo, aggregated serving: a frontend (`python3 -m dynamo.frontend`) and workers that wrap an
// engine (`python3 -m dynamo.vllm`, `dynamo.sglang`, `dynamo.trtllm`). The workers take the engine's own
// parallelism, so the layout is the engine exporter's; only the programs and a few flag names change.
//
// From ai-dynamo/dynamo (read at main):
//  - components/src/dynamo/frontend/frontend_args.py (commit 0243c51bb6e8): --http-port (default 8000),
//    --discovery-backend (default etcd: ETCD_ENDPOINTS), --request-plane (default tcp), --event-plane
//    (nats with etcd: NATS_SERVER);
//  - components/src/dynamo/vllm/args.py (commit 000a36a7399a): every other argument goes to vLLM's
//    AsyncEngineArgs parser, --model among them;
//  - components/src/dynamo/trtllm/backend_args.py (commit 0a6a115c6cd1): --model, --tensor-parallel-size,
//    --pipeline-parallel-size, --expert-parallel-size, --enable-attention-dp, --max-batch-size,
//    --max-num-tokens, --max-seq-len, --free-gpu-memory-fraction, --extra-engine-args (a YAML of LLM API
//    options), --disaggregation-mode agg;
//  - dynamo.sglang takes SGLang's server arguments (--model-path, --tp-size, ...), as the SGLang backend's
//    README shows.
#include "core/export/common.h"

namespace sp::exporting {

const std::vector<EngineVersion>& dynamoVersions() {
    static const std::vector<EngineVersion> rows = [] {
        EngineVersion v;
        v.engine = ServingEngine::Dynamo;
        v.version = "0.8";
        v.source =
            "components/src/dynamo/{frontend/frontend_args.py,vllm/args.py,trtllm/backend_args.py} read at "
            "main (commits 0243c51bb6e8, 000a36a7399a, 0a6a115c6cd1)";
        v.flags = {"--http-port"}; // the frontend's; the workers take their engine's newest row
        v.constraints = {
            "a frontend on node 0; workers register through etcd and NATS (ETCD_ENDPOINTS, NATS_SERVER)",
            "the workers' flags follow their engine's newest row"};
        return std::vector<EngineVersion>{v};
    }();
    return rows;
}

namespace {

/// trtllm-serve's flags as dynamo.trtllm spells them.
std::vector<std::string> trtllmWorker(const std::vector<std::string>& serve) {
    static const std::pair<const char*, const char*> renames[] = {
        {"--tp_size", "--tensor-parallel-size"},
        {"--pp_size", "--pipeline-parallel-size"},
        {"--ep_size", "--expert-parallel-size"},
        {"--max_batch_size", "--max-batch-size"},
        {"--max_num_tokens", "--max-num-tokens"},
        {"--max_seq_len", "--max-seq-len"},
        {"--kv_cache_free_gpu_memory_fraction", "--free-gpu-memory-fraction"},
        {"--extra_llm_api_options", "--extra-engine-args"},
    };
    std::vector<std::string> out = {"python3", "-m", "dynamo.trtllm", "--model", serve[1]};
    for (size_t i = 2; i < serve.size(); ++i) {
        if (serve[i] == "--backend") { // dynamo.trtllm runs the PyTorch backend
            ++i;
            continue;
        }
        std::string a = serve[i];
        for (const auto& [from, to] : renames)
            if (a == from) a = to;
        out.push_back(a);
    }
    out.insert(out.end(), {"--disaggregation-mode", "agg"});
    return out;
}

/// The engine's command as the Dynamo worker's; other commands (ray, mpirun's own arguments) stay.
std::vector<std::string> engineWorker(const std::vector<std::string>& a, ServingEngine engine);

/// An `env NAME=VALUE` prefix stays; the frontend serves the API, so the engine's --port goes.
std::vector<std::string> worker(const std::vector<std::string>& a, ServingEngine engine) {
    size_t i = 0;
    if (!a.empty() && a[0] == "env")
        for (i = 1; i < a.size() && a[i].find('=') != std::string::npos; ++i) {
        }
    std::vector<std::string> out(a.begin(), a.begin() + long(i));
    std::vector<std::string> rest;
    for (size_t k = i; k < a.size(); ++k) {
        if (a[k] == "--port" && k + 1 < a.size()) {
            ++k;
            continue;
        }
        rest.push_back(a[k]);
    }
    const auto w = engineWorker(rest, engine);
    out.insert(out.end(), w.begin(), w.end());
    return out;
}

std::vector<std::string> engineWorker(const std::vector<std::string>& a, ServingEngine engine) {
    if (engine == ServingEngine::Vllm && a.size() >= 3 && a[0] == "vllm" && a[1] == "serve") {
        std::vector<std::string> out = {"python3", "-m", "dynamo.vllm", "--model", a[2]};
        out.insert(out.end(), a.begin() + 3, a.end());
        return out;
    }
    if (engine == ServingEngine::Sglang && a.size() >= 3 && a[2] == "sglang.launch_server") {
        std::vector<std::string> out = a;
        out[2] = "dynamo.sglang";
        return out;
    }
    if (engine == ServingEngine::Trtllm) {
        for (size_t i = 0; i < a.size(); ++i)
            if (a[i] == "trtllm-serve") {
                std::vector<std::string> out(a.begin(), a.begin() + long(i));
                const auto w = trtllmWorker(std::vector<std::string>(a.begin() + long(i), a.end()));
                out.insert(out.end(), w.begin(), w.end());
                return out;
            }
    }
    return a;
}

} // namespace

EngineResult dynamoCommand(const Ctx& c, ServingEngine engine) {
    // The worker is the newest known release of its engine.
    Ctx w = c;
    w.version = engineVersions(engine).back();
    EngineResult inner = engine == ServingEngine::Sglang   ? sglangCommand(w)
                         : engine == ServingEngine::Trtllm ? trtllmCommand(w)
                                                           : vllmCommand(w);
    auto* lc = std::get_if<LaunchCommand>(&inner);
    if (!lc) {
        auto& r = std::get<Refusal>(inner);
        r.reason = "Dynamo's " + std::string(nameOf(engine)) + " worker: " + r.reason;
        return inner;
    }
    LaunchCommand out = std::move(*lc);
    const std::vector<std::string> engineArgv = out.argv;
    out.argv = worker(engineArgv, engine);
    for (auto& node : out.nodes) {
        for (auto& cmd : node.commands) cmd = worker(cmd, engine);
        if (!node.commands.empty())
            node.env.insert(node.env.begin(), {{"ETCD_ENDPOINTS", ""}, {"NATS_SERVER", ""}});
    }
    if (!out.nodes.empty()) {
        out.nodes[0].commands.insert(out.nodes[0].commands.begin(),
                                     {"python3", "-m", "dynamo.frontend", "--http-port", "8000"});
        out.nodes[0].background += 1;
    }
    out.notes.insert(
        out.notes.begin(),
        "Dynamo: node 0 runs the frontend (the OpenAI API, port 8000) and every worker registers "
        "through etcd and NATS: start both once (the Dynamo repository's deploy/docker-compose.yml "
        "does) and set ETCD_ENDPOINTS and NATS_SERVER on every node. The worker flags are " +
            std::string(nameOf(engine)) + "'s; the notes below are in its terms.");
    return out;
}

} // namespace sp::exporting
