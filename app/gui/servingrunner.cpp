#include "servingrunner.h"

#include "views/background.h"

#include <QMutex>
#include <QMutexLocker>
#include <QtConcurrent/QtConcurrentRun>
#include <algorithm>

namespace sp::app {

/// SimProgressFn -> Qt: report() runs on the worker; the latest progress reaches the GUI thread in one queued
/// call at a time (later reports replace the pending one).
class ServingRunner::Relay final : public QObject {
public:
    Relay(ServingRunner* owner, quint64 run) : QObject(owner), m_owner(owner), m_run(run) {}

    void report(const SimProgress& p) {
        QMutexLocker lock(&m_mutex);
        // A new run of a capacity search starts from 0 completed.
        if (p.completed < m_completed && m_seen) ++m_simulation;
        m_seen = true;
        m_completed = p.completed, m_total = p.total;
        if (m_posted) return;
        m_posted = true;
        lock.unlock();
        QMetaObject::invokeMethod(
            this, [this] { flush(); }, Qt::QueuedConnection);
    }

    /// GUI thread.
    void flush() {
        qint64 completed = 0, total = 0;
        int simulation = 0;
        {
            QMutexLocker lock(&m_mutex);
            if (!m_posted) return;
            completed = m_completed, total = m_total, simulation = m_simulation;
            m_posted = false;
        }
        if (m_run == m_owner->m_slot.current()) emit m_owner->progress(m_run, completed, total, simulation);
    }

private:
    ServingRunner* m_owner;
    quint64 m_run;
    QMutex m_mutex;
    qint64 m_completed = 0, m_total = 0; ///< guarded by m_mutex
    int m_simulation = 0;                ///< guarded by m_mutex
    bool m_seen = false, m_posted = false;
};

ServingRunner::ServingRunner(QObject* parent) : QObject(parent) {}

ServingRunner::~ServingRunner() = default;

void ServingRunner::stop() {
    m_slot.stop();
}

void ServingRunner::cancel() {
    m_slot.next();
    m_running = false;
}

template <class Result, class Job> quint64 ServingRunner::launch(Job job) {
    const quint64 run = m_slot.next();
    auto* relay = new Relay(this, run);
    std::stop_token stop = m_slot.token();
    struct Outcome {
        std::shared_ptr<const Result> result;
        QString error;
    };
    QFuture<Outcome> f = QtConcurrent::run(m_slot.pool(), [job, relay, stop]() -> Outcome {
        views::lowerThreadPriority();
        try {
            return {job([relay](const SimProgress& p) { relay->report(p); }, stop), {}};
        } catch (const std::exception& e) {
            return {nullptr, QString::fromUtf8(e.what())};
        }
    });
    m_running = true;
    f.then(this, [this, run, relay](Outcome o) {
        relay->flush();
        relay->deleteLater();
        if (run != m_slot.current()) return;
        m_running = false;
        if (!o.result)
            emit failed(run, o.error);
        else if (!o.result->ok)
            emit failed(run, QString::fromStdString(o.result->error));
        else if constexpr (std::is_same_v<Result, SimResult>)
            emit simulated(run, o.result);
        else
            emit capacityFound(run, o.result);
    });
    m_slot.track(QFuture<void>(f));
    return run;
}

quint64 ServingRunner::simulate(const Scenario& scenario, const Plan& plan, const SimOptions& options) {
    return launch<SimResult>([scenario, plan, options](const SimProgressFn& progress, std::stop_token stop) {
        return sp::simulate(scenario, plan, options, progress, stop);
    });
}

quint64 ServingRunner::capacity(const Scenario& scenario, const Plan& plan,
                                const RateSearchOptions& options) {
    return launch<MaxRate>([scenario, plan, options](const SimProgressFn& progress, std::stop_token stop) {
        const CostModel model(scenario);
        return std::make_shared<const MaxRate>(maxRate(model, plan, options, progress, stop));
    });
}

} // namespace sp::app
