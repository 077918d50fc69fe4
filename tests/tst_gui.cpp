// The planner window, offscreen: opening every sample, a short search filling the chart and the elite table,
// a prompt stop, stale results, edits and their undo, errors that go away (files, exports and sessions:
// tst_gui_files; rl's carried policy: tst_gui_learned; the layout at 1600x1000: tst_layout).
#include "core/io/formats.h"
#include "gui_fixtures.h"
#include "mainwindow.h"
#include "runtracker.h"
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
#include <QScreen>
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

using namespace sp;
using sp::app::MainWindow;
using namespace sp::testing;

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
        QVERIFY(done.count() > 0 || done.wait(120000)); // it may finish before the wait starts
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

    // A window with no saved geometry opens within the screen (less room for a title bar and a panel), at
    // 1480x920 where the screen has room for it.
    void opensWithinTheScreen() {
        MainWindow w(testOptions());
        const QSize avail = w.screen()->availableGeometry().size();
        const QSize expected = QSize(1480, 920).boundedTo(avail - QSize(20, 60)).expandedTo(QSize(800, 560));
        QCOMPARE(w.size(), expected);
        QVERIFY(w.width() <= std::max(800, avail.width()) && w.height() <= std::max(560, avail.height()));
        if (avail.width() < 1500 || avail.height() < 980) QVERIFY(w.size() != QSize(1480, 920));
    }

    // Rerun: each searcher starts from its last run's best plans (SearchOptions::starts), mapped into the
    // space as it is now; the status bar says so. sa at 20 evaluations from its 200-evaluation run's plans
    // is at least as good as that run (from nothing it is far behind: the first run at 20 shows it).
    // Clear Results starts afresh.
    void rerunStartsFromTheLastPlans() {
        MainWindow w(testOptions());
        w.show();
        QVERIFY(w.openScenario(kSamples + QStringLiteral("/scenarios/llama-3.1-70b-h200-1x8-chat.yaml")));
        w.runPanel()->setSelectedSearchers({QStringLiteral("sa")});
        QSignalSpy done(&w, &MainWindow::searchFinished);
        // What the status bar said when the run started (a run this short may finish inside startSearch(),
        // and its result's message replace that one at once).
        const auto runAt = [&](int64_t budget) {
            w.runPanel()->setBudget(budget);
            const int before = done.count();
            QSignalSpy said(w.statusBar(), &QStatusBar::messageChanged);
            w.startSearch();
            if (done.count() == before) done.wait(60000);
            for (const auto& m : said)
                if (m.at(0).toString().startsWith(QStringLiteral("Searching with")))
                    return m.at(0).toString();
            return QString();
        };
        const QString first20 = runAt(20);
        QVERIFY2(first20.startsWith(QStringLiteral("Searching with sa")) &&
                     !first20.contains(QStringLiteral("from its last run")),
                 qPrintable(first20));
        const double cold = w.runs().at(QStringLiteral("sa")).best;
        QVERIFY(!runAt(200).isEmpty());
        const double first = w.runs().at(QStringLiteral("sa")).best;
        QVERIFY(first > 0);
        const QString status = runAt(20);
        QVERIFY2(status.contains(QStringLiteral("sa (from its last run's 16 plans)")), qPrintable(status));
        const double rerun = w.runs().at(QStringLiteral("sa")).best;
        qInfo("sa at 20 evaluations: %.1f cold, %.1f from the 200-evaluation run's plans (%.1f)", cold, rerun,
              first);
        QVERIFY(rerun >= first);
        QVERIFY(cold < first);
        // Clear Results: nothing to start from.
        QAction* clear = nullptr;
        for (QAction* a : w.findChildren<QAction*>())
            if (a->text() == QStringLiteral("&Clear Results")) clear = a;
        QVERIFY(clear);
        clear->trigger(); // testOptions(): no confirmation asked
        QVERIFY(!w.runs().contains(QStringLiteral("sa")));
        const QString afresh = runAt(20);
        QVERIFY2(!afresh.isEmpty() && !afresh.contains(QStringLiteral("from its last run")),
                 qPrintable(afresh));
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

    // ---- regressions of the first-use walkthrough

    void wheelOverScenarioPanelChangesNothing() {
        MainWindow w(testOptions());
        w.resize(1600, 1000);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QVERIFY(w.openScenario(kDefault));
        const Scenario before = w.scenarioEditor()->scenario();
        auto* editor = w.scenarioEditor();
        QList<QWidget*> takers;
        for (QComboBox* c : editor->findChildren<QComboBox*>())
            if (c->isVisibleTo(editor) && c->count() > 1) takers << c;
        for (QAbstractSpinBox* b : editor->findChildren<QAbstractSpinBox*>()) takers << b;
        QVERIFY(takers.size() >= 6);
        w.eliteView()->setFocus(); // nothing in the panel has the focus
        for (QWidget* t : takers) {
            QVERIFY(!t->hasFocus());
            wheelOver(t, -120);
            wheelOver(t, 120);
            wheelOver(t, -240);
        }
        QCOMPARE(editor->scenario(), before);
        QVERIFY(!w.staleBanner()->isVisible());
        // Focused, a combo box still takes the wheel.
        auto* phase = editor->findChildren<QComboBox*>().at(0);
        phase->setFocus();
        QTRY_VERIFY(phase->hasFocus());
        const int index = phase->currentIndex();
        wheelOver(phase, index == 0 ? -120 : 120);
        QVERIFY(phase->currentIndex() != index);
    }

    void openOrCloseMidSearchAsks() {
        MainWindow::Options o = testOptions();
        QStringList asked;
        int answer = QMessageBox::Cancel;
        o.ask = [&](const QString& title, const QString&) {
            asked << title;
            return answer;
        };
        MainWindow w(o);
        w.show();
        QVERIFY(w.openScenario(kSamples + QStringLiteral("/scenarios/llama-3.1-70b-h100-4x8.yaml")));
        w.runPanel()->setSelectedSearchers({QStringLiteral("random")});
        w.runPanel()->setBudget(50'000'000);
        w.startSearch();
        QTRY_VERIFY_WITH_TIMEOUT(w.chart()->evaluations(QStringLiteral("random")) > 0, 30000);
        // Cancel: nothing changes, the search goes on.
        QVERIFY(!w.openScenario(kDefault));
        QCOMPARE(asked.size(), 1);
        QVERIFY(w.isSearching());
        QCOMPARE(w.scenarioEditor()->scenario().model.name, std::string("Llama-3.1-70B"));
        QVERIFY(!w.close());
        QCOMPARE(asked.size(), 2);
        QVERIFY(w.isSearching());
        // Discard: the scenario opens.
        answer = QMessageBox::Discard;
        QVERIFY(w.openScenario(kDefault));
        QCOMPARE(asked.size(), 3);
        QVERIFY(!w.isSearching());
        QCOMPARE(w.scenarioEditor()->scenario().model.name, std::string("Llama-3.1-8B"));
    }

    void exportShortcutWorksInTextField() {
        QTemporaryDir dir;
        MainWindow::Options o = testOptions();
        o.fileAnswer = [&](const QString&, const QString&, const QString&) {
            return dir.filePath(QStringLiteral("shortcut.yaml"));
        };
        MainWindow w(o);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QVERIFY(w.openScenario(kDefault));
        QLineEdit* nodes = w.scenarioEditor()->field(QStringLiteral("nodes"));
        nodes->setFocus();
        QTRY_VERIFY(nodes->hasFocus());
        QTest::keyClick(nodes, Qt::Key_E, Qt::ControlModifier);
        QVERIFY(QFileInfo::exists(dir.filePath(QStringLiteral("shortcut.yaml"))));
        QCOMPARE(nodes->text(), QStringLiteral("1")); // the field is unchanged
        // On X11 a line edit claims Ctrl+E (end of line) before the shortcut sees it; this field does so
        // on every platform.
        struct EmacsEdit : QLineEdit {
            bool event(QEvent* e) override {
                if (e->type() == QEvent::ShortcutOverride &&
                    static_cast<QKeyEvent*>(e)->keyCombination() == (Qt::ControlModifier | Qt::Key_E)) {
                    e->accept();
                    return true;
                }
                return QLineEdit::event(e);
            }
        };
        auto* emacs = new EmacsEdit;
        w.statusBar()->addWidget(emacs);
        emacs->show();
        emacs->setFocus();
        QTRY_VERIFY(emacs->hasFocus());
        QFile::remove(dir.filePath(QStringLiteral("shortcut.yaml")));
        QTest::keyClick(emacs, Qt::Key_E, Qt::ControlModifier);
        QVERIFY(QFileInfo::exists(dir.filePath(QStringLiteral("shortcut.yaml"))));
    }

    void sloOfATenthOfAMillisecond() {
        MainWindow w(testOptions());
        w.show();
        QVERIFY(w.openScenario(kDefault));
        typeInto(w.scenarioEditor()->field(QStringLiteral("tpot_ms")), QStringLiteral("0.1"));
        QCOMPARE(w.context()->scenario().workload.tpotMs, 0.1);
        const Metrics& m = w.currentPlan()->metrics();
        QVERIFY(!m.feasible);
        QVERIFY2(m.violation.find("SLO of 0.1 ms") != std::string::npos, m.violation.c_str());
    }

    void fixedErrorsGoAway() {
        MainWindow w(testOptions());
        w.show();
        QVERIFY(w.openScenario(kDefault));
        auto* ed = w.scenarioEditor();
        // "Fix the scenario first" goes once the field is fixed.
        typeInto(ed->field(QStringLiteral("nodes")), QStringLiteral("abc"));
        w.startSearch();
        QVERIFY(w.messageBanner()->isVisible());
        QVERIFY(w.messageBanner()->text().contains(QStringLiteral("Fix the scenario first")));
        typeInto(ed->field(QStringLiteral("nodes")), QStringLiteral("1"));
        QVERIFY(!w.messageBanner()->isVisible());
        // "No valid plan to search" goes once the constraints allow a plan again.
        ed->degreeChecks(Axis::TP)->setChecked(1, false);
        for (int v : ed->degreeChecks(Axis::TP)->values()) ed->degreeChecks(Axis::TP)->setChecked(v, v == 16);
        w.startSearch();
        if (!w.messageBanner()->text().contains(QStringLiteral("No valid plan"))) {
            // 16 is not offered on one node of 8: rule out every TP degree but 1 and every PP and DP but 1,
            // which leaves no way to use 8 GPUs.
            for (Axis a : {Axis::TP, Axis::PP, Axis::DP})
                for (int v : ed->degreeChecks(a)->values()) ed->degreeChecks(a)->setChecked(v, v == 1);
            w.startSearch();
        }
        QVERIFY2(w.messageBanner()->text().contains(QStringLiteral("No valid plan")),
                 qPrintable(w.messageBanner()->text()));
        ed->degreeChecks(Axis::TP)->setAny(true);
        ed->degreeChecks(Axis::PP)->setAny(true);
        ed->degreeChecks(Axis::DP)->setAny(true);
        QVERIFY(!w.messageBanner()->isVisible());
        // A failed model open: the red message under the Model box and the banner go once a model opens.
        QTemporaryDir dir;
        const QString bad = dir.filePath(QStringLiteral("bad-model.yaml"));
        QFile f(bad);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("version: 1\nkind: model\nname: x\nlayers: -3\n");
        f.close();
        QVERIFY(!w.openFile(bad));
        QVERIFY(!ed->pickerError(FileKind::Model).isEmpty());
        QVERIFY(w.messageBanner()->isVisible());
        QVERIFY(w.openFile(kSamples + QStringLiteral("/models/llama-3.1-8b.yaml")));
        QVERIFY(ed->pickerError(FileKind::Model).isEmpty());
        QVERIFY(!w.messageBanner()->isVisible());
    }

    void validEditAppliesBesideInvalidField() {
        MainWindow w(testOptions());
        w.show();
        QVERIFY(w.openScenario(kDefault));
        auto* ed = w.scenarioEditor();
        typeInto(ed->field(QStringLiteral("nodes")), QStringLiteral("abc"));
        typeInto(ed->field(QStringLiteral("gpus_per_node")), QStringLiteral("4"));
        QVERIFY(!ed->isValid());
        QCOMPARE(ed->scenario().cluster.gpusPerNode, 4);
        // The views and the status line follow the valid edit (nodes keeps its last valid value).
        QCOMPARE(w.context()->scenario().cluster.gpusPerNode, 4);
        QCOMPARE(w.context()->scenario().cluster.nodes, 1);
        QVERIFY2(w.scenarioStatus().contains(QStringLiteral("1 x 4")), qPrintable(w.scenarioStatus()));
        // With results, the same edit marks them stale.
        typeInto(ed->field(QStringLiteral("nodes")), QStringLiteral("1"));
        typeInto(ed->field(QStringLiteral("gpus_per_node")), QStringLiteral("8"));
        QVERIFY(shortSearch(w, 100));
        typeInto(ed->field(QStringLiteral("nodes")), QStringLiteral("abc"));
        typeInto(ed->field(QStringLiteral("gpus_per_node")), QStringLiteral("4"));
        QVERIFY(w.staleBanner()->isVisible());
    }

    void timeLeftFollowsTheSlowestSearcher() {
        // Two searchers of 1,000 evaluations each, 1 s in: one is done, the other made 100 (100 per second),
        // so 900 more take 9 s. (Pooling the rates, 1,100 per second for 900, would say under a second.)
        app::RunTracker t;
        app::RunState fast, slow;
        fast.target = slow.target = 1000;
        fast.evaluations = 1000;
        fast.finished = true;
        slow.evaluations = 100;
        t.add(QStringLiteral("fast"), fast);
        t.add(QStringLiteral("slow"), slow);
        const app::BatchProgress p = t.progress(1.0);
        QCOMPARE(p.done, int64_t(1100));
        QCOMPARE(p.total, int64_t(2000));
        QCOMPARE(p.left, 9.0);
        // A searcher that has reported nothing yet: unknown.
        app::RunState idle;
        idle.target = 1000;
        t.add(QStringLiteral("idle"), idle);
        QCOMPARE(t.progress(1.0).left, -1.0);
    }

    // After Stop the bar counts as it did while the batch ran: a run that ended by itself before the stop
    // (fewer evaluations than its budget) counts what it made, a stopped one its budget ("of 1,400,001" once
    // followed "of 1,200,222" for the same batch).
    void stoppedBatchCountsAsWhileItRan() {
        app::RunTracker t;
        app::RunState early, cut;
        early.target = 200'000, early.evaluations = 222, early.finished = true; // exhaustive: a small space
        cut.target = 1'200'000, cut.evaluations = 300'000;
        t.add(QStringLiteral("exhaustive"), early);
        t.add(QStringLiteral("random"), cut);
        const int64_t running = t.progress(1.0).total;
        QCOMPARE(running, int64_t(1'200'222));
        t[QStringLiteral("random")].finished = t[QStringLiteral("random")].stopped = true;
        QCOMPARE(t.progress(1.0).total, running);
        QCOMPARE(t.progress(1.0).done, int64_t(300'222));
    }

    void refusedExhaustiveReadsAsRefused() {
        MainWindow w(testOptions());
        w.show();
        QVERIFY(w.openScenario(kSamples + QStringLiteral("/scenarios/moe-1.6t-h100-128x8.yaml")));
        w.runPanel()->setSelectedSearchers({QStringLiteral("exhaustive")});
        QSignalSpy done(&w, &MainWindow::searchFinished);
        w.startSearch();
        QVERIFY(done.count() > 0 || done.wait(60000)); // it may finish before the wait starts
        QVERIFY(w.runs().allRefused());
        QVERIFY(!w.hasUnsavedResults());
        QVERIFY(!w.isWindowModified());
        const QString status = w.statusBar()->currentMessage();
        QVERIFY2(status.contains(QStringLiteral("refused")) &&
                     !status.contains(QStringLiteral("No feasible")),
                 qPrintable(status));
        // The banner names the searcher once: "exhaustive did not run: the space has ...", not "...: exhaustive:".
        const QString banner = w.messageBanner()->text();
        QVERIFY2(banner.contains(QStringLiteral("did not run: the space has")), qPrintable(banner));
        QVERIFY2(!banner.contains(QStringLiteral("exhaustive: ")), qPrintable(banner));
        // Nothing to call stale either.
        typeInto(w.scenarioEditor()->field(QStringLiteral("output_tokens")), QStringLiteral("300"));
        QVERIFY(!w.staleBanner()->isVisible());
    }

    void undoRedoScenarioEdits() {
        MainWindow w(testOptions());
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QVERIFY(w.openScenario(kDefault));
        auto* ed = w.scenarioEditor();
        QCOMPARE(ed->scenario().workload.outputTokens, int64_t(1000));
        // Typing "200" is one step (keystrokes in one part within a second); pinning TP 8 another.
        typeInto(ed->field(QStringLiteral("output_tokens")), QStringLiteral("200"));
        QCOMPARE(ed->scenario().workload.outputTokens, int64_t(200));
        QTest::mouseClick(ed->degreeChecks(Axis::TP)->button(8), Qt::LeftButton);
        QCOMPARE(ed->scenario().constraints.allowed[size_t(Axis::TP)], std::vector<int>{8});
        QCOMPARE(w.scenarioUndo()->stack()->count(), 2);
        // Ctrl+Z, even from a text field, undoes the pin, then the length; the views follow.
        ed->field(QStringLiteral("nodes"))->setFocus();
        QTest::keyClick(ed->field(QStringLiteral("nodes")), Qt::Key_Z, Qt::ControlModifier);
        QVERIFY(ed->scenario().constraints.allowed[size_t(Axis::TP)].empty());
        QVERIFY(ed->degreeChecks(Axis::TP)->isAny());
        w.action(QStringLiteral("undo"))->trigger();
        QCOMPARE(ed->scenario().workload.outputTokens, int64_t(1000));
        QCOMPARE(ed->field(QStringLiteral("output_tokens"))->text(), QStringLiteral("1000"));
        QCOMPARE(w.context()->scenario().workload.outputTokens, int64_t(1000));
        QVERIFY(!w.windowTitle().contains(QStringLiteral("edited")));
        // Ctrl+Shift+Z redoes.
        QTest::keyClick(&w, Qt::Key_Z, Qt::ControlModifier | Qt::ShiftModifier);
        QCOMPARE(ed->scenario().workload.outputTokens, int64_t(200));
        QCOMPARE(w.context()->scenario().workload.outputTokens, int64_t(200));
        // Opening a scenario starts a new history.
        QVERIFY(w.openScenario(kDefault));
        QCOMPARE(w.scenarioUndo()->stack()->count(), 0);
    }

    // The operator-choice granularity and the layer groups' count are undone and redone like any edit of the
    // constraints, and the editor's combo and spin box follow.
    void undoRedoGranularity() {
        MainWindow w(testOptions());
        w.show();
        QVERIFY(w.openScenario(kDefault));
        auto* ed = w.scenarioEditor();
        QCOMPARE(int(ed->scenario().constraints.granularity), int(Granularity::Type));
        ed->granularityCombo()->setCurrentIndex(int(Granularity::LayerGroup));
        ed->layerGroupsSpin()->setValue(4);
        QCOMPARE(int(ed->scenario().constraints.granularity), int(Granularity::LayerGroup));
        QCOMPARE(ed->scenario().constraints.layerGroups, 4);
        QVERIFY(w.scenarioUndo()->stack()->count() >= 1); // one step, or two when a second apart
        while (w.scenarioUndo()->stack()->canUndo()) w.action(QStringLiteral("undo"))->trigger();
        QCOMPARE(int(ed->scenario().constraints.granularity), int(Granularity::Type));
        QCOMPARE(ed->scenario().constraints.layerGroups, 2);
        QCOMPARE(ed->granularityCombo()->currentIndex(), int(Granularity::Type));
        QVERIFY(!ed->layerGroupsSpin()->isEnabled());
        QCOMPARE(int(w.context()->scenario().constraints.granularity), int(Granularity::Type));
        while (w.scenarioUndo()->stack()->canRedo()) w.action(QStringLiteral("redo"))->trigger();
        QCOMPARE(ed->granularityCombo()->currentIndex(), int(Granularity::LayerGroup));
        QCOMPARE(ed->layerGroupsSpin()->value(), 4);
        QVERIFY(ed->layerGroupsSpin()->isEnabled());
        QCOMPARE(w.context()->scenario().constraints.layerGroups, 4);
        // The prefill budget likewise.
        ed->prefillBudgetCombo()->setCurrentIndex(1);
        QVERIFY(w.context()->scenario().constraints.searchPrefillBudget);
        w.action(QStringLiteral("undo"))->trigger();
        QCOMPARE(ed->prefillBudgetCombo()->currentIndex(), 0);
        QVERIFY(!w.context()->scenario().constraints.searchPrefillBudget);
        w.action(QStringLiteral("redo"))->trigger();
        QCOMPARE(ed->prefillBudgetCombo()->currentIndex(), 1);
        QVERIFY(w.context()->scenario().constraints.searchPrefillBudget);
        // Speculative decoding likewise: off, undone to searched, redone.
        QCOMPARE(ed->specCombo()->currentIndex(), 0);
        ed->specCombo()->setCurrentIndex(1);
        QCOMPARE(int(w.context()->scenario().constraints.specPolicy), int(Constraints::SpecPolicy::Off));
        w.action(QStringLiteral("undo"))->trigger();
        QCOMPARE(ed->specCombo()->currentIndex(), 0);
        QCOMPARE(int(w.context()->scenario().constraints.specPolicy), int(Constraints::SpecPolicy::Search));
        w.action(QStringLiteral("redo"))->trigger();
        QCOMPARE(ed->specCombo()->currentIndex(), 1);
        QCOMPARE(int(w.context()->scenario().constraints.specPolicy), int(Constraints::SpecPolicy::Off));
    }

    void comparisonHeaderShowsWholeNames() {
        MainWindow w(testOptions());
        w.show();
        QVERIFY(w.openScenario(kDefault));
        QVERIFY(shortSearch(w, 100));
        auto* t = w.comparisonView()->metricsTable();
        QCOMPARE(t->horizontalHeader()->textElideMode(), Qt::ElideRight);
        QCOMPARE(t->horizontalHeaderItem(2)->toolTip(),
                 QString::fromStdString(w.comparisonView()->right()->label));
    }
};

QTEST_MAIN(TestGui)
#include "tst_gui.moc"
