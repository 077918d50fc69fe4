// SGLang's rules for a command read back (checkLaunch, check.cpp): the flags, the parallel sizes and the
// experts, and speculative decoding, beside sglang.cpp, whose version rows they read.
#include "core/export/check_impl.h"

#include "core/export/common.h"

namespace sp::checking {

using namespace exporting;

// SGLang: python/sglang/srt/server_args.py (the flags; check_server_args; _handle_context_parallelism
// for --moe-dp-size and the attention CP size, read at commit 001067fffe33427bee0ed2f007fb7551a1d76b44),
// and for 0.4.9 the same file and layers/moe/ep_moe/layer.py at commit ec5f9c6269c1.
void Checker::sglang(const ParsedCommand& c, const EngineVersion& ver) {
    const std::set<std::string> allowed(ver.flags.begin(), ver.flags.end());
    allowedFlags(c, allowed, "SGLang " + ver.version);
    const int64_t tp = c.integer("--tp-size", 1), pp = c.integer("--pp-size", 1),
                  dp = c.integer("--dp-size", 1);
    const int64_t ep = c.integer("--ep-size", 1), moeDp = c.integer("--moe-dp-size", 1);
    // --attention-context-parallel-size, alias --attn-cp-size (ParallelArgs at commit 001067fffe33).
    const int64_t nnodes = c.integer("--nnodes", 1),
                  cp = c.integer("--attention-context-parallel-size", c.integer("--attn-cp-size", 1));
    const bool dpAttn = c.has("--enable-dp-attention");
    if (dpAttn && dp <= 1) fail("SGLang: --enable-dp-attention needs --dp-size > 1");
    if (dpAttn && tp % dp != 0)
        fail("SGLang: --tp-size " + str(tp) + " does not divide by --dp-size " + str(dp));
    if (tp % ep != 0) fail("SGLang: --tp-size " + str(tp) + " does not divide by --ep-size " + str(ep));
    const bool deepep = (c.has("--moe-a2a-backend") && c.options.at("--moe-a2a-backend") == "deepep") ||
                        c.has("--enable-deepep-moe");
    if (deepep && ep != tp) fail("SGLang: DeepEP sets ep_size = tp_size, but --ep-size is " + str(ep));
    if (!ver.partialExpertParallel) {
        // 0.4.9's get_moe_impl_class (layers/moe/ep_moe/layer.py): EPMoE / DeepEPMoE over the whole
        // tp_size, dividing the experts evenly, or FusedMoE, which --ep-size does not shard.
        const bool epMoe = deepep || c.has("--enable-ep-moe");
        if (ep > 1 && !epMoe)
            fail("SGLang " + ver.version +
                 ": --ep-size without --enable-ep-moe or --enable-deepep-moe shards no experts");
        if (epMoe && s.model.moe.present() && s.model.moe.experts % tp != 0)
            fail("SGLang " + ver.version + ": the experts do not divide by the expert-parallel tp_size " +
                 str(tp));
    }
    // FusedMoE.__init__ (layers/moe/fused_moe_triton/layer.py at 0.5.6, commit 7ae368efde14): `assert
    // (num_experts - num_fused_shared_experts) % self.moe_ep_size == 0`, num_experts counting the
    // --ep-num-redundant-experts slots (eplb/expert_location.py _init_common asserts the same), which
    // only the models listed in the row add (their model files at that commit).
    const int64_t redundant = c.integer("--ep-num-redundant-experts", 0);
    if (ver.evenExperts && s.model.moe.present()) {
        const int64_t moeEp = deepep ? tp : ep;
        if (moeEp > 1 && (s.model.moe.experts + redundant) % moeEp != 0)
            fail("SGLang " + ver.version + ": FusedMoE asserts (experts + redundant) % ep_size == 0, and " +
                 str(s.model.moe.experts) + " + " + str(redundant) + " experts do not divide by " +
                 str(moeEp));
        const auto& archs = ver.redundantExpertArchitectures;
        if (redundant > 0 && std::find(archs.begin(), archs.end(), s.model.architecture) == archs.end())
            fail("SGLang " + ver.version + ": --ep-num-redundant-experts for " +
                 (s.model.architecture.empty() ? std::string("a model of unknown architecture")
                                               : s.model.architecture) +
                 ", whose model code does not add the slots");
    }
    // check_server_args: "chunked_prefill_size must be divisible by page_size", after DP attention divided
    // the size by dp_size and, for DeepSeek-V3 on SM100, trtllm_mla set the page to 64 (server_args.py at
    // 7ae368efde14, L1366-1384, L1491-1503, L4017-4023; sglang.cpp's row says where).
    if (ver.sm100MlaPageSize > 0 && dpAttn && s.model.architecture == "DeepseekV3ForCausalLM" &&
        sm100Gpu(s.cluster.gpu) &&
        !(c.has("--disaggregation-mode") && c.options.at("--disaggregation-mode") == "decode")) {
        const int64_t chunk = c.integer("--chunked-prefill-size", sglangDefaultChunk(ver, s.cluster.gpu));
        if (chunk > 0 && (chunk / dp) % ver.sm100MlaPageSize != 0)
            fail("SGLang " + ver.version + ": --chunked-prefill-size " + str(chunk) + " over " + str(dp) +
                 " DP-attention workers is " + str(chunk / dp) + " each, not a multiple of trtllm_mla's page of " +
                 str(ver.sm100MlaPageSize) + ": chunked_prefill_size must be divisible by page_size");
    }
    // ServerArgs._handle_context_parallelism (server_args.py at commit 001067fffe33).
    if (cp > 1) {
        if (tp % cp != 0) fail("SGLang: tp_size must be divisible by attn_cp_size");
        if (tp % (dp * cp) != 0) fail("SGLang: tp_size must be divisible by dp_size * attn_cp_size");
    }
    if (moeDp > 1) {
        if (tp % moeDp != 0) fail("SGLang: tp_size % moe_dp_size != 0");
        if (ep * moeDp > tp) fail("SGLang: ep_size * moe_dp_size > tp_size");
        if (pp != 1) fail("SGLang: moe_dp_size > 1 with pp_size > 1");
        if (ep > 1 && ep * moeDp != tp) fail("SGLang: ep_size * moe_dp_size != tp_size");
    }
    if (cp != moeDp && moeDp != 1) fail("SGLang: moe_dp_size > 1 without attn_cp_size == moe_dp_size");
    if (nnodes > 1 && dp > 1 && !dpAttn)
        fail("SGLang: multi-node data parallel is not supported unless dp attention (check_server_args)");
    if ((tp * pp) % nnodes != 0)
        fail("SGLang: tp_size x pp_size does not divide by --nnodes");
    else if (tp * pp / nnodes > (c.visibleGpus > 0 ? c.visibleGpus : gpn()))
        fail("SGLang: " + str(tp * pp / nnodes) + " GPUs per node, more than a node has");
    if (nnodes > 1 && (!c.has("--node-rank") || !c.has("--dist-init-addr")))
        fail("SGLang: --nnodes without --node-rank/--dist-init-addr");
    if (c.has("--moe-dense-tp-size") && c.integer("--moe-dense-tp-size", 1) != 1)
        fail("SGLang: --moe-dense-tp-size other than 1");
    if (c.has("--enable-dp-lm-head") && !dpAttn)
        fail("SGLang: --enable-dp-lm-head without --enable-dp-attention");
    kvCacheDtype(c, ver, "SGLang");
    if (s.model.attention.heads % (tp / (dpAttn ? dp : 1)) != 0)
        fail("SGLang: the attention heads do not divide by the attention TP size");
    context(c.integer("--context-length", 0), "--context-length");
    if (tp * pp * (dpAttn ? 1 : dp) > s.gpus()) fail("SGLang: more GPUs than the scenario's");
    sglangSpec(c, ver, pp, dpAttn);
}

// --speculative-algorithm and its sizes (sglang.cpp's rows): an algorithm of the release (NEXTN is
// EAGLE), no pipeline, a draft path for EAGLE3 and STANDALONE, num_draft_tokens = num_steps + 1 with topk
// 1 (what ServerArgs sets whatever is given), NGRAM without DP attention.
void Checker::sglangSpec(const ParsedCommand& c, const EngineVersion& ver, int64_t pp, bool dpAttn) {
    const std::string who = "SGLang " + ver.version;
    if (!c.has("--speculative-algorithm")) {
        for (const char* f : {"--speculative-draft-model-path", "--speculative-num-steps",
                              "--speculative-eagle-topk", "--speculative-num-draft-tokens"})
            if (c.has(f)) fail(who + ": " + f + " without --speculative-algorithm");
        specAgainstPlan(who, ver, "", 0, "", "--speculative-algorithm");
        return;
    }
    std::string algorithm = c.options.at("--speculative-algorithm");
    if (algorithm == "NEXTN") algorithm = "EAGLE";
    const auto runs = specMethodNames(ver, s.model.architecture);
    if (!runs.count(algorithm))
        fail(who + ": --speculative-algorithm " + algorithm + " is not one it runs for " +
             (s.model.architecture.empty() ? s.model.name : s.model.architecture) + " (" + ver.specSource +
             ")");
    if (ver.specNoPipeline && pp > 1)
        fail(who + ": speculative decoding with --pp-size " + str(pp) + ", which server_args.py refuses");
    const std::string draft =
        c.has("--speculative-draft-model-path") ? c.options.at("--speculative-draft-model-path") : "";
    if ((algorithm == "EAGLE3" || algorithm == "STANDALONE") && draft.empty())
        fail(who + ": --speculative-algorithm " + algorithm + " without --speculative-draft-model-path");
    const int64_t tokens = c.integer("--speculative-num-draft-tokens", 0);
    int64_t k = tokens - 1;
    if (algorithm == "NGRAM") {
        if (dpAttn) fail(who + ": NGRAM with --enable-dp-attention");
        if (tokens < 2) fail(who + ": NGRAM with --speculative-num-draft-tokens below 2");
    } else {
        const int64_t steps = c.integer("--speculative-num-steps", 0),
                      topk = c.integer("--speculative-eagle-topk", 0);
        k = steps;
        if (steps < 1 || topk < 1)
            fail(who + ": --speculative-num-steps and --speculative-eagle-topk must be given, at least 1");
        if (topk == 1 && tokens != steps + 1)
            fail(who + ": with --speculative-eagle-topk 1 the verify width is num_steps + 1 = " +
                 str(steps + 1) + ", --speculative-num-draft-tokens says " + str(tokens));
        if (topk > 1 && plan && plan->on())
            fail(who + ": --speculative-eagle-topk " + str(topk) +
                 " drafts a tree; the plan prices a chain (topk 1)");
    }
    // The MTP (NextN) module is in the target's own checkpoint: the command's model, or nothing.
    if (plan && plan->on() && plan->method == SpecMethod::Mtp && !draft.empty() && draft != c.model)
        fail(who + ": MTP drafts with '" + draft + "', not the target checkpoint " + c.model);
    specAgainstPlan(who, ver, algorithm, k, draft, "--speculative-algorithm");
}

} // namespace sp::checking
