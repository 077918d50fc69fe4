#include "session_serving.h"

#include "core/io/formats.h"

#include <QJsonArray>
#include <QObject>
#include <QtEndian>

#include <bit>
#include <cmath>
#include <limits>

namespace sp::app {

namespace {

/// Reads the fields of one JSON object; the first field that does not read names itself in `error`.
class Fields {
public:
    Fields(const QJsonObject& o, QString where, QString* error)
        : m_o(o), m_where(std::move(where)), m_error(error) {}

    double number(const char* key, double min = -std::numeric_limits<double>::max()) {
        const QJsonValue v = m_o[QLatin1String(key)];
        if (!v.isDouble() || !std::isfinite(v.toDouble()) || v.toDouble() < min) {
            const bool any = min == -std::numeric_limits<double>::max();
            fail(key,
                 any ? QObject::tr("expected a number") : QObject::tr("expected a number >= %1").arg(min));
            return 0;
        }
        return v.toDouble();
    }
    int64_t integer(const char* key, int64_t min = 0) {
        const QJsonValue v = m_o[QLatin1String(key)];
        const double d = v.toDouble();
        if (!v.isDouble() || d != std::floor(d) || d < double(min) || d > 9.0e15) {
            fail(key, QObject::tr("expected a whole number >= %1").arg(min));
            return min;
        }
        return int64_t(d);
    }
    bool flag(const char* key) { return m_o[QLatin1String(key)].toBool(); }
    std::string text(const char* key) { return m_o[QLatin1String(key)].toString().toStdString(); }
    QByteArray latin1(const char* key) { return m_o[QLatin1String(key)].toString().toLatin1(); }
    QJsonObject object(const char* key) {
        const QJsonValue v = m_o[QLatin1String(key)];
        if (!v.isObject()) fail(key, QObject::tr("expected an object"));
        return v.toObject();
    }
    QString at(const char* key) const { return m_where + QLatin1Char('.') + QLatin1String(key); }
    void fail(const char* key, const QString& what) {
        if (m_error->isEmpty()) *m_error = QStringLiteral("%1: %2").arg(at(key), what);
    }
    bool ok() const { return m_error->isEmpty(); }

private:
    const QJsonObject m_o;
    const QString m_where;
    QString* m_error;
};

QJsonObject percentilesJson(const Percentiles& p) {
    return QJsonObject{{"mean", p.mean}, {"p50", p.p50}, {"p90", p.p90},
                       {"p99", p.p99},   {"max", p.max}, {"count", qint64(p.count)}};
}

Percentiles percentilesFrom(Fields& parent, const char* key, QString* error) {
    Fields f(parent.object(key), parent.at(key), error);
    Percentiles p;
    p.mean = f.number("mean"), p.p50 = f.number("p50"), p.p90 = f.number("p90"), p.p99 = f.number("p99");
    p.max = f.number("max"), p.count = f.integer("count");
    return p;
}

/// Sorted values as base64 of little-endian doubles: exact, and a few characters a value.
QString sortedJson(const std::vector<double>& v) {
    QByteArray bytes(qsizetype(v.size() * 8), Qt::Uninitialized);
    for (size_t i = 0; i < v.size(); ++i)
        qToLittleEndian(std::bit_cast<quint64>(v[i]), bytes.data() + i * 8);
    return QString::fromLatin1(bytes.toBase64());
}

std::vector<double> sortedFrom(Fields& f, const char* key, int64_t count) {
    const auto decoded =
        QByteArray::fromBase64Encoding(f.latin1(key), QByteArray::AbortOnBase64DecodingErrors);
    const QByteArray& bytes = decoded.decoded;
    if (!decoded || bytes.size() % 8 != 0) {
        f.fail(key, QObject::tr("expected base64 of little-endian doubles"));
        return {};
    }
    std::vector<double> v(size_t(bytes.size() / 8));
    for (size_t i = 0; i < v.size(); ++i) {
        v[i] = std::bit_cast<double>(qFromLittleEndian<quint64>(bytes.constData() + i * 8));
        if (!std::isfinite(v[i]) || (i > 0 && v[i] < v[i - 1])) {
            f.fail(key, QObject::tr("expected finite values in ascending order (value %1)").arg(i));
            return {};
        }
    }
    // All the run's values, or its quantiles (thinSorted): never more than it had, none only if it had none.
    if (int64_t(v.size()) > count || (v.empty() != (count == 0))) {
        f.fail(key, QObject::tr("%1 values for a count of %2").arg(v.size()).arg(count));
        return {};
    }
    return v;
}

QJsonObject resultJson(const SimResult& r, const Workload& w) {
    QJsonArray timeline;
    for (const SimResult::Point& p : r.timeline)
        timeline.append(QJsonArray{p.t, qint64(p.waiting), qint64(p.running), p.kvShare});
    return QJsonObject{
        {"workload_yaml", QString::fromStdString(toYaml(w))},
        {"plan", QString::fromStdString(r.plan)},
        {"stopped", r.stopped},
        {"requests", qint64(r.requests)},
        {"completed", qint64(r.completed)},
        {"ttft_ms", percentilesJson(r.ttftMs)},
        {"tpot_ms", percentilesJson(r.tpotMs)},
        {"itl_ms", percentilesJson(r.itlMs)},
        {"e2e_ms", percentilesJson(r.e2eMs)},
        {"ttft_sorted_ms", sortedJson(thinSorted(r.ttftSortedMs))},
        {"tpot_sorted_ms", sortedJson(thinSorted(r.tpotSortedMs))},
        {"duration_s", r.durationS},
        {"offered_rate", r.offeredRate},
        {"requests_per_s", r.requestsPerS},
        {"output_tokens_per_s", r.outputTokensPerS},
        {"total_tokens_per_s", r.totalTokensPerS},
        {"sustained_output_tokens_per_s", r.sustainedOutputTokensPerS},
        {"goodput_requests_per_s", r.goodputRequestsPerS},
        {"slo_attainment", r.sloAttainment},
        {"mean_in_flight", r.meanInFlight},
        {"preemptions", qint64(r.preemptions)},
        {"first_preemption_s", r.firstPreemptionS},
        {"admissions_blocked_by_kv", qint64(r.admissionsBlockedByKv)},
        {"kv_peak_share", r.kvPeakShare},
        {"kv_mean_share", r.kvMeanShare},
        {"steps", qint64(r.steps)},
        {"timeline", timeline},
        {"lanes", qint64(r.lanes)},
        {"batch_cap", qint64(r.batchCap)},
        {"kv_blocks_per_lane", qint64(r.kvBlocksPerLane)},
        {"token_budget", qint64(r.tokenBudget)},
        {"block_tokens", r.blockTokens},
    };
}

std::optional<Workload> workloadFrom(Fields& f, const QString& file) {
    auto w = parseWorkload(f.text("workload_yaml"), file.toStdString());
    if (!w) {
        f.fail("workload_yaml", QString::fromStdString(w.error().str()));
        return std::nullopt;
    }
    return w.value();
}

std::shared_ptr<const SimResult> resultFrom(const QJsonObject& o, const QString& file, Workload& w,
                                            QString* error) {
    Fields f(o, QStringLiteral("serving.result"), error);
    const auto workload = workloadFrom(f, file);
    if (!workload) return nullptr;
    w = *workload;
    auto r = std::make_shared<SimResult>();
    r->ok = true;
    r->plan = f.text("plan");
    r->stopped = f.flag("stopped");
    r->requests = f.integer("requests");
    r->completed = f.integer("completed");
    r->ttftMs = percentilesFrom(f, "ttft_ms", error);
    r->tpotMs = percentilesFrom(f, "tpot_ms", error);
    r->itlMs = percentilesFrom(f, "itl_ms", error);
    r->e2eMs = percentilesFrom(f, "e2e_ms", error);
    if (!f.ok()) return nullptr;
    r->ttftSortedMs = sortedFrom(f, "ttft_sorted_ms", r->ttftMs.count);
    r->tpotSortedMs = sortedFrom(f, "tpot_sorted_ms", r->tpotMs.count);
    r->durationS = f.number("duration_s", 0);
    r->offeredRate = f.number("offered_rate", 0);
    r->requestsPerS = f.number("requests_per_s", 0);
    r->outputTokensPerS = f.number("output_tokens_per_s", 0);
    r->totalTokensPerS = f.number("total_tokens_per_s", 0);
    r->sustainedOutputTokensPerS = f.number("sustained_output_tokens_per_s", 0);
    r->goodputRequestsPerS = f.number("goodput_requests_per_s", 0);
    r->sloAttainment = f.number("slo_attainment", 0);
    r->meanInFlight = f.number("mean_in_flight", 0);
    r->preemptions = f.integer("preemptions");
    r->firstPreemptionS = f.number("first_preemption_s", -1);
    r->admissionsBlockedByKv = f.integer("admissions_blocked_by_kv");
    r->kvPeakShare = f.number("kv_peak_share", 0);
    r->kvMeanShare = f.number("kv_mean_share", 0);
    r->steps = f.integer("steps");
    r->lanes = f.integer("lanes");
    r->batchCap = f.integer("batch_cap");
    r->kvBlocksPerLane = f.integer("kv_blocks_per_lane");
    r->tokenBudget = f.integer("token_budget");
    r->blockTokens = int(std::min<int64_t>(f.integer("block_tokens"), std::numeric_limits<int>::max()));
    const QJsonArray timeline = o["timeline"].toArray();
    for (qsizetype i = 0; i < timeline.size() && f.ok(); ++i) {
        const QJsonArray p = timeline[i].toArray();
        const bool whole = p.size() == 4 && p[1].isDouble() && p[2].isDouble() &&
                           p[1].toDouble() == std::floor(p[1].toDouble()) &&
                           p[2].toDouble() == std::floor(p[2].toDouble()) && p[1].toDouble() >= 0 &&
                           p[2].toDouble() >= 0;
        if (!whole || !p[0].isDouble() || !std::isfinite(p[0].toDouble()) || !p[3].isDouble() ||
            !std::isfinite(p[3].toDouble())) {
            f.fail("timeline",
                   QObject::tr("point %1: expected [seconds, waiting, running, KV share]").arg(i));
            break;
        }
        r->timeline.push_back({p[0].toDouble(), int64_t(p[1].toDouble()), int64_t(p[2].toDouble()),
                               p[3].toDouble()});
    }
    if (!f.ok()) return nullptr;
    return r;
}

QJsonObject capacityJson(const MaxRate& m, const Workload& w) {
    return QJsonObject{{"workload_yaml", QString::fromStdString(toYaml(w))},
                       {"ok", m.ok},
                       {"error", QString::fromStdString(m.error)},
                       {"rate", m.rate},
                       {"rate_above", m.rateAbove},
                       {"binding", QString::fromStdString(m.binding)},
                       {"why", QString::fromStdString(m.why)},
                       {"simulations", m.simulations},
                       {"stopped", m.stopped}};
}

std::optional<MaxRate> capacityFrom(const QJsonObject& o, const QString& file, Workload& w, QString* error) {
    Fields f(o, QStringLiteral("serving.capacity"), error);
    const auto workload = workloadFrom(f, file);
    if (!workload) return std::nullopt;
    w = *workload;
    MaxRate m;
    m.ok = f.flag("ok");
    m.error = f.text("error");
    m.rate = f.number("rate", 0);
    m.rateAbove = f.number("rate_above", 0);
    m.binding = f.text("binding");
    m.why = f.text("why");
    m.simulations = int(std::min<int64_t>(f.integer("simulations"), std::numeric_limits<int>::max()));
    m.stopped = f.flag("stopped");
    if (!f.ok()) return std::nullopt;
    return m;
}

} // namespace

std::vector<double> thinSorted(const std::vector<double>& sorted, size_t max) {
    const size_t n = sorted.size();
    if (n <= max || max == 0) return sorted;
    std::vector<double> out(max);
    // Quantile j + 1 of max: the value of rank ceil((j + 1) n / max), in whole numbers.
    for (size_t j = 0; j < max; ++j) out[j] = sorted[((j + 1) * n + max - 1) / max - 1];
    return out;
}

QJsonObject servingJson(const SessionServing& s) {
    QJsonObject o{{"source", s.useTrace ? QStringLiteral("trace") : QStringLiteral("rate")},
                  {"rate", s.rate},
                  {"requests", qint64(s.requests)},
                  {"trace", s.tracePath}};
    if (s.result) o["result"] = resultJson(*s.result, s.resultWorkload);
    if (s.capacity) o["capacity"] = capacityJson(*s.capacity, s.capacityWorkload);
    return o;
}

SessionServing servingFrom(const QJsonObject& o, const QString& file) {
    SessionServing s;
    QString error;
    Fields f(o, QStringLiteral("serving"), &error);
    const QString source = o["source"].toString();
    if (source != QLatin1String("rate") && source != QLatin1String("trace"))
        f.fail("source", QObject::tr("expected 'rate' or 'trace'"));
    s.useTrace = source == QLatin1String("trace");
    if (const double rate = f.number("rate", 0); rate > 0)
        s.rate = rate;
    else
        f.fail("rate", QObject::tr("expected requests/s > 0"));
    s.requests = f.integer("requests", 1);
    s.tracePath = o["trace"].toString();
    // The inputs are kept whatever the results are; results that do not read are left out whole.
    QString results;
    if (o.contains("result")) s.result = resultFrom(o["result"].toObject(), file, s.resultWorkload, &results);
    if (results.isEmpty() && o.contains("capacity"))
        s.capacity = capacityFrom(o["capacity"].toObject(), file, s.capacityWorkload, &results);
    if (!results.isEmpty()) {
        s.result = nullptr;
        s.capacity.reset();
    }
    if (error.isEmpty()) error = results;
    if (!error.isEmpty()) s.error = QStringLiteral("%1: %2").arg(file, error);
    return s;
}

} // namespace sp::app
