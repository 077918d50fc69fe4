// The Serving tab in a session: its inputs (rate, requests, trace) and what it shows (the run drawn and the
// capacity answer) are saved and drawn again as they were on opening; a finished run is unsaved work, so
// quitting or opening another scenario asks first; results that do not read are left out, said so.
#include "core/sim/simulator.h"
#include "gui_fixtures.h"
#include "servingrunner.h"
#include "session_serving.h"
#include "views/messagebanner.h"
#include "views/servingview.h"

#include <QChart>
#include <QChartView>
#include <QLineSeries>
#include <QMessageBox>
#include <QPushButton>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <QValueAxis>

using namespace sp;
using namespace sp::testing;

namespace {

/// Everything the tab draws, as text: each chart's title, axes and series (names and points), the summary,
/// the capacity answer and the status line.
QString drawn(views::ServingView* v) {
    QString out = v->summaryText() + u'\n' + v->capacityText() + u'\n' + v->status() + u'\n';
    for (QChartView* cv : v->findChildren<QChartView*>()) {
        QChart* c = cv->chart();
        out += c->title() + u'\n';
        for (QAbstractAxis* a : c->axes())
            if (auto* va = qobject_cast<QValueAxis*>(a))
                out += QStringLiteral("axis %1 %2..%3\n").arg(va->titleText()).arg(va->min()).arg(va->max());
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

bool rewrite(const QString& path, const std::function<void(QByteArray&)>& edit) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) return false;
    QByteArray text = f.readAll();
    f.close();
    edit(text);
    QFile g(path);
    return g.open(QIODevice::WriteOnly | QIODevice::Truncate) && g.write(text) == text.size();
}
} // namespace

class TestGuiServingFiles : public QObject {
    Q_OBJECT
private slots:
    // A capacity answer, then a run at another rate: the reopened tab has the same inputs and draws the same
    // charts, summary and answer (the run's figures come from the file, not from simulating again).
    void sessionKeepsTheServingTab() {
        MainWindow w(testOptions());
        w.resize(1200, 800);
        QVERIFY(w.openScenario(kP99));
        views::ServingView* v = w.servingView();
        QVERIFY(!w.hasUnsavedResults());
        v->setRequests(200);
        QSignalSpy found(w.servingRunner(), &app::ServingRunner::capacityFound);
        button(v, QStringLiteral("Capacity"))->click();
        QTRY_COMPARE_WITH_TIMEOUT(found.count(), 1, 60000);
        QVERIFY(!v->capacityText().isEmpty());
        // The answer is unsaved work.
        QVERIFY(w.hasUnsavedResults());
        QVERIFY(w.isWindowModified());
        v->setRate(2.5);
        v->setRequests(300);
        QSignalSpy simulated(w.servingRunner(), &app::ServingRunner::simulated);
        button(v, QStringLiteral("Run"))->click();
        QTRY_COMPARE_WITH_TIMEOUT(simulated.count(), 1, 60000);
        QCOMPARE(v->result()->completed, 300);
        const QString before = drawn(v);
        QVERIFY(before.contains(QStringLiteral("300 requests")));
        QVERIFY(before.contains(QStringLiteral("requests/s under the p99 SLOs")));

        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("serving.spsession"));
        QVERIFY(w.saveSession(path));
        QVERIFY(!w.hasUnsavedResults());
        QVERIFY(!w.isWindowModified());

        MainWindow w2(testOptions());
        w2.resize(1200, 800);
        QVERIFY(w2.openSession(path));
        views::ServingView* v2 = w2.servingView();
        QCOMPARE(v2->rate(), 2.5);
        QCOMPARE(v2->requests(), qint64(300));
        QVERIFY(!v2->useTrace());
        QVERIFY(v2->result());
        QCOMPARE(v2->result()->ttftSortedMs, v->result()->ttftSortedMs);
        QCOMPARE(v2->result()->tpotSortedMs, v->result()->tpotSortedMs);
        QCOMPARE(v2->result()->timeline.size(), v->result()->timeline.size());
        QCOMPARE(drawn(v2), before);
        QVERIFY(!w2.hasUnsavedResults());

        // Saved again from the reopened window, the file holds the same tab.
        const QString again = dir.filePath(QStringLiteral("again.spsession"));
        QVERIFY(w2.saveSession(again));
        MainWindow w3(testOptions());
        w3.resize(1200, 800);
        QVERIFY(w3.openSession(again));
        QCOMPARE(drawn(w3.servingView()), before);
    }

    // A finished run is unsaved: opening another scenario or quitting asks, and Cancel keeps the window.
    void finishedRunAsksBeforeItIsLost() {
        QStringList asked;
        MainWindow::Options o = testOptions();
        o.ask = [&asked](const QString& title, const QString& text) {
            asked << title + QStringLiteral(": ") + text;
            return int(QMessageBox::Cancel);
        };
        MainWindow w(o);
        QVERIFY(w.openScenario(kP99));
        views::ServingView* v = w.servingView();
        v->setRequests(100);
        QSignalSpy simulated(w.servingRunner(), &app::ServingRunner::simulated);
        button(v, QStringLiteral("Run"))->click();
        QTRY_COMPARE_WITH_TIMEOUT(simulated.count(), 1, 60000);
        QVERIFY(w.hasUnsavedResults());
        QVERIFY(w.isWindowModified());
        QVERIFY(!w.openScenario(kDefault)); // cancelled
        QCOMPARE(asked.size(), 1);
        QVERIFY2(asked[0].contains(QStringLiteral("serving results are not saved")), qPrintable(asked[0]));
        QVERIFY(v->result()); // kept
        QVERIFY(!w.close());  // cancelled too
        QCOMPARE(asked.size(), 2);
        // Discarded: another scenario clears the tab, and nothing is left unsaved.
        MainWindow::Options discard = testOptions();
        discard.ask = [](const QString&, const QString&) { return int(QMessageBox::Discard); };
        MainWindow w2(discard);
        QVERIFY(w2.openScenario(kP99));
        QSignalSpy simulated2(w2.servingRunner(), &app::ServingRunner::simulated);
        w2.servingView()->setRequests(100);
        button(w2.servingView(), QStringLiteral("Run"))->click();
        QTRY_COMPARE_WITH_TIMEOUT(simulated2.count(), 1, 60000);
        QVERIFY(w2.openScenario(kDefault));
        QVERIFY(!w2.servingView()->result());
        QVERIFY(!w2.hasUnsavedResults());
    }

    // A session whose Serving results do not read opens, with its inputs, and says what was left out.
    void unreadableResultsAreLeftOut() {
        MainWindow w(testOptions());
        QVERIFY(w.openScenario(kP99));
        views::ServingView* v = w.servingView();
        v->setRate(0.75);
        v->setRequests(120);
        QSignalSpy simulated(w.servingRunner(), &app::ServingRunner::simulated);
        button(v, QStringLiteral("Run"))->click();
        QTRY_COMPARE_WITH_TIMEOUT(simulated.count(), 1, 60000);
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("broken.spsession"));
        QVERIFY(w.saveSession(path));
        QVERIFY(rewrite(path, [](QByteArray& text) {
            const int at = text.indexOf("\"ttft_sorted_ms\": \"");
            QVERIFY(at > 0);
            text.insert(at + int(qstrlen("\"ttft_sorted_ms\": \"")), "%%");
        }));
        MainWindow w2(testOptions());
        QVERIFY(w2.openSession(path));
        QCOMPARE(w2.servingView()->rate(), 0.75);
        QCOMPARE(w2.servingView()->requests(), qint64(120));
        QVERIFY(!w2.servingView()->result());
        const QString banner = w2.messageBanner()->text();
        QVERIFY2(banner.contains(QStringLiteral("Serving tab's results were left out")) &&
                     banner.contains(QStringLiteral("serving.result.ttft_sorted_ms")),
                 qPrintable(banner));
    }

    // A run of more requests than a session keeps values of: nearest-rank quantiles, whose p50, p90, p95 and
    // p99 are the run's (quantile j of m is value ceil(j n / m) of n), the last the maximum.
    void longRunsKeepTheirPercentiles() {
        const size_t n = 1'000'003; // prime: no quantile falls on a whole multiple by chance
        std::vector<double> v(n);
        for (size_t i = 0; i < n; ++i) v[i] = double(i) * 0.5;
        const std::vector<double> kept = app::thinSorted(v);
        QCOMPARE(kept.size(), app::kMaxSavedValues);
        for (double p : {50.0, 90.0, 95.0, 99.0}) QCOMPARE(percentileOf(kept, p), percentileOf(v, p));
        QCOMPARE(kept.back(), v.back());
        QVERIFY(std::is_sorted(kept.begin(), kept.end()));
        // By hand: p50 of 1,000,003 is value ceil(500,001.5) = 500,002, i.e. index 500,001, 250,000.5.
        QCOMPARE(percentileOf(kept, 50), 250'000.5);
        const std::vector<double> small{1, 2, 3};
        QCOMPARE(app::thinSorted(small), small);
    }
};

QTEST_MAIN(TestGuiServingFiles)
#include "tst_gui_serving_files.moc"
