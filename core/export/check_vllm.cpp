// vLLM's rules for a command read back (checkLaunch, check.cpp): the flags, the executor and data-parallel
// layout, and --speculative-config, beside vllm.cpp, whose version rows they read.
#include "core/export/check_impl.h"

#include "core/export/common.h"

#include <nlohmann/json.hpp>

namespace sp::checking {

using namespace exporting;

// vLLM: vllm/engine/arg_utils.py (the flags), vllm/config/parallel.py ParallelConfig.__post_init__ (the
// executor rules), vllm/config/model.py verify_with_parallel_config (heads % tp).
void Checker::vllm(const ParsedCommand& c, const EngineVersion& ver) {
    const std::set<std::string> allowed(ver.flags.begin(), ver.flags.end());
    allowedFlags(c, allowed, "vLLM " + ver.version);
    const int64_t tp = c.integer("--tensor-parallel-size", 1), pp = c.integer("--pipeline-parallel-size", 1);
    const int64_t dp = c.integer("--data-parallel-size", 1), nnodes = c.integer("--nnodes", 1);
    const int64_t world = tp * pp;
    const std::string executor =
        c.has("--distributed-executor-backend") ? c.options.at("--distributed-executor-backend") : "";
    const int64_t local = c.visibleGpus > 0 ? c.visibleGpus : gpn();
    if (s.model.attention.heads % tp != 0)
        fail("vLLM: " + str(s.model.attention.heads) + " attention heads do not divide by tensor parallel " +
             str(tp));
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
    const double util = std::stod(c.has("--gpu-memory-utilization") ? c.options.at("--gpu-memory-utilization")
                                                                    : std::string("0.9"));
    if (util <= 0 || util > 1) fail("vLLM: --gpu-memory-utilization outside (0, 1]");
    context(c.integer("--max-model-len", 0), "--max-model-len");
    if (dp * world > s.gpus()) fail("vLLM: " + str(dp * world) + " GPUs, more than the scenario's");
    vllmSpec(c, ver, tp, pp);
}

// --speculative-config, a JSON of SpeculativeConfig (vllm.cpp's rows: the method names each release runs,
// num_speculative_tokens > 0, ngram's prompt_lookup_min <= prompt_lookup_max, the draft or head that
// eagle3 and draft_model load, no pipeline up to 0.15.0, the head's heads dividing by tp).
void Checker::vllmSpec(const ParsedCommand& c, const EngineVersion& ver, int64_t tp, int64_t pp) {
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
             (s.model.architecture.empty() ? s.model.name : s.model.architecture) + " (" + ver.specSource +
             ")");
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

} // namespace sp::checking
