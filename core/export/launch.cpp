// The exporters' entry point: the context, the notes every engine shares, and the nearest runnable layout
// for a plan that an engine version cannot run.
#include "core/export/common.h"

#include "core/common/text.h"
#include "core/io/formats.h"

#include <algorithm>

namespace sp {

using namespace exporting;

bool amdGpu(const Gpu& gpu) {
    const std::string n = lower(gpu.name);
    if (n.find("instinct") != std::string::npos || n.find("amd") != std::string::npos) return true;
    for (size_t i = n.find("mi"); i != std::string::npos; i = n.find("mi", i + 1)) {
        const bool start = i == 0 || !(n[i - 1] >= 'a' && n[i - 1] <= 'z');
        const bool digits = i + 5 <= n.size() && std::all_of(n.begin() + long(i) + 2, n.begin() + long(i) + 5,
                                                             [](char ch) { return ch >= '0' && ch <= '9'; });
        if (start && digits) return true;
    }
    return false;
}

std::string defaultModelPath(const Model& m) {
    if (!m.hubId.empty()) return m.hubId;
    std::string s = m.source;
    for (const char* prefix : {"https://", "http://"})
        if (s.rfind(prefix, 0) == 0) s = s.substr(std::string_view(prefix).size());
    if (s.rfind("www.", 0) == 0) s = s.substr(4);
    const std::string host = "huggingface.co/";
    if (s.rfind(host, 0) == 0) {
        s = s.substr(host.size());
        const size_t a = s.find('/');
        if (a != std::string::npos && a > 0) {
            const size_t b = s.find_first_of("/?#", a + 1);
            const std::string id = s.substr(0, b);
            // Only when the repository is the model's own (Llama-2-70B -> meta-llama/Llama-2-70b-hf), not
            // the config a synthetic model was derived from.
            if (id.size() > a + 1 && lower(id.substr(a + 1)).rfind(lower(m.name), 0) == 0) return id;
        }
    }
    return {};
}

namespace {

/// The longest context the command asks for: the workload's input + output, refused when the prompt alone
/// is longer than the model's max_position_embeddings, capped (with a note) when only the output is.
std::optional<std::string> setContext(Ctx& c) {
    const Workload& w = c.s.workload;
    const int64_t need = w.inputTokens + w.outputTokens, limit = c.m.maxPositionEmbeddings;
    c.contextLength = need;
    if (limit <= 0 || need <= limit) return std::nullopt;
    if (w.inputTokens >= limit)
        return "the workload's prompts (" + str(w.inputTokens) + " tokens) + outputs (" +
               str(w.outputTokens) + ") need a context of " + str(need) + " tokens, longer than " + c.m.name +
               "'s max_position_embeddings " + str(limit);
    c.contextLength = limit;
    c.contextNote = "Context: " + str(need) + " tokens (input + output) is longer than " + c.m.name +
                    "'s max_position_embeddings " + str(limit) + ", so the context length is capped at " +
                    str(limit) + ": outputs stop after " + str(limit - w.inputTokens) +
                    " tokens instead of " + str(w.outputTokens) + ".";
    return std::nullopt;
}

std::string tokensPerSecond(double x) {
    return str(int64_t(x + 0.5)) + " tokens/s";
}

/// No engine shards different layers differently: each takes one parallel layout and one kernel per operator
/// for every layer (vLLM's, SGLang's and TensorRT-LLM's model runners build each decoder layer alike from the
/// same config; Dynamo's workers are those engines). A plan with layer groups is refused, with the first
/// group's choices for every layer as the layout to adapt to. Checked here, before any engine's own checks,
/// so that every engine, Dynamo and the disaggregated pools refuse it in the same words.
Refusal layerGroupsRefusal(const Ctx& c, ServingEngine e) {
    const char* name = e == ServingEngine::Sglang   ? "SGLang"
                       : e == ServingEngine::Trtllm ? "TensorRT-LLM"
                       : e == ServingEngine::Dynamo ? "Dynamo"
                                                    : "vLLM";
    Refusal r;
    r.reason = std::string(name) + " shards every layer alike; the plan's layer groups choose " +
               layerGroupsText(c.p);
    Plan a = c.p;
    a.layerGroups.clear();
    r.candidates.push_back({"layer groups -> the first group's choices for every layer", a});
    return r;
}

/// The release that loads the model: the engine's, or for Dynamo its worker's newest.
const EngineVersion& loadingVersion(const EngineVersion& version, const ExportOptions& o) {
    return o.engine == ServingEngine::Dynamo ? engineVersions(o.dynamoWorker).back() : version;
}

/// Why `v` cannot load the model (its architecture is one shardplan imports, and not in the release's
/// registry as read, EngineVersion::architectures); nullopt when it can or when that is not known.
std::optional<std::string> architectureRefusal(const Model& m, const EngineVersion& v) {
    if (m.architecture.empty() || v.architectures.empty()) return std::nullopt;
    const auto& known = supportedHfArchitectures();
    const auto& has = v.architectures;
    if (std::find(known.begin(), known.end(), m.architecture) == known.end() ||
        std::find(has.begin(), has.end(), m.architecture) != has.end())
        return std::nullopt;
    std::vector<std::string> later;
    for (const EngineVersion& row : engineVersions(v.engine))
        if (std::find(row.architectures.begin(), row.architectures.end(), m.architecture) !=
            row.architectures.end())
            later.push_back(row.version);
    return std::string(nameOf(v.engine)) + " " + v.version + " cannot load " + m.name + ": " +
           m.architecture + " is not in its model registry (" + v.architecturesSource + ")" +
           (later.empty() ? std::string() : "; support came in " + joined(later, ", "));
}

/// A note when the model's architecture was not checked against the release's registry.
void architectureNote(const Model& m, const EngineVersion& v, LaunchCommand& lc) {
    if (m.architecture.empty()) return;
    const std::string who = std::string(nameOf(v.engine)) + " " + v.version;
    const auto& known = supportedHfArchitectures();
    if (v.architectures.empty())
        lc.notes.push_back("Model support: " + who + "'s model registry was not read, so whether it loads " +
                           m.architecture + " is not checked.");
    else if (std::find(known.begin(), known.end(), m.architecture) == known.end())
        lc.notes.push_back("Model support: " + m.architecture +
                           " is not among the architectures checked against " + who + "'s model registry (" +
                           v.architecturesSource + "); check that it loads it.");
}

/// Launches that need more hosts than the cluster has (servers that end mid-host start on a host of their
/// own): refused, with the plan at the nearest pipeline depths over the same GPUs (dp, and the expert
/// replicas, taking the rest), which the engine may pack; the cost model ranks them.
Refusal packingRefusal(const Ctx& c, int needed, int hosts) {
    Refusal r;
    r.reason = "its launches need " + str(needed) + " hosts of " + str(c.gpn) + " GPUs, the cluster has " +
               str(hosts);
    const Degrees& d = c.d;
    const int64_t total = int64_t(d.pp) * d.dp * d.tp;
    std::vector<int> depths;
    for (int pp = 1; pp <= std::min<int64_t>(c.m.layers, total); ++pp)
        if (pp != d.pp && total % pp == 0) depths.push_back(pp);
    // Nearest first (by ratio), at most four.
    std::stable_sort(depths.begin(), depths.end(), [&](int a, int b) {
        const auto far = [&](int x) { return std::max(double(x) / d.pp, double(d.pp) / x); };
        return far(a) < far(b);
    });
    for (int pp : depths) {
        const int64_t stage = total / pp;
        if (stage % d.tp != 0) continue;
        Plan a = c.p;
        a.degrees.pp = pp, a.degrees.dp = int(stage / d.tp);
        a.stageLayers.clear();
        std::string what =
            "pp " + str(d.pp) + " -> " + str(pp) + ", dp " + str(d.dp) + " -> " + str(a.degrees.dp);
        if (c.moe) {
            if (stage % (int64_t(d.ep) * d.etp) != 0) continue;
            a.degrees.edp = int(stage / (int64_t(d.ep) * d.etp));
            if (a.degrees.edp != d.edp) what += ", edp " + str(d.edp) + " -> " + str(a.degrees.edp);
        }
        if (c.cost.checkPlan(a)) continue;
        r.candidates.push_back({what, a});
        if (r.candidates.size() == 4) break;
    }
    return r;
}

/// What the scripts cannot know and the user must set, as notes: a gated repository's token, DeepEP's
/// network settings across nodes, the NICs NCCL and Gloo use.
void environmentNotes(const Ctx& c, LaunchCommand& lc) {
    // Gated repositories: meta-llama's on the Hugging Face Hub ask each user to accept the license; the
    // engines download through huggingface_hub, which reads HF_TOKEN (SGLang's docs/platforms/amd_gpu.md at
    // 7ae368efde14 passes --env HF_TOKEN; Dynamo's deploy examples at 416ff06e7feabb an hf-token-secret).
    if (c.model == c.m.hubId && c.model.rfind("meta-llama/", 0) == 0)
        lc.notes.push_back(
            "Access: " + c.model +
            " is a gated repository on the Hugging Face Hub: accept its license there and set "
            "HF_TOKEN (a token of that account) on every node before the download, or give --model "
            "a local copy.");
    bool spans = false, deepepAcross = false;
    for (const NodeLaunch& node : lc.nodes) {
        for (const auto& [name, value] : node.env)
            if (name == "NODE_RANK" || name == "HOSTFILE") spans = true;
        for (const auto& cmd : node.commands) {
            const auto has = [&cmd](const char* w) {
                return std::find(cmd.begin(), cmd.end(), w) != cmd.end();
            };
            if (has("ray") || has("--data-parallel-address") || has("--dist-init-addr") || has("mpirun"))
                spans = true;
            const auto a2a = flagValue(cmd, "--moe-a2a-backend");
            const auto nn = flagValue(cmd, "--nnodes");
            if ((has("--enable-deepep-moe") || (a2a && *a2a == "deepep")) && nn && *nn != "1")
                deepepAcross = true;
        }
    }
    // DeepEP's internode kernels: deep_ep/buffer.py (deepseek-ai/DeepEP at dcfd954851157) sets
    // NVSHMEM_IB_ENABLE_IBGDA=1 itself when its group spans nodes ("ranks with the same GPU index should be
    // visible via RDMA"); what it cannot know, SGLang's LWS example sets by hand
    // (docs/references/multi_node_deployment/lws_pd/lws_pd_deploy.md at 7ae368efde14).
    if (deepepAcross)
        lc.notes.push_back(
            "DeepEP across nodes: its all-to-all runs over NVSHMEM with IBGDA (GPU-initiated RDMA), "
            "which DeepEP turns on itself (NVSHMEM_IB_ENABLE_IBGDA=1) but which needs the NVIDIA "
            "driver set up for it (DeepEP's NVSHMEM install guide) and the same GPU index on every "
            "node reachable over RDMA. On RoCE set NVSHMEM_IB_GID_INDEX (SGLang's LWS example: 3); "
            "with one NIC per GPU, NVSHMEM_ENABLE_NIC_PE_MAPPING=1 or an explicit "
            "NVSHMEM_HCA_PE_MAPPING. These depend on the cluster's network and are not set here.");
    // NCCL and Gloo pick a network interface themselves; SGLang's docs/references/multi_node_deployment/
    // deploy_on_k8s.md ("Keys to success", at 7ae368efde14) names NCCL_SOCKET_IFNAME and GLOO_SOCKET_IFNAME;
    // Dynamo's sglang disagg-multinode.yaml (416ff06e7feabb) sets GLOO_SOCKET_IFNAME.
    if (spans)
        lc.notes.push_back(
            "Network interfaces: across nodes NCCL and Gloo choose an interface themselves; on "
            "hosts with several, set NCCL_SOCKET_IFNAME and GLOO_SOCKET_IFNAME on every node to the "
            "one that reaches the other nodes (its name is the host's, not known here).");
}

EngineResult run(const Ctx& c, const ExportOptions& o) {
    switch (o.engine) {
    case ServingEngine::Sglang:
        return sglangCommand(c);
    case ServingEngine::Trtllm:
        return trtllmCommand(c);
    case ServingEngine::Dynamo:
        return dynamoCommand(c, o.dynamoWorker);
    default:
        return vllmCommand(c);
    }
}

Result<LaunchCommand> exportPlan(const Scenario& scenario, const Plan& plan, const ExportOptions& o,
                                 const CostModel& cost, const EngineVersion& version, int depth) {
    Ctx c(scenario, plan, cost);
    c.version = version;
    c.moe = c.m.moe.present();
    c.gpus = scenario.gpus();
    c.gpn = std::max(1, scenario.cluster.hostGpus()); // launches are per host (an NVL72 tray: 4 GPUs)
    c.metrics = cost.evaluate(plan);
    c.model = o.modelPath.empty() ? defaultModelPath(c.m) : o.modelPath;
    if (c.model.empty())
        return Error{"", 0, 0, "model",
                     "the model '" + c.m.name +
                         "' has no Hugging Face id (hub_id) and no huggingface.co source: give the path or "
                         "repository id the engine should load with --model"};
    if (auto why = setContext(c)) return Error{"", 0, 0, "", "cannot export: " + *why};
    if (plan.batch > 0) {
        c.batch = plan.batch, c.batchSource = "fixed by the plan";
    } else if (scenario.workload.fixedBatch && scenario.workload.batch > 0) {
        c.batch = scenario.workload.batch, c.batchSource = "fixed by the workload";
    } else if (c.metrics.feasible && c.metrics.batch > 0) {
        c.batch = c.metrics.batch, c.batchSource = "the cost model's choice";
    }
    c.attnOp = c.moe && opApplies(c.m, Op::MoeAttention) ? Op::MoeAttention : Op::Attention;
    c.attnBatch = plan.choice(c.attnOp) == choice::AttnBatch;
    c.tpIsData = plan.degrees.tp > 1;
    for (Op op : {Op::Embedding, Op::Qkv, Op::Attention, Op::OutProj, Op::FfnUp, Op::FfnDown,
                  Op::SharedExperts, Op::LmHead, Op::MoeQkv, Op::MoeAttention, Op::MoeOutProj})
        if (opApplies(c.m, op) && splitsOverTp(op, plan.choice(op))) c.tpIsData = false;

    // TensorRT-LLM (and Dynamo's TensorRT-LLM worker) on AMD GPUs: it is built on the CUDA toolkit only
    // (NVIDIA/TensorRT-LLM docs/source/installation/linux.md at 004da3c27360: install the CUDA Toolkit; the
    // wheels and NGC images are CUDA 12.9/13.0 builds) and has no ROCm build. No layout helps.
    const ServingEngine loader = o.engine == ServingEngine::Dynamo ? o.dynamoWorker : o.engine;
    if (loader == ServingEngine::Trtllm && amdGpu(scenario.cluster.gpu))
        return Error{"", 0, 0, "",
                     "cannot export: " +
                         std::string(o.engine == ServingEngine::Dynamo ? "Dynamo's TensorRT-LLM worker"
                                                                       : "TensorRT-LLM") +
                         " runs on NVIDIA GPUs only (it is built on CUDA and has no ROCm build), and the "
                         "cluster's GPU is " +
                         scenario.cluster.gpu.name + ": export to vllm or sglang, which have ROCm builds"};
    // A model the release cannot load: no layout helps, so it is refused whatever `adapt` says.
    if (auto why = architectureRefusal(c.m, loadingVersion(version, o)))
        return Error{"", 0, 0, "", "cannot export: " + *why};
    EngineResult r = plan.layerGroups.empty() ? run(c, o) : layerGroupsRefusal(c, o.engine);
    // Launches that do not pack into the cluster's hosts (a disaggregated prefill pool's pp9 servers of 18
    // GPUs on 8-GPU hosts need 3 hosts each): the nearest pipeline depths, whose servers may pack.
    if (auto* lc = std::get_if<LaunchCommand>(&r); lc && int(lc->nodes.size()) > scenario.cluster.hosts())
        r = packingRefusal(c, int(lc->nodes.size()), scenario.cluster.hosts());
    if (auto* lc = std::get_if<LaunchCommand>(&r)) {
        lc->engine = o.engine;
        lc->version = version.version;
        lc->plan = plan;
        architectureNote(c.m, loadingVersion(version, o), *lc);
        environmentNotes(c, *lc);
        if (configNamesCustomCode(c.m))
            lc->notes.push_back(
                "Custom code: " + c.m.architecture +
                "'s config.json names code of its repository (auto_map), so the engine is given "
                "trust-remote-code, which runs that code: review it, or pin a revision.");
        return std::move(*lc);
    }
    const Refusal& refusal = std::get<Refusal>(r);
    const std::string engineName = std::string(nameOf(o.engine)) + " " + version.version;
    // Up to two steps away from the plan (e.g. tp down to the head count, then the expert replicas folded).
    if (!o.adapt || depth > 1 || refusal.candidates.empty())
        return Error{"", 0, 0, "", "cannot export to " + engineName + ": " + refusal.reason};
    // The nearest runnable layouts, best first by the cost model (feasible before infeasible); the first
    // that the engine runs is exported.
    struct Ranked {
        const std::pair<std::string, Plan>* cand;
        Metrics m;
    };
    std::vector<Ranked> ranked;
    for (const auto& cand : refusal.candidates)
        if (!cost.checkPlan(cand.second)) ranked.push_back({&cand, cost.evaluate(cand.second)});
    std::stable_sort(ranked.begin(), ranked.end(), [](const Ranked& x, const Ranked& y) {
        if (x.m.feasible != y.m.feasible) return x.m.feasible;
        return x.m.throughput > y.m.throughput;
    });
    const std::pair<std::string, Plan>* best = nullptr;
    Metrics bestMetrics;
    std::optional<Result<LaunchCommand>> adapted;
    for (const auto& r : ranked) {
        auto e = exportPlan(scenario, r.cand->second, o, cost, version, depth + 1);
        if (!e) continue;
        best = r.cand, bestMetrics = r.m, adapted.emplace(std::move(e));
        break;
    }
    if (!best)
        return Error{"", 0, 0, "",
                     "cannot export to " + engineName + ": " + refusal.reason +
                         ", and no nearby layout fits that it runs"};
    const Metrics& was = c.metrics;
    std::string costs = "the cost model gives " + tokensPerSecond(was.throughput) + " for the plan and " +
                        tokensPerSecond(bestMetrics.throughput) + " for this layout";
    if (was.throughput > 0) {
        const double pct = 100.0 * (bestMetrics.throughput - was.throughput) / was.throughput;
        costs += " (" + std::string(pct >= 0 ? "+" : "") + fraction(pct) + "%)";
    }
    if (was.feasible && !bestMetrics.feasible)
        costs += "; this layout is infeasible: " + bestMetrics.violation;
    LaunchCommand lc = std::move(*adapted).value();
    lc.notes.insert(lc.notes.begin(), "Layout changed: " + refusal.reason + ", so this exports " +
                                          best->first + " instead; " + costs + ".");
    lc.adapted = true;
    return lc;
}

} // namespace

Result<LaunchCommand> launchCommand(const Scenario& scenario, const Plan& plan,
                                    const ExportOptions& options) {
    try {
        auto version = findEngineVersion(options.engine, options.version);
        if (!version) return version.error();
        // The readers refuse such text; a scenario built in code or in the GUI may still hold it. The names
        // reach the engines inside JSON (vLLM's --speculative-config) and YAML, which must be UTF-8.
        const Model& m = scenario.model;
        for (const auto& [field, text] :
             {std::pair<const char*, const std::string*>{"model", &options.modelPath},
              {"model.hub_id", &m.hubId},
              {"model.name", &m.name},
              {"model.speculative.draft.hub_id", &m.spec.draft.hubId},
              {"model.speculative.eagle3.hub_id", &m.spec.eagle3.hubId},
              {"cluster.gpu.name", &scenario.cluster.gpu.name}})
            if (!isUtf8(*text))
                return Error{"", 0, 0, field,
                             "cannot export: the text '" + printable(*text) +
                                 "' is not UTF-8, which the engines' JSON and YAML arguments must be"};
        if (options.engine == ServingEngine::Dynamo && (options.dynamoWorker == ServingEngine::Dynamo))
            return Error{"", 0, 0, "", "Dynamo's workers run vllm, sglang or trtllm"};
        // The plan is evaluated under the memory rule of the engine that serves it, so that the batch caps
        // and the memory flag written are what the cost model assumed; a memory fraction the scenario gives
        // for another engine's rule does not carry over (that engine's default applies).
        const ServingEngine serving =
            options.engine == ServingEngine::Dynamo ? options.dynamoWorker : options.engine;
        const MemoryRule rule = serving == ServingEngine::Sglang   ? MemoryRule::Sglang
                                : serving == ServingEngine::Trtllm ? MemoryRule::Trtllm
                                                                   : MemoryRule::Vllm;
        Scenario forEngine = scenario;
        if (forEngine.constraints.memoryRule != rule)
            forEngine.constraints.memoryRule = rule, forEngine.constraints.memoryFraction = 0;
        const CostModel cost(forEngine);
        if (auto why = cost.checkPlan(plan))
            return Error{"", 0, 0, "", "plan does not fit the scenario: " + *why};
        return exportPlan(forEngine, plan, options, cost, version.value(), 0);
    } catch (const InputError& e) {
        return e.error();
    }
}

Result<LaunchCommand> launchCommand(const Scenario& scenario, const Plan& plan, ServingEngine engine,
                                    const std::string& modelPath) {
    ExportOptions o;
    o.engine = engine;
    o.modelPath = modelPath;
    return launchCommand(scenario, plan, o);
}

} // namespace sp
