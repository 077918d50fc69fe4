#pragma once
// Runs the Serving tab's work (core/sim) on a worker thread and reports to the GUI thread, the way
// ParetoRunner runs sweeps: QtConcurrent::run on its own pool, a std::stop_source, a run id so the reports
// of a superseded run are dropped, progress handed over with one queued call at a time, and the result
// through QFuture::then on the GUI thread. One job at a time: a simulation, a capacity bisection
// (maxRatePerGpu), a sweep over rates (a simulation or sweep of a disaggregated plan too) (sweepRates) or a
// GPU sizing (fewestGpus); stop() ends whichever runs (the window's Stop, Esc), and a stopped sweep keeps the
// rates done.

#include "core/sim/capacity.h"
#include "core/sim/simulator.h"
#include "core/sim/sweep.h"
#include "metatypes.h"
#include "workerslot.h"

#include <QFuture>
#include <QObject>
#include <QString>

#include <stop_token>

namespace sp::app {

class ServingRunner : public QObject {
    Q_OBJECT
public:
    explicit ServingRunner(QObject* parent = nullptr);
    ~ServingRunner() override;

    /// Simulates `plan` serving the scenario's workload (stopping and superseding a running job). Returns
    /// its id.
    quint64 simulate(const Scenario& scenario, const Plan& plan, const SimOptions& options);
    /// A disaggregated plan: its prefill pool, KV transfer and decode pool, with the DisaggModel of the
    /// scenario and `model` options (those of the Pareto tab's sweep).
    quint64 simulate(const Scenario& scenario, const DisaggPlan& plan, const DisaggOptions& model,
                     const SimOptions& options);
    /// The highest rate under the workload's SLOs on the scenario's cluster, with the tokens/s sustained and
    /// what they cost (maxRatePerGpu, core/sim/capacity.h; options.plan is the plan served).
    quint64 capacity(const Scenario& scenario, const MaxRateOptions& options);
    /// The plan simulated at each of options.rates (sweepRates, core/sim/sweep.h); its points are reported
    /// as they are done (sweepGrew), and all of them at the end (swept), a stop keeping those done.
    quint64 sweep(const Scenario& scenario, const Plan& plan, const RateSweepOptions& options);
    quint64 sweep(const Scenario& scenario, const DisaggPlan& plan, const DisaggOptions& model,
                  const RateSweepOptions& options);
    /// The fewest GPUs of each type in options.gpus that sustain options.rate under the SLOs (fewestGpus),
    /// one GPU type after another; a stop keeps the rows done.
    quint64 sizeGpus(const Scenario& scenario, const CapacityOptions& options);
    /// Asks the job to stop; it finishes with what completed.
    void stop();
    /// Stops it and drops whatever it still reports (another scenario was opened).
    void cancel();
    bool isRunning() const { return m_running; }

signals:
    /// Requests completed of the current simulation's total (0: unknown); for capacity and sizing, of its
    /// current run, with the simulations done before it.
    void progress(quint64 run, qint64 completed, qint64 total, int simulation);
    /// What a sizing works on: "h200 (1 of 2)".
    void stepChanged(quint64 run, const QString& step);
    void simulated(quint64 run, sp::app::SimResultPtr result);
    void capacityFound(quint64 run, sp::app::MaxRateRowPtr answer);
    /// A sweep's points so far (throttled: one queued report at a time), then the sweep done or stopped.
    void sweepGrew(quint64 run, sp::app::RateSweepPtr sofar);
    void swept(quint64 run, sp::app::RateSweepPtr sweep);
    void sized(quint64 run, sp::app::GpuSizingPtr sizing);
    void failed(quint64 run, const QString& message);

private:
    class Relay;
    /// Runs job(relay, stop) -> std::shared_ptr<const Result> on the worker; deliver(run, result) on the GUI
    /// thread unless superseded. An exception is a failure.
    template <class Result, class Job, class Deliver> quint64 launch(Job job, Deliver deliver);
    /// A simulation (sweep) of `run(relay, stop)` -> SimResult (RateSweep), its failures reported.
    template <class Run> quint64 launchSimulation(Run run);
    template <class Run> quint64 launchSweep(const RateSweepOptions& options, Run run);
    WorkerSlot m_slot;
    bool m_running = false;
};

} // namespace sp::app
