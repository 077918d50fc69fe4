// rl's policy in the window: a rerun of the same problem (model, cluster and workload) starts from the
// policy the last run ended with and says so; another scenario, or an edit of the model, cluster or workload,
// starts from the shipped prior, so a scenario and a seed search the same whatever was open before; a
// session keeps the policy; Search > Forget What rl Learned drops it.
#include "core/rl/knowledge.h"
#include "gui_fixtures.h"
#include "mainwindow.h"
#include "runtracker.h"
#include "views/elitemodel.h"
#include "views/messagebanner.h"
#include "views/runpanel.h"
#include "views/scenarioeditor.h"

#include <QAction>
#include <QFile>
#include <QLineEdit>
#include <QSignalSpy>
#include <QStatusBar>
#include <QTemporaryDir>
#include <QTest>

using namespace sp;
using sp::app::MainWindow;
using namespace sp::testing;

namespace {
const QString kOther = kSamples + QStringLiteral("/scenarios/llama-3.1-70b-h100-1x8-chat.yaml");

/// Runs rl alone at `budget` evaluations (seed 1) and waits for it: the status line it started with.
QString runRl(MainWindow& w, qint64 budget) {
    w.runPanel()->setSelectedSearchers({QStringLiteral("rl")});
    w.runPanel()->setBudget(budget);
    w.runPanel()->setSeed(1);
    QSignalSpy done(&w, &MainWindow::searchFinished);
    w.startSearch();
    const QString status = w.statusBar()->currentMessage();
    if (!(done.count() > 0 || done.wait(120000))) return QStringLiteral("(did not finish)");
    return status;
}
} // namespace

class TestGuiLearned : public QObject {
    Q_OBJECT
private slots:
    // Rerun after an edit of the constraints (the same model, cluster and workload): rl starts from the
    // policy its last run ended with (SearchOptions::learned), and the status bar says so.
    void rerunStartsFromTheLastPolicy() {
        MainWindow w(testOptions());
        w.show();
        QVERIFY(w.openScenario(kDefault));
        w.runPanel()->setSelectedSearchers({QStringLiteral("rl"), QStringLiteral("sa")});
        w.runPanel()->setBudget(200);
        QSignalSpy done(&w, &MainWindow::searchFinished);
        w.startSearch();
        QVERIFY(!w.statusBar()->currentMessage().contains(QStringLiteral("last run's policy")));
        QVERIFY(done.wait(60000) || done.count() > 0);
        Constraints c = w.scenarioEditor()->scenario().constraints;
        c.memoryFraction = 0.85;
        w.scenarioEditor()->replaceConstraints(c);
        QVERIFY(!(w.scenarioEditor()->scenario() == w.context()->scenario()));
        w.startSearch();
        const QString status = w.statusBar()->currentMessage();
        QVERIFY2(status.contains(QStringLiteral("rl (from its last run's policy and 16 plans)")),
                 qPrintable(status));
        QVERIFY2(status.contains(QStringLiteral("sa (from its last run's 16 plans)")), qPrintable(status));
        QVERIFY(done.wait(60000) || done.count() > 1);
        // A session keeps it: the reopened window's next Run of rl starts from it, sa's from nothing.
        {
            QTemporaryDir dir;
            const QString path = dir.filePath(QStringLiteral("learned.spsession"));
            QVERIFY(w.saveSession(path));
            MainWindow w2(testOptions());
            w2.show();
            QVERIFY(w2.openSession(path));
            const auto* saved =
                dynamic_cast<const sp::rl::Knowledge*>(w.controller()->learned(QStringLiteral("rl")).get());
            const auto* opened =
                dynamic_cast<const sp::rl::Knowledge*>(w2.controller()->learned(QStringLiteral("rl")).get());
            QVERIFY(saved && opened);
            QCOMPARE(opened->searches, 2);
            QCOMPARE(opened->choice.size(), saved->choice.size());
            for (const auto& [key, v] : saved->choice) // four significant digits (knowledgeJson)
                QVERIFY2((opened->choice.at(key) - v).norm() <= 1e-3 * (1 + v.norm()), key.c_str());
            QVERIFY(!w2.controller()->hasLearned(QStringLiteral("sa")));
            w2.runPanel()->setBudget(50);
            QSignalSpy done2(&w2, &MainWindow::searchFinished);
            w2.startSearch();
            QVERIFY2(w2.statusBar()->currentMessage().contains(
                         QStringLiteral("rl (from its last run's policy and 16 plans)")),
                     qPrintable(w2.statusBar()->currentMessage()));
            QVERIFY(done2.wait(60000) || done2.count() > 0);
            // A policy in the file that does not read is left out, said so; the session still opens.
            const QString broken = dir.filePath(QStringLiteral("broken.spsession"));
            QVERIFY(writeEdited(path, QStringLiteral("\"shardplanner-rl-policy\""),
                                QStringLiteral("\"something-else\""), broken));
            MainWindow w3(testOptions());
            w3.show();
            QVERIFY(w3.openSession(broken));
            QVERIFY(!w3.controller()->hasLearned(QStringLiteral("rl")));
            QVERIFY(w3.eliteModel()->rowCount() > 0);
            QVERIFY2(w3.messageBanner()->text().contains(QStringLiteral("rl's learned policy")) &&
                         w3.messageBanner()->text().contains(QStringLiteral("format")),
                     qPrintable(w3.messageBanner()->text()));
        }
        // Search > Forget What rl Learned: the next run starts from the prior again.
        QAction* forget = nullptr;
        for (QAction* a : w.findChildren<QAction*>())
            if (a->text().contains(QStringLiteral("Forget What rl Learned"))) forget = a;
        QVERIFY(forget);
        QVERIFY(w.controller()->hasLearned(QStringLiteral("rl")));
        forget->trigger();
        QVERIFY(!w.controller()->hasLearned(QStringLiteral("rl")));
        w.startSearch();
        QVERIFY(!w.statusBar()->currentMessage().contains(QStringLiteral("last run's policy")));
        QVERIFY(done.wait(60000) || done.count() > 2);
    }

    // Opening the same scenario again keeps the policy (the status says rl starts from it); another scenario
    // drops it, and rl on it then searches as in a window that had nothing open before: the same curve,
    // evaluation for evaluation. An edit of the workload drops it too, and the status says so.
    void anotherScenarioDropsThePolicy() {
        MainWindow w(testOptions());
        w.show();
        QVERIFY(w.openScenario(kDefault));
        const QString first = runRl(w, 100);
        QVERIFY2(!first.contains(QStringLiteral("policy")), qPrintable(first));
        QVERIFY(w.controller()->hasLearned(QStringLiteral("rl")));

        QVERIFY(w.openScenario(kDefault)); // the same file: the same problem
        QVERIFY(w.controller()->hasLearned(QStringLiteral("rl")));
        const QString same = runRl(w, 100);
        QVERIFY2(same.contains(QStringLiteral("rl (from its last run's policy)")), qPrintable(same));

        QVERIFY(w.openScenario(kOther));
        QVERIFY(!w.controller()->hasLearned(QStringLiteral("rl")));
        const QString other = runRl(w, 100);
        QVERIFY2(!other.contains(QStringLiteral("policy")), qPrintable(other));
        MainWindow fresh(testOptions());
        fresh.show();
        QVERIFY(fresh.openScenario(kOther));
        QVERIFY(!runRl(fresh, 100).contains(QStringLiteral("policy")));
        const app::RunState& a = w.runs().at(QStringLiteral("rl"));
        const app::RunState& b = fresh.runs().at(QStringLiteral("rl"));
        QCOMPARE(a.evaluations, b.evaluations);
        QCOMPARE(a.curve, b.curve);
        QCOMPARE(a.best, b.best);

        // An edit of the workload is another problem: the run starts from the prior and says so.
        QVERIFY(w.controller()->hasLearned(QStringLiteral("rl")));
        QLineEdit* tpot = w.scenarioEditor()->field(QStringLiteral("tpot_ms"));
        tpot->selectAll();
        QTest::keyClicks(tpot, QStringLiteral("40"));
        const QString edited = runRl(w, 100);
        QVERIFY2(!edited.contains(QStringLiteral("last run's policy")) &&
                     edited.contains(QStringLiteral("rl starts from the shipped prior")),
                 qPrintable(edited));
    }
};

QTEST_MAIN(TestGuiLearned)
#include "tst_gui_learned.moc"
