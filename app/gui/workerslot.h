#pragma once
// The one-at-a-time worker the Pareto sweep and the serving simulation each run on: a pool of one thread, a
// stop source per run, and a run id, so a superseded run's reports are told apart and dropped.

#include <QFuture>
#include <QList>
#include <QThreadPool>

#include <algorithm>
#include <stop_token>

namespace sp::app {

class WorkerSlot {
public:
    WorkerSlot() { m_pool.setMaxThreadCount(1); }
    /// The only wait on the worker (its reports go to relays the owner holds); a stop makes it short.
    ~WorkerSlot() {
        stop();
        for (QFuture<void>& f : m_futures) f.waitForFinished();
        m_pool.waitForDone();
    }
    WorkerSlot(const WorkerSlot&) = delete;
    WorkerSlot& operator=(const WorkerSlot&) = delete;

    /// Asks the current run to stop; it still reports what it has.
    void stop() { m_stop.request_stop(); }
    /// Stops the current run and starts counting the next: its id. The current run's reports no longer
    /// match current().
    quint64 next() {
        m_stop.request_stop();
        m_stop = std::stop_source();
        m_futures.erase(std::remove_if(m_futures.begin(), m_futures.end(),
                                       [](const QFuture<void>& f) { return f.isFinished(); }),
                        m_futures.end());
        return ++m_run;
    }
    quint64 current() const { return m_run; }
    std::stop_token token() const { return m_stop.get_token(); }
    QThreadPool* pool() { return &m_pool; }
    /// Kept so the destructor waits for it.
    void track(const QFuture<void>& f) { m_futures << f; }

private:
    QThreadPool m_pool;
    std::stop_source m_stop;
    quint64 m_run = 0;
    QList<QFuture<void>> m_futures;
};

} // namespace sp::app
