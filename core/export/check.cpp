// The exported launches read back and checked against the engines' parsers. Each rule names the parser
// code it comes from (the same files and commits as the exporters' version tables).
#include "core/export/check.h"

#include "core/cost/disagg.h"
#include "core/export/common.h"
#include "core/export/disagg_launch.h"
#include "core/io/formats.h"

#include <nlohmann/json.hpp>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <set>

namespace sp {

using namespace exporting;

namespace {

std::string trim(const std::string& s) {
    const size_t a = s.find_first_not_of(" \t");
    if (a == std::string::npos) return {};
    return s.substr(a, s.find_last_not_of(" \t") + 1 - a);
}

/// One logical line split into words the way sh does for the quoting exportScripts() writes: single
/// quotes literal, double quotes with `${NAME}` kept as text, `\` escaping outside quotes.
std::vector<std::string> words(const std::string& line) {
    std::vector<std::string> out;
    std::string w;
    bool inWord = false;
    for (size_t i = 0; i < line.size(); ++i) {
        const char ch = line[i];
        if (ch == '\'') {
            const size_t j = line.find('\'', i + 1);
            w += line.substr(i + 1, (j == std::string::npos ? line.size() : j) - i - 1);
            i = j == std::string::npos ? line.size() : j;
            inWord = true;
        } else if (ch == '"') {
            size_t j = i + 1;
            for (; j < line.size() && line[j] != '"'; ++j) {
                if (line[j] == '\\' && j + 1 < line.size()) ++j;
                w += line[j];
            }
            i = j;
            inWord = true;
        } else if (ch == '\\' && i + 1 < line.size()) {
            w += line[++i];
            inWord = true;
        } else if (ch == ' ' || ch == '\t') {
            if (inWord) out.push_back(w), w.clear(), inWord = false;
        } else {
            w += ch;
            inWord = true;
        }
    }
    if (inWord) out.push_back(w);
    return out;
}

bool startsWith(const std::string& s, std::string_view p) {
    return s.rfind(p, 0) == 0;
}

/// The `${NAME}` placeholders in a word.
std::vector<std::string> placeholders(const std::string& w) {
    std::vector<std::string> out;
    for (size_t i = w.find("${"); i != std::string::npos; i = w.find("${", i + 2)) {
        const size_t j = w.find('}', i);
        if (j == std::string::npos) break;
        out.push_back(w.substr(i + 2, j - i - 2));
    }
    return out;
}

/// The speculative method names `v` runs for `architecture` (EngineVersion::specMethodName of every method).
std::set<std::string> specMethodNames(const EngineVersion& v, const std::string& architecture) {
    std::set<std::string> out;
    for (int m = 1; m < kSpecMethodCount; ++m)
        if (auto name = v.specMethodName(SpecMethod(m), architecture); !name.empty()) out.insert(name);
    return out;
}

struct Checker {
    const LaunchCommand& lc;
    const Scenario& s;
    std::vector<std::string> v; ///< the violations
    /// The plan's speculative decoding, which the command must run as it is; null when the plan is not known
    /// (a Dynamo graph read on its own).
    const Speculative* plan = nullptr;

    /// The plan's method and K against what the command runs (`method` as the release spells it, empty for
    /// none; `k` its draft tokens per step; `draft` the draft or head it loads, empty for none).
    void specAgainstPlan(const std::string& who, const EngineVersion& ver, const std::string& method,
                         int64_t k, const std::string& draft, const std::string& flag) {
        if (!plan) return;
        if (!plan->on()) {
            if (!method.empty())
                fail(who + ": " + flag + " runs speculative decoding (" + method +
                     "), and the plan has none");
            return;
        }
        const std::string want = ver.specMethodName(plan->method, s.model.architecture);
        const std::string text = specText(*plan);
        if (method.empty()) {
            fail(who + ": the plan runs speculative decoding " + text + ", and the command has no " + flag);
            return;
        }
        if (method != want)
            fail(who + ": " + flag + " runs " + method + ", the plan's " + text + " is " +
                 (want.empty() ? std::string("not one this release runs") : want));
        if (k != plan->draftTokens)
            fail(who + ": " + flag + " drafts " + str(k) + " tokens per step, the plan " +
                 str(plan->draftTokens));
        const std::string hub = plan->method == SpecMethod::Eagle3  ? s.model.spec.eagle3.hubId
                                : plan->method == SpecMethod::Draft ? s.model.spec.draft.hubId
                                                                    : std::string();
        if (!hub.empty() && draft != hub)
            fail(who + ": " + flag + " loads the draft '" + draft + "', not the model's " + hub);
    }

    void fail(const std::string& what) {
        if (std::find(v.begin(), v.end(), what) == v.end()) v.push_back(what);
    }
    int gpn() const { return std::max(1, s.cluster.hostGpus()); } // GPUs a launch node (host) has

    void allowedFlags(const ParsedCommand& c, const std::set<std::string>& allowed, const std::string& who) {
        for (const auto& [flag, value] : c.options)
            if (!allowed.count(flag)) fail(who + " does not have " + flag);
    }

    void context(int64_t length, const char* flag) {
        const int64_t limit = s.model.maxPositionEmbeddings;
        if (limit > 0 && length > limit)
            fail(std::string(flag) + " " + str(length) + " exceeds the model's max_position_embeddings " +
                 str(limit) + " (the engines refuse a longer context than the model's config allows)");
        if (length <= 0) fail(std::string(flag) + " is missing");
    }

    /// A layer-partition variable (VLLM_PP_LAYER_PARTITION, SGLANG_PP_LAYER_PARTITION) read as the engines'
    /// get_pp_indices read it (vllm/distributed/utils.py at v0.10.2, commit e017120ed146; SGLang's
    /// python/sglang/srt/distributed/utils.py at 0.4.9, commit ec5f9c6269c1): `[int(layer) for layer in
    /// value.split(",")]`, else "Invalid partition string"; `len(partitions) != pp_size` and
    /// `sum(partitions) != num_hidden_layers` refused. Neither refuses a stage of 0 layers; the cost model
    /// does (checkStageLayers), so it is refused here too.
    void layerPartition(const std::string& var, const std::string& value, int64_t pp,
                        const std::string& who) {
        std::vector<int64_t> parts;
        size_t from = 0;
        while (true) {
            const size_t comma = value.find(',', from);
            std::string item =
                value.substr(from, comma == std::string::npos ? std::string::npos : comma - from);
            // Python's int() takes surrounding whitespace and a sign.
            const size_t a = item.find_first_not_of(" \t"), b = item.find_last_not_of(" \t");
            item = a == std::string::npos ? std::string() : item.substr(a, b - a + 1);
            const size_t sign = !item.empty() && (item[0] == '-' || item[0] == '+') ? 1 : 0;
            if (item.size() <= sign || item.find_first_not_of("0123456789", sign) != std::string::npos) {
                fail(who + ": " + var + "=" + value + " is not a comma-separated list of integers");
                return;
            }
            parts.push_back(std::stoll(item));
            if (comma == std::string::npos) break;
            from = comma + 1;
        }
        if (int64_t(parts.size()) != pp)
            fail(who + ": " + var + " has " + str(int64_t(parts.size())) + " stages for a pipeline of " +
                 str(pp));
        int64_t sum = 0;
        for (int64_t n : parts) {
            if (n < 1) fail(who + ": " + var + " gives a stage " + str(n) + " layers");
            sum += n;
        }
        if (sum != s.model.layers)
            fail(who + ": " + var + " adds up to " + str(sum) + " layers; the model has " +
                 str(s.model.layers));
    }

    /// --kv-cache-dtype among the version's choices (vLLM: CacheDType; SGLang: the argparse choices).
    void kvCacheDtype(const ParsedCommand& c, const EngineVersion& ver, const std::string& who) {
        if (!c.has("--kv-cache-dtype") || ver.kvCacheDtypes.empty()) return;
        const auto& d = c.options.at("--kv-cache-dtype");
        if (std::find(ver.kvCacheDtypes.begin(), ver.kvCacheDtypes.end(), d) == ver.kvCacheDtypes.end())
            fail(who + " " + ver.version + ": --kv-cache-dtype " + d + " is not among " +
                 joined(ver.kvCacheDtypes, ", "));
    }

    void model(const ParsedCommand& c) {
        if (c.model.empty()) fail(c.program + ": no model path");
        if (!s.model.hubId.empty() && c.model != s.model.hubId)
            fail(c.program + " loads '" + c.model + "', not the model's Hub id " + s.model.hubId);
        if (c.model == "config" || c.model == s.model.name)
            if (s.model.hubId.empty() || c.model != s.model.hubId)
                fail(c.program + " loads '" + c.model + "', a file stem or display name");
    }

    // vLLM: vllm/engine/arg_utils.py (the flags), vllm/config/parallel.py ParallelConfig.__post_init__ (the
    // executor rules), vllm/config/model.py verify_with_parallel_config (heads % tp).
    void vllm(const ParsedCommand& c, const EngineVersion& ver) {
        const std::set<std::string> allowed(ver.flags.begin(), ver.flags.end());
        allowedFlags(c, allowed, "vLLM " + ver.version);
        const int64_t tp = c.integer("--tensor-parallel-size", 1),
                      pp = c.integer("--pipeline-parallel-size", 1);
        const int64_t dp = c.integer("--data-parallel-size", 1), nnodes = c.integer("--nnodes", 1);
        const int64_t world = tp * pp;
        const std::string executor =
            c.has("--distributed-executor-backend") ? c.options.at("--distributed-executor-backend") : "";
        const int64_t local = c.visibleGpus > 0 ? c.visibleGpus : gpn();
        if (s.model.attention.heads % tp != 0)
            fail("vLLM: " + str(s.model.attention.heads) +
                 " attention heads do not divide by tensor parallel " + str(tp));
        if (world > local && executor != "ray" && nnodes <= 1) {
            // 0.10.2's ParallelConfig.__post_init__ picks Ray itself when no executor is named; an explicit
            // mp executor fails in mp_distributed_executor._check_cuda. The newer row refuses both.
            if (!ver.rayByDefault)
                fail("vLLM: world size " + str(world) + " is larger than the " + str(local) +
                     " GPUs of a node without --distributed-executor-backend ray or --nnodes "
                     "(ParallelConfig)");
            else if (!executor.empty())
                fail("vLLM: world size " + str(world) + " is larger than the " + str(local) +
                     " GPUs of a node with the " + executor + " executor (mp_distributed_executor)");
        }
        // 0.10.2's Ray DP backend puts each DP rank on one node (CoreEngineActorManager.
        // create_dp_placement_groups, vllm/v1/engine/utils.py at v0.10.2).
        if (!ver.rayDpPackStrategy && dp > 1 && world > gpn() && c.has("--data-parallel-backend") &&
            c.options.at("--data-parallel-backend") == "ray")
            fail("vLLM " + ver.version + ": DP ranks of " + str(world) +
                 " GPUs under the Ray DP backend, which " + "places each on one node of " + str(gpn()));
        if (nnodes > 1) {
            if (executor == "ray") fail("vLLM: --nnodes > 1 with the Ray executor (ParallelConfig)");
            if (c.has("--data-parallel-backend") && c.options.at("--data-parallel-backend") != "mp")
                fail("vLLM: --nnodes > 1 needs --data-parallel-backend mp");
            if ((world * dp) % nnodes != 0)
                fail("vLLM: world size " + str(world * dp) + " does not divide by --nnodes " + str(nnodes));
            else if (world * dp / nnodes > gpn())
                fail("vLLM: " + str(world * dp / nnodes) + " GPUs per node, more than the nodes have");
            if (!c.has("--node-rank") || !c.has("--master-addr"))
                fail("vLLM: --nnodes without --node-rank/--master-addr");
        }
        if (c.has("--data-parallel-size-local")) {
            const int64_t l = c.integer("--data-parallel-size-local", 1);
            if (l * world > gpn())
                fail("vLLM: " + str(l) + " local DP ranks of " + str(world) + " GPUs exceed a node");
            if (c.integer("--data-parallel-start-rank", 0) + l > dp)
                fail("vLLM: DP ranks past --data-parallel-size");
        }
        kvCacheDtype(c, ver, "vLLM");
        const double util =
            std::stod(c.has("--gpu-memory-utilization") ? c.options.at("--gpu-memory-utilization")
                                                        : std::string("0.9"));
        if (util <= 0 || util > 1) fail("vLLM: --gpu-memory-utilization outside (0, 1]");
        context(c.integer("--max-model-len", 0), "--max-model-len");
        if (dp * world > s.gpus()) fail("vLLM: " + str(dp * world) + " GPUs, more than the scenario's");
        vllmSpec(c, ver, tp, pp);
    }

    // --speculative-config, a JSON of SpeculativeConfig (vllm.cpp's rows: the method names each release runs,
    // num_speculative_tokens > 0, ngram's prompt_lookup_min <= prompt_lookup_max, the draft or head that
    // eagle3 and draft_model load, no pipeline up to 0.15.0, the head's heads dividing by tp).
    void vllmSpec(const ParsedCommand& c, const EngineVersion& ver, int64_t tp, int64_t pp) {
        const std::string who = "vLLM " + ver.version;
        if (!c.has("--speculative-config")) {
            specAgainstPlan(who, ver, "", 0, "", "--speculative-config");
            return;
        }
        nlohmann::json j;
        try {
            j = nlohmann::json::parse(c.options.at("--speculative-config"));
        } catch (const nlohmann::json::exception& e) {
            fail(who + ": --speculative-config is not JSON: " + e.what());
            return;
        }
        if (!j.is_object()) {
            fail(who + ": --speculative-config is not a JSON object");
            return;
        }
        static const std::set<std::string> keys = {"method",
                                                   "model",
                                                   "num_speculative_tokens",
                                                   "prompt_lookup_max",
                                                   "prompt_lookup_min",
                                                   "draft_tensor_parallel_size"};
        for (const auto& [key, value] : j.items())
            if (!keys.count(key)) fail(who + ": SpeculativeConfig has no field " + key);
        const auto text = [&j](const char* key) {
            return j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : std::string();
        };
        const auto integer = [&j](const char* key) -> int64_t {
            return j.contains(key) && j[key].is_number_integer() ? j[key].get<int64_t>() : 0;
        };
        const std::string method = text("method"), model = text("model");
        const int64_t k = integer("num_speculative_tokens");
        const auto runs = specMethodNames(ver, s.model.architecture);
        if (!runs.count(method))
            fail(who + ": speculative method '" + method + "' is not one it runs for " +
                 (s.model.architecture.empty() ? s.model.name : s.model.architecture) + " (" +
                 ver.specSource + ")");
        if (k <= 0) fail(who + ": num_speculative_tokens must be an integer above 0");
        if ((method == "eagle3" || method == "draft_model") && model.empty())
            fail(who + ": method " + method + " without the model it drafts with");
        if (method == "ngram") {
            const int64_t lo = integer("prompt_lookup_min"), hi = integer("prompt_lookup_max");
            if (lo < 1 || hi < 1 || lo > hi)
                fail(who + ": ngram needs 1 <= prompt_lookup_min <= prompt_lookup_max (" + str(lo) + ", " +
                     str(hi) + ")");
        }
        if (ver.specNoPipeline && pp > 1)
            fail(who + ": speculative decoding with pipeline parallel " + str(pp) + ", which it refuses");
        if (method == "eagle3" && s.model.spec.eagle3.heads > 0 && s.model.spec.eagle3.heads % tp != 0)
            fail(who + ": the EAGLE-3 head's " + str(s.model.spec.eagle3.heads) +
                 " heads do not divide by tensor parallel " + str(tp));
        specAgainstPlan(who, ver, method, k, model, "--speculative-config");
    }

    // SGLang: python/sglang/srt/server_args.py (the flags; check_server_args; _handle_context_parallelism
    // for --moe-dp-size and the attention CP size, read at commit 001067fffe33427bee0ed2f007fb7551a1d76b44),
    // and for 0.4.9 the same file and layers/moe/ep_moe/layer.py at commit ec5f9c6269c1.
    void sglang(const ParsedCommand& c, const EngineVersion& ver) {
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
                fail("SGLang " + ver.version +
                     ": FusedMoE asserts (experts + redundant) % ep_size == 0, and " +
                     str(s.model.moe.experts) + " + " + str(redundant) + " experts do not divide by " +
                     str(moeEp));
            const auto& archs = ver.redundantExpertArchitectures;
            if (redundant > 0 && std::find(archs.begin(), archs.end(), s.model.architecture) == archs.end())
                fail("SGLang " + ver.version + ": --ep-num-redundant-experts for " +
                     (s.model.architecture.empty() ? std::string("a model of unknown architecture")
                                                   : s.model.architecture) +
                     ", whose model code does not add the slots");
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
    void sglangSpec(const ParsedCommand& c, const EngineVersion& ver, int64_t pp, bool dpAttn) {
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
                 (s.model.architecture.empty() ? s.model.name : s.model.architecture) + " (" +
                 ver.specSource + ")");
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
                fail(who +
                     ": --speculative-num-steps and --speculative-eagle-topk must be given, at least 1");
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

    // TensorRT-LLM: tensorrt_llm/commands/serve.py (the flags), llmapi/llm_args.py (the YAML keys, which
    // StrictBaseModel checks), mapping.py (moe_tp x moe_ep = tp_size).
    void trtllm(const ParsedCommand& c, const EngineVersion& ver, bool dynamo) {
        std::map<std::string, std::string> o = c.options;
        if (dynamo) {
            // dynamo.trtllm's spellings (components/src/dynamo/trtllm/backend_args.py) back to
            // trtllm-serve's.
            static const std::pair<const char*, const char*> back[] = {
                {"--tensor-parallel-size", "--tp_size"},
                {"--pipeline-parallel-size", "--pp_size"},
                {"--expert-parallel-size", "--ep_size"},
                {"--max-batch-size", "--max_batch_size"},
                {"--max-num-tokens", "--max_num_tokens"},
                {"--max-seq-len", "--max_seq_len"},
                {"--free-gpu-memory-fraction", "--kv_cache_free_gpu_memory_fraction"},
                {"--extra-engine-args", "--extra_llm_api_options"}};
            std::map<std::string, std::string> r;
            for (const auto& [k, val] : o) {
                std::string key = k;
                for (const auto& [from, to] : back)
                    if (key == from) key = to;
                if (key == "--model" || key == "--disaggregation-mode") continue;
                r[key] = val;
            }
            r["--backend"] = "pytorch";
            o = r;
        }
        ParsedCommand t = c;
        t.options = o;
        allowedFlags(t, std::set<std::string>(ver.flags.begin(), ver.flags.end()),
                     "TensorRT-LLM " + ver.version);
        if (!t.has("--backend") || o["--backend"] != "pytorch") fail("TensorRT-LLM: not the PyTorch backend");
        const int64_t tp = t.integer("--tp_size", 1), pp = t.integer("--pp_size", 1), world = tp * pp;
        if (world > (c.visibleGpus > 0 ? c.visibleGpus : gpn())) {
            const auto& l = c.launcher;
            const bool mpi = !l.empty() && (l[0] == "mpirun" || l[0] == "srun");
            const bool launch = std::find(l.begin(), l.end(), "trtllm-llmapi-launch") != l.end();
            if (!mpi || !launch)
                fail("TensorRT-LLM: " + str(world) +
                     " ranks over nodes without mpirun/srun + trtllm-llmapi-launch");
            auto np = std::find(l.begin(), l.end(), "-np");
            if (mpi && l[0] == "mpirun" &&
                (np == l.end() || np + 1 == l.end() || std::stoll(*(np + 1)) != world))
                fail("TensorRT-LLM: mpirun -np is not tp_size x pp_size = " + str(world));
        }
        context(t.integer("--max_seq_len", 0), "--max_seq_len");
        if (t.integer("--max_num_tokens", 8192) < s.workload.inputTokens)
            fail("TensorRT-LLM: --max_num_tokens below a prompt, with chunked prefill off");
        const double f = std::stod(o.count("--kv_cache_free_gpu_memory_fraction")
                                       ? o["--kv_cache_free_gpu_memory_fraction"]
                                       : std::string("0.9"));
        if (f <= 0 || f > 1) fail("TensorRT-LLM: KV cache memory fraction outside (0, 1]");
        // The YAML.
        if (!o.count("--extra_llm_api_options")) return;
        const std::string name = o["--extra_llm_api_options"];
        auto file =
            std::find_if(lc.files.begin(), lc.files.end(), [&](const auto& p) { return p.first == name; });
        if (file == lc.files.end()) {
            fail("TensorRT-LLM: " + name + " is not among the exported files");
            return;
        }
        YAML::Node y;
        try {
            y = YAML::Load(file->second);
        } catch (const YAML::Exception& e) {
            fail("TensorRT-LLM: " + name + " is not YAML: " + e.what());
            return;
        }
        static const std::map<std::string, std::set<std::string>> keys = {
            {"enable_attention_dp", {}},
            {"trust_remote_code", {}},
            {"moe_expert_parallel_size", {}},
            {"moe_tensor_parallel_size", {}},
            {"moe_config", {"backend"}},
            {"kv_cache_config", {"free_gpu_memory_fraction", "dtype"}},
            {"cuda_graph_config", {"max_batch_size", "enable_padding", "batch_sizes"}},
            // DecodingBaseConfig and its subclasses (trtllm.cpp's row).
            {"speculative_config",
             {"decoding_type", "max_draft_len", "num_nextn_predict_layers", "speculative_model_dir",
              "speculative_model", "max_matching_ngram_size"}},
            {"disable_overlap_scheduler", {}}};
        for (const auto& kv : y) {
            const std::string k = kv.first.as<std::string>();
            auto it = keys.find(k);
            if (it == keys.end()) {
                fail("TensorRT-LLM: unknown LLM API option " + k);
                continue;
            }
            if (kv.second.IsMap())
                for (const auto& sub : kv.second)
                    if (!it->second.count(sub.first.as<std::string>()))
                        fail("TensorRT-LLM: unknown option " + k + "." + sub.first.as<std::string>());
        }
        if (configNamesCustomCode(s.model) && !(y["trust_remote_code"] && y["trust_remote_code"].as<bool>()))
            fail("TensorRT-LLM: " + s.model.architecture +
                 "'s config names custom code (auto_map), and trust_remote_code is not set");
        if (y["moe_expert_parallel_size"]) {
            const int64_t ep = y["moe_expert_parallel_size"].as<int64_t>();
            const int64_t mtp =
                y["moe_tensor_parallel_size"] ? y["moe_tensor_parallel_size"].as<int64_t>() : tp / ep;
            if (ep * mtp != tp)
                fail("TensorRT-LLM: moe_expert_parallel_size x moe_tensor_parallel_size != tp_size");
            if (t.has("--ep_size") && t.integer("--ep_size", 1) != ep)
                fail("TensorRT-LLM: --ep_size and the YAML disagree");
            if (s.model.moe.experts % ep != 0) fail("TensorRT-LLM: the experts do not divide by the EP size");
        }
        const std::string backend = y["moe_config"] && y["moe_config"]["backend"]
                                        ? y["moe_config"]["backend"].as<std::string>()
                                        : std::string("CUTLASS");
        {
            // MoeConfig.backend's Literal in llmapi/llm_args.py; TRITON from examples/models/core/gpt_oss/
            // README.md (read at commit 0ee4114cc7fe), which sets it through this key.
            static const std::set<std::string> known = {"CUTLASS",  "CUTEDSL", "WIDEEP", "TRTLLM",
                                                        "DEEPGEMM", "VANILLA", "TRITON"};
            if (!known.count(backend)) fail("TensorRT-LLM: moe_config backend " + backend);
        }
        // The gpt-oss guide (examples/models/core/gpt_oss/README.md at 0ee4114cc7fe): TRITON on Hopper, and
        // TRITON has no expert tensor parallelism.
        if (s.model.moe.present() && s.model.architecture == "GptOssForCausalLM" &&
            hopperGpu(s.cluster.gpu) && backend != "TRITON")
            fail("TensorRT-LLM: gpt-oss on " + s.cluster.gpu.name + " with moe_config backend " + backend +
                 ", not TRITON as its gpt-oss guide gives for Hopper");
        if (backend == "TRITON" && y["moe_tensor_parallel_size"] &&
            y["moe_tensor_parallel_size"].as<int64_t>() > 1)
            fail("TensorRT-LLM: the TRITON MoE backend with moe_tensor_parallel_size > 1");
        const bool adp = y["enable_attention_dp"] && y["enable_attention_dp"].as<bool>();
        if (!adp && s.model.attention.heads % tp != 0)
            fail("TensorRT-LLM: the attention heads do not divide by tp_size");
        trtllmSpec(y, ver);
    }

    // speculative_config (trtllm.cpp's row, llm_args.py): a decoding_type the release runs for the model,
    // with the fields that type takes, a draft length above 0 and, for Eagle3 and Draft_Target, the model.
    void trtllmSpec(const YAML::Node& y, const EngineVersion& ver) {
        const std::string who = "TensorRT-LLM " + ver.version;
        const YAML::Node spec = y["speculative_config"];
        if (!spec) {
            specAgainstPlan(who, ver, "", 0, "", "speculative_config");
            return;
        }
        if (!spec.IsMap() || !spec["decoding_type"]) {
            fail(who + ": speculative_config without decoding_type");
            return;
        }
        const std::string type = spec["decoding_type"].as<std::string>();
        static const std::map<std::string, std::set<std::string>> fields = {
            {"MTP", {"decoding_type", "num_nextn_predict_layers", "max_draft_len"}},
            {"Eagle3", {"decoding_type", "max_draft_len", "speculative_model_dir", "speculative_model"}},
            {"Draft_Target",
             {"decoding_type", "max_draft_len", "speculative_model_dir", "speculative_model"}},
            {"NGram", {"decoding_type", "max_draft_len", "max_matching_ngram_size"}}};
        if (auto f = fields.find(type); f != fields.end())
            for (const auto& kv : spec)
                if (!f->second.count(kv.first.as<std::string>()))
                    fail(who + ": decoding_type " + type + " takes no " + kv.first.as<std::string>());
        if (!specMethodNames(ver, s.model.architecture).count(type))
            fail(who + ": decoding_type " + type + " is not one it runs for " +
                 (s.model.architecture.empty() ? s.model.name : s.model.architecture) + " (" +
                 ver.specSource + ")");
        const auto integer = [&spec](const char* key) -> int64_t {
            return spec[key] ? spec[key].as<int64_t>() : 0;
        };
        const int64_t k = type == "MTP" && spec["num_nextn_predict_layers"]
                              ? integer("num_nextn_predict_layers")
                              : integer("max_draft_len");
        if (k <= 0) fail(who + ": speculative_config drafts no tokens (max_draft_len must be above 0)");
        std::string draft;
        for (const char* key : {"speculative_model_dir", "speculative_model"})
            if (spec[key]) draft = spec[key].as<std::string>();
        if ((type == "Eagle3" || type == "Draft_Target") && draft.empty())
            fail(who + ": decoding_type " + type + " without speculative_model_dir");
        specAgainstPlan(who, ver, type, k, draft, "speculative_config");
    }
};

/// The checks of one engine command of a node (its environment `nodeEnv`): the model, the program, the
/// release's model registry, the layer-partition variables, AMD GPUs, custom code, then the engine's own.
void checkCommand(Checker& k, const std::string& name, const ParsedCommand& c,
                  const std::vector<std::pair<std::string, std::string>>& nodeEnv,
                  const EngineVersion& version, ServingEngine worker) {
    k.model(c);
    const ServingEngine e = version.engine == ServingEngine::Dynamo ? worker : version.engine;
    const EngineVersion ver =
        version.engine == ServingEngine::Dynamo ? engineVersions(worker).back() : version;
    const bool dyn = version.engine == ServingEngine::Dynamo;
    const std::string expected = e == ServingEngine::Vllm ? (dyn ? "dynamo.vllm" : "vllm serve")
                                 : e == ServingEngine::Sglang
                                     ? (dyn ? "dynamo.sglang" : "sglang.launch_server")
                                     : (dyn ? "dynamo.trtllm" : "trtllm-serve");
    if (c.program != expected) k.fail(name + " runs " + c.program + ", not " + expected);
    // The model registry of the release (EngineVersion::architectures, read where the row's
    // architecturesSource says): an architecture shardplan imports that it lacks does not load.
    const auto& known = supportedHfArchitectures();
    const std::string& arch = k.s.model.architecture;
    if (!ver.architectures.empty() && std::find(known.begin(), known.end(), arch) != known.end() &&
        std::find(ver.architectures.begin(), ver.architectures.end(), arch) == ver.architectures.end())
        k.fail(name + ": " + std::string(nameOf(e)) + " " + ver.version + " has no " + arch +
               " in its model registry (" + ver.architecturesSource + ")");
    for (const auto& [var, value] : nodeEnv) {
        const bool vllmVar = var == "VLLM_PP_LAYER_PARTITION", sglangVar = var == "SGLANG_PP_LAYER_PARTITION";
        if (!vllmVar && !sglangVar) continue;
        if ((vllmVar && e != ServingEngine::Vllm) || (sglangVar && e != ServingEngine::Sglang))
            k.fail(name + " sets " + var + " for " + std::string(nameOf(e)) + ", which does not read it");
        else
            k.layerPartition(var, value, c.integer(vllmVar ? "--pipeline-parallel-size" : "--pp-size", 1),
                             name);
    }
    // AMD GPUs (amdGpu, core/export/common.h): no TensorRT-LLM (CUDA only: docs/source/installation/
    // linux.md at 004da3c27360), no DeepEP (Hopper only: deepseek-ai/DeepEP README at 0297fc801788),
    // and vLLM's AITER MLA takes KV blocks of one token only (vllm/platforms/rocm.py
    // get_attn_backend_cls at v0.10.2).
    if (amdGpu(k.s.cluster.gpu)) {
        if (e == ServingEngine::Trtllm)
            k.fail(name + ": TensorRT-LLM on " + k.s.cluster.gpu.name + ", which it cannot run on");
        if (c.has("--enable-deepep-moe") ||
            (c.has("--moe-a2a-backend") && c.options.at("--moe-a2a-backend") == "deepep"))
            k.fail(name + ": DeepEP on " + k.s.cluster.gpu.name + ", which it cannot run on");
        bool aiter = false;
        for (const auto& [var, value] : nodeEnv)
            if (var == "VLLM_ROCM_USE_AITER" && (value == "1" || lower(value) == "true")) aiter = true;
        if (e == ServingEngine::Vllm && aiter && k.s.model.attention.type == AttentionType::MLA &&
            c.integer("--block-size", 16) != 1)
            k.fail(name + ": vLLM's AITER MLA backend with a KV block size other than 1");
    }
    // A config that names custom code (auto_map) loads only with trust-remote-code (vLLM's
    // ModelConfig and SGLang's get_config pass trust_remote_code to transformers' AutoConfig).
    if (configNamesCustomCode(k.s.model) && e != ServingEngine::Trtllm && !c.has("--trust-remote-code"))
        k.fail(name + ": " + k.s.model.architecture +
               "'s config names custom code (auto_map), and --trust-remote-code is not given");
    if (e == ServingEngine::Vllm && dyn && c.has("--disaggregation-mode")) {
        // dynamo.vllm's own flag (components/src/dynamo/vllm/backend_args.py at d195d280e13e: agg,
        // prefill, decode); the rest go to vLLM's parser.
        static const std::set<std::string> modes = {"agg", "prefill", "decode"};
        if (!modes.count(c.options.at("--disaggregation-mode")))
            k.fail(name + ": dynamo.vllm --disaggregation-mode " + c.options.at("--disaggregation-mode"));
        ParsedCommand vllmArgs = c;
        vllmArgs.options.erase("--disaggregation-mode");
        k.vllm(vllmArgs, ver);
    } else if (e == ServingEngine::Vllm) {
        k.vllm(c, ver);
    }
    if (e == ServingEngine::Sglang) k.sglang(c, ver);
    if (e == ServingEngine::Trtllm) k.trtllm(c, ver, dyn);
}

} // namespace

std::vector<std::vector<std::string>> parseScript(const std::string& script) {
    std::vector<std::vector<std::string>> out;
    std::string logical;
    size_t pos = 0;
    while (pos <= script.size()) {
        size_t end = script.find('\n', pos);
        if (end == std::string::npos) end = script.size();
        std::string line = script.substr(pos, end - pos);
        pos = end + 1;
        if (!line.empty() && line.back() == '\\') {
            logical += line.substr(0, line.size() - 1);
            continue;
        }
        logical += line;
        const std::string l = trim(logical);
        logical.clear();
        if (l.empty() || l[0] == '#') continue;
        auto w = words(l);
        if (w.empty()) continue;
        const std::string& first = w[0];
        if (first == "set" || first == "cd" || first == "export" || first == ":" || first == "wait") continue;
        if (first == "exec") w.erase(w.begin());
        if (!w.empty() && w.back() == "&") w.pop_back();
        if (!w.empty()) out.push_back(std::move(w));
        if (end == script.size()) break;
    }
    return out;
}

int64_t ParsedCommand::integer(const std::string& flag, int64_t otherwise) const {
    auto it = options.find(flag);
    if (it == options.end() || it->second.empty()) return otherwise;
    try {
        return std::stoll(it->second);
    } catch (...) {
        return otherwise;
    }
}

std::optional<ParsedCommand> parseEngineCommand(const std::vector<std::string>& w) {
    ParsedCommand c;
    size_t i = 0;
    if (i < w.size() && w[i] == "env") {
        for (++i; i < w.size() && w[i].find('=') != std::string::npos && w[i][0] != '-'; ++i)
            if (startsWith(w[i], "CUDA_VISIBLE_DEVICES="))
                c.visibleGpus = int(std::count(w[i].begin(), w[i].end(), ',')) + 1;
    }
    // The launcher: everything up to trtllm-serve or trtllm-llmapi-launch's program.
    size_t prog = i;
    for (size_t k = i; k < w.size(); ++k)
        if (w[k] == "trtllm-serve" || w[k] == "vllm" || w[k] == "python3") {
            prog = k;
            break;
        }
    c.launcher.assign(w.begin() + long(i), w.begin() + long(prog));
    i = prog;
    if (i >= w.size()) return std::nullopt;
    size_t optionsFrom = 0;
    if (w[i] == "vllm" && i + 2 < w.size() && w[i + 1] == "serve") {
        c.program = "vllm serve", c.model = w[i + 2], optionsFrom = i + 3;
    } else if (w[i] == "trtllm-serve" && i + 1 < w.size()) {
        c.program = "trtllm-serve", c.model = w[i + 1], optionsFrom = i + 2;
    } else if (w[i] == "python3" && i + 2 < w.size() && w[i + 1] == "-m") {
        c.program = w[i + 2], optionsFrom = i + 3;
        if (c.program == "dynamo.frontend") return std::nullopt;
    } else {
        return std::nullopt;
    }
    for (size_t k = optionsFrom; k < w.size(); ++k) {
        if (!startsWith(w[k], "--")) continue;
        std::string value;
        if (k + 1 < w.size() && !startsWith(w[k + 1], "--")) value = w[++k];
        c.options[w[k - (value.empty() ? 0 : 1)]] = value;
    }
    for (const char* m : {"--model-path", "--model"})
        if (c.model.empty() && c.options.count(m)) c.model = c.options[m];
    return c;
}

std::vector<std::string> checkLaunch(const LaunchCommand& launch, const Scenario& scenario,
                                     const EngineVersion& version, ServingEngine worker) {
    Checker k{launch, scenario, {}, &launch.plan.spec};
    const auto scripts = launch.scripts();
    if (scripts.empty()) k.fail("no node scripts");
    if (int(scripts.size()) > scenario.cluster.hosts())
        k.fail(str(int64_t(scripts.size())) + " node scripts for a cluster of " +
               str(scenario.cluster.hosts()) + " hosts");
    bool frontend = false;
    for (size_t n = 0; n < scripts.size(); ++n) {
        const auto& [name, text] = scripts[n];
        const auto cmds = parseScript(text);
        // The script says what the node's commands say, word for word (quoting survives the shell).
        if (cmds != launch.nodes[n].commands) k.fail(name + " does not read back as its commands");
        std::set<std::string> env;
        for (const auto& [var, value] : launch.nodes[n].env) env.insert(var);
        for (const auto& words : cmds) {
            for (const auto& w : words)
                for (const auto& p : placeholders(w))
                    if (!env.count(p)) k.fail(name + " uses ${" + p + "} without setting or requiring it");
            if (words.size() >= 3 && words[2] == "dynamo.frontend") frontend = true;
            const auto c = parseEngineCommand(words);
            if (!c) continue;
            if (version.engine == ServingEngine::Dynamo &&
                !(env.count("ETCD_ENDPOINTS") && env.count("NATS_SERVER")))
                k.fail(name + ": a Dynamo worker without ETCD_ENDPOINTS and NATS_SERVER");
            checkCommand(k, name, *c, launch.nodes[n].env, version, worker);
        }
    }
    if (version.engine == ServingEngine::Dynamo && !frontend) k.fail("Dynamo without a frontend");
    return k.v;
}

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

namespace {

/// The value of an option in a command's words (the engine's own, after any `env NAME=VALUE` prefix).
std::optional<std::string> wordAfter(const std::vector<std::string>& w, const std::string& flag) {
    for (size_t i = 0; i + 1 < w.size(); ++i)
        if (w[i] == flag) return w[i + 1];
    return std::nullopt;
}

} // namespace

std::vector<std::string> checkDisaggLaunch(const DisaggLaunch& l, const Scenario& s, const DisaggPlan& p,
                                           const EngineVersion& version, ServingEngine worker) {
    std::vector<std::string> v;
    const auto add = [&v](const std::string& what) {
        if (std::find(v.begin(), v.end(), what) == v.end()) v.push_back(what);
    };
    for (const auto& [name, lc, phase, nodes] :
         {std::tuple{"prefill", &l.prefill, Phase::Prefill, p.prefill.nodes},
          std::tuple{"decode", &l.decode, Phase::Decode, p.decode.nodes}})
        for (const auto& x : checkLaunch(*lc, poolScenario(s, phase, nodes), version, worker))
            add(std::string(name) + " pool: " + x);
    if (version.engine != ServingEngine::Sglang) return v;

    // The servers that serve an API (a multi-node server's node 0), as the router must name them:
    // SGLang's defaults port 30000, disaggregation_bootstrap_port 8998, host 127.0.0.1 (server_args.py at
    // 7ae368efde14).
    struct Server {
        std::string pool;
        size_t node;
        std::string port, bootstrap;
    };
    std::vector<Server> servers;
    for (const auto& [pool, lc] : {std::pair{"PREFILL", &l.prefill}, std::pair{"DECODE", &l.decode}}) {
        const auto scripts = lc->scripts();
        for (size_t k = 0; k < scripts.size(); ++k) {
            std::set<std::string> ports, bootstraps;
            for (const auto& words : parseScript(scripts[k].second)) {
                const auto c = parseEngineCommand(words);
                if (!c || c->program != "sglang.launch_server") continue;
                const std::string port = wordAfter(words, "--port").value_or("30000");
                const std::string boot = wordAfter(words, "--disaggregation-bootstrap-port").value_or("8998");
                if (wordAfter(words, "--host").value_or("127.0.0.1") != "0.0.0.0")
                    add(std::string(pool) + " node " + str(int64_t(k)) +
                        ": a server on host 127.0.0.1, which the router on another host cannot reach");
                if (!ports.insert(port).second)
                    add(std::string(pool) + " node " + str(int64_t(k)) + ": two servers on port " + port);
                if (std::string(pool) == "PREFILL" && !bootstraps.insert(boot).second)
                    add(std::string(pool) + " node " + str(int64_t(k)) + ": two servers on bootstrap port " +
                        boot);
                const std::string rank = wordAfter(words, "--node-rank").value_or("0");
                bool head = rank == "0";
                if (rank == "${NODE_RANK}") {
                    head = false;
                    for (const auto& [var, value] : lc->nodes[k].env)
                        if (var == "NODE_RANK") head = value == "0";
                }
                if (head) servers.push_back({pool, k, port, boot});
            }
        }
    }
    // The router, from router/bindings/python/sglang_router/router_args.py at 7ae368efde14:
    // --pd-disaggregation, --prefill URL [BOOTSTRAP_PORT] (append), --decode URL (append).
    if (l.router.commands.empty()) {
        add("no router in front of the pools");
        return v;
    }
    const std::string script = exporting::nodeScript("router", l.router);
    const auto cmds = parseScript(script);
    if (cmds.size() != 1 || cmds[0].size() < 4 || cmds[0][0] != "python3" ||
        cmds[0][2] != "sglang_router.launch_router") {
        add("router.sh does not run python3 -m sglang_router.launch_router");
        return v;
    }
    const auto& w = cmds[0];
    std::set<std::string> env;
    for (const auto& [var, value] : l.router.env) env.insert(var);
    if (std::find(w.begin(), w.end(), "--pd-disaggregation") == w.end())
        add("the router is not in PD mode (--pd-disaggregation)");
    std::vector<std::tuple<std::string, std::string, std::string>> named; // pool, URL, bootstrap
    for (size_t i = 0; i < w.size(); ++i) {
        if ((w[i] == "--prefill" || w[i] == "--decode") && i + 1 < w.size()) {
            const bool prefill = w[i] == "--prefill";
            std::string boot = "none";
            if (prefill && i + 2 < w.size() && w[i + 2].rfind("--", 0) != 0) boot = w[i + 2];
            named.emplace_back(prefill ? "PREFILL" : "DECODE", w[i + 1], boot);
            for (const auto& ph : placeholders(w[i + 1]))
                if (!env.count(ph)) add("router.sh uses ${" + ph + "} without requiring it");
        }
    }
    for (const Server& sv : servers) {
        const std::string url = "http://${" + sv.pool + "_NODE" + str(int64_t(sv.node)) + "_IP}:" + sv.port;
        const auto it = std::find_if(named.begin(), named.end(), [&](const auto& t) {
            return std::get<0>(t) == sv.pool && std::get<1>(t) == url;
        });
        if (it == named.end()) {
            add("the router does not name the " + lower(sv.pool) + " server at " + url);
            continue;
        }
        if (sv.pool == "PREFILL" && std::get<2>(*it) != sv.bootstrap)
            add("the router gives " + url + " bootstrap port " + std::get<2>(*it) +
                ", the server listens on " + sv.bootstrap);
    }
    if (named.size() != servers.size())
        add("the router names " + str(int64_t(named.size())) + " servers, the pools run " +
            str(int64_t(servers.size())));
    return v;
}

} // namespace sp
