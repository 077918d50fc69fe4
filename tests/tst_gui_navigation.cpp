// Finding one's way in the planner window at 1280x720 (a laptop): every tab has a View-menu entry and a
// Ctrl+digit key (the Pareto front and Serving tabs included) that F1 lists; Ctrl+Tab and Ctrl+Shift+Tab
// switch tabs wherever the focus is; the Scenario and Search panels hide and show from the View menu, kept
// with the window's state; the splitter above the elite table moves, and the tabs get 400 px of the 720.
#include "gui_fixtures.h"
#include "views/pareto.h"
#include "views/scenarioeditor.h"
#include "views/servingview.h"
#include "windowactions.h"

#include <QAction>
#include <QDockWidget>
#include <QHeaderView>
#include <QMenu>
#include <QMenuBar>
#include <QSettings>
#include <QSplitter>
#include <QTabWidget>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>

using namespace sp;
using namespace sp::testing;

namespace {

QMenu* menuTitled(MainWindow& w, const QString& title) {
    for (QAction* a : w.menuBar()->actions())
        if (a->menu() && a->text().remove(QLatin1Char('&')) == title) return a->menu();
    return nullptr;
}

QSplitter* centralSplit(MainWindow& w) {
    return qobject_cast<QSplitter*>(w.tabs()->parentWidget());
}

QDockWidget* searchDock(MainWindow& w) {
    return w.findChild<QDockWidget*>(QStringLiteral("runDock"));
}

/// The window at a laptop's 1280x720, shown, active (shortcuts go to the active window) and on the sample.
bool showAtLaptopSize(MainWindow& w) {
    w.resize(1280, 720);
    w.show();
    w.activateWindow();
    return QTest::qWaitForWindowActive(&w) && w.openScenario(kP99);
}

/// Drags the splitter's handle by `dy` px, as the mouse does (each point where the handle is at that moment:
/// it follows the mouse).
void dragHandle(QSplitter* split, int dy) {
    QSplitterHandle* h = split->handle(1);
    const QPoint from = h->mapTo(split, h->rect().center());
    auto at = [&](int by) { return h->mapFrom(split, from + QPoint(0, by)); };
    QTest::mousePress(h, Qt::LeftButton, Qt::NoModifier, at(0));
    QTest::mouseMove(h, at(dy / 2));
    QTest::mouseMove(h, at(dy));
    QTest::mouseRelease(h, Qt::LeftButton, Qt::NoModifier, at(dy));
}
} // namespace

class TestGuiNavigation : public QObject {
    Q_OBJECT
    QTemporaryDir m_settingsDir;

private slots:
    void initTestCase() {
        // The window's saved state goes to a folder of this run, not the user's settings.
        QVERIFY(m_settingsDir.isValid());
        QCoreApplication::setOrganizationName(QStringLiteral("ShardPlannerNavigationTest"));
        QCoreApplication::setApplicationName(QStringLiteral("tst_gui_navigation"));
        QSettings::setPath(QSettings::IniFormat, QSettings::UserScope, m_settingsDir.path());
        QSettings::setPath(QSettings::NativeFormat, QSettings::UserScope, m_settingsDir.path());
    }
    void init() {
        g_ambiguous.clear();
        g_previousHandler = qInstallMessageHandler(collectAmbiguous);
    }
    void cleanup() { qInstallMessageHandler(g_previousHandler); }

    // Ctrl+1 to Ctrl+9 show the tabs in order, Ctrl+8 the Pareto front and Ctrl+9 Serving; each has its View
    // entry named as the tab, its tooltip names the key, and F1 lists them.
    void everyTabHasAKey() {
        MainWindow w(testOptions());
        QVERIFY(showAtLaptopSize(w));
        QTabWidget* tabs = w.tabs();
        QCOMPARE(tabs->count(), 9);
        QMenu* view = menuTitled(w, QStringLiteral("View"));
        QVERIFY(view);
        for (int i = 0; i < tabs->count(); ++i) {
            const QKeySequence key(Qt::CTRL | Qt::Key(Qt::Key_1 + i));
            QAction* entry = nullptr;
            for (QAction* a : view->actions())
                if (a->text() == tabs->tabText(i)) entry = a;
            QVERIFY2(entry, qPrintable(tabs->tabText(i)));
            QCOMPARE(entry->shortcut(), key);
            QVERIFY2(tabs->tabToolTip(i).endsWith(QStringLiteral("(%1)").arg(key.toString())),
                     qPrintable(tabs->tabToolTip(i)));
        }
        QTest::keyClick(&w, Qt::Key_8, Qt::ControlModifier);
        QVERIFY(tabs->currentWidget()->isAncestorOf(w.paretoView()));
        QCOMPARE(tabs->tabText(tabs->currentIndex()), QStringLiteral("Pareto front"));
        QTest::keyClick(&w, Qt::Key_9, Qt::ControlModifier);
        QVERIFY(tabs->currentWidget()->isAncestorOf(w.servingView()));
        QTest::keyClick(&w, Qt::Key_1, Qt::ControlModifier);
        QCOMPARE(tabs->currentIndex(), 0);
        w.action(QStringLiteral("tab8"))->trigger();
        QVERIFY(tabs->currentWidget()->isAncestorOf(w.paretoView()));

        const QString help = app::WindowActions::shortcutsHelp();
        for (const char* s : {"Ctrl+8 / Ctrl+9", "Pareto front", "Serving", "Ctrl+Tab / Ctrl+Shift+Tab"})
            QVERIFY2(help.contains(QLatin1String(s)), s);
        QVERIFY2(g_ambiguous.isEmpty(), qPrintable(g_ambiguous.join(QLatin1Char('\n'))));
    }

    // Ctrl+Tab with the focus in a field of the scenario panel (or the elite table) shows the next tab,
    // Ctrl+Shift+Tab the one before (wrapping), and the focus stays where it was. X11 sends Ctrl+Shift+Tab as
    // Backtab with Shift: that works too.
    void ctrlTabWherever() {
        MainWindow w(testOptions());
        QVERIFY(showAtLaptopSize(w));
        QTabWidget* tabs = w.tabs();
        tabs->setCurrentIndex(0);
        QLineEdit* nodes = w.scenarioEditor()->field(QStringLiteral("nodes"));
        QVERIFY(nodes);
        nodes->setFocus();
        QTRY_VERIFY(nodes->hasFocus());
        QTest::keyClick(nodes, Qt::Key_Tab, Qt::ControlModifier);
        QCOMPARE(tabs->currentIndex(), 1);
        QVERIFY(nodes->hasFocus());
        QTest::keyClick(nodes, Qt::Key_Tab, Qt::ControlModifier | Qt::ShiftModifier);
        QCOMPARE(tabs->currentIndex(), 0);
        QTest::keyClick(nodes, Qt::Key_Backtab, Qt::ControlModifier | Qt::ShiftModifier);
        QCOMPARE(tabs->currentIndex(), tabs->count() - 1); // wraps, as the tab bar's own Ctrl+Tab
        QTest::keyClick(nodes, Qt::Key_Tab, Qt::ControlModifier);
        QCOMPARE(tabs->currentIndex(), 0);

        w.eliteView()->setFocus();
        QTRY_VERIFY(w.eliteView()->hasFocus());
        QTest::keyClick(w.eliteView(), Qt::Key_Tab, Qt::ControlModifier);
        QCOMPARE(tabs->currentIndex(), 1);
        QVERIFY2(g_ambiguous.isEmpty(), qPrintable(g_ambiguous.join(QLatin1Char('\n'))));
    }

    // View > Scenario Panel and View > Search Panel hide and show the docks.
    void panelsHideAndShow() {
        MainWindow w(testOptions());
        QVERIFY(showAtLaptopSize(w));
        QMenu* view = menuTitled(w, QStringLiteral("View"));
        QVERIFY(view);
        for (QDockWidget* d : {w.scenarioDock(), searchDock(w)}) {
            QVERIFY(d);
            QAction* toggle = d->toggleViewAction();
            QVERIFY(view->actions().contains(toggle));
            QVERIFY2(toggle->isEnabled(), qPrintable(toggle->text()));
            QVERIFY(d->isVisible());
            toggle->trigger();
            QVERIFY(d->isHidden());
            QVERIFY(!toggle->isChecked());
            toggle->trigger();
            QVERIFY(d->isVisible());
        }
        // Hiding both gives the views their width.
        const int before = w.tabs()->width();
        w.scenarioDock()->toggleViewAction()->trigger();
        searchDock(w)->toggleViewAction()->trigger();
        QTRY_VERIFY2(w.tabs()->width() > before + 300,
                     qPrintable(QStringLiteral("%1 px, %2 before").arg(w.tabs()->width()).arg(before)));
    }

    // A hidden panel and a moved splitter are as the user left them when the window opens again (the window
    // state in QSettings, as its geometry).
    void layoutIsKept() {
        MainWindow::Options o = testOptions();
        o.persistSettings = true;
        int tabsHeight = 0;
        {
            MainWindow w(o);
            QVERIFY(showAtLaptopSize(w));
            searchDock(w)->toggleViewAction()->trigger();
            QVERIFY(searchDock(w)->isHidden());
            dragHandle(centralSplit(w), -100);
            tabsHeight = w.tabs()->height();
            QVERIFY(w.close());
        }
        MainWindow w(o);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QCOMPARE(w.size(), QSize(1280, 720));
        QVERIFY(searchDock(w)->isHidden());
        QVERIFY(!searchDock(w)->toggleViewAction()->isChecked());
        QVERIFY(w.scenarioDock()->isVisible());
        QCOMPARE(w.tabs()->height(), tabsHeight);
        searchDock(w)->toggleViewAction()->trigger();
        QVERIFY(searchDock(w)->isVisible());
    }

    // At 1280x720 the tabs get 400 px and the elite table the rest (about 5 rows); the splitter then moves
    // either way (under a ten-row minimum of the table it could not move down). A taller window, before the
    // splitter was moved, gives the table its ten rows.
    void splitterMovesAtLaptopSize() {
        MainWindow w(testOptions());
        QVERIFY(showAtLaptopSize(w));
        QTest::qWait(20);
        QTableView* t = w.eliteView();
        const int rowH = t->verticalHeader()->defaultSectionSize();
        QVERIFY2(w.tabs()->height() >= 400, qPrintable(QStringLiteral("%1 px").arg(w.tabs()->height())));
        QVERIFY2(t->viewport()->height() >= 3 * rowH,
                 qPrintable(QStringLiteral("%1 px for rows of %2").arg(t->viewport()->height()).arg(rowH)));

        QSplitter* split = centralSplit(w);
        QVERIFY(split);
        const QList<int> start = split->sizes();
        dragHandle(split, 60);
        QCOMPARE(split->sizes()[0], start[0] + 60);
        QCOMPARE(split->sizes()[1], start[1] - 60);
        dragHandle(split, -160);
        QCOMPARE(split->sizes()[0], start[0] - 100);
        QCOMPARE(split->sizes()[1], start[1] + 100);
        // Moved: a resize keeps the table's height and gives the rest to the views.
        w.resize(1280, 820);
        QTRY_COMPARE(split->sizes()[1], start[1] + 100);
        QCOMPARE(w.tabs()->height(), start[0] - 100 + 100);

        MainWindow tall(testOptions());
        QVERIFY(showAtLaptopSize(tall));
        tall.resize(1600, 1000);
        QTRY_VERIFY2(tall.eliteView()->viewport()->height() >= 10 * rowH,
                     qPrintable(QStringLiteral("%1 px").arg(tall.eliteView()->viewport()->height())));
        QVERIFY(tall.tabs()->height() >= 400);
    }
};

QTEST_MAIN(TestGuiNavigation)
#include "tst_gui_navigation.moc"
