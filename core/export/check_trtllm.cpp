// TensorRT-LLM's rules for a command read back (checkLaunch, check.cpp): trtllm-serve's flags (or
// dynamo.trtllm's), the launcher, and the LLM API YAML, beside trtllm.cpp, whose version rows they read.
#include "core/export/check_impl.h"

#include "core/export/common.h"

#include <yaml-cpp/yaml.h>

namespace sp::checking {

using namespace exporting;

// TensorRT-LLM: tensorrt_llm/commands/serve.py (the flags), llmapi/llm_args.py (the YAML keys, which
// StrictBaseModel checks), mapping.py (moe_tp x moe_ep = tp_size).
void Checker::trtllm(const ParsedCommand& c, const EngineVersion& ver, bool dynamo) {
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
    allowedFlags(t, std::set<std::string>(ver.flags.begin(), ver.flags.end()), "TensorRT-LLM " + ver.version);
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
        if (mpi && l[0] == "mpirun" && (np == l.end() || np + 1 == l.end() || std::stoll(*(np + 1)) != world))
            fail("TensorRT-LLM: mpirun -np is not tp_size x pp_size = " + str(world));
    }
    context(t.integer("--max_seq_len", 0), "--max_seq_len");
    if (t.integer("--max_num_tokens", 8192) < s.workload.inputTokens)
        fail("TensorRT-LLM: --max_num_tokens below a prompt, with chunked prefill off");
    const double f =
        std::stod(o.count("--kv_cache_free_gpu_memory_fraction") ? o["--kv_cache_free_gpu_memory_fraction"]
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
    if (s.model.moe.present() && s.model.architecture == "GptOssForCausalLM" && hopperGpu(s.cluster.gpu) &&
        backend != "TRITON")
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
void Checker::trtllmSpec(const YAML::Node& y, const EngineVersion& ver) {
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
        {"Draft_Target", {"decoding_type", "max_draft_len", "speculative_model_dir", "speculative_model"}},
        {"NGram", {"decoding_type", "max_draft_len", "max_matching_ngram_size"}}};
    if (auto f = fields.find(type); f != fields.end())
        for (const auto& kv : spec)
            if (!f->second.count(kv.first.as<std::string>()))
                fail(who + ": decoding_type " + type + " takes no " + kv.first.as<std::string>());
    if (!specMethodNames(ver, s.model.architecture).count(type))
        fail(who + ": decoding_type " + type + " is not one it runs for " +
             (s.model.architecture.empty() ? s.model.name : s.model.architecture) + " (" + ver.specSource +
             ")");
    const auto integer = [&spec](const char* key) -> int64_t {
        return spec[key] ? spec[key].as<int64_t>() : 0;
    };
    const int64_t k = type == "MTP" && spec["num_nextn_predict_layers"] ? integer("num_nextn_predict_layers")
                                                                        : integer("max_draft_len");
    if (k <= 0) fail(who + ": speculative_config drafts no tokens (max_draft_len must be above 0)");
    std::string draft;
    for (const char* key : {"speculative_model_dir", "speculative_model"})
        if (spec[key]) draft = spec[key].as<std::string>();
    if ((type == "Eagle3" || type == "Draft_Target") && draft.empty())
        fail(who + ": decoding_type " + type + " without speculative_model_dir");
    specAgainstPlan(who, ver, type, k, draft, "speculative_config");
}

} // namespace sp::checking
