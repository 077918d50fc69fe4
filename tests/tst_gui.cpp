// The planner window, offscreen: opening every sample, a short search filling the chart and the elite table,
// a prompt stop, exports (the plan passes `shardplan validate`), sessions, files opened alone, stale results.
#include "core/io/formats.h"
#include "mainwindow.h"
#include "views/comparison.h"
#include "views/elitemodel.h"
#include "views/heatmap.h"
#include "views/learningcurve.h"
#include "views/messagebanner.h"
#include "views/runpanel.h"
#include "views/scenarioeditor.h"
#include "views/searchchart.h"
#include "views/topology.h"

#include <QAbstractItemModelTester>
#include <QDir>
#include <QElapsedTimer>
#include <QLineEdit>
#include <QProcess>
#include <QSignalSpy>
#include <QSortFilterProxyModel>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTest>

using namespace sp;
using sp::app::MainWindow;

namespace {
const QString kSamples = QStringLiteral(SHARDPLAN_SAMPLES_DIR);
const QString kDefault = kSamples + QStringLiteral("/scenarios/llama-3.1-8b-h100-1x8.yaml");

MainWindow::Options testOptions() {
    MainWindow::Options o;
    o.persistSettings = false;
    o.confirmClose = false;
    return o;
}

struct Run {
    int code = -1;
    QString out, err;
};
Run shardplan(const QStringList& args) {
    QProcess p;
    p.start(QStringLiteral(SHARDPLAN_CLI), args);
    p.waitForFinished(120000);
    return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1,
            QString::fromUtf8(p.readAllStandardOutput()), QString::fromUtf8(p.readAllStandardError())};
}

/// Runs a short search (random + sa) and waits for it to end.
bool shortSearch(MainWindow& w, qint64 budget = 300) {
    w.runPanel()->setSelectedSearchers({QStringLiteral("random"), QStringLiteral("sa")});
    w.runPanel()->setBudget(budget);
    QSignalSpy done(&w, &MainWindow::searchFinished);
    w.startSearch();
    return done.wait(120000) || done.count() > 0;
}
} // namespace

class TestGui : public QObject {
    Q_OBJECT
private slots:
    void opensEverySample_data() {
        QTest::addColumn<QString>("path");
        for (const QFileInfo& fi :
             QDir(kSamples + QStringLiteral("/scenarios")).entryInfoList({"*.yaml"}, QDir::Files))
            QTest::addRow("%s", qPrintable(fi.fileName())) << fi.absoluteFilePath();
    }
    void opensEverySample() {
        QFETCH(QString, path);
        MainWindow w(testOptions());
        w.show();
        QVERIFY(w.openScenario(path));
        QVERIFY(w.context());
        const Scenario s = loadScenario(path.toStdString()).value();
        QCOMPARE(w.scenarioEditor()->scenario(), s);
        QVERIFY(w.windowTitle().contains(QString::fromStdString(s.name)));
        // Before any search the views show the Megatron plan.
        QVERIFY(w.currentPlan());
        QCOMPARE(w.currentPlan()->label, std::string("Megatron"));
        QVERIFY(w.shardingView()->heatmap()->rowCount() >= 8);
        QCOMPARE(w.shardingView()->heatmap()->columnCount(), int(s.model.layers));
        QVERIFY(!w.messageBanner()->isVisible());
        for (int t = 0; t < w.tabs()->count(); ++t) {
            w.tabs()->setCurrentIndex(t);
            QVERIFY(!w.tabs()->currentWidget()->grab().isNull());
        }
    }

    void shortSearchFillsChartAndElite() {
        MainWindow w(testOptions());
        w.show();
        QVERIFY(w.openScenario(kDefault));
        // The elite model is checked while it is updated live.
        QAbstractItemModelTester tester(w.eliteModel(),
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        QAbstractItemModelTester proxyTester(w.eliteProxy(),
                                             QAbstractItemModelTester::FailureReportingMode::QtTest);
        QVERIFY(shortSearch(w, 300));
        QVERIFY(!w.isSearching());
        for (const char* s : {"random", "sa"}) {
            QCOMPARE(w.chart()->evaluations(QLatin1String(s)), int64_t(300));
            QTRY_VERIFY(w.chart()->drawnPoints(QLatin1String(s)) > 0);
        }
        QVERIFY(w.eliteModel()->rowCount() > 10);
        // The best row is selected and shown in every view.
        const auto best = w.currentPlan();
        QVERIFY(best);
        QVERIFY(best->metrics().feasible);
        const double top =
            w.eliteProxy()
                ->data(w.eliteProxy()->index(0, views::EliteModel::Throughput), views::EliteModel::SortRole)
                .toDouble();
        QCOMPARE(best->metrics().throughput, top);
        QVERIFY(best->metrics().throughput >= w.context()->megatron()->metrics().throughput);
        QCOMPARE(w.comparisonView()->left()->label, std::string("Megatron"));
        QVERIFY(w.comparisonView()->right()->plan == best->plan);
        QVERIFY(w.hasUnsavedResults());
        // Selecting another row shows it.
        QSignalSpy changed(&w, &MainWindow::currentPlanChanged);
        const int other = w.eliteProxy()->mapToSource(w.eliteProxy()->index(3, 0)).row();
        w.selectEliteRow(other);
        QCOMPARE(changed.count(), 1);
        QVERIFY(w.currentPlan()->plan == w.eliteModel()->entry(other).candidate->plan);
    }

    // The rl searcher's learning curve reaches its tab: one point per iteration for each series.
    void rlFillsLearningCurve() {
        MainWindow w(testOptions());
        w.show();
        QVERIFY(w.openScenario(kDefault));
        QVERIFY(w.learningCurve()->showingPlaceholder());
        w.runPanel()->setSelectedSearchers({QStringLiteral("rl")});
        w.runPanel()->setBudget(400);
        QSignalSpy done(&w, &MainWindow::searchFinished);
        w.startSearch();
        QVERIFY(done.wait(120000) || done.count() > 0);
        QTRY_VERIFY(!w.learningCurve()->showingPlaceholder());
        const QStringList names = w.learningCurve()->seriesNames();
        QVERIFY(names.contains(QStringLiteral("entropy")));
        QVERIFY(names.contains(QStringLiteral("temperature")));
        const auto entropy = w.learningCurve()->points(QStringLiteral("entropy"));
        QVERIFY(entropy.size() >= 5); // 400 evaluations at 32 plans an iteration, repeats aside
        QCOMPARE(entropy.first().x(), 1.0);
        for (const QString& n : names) QCOMPARE(w.learningCurve()->points(n).size(), entropy.size());
    }

    void comparisonMarksDifferingChoices() {
        MainWindow w(testOptions());
        w.show();
        QVERIFY(w.openScenario(kDefault));
        QVERIFY(shortSearch(w, 300));
        const auto L = w.comparisonView()->left(), R = w.comparisonView()->right();
        QVERIFY(L && R);
        QStringList expected;
        for (Axis a : {Axis::PP, Axis::DP, Axis::TP})
            if (L->plan.degrees.get(a) != R->plan.degrees.get(a))
                expected << QString::fromUtf8(kAxisNames[size_t(a)].data());
        if (L->plan.meshOrder != R->plan.meshOrder) expected << QStringLiteral("mesh order");
        for (Op op : {Op::Embedding, Op::Norms, Op::Qkv, Op::Attention, Op::OutProj, Op::FfnUp, Op::FfnDown,
                      Op::LmHead})
            if (L->plan.choice(op) != R->plan.choice(op))
                expected << QString::fromUtf8(kOpNames[size_t(op)].data());
        QVERIFY(!expected.isEmpty()); // the search beats Megatron on this scenario by changing something
        QCOMPARE(w.comparisonView()->differences(), expected);
    }

    void stopReturnsPromptly() {
        MainWindow w(testOptions());
        w.show();
        QVERIFY(w.openScenario(kSamples + QStringLiteral("/scenarios/deepseek-v3-h100-32x8.yaml")));
        w.runPanel()->setSelectedSearchers(
            {QStringLiteral("random"), QStringLiteral("sa"), QStringLiteral("ga")});
        w.runPanel()->setBudget(50'000'000);
        QSignalSpy done(&w, &MainWindow::searchFinished);
        w.startSearch();
        QVERIFY(w.isSearching());
        QTRY_VERIFY_WITH_TIMEOUT(w.chart()->evaluations(QStringLiteral("sa")) > 100, 30000);
        QElapsedTimer t;
        t.start();
        w.stopSearch();
        QTRY_COMPARE_WITH_TIMEOUT(done.count(), 1, 5000);
        qInfo("stopped in %lld ms", static_cast<long long>(t.elapsed()));
        QVERIFY2(t.elapsed() < 1000, qPrintable(QStringLiteral("stopped after %1 ms").arg(t.elapsed())));
        QVERIFY(!w.isSearching());
        QVERIFY(w.eliteModel()->rowCount() > 0); // the best so far stays
    }

    void exportedPlanValidates() {
        MainWindow w(testOptions());
        w.show();
        QVERIFY(w.openScenario(kDefault));
        QVERIFY(shortSearch(w, 200));
        QTemporaryDir dir;
        const QString yaml = dir.filePath(QStringLiteral("best.yaml")),
                      json = dir.filePath(QStringLiteral("best.json"));
        QVERIFY(w.exportPlan(yaml));
        QVERIFY(w.exportPlan(json));
        const Run r = shardplan({QStringLiteral("validate"), yaml, json});
        QVERIFY2(r.code == 0, qPrintable(r.out + r.err));
        QCOMPARE(r.out.count(QStringLiteral(": plan ")), 2);
        // The file holds the plan shown.
        auto back = loadPlan(yaml.toStdString());
        QVERIFY(back.ok());
        QVERIFY(back.value() == w.currentPlan()->plan);
        // And the CLI evaluates it to the same throughput.
        const Run e = shardplan({QStringLiteral("evaluate"), QStringLiteral("--json"),
                                 QStringLiteral("--scenario"), kDefault, QStringLiteral("--plan"), json});
        QCOMPARE(e.code, 0);
        QVERIFY(e.out.contains(QString::number(w.currentPlan()->metrics().throughput, 'g', 6).left(5)));
        // History CSV and images.
        const QString csv = dir.filePath(QStringLiteral("history.csv"));
        QVERIFY(w.exportHistoryCsv(csv));
        QFile f(csv);
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QStringList lines = QString::fromUtf8(f.readAll()).trimmed().split('\n');
        QCOMPARE(lines.first(), QStringLiteral("evaluations,best_random_tokens_per_s,best_sa_tokens_per_s"));
        QVERIFY(lines.size() > 2);
        QVERIFY(lines.last().startsWith(QStringLiteral("200,")));
        for (auto view : {MainWindow::Tab::Chart, MainWindow::Tab::Sharding, MainWindow::Tab::Topology,
                          MainWindow::Tab::Comparison})
            for (const char* ext : {"png", "svg"}) {
                const QString path =
                    dir.filePath(QStringLiteral("view%1.%2").arg(int(view)).arg(QLatin1String(ext)));
                QVERIFY(w.exportImage(view, path));
                QVERIFY(QFileInfo(path).size() > 1000);
            }
        // A failed export shows the error and leaves no file.
        QVERIFY(!w.exportPlan(dir.filePath(QStringLiteral("no/such/dir/plan.yaml"))));
        QVERIFY(w.messageBanner()->isVisible());
        QVERIFY(w.messageBanner()->text().contains(QStringLiteral("no/such/dir")));
    }

    void exportedLaunchCommand() {
        MainWindow w(testOptions());
        w.show();
        QVERIFY(w.openScenario(kDefault));
        QTemporaryDir dir;
        for (auto [engine, expected] : {std::pair{ServingEngine::Vllm, "vllm serve meta-llama/Llama-3.1-8B"},
                                        std::pair{ServingEngine::Sglang, "--tp-size 8"}}) {
            const QString path = dir.filePath(QStringLiteral("launch-%1.sh").arg(int(engine)));
            QVERIFY(w.exportLaunchCommand(engine, path));
            QFile f(path);
            QVERIFY(f.open(QIODevice::ReadOnly));
            const QString text = QString::fromUtf8(f.readAll());
            QVERIFY2(text.startsWith(QStringLiteral("#!/bin/sh\n")) && text.contains(QLatin1String(expected)),
                     qPrintable(text));
            QVERIFY(QFileInfo(path).isExecutable());
            // A script the shell can parse.
            QProcess sh;
            sh.start(QStringLiteral("sh"), {QStringLiteral("-n"), path});
            QVERIFY(sh.waitForFinished(10000));
            QCOMPARE(sh.exitCode(), 0);
        }
        QVERIFY(
            !w.exportLaunchCommand(ServingEngine::Vllm, dir.filePath(QStringLiteral("no/such/dir/l.sh"))));
        QVERIFY(w.messageBanner()->isVisible());
    }

    void sessionRoundTrip() {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("s.spsession"));
        std::vector<Plan> elite;
        Plan selected;
        QVector<QPointF> curve;
        {
            MainWindow w(testOptions());
            w.show();
            QVERIFY(w.openScenario(kDefault));
            QVERIFY(w.openFile(kSamples + QStringLiteral("/plans/llama-3.1-8b-tp8.yaml")));
            QVERIFY(shortSearch(w, 200));
            w.selectEliteRow(w.eliteProxy()->mapToSource(w.eliteProxy()->index(2, 0)).row());
            selected = w.currentPlan()->plan;
            for (const auto& e : w.eliteModel()->entries()) elite.push_back(e.candidate->plan);
            curve = w.chart()->curve(QStringLiteral("sa"));
            QVERIFY(w.saveSession(path));
            QVERIFY(!w.hasUnsavedResults());
        }
        MainWindow w(testOptions());
        w.show();
        QVERIFY(w.openScenario(kDefault));
        QVERIFY(w.openSession(path));
        QCOMPARE(w.eliteModel()->rowCount(), int(elite.size()));
        for (const Plan& p : elite) QVERIFY(w.eliteModel()->rowOf(p) >= 0);
        QCOMPARE(w.chart()->curve(QStringLiteral("sa")), curve);
        QCOMPARE(w.chart()->evaluations(QStringLiteral("random")), int64_t(200));
        QVERIFY(w.currentPlan()->plan == selected);
        QVERIFY(w.openedPlan());
        QCOMPARE(w.runPanel()->budget(), qint64(200));
        QVERIFY(!w.staleBanner()->isVisible());
        // A corrupt session: an error, and the window keeps what it has.
        const QString bad = dir.filePath(QStringLiteral("bad.spsession"));
        QFile f(bad);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("{\"kind\": \"shardplanner-session\", \"version\": 1, \"scenario_yaml\": \"kind: "
                "scenario\\nmodel: 3\"}");
        f.close();
        QVERIFY(!w.openSession(bad));
        QVERIFY(w.messageBanner()->isVisible());
        QVERIFY(w.messageBanner()->text().contains(QStringLiteral("bad.spsession")));
        QCOMPARE(w.eliteModel()->rowCount(), int(elite.size()));
    }

    void modelFileReplacesModel() {
        MainWindow w(testOptions());
        w.show();
        QVERIFY(w.openScenario(kSamples + QStringLiteral("/scenarios/llama-3.1-70b-h100-4x8.yaml")));
        const Cluster cluster = w.scenarioEditor()->scenario().cluster;
        QVERIFY(w.openFile(kSamples + QStringLiteral("/models/llama-3.1-8b.yaml")));
        QCOMPARE(w.scenarioEditor()->scenario().model.name, std::string("Llama-3.1-8B"));
        QCOMPARE(w.scenarioEditor()->scenario().cluster, cluster);
        // No results yet: the views follow at once.
        QCOMPARE(w.context()->scenario().model.name, std::string("Llama-3.1-8B"));
        QCOMPARE(w.shardingView()->heatmap()->columnCount(), 32);
    }

    void planFileShownEverywhere() {
        MainWindow w(testOptions());
        w.show();
        QVERIFY(w.openScenario(kDefault));
        QVERIFY(w.openFile(kSamples + QStringLiteral("/plans/llama-3.1-8b-tp8.json")));
        QVERIFY(w.currentPlan() == w.openedPlan());
        QCOMPARE(w.currentPlan()->label, std::string("llama-3.1-8b-tp8.json"));
        QCOMPARE(w.topologyView()->canvas()->outlined(Axis::TP).size(), size_t(0)); // nothing hovered
        w.topologyView()->canvas()->setHoveredGpu(3);
        QCOMPARE(w.topologyView()->canvas()->outlined(Axis::TP).size(), size_t(8));
        QVERIFY(w.comparisonView()->right() == w.openedPlan());
        // A plan that does not fit the scenario is refused with the reason; the shown plan stays.
        QVERIFY(!w.openFile(kSamples + QStringLiteral("/plans/deepseek-v3-dp-attention.yaml")));
        QVERIFY(w.messageBanner()->isVisible());
        QVERIFY(w.messageBanner()->text().contains(QStringLiteral("does not fit")));
        QVERIFY(w.currentPlan() == w.openedPlan());
    }

    void badScenarioKeepsState() {
        MainWindow w(testOptions());
        w.show();
        QVERIFY(w.openScenario(kDefault));
        QTemporaryDir dir;
        const QString bad = dir.filePath(QStringLiteral("broken.yaml"));
        QFile f(bad);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("version: 1\nkind: scenario\nname: x\nmodel: ../nowhere.yaml\n");
        f.close();
        QVERIFY(!w.openFile(bad));
        QVERIFY(w.messageBanner()->isVisible());
        QVERIFY2(w.messageBanner()->text().contains(QStringLiteral("broken.yaml")),
                 qPrintable(w.messageBanner()->text()));
        QCOMPARE(w.context()->scenario().model.name, std::string("Llama-3.1-8B"));
    }

    void editsMarkResultsStale() {
        MainWindow w(testOptions());
        w.show();
        QVERIFY(w.openScenario(kDefault));
        QVERIFY(shortSearch(w, 100));
        QVERIFY(!w.staleBanner()->isVisible());
        QLineEdit* tpot = w.scenarioEditor()->field(QStringLiteral("tpot_ms"));
        tpot->selectAll();
        QTest::keyClicks(tpot, QStringLiteral("30"));
        QVERIFY(w.staleBanner()->isVisible());
        QVERIFY(w.staleBanner()->text().contains(QStringLiteral("stale")));
        // The results stay until the rerun, which uses the edited SLO.
        QVERIFY(w.eliteModel()->rowCount() > 0);
        QCOMPARE(w.context()->scenario().workload.tpotMs, 50.0);
        QSignalSpy done(&w, &MainWindow::searchFinished);
        w.startSearch();
        QVERIFY(done.wait(60000));
        QVERIFY(!w.staleBanner()->isVisible());
        QCOMPARE(w.context()->scenario().workload.tpotMs, 30.0);
        QVERIFY(w.currentPlan()->metrics().tpotMs <= 30.0 + 1e-9);
    }

    void supersededRunIsDropped() {
        MainWindow w(testOptions());
        w.show();
        QVERIFY(w.openScenario(kSamples + QStringLiteral("/scenarios/llama-3.1-70b-h100-4x8.yaml")));
        w.runPanel()->setSelectedSearchers({QStringLiteral("random")});
        w.runPanel()->setBudget(50'000'000);
        w.startSearch();
        QTRY_VERIFY_WITH_TIMEOUT(w.chart()->evaluations(QStringLiteral("random")) > 0, 30000);
        // Opening another scenario supersedes the run: nothing of it reaches the new scenario's views.
        QVERIFY(w.openScenario(kDefault));
        QVERIFY(!w.isSearching());
        QTest::qWait(300);
        QCOMPARE(w.eliteModel()->rowCount(), 0);
        QVERIFY(w.chart()->searchers().isEmpty());
    }
};

QTEST_MAIN(TestGui)
#include "tst_gui.moc"
