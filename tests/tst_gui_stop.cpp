// The window's Stop (Search > Stop, Esc): the one owner of Esc. It stops whatever runs, a search, a Pareto
// sweep and a serving simulation alike, wherever the focus is; no tab claims Esc beside it, so Qt never finds
// two shortcuts for the key and runs neither ("QAction::event: Ambiguous shortcut overload: Esc").
#include "gui_fixtures.h"
#include "paretorunner.h"
#include "servingrunner.h"
#include "views/calibrationview.h"
#include "views/pareto.h"
#include "views/servingview.h"

#include <QAction>
#include <QDockWidget>
#include <QPushButton>
#include <QScopeGuard>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTest>

using namespace sp;
using namespace sp::testing;

namespace {

MainWindow::Options options() {
    MainWindow::Options o = testOptions();
    o.threadsPerRun = 1; // the runs only need to be running when the key comes
    return o;
}

} // namespace

class TestGuiStop : public QObject {
    Q_OBJECT
private slots:
    void init() {
        g_ambiguous.clear();
        g_previousHandler = qInstallMessageHandler(collectAmbiguous);
    }
    void cleanup() { qInstallMessageHandler(g_previousHandler); }

    // A search and a serving simulation at once, the focus in the Serving tab: one Esc stops both, each
    // keeping what it has.
    void escStopsTheSearchAndTheSimulation() {
        MainWindow w(options());
        QVERIFY(w.openScenario(kP99));
        w.show();
        QAction* stop = w.action(QStringLiteral("stop"));
        QVERIFY(stop);
        QVERIFY(!stop->isEnabled()); // nothing runs
        w.runPanel()->setSelectedSearchers({QStringLiteral("random")});
        w.runPanel()->setBudget(100'000'000); // the panel's most: minutes of evaluations
        QSignalSpy searched(&w, &MainWindow::searchFinished);
        w.startSearch();
        QVERIFY(w.isSearching());

        views::ServingView* v = w.servingView();
        w.showPage(v);
        v->setRate(20);
        v->setRequests(5'000'000); // far more than complete before the key
        QSignalSpy simulated(w.servingRunner(), &app::ServingRunner::simulated);
        QSignalSpy progress(w.servingRunner(), &app::ServingRunner::progress);
        button(v, QStringLiteral("Run"))->click();
        QTRY_VERIFY_WITH_TIMEOUT(progress.count() > 0, 30000);
        QVERIFY(w.isSearching());
        QVERIFY(stop->isEnabled());

        v->setFocus();
        QTest::keyClick(v, Qt::Key_Escape);
        QTRY_COMPARE_WITH_TIMEOUT(simulated.count(), 1, 30000);
        QTRY_COMPARE_WITH_TIMEOUT(searched.count(), 1, 30000);
        QVERIFY2(g_ambiguous.isEmpty(), qPrintable(g_ambiguous.join(QLatin1Char('\n'))));
        QVERIFY(v->result()->stopped);
        QVERIFY(v->result()->completed < 5'000'000);
        QVERIFY(w.runs().at(QStringLiteral("random")).stopped);
        QVERIFY(!stop->isEnabled()); // nothing runs any more
    }

    // A Pareto sweep alone: Esc from the window stops it too (Stop is enabled while it runs).
    void escStopsAParetoSweep() {
        MainWindow w(options());
        QVERIFY(w.openScenario(kP99));
        w.show();
        views::ParetoView* v = w.paretoView();
        w.showPage(v);
        QSignalSpy finished(w.paretoRunner(), &app::ParetoRunner::finished);
        emit v->startRequested(8, 50'000'000); // far more evaluations than run before the key
        QVERIFY(w.paretoRunner()->isRunning());
        QVERIFY(w.action(QStringLiteral("stop"))->isEnabled());
        QTest::qWait(200);
        QTest::keyClick(&w, Qt::Key_Escape);
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 60000);
        QVERIFY(finished[0][1].value<app::ParetoResultPtr>()->stopped);
        QVERIFY(!w.action(QStringLiteral("stop"))->isEnabled());
        QVERIFY2(g_ambiguous.isEmpty(), qPrintable(g_ambiguous.join(QLatin1Char('\n'))));
    }

    // A calibration fit and a search at once, the focus in the calibration dock: the dock's Stop button no
    // longer claims Esc beside the window's (two owners: Qt ran neither); one Esc stops both.
    void escStopsAFitAndASearch() {
        MainWindow w(options());
        QVERIFY(w.openScenario(kP99));
        w.show();
        w.action(QStringLiteral("calibration"))->trigger();
        views::CalibrationView* v = w.calibrationView();
        QVERIFY(v->calibrationSet().cases.size() >= 2);
        w.runPanel()->setSelectedSearchers({QStringLiteral("random")});
        w.runPanel()->setBudget(100'000'000);
        QSignalSpy searched(&w, &MainWindow::searchFinished);
        QSignalSpy stopped(v, &views::CalibrationView::fitStopped);
        w.startSearch();
        v->fit(); // the fit with leave-one-out over every run: far longer than the key takes to come
        QVERIFY(v->isFitting());
        QVERIFY(w.action(QStringLiteral("stop"))->isEnabled());
        QDockWidget* dock = w.calibrationDock();
        QVERIFY(dock->isFloating()); // a window of its own, as a user first sees it
        dock->activateWindow();
        QVERIFY(QTest::qWaitForWindowActive(dock));
        v->setFocus();
        QTest::keyClick(v, Qt::Key_Escape);
        QTRY_COMPARE_WITH_TIMEOUT(stopped.count(), 1, 30000);
        QTRY_COMPARE_WITH_TIMEOUT(searched.count(), 1, 30000);
        QVERIFY(!v->isFitting());
        QVERIFY2(g_ambiguous.isEmpty(), qPrintable(g_ambiguous.join(QLatin1Char('\n'))));
        QVERIFY(!w.action(QStringLiteral("stop"))->isEnabled());
    }
};

QTEST_MAIN(TestGuiStop)
#include "tst_gui_stop.moc"
