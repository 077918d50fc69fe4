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
// Speculative decoding goes through unchanged: args.py (000a36a7399a) adds AsyncEngineArgs.add_cli_args to
// dynamo.vllm's parser, so --speculative-config is vLLM's own; dynamo.sglang takes SGLang's
// --speculative-* arguments; dynamo.trtllm reads speculative_config from the --extra-engine-args YAML.
#include "core/export/common.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>

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

/// A Kubernetes object name (DNS-1123: lower-case letters, digits and '-', at most 63, starting and ending
/// with a letter or digit) from any text.
std::string k8sName(const std::string& text) {
    std::string out;
    for (char ch : lower(text)) {
        const bool ok = (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9');
        if (ok)
            out += ch;
        else if (!out.empty() && out.back() != '-')
            out += '-';
    }
    if (out.size() > 40) out.resize(40);
    while (!out.empty() && out.back() == '-') out.pop_back();
    return out.empty() ? "model" : out;
}

/// A role's workers as the graph's pods run them.
struct PodWorker {
    std::vector<std::string> args; ///< after `python3 -m dynamo.<engine>`
    std::vector<std::pair<std::string, std::string>> env;
    int replicas = 0, nodeCount = 1;
    int64_t gpusPerPod = 0;
    std::vector<std::pair<std::string, std::string>> files; ///< files the arguments name (a ConfigMap)
};

/// The role's worker command, read from its node scripts' commands: the Dynamo operator starts each
/// multinode worker's nodes and gives them their rank and leader (its deploy examples' args carry none of
/// --nnodes, --node-rank, --dist-init-addr: components/backends/sglang/deploy/disagg-multinode.yaml at
/// 416ff06e7feabb), so those are left to it; launches it does not start that way are refused with why.
std::optional<PodWorker> podWorker(const GraphRole& r, ServingEngine worker, int gpn, std::string& why) {
    const LaunchCommand& lc = *r.launch;
    const std::string program = "dynamo." + std::string(nameOf(worker));
    PodWorker w;
    const std::vector<std::string>* first = nullptr;
    const NodeLaunch* firstNode = nullptr;
    for (const NodeLaunch& node : lc.nodes) {
        bool head = true;
        for (const auto& [name, value] : node.env) {
            if (name == "NODE_RANK" && value != "0") head = false;
            if (name == "HOSTFILE") {
                why = "its workers start over several nodes under mpirun, which the graph does not express";
                return std::nullopt;
            }
        }
        for (const auto& cmd : node.commands) {
            if (!cmd.empty() && cmd[0] == "ray") {
                why = "its workers run on a Ray cluster over several nodes, which the graph does not express";
                return std::nullopt;
            }
            if (std::find(cmd.begin(), cmd.end(), program) == cmd.end()) continue;
            const bool dpLocal = std::find(cmd.begin(), cmd.end(), "--data-parallel-size-local") != cmd.end();
            if (dpLocal && !r.independentReplicas) {
                why =
                    "its data-parallel ranks, which share expert layers, span nodes with --headless workers, "
                    "which the graph does not express";
                return std::nullopt;
            }
            // vLLM's data-parallel ranks of a dense model over nodes: each rank a worker replica of its own
            // (Dynamo routes between them), the ranks' flags dropped.
            if (std::find(cmd.begin(), cmd.end(), "--headless") != cmd.end()) head = false;
            if (head)
                w.replicas += dpLocal ? std::stoi(flagValue(cmd, "--data-parallel-size").value_or("1")) : 1;
            if (!first) first = &cmd, firstNode = &node;
        }
    }
    if (!first || w.replicas == 0) {
        why = "it has no " + program + " worker";
        return std::nullopt;
    }
    const auto at = std::find(first->begin(), first->end(), program);
    static const char* const kOperatorArgs[] = {"--nnodes",
                                                "--node-rank",
                                                "--dist-init-addr",
                                                "--master-addr",
                                                "--data-parallel-size",
                                                "--data-parallel-size-local",
                                                "--data-parallel-address",
                                                "--data-parallel-rpc-port",
                                                "--data-parallel-start-rank"};
    const bool dpSplit =
        std::find(first->begin(), first->end(), "--data-parallel-size-local") != first->end();
    for (auto it = at + 1; it != first->end(); ++it) {
        if (*it == "--nnodes" && it + 1 != first->end()) w.nodeCount = std::max(1, std::stoi(*(it + 1)));
        const bool dpFlag = it->rfind("--data-parallel-", 0) == 0;
        if ((dpSplit || !dpFlag) &&
            std::find_if(std::begin(kOperatorArgs), std::end(kOperatorArgs),
                         [&](const char* a) { return *it == a; }) != std::end(kOperatorArgs)) {
            if (it + 1 != first->end()) ++it;
            continue;
        }
        if (*it == "--headless") continue;
        w.args.push_back(*it);
    }
    // The files the worker reads (TensorRT-LLM's LLM API options) come from a ConfigMap mounted at /config.
    for (auto& a : w.args)
        for (const auto& [file, content] : lc.files)
            if (a == file) {
                w.files.push_back({file, content});
                a = "/config/" + file;
            }
    for (const auto& [name, value] : firstNode->env)
        if (!value.empty() && name != "NODE_RANK") w.env.push_back({name, value});
    if (r.gpus % w.replicas != 0 || (r.gpus / w.replicas) % w.nodeCount != 0) {
        why = str(r.gpus) + " GPUs do not divide into " + str(w.replicas) + " workers of " +
              str(w.nodeCount) + " pods";
        return std::nullopt;
    }
    w.gpusPerPod = r.gpus / w.replicas / w.nodeCount;
    if (w.gpusPerPod > gpn) {
        why = "a pod would need " + str(w.gpusPerPod) + " GPUs, more than a node's " + str(gpn);
        return std::nullopt;
    }
    return w;
}

} // namespace

// The graph follows Dynamo's own deployment examples, components/backends/{vllm,sglang,trtllm}/deploy/
// {agg,disagg,disagg-multinode,agg-with-config}.yaml at ai-dynamo/dynamo commit 416ff06e7feabb:
// apiVersion nvidia.com/v1alpha1, kind DynamoGraphDeployment, spec.services with a Frontend (componentType
// frontend, replicas 1) and workers (componentType worker, subComponentType prefill or decode when
// disaggregated, replicas, resources.limits.gpu per pod, multinode.nodeCount, envFromSecret
// hf-token-secret, extraPodSpec.mainContainer with image, workingDir, command python3 -m dynamo.<engine>
// and args), and a ConfigMap mounted as a volume for TensorRT-LLM's engine options. Images follow the
// examples' nvcr.io/nvidia/ai-dynamo/<engine>-runtime:<release>, at the release of the Dynamo row (0.8.0).
std::optional<std::string> dynamoGraph(const std::string& name, ServingEngine worker,
                                       const std::vector<GraphRole>& roles, int gpn, std::string& why) {
    const std::string engine = worker == ServingEngine::Trtllm ? "tensorrtllm" : std::string(nameOf(worker));
    const std::string image = "nvcr.io/nvidia/ai-dynamo/" + engine + "-runtime:0.8.0";
    const std::string dns = k8sName(name);
    std::vector<std::pair<const GraphRole*, PodWorker>> workers;
    for (const GraphRole& r : roles) {
        std::string reason;
        auto w = podWorker(r, worker, gpn, reason);
        if (!w) {
            why = (r.subComponentType.empty() ? std::string("the workers: ")
                                              : r.subComponentType + " workers: ") +
                  reason;
            return std::nullopt;
        }
        workers.push_back({&r, std::move(*w)});
    }
    // Every character past ASCII is written as an escape in a double-quoted scalar: a value holding NEL
    // (U+0085), U+2028 or U+2029, which YAML 1.1 parsers (libyaml and its ports: PyYAML, and go-yaml, which
    // kubectl uses) take as line breaks, can then neither end the ConfigMap's literal block nor a key's line.
    // yaml-cpp keeps the literal style for ASCII text and turns to double quotes where it must escape
    // (IsValidLiteralScalar, emitterutils.cpp).
    YAML::Emitter e;
    e.SetOutputCharset(YAML::EscapeNonAscii);
    bool configMap = false;
    for (const auto& [r, w] : workers) configMap = configMap || !w.files.empty();
    const std::string configName = dns + "-config";
    if (configMap) {
        e << YAML::BeginDoc << YAML::BeginMap;
        e << YAML::Key << "apiVersion" << YAML::Value << "v1" << YAML::Key << "kind" << YAML::Value
          << "ConfigMap";
        e << YAML::Key << "metadata" << YAML::Value << YAML::BeginMap << YAML::Key << "name" << YAML::Value
          << configName << YAML::EndMap;
        e << YAML::Key << "data" << YAML::Value << YAML::BeginMap;
        std::vector<std::string> seen;
        for (const auto& [r, w] : workers)
            for (const auto& [file, content] : w.files) {
                if (std::find(seen.begin(), seen.end(), file) != seen.end()) continue;
                seen.push_back(file);
                e << YAML::Key << file << YAML::Value << YAML::Literal << content;
            }
        e << YAML::EndMap << YAML::EndMap << YAML::EndDoc;
    }
    e << YAML::BeginDoc << YAML::BeginMap;
    e << YAML::Key << "apiVersion" << YAML::Value << "nvidia.com/v1alpha1";
    e << YAML::Key << "kind" << YAML::Value << "DynamoGraphDeployment";
    e << YAML::Key << "metadata" << YAML::Value << YAML::BeginMap << YAML::Key << "name" << YAML::Value << dns
      << YAML::EndMap;
    e << YAML::Key << "spec" << YAML::Value << YAML::BeginMap << YAML::Key << "services" << YAML::Value
      << YAML::BeginMap;
    e << YAML::Key << "Frontend" << YAML::Value << YAML::BeginMap;
    e << YAML::Key << "dynamoNamespace" << YAML::Value << dns;
    e << YAML::Key << "componentType" << YAML::Value << "frontend";
    e << YAML::Key << "replicas" << YAML::Value << 1;
    e << YAML::Key << "extraPodSpec" << YAML::Value << YAML::BeginMap << YAML::Key << "mainContainer"
      << YAML::Value << YAML::BeginMap << YAML::Key << "image" << YAML::Value << image << YAML::EndMap
      << YAML::EndMap;
    e << YAML::EndMap;
    for (const auto& [r, w] : workers) {
        e << YAML::Key << r->service << YAML::Value << YAML::BeginMap;
        e << YAML::Key << "envFromSecret" << YAML::Value << "hf-token-secret";
        e << YAML::Key << "dynamoNamespace" << YAML::Value << dns;
        e << YAML::Key << "componentType" << YAML::Value << "worker";
        if (!r->subComponentType.empty())
            e << YAML::Key << "subComponentType" << YAML::Value << r->subComponentType;
        e << YAML::Key << "replicas" << YAML::Value << w.replicas;
        if (w.nodeCount > 1)
            e << YAML::Key << "multinode" << YAML::Value << YAML::BeginMap << YAML::Key << "nodeCount"
              << YAML::Value << w.nodeCount << YAML::EndMap;
        e << YAML::Key << "resources" << YAML::Value << YAML::BeginMap << YAML::Key << "limits" << YAML::Value
          << YAML::BeginMap << YAML::Key << "gpu" << YAML::Value << YAML::DoubleQuoted << str(w.gpusPerPod)
          << YAML::EndMap << YAML::EndMap;
        e << YAML::Key << "extraPodSpec" << YAML::Value << YAML::BeginMap;
        if (!w.files.empty())
            e << YAML::Key << "volumes" << YAML::Value << YAML::BeginSeq << YAML::BeginMap << YAML::Key
              << "name" << YAML::Value << "engine-config" << YAML::Key << "configMap" << YAML::Value
              << YAML::BeginMap << YAML::Key << "name" << YAML::Value << configName << YAML::EndMap
              << YAML::EndMap << YAML::EndSeq;
        e << YAML::Key << "mainContainer" << YAML::Value << YAML::BeginMap;
        e << YAML::Key << "image" << YAML::Value << image;
        e << YAML::Key << "workingDir" << YAML::Value
          << "/workspace/components/backends/" + std::string(nameOf(worker));
        if (!w.files.empty())
            e << YAML::Key << "volumeMounts" << YAML::Value << YAML::BeginSeq << YAML::BeginMap << YAML::Key
              << "name" << YAML::Value << "engine-config" << YAML::Key << "mountPath" << YAML::Value
              << "/config" << YAML::Key << "readOnly" << YAML::Value << true << YAML::EndMap << YAML::EndSeq;
        if (!w.env.empty()) {
            e << YAML::Key << "env" << YAML::Value << YAML::BeginSeq;
            for (const auto& [var, value] : w.env)
                e << YAML::BeginMap << YAML::Key << "name" << YAML::Value << var << YAML::Key << "value"
                  << YAML::Value << YAML::DoubleQuoted << value << YAML::EndMap;
            e << YAML::EndSeq;
        }
        e << YAML::Key << "command" << YAML::Value << YAML::BeginSeq << "python3"
          << "-m"
          << "dynamo." + std::string(nameOf(worker)) << YAML::EndSeq;
        e << YAML::Key << "args" << YAML::Value << YAML::BeginSeq;
        for (const auto& a : w.args) e << YAML::DoubleQuoted << a;
        e << YAML::EndSeq;
        e << YAML::EndMap << YAML::EndMap << YAML::EndMap;
    }
    e << YAML::EndMap << YAML::EndMap << YAML::EndMap << YAML::EndDoc;
    if (!e.good()) {
        why = std::string("the YAML emitter failed: ") + e.GetLastError();
        return std::nullopt;
    }
    return "# NVIDIA Dynamo on Kubernetes: kubectl apply -f dynamo-graph.yaml (see NOTES.txt)\n" +
           std::string(e.c_str()) + "\n";
}

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
    {
        // The same launch as a DynamoGraphDeployment, beside the scripts (dynamoGraph above).
        std::string why = "the Dynamo runtime images (nvcr.io/nvidia/ai-dynamo) are CUDA builds, and the "
                          "cluster's GPUs are AMD";
        if (amdGpu(c.s.cluster.gpu)) {
            out.notes.push_back("Kubernetes: no dynamo-graph.yaml, because " + why + ".");
        } else if (auto graph = dynamoGraph("shardplan-" + c.m.name, engine,
                                            {{"Worker", "", &out, int64_t(c.gpus), !c.moe}}, c.gpn, why)) {
            out.deployFiles.push_back({"dynamo-graph.yaml", *graph});
            out.notes.push_back(
                "Kubernetes: --out-dir also writes dynamo-graph.yaml, the same deployment as a "
                "DynamoGraphDeployment for the Dynamo operator (a frontend and the workers' pods, the "
                "operator starting multinode workers' nodes); it reads the Hugging Face token from the "
                "secret "
                "hf-token-secret, which you create.");
        } else {
            out.notes.push_back("Kubernetes: no dynamo-graph.yaml, because " + why + ".");
        }
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
