// The Serving tab serving a disaggregated plan: "the Pareto point selected" is off, saying why, until a
// disaggregated point of the Pareto tab is selected; then the tab names its split, and Run and the rate sweep
// give what the core's simulate and sweepRates give for that split (the DisaggModel of the scenario);
// Capacity is off, saying why; sessions keep the choice and the point.
#include "core/io/formats.h"
#include "core/sim/sweep.h"
#include "gui_fixtures.h"
#include "servingrunner.h"
#include "views/format.h"
#include "views/pareto.h"
#include "views/servinganswers.h"
#include "views/servingsweep.h"
#include "views/servingview.h"

#include <QComboBox>
#include <QLabel>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStandardItemModel>
#include <QTemporaryDir>
#include <QTest>

using namespace sp;
using namespace sp::testing;

namespace {

QComboBox* planChoice(QWidget* v) {
    for (auto* c : v->findChildren<QComboBox*>())
        if (c->findText(QStringLiteral("Megatron")) >= 0) return c;
    return nullptr;
}

const QString kSplitChoice = QStringLiteral("the Pareto point selected");

bool choiceEnabled(QComboBox* c) {
    auto* model = qobject_cast<QStandardItemModel*>(c->model());
    return model && model->item(c->findText(kSplitChoice))->isEnabled();
}

/// The label that names the plan served: the one that starts with `name` and a colon.
QString nameShown(QWidget* v, const QString& name) {
    for (auto* l : v->findChildren<QLabel*>())
        if (l->text().startsWith(name + QStringLiteral(": "))) return l->text();
    return QString();
}

/// A small sweep with the disaggregated comparison: 3 targets, 80 evaluations a search.
bool sweepWithSplits(views::ParetoView* v) {
    const auto spins = v->findChildren<QSpinBox*>();
    if (spins.size() != 2) return false;
    spins[0]->setValue(3);
    spins[1]->setValue(80);
    v->setDisaggregatedChecked(true);
    QPushButton* b = button(v, QStringLiteral("Sweep"));
    if (!b || !b->isEnabled()) return false;
    b->click();
    QTest::qWait(0);
    for (int i = 0; i < 1200 && !b->isEnabled(); ++i) QTest::qWait(50);
    return b->isEnabled() && v->result();
}

void samePercentiles(const Percentiles& a, const Percentiles& b) {
    QCOMPARE(a.count, b.count);
    QCOMPARE(a.p50, b.p50);
    QCOMPARE(a.p90, b.p90);
    QCOMPARE(a.p99, b.p99);
    QCOMPARE(a.mean, b.mean);
}

} // namespace

class TestGuiServingSplit : public QObject {
    Q_OBJECT
private slots:
    void servesTheParetoSplit() {
        QTemporaryDir dir;
        const QString path = twoNodeScenario(dir);
        MainWindow::Options opts = testOptions();
        opts.threadsPerRun = 1;
        MainWindow w(opts);
        QVERIFY(w.openScenario(path));
        views::ServingView* v = w.servingView();
        QComboBox* choice = planChoice(v);
        QVERIFY(choice);
        QVERIFY(choice->findText(kSplitChoice) >= 0);
        // No sweep yet: off, and its tooltip says why.
        QVERIFY(!choiceEnabled(choice));
        QVERIFY2(v->paretoSplitChoiceUnavailable().contains(QStringLiteral("no disaggregated point")),
                 qPrintable(v->paretoSplitChoiceUnavailable()));

        views::ParetoView* pv = w.paretoView();
        QVERIFY(sweepWithSplits(pv));
        QVERIFY(!pv->disaggregatedPoints().empty());
        // Points drawn, none selected: still off.
        QVERIFY(!choiceEnabled(choice));
        QVERIFY2(
            v->paretoSplitChoiceUnavailable().contains(QStringLiteral("no disaggregated point selected")),
            qPrintable(v->paretoSplitChoiceUnavailable()));

        pv->selectDisaggregated(0);
        const DisaggFrontierPoint d = *pv->selectedDisaggregated();
        QVERIFY(choiceEnabled(choice));
        QVERIFY(v->paretoSplitChoiceUnavailable().isEmpty());
        const int i = choice->findText(kSplitChoice);
        choice->setCurrentIndex(i);
        emit choice->activated(i);
        QCOMPARE(v->servedPlan(), views::ServedPlan::ParetoSplit);
        // Named by both pools: "Disaggregated: prefill 1 node pp1 dp.. tp.. / decode 1 node ...".
        const auto pool = [](const char* what, const DisaggPool& p) {
            return QStringLiteral("%1 %2 %3 %4")
                .arg(QLatin1String(what))
                .arg(p.nodes)
                .arg(p.nodes == 1 ? QStringLiteral("node") : QStringLiteral("nodes"))
                .arg(views::planShapeText(p.plan, false));
        };
        const QString label =
            QStringLiteral("Disaggregated: %1 / %2")
                .arg(pool("prefill", d.split.plan.prefill), pool("decode", d.split.plan.decode));
        const QString shown = nameShown(v, QStringLiteral("Disaggregated"));
        QVERIFY2(shown.startsWith(label), qPrintable(shown + " / " + label));
        QVERIFY2(shown.contains(QStringLiteral("prefill 1 node")), qPrintable(shown));
        // Capacity bisects aggregated plans only: off, saying so.
        QPushButton* capacity = button(v, QStringLiteral("Capacity"));
        QVERIFY(!capacity->isEnabled());
        QVERIFY2(capacity->toolTip().contains(QStringLiteral("disaggregated")),
                 qPrintable(capacity->toolTip()));

        // Run: the core's simulation of the split, with the same options.
        v->setRate(4);
        v->setRequests(80);
        QSignalSpy simulated(w.servingRunner(), &app::ServingRunner::simulated);
        button(v, QStringLiteral("Run"))->click();
        QTRY_COMPARE_WITH_TIMEOUT(simulated.count(), 1, 60000);
        const Scenario scenario = loadScenario(path.toStdString()).value();
        const DisaggModel model(scenario);
        SimOptions o;
        o.rate = 4;
        o.requests = 80;
        const auto expected = simulate(model, d.split.plan, o);
        QVERIFY2(expected->ok, expected->error.c_str());
        QVERIFY(v->result());
        QCOMPARE(v->result()->completed, int64_t(80));
        samePercentiles(v->result()->ttftMs, expected->ttftMs);
        samePercentiles(v->result()->tpotMs, expected->tpotMs);
        QCOMPARE(v->result()->plan, expected->plan);
        QVERIFY2(v->status().startsWith(label), qPrintable(v->status()));

        // The rate sweep: the core's sweep of the split.
        views::ServingSweepView* page = v->sweep();
        page->setRange(2, 6, 2);
        QSignalSpy swept(w.servingRunner(), &app::ServingRunner::swept);
        button(page, QStringLiteral("Sweep"))->click();
        QTRY_COMPARE_WITH_TIMEOUT(swept.count(), 1, 60000);
        RateSweepOptions so;
        so.rates = {2, 6};
        so.sim.requests = 80;
        const RateSweep core = sweepRates(model, d.split.plan, so);
        QVERIFY2(core.ok, core.error.c_str());
        QVERIFY(page->sweep());
        QCOMPARE(page->sweep()->sweep.points.size(), core.points.size());
        for (size_t k = 0; k < core.points.size(); ++k)
            QVERIFY(page->sweep()->sweep.points[k] == core.points[k]);

        // Sessions keep the choice and the point served.
        const QString session = dir.filePath(QStringLiteral("split.spsession"));
        QVERIFY(w.saveSession(session));
        MainWindow w2(opts);
        QVERIFY(w2.openScenario(kDefault));
        QVERIFY(w2.openSession(session));
        QCOMPARE(w2.servingView()->servedPlan(), views::ServedPlan::ParetoSplit);
        QVERIFY(w2.paretoView()->selectedDisaggregated());
        QCOMPARE(w2.paretoView()->selectedDisaggregated()->targetTpotMs, d.targetTpotMs);
        QTRY_COMPARE(nameShown(w2.servingView(), QStringLiteral("Disaggregated")), shown);

        // No point selected any more: off again, and the tab serves Megatron's saying why.
        pv->selectDisaggregated(-1);
        QVERIFY(!choiceEnabled(choice));
        const QString fallback = nameShown(v, QStringLiteral("Megatron"));
        QVERIFY2(fallback.contains(QStringLiteral("no disaggregated point selected")), qPrintable(fallback));
        QVERIFY(capacity->isEnabled());
    }
};

QTEST_MAIN(TestGuiServingSplit)
#include "tst_gui_serving_split.moc"
