// Disaggregated SGLang launches: each pool exported by the SGLang exporter (sglang.cpp) on its own nodes,
// then marked as a prefill or decode server.
//
// Flags: python/sglang/srt/server_args.py of sgl-project/sglang at commit 001067fffe33 (the version the
// SGLang exporter reads): ServerArgs._handle_load_balance_method accepts disaggregation_mode "null",
// "prefill" or "decode" (the CLI flag --disaggregation-mode derives from the field name, as the ServerArgs
// docstring says of every field), and DISAGG_TRANSFER_BACKEND_CHOICES lists the KV transfer backends of
// --disaggregation-transfer-backend ("mooncake", "nixl", ...). Mooncake is the backend whose measured
// bandwidth the cost layer uses (core/cost/disagg.h, kKvTransferEfficiency).

#include "core/export/disagg_launch.h"

#include "core/cost/disagg.h"

namespace sp {

namespace {

void markServers(LaunchCommand& lc, const char* mode) {
    const auto mark = [mode](std::vector<std::string>& argv) {
        const bool sglang = argv.size() >= 3 && argv[2] == "sglang.launch_server";
        if (!sglang) return;
        argv.insert(argv.end(),
                    {"--disaggregation-mode", mode, "--disaggregation-transfer-backend", "mooncake"});
    };
    mark(lc.argv);
    // The single-pool export's remark that a prefill-only or decode-only workload would need these flags.
    std::erase_if(lc.notes, [](const std::string& n) {
        return n.find("(the disaggregation flags are not mapped)") != std::string::npos;
    });
    for (NodeLaunch& n : lc.nodes)
        for (auto& cmd : n.commands) mark(cmd);
}

std::string commented(const std::string& text) {
    std::string out = "# ";
    for (char ch : text) {
        out.push_back(ch);
        if (ch == '\n') out += "# ";
    }
    return out + "\n";
}

} // namespace

std::string DisaggLaunch::text() const {
    std::string out = "# prefill pool\n" + prefill.text() + "\n# decode pool\n" + decode.text();
    if (!notes.empty()) {
        out += "\n";
        for (const auto& n : notes) out += commented(n);
    }
    return out;
}

Result<DisaggLaunch> disaggregatedLaunch(const Scenario& s, const DisaggPlan& p, const ExportOptions& o) {
    if (o.engine != ServingEngine::Sglang)
        return Error{
            "", 0, 0, "",
            "a disaggregated plan exports to SGLang only (its --disaggregation-mode prefill/decode)"};
    const auto& versions = engineVersions(ServingEngine::Sglang);
    if (!o.version.empty() && o.version != versions.back().version)
        return Error{"", 0, 0, "",
                     "the disaggregation flags were read from SGLang " + versions.back().version +
                         " only; export without --engine-version or with " + versions.back().version};
    const DisaggModel dm(s);
    if (auto why = dm.checkSplit(p.prefill.nodes, p.decode.nodes)) return Error{"", 0, 0, "", *why};
    DisaggLaunch out;
    const auto pool = [&](const char* name, Phase phase, const DisaggPool& q, LaunchCommand& lc) -> Error {
        Scenario ps = poolScenario(s, phase, q.nodes);
        auto r = launchCommand(ps, q.plan, o);
        if (!r) {
            Error e = r.error();
            e.message = std::string(name) + " pool: " + e.message;
            return e;
        }
        lc = std::move(r).value();
        markServers(lc, name);
        return {};
    };
    if (Error e = pool("prefill", Phase::Prefill, p.prefill, out.prefill); !e.message.empty()) return e;
    if (Error e = pool("decode", Phase::Decode, p.decode, out.decode); !e.message.empty()) return e;
    out.notes.push_back(
        "Disaggregated: " + std::to_string(p.prefill.nodes) + " prefill node(s) and " +
        std::to_string(p.decode.nodes) +
        " decode node(s); the decode pool's node numbers start again at 0. Put SGLang's PD router in "
        "front of both pools (docs.sglang.io/advanced_features/pd_disaggregation.html); the KV cache moves "
        "over the NICs with Mooncake, which needs its RDMA devices named for SGLang on clusters with "
        "several.");
    return out;
}

} // namespace sp
