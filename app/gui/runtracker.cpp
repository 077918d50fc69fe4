#include "runtracker.h"

#include <QTextStream>

#include <algorithm>
#include <set>

namespace sp::app {

void RunTracker::clear() {
    m_runs.clear();
    m_order.clear();
}

void RunTracker::add(const QString& name, RunState r) {
    if (!m_runs.contains(name)) m_order << name;
    m_runs.insert(name, std::move(r));
}

BatchProgress RunTracker::progress(double elapsed) const {
    BatchProgress p;
    const double secs = std::max(1e-3, elapsed);
    int64_t evals = 0;
    bool unknown = false;
    double left = 0;
    for (const QString& n : m_order) {
        const RunState& r = m_runs[n];
        // A run that ended by itself made all it will (an exhaustive search of a small space, rl converging);
        // one stopped still counts what it was to make, so the bar after Stop shows how far the batch got.
        const int64_t target = r.finished && !r.stopped ? r.evaluations : std::max(r.target, r.evaluations);
        p.done += r.evaluations;
        p.total += target;
        evals += r.evaluations;
        if (r.finished || target <= r.evaluations) continue;
        // Each searcher runs at its own pace: the batch ends with the slowest.
        const double rate = double(r.evaluations) / secs;
        if (rate <= 0) {
            unknown = true;
            continue;
        }
        left = std::max(left, double(target - r.evaluations) / rate);
    }
    p.rate = double(evals) / secs;
    p.left = unknown ? -1 : left;
    return p;
}

bool RunTracker::allRefused() const {
    return !m_order.isEmpty() && std::all_of(m_order.begin(), m_order.end(),
                                             [this](const QString& n) { return m_runs[n].refused; });
}

std::optional<Candidate> RunTracker::best() const {
    std::optional<Candidate> best;
    for (const RunState& r : m_runs)
        for (const Candidate& c : r.elite)
            if (c.metrics.feasible && (!best || c.metrics.throughput > best->metrics.throughput)) best = c;
    return best;
}

QStringList RunTracker::reaching(double throughput) const {
    QStringList who;
    for (const QString& n : m_order)
        if (m_runs[n].best >= throughput * (1 - 1e-9)) who << n;
    return who;
}

std::vector<std::pair<QString, std::vector<Candidate>>> RunTracker::elites() const {
    std::vector<std::pair<QString, std::vector<Candidate>>> lists;
    for (const QString& n : m_order) lists.emplace_back(n, m_runs[n].elite);
    return lists;
}

QString RunTracker::historyCsv() const {
    std::set<int64_t> xs;
    for (const QString& n : m_order) {
        for (const QPointF& p : m_runs[n].curve) xs.insert(int64_t(p.x()));
        if (m_runs[n].evaluations > 0) xs.insert(m_runs[n].evaluations);
    }
    QString out;
    QTextStream ts(&out);
    ts << "evaluations";
    for (const QString& n : m_order) ts << ",best_" << n << "_tokens_per_s";
    ts << '\n';
    for (int64_t x : xs) {
        ts << x;
        for (const QString& n : m_order) {
            const RunState& r = m_runs[n];
            ts << ',';
            if (x > r.evaluations) continue;
            double best = 0;
            for (const QPointF& p : r.curve)
                if (int64_t(p.x()) <= x) best = p.y();
            if (best > 0) ts << QString::number(best, 'f', 3);
        }
        ts << '\n';
    }
    ts.flush();
    return out;
}

} // namespace sp::app
