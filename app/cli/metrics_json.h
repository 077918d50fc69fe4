#pragma once
// JSON forms of the cost model's results, shared by the CLI verbs.
#include "core/cost/costmodel.h"
#include "core/cost/economics.h"
#include "core/io/gpudb.h"

#include <nlohmann/json.hpp>

#include <algorithm>
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

/// x with thousands separators on its integer part: "48,022", thousands(0.85, "%.3f") = "0.850".
inline std::string thousands(double x, const char* fmt = "%.0f") {
    char buf[64];
    std::snprintf(buf, sizeof buf, fmt, x);
    const std::string s = buf;
    const size_t dot = std::min(s.find('.'), s.size());
    const size_t start = !s.empty() && s[0] == '-' ? 1 : 0;
    std::string out;
    for (size_t i = 0; i < s.size(); ++i) {
        if (i > start && i < dot && (dot - i) % 3 == 0) out.push_back(',');
        out.push_back(s[i]);
    }
    return out;
}

/// What a plan's throughput costs on the scenario's GPUs (core/cost/economics.h).
inline sp::ServingCost planCost(const sp::Scenario& s, const sp::Metrics& m) {
    return sp::servingCost(s.cluster, s.gpus(), m.throughput);
}
/// The tokens a scenario's throughput counts: prompt tokens for a prefill workload, else output tokens.
inline const char* tokensWord(const sp::Scenario& s) {
    return s.workload.phase == sp::Phase::Prefill ? "prompt tokens" : "output tokens";
}

/// Dollars per million tokens and tokens/s per megawatt of GPU board power: the "cost" object the verbs
/// report (null where the price or the TDP is unknown).
inline nlohmann::ordered_json costJson(const sp::ServingCost& c) {
    using J = nlohmann::ordered_json;
    J j;
    j["usd_per_gpu_hour"] = c.priced ? J(c.usdPerGpuHour) : J(nullptr);
    j["usd_per_hour"] = c.priced ? J(c.usdPerHour) : J(nullptr);
    j["usd_per_million_tokens"] =
        c.priced && c.usdPerMillionTokens > 0 ? J(c.usdPerMillionTokens) : J(nullptr);
    j["price_source"] = c.priced ? J(c.priceSource) : J(nullptr);
    if (!c.mix.empty()) j["gpu_mix"] = c.mix;
    j["tdp_w"] = c.powered ? J(c.tdpW) : J(nullptr);
    j["tokens_per_s_per_mw"] = c.powered ? J(c.tokensPerSPerMegawatt) : J(nullptr);
    j["energy_basis"] = "GPU board power (TDP), not measured draw";
    return j;
}

/// "$0.850 per million output tokens at $2.99 a GPU-hour (source); 243,567 tokens/s per MW of GPU TDP (...)".
inline std::string costText(const sp::ServingCost& c, const char* tokens = "output tokens") {
    std::string s;
    char buf[400];
    if (c.priced && c.usdPerMillionTokens > 0 && !c.mix.empty()) {
        std::snprintf(buf, sizeof buf, "$%.3f per million %s, $%.2f an hour: %s (%s)", c.usdPerMillionTokens,
                      tokens, c.usdPerHour, c.mix.c_str(), c.priceSource.c_str());
        s = buf;
    } else if (c.priced && c.usdPerMillionTokens > 0) {
        std::snprintf(buf, sizeof buf, "$%.3f per million %s at $%.4g a GPU-hour (%s)", c.usdPerMillionTokens,
                      tokens, c.usdPerGpuHour, c.priceSource.c_str());
        s = buf;
    } else {
        s = "no price for this GPU in the price list (" + sp::priceBasis() +
            "): give price_per_gpu_hour in the cluster file, or --prices FILE";
    }
    if (c.powered) {
        std::snprintf(buf, sizeof buf, "; %s tokens/s per MW of GPU TDP (%.0f W a GPU%s; not measured draw)",
                      thousands(c.tokensPerSPerMegawatt).c_str(), c.tdpW, c.mix.empty() ? "" : " on average");
        s += buf;
    } else {
        s += "; no TDP for this GPU (give tdp_w in the cluster file's gpu)";
    }
    return s;
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
