// shardplan calibrate: the cost model against public measurements, --fit (the efficiency factors fitted to
// measured runs, with their uncertainties) and --serving (the simulation against MLPerf server runs); each
// report also by GPU family and engine.
#include "cost_commands.h"

#include "args.h"
#include "common.h"
#include "interrupt.h"
#include "metrics_json.h"
#include "verbs.h"

#include "core/cost/calibration.h"
#include "core/io/formats.h"
#include "core/io/gpudb.h"
#include "core/sim/servingchecks.h"

#include <atomic>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <unistd.h>

namespace sp::cli {

namespace {

nlohmann::ordered_json rowsJson(const CalibrationReport& rep) {
    auto rows = nlohmann::ordered_json::array();
    for (const auto& r : rep.rows)
        rows.push_back({{"id", r.id},
                        {"family", r.family},
                        {"engine", r.engine},
                        {"metric", r.metric},
                        {"measured", r.measured},
                        {"predicted", r.predicted},
                        {"error", r.error},
                        {"feasible", r.feasible}});
    return rows;
}

std::string fmt(double x, const char* f) {
    char buf[64];
    std::snprintf(buf, sizeof buf, f, x);
    return buf;
}

int reportFit(const FitResult& f, const std::string& source, const Args& a, const std::string& clusterPath) {
    const bool json = a.flag("json");
    std::string written;
    if (auto out = a.option("out")) {
        auto c = loadCluster(clusterPath);
        if (!c) {
            std::cerr << c.error().str() << "\n";
            return kBadInput;
        }
        Cluster fitted = c.value();
        fitted.efficiency = f.efficiency;
        char head[400];
        std::snprintf(
            head, sizeof head,
            "# %s with its efficiency factors fitted by `shardplan calibrate --fit` to %zu measured runs\n"
            "# in %s: median |error| %.1f%% before, %.1f%% after, %.1f%% leave-one-out.\n",
            clusterPath.c_str(), f.after.rows.size(), source.c_str(), 100 * f.before.medianAbsError,
            100 * f.after.medianAbsError, 100 * f.looMedianAfter);
        std::string text = head;
        if (!f.bySource.empty())
            text += "# Leave one source out: " + fmt(100 * f.losoMedianAfter, "%.1f") + "% over " +
                    std::to_string(f.bySource.size()) + " sources.\n";
        if (f.stopped)
            text += f.fullFitDone
                        ? "# Stopped during the leave-one-out fits: that error is over the " +
                              std::to_string(f.looErrors.size()) + " runs done.\n"
                        : std::string("# Stopped before the fit converged: the best factors so far; "
                                      "no leave-one-out error.\n");
        for (const auto& fac : f.factors) {
            char line[160];
            std::snprintf(line, sizeof line, "#   %-12s %.4g -> %.4g (bounds %.3g-%.3g) %s%s\n",
                          fac.name.c_str(), fac.before, fac.after, fac.lo, fac.hi,
                          std::isnan(fac.stdError) ? "" : ("+/- " + fmt(fac.stdError, "%.2g") + " ").c_str(),
                          fac.status.c_str());
            text += line;
        }
        text += toYaml(fitted);
        auto w = writeFileAtomic(*out, text);
        if (!w) {
            std::cerr << w.error().str() << "\n";
            return kBadInput;
        }
        written = *out;
    }
    if (json) {
        nlohmann::ordered_json j;
        j["fitted_to"] = source;
        auto& fac = j["factors"] = nlohmann::ordered_json::array();
        for (const auto& x : f.factors)
            fac.push_back({{"name", x.name},
                           {"before", x.before},
                           {"after", x.after},
                           {"lo", x.lo},
                           {"hi", x.hi},
                           {"std_error", std::isnan(x.stdError) ? nlohmann::ordered_json(nullptr)
                                                                : nlohmann::ordered_json(x.stdError)},
                           {"status", x.status.empty() ? "determined" : x.status}});
        j["median_abs_error_before"] = f.before.medianAbsError;
        j["median_abs_error_after"] = f.after.medianAbsError;
        // No leave-one-out fit ran when the full fit was stopped: null, not a zero error.
        j["loo_median_abs_error"] =
            !f.looErrors.empty() ? nlohmann::ordered_json(f.looMedianAfter) : nlohmann::ordered_json(nullptr);
        j["before"] = rowsJson(f.before);
        j["after"] = rowsJson(f.after);
        j["loo_errors"] = f.looErrors;
        // Leave one source out: null where the runs come from one source (or the fit stopped before it).
        j["loso_median_abs_error"] = !f.losoErrors.empty() ? nlohmann::ordered_json(f.losoMedianAfter)
                                                           : nlohmann::ordered_json(nullptr);
        j["loso_errors"] = f.losoErrors;
        auto& src = j["by_source"] = nlohmann::ordered_json::array();
        for (const auto& x : f.bySource)
            src.push_back({{"source", x.source}, {"runs", x.runs}, {"median_abs_error", x.medianAbsError}});
        j["skipped"] = f.before.skipped;
        j["stopped"] = f.stopped;
        j["fit_converged"] = f.fullFitDone;
        if (!written.empty()) j["written"] = written;
        std::cout << jsonText(j) << "\n";
        return kOk;
    }
    std::printf("%-62s %12s %9s %9s %9s\n", "measurement", "measured", "before", "after", "held out");
    for (size_t i = 0; i < f.after.rows.size(); ++i) {
        const auto& b = f.before.rows[i];
        const auto& r = f.after.rows[i];
        std::printf("%-62s %12.1f %+8.0f%% %+8.0f%%", r.id.c_str(), r.measured, 100 * b.error, 100 * r.error);
        if (i < f.looErrors.size()) std::printf(" %+8.0f%%", 100 * f.looErrors[i]);
        std::printf("\n");
    }
    for (const auto& s : f.before.skipped) std::printf("skipped: %s\n", s.c_str());
    std::printf("\nfactor            before     after  std error   bounds     how the runs see it\n");
    for (const auto& x : f.factors)
        std::printf("%-16s %7.4g %9.4g %10s   %-10s %s\n", x.name.c_str(), x.before, x.after,
                    std::isnan(x.stdError) ? "-" : ("+/- " + fmt(x.stdError, "%.2g")).c_str(),
                    (fmt(x.lo, "%g") + "-" + fmt(x.hi, "%g")).c_str(),
                    x.status.empty() ? "determined" : x.status.c_str());
    if (!f.stopped)
        std::printf(
            "(std error: one standard error from the Jacobian of the log errors at the fit; a factor at a "
            "bound is held there, the runs pushing it beyond what the hardware allows)\n");
    if (!f.stopped)
        std::printf("\nmedian absolute error: %.1f%% before, %.1f%% fitted, %.1f%% leave-one-out (%zu "
                    "measurements)\n",
                    100 * f.before.medianAbsError, 100 * f.after.medianAbsError, 100 * f.looMedianAfter,
                    f.after.rows.size());
    else if (!f.fullFitDone || f.looErrors.empty()) {
        std::printf(f.fullFitDone ? "\nstopped before the first leave-one-out fit: no leave-one-out errors\n"
                                  : "\nstopped: the best factors so far, before the fit converged; no "
                                    "leave-one-out errors\n");
        std::printf("median absolute error: %.1f%% before, %.1f%% with these factors (%zu measurements)\n",
                    100 * f.before.medianAbsError, 100 * f.after.medianAbsError, f.after.rows.size());
    } else {
        std::printf("\nstopped during the leave-one-out fits (%zu of %zu done)\n"
                    "median absolute error: %.1f%% before, %.1f%% fitted, %.1f%% leave-one-out over the %zu "
                    "done\n",
                    f.looErrors.size(), f.after.rows.size(), 100 * f.before.medianAbsError,
                    100 * f.after.medianAbsError, 100 * f.looMedianAfter, f.looErrors.size());
    }
    if (!f.bySource.empty()) {
        std::printf(
            "\nheld out by source (each source's runs predicted by the factors fitted on the others'):\n");
        for (const auto& x : f.bySource)
            std::printf("  %7.1f%%  %3d run%s  %s\n", 100 * x.medianAbsError, x.runs, x.runs == 1 ? " " : "s",
                        x.source.c_str());
        std::printf("median absolute error: %.1f%% leave-one-source-out (%zu measurements, %zu sources)\n",
                    100 * f.losoMedianAfter, f.losoErrors.size(), f.bySource.size());
    } else if (!f.stopped && !f.looErrors.empty()) {
        std::printf("(one source: no leave-one-source-out error)\n");
    }
    if (!written.empty()) std::printf("written: %s\n", written.c_str());
    return kOk;
}

} // namespace

namespace {

/// The errors by GPU family and engine, after the overall median: one line each.
static void printGroups(const std::vector<ErrorGroup>& groups, const char* what) {
    if (groups.empty()) return;
    std::printf("by GPU family and engine:\n");
    for (const auto& g : groups)
        std::printf("  %-12s %-8s %4zu %-12s median absolute error %5.1f%%\n", g.family.c_str(),
                    g.engine.c_str(), g.count, what, 100.0 * g.medianAbsError);
}

static nlohmann::ordered_json groupsJson(const std::vector<ErrorGroup>& groups) {
    auto j = nlohmann::ordered_json::array();
    for (const auto& g : groups)
        j.push_back({{"family", g.family},
                     {"engine", g.engine},
                     {"count", g.count},
                     {"median_abs_error", g.medianAbsError}});
    return j;
}

/// calibrate --serving: the simulation against MLPerf server runs (core/sim/servingchecks.h).
int calibrateServing(Args& a, const std::string& usage) {
    for (auto o : {"fit", "cluster", "scenario", "plan", "out", "factors", "family"})
        if (a.option(o)) return usageError(std::string("--") + o + " does not go with --serving", usage);
    if (a.positionals().size() > 1) return usageError("at most one checks file", usage);
    const int64_t requests = a.integer("requests").value_or(1000); // at least; each run lasts 600 s
    if (!a.ok()) return usageError(a.error(), usage);
    const std::filesystem::path beside = std::filesystem::path(calibrationFile()).parent_path();
    const std::string path =
        a.positionals().empty() ? (beside / "mlperf-server-sim.yaml").string() : a.positionals()[0];
    auto checks = loadServingChecks(path, samplesDir());
    if (!checks) {
        std::cerr << checks.error().str() << "\n";
        return kBadInput;
    }
    InterruptToStop interrupt;
    const ServingCheckReport rep = runServingChecks(checks.value(), requests, 1, 600, interrupt.token());
    if (rep.interrupted && rep.rows.empty()) {
        std::cerr << "shardplan: interrupted before the first run completed; nothing to report\n";
        return kBadInput;
    }
    if (a.flag("json")) {
        nlohmann::ordered_json j;
        j["requests"] = requests;
        j["median_abs_error"] = rep.medianAbsError;
        j["groups"] = groupsJson(rep.groups);
        j["interrupted"] = rep.interrupted;
        auto& rows = j["rows"] = nlohmann::ordered_json::array();
        for (const auto& r : rep.rows)
            rows.push_back({{"id", r.id},
                            {"family", r.family},
                            {"engine", r.engine},
                            {"figure", r.figure},
                            {"measured", r.measured},
                            {"simulated", r.simulated},
                            {"error", r.error}});
        auto& loads = j["capacity"] = nlohmann::ordered_json::array();
        for (const auto& l : rep.loads)
            loads.push_back({{"id", l.id},
                             {"analytical_tokens_per_s", l.analyticalTokensPerS},
                             {"measured_tokens_per_s", l.measuredTokensPerS}});
        auto& matched = j["at_own_load"] = nlohmann::ordered_json::array();
        for (const auto& m : rep.matched) {
            auto figs = nlohmann::ordered_json::array();
            for (const auto& r : m.rows)
                figs.push_back({{"figure", r.figure},
                                {"measured", r.measured},
                                {"simulated", r.simulated},
                                {"error", r.error}});
            matched.push_back({{"id", m.id}, {"load", m.load}, {"rate", m.rate}, {"rows", figs}});
        }
        std::cout << jsonText(j) << "\n";
        return kOk;
    }
    std::printf("%-52s %-20s %12s %12s %8s\n", "run (simulated at its rate)", "figure", "measured",
                "simulated", "error");
    for (const auto& r : rep.rows)
        std::printf("%-52s %-20s %12.1f %12.1f %+7.0f%%\n", r.id.c_str(), r.figure.c_str(), r.measured,
                    r.simulated, 100.0 * r.error);
    std::printf(
        "median absolute error: %.1f%% over %zu figures; each run 600 s of arrivals (MLPerf's minimum) "
        "and at least %lld requests\n",
        100.0 * rep.medianAbsError, rep.rows.size(), (long long)requests);
    printGroups(rep.groups, "figures");
    if (rep.interrupted)
        std::printf("interrupted: the rows above cover the %zu runs that completed, of %zu\n",
                    rep.loads.size(), checks->size());
    std::printf("\n%-52s %22s %22s %8s\n", "load: the run's rate against the model's capacity",
                "model's capacity", "measured tokens/s", "load");
    for (const auto& l : rep.loads)
        std::printf("%-52s %22.0f %22.0f %7.0f%%\n", l.id.c_str(), l.analyticalTokensPerS,
                    l.measuredTokensPerS,
                    l.analyticalTokensPerS > 0 ? 100.0 * l.measuredTokensPerS / l.analyticalTokensPerS : 0.0);
    if (!rep.matched.empty()) {
        std::printf("\n%-52s %-20s %12s %12s %8s\n", "at the run's own load (its rate over its offline run)",
                    "figure", "measured", "simulated", "error");
        for (const auto& m : rep.matched) {
            std::printf("%-52s load %.1f%%, simulated at %.4g requests/s\n", m.id.c_str(), 100.0 * m.load,
                        m.rate);
            for (const auto& r : m.rows)
                std::printf("%-52s %-20s %12.1f %12.1f %+7.0f%%\n", "", r.figure.c_str(), r.measured,
                            r.simulated, 100.0 * r.error);
        }
    }
    return kOk;
}

} // namespace

int cmdCalibrate(const std::vector<std::string>& argv) {
    const VerbSpec& spec = verb("calibrate");
    const std::string usage = synopsisText(spec);
    Args a = parseArgs(argv, spec);
    if (!a.ok()) return usageError(a.error(), usage);
    const std::string samples = samplesDir();
    if (a.flag("serving")) return calibrateServing(a, usage);
    if (a.option("requests")) return usageError("--requests goes with --serving", usage);
    if (auto fitPath = a.option("fit")) {
        if (!a.positionals().empty())
            return usageError("unexpected argument '" + a.positionals()[0] + "'", usage);
        Result<CalibrationSet> set = Error{};
        std::string clusterPath = a.option("cluster").value_or(samples + "/clusters/h100-4x8.yaml");
        if (auto sc = a.option("scenario")) {
            const auto s = loadScenarioOrReport(*sc);
            if (!s) return kBadInput;
            const CostModel model(s.value());
            Plan plan = model.megatronPlan();
            if (auto pp = a.option("plan")) {
                const auto p = loadPlanOrReport(*pp);
                if (!p) return kBadInput;
                plan = *p;
                if (auto why = model.checkPlan(plan)) {
                    std::cerr << *pp << ": plan does not fit the scenario: " << *why << "\n";
                    return kBadInput;
                }
            }
            set = loadVllmBenchResult(*fitPath, s.value(), plan);
        } else {
            if (a.option("plan")) return usageError("--plan goes with --scenario", usage);
            // One file, or several separated by commas (a GPU family's sources), fitted together.
            CalibrationSet all;
            for (size_t at = 0; at <= fitPath->size();) {
                const size_t comma = std::min(fitPath->find(',', at), fitPath->size());
                auto one = loadCalibrationSet(fitPath->substr(at, comma - at), samples);
                if (!one) {
                    set = one.error();
                    break;
                }
                all.cases.insert(all.cases.end(), one->cases.begin(), one->cases.end());
                all.skipped.insert(all.skipped.end(), one->skipped.begin(), one->skipped.end());
                set = all;
                at = comma + 1;
            }
        }
        if (!set) {
            std::cerr << set.error().str() << "\n";
            return kBadInput;
        }
        if (const auto fam = a.option("family")) {
            if (!findGpuFamily(*fam)) {
                std::string known;
                for (const auto& f : gpuFamilies()) known += (known.empty() ? "" : ", ") + f.id;
                return usageError("unknown GPU family '" + *fam + "'; known: " + known, usage);
            }
            CalibrationSet kept = set.value();
            kept.cases.clear();
            for (const auto& c : set->cases) {
                const GpuSpec* g = findGpuByName(c.scenario.cluster.gpu.name);
                if (g && g->family == *fam)
                    kept.cases.push_back(c);
                else
                    kept.skipped.push_back(c.id + ": not on a " + *fam + " GPU (--family)");
            }
            set = std::move(kept);
        }
        auto start = loadCluster(clusterPath);
        if (!start) {
            std::cerr << start.error().str() << "\n";
            return kBadInput;
        }
        // On a terminal, the fits done so far (the full fit, then one per left-out run: minutes on large
        // files).
        FitControl control;
        if (const auto list = a.option("factors"))
            for (size_t at = 0; at <= list->size();) {
                const size_t comma = std::min(list->find(',', at), list->size());
                control.factors.push_back(list->substr(at, comma - at));
                at = comma + 1;
            }
        if (isatty(STDERR_FILENO))
            control.progress = [](int done, int total) {
                std::fprintf(stderr, "\rfit %d of %d%s", done, total, done == total ? "\n" : "");
                std::fflush(stderr);
            };
        // Ctrl-C: the best factors so far, as search prints the best plan so far (the fit of 166 runs with
        // its leave-one-out fits takes minutes).
        std::atomic<bool> stop{false};
        control.stop = &stop;
        control.bestSoFarOnStop = true;
        Result<FitResult> f = Error{};
        {
            InterruptToStop interrupt;
            std::stop_callback onStop(interrupt.token(), [&stop] { stop = true; });
            f = fitEfficiency(set.value(), start.value().efficiency, true, control);
        }
        if (f && f->stopped && isatty(STDERR_FILENO)) std::fprintf(stderr, "\n");
        if (!f) {
            std::cerr << *fitPath << ": " << f.error().message << "\n";
            return kBadInput;
        }
        return reportFit(f.value(), *fitPath, a, clusterPath);
    }
    for (auto o : {"cluster", "scenario", "plan", "out", "factors"})
        if (a.option(o)) return usageError(std::string("--") + o + " goes with --fit", usage);
    if (a.positionals().size() > 1) return usageError("at most one measurements file", usage);
    const std::string path = a.positionals().empty() ? calibrationFile() : a.positionals()[0];
    auto rep = runCalibration(path, samplesDir());
    if (!rep) {
        std::cerr << rep.error().str() << "\n";
        return kBadInput;
    }
    if (a.flag("json")) {
        nlohmann::ordered_json j;
        j["median_abs_error"] = rep->medianAbsError;
        j["groups"] = groupsJson(rep->groups);
        j["rows"] = rowsJson(rep.value());
        j["skipped"] = rep->skipped;
        std::cout << jsonText(j) << "\n";
        return kOk;
    }
    std::printf("%-62s %-20s %12s %12s %8s\n", "measurement", "metric", "measured", "model", "error");
    for (const auto& r : rep->rows)
        std::printf("%-62s %-20s %12.1f %12.1f %+7.0f%%%s\n", r.id.c_str(), r.metric.c_str(), r.measured,
                    r.predicted, 100.0 * r.error, r.feasible ? "" : "  (model: does not fit)");
    for (const auto& s : rep->skipped) std::printf("skipped: %s\n", s.c_str());
    std::printf("median absolute error: %.1f%% over %zu measurements\n", 100.0 * rep->medianAbsError,
                rep->rows.size());
    printGroups(rep->groups, "measurements");
    return kOk;
}

} // namespace sp::cli
