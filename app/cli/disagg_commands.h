#pragma once
// The disaggregated prefill/decode side of the CLI verbs (core/cost/disagg.h): evaluate and compare plan
// files that split the cluster into a prefill and a decode pool, and search --disaggregated.
#include "core/export/launch.h"
#include "core/model/scenario.h"

#include <optional>

#include <string>
#include <vector>

namespace sp::cli {

/// shardplan evaluate --scenario S --plan DISAGG [--load L] [--json].
int evaluateDisaggregated(const Scenario& s, const std::string& planPath, bool json, double load);
/// shardplan compare --scenario S A B [--json] where A or B (or both) is a disaggregated plan: the
/// rate-matched metrics beside the aggregated ones.
int compareDisaggregated(const Scenario& s, const std::vector<std::string>& files, bool json);
/// shardplan export --scenario S --plan DISAGG (--format json|yaml | --engine sglang) [--out F | --out-dir
/// D]: the plan file again, or both pools' SGLang launches (--out-dir: D/prefill and D/decode).
int exportDisaggregated(const Scenario& s, const std::string& planPath,
                        const std::optional<std::string>& format, const ExportOptions& options,
                        const std::optional<std::string>& out, const std::optional<std::string>& outDir);
/// shardplan search --scenario S --disaggregated [--searcher NAME] [--budget N] ... (search_commands.cpp
/// hands over the parsed options).
struct DisaggSearchArgs {
    std::string searcher = "sa";
    int64_t budget = 0;
    double seconds = 0;
    uint64_t seed = 1;
    int threads = 0;
    std::string out;
    bool json = false;
    bool warm = true; ///< false: no starts carried between pool sizes
};
int searchDisaggregated(const Scenario& s, const std::string& scenarioPath, const DisaggSearchArgs& a);

} // namespace sp::cli
