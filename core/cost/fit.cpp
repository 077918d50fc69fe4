// Fitting the efficiency factors to measured runs: least squares on log(predicted / measured), within
// physical bounds, by coordinate descent with a golden-section line search in each factor.

#include "core/cost/calibration.h"

#include <algorithm>
#include <cmath>

namespace sp {

namespace {

struct Factor {
    const char* name;
    double Efficiency::*member;
    double lo, hi;
};

// Bounds: what the hardware allows, not what fits best. GEMMs never reach the datasheet peak and rarely fall
// below a third of it; streaming kernels reach 50-90% of the datasheet HBM bandwidth (none reaches the
// datasheet figure: refresh, row switches, ECC); NCCL's bus bandwidth is 30-100% of
// the link's; kernel launches cost 0-50 us; overlap hides 0-100%; paged KV reads reach 30-100% of HBM.
const Factor kFactors[] = {
    {"compute", &Efficiency::compute, 0.3, 1.0},
    {"memory", &Efficiency::memory, 0.5, 0.9},
    {"intra_node", &Efficiency::intraNode, 0.3, 1.0},
    {"inter_node", &Efficiency::interNode, 0.3, 1.0},
    {"launch_us", &Efficiency::launchUs, 0.0, 50.0},
    {"overlap", &Efficiency::overlap, 0.0, 1.0},
    {"grouped_gemm", &Efficiency::groupedGemm, 0.3, 1.0},
    {"kv_read", &Efficiency::kvRead, 0.3, 1.0},
    {"op_overlap", &Efficiency::opOverlap, 0.0, 1.0},
    // The fused-MoE kernel's weight stream: as low as the 0.22-0.27 vLLM measured for its Triton kernel on
    // DeepSeek-V3's block-FP8 experts (cluster.h), as high as any stream.
    {"fused_moe_memory", &Efficiency::fusedMoeMemory, 0.15, 0.9},
    // FP4 GEMMs as a share of the FP4 peak: as low as a quarter (small-M GEMMs on the doubled peak), as high
    // as any GEMM. Runs without FP4 GEMMs leave it where it starts.
    {"compute_fp4", &Efficiency::computeFp4, 0.2, 1.0},
};

std::vector<CalibrationCase> withEfficiency(std::vector<CalibrationCase> cases, const Efficiency& e) {
    for (auto& c : cases) c.scenario.cluster.efficiency = e;
    return cases;
}

/// Sum of squared log errors; a prediction of nothing counts as a factor of 1000 off.
double objective(const std::vector<CalibrationCase>& cases, const Efficiency& e) {
    double sum = 0;
    for (auto c : cases) {
        c.scenario.cluster.efficiency = e;
        const CalibrationRow r = predictCase(c);
        const double l = r.predicted > 0 ? std::log(r.predicted / r.measured) : std::log(1000.0);
        sum += l * l;
    }
    return sum;
}

struct Stopped {
    Efficiency best;
};

Efficiency fitUntilStopped(const std::vector<CalibrationCase>& cases, Efficiency e, int& evaluations,
                           const std::atomic<bool>* stop, const std::vector<std::string>& only) {
    auto objective = [&](const std::vector<CalibrationCase>& cs, const Efficiency& x) {
        if (stop && stop->load(std::memory_order_relaxed)) throw Stopped{e};
        return sp::objective(cs, x);
    };
    double best = objective(cases, e);
    ++evaluations;
    const double phi = (std::sqrt(5.0) - 1.0) / 2.0;
    for (int sweep = 0; sweep < 40; ++sweep) { // coupled factors (memory, launch, op_overlap) converge slowly
        const double start = best;
        for (const Factor& f : kFactors) {
            if (!only.empty() && std::find(only.begin(), only.end(), f.name) == only.end()) continue;
            // Golden section on [lo, hi], then keep the better of it and the current value.
            double a = f.lo, b = f.hi;
            Efficiency t = e;
            auto at = [&](double v) {
                t.*f.member = v;
                ++evaluations;
                return objective(cases, t);
            };
            double x1 = b - phi * (b - a), x2 = a + phi * (b - a);
            double f1 = at(x1), f2 = at(x2);
            for (int i = 0; i < 24; ++i) {
                if (f1 < f2) {
                    b = x2, x2 = x1, f2 = f1;
                    x1 = b - phi * (b - a), f1 = at(x1);
                } else {
                    a = x1, x1 = x2, f1 = f2;
                    x2 = a + phi * (b - a), f2 = at(x2);
                }
            }
            const double v = (a + b) / 2.0, fv = at(v);
            if (fv < best) best = fv, e.*f.member = v;
        }
        if (start - best < 1e-9 * std::max(1.0, start)) break;
    }
    return e;
}

/// The fit; when `stop` is set, the best factors so far with `stopped` set (every factor of `e` is only ever
/// replaced by a better one, so the partial result is a consistent, improved set).
Efficiency fit(const std::vector<CalibrationCase>& cases, Efficiency e, int& evaluations,
               const std::atomic<bool>* stop, const std::vector<std::string>& only, bool& stopped) {
    try {
        return fitUntilStopped(cases, e, evaluations, stop, only);
    } catch (const Stopped& s) {
        stopped = true;
        return s.best;
    }
}

double medianAbs(const std::vector<double>& v) {
    std::vector<double> a;
    for (double x : v) a.push_back(std::fabs(x));
    std::sort(a.begin(), a.end());
    if (a.empty()) return 0.0;
    const size_t n = a.size();
    return n % 2 ? a[n / 2] : (a[n / 2 - 1] + a[n / 2]) / 2.0;
}

FitResult fitStoppable(const CalibrationSet& set, const Efficiency& from, bool leaveOneOut,
                       const FitControl& control) {
    const int total = 1 + (leaveOneOut ? int(set.cases.size()) : 0);
    // An unset fused-MoE stream runs at `memory`; the fit starts from that value, which prices alike.
    Efficiency start = from;
    start.fusedMoeMemory = start.fusedMoeStream();
    start.computeFp4 = start.fp4Compute(); // likewise FP4 GEMMs at `compute`
    FitResult r;
    CalibrationSet startSet = set;
    startSet.cases = withEfficiency(set.cases, start);
    r.before = calibrationReport(startSet);
    // Without bestSoFarOnStop a stop is the error "fit stopped" (fitEfficiency catches this).
    auto stopHere = [&] {
        if (!control.bestSoFarOnStop) throw Stopped{};
        r.stopped = true;
    };
    bool stopped = false;
    r.efficiency = fit(startSet.cases, start, r.objectiveEvaluations, control.stop, control.factors, stopped);
    if (stopped) {
        stopHere();
        r.fullFitDone = false;
    }
    if (control.progress && !stopped) control.progress(1, total);
    CalibrationSet fitted = set;
    fitted.cases = withEfficiency(set.cases, r.efficiency);
    r.after = calibrationReport(fitted);
    for (const Factor& f : kFactors)
        r.factors.push_back({f.name, start.*f.member, r.efficiency.*f.member, f.lo, f.hi});
    r.looMedianBefore = r.before.medianAbsError;
    if (leaveOneOut && !stopped) {
        // Each case predicted by factors fitted on the others (from the full fit, which is near).
        for (size_t i = 0; i < set.cases.size(); ++i) {
            std::vector<CalibrationCase> rest;
            for (size_t j = 0; j < set.cases.size(); ++j)
                if (j != i) rest.push_back(fitted.cases[j]);
            const Efficiency e =
                fit(rest, r.efficiency, r.objectiveEvaluations, control.stop, control.factors, stopped);
            if (stopped) { // this case's fit is cut short: its error would not be a leave-one-out one
                stopHere();
                break;
            }
            CalibrationCase c = set.cases[i];
            c.scenario.cluster.efficiency = e;
            r.looErrors.push_back(predictCase(c).error);
            if (control.progress) control.progress(int(i) + 2, total);
        }
        r.looMedianAfter = medianAbs(r.looErrors);
    }
    return r;
}

} // namespace

std::vector<std::string> fitFactorNames() {
    std::vector<std::string> out;
    for (const Factor& f : kFactors) out.emplace_back(f.name);
    return out;
}

Result<FitResult> fitEfficiency(const CalibrationSet& set, const Efficiency& start, bool leaveOneOut,
                                const FitControl& control) {
    for (const std::string& name : control.factors) {
        const auto names = fitFactorNames();
        if (std::find(names.begin(), names.end(), name) == names.end()) {
            std::string known;
            for (const auto& n : names) known += (known.empty() ? "" : ", ") + n;
            return Error{"", 0, 0, "factors", "unknown factor '" + name + "' (known: " + known + ")"};
        }
    }
    if (set.cases.size() < 2)
        return Error{"", 0, 0, "",
                     "fitting needs at least two measurements, found " + std::to_string(set.cases.size())};
    try {
        return fitStoppable(set, start, leaveOneOut, control);
    } catch (const Stopped&) {
        return Error{"", 0, 0, "", kFitStopped};
    }
}

} // namespace sp
