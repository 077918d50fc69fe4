#include "sessionfiles.h"

#include "core/io/formats.h"
#include "mainwindow.h"
#include "session.h"
#include "session_pareto.h"
#include "views/elitemodel.h"
#include "views/format.h"
#include "views/imageexport.h"
#include "views/messagebanner.h"
#include "views/fleetview.h"
#include "views/pareto.h"
#include "views/runpanel.h"
#include "views/scenarioeditor.h"
#include "views/searchchart.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QSortFilterProxyModel>
#include <QStatusBar>

namespace sp::app {

bool SessionFiles::save(MainWindow& w, const QString& path) {
    Session s;
    s.scenarioPath = w.m_scenarioPath;
    s.scenario = w.m_editor->scenario();
    s.searchers = w.m_runPanel->selectedSearchers();
    s.budget = w.m_runPanel->budget();
    s.seed = w.m_runPanel->seed();
    s.hasResults = w.m_hasResults && w.m_ctx;
    if (s.hasResults) {
        s.resultsScenario = w.m_ctx->scenario();
        for (const QString& n : w.m_runs.order()) {
            const RunState& r = w.m_runs.at(n);
            s.runs.push_back({n,
                              r.elite,
                              r.curve,
                              r.evaluations,
                              r.seconds,
                              r.stopped,
                              r.message,
                              w.m_controller->learned(n),
                              {}});
        }
    }
    if (w.m_opened) {
        s.openedPlan = w.m_opened->plan;
        s.openedLabel = w.m_openedLabel;
        s.hasResults = s.hasResults || w.m_ctx;
        if (!w.m_hasResults && w.m_ctx) s.resultsScenario = w.m_ctx->scenario();
    }
    if (w.m_current && w.m_ctx && w.m_current != w.m_ctx->megatron()) s.selectedPlan = w.m_current->plan;
    // The Pareto tab's sweep, once it has ended (a running one has no frontier yet).
    if (const ParetoResult* r = w.m_pareto->result(); r && w.m_paretoScenario)
        s.pareto =
            sessionPareto(w.m_pareto->scenarioName(), *w.m_paretoScenario, *r,
                          w.m_pareto->disaggregatedPoints(), w.m_pareto->disaggregated(),
                          w.m_pareto->overlayName(), w.m_overlayScenario.get(), w.m_pareto->overlayPoints());
    s.serving = w.servingSession(); // mainwindow_serving.cpp
    if (w.m_fleet) s.fleet = w.m_fleet->shownFleet(), s.fleetOrigin = w.m_fleet->origin();
    QString error;
    if (!views::saveFile(path, s.toJson(), &error)) {
        w.showError(error);
        return false;
    }
    w.m_sessionPath = path;
    w.m_unsaved = false;
    w.m_servingUnsaved = false;
    w.addRecent(path);
    w.updateTitle();
    w.statusBar()->showMessage(MainWindow::tr("Saved session %1").arg(QDir::toNativeSeparators(path)), 5000);
    return true;
}

void SessionFiles::restorePareto(MainWindow& w, const SessionPareto& saved, QStringList& dropped) {
    const RestoredPareto r = app::restorePareto(saved);
    dropped << r.dropped;
    w.m_paretoScenario = std::make_shared<const Scenario>(saved.scenario);
    views::ParetoView* v = w.m_pareto;
    v->clear();
    v->setScenarioName(saved.name);
    v->setDisaggregatedChecked(saved.disaggregatedChecked);
    v->setResult(r.result);
    v->setDisaggregated(r.disaggregated);
    w.m_overlayRunner->cancel();
    v->setOverlayRunning(false);
    if (saved.overlayName.isEmpty()) {
        v->clearOverlay();
        w.m_overlayScenario = nullptr;
    } else {
        v->setOverlay(saved.overlayName, r.overlay);
        w.m_overlayScenario = std::make_shared<const Scenario>(saved.overlayScenario);
    }
    v->setStatus(MainWindow::tr("%1 points (Megatron %2), restored from the session")
                     .arg(r.result.frontier.size())
                     .arg(r.result.megatron.size()));
}

QString SessionFiles::restoreServing(MainWindow& w, const SessionServing& saved) {
    return w.restoreServing(saved); // mainwindow_serving.cpp
}

bool SessionFiles::open(MainWindow& w, const QString& path) {
    // The reader of every input: a regular file of at most 64 MiB (a FIFO must not block the window, nor
    // /dev/zero fill the memory).
    const auto text = readTextFile(path.toStdString());
    if (!text) {
        w.showError(views::MessageBanner::fromBytes(text.error().str()), MainWindow::Cause::OpenFile);
        return false;
    }
    QString error;
    auto s = Session::fromJson(QByteArray::fromStdString(text.value()), path, &error);
    if (!s) {
        w.showError(error, MainWindow::Cause::OpenFile);
        return false;
    }
    if (!w.confirmDiscard(MainWindow::tr("open another session"))) return false;
    w.setScenario(s->hasResults ? s->resultsScenario : s->scenario, s->scenarioPath);
    if (!s->searchers.isEmpty()) w.m_runPanel->setSelectedSearchers(s->searchers);
    w.m_runPanel->setBudget(s->budget);
    w.m_runPanel->setSeed(s->seed);
    QStringList dropped;
    // What the session's runs learned replaces what this window's did: its next Run starts from the
    // session's policy, as it would have in the window that saved it.
    w.m_controller->forgetLearned();
    if (s->hasResults) {
        for (SessionRun& run : s->runs) {
            w.m_controller->setLearned(run.searcher, run.learned, s->resultsScenario);
            if (!run.learnedError.isEmpty())
                dropped << MainWindow::tr("%1's learned policy (its next run starts from the prior): %2")
                               .arg(run.searcher, run.learnedError);
            RunState r;
            // A session is a file like any other: a plan in it that does not fit the scenario (edited by
            // hand, or from another version) is left out and said so, never evaluated.
            for (Candidate& c : run.elite) {
                if (auto why = w.m_ctx->costModel().checkPlan(c.plan)) {
                    dropped << MainWindow::tr("%1: %2").arg(run.searcher, QString::fromStdString(*why));
                    continue;
                }
                // The assignment is the space's own, not the file's (which may not match the plan).
                c.choices = w.m_ctx->space().fromPlan(c.plan).value_or(std::vector<int>{});
                c.metrics = w.m_ctx->costModel().evaluate(c.plan);
                r.elite.push_back(std::move(c));
            }
            r.curve = run.curve;
            r.evaluations = r.target = run.evaluations;
            r.seconds = run.seconds;
            r.stopped = run.stopped;
            r.message = run.message;
            r.finished = true;
            r.best = run.curve.isEmpty() ? 0 : run.curve.last().y();
            w.m_runs.add(run.searcher, r);
            w.m_chart->setCurve(run.searcher, r.curve, r.evaluations);
        }
        w.m_hasResults = !s->runs.empty();
        w.refreshElite();
        if (s->openedPlan && !w.m_ctx->costModel().checkPlan(*s->openedPlan)) {
            w.m_openedLabel = s->openedLabel;
            w.m_opened = views::makePlanRecord(w.m_ctx->costModel(), *s->openedPlan,
                                               w.m_openedLabel.toStdString(), "file");
        }
        bool shown = false;
        if (s->selectedPlan) {
            const int row = w.m_eliteModel->rowOf(*s->selectedPlan);
            if (row >= 0) {
                w.selectEliteRow(row);
                shown = true;
            } else if (w.m_opened && w.m_opened->plan == *s->selectedPlan) {
                w.showPlan(w.m_opened);
                shown = true;
            }
        }
        if (!shown && w.m_eliteModel->rowCount() > 0)
            w.selectEliteRow(w.m_proxy->mapToSource(w.m_proxy->index(0, 0)).row());
        w.m_runPanel->setFinished(MainWindow::tr("Restored from %1").arg(QFileInfo(path).fileName()));
    }
    if (s->pareto) restorePareto(w, *s->pareto, dropped);
    QString servingNote;
    if (s->serving) {
        servingNote = restoreServing(w, *s->serving);
        if (!s->serving->error.isEmpty())
            servingNote = MainWindow::tr("The Serving tab's results were left out (run it again): %1%2")
                              .arg(s->serving->error,
                                   servingNote.isEmpty() ? QString() : QStringLiteral(". ") + servingNote);
    }
    if (s->fleet) w.showFleetFromSession(*s->fleet, s->fleetOrigin); // mainwindow_calibration.cpp
    w.updateStopAction(); // the overlay's sweep, if any, was dropped
    if (!(s->scenario == w.m_ctx->scenario())) {
        w.m_editor->setScenario(s->scenario);
        w.scenarioEdited(); // shows the stale banner (results) or follows the edits (none)
    }
    w.refreshParetoStale();
    w.refreshComparison();
    w.m_undo->reset(w.m_editor->scenario());
    w.m_sessionPath = path;
    w.m_unsaved = false;
    w.m_servingUnsaved = false;
    w.addRecent(path);
    w.updateTitle();
    w.statusBar()->showMessage(MainWindow::tr("Opened session %1").arg(QDir::toNativeSeparators(path)), 5000);
    QStringList notes;
    if (!dropped.isEmpty()) {
        const QString file = QFileInfo(path).fileName(), what = dropped.join(QStringLiteral("; "));
        if (dropped.size() == 1)
            notes << MainWindow::tr(
                         "%1: 1 plan of the session does not fit its scenario and was left out: %2")
                         .arg(file, what);
        else
            notes << MainWindow::tr(
                         "%1: %3 plans of the session do not fit its scenario and were left out: %2")
                         .arg(file, what, QString::number(dropped.size()));
    }
    if (!servingNote.isEmpty()) notes << servingNote;
    if (!notes.isEmpty()) w.showInfo(notes.join(QStringLiteral(" ")));
    return true;
}

} // namespace sp::app
