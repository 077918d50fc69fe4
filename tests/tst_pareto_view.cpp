// The Pareto tab: the chart widget (views/pareto.h) and the worker glue that runs the sweep (ParetoRunner).
#include "core/io/formats.h"
#include "mainwindow.h"
#include "paretorunner.h"
#include "views/messagebanner.h"
#include "views/pareto.h"

#include <QFile>
#include <QFileInfo>
#include <QLabel>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTest>

using namespace sp;

namespace {

ParetoPoint point(double perGpu, double userTps, const char* family) {
    ParetoPoint p;
    p.throughputPerGpu = perGpu;
    p.userTokensPerS = userTps;
    p.tpotMs = 1000.0 / userTps;
    p.family = family;
    return p;
}

Scenario loadSample(const char* name) {
    auto s = loadScenario(std::string(SHARDPLAN_SAMPLES_DIR "/scenarios/") + name);
    if (!s) qFatal("%s", s.error().str().c_str());
    return s.value();
}

} // namespace

class TestParetoView : public QObject {
    Q_OBJECT
private slots:
private slots:
    // The status is read whole at a laptop's width: on a row of its own, wrapped (in the toolbar it got what
    // width was left, a clipped "1" beside "Clear overlay"), and the controls fit in two rows.
    void statusReadWholeWhenNarrow() {
        views::ParetoView v;
        v.resize(680, 500);
        v.show();
        QVERIFY(QTest::qWaitForWindowExposed(&v));
        const QString text =
            QStringLiteral("16 points (Megatron's best and 15 searched), 11 Megatron points, "
                           "8 disaggregated splits; a point's tooltip says its plan");
        v.setStatus(text);
        QTest::qWait(50);
        QLabel* status = nullptr;
        for (QLabel* l : v.findChildren<QLabel*>())
            if (l->text() == text) status = l;
        QVERIFY(status);
        QVERIFY(status->isVisible());
        // Whole: as tall as its wrapped text needs at its width, and inside the view.
        QVERIFY2(status->height() >= status->heightForWidth(status->width()),
                 qPrintable(QStringLiteral("%1 < %2")
                                .arg(status->height())
                                .arg(status->heightForWidth(status->width()))));
        QVERIFY(status->geometry().right() <= v.width());
        QVERIFY2(v.minimumSizeHint().width() <= 680,
                 qPrintable(QString::number(v.minimumSizeHint().width())));
    }

    // With the stale banner shown (its text wraps over lines) in a short view, the plot keeps its height: the
    // page's least height holds it, so the tab scrolls (it once squeezed the plot to about 40 px at 720 p).
    void bannerLeavesThePlotItsHeight() {
        views::ParetoView v;
        v.setStale(QStringLiteral("the scenario changed since this sweep: the model, the cluster (GPU type, "
                                  "nodes), the workload's lengths and SLOs; rerun to sweep it as it is now"));
        v.resize(640, 240);
        v.show();
        QVERIFY(QTest::qWaitForWindowExposed(&v));
        QVERIFY(v.isStale());
        v.resize(640, v.minimumSizeHint().height()); // as a scroll area lays out a page taller than itself
        QTest::qWait(50);
        QVERIFY2(v.plotWidget()->height() >= views::ParetoView::kMinPlotHeight,
                 qPrintable(QString::number(v.plotWidget()->height())));
    }

    // Points are grouped by family, in order of first appearance, drawn after the 40 ms throttle; the final
    // result replaces them; a point a log axis cannot show is dropped.
    void viewGroupsByFamily() {
        views::ParetoView v;
        v.resize(800, 500);
        QSignalSpy redrawn(&v, &views::ParetoView::redrawn);
        v.addPoint(point(4000, 8, "attention-DP + EP"), false);
        v.addPoint(point(100, 80, "TP + EP"), false);
        v.addPoint(point(2000, 20, "attention-DP + EP"), false);
        v.addPoint(point(200, 40, "TP + EP"), true);
        v.addPoint(point(0, 40, "TP"), false);
        QCOMPARE(v.drawnPoints("TP + EP"), 0); // not yet: the throttle
        QTRY_COMPARE_WITH_TIMEOUT(v.drawnPoints("attention-DP + EP"), 2, 2000);
        QCOMPARE(v.families(), QStringList({"attention-DP + EP", "TP + EP"}));
        QCOMPARE(v.drawnPoints("TP + EP"), 1);
        QCOMPARE(v.drawnPoints("megatron"), 1);
        QVERIFY(redrawn.count() >= 1);

        ParetoResult r;
        r.frontier = {point(4000, 8, "attention-DP + EP")};
        v.setResult(r);
        QCOMPARE(v.drawnPoints("attention-DP + EP"), 1);
        QCOMPARE(v.families(), QStringList({"attention-DP + EP"})); // TP + EP had only dominated points
        QCOMPARE(v.drawnPoints("TP + EP"), 0);
        QCOMPARE(v.drawnPoints("megatron"), 0);
        v.clear();
        QVERIFY(v.families().isEmpty());
        QVERIFY(views::layoutFamilyColor("TP") != views::layoutFamilyColor("attention-DP + EP"));
    }

    void viewControls() {
        views::ParetoView v;
        QSignalSpy start(&v, &views::ParetoView::startRequested);
        QPushButton* sweep = nullptr;
        for (auto* b : v.findChildren<QPushButton*>())
            if (b->text() == QLatin1String("Sweep")) sweep = b;
        QVERIFY(sweep);
        sweep->click();
        QCOMPARE(start.count(), 1);
        QCOMPARE(start[0][0].toInt(), 16);
        QCOMPARE(start[0][1].toLongLong(), 2000);
        v.setRunning(true);
        QVERIFY(!sweep->isEnabled());
        v.setRunning(false);
        QVERIFY(sweep->isEnabled());
    }

    // The runner reports points as the sweep finds them, then the result, on the GUI thread.
    void runnerReportsLive() {
        app::ParetoRunner runner;
        QSignalSpy points(&runner, &app::ParetoRunner::pointsFound);
        QSignalSpy finished(&runner, &app::ParetoRunner::finished);
        QSignalSpy failed(&runner, &app::ParetoRunner::failed);
        ParetoOptions o;
        o.points = 5;
        o.budget = 200;
        o.threads = 2;
        const quint64 id = runner.start(loadSample("llama-3.1-70b-h100-4x8.yaml"), o);
        QVERIFY(runner.isRunning());
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 60000);
        QCOMPARE(failed.count(), 0);
        QVERIFY(points.count() >= 1);
        QCOMPARE(finished[0][0].value<quint64>(), id);
        const auto result = finished[0][1].value<app::ParetoResultPtr>();
        QVERIFY(result && !result->frontier.empty());
        QVERIFY(!runner.isRunning());
    }

    // A cancelled sweep reports nothing more; a refused one fails with the reason.
    void runnerCancelAndFail() {
        app::ParetoRunner runner;
        QSignalSpy finished(&runner, &app::ParetoRunner::finished);
        QSignalSpy failed(&runner, &app::ParetoRunner::failed);
        ParetoOptions o;
        o.budget = 1000000;
        runner.start(loadSample("deepseek-v3-h100-32x8.yaml"), o);
        runner.cancel();
        QTest::qWait(300);
        QCOMPARE(finished.count(), 0);
        o.searcher = "nope";
        runner.start(loadSample("llama-3.1-70b-h100-4x8.yaml"), o);
        QTRY_COMPARE_WITH_TIMEOUT(failed.count(), 1, 30000);
        QVERIFY(failed[0][1].toString().contains("unknown searcher"));
        QCOMPARE(finished.count(), 0);
    }

    // The disaggregated comparison and the overlay, in the window. The disaggregated series holds what the
    // core's disaggregatedFrontier returns at the sweep's own targets; a file that does not load leaves
    // the chart as it was and says so in the banner; an overlay adds its series; clearing removes it.
    void comparisonInTheWindow() {
        app::MainWindow::Options opts;
        opts.persistSettings = false;
        opts.confirmClose = false;
        opts.threadsPerRun = 1; // one evaluation thread, so the core's own call below searches alike
        QTemporaryDir dir;
        QString answer;
        opts.fileAnswer = [&answer](const QString&, const QString&, const QString&) { return answer; };
        app::MainWindow w(opts);
        w.resize(1600, 1000);
        w.show();
        const char* sample = "deepseek-v3-h100-32x8-long-prompts.yaml";
        QVERIFY(w.openScenario(QString(SHARDPLAN_SAMPLES_DIR "/scenarios/") + sample));
        auto* view = w.paretoView();
        w.showPage(view);
        const auto spins = view->findChildren<QSpinBox*>();
        QCOMPARE(spins.size(), 2);
        spins[0]->setValue(4);   // points
        spins[1]->setValue(300); // budget per search
        QPushButton *sweep = nullptr, *overlay = nullptr, *clear = nullptr;
        for (auto* b : view->findChildren<QPushButton*>()) {
            if (b->text() == QLatin1String("Sweep")) sweep = b;
            if (b->text() == QLatin1String("Overlay scenario...")) overlay = b;
            if (b->text() == QLatin1String("Clear overlay")) clear = b;
        }
        QVERIFY(sweep && overlay && clear);
        QVERIFY(!clear->isEnabled());
        view->setDisaggregatedChecked(true);
        sweep->click();
        QTRY_VERIFY_WITH_TIMEOUT(sweep->isEnabled(), 120000);
        QVERIFY(view->result());

        ParetoOptions o;
        o.points = 4;
        o.budget = 300;
        o.threads = 1;
        const auto expected = disaggregatedFrontier(loadSample(sample), view->result()->targetsMs,
                                                    app::MainWindow::disaggregatedOptions(o));
        QVERIFY(!expected.empty()); // long prompts: the sample disaggregation is meant for
        const auto& got = view->disaggregatedPoints();
        QCOMPARE(got.size(), expected.size());
        QCOMPARE(view->drawnPoints("disaggregated"), int(expected.size()));
        for (size_t i = 0; i < got.size(); ++i) {
            QCOMPARE(got[i].throughputPerGpu, expected[i].throughputPerGpu);
            QCOMPARE(got[i].userTokensPerS, expected[i].userTokensPerS);
            QCOMPARE(got[i].split.plan.prefill.nodes, expected[i].split.plan.prefill.nodes);
            QCOMPARE(got[i].split.plan.decode.nodes, expected[i].split.plan.decode.nodes);
            // The gain reads the aggregated frontier's best plan under the same target.
            const ParetoPoint* agg = pointAtTpot(view->result()->frontier, got[i].targetTpotMs * (1 + 1e-9));
            QCOMPARE(view->disaggregatedGain(got[i]),
                     agg ? got[i].throughputPerGpu / agg->throughputPerGpu : 0.0);
        }
        int drawn = 0;
        for (const QString& f : view->families()) drawn += view->drawnPoints(f);
        QVERIFY(drawn >= 1);

        // A malformed overlay file: an error, and the chart as it was.
        const QString bad = dir.filePath("bad.yaml");
        QFile f(bad);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("model: [unclosed\n");
        f.close();
        answer = bad;
        overlay->click();
        QVERIFY(w.messageBanner()->isVisible());
        QVERIFY2(w.messageBanner()->text().contains("Overlay"), qPrintable(w.messageBanner()->text()));
        QVERIFY(view->overlayName().isEmpty());
        QCOMPARE(view->drawnPoints("overlay"), 0);
        QCOMPARE(view->drawnPoints("disaggregated"), int(expected.size()));
        int drawnAfter = 0;
        for (const QString& fam : view->families()) drawnAfter += view->drawnPoints(fam);
        QCOMPARE(drawnAfter, drawn);

        // A scenario of another cluster: its frontier, named after it, over this one.
        answer = SHARDPLAN_SAMPLES_DIR "/scenarios/llama-3.1-70b-h100-4x8.yaml";
        overlay->click();
        QTRY_VERIFY_WITH_TIMEOUT(!view->overlayName().isEmpty(), 120000);
        QCOMPARE(view->overlayName(), QString::fromStdString(loadSample("llama-3.1-70b-h100-4x8.yaml").name));
        QVERIFY(view->drawnPoints("overlay") >= 1);
        QVERIFY(clear->isEnabled());
        QCOMPARE(view->drawnPoints("disaggregated"), int(expected.size()));
        if (const QByteArray shots = qgetenv("SHARDPLAN_SCREENSHOT_DIR"); !shots.isEmpty())
            QVERIFY(w.grab().save(QString::fromLocal8Bit(shots) + "/pareto-compare.png"));
        clear->click();
        QVERIFY(view->overlayName().isEmpty());
        QCOMPARE(view->drawnPoints("overlay"), 0);
        QVERIFY(!clear->isEnabled());
    }

    // In the window: the Pareto tab sweeps the scenario opened, live, and a clicked point becomes the plan
    // every view shows. SHARDPLAN_SCREENSHOT_DIR, when set, receives a picture of the tab.
    void inTheWindow() {
        app::MainWindow::Options opts;
        opts.persistSettings = false;
        opts.confirmClose = false;
        QTemporaryDir dir;
        QString answer; // what the export dialog answers
        opts.fileAnswer = [&answer](const QString&, const QString&, const QString&) { return answer; };
        app::MainWindow w(opts);
        w.resize(1600, 1000);
        w.show();
        QVERIFY(w.openScenario(SHARDPLAN_SAMPLES_DIR "/scenarios/deepseek-v3-h100-32x8.yaml"));
        auto* view = w.findChild<views::ParetoView*>();
        QVERIFY(view);
        w.showPage(view);
        QPushButton* sweep = nullptr;
        for (auto* b : view->findChildren<QPushButton*>())
            if (b->text() == QLatin1String("Sweep")) sweep = b;
        QVERIFY(sweep);
        QSignalSpy clicked(view, &views::ParetoView::planClicked);
        sweep->click();
        QVERIFY(!sweep->isEnabled());
        QTRY_VERIFY_WITH_TIMEOUT(sweep->isEnabled(), 120000);
        int drawn = 0;
        for (const QString& f : view->families()) drawn += view->drawnPoints(f);
        QVERIFY(drawn >= 2);
        QVERIFY(view->drawnPoints("megatron") >= 1);
        QVERIFY(view->families().size() >= 2); // DeepSeek-V3's frontier changes layout along the way
        if (const QByteArray shots = qgetenv("SHARDPLAN_SCREENSHOT_DIR"); !shots.isEmpty())
            QVERIFY(w.grab().save(QString::fromLocal8Bit(shots) + "/pareto.png"));

        // Export: the chart as PNG and SVG, the points as CSV (a header, then one row per point).
        QPushButton* exportButton = nullptr;
        for (auto* b : view->findChildren<QPushButton*>())
            if (b->text() == QLatin1String("Export...")) exportButton = b;
        QVERIFY(exportButton && exportButton->isEnabled());
        for (const char* name : {"front.png", "front.svg", "front.csv"}) {
            answer = dir.filePath(name);
            exportButton->click();
            QVERIFY2(QFileInfo(answer).size() > 100, name);
        }
        QFile csv(dir.filePath("front.csv"));
        QVERIFY(csv.open(QIODevice::ReadOnly));
        const QStringList lines = QString::fromUtf8(csv.readAll()).split('\n', Qt::SkipEmptyParts);
        QVERIFY(lines[0].startsWith("frontier,user_tokens_per_s"));
        QCOMPARE(lines.size(), 1 + int(view->result()->frontier.size() + view->result()->megatron.size()));

        ParetoPoint p;
        p.plan = Plan::megatronChoices({1, 32, 8, 256, 1, 1});
        p.plan.batch = 4;
        p.tpotMs = 12;
        emit view->planClicked(p);
        QVERIFY(w.currentPlan());
        QVERIFY2(w.currentPlan()->label.rfind("pareto", 0) == 0, w.currentPlan()->label.c_str());
        QCOMPARE(w.currentPlan()->plan, p.plan);
    }
};

QTEST_MAIN(TestParetoView)
#include "tst_pareto_view.moc"
