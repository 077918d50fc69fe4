#pragma once
// The searchers of one batch: what each has reported (elite, curve, counts), their targets, and the progress
// and time left of the batch. Time left is that of the slowest searcher still running, each at its own rate.

#include "metatypes.h"

#include <QHash>
#include <QPointF>
#include <QString>
#include <QStringList>
#include <QVector>

#include <optional>
#include <vector>

namespace sp::app {

struct RunState {
    std::vector<Candidate> elite;
    QVector<QPointF> curve;
    int64_t evaluations = 0;
    int64_t target = 0; ///< evaluations it will make (0: unknown or none)
    double seconds = 0;
    double best = 0;
    bool finished = false;
    bool stopped = false;
    bool refused = false; ///< it did not run (e.g. an exhaustive search over too large a space)
    QString message;
};

struct BatchProgress {
    int64_t done = 0, total = 0;
    double rate = 0;  ///< evaluations per second, all searchers
    double left = -1; ///< seconds, -1: unknown
};

class RunTracker {
public:
    void clear();
    void add(const QString& name, RunState r);
    bool contains(const QString& name) const { return m_runs.contains(name); }
    RunState& operator[](const QString& name) { return m_runs[name]; }
    const RunState& at(const QString& name) const { return m_runs.find(name).value(); }
    const QStringList& order() const { return m_order; }
    bool empty() const { return m_order.isEmpty(); }

    /// `elapsed`: seconds since the batch started (all its searchers start together).
    BatchProgress progress(double elapsed) const;
    /// Every searcher of the batch was refused: there are no results.
    bool allRefused() const;
    /// The best feasible candidate of any searcher.
    std::optional<Candidate> best() const;
    /// The searchers whose best reaches `throughput`.
    QStringList reaching(double throughput) const;
    std::vector<std::pair<QString, std::vector<Candidate>>> elites() const;
    /// The search history as CSV: one row per evaluation count at which a searcher improved or ended, with
    /// each searcher's best so far.
    QString historyCsv() const;

private:
    QHash<QString, RunState> m_runs;
    QStringList m_order;
};

} // namespace sp::app
