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

/// Each case's log(predicted / measured) with the factors e (a prediction of nothing: log 1000).
std::vector<double> logErrors(const std::vector<CalibrationCase>& cases, const Efficiency& e) {
    std::vector<double> out;
    for (auto c : cases) {
        c.scenario.cluster.efficiency = e;
        const CalibrationRow r = predictCase(c);
        out.push_back(r.predicted > 0 ? std::log(r.predicted / r.measured) : std::log(1000.0));
    }
    return out;
}

/// Sum of squared log errors; a prediction of nothing counts as a factor of 1000 off.
double objective(const std::vector<CalibrationCase>& cases, const Efficiency& e) {
    double sum = 0;
    for (double l : logErrors(cases, e)) sum += l * l;
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
    for (int sweep = 0; sweep < 80; ++sweep) { // coupled factors (memory, launch, op_overlap) converge slowly
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

/// How well the runs determine each fitted factor: at the fit e, the Jacobian J of the log errors in the free
/// factors (central differences; one-sided beside a bound), sigma^2 = sum r^2 / (n - p), and the standard errors
/// sqrt(diag(sigma^2 (J^T J)^-1)). A factor at a bound is held there (the fit pushed it out of the physical range,
/// so the data would move it further: the bound binds, not the data); one whose column is zero is not seen; a
/// pivot of J^T J that vanishes against its diagonal is a direction the runs cannot see (collinear factors: both
/// are "not determined").
void uncertainties(const std::vector<CalibrationCase>& cases, const Efficiency& e, std::vector<FittedFactor>& out) {
    const std::vector<double> r0 = logErrors(cases, e);
    const size_t n = r0.size();
    std::vector<size_t> freeIdx;
    std::vector<std::vector<double>> cols;
    for (size_t j = 0; j < out.size(); ++j) {
        FittedFactor& f = out[j];
        if (!f.fitted) {
            f.status = "not fitted";
            continue;
        }
        const double span = f.hi - f.lo, v = f.after;
        if (v - f.lo <= 1e-3 * span) {
            f.status = "at its lower bound";
            continue;
        }
        if (f.hi - v <= 1e-3 * span) {
            f.status = "at its upper bound";
            continue;
        }
        const double h = std::min({1e-3 * span, v - f.lo, f.hi - v});
        Efficiency up = e, dn = e;
        up.*kFactors[j].member = v + h;
        dn.*kFactors[j].member = v - h;
        const std::vector<double> ru = logErrors(cases, up), rd = logErrors(cases, dn);
        std::vector<double> col(n);
        double norm = 0;
        for (size_t i = 0; i < n; ++i) col[i] = (ru[i] - rd[i]) / (2.0 * h), norm += col[i] * col[i];
        if (norm < 1e-18) {
            f.status = "not seen by these runs";
            continue;
        }
        freeIdx.push_back(j);
        cols.push_back(std::move(col));
    }
    const size_t p = freeIdx.size();
    if (p == 0) return;
    if (n <= p) {
        for (size_t j : freeIdx) out[j].status = "too few runs";
        return;
    }
    double ssr = 0;
    for (double x : r0) ssr += x * x;
    const double sigma2 = ssr / double(n - p);
    // J^T J and its inverse by Gauss-Jordan with partial pivoting (p is at most a dozen).
    std::vector<std::vector<double>> a(p, std::vector<double>(2 * p, 0.0));
    for (size_t k = 0; k < p; ++k) {
        for (size_t l = 0; l < p; ++l)
            for (size_t i = 0; i < n; ++i) a[k][l] += cols[k][i] * cols[l][i];
        a[k][p + k] = 1.0;
    }
    std::vector<double> diag(p);
    for (size_t k = 0; k < p; ++k) diag[k] = a[k][k];
    std::vector<bool> blind(p, false);
    for (size_t c = 0; c < p; ++c) {
        size_t piv = c;
        for (size_t k = c + 1; k < p; ++k)
            if (std::fabs(a[k][c]) > std::fabs(a[piv][c])) piv = k;
        std::swap(a[c], a[piv]);
        if (std::fabs(a[c][c]) <= 1e-10 * diag[c]) { // no curvature left in this direction
            blind[c] = true;
            a[c][c] = 1.0;
            for (size_t l = 0; l < 2 * p; ++l)
                if (l != c) a[c][l] = 0.0;
        }
        const double d = a[c][c];
        for (size_t l = 0; l < 2 * p; ++l) a[c][l] /= d;
        for (size_t k = 0; k < p; ++k) {
            if (k == c || a[k][c] == 0.0) continue;
            const double m = a[k][c];
            for (size_t l = 0; l < 2 * p; ++l) a[k][l] -= m * a[c][l];
        }
    }
    const bool anyBlind = std::find(blind.begin(), blind.end(), true) != blind.end();
    for (size_t k = 0; k < p; ++k) {
        FittedFactor& f = out[freeIdx[k]];
        const double var = sigma2 * a[k][p + k];
        // A blind direction spreads over the factors it mixes: their variance is unbounded, so huge here.
        if (blind[k] || (anyBlind && !(var < 1e6 * (f.hi - f.lo) * (f.hi - f.lo))) || !(var >= 0)) {
            f.status = "not determined";
            continue;
        }
        f.stdError = std::sqrt(var);
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
    std::vector<std::string> sources; // in the order they first appear
    for (const CalibrationCase& c : set.cases)
        if (std::find(sources.begin(), sources.end(), c.source) == sources.end()) sources.push_back(c.source);
    const int bySource = control.leaveSourceOut && sources.size() >= 2 ? int(sources.size()) : 0;
    const int total = 1 + (leaveOneOut ? int(set.cases.size()) + bySource : 0);
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
    for (const Factor& f : kFactors) {
        FittedFactor x;
        x.name = f.name, x.before = start.*f.member, x.after = r.efficiency.*f.member, x.lo = f.lo, x.hi = f.hi;
        x.fitted = control.factors.empty() ||
                   std::find(control.factors.begin(), control.factors.end(), f.name) != control.factors.end();
        r.factors.push_back(x);
    }
    if (!stopped) uncertainties(fitted.cases, r.efficiency, r.factors);
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
    if (leaveOneOut && !stopped && bySource > 0) {
        // Each source's runs predicted by factors fitted on the other sources' runs.
        std::vector<double> loso(set.cases.size(), 0.0);
        for (size_t s = 0; s < sources.size(); ++s) {
            std::vector<CalibrationCase> rest;
            for (size_t j = 0; j < set.cases.size(); ++j)
                if (set.cases[j].source != sources[s]) rest.push_back(fitted.cases[j]);
            const Efficiency e =
                fit(rest, r.efficiency, r.objectiveEvaluations, control.stop, control.factors, stopped);
            if (stopped) { // cut short: no source's errors are given rather than some
                stopHere();
                break;
            }
            FitResult::SourceError se;
            se.source = sources[s];
            std::vector<double> mine;
            for (size_t i = 0; i < set.cases.size(); ++i) {
                if (set.cases[i].source != sources[s]) continue;
                CalibrationCase c = set.cases[i];
                c.scenario.cluster.efficiency = e;
                loso[i] = predictCase(c).error;
                mine.push_back(loso[i]);
            }
            se.runs = int(mine.size());
            se.medianAbsError = medianAbs(mine);
            r.bySource.push_back(se);
            if (control.progress) control.progress(1 + int(set.cases.size()) + int(s) + 1, total);
        }
        if (!stopped) {
            r.losoErrors = loso;
            r.losoMedianAfter = medianAbs(loso);
        } else {
            r.bySource.clear();
        }
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
