#pragma once
// A disaggregated plan (core/model/disaggplan.h) as SGLang launches: the prefill pool's servers with
// --disaggregation-mode prefill, the decode pool's with --disaggregation-mode decode, and the KV cache moved
// between them by Mooncake (--disaggregation-transfer-backend mooncake).

#include "core/export/launch.h"
#include "core/model/disaggplan.h"

namespace sp {

struct DisaggLaunch {
    LaunchCommand prefill; ///< nodes 0 .. prefill nodes - 1
    LaunchCommand decode;  ///< the decode pool's nodes, numbered from 0 within the pool
    /// SGLang's PD router in front of both pools (`python3 -m sglang_router.launch_router
    /// --pd-disaggregation --prefill URL BOOTSTRAP_PORT ... --decode URL ...`): its environment (the
    /// addresses of the nodes that serve each server's API, which the user sets) and its command. Empty for
    /// Dynamo, whose frontend routes.
    NodeLaunch router;
    /// Dynamo only: both pools as one DynamoGraphDeployment (dynamo-graph.yaml: a frontend, prefill and
    /// decode workers), written at the top of the export folder.
    std::vector<std::pair<std::string, std::string>> deployFiles;
    /// What the two pools need beside their commands (the router in front of them), one sentence each.
    std::vector<std::string> notes;
    /// Both pools' commands as text, each under a heading, the router's, then the notes as `# ` comments.
    std::string text() const;
    /// The export folder's files: each pool's launchFiles() under prefill/ and decode/, router.sh (SGLang),
    /// and NOTES.txt with the notes above (write them with writeExportFiles).
    std::vector<ExportFile> files(const std::string& prefillYaml, const std::string& decodeYaml) const;
};

/// Each pool's plan exported on its own nodes (the prefill pool as a prefill workload, the decode pool as
/// a decode one), with the disaggregation flags added. SGLang only (its newest known version: the flags
/// were read there); an error naming the pool for anything its export refuses.
Result<DisaggLaunch> disaggregatedLaunch(const Scenario& scenario, const DisaggPlan& plan,
                                         const ExportOptions& options);

} // namespace sp
