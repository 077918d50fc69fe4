// Plans as serving-engine launch commands.
//
// Every flag written here was checked against the engine's own documentation or argument definitions; a
// plan property with no verified flag goes into a note instead.
//
// vLLM, `vllm serve MODEL`:
//  - engine arguments, https://docs.vllm.ai/en/latest/configuration/engine_args/ (the `vllm serve`
//    reference): --tensor-parallel-size, --pipeline-parallel-size, --max-model-len, --max-num-seqs,
//    --gpu-memory-utilization, --kv-cache-dtype {auto,fp8,fp8_e5m2,fp8_e4m3}, --quantization fp8,
//    --dtype {auto,half,float16,bfloat16,float,float32};
//  - docs/serving/data_parallel_deployment.md (github.com/vllm-project/vllm): --data-parallel-size,
//    --enable-expert-parallel, "expert layers form a group of size DP x TP", "--max-num-seqs applies per DP
//    rank", multi-node --data-parallel-size-local, --data-parallel-address, --data-parallel-rpc-port,
//    --data-parallel-start-rank, --headless, --data-parallel-backend=ray with VLLM_RAY_DP_PACK_STRATEGY=span;
//  - docs/serving/expert_parallel_deployment.md: --all2all-backend (default allgather_reducescatter;
//    deepep_low_latency for decode, deepep_high_throughput for prefill);
//  - docs/serving/parallelism_scaling.md: one replica over several nodes, --nnodes, --node-rank,
//    --master-addr, --headless on the other nodes;
//  - vllm/distributed/parallel_state.py, initialize_model_parallel: ranks laid out ExternalDP x DP x PP x TP
//    (TP innermost); vllm/model_executor/layers/fused_moe/layer.py: ep_size = tp_size * dp_size;
//    vllm/envs.py: VLLM_PP_LAYER_PARTITION.
//
// SGLang, `python3 -m sglang.launch_server --model-path MODEL`:
//  - python/sglang/srt/server_args.py (github.com/sgl-project/sglang, main of 2025-2026: the version with
//    --moe-a2a-backend; older releases spelled the DeepEP switch --enable-deepep-moe) and
//    https://docs.sglang.io/advanced_features/server_arguments.html: --tp-size, --dp-size, --pp-size,
//    --ep-size, --moe-dp-size, --enable-dp-attention ("data parallelism for attention and tensor parallelism
//    for FFN"; attention TP = tp_size / dp_size), --moe-a2a-backend deepep (which sets ep_size = tp_size),
//    --moe-dense-tp-size 1, --enable-dp-lm-head, --max-running-requests (divided among the DP-attention
//    workers; not divided among plain DP replicas), --context-length, --kv-cache-dtype fp8_e4m3,
//    --quantization fp8, --dtype, --mem-fraction-static ("model weights and KV cache memory pool"),
//    --nnodes, --node-rank, --dist-init-addr; check_server_args: "multi-node data parallel is not supported
//    unless dp attention"; python/sglang/srt/layers/dp_attention.py: attn_tp_size = tp_size // dp_size;
//  - https://docs.sglang.io/advanced_features/expert_parallelism.html: --moe-a2a-backend (none by default:
//    all-gather/all-reduce dispatch; deepep: all-to-all); python/sglang/srt/distributed/utils.py,
//    get_pp_indices: SGLANG_PP_LAYER_PARTITION for uneven stages.
#include "core/io/launch.h"

#include "core/cost/costmodel.h"
#include "core/cost/validity.h"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <numeric>

namespace sp {

namespace {

bool isSafeShellChar(char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
           std::string_view("@%+=:,./_-").find(c) != std::string_view::npos;
}

bool isNameChar(char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
}

std::string lower(std::string s) {
    for (char& c : s)
        if (c >= 'A' && c <= 'Z') c = char(c - 'A' + 'a');
    return s;
}

std::string str(int64_t v) {
    return std::to_string(v);
}

/// 0.95, 0.9, 0.925: a fraction with at most three decimals and no trailing zeros.
std::string fraction(double x) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3f", x);
    std::string s = buf;
    while (s.size() > 1 && s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
    return s;
}

std::string gib(double x) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f", x);
    return buf;
}

std::string joined(const std::vector<std::string>& v, const char* sep) {
    std::string s;
    for (const auto& x : v) s += (s.empty() ? "" : sep) + x;
    return s;
}

/// A note as `# ` comment lines of at most `width` characters (longer words stay whole).
std::string commentLines(const std::string& note, size_t width) {
    std::string out, line = "#";
    size_t i = 0;
    while (i < note.size()) {
        while (i < note.size() && note[i] == ' ') ++i;
        size_t j = note.find(' ', i);
        if (j == std::string::npos) j = note.size();
        if (j == i) break;
        const std::string word = note.substr(i, j - i);
        if (line.size() > 3 && line.size() + 1 + word.size() > width) {
            out += line + "\n";
            line = "#  ";
        }
        line += " " + word;
        i = j;
    }
    return out + line + "\n";
}

std::string opName(Op op) {
    return std::string(op >= Op::MoeNorms ? "moe." : "") + std::string(kOpNames[int(op)]);
}

std::string choiceName(Op op, int c) {
    return std::string(choiceNames(op)[size_t(c)]);
}

/// Whether a choice divides the operator's weights, heads or sequences among the tp group, as opposed to
/// running it whole on each GPU's own tokens (token, replicated, batch). Norms and the router hold no split
/// weights either way; the experts have their own group (ep x etp x edp).
bool splitsOverTp(Op op, int c) {
    switch (baseOp(op)) {
    case Op::Embedding:
        return c == choice::EmbVocab;
    case Op::Qkv:
        return c != choice::QkvToken;
    case Op::Attention:
        return c != choice::AttnBatch;
    case Op::OutProj:
        return c != choice::OutToken;
    case Op::FfnUp:
        return c != choice::UpToken;
    case Op::FfnDown:
        return c != choice::DownToken;
    case Op::SharedExperts:
        return c != choice::SharedToken;
    case Op::LmHead:
        return c != choice::HeadToken;
    default:
        return false;
    }
}

/// The engines' fixed scheme on a tensor-parallel group of more than one GPU (vLLM and SGLang alike, after
/// Megatron-LM): vocab-parallel embedding and LM head, column-parallel QKV, FFN up and shared-expert up,
/// row-parallel output and down projections, attention by head, replicated norms (no sequence parallelism)
/// and router.
int engineChoice(Op op) {
    switch (baseOp(op)) {
    case Op::Norms:
        return choice::NormReplicated;
    case Op::Router:
        return choice::RouterReplicated;
    default:
        return 0; // vocab, column, head, row, column, row, column_row, vocab
    }
}

/// The operators whose sharding the engines fix (the experts are mapped through their own flags).
constexpr Op kMappedOps[] = {Op::Embedding, Op::Norms,   Op::Qkv,          Op::Attention,     Op::OutProj,
                             Op::FfnUp,     Op::FfnDown, Op::Router,       Op::SharedExperts, Op::LmHead,
                             Op::MoeNorms,  Op::MoeQkv,  Op::MoeAttention, Op::MoeOutProj};

/// The DP/TP/PP axes with more than one GPU, innermost first; with `tpIsData` the plan's tp axis counts as
/// data parallelism (it is folded into dp).
std::vector<std::string> meshAxes(const std::vector<Axis>& order, const Degrees& d, bool tpIsData) {
    std::vector<std::string> out;
    for (Axis a : order) {
        if (tpIsData && a == Axis::TP) continue;
        const int n = a == Axis::DP && tpIsData ? d.dp * d.tp : d.get(a);
        if (n > 1) out.emplace_back(kAxisNames[int(a)]);
    }
    return out;
}

/// What both engines' mappings start from.
struct Ctx {
    Ctx(const Scenario& scenario, const Plan& plan)
        : s(scenario), p(plan), m(scenario.model), d(plan.degrees) {}
    const Scenario& s;
    const Plan& p;
    const Model& m;
    Degrees d;
    bool moe = false;
    int gpus = 0, gpn = 0;
    Metrics metrics;
    int64_t batch = 0;       ///< sequences per replica per micro-batch; 0: unknown
    std::string batchSource; ///< where the batch comes from
    Op attnOp = Op::Attention;
    bool attnBatch = false; ///< attention by batch (DP attention) in the (MoE) layers
    bool tpIsData = false;  ///< tp > 1 but no operator splits over it: the tp axis is data parallelism
    std::string model;      ///< the path the engine loads
};

/// The per-operator choices that differ from the engine's fixed scheme. `group(op)` is the number of GPUs
/// the engine shards that operator over; ops for which it returns 0 are left out (placed by the engine in a
/// way the flags do not set).
std::vector<std::string> operatorDifferences(const Ctx& c, const char* engine,
                                             const std::function<int(Op)>& group) {
    std::vector<std::string> diffs;
    for (Op op : kMappedOps) {
        if (!opRelevant(c.m, op)) continue;
        const int g = group(op);
        if (g == 0) continue;
        const int ch = c.p.choice(op);
        if (c.d.tp == 1 && g == 1) continue; // both run it whole on one GPU: every choice is the same
        const std::string planSide =
            opName(op) + " " + choiceName(op, ch) +
            (splitsOverTp(op, ch) || baseOp(op) == Op::Norms || baseOp(op) == Op::Router
                 ? " over tp " + str(c.d.tp)
                 : "");
        if (g == 1) {
            if (splitsOverTp(op, ch))
                diffs.push_back(planSide + " (" + engine + ": whole on each GPU, its own tokens)");
        } else if (g != c.d.tp) {
            diffs.push_back(planSide + " (" + engine + ": " + choiceName(op, engineChoice(op)) + " over " +
                            str(g) + " GPUs)");
        } else if (ch != engineChoice(op)) {
            diffs.push_back(planSide + " (" + engine + ": " + choiceName(op, engineChoice(op)) + ")");
        }
    }
    return diffs;
}

void addCommonNotes(const Ctx& c, const char* engine, LaunchCommand& lc, const char* batchFlag,
                    const char* layerEnv) {
    auto& n = lc.notes;
    const Degrees& d = c.d;
    if (c.p.choice(c.attnOp) == choice::AttnSequence && d.tp > 1)
        n.push_back(std::string("Attention by sequence (context parallelism over tp ") + str(d.tp) +
                    ") is not mapped: " + engine +
                    " shards attention by head across its tensor-parallel group.");
    if (d.pp > 1 && c.m.layers % d.pp != 0) {
        std::vector<std::string> sizes;
        for (const auto& stageSpan : pipelineStages(int(c.m.layers), d.pp))
            sizes.push_back(str(stageSpan.second));
        n.push_back("Pipeline: the plan's " + str(d.pp) + " stages hold " + joined(sizes, ", ") +
                    " layers (the extra layers in the middle stages); set " + layerEnv + "=" +
                    joined(sizes, ",") + " in the environment for " + engine + " to split the same way.");
    }
    if (c.m.weights == Dtype::INT8 || c.m.weights == Dtype::FP4 || c.m.weights == Dtype::INT4)
        n.push_back(std::string("Weights ") + std::string(nameOf(c.m.weights)) +
                    ": not mapped; pick the quantization method of your checkpoint (" + engine +
                    " reads it from the checkpoint's quantization_config).");
    if (c.m.activations == Dtype::FP8 || c.m.activations == Dtype::INT8 || c.m.activations == Dtype::FP4)
        n.push_back(std::string("Activations ") + std::string(nameOf(c.m.activations)) +
                    ": not an engine flag; the quantization method of the weights decides the precision of "
                    "the GEMMs' inputs.");
    if (c.m.kvCache == Dtype::INT8 || c.m.kvCache == Dtype::FP4)
        n.push_back(std::string("KV cache ") + std::string(nameOf(c.m.kvCache)) + ": not mapped; " + engine +
                    " keeps the KV cache in the model's dtype unless told otherwise.");
    if (!c.metrics.feasible && c.metrics.valid)
        n.push_back("The cost model finds this plan infeasible: " + c.metrics.violation + ".");
    const Workload& w = c.s.workload;
    if (w.ttftMs > 0 || w.tpotMs > 0) {
        std::vector<std::string> slos;
        if (w.ttftMs > 0) slos.push_back("TTFT " + fraction(w.ttftMs) + " ms");
        if (w.tpotMs > 0) slos.push_back("TPOT " + fraction(w.tpotMs) + " ms");
        n.push_back("The SLOs (" + joined(slos, ", ") + ") are not engine flags" +
                    (c.batch > 0
                         ? std::string(": the ") + batchFlag + " cap is what meets them in the cost model."
                         : std::string(".")));
    }
    if (w.phase != Phase::Serving)
        n.push_back(std::string("The workload is ") + (w.phase == Phase::Decode ? "decode" : "prefill") +
                    " only: in a prefill-decode disaggregated deployment this is the " +
                    (w.phase == Phase::Decode ? "decode" : "prefill") +
                    " instances' command (the disaggregation flags are not mapped).");
}

/// The plan's mesh order against the engine's rank layout, when one launch (`launchGpus`) spans nodes.
void meshNote(const Ctx& c, const char* engine, const std::vector<Axis>& engineOrder, bool tpIsData,
              int launchGpus, LaunchCommand& lc) {
    if (launchGpus <= c.gpn) return; // one node: every group is on NVLink whatever the order
    const std::vector<Axis> planOrder(c.p.meshOrder.begin(), c.p.meshOrder.end());
    const auto plan = meshAxes(planOrder, c.d, tpIsData), eng = meshAxes(engineOrder, c.d, tpIsData);
    if (plan == eng) return;
    lc.notes.push_back("Mesh order: the plan packs " + joined(plan, ", then ") +
                       " from the innermost (inside a node) outwards; " + engine + " lays ranks out " +
                       joined(eng, ", then ") +
                       ", so its groups span other GPUs and links than the plan's cost assumes.");
}

/// Weights and activations dtypes: --quantization and --dtype (same spelling in both engines).
void dtypeFlags(const Ctx& c, const char* engine, LaunchCommand& lc) {
    auto& a = lc.argv;
    const Model& m = c.m;
    if (m.activations == Dtype::FP16) a.insert(a.end(), {"--dtype", "float16"});
    if (m.activations == Dtype::FP32) a.insert(a.end(), {"--dtype", "float32"});
    if (m.activations == Dtype::BF16 && (m.weights == Dtype::FP16 || m.weights == Dtype::FP32))
        a.insert(a.end(), {"--dtype", "bfloat16"});
    if (m.weights != Dtype::FP8) return;
    // DeepSeek publishes V3 and R1 in FP8 (128x128 block scales, quantization_config in config.json); a
    // Hugging Face import reads weights fp8 from that quantization_config; checkpoints named FP8 are FP8.
    // (The source is left out: it may name the config a synthetic model was derived from.)
    const std::string all = lower(m.name + " " + c.model);
    const bool fp8Checkpoint =
        all.find("fp8") != std::string::npos || m.source.rfind("Hugging Face config.json", 0) == 0 ||
        all.find("deepseek-v3") != std::string::npos || all.find("deepseek-r1") != std::string::npos;
    if (fp8Checkpoint) {
        lc.notes.push_back(std::string("Weights fp8: the checkpoint is taken to be FP8 already, so no "
                                       "--quantization flag: ") +
                           engine +
                           " reads its quantization_config. For a BF16 checkpoint add --quantization fp8.");
    } else {
        a.insert(a.end(), {"--quantization", "fp8"});
        lc.notes.push_back(std::string("Weights fp8: --quantization fp8 has ") + engine +
                           " quantize the BF16/FP16 checkpoint to FP8 as it loads; drop it for a checkpoint "
                           "that is FP8 already.");
    }
}

/// Flags appended as "--name value".
void add(LaunchCommand& lc, const char* name, const std::string& value) {
    lc.argv.insert(lc.argv.end(), {name, value});
}
void add(LaunchCommand& lc, const char* name, int64_t value) {
    add(lc, name, str(value));
}

/// "1 GPU", "8 GPUs".
std::string count(int64_t n, const char* what) {
    return str(n) + " " + what + (n == 1 ? "" : "s");
}

int64_t ceilDiv(int64_t a, int64_t b) {
    return (a + b - 1) / b;
}

// ---------------------------------------------------------------------------------------------------------
// vLLM

LaunchCommand vllmCommand(const Ctx& c) {
    LaunchCommand lc;
    lc.engine = ServingEngine::Vllm;
    lc.argv = {"vllm", "serve", c.model};
    auto& n = lc.notes;
    const Degrees& d = c.d;
    const int stage = d.dp * d.tp;
    // vLLM has no data-parallel attention inside a tensor-parallel group: a tp axis that splits nothing is
    // data parallelism (each GPU a DP rank), otherwise it is vLLM's TP.
    const int tp = c.tpIsData ? 1 : d.tp;
    // vLLM's expert layers span a whole deployment (TP x DP), so the plan's expert replicas (edp) become
    // separate deployments, each the smallest set of whole DP ranks that holds whole expert groups.
    const int unit = c.moe ? std::lcm(d.ep * d.etp, tp) : stage;
    const int deployments = stage / unit;
    const int dp = unit / tp;
    add(lc, "--tensor-parallel-size", tp);
    if (d.pp > 1) add(lc, "--pipeline-parallel-size", d.pp);
    if (dp > 1) add(lc, "--data-parallel-size", dp);
    if (c.tpIsData)
        n.push_back("The plan's tp " + str(d.tp) +
                    " splits no weights (every operator runs whole on each GPU's own tokens or sequences): "
                    "that is data parallelism, so vLLM runs tensor parallel 1 with one DP rank per GPU.");
    else if (c.attnBatch && d.tp > 1)
        n.push_back("Attention by batch inside tp " + str(d.tp) +
                    " (data-parallel attention) is not expressible in vLLM, which shards attention by head "
                    "over its tensor-parallel group (SGLang's --enable-dp-attention is).");
    if (deployments > 1)
        n.push_back("Deployments: this is one of " + str(deployments) + " identical deployments of " +
                    count(int64_t(unit) * d.pp, "GPU") + ", one per expert replica (edp " + str(d.edp) +
                    "): vLLM's expert group spans a whole deployment. Put them behind a load balancer.");

    // Nodes: a DP rank is tp*pp GPUs (TP innermost, then PP).
    const int rankGpus = tp * d.pp, deploymentGpus = unit * d.pp;
    if (deploymentGpus > c.gpn) {
        const int nodes = int(ceilDiv(deploymentGpus, c.gpn));
        const std::string each = deployments > 1 ? " of each deployment" : "";
        if (rankGpus <= c.gpn && dp > 1) {
            if (c.gpn % rankGpus == 0) {
                const int local = c.gpn / rankGpus;
                add(lc, "--data-parallel-size-local", local);
                add(lc, "--data-parallel-address", "${HEAD_NODE_IP}");
                add(lc, "--data-parallel-rpc-port", 13345);
                n.push_back("Nodes: this is the head node's command (it serves the API) for " + str(nodes) +
                            " nodes of " + count(local, "DP rank") + " each; on node K = 1.." +
                            str(nodes - 1) + " run it with --headless --data-parallel-start-rank K*" +
                            str(local) + " added. Set HEAD_NODE_IP to the address of the head node" + each +
                            ".");
            } else {
                n.push_back("Nodes: DP ranks of " + str(rankGpus) +
                            " GPUs do not pack evenly into nodes of " + str(c.gpn) +
                            "; place them by hand with --data-parallel-size-local and "
                            "--data-parallel-start-rank on each node.");
            }
        } else if (dp == 1) {
            add(lc, "--nnodes", nodes);
            add(lc, "--node-rank", "${NODE_RANK}");
            add(lc, "--master-addr", "${HEAD_NODE_IP}");
            n.push_back("Nodes: the replica spans " + str(nodes) +
                        " nodes; run this on each with NODE_RANK 0.." + str(nodes - 1) +
                        " and HEAD_NODE_IP set to the address of node 0" + each +
                        ", adding --headless on nodes 1.." + str(nodes - 1) + " (node 0 serves the API).");
        } else {
            add(lc, "--data-parallel-backend", "ray");
            n.push_back(
                "Nodes: each DP rank (" + str(rankGpus) +
                " GPUs) spans several nodes; vLLM places such ranks with Ray: start a Ray cluster over "
                "the " +
                str(nodes) + " nodes" + each +
                ", set VLLM_RAY_DP_PACK_STRATEGY=span and run this once, on any of them.");
        }
    }

    if (c.moe) {
        const std::string ep =
            "Experts: vLLM derives the EP size from the other sizes, EP = TP x DP = " + str(tp) + " x " +
            str(dp) + " = " + str(unit);
        if (d.ep > 1) {
            lc.argv.push_back("--enable-expert-parallel");
            if (d.ep == unit)
                n.push_back(ep + ", the plan's ep.");
            else
                n.push_back(ep + ": the plan's expert groups (ep " + str(d.ep) + " x etp " + str(d.etp) +
                            ") are not expressible, vLLM will make one expert-parallel group of " +
                            str(unit) + " GPUs without expert TP or replicas.");
            n.push_back("The cost model prices expert dispatch and combine as all-to-alls; vLLM's default "
                        "--all2all-backend (allgather_reducescatter) moves more data. deepep_low_latency "
                        "(decode) or deepep_high_throughput (prefill) match the plan; they need DeepEP "
                        "installed.");
        } else if (d.etp == unit) {
            if (unit > 1)
                n.push_back("Experts: tensor-sharded over TP x DP = " + str(unit) +
                            " GPUs, vLLM's default without --enable-expert-parallel.");
        } else {
            n.push_back("Experts: the plan's expert replicas inside tp " + str(d.tp) + " (etp " + str(d.etp) +
                        ") are not expressible: vLLM shards every expert over TP x DP = " + str(unit) +
                        " GPUs.");
        }
    }

    if (c.batch > 0) {
        // The plan keeps pp micro-batches of `batch` sequences in flight per replica; a replica's tp GPUs
        // are tp/tp_vllm DP ranks, and vLLM applies --max-num-seqs per DP rank.
        const int64_t perRank = ceilDiv(c.batch * d.pp, d.tp / tp);
        add(lc, "--max-num-seqs", perRank);
        n.push_back("Batch: " + str(c.batch) + " sequences per replica (" + c.batchSource + ")" +
                    (d.pp > 1 ? " in each of " + str(d.pp) + " micro-batches" : std::string()) +
                    (d.tp / tp > 1 ? ", spread over its " + str(d.tp / tp) + " GPUs" : std::string()) +
                    "; vLLM applies --max-num-seqs per DP rank.");
    } else {
        n.push_back("Batch: the cost model found no feasible batch, so --max-num-seqs is left to vLLM.");
    }
    add(lc, "--max-model-len", c.s.workload.inputTokens + c.s.workload.outputTokens);
    dtypeFlags(c, "vLLM", lc);
    if (c.m.kvCache == Dtype::FP8) add(lc, "--kv-cache-dtype", "fp8");
    add(lc, "--gpu-memory-utilization", fraction(1.0 - c.s.constraints.memoryHeadroom));

    const auto diffs = operatorDifferences(c, "vLLM", [tp](Op) { return tp; });
    if (!diffs.empty())
        n.push_back("Operator choices vLLM's fixed scheme does not take (tp " + str(tp) +
                    "): " + joined(diffs, "; ") + ".");
    meshNote(c, "vLLM", {Axis::TP, Axis::PP, Axis::DP}, c.tpIsData, deploymentGpus, lc);
    addCommonNotes(c, "vLLM", lc, "--max-num-seqs", "VLLM_PP_LAYER_PARTITION");
    return lc;
}

// ---------------------------------------------------------------------------------------------------------
// SGLang

LaunchCommand sglangCommand(const Ctx& c) {
    LaunchCommand lc;
    lc.engine = ServingEngine::Sglang;
    lc.argv = {"python3", "-m", "sglang.launch_server", "--model-path", c.model};
    auto& n = lc.notes;
    const Degrees& d = c.d;
    const int stage = d.dp * d.tp;
    // Attention's tensor-parallel group: 1 when attention runs by batch (or nothing splits over tp).
    const int attnTp = c.tpIsData || c.attnBatch ? 1 : d.tp;
    // Batch attention inside a tp group that still splits other operators: DP attention within the group.
    const bool innerDp = attnTp < d.tp && !c.tpIsData;
    // One server (tp-size GPUs per stage) is the smallest set of whole attention groups (whole tp groups
    // with innerDp) that holds whole expert groups; SGLang's MoE layers span a server's tp-size as
    // ep x moe-tp x moe-dp. Several attention groups in a server need DP attention.
    const int eg = c.moe ? d.ep * d.etp : 1;
    const int unit = std::lcm(eg, innerDp ? d.tp : attnTp);
    const int servers = stage / unit;
    const bool dpAttn = unit > attnTp;
    const int dpSize = dpAttn ? unit / attnTp : servers;
    // Plain replicas share one server through --dp-size, but only on one node ("multi-node data parallel is
    // not supported unless dp attention").
    const bool combined = !dpAttn && servers > 1 && c.gpus <= c.gpn;
    const int serverGpus = unit * d.pp * (combined ? servers : 1);

    add(lc, "--tp-size", unit);
    if (dpSize > 1 && (dpAttn || combined)) add(lc, "--dp-size", dpSize);
    if (d.pp > 1) add(lc, "--pp-size", d.pp);
    if (dpAttn) lc.argv.push_back("--enable-dp-attention");
    if (c.tpIsData)
        n.push_back("The plan's tp " + str(d.tp) +
                    " splits no weights (every operator runs whole on each GPU's own tokens or sequences): "
                    "that is data parallelism, so SGLang's attention runs on one GPU per data-parallel "
                    "group.");
    if (dpAttn)
        n.push_back("Attention: data-parallel over " + str(dpSize) + " groups of " + count(attnTp, "GPU") +
                    " inside SGLang's tp-size " + str(unit) + " (attention TP = tp-size / dp-size)" +
                    (c.m.attention.type == AttentionType::MLA
                         ? std::string(".")
                         : std::string("; SGLang's --enable-dp-attention help names DeepSeek-V2/V3 and Qwen "
                                       "2/3 MoE models as supported: check yours is.")));
    if (servers > 1 && !combined)
        n.push_back(
            "Servers: this command is one of " + str(servers) + " identical servers of " +
            count(serverGpus, "GPU") +
            (dpAttn ? (c.moe ? " (one per expert replica: SGLang's expert groups span a server's tp-size)"
                             : " (SGLang's --dp-size is taken by DP attention)")
                    : " (SGLang's --dp-size does not span nodes without DP attention)") +
            "; put them behind sgl-router or another load balancer.");

    int denseGroup = unit; // the dense FFN's group (an MoE model's dense layers)
    bool dpLmHead = false;
    if (c.moe) {
        const int moeDp = unit / eg;
        if (d.ep > 1) add(lc, "--ep-size", d.ep);
        if (moeDp > 1) {
            add(lc, "--moe-dp-size", moeDp);
            n.push_back("Experts: --moe-dp-size (expert replicas; moe TP = tp-size / ep / moe-dp = " +
                        str(d.etp) + ") is a recent SGLang flag: check that your version has it.");
        }
        if (d.ep > 1 && d.ep == unit) {
            add(lc, "--moe-a2a-backend", "deepep");
            n.push_back(
                "Experts: --moe-a2a-backend deepep gives the all-to-all dispatch the cost model prices "
                "(it needs DeepEP installed).");
        } else if (d.ep > 1) {
            n.push_back("Experts: SGLang's default dispatch (--moe-a2a-backend none) gathers tokens instead "
                        "of the plan's all-to-all; deepep would need ep = tp-size = " +
                        str(unit) + ".");
        }
        if (dpAttn && c.m.denseLayers() > 0) {
            const bool ffnSplit = d.tp > 1 && (splitsOverTp(Op::FfnUp, c.p.choice(Op::FfnUp)) ||
                                               splitsOverTp(Op::FfnDown, c.p.choice(Op::FfnDown)));
            if (!ffnSplit) add(lc, "--moe-dense-tp-size", 1);
            denseGroup = ffnSplit ? unit : 1;
        }
    }
    if (dpAttn) {
        // The LM head is vocab-parallel over the server's tp-size, or over the attention group with
        // --enable-dp-lm-head: take the one that is the plan's.
        const int head = d.tp > 1 && splitsOverTp(Op::LmHead, c.p.choice(Op::LmHead)) ? d.tp : 1;
        dpLmHead = head == attnTp || head != unit;
        if (dpLmHead) lc.argv.push_back("--enable-dp-lm-head");
    }

    if (serverGpus > c.gpn) {
        const int nodes = int(ceilDiv(serverGpus, c.gpn));
        add(lc, "--nnodes", nodes);
        add(lc, "--node-rank", "${NODE_RANK}");
        add(lc, "--dist-init-addr", "${HEAD_NODE_IP}:5000");
        n.push_back("Nodes: run this on each of the " + str(nodes) + " nodes" +
                    (servers > 1 && !combined ? " of a server" : "") + " with NODE_RANK 0.." +
                    str(nodes - 1) +
                    " and HEAD_NODE_IP set to the address of its node 0 (which serves the API)" +
                    (serverGpus % c.gpn ? "; " + str(serverGpus) + " GPUs do not fill whole nodes of " +
                                              str(c.gpn) + ", which SGLang expects"
                                        : std::string()) +
                    ".");
    }

    if (c.batch > 0) {
        // The plan keeps pp micro-batches of `batch` sequences in flight per replica (its tp GPUs). SGLang
        // divides --max-running-requests among its DP-attention workers, but gives each plain DP replica all
        // of it: either way the cap is the plan's sequences on `unit` GPUs.
        const int64_t cap = ceilDiv(c.batch * d.pp * unit, d.tp);
        add(lc, "--max-running-requests", cap);
        n.push_back(
            "Batch: " + str(c.batch) + " sequences per replica of " + count(d.tp, "GPU") + " (" +
            c.batchSource + ")" + (d.pp > 1 ? " in each of " + str(d.pp) + " micro-batches" : std::string()) +
            (dpAttn ? "; SGLang splits --max-running-requests among its " + str(dpSize) +
                          " DP-attention workers."
                    : (combined ? "; SGLang gives each of its " + str(dpSize) + " DP replicas the full cap."
                                : std::string("."))));
    } else {
        n.push_back("Batch: the cost model found no feasible batch, so --max-running-requests is left to "
                    "SGLang.");
    }
    add(lc, "--context-length", c.s.workload.inputTokens + c.s.workload.outputTokens);
    dtypeFlags(c, "SGLang", lc);
    if (c.m.kvCache == Dtype::FP8) add(lc, "--kv-cache-dtype", "fp8_e4m3");
    add(lc, "--mem-fraction-static", fraction(1.0 - c.s.constraints.memoryHeadroom));
    if (c.metrics.valid && c.metrics.activationsGiB + c.metrics.reserveGiB > 0)
        n.push_back(
            "Memory: SGLang's --mem-fraction-static covers the weights and the KV pool only; the plan "
            "also needs " +
            gib(c.metrics.activationsGiB + c.metrics.reserveGiB) +
            " GiB per GPU for activations and its reserve inside that fraction: lower it if SGLang "
            "runs out of memory.");

    const auto diffs = operatorDifferences(c, "SGLang", [&](Op op) {
        switch (baseOp(op)) {
        case Op::FfnUp:
        case Op::FfnDown:
            return c.moe ? denseGroup : unit;
        case Op::LmHead:
            return dpLmHead ? attnTp : unit;
        case Op::Embedding:
        case Op::Router:
        case Op::SharedExperts:
            return dpAttn ? 0 : unit;
        default:
            return attnTp;
        }
    });
    if (!diffs.empty())
        n.push_back("Operator choices SGLang's fixed scheme does not take: " + joined(diffs, "; ") + ".");
    if (dpAttn && unit > 1)
        n.push_back(std::string("The embedding") +
                    (c.moe ? ", router and shared experts follow" : " follows") +
                    " SGLang's own placement under DP attention (no flag sets them).");
    if (dpAttn)
        meshNote(c, "SGLang", {Axis::TP, Axis::DP, Axis::PP}, c.tpIsData, serverGpus, lc);
    else
        meshNote(c, "SGLang", {Axis::TP, Axis::PP, Axis::DP}, c.tpIsData, serverGpus, lc);
    addCommonNotes(c, "SGLang", lc, "--max-running-requests", "SGLANG_PP_LAYER_PARTITION");
    return lc;
}

} // namespace

std::string_view nameOf(ServingEngine e) {
    return e == ServingEngine::Vllm ? "vllm" : "sglang";
}

std::optional<ServingEngine> servingEngineFromName(std::string_view s) {
    if (s == "vllm") return ServingEngine::Vllm;
    if (s == "sglang") return ServingEngine::Sglang;
    return std::nullopt;
}

std::string shellQuote(const std::string& arg) {
    if (arg.empty()) return "''";
    if (std::all_of(arg.begin(), arg.end(), isSafeShellChar)) return arg;
    // Safe characters and ${NAME} placeholders only: double quotes, so the shell expands the placeholders.
    bool placeholders = false, plain = true;
    for (size_t i = 0; i < arg.size() && plain;) {
        if (isSafeShellChar(arg[i])) {
            ++i;
            continue;
        }
        size_t j = i + 2;
        if (arg.compare(i, 2, "${") == 0) {
            while (j < arg.size() && isNameChar(arg[j])) ++j;
            if (j < arg.size() && arg[j] == '}' && j > i + 2) {
                placeholders = true;
                i = j + 1;
                continue;
            }
        }
        plain = false;
    }
    if (plain && placeholders) return "\"" + arg + "\"";
    std::string out = "'";
    for (char ch : arg) out += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
    return out + "'";
}

std::string LaunchCommand::text() const {
    std::string out;
    size_t i = 0;
    // The program and its positional arguments on the first line, then one option (with its values) a line.
    auto isOption = [this](size_t k) { return argv[k].rfind("--", 0) == 0; };
    // (appends rather than `"..." + std::string`, which GCC 12 misreports under -Wrestrict)
    for (; i < argv.size() && !isOption(i); ++i) out.append(i ? " " : "").append(shellQuote(argv[i]));
    while (i < argv.size()) {
        out.append(out.empty() ? "" : " \\\n    ").append(shellQuote(argv[i++]));
        for (; i < argv.size() && !isOption(i); ++i) out.append(" ").append(shellQuote(argv[i]));
    }
    out += "\n";
    for (const auto& note : notes) out += commentLines(note, 110);
    return out;
}

std::string defaultModelPath(const Model& m) {
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
    return m.name;
}

Result<LaunchCommand> launchCommand(const Scenario& scenario, const Plan& plan, ServingEngine engine,
                                    const std::string& modelPath) {
    try {
        const CostModel model(scenario);
        if (auto why = model.checkPlan(plan))
            return Error{"", 0, 0, "", "plan does not fit the scenario: " + *why};
        Ctx c(scenario, plan);
        c.moe = c.m.moe.present();
        c.gpus = scenario.gpus();
        c.gpn = std::max(1, scenario.cluster.gpusPerNode);
        c.metrics = model.evaluate(plan);
        c.model = modelPath.empty() ? defaultModelPath(c.m) : modelPath;
        if (plan.batch > 0) {
            c.batch = plan.batch, c.batchSource = "fixed by the plan";
        } else if (scenario.workload.fixedBatch && scenario.workload.batch > 0) {
            c.batch = scenario.workload.batch, c.batchSource = "fixed by the workload";
        } else if (c.metrics.feasible && c.metrics.batch > 0) {
            c.batch = c.metrics.batch, c.batchSource = "the cost model's choice";
        }
        c.attnOp = c.moe && opRelevant(c.m, Op::MoeAttention) ? Op::MoeAttention : Op::Attention;
        c.attnBatch = plan.choice(c.attnOp) == choice::AttnBatch;
        c.tpIsData = plan.degrees.tp > 1;
        for (Op op : kMappedOps)
            if (opRelevant(c.m, op) && splitsOverTp(op, plan.choice(op))) c.tpIsData = false;
        return engine == ServingEngine::Vllm ? vllmCommand(c) : sglangCommand(c);
    } catch (const InputError& e) {
        return e.error();
    }
}

} // namespace sp
