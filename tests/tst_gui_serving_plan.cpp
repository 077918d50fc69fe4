// The plan the Serving tab serves: chosen by the user (the best found, the selected, Megatron's), the best
// found by default (Megatron's until a search finds one, said so), and named in the tab as the elite table
// names it; a run says which plan it simulated. Another scenario leaves no SLO line or range of the last.
#include "gui_fixtures.h"
#include "servingrunner.h"
#include "views/elitemodel.h"
#include "views/format.h"
#include "views/servingview.h"

#include <QChart>
#include <QComboBox>
#include <QLabel>
#include <QLegendMarker>
#include <QLineSeries>
#include <QPushButton>
#include <QSignalSpy>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>
#include <QValueAxis>

using namespace sp;
using namespace sp::testing;

namespace {

/// The combo box that picks the plan served: the one offering Megatron.
QComboBox* planChoice(QWidget* v) {
    for (auto* c : v->findChildren<QComboBox*>())
        if (c->findText(QStringLiteral("Megatron")) >= 0) return c;
    return nullptr;
}

/// Chooses as the user does (activated, not only the index).
void choose(QComboBox* c, const QString& text) {
    const int i = c->findText(text);
    QVERIFY(i >= 0);
    c->setCurrentIndex(i);
    emit c->activated(i);
}

/// The label that names the plan served: the one that starts with `name` and a colon.
QString nameShown(QWidget* v, const QString& name) {
    for (auto* l : v->findChildren<QLabel*>())
        if (l->text().startsWith(name + QStringLiteral(": "))) return l->text();
    return QString();
}

/// A plan's shape as the elite table's Degrees column shows it.
QString shape(const Plan& p, bool moe) {
    QString text = views::degreesText(p.degrees, moe);
    if (!p.stageLayers.empty()) text += QStringLiteral(" | layers ") + views::qs(stageLayersText(p));
    if (p.spec.on()) text += QStringLiteral(" | ") + views::qs(specText(p.spec));
    return text;
}
} // namespace

class TestGuiServingPlan : public QObject {
    Q_OBJECT
private slots:
    // Before a search: the best found is chosen, and the tab says it serves Megatron's plan for want of one.
    // After it: the best feasible plan of the elite, with its searcher and degrees, whatever row is selected;
    // Megatron and the selected plan when chosen; a run names the plan it simulated.
    void theTabNamesThePlanItServes() {
        MainWindow w(testOptions());
        w.resize(1280, 720);
        QVERIFY(w.openScenario(kP99));
        views::ServingView* v = w.servingView();
        QComboBox* choice = planChoice(v);
        QVERIFY2(choice, "no choice of the plan served");
        QCOMPARE(choice->currentText(), QStringLiteral("the best found"));
        const Plan megatron = w.context()->megatron()->plan;
        QString shown = nameShown(v, QStringLiteral("Megatron"));
        QVERIFY2(shown.contains(shape(megatron, false)) &&
                     shown.contains(QStringLiteral("no plan found yet")),
                 qPrintable(shown));

        QVERIFY(shortSearch(w));
        const views::EliteEntry* best = nullptr;
        for (const views::EliteEntry& e : w.eliteModel()->entries())
            if (e.candidate->metrics.feasible &&
                (!best || planScore(e.candidate->metrics) > planScore(best->candidate->metrics)))
                best = &e;
        QVERIFY(best);
        // No row selected: the views show Megatron's plan, the tab still the best found.
        w.eliteView()->clearSelection();
        QTRY_VERIFY(!nameShown(v, QStringLiteral("Best found (%1)").arg(best->searcher)).isEmpty());
        shown = nameShown(v, QStringLiteral("Best found (%1)").arg(best->searcher));
        QVERIFY2(shown.contains(shape(best->candidate->plan, false)), qPrintable(shown));
        QVERIFY2(shown.contains(views::formatRate(best->candidate->metrics.throughput)), qPrintable(shown));

        // A run of it says so.
        v->setRate(0.5);
        v->setRequests(60);
        QSignalSpy simulated(w.servingRunner(), &app::ServingRunner::simulated);
        button(v, QStringLiteral("Run"))->click();
        QTRY_COMPARE_WITH_TIMEOUT(simulated.count(), 1, 60000);
        QVERIFY2(v->status().startsWith(QStringLiteral("Best found (%1)").arg(best->searcher)),
                 qPrintable(v->status()));
        QTemporaryDir dir;
        QVERIFY(w.saveSession(dir.filePath(QStringLiteral("plan.spsession"))));

        // Megatron, chosen: named without a note, and the choice is unsaved work.
        QVERIFY(!w.hasUnsavedResults());
        choose(choice, QStringLiteral("Megatron"));
        QVERIFY(w.hasUnsavedResults());
        shown = nameShown(v, QStringLiteral("Megatron"));
        QVERIFY2(shown.contains(shape(megatron, false)) && !shown.contains(u'('), qPrintable(shown));

        // The selected plan: none selected says so; a selected row is named by its label.
        choose(choice, QStringLiteral("the selected plan"));
        w.selectEliteRow(0);
        QVERIFY(w.currentPlan() != w.context()->megatron());
        const QString label = QString::fromStdString(w.currentPlan()->label);
        shown = nameShown(v, label);
        QVERIFY2(shown.contains(shape(w.currentPlan()->plan, false)), qPrintable(label + " / " + shown));
    }

    // Another scenario: no run, so no SLO line in the legend, no percentile level and no range of the last
    // run's (before, "SLO 2,000 ms (p99)" and the 0..2,500 ms axis stayed).
    void anotherScenarioLeavesNoSloBehind() {
        MainWindow w(testOptions());
        QVERIFY(w.openScenario(kP99));
        views::ServingView* v = w.servingView();
        v->setRate(0.5);
        v->setRequests(60);
        QSignalSpy simulated(w.servingRunner(), &app::ServingRunner::simulated);
        button(v, QStringLiteral("Run"))->click();
        QTRY_COMPARE_WITH_TIMEOUT(simulated.count(), 1, 60000);
        QVERIFY(v->ttftSloLine()->isVisible());
        QVERIFY(v->ttftSloLine()->name().contains(QStringLiteral("p99")));
        QTemporaryDir dir;
        QVERIFY(w.saveSession(dir.filePath(QStringLiteral("run.spsession")))); // nothing to ask on opening
        QVERIFY(w.openScenario(kDefault));
        for (QLineSeries* slo : {v->ttftSloLine(), v->tpotSloLine()}) {
            QCOMPARE(slo->name(), QStringLiteral("SLO"));
            QVERIFY(!slo->isVisible());
            QVERIFY(slo->points().isEmpty());
            QChart* c = slo->chart();
            for (QLegendMarker* m : c->legend()->markers())
                QVERIFY2(!m->isVisible() || !m->label().startsWith(QStringLiteral("SLO")),
                         qPrintable(m->label()));
            auto* x = qobject_cast<QValueAxis*>(c->axes(Qt::Horizontal).value(0));
            QVERIFY(x);
            QCOMPARE(x->max(), 1.0);
            QCOMPARE(c->title(), slo == v->ttftSloLine() ? QStringLiteral("TTFT") : QStringLiteral("TPOT"));
        }
        QVERIFY(v->summaryText().isEmpty());
    }
};

QTEST_MAIN(TestGuiServingPlan)
#include "tst_gui_serving_plan.moc"
