#include "paretorunner.h"

#include "views/background.h"

#include <QMutexLocker>
#include <QtConcurrent/QtConcurrentRun>
#include <algorithm>

namespace sp::app {

/// ParetoObserver -> Qt: pointFound() runs on the worker; the points reach the GUI thread in one queued call
/// at a time (later ones join the pending batch).
class ParetoRunner::Relay final : public QObject, public ParetoObserver {
public:
    Relay(ParetoRunner* owner, quint64 run) : QObject(owner), m_owner(owner), m_run(run) {}

    void pointFound(const ParetoPoint& p, bool megatron, int done, int total) override {
        QMutexLocker lock(&m_mutex);
        m_points.push_back(p);
        m_megatron.push_back(megatron);
        if (!megatron) m_done = done;
        m_total = total;
        if (m_posted) return;
        m_posted = true;
        lock.unlock();
        QMetaObject::invokeMethod(
            this, [this] { flush(); }, Qt::QueuedConnection);
    }

    /// Worker: the disaggregated phase begins (after the aggregated points, which are already posted).
    void disaggregatedStarted(int targets) {
        QMetaObject::invokeMethod(
            this,
            [this, targets] {
                flush();
                if (m_run == m_owner->m_slot.current()) emit m_owner->disaggregatedStarted(m_run, targets);
            },
            Qt::QueuedConnection);
    }

    /// GUI thread.
    void flush() {
        std::vector<ParetoPoint> points;
        std::vector<bool> megatron;
        int done = 0, total = 0;
        {
            QMutexLocker lock(&m_mutex);
            points.swap(m_points);
            megatron.swap(m_megatron);
            done = m_done, total = m_total;
            m_posted = false;
        }
        if (!points.empty() && m_run == m_owner->m_slot.current())
            emit m_owner->pointsFound(m_run, points, megatron, done, total);
    }

private:
    ParetoRunner* m_owner;
    quint64 m_run;
    QMutex m_mutex;
    std::vector<ParetoPoint> m_points; ///< guarded by m_mutex
    std::vector<bool> m_megatron;      ///< guarded by m_mutex
    int m_done = 0, m_total = 0;       ///< guarded by m_mutex
    bool m_posted = false;             ///< guarded by m_mutex
};

ParetoRunner::ParetoRunner(QObject* parent) : QObject(parent) {}

ParetoRunner::~ParetoRunner() = default;

void ParetoRunner::stop() {
    m_slot.stop();
}

void ParetoRunner::cancel() {
    m_slot.next();
    m_running = false;
}

quint64 ParetoRunner::start(const Scenario& scenario, const ParetoOptions& options,
                            std::optional<DisaggSearchOptions> disaggregated) {
    const quint64 run = m_slot.next();
    auto* relay = new Relay(this, run);
    std::stop_token stop = m_slot.token();
    struct Outcome {
        ParetoResultPtr result;
        DisaggFrontierPtr disaggregated; ///< null unless asked for and the aggregated sweep succeeded
        DisaggFrontierTotals totals;     ///< what the disaggregated searches did
        QString error;
    };
    QFuture<Outcome> f =
        QtConcurrent::run(m_slot.pool(), [scenario, options, disaggregated, relay, stop]() -> Outcome {
            views::lowerThreadPriority();
            try {
                auto r = std::make_shared<const ParetoResult>(paretoFront(scenario, options, relay, stop));
                DisaggFrontierPtr dis;
                DisaggFrontierTotals totals;
                if (disaggregated && !r->refused && !stop.stop_requested()) {
                    relay->disaggregatedStarted(int(r->targetsMs.size()));
                    dis = std::make_shared<const std::vector<DisaggFrontierPoint>>(
                        disaggregatedFrontier(scenario, r->targetsMs, *disaggregated, stop, &totals));
                }
                return {r, dis, totals, {}};
            } catch (const std::exception& e) {
                return {nullptr, nullptr, {}, QString::fromUtf8(e.what())};
            }
        });
    m_running = true;
    f.then(this, [this, run, relay](Outcome o) {
        relay->flush(); // its last points first, then the result
        relay->deleteLater();
        if (run != m_slot.current()) return;
        m_running = false;
        m_disaggregatedTotals = o.totals;
        if (o.result && !o.result->refused) {
            if (o.disaggregated) emit disaggregatedFound(run, o.disaggregated);
            emit finished(run, o.result);
        } else
            emit failed(run, o.result ? QString::fromStdString(o.result->message) : o.error);
    });
    m_slot.track(QFuture<void>(f));
    return run;
}

} // namespace sp::app
