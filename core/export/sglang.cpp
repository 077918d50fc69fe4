// SGLang, `python3 -m sglang.launch_server`: its version table and the plan as its flags.
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
// These are main's. The 0.4.9 row (sglangVersions) was read at that release's commit: where it differs (no
// --moe-a2a-backend or --moe-dp-size, experts expert-parallel over the whole tp-size or not at all, its own
// chunked-prefill table and KV dtypes), the row's fields steer the flags and notes.
#include "core/export/common.h"

#include <algorithm>
#include <numeric>

namespace sp::exporting {

const std::vector<EngineVersion>& sglangVersions() {
    static const std::vector<EngineVersion> rows = [] {
        // SGLang 0.4.9: sgl-project/sglang commit ec5f9c6269c18e88cd3141be56369cbd23cf4d64 ("chore: bump
        // v0.4.9 (#7802)", 2025-07-05; its python/sglang/version.py says "0.4.9"), read in the fork
        // ikingye/sglang, which holds main's history:
        //  - python/sglang/srt/server_args.py, add_cli_args: --tp-size, --dp-size, --pp-size, --ep-size
        //    (--expert-parallel-size), --enable-ep-moe, --enable-deepep-moe, --enable-dp-attention,
        //    --enable-dp-lm-head, --moe-dense-tp-size, --max-running-requests, --context-length,
        //    --kv-cache-dtype {auto, fp8_e5m2, fp8_e4m3}, --quantization, --dtype, --mem-fraction-static,
        //    --nnodes, --node-rank, --dist-init-addr, --port, --disaggregation-mode; no --moe-a2a-backend,
        //    no --moe-dp-size;
        //  - ServerArgs.__post_init__: --enable-ep-moe and --enable-deepep-moe set ep_size = tp_size;
        //    DP attention asserts dp_size > 1 and tp_size % dp_size == 0; --enable-dp-lm-head asserts DP
        //    attention; moe_dense_tp_size in {1, None}; the default --chunked-prefill-size is 2048 below
        //    35 GiB of GPU memory, 8192 below 160 GiB, 16384 above; check_server_args: (tp x pp) % nnodes
        //    == 0, "multi-node data parallel is not supported unless dp attention";
        //  - python/sglang/srt/layers/moe/ep_moe/layer.py get_moe_impl_class: DeepEPMoE, else EPMoE with
        //    --enable-ep-moe (experts divided over the whole tp_size, num_experts % tp_size == 0), else
        //    FusedMoE, which shards every expert over tp_size: --ep-size alone only sizes the expert
        //    location map (python/sglang/srt/eplb/expert_location.py);
        //  - python/sglang/srt/managers/tp_worker.py: --max-running-requests divided by dp_size under DP
        //    attention.
        EngineVersion old;
        old.engine = ServingEngine::Sglang;
        old.version = "0.4.9";
        old.source =
            "python/sglang/srt/server_args.py and layers/moe/ep_moe/layer.py at commit ec5f9c6269c1 "
            "(version.py 0.4.9): --tp-size, --dp-size, --pp-size, --ep-size, --enable-dp-attention, "
            "--enable-dp-lm-head, --moe-dense-tp-size, --enable-deepep-moe (no --moe-a2a-backend, no "
            "--moe-dp-size); experts expert-parallel over the whole tp-size or not at all";
        old.moeA2aBackend = false;
        old.moeDpSize = false;
        old.partialExpertParallel = false;
        old.defaultMemoryFraction = 0; // derived from the GPU's memory and the parallel sizes
        old.chunkedPrefill = {{35, 2048}, {160, 8192}, {0, 16384}};
        old.kvCacheDtypes = {"auto", "fp8_e5m2", "fp8_e4m3"};
        // python/sglang/srt/models/registry.py import_model_classes: every module of sglang.srt.models with
        // an EntryClass; at ec5f9c6269c1 no gpt_oss.py, qwen3_next.py, glm4_moe.py or minimax_m2.py, and
        // deepseek_v2.py's EntryClass has no DeepseekV32ForCausalLM. The Transformers fallback
        // (model_loader/utils.py resolve_transformers_arch) needs the class in transformers, pinned at 4.53.0
        // in python/pyproject.toml, which has none of them either.
        old.architectures = {
            "LlamaForCausalLM",    "MistralForCausalLM",    "Qwen2ForCausalLM",
            "Qwen3ForCausalLM",    "MixtralForCausalLM",    "Qwen2MoeForCausalLM",
            "Qwen3MoeForCausalLM", "DeepseekV3ForCausalLM", "Llama4ForConditionalGeneration"};
        old.architecturesSource = "python/sglang/srt/models/*.py EntryClass at commit ec5f9c6269c1";
        old.flags = {"--model-path",
                     "--tp-size",
                     "--dp-size",
                     "--pp-size",
                     "--ep-size",
                     "--enable-dp-attention",
                     "--enable-dp-lm-head",
                     "--moe-dense-tp-size",
                     "--max-running-requests",
                     "--context-length",
                     "--kv-cache-dtype",
                     "--quantization",
                     "--dtype",
                     "--mem-fraction-static",
                     "--nnodes",
                     "--node-rank",
                     "--dist-init-addr",
                     "--port",
                     "--enable-deepep-moe"};
        // ROCm at 0.4.9 (ec5f9c6269c1): docs/references/amd.md (Docker recommended, built from
        // docker/Dockerfile.rocm, whose build line tags it v0.4.9-rocm630; it builds AITER for gfx942 only
        // and sets HSA_NO_SCRATCH_RECLAIM=1); python/sglang/srt/model_executor/model_runner.py picks the
        // attention backend on HIP: aiter for MHA models, for MLA aiter when the KV heads per GPU are 16 or
        // 128, else triton. --enable-ep-moe (EPMoE over the whole tp-size) replaces DeepEP there.
        old.rocmImage = "lmsysorg/sglang:v0.4.9-rocm630 (built for gfx942: MI300X, MI325X)";
        old.rocmEnv = {{"HSA_NO_SCRATCH_RECLAIM", "1"}};
        old.rocmSource = "docker/Dockerfile.rocm, docs/references/amd.md and model_runner.py at ec5f9c6269c1";
        old.flags.insert(old.flags.end() - 1, "--enable-ep-moe");
        // --trust-remote-code: server_args.py add_cli_args at ec5f9c6269c1 and at 7ae368efde14.
        old.flags.insert(old.flags.end() - 1, "--trust-remote-code");
        old.constraints = {
            "check_server_args: tp x pp divides by --nnodes; multi-node data parallel only with DP attention",
            "DP attention: --dp-size > 1 and --tp-size divides by it (attention TP = tp / dp divides the "
            "heads)",
            "get_moe_impl_class: experts run expert-parallel over the whole tp-size (--enable-ep-moe, "
            "--enable-deepep-moe: ep_size = tp_size, experts % tp_size == 0) or tensor-parallel; "
            "--ep-size below tp-size shards nothing",
            "--enable-dp-lm-head needs --enable-dp-attention; --moe-dense-tp-size is 1 or unset",
            "--kv-cache-dtype in {auto, fp8_e5m2, fp8_e4m3}",
            "--context-length <= the model's max_position_embeddings"};
        EngineVersion now = old;
        now.version = "0.5.6";
        now.source = "python/sglang/srt/server_args.py of main (read at commit 001067fffe33): "
                     "--moe-a2a-backend replaces --enable-deepep-moe; --moe-dp-size with the asserts of "
                     "ServerArgs._handle_context_parallelism";
        now.moeA2aBackend = true;
        now.moeDpSize = true;
        now.partialExpertParallel = true;
        // python/sglang/srt/distributed/utils.py get_pp_indices at 0.5.6 (commit 7ae368efde14, "chore: bump
        // SGLang version to 0.5.6", read in ikingye/sglang): the extra layers one each on the last stages.
        now.ppExtraOnLastStages = true;
        // server_args.py _handle_gpu_memory_settings at commit 001067fffe33.
        now.chunkedPrefill = {{35, 2048}, {60, 4096}, {160, 8192}, {0, 16384}};
        // server_args.py at 0.5.6 (commit 7ae368efde14): _handle_model_specific_adjustments (L938-1025) picks
        // attention_backend "trtllm_mla" for DeepseekV3ForCausalLM (not V3.2) when is_sm100_supported() and no
        // attention backend is given; _handle_attention_backend_compatibility (L1366-1384) then sets page_size
        // to 64 unless it is 32 or 64; _handle_data_parallelism (L1491-1503) divides chunked_prefill_size by
        // dp_size under DP attention; check_server_args (L4017-4023, run by engine.py after all of them)
        // asserts "chunked_prefill_size must be divisible by page_size". The same at main 001067fffe33.
        now.sm100MlaPageSize = 64;
        // _handle_speculative_decoding (L1661-1719 at 7ae368efde14): for EAGLE (NEXTN) on these the draft
        // path defaults to the model path; a given one only warns.
        now.mtpDraftImplicit = {"DeepseekV32ForCausalLM", "DeepseekV3ForCausalLM", "Glm4MoeForCausalLM",
                                "BailingMoeForCausalLM", "BailingMoeV2ForCausalLM"};
        now.kvCacheDtypes.clear();
        // The EntryClass of python/sglang/srt/models/*.py at 0.5.6 (commit 7ae368efde14): every architecture
        // shardplan imports (deepseek_v2.py adds DeepseekV32ForCausalLM; gpt_oss.py, qwen3_next.py,
        // glm4_moe.py and minimax_m2.py are there).
        now.architectures = {
            "LlamaForCausalLM",       "MistralForCausalLM",    "Qwen2ForCausalLM",
            "Qwen3ForCausalLM",       "MixtralForCausalLM",    "Qwen2MoeForCausalLM",
            "Qwen3MoeForCausalLM",    "DeepseekV3ForCausalLM", "Llama4ForConditionalGeneration",
            "DeepseekV32ForCausalLM", "GptOssForCausalLM",     "Glm4MoeForCausalLM",
            "MiniMaxM2ForCausalLM",   "Qwen3NextForCausalLM"};
        now.architecturesSource = "python/sglang/srt/models/*.py EntryClass at commit 7ae368efde14";
        now.flags.back() = "--moe-a2a-backend";
        std::erase(now.flags, "--enable-ep-moe"); // not in 0.5.6's parser
        // ROCm at 0.5.6 (7ae368efde14): docs/platforms/amd_gpu.md (Docker images lmsysorg/sglang built from
        // docker/rocm.Dockerfile, whose build lines tag v0.5.6-rocm700-mi30x for gfx942 and
        // v0.5.6-rocm700-mi35x for gfx950; it sets SGLANG_USE_AITER=1 and HSA_NO_SCRATCH_RECLAIM=1);
        // server_args.py picks the attention backend on HIP as 0.4.9's model_runner.py did.
        now.rocmImage =
            "lmsysorg/sglang:v0.5.6-rocm700-mi30x (MI300X, MI325X) or v0.5.6-rocm700-mi35x (MI355X)";
        now.rocmEnv = {{"HSA_NO_SCRATCH_RECLAIM", "1"}, {"SGLANG_USE_AITER", "1"}};
        now.rocmSource =
            "docker/rocm.Dockerfile, docs/platforms/amd_gpu.md and server_args.py at 7ae368efde14";
        now.flags.push_back("--moe-dp-size");
        // Disaggregated serving (core/export/disagg_launch.cpp): ServerArgs._handle_load_balance_method and
        // DISAGG_TRANSFER_BACKEND_CHOICES at the same commit.
        now.flags.push_back("--disaggregation-mode");
        now.flags.push_back("--disaggregation-transfer-backend");
        now.flags.push_back(
            "--disaggregation-bootstrap-port"); // disaggregation_bootstrap_port, at 7ae368efde14
        now.flags.push_back("--host");          // host (default 127.0.0.1), at 7ae368efde14
        // The experts over the expert-parallel size, read at 0.5.6 (commit 7ae368efde14):
        //  - python/sglang/srt/layers/moe/fused_moe_triton/layer.py, FusedMoE.__init__: `assert
        //    (num_experts - num_fused_shared_experts) % self.moe_ep_size == 0` (DeepEPMoE in
        //    layers/moe/ep_moe/layer.py is a FusedMoE, so DeepEP's ep_size = tp_size too);
        //  - server_args.py: --ep-num-redundant-experts (ep_num_redundant_experts, default 0), and
        //    python/sglang/srt/eplb/expert_location.py _init_common: num_physical_experts = logical experts +
        //    ep_num_redundant_experts, `assert num_physical_experts % ep_size == 0` (init_trivial maps
        //    physical expert i to logical i % experts, so the extra slots copy the first experts);
        //  - the model files that add ep_num_redundant_experts to the experts FusedMoE gets: models/
        //    deepseek_v2.py (DeepseekV3ForCausalLM, DeepseekV32ForCausalLM), qwen3_moe.py, qwen2_moe.py (its
        //    Qwen2MoeSparseMoeBlock, which models/qwen3_next.py uses), gpt_oss.py, glm4_moe.py,
        //    minimax_m2.py; mixtral.py does not (its FusedMoE gets config.num_local_experts).
        now.evenExperts = true;
        now.redundantExpertArchitectures = {
            "DeepseekV3ForCausalLM", "DeepseekV32ForCausalLM", "Qwen3MoeForCausalLM", "Qwen2MoeForCausalLM",
            "Qwen3NextForCausalLM",  "GptOssForCausalLM",      "Glm4MoeForCausalLM",  "MiniMaxM2ForCausalLM"};
        now.flags.push_back("--ep-num-redundant-experts");
        now.flags.push_back("--chunked-prefill-size"); // add_cli_args at 7ae368efde14 and 001067fffe33
        now.constraints = {
            old.constraints[0], old.constraints[1],
            "--ep-size divides --tp-size; --moe-a2a-backend deepep sets ep_size = tp_size",
            "FusedMoE: (experts + --ep-num-redundant-experts) % ep_size == 0; the redundant slots only for "
            "models whose code reads them",
            old.constraints[3], old.constraints[5],
            // Read first-hand: ServerArgs._handle_context_parallelism, python/sglang/srt/server_args.py at
            // commit 001067fffe33427bee0ed2f007fb7551a1d76b44 (the index's stored version of the file).
            "_handle_context_parallelism: attn_cp_size > 1 needs tp_size % attn_cp_size == 0 and "
            "tp_size % (dp_size x attn_cp_size) == 0; moe_dp_size > 1 needs tp_size % moe_dp_size == 0, "
            "ep_size x moe_dp_size <= tp_size, pp_size == 1 and, when ep_size > 1, ep_size x moe_dp_size "
            "== tp_size; attn_cp_size != moe_dp_size only with moe_dp_size == 1"};
        // Speculative decoding, server_args.py add_cli_args: --speculative-algorithm, --speculative-draft-
        // model-path, --speculative-num-steps (the draft passes per step), --speculative-eagle-topk
        // (branching per pass: 1 is the chain of K the cost model prices), --speculative-num-draft-tokens
        // (the verify width; with topk 1 ServerArgs sets it to num_steps + 1 whatever is given,
        // "speculative_num_draft_ tokens is adjusted to speculative_num_steps + 1 when speculative_eagle_topk
        // == 1"); NEXTN is an alias of EAGLE, which runs a model's MTP (NextN) module from the draft path;
        // for MTP the export names the target's own checkpoint, which holds the module (what ServerArgs fills
        // in for DeepSeek-V3 when no path is given; earlier launches named a separate
        // SGLang/DeepSeek-V3-NextN export of it). The flags read in server_args.py at commit 001067fffe33
        // (the 0.5.6 row's; its --speculative-algorithm help: "Builtins: EAGLE, EAGLE3, NEXTN, STANDALONE,
        // NGRAM, ..."), the num_steps + 1 rule and the DeepSeek-V3 draft path in ServerArgs.__post_init__ of
        // 2025 copies of the file.
        //  - 0.4.9: --speculative-algorithm choices ["EAGLE", "EAGLE3", "NEXTN"] (add_cli_args in 2025 copies
        //    of server_args.py; not readable at ec5f9c6269c1 here): STANDALONE (a separate draft model) came
        //    after it (requested in sgl-project/sglang issue #9785, 2025-08-29), NGRAM later still; the MTP
        //    module of models/deepseek_nextn.py (DeepseekV3ForCausalLMNextN) only.
        //  - 0.5.6: adds STANDALONE and NGRAM ("CUDA-only, no DP attention": docs
        //    advanced_features/speculative_decoding.md); the NextN/MTP modules of models/deepseek_nextn.py,
        //    glm4_moe_nextn.py and qwen3_next_mtp.py (seen at later commits d737979cbd17 and bd998a2c1032,
        //    not read at 7ae368efde14; taken to be there with the glm4_moe.py and qwen3_next.py the row
        //    reads).
        //  - both: speculative decoding and pipeline parallelism are mutually exclusive ("server_args.py
        //    asserts", sgl-project/sglang pull request #30775 of 2026-07-10, which lifts it behind
        //    SGLANG_ENABLE_PP_SPEC).
        old.specPipelineSource = now.specPipelineSource = "server_args.py asserts it (pull request #30775)";
        const std::vector<std::string> specFlags = {
            "--speculative-algorithm", "--speculative-draft-model-path", "--speculative-num-steps",
            "--speculative-eagle-topk", "--speculative-num-draft-tokens"};
        old.mtpArchitectures = {{"DeepseekV3ForCausalLM", "EAGLE"}};
        old.eagle3 = true, old.draftModel = false, old.ngram = false, old.specNoPipeline = true;
        old.specSource = "--speculative-algorithm {EAGLE, EAGLE3, NEXTN} (server_args.py before STANDALONE)";
        now.mtpArchitectures = {{"DeepseekV3ForCausalLM", "EAGLE"},
                                {"Glm4MoeForCausalLM", "EAGLE"},
                                {"Qwen3NextForCausalLM", "EAGLE"}};
        now.eagle3 = true, now.draftModel = true, now.ngram = true, now.specNoPipeline = true;
        now.specSource = "--speculative-algorithm EAGLE, EAGLE3, NEXTN, STANDALONE, NGRAM (server_args.py at "
                         "001067fffe33)";
        for (EngineVersion* v : {&old, &now})
            v->flags.insert(v->flags.end(), specFlags.begin(), specFlags.end());
        return std::vector<EngineVersion>{old, now};
    }();
    return rows;
}

EngineResult sglangCommand(const Ctx& c) {
    LaunchCommand lc;
    lc.engine = ServingEngine::Sglang;
    lc.argv = {"python3", "-m", "sglang.launch_server", "--model-path", c.model};
    auto& n = lc.notes;
    const bool rocm = amdGpu(c.s.cluster.gpu); // the ROCm build (rocmSetup, at the end)
    const Degrees& d = c.d;
    const int stage = d.dp * d.tp;
    // Attention's tensor-parallel group: 1 when attention runs by batch (or nothing splits over tp).
    const int attnTp = c.tpIsData || c.attnBatch ? 1 : d.tp;
    if (auto r = headsRefusal(c, attnTp, "SGLang", true)) return *r;
    if (auto r = specRefusal(c, "SGLang")) return *r;
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
    if (c.p.spec.on() && c.p.spec.method == SpecMethod::Ngram && dpAttn)
        return specOff(c,
                       "SGLang's NGRAM drafting does not run with DP attention (docs advanced_features/"
                       "speculative_decoding.md, its method table)",
                       false);

    if (configNamesCustomCode(c.m)) lc.argv.push_back("--trust-remote-code");
    add(lc.argv, "--tp-size", unit);
    if (dpSize > 1 && (dpAttn || combined)) add(lc.argv, "--dp-size", dpSize);
    if (d.pp > 1) add(lc.argv, "--pp-size", d.pp);
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
        const bool evenExperts = c.m.moe.experts % unit == 0;
        if (!c.version.partialExpertParallel && (moeDp > 1 || (d.ep > 1 && (d.ep != unit || !evenExperts)))) {
            // Releases before --moe-dp-size and sub-tp-size EP (0.4.9: get_moe_impl_class in
            // python/sglang/srt/layers/moe/ep_moe/layer.py) run the experts of a server expert-parallel
            // over its whole tp-size (EPMoE, DeepEPMoE; ep_size = tp_size) or tensor-parallel over it
            // (FusedMoE); --ep-size alone only sizes the expert location map. The two layouts it runs.
            Refusal r;
            r.reason =
                "SGLang " + c.version.version +
                (moeDp > 1 ? " cannot hold " + str(moeDp) + " expert replicas inside one server of tp-size " +
                                 str(unit) + " (it has no --moe-dp-size)"
                 : d.ep != unit
                     ? " runs the experts expert-parallel over the whole tp-size " + str(unit) +
                           " or tensor-parallel over it, not ep " + str(d.ep) + " x etp " + str(d.etp)
                     : "'s expert-parallel MoE (EPMoE) divides the " + str(int64_t(c.m.moe.experts)) +
                           " experts evenly over tp-size " + str(unit) + ", and they do not divide");
            Plan a = c.p, b = c.p;
            a.degrees.ep = 1, a.degrees.etp = unit, a.degrees.edp = stage / unit;
            b.degrees.ep = unit, b.degrees.etp = 1, b.degrees.edp = stage / unit;
            auto what = [&](const Degrees& x) {
                return "ep " + str(d.ep) + " -> " + str(x.ep) + ", etp " + str(d.etp) + " -> " + str(x.etp) +
                       ", edp " + str(d.edp) + " -> " + str(x.edp);
            };
            r.candidates.push_back({what(a.degrees), a});
            // EPMoE and DeepEPMoE divide the experts evenly over the tp-size.
            if (evenExperts) r.candidates.push_back({what(b.degrees), b});
            return r;
        }
        if (moeDp > 1) {
            // The server's tp-size holds several expert replicas. python/sglang/srt/server_args.py,
            // ServerArgs._handle_context_parallelism (read at commit 001067fffe33) allows --moe-dp-size > 1
            // only with tp_size % moe_dp_size == 0, ep_size * moe_dp_size == tp_size when ep_size > 1,
            // pp_size == 1 and attention context parallelism of the same size (attn_cp_size ==
            // moe_dp_size), which is not the plan's attention: fold the replicas into the expert group
            // instead.
            Refusal r;
            r.reason = "SGLang " + c.version.version + " cannot hold " + str(moeDp) +
                       " expert replicas inside one server of tp-size " + str(unit) +
                       " (--moe-dp-size needs attention context parallelism of that size" +
                       (d.pp > 1 ? " and pp-size 1" : "") + ")";
            Plan a = c.p, b = c.p;
            a.degrees.etp *= moeDp, a.degrees.edp /= moeDp;
            b.degrees.ep *= moeDp, b.degrees.edp /= moeDp;
            r.candidates.push_back({"etp " + str(d.etp) + " -> " + str(a.degrees.etp) + ", edp " +
                                        str(d.edp) + " -> " + str(a.degrees.edp),
                                    a});
            r.candidates.push_back({"ep " + str(d.ep) + " -> " + str(b.degrees.ep) + ", edp " + str(d.edp) +
                                        " -> " + str(b.degrees.edp),
                                    b});
            return r;
        }
        // FusedMoE divides the experts evenly over ep_size (the rows' citations above): fill the gap with
        // redundant expert slots where the model's code takes them, which is what the cost model prices
        // (ceil(experts / ep) on the busiest GPU), else move to the nearest ep that divides them.
        int64_t redundant = 0;
        if (c.version.evenExperts && d.ep > 1 && c.m.moe.experts % d.ep != 0) {
            const auto& archs = c.version.redundantExpertArchitectures;
            if (std::find(archs.begin(), archs.end(), c.m.architecture) != archs.end()) {
                redundant = ceilDiv(c.m.moe.experts, d.ep) * d.ep - c.m.moe.experts;
            } else {
                Refusal r;
                r.reason = "SGLang " + c.version.version + "'s FusedMoE divides the " + str(c.m.moe.experts) +
                           " experts evenly over ep-size " + str(d.ep) + ", and they do not divide" +
                           (c.m.architecture.empty()
                                ? std::string(" (the model names no architecture, so no redundant experts)")
                                : " (" + c.m.architecture + "'s SGLang model takes no redundant experts)");
                // The nearest expert-parallel sizes below and above that divide the experts (and the stage),
                // expert TP kept, the replicas taking the rest.
                auto fits = [&](int e) {
                    return e >= 1 && c.m.moe.experts % e == 0 && stage % (e * d.etp) == 0;
                };
                for (int step : {-1, 1}) {
                    for (int e = d.ep + step; e >= 1 && e <= stage; e += step) {
                        if (!fits(e)) continue;
                        Plan b = c.p;
                        b.degrees.ep = e, b.degrees.edp = stage / (e * d.etp);
                        r.candidates.push_back({"ep " + str(d.ep) + " -> " + str(e) + ", edp " + str(d.edp) +
                                                    " -> " + str(b.degrees.edp),
                                                b});
                        break;
                    }
                }
                return r;
            }
        }
        if (d.ep > 1) add(lc.argv, "--ep-size", d.ep);
        if (redundant > 0) {
            add(lc.argv, "--ep-num-redundant-experts", redundant);
            n.push_back("Experts: " + str(c.m.moe.experts) + " experts do not divide over ep-size " +
                        str(d.ep) + ", so --ep-num-redundant-experts " + str(redundant) + " makes " +
                        str(c.m.moe.experts + redundant) + " expert slots, " +
                        str((c.m.moe.experts + redundant) / d.ep) +
                        " per GPU as the cost model prices them (SGLang's FusedMoE asserts an even split); "
                        "the extra slots copy the first experts, --enable-eplb rebalances them by load.");
        }
        if (d.ep > 1 && d.ep == unit && rocm) {
            // DeepEP needs NVIDIA Hopper GPUs (deepseek-ai/DeepEP README at 0297fc801788, "Requirements"):
            // on ROCm, 0.5.6's FusedMoE takes --ep-size itself; 0.4.9 runs EPMoE with --enable-ep-moe.
            if (!c.version.moeA2aBackend) lc.argv.push_back("--enable-ep-moe");
            n.push_back(
                std::string("Experts: DeepEP's all-to-all needs NVIDIA Hopper GPUs, so on ROCm ") +
                (c.version.moeA2aBackend ? "the experts run expert-parallel over --ep-size"
                                         : "--enable-ep-moe runs the experts expert-parallel") +
                " with SGLang's default gather dispatch instead of the all-to-all the cost model prices.");
        } else if (d.ep > 1 && d.ep == unit) {
            // --moe-a2a-backend deepep sets ep_size = tp_size; releases before it spelled it
            // --enable-deepep-moe.
            if (c.version.moeA2aBackend)
                add(lc.argv, "--moe-a2a-backend", "deepep");
            else
                lc.argv.push_back("--enable-deepep-moe");
            n.push_back(
                "Experts: " +
                std::string(c.version.moeA2aBackend ? "--moe-a2a-backend deepep" : "--enable-deepep-moe") +
                " gives the all-to-all dispatch the cost model prices (it needs DeepEP installed).");
        } else if (d.ep > 1) {
            n.push_back("Experts: SGLang's default dispatch (--moe-a2a-backend none) gathers tokens instead "
                        "of the plan's all-to-all; deepep would need ep = tp-size = " +
                        str(unit) + ".");
        }
        if (dpAttn && c.m.denseLayers() > 0) {
            const bool ffnSplit = d.tp > 1 && (splitsOverTp(Op::FfnUp, c.p.choice(Op::FfnUp)) ||
                                               splitsOverTp(Op::FfnDown, c.p.choice(Op::FfnDown)));
            if (!ffnSplit) add(lc.argv, "--moe-dense-tp-size", 1);
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
        add(lc.argv, "--nnodes", nodes);
        add(lc.argv, "--node-rank", "${NODE_RANK}");
        add(lc.argv, "--dist-init-addr", "${HEAD_NODE_IP}:5000");
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
        add(lc.argv, "--max-running-requests", cap);
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
    add(lc.argv, "--context-length", c.contextLength);
    if (!c.contextNote.empty()) n.push_back(c.contextNote);
    {
        // The prefill token budget: the plan states none, so SGLang's default --chunked-prefill-size applies,
        // by the GPU's memory in MiB (the version row's table: server_args.py _handle_gpu_memory_settings at
        // commit 001067fffe33, 2048 below 35 GiB, 4096 below 60, 8192 below 160 (H100, H200), 16384 above;
        // 0.4.9's ServerArgs.__post_init__ has no 4096 step).
        int64_t chunk = sglangDefaultChunk(c.version, c.s.cluster.gpu);
        bool chunkWritten = false;
        // DeepSeek-V3 on SM100 with DP attention: each DP worker's share (chunk / dp, floored) must divide by
        // the trtllm_mla page size, which the default does not for most DP sizes (16,384 / 6 = 2,730): the
        // largest multiple of page x dp at or below the default is written instead (SGLang divides it again).
        if (chunk > 0 && dpAttn && dpSize > 1 && c.version.sm100MlaPageSize > 0 &&
            c.m.architecture == "DeepseekV3ForCausalLM" && sm100Gpu(c.s.cluster.gpu) &&
            (chunk / dpSize) % c.version.sm100MlaPageSize != 0) {
            const int64_t unit = int64_t(c.version.sm100MlaPageSize) * dpSize;
            const int64_t fixed = std::max<int64_t>(unit, chunk / unit * unit);
            add(lc.argv, "--chunked-prefill-size", fixed);
            chunkWritten = true;
            n.push_back("Prefill: SGLang picks the trtllm_mla attention backend (KV pages of " +
                        str(c.version.sm100MlaPageSize) + " tokens) for DeepSeek-V3 on " + c.s.cluster.gpu.name +
                        " and divides --chunked-prefill-size by the " + str(dpSize) +
                        " DP-attention workers; its default " + str(chunk) + " would give " + str(chunk / dpSize) +
                        " tokens each, not a multiple of the page, which SGLang refuses at start-up, so " +
                        str(fixed) + " is written (" + str(fixed / dpSize) + " each).");
            chunk = fixed;
        }
        if (chunk > 0 && c.s.workload.inputTokens > chunk)
            n.push_back("Prefill: SGLang's " + std::string(chunkWritten ? "" : "default ") +
                        "--chunked-prefill-size on " + c.s.cluster.gpu.name + " is " + str(chunk) +
                        " tokens, so each " + str(c.s.workload.inputTokens) + "-token prompt is prefilled in " +
                        str(ceilDiv(c.s.workload.inputTokens, chunk)) + " chunks (the cost model prices one pass).");
    }
    dtypeFlags(c, "SGLang", lc);
    if (c.m.kvCache == Dtype::FP8) add(lc.argv, "--kv-cache-dtype", "fp8_e4m3");
    // The fraction the cost model sized the KV pool with: SGLang's own default for this launch unless the
    // scenario sets one (core/cost memoryFraction).
    const MemoryFraction mem = memoryFraction(c.s, c.p, MemoryRule::Sglang);
    if (mem.engineOwn != mem.value)
        n.push_back(
            "Memory: SGLang's own --mem-fraction-static for this launch would be " + fraction(mem.engineOwn) +
            " (ServerArgs._handle_gpu_memory_settings reserves cuda_graph_max_bs x dp x 4.5 MiB for DP "
            "attention), which cannot start; --mem-fraction-static " +
            fraction(mem.value) +
            " is its reserve without that term, the fraction the cost model sized the KV pool with. "
            "Lower it (constraints: engine: sglang, memory_fraction) if capturing CUDA graphs runs out "
            "of memory.");
    add(lc.argv, "--mem-fraction-static", fraction(mem.value));
    if (c.p.spec.on()) {
        // The rows' citations: EAGLE (MTP), EAGLE3 and STANDALONE draft K passes as a chain (topk 1) and
        // verify K + 1 tokens; NGRAM verifies --speculative-num-draft-tokens tokens from its n-gram cache,
        // the last accepted token first (python/sglang/srt/speculative/ngram_worker.py as stored at commit
        // 0037c142543f: the tree mask starts at position seq_len - 1), so K + 1 there too.
        const Speculative& sp = c.p.spec;
        const int k = sp.draftTokens;
        const std::vector<std::string>::size_type from = lc.argv.size();
        add(lc.argv, "--speculative-algorithm", c.version.specMethodName(sp.method, c.m.architecture));
        const bool implicit = sp.method == SpecMethod::Mtp &&
                              std::find(c.version.mtpDraftImplicit.begin(), c.version.mtpDraftImplicit.end(),
                                        c.m.architecture) != c.version.mtpDraftImplicit.end();
        const std::string draft = implicit ? std::string() : sp.method == SpecMethod::Mtp ? c.model : specDraftModel(c);
        if (!draft.empty()) add(lc.argv, "--speculative-draft-model-path", draft);
        if (sp.method != SpecMethod::Ngram) {
            add(lc.argv, "--speculative-num-steps", k);
            add(lc.argv, "--speculative-eagle-topk", 1);
        }
        add(lc.argv, "--speculative-num-draft-tokens", k + 1);
        specNote(c, "SGLang",
                 joined(std::vector<std::string>(lc.argv.begin() + long(from), lc.argv.end()), " "), lc);
        if (sp.method == SpecMethod::Ngram)
            n.push_back(
                "NGRAM drafts a tree out of its n-gram cache (SGLang's --speculative-ngram-* defaults), "
                "not the chain of K the cost model prices; the verify width is the same.");
    }
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
    placeNodes(lc, combined ? 1 : servers, serverGpus, c.gpn,
               [&lc](int) { return std::vector<std::vector<std::string>>{lc.argv}; });
    setLayerPartition(c, "SGLANG_PP_LAYER_PARTITION", lc);
    rocmSetup(c, "SGLang",
              "SGLang picks its attention backend on ROCm: aiter for MHA models; for MLA, aiter when the KV "
              "heads per GPU are 16 or 128, else triton",
              lc);
    return lc;
}

} // namespace sp::exporting
