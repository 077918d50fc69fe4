#pragma once
// Runs searchers on worker threads and reports to the GUI thread.
//
// Each Start is a batch with an id; each searcher of the batch runs on its own worker (QtConcurrent::run on
// the controller's pool), with makeSearcher(name)->run(space, engine, options, relay, stopToken). The core
// reports through its Observer on the searching thread; a ProgressRelay (the thin Qt adapter) coalesces those
// events and hands them to the GUI thread with a queued call, at most one pending at a time. Results come
// back through QFuture::then on the GUI thread. Updates and results of a superseded batch are dropped. Stop
// requests go through a std::stop_source; the GUI thread never waits on a worker (except when the controller
// is destroyed).

#include "metatypes.h"
#include "searchcontext.h"

#include <QFuture>
#include <QHash>
#include <QList>
#include <QMutex>
#include <QObject>
#include <QStringList>
#include <QThreadPool>

#include <stop_token>

namespace sp::app {

/// What a learned policy is tied to: the scenario's model, cluster and workload (a hash of their YAML), not
/// its name or constraints. rl carries its policy only to a run of the same problem, so a scenario and seed
/// give the same search whatever was open before; a constraint edit (TP pinned, headroom) keeps it.
QByteArray problemFingerprint(const Scenario& s);

/// Observer -> Qt adapter for one searcher run. progress() is called on the worker; updated() is emitted on
/// the thread the relay lives in (the GUI thread).
class ProgressRelay : public QObject, public Observer {
    Q_OBJECT
public:
    ProgressRelay(QString searcher, QObject* parent = nullptr);
    void progress(const Progress& p) override; // worker thread
    /// Delivers what is pending now (GUI thread).
    void flush();

signals:
    void updated(sp::app::SearchUpdatePtr update);

private:
    QString m_searcher;
    QMutex m_mutex;
    std::shared_ptr<SearchUpdate> m_pending; ///< guarded by m_mutex
    bool m_posted = false;                   ///< a flush is queued; guarded by m_mutex
};

class SearchController : public QObject {
    Q_OBJECT
public:
    struct Request {
        QStringList searchers;
        int64_t budget = 2000;
        uint64_t seed = 1;
        int threads = 0; ///< evaluation threads per run; 0: all cores
        int eliteK = 32;
        /// Where each searcher starts (SearchOptions::starts), by name: the window's rerun hands each the
        /// best plans of its last run.
        QHash<QString, std::vector<std::vector<int>>> starts;
    };

    explicit SearchController(QObject* parent = nullptr);
    ~SearchController() override;

    /// Starts a batch (stopping and superseding any running one). Returns its id.
    quint64 start(SearchContextPtr context, const Request& request);
    /// Asks the current batch to stop; its runs finish with their best so far (within about 100 ms).
    void stop();
    /// Stops the current batch and drops whatever it still reports (e.g. another scenario was opened).
    void cancel();
    bool isRunning() const;
    quint64 currentBatch() const { return m_batch; }
    /// Runs (of any batch) still on a worker.
    int activeRuns() const { return m_active; }
    /// Whether the next run of `searcher` starts from what its last run under this controller learned
    /// (SearchOptions::learned: a rerun of the same problem does not learn it again from nothing). Only a
    /// policy learned on the problem of the run starts it (problemFingerprint); see keepLearnedFor.
    bool hasLearned(const QString& searcher) const { return m_learned.contains(searcher); }
    /// Drops what the learning searchers learned: their next runs start from the shipped prior.
    void forgetLearned() { m_learned.clear(); }
    /// Drops what was learned on another problem than `s` (another model, cluster or workload); returns
    /// the searchers whose policy went, in name order.
    QStringList keepLearnedFor(const Scenario& s);
    /// What `searcher`'s last run learned (null: nothing), and setting it with the scenario it was learned
    /// on (a session opened: null drops it).
    std::shared_ptr<const LearnedState> learned(const QString& searcher) const {
        return m_learned.value(searcher).state;
    }
    /// The problemFingerprint of the scenario `searcher`'s policy was learned on (empty: none).
    QByteArray learnedOn(const QString& searcher) const { return m_learned.value(searcher).on; }
    void setLearned(const QString& searcher, std::shared_ptr<const LearnedState> state, const Scenario& on) {
        if (state)
            m_learned[searcher] = {std::move(state), problemFingerprint(on)};
        else
            m_learned.remove(searcher);
    }

signals:
    void progressed(quint64 batch, sp::app::SearchUpdatePtr update);
    void runFinished(quint64 batch, const QString& searcher, sp::app::SearchResultPtr result);
    void runFailed(quint64 batch, const QString& searcher, const QString& message);
    /// Every run of the batch has returned.
    void batchFinished(quint64 batch, bool stopped);

private:
    struct Outcome {
        SearchResultPtr result;
        QString error;
    };
    QThreadPool m_pool;
    std::stop_source m_stop;
    quint64 m_batch = 0;
    QHash<quint64, int> m_remaining; ///< runs per batch still running
    int m_active = 0;
    QList<QFuture<void>> m_futures;
    struct Learned {
        std::shared_ptr<const LearnedState> state;
        QByteArray on; ///< problemFingerprint of its run's scenario
    };
    QHash<QString, Learned> m_learned; ///< by searcher, from its last run
};

} // namespace sp::app
