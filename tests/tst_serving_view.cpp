// The Serving tab: the simulation of the plan shown runs on a worker and is drawn as latency CDFs against the
// workload's SLOs, KV occupancy and queue length over time; Esc stops it; Capacity gives the highest rate.
#include "mainwindow.h"
#include "servingrunner.h"
#include "views/servingview.h"

#include <QLineSeries>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTest>

using namespace sp;

namespace {
const QString kP99 = QStringLiteral(SHARDPLAN_SAMPLES_DIR "/scenarios/llama-3.1-70b-h200-1x8-chat-p99.yaml");

app::MainWindow::Options options() {
    app::MainWindow::Options o;
    o.persistSettings = false;
    o.confirmClose = false;
    return o;
}

QPushButton* button(QWidget* w, const QString& text) {
    for (auto* b : w->findChildren<QPushButton*>())
        if (b->text() == text) return b;
    return nullptr;
}
} // namespace

class TestServingView : public QObject {
    Q_OBJECT
private slots:
    void cdfPointsByHand() {
        // Four requests: each holds a quarter; the curve starts at the smallest at 0 and ends at 1.0.
        const auto p = views::ServingView::cdfPoints({10, 20, 30, 40});
        const QList<QPointF> want{{10, 0}, {10, 0.25}, {20, 0.5}, {30, 0.75}, {40, 1.0}};
        QCOMPARE(p, want);
        QVERIFY(views::ServingView::cdfPoints({}).isEmpty());
        // 1,000 values: every third drawn (ceil(1000 / 400) = 3), the last at (999, 1.0) all the same.
        std::vector<double> v(1000);
        for (int i = 0; i < 1000; ++i) v[size_t(i)] = i;
        const auto q = views::ServingView::cdfPoints(v);
        QVERIFY(q.size() <= views::ServingView::kCdfPoints + 2);
        QCOMPARE(q[1], QPointF(2, 0.003)); // v[2] is the third of 1,000
        QCOMPARE(q.back(), QPointF(999, 1.0));
        QCOMPARE(q[q.size() - 2], QPointF(998, 0.999));
    }

    void runDrawsTheCdfsAndTheSloLines() {
        app::MainWindow w(options());
        w.resize(1200, 800);
        QVERIFY(w.openScenario(kP99));
        views::ServingView* v = w.servingView();
        QVERIFY(v);
        v->setRate(0.5);
        v->setRequests(300);
        QSignalSpy done(w.servingRunner(), &app::ServingRunner::simulated);
        button(v, QStringLiteral("Run"))->click();
        QVERIFY(v->isRunning());
        QVERIFY(!button(v, QStringLiteral("Run"))->isEnabled());
        QTRY_COMPARE_WITH_TIMEOUT(done.count(), 1, 30000);
        QVERIFY(!v->isRunning());
        const SimResult* r = v->result();
        QVERIFY(r);
        QCOMPARE(r->completed, 300);
        QCOMPARE(qsizetype(r->ttftSortedMs.size()), 300);

        // The CDFs reach 1.0 at the largest simulated TTFT and TPOT, and start at 0 at the smallest.
        const auto ttft = v->ttftCurve()->points();
        QCOMPARE(ttft.back().y(), 1.0);
        QCOMPARE(ttft.back().x(), r->ttftMs.max);
        QCOMPARE(ttft.front(), QPointF(r->ttftSortedMs.front(), 0));
        const auto tpot = v->tpotCurve()->points();
        QCOMPARE(tpot.back(), QPointF(r->tpotSortedMs.back(), 1.0));
        // 300 requests: 300 steps of 1/300, plus the start.
        QCOMPARE(ttft.size(), 301);
        // The SLO lines at the workload's values (samples/workloads/chat-lognormal-p99.yaml: TTFT 2,000 ms,
        // TPOT 50 ms at p99), from 0 to 1, and the percentile's level at 0.99.
        QCOMPARE(v->ttftSloLine()->points(), (QList<QPointF>{{2000, 0}, {2000, 1}}));
        QCOMPARE(v->tpotSloLine()->points(), (QList<QPointF>{{50, 0}, {50, 1}}));
        QVERIFY(v->ttftSloLine()->name().contains(QStringLiteral("p99")));

        // KV occupancy and queue over time: the run's timeline, in percent of the pool and requests.
        QCOMPARE(v->kvSeries()->count(), qsizetype(r->timeline.size()));
        QVERIFY(r->timeline.size() > 10);
        double peak = 0;
        for (const QPointF& p : v->kvSeries()->points()) peak = std::max(peak, p.y());
        QVERIFY(peak > 0);
        QVERIFY(peak <= 100.0 * r->kvPeakShare + 1e-9);
        QCOMPARE(v->queueSeries()->points().back().y(), double(r->timeline.back().waiting));
        QVERIFY(v->summaryText().contains(QStringLiteral("TTFT ms")));
        QVERIFY(v->summaryText().contains(QStringLiteral("SLOs at p99")));
        QVERIFY(v->status().contains(QStringLiteral("300 of 300 requests")));
    }

    void escStopsARun() {
        app::MainWindow w(options());
        QVERIFY(w.openScenario(kP99));
        w.show();
        views::ServingView* v = w.servingView();
        w.tabs()->setCurrentIndex(w.tabs()->count() - 1); // Serving, the last tab
        // Far more requests than complete before the key: the run stops with what completed.
        v->setRate(20);
        v->setRequests(5'000'000);
        QSignalSpy done(w.servingRunner(), &app::ServingRunner::simulated);
        QSignalSpy progress(w.servingRunner(), &app::ServingRunner::progress);
        button(v, QStringLiteral("Run"))->click();
        QTRY_VERIFY_WITH_TIMEOUT(progress.count() > 0, 30000);
        v->setFocus();
        QTest::keyClick(v, Qt::Key_Escape);
        QTRY_COMPARE_WITH_TIMEOUT(done.count(), 1, 30000);
        QVERIFY(v->result()->stopped);
        QVERIFY(v->result()->completed < 5'000'000);
        QVERIFY(v->status().contains(QStringLiteral("(stopped)")));
    }

    void capacityAnswers() {
        app::MainWindow w(options());
        QVERIFY(w.openScenario(kP99));
        views::ServingView* v = w.servingView();
        v->setRequests(200);
        QSignalSpy found(w.servingRunner(), &app::ServingRunner::capacityFound);
        button(v, QStringLiteral("Capacity"))->click();
        QTRY_COMPARE_WITH_TIMEOUT(found.count(), 1, 60000);
        const auto row = found[0][1].value<app::MaxRateRowPtr>();
        const MaxRate* m = &row->rate;
        QVERIFY(m->ok);
        QVERIFY(m->rate > 0);
        QVERIFY(m->rateAbove > m->rate);
        // The answer in words, the rate put in the rate box, and its run drawn.
        QVERIFY2(v->capacityText().contains(QStringLiteral("requests/s under the p99 SLOs")),
                 qPrintable(v->capacityText()));
        QCOMPARE(v->rate(), std::round(m->rate * 1000) / 1000); // the box keeps 3 decimals
        QCOMPARE(v->result(), m->at.get());
    }

    // SHARDPLAN_SCREENSHOT_DIR, when set, receives docs/desktop-planner.md's picture of the Serving tab: the
    // p99 chat scenario near its capacity (5.59 requests/s, `capacity --max-rate`), so the queue and the KV
    // pool move.
    void screenshot() {
        const QByteArray dir = qgetenv("SHARDPLAN_SCREENSHOT_DIR");
        if (dir.isEmpty()) QSKIP("SHARDPLAN_SCREENSHOT_DIR is not set");
        app::MainWindow w(options());
        w.resize(1400, 1050);
        QVERIFY(w.openScenario(kP99));
        views::ServingView* v = w.servingView();
        w.tabs()->setCurrentIndex(w.tabs()->count() - 1); // Serving, the last tab
        w.show();
        v->setRate(5.5);
        v->setRequests(3000);
        QSignalSpy done(w.servingRunner(), &app::ServingRunner::simulated);
        button(v, QStringLiteral("Run"))->click();
        QTRY_COMPARE_WITH_TIMEOUT(done.count(), 1, 60000);
        QCOMPARE(v->result()->completed, 3000);
        QTest::qWait(100);
        QVERIFY(w.grab().save(QString::fromLocal8Bit(dir) + "/serving.png"));
    }
};

QTEST_MAIN(TestServingView)
#include "tst_serving_view.moc"
