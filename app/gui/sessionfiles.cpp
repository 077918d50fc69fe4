#include "sessionfiles.h"

#include "mainwindow.h"
#include "session.h"
#include "views/elitemodel.h"
#include "views/format.h"
#include "views/imageexport.h"
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
            s.runs.push_back({n, r.elite, r.curve, r.evaluations, r.seconds, r.stopped, r.message});
        }
    }
    if (w.m_opened) {
        s.openedPlan = w.m_opened->plan;
        s.openedLabel = w.m_openedLabel;
        s.hasResults = s.hasResults || w.m_ctx;
        if (!w.m_hasResults && w.m_ctx) s.resultsScenario = w.m_ctx->scenario();
    }
    if (w.m_current && w.m_ctx && w.m_current != w.m_ctx->megatron()) s.selectedPlan = w.m_current->plan;
    QString error;
    if (!views::saveFile(path, s.toJson(), &error)) {
        w.showError(error);
        return false;
    }
    w.m_sessionPath = path;
    w.m_unsaved = false;
    w.addRecent(path);
    w.updateTitle();
    w.statusBar()->showMessage(MainWindow::tr("Saved session %1").arg(QDir::toNativeSeparators(path)), 5000);
    return true;
}

bool SessionFiles::open(MainWindow& w, const QString& path) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) {
        w.showError(MainWindow::tr("%1: cannot read: %2").arg(path, f.errorString()));
        return false;
    }
    QString error;
    auto s = Session::fromJson(f.readAll(), path, &error);
    if (!s) {
        w.showError(error);
        return false;
    }
    if (!w.confirmDiscard(MainWindow::tr("open another session"))) return false;
    w.setScenario(s->hasResults ? s->resultsScenario : s->scenario, s->scenarioPath);
    if (!s->searchers.isEmpty()) w.m_runPanel->setSelectedSearchers(s->searchers);
    w.m_runPanel->setBudget(s->budget);
    w.m_runPanel->setSeed(s->seed);
    if (s->hasResults) {
        for (SessionRun& run : s->runs) {
            RunState r;
            r.elite = std::move(run.elite);
            for (Candidate& c : r.elite) c.metrics = w.m_ctx->costModel().evaluate(c.plan);
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
    if (!(s->scenario == w.m_ctx->scenario())) {
        w.m_editor->setScenario(s->scenario);
        w.scenarioEdited(); // shows the stale banner (results) or follows the edits (none)
    }
    w.refreshComparison();
    w.m_undo->reset(w.m_editor->scenario());
    w.m_sessionPath = path;
    w.m_unsaved = false;
    w.addRecent(path);
    w.updateTitle();
    w.statusBar()->showMessage(MainWindow::tr("Opened session %1").arg(QDir::toNativeSeparators(path)), 5000);
    return true;
}

} // namespace sp::app
