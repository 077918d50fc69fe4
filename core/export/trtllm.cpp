// TensorRT-LLM, `trtllm-serve MODEL --backend pytorch`: its version table and the plan as its flags and its
// --extra_llm_api_options YAML.
//
// Flags, from tensorrt_llm/commands/serve.py (NVIDIA/TensorRT-LLM, read at commit 00209af149e7 of main):
// --backend {pytorch,tensorrt,_autodeploy} (default pytorch), --max_batch_size, --max_num_tokens,
// --max_seq_len ("maximum total length of one request, including prompt and outputs"), --tp_size
// (--tensor_parallel_size), --pp_size, --ep_size (--moe_expert_parallel_size),
// --kv_cache_free_gpu_memory_fraction (--free_gpu_memory_fraction, default 0.9: "free GPU memory fraction
// reserved for KV cache, after allocating model weights and buffers"), --extra_llm_api_options (--config:
// "a YAML file that overwrites the parameters specified by trtllm-serve"), --port; chunked prefill is off
// unless --enable_chunked_prefill, so a prompt must fit --max_num_tokens.
// The YAML keys, from tensorrt_llm/llmapi/llm_args.py (StrictBaseModel: unknown keys are refused):
// enable_attention_dp, moe_expert_parallel_size, moe_tensor_parallel_size, moe_config.backend (AUTO by
// default; the export names CUTLASS, the all-gather dispatch, or WIDEEP),
// kv_cache_config.{free_gpu_memory_fraction,dtype}, cuda_graph_config.{max_batch_size,enable_padding}.
// tensorrt_llm/mapping.py: the MoE layers regroup the tp_size ranks as moe_tp x moe_ep (their product must be
// tp_size); with enable_attention_dp each rank runs attention on its own requests. Multi-node:
// docs/source/deployment-guide (trtllm-llmapi-launch under mpirun or srun, one MPI rank per GPU).
#include "core/export/common.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <numeric>

namespace sp::exporting {

namespace {

/// `text` as a double-quoted YAML scalar (yaml-cpp escapes quotes, backslashes and control characters, and
/// with EscapeNonAscii every character past ASCII as \uXXXX: the file holds nothing a YAML 1.1 parser reads
/// as a line break, U+0085, U+2028 and U+2029 included, wherever it is later embedded).
std::string yamlQuoted(const std::string& text) {
    YAML::Emitter e;
    e.SetOutputCharset(YAML::EscapeNonAscii);
    e << YAML::DoubleQuoted << text;
    return e.c_str();
}

} // namespace

const std::vector<EngineVersion>& trtllmVersions() {
    static const std::vector<EngineVersion> rows = [] {
        // One row: the release whose parser was read. TensorRT-LLM 1.0 (commit ae8270b71344, the
        // tensorrt_llm submodule of triton-inference-server/tensorrtllm_backend at v1.0.0) is not offered:
        // no copy of its serve.py and llm_args.py at that release could be read, and a row of unverified
        // flags would export commands that may not start.
        EngineVersion v1;
        v1.engine = ServingEngine::Trtllm;
        v1.version = "1.2";
        v1.source =
            "tensorrt_llm/commands/serve.py read at commit 00209af149e7 (main) and llmapi/llm_args.py: "
            "MoeConfig.backend adds AUTO (the default)";
        v1.defaultPrefillTokens = 8192; // BuildConfig.max_num_tokens
        // No architectures: tensorrt_llm/_torch/models (register_auto_model) could not be read at this row's
        // commit, so the exports check none against its registry (and say so in a note).
        v1.defaultMemoryFraction = 0.9;
        v1.flags = {"--backend",
                    "--tp_size",
                    "--pp_size",
                    "--ep_size",
                    "--max_batch_size",
                    "--max_num_tokens",
                    "--max_seq_len",
                    "--kv_cache_free_gpu_memory_fraction",
                    "--extra_llm_api_options",
                    "--port"};
        v1.constraints = {
            "mapping.py: moe_tensor_parallel_size x moe_expert_parallel_size = tp_size; the experts divide "
            "by the "
            "EP size",
            "llm_args.py StrictBaseModel: only known keys in the --extra_llm_api_options YAML",
            "a server over several nodes runs under mpirun/srun with trtllm-llmapi-launch, one rank per GPU",
            "chunked prefill off by default: --max_num_tokens holds a whole prompt",
            "--max_seq_len <= the model's max_position_embeddings"};
        // Speculative decoding: the YAML's speculative_config, read in tensorrt_llm/llmapi/llm_args.py as
        // stored at commit 0004396720054 of main (no copy at the row's commit could be read):
        // DecodingBaseConfig.max_draft_len and speculative_model (alias speculative_model_dir, the name of
        // the 1.0 examples); decoding_type "MTP" (MTPDecodingConfig; num_nextn_predict_layers, which 1.0's
        // examples set and main still takes, deprecated, as max_draft_len), "Eagle3" (Eagle3DecodingConfig:
        // max_draft_len > 0 and a speculative model), "Draft_Target" (the same two) and "NGram"
        // (max_draft_len > 0, max_matching_ngram_size). Which models run them: docs/source/features/
        // speculative-decoding.md (nvidia.github.io/TensorRT-LLM): MTP for DeepSeek V3/R1, EAGLE 3 for Llama,
        // draft/target and NGram for all models.
        v1.mtpArchitectures = {{"DeepseekV3ForCausalLM", "MTP"}};
        v1.eagle3 = true, v1.draftModel = true, v1.ngram = true, v1.specNoPipeline = false;
        v1.specSource = "tensorrt_llm/llmapi/llm_args.py at 0004396720054 and docs/source/features/"
                        "speculative-decoding.md";
        return std::vector<EngineVersion>{v1};
    }();
    return rows;
}

EngineResult trtllmCommand(const Ctx& c) {
    LaunchCommand lc;
    auto& n = lc.notes;
    const Degrees& d = c.d;
    // The layers per stage: tensorrt_llm/mapping.py Mapping.pp_layers as read (commit b35ac1b64368) splits
    // them with torch.tensor_split and takes no split of the user's; no trtllm-serve flag sets one. An
    // LlmArgs field pp_partition (Mapping(pp_partition=...), NVIDIA/TensorRT-LLM pull request #9003, opened
    // 2025-11-07) would, as a --extra_llm_api_options key, but it could not be confirmed at this row's
    // commit 00209af149e7, and an unknown key makes the StrictBaseModel refuse the whole file. Until a row
    // reads it there, a plan's own split that is not TensorRT-LLM's own is not runnable as such.
    if (!c.p.stageLayers.empty() && planStages(c) != engineDefaultStages(c.version, int(c.m.layers), d.pp)) {
        Refusal r;
        std::vector<std::string> own;
        for (int k : engineDefaultStages(c.version, int(c.m.layers), d.pp)) own.push_back(str(k));
        r.reason = "TensorRT-LLM " + c.version.version + " splits the layers its own way (" +
                   joined(own, ", ") +
                   " per stage; no flag or option sets the split), not the plan's stage_layers";
        Plan a = c.p;
        a.stageLayers.clear();
        r.candidates.push_back({"stage_layers -> the balanced split", a});
        return r;
    }
    const int stage = d.dp * d.tp;
    const int attnTp = c.tpIsData || c.attnBatch ? 1 : d.tp;
    const int eg = c.moe ? d.ep * d.etp : 1;
    // One server's tp_size: the expert group under attention DP; the attention group otherwise, and then
    // the expert group must be exactly that group (moe_tp x moe_ep = tp_size).
    int tpSize = 0;
    bool attentionDp = false;
    if (!c.moe) {
        tpSize = c.tpIsData ? 1 : d.tp;
        attentionDp = !c.tpIsData && c.attnBatch && d.tp > 1;
    } else if (attnTp == 1) {
        tpSize = eg;
        attentionDp = eg > 1;
    } else if (eg == attnTp) {
        tpSize = attnTp;
    } else {
        Refusal r;
        r.reason =
            "TensorRT-LLM's MoE layers regroup one server's tp_size ranks (moe_tp x moe_ep = tp_size), so "
            "an expert group of " +
            str(eg) + " GPUs cannot sit beside attention tensor parallelism of " + str(attnTp);
        Plan a = c.p;
        a.degrees.tp = eg, a.degrees.dp = stage / eg;
        if (stage % eg == 0)
            r.candidates.push_back(
                {"tp " + str(d.tp) + " -> " + str(eg) + ", dp " + str(d.dp) + " -> " + str(a.degrees.dp), a});
        {
            // Attention data-parallel (each rank its own requests) over the expert group.
            Plan b = c.p;
            for (Op op : {Op::Qkv, Op::MoeQkv}) b.setChoice(op, choice::QkvToken);
            for (Op op : {Op::Attention, Op::MoeAttention}) b.setChoice(op, choice::AttnBatch);
            for (Op op : {Op::OutProj, Op::MoeOutProj}) b.setChoice(op, choice::OutToken);
            r.candidates.push_back(
                {"attention by batch (enable_attention_dp) over the expert group, not by head over tp " +
                     str(d.tp),
                 b});
        }
        if (attnTp % d.etp == 0) {
            Plan b = c.p;
            b.degrees.ep = attnTp / d.etp, b.degrees.edp = stage / attnTp;
            r.candidates.push_back({"ep " + str(d.ep) + " -> " + str(b.degrees.ep) + ", edp " + str(d.edp) +
                                        " -> " + str(b.degrees.edp),
                                    b});
        }
        if (attnTp % d.ep == 0) {
            Plan b = c.p;
            b.degrees.etp = attnTp / d.ep, b.degrees.edp = stage / attnTp;
            r.candidates.push_back({"etp " + str(d.etp) + " -> " + str(b.degrees.etp) + ", edp " +
                                        str(d.edp) + " -> " + str(b.degrees.edp),
                                    b});
        }
        return r;
    }
    if (auto r = headsRefusal(c, attentionDp ? 1 : tpSize, "TensorRT-LLM", true)) return *r;
    if (auto r = specRefusal(c, "TensorRT-LLM")) return *r;
    if (c.moe && c.m.moe.experts % d.ep != 0) {
        // Its MoE layers place experts / moe_expert_parallel_size experts on each rank.
        Refusal r;
        r.reason = "TensorRT-LLM divides the " + str(int(c.m.moe.experts)) + " experts evenly over " +
                   "moe_expert_parallel_size, and " + str(d.ep) + " does not divide them";
        for (int e = d.ep - 1; e >= 1; --e)
            if (c.m.moe.experts % e == 0 && stage % (e * d.etp) == 0) {
                Plan b = c.p;
                b.degrees.ep = e, b.degrees.edp = stage / (e * d.etp);
                r.candidates.push_back({"ep " + str(d.ep) + " -> " + str(e) + ", edp " + str(d.edp) + " -> " +
                                            str(b.degrees.edp),
                                        b});
                break;
            }
        return r;
    }
    // gpt-oss on Hopper: examples/models/core/gpt_oss/README.md (NVIDIA/TensorRT-LLM, read at commit
    // 0ee4114cc7fe; not readable at this row's commit): the MXFP4 experts run with bf16 activations on Hopper
    // under the TRITON or CUTLASS MoE backend, "use the TRITON backend on Hopper for both latency and
    // throughput cases", set by `moe_config: backend: TRITON` in the --extra_llm_api_options YAML; its table
    // gives TRITON expert parallelism but no expert tensor parallelism (TP "no", EP "yes").
    const bool triton = c.moe && c.m.architecture == "GptOssForCausalLM" && hopperGpu(c.s.cluster.gpu);
    if (triton && tpSize / d.ep > 1) {
        Refusal r;
        r.reason =
            "TensorRT-LLM's TRITON MoE backend, which its gpt-oss guide uses on Hopper, runs the experts "
            "expert-parallel only, not tensor-parallel over " +
            str(tpSize / d.ep) + " GPUs";
        const int e = tpSize;
        if (c.m.moe.experts % e == 0 && stage % e == 0) {
            Plan b = c.p;
            b.degrees.ep = e, b.degrees.etp = 1, b.degrees.edp = stage / e;
            r.candidates.push_back({"ep " + str(d.ep) + " -> " + str(e) + ", etp " + str(d.etp) +
                                        " -> 1, edp " + str(d.edp) + " -> " + str(b.degrees.edp),
                                    b});
        }
        return r;
    }
    const int servers = stage / tpSize;
    const int serverGpus = tpSize * d.pp;
    const std::string options = "extra-llm-api-options.yaml";

    std::vector<std::string> serve = {"trtllm-serve", c.model, "--backend", "pytorch"};
    add(serve, "--tp_size", tpSize);
    add(serve, "--pp_size", d.pp);
    if (c.moe) add(serve, "--ep_size", d.ep);

    // Batch: with attention DP each rank schedules its own requests (max_batch_size per rank).
    int64_t maxBatch = 0;
    if (c.batch > 0) {
        maxBatch = attentionDp ? ceilDiv(c.batch * d.pp, d.tp) : ceilDiv(c.batch * d.pp * tpSize, d.tp);
        add(serve, "--max_batch_size", maxBatch);
        n.push_back("Batch: " + str(c.batch) + " sequences per replica of " + count(d.tp, "GPU") + " (" +
                    c.batchSource + ")" + (d.pp > 1 ? " in each of " + str(d.pp) + " micro-batches" : "") +
                    (attentionDp ? "; with attention DP --max_batch_size applies to each of the " +
                                       str(tpSize) + " ranks."
                                 : "."));
    } else {
        n.push_back(
            "Batch: the cost model found no feasible batch, so --max_batch_size is left to TensorRT-LLM.");
    }
    // The prefill budget: BuildConfig's default max_num_tokens, raised to hold a whole prompt (chunked
    // prefill is off by default).
    const int64_t tokens =
        std::max<int64_t>({c.version.defaultPrefillTokens, c.s.workload.inputTokens, maxBatch});
    add(serve, "--max_num_tokens", tokens);
    if (tokens != c.version.defaultPrefillTokens)
        n.push_back("Prefill: --max_num_tokens " + str(tokens) + " (TensorRT-LLM's default is " +
                    str(c.version.defaultPrefillTokens) +
                    ") so that a whole prompt fits one step; chunked prefill is off by default.");
    add(serve, "--max_seq_len", c.contextLength);
    if (!c.contextNote.empty()) n.push_back(c.contextNote);

    // Memory: TensorRT-LLM gives the KV cache a fraction of the memory left after weights and buffers, the
    // rule the cost model sized the pool with (core/cost memoryFraction: the scenario's, else the default).
    const double kvFraction = memoryFraction(c.s, c.p, MemoryRule::Trtllm).value;
    add(serve, "--kv_cache_free_gpu_memory_fraction", fraction(kvFraction));
    add(serve, "--extra_llm_api_options", options);

    // The YAML: the keys the flags do not cover.
    std::string yaml;
    yaml += "# TensorRT-LLM LLM API options for this plan (tensorrt_llm/llmapi/llm_args.py)\n";
    yaml += std::string("enable_attention_dp: ") + (attentionDp ? "true" : "false") + "\n";
    // The LLM API's trust_remote_code, in the YAML so that trtllm-serve and dynamo.trtllm both read it
    // (Dynamo's components/backends/trtllm/deploy/agg-with-config.yaml at 416ff06e7feabb puts it in the
    // engine YAML).
    if (configNamesCustomCode(c.m)) yaml += "trust_remote_code: true\n";
    if (c.moe) {
        yaml += "moe_expert_parallel_size: " + str(d.ep) + "\n";
        yaml += "moe_tensor_parallel_size: " + str(tpSize / d.ep) + "\n";
        yaml += std::string("moe_config:\n  backend: ") + (triton ? "TRITON" : "CUTLASS") + "\n";
    }
    yaml += "kv_cache_config:\n  free_gpu_memory_fraction: " + fraction(kvFraction) + "\n";
    if (c.m.kvCache == Dtype::FP8) yaml += "  dtype: fp8\n";
    if (maxBatch > 0)
        yaml += "cuda_graph_config:\n  max_batch_size: " + str(maxBatch) + "\n  enable_padding: true\n";
    if (c.p.spec.on()) {
        // speculative_config (the row's citations): a chain of K draft tokens per step. MTP with K above the
        // checkpoint's one module runs it K times ("MTP Eagle", MTPDecodingConfig.spec_dec_mode). The draft's
        // Hub id is a YAML string in double quotes, escaped, so no id can end the value or add a key.
        const Speculative& sp = c.p.spec;
        const std::string type = c.version.specMethodName(sp.method, c.m.architecture);
        std::string spec = "speculative_config:\n  decoding_type: " + type + "\n";
        if (sp.method == SpecMethod::Mtp) {
            spec += "  num_nextn_predict_layers: " + str(sp.draftTokens) + "\n";
        } else {
            spec += "  max_draft_len: " + str(sp.draftTokens) + "\n";
            if (const std::string draft = specDraftModel(c); !draft.empty())
                spec += "  speculative_model_dir: " + yamlQuoted(draft) + "\n";
            if (sp.method == SpecMethod::Ngram) spec += "  max_matching_ngram_size: 4\n";
        }
        // The docs' Draft/Target quick start runs it with the overlap scheduler off (a TorchLlmArgs field).
        if (sp.method == SpecMethod::Draft) spec += "disable_overlap_scheduler: true\n";
        yaml += spec;
        std::string flags = spec;
        std::replace(flags.begin(), flags.end(), '\n', ' ');
        while (!flags.empty() && flags.back() == ' ') flags.pop_back();
        specNote(c, "TensorRT-LLM", "in " + options + ": " + flags, lc);
    }
    lc.files.push_back({options, yaml});

    if (c.moe && tpSize / d.ep != d.etp)
        n.push_back("Experts: TensorRT-LLM splits each expert over tp_size / ep = " + str(tpSize / d.ep) +
                    " GPUs, the plan over etp " + str(d.etp) + ".");
    if (triton)
        n.push_back(
            "Experts: moe_config backend TRITON, as TensorRT-LLM's gpt-oss guide "
            "(examples/models/core/gpt_oss/README.md) gives for Hopper; it runs OpenAI's Triton MoE kernels, "
            "which the guide builds from triton-lang/triton and finds through TRITON_ROOT when the image "
            "does not carry them.");
    else if (c.moe && d.ep > 1 && attentionDp)
        n.push_back(
            "Experts: moe_config backend CUTLASS dispatches by all-gather; WIDEEP gives the all-to-all the "
            "cost model prices (it needs the wide-EP kernels of the build).");
    if (!c.moe && c.attnBatch && d.tp > 1)
        n.push_back("Attention: enable_attention_dp runs attention data-parallel over the " + str(d.tp) +
                    " ranks while the other layers stay tensor-parallel.");
    if (c.m.weights == Dtype::FP8 && !fp8Checkpoint(c))
        n.push_back(
            "Weights fp8: TensorRT-LLM serves FP8 from a checkpoint quantized ahead (NVIDIA ModelOpt), not "
            "from BF16 weights; point MODEL at an FP8 checkpoint.");
    if (c.m.kvCache == Dtype::FP8 && c.m.weights != Dtype::FP8)
        n.push_back("KV cache fp8: kv_cache_config dtype fp8 (in the YAML).");
    if (servers > 1)
        n.push_back(
            "Servers: this is one of " + str(servers) + " identical servers of " + count(serverGpus, "GPU") +
            " (TensorRT-LLM has no data parallelism across servers); put them behind a load balancer.");

    const auto diffs = operatorDifferences(c, "TensorRT-LLM", [&](Op op) {
        if (attentionDp) return baseOp(op) == Op::Embedding || baseOp(op) == Op::LmHead ? 0 : 1;
        return tpSize;
    });
    if (!diffs.empty())
        n.push_back("Operator choices TensorRT-LLM's fixed scheme does not take: " + joined(diffs, "; ") +
                    ".");
    meshNote(c, "TensorRT-LLM", {Axis::TP, Axis::PP, Axis::DP}, c.tpIsData, serverGpus, lc);
    addCommonNotes(c, "TensorRT-LLM", lc, "--max_batch_size", nullptr);

    if (serverGpus > c.gpn) {
        // One MPI rank per GPU over the server's nodes, started from its node 0 (trtllm-llmapi-launch).
        const int nodes = int(ceilDiv(serverGpus, c.gpn));
        lc.argv = {"mpirun",      "--allow-run-as-root", "-np", str(serverGpus), "--hostfile",
                   "${HOSTFILE}", "trtllm-llmapi-launch"};
        lc.argv.insert(lc.argv.end(), serve.begin(), serve.end());
        n.push_back("Nodes: the server spans " + str(nodes) +
                    " nodes; mpirun on its node 0 starts one rank per GPU "
                    "(HOSTFILE lists the nodes, " +
                    str(c.gpn) +
                    " slots each; the other nodes need only ssh "
                    "and the same files). Under Slurm use srun -N " +
                    str(nodes) + " --ntasks-per-node " + str(c.gpn) +
                    " --mpi=pmix trtllm-llmapi-launch with the same trtllm-serve arguments.");
        for (int s = 0; s < servers; ++s)
            for (int r = 0; r < nodes; ++r) {
                NodeLaunch node;
                if (r == 0) {
                    node.env = {{"HOSTFILE", ""}};
                    node.commands = {lc.argv};
                } else {
                    node.comment = "nothing to start here: mpirun on node " + str(int64_t(s) * nodes) +
                                   " starts this node's ranks over ssh";
                }
                lc.nodes.push_back(std::move(node));
            }
    } else {
        lc.argv = serve;
        placeNodes(lc, servers, serverGpus, c.gpn,
                   [&lc](int) { return std::vector<std::vector<std::string>>{lc.argv}; });
    }
    return lc;
}

} // namespace sp::exporting
