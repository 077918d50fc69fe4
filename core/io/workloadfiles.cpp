// Workload files: the phase, the request lengths, the SLOs, the batch policy and the acceptance rates;
// reading and writing.

#include "core/io/formatsimpl.h"
#include "core/io/modelfields.h"

namespace sp::formats {

Workload readWorkload(const MapReader& r) {
    checkHeader(r, FileKind::Workload);
    r.allowKeys({"version", "kind", "name", "phase", "input_tokens", "output_tokens", "slo", "batch",
                 "kv_reservation", "acceptance_rates", "prefix_cache_hit"});
    Workload w;
    w.name = r.stringOr("name", "");
    w.phase = static_cast<Phase>(r.oneOf("phase", {"prefill", "decode", "serving"}));
    w.inputLengths = io::readLength(r, "input_tokens", w.inputTokens);
    w.outputTokens = 1;
    if (r.has("output_tokens")) w.outputLengths = io::readLength(r, "output_tokens", w.outputTokens);
    // Share of a prompt's tokens found in the prefix cache: below 1, since a prompt's last token is always
    // computed (its logits give the first output token).
    w.prefixCacheHit = r.numberOr("prefix_cache_hit", 0.0, 0.0, 0.99);
    if (r.has("slo")) {
        const MapReader s = r.map("slo");
        s.allowKeys({"ttft_ms", "tpot_ms", "percentile"});
        w.ttftMs = s.numberOr("ttft_ms", 0.0, 0.0, 1e9);
        w.tpotMs = s.numberOr("tpot_ms", 0.0, 0.0, 1e9);
        // 99: p99 TTFT and TPOT (MLPerf's server scenario); absent: the mean, as the analytical model checks.
        w.sloPercentile = s.numberOr("percentile", 0.0, 1.0, 100.0);
    }
    if (r.has("batch")) {
        const MapReader b = r.map("batch");
        b.allowKeys({"policy", "size"});
        w.fixedBatch = b.oneOfOr("policy", {"auto", "fixed"}, 0) == 1;
        if (w.fixedBatch)
            w.batch = b.integer("size", 1, 10'000'000);
        else if (b.has("size"))
            b.failAt("size", "only with policy: fixed");
    }
    w.kvReservation =
        static_cast<Workload::KvReservation>(r.oneOfOr("kv_reservation", {"paged", "worst"}, 0));
    // Speculative decoding's acceptance on this workload's text: one list for every method, or one per method
    // ({mtp: [...], eagle3: [...]}).
    if (r.has("acceptance_rates")) {
        if (r.node("acceptance_rates").IsMap()) {
            const MapReader a = r.map("acceptance_rates");
            a.allowKeys({"mtp", "eagle3", "draft", "ngram"});
            for (int m = 1; m < kSpecMethodCount; ++m)
                if (a.has(kSpecMethodNames[size_t(m)]))
                    w.acceptance[size_t(m)] = io::readAcceptanceRates(a, kSpecMethodNames[size_t(m)]);
        } else {
            const auto rates = io::readAcceptanceRates(r, "acceptance_rates");
            for (int m = 1; m < kSpecMethodCount; ++m) w.acceptance[size_t(m)] = rates;
        }
    }
    return w;
}

void emitWorkload(YAML::Emitter& e, const Workload& w) {
    static const char* phases[] = {"prefill", "decode", "serving"};
    e << YAML::BeginMap;
    e << YAML::Key << "version" << YAML::Value << 1 << YAML::Key << "kind" << YAML::Value << "workload";
    e << YAML::Key << "name" << YAML::Value << w.name << YAML::Key << "phase" << YAML::Value
      << phases[int(w.phase)];
    e << YAML::Key << "input_tokens" << YAML::Value;
    io::emitLength(e, w.inputLengths, w.inputTokens);
    e << YAML::Key << "output_tokens" << YAML::Value;
    io::emitLength(e, w.outputLengths, w.outputTokens);
    if (w.prefixCacheHit > 0) e << YAML::Key << "prefix_cache_hit" << YAML::Value << w.prefixCacheHit;
    e << YAML::Key << "slo" << YAML::Value << YAML::BeginMap << YAML::Key << "ttft_ms" << YAML::Value
      << w.ttftMs;
    e << YAML::Key << "tpot_ms" << YAML::Value << w.tpotMs;
    if (w.sloPercentile > 0) e << YAML::Key << "percentile" << YAML::Value << w.sloPercentile;
    e << YAML::EndMap;
    e << YAML::Key << "batch" << YAML::Value << YAML::BeginMap;
    e << YAML::Key << "policy" << YAML::Value << (w.fixedBatch ? "fixed" : "auto");
    if (w.fixedBatch) e << YAML::Key << "size" << YAML::Value << w.batch;
    e << YAML::EndMap;
    if (w.kvReservation == Workload::KvReservation::Worst)
        e << YAML::Key << "kv_reservation" << YAML::Value << "worst";
    bool anyRates = false, alike = true;
    for (int m = 1; m < kSpecMethodCount; ++m) {
        anyRates = anyRates || !w.acceptance[size_t(m)].empty();
        alike = alike && w.acceptance[size_t(m)] == w.acceptance[1];
    }
    if (anyRates && alike) {
        e << YAML::Key << "acceptance_rates" << YAML::Value << YAML::Flow << w.acceptance[1];
    } else if (anyRates) {
        e << YAML::Key << "acceptance_rates" << YAML::Value << YAML::BeginMap;
        for (int m = 1; m < kSpecMethodCount; ++m)
            if (!w.acceptance[size_t(m)].empty())
                e << YAML::Key << std::string(kSpecMethodNames[size_t(m)]) << YAML::Value << YAML::Flow
                  << w.acceptance[size_t(m)];
        e << YAML::EndMap;
    }
    e << YAML::EndMap;
}

} // namespace sp::formats
