#pragma once
// The simulation against published serving measurements that state a request rate and latency percentiles
// (MLPerf Inference server-scenario results: Poisson arrivals at a target rate, p99 TTFT and TPOT under the
// benchmark's limits). Each check is a scenario, the plan the submission ran, the rate, and the figures
// measured; runServingChecks simulates each and gives the error of every figure.

#include "core/common/error.h"
#include "core/cost/calibration.h"
#include "core/model/scenario.h"
#include "core/sim/simulator.h"

#include <stop_token>
#include <string>
#include <vector>

namespace sp {

struct ServingCheck {
    std::string id, source;
    Scenario scenario;
    Plan plan;
    double rate = 0; ///< requests/s, as the run's loadgen issued them
    /// TensorRT-LLM runs: the harness's capacity policy (`capacity_policy`, default the engine's).
    SimOptions::TrtllmCapacity trtllmCapacity = SimOptions::TrtllmCapacity::GuaranteedNoEvict;
    /// Measured figures by name: ttft_mean_ms, ttft_p99_ms, tpot_mean_ms, tpot_p99_ms, output_tokens_per_s.
    std::vector<std::pair<std::string, double>> measured;
    /// The same system's output tokens/s at full load with the same configuration (`offline_tokens_per_s`:
    /// MLPerf's offline scenario), where one is held; 0: none. The run's rate over it is the load the real
    /// system carried, which the check also simulates on the model's capacity (ServingCheckReport::matched).
    double offlineTokensPerS = 0;
};

/// A checks file (tests/data/calibration/mlperf-server-sim.yaml): models from samplesDir/models, clusters
/// from samplesDir/clusters, each check's workload (its length distributions and SLOs) inline.
Result<std::vector<ServingCheck>> loadServingChecks(const std::string& path, const std::string& samplesDir);

struct ServingCheckRow {
    std::string id, figure;
    double measured = 0, simulated = 0;
    double error = 0;           ///< simulated / measured - 1
    std::string family, engine; ///< gpuFamilyOf, engineOf the check's scenario
};
struct ServingCheckReport {
    std::vector<ServingCheckRow> rows;
    /// Per check: the cost model's steady-state output tokens/s at the largest batch the plan can run
    /// (servingCapacity) beside the run's measured rate; latency near capacity is steep, so this ratio
    /// explains most latency errors.
    struct Load {
        std::string id;
        double analyticalTokensPerS = 0, measuredTokensPerS = 0;
    };
    std::vector<Load> loads;
    /// Where a check holds its system's offline throughput: its latencies simulated at the load the real run
    /// carried (its output rate over that throughput) on the model's capacity, rather than at its rate. Near
    /// capacity a few percent of capacity is a factor in TPOT (1 / (1 - load)); here the capacity's error is
    /// taken out and what is left is the step time's and the scheduling's. Figures and errors as in `rows`
    /// (output_tokens_per_s is the rate asked, so it is left out); not in the median.
    struct Matched {
        std::string id;
        double load = 0; ///< the real run's: measured output tokens/s over offlineTokensPerS
        double rate = 0; ///< requests/s simulated: the check's rate x model capacity / offline throughput
        std::vector<ServingCheckRow> rows;
    };
    std::vector<Matched> matched;
    double medianAbsError = 0;
    std::vector<ErrorGroup> groups; ///< the rows by GPU family and engine
    bool interrupted = false; ///< a stop request ended the run: the rows cover the checks that completed
};
/// The cost model's capacity for a check: steady-state output tokens/s at the largest batch its plan runs,
/// the plan's batch cap where the token budget and memory allow it, else the largest they allow (a step holds
/// at most the budget's tokens, so a cap of 2,048 sequences under a 1,536-token budget never runs whole),
/// without the latency SLOs (the simulation runs at the check's rate whatever its latency).
double servingCapacity(const ServingCheck& c);

/// Each check simulated at its rate (seed fixed) for as long as MLPerf's server runs last at least, 600 s
/// (`*.Server.min_duration = 600000` ms, mlcommons/inference language/llama2-70b/mlperf.conf at 42e800b), and
/// for at least `requests` requests; its figures beside the measured (over every request, as loadgen reports
/// them). `durationS` 0 takes `requests` alone.
/// A stop request ends the run between checks and inside a simulation: the report then holds the checks that
/// completed, and `interrupted` is set.
ServingCheckReport runServingChecks(const std::vector<ServingCheck>& checks, int64_t requests,
                                    uint64_t seed = 1, double durationS = 600, std::stop_token stop = {});

} // namespace sp
