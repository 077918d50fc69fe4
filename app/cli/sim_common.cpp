// What simulate, capacity and capacity --fleet share (sim_common.h).
#include "sim_common.h"

#include "metrics_json.h"

#include <cstdio>

namespace sp::cli {

namespace {

nlohmann::ordered_json percentilesJson(const Percentiles& p) {
    return {{"mean", p.mean}, {"p50", p.p50}, {"p90", p.p90},
            {"p99", p.p99},   {"max", p.max}, {"count", p.count}};
}

/// 100 points of a CDF: the value at each percentile 1..100.
nlohmann::ordered_json cdfJson(const std::vector<double>& sorted) {
    auto a = nlohmann::ordered_json::array();
    if (sorted.empty()) return a;
    for (int p = 1; p <= 100; ++p) a.push_back(percentileOf(sorted, p));
    return a;
}

} // namespace

std::string sloName(const Workload& w) {
    char buf[24] = "mean";
    if (w.sloPercentile > 0) std::snprintf(buf, sizeof buf, "p%g", w.sloPercentile);
    return buf;
}

nlohmann::ordered_json simJson(const SimResult& r, const Workload& w) {
    nlohmann::ordered_json j;
    j["setup"] = r.plan;
    j["requests"] = r.requests;
    j["completed"] = r.completed;
    j["stopped"] = r.stopped;
    if (!r.error.empty()) j["note"] = r.error;
    j["duration_s"] = r.durationS;
    j["offered_rate"] = r.offeredRate;
    j["steps"] = r.steps;
    j["mixed_steps"] = r.mixedSteps;
    j["ttft_ms"] = percentilesJson(r.ttftMs);
    j["tpot_ms"] = percentilesJson(r.tpotMs);
    j["itl_ms"] = percentilesJson(r.itlMs);
    j["e2e_ms"] = percentilesJson(r.e2eMs);
    j["throughput"] = {{"requests_per_s", r.requestsPerS},
                       {"output_tokens_per_s", r.outputTokensPerS},
                       {"total_tokens_per_s", r.totalTokensPerS},
                       {"sustained_output_tokens_per_s", r.sustainedOutputTokensPerS}};
    const SloCheck c = checkSlo(r, w);
    j["slo"] = {{"percentile", w.sloPercentile > 0 ? nlohmann::ordered_json(w.sloPercentile) : nullptr},
                {"ttft_ms", w.ttftMs > 0 ? nlohmann::ordered_json(w.ttftMs) : nullptr},
                {"tpot_ms", w.tpotMs > 0 ? nlohmann::ordered_json(w.tpotMs) : nullptr},
                {"ttft_at_percentile_ms", c.ttftMs},
                {"tpot_at_percentile_ms", c.tpotMs},
                {"met", c.met},
                {"goodput_requests_per_s", r.goodputRequestsPerS},
                {"attainment", r.sloAttainment}};
    j["mean_in_flight"] = r.meanInFlight;
    j["kv"] = {{"blocks_per_lane", r.kvBlocksPerLane}, {"block_tokens", r.blockTokens},
               {"peak_share", r.kvPeakShare},          {"mean_share", r.kvMeanShare},
               {"preemptions", r.preemptions},         {"admissions_blocked", r.admissionsBlockedByKv}};
    j["lanes"] = r.lanes;
    j["batch_cap"] = r.batchCap;
    j["token_budget"] = r.tokenBudget;
    j["scheduler"] = r.scheduler;
    j["cdf"] = {{"ttft_ms", cdfJson(r.ttftSortedMs)}, {"tpot_ms", cdfJson(r.tpotSortedMs)}};
    auto tl = nlohmann::ordered_json::array();
    for (const auto& p : r.timeline)
        tl.push_back({{"t_s", p.t}, {"waiting", p.waiting}, {"running", p.running}, {"kv_share", p.kvShare}});
    j["timeline"] = tl;
    return j;
}

std::string readSimOptions(Args& a, SimOptions& o) {
    o.requests = a.integer("requests").value_or(kDefaultRequests);
    o.rate = a.number("rate").value_or(0.0);
    o.burstCv = a.number("burst-cv").value_or(1.0);
    o.duration = a.number("duration").value_or(0.0);
    o.seed = uint64_t(a.integer("seed").value_or(1));
    o.batchCap = a.integer("batch-cap").value_or(0);
    if (!a.ok()) return a.error();
    if (auto r = a.option("routing")) {
        if (*r == "least-loaded")
            o.routing = Routing::LeastLoaded;
        else if (*r == "round-robin")
            o.routing = Routing::RoundRobin;
        else
            return "--routing must be least-loaded or round-robin, not '" + *r + "'";
    }
    return "";
}

std::string sloText(const Workload& w) {
    char buf[160];
    std::snprintf(buf, sizeof buf, "%s TTFT %s ms, TPOT %s ms", sloName(w).c_str(),
                  w.ttftMs > 0 ? thousands(w.ttftMs, "%.4g").c_str() : "-",
                  w.tpotMs > 0 ? thousands(w.tpotMs, "%.4g").c_str() : "-");
    return buf;
}

} // namespace sp::cli
