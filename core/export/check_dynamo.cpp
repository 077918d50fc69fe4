// The Dynamo Kubernetes graph (dynamo-graph.yaml) read back and checked: its deployment, services and GPUs,
// and each worker's command as checkLaunch checks a node's (beside dynamo.cpp, which writes it).
#include "core/export/check_impl.h"

#include "core/export/common.h"

#include <yaml-cpp/yaml.h>

namespace sp {

using namespace exporting;
using namespace checking;

std::vector<std::string> checkDynamoGraph(const std::string& yaml, const Scenario& s, int64_t gpus,
                                          ServingEngine worker) {
    LaunchCommand files; // the ConfigMaps' files, which the workers' arguments name under /config
    Checker k{files, s, {}};
    std::vector<YAML::Node> docs;
    try {
        docs = YAML::LoadAll(yaml);
    } catch (const YAML::Exception& e) {
        k.fail(std::string("dynamo-graph.yaml is not YAML: ") + e.what());
        return k.v;
    }
    const YAML::Node* graph = nullptr;
    for (const YAML::Node& d : docs) {
        if (!d.IsMap() || !d["kind"]) continue;
        const std::string kind = d["kind"].as<std::string>();
        if (kind == "ConfigMap" && d["data"])
            for (const auto& kv : d["data"])
                files.files.push_back({kv.first.as<std::string>(), kv.second.as<std::string>()});
        if (kind == "DynamoGraphDeployment") {
            if (graph) k.fail("two DynamoGraphDeployments");
            graph = &d;
        }
    }
    if (!graph) {
        k.fail("no DynamoGraphDeployment");
        return k.v;
    }
    const YAML::Node& g = *graph;
    if (!g["apiVersion"] || g["apiVersion"].as<std::string>() != "nvidia.com/v1alpha1")
        k.fail("the DynamoGraphDeployment is not apiVersion nvidia.com/v1alpha1");
    const YAML::Node services = g["spec"]["services"];
    if (!services || !services.IsMap()) {
        k.fail("no spec.services");
        return k.v;
    }
    int frontends = 0;
    int64_t total = 0;
    const std::string program = "dynamo." + std::string(nameOf(worker));
    for (const auto& kv : services) {
        const std::string name = kv.first.as<std::string>();
        const YAML::Node sv = kv.second;
        const std::string type = sv["componentType"] ? sv["componentType"].as<std::string>() : "";
        if (type == "frontend") {
            ++frontends;
            continue;
        }
        if (type != "worker") {
            k.fail(name + ": componentType " + type);
            continue;
        }
        const int64_t replicas = sv["replicas"] ? sv["replicas"].as<int64_t>() : 1;
        const int64_t nodeCount =
            sv["multinode"] && sv["multinode"]["nodeCount"] ? sv["multinode"]["nodeCount"].as<int64_t>() : 1;
        const int64_t perPod = sv["resources"]["limits"]["gpu"]
                                   ? std::stoll(sv["resources"]["limits"]["gpu"].as<std::string>())
                                   : 0;
        if (perPod < 1 || perPod > std::max(1, s.cluster.hostGpus()))
            k.fail(name + ": " + str(perPod) + " GPUs per pod on hosts of " + str(s.cluster.hostGpus()));
        total += replicas * nodeCount * perPod;
        const YAML::Node main = sv["extraPodSpec"]["mainContainer"];
        std::vector<std::string> words;
        for (const auto& w : main["command"]) words.push_back(w.as<std::string>());
        if (words != std::vector<std::string>{"python3", "-m", program}) {
            k.fail(name + ": the command is not python3 -m " + program);
            continue;
        }
        for (const auto& w : main["args"]) {
            std::string a = w.as<std::string>();
            if (a.rfind("/config/", 0) == 0) a = a.substr(8); // the ConfigMap's mount
            words.push_back(a);
        }
        // The Dynamo operator starts a multinode worker's nodes with their rank and leader.
        if (nodeCount > 1) {
            const bool sglang = worker == ServingEngine::Sglang;
            words.insert(words.end(), {"--nnodes", str(nodeCount), "--node-rank", "${NODE_RANK}",
                                       sglang ? "--dist-init-addr" : "--master-addr", "${LEADER}"});
        }
        auto c = parseEngineCommand(words);
        if (!c) {
            k.fail(name + ": not an engine command");
            continue;
        }
        c->visibleGpus = int(perPod);
        std::vector<std::pair<std::string, std::string>> env;
        for (const auto& e : main["env"])
            env.push_back({e["name"].as<std::string>(), e["value"].as<std::string>()});
        checkCommand(k, name, *c, env, engineVersions(ServingEngine::Dynamo).back(), worker);
    }
    if (frontends != 1) k.fail(str(frontends) + " frontends");
    if (total != gpus)
        k.fail("the workers' replicas x nodes x GPUs add up to " + str(total) + ", the plan's GPUs are " +
               str(gpus));
    return k.v;
}

} // namespace sp
