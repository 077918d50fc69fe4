// The main window's Serving tab: the request-level simulation (core/sim) of the plan the user chooses (the
// best found, the selected, Megatron's, or the Pareto tab's disaggregated split; named in the tab), on the
// scenario as edited, run by a ServingRunner and drawn in the ServingView: latency CDFs with the SLO lines,
// KV occupancy and queue length over time, the capacity answer (the highest rate under the SLOs and what it
// costs), a sweep over rates and the GPU sizing for a rate; a pinned run and sweep drawn under the next ones.
// What the tab shows is a result a session keeps (session_serving.h): a finished run, answer or sweep, a pin,
// or another plan chosen is unsaved work until saved.
#include "mainwindow_p.h"

#include "servingrunner.h"
#include "session_serving.h"

#include "core/io/gpudb.h"
#include "core/sim/trace.h"
#include "views/elitemodel.h"
#include "views/servingsizing.h"
#include "views/servingsweep.h"
#include "views/servingview.h"

#include <QFileInfo>

namespace sp::app {

namespace {
/// Why Capacity is off for a disaggregated plan: maxRatePerGpu bisects an aggregated plan's rate.
QString noSplitCapacity() {
    return MainWindow::tr("Capacity bisects an aggregated plan's rate (maxRatePerGpu); a disaggregated plan "
                          "has no bisection yet: its rate sweep shows the highest rate that meets the SLOs");
}
} // namespace

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
    // The workload and name of the job running: its result is drawn against the SLOs it was simulated under,
    // and named by its plan, load and GPUs (a pin compares them).
    auto workload = std::make_shared<Workload>();
    auto tag = std::make_shared<views::RunTag>();
    auto requests = std::make_shared<qint64>(0);
    // The sweep running: its rates, workload and name; its points come in as they are done.
    auto sweeping = std::make_shared<std::optional<views::ShownSweep>>();

    connect(m_serving, &views::ServingView::runRequested, this, [this, workload, tag, sweeping] {
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
        *tag = views::RunTag{s->second.label,
                             m_serving->useTrace()
                                 ? tr("trace %1").arg(QFileInfo(m_serving->tracePath()).fileName())
                                 : views::rateText(o.rate),
                             views::gpusText(s->first.cluster)};
        sweeping->reset();
        m_serving->setRunning(true);
        m_serving->showSizing(false);
        m_serving->setStatus(tr("Simulating %1 requests of %2...")
                                 .arg(views::formatInteger(double(o.requests)), s->second.name));
        if (s->second.split)
            m_servingRunner->simulate(s->first, *s->second.split, disaggregatedOptions({}).model, o);
        else
            m_servingRunner->simulate(s->first, s->second.plan, o);
        updateStopAction();
    });
    connect(m_serving, &views::ServingView::capacityRequested, this,
            [this, workload, tag, requests, sweeping] {
                const auto s = servingScenario();
                if (!s) return;
                if (s->second.split) return showError(tr("Serving: %1").arg(noSplitCapacity()));
                // On the scenario's own cluster, the plan served as it is (maxRatePerGpu with a fixed plan).
                MaxRateOptions o;
                o.plan = s->second.plan;
                o.planName = s->second.label.toStdString();
                o.search.sim.requests = m_serving->requests();
                *workload = s->first.workload;
                *tag = views::RunTag{s->second.label, {}, views::gpusText(s->first.cluster)};
                *requests = m_serving->requests();
                sweeping->reset();
                m_serving->setRunning(true);
                m_serving->showSizing(false);
                m_serving->setStatus(
                    tr("Bisecting the highest rate %1 sustains under the SLOs...").arg(s->second.name));
                m_servingRunner->capacity(s->first, o);
                updateStopAction();
            });
    connect(m_serving, &views::ServingView::sweepRequested, this, [this, sweeping] {
        const auto s = servingScenario();
        if (!s) return;
        views::ServingSweepView* page = m_serving->sweep();
        RateSweepOptions o;
        o.rates = page->rates();
        if (o.rates.empty())
            return showError(tr("Serving: a sweep's rates go from the lower to the higher: %1 is above %2")
                                 .arg(page->from())
                                 .arg(page->to()));
        o.sim.requests = m_serving->requests();
        views::ShownSweep shown;
        shown.sweep.ok = true;
        shown.rates = o.rates;
        shown.workload = s->first.workload;
        shown.tag =
            views::RunTag{s->second.label, views::sweepLoadText(o.rates), views::gpusText(s->first.cluster)};
        *sweeping = shown;
        page->setSweep(std::move(shown));
        m_serving->setRunning(true);
        m_serving->showPage(views::ServingView::Page::Sweep);
        m_serving->setStatus(tr("Sweeping %1 over %2...").arg(s->second.name, views::sweepLoadText(o.rates)));
        if (s->second.split)
            m_servingRunner->sweep(s->first, *s->second.split, disaggregatedOptions({}).model, o);
        else
            m_servingRunner->sweep(s->first, s->second.plan, o);
        updateStopAction();
    });
    connect(m_serving, &views::ServingView::pinChanged, this, [this] {
        m_servingUnsaved = true;
        updateTitle();
    });
    connect(m_serving, &views::ServingView::sizeRequested, this, [this, sweeping] {
        const auto s = servingScenario();
        if (!s) return;
        const views::ServingSizingView* z = m_serving->sizing();
        const CapacityOptions o = views::sizingOptions(z->rate(), z->gpus(), m_serving->requests());
        if (o.gpus.empty()) return showError(tr("Serving: check the GPU types to size"));
        sweeping->reset();
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
    // The Pareto tab's split selected (or no longer).
    connect(m_pareto, &views::ParetoView::disaggregatedSelected, this, &MainWindow::updateServingPlan);
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
            [this, step, sweeping](quint64, qint64 completed, qint64 total, int simulation) {
                QString done = tr("%1 of %2 requests completed")
                                   .arg(views::formatInteger(double(completed)),
                                        total > 0 ? views::formatInteger(double(total)) : tr("?"));
                if (*sweeping) {
                    // One simulation a rate: the bar is the sweep's, the step names the rate.
                    const qint64 n = qint64((*sweeping)->rates.size());
                    const double part = total > 0 ? double(std::min(completed, total)) / double(total) : 0.0;
                    m_serving->setProgress(qint64(1000 * (std::min<qint64>(simulation, n) + part)), 1000 * n);
                } else {
                    m_serving->setProgress(completed, total);
                    if (simulation > 0) done = tr("Simulation %1: %2").arg(simulation + 1).arg(done);
                }
                m_serving->setStatus(step->isEmpty() ? done : tr("%1, %2").arg(*step, done));
            });
    const auto servingDone = [this, step, sweeping] {
        step->clear();
        sweeping->reset();
        m_serving->setRunning(false);
        updateStopAction();
        m_servingUnsaved = true;
        updateTitle();
    };
    connect(m_servingRunner, &ServingRunner::simulated, this,
            [this, workload, tag, servingDone](quint64, SimResultPtr r) {
                m_serving->setResult(r, *workload, *tag);
                servingDone();
            });
    connect(m_servingRunner, &ServingRunner::capacityFound, this,
            [this, workload, tag, requests, servingDone](quint64, MaxRateRowPtr row) {
                m_serving->setCapacity(*row, *requests, *workload, tag->gpus);
                if (row->stopped) m_serving->setStatus(tr("Capacity stopped"));
                servingDone();
            });
    connect(m_servingRunner, &ServingRunner::sweepGrew, this, [this, sweeping](quint64, RateSweepPtr sofar) {
        if (!*sweeping) return;
        views::ShownSweep shown = **sweeping;
        shown.sweep.points = sofar->points;
        m_serving->sweep()->setSweep(std::move(shown));
    });
    connect(m_servingRunner, &ServingRunner::swept, this,
            [this, sweeping, servingDone](quint64, RateSweepPtr r) {
                if (!*sweeping) return;
                views::ShownSweep shown = **sweeping;
                shown.sweep = *r;
                const size_t done = r->points.size(), n = shown.rates.size();
                m_serving->sweep()->setSweep(std::move(shown));
                m_serving->setStatus(r->stopped ? tr("Sweep stopped: %1 of %2 rates done").arg(done).arg(n)
                                                : tr("Sweep: %1 rates done").arg(done));
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
    connect(m_servingRunner, &ServingRunner::failed, this,
            [this, step, sweeping](quint64, const QString& message) {
                step->clear();
                sweeping->reset();
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
    const auto named = [moe, &s](const Plan& p, const Metrics& m, const QString& name, const QString& note) {
        const QString label = tr("%1: %2").arg(name, views::planShapeText(p, moe));
        QString shown = label;
        shown += m.feasible ? tr(" — %1 at the steady state").arg(views::formatRate(m.throughput))
                            : tr(" — infeasible: %1").arg(QString::fromStdString(m.violation));
        if (!note.isEmpty()) shown += tr(" (%1)").arg(note);
        // Requests/s at the steady state's throughput, as maxRate brackets its bisection.
        const double rate =
            m.feasible ? m.throughput / std::max<double>(1.0, double(s.workload.outputTokens)) : 0;
        return ServingPlan{p, name, label, shown, rate, std::nullopt};
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
    case views::ServedPlan::ParetoSplit: {
        const DisaggFrontierPoint* d = m_pareto->selectedDisaggregated();
        if (const QString why = servingSplitUnavailable(s); !why.isEmpty() || !d) return megatron(why);
        const DisaggPlan& split = d->split.plan;
        const DisaggMetrics& m = d->split.metrics;
        const auto pool = [moe](const QString& what, const DisaggPool& p) {
            return tr("%1 %2 %3 %4")
                .arg(what, QString::number(p.nodes), p.nodes == 1 ? tr("node") : tr("nodes"),
                     views::planShapeText(p.plan, moe));
        };
        const QString name = tr("Disaggregated");
        const QString label =
            tr("%1: %2 / %3").arg(name, pool(tr("prefill"), split.prefill), pool(tr("decode"), split.decode));
        const QString shown = tr("%1 — %2 at the steady state (the Pareto point of TPOT target %3, %4-bound)")
                                  .arg(label, views::formatRate(m.throughput),
                                       views::formatMs(d->targetTpotMs), QString::fromStdString(m.bound));
        ServingPlan p{split.decode.plan, name, label, shown, m.requestsPerS, split};
        return p;
    }
    }
    return megatron({});
}

QString MainWindow::servingSplitUnavailable(const Scenario& s) const {
    if (!m_pareto->selectedDisaggregated())
        return m_pareto->disaggregatedPoints().empty()
                   ? tr("no disaggregated point on the Pareto tab (sweep with \"Compare with disaggregated "
                        "serving\", then click a triangle)")
                   : tr("no disaggregated point selected on the Pareto tab (click a triangle)");
    if (!m_paretoScenario || !(*m_paretoScenario == s))
        return tr("the Pareto sweep is of the scenario before its edits");
    return QString();
}

void MainWindow::updateServingPlan() {
    if (!m_serving || !m_editor || !m_editor->isValid()) return;
    const Scenario s = m_editor->scenario();
    m_serving->setParetoSplitChoice(servingSplitUnavailable(s));
    if (s.workload.phase != Phase::Serving) {
        m_serving->setPlanName(tr("The workload's phase is not serving: the simulation serves requests"));
        return;
    }
    const ServingPlan p = servingPlan(s);
    m_serving->setPlanName(p.shown);
    m_serving->setCapacityUnavailable(p.split ? noSplitCapacity() : QString());
    // The sweep's range up to a fifth above the plan's analytical rate, until a capacity answer (or the user)
    // sets one.
    if (!m_serving->capacityAnswer()) m_serving->sweep()->suggestTop(1.2 * p.analyticRate);
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
    if (const DisaggFrontierPoint* d = m_pareto->selectedDisaggregated())
        s.servedSplitTpotMs = d->targetTpotMs;
    s.result = v->shownResult();
    s.resultWorkload = v->resultWorkload();
    s.resultPlan = v->resultTag().plan;
    s.resultLoad = v->resultTag().load;
    s.resultGpus = v->resultTag().gpus;
    s.capacity = v->capacityAnswer();
    s.capacityWorkload = v->capacityWorkload();
    s.sizingRate = z->rate();
    s.sizingGpus = z->gpus();
    s.sizing = z->result();
    s.sizingShown = v->page() == views::ServingView::Page::Sizing;
    s.sweepShown = v->page() == views::ServingView::Page::Sweep;
    const views::ServingSweepView* w = v->sweep();
    s.sweepFrom = w->from();
    s.sweepTo = w->to();
    s.sweepSteps = w->steps();
    s.sweepRangeSet = true;
    s.sweep = w->sweep();
    s.pin = v->pinned();
    return s;
}

QString MainWindow::restoreServing(const SessionServing& saved) {
    views::ServingView* v = m_serving;
    // The Pareto tab's split it served (the sweep is restored first), found by its TPOT target.
    QString note;
    if (saved.servedSplitTpotMs > 0) {
        const auto& points = m_pareto->disaggregatedPoints();
        const auto it = std::find_if(points.begin(), points.end(), [&](const DisaggFrontierPoint& d) {
            return d.targetTpotMs == saved.servedSplitTpotMs;
        });
        if (it != points.end())
            m_pareto->selectDisaggregated(int(it - points.begin()));
        else if (saved.served == views::ServedPlan::ParetoSplit)
            note =
                tr("The Serving tab's disaggregated plan (the Pareto point of TPOT target %1) is not in the "
                   "session's Pareto sweep: it serves Megatron's until another is selected")
                    .arg(views::formatMs(saved.servedSplitTpotMs));
    }
    v->setServedPlan(saved.served);
    v->setTracePath(saved.tracePath);
    v->setUseTrace(saved.useTrace);
    v->setRequests(saved.requests);
    // In the order the tab drew them: the run, then the answer's words (its run, when it was the last, is
    // the run saved).
    if (saved.result)
        v->setResult(saved.result, saved.resultWorkload,
                     views::RunTag{saved.resultPlan, saved.resultLoad, saved.resultGpus});
    if (saved.capacity) v->setCapacity(*saved.capacity, saved.capacityWorkload);
    v->setRate(saved.rate);
    views::ServingSweepView* w = v->sweep();
    if (saved.sweepRangeSet) w->setRange(saved.sweepFrom, saved.sweepTo, saved.sweepSteps);
    w->setSweep(saved.sweep);
    v->setPin(saved.pin);
    views::ServingSizingView* z = v->sizing();
    z->setRate(saved.sizingRate);
    z->setGpus(saved.sizingGpus);
    if (saved.sizing) z->setResult(*saved.sizing);
    v->showPage(saved.sizingShown  ? views::ServingView::Page::Sizing
                : saved.sweepShown ? views::ServingView::Page::Sweep
                                   : views::ServingView::Page::Simulation);
    updateServingPlan();
    return note;
}

} // namespace sp::app
