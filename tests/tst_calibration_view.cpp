// The calibration view (views/calibrationview.h) and its dock in the main window: the table from a
// measurement file, errors in its banner, the fit on a worker thread, and "Use the fitted cluster" as an
// undoable edit.
#include "core/common/paths.h"
#include "core/cost/calibration.h"
#include "core/io/formats.h"
#include "mainwindow.h"
#include "views/calibrationview.h"
#include "views/messagebanner.h"
#include "views/runpanel.h"
#include "views/scenarioeditor.h"

#include <QAction>
#include <QDockWidget>
#include <QFile>
#include <QLabel>
#include <QPushButton>
#include <QSignalSpy>
#include <QStandardItemModel>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>
#include <QThreadPool>

#include <cmath>

using namespace sp;
using sp::app::MainWindow;
using sp::views::CalibrationView;

namespace {
const QString kSamples = QStringLiteral(SHARDPLAN_SAMPLES_DIR);
const QString kScenario = kSamples + QStringLiteral("/scenarios/llama-3.1-8b-h100-1x8.yaml");
const QString kPublic = QStringLiteral(SHARDPLAN_TESTDATA_DIR "/calibration/measurements.yaml");

// Three rows of tests/data/calibration/measurements.yaml (sources there), on GPUs of samples/clusters.
const char* kThreeRows = R"(version: 1
measurements:
  - id: trtllm-v0.17-llama3.1-8b-h100x1-tp1-128in-2048out
    model: llama-3.1-8b
    gpu: h100-sxm
    nodes: 1
    gpus_per_node: 1
    precision: fp8
    plan: {tp: 1, pp: 1, dp: 1}
    phase: serving
    input_tokens: 128
    output_tokens: 2048
    metric: output_tokens_per_s
    value: 21109.38
  - id: trtllm-v0.17-llama3.1-70b-h200x8-tp8-2048in-128out
    model: llama-3.1-70b
    gpu: h200-sxm
    nodes: 1
    gpus_per_node: 8
    precision: fp8
    plan: {tp: 8, pp: 1, dp: 1}
    phase: serving
    input_tokens: 2048
    output_tokens: 128
    metric: output_tokens_per_s
    value: 1983.03
  - id: trtllm-v0.14-llama3.1-70b-h100x4-tp4-bf16-qps2-ttft
    model: llama-3.1-70b
    gpu: h100-sxm
    nodes: 1
    gpus_per_node: 4
    precision: bf16
    plan: {tp: 4, pp: 1, dp: 1}
    phase: prefill
    input_tokens: 467
    output_tokens: 256
    metric: ttft_ms
    value: 62
)";

QString writeFile(const QTemporaryDir& dir, const QString& name, const QByteArray& text) {
    const QString path = dir.filePath(name);
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly)) return {};
    f.write(text);
    return path;
}

double cell(const CalibrationView& v, int row, int column) {
    return v.model()->index(row, column).data(CalibrationView::ValueRole).toDouble();
}

/// The three rows with "measured" values made by the model itself at known factors: a fit can reproduce them.
CalibrationSet syntheticSet(const QString& path, const Efficiency& truth) {
    auto set = loadCalibrationSet(path.toStdString(), SHARDPLAN_SAMPLES_DIR);
    if (!set) return {};
    CalibrationSet s = set.value();
    for (auto& c : s.cases) {
        CalibrationCase t = c;
        t.scenario.cluster.efficiency = truth;
        c.measured = predictCase(t).predicted;
    }
    return s;
}

Efficiency truthFactors() {
    Efficiency e;
    e.compute = 0.5, e.memory = 0.65, e.launchUs = 7.0;
    return e;
}

MainWindow::Options testOptions() {
    MainWindow::Options o;
    o.persistSettings = false;
    o.confirmClose = false;
    return o;
}
} // namespace

class TestCalibrationView : public QObject {
    Q_OBJECT
private slots:
    void tableFillsFromFile() {
        QTemporaryDir dir;
        const QString path = writeFile(dir, QStringLiteral("m.yaml"), kThreeRows);
        CalibrationView v(kSamples);
        QSignalSpy loaded(&v, &CalibrationView::loaded);
        QVERIFY2(v.loadFile(path), qPrintable(v.banner()->text()));
        QCOMPARE(loaded.count(), 1);
        QCOMPARE(v.model()->rowCount(), 3);
        QCOMPARE(v.model()->index(0, CalibrationView::Id).data().toString(),
                 QStringLiteral("trtllm-v0.17-llama3.1-8b-h100x1-tp1-128in-2048out"));
        // Measured values as written in the file; the TTFT row in milliseconds.
        QCOMPARE(cell(v, 0, CalibrationView::Measured), 21109.38);
        QCOMPARE(cell(v, 1, CalibrationView::Measured), 1983.03);
        QCOMPARE(v.model()->index(2, CalibrationView::Measured).data().toString(), QStringLiteral("62.0 ms"));
        QCOMPARE(v.model()->index(2, CalibrationView::Metric).data().toString(), QStringLiteral("TTFT"));
        // Error = model / measured - 1, each row as the core predicts it.
        for (int r = 0; r < 3; ++r) {
            const double model = cell(v, r, CalibrationView::Predicted);
            QVERIFY(model > 0);
            QVERIFY(std::fabs(cell(v, r, CalibrationView::Error) -
                              (model / cell(v, r, CalibrationView::Measured) - 1)) < 1e-12);
        }
        QCOMPARE(v.model()->index(0, CalibrationView::Error).data().toString(),
                 QString::asprintf("%+.1f%%", 100 * v.report().rows[0].error));
        QCOMPARE(v.plottedPoints(false), 3);
        QCOMPARE(v.plottedPoints(true), 0);
        QVERIFY(v.fitButton()->isEnabled());
        QVERIFY(!v.useButton()->isEnabled()); // nothing fitted yet
    }

    void malformedFileKeepsTable_data() {
        QTest::addColumn<QByteArray>("text");
        QTest::addColumn<QString>("message");
        QTest::addRow("yaml syntax") << QByteArray("measurements: [ {id: x, value: ")
                                     << QStringLiteral("bad.yaml");
        QTest::addRow("no measurements")
            << QByteArray("version: 1\nthings: []\n") << QStringLiteral("measurements");
    }
    void malformedFileKeepsTable() {
        QFETCH(QByteArray, text);
        QFETCH(QString, message);
        QTemporaryDir dir;
        CalibrationView v(kSamples);
        const QString good = writeFile(dir, QStringLiteral("m.yaml"), kThreeRows);
        QVERIFY(v.loadFile(good));
        QVERIFY(!v.loadFile(writeFile(dir, QStringLiteral("bad.yaml"), text)));
        QCOMPARE(v.banner()->kind(), views::MessageBanner::Kind::Error);
        QVERIFY2(v.banner()->text().contains(message), qPrintable(v.banner()->text()));
        QVERIFY(!v.banner()->isHidden());
        QCOMPARE(v.model()->rowCount(), 3);
        QCOMPARE(v.origin(), QDir::toNativeSeparators(good));
        // A missing file too.
        QVERIFY(!v.loadFile(dir.filePath(QStringLiteral("none.yaml"))));
        QCOMPARE(v.model()->rowCount(), 3);
    }

    // A `vllm bench serve --save-result` JSON needs the scenario and plan it ran with (the base).
    void readsVllmJsonWithBase() {
        QTemporaryDir dir;
        const QString path = writeFile(dir, QStringLiteral("run.json"), R"({"completed": 100,
            "total_input_tokens": 100000, "total_output_tokens": 20000, "output_throughput": 5000.0,
            "max_concurrency": 64, "mean_ttft_ms": 80.0, "mean_tpot_ms": 25.0})");
        CalibrationView v(kSamples);
        QVERIFY(!v.loadFile(path)); // no base
        QVERIFY(v.banner()->text().contains(QStringLiteral("scenario")));
        auto s = loadScenario(kScenario.toStdString());
        QVERIFY(s.ok());
        v.setBaseSource([s = s.value()] {
            return std::optional<CalibrationView::Base>({s, Plan::megatronChoices({1, 8, 1, 8, 1, 1})});
        });
        QVERIFY2(v.loadFile(path), qPrintable(v.banner()->text()));
        QCOMPARE(v.model()->rowCount(), 3); // output throughput, mean TPOT and mean TTFT
        QCOMPARE(cell(v, 0, CalibrationView::Measured), 5000.0);
        QCOMPARE(v.model()->index(1, CalibrationView::Metric).data().toString(), QStringLiteral("TPOT"));
        QCOMPARE(v.model()->index(2, CalibrationView::Metric).data().toString(), QStringLiteral("TTFT"));
        QCOMPARE(cell(v, 2, CalibrationView::Measured), 80.0);
    }

    // Runs measured with the model at known factors: the fit (on a worker) reproduces them, the after column
    // and the second series fill.
    void fitFillsAfterColumn() {
        QTemporaryDir dir;
        const CalibrationSet set =
            syntheticSet(writeFile(dir, QStringLiteral("m.yaml"), kThreeRows), truthFactors());
        QCOMPARE(set.cases.size(), size_t(3));
        CalibrationView v(kSamples);
        v.setCalibrationSet(set, QStringLiteral("synthetic"));
        QVERIFY(v.report().medianAbsError > 0.05); // the default factors are off
        QSignalSpy done(&v, &CalibrationView::fitFinished);
        v.fit();
        QVERIFY(v.isFitting());
        QCOMPARE(v.fitButton()->text(), QStringLiteral("Stop")); // the same button stops it
        QTRY_COMPARE_WITH_TIMEOUT(done.count(), 1, 300000);
        QCOMPARE(v.fitButton()->text(), QStringLiteral("Fit"));
        QVERIFY(!v.isFitting());
        QVERIFY(v.fitResult());
        for (int r = 0; r < 3; ++r) {
            QVERIFY(!v.model()->index(r, CalibrationView::Fitted).data().toString().isEmpty());
            const double fitted = cell(v, r, CalibrationView::Fitted);
            QVERIFY2(std::fabs(fitted) < 0.02, qPrintable(QString::number(fitted)));
            QVERIFY(!v.model()->index(r, CalibrationView::LeaveOneOut).data().toString().isEmpty());
        }
        QCOMPARE(v.plottedPoints(true), 3);
        QVERIFY(v.useButton()->isEnabled());
        QVERIFY(!(v.fitResult()->efficiency == Efficiency{}));
        // One source (the rows state none): no source to hold out, the column stays hidden.
        QVERIFY(v.table()->isColumnHidden(CalibrationView::LeaveSourceOut));
        QVERIFY(!v.summary()->text().contains(QStringLiteral("sources held out")));
        // Two sources: each held out in turn fills the column and the summary says so.
        CalibrationSet two = set;
        two.cases[0].source = two.cases[1].source = "https://example.org/table";
        two.cases[2].source = "https://example.org/blog";
        v.setCalibrationSet(two, QStringLiteral("synthetic, two sources"));
        v.fit();
        QTRY_COMPARE_WITH_TIMEOUT(done.count(), 2, 300000);
        QVERIFY(!v.table()->isColumnHidden(CalibrationView::LeaveSourceOut));
        for (int r = 0; r < 3; ++r)
            QVERIFY(!v.model()->index(r, CalibrationView::LeaveSourceOut).data().toString().isEmpty());
        QVERIFY2(v.summary()->text().contains(QStringLiteral("2 sources held out")),
                 qPrintable(v.summary()->text()));
    }

    // Stop while the fit of the public file (minutes) runs: it ends promptly, nothing changes, and a later
    // fit runs again.
    void stopKeepsEverything() {
        auto set = loadCalibrationSet(kPublic.toStdString(), SHARDPLAN_SAMPLES_DIR);
        QVERIFY(set.ok());
        CalibrationView v(kSamples);
        v.setCalibrationSet(set.value(), kPublic);
        const double before = v.report().medianAbsError;
        QSignalSpy stopped(&v, &CalibrationView::fitStopped), done(&v, &CalibrationView::fitFinished);
        v.fit();
        QVERIFY(v.isFitting());
        QTest::qWait(200);
        QTest::mouseClick(v.fitButton(), Qt::LeftButton); // "Stop"
        QTRY_COMPARE_WITH_TIMEOUT(stopped.count(), 1, 60000);
        QCOMPARE(done.count(), 0);
        QVERIFY(!v.isFitting());
        QVERIFY(!v.fitResult());
        QVERIFY(!v.useButton()->isEnabled());
        QCOMPARE(v.fitButton()->text(), QStringLiteral("Fit"));
        QCOMPARE(v.report().medianAbsError, before);
        v.fit(); // and again
        QVERIFY(v.isFitting());
        v.stopFit();
        QTRY_COMPARE_WITH_TIMEOUT(stopped.count(), 2, 60000);
    }

    // Destroying the view while its fit runs: no wait, no crash; the worker finishes on its own.
    void destroyWhileFitting() {
        auto set = loadCalibrationSet(kPublic.toStdString(), SHARDPLAN_SAMPLES_DIR);
        QVERIFY(set.ok());
        auto* v = new CalibrationView(kSamples);
        v->setCalibrationSet(set.value(), kPublic);
        v->fit();
        QVERIFY(v->isFitting());
        delete v;
        QCoreApplication::processEvents();
        QVERIFY(QThreadPool::globalInstance()->waitForDone(300000));
        QCoreApplication::processEvents(); // the finished signal has no receiver left
    }

    void useFittedClusterIsUndoable() {
        MainWindow w(testOptions());
        QVERIFY(w.openScenario(kScenario));
        QAction* open = w.action(QStringLiteral("calibration"));
        QVERIFY(open);
        open->trigger();
        QVERIFY(w.calibrationDock()->isVisible());
        CalibrationView* v = w.calibrationView();
        QCOMPARE(v->origin(), QDir::toNativeSeparators(QString::fromStdString(sp::calibrationFile())));
        QVERIFY(v->model()->rowCount() >= 12); // the project's measurements

        QTemporaryDir dir;
        v->setCalibrationSet(
            syntheticSet(writeFile(dir, QStringLiteral("m.yaml"), kThreeRows), truthFactors()),
            QStringLiteral("synthetic"));
        QSignalSpy done(v, &CalibrationView::fitFinished);
        v->fit();
        QTRY_COMPARE_WITH_TIMEOUT(done.count(), 1, 300000);
        const Efficiency before = w.scenarioEditor()->scenario().cluster.efficiency;
        const Efficiency fitted = v->fitResult()->efficiency;
        QVERIFY(!(before == fitted));
        QVERIFY(v->useButton()->isEnabled());
        QTest::mouseClick(v->useButton(), Qt::LeftButton);
        QVERIFY(w.scenarioEditor()->scenario().cluster.efficiency == fitted);
        QVERIFY(w.context()); // no results yet: the views follow the edit
        QVERIFY(w.context()->scenario().cluster.efficiency == fitted);
        QAction* undo = w.action(QStringLiteral("undo"));
        QVERIFY(undo->isEnabled());
        undo->trigger();
        QVERIFY(w.scenarioEditor()->scenario().cluster.efficiency == before);
        QVERIFY(w.context()->scenario().cluster.efficiency == before);
        w.action(QStringLiteral("redo"))->trigger();
        QVERIFY(w.scenarioEditor()->scenario().cluster.efficiency == fitted);
    }

    // With results on display, using the fitted cluster marks them stale, as any edit does; undo clears it.
    void useFittedClusterMarksResultsStale() {
        MainWindow w(testOptions());
        w.show();
        QVERIFY(w.openScenario(kScenario));
        w.runPanel()->setSelectedSearchers({QStringLiteral("random")});
        w.runPanel()->setBudget(100);
        QSignalSpy searched(&w, &MainWindow::searchFinished);
        w.startSearch();
        QVERIFY(searched.wait(120000) || searched.count() > 0);
        QVERIFY(!w.staleBanner()->isVisible());
        const Efficiency before = w.context()->scenario().cluster.efficiency;
        QTemporaryDir dir;
        CalibrationView* v = w.calibrationView();
        v->setCalibrationSet(
            syntheticSet(writeFile(dir, QStringLiteral("m.yaml"), kThreeRows), truthFactors()),
            QStringLiteral("synthetic"));
        QSignalSpy done(v, &CalibrationView::fitFinished);
        v->fit();
        QTRY_COMPARE_WITH_TIMEOUT(done.count(), 1, 300000);
        QTest::mouseClick(v->useButton(), Qt::LeftButton);
        QVERIFY(w.staleBanner()->isVisible());
        QVERIFY(w.staleBanner()->text().contains(QStringLiteral("stale")));
        QVERIFY(w.context()->scenario().cluster.efficiency == before); // the results' scenario, until a rerun
        w.action(QStringLiteral("undo"))->trigger();
        QVERIFY(!w.staleBanner()->isVisible());
    }
};

QTEST_MAIN(TestCalibrationView)
#include "tst_calibration_view.moc"
