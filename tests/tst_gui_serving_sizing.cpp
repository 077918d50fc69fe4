// The Serving tab's answers as the core gives them: GPUs for a rate are fewestGpus's rows (the same as one
// call with the GPU types checked), Esc stops a sizing, the capacity goes through maxRatePerGpu (tokens/s,
// dollars, energy, and why its runs hold more requests than the box says), and a session keeps the sizing
// and the plan choice, shown identically when reopened. The fleet planner (Tools > Fleet...) shows
// planFleet's answer and solves again when a rate or an SLO moves, saying what changed.
#include "core/io/fleetfiles.h"
#include "core/sim/fleet.h"
#include "gui_fixtures.h"
#include "servingrunner.h"
#include "views/fleetview.h"
#include "views/format.h"
#include "views/messagebanner.h"
#include "views/scenarioeditor.h"
#include "views/servingsizing.h"
#include "views/servingview.h"

#include <QAction>
#include <QDockWidget>
#include <QPushButton>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

using namespace sp;
using namespace sp::testing;

namespace {

/// What the tab shows of its plan choice and sizing, as text.
QString shown(views::ServingView* v) {
    const views::ServingSizingView* z = v->sizing();
    QStringList gpus;
    for (const std::string& id : z->gpus()) gpus << QString::fromStdString(id);
    return QStringLiteral("plan %1: %2\nsizing %3 requests/s on %4\n%5\n%6\n%7\npage %8")
        .arg(views::servedPlanKey(v->servedPlan()), v->planName())
        .arg(z->rate())
        .arg(gpus.join(u','), z->headingText(), z->tableText(), z->notesText())
        .arg(v->showsSizing());
}
} // namespace

class TestGuiServingSizing : public QObject {
    Q_OBJECT
private slots:
    // 0.5 requests/s of the p99 chat workload on H200 and H100 SXM, 40 requests given: the rows are those of
    // fewestGpus called with the same question (as `shardplan capacity --rate 0.5 --gpus h200,h100-sxm
    // --requests 40`); the answer is unsaved work, and a session keeps it and the plan choice.
    void sizingIsFewestGpus() {
        MainWindow w(testOptions());
        w.resize(1280, 720);
        QVERIFY(w.openScenario(kP99));
        views::ServingView* v = w.servingView();
        views::ServingSizingView* z = v->sizing();
        // The scenario's GPU type is checked to begin with.
        QCOMPARE(z->gpus(), std::vector<std::string>{"h200"});
        v->setRequests(40);
        z->setRate(0.5);
        z->setGpus({"h100-sxm", "h200"});
        QCOMPARE(z->gpus(), (std::vector<std::string>{"h100-sxm", "h200"})); // the database's order
        v->showSizing(true);
        QSignalSpy sized(w.servingRunner(), &app::ServingRunner::sized);
        button(v, QStringLiteral("Find GPUs"))->click();
        QVERIFY(v->isRunning());
        QTRY_COMPARE_WITH_TIMEOUT(sized.count(), 1, 120000);
        QVERIFY(!v->isRunning());
        QVERIFY(w.hasUnsavedResults());

        CapacityOptions o;
        o.rate = 0.5;
        o.gpus = {"h100-sxm", "h200"};
        o.sim.requests = 40;
        const std::vector<CapacityRow> want = fewestGpus(w.scenarioEditor()->scenario(), o);
        QVERIFY(z->result());
        const std::vector<CapacityRow>& got = z->result()->rows;
        QCOMPARE(got.size(), want.size());
        QCOMPARE(got.size(), size_t(2));
        for (size_t i = 0; i < want.size(); ++i) {
            QCOMPARE(got[i].gpu, want[i].gpu);
            QCOMPARE(got[i].met, want[i].met);
            QVERIFY(got[i].met);
            QCOMPARE(got[i].nodes, want[i].nodes);
            QCOMPARE(got[i].gpus, want[i].gpus);
            QVERIFY(got[i].plan == want[i].plan);
            QCOMPARE(got[i].why, want[i].why);
            QCOMPARE(got[i].slo.ttftMs, want[i].slo.ttftMs);
            QCOMPARE(got[i].slo.tpotMs, want[i].slo.tpotMs);
            QCOMPARE(got[i].cost.usdPerHour, want[i].cost.usdPerHour);
            QCOMPARE(got[i].cost.usdPerMillionTokens, want[i].cost.usdPerMillionTokens);
            QCOMPARE(got[i].cost.tokensPerSPerMegawatt, want[i].cost.tokensPerSPerMegawatt);
            QCOMPARE(got[i].simulations, want[i].simulations);
        }
        // The table as the CLI prints its columns: nodes, GPUs, TTFT %.1f, TPOT %.2f.
        const QStringList lines = z->tableText().split(u'\n');
        QCOMPARE(lines.size(), 3);
        const QStringList h100 = lines[1].split(u'\t');
        QCOMPARE(h100[0], QStringLiteral("h100-sxm"));
        QCOMPARE(h100[1], QString::number(want[0].nodes));
        QCOMPARE(h100[2], QString::number(want[0].gpus));
        QCOMPARE(h100[3], QString::number(want[0].slo.ttftMs, 'f', 1));
        QCOMPARE(h100[4], QString::number(want[0].slo.tpotMs, 'f', 2));
        QVERIFY2(z->notesText().contains(QStringLiteral("h200 ") + QString::fromStdString(want[1].why)),
                 qPrintable(z->notesText()));
        QVERIFY2(z->headingText().contains(QStringLiteral("at least the 40 requests given")),
                 qPrintable(z->headingText()));

        // Saved with the plan choice, and shown identically when reopened (nothing simulated again).
        v->setServedPlan(views::ServedPlan::Megatron);
        const QString before = shown(v);
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("sizing.spsession"));
        QVERIFY(w.saveSession(path));
        QVERIFY(!w.hasUnsavedResults());
        MainWindow w2(testOptions());
        w2.resize(1280, 720);
        QVERIFY(w2.openSession(path));
        QCOMPARE(shown(w2.servingView()), before);
        QCOMPARE(w2.servingView()->servedPlan(), views::ServedPlan::Megatron);
        QVERIFY(w2.servingView()->planName().startsWith(QStringLiteral("Megatron: ")));
        QVERIFY(!w2.hasUnsavedResults());
        // And again, from the reopened window.
        const QString again = dir.filePath(QStringLiteral("again.spsession"));
        QVERIFY(w2.saveSession(again));
        MainWindow w3(testOptions());
        QVERIFY(w3.openSession(again));
        QCOMPARE(shown(w3.servingView()), before);
    }

    // Esc (the window's Stop) stops a sizing: it ends with the rows done, said to be stopped.
    void escStopsASizing() {
        MainWindow w(testOptions());
        QVERIFY(w.openScenario(kP99));
        w.show();
        views::ServingView* v = w.servingView();
        w.showPage(v);
        v->showSizing(true);
        // Far more than finishes before the key: 2,000 requests/s needs dozens of nodes of each.
        v->sizing()->setRate(2000);
        v->sizing()->setGpus({"h100-sxm", "h200", "b200"});
        QSignalSpy sized(w.servingRunner(), &app::ServingRunner::sized);
        QSignalSpy progress(w.servingRunner(), &app::ServingRunner::progress);
        button(v, QStringLiteral("Find GPUs"))->click();
        QTRY_VERIFY_WITH_TIMEOUT(progress.count() > 0, 30000);
        QVERIFY(w.action(QStringLiteral("stop"))->isEnabled());
        v->setFocus();
        QTest::keyClick(v, Qt::Key_Escape);
        QTRY_COMPARE_WITH_TIMEOUT(sized.count(), 1, 30000);
        const auto z = sized[0][1].value<app::GpuSizingPtr>();
        QVERIFY(z->stopped);
        QVERIFY(z->rows.size() < 3);
        QVERIFY(!v->isRunning());
        QVERIFY2(v->status().contains(QStringLiteral("(stopped)")), qPrintable(v->status()));
        QVERIFY(v->sizing()->headingText().contains(QStringLiteral("Stopped")));
    }

    // Capacity is maxRatePerGpu's answer for the plan served on the scenario's cluster: the same rate, the
    // output tokens/s it sustains and what they cost, and the requests its runs held (20 request latencies
    // at the rate when that is more than the box says).
    void capacityIsMaxRatePerGpu() {
        MainWindow w(testOptions());
        QVERIFY(w.openScenario(kP99));
        views::ServingView* v = w.servingView();
        v->setServedPlan(views::ServedPlan::Megatron);
        v->setRequests(100);
        QSignalSpy found(w.servingRunner(), &app::ServingRunner::capacityFound);
        button(v, QStringLiteral("Capacity"))->click();
        QTRY_COMPARE_WITH_TIMEOUT(found.count(), 1, 120000);
        const auto row = found[0][1].value<app::MaxRateRowPtr>();

        MaxRateOptions o;
        o.plan = w.context()->megatron()->plan;
        o.search.sim.requests = 100;
        const std::vector<MaxRateRow> want = maxRatePerGpu(w.scenarioEditor()->scenario(), o);
        QCOMPARE(want.size(), size_t(1));
        QCOMPARE(row->rate.rate, want[0].rate.rate);
        QCOMPARE(row->rate.rateAbove, want[0].rate.rateAbove);
        QCOMPARE(row->outputTokensPerS, want[0].outputTokensPerS);
        QCOMPARE(row->cost.usdPerMillionTokens, want[0].cost.usdPerMillionTokens);
        QVERIFY(row->cost.priced && row->cost.powered); // the H200's list price and TDP (resources/gpus.yaml)

        const QString text = v->capacityText();
        const int64_t atRate = want[0].rate.at->requests;
        QVERIFY(atRate > 100); // 20 request latencies at ~6.7 requests/s
        for (const QString& part :
             {QStringLiteral("Capacity of Megatron: "), QStringLiteral("on 8 GPUs"),
              QStringLiteral("requests/s under the p99 SLOs"),
              views::formatInteger(want[0].outputTokensPerS) + QStringLiteral(" output tokens/s"),
              QStringLiteral("$%1/hour").arg(views::formatGrouped(want[0].cost.usdPerHour, 2)),
              QStringLiteral("$%1/M tokens").arg(views::formatGrouped(want[0].cost.usdPerMillionTokens, 3)),
              views::formatInteger(want[0].cost.tokensPerSPerMegawatt) + QStringLiteral(" tokens/s/MW"),
              QStringLiteral("at least the 100 requests given"), QStringLiteral("20 request latencies"),
              views::formatInteger(double(atRate)) + QStringLiteral(" requests at")})
            QVERIFY2(text.contains(part), qPrintable(part + QStringLiteral(" not in: ") + text));
    }
};

class TestGuiFleet : public QObject {
    Q_OBJECT
private slots:
    // The sample fleet (three models over four GPU types) in the window's fleet dock: the total, the rows and
    // the GPUs drawn per type are planFleet's analytical answer (`shardplan capacity --fleet
    // samples/fleet-three-models.yaml --analytical`); doubling a rate solves again, the total and the rows
    // become planFleet's answer to the edited fleet, and the change line names the edit and both costs.
    void fleetDockIsPlanFleet() {
        MainWindow w(testOptions());
        views::FleetView* v = w.fleetView();
        QVERIFY(v && !v->fleet());
        QSignalSpy solved(v, &views::FleetView::solved);
        // Tools > Fleet... (Ctrl+Shift+F) opens the dock with the sample fleet.
        QAction* action = nullptr;
        for (QAction* a : w.findChildren<QAction*>())
            if (a->shortcut() == QKeySequence(QStringLiteral("Ctrl+Shift+F"))) action = a;
        QVERIFY(action);
        action->trigger();
        QVERIFY(w.fleetDock()->isVisible() && v->fleet());
        QVERIFY(solved.wait(30000));
        auto f = loadFleet((kSamples + QStringLiteral("/fleet-three-models.yaml")).toStdString());
        QVERIFY2(f, f ? "" : f.error().str().c_str());
        FleetOptions o;
        o.analytical = true;
        const FleetAnswer a = planFleet(f.value(), o);
        QVERIFY(a.ok && v->answer() && v->answer()->ok);
        auto rowsOf = [](const FleetAnswer& x) {
            int n = 0;
            for (int c : x.solution.counts) n += c > 0;
            return n;
        };
        QCOMPARE(v->answer()->solution.counts, a.solution.counts);
        QVERIFY2(
            v->totalText().startsWith(QStringLiteral("Total $%1/hour").arg(a.solution.usdPerHour, 0, 'f', 2)),
            qPrintable(v->totalText()));
        QCOMPARE(v->assignmentText().count('\n'), rowsOf(a));
        // The inventory: each type's GPUs used of its GPUs, as the counts add them up.
        for (size_t g = 0; g < f->inventory.size(); ++g) {
            int64_t used = 0;
            for (size_t j = 0; j < a.solution.counts.size(); ++j)
                if (a.problem.candidates[j].type == int(g))
                    used += int64_t(a.solution.counts[j]) * a.problem.candidates[j].gpus;
            const QString line = QStringLiteral("%1  %2/%3 GPUs")
                                     .arg(QString::fromStdString(f->inventory[g].id))
                                     .arg(used)
                                     .arg(int64_t(f->inventory[g].nodes) * f->inventory[g].gpusPerNode);
            QVERIFY2(v->inventoryText().contains(line), qPrintable(v->inventoryText()));
        }
        QVERIFY(v->bindsText().contains(QStringLiteral("What binds")));
        // Doubling the 70B model's rate.
        const double rate = f->models[1].rate;
        QVERIFY(!w.hasUnsavedResults());
        v->setModelRate(1, 2 * rate);
        QVERIFY(w.hasUnsavedResults()); // a saved session keeps the fleet: the edit is unsaved until then
        QVERIFY(solved.wait(30000));
        Fleet edited = f.value();
        edited.models[1].rate = 2 * rate;
        const FleetAnswer b = planFleet(edited, o);
        QVERIFY(b.ok && b.solution.usdPerHour > a.solution.usdPerHour);
        QCOMPARE(v->answer()->solution.counts, b.solution.counts);
        const QString change = v->changeText();
        QVERIFY2(change.contains(QStringLiteral("rate %1 -> %2 requests/s").arg(rate).arg(2 * rate)) &&
                     change.contains(QStringLiteral("$%1/hour -> $%2/hour")
                                         .arg(a.solution.usdPerHour, 0, 'f', 2)
                                         .arg(b.solution.usdPerHour, 0, 'f', 2)),
                 qPrintable(change));
        // Save Fleet As writes the edited fleet: it reads back with the doubled rate and gives the same
        // answer; a path that cannot be written says why and keeps the fleet.
        QTemporaryDir dir;
        const QString saved = dir.filePath(QStringLiteral("edited.yaml"));
        QVERIFY(v->saveTo(saved));
        auto back = loadFleet(saved.toStdString());
        QVERIFY2(back, back ? "" : back.error().str().c_str());
        QCOMPARE(back->models[1].rate, 2 * rate);
        QCOMPARE(planFleet(back.value(), o).solution.counts, b.solution.counts);
        QVERIFY(v->statusText().contains(QStringLiteral("Saved to")));
        QString notSaved;
        QVERIFY(!v->saveTo(dir.filePath(QStringLiteral("no/such/folder/f.yaml")), &notSaved));
        QVERIFY2(notSaved.startsWith(QStringLiteral("Not saved: ")), qPrintable(notSaved));
        QCOMPARE(v->answer()->solution.counts, b.solution.counts);
        // A session keeps the fleet as shown: another window opening it shows the edited fleet and its
        // answer.
        const QString session = dir.filePath(QStringLiteral("fleet.shardplan"));
        QVERIFY(w.openScenario(kSamples + QStringLiteral("/scenarios/llama-3.1-8b-h100-1x8.yaml")));
        QVERIFY(w.saveSession(session));
        QVERIFY(!w.hasUnsavedResults());
        {
            MainWindow other(testOptions());
            QSignalSpy otherSolved(other.fleetView(), &views::FleetView::solved);
            QVERIFY2(other.openSession(session), qPrintable(other.messageBanner()->text()));
            QVERIFY(other.fleetDock()->isVisible() && other.fleetView()->fleet());
            QCOMPARE(other.fleetView()->fleet()->models[1].rate, 2 * rate);
            QCOMPARE(other.fleetView()->origin(), saved);
            QVERIFY(otherSolved.wait(30000));
            QCOMPARE(other.fleetView()->answer()->solution.counts, b.solution.counts);
            // A session whose fleet does not read says where, and opens nothing.
            const QString broken = dir.filePath(QStringLiteral("broken.shardplan"));
            QVERIFY(writeEdited(session, QStringLiteral("rate: 48"), QStringLiteral("rate: -1"), broken));
            QVERIFY(!other.openSession(broken));
            QVERIFY2(other.messageBanner()->text().contains(QStringLiteral("fleet: ")) &&
                         other.messageBanner()->text().contains(QStringLiteral("models[1].rate")),
                     qPrintable(other.messageBanner()->text()));
        }
        // A bad file says where and what, and the fleet shown stays.
        const QString bad = dir.filePath(QStringLiteral("bad.yaml"));
        QFile file(bad);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write("kind: fleet\ninventory:\n  - {gpu: h100-sxm, nodes: many}\nmodels: []\n");
        file.close();
        QString error;
        QVERIFY(!v->loadFile(bad, &error));
        QVERIFY2(error.contains(bad + QStringLiteral(":3:28: inventory[0].nodes")), qPrintable(error));
        QCOMPARE(v->answer()->solution.counts, b.solution.counts);
        QVERIFY(v->statusText().contains(QStringLiteral("inventory[0].nodes")));
        // File > Open of a fleet file shows it in the dock; of a price list, says it goes on the command
        // line.
        QVERIFY(w.openFile(kSamples + QStringLiteral("/fleet-three-models.yaml")));
        QVERIFY(solved.wait(30000));
        QCOMPARE(v->answer()->solution.counts, a.solution.counts);
        QVERIFY(!w.openFile(kSamples + QStringLiteral("/prices-example.yaml")));
        QVERIFY2(w.messageBanner()->text().contains(QStringLiteral("shardplanner --prices")),
                 qPrintable(w.messageBanner()->text()));
        if (qEnvironmentVariableIsSet("SHARDPLAN_FLEET_SHOT")) {
            QTest::qWait(100);
            w.fleetDock()->grab().save(qEnvironmentVariable("SHARDPLAN_FLEET_SHOT"));
        }
    }
};

int main(int argc, char** argv) {
    QApplication app(argc, argv);
    int rc = 0;
    {
        TestGuiServingSizing t;
        rc |= QTest::qExec(&t, argc, argv);
    }
    {
        TestGuiFleet t;
        rc |= QTest::qExec(&t, argc, argv);
    }
    return rc;
}
#include "tst_gui_serving_sizing.moc"
