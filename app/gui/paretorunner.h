#pragma once
// Runs the Pareto sweep (core/searchers/pareto.h) on a worker thread and reports to the GUI thread, the way
// SearchController runs searchers: QtConcurrent::run on its own pool, a std::stop_source, a run id so the
// reports of a superseded run are dropped, the core's observer calls buffered under a mutex and handed over
// with one queued call at a time, and the result through QFuture::then on the GUI thread.

#include "core/searchers/disagg_search.h"
#include "core/searchers/pareto.h"
#include "workerslot.h"

#include <QFuture>
#include <QList>
#include <QMetaType>
#include <QMutex>
#include <QObject>
#include <QThreadPool>

#include <memory>
#include <optional>
#include <stop_token>
#include <vector>

namespace sp::app {

using ParetoResultPtr = std::shared_ptr<const ParetoResult>;
using DisaggFrontierPtr = std::shared_ptr<const std::vector<DisaggFrontierPoint>>;

class ParetoRunner : public QObject {
    Q_OBJECT
public:
    explicit ParetoRunner(QObject* parent = nullptr);
    ~ParetoRunner() override;

    /// Starts a sweep of `scenario` (stopping and superseding a running one). Returns its id.
    /// With `disaggregated`, the sweep then searches the disaggregated frontier at the same TPOT targets
    /// (disaggregatedFrontier, core/searchers/disagg_search.h), reported by disaggregatedFound before
    /// finished.
    quint64 start(const Scenario& scenario, const ParetoOptions& options,
                  std::optional<DisaggSearchOptions> disaggregated = std::nullopt);
    /// Asks the sweep to stop; it finishes with the points found so far.
    void stop();
    /// Stops it and drops whatever it still reports (another scenario was opened).
    void cancel();
    bool isRunning() const { return m_running; }
    /// What the last finished sweep's disaggregated searches did (zero without them), set before finished.
    const DisaggFrontierTotals& disaggregatedTotals() const { return m_disaggregatedTotals; }

signals:
    /// Points found since the last report, in order (megatron[i]: of the recipe's frontier).
    void pointsFound(quint64 run, const std::vector<sp::ParetoPoint>& points,
                     const std::vector<bool>& megatron, int done, int total);
    /// The aggregated sweep ended and the disaggregated one began, over `targets` TPOT targets.
    void disaggregatedStarted(quint64 run, int targets);
    /// The disaggregated frontier (empty when none of its splits met a target); comes before finished.
    void disaggregatedFound(quint64 run, sp::app::DisaggFrontierPtr points);
    void finished(quint64 run, sp::app::ParetoResultPtr result);
    void failed(quint64 run, const QString& message);

private:
    class Relay;
    WorkerSlot m_slot;
    bool m_running = false;
    DisaggFrontierTotals m_disaggregatedTotals;
};

} // namespace sp::app

Q_DECLARE_METATYPE(sp::app::ParetoResultPtr)
Q_DECLARE_METATYPE(sp::app::DisaggFrontierPtr)
