// The main window's Serving tab: the request-level simulation (core/sim) of the plan shown, on the scenario
// as edited, run by a ServingRunner and drawn in the ServingView: latency CDFs with the SLO lines, KV
// occupancy and queue length over time, and the capacity answer (the highest rate under the SLOs). What the
// tab shows is a result a session keeps (session_serving.h): a finished run is unsaved work until saved.
#include "mainwindow_p.h"

#include "servingrunner.h"

#include "core/sim/trace.h"
#include "views/servingview.h"

namespace sp::app {

void MainWindow::buildServingTab() {
    m_serving = new views::ServingView;
    // Scrolled, as the other pages, so that its controls and charts do not raise the window's minimum size.
    const int tab = m_tabs->addTab(scrolledPage(m_serving), tr("Serving"));
    m_tabs->setTabToolTip(tab,
                          tr("The plan shown serving requests, step by step: latency percentiles against "
                             "the SLOs, KV pool and queue over time, capacity"));
    m_servingRunner = new ServingRunner(this);
    // The workload of the job running: its result is drawn against the SLOs it was simulated under.
    auto workload = std::make_shared<Workload>();

    connect(m_serving, &views::ServingView::runRequested, this, [this, workload] {
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
        m_serving->setRunning(true);
        m_serving->setStatus(tr("Simulating %1 requests...").arg(views::formatInteger(double(o.requests))));
        m_servingRunner->simulate(s->first, s->second, o);
        updateStopAction();
    });
    connect(m_serving, &views::ServingView::capacityRequested, this, [this, workload] {
        const auto s = servingScenario();
        if (!s) return;
        RateSearchOptions o;
        o.sim.requests = m_serving->requests();
        *workload = s->first.workload;
        m_serving->setRunning(true);
        m_serving->setStatus(tr("Bisecting the highest rate under the SLOs..."));
        m_servingRunner->capacity(s->first, s->second, o);
        updateStopAction();
    });
    connect(m_serving, &views::ServingView::stopRequested, m_servingRunner, &ServingRunner::stop);
    connect(m_serving, &views::ServingView::traceRequested, this, [this] {
        const QString path =
            m_dialogs->openFile(tr("Trace"), tr("Traces (*.csv *.jsonl *.json);;All files (*)"));
        if (!path.isEmpty()) m_serving->setTracePath(path);
    });
    connect(m_servingRunner, &ServingRunner::progress, this,
            [this](quint64, qint64 completed, qint64 total, int simulation) {
                m_serving->setProgress(completed, total);
                const QString done = tr("%1 of %2 requests completed")
                                         .arg(views::formatInteger(double(completed)),
                                              total > 0 ? views::formatInteger(double(total)) : tr("?"));
                m_serving->setStatus(simulation > 0 ? tr("Simulation %1: %2").arg(simulation + 1).arg(done)
                                                    : done);
            });
    const auto servingDone = [this] {
        m_serving->setRunning(false);
        updateStopAction();
        m_servingUnsaved = true;
        updateTitle();
    };
    connect(m_servingRunner, &ServingRunner::simulated, this,
            [this, workload, servingDone](quint64, SimResultPtr r) {
                m_serving->setResult(r, *workload);
                servingDone();
            });
    connect(m_servingRunner, &ServingRunner::capacityFound, this,
            [this, workload, servingDone](quint64, MaxRatePtr m) {
                m_serving->setCapacity(*m, *workload);
                servingDone();
            });
    connect(m_servingRunner, &ServingRunner::failed, this, [this](quint64, const QString& message) {
        m_serving->setRunning(false);
        updateStopAction();
        m_serving->setStatus(QString());
        showError(tr("Serving: %1").arg(message));
    });
}

std::optional<std::pair<Scenario, Plan>> MainWindow::servingScenario() {
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
    // The plan shown, when it is of this scenario; the Megatron plan otherwise.
    if (m_current && m_ctx && m_ctx->scenario() == s) return std::pair{std::move(s), m_current->plan};
    const CostModel model(s);
    Plan p = model.megatronPlan();
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

} // namespace sp::app
