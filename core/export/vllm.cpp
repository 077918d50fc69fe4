// vLLM, `vllm serve MODEL`: its version table and the plan as its flags.
//
// Every flag written here was checked against vLLM's own documentation or argument definitions; a plan
// property with no verified flag goes into a note instead.
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
//  - vllm/config/parallel.py, ParallelConfig.__post_init__ (read at commit 840e7972c6ab of main): a world
//    size (tp x pp) larger than the host's GPUs is refused unless --distributed-executor-backend ray or
//    --nnodes > 1 (multiprocessing); nnodes > 1 is refused with the Ray executor or with
//    --data-parallel-backend other than mp.
// These are main's. The 0.10.2 row (vllmVersions) was read at its tag: where that release differs (Ray by
// default, VLLM_ALL2ALL_BACKEND instead of --all2all-backend, no VLLM_RAY_DP_PACK_STRATEGY), the row's
// fields steer the flags and notes.
#include "core/export/common.h"

#include <nlohmann/json.hpp>

#include <numeric>

namespace sp::exporting {

const std::vector<EngineVersion>& vllmVersions() {
    // One row per release whose parser we read. --nnodes/--node-rank/--master-addr (multi-node
    // multiprocessing, docs/serving/parallelism_scaling.md) are the difference that changes our commands;
    // before them a replica larger than a host runs only on Ray.
    static const std::vector<EngineVersion> rows = [] {
        // vLLM 0.10.2: the tag v0.10.2 of vllm-project/vllm, commit e017120ed146cc3069d18428322d67881cb95e67
        // (read in the fork tandriamil/vllm, which carries the upstream tags and whose vllm/_version.py of
        // commit 64c96194e6a6 says 0.10.2; upstream's vllm/version.py takes the version from the tag):
        //  - vllm/engine/arg_utils.py, add_cli_args: --distributed-executor-backend,
        //  --pipeline-parallel-size,
        //    --tensor-parallel-size, --data-parallel-size, -rank, -start-rank, -size-local, -address,
        //    -rpc-port, --data-parallel-backend (default mp), --enable-expert-parallel, --max-num-seqs,
        //    --max-model-len, --gpu-memory-utilization, --kv-cache-dtype, --quantization, --dtype; no
        //    --nnodes, --node-rank, --master-addr or --all2all-backend; get_batch_defaults: `vllm serve`
        //    takes 8192 batched tokens per step on a GPU of 70 GiB or more that is not an A100, else 2048;
        //  - vllm/entrypoints/openai/cli_args.py: --headless, --port (8000);
        //  - vllm/config/parallel.py, ParallelConfig.__post_init__: with no --distributed-executor-backend
        //    a world size (tp x pp) above cuda_device_count_stateless() selects "ray" ("Unable to load Ray"
        //    when it is not installed), as does --data-parallel-backend ray; an explicit mp executor is
        //    refused by vllm/executor/mp_distributed_executor.py _check_cuda ("please ensure that
        //    world_size ... is less than than max local gpu count");
        //  - vllm/config/cache.py: CacheDType {auto, fp8, fp8_e4m3, fp8_e5m2, fp8_inc};
        //    gpu_memory_utilization default 0.9, above 1.0 refused (_verify_args);
        //  - vllm/config/__init__.py: verify_with_parallel_config (heads % tp), _get_and_verify_max_len
        //    (--max-model-len above the model's limit refused unless VLLM_ALLOW_LONG_MAX_MODEL_LEN=1);
        //  - vllm/envs.py: VLLM_ALL2ALL_BACKEND (naive by default; pplx, deepep_high_throughput,
        //    deepep_low_latency), VLLM_PP_LAYER_PARTITION; no VLLM_RAY_DP_PACK_STRATEGY;
        //  - vllm/v1/engine/utils.py, CoreEngineActorManager.create_dp_placement_groups: under the Ray DP
        //    backend each DP rank is one STRICT_PACK placement group on one node.
        EngineVersion v10;
        v10.engine = ServingEngine::Vllm;
        v10.version = "0.10.2";
        v10.source = "vllm/engine/arg_utils.py, vllm/config/parallel.py, vllm/config/cache.py and "
                     "vllm/entrypoints/openai/cli_args.py at tag v0.10.2 (commit e017120ed146): "
                     "--data-parallel-size, -size-local, -address, -rpc-port, -start-rank, --headless, "
                     "--enable-expert-parallel, --distributed-executor-backend; no --nnodes, no "
                     "--all2all-backend";
        v10.nnodes = false;
        v10.rayByDefault = true;
        v10.all2allFlag = false;
        v10.rayDpPackStrategy = false;
        v10.defaultMemoryFraction = 0.9;
        v10.kvCacheDtypes = {"auto", "fp8", "fp8_e4m3", "fp8_e5m2", "fp8_inc"};
        // vllm/model_executor/models/registry.py at v0.10.2 (_TEXT_GENERATION_MODELS, _MULTIMODAL_MODELS for
        // Llama4ForConditionalGeneration): every architecture shardplan imports but DeepseekV32ForCausalLM
        // and MiniMaxM2ForCausalLM (gpt-oss and Qwen3-Next are there).
        v10.architectures = {"LlamaForCausalLM",    "MistralForCausalLM",    "Qwen2ForCausalLM",
                             "Qwen3ForCausalLM",    "MixtralForCausalLM",    "Qwen2MoeForCausalLM",
                             "Qwen3MoeForCausalLM", "DeepseekV3ForCausalLM", "Llama4ForConditionalGeneration",
                             "GptOssForCausalLM",   "Glm4MoeForCausalLM",    "Qwen3NextForCausalLM"};
        v10.architecturesSource =
            "vllm/model_executor/models/registry.py at tag v0.10.2 (commit e017120ed146)";
        v10.flags = {"--model",
                     "--tensor-parallel-size",
                     "--pipeline-parallel-size",
                     "--data-parallel-size",
                     "--data-parallel-size-local",
                     "--data-parallel-address",
                     "--data-parallel-rpc-port",
                     "--data-parallel-start-rank",
                     "--headless",
                     "--data-parallel-backend",
                     "--distributed-executor-backend",
                     "--enable-expert-parallel",
                     "--max-num-seqs",
                     "--max-model-len",
                     "--gpu-memory-utilization",
                     "--kv-cache-dtype",
                     "--quantization",
                     "--dtype",
                     "--port"};
        // ROCm, read at v0.10.2: docs/getting_started/installation/gpu/rocm.inc.md (Docker is the recommended
        // way; "The AMD Infinity hub for vLLM" image rocm/vllm, validated on MI300X); vllm/envs.py
        // VLLM_ROCM_USE_AITER (False by default; VLLM_ROCM_USE_AITER_MHA and _MLA True by default);
        // vllm/platforms/rocm.py get_attn_backend_cls: on V1 with VLLM_ROCM_USE_AITER and _MHA on gfx9 the
        // AITER flash-attention backend, else TritonAttentionBackend; MLA with AITER on takes ROCM_AITER_MLA,
        // which raises unless the KV block size is 1 (check_and_update_config leaves the default 16).
        v10.rocmImage = "rocm/vllm (AMD Infinity Hub; a tag with vLLM " + v10.version + ")";
        v10.rocmEnv = {{"VLLM_ROCM_USE_AITER", "1"}};
        v10.rocmSource = "docs/getting_started/installation/gpu/rocm.inc.md, vllm/envs.py and "
                         "vllm/platforms/rocm.py at v0.10.2";
        v10.flags.push_back("--block-size");
        // vllm/engine/arg_utils.py at v0.10.2: --trust-remote-code (ModelConfig.trust_remote_code, False).
        v10.flags.push_back("--trust-remote-code");
        // --kv-transfer-config (KVTransferConfig, arg_utils.py at v0.10.2), for Dynamo's disaggregated
        // workers.
        v10.flags.push_back("--kv-transfer-config");
        v10.constraints = {
            "ModelConfig.verify_with_parallel_config: the attention heads divide by --tensor-parallel-size",
            "ParallelConfig.__post_init__: a world size (tp x pp) above the host's GPUs runs on the Ray "
            "executor, chosen when --distributed-executor-backend is unset (Ray must be installed); "
            "mp_distributed_executor._check_cuda refuses it with the mp executor",
            "--data-parallel-size-local x tp x pp fits a node; --data-parallel-start-rank + local <= dp",
            "--kv-cache-dtype in {auto, fp8, fp8_e4m3, fp8_e5m2, fp8_inc} (CacheDType); "
            "--gpu-memory-utilization at most 1 (CacheConfig._verify_args)",
            "--max-model-len <= the model's max_position_embeddings (_get_and_verify_max_len)"};
        // Speculative decoding at 0.10.2: --speculative-config, a JSON of SpeculativeConfig (arg_utils.py
        // add_cli_args; `vllm serve` parses it with json.loads). SpeculativeConfig was still in
        // vllm/config/__init__.py then, read as vllm-project/vllm pull request #24904's diff moves it out
        // unchanged (base 599eeb63bf80, main days after the v0.10.2 tag): SpeculativeMethod =
        // Literal["ngram", "eagle", "eagle3", "medusa", "mlp_speculator", "draft_model", "deepseek_mtp",
        // "ernie_mtp", "qwen3_next_mtp"], num_speculative_tokens, model (the draft or head),
        // prompt_lookup_max/min for ngram. A draft model is refused by the V1 engine: arg_utils.py
        // _is_v1_supported_oracle raises NotImplementedError for method "draft_model" (the lines
        // vllm-project/vllm pull request #25142's diff rewrites, base d3e23890469e; pull request #22047
        // documents it from 0.10.0 on). Pipeline parallelism does not compose with speculative decoding up to
        // vLLM 0.15.0 (docs/features/speculative_decoding/README.md, quoted by vllm-project/vllm pull request
        // #55623; the draft's parallel config copies the target's pp, and its model class has no SupportsPP:
        // vllm/config/speculative.py _verify_args, issue #52069).
        v10.mtpArchitectures = {{"DeepseekV3ForCausalLM", "deepseek_mtp"},
                                {"Qwen3NextForCausalLM", "qwen3_next_mtp"}};
        v10.eagle3 = true, v10.draftModel = false, v10.ngram = true, v10.specNoPipeline = true;
        v10.specSource = "SpeculativeConfig at v0.10.2 (vllm/config/__init__.py, as vllm-project/vllm pull "
                         "request #24904 moves it), arg_utils.py _is_v1_supported_oracle";
        v10.specPipelineSource = "docs/features/speculative_decoding/README.md: not composable up to 0.15.0";
        v10.flags.push_back("--speculative-config");
        EngineVersion v12 = v10;
        v12.version = "0.12.0";
        v12.source =
            "vllm/engine/arg_utils.py and vllm/config/parallel.py (ParallelConfig.__post_init__) read "
            "at commit 840e7972c6ab (main after 0.12.0): adds --nnodes, --node-rank, --master-addr";
        v12.rocmImage = "rocm/vllm (AMD Infinity Hub; a tag with vLLM " + v12.version + ")";
        v12.rocmSource = v10.rocmSource + " (not read at 0.12.0: taken to be the same)";
        v12.nnodes = true;
        v12.rayByDefault = false;
        v12.all2allFlag = true;
        v12.rayDpPackStrategy = true;
        v12.kvCacheDtypes = {"auto", "fp8", "fp8_e4m3", "fp8_e5m2"};
        // The registry adds DeepseekV32ForCausalLM ("DeepseekV32ForCausalLM": ("deepseek_v2",
        // "DeepseekV3ForCausalLM") in vllm/model_executor/models/registry.py of the fork tandriamil/vllm at
        // commit 4ebc9108a70e, v0.11.0rc1 + 482, before 0.12.0). MiniMaxM2ForCausalLM is in the registry read
        // at commit 0002bff0b6cb (main, after 0.12.0) but was not confirmed at 0.12.0 itself, so it is left
        // out.
        v12.architectures.push_back("DeepseekV32ForCausalLM");
        v12.architecturesSource =
            "vllm/model_executor/models/registry.py at v0.10.2 (commit e017120ed146) and "
            "at commit 4ebc9108a70e (before 0.12.0)";
        v12.flags.insert(v12.flags.end(), {"--nnodes", "--node-rank", "--master-addr"});
        // Speculative decoding at 0.12.0: vllm/config/speculative.py as
        // docs.vllm.ai/en/v0.12.0/api/vllm/config/ speculative/ renders it (the v0.12.0 tag): MTPModelTypes
        // ("deepseek_mtp", "mimo_mtp", "glm4_moe_mtp", "ernie_mtp", "qwen3_next_mtp", "longcat_flash_mtp",
        // "mtp", "pangu_ultra_moe_mtp"), which
        // __post_init__ folds into "mtp" (the older names are deprecated); EagleModelTypes ("eagle",
        // "eagle3"); SpeculativeMethod adds "ngram", "draft_model", "suffix". A draft model is still refused:
        // __post_init__ raises NotImplementedError "Speculative decoding with draft model is not supported
        // yet" in 0.13.0 too (vllm-project/vllm issue #31883); it came with pull request #24322, after.
        v12.mtpArchitectures = {
            {"DeepseekV3ForCausalLM", "mtp"}, {"Qwen3NextForCausalLM", "mtp"}, {"Glm4MoeForCausalLM", "mtp"}};
        v12.specSource = "vllm/config/speculative.py at v0.12.0 (docs.vllm.ai API reference), issue #31883";
        v12.constraints[1] =
            "ParallelConfig.__post_init__: a world size (tp x pp) above the host's GPUs needs "
            "--distributed-executor-backend ray or --nnodes > 1; --nnodes > 1 refuses the Ray "
            "executor and a --data-parallel-backend other than mp; tp x pp x dp divides by --nnodes";
        v12.constraints[3] = "--kv-cache-dtype in {auto, fp8, fp8_e4m3, fp8_e5m2}; "
                             "--gpu-memory-utilization in (0, 1]";
        v12.constraints[4] = "--max-model-len <= the model's max_position_embeddings (ModelConfig)";
        // 0.10.2 only: vllm/v1/engine/utils.py, CoreEngineActorManager.create_dp_placement_groups ("each
        // DP rank can only be assigned to one node"; STRICT_PACK bundles of world-size GPUs per node).
        v10.constraints.push_back("create_dp_placement_groups: with --data-parallel-backend ray each DP rank "
                                  "(tp x pp GPUs) is placed on one node");
        return std::vector<EngineVersion>{v10, v12};
    }();
    return rows;
}

EngineResult vllmCommand(const Ctx& c) {
    LaunchCommand lc;
    lc.engine = ServingEngine::Vllm;
    lc.argv = {"vllm", "serve", c.model};
    auto& n = lc.notes;
    const bool rocm = amdGpu(c.s.cluster.gpu); // the ROCm build (rocmSetup, at the end)
    const Degrees& d = c.d;
    const int stage = d.dp * d.tp;
    // vLLM has no data-parallel attention inside a tensor-parallel group: a tp axis that splits nothing is
    // data parallelism (each GPU a DP rank), otherwise it is vLLM's TP.
    const int tp = c.tpIsData ? 1 : d.tp;
    // vLLM's expert layers span a whole deployment (TP x DP), so the plan's expert replicas (edp) become
    // separate deployments, each the smallest set of whole DP ranks that holds whole expert groups.
    int unit = c.moe ? std::lcm(d.ep * d.etp, tp) : stage;
    int deployments = stage / unit;
    int dp = unit / tp;
    if (auto r = headsRefusal(c, tp, "vLLM", false)) return *r;
    if (auto r = specRefusal(c, "vLLM")) return *r;
    if (c.p.spec.on() && c.p.spec.method == SpecMethod::Eagle3 && c.m.spec.eagle3.heads % tp != 0)
        // The head runs at the target's tensor-parallel size (SpeculativeConfig._verify_and_get_draft_tp
        // defaults draft_tensor_parallel_size to it) and is checked like any model (_verify_args:
        // draft_model_config.verify_with_parallel_config, quoted in vllm-project/vllm issue #52069), so its
        // heads divide by tp. Read in vllm/config/speculative.py at commit 002e77c1f0ef of main, not at the
        // rows' releases.
        return specOff(c,
                       "vLLM runs the EAGLE-3 head at tensor parallel " + str(tp) + ", and its " +
                           str(c.m.spec.eagle3.heads) + " attention heads do not divide by it",
                       false);
    // DP ranks larger than a host: vLLM 0.10.2's Ray DP backend puts each DP rank on one node
    // (vllm/v1/engine/utils.py, CoreEngineActorManager.create_dp_placement_groups: "each DP rank can only be
    // assigned to one node", STRICT_PACK bundles of world-size GPUs); the newer row spans nodes with
    // VLLM_RAY_DP_PACK_STRATEGY=span. Dense replicas then become deployments of their own; an MoE model's
    // expert layers span TP x DP, so its DP ranks cannot be split.
    bool ranksSplit = false;
    if (!c.version.rayDpPackStrategy && dp > 1 && tp * d.pp > c.gpn) {
        if (c.moe) {
            Refusal r;
            r.reason = "vLLM " + c.version.version +
                       " places each DP rank on one host, and a DP rank here is " + "tp " + str(tp) +
                       " x pp " + str(d.pp) + " = " + count(int64_t(tp) * d.pp, "GPU") +
                       ", more than a host's " + str(c.gpn) +
                       " (its expert layers span TP x DP, so the ranks cannot be split)";
            // The nearest layout whose DP ranks fit a host: tp down to a divisor, dp up by as much (the
            // expert degrees, over the same dp x tp GPUs, stay).
            for (int t = tp - 1; t >= 1; --t)
                if (tp % t == 0 && int64_t(t) * d.pp <= c.gpn && c.m.attention.heads % t == 0) {
                    Plan b = c.p;
                    b.degrees.tp = t, b.degrees.dp = d.dp * (tp / t);
                    r.candidates.push_back(
                        {"tp " + str(tp) + " -> " + str(t) + ", dp " + str(d.dp) + " -> " + str(b.degrees.dp),
                         b});
                    break;
                }
            return r;
        }
        deployments *= dp, unit = tp, dp = 1, ranksSplit = true;
    }
    if (c.moe && deployments > 1 && unit * d.pp > c.gpn && (unit * d.pp) % c.gpn != 0) {
        // Deployments that end mid-host do not pack: each starts on a host of its own, and the cluster
        // runs out of hosts. The nearest expert-parallel degrees whose deployments fill whole hosts.
        Refusal r;
        r.reason = "vLLM's expert group spans a whole deployment, and deployments of " +
                   count(int64_t(unit) * d.pp, "GPU") + " (ep " + str(d.ep) + " x etp " + str(d.etp) +
                   " over tp " + str(tp) + ") do not fill whole hosts of " + str(c.gpn);
        auto packs = [&](int e) {
            if (e < 1 || e == d.ep || stage % (e * d.etp) != 0 || c.m.moe.experts % e != 0) return false;
            const int u = std::lcm(e * d.etp, tp) * d.pp;
            return u <= c.gpn ? c.gpn % u == 0 : u % c.gpn == 0;
        };
        auto offer = [&](int e) {
            Plan b = c.p;
            b.degrees.ep = e, b.degrees.edp = stage / (e * d.etp);
            r.candidates.push_back(
                {"ep " + str(d.ep) + " -> " + str(e) + ", edp " + str(d.edp) + " -> " + str(b.degrees.edp),
                 b});
        };
        for (int e : {d.ep * 2, d.ep / 2, d.ep * 3, d.ep / 3, d.ep * 4, d.ep / 4})
            if (packs(e)) offer(e);
        for (int e = 1; e <= stage && r.candidates.empty(); ++e)
            if (packs(e)) offer(e);
        return r;
    }
    if (configNamesCustomCode(c.m)) lc.argv.push_back("--trust-remote-code");
    add(lc.argv, "--tensor-parallel-size", tp);
    if (d.pp > 1) add(lc.argv, "--pipeline-parallel-size", d.pp);
    if (dp > 1) add(lc.argv, "--data-parallel-size", dp);
    if (c.tpIsData)
        n.push_back("The plan's tp " + str(d.tp) +
                    " splits no weights (every operator runs whole on each GPU's own tokens or sequences): "
                    "that is data parallelism, so vLLM runs tensor parallel 1 with one DP rank per GPU.");
    else if (c.attnBatch && d.tp > 1)
        n.push_back("Attention by batch inside tp " + str(d.tp) +
                    " (data-parallel attention) is not expressible in vLLM, which shards attention by head "
                    "over its tensor-parallel group (SGLang's --enable-dp-attention is).");
    if (ranksSplit)
        n.push_back("Deployments: this is one of " + str(deployments) + " identical deployments of " +
                    count(int64_t(unit) * d.pp, "GPU") + ", one per replica (dp " + str(d.dp * d.tp / tp) +
                    "): vLLM " + c.version.version +
                    " places each data-parallel rank on one host, and these span several. Put them behind "
                    "a load balancer.");
    else if (deployments > 1)
        n.push_back("Deployments: this is one of " + str(deployments) + " identical deployments of " +
                    count(int64_t(unit) * d.pp, "GPU") + ", one per expert replica (edp " + str(d.edp) +
                    "): vLLM's expert group spans a whole deployment. Put them behind a load balancer.");

    // Nodes: a DP rank is tp*pp GPUs (TP innermost, then PP).
    const int rankGpus = tp * d.pp, deploymentGpus = unit * d.pp;
    const int nodes = int(ceilDiv(deploymentGpus, c.gpn));
    const std::string each = deployments > 1 ? " of each deployment" : "";
    // rank -> the extra arguments of node `rank`'s command; empty for one node.
    std::function<std::vector<std::vector<std::string>>(int)> perNode;
    auto rayNodes = [&] {
        // A Ray cluster over the nodes; the command runs on the head node (vLLM waits for the placement
        // group's GPUs, so the other nodes may join after it starts).
        perNode = [this_argv = &lc.argv](int rank) {
            if (rank > 0)
                return std::vector<std::vector<std::string>>{
                    {"ray", "start", "--address", "${HEAD_NODE_IP}:6379", "--block"}};
            return std::vector<std::vector<std::string>>{{"ray", "start", "--head", "--port", "6379"},
                                                         *this_argv};
        };
    };
    if (deploymentGpus > c.gpn) {
        if (rankGpus <= c.gpn && dp > 1) {
            if (c.gpn % rankGpus == 0) {
                const int local = c.gpn / rankGpus;
                add(lc.argv, "--data-parallel-size-local", local);
                add(lc.argv, "--data-parallel-address", "${HEAD_NODE_IP}");
                add(lc.argv, "--data-parallel-rpc-port", 13345);
                n.push_back("Nodes: this is the head node's command (it serves the API) for " + str(nodes) +
                            " nodes of " + count(local, "DP rank") + " each; on node K = 1.." +
                            str(nodes - 1) + " run it with --headless --data-parallel-start-rank K*" +
                            str(local) + " added. Set HEAD_NODE_IP to the address of the head node" + each +
                            ".");
                perNode = [&lc, local](int rank) {
                    auto a = lc.argv;
                    if (rank > 0) {
                        a.push_back("--headless");
                        add(a, "--data-parallel-start-rank", int64_t(rank) * local);
                    }
                    return std::vector<std::vector<std::string>>{a};
                };
            } else {
                n.push_back("Nodes: DP ranks of " + str(rankGpus) +
                            " GPUs do not pack evenly into nodes of " + str(c.gpn) +
                            "; place them by hand with --data-parallel-size-local and "
                            "--data-parallel-start-rank on each node (the scripts start node 0 only).");
                perNode = [&lc](int rank) {
                    return rank == 0 ? std::vector<std::vector<std::string>>{lc.argv}
                                     : std::vector<std::vector<std::string>>{};
                };
            }
        } else if (dp == 1 && c.version.nnodes) {
            // vllm/config/parallel.py (ParallelConfig.__post_init__): with nnodes > 1 the multiprocessing
            // backend runs one replica over several hosts; Ray may not be combined with nnodes > 1.
            add(lc.argv, "--nnodes", nodes);
            add(lc.argv, "--node-rank", "${NODE_RANK}");
            add(lc.argv, "--master-addr", "${HEAD_NODE_IP}");
            n.push_back("Nodes: the replica spans " + str(nodes) +
                        " nodes; run this on each with NODE_RANK 0.." + str(nodes - 1) +
                        " and HEAD_NODE_IP set to the address of node 0" + each +
                        ", adding --headless on nodes 1.." + str(nodes - 1) + " (node 0 serves the API).");
            perNode = [&lc](int rank) {
                auto a = lc.argv;
                if (rank > 0) a.push_back("--headless");
                return std::vector<std::vector<std::string>>{a};
            };
        } else {
            // A replica (world size tp x pp) larger than the host runs on Ray. ParallelConfig.__post_init__
            // of the newer row refuses the default multiprocessing backend ("World size ... is larger than
            // the number of available GPUs ... set '--distributed-executor-backend ray'") before it looks at
            // --data-parallel-backend; 0.10.2's selects Ray itself when Ray is installed. The flag is
            // written for both, so the command says what runs.
            add(lc.argv, "--distributed-executor-backend", "ray");
            if (dp > 1) add(lc.argv, "--data-parallel-backend", "ray");
            n.push_back(
                std::string("Nodes: ") +
                (dp > 1 ? "each DP rank (" + str(rankGpus) + " GPUs) spans several nodes; "
                        : "the replica spans " + str(nodes) + " nodes; ") +
                "vLLM " + c.version.version + " runs it with Ray: start a Ray cluster over the " +
                str(nodes) + " nodes" + each +
                " (ray start --head on node 0, ray start --address on the "
                "others)" +
                (dp > 1 && c.version.rayDpPackStrategy ? ", set VLLM_RAY_DP_PACK_STRATEGY=span" : "") +
                " and run this once, on node 0; it waits for the nodes' GPUs to join.");
            rayNodes();
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
            if (rocm)
                n.push_back("The cost model prices expert dispatch and combine as all-to-alls; vLLM's DeepEP "
                            "backends need NVIDIA Hopper GPUs (deepseek-ai/DeepEP README), so on ROCm the "
                            "default all-gather dispatch stays.");
            else if (c.version.all2allFlag)
                n.push_back(
                    "The cost model prices expert dispatch and combine as all-to-alls; vLLM's default "
                    "--all2all-backend (allgather_reducescatter) moves more data. deepep_low_latency "
                    "(decode) or deepep_high_throughput (prefill) match the plan; they need DeepEP "
                    "installed.");
            else
                // The flag came with vllm-project/vllm #26732 (commit 3e051bda82ef, 2025-10-13, first in 0.11.1);
                // #33535 (commit b95cc5014dc7, 2026-02-03) removed the variable from vllm/envs.py, absent on the
                // v0.16.0 release branch (commit 2d5be1dd5ce2).
                n.push_back("The cost model prices expert dispatch and combine as all-to-alls; vLLM " +
                            c.version.version +
                            "'s default VLLM_ALL2ALL_BACKEND=naive (vllm/envs.py) dispatches by all-reduce. "
                            "VLLM_ALL2ALL_BACKEND=deepep_low_latency (decode) or deepep_high_throughput "
                            "(prefill) match the plan; they need DeepEP installed. (From vLLM 0.11.1 the "
                            "flag --all2all-backend takes these values; 0.16.0 removed the variable.)");
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
        add(lc.argv, "--max-num-seqs", perRank);
        n.push_back("Batch: " + str(c.batch) + " sequences per replica (" + c.batchSource + ")" +
                    (d.pp > 1 ? " in each of " + str(d.pp) + " micro-batches" : std::string()) +
                    (d.tp / tp > 1 ? ", spread over its " + str(d.tp / tp) + " GPUs" : std::string()) +
                    "; vLLM applies --max-num-seqs per DP rank.");
    } else {
        n.push_back("Batch: the cost model found no feasible batch, so --max-num-seqs is left to vLLM.");
    }
    add(lc.argv, "--max-model-len", c.contextLength);
    // The prefill token budget: the plan states none, so vLLM's default applies (EngineArgs
    // get_batch_defaults, vllm/engine/arg_utils.py: `vllm serve` on a GPU of 70 GiB or more other than an
    // A100 takes 8192 tokens per step, else 2048); longer prompts are chunked.
    {
        const bool big = c.s.cluster.gpu.hbmGB * 1e9 >= 70.0 * (1ull << 30) &&
                         lower(c.s.cluster.gpu.name).find("a100") == std::string::npos;
        const int64_t budget = big ? 8192 : 2048;
        if (c.s.workload.inputTokens > budget)
            n.push_back("Prefill: vLLM's default --max-num-batched-tokens on " + c.s.cluster.gpu.name +
                        " is " + str(budget) + " tokens per step, so each " + str(c.s.workload.inputTokens) +
                        "-token prompt is prefilled in " + str(ceilDiv(c.s.workload.inputTokens, budget)) +
                        " chunks (the cost model prices one pass).");
    }
    if (!c.contextNote.empty()) n.push_back(c.contextNote);
    dtypeFlags(c, "vLLM", lc);
    if (c.m.kvCache == Dtype::FP8) add(lc.argv, "--kv-cache-dtype", "fp8");
    // The fraction the cost model sized the KV pool with (vLLM's rule, launch.cpp's scenario for the engine).
    add(lc.argv, "--gpu-memory-utilization", fraction(memoryFraction(c.s, c.p, MemoryRule::Vllm).value));
    if (c.p.spec.on()) {
        // --speculative-config (the rows' citations): the method as the release spells it, the draft or
        // head's Hub id, K; n-gram matches the last 2 to 4 prompt tokens (prompt_lookup_min <=
        // prompt_lookup_max, both at least 1). nlohmann::json escapes the strings, and the JSON is one
        // argument like any other (shellQuote).
        const Speculative& sp = c.p.spec;
        nlohmann::ordered_json j;
        j["method"] = c.version.specMethodName(sp.method, c.m.architecture);
        if (const std::string draft = specDraftModel(c); !draft.empty()) j["model"] = draft;
        j["num_speculative_tokens"] = sp.draftTokens;
        if (sp.method == SpecMethod::Ngram) j["prompt_lookup_max"] = 4, j["prompt_lookup_min"] = 2;
        add(lc.argv, "--speculative-config", j.dump());
        specNote(c, "vLLM", "--speculative-config " + j.dump(), lc);
        if (sp.method == SpecMethod::Mtp && sp.draftTokens > 1)
            n.push_back("MTP with K = " + str(sp.draftTokens) + ": vLLM runs the model's one MTP module " +
                        str(sp.draftTokens) + " times per step, as the cost model prices it.");
    }

    const auto diffs = operatorDifferences(c, "vLLM", [tp](Op) { return tp; });
    if (!diffs.empty())
        n.push_back("Operator choices vLLM's fixed scheme does not take (tp " + str(tp) +
                    "): " + joined(diffs, "; ") + ".");
    // AMD GPUs: AITER (VLLM_ROCM_USE_AITER=1); its MLA attention needs KV blocks of 1 token
    // (vllm/platforms/rocm.py get_attn_backend_cls at v0.10.2, cited at the rows).
    if (rocm && c.m.attention.type == AttentionType::MLA) add(lc.argv, "--block-size", 1);
    meshNote(c, "vLLM", {Axis::TP, Axis::PP, Axis::DP}, c.tpIsData, deploymentGpus, lc);
    addCommonNotes(c, "vLLM", lc, "--max-num-seqs", "VLLM_PP_LAYER_PARTITION");
    if (perNode)
        placeNodes(lc, deployments, deploymentGpus, c.gpn, perNode);
    else
        placeNodes(lc, deployments, deploymentGpus, c.gpn,
                   [&lc](int) { return std::vector<std::vector<std::string>>{lc.argv}; });
    // Every node's environment: vLLM's Ray workers are started by `ray start` on each node and inherit it.
    setLayerPartition(c, "VLLM_PP_LAYER_PARTITION", lc);
    rocmSetup(
        c, "vLLM",
        c.m.attention.type == AttentionType::MLA
            ? "With AITER on, vLLM's V1 engine attends with AITER's MLA kernels, which take KV blocks of "
              "one token only, hence --block-size 1"
            : "With AITER on, vLLM's V1 engine attends with AITER's flash attention on these gfx9 GPUs "
              "(its Triton attention backend without it)",
        lc);
    return lc;
}

} // namespace sp::exporting
