// Disaggregated SGLang launches: each pool exported by the SGLang exporter (sglang.cpp) on its own nodes,
// then marked as a prefill or decode server.
//
// Flags: python/sglang/srt/server_args.py of sgl-project/sglang at commit 001067fffe33 (the version the
// SGLang exporter reads): ServerArgs._handle_load_balance_method accepts disaggregation_mode "null",
// "prefill" or "decode" (the CLI flag --disaggregation-mode derives from the field name, as the ServerArgs
// docstring says of every field), and DISAGG_TRANSFER_BACKEND_CHOICES lists the KV transfer backends of
// --disaggregation-transfer-backend ("mooncake", "nixl", ...). Mooncake is the backend whose measured
// bandwidth the cost layer uses (core/cost/disagg.h, kKvTransferEfficiency).
//
// Dynamo (ai-dynamo/dynamo): one frontend for both pools, and workers marked by role.
//  - components/src/dynamo/vllm/backend_args.py at d195d280e13e: `--disaggregation-mode` with the
//    DisaggregationMode values agg, prefill, decode (`--is-prefill-worker` is deprecated there);
//    components/src/dynamo/vllm/args.py at 000a36a7399a: a prefill worker must be given
//    `--kv-transfer-config` (its error message's example: {"kv_connector":"NixlConnector",
//    "kv_role":"kv_both"}), which the decode worker takes too to receive the cache;
//  - dynamo.sglang takes SGLang's own server arguments, so its workers carry SGLang's
//    `--disaggregation-mode` with the NIXL transfer backend (DISAGG_TRANSFER_BACKEND_CHOICES above);
//  - dynamo.trtllm's prefill/decode workers also need TensorRT-LLM's cache transceiver options in
//    their engine YAML, which this exporter has not read: refused.

#include "core/export/disagg_launch.h"

#include "core/cost/disagg.h"
#include "core/export/common.h"

#include <algorithm>

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

const char* const kNixlKvTransfer = R"({"kv_connector":"NixlConnector","kv_role":"kv_both"})";

/// Dynamo's workers as prefill or decode workers; the decode pool drops its copy of the frontend (one
/// frontend routes to both pools).
void markDynamoWorkers(LaunchCommand& lc, const char* mode, bool keepFrontend) {
    const auto mark = [mode](std::vector<std::string>& argv) {
        for (size_t i = 0; i + 2 < argv.size(); ++i) {
            if (argv[i] != "python3" || argv[i + 1] != "-m") continue;
            if (argv[i + 2] == "dynamo.vllm")
                argv.insert(argv.end(),
                            {"--disaggregation-mode", mode, "--kv-transfer-config", kNixlKvTransfer});
            else if (argv[i + 2] == "dynamo.sglang")
                argv.insert(argv.end(),
                            {"--disaggregation-mode", mode, "--disaggregation-transfer-backend", "nixl"});
            return;
        }
    };
    const auto isFrontend = [](const std::vector<std::string>& argv) {
        return std::find(argv.begin(), argv.end(), "dynamo.frontend") != argv.end();
    };
    mark(lc.argv);
    std::erase_if(lc.notes, [](const std::string& n) {
        return n.find("(the disaggregation flags are not mapped)") != std::string::npos;
    });
    for (NodeLaunch& n : lc.nodes) {
        if (!keepFrontend) {
            const auto before = n.commands.size();
            std::erase_if(n.commands, isFrontend);
            n.background -= std::min(n.background, before - n.commands.size());
        }
        for (auto& cmd : n.commands) mark(cmd);
    }
}

} // namespace

std::string DisaggLaunch::text() const {
    std::string out = "# prefill pool\n" + prefill.text() + "\n# decode pool\n" + decode.text();
    if (!notes.empty()) {
        out += "\n";
        for (const auto& n : notes) out += exporting::commentLines(n);
    }
    return out;
}

std::vector<ExportFile> DisaggLaunch::files(const std::string& prefillYaml,
                                            const std::string& decodeYaml) const {
    std::vector<ExportFile> out = launchFiles(prefill, prefillYaml, "prefill/");
    for (ExportFile& f : launchFiles(decode, decodeYaml, "decode/")) out.push_back(std::move(f));
    std::string text =
        std::string(nameOf(prefill.engine)) + " " + prefill.version +
        ", disaggregated: prefill/ and decode/ hold each pool's node scripts, plan and notes.\n\n";
    for (const auto& n : notes) text += n + "\n\n";
    out.push_back({"NOTES.txt", text, false});
    return out;
}

Result<DisaggLaunch> disaggregatedLaunch(const Scenario& s, const DisaggPlan& p, const ExportOptions& o) {
    const bool dynamo = o.engine == ServingEngine::Dynamo;
    if (o.engine != ServingEngine::Sglang && !dynamo)
        return Error{
            "", 0, 0, "",
            "a disaggregated plan exports to SGLang (its --disaggregation-mode prefill/decode) or to "
            "Dynamo with vLLM or SGLang workers"};
    if (dynamo && o.dynamoWorker == ServingEngine::Trtllm)
        return Error{"", 0, 0, "",
                     "Dynamo's TensorRT-LLM prefill and decode workers need the engine's cache transceiver "
                     "options, which this exporter does not write: use --worker vllm or sglang"};
    const auto& versions = engineVersions(ServingEngine::Sglang);
    if (!dynamo && !o.version.empty() && o.version != versions.back().version)
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
        if (dynamo)
            markDynamoWorkers(lc, name, phase == Phase::Prefill);
        else
            markServers(lc, name);
        return {};
    };
    if (Error e = pool("prefill", Phase::Prefill, p.prefill, out.prefill); !e.message.empty()) return e;
    if (Error e = pool("decode", Phase::Decode, p.decode, out.decode); !e.message.empty()) return e;
    const std::string split = "Disaggregated: " + std::to_string(p.prefill.nodes) + " prefill node(s) and " +
                              std::to_string(p.decode.nodes) +
                              " decode node(s); the decode pool's node numbers start again at 0. ";
    if (dynamo)
        out.notes.push_back(split +
                            "The frontend on the prefill pool's node 0 routes to both pools' workers (they "
                            "register through the same etcd and NATS); the KV cache moves over NIXL.");
    else
        out.notes.push_back(
            split +
            "Put SGLang's PD router in front of both pools "
            "(docs.sglang.io/advanced_features/pd_disaggregation.html); the KV cache moves over the NICs "
            "with Mooncake, which needs its RDMA devices named for SGLang on clusters with several.");
    return out;
}

} // namespace sp
