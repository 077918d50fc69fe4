// The main window's run wiring: starting and stopping a batch, the searchers' reports into the chart, the
// elite table and the run panel, and the end of the batch.
#include "mainwindow_p.h"
#include "servingrunner.h"

#include "views/calibrationview.h"

#include <QEventLoop>
#include <QTimer>

namespace sp::app {

// ---------------------------------------------------------------------------------------------------------------
// Search

bool MainWindow::isSearching() const {
    return m_controller->isRunning();
}

void MainWindow::startSearch() {
    if (!m_editor->isValid()) {
        showError(tr("Fix the scenario first: %1").arg(m_editor->errors().join(QStringLiteral("; "))),
                  Cause::InvalidScenario);
        return;
    }
    const QStringList names = m_runPanel->selectedSearchers();
    if (names.isEmpty()) {
        showError(tr("Check at least one searcher in the Search panel."));
        return;
    }
    const Scenario s = m_editor->scenario();
    if (!m_ctx || !(m_ctx->scenario() == s)) {
        m_ctx = std::make_shared<SearchContext>(s);
        if (m_opened && m_ctx->costModel().checkPlan(m_opened->plan))
            m_opened = nullptr;
        else if (m_opened)
            m_opened = views::makePlanRecord(m_ctx->costModel(), m_opened->plan, m_opened->label, "file");
    }
    if (m_ctx->space().empty()) {
        showError(tr("No valid plan to search: %1").arg(qs(m_ctx->space().emptyReason())), Cause::EmptySpace);
        return;
    }
    // A rerun starts where each searcher's last run ended: its best plans, mapped into the space as it is
    // now (those an edit made invalid drop out), are its starts, as a Pareto sweep hands each target the
    // last one's; rl also carries its policy, on the same problem only (same model, cluster and workload:
    // SearchController::keepLearnedFor). Clear Results starts afresh.
    const QStringList forgotten = m_controller->keepLearnedFor(s);
    QHash<QString, std::vector<std::vector<int>>> starts;
    for (const QString& n : names)
        if (m_runs.contains(n))
            for (const Candidate& c : m_runs.at(n).elite) {
                if (starts[n].size() >= size_t(kRerunStarts)) break;
                if (auto a = m_ctx->space().fromPlan(c.plan)) starts[n].push_back(std::move(*a));
            }
    startAfresh(s);
    const views::PlanRecordPtr& meg = m_ctx->megatron();
    const SpaceSize size = m_ctx->space().size();
    for (const QString& n : names) {
        RunState r;
        if (n == QLatin1String("megatron"))
            r.target = 1;
        else if (n == QLatin1String("exhaustive"))
            r.target =
                size.exact && size.count <= ExhaustiveSearcher::kDefaultLimit ? int64_t(size.count) : 0;
        else
            r.target = m_runPanel->budget();
        m_runs.add(n, r);
        m_runPanel->setSearcherStatus(n, 0, 0, tr("starting"));
    }
    m_hasResults = true;
    m_runPanel->setRunning(true);
    m_startAction->setEnabled(false);
    showPlan(m_opened ? m_opened : meg);
    m_runClock.start();
    SearchController::Request req;
    req.searchers = names;
    req.budget = m_runPanel->budget();
    req.seed = m_runPanel->seed();
    req.threads = m_options.threadsPerRun;
    // Before start(): a searcher that ends at once (a refused exhaustive search) may finish the batch
    // inside it (QFuture::then on a finished future runs at once), and its message must stay.
    QStringList said;
    for (const QString& n : names) {
        QStringList from;
        if (m_controller->hasLearned(n)) from << tr("policy");
        if (const size_t k = starts.value(n).size()) from << (k == 1 ? tr("1 plan") : tr("%1 plans").arg(k));
        said << (from.isEmpty() ? n : tr("%1 (from its last run's %2)").arg(n, from.join(tr(" and "))));
    }
    req.starts = std::move(starts);
    QString status = tr("Searching with %1...").arg(said.join(QStringLiteral(", ")));
    if (!forgotten.isEmpty())
        status += tr(" %1 starts from the shipped prior: its last policy was learned on another model, "
                     "cluster or workload.")
                      .arg(forgotten.join(tr(", ")));
    statusBar()->showMessage(status);
    m_controller->start(m_ctx, req);
    updateStopAction(); // after start(): a batch that ended inside it has nothing to stop
    updateTitle();
}

void MainWindow::stopSearch() {
    if (!isSearching()) return;
    m_controller->stop();
    statusBar()->showMessage(tr("Stopping..."));
}

void MainWindow::stopRunning() {
    QStringList what;
    if (isSearching()) {
        m_controller->stop();
        what << tr("the search");
    }
    if (m_paretoRunner->isRunning() || m_overlayRunner->isRunning()) {
        m_paretoRunner->stop();
        m_overlayRunner->stop();
        what << tr("the Pareto sweep");
    }
    if (m_servingRunner->isRunning()) {
        m_servingRunner->stop();
        what << tr("the serving run");
    }
    if (m_calibration && m_calibration->isFitting()) {
        m_calibration->stopFit();
        what << tr("the fit");
    }
    // A search replaces the words with its result; the other runs show theirs in their tabs.
    if (!what.isEmpty())
        statusBar()->showMessage(tr("Stopping %1...").arg(what.join(tr(", "))), isSearching() ? 0 : 5000);
}

void MainWindow::updateStopAction() {
    if (!m_stopAction) return; // the tabs are built before the actions
    m_stopAction->setEnabled(isSearching() || m_paretoRunner->isRunning() || m_overlayRunner->isRunning() ||
                             m_servingRunner->isRunning() || (m_calibration && m_calibration->isFitting()));
}

void MainWindow::stopSearchAndWait() {
    if (!isSearching()) return;
    QEventLoop loop;
    connect(this, &MainWindow::searchFinished, &loop, &QEventLoop::quit);
    stopSearch();
    // The runs end within about 100 ms of a stop; their results reach this thread through its event loop.
    // The timer only guards against a run that never ends: the save then holds what has arrived.
    QTimer::singleShot(10000, &loop, &QEventLoop::quit);
    if (isSearching()) loop.exec(QEventLoop::ExcludeUserInputEvents);
}

void MainWindow::onProgress(quint64 batch, SearchUpdatePtr u) {
    if (batch != m_controller->currentBatch() || !m_runs.contains(u->searcher)) return;
    RunState& r = m_runs[u->searcher];
    r.evaluations = u->evaluations;
    r.seconds = u->seconds;
    r.best = u->bestThroughput;
    r.elite = u->elite;
    for (const auto& [e, b] : u->curveDelta) r.curve.append(QPointF(double(e), b));
    m_chart->addPoints(u->searcher, u->curveDelta);
    m_chart->setProgress(u->searcher, u->evaluations);
    // A learning searcher's iterations: mean reward and elite mean on the left axis (log tokens/s), the
    // policy's entropy and its sampling temperature on the right.
    for (const LearningPoint& lp : u->learningDelta)
        appendLearningCurve(int(lp.iteration),
                            {{tr("mean reward (log tok/s)"), lp.meanReward},
                             {tr("elite mean (log tok/s)"), lp.eliteMean > 0 ? std::log(lp.eliteMean) : 0.0},
                             {QStringLiteral("entropy"), lp.entropy},
                             {QStringLiteral("temperature"), lp.temperature}});
    if (!m_refreshTimer.isActive()) m_refreshTimer.start();
}

void MainWindow::onRunFinished(quint64 batch, const QString& searcher, SearchResultPtr res) {
    if (batch != m_controller->currentBatch() || !m_runs.contains(searcher)) return;
    RunState& r = m_runs[searcher];
    r.finished = true;
    r.stopped = res->stopped;
    r.refused = res->refused;
    r.elite = res->elite;
    r.evaluations = res->evaluations;
    r.seconds = res->seconds;
    r.best = res->feasible() ? res->best.metrics.throughput : 0;
    r.message = qs(res->message);
    r.curve.clear();
    for (const auto& [e, b] : res->curve) r.curve.append(QPointF(double(e), b));
    if (res->refused) r.target = 0;
    m_chart->setCurve(searcher, r.curve, r.evaluations);
    // The searchers' messages name themselves ("exhaustive: the space has ..."), as the CLI prints them; the
    // banner names the searcher in bold already.
    QString said = r.message;
    if (said.startsWith(searcher + QStringLiteral(": "))) said.remove(0, searcher.size() + 2);
    if (res->refused)
        m_banner->showMessage(views::MessageBanner::Kind::Warning,
                              tr("<b>%1</b> did not run: %2").arg(searcher, said.toHtmlEscaped()));
    else if (!res->message.empty())
        m_banner->showMessage(views::MessageBanner::Kind::Info,
                              tr("<b>%1</b>: %2").arg(searcher, said.toHtmlEscaped()));
    if (!m_refreshTimer.isActive()) m_refreshTimer.start();
}

void MainWindow::onRunFailed(quint64 batch, const QString& searcher, const QString& message) {
    if (batch != m_controller->currentBatch()) return;
    if (m_runs.contains(searcher)) {
        m_runs[searcher].finished = true;
        m_runs[searcher].target = m_runs[searcher].evaluations;
    }
    showError(tr("%1 failed: %2").arg(searcher, message));
}

void MainWindow::onBatchFinished(quint64 batch, bool stopped) {
    if (batch != m_controller->currentBatch()) return;
    m_runPanel->setRunning(false);
    m_startAction->setEnabled(true);
    updateStopAction();
    refreshElite();
    if (m_runs.allRefused()) {
        // Nothing ran: no results to keep, save or call stale; the banner says why.
        QStringList why;
        for (const QString& n : m_runs.order()) why << tr("%1 refused: %2").arg(n, m_runs.at(n).message);
        const QString text = tr("Not run. %1").arg(why.join(QStringLiteral("; ")));
        m_hasResults = false;
        m_unsaved = false;
        m_runPanel->setFinished(text);
        statusBar()->showMessage(text, 15000);
        updateTitle();
        emit searchFinished();
        return;
    }
    const auto best = m_runs.best();
    QString text;
    if (best) {
        const QStringList who = m_runs.reaching(best->metrics.throughput);
        const double meg =
            m_ctx->megatron()->metrics().feasible ? m_ctx->megatron()->metrics().throughput : 0;
        text = tr("Best %1 (%2)")
                   .arg(views::formatRate(best->metrics.throughput), who.join(QStringLiteral(", ")));
        if (meg > 0) text += tr(", %1x Megatron").arg(best->metrics.throughput / meg, 0, 'f', 3);
        text += tr(", in %1").arg(views::formatDuration(m_runClock.elapsed() / 1000.0));
    } else {
        text = tr("No feasible plan found");
    }
    if (stopped) {
        // The bar shows how far the searchers got of the evaluations they were to make, counted as while
        // they ran (a run that ended by itself before the stop counts what it made, not its budget: "of
        // 1,400,001" once followed "of 1,200,222").
        const BatchProgress p = m_runs.progress(1.0);
        text = tr("Stopped. %1").arg(text);
        m_runPanel->setStopped(p.done, p.total, text);
    } else {
        m_runPanel->setFinished(text);
    }
    statusBar()->showMessage(text, 15000);
    m_unsaved = true;
    if (!m_userSelected && m_eliteModel->rowCount() > 0) {
        const QModelIndex top = m_proxy->index(0, 0);
        m_eliteView->sortByColumn(views::EliteModel::Rank, Qt::AscendingOrder);
        selectEliteRow(m_proxy->mapToSource(top).row());
        m_userSelected = false;
    }
    refreshComparison();
    updateTitle();
    emit searchFinished();
}

void MainWindow::refreshElite() {
    const bool first = m_eliteModel->rowCount() == 0;
    // When the selected row drops out of the elite, the selection moves to a neighbour; the views keep the
    // plan the user chose instead of rebuilding for one nobody picked (at every 40 ms refresh).
    m_refreshingElite = true;
    m_eliteModel->setEntries(views::mergeElites(m_runs.elites(), kEliteRows));
    m_refreshingElite = false;
    if (first && m_eliteModel->rowCount() > 0) {
        m_eliteView->resizeColumnsToContents();
        for (int c = 0; c < views::EliteModel::ColumnCount - 1; ++c)
            m_eliteView->setColumnWidth(c, m_eliteView->columnWidth(c) + 6);
        // The sharding summary, beside the degrees, leads with what sets a row apart; its full text is in
        // the tooltip.
        m_eliteView->setColumnWidth(views::EliteModel::Sharding, 200);
    }
    m_eliteCaption->setText(
        tr("<b>Elite plans</b> &nbsp;<span style='color:#6b7280'>%n distinct plan(s), best first; "
           "select one to show it in every view</span>",
           "", m_eliteModel->rowCount()));
    refreshProgress();
}

void MainWindow::refreshProgress() {
    for (const QString& n : m_runs.order()) {
        const RunState& r = m_runs.at(n);
        m_runPanel->setSearcherStatus(n, r.evaluations, r.best, r.refused ? tr("refused") : QString());
    }
    if (!isSearching()) return;
    const BatchProgress p = m_runs.progress(m_runClock.elapsed() / 1000.0);
    m_runPanel->setProgress(p.done, p.total, p.rate, p.left);
}

void MainWindow::startAfresh(const Scenario& s) {
    clearResults();
    m_banner->hide();
    m_errorCause = Cause::None;
    m_staleBanner->hide();
    m_eliteModel->setModel(s.model);
    const views::PlanRecordPtr& meg = m_ctx->megatron();
    m_chart->setReference(meg->metrics().feasible ? meg->metrics().throughput : 0, m_ctx->roofline());
    m_chart->setBudgetHint(double(m_runPanel->budget()));
}

} // namespace sp::app
