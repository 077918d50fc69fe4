// Pin and compare in the Serving tab: Pin keeps the run and the sweep shown; the next ones are drawn over
// them, each named in the legend by what differs (the plan, the rate, the GPUs), with a table of their
// figures side by side; a session keeps the pin; Clear pin drops it. Pinning is unsaved work.
#include "gui_fixtures.h"
#include "servingrunner.h"
#include "views/format.h"
#include "views/servingsweep.h"
#include "views/servingview.h"

#include <QChart>
#include <QLegendMarker>
#include <QLineSeries>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

using namespace sp;
using namespace sp::testing;

namespace {

bool runAt(MainWindow& w, double rate) {
    views::ServingView* v = w.servingView();
    v->setRate(rate);
    QSignalSpy simulated(w.servingRunner(), &app::ServingRunner::simulated);
    button(v, QStringLiteral("Run"))->click();
    // A short run may be delivered before the click returns (its future already finished).
    return simulated.count() > 0 || simulated.wait(60000);
}

bool sweep(MainWindow& w, double from, double to, int steps) {
    views::ServingSweepView* page = w.servingView()->sweep();
    page->setRange(from, to, steps);
    QSignalSpy swept(w.servingRunner(), &app::ServingRunner::swept);
    button(page, QStringLiteral("Sweep"))->click();
    return swept.count() > 0 || swept.wait(60000);
}

/// The legend's labels of a chart, those shown.
QStringList legend(QLineSeries* any) {
    QStringList out;
    for (QLegendMarker* m : any->chart()->legend()->markers())
        if (m->isVisible()) out << m->label();
    return out;
}

} // namespace

class TestGuiServingPin : public QObject {
    Q_OBJECT
private slots:
    // What differs names a run: the plan by its name (its shape where the names agree), the load, the GPUs;
    // "pinned" and "this run" where nothing does.
    void namesSayWhatDiffers() {
        const views::RunTag a{QStringLiteral("Megatron: pp1 dp1 tp8"), QStringLiteral("2 requests/s"),
                              QStringLiteral("8x H200 SXM")};
        views::RunTag b = a;
        QCOMPARE(views::distinctNames(a, b, QStringLiteral("this run")),
                 std::pair(QStringLiteral("pinned"), QStringLiteral("this run")));
        b.gpus = QStringLiteral("8x B200");
        QCOMPARE(views::distinctNames(a, b, QStringLiteral("this run")),
                 std::pair(QStringLiteral("8x H200 SXM"), QStringLiteral("8x B200")));
        b.plan = QStringLiteral("Best found (sa): pp1 dp2 tp4");
        b.load = QStringLiteral("5 requests/s");
        QCOMPARE(views::distinctNames(a, b, QStringLiteral("this run")),
                 std::pair(QStringLiteral("Megatron, 2 requests/s, 8x H200 SXM"),
                           QStringLiteral("Best found (sa), 5 requests/s, 8x B200")));
        const views::RunTag c{QStringLiteral("rank 2: pp1 dp2 tp4"), a.load, a.gpus};
        const views::RunTag d{QStringLiteral("rank 2: pp2 dp1 tp4"), a.load, a.gpus};
        QCOMPARE(views::distinctNames(c, d, QStringLiteral("this run")), std::pair(c.plan, d.plan));
    }

    // A run pinned, then one at another rate, then one of another plan: both drawn, named, and compared;
    // a sweep pinned and another range swept over it; all of it saved and reopened; Clear pin drops it.
    void overlayNamesBothRuns() {
        MainWindow w(testOptions());
        w.resize(1280, 720);
        QVERIFY(w.openScenario(kP99));
        views::ServingView* v = w.servingView();
        QPushButton* pin = button(v, QStringLiteral("Pin"));
        QPushButton* unpin = button(v, QStringLiteral("Clear pin"));
        QVERIFY(pin && unpin);
        QVERIFY(!pin->isEnabled()); // nothing shown to pin
        v->setRequests(150);
        QVERIFY(runAt(w, 2));
        QVERIFY(pin->isEnabled());
        QVERIFY(runAt(w, 2) && v->result());
        const auto pinnedRun = v->result();
        pin->click();
        QVERIFY(v->pinned().run);
        QVERIFY(unpin->isEnabled());
        QVERIFY(v->pinnedTtftCurve()->isVisible());
        QCOMPARE(v->ttftCurve()->name(), QStringLiteral("this run")); // the same run, pinned and shown

        QVERIFY(runAt(w, 5));
        QCOMPARE(v->pinnedTtftCurve()->name(), QStringLiteral("2 requests/s"));
        QCOMPARE(v->ttftCurve()->name(), QStringLiteral("5 requests/s"));
        QCOMPARE(v->pinnedTpotCurve()->name(), QStringLiteral("2 requests/s"));
        QCOMPARE(v->pinnedTtftCurve()->points(), views::ServingView::cdfPoints(pinnedRun->ttftSortedMs));
        QVERIFY(legend(v->ttftCurve()).contains(QStringLiteral("2 requests/s")));
        QVERIFY(legend(v->ttftCurve()).contains(QStringLiteral("5 requests/s")));
        QString table = v->runCompareText();
        QStringList rows = table.split(u'\n');
        QCOMPARE(rows.size(), 3);
        QVERIFY2(rows[1].startsWith(QStringLiteral("2 requests/s\t%1\t%2")
                                        .arg(views::formatMs(pinnedRun->ttftMs.p50),
                                             views::formatMs(pinnedRun->ttftMs.p99))),
                 qPrintable(table));
        QVERIFY2(rows[2].startsWith(
                     QStringLiteral("5 requests/s\t%1").arg(views::formatMs(v->result()->ttftMs.p50))),
                 qPrintable(table));

        // Another plan at the same rate: the plans name them, the rates too (they differ).
        QVERIFY(shortSearch(w));
        QVERIFY2(v->planName().startsWith(QStringLiteral("Best found")), qPrintable(v->planName()));
        QVERIFY(runAt(w, 5));
        QCOMPARE(v->pinnedTtftCurve()->name(), QStringLiteral("Megatron, 2 requests/s"));
        QVERIFY2(v->ttftCurve()->name().startsWith(QStringLiteral("Best found (")) &&
                     v->ttftCurve()->name().endsWith(QStringLiteral("), 5 requests/s")),
                 qPrintable(v->ttftCurve()->name()));

        // Sweeps: one pinned (with the run), another range over it.
        views::ServingSweepView* page = v->sweep();
        QVERIFY(sweep(w, 2, 4, 2));
        pin->click();
        QVERIFY(v->pinned().sweep);
        QVERIFY(sweep(w, 3, 6, 2));
        QCOMPARE(page->pinnedTtftP99()->count(), 2);
        QCOMPARE(page->pinnedTtftP99()->points()[1].x(), 4.0);
        QCOMPARE(page->pinnedTtftP99()->name(), QStringLiteral("2-4 requests/s"));
        QCOMPARE(page->ttftP99()->name(), QStringLiteral("3-6 requests/s"));
        const QString sweeps = page->compareText();
        QVERIFY2(sweeps.split(u'\n').size() == 3 && sweeps.contains(QStringLiteral("\n2-4 requests/s\t")) &&
                     sweeps.contains(QStringLiteral("\n3-6 requests/s\t")),
                 qPrintable(sweeps));
        QVERIFY(w.hasUnsavedResults());

        // Saved and reopened: the same pin, tables and names, nothing simulated.
        table = v->runCompareText();
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("pin.spsession"));
        QVERIFY(w.saveSession(path));
        MainWindow w2(testOptions());
        w2.resize(1280, 720);
        QVERIFY(w2.openSession(path));
        views::ServingView* v2 = w2.servingView();
        QVERIFY(v2->pinned().run && v2->pinned().sweep);
        QCOMPARE(v2->pinned().run->run->ttftSortedMs, v->pinned().run->run->ttftSortedMs);
        QCOMPARE(v2->pinned().run->tag, v->pinned().run->tag);
        QVERIFY(v2->pinned().sweep->sweep.points == v->pinned().sweep->sweep.points);
        QCOMPARE(v2->runCompareText(), table);
        QCOMPARE(v2->sweep()->compareText(), sweeps);
        QCOMPARE(v2->pinnedTtftCurve()->name(), v->pinnedTtftCurve()->name());
        QCOMPARE(v2->ttftCurve()->name(), v->ttftCurve()->name());
        QCOMPARE(v2->pinnedTtftCurve()->points(), v->pinnedTtftCurve()->points());
        QCOMPARE(v2->sweep()->pinnedTtftP99()->points(), page->pinnedTtftP99()->points());
        QVERIFY(!w2.hasUnsavedResults());

        // Clear pin: the overlays and the tables go, the curves are named as before; unsaved.
        button(v2, QStringLiteral("Clear pin"))->click();
        QVERIFY(v2->pinned().empty());
        QVERIFY(!v2->pinnedTtftCurve()->isVisible());
        QVERIFY(!v2->sweep()->pinnedTtftP99()->isVisible());
        QVERIFY(v2->runCompareText().isEmpty());
        QVERIFY(v2->sweep()->compareText().isEmpty());
        QCOMPARE(v2->ttftCurve()->name(), QStringLiteral("TTFT"));
        QCOMPARE(v2->sweep()->ttftP99()->name(), QStringLiteral("p99"));
        QVERIFY(w2.hasUnsavedResults());
    }
};

QTEST_MAIN(TestGuiServingPin)
#include "tst_gui_serving_pin.moc"
