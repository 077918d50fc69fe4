// The main window's Serving tab: the request-level simulation (core/sim) of the plan the user chooses (the
// best found, the selected, or Megatron's; named in the tab), on the scenario as edited, run by a
// ServingRunner and drawn in the ServingView: latency CDFs with the SLO lines, KV occupancy and queue length
// over time, the capacity answer (the highest rate under the SLOs and what it costs) and the GPU sizing for a
// rate. What the tab shows is a result a session keeps (session_serving.h): a finished run, an answer or
// another plan chosen is unsaved work until saved.
#include "mainwindow_p.h"

#include "servingrunner.h"
#include "session_serving.h"

#include "core/io/gpudb.h"
#include "core/sim/trace.h"
#include "views/elitemodel.h"
#include "views/servingsizing.h"
#include "views/servingview.h"

namespace sp::app {

void MainWindow::buildServingTab() {
    m_serving = new views::ServingView;
    // Scrolled, as the other pages, so that its controls and charts do not raise the window's minimum size.
    const int tab = m_tabs->addTab(scrolledPage(m_serving), tr("Serving"));
    m_tabs->setTabToolTip(
        tab, tr("A plan serving requests, step by step: latency percentiles against the SLOs, KV "
                "pool and queue over time, capacity and what it costs, GPUs for a rate"));
    m_servingRunner = new ServingRunner(this);
    m_servingPlanTimer = new QTimer(this);
    m_servingPlanTimer->setSingleShot(true);
    m_servingPlanTimer->setInterval(250);
    connect(m_servingPlanTimer, &QTimer::timeout, this, &MainWindow::updateServingPlan);
    // The workload and plan of the job running: its result is drawn against the SLOs it was simulated under,
    // and named.
    auto workload = std::make_shared<Workload>();
    auto planName = std::make_shared<QString>();
    auto requests = std::make_shared<qint64>(0);

    connect(m_serving, &views::ServingView::runRequested, this, [this, workload, planName] {
        const auto s = servingScenario();
        if (!s) return;
        SimOptions o;
        o.requests = m_serving->requests();
        if (m_serving->useTrace()) {
            const QString path = m_serving->tracePath();
            if (path.isEmpty()) {
                showError(tr("Serving: choose a trace file, or simulate at a rate"));
                return;
            }
            auto t = loadTrace(path.toStdString());
            if (!t) {
                showError(tr("Serving: %1").arg(QString::fromStdString(t.error().str())));
                return;
            }
            o.trace = std::move(t).value();
        } else {
            o.rate = m_serving->rate();
        }
        *workload = s->first.workload;
        *planName = s->second.label;
        m_serving->setRunning(true);
        m_serving->showSizing(false);
        m_serving->setStatus(tr("Simulating %1 requests of %2...")
                                 .arg(views::formatInteger(double(o.requests)), s->second.name));
        m_servingRunner->simulate(s->first, s->second.plan, o);
        updateStopAction();
    });
    connect(m_serving, &views::ServingView::capacityRequested, this, [this, workload, requests] {
        const auto s = servingScenario();
        if (!s) return;
        // On the scenario's own cluster, the plan served as it is (maxRatePerGpu with a fixed plan).
        MaxRateOptions o;
        o.plan = s->second.plan;
        o.planName = s->second.label.toStdString();
        o.search.sim.requests = m_serving->requests();
        *workload = s->first.workload;
        *requests = m_serving->requests();
        m_serving->setRunning(true);
        m_serving->showSizing(false);
        m_serving->setStatus(
            tr("Bisecting the highest rate %1 sustains under the SLOs...").arg(s->second.name));
        m_servingRunner->capacity(s->first, o);
        updateStopAction();
    });
    connect(m_serving, &views::ServingView::sizeRequested, this, [this] {
        const auto s = servingScenario();
        if (!s) return;
        const views::ServingSizingView* z = m_serving->sizing();
        const CapacityOptions o = views::sizingOptions(z->rate(), z->gpus(), m_serving->requests());
        if (o.gpus.empty()) return showError(tr("Serving: check the GPU types to size"));
        m_serving->setRunning(true);
        m_serving->setStatus(tr("Finding the fewest GPUs for %1 requests/s...").arg(o.rate, 0, 'g', 4));
        m_servingRunner->sizeGpus(s->first, o);
        updateStopAction();
    });
    connect(m_serving, &views::ServingView::stopRequested, m_servingRunner, &ServingRunner::stop);
    connect(m_serving, &views::ServingView::traceRequested, this, [this] {
        const QString path =
            m_dialogs->openFile(tr("Trace"), tr("Traces (*.csv *.jsonl *.json);;All files (*)"));
        if (!path.isEmpty()) m_serving->setTracePath(path);
    });
    connect(m_serving, &views::ServingView::servedPlanChanged, this, &MainWindow::updateServingPlan);
    connect(m_serving, &views::ServingView::servedPlanChosen, this, [this] {
        m_servingUnsaved = true;
        updateTitle();
    });
    // What names the plan served: a selection, an edit, the search's elite as it grows (throttled).
    connect(this, &MainWindow::currentPlanChanged, this, &MainWindow::updateServingPlan);
    connect(m_editor, &views::ScenarioEditor::edited, m_servingPlanTimer, qOverload<>(&QTimer::start));
    const auto soon = [this] {
        if (!m_servingPlanTimer->isActive()) m_servingPlanTimer->start();
    };
    connect(m_eliteModel, &QAbstractItemModel::modelReset, this, soon);
    connect(m_eliteModel, &QAbstractItemModel::rowsInserted, this, soon);
    connect(m_eliteModel, &QAbstractItemModel::rowsRemoved, this, soon);
    connect(m_eliteModel, &QAbstractItemModel::dataChanged, this, soon);
    connect(m_eliteModel, &QAbstractItemModel::layoutChanged, this, soon);

    auto step = std::make_shared<QString>();
    connect(m_servingRunner, &ServingRunner::stepChanged, this,
            [step](quint64, const QString& text) { *step = text; });
    connect(m_servingRunner, &ServingRunner::progress, this,
            [this, step](quint64, qint64 completed, qint64 total, int simulation) {
                m_serving->setProgress(completed, total);
                QString done = tr("%1 of %2 requests completed")
                                   .arg(views::formatInteger(double(completed)),
                                        total > 0 ? views::formatInteger(double(total)) : tr("?"));
                if (simulation > 0) done = tr("Simulation %1: %2").arg(simulation + 1).arg(done);
                m_serving->setStatus(step->isEmpty() ? done : tr("%1, %2").arg(*step, done));
            });
    const auto servingDone = [this, step] {
        step->clear();
        m_serving->setRunning(false);
        updateStopAction();
        m_servingUnsaved = true;
        updateTitle();
    };
    connect(m_servingRunner, &ServingRunner::simulated, this,
            [this, workload, planName, servingDone](quint64, SimResultPtr r) {
                m_serving->setResult(r, *workload, *planName);
                servingDone();
            });
    connect(m_servingRunner, &ServingRunner::capacityFound, this,
            [this, workload, requests, servingDone](quint64, MaxRateRowPtr row) {
                m_serving->setCapacity(*row, *requests, *workload);
                if (row->stopped) m_serving->setStatus(tr("Capacity stopped"));
                servingDone();
            });
    connect(m_servingRunner, &ServingRunner::sized, this, [this, servingDone](quint64, GpuSizingPtr z) {
        m_serving->sizing()->setResult(*z);
        m_serving->setStatus(tr("GPUs for %1 requests/s: %2 of %3 GPU types%4")
                                 .arg(z->rate, 0, 'g', 4)
                                 .arg(z->rows.size())
                                 .arg(z->gpus.size())
                                 .arg(z->stopped ? tr(" (stopped)") : QString()));
        servingDone();
    });
    connect(m_servingRunner, &ServingRunner::failed, this, [this, step](quint64, const QString& message) {
        step->clear();
        m_serving->setRunning(false);
        updateStopAction();
        m_serving->setStatus(QString());
        showError(tr("Serving: %1").arg(message));
    });
}

MainWindow::ServingPlan MainWindow::servingPlan(const Scenario& s) const {
    const bool moe = s.model.moe.present();
    // The results are of this scenario: not once it is edited (their plans may not even fit it).
    const bool ours = m_ctx && m_ctx->scenario() == s;
    const auto named = [moe](const Plan& p, const Metrics& m, const QString& name, const QString& note) {
        const QString label = tr("%1: %2").arg(name, views::planShapeText(p, moe));
        QString shown = label;
        shown += m.feasible ? tr(" — %1 at the steady state").arg(views::formatRate(m.throughput))
                            : tr(" — infeasible: %1").arg(QString::fromStdString(m.violation));
        if (!note.isEmpty()) shown += tr(" (%1)").arg(note);
        return ServingPlan{p, name, label, shown};
    };
    const auto megatron = [&](const QString& note) {
        if (ours) return named(m_ctx->megatron()->plan, m_ctx->megatron()->metrics(), tr("Megatron"), note);
        const CostModel model(s);
        const Plan p = model.megatronPlan();
        return named(p, model.evaluate(p), tr("Megatron"), note);
    };
    const QString stale = tr("the search's plans are of the scenario before its edits");
    switch (m_serving->servedPlan()) {
    case views::ServedPlan::Best: {
        if (!ours) return megatron(m_hasResults ? stale : tr("no plan found yet"));
        // The best feasible plan of the merged elite (the table's rank 1), as it stands during a search.
        const views::EliteEntry* best = nullptr;
        for (const views::EliteEntry& e : m_eliteModel->entries())
            if (e.candidate->metrics.feasible &&
                (!best || planScore(e.candidate->metrics) > planScore(best->candidate->metrics)))
                best = &e;
        if (!best)
            return megatron(m_eliteModel->rowCount() > 0 ? tr("no feasible plan found yet")
                                                         : tr("no plan found yet"));
        return named(best->candidate->plan, best->candidate->metrics,
                     tr("Best found (%1)").arg(best->searcher), {});
    }
    case views::ServedPlan::Selected:
        if (!ours) return megatron(tr("the plan shown is of the scenario before its edits"));
        if (!m_current || m_current == m_ctx->megatron()) return megatron(tr("no plan selected"));
        return named(m_current->plan, m_current->metrics(), QString::fromStdString(m_current->label), {});
    case views::ServedPlan::Megatron:
        break;
    }
    return megatron({});
}

void MainWindow::updateServingPlan() {
    if (!m_serving || !m_editor || !m_editor->isValid()) return;
    const Scenario s = m_editor->scenario();
    if (s.workload.phase != Phase::Serving) {
        m_serving->setPlanName(tr("The workload's phase is not serving: the simulation serves requests"));
        return;
    }
    m_serving->setPlanName(servingPlan(s).shown);
    // The scenario's GPU type, to size against others, until the user picks.
    if (const GpuSpec* g = findGpuByName(s.cluster.gpu.name)) m_serving->sizing()->suggestGpu(g->id);
}

std::optional<std::pair<Scenario, MainWindow::ServingPlan>> MainWindow::servingScenario() {
    if (!m_editor->isValid()) {
        showError(tr("Fix the scenario first: %1").arg(m_editor->errors().join(QStringLiteral("; "))),
                  Cause::InvalidScenario);
        return std::nullopt;
    }
    Scenario s = m_editor->scenario();
    if (s.workload.phase != Phase::Serving) {
        showError(tr("Serving: the simulation serves requests: the workload's phase must be serving"));
        return std::nullopt;
    }
    ServingPlan p = servingPlan(s);
    m_serving->setPlanName(p.shown);
    return std::pair{std::move(s), std::move(p)};
}

void MainWindow::resetServing() {
    if (!m_servingRunner) return;
    m_servingRunner->cancel();
    m_serving->setRunning(false);
    m_serving->clear();
    m_servingUnsaved = false;
    updateStopAction();
}

SessionServing MainWindow::servingSession() const {
    // Its inputs always, and what it shows (a running job's result is not in yet).
    const views::ServingView* v = m_serving;
    const views::ServingSizingView* z = v->sizing();
    SessionServing s;
    s.useTrace = v->useTrace();
    s.rate = v->rate();
    s.requests = v->requests();
    s.tracePath = v->tracePath();
    s.served = v->servedPlan();
    s.result = v->shownResult();
    s.resultWorkload = v->resultWorkload();
    s.resultPlan = v->resultPlanName();
    s.capacity = v->capacityAnswer();
    s.capacityWorkload = v->capacityWorkload();
    s.sizingRate = z->rate();
    s.sizingGpus = z->gpus();
    s.sizing = z->result();
    s.sizingShown = v->showsSizing();
    return s;
}

void MainWindow::restoreServing(const SessionServing& saved) {
    views::ServingView* v = m_serving;
    v->setServedPlan(saved.served);
    v->setTracePath(saved.tracePath);
    v->setUseTrace(saved.useTrace);
    v->setRequests(saved.requests);
    // In the order the tab drew them: the run, then the answer's words (its run, when it was the last, is
    // the run saved).
    if (saved.result) v->setResult(saved.result, saved.resultWorkload, saved.resultPlan);
    if (saved.capacity) v->setCapacity(*saved.capacity, saved.capacityWorkload);
    v->setRate(saved.rate);
    views::ServingSizingView* z = v->sizing();
    z->setRate(saved.sizingRate);
    z->setGpus(saved.sizingGpus);
    if (saved.sizing) z->setResult(*saved.sizing);
    v->showSizing(saved.sizingShown);
    updateServingPlan();
}

} // namespace sp::app
