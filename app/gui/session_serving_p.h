#pragma once
// What session_serving.cpp and session_serving_sweep.cpp share: a reader of JSON fields that names the first
// one that does not read, and the run's and the workload's JSON. Private to app/gui.

#include "session_serving.h"

#include <QJsonArray>
#include <QJsonObject>
#include <QObject>
#include <QString>

#include <cmath>
#include <limits>
#include <memory>
#include <optional>

namespace sp::app::detail {

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
    /// Absent (a session of an older version): `absent`; present, it must read as number() reads it.
    double optionalNumber(const char* key, double absent, double min = -std::numeric_limits<double>::max()) {
        return m_o.contains(QLatin1String(key)) ? number(key, min) : absent;
    }
    int64_t optionalInteger(const char* key, int64_t absent, int64_t min = 0) {
        return m_o.contains(QLatin1String(key)) ? integer(key, min) : absent;
    }
    bool flag(const char* key) { return m_o[QLatin1String(key)].toBool(); }
    std::string text(const char* key) { return m_o[QLatin1String(key)].toString().toStdString(); }
    QByteArray latin1(const char* key) { return m_o[QLatin1String(key)].toString().toLatin1(); }
    QJsonObject object(const char* key) {
        const QJsonValue v = m_o[QLatin1String(key)];
        if (!v.isObject()) fail(key, QObject::tr("expected an object"));
        return v.toObject();
    }
    QJsonArray array(const char* key) {
        const QJsonValue v = m_o[QLatin1String(key)];
        if (!v.isArray()) fail(key, QObject::tr("expected an array"));
        return v.toArray();
    }
    bool has(const char* key) const { return m_o.contains(QLatin1String(key)); }
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

QJsonObject percentilesJson(const Percentiles& p);
Percentiles percentilesFrom(Fields& parent, const char* key, QString* error);
/// The workload as YAML under "workload_yaml".
std::optional<Workload> workloadFrom(Fields& f, const QString& file);
/// A run with the workload it is drawn against; read back from `where` ("serving.result").
QJsonObject resultJson(const SimResult& r, const Workload& w);
std::shared_ptr<const SimResult> resultFrom(const QJsonObject& o, const QString& file, const QString& where,
                                            Workload& w, QString* error);
/// A run's or a sweep's name (views::RunTag) as the fields "plan_name", "load" and "gpus" of `o`.
void tagInto(QJsonObject& o, const views::RunTag& t);
views::RunTag tagFrom(const QJsonObject& o);
/// A shown sweep (its rates, points, workload and name), and the pin (its run and sweep).
QJsonObject sweepJson(const views::ShownSweep& s);
std::optional<views::ShownSweep> sweepFrom(const QJsonObject& o, const QString& file, const QString& where,
                                           QString* error);
QJsonObject pinJson(const views::ServingPin& p);
views::ServingPin pinFrom(const QJsonObject& o, const QString& file, QString* error);

} // namespace sp::app::detail
