#pragma once
// Checks the cost model against measured runs (tests/data/calibration/measurements.yaml, or the user's own):
// each entry becomes a scenario and a plan, and the model's prediction of the measured metric is compared
// with the measured value. fitEfficiency() fits the cluster's efficiency factors to such runs.

#include "core/common/error.h"
#include "core/model/scenario.h"

#include <atomic>
#include <functional>
#include <limits>
#include <string>
#include <vector>

namespace sp {

struct CalibrationRow {
    std::string id;
    std::string metric;
    double measured = 0;
    double predicted = 0;
    double error = 0;      ///< predicted / measured - 1
    bool feasible = false; ///< whether the model thinks the configuration fits (memory, SLOs)
    std::string family;    ///< gpuFamilyOf the run's scenario
    std::string engine;    ///< engineOf the run's scenario
};

/// The errors of one GPU family's runs on one engine: how many and their median |error|. Each family has its
/// own fitted factors and each engine its own rules (memory, scheduling), so an error that one median hides
/// shows here.
struct ErrorGroup {
    std::string family, engine;
    size_t count = 0;
    double medianAbsError = 0;
};
/// The database family id of a scenario's GPU ("hopper", "blackwell", "cdna3", ...; "other" for a GPU the
/// database does not hold).
std::string gpuFamilyOf(const Scenario& s);
/// The engine whose rules the scenario runs with (kMemoryRuleNames: "vllm", "sglang", "trtllm").
std::string engineOf(const Scenario& s);
/// One group per (family, engine) present, ordered by family then engine; `errors` holds each figure's
/// family, engine and signed error.
struct GroupedError {
    std::string family, engine;
    double error = 0;
};
std::vector<ErrorGroup> groupErrors(const std::vector<GroupedError>& errors);

struct CalibrationReport {
    std::vector<CalibrationRow> rows;
    std::vector<std::string> skipped; ///< "id: why"
    double medianAbsError = 0;
    std::vector<ErrorGroup> groups; ///< the rows by GPU family and engine
};

/// One measured run, ready to predict: its scenario, the plan it ran, and the metric measured.
struct CalibrationCase {
    std::string id;
    /// The publication it comes from (publicationOf its row's source): runs of one table, blog or benchmark
    /// round share it, so a fit can hold out a whole source at once.
    std::string source;
    std::string metric; ///< output_tokens_per_s, input_tokens_per_s, total_tokens_per_s, ttft_ms, tpot_ms
    double measured = 0;
    Scenario scenario;
    Plan plan;
};

struct CalibrationSet {
    std::vector<CalibrationCase> cases;
    std::vector<std::string> skipped; ///< "id: why"
};

/// The publication a source address names, for grouping runs: the address without its query and fragment,
/// and on GitHub the repository and file (at any commit), or for an MLPerf results repository (a file under
/// closed/ or open/) the repository alone, one round's results being one publication.
std::string publicationOf(const std::string& source);

/// Reads measurements in the project's format. samplesDir holds models/ and clusters/; H800 comes from
/// clusters/ beside the measurements file.
Result<CalibrationSet> loadCalibrationSet(const std::string& measurementsPath, const std::string& samplesDir);

/// Reads the JSON that `vllm bench serve --save-result` writes (one run: output_throughput,
/// total_input_tokens, total_output_tokens, completed, max_concurrency, mean_ttft_ms, mean_tpot_ms) as cases
/// of `base` (the model and cluster it ran on) with `plan`: its output throughput, and its mean TPOT when the
/// run states its concurrency.
Result<CalibrationSet> loadVllmBenchResult(const std::string& path, const Scenario& base, const Plan& plan);

/// The model's prediction of a case's metric (its scenario's efficiency factors as they are).
CalibrationRow predictCase(const CalibrationCase& c);
/// Every case predicted, with the median absolute error.
CalibrationReport calibrationReport(const CalibrationSet& set);

/// loadCalibrationSet + calibrationReport.
Result<CalibrationReport> runCalibration(const std::string& measurementsPath, const std::string& samplesDir);

/// A fitted factor: its name (as in cluster files' efficiency map), start, result and bounds, and how well
/// the runs determine it.
struct FittedFactor {
    std::string name;
    double before = 0, after = 0, lo = 0, hi = 0;
    /// Whether the fit moved it (FitControl::factors, or every factor).
    bool fitted = true;
    /// One standard error, from the Jacobian of the log errors at the fit: sigma^2 (J^T J)^-1 with sigma^2
    /// the residual variance over (runs - factors free). NaN where `status` says why there is none.
    double stdError = std::numeric_limits<double>::quiet_NaN();
    /// "" (determined: stdError holds), "not fitted", "at its lower bound", "at its upper bound", "not seen
    /// by these runs" (no run's prediction moves with it), "not determined" (the runs move it only together
    /// with other factors: a direction of J^T J with no curvature), "too few runs" (no more runs than free
    /// factors).
    std::string status;
};

struct FitResult {
    Efficiency efficiency;             ///< the fitted factors
    std::vector<FittedFactor> factors; ///< each factor before and after, with its bounds
    CalibrationReport before, after;   ///< every case with the start factors and with the fitted ones
    std::vector<double> looErrors;     ///< per case: predicted / measured - 1 when fitted on the others
    double looMedianBefore = 0;        ///< median |error| before fitting (the same as before.medianAbsError)
    double looMedianAfter = 0;         ///< median |leave-one-out error| after
    /// Leave one source out: per case, predicted / measured - 1 with the factors fitted on the runs of every
    /// other source (CalibrationCase::source); empty where the runs come from fewer than two sources. A
    /// source the others contradict shows here where leave-one-out, which keeps its other runs, hides it.
    std::vector<double> losoErrors;
    struct SourceError {
        std::string source;
        int runs = 0;
        double medianAbsError = 0; ///< over its runs, held out together
    };
    std::vector<SourceError> bySource; ///< in the order sources first appear
    double losoMedianAfter = 0;        ///< median |leave-one-source-out error| over every case
    int objectiveEvaluations = 0;
    /// Stopped early (FitControl::bestSoFarOnStop): `fullFitDone` says whether the full fit converged; the
    /// leave-one-out errors are those of the first looErrors.size() cases.
    bool stopped = false;
    bool fullFitDone = true;
};

/// Fits the efficiency factors (compute, memory, NVLink, NIC, launch, two-batch overlap, grouped GEMM, KV
/// reads, op overlap, the fused-MoE stream; an unset fused-MoE stream starts at `memory`),
/// shared by every case, by least squares on log(predicted / measured) within physical bounds, starting from
/// `start` (coordinate descent with golden-section line searches in each factor). Every case's cluster takes
/// the fitted factors. With fewer than two cases there is nothing to fit: an error.
///
/// `control` lets a caller on another thread follow and stop it: `progress(done, total)` after each fit
/// (the full fit, then one per left-out case, then one per left-out source where there are two or more;
/// total = 1 + cases + sources with leave-one-out), and a set `stop` ends
/// it within one objective evaluation (a pass over the cases) with the error "fit stopped".
struct FitControl {
    const std::atomic<bool>* stop = nullptr;
    std::function<void(int done, int total)> progress;
    /// The factors to fit, by their cluster-file names ("compute", "compute_fp4", ...); empty: every one. The
    /// others keep their start values (a GPU family fitted on few runs moves only what differs physically).
    std::vector<std::string> factors;
    /// On stop, return what was fitted so far (FitResult::stopped) rather than the error "fit stopped": the
    /// best factors of the full fit when it was cut short (no leave-one-out), or the full fit with the
    /// leave-one-out fits done so far.
    bool bestSoFarOnStop = false;
    /// With leave-one-out, also hold out each source whole where the runs come from two or more
    /// (FitResult::losoErrors): one more fit a source.
    bool leaveSourceOut = true;
};
/// The names of the fit factors, in the order they are fitted.
std::vector<std::string> fitFactorNames();
Result<FitResult> fitEfficiency(const CalibrationSet& set, const Efficiency& start, bool leaveOneOut = true,
                                const FitControl& control = {});

/// The error text fitEfficiency returns when FitControl::stop was set.
inline constexpr const char* kFitStopped = "fit stopped";

} // namespace sp
