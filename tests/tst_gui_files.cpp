// The planner window's files, offscreen: exports (the plan passes `shardplan validate`, launch commands,
// dense plans without MoE fields, headers and dialogs that follow edits), sessions, parts and plans opened
// alone, a bad scenario that keeps the state.
#include "core/io/formats.h"
#include "gui_fixtures.h"
#include "launchexportdialog.h"
#include "mainwindow.h"
#include "runtracker.h"
#include "session.h"
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
#include <QAction>
#include <QComboBox>
#include <QDir>
#include <QDockWidget>
#include <QDoubleSpinBox>
#include <QElapsedTimer>
#include <QHeaderView>
#include <QKeyEvent>
#include <QLineEdit>
#include <QMessageBox>
#include <QProcess>
#include <QRegularExpression>
#include <QScrollArea>
#include <QSignalSpy>
#include <QSortFilterProxyModel>
#include <QSpinBox>
#include <QStatusBar>
#include <QTabWidget>
#include <QTableView>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QToolButton>
#include <QUndoStack>
#include <QWheelEvent>

#include <sys/stat.h>

using namespace sp;
using sp::app::MainWindow;
using namespace sp::testing;

class TestGuiFiles : public QObject {
    Q_OBJECT
private slots:
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

    // File > Export > Launch Files: any engine and version into a folder, as `shardplan export --out-dir`.
    // TensorRT-LLM on the 8B sample: node0.sh (trtllm-serve), the LLM API options YAML it reads,
    // plan.yaml, NOTES.txt. The dialog lists the engine's versions newest first and enables the Dynamo
    // worker only for Dynamo; a version unknown to the table is refused with a message.
    void exportedLaunchFiles() {
        MainWindow w(testOptions());
        w.show();
        QVERIFY(w.openScenario(kDefault));
        QTemporaryDir dir;
        ExportOptions o;
        o.engine = ServingEngine::Trtllm;
        const QString out = dir.filePath(QStringLiteral("trt"));
        QVERIFY(w.exportLaunchFiles(o, out));
        QFile node0(QDir(out).filePath(QStringLiteral("node0.sh")));
        QVERIFY(node0.open(QIODevice::ReadOnly));
        const QString text = QString::fromUtf8(node0.readAll());
        QVERIFY2(text.contains(QLatin1String("trtllm-serve")), qPrintable(text));
        QVERIFY(QFileInfo(QDir(out).filePath(QStringLiteral("plan.yaml"))).exists());
        QVERIFY(QFileInfo(QDir(out).filePath(QStringLiteral("NOTES.txt"))).exists());
        QVERIFY(QFileInfo(node0.fileName()).isExecutable());
        o.version = "0.0.1";
        QVERIFY(!w.exportLaunchFiles(o, dir.filePath(QStringLiteral("bad"))));
        QVERIFY(w.messageBanner()->isVisible());

        sp::app::LaunchExportDialog d(dir.path());
        const auto& rows = engineVersions(ServingEngine::Sglang);
        ExportOptions s;
        s.engine = ServingEngine::Sglang;
        d.setOptions(s);
        QCOMPARE(d.versionBox()->count(), int(rows.size()));
        QCOMPARE(d.versionBox()->itemText(0).toStdString(), rows.back().version);
        QVERIFY(!d.workerBox()->isEnabled());
        s.engine = ServingEngine::Dynamo;
        s.dynamoWorker = ServingEngine::Sglang;
        d.setOptions(s);
        QVERIFY(d.workerBox()->isEnabled());
        QCOMPARE(int(d.options().dynamoWorker), int(ServingEngine::Sglang));
        QCOMPARE(d.directory(), dir.path());
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

    // A session is read as every input is: a FIFO or /dev/zero is an error at once (it blocked the window,
    // or aborted with bad_alloc), and an elite plan that does not fit the scenario is left out and said so
    // rather than evaluated.
    void sessionHostileFiles() {
        QTemporaryDir dir;
        MainWindow w(testOptions());
        w.show();
        QVERIFY(w.openScenario(kDefault));
        const QString fifo = dir.filePath(QStringLiteral("pipe.spsession"));
        QCOMPARE(::mkfifo(fifo.toLocal8Bit().constData(), 0600), 0);
        for (const QString& path : {fifo, QStringLiteral("/dev/zero")}) {
            QVERIFY(!w.openSession(path));
            QVERIFY2(w.messageBanner()->text().contains(QStringLiteral("not a regular file")),
                     qPrintable(w.messageBanner()->text()));
        }
        auto sc = loadScenario(kDefault.toStdString());
        QVERIFY(sc.ok());
        sp::app::Session s;
        s.scenario = s.resultsScenario = sc.value();
        s.hasResults = true;
        sp::app::SessionRun run;
        run.searcher = QStringLiteral("sa");
        Candidate fits, divides;
        fits.plan = Plan::megatronChoices({1, 1, 8, 8, 1, 1});
        fits.choices = {0, 1, 2}; // not the plan's assignment: replaced by the space's
        divides.plan = Plan::megatronChoices({1, 1, 3, 3, 1, 1}); // tp 3 on 8 GPUs, 32 heads
        run.elite = {fits, divides};
        run.curve = {QPointF(1, 1)};
        run.evaluations = 1;
        s.runs.push_back(run);
        const QString path = dir.filePath(QStringLiteral("edited.spsession"));
        {
            QFile f(path);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write(s.toJson());
        }
        QVERIFY(w.openSession(path));
        QCOMPARE(w.eliteModel()->rowCount(), 1);
        QVERIFY(w.eliteModel()->rowOf(fits.plan) >= 0);
        const auto& entry = w.eliteModel()->entries().front();
        QVERIFY(entry.candidate->choices != fits.choices);
        QVERIFY2(w.messageBanner()->text().contains(QStringLiteral(
                     "edited.spsession: 1 plan of the session does not fit its scenario and was "
                     "left out: sa: pp*dp*tp = 3 does not match the 8 GPUs")),
                 qPrintable(w.messageBanner()->text()));
    }

    // A session keeps the layer groups of the plans it stores (elite, opened, selected) and the
    // constraints' granularity, through the plan and constraints writers.
    void sessionKeepsLayerGroups() {
        auto sc = loadScenario(kDefault.toStdString());
        QVERIFY2(sc.ok(), sc.error().str().c_str());
        sp::app::Session s;
        s.scenario = sc.value();
        s.scenario.constraints.granularity = Granularity::LayerGroup;
        s.scenario.constraints.layerGroups = 3;
        s.resultsScenario = s.scenario;
        s.hasResults = true;
        Plan p = Plan::megatronChoices({1, 1, 8, 8, 1, 1});
        LayerGroup later{20, p.choices};
        later.choices[size_t(Op::FfnUp)] = choice::UpToken;
        p.layerGroups = {LayerGroup{int(s.scenario.model.layers) - 20, p.choices}, later};
        sp::app::SessionRun run;
        run.searcher = QStringLiteral("sa");
        Candidate c;
        c.plan = p;
        run.elite.push_back(c);
        s.runs.push_back(run);
        s.openedPlan = p;
        s.selectedPlan = p;
        QString error;
        const auto back = sp::app::Session::fromJson(s.toJson(), QStringLiteral("s.spsession"), &error);
        QVERIFY2(back, qPrintable(error));
        QCOMPARE(back->runs.size(), size_t(1));
        QVERIFY(back->runs[0].elite[0].plan == p);
        QVERIFY(back->openedPlan && *back->openedPlan == p);
        QVERIFY(back->selectedPlan && *back->selectedPlan == p);
        QCOMPARE(back->selectedPlan->layerGroups.size(), size_t(2));
        QCOMPARE(int(back->scenario.constraints.granularity), int(Granularity::LayerGroup));
        QCOMPARE(back->scenario.constraints.layerGroups, 3);
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

    void densePlanFileHasNoMoeFields() {
        QTemporaryDir dir;
        MainWindow w(testOptions());
        w.show();
        QVERIFY(w.openScenario(kDefault));
        const QString yaml = dir.filePath(QStringLiteral("dense.yaml")), json = dir.filePath("dense.json");
        QVERIFY(w.exportPlan(yaml));
        QVERIFY(w.exportPlan(json));
        for (const QString& p : {yaml, json}) {
            const QString text = readAll(p);
            for (const char* moe : {"ep", "etp", "edp", "router", "experts", "moe_layer_operators"})
                QVERIFY2(
                    !text.contains(QRegularExpression(QStringLiteral("\\b%1\\b").arg(QLatin1String(moe)))),
                    qPrintable(text));
            // It reads back to a plan that evaluates as the one shown.
            auto back = loadPlan(p.toStdString());
            QVERIFY(back.ok());
            QCOMPARE(w.context()->costModel().evaluate(back.value()).throughput,
                     w.currentPlan()->metrics().throughput);
        }
        // A MoE model's plan keeps them.
        QVERIFY(w.openScenario(kSamples + QStringLiteral("/scenarios/mixtral-8x22b-h100-1x8.yaml")));
        const QString moe = dir.filePath(QStringLiteral("moe.yaml"));
        QVERIFY(w.exportPlan(moe));
        QVERIFY(readAll(moe).contains(QStringLiteral("moe_layer_operators")));
    }

    void titleExportsAndDialogsFollowEdits() {
        QTemporaryDir dir;
        QStringList proposed;
        MainWindow::Options o = testOptions();
        o.fileAnswer = [&](const QString&, const QString& path, const QString&) {
            proposed << path;
            return dir.filePath(QStringLiteral("out/plan.yaml"));
        };
        QDir(dir.path()).mkpath(QStringLiteral("out"));
        MainWindow w(o);
        w.show();
        QVERIFY(w.openScenario(kDefault));
        QVERIFY(w.windowTitle().contains(QStringLiteral("chat serving")));
        typeInto(w.scenarioEditor()->field(QStringLiteral("output_tokens")), QStringLiteral("200"));
        QVERIFY2(!w.windowTitle().contains(QStringLiteral("chat serving")), qPrintable(w.windowTitle()));
        QVERIFY(w.windowTitle().contains(QStringLiteral("edited")));
        QVERIFY(!w.scenarioStatus().contains(QStringLiteral("chat serving")));
        // The export header names the edited scenario; the dialog then opens in the folder used.
        w.action(QStringLiteral("exportPlan"))->trigger();
        const QString text = readAll(dir.filePath(QStringLiteral("out/plan.yaml")));
        QVERIFY2(text.startsWith(QStringLiteral("# Megatron for ")) &&
                     text.contains(QStringLiteral("(edited)")) &&
                     !text.contains(QStringLiteral("chat serving")),
                 qPrintable(text));
        QVERIFY(!proposed.first().startsWith(dir.path()));
        // Not into the program's own samples either (read-only where installed), though a sample was opened
        // last: the user's documents folder, or home.
        const QString samples = QDir(kSamples).canonicalPath();
        const QString first = QFileInfo(proposed.first()).absolutePath();
        QVERIFY2(!QDir(first).canonicalPath().startsWith(samples), qPrintable(proposed.first()));
        w.action(QStringLiteral("saveSession"))->trigger();
        QCOMPARE(proposed.size(), 2);
        // Save Session offers a file name, in the last folder.
        const QFileInfo offered(proposed.last());
        QCOMPARE(offered.absolutePath(), QDir(dir.filePath(QStringLiteral("out"))).absolutePath());
        QVERIFY2(offered.fileName().endsWith(QStringLiteral(".spsession")) &&
                     offered.fileName().startsWith(QStringLiteral("llama-3.1-8b")),
                 qPrintable(offered.fileName()));
    }
};

QTEST_MAIN(TestGuiFiles)
#include "tst_gui_files.moc"
