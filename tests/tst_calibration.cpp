// The cost model against public measurements (tests/data/calibration), and fitting its efficiency factors to
// measured runs (shardplan calibrate --fit).
#include "core/cost/calibration.h"
#include "core/cost/costmodel.h"
#include "core/io/formats.h"
#include "core/model/plan.h"
#include "core/model/weights.h"

#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <cmath>
#include <fstream>

using namespace sp;

namespace {
const std::string kMeasurements = SHARDPLAN_TESTDATA_DIR "/calibration/measurements.yaml";
}

class TestCalibration : public QObject {
    Q_OBJECT
private slots:
    void heldOutMeasurementsWithinBounds() {
        auto set = loadCalibrationSet(kMeasurements, SHARDPLAN_SAMPLES_DIR);
        QVERIFY2(set.ok(), set.error().str().c_str());
        auto rep = runCalibration(kMeasurements, SHARDPLAN_SAMPLES_DIR);
        QVERIFY2(rep.ok(), rep.error().str().c_str());
        for (const auto& r : rep->rows)
            qInfo("%-62s %12.1f %12.1f %+6.0f%%", r.id.c_str(), r.measured, r.predicted, 100 * r.error);
        qInfo("median absolute error %.1f%% over %zu measurements", 100 * rep->medianAbsError,
              rep->rows.size());
        QVERIFY(rep->rows.size() >= 12);
        // Issue 10's bounds: no row beyond 40%, every MoE row within 35%, median at most 12%. These runs are
        // held out: the factors were fitted to trtllm-perf-overview.yaml, which shares no row with this file.
        for (const auto& r : rep->rows) QVERIFY2(std::fabs(r.error) < 0.40, r.id.c_str());
        for (size_t i = 0; i < rep->rows.size(); ++i)
            if (set->cases[i].scenario.model.moe.present())
                QVERIFY2(std::fabs(rep->rows[i].error) < 0.35, rep->rows[i].id.c_str());
        QVERIFY(rep->medianAbsError <= 0.12);
    }

    // A run's engine settings come from its row: two-batch overlap only where the source says the engine
    // ran it (SGLang's EP32 prefill), and trtllm-bench's token budget where the harness derived it
    // (Llama-3.1-70B TP8, 128 in / 2,048 out: max_num_tokens 2,048 by tuning.py's rounding).
    void readsEngineSettings() {
        auto set = loadCalibrationSet(kMeasurements, SHARDPLAN_SAMPLES_DIR);
        QVERIFY2(set.ok(), set.error().str().c_str());
        int seen = 0;
        for (const auto& c : set->cases) {
            if (c.id == "sglang-deepseek-v3-h100-4node-ep32-prefill-2k") {
                QCOMPARE(int(c.plan.overlap), int(Overlap::TwoBatch));
                ++seen;
            }
            if (c.id == "trtllm-v0.17-llama3.1-70b-h100x8-tp8-128in-2048out") {
                QCOMPARE(int(c.plan.overlap), int(Overlap::Off));
                QCOMPARE(c.plan.prefillBudget, int64_t(2048));
                ++seen;
            }
        }
        QCOMPARE(seen, 2);
    }

    // The broad TensorRT-LLM table the Hopper factors were fitted to, and the later release's table they
    // were not fitted to: both load whole, and the held-out one stays within the fitted one's accuracy
    // class (median under 15%; 7.9% when the factors were fitted).
    void heldOutTableWithinFifteenPercent() {
        auto fitted = runCalibration(SHARDPLAN_TESTDATA_DIR "/calibration/trtllm-perf-overview.yaml",
                                     SHARDPLAN_SAMPLES_DIR);
        QVERIFY2(fitted.ok(), fitted.error().str().c_str());
        QVERIFY(fitted->rows.size() >= 160);
        QVERIFY(fitted->skipped.empty());
        auto held = runCalibration(SHARDPLAN_TESTDATA_DIR "/calibration/trtllm-v1.0-perf-overview.yaml",
                                   SHARDPLAN_SAMPLES_DIR);
        QVERIFY2(held.ok(), held.error().str().c_str());
        QVERIFY(held->rows.size() >= 70);
        qInfo("fitted-to table: median %.1f%% over %zu; held-out table: median %.1f%% over %zu",
              100 * fitted->medianAbsError, fitted->rows.size(), 100 * held->medianAbsError,
              held->rows.size());
        QVERIFY(fitted->medianAbsError < 0.10);
        QVERIFY(held->medianAbsError < 0.15);
    }

    // The B200/GB200 table (TensorRT-LLM perf-overview at 00f37686, NVFP4 checkpoints): the 30 rows the
    // Blackwell factors would be fitted to and the 20 Llama 3.1 405B rows held out of that fit load whole,
    // every row on a Blackwell GPU with NVFP4 weights. The clusters keep the Hopper-fitted factors (the fit
    // did not pass: held-out error rose, factors at bounds; docs/cost-model.md, "Factors per GPU family"),
    // and with them the medians measured were 32.8% and 11.1%; the bounds are those with margin, so a
    // cost-model change that moves Blackwell NVFP4 predictions further off fails here.
    void blackwellTableLoads() {
        auto fit = runCalibration(SHARDPLAN_TESTDATA_DIR "/calibration/trtllm-b200-perf-overview.yaml",
                                  SHARDPLAN_SAMPLES_DIR);
        QVERIFY2(fit.ok(), fit.error().str().c_str());
        auto held =
            runCalibration(SHARDPLAN_TESTDATA_DIR "/calibration/trtllm-b200-perf-overview-heldout.yaml",
                           SHARDPLAN_SAMPLES_DIR);
        QVERIFY2(held.ok(), held.error().str().c_str());
        QVERIFY(fit->skipped.empty());
        QVERIFY(held->skipped.empty());
        QCOMPARE(fit->rows.size(), size_t(30));
        QCOMPARE(held->rows.size(), size_t(20));
        for (const auto* file :
             {"trtllm-b200-perf-overview.yaml", "trtllm-b200-perf-overview-heldout.yaml"}) {
            auto set = loadCalibrationSet(std::string(SHARDPLAN_TESTDATA_DIR "/calibration/") + file,
                                          SHARDPLAN_SAMPLES_DIR);
            QVERIFY2(set.ok(), set.error().str().c_str());
            for (const auto& c : set->cases) {
                QVERIFY2(c.scenario.model.quant.method == QuantMethod::Nvfp4, c.id.c_str());
                // The ModelOpt FP4 checkpoints' own KV cache (the files' headers): FP8, not the model's BF16.
                QVERIFY2(c.scenario.model.kvCache == Dtype::FP8, c.id.c_str());
                QVERIFY2(c.scenario.cluster.gpu.name.find("B200") != std::string::npos, c.id.c_str());
            }
        }
        qInfo("B200/GB200 fit rows: median %.1f%% over %zu; held-out 405B rows: median %.1f%% over %zu",
              100 * fit->medianAbsError, fit->rows.size(), 100 * held->medianAbsError, held->rows.size());
        // The Blackwell family's factors (resources/gpus.yaml) are fitted on the first file: 5.6% there, and
        // 7.8% on the held-out 405B rows (11.1% when the rows were read with a BF16 cache).
        QVERIFY(fit->medianAbsError < 0.08);
        QVERIFY(held->medianAbsError < 0.10);
    }

    // The errors by GPU family and engine: a hand-made set, then the project's measurements, whose groups
    // must partition the rows with each group's median recomputed here from its rows.
    void errorsByFamilyAndEngine() {
        // hopper/trtllm: |-0.1|, |0.3|, |0.2| -> median 0.2; hopper/vllm: 0.05 alone; blackwell/trtllm: |-0.4|,
        // 0.1 -> 0.25. Ordered by family, then engine.
        const auto g = groupErrors({{"hopper", "trtllm", -0.1},
                                    {"blackwell", "trtllm", -0.4},
                                    {"hopper", "vllm", 0.05},
                                    {"hopper", "trtllm", 0.3},
                                    {"blackwell", "trtllm", 0.1},
                                    {"hopper", "trtllm", 0.2}});
        QCOMPARE(g.size(), size_t(3));
        QCOMPARE(g[0].family, std::string("blackwell"));
        QCOMPARE(g[0].count, size_t(2));
        QCOMPARE(g[0].medianAbsError, 0.25);
        QCOMPARE(g[1].engine, std::string("trtllm"));
        QCOMPARE(g[1].count, size_t(3));
        QCOMPARE(g[1].medianAbsError, 0.2);
        QCOMPARE(g[2].engine, std::string("vllm"));
        QCOMPARE(g[2].medianAbsError, 0.05);

        for (const char* file : {"measurements.yaml", "blackwell-measurements.yaml", "amd-measurements.yaml"}) {
            auto rep = runCalibration(std::string(SHARDPLAN_TESTDATA_DIR "/calibration/") + file,
                                      SHARDPLAN_SAMPLES_DIR);
            QVERIFY2(rep.ok(), rep.error().str().c_str());
            size_t total = 0;
            for (const auto& grp : rep->groups) {
                std::vector<double> abs;
                for (const auto& r : rep->rows)
                    if (r.family == grp.family && r.engine == grp.engine) abs.push_back(std::fabs(r.error));
                QCOMPARE(abs.size(), grp.count);
                std::sort(abs.begin(), abs.end());
                const size_t n = abs.size();
                const double med = n % 2 ? abs[n / 2] : (abs[n / 2 - 1] + abs[n / 2]) / 2;
                QCOMPARE(grp.medianAbsError, med);
                total += grp.count;
            }
            QCOMPARE(total, rep->rows.size());
            for (const auto& r : rep->rows) {
                // The GPU database's families (resources/gpus.yaml): B200/GB200 are Blackwell, MI300X/MI325X
                // CDNA 3; the files' engines: TensorRT-LLM for NVIDIA's tables, vLLM for AMD's page.
                if (r.id.find("b200") != std::string::npos) QCOMPARE(r.family, std::string("blackwell"));
                if (r.id.find("mi300x") != std::string::npos) QCOMPARE(r.family, std::string("cdna3"));
                if (r.id.rfind("trtllm-", 0) == 0) QCOMPARE(r.engine, std::string("trtllm"));
                if (r.id.rfind("amd-rocm-vllm", 0) == 0) QCOMPARE(r.engine, std::string("vllm"));
            }
        }
    }

    // Measurements made with the model itself at known factors: the fit from the defaults finds factors
    // that reproduce them, and recovers the ones the runs pin down (compute-bound prefill fixes compute,
    // memory-bound decode fixes memory, small steps the launch cost).
    void fitRecoversKnownFactors() {
        auto set = loadCalibrationSet(kMeasurements, SHARDPLAN_SAMPLES_DIR);
        QVERIFY2(set.ok(), set.error().str().c_str());
        Efficiency truth;
        truth.compute = 0.55, truth.memory = 0.7, truth.intraNode = 0.75, truth.interNode = 0.8;
        truth.launchUs = 6.0, truth.overlap = 0.3, truth.groupedGemm = 0.9, truth.kvRead = 0.6;
        truth.opOverlap = 0.7, truth.fusedMoeMemory = 0.4;
        CalibrationSet synthetic = set.value();
        for (auto& c : synthetic.cases) {
            CalibrationCase t = c;
            t.scenario.cluster.efficiency = truth;
            c.measured = predictCase(t).predicted;
            QVERIFY(c.measured > 0);
        }
        Efficiency start; // the round estimates the project used before its Hopper fit
        start.compute = 0.7, start.memory = 0.8, start.intraNode = 0.8, start.launchUs = 4.0;
        start.groupedGemm = 1.0, start.kvRead = 0.8, start.opOverlap = 1.0;
        const auto f = fitEfficiency(synthetic, start, /*leaveOneOut=*/false);
        QVERIFY2(f.ok(), f.error().str().c_str());
        qInfo("before %.1f%%, after %.3f%%; compute %.4f memory %.4f launch %.3f us fused-MoE stream %.4f",
              100 * f->before.medianAbsError, 100 * f->after.medianAbsError, f->efficiency.compute,
              f->efficiency.memory, f->efficiency.launchUs, f->efficiency.fusedMoeMemory);
        QVERIFY(f->before.medianAbsError > 0.05); // the defaults are off
        QVERIFY(f->after.medianAbsError < 0.005);
        QVERIFY(std::fabs(f->efficiency.compute / truth.compute - 1) < 0.03);
        QVERIFY(std::fabs(f->efficiency.memory / truth.memory - 1) < 0.03);
        QVERIFY(std::fabs(f->efficiency.launchUs / truth.launchUs - 1) < 0.1);
        // The tensor-parallel MoE runs (Mixtral and Qwen3 at TP8) pin the fused-MoE kernel's stream.
        QVERIFY(std::fabs(f->efficiency.fusedMoeMemory / truth.fusedMoeMemory - 1) < 0.05);
    }

    // Each fitted factor comes with how well the runs determine it. Measurements made by the model at known
    // factors, each scaled by a known error e_i (alternately +4% and -4%: sum of squares n x 0.04^2): the fit
    // of compute and memory on the one-node runs (prefill, max-throughput and batch-1 decode) recovers them
    // within a few standard errors, and the standard errors are of the size least squares gives (sigma about
    // 0.04 over n - 2 degrees of freedom: not zero, not the bounds' width). A factor the runs do not move
    // (inter_node: every run here is one node) is "not seen"; one pushed past its
    // range is held at the bound and says so; the factors left out of the fit say "not fitted".
    void fitReportsUncertainties() {
        auto set = loadCalibrationSet(kMeasurements, SHARDPLAN_SAMPLES_DIR);
        QVERIFY2(set.ok(), set.error().str().c_str());
        CalibrationSet few;
        for (const auto& c : set->cases)
            if (c.scenario.cluster.nodes == 1) few.cases.push_back(c);
        QVERIFY(few.cases.size() >= 8);
        Efficiency truth;
        truth.compute = 0.55, truth.memory = 0.7;
        for (size_t i = 0; i < few.cases.size(); ++i) {
            CalibrationCase t = few.cases[i];
            t.scenario.cluster.efficiency = truth;
            few.cases[i].measured = predictCase(t).predicted * (i % 2 ? 0.96 : 1.04);
        }
        FitControl c;
        c.factors = {"compute", "memory", "inter_node"};
        const auto f = fitEfficiency(few, Efficiency{}, /*leaveOneOut=*/false, c);
        QVERIFY2(f.ok(), f.error().str().c_str());
        auto factor = [&](const std::string& name) {
            for (const auto& x : f->factors)
                if (x.name == name) return x;
            return FittedFactor{};
        };
        for (const char* name : {"compute", "memory"}) {
            const FittedFactor x = factor(name);
            const double t = std::string(name) == "compute" ? truth.compute : truth.memory;
            qInfo("%s %.4f +/- %.4f (truth %.2f) %s", name, x.after, x.stdError, t, x.status.c_str());
            QVERIFY2(x.status.empty(), x.status.c_str());
            QVERIFY(x.stdError > 1e-4 && x.stdError < 0.1);
            QVERIFY(std::fabs(x.after - t) < 4 * x.stdError + 0.01);
        }
        QCOMPARE(factor("inter_node").status, std::string("not seen by these runs"));
        QVERIFY(std::isnan(factor("inter_node").stdError));
        QCOMPARE(factor("launch_us").status, std::string("not fitted"));
        // Runs 1.5x faster than the model at the highest stream the hardware allows (0.9): held at that bound.
        for (auto& cs : few.cases) {
            CalibrationCase t = cs;
            t.scenario.cluster.efficiency = Efficiency{};
            t.scenario.cluster.efficiency.memory = 0.9;
            const CalibrationRow r = predictCase(t);
            const bool time = r.metric.find("_ms") != std::string::npos; // TTFT, TPOT: faster is smaller
            cs.measured = time ? r.predicted / 1.5 : r.predicted * 1.5;
        }
        c.factors = {"memory"};
        const auto b = fitEfficiency(few, Efficiency{}, false, c);
        QVERIFY2(b.ok(), b.error().str().c_str());
        for (const auto& x : b->factors)
            if (x.name == "memory") QCOMPARE(x.status, std::string("at its upper bound"));
    }

    // A source address names its publication: the file in a repository at any commit, an MLPerf round's
    // results as one, a page without its anchor.
    void publicationOfGroupsSources() {
        QCOMPARE(
            publicationOf("https://github.com/NVIDIA/TensorRT-LLM/blob/258c7540c0/docs/source/performance/"
                          "perf-overview.md#h100"),
            std::string("https://github.com/NVIDIA/TensorRT-LLM/docs/source/performance/perf-overview.md"));
        QCOMPARE(
            publicationOf("https://github.com/NVIDIA/TensorRT-LLM/blob/00f37686aa/docs/source/performance/"
                          "perf-overview.md"),
            std::string("https://github.com/NVIDIA/TensorRT-LLM/docs/source/performance/perf-overview.md"));
        QCOMPARE(publicationOf("https://github.com/ntuhpc/mlperf_inference_results_v5.0/blob/cf35411/closed/"
                               "NVIDIA/results/B200-SXM-180GBx8_TRT/llama2-70b-99.9/Server/performance/run_1/"
                               "mlperf_log_summary.txt"),
                 std::string("https://github.com/ntuhpc/mlperf_inference_results_v5.0"));
        QCOMPARE(publicationOf("https://lmsys.org/blog/2025-05-05-large-scale-ep/?utm=x"),
                 std::string("https://lmsys.org/blog/2025-05-05-large-scale-ep/"));
        QCOMPARE(publicationOf("https://github.com/deepseek-ai/open-infra-index"),
                 std::string("https://github.com/deepseek-ai/open-infra-index"));
        QCOMPARE(publicationOf(""), std::string());
    }

    // Leave one source out: each source's runs predicted by factors fitted on the other sources' runs. Runs
    // made by the model at known factors (compute 0.55, memory 0.7), the one-node Hopper rows of
    // measurements.yaml and mlperf-mean-lengths.yaml (TensorRT-LLM's table, MLPerf v4.1 and v5.0, a blog);
    // one source's runs then made 1.25x faster than those factors give (a table from another release, say).
    // Held out whole, that source is predicted at the others' factors, the known ones: throughput 1 / 1.25 -
    // 1 = -20% (a time 1.25 - 1 = +25%); leave-one-out keeps its other runs in each fit, which pull the
    // factors towards it, and shows less of it.
    void fitHoldsOutWholeSources() {
        CalibrationSet few;
        for (const std::string& file :
             {kMeasurements, std::string(SHARDPLAN_TESTDATA_DIR "/calibration/mlperf-mean-lengths.yaml")}) {
            auto set = loadCalibrationSet(file, SHARDPLAN_SAMPLES_DIR);
            QVERIFY2(set.ok(), set.error().str().c_str());
            for (const auto& c : set->cases)
                if (c.scenario.cluster.nodes == 1 && gpuFamilyOf(c.scenario) == "hopper")
                    few.cases.push_back(c);
        }
        std::vector<std::string> sources;
        std::string biggest;
        int most = 0;
        for (const auto& c : few.cases) {
            if (std::find(sources.begin(), sources.end(), c.source) == sources.end())
                sources.push_back(c.source);
            const int n = int(std::count_if(few.cases.begin(), few.cases.end(),
                                            [&](const CalibrationCase& x) { return x.source == c.source; }));
            if (n > most) most = n, biggest = c.source;
        }
        QVERIFY2(sources.size() >= 3 && most >= 4, qPrintable(QString::number(sources.size())));
        Efficiency truth;
        truth.compute = 0.55, truth.memory = 0.7;
        for (auto& c : few.cases) {
            CalibrationCase t = c;
            t.scenario.cluster.efficiency = truth;
            const CalibrationRow r = predictCase(t);
            const bool time = r.metric.find("_ms") != std::string::npos;
            const double k = c.source == biggest ? 1.25 : 1.0;
            c.measured = time ? r.predicted / k : r.predicted * k;
        }
        FitControl ctl;
        ctl.factors = {"compute", "memory"};
        const auto f = fitEfficiency(few, truth, /*leaveOneOut=*/true, ctl);
        QVERIFY2(f.ok(), f.error().str().c_str());
        QCOMPARE(f->bySource.size(), sources.size());
        QCOMPARE(f->losoErrors.size(), few.cases.size());
        double looOff = 0, losoOff = 0;
        int n = 0;
        for (size_t i = 0; i < few.cases.size(); ++i) {
            if (few.cases[i].source != biggest) continue;
            const bool time = few.cases[i].metric.find("_ms") != std::string::npos;
            QVERIFY2(std::fabs(f->losoErrors[i] - (time ? 0.25 : -0.2)) < 0.01,
                     qPrintable(QString("%1 %2").arg(few.cases[i].id.c_str()).arg(f->losoErrors[i])));
            looOff += std::fabs(f->looErrors[i]), losoOff += std::fabs(f->losoErrors[i]), ++n;
        }
        qInfo("the faster source: %d runs, mean |error| %.1f%% held out by source, %.1f%% one by one", n,
              100 * losoOff / n, 100 * looOff / n);
        QVERIFY(looOff < 0.8 * losoOff);
        for (const auto& x : f->bySource)
            if (x.source == biggest) QCOMPARE(x.runs, n);
        // One source: nothing to hold out.
        CalibrationSet one;
        for (const auto& c : few.cases)
            if (c.source == biggest) one.cases.push_back(c);
        const auto g = fitEfficiency(one, truth, true, ctl);
        QVERIFY2(g.ok(), g.error().str().c_str());
        QVERIFY(g->bySource.empty() && g->losoErrors.empty());
    }

    void fitLowersLeaveOneOutError() {
        auto set = loadCalibrationSet(kMeasurements, SHARDPLAN_SAMPLES_DIR);
        QVERIFY(set.ok());
        // From the round estimates the project used before its Hopper fit (compute 0.7, memory 0.8, NVLink
        // 0.8, 4 us launches, the pure roofline): the fit must lower the held-out error, not only the
        // in-sample one.
        Efficiency start;
        start.compute = 0.7, start.memory = 0.8, start.intraNode = 0.8, start.launchUs = 4.0;
        start.groupedGemm = 1.0, start.kvRead = 0.8, start.opOverlap = 1.0;
        FitControl oneByOne; // leave one source out has its own test (fitHoldsOutWholeSources)
        oneByOne.leaveSourceOut = false;
        const auto f = fitEfficiency(set.value(), start, true, oneByOne);
        QVERIFY2(f.ok(), f.error().str().c_str());
        QVERIFY(f->bySource.empty());
        qInfo("median |error| %.1f%% -> %.1f%% fitted, %.1f%% leave-one-out", 100 * f->before.medianAbsError,
              100 * f->after.medianAbsError, 100 * f->looMedianAfter);
        QCOMPARE(f->looErrors.size(), set->cases.size());
        QVERIFY(f->after.medianAbsError < f->before.medianAbsError);
        QVERIFY(f->looMedianAfter < f->before.medianAbsError);
        for (const auto& x : f->factors) QVERIFY2(x.after >= x.lo && x.after <= x.hi, x.name.c_str());
        QVERIFY(!fitEfficiency(CalibrationSet{}, Efficiency{}).ok()); // nothing to fit
    }

    // Progress after the full fit and after each left-out case; a stop set from the progress callback (as
    // the GUI's Stop button sets it from the event loop) ends the fit at its next objective evaluation.
    void fitReportsProgressAndStops() {
        auto set = loadCalibrationSet(kMeasurements, SHARDPLAN_SAMPLES_DIR);
        QVERIFY(set.ok());
        CalibrationSet few = set.value();
        few.cases.resize(4);
        std::vector<std::pair<int, int>> seen;
        FitControl c;
        c.progress = [&](int done, int total) { seen.emplace_back(done, total); };
        const auto all = fitEfficiency(few, few.cases.front().scenario.cluster.efficiency, true, c);
        QVERIFY2(all.ok(), all.error().str().c_str());
        const std::vector<std::pair<int, int>> expected{{1, 5}, {2, 5}, {3, 5}, {4, 5}, {5, 5}};
        QCOMPARE(seen, expected); // 1 + 4 cases
        std::atomic<bool> stop{false};
        seen.clear();
        c.stop = &stop;
        c.progress = [&](int done, int total) {
            seen.emplace_back(done, total);
            if (done == 2) stop = true;
        };
        const auto stopped = fitEfficiency(few, few.cases.front().scenario.cluster.efficiency, true, c);
        QVERIFY(!stopped.ok());
        QCOMPARE(stopped.error().message, std::string(kFitStopped));
        QCOMPARE(int(seen.size()), 2); // the third fit never finished
    }

    // `vllm bench serve --save-result` JSON: 100 requests of 1000 input and 200 output tokens on average, 64
    // concurrent over 8 replicas (8 each), 5000 output tok/s, a mean TPOT of 25 ms and a mean TTFT of 80 ms:
    // three cases. The TTFT is served: the step in flight, then the prompt's step beside the 8 decode tokens
    // (1,000 tokens fit the default budget in one chunk).
    void readsVllmBenchResult() {
        QTemporaryDir dir;
        const std::string path = dir.filePath("run.json").toStdString();
        std::ofstream(path) << R"({"backend": "vllm", "completed": 100, "total_input_tokens": 100000,
            "total_output_tokens": 20000, "output_throughput": 5000.0, "max_concurrency": 64,
            "mean_ttft_ms": 80.0, "mean_tpot_ms": 25.0})";
        auto s = loadScenario(SHARDPLAN_SAMPLES_DIR "/scenarios/llama-3.1-8b-h100-1x8.yaml");
        QVERIFY(s.ok());
        const Plan p = Plan::megatronChoices({1, 8, 1, 8, 1, 1});
        auto set = loadVllmBenchResult(path, s.value(), p);
        QVERIFY2(set.ok(), set.error().str().c_str());
        QCOMPARE(set->cases.size(), size_t(3));
        const auto& c = set->cases[0];
        QCOMPARE(c.scenario.workload.inputTokens, int64_t(1000));
        QCOMPARE(c.scenario.workload.outputTokens, int64_t(200));
        QCOMPARE(c.plan.batch, int64_t(8));
        QCOMPARE(c.measured, 5000.0);
        QCOMPARE(set->cases[1].metric, std::string("tpot_ms"));
        QCOMPARE(set->cases[2].metric, std::string("ttft_ms"));
        QCOMPARE(set->cases[2].measured, 80.0);
        QVERIFY(predictCase(c).predicted > 0);
        {
            const CalibrationRow tpot = predictCase(set->cases[1]), ttft = predictCase(set->cases[2]);
            const Metrics m = CostModel(set->cases[2].scenario).evaluate(set->cases[2].plan);
            QCOMPARE(m.ttftChunks, 1);
            QVERIFY(std::fabs(ttft.predicted - (tpot.predicted + m.chunkMs)) < 1e-9 * ttft.predicted);
        }
        // A file without the run's totals is refused with the field.
        std::ofstream(path) << R"({"completed": 100})";
        auto bad = loadVllmBenchResult(path, s.value(), p);
        QVERIFY(!bad.ok());
        QVERIFY2(QString::fromStdString(bad.error().str()).contains("total_input_tokens"),
                 bad.error().str().c_str());
    }

    // The loader's precision and GPU fields: nvfp4 rows on Blackwell load with NVFP4 weights (0.5625 bytes a
    // weight: 4-bit elements plus one FP8 scale per 16, core/model/weights.h) and an explicit FP8 KV cache;
    // an unknown precision is an error naming the field (never read as BF16); a GPU without a sample cluster
    // runs on a cluster of the GPU database's entry (mi300x), and one in neither is a skipped row, listed
    // with the known ones.
    void precisionAndGpuFields() {
        QTemporaryDir dir;
        const std::string path = dir.filePath("m.yaml").toStdString();
        auto row = [](const std::string& id, const std::string& gpu, const std::string& precision,
                      const std::string& extra) {
            return "  - id: " + id + "\n    model: llama-3.1-70b\n    gpu: " + gpu +
                   "\n    nodes: 1\n    gpus_per_node: 1\n    precision: " + precision +
                   "\n    plan: {tp: 1, pp: 1, dp: 1}\n    phase: serving\n    input_tokens: 128\n"
                   "    output_tokens: 128\n    metric: output_tokens_per_s\n    value: 1000\n" +
                   extra;
        };
        std::ofstream(path) << "version: 1\nmeasurements:\n"
                            << row("b200-fp4", "b200", "nvfp4", "    kv_cache: fp8\n")
                            << row("gb200-fp4", "gb200", "nvfp4", "")
                            << row("h100-fp8", "h100-sxm", "fp8", "") << row("mi300x", "mi300x", "bf16", "")
                            << row("tpu", "tpu-v5p", "bf16", "");
        auto set = loadCalibrationSet(path, SHARDPLAN_SAMPLES_DIR);
        QVERIFY2(set.ok(), set.error().str().c_str());
        QCOMPARE(set->cases.size(), size_t(4));
        // The database's MI300X: 192 GB at 5.3 TB/s (resources/gpus.yaml, AMD's data sheet).
        QCOMPARE(set->cases[3].scenario.cluster.gpu.hbmTBs, 5.3);
        QVERIFY(set->cases[3].scenario.cluster.gpu.name.find("MI300X") != std::string::npos);
        const Model& b = set->cases[0].scenario.model;
        QCOMPARE(b.quant.method, QuantMethod::Nvfp4);
        QCOMPARE(weightBytesPerParam(b, ParamGroup::Attention), 0.5625);
        QCOMPARE(b.kvCache, Dtype::FP8);
        QCOMPARE(set->cases[0].scenario.cluster.gpu.name.find("B200") != std::string::npos, true);
        QCOMPARE(set->cases[1].scenario.model.kvCache, Dtype::BF16); // not stated: the model file's
        QCOMPARE(set->cases[2].scenario.model.weights, Dtype::FP8);
        QCOMPARE(set->skipped.size(), size_t(1));
        QVERIFY2(QString::fromStdString(set->skipped[0]).contains("tpu-v5p") &&
                     QString::fromStdString(set->skipped[0]).contains("b200") &&
                     QString::fromStdString(set->skipped[0]).contains("mi325x"),
                 set->skipped[0].c_str());
        QCOMPARE(set->cases[0].scenario.constraints.memoryFraction, 0.0); // not stated: the engine's default
        // A run's config may state its memory fraction (MLPerf's DGX-H100 llama2-70b:
        // kvcache_free_gpu_mem_frac 0.95): it reaches the plan's KV pool, which grows with it (the same
        // weights, a larger share left).
        std::ofstream(path) << "version: 1\nmeasurements:\n"
                            << row("h100-default", "h100-sxm", "fp8", "    engine: trtllm\n")
                            << row("h100-095", "h100-sxm", "fp8",
                                   "    engine: trtllm\n    memory_fraction: 0.95\n");
        auto frac = loadCalibrationSet(path, SHARDPLAN_SAMPLES_DIR);
        QVERIFY2(frac.ok(), frac.error().str().c_str());
        QCOMPARE(frac->cases[1].scenario.constraints.memoryFraction, 0.95);
        const Metrics m0 = CostModel(frac->cases[0].scenario).evaluate(frac->cases[0].plan),
                      m1 = CostModel(frac->cases[1].scenario).evaluate(frac->cases[1].plan);
        QCOMPARE(m1.memoryFraction, 0.95);
        QVERIFY2(m1.kvPoolGiB > m0.kvPoolGiB,
                 qPrintable(QString("%1 %2").arg(m0.kvPoolGiB).arg(m1.kvPoolGiB)));
        std::ofstream(path) << "version: 1\nmeasurements:\n"
                            << row("too-much", "h100-sxm", "fp8", "    memory_fraction: 1.5\n");
        auto over = loadCalibrationSet(path, SHARDPLAN_SAMPLES_DIR);
        QVERIFY(!over.ok());
        QVERIFY2(QString::fromStdString(over.error().str()).contains("memory_fraction"),
                 over.error().str().c_str());
        std::ofstream(path) << "version: 1\nmeasurements:\n" << row("fp4", "b200", "fp4", "");
        auto bad = loadCalibrationSet(path, SHARDPLAN_SAMPLES_DIR);
        QVERIFY(!bad.ok());
        QVERIFY2(QString::fromStdString(bad.error().str()).contains("precision"), bad.error().str().c_str());
    }
};

QTEST_GUILESS_MAIN(TestCalibration)
#include "tst_calibration.moc"
