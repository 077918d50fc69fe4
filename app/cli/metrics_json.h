#pragma once
// JSON forms of the cost model's results, shared by the CLI verbs.
#include "core/cost/costmodel.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <string>

namespace sp::cli {

/// "TTFT 299.7 ms", and for serving what it is made of: "(the step in flight 23.7 + 2 chunk steps of 138.0)".
inline std::string ttftText(const sp::Metrics& m) {
    char buf[160];
    if (m.ttftChunks > 0)
        std::snprintf(buf, sizeof buf, "TTFT %.1f ms (the step in flight %.1f + %d chunk step%s of %.1f)",
                      m.ttftMs, m.spec.on() ? m.stepMs : m.tpotMs, m.ttftChunks, m.ttftChunks == 1 ? "" : "s",
                      m.chunkMs);
    else
        std::snprintf(buf, sizeof buf, "TTFT %.1f ms", m.ttftMs);
    return buf;
}

inline nlohmann::ordered_json metricsJson(const sp::Metrics& m) {
    nlohmann::ordered_json j;
    j["throughput_tokens_per_s"] = m.throughput;
    j["throughput_per_gpu"] = m.throughputPerGpu;
    j["ttft_ms"] = m.ttftMs;
    j["tpot_ms"] = m.tpotMs;
    if (m.ttftChunks > 0) j["ttft_chunks"] = m.ttftChunks, j["ttft_chunk_ms"] = m.chunkMs;
    j["batch"] = m.batch;
    j["prefill_budget"] = m.prefillBudget;
    j["two_batch_overlap"] = m.twoBatchOverlap;
    if (m.spec.on())
        j["speculative"] = {{"method", std::string(nameOf(m.spec.method))},
                            {"draft_tokens", m.spec.draftTokens},
                            {"tokens_per_step", m.tokensPerStep},
                            {"step_ms", m.stepMs},
                            {"tpot_ms_per_output_token", m.tpotMs}};
    j["memory_per_gpu_gib"] = m.memoryPerGpuGiB;
    j["memory"] = {{"weights_gib", m.weightsGiB},
                   {"kv_cache_gib", m.kvCacheGiB},
                   {"activations_gib", m.activationsGiB},
                   {"reserve_gib", m.reserveGiB},
                   {"capacity_gib", m.capacityGiB},
                   {"kv_pool_gib", m.kvPoolGiB},
                   {"gpu_memory_gib", m.gpuMemoryGiB},
                   {"engine_rule", std::string(kMemoryRuleNames[size_t(m.memoryRule)])},
                   {"memory_fraction", m.memoryFraction}};
    j["valid"] = m.valid;
    j["feasible"] = m.feasible;
    j["violations"] = m.violations;
    j["roofline_tokens_per_s"] = m.rooflineThroughput;
    j["roofline_fraction"] = m.rooflineFraction;
    return j;
}

inline nlohmann::ordered_json breakdownJson(const sp::Breakdown& b) {
    nlohmann::ordered_json j;
    j["phase"] = b.phase;
    j["stage_ms"] = b.stageMs;
    j["dense_layers"] = b.denseLayers;
    j["moe_layers"] = b.moeLayers;
    j["pipeline_transfer_ms"] = b.pipelineTransferMs;
    j["bubble_ms"] = b.bubbleMs;
    if (!b.draft.empty()) j["draft"] = {{"passes", b.draft}, {"time_ms", b.draftMs}};
    auto& ops = j["operators"] = nlohmann::ordered_json::array();
    for (const auto& o : b.ops)
        ops.push_back({{"layer", std::string(nameOf(o.layer))},
                       {"op", o.op},
                       {"choice", o.choice},
                       {"compute_ms", o.computeMs},
                       {"memory_ms", o.memoryMs},
                       {"time_ms", o.timeMs},
                       {"bound", o.layer == LayerKind::Draft ? "draft"
                                 : o.memoryBound             ? "memory"
                                                             : "compute"},
                       {"weight_bytes", o.weightBytes}});
    auto& cs = j["collectives"] = nlohmann::ordered_json::array();
    for (const auto& c : b.comms)
        cs.push_back({{"layer", std::string(nameOf(c.layer))},
                      {"where", c.where},
                      {"kind", std::string(nameOf(c.kind))},
                      {"link", std::string(nameOf(c.link))},
                      {"group", c.group},
                      {"bytes", c.bytes},
                      {"time_ms", c.timeMs}});
    return j;
}

} // namespace sp::cli
