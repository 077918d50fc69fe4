#pragma once
// Runs the serving simulation (core/sim) on a worker thread and reports to the GUI thread, the way
// ParetoRunner runs sweeps: QtConcurrent::run on its own pool, a std::stop_source, a run id so the reports
// of a superseded run are dropped, progress handed over with one queued call at a time, and the result
// through QFuture::then on the GUI thread.

#include "core/sim/capacity.h"
#include "core/sim/simulator.h"
#include "workerslot.h"

#include <QFuture>
#include <QList>
#include <QMetaType>
#include <QObject>
#include <QThreadPool>

#include <memory>
#include <stop_token>

namespace sp::app {

using SimResultPtr = std::shared_ptr<const SimResult>;
using MaxRatePtr = std::shared_ptr<const MaxRate>;

class ServingRunner : public QObject {
    Q_OBJECT
public:
    explicit ServingRunner(QObject* parent = nullptr);
    ~ServingRunner() override;

    /// Simulates `plan` serving the scenario's workload (stopping and superseding a running job). Returns
    /// its id.
    quint64 simulate(const Scenario& scenario, const Plan& plan, const SimOptions& options);
    /// The highest rate `plan` sustains under the workload's SLOs (maxRate, core/sim/capacity.h).
    quint64 capacity(const Scenario& scenario, const Plan& plan, const RateSearchOptions& options);
    /// Asks the job to stop; it finishes with what completed.
    void stop();
    /// Stops it and drops whatever it still reports (another scenario was opened).
    void cancel();
    bool isRunning() const { return m_running; }

signals:
    /// Requests completed of the current simulation's total (0: unknown); for capacity, of its current run,
    /// with the simulations done before it.
    void progress(quint64 run, qint64 completed, qint64 total, int simulation);
    void simulated(quint64 run, sp::app::SimResultPtr result);
    void capacityFound(quint64 run, sp::app::MaxRatePtr answer);
    void failed(quint64 run, const QString& message);

private:
    class Relay;
    template <class Result, class Job> quint64 launch(Job job);
    WorkerSlot m_slot;
    bool m_running = false;
};

} // namespace sp::app

Q_DECLARE_METATYPE(sp::app::SimResultPtr)
Q_DECLARE_METATYPE(sp::app::MaxRatePtr)
