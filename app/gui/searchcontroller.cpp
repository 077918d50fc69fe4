#include "searchcontroller.h"

#include "core/io/formats.h"
#include "core/searchers/registry.h"
#include "views/background.h"

#include <QCryptographicHash>
#include <QMutexLocker>
#include <QtConcurrent/QtConcurrentRun>

#include <algorithm>

namespace sp::app {

QByteArray problemFingerprint(const Scenario& s) {
    QCryptographicHash h(QCryptographicHash::Sha256);
    for (const std::string& part : {toYaml(s.model), toYaml(s.cluster), toYaml(s.workload)}) {
        h.addData(QByteArrayView(part.data(), qsizetype(part.size())));
        h.addData(QByteArrayView("\0", 1)); // parts apart: "ab" + "c" is not "a" + "bc"
    }
    return h.result();
}

ProgressRelay::ProgressRelay(QString searcher, QObject* parent)
    : QObject(parent), m_searcher(std::move(searcher)) {}

void ProgressRelay::progress(const Progress& p) {
    QMutexLocker lock(&m_mutex);
    if (!m_pending) {
        m_pending = std::make_shared<SearchUpdate>();
        m_pending->searcher = m_searcher;
    }
    SearchUpdate& u = *m_pending;
    u.evaluations = p.evaluations;
    u.seconds = p.seconds;
    u.bestThroughput = p.bestThroughput;
    u.elite = p.elite;
    u.curveDelta.insert(u.curveDelta.end(), p.curveDelta.begin(), p.curveDelta.end());
    u.learningDelta.insert(u.learningDelta.end(), p.learningDelta.begin(), p.learningDelta.end());
    u.final = u.final || p.final;
    if (m_posted) return; // the GUI has not taken the previous one yet: this one joins it
    m_posted = true;
    lock.unlock();
    QMetaObject::invokeMethod(this, &ProgressRelay::flush, Qt::QueuedConnection);
}

void ProgressRelay::flush() {
    std::shared_ptr<SearchUpdate> u;
    {
        QMutexLocker lock(&m_mutex);
        u = std::move(m_pending);
        m_posted = false;
    }
    if (u) emit updated(std::move(u));
}

// ---------------------------------------------------------------------------------------------------------------

SearchController::SearchController(QObject* parent) : QObject(parent) {
    // Searchers of a batch run side by side, each on its own thread (their evaluations use the Engine's
    // workers).
    m_pool.setMaxThreadCount(16);
    m_pool.setExpiryTimeout(30000);
}

SearchController::~SearchController() {
    // The only wait on workers: they reference relays owned by this object. Stop makes it short (~100 ms).
    m_stop.request_stop();
    for (QFuture<void>& f : m_futures) f.waitForFinished();
    m_pool.waitForDone();
}

QStringList SearchController::keepLearnedFor(const Scenario& s) {
    const QByteArray key = problemFingerprint(s);
    QStringList dropped;
    for (auto it = m_learned.begin(); it != m_learned.end();)
        if (it->on != key) {
            dropped << it.key();
            it = m_learned.erase(it);
        } else {
            ++it;
        }
    std::sort(dropped.begin(), dropped.end());
    return dropped;
}

bool SearchController::isRunning() const {
    return m_remaining.value(m_batch) > 0;
}

void SearchController::stop() {
    m_stop.request_stop();
}

void SearchController::cancel() {
    m_stop.request_stop();
    m_stop = std::stop_source();
    ++m_batch; // nothing runs under this id: the old batch's reports are dropped
}

quint64 SearchController::start(SearchContextPtr context, const Request& request) {
    m_stop.request_stop(); // supersede the running batch, if any
    m_stop = std::stop_source();
    const quint64 batch = ++m_batch;
    m_futures.erase(std::remove_if(m_futures.begin(), m_futures.end(),
                                   [](const QFuture<void>& f) { return f.isFinished(); }),
                    m_futures.end());
    SearchOptions options;
    options.budget.evaluations = request.budget;
    options.seed = request.seed;
    options.threads = request.threads;
    options.eliteK = request.eliteK;
    const QByteArray problem = problemFingerprint(context->scenario());
    m_remaining[batch] = int(request.searchers.size());
    if (request.searchers.isEmpty()) {
        m_remaining.remove(batch);
        QMetaObject::invokeMethod(
            this, [this, batch] { emit batchFinished(batch, false); }, Qt::QueuedConnection);
        return batch;
    }
    for (const QString& name : request.searchers) {
        auto* relay = new ProgressRelay(name, this);
        connect(relay, &ProgressRelay::updated, this, [this, batch](SearchUpdatePtr u) {
            if (batch == m_batch) emit progressed(batch, std::move(u));
        });
        const std::string searcher = name.toStdString();
        std::stop_token stop = m_stop.get_token();
        SearchOptions mine = options;
        // Only a policy of this problem: one learned on another (a run that ended after another scenario
        // was opened) would make the run depend on what was open before.
        if (const Learned l = m_learned.value(name); l.on == problem) mine.learned = l.state;
        mine.starts = request.starts.value(name);
        QFuture<Outcome> f = QtConcurrent::run(
            &m_pool, [context, searcher, options = std::move(mine), relay, stop]() -> Outcome {
                views::lowerThreadPriority();
                try {
                    std::unique_ptr<Searcher> s = makeSearcher(searcher);
                    if (!s)
                        return {nullptr,
                                QObject::tr("unknown searcher '%1'").arg(QString::fromStdString(searcher))};
                    SearchResult r = s->run(context->space(), context->engine(), options, relay, stop);
                    return {std::make_shared<const SearchResult>(std::move(r)), {}};
                } catch (const std::exception& e) {
                    return {nullptr, QString::fromUtf8(e.what())};
                }
            });
        ++m_active;
        f.then(this, [this, batch, name, relay, problem](Outcome o) {
            relay->flush(); // its last progress first, then the result
            relay->deleteLater();
            --m_active;
            // Kept even from a superseded or stopped run, with the problem it was learned on: the next run
            // starts from it only on the same problem (keepLearnedFor, and the check above).
            if (o.result && o.result->learned) m_learned[name] = {o.result->learned, problem};
            const bool current = batch == m_batch;
            if (current) {
                if (o.result)
                    emit runFinished(batch, name, o.result);
                else
                    emit runFailed(batch, name, o.error);
            }
            if (--m_remaining[batch] == 0) {
                m_remaining.remove(batch);
                if (current) emit batchFinished(batch, m_stop.stop_requested());
            }
        });
        m_futures << QFuture<void>(
            f); // the worker itself: the destructor waits on it, not on the GUI continuation
    }
    return batch;
}

} // namespace sp::app
