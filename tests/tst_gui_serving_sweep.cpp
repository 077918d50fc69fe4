// The Serving tab's rate sweep: its range starts from the plan's analytical rate (or the capacity answer);
// a sweep gives the rates asked, each point the single run at its rate (the core's simulate, called here);
// the chart draws p50 and p99 with the SLO lines and marks the highest rate meeting them; Stop (Esc) keeps
// the points done; a session reopens it as drawn, without simulating; a finished sweep is unsaved work.
#include "core/sim/capacity.h"
#include "core/sim/sweep.h"
#include "gui_fixtures.h"
#include "servingrunner.h"
#include "views/scenarioeditor.h"
#include "views/servingsweep.h"
#include "views/servingview.h"

#include <QChart>
#include <QChartView>
#include <QLineSeries>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <QValueAxis>

using namespace sp;
using namespace sp::testing;

namespace {

/// What the sweep page draws, as text: its summary, its table, each chart's title, axes and series.
QString drawn(views::ServingSweepView* v) {
    QString out = v->summaryText() + u'\n' + v->compareText() + u'\n';
    for (QChartView* cv : v->findChildren<QChartView*>()) {
        QChart* c = cv->chart();
        out += c->title() + u'\n';
        for (QAbstractAxis* a : c->axes()) out += QStringLiteral("axis %1\n").arg(a->titleText());
        for (QAbstractSeries* s : c->series()) {
            auto* line = qobject_cast<QLineSeries*>(s);
            out += QStringLiteral("series %1 visible %2:").arg(s->name()).arg(s->isVisible());
            for (const QPointF& p : line->points())
                out += QStringLiteral(" %1,%2").arg(p.x(), 0, 'g', 17).arg(p.y(), 0, 'g', 17);
            out += u'\n';
        }
    }
    return out;
}

QList<double> xs(QLineSeries* s) {
    QList<double> out;
    for (const QPointF& p : s->points()) out << p.x();
    return out;
}

} // namespace

class TestGuiServingSweep : public QObject {
    Q_OBJECT
private slots:
    // Before any answer the range reaches a fifth above the plan's analytical rate (Megatron's 6,940 tokens/s
    // over the chat workload's output tokens), in round steps.
    void rangeStartsFromThePlan() {
        MainWindow w(testOptions());
        QVERIFY(w.openScenario(kP99));
        views::ServingSweepView* s = w.servingView()->sweep();
        const Scenario sc = w.scenarioEditor()->scenario();
        const double analytic =
            w.context()->megatron()->metrics().throughput / double(sc.workload.outputTokens);
        QVERIFY(s->to() >= 1.2 * analytic);
        QVERIFY(s->to() <= 1.2 * 1.2 * analytic); // niceTop rounds the step up by at most a fifth
        QCOMPARE(s->rates().size(), size_t(s->steps()));
        QCOMPARE(s->rates().front(), s->from());
    }

    // The rates asked, each point the run the core gives at that rate with the requests it reports (the
    // Requests box, more where 20 request latencies take more), drawn with the SLOs and the best rate marked.
    void sweepPointsAreSingleRuns() {
        MainWindow w(testOptions());
        w.resize(1280, 720);
        QVERIFY(w.openScenario(kP99));
        views::ServingView* v = w.servingView();
        v->setRequests(100);
        views::ServingSweepView* page = v->sweep();
        page->setRange(2, 8, 4);
        QVERIFY(!w.hasUnsavedResults());
        QSignalSpy swept(w.servingRunner(), &app::ServingRunner::swept);
        button(page, QStringLiteral("Sweep"))->click();
        QCOMPARE(v->page(), views::ServingView::Page::Sweep);
        QTRY_COMPARE_WITH_TIMEOUT(swept.count(), 1, 60000);
        QVERIFY(page->sweep());
        const std::vector<SweepPoint>& pts = page->sweep()->sweep.points;
        QCOMPARE(pts.size(), size_t(4));

        const Scenario sc = w.scenarioEditor()->scenario();
        const CostModel model(sc);
        const Plan plan = w.context()->megatron()->plan; // the best found, before a search: Megatron's
        const Metrics m = model.evaluate(plan);
        const double rates[] = {2, 4, 6, 8};
        for (size_t i = 0; i < pts.size(); ++i) {
            QCOMPARE(pts[i].rate, rates[i]);
            QCOMPARE(pts[i].requests, std::max<int64_t>(100, steadyRequests(m, sc.workload, rates[i], 20)));
            SimOptions o;
            o.rate = rates[i];
            o.requests = pts[i].requests;
            const auto r = simulate(model, plan, o);
            QVERIFY(pts[i] == sweepPoint(rates[i], *r, sc.workload));
            QCOMPARE(pts[i].ttftMs.p99, r->ttftMs.p99);
            QCOMPARE(pts[i].tpotMs.p50, r->tpotMs.p50);
        }
        // The chart: p50 and p99 at the rates asked, the SLO lines at 2,000 and 50 ms, and the mark at the
        // highest rate meeting them (Megatron's capacity is 5.59 requests/s, docs/serving.md: 4 meets, 6
        // not).
        QCOMPARE(xs(page->ttftP99()), (QList<double>{2, 4, 6, 8}));
        QCOMPARE(xs(page->tpotP50()), (QList<double>{2, 4, 6, 8}));
        QCOMPARE(page->ttftP99()->points()[3].y(), pts[3].ttftMs.p99 / 1000); // TTFT in seconds
        QVERIFY(page->ttftSlo()->isVisible());
        QCOMPARE(page->ttftSlo()->points().front().y(), 2.0);
        QCOMPARE(page->tpotSlo()->points().front().y(), 50.0);
        const int best = highestMeeting(pts);
        QCOMPARE(best, 1);
        QVERIFY(page->tpotBest()->isVisible());
        QCOMPARE(page->tpotBest()->points().front().x(), 4.0);
        QVERIFY2(page->tpotBest()->name().contains(QStringLiteral("up to 4/s")),
                 qPrintable(page->tpotBest()->name()));
        QVERIFY2(page->summaryText().contains(QStringLiteral("up to 4 requests/s")),
                 qPrintable(page->summaryText()));
        QVERIFY2(page->summaryText().contains(QStringLiteral("At 6 requests/s")),
                 qPrintable(page->summaryText()));
        QVERIFY(v->status().contains(QStringLiteral("Sweep: 4 rates done")));
        // A finished sweep is unsaved work.
        QVERIFY(w.hasUnsavedResults());
    }

    // Esc (the window's Stop) ends a sweep: the points done are kept, drawn and said so; the run cut short
    // is not a point.
    void stopKeepsThePointsDone() {
        MainWindow w(testOptions());
        w.show();
        QVERIFY(w.openScenario(kP99));
        views::ServingView* v = w.servingView();
        w.showPage(v);
        v->setRequests(40'000); // about a second a rate: the key comes during the second
        views::ServingSweepView* page = v->sweep();
        page->setRange(1, 10, 10);
        QSignalSpy grew(w.servingRunner(), &app::ServingRunner::sweepGrew);
        QSignalSpy swept(w.servingRunner(), &app::ServingRunner::swept);
        button(page, QStringLiteral("Sweep"))->click();
        QTRY_VERIFY_WITH_TIMEOUT(grew.count() > 0, 60000);
        QVERIFY(page->sweep() && !page->sweep()->sweep.points.empty()); // drawn as they come
        QTest::keyClick(v, Qt::Key_Escape);
        QTRY_COMPARE_WITH_TIMEOUT(swept.count(), 1, 60000);
        const views::ShownSweep& s = *page->sweep();
        QVERIFY(s.sweep.stopped);
        QVERIFY(!s.sweep.points.empty());
        QVERIFY(s.sweep.points.size() < 10);
        for (size_t i = 0; i < s.sweep.points.size(); ++i) {
            QCOMPARE(s.sweep.points[i].rate, double(i + 1));
            QCOMPARE(s.sweep.points[i].completed, s.sweep.points[i].requests); // whole runs only
        }
        QCOMPARE(page->ttftP50()->count(), qsizetype(s.sweep.points.size()));
        QVERIFY2(v->status().startsWith(QStringLiteral("Sweep stopped: %1 of 10").arg(s.sweep.points.size())),
                 qPrintable(v->status()));
        QVERIFY2(page->summaryText().contains(QStringLiteral("Stopped after")),
                 qPrintable(page->summaryText()));
        QVERIFY(!v->isRunning());
        QVERIFY(w.hasUnsavedResults());
    }

    // Saved and reopened: the range, the points and the charts as they were, on the sweep page; nothing
    // simulated on opening.
    void sessionKeepsTheSweep() {
        MainWindow w(testOptions());
        w.resize(1280, 720);
        QVERIFY(w.openScenario(kP99));
        views::ServingView* v = w.servingView();
        v->setRequests(100);
        views::ServingSweepView* page = v->sweep();
        page->setRange(3, 9, 3);
        QSignalSpy swept(w.servingRunner(), &app::ServingRunner::swept);
        button(page, QStringLiteral("Sweep"))->click();
        QTRY_COMPARE_WITH_TIMEOUT(swept.count(), 1, 60000);
        const QString before = drawn(page);
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("sweep.spsession"));
        QVERIFY(w.saveSession(path));
        QVERIFY(!w.hasUnsavedResults());

        MainWindow w2(testOptions());
        w2.resize(1280, 720);
        QSignalSpy progress(w2.servingRunner(), &app::ServingRunner::progress);
        QVERIFY(w2.openSession(path));
        views::ServingView* v2 = w2.servingView();
        views::ServingSweepView* page2 = v2->sweep();
        QCOMPARE(v2->page(), views::ServingView::Page::Sweep);
        QCOMPARE(page2->from(), 3.0);
        QCOMPARE(page2->to(), 9.0);
        QCOMPARE(page2->steps(), 3);
        QVERIFY(page2->sweep());
        QVERIFY(page2->sweep()->sweep.points == page->sweep()->sweep.points);
        QCOMPARE(page2->sweep()->rates, page->sweep()->rates);
        QCOMPARE(page2->sweep()->tag, page->sweep()->tag);
        QCOMPARE(drawn(page2), before);
        QVERIFY(!w2.servingRunner()->isRunning());
        QCOMPARE(progress.count(), 0);
        QVERIFY(!w2.hasUnsavedResults());
    }
};

QTEST_MAIN(TestGuiServingSweep)
#include "tst_gui_serving_sweep.moc"
