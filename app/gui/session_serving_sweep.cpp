// The Serving tab's rate sweep and pin in a session (session_serving.h): a sweep is its rates, its points'
// figures (each a run's percentiles, throughput and SLO check, as sweepPoint gives them: the runs are not
// kept), the workload it was checked against and its name; the pin is a run (as the run drawn is kept) and a
// sweep. Points read back exactly (JSON numbers are written to round-trip), so a reopened sweep draws the
// same.
#include "session_serving_p.h"

#include "core/io/formats.h"

namespace sp::app::detail {

namespace {

QJsonObject pointJson(const SweepPoint& p) {
    return QJsonObject{{"rate", p.rate},
                       {"requests", qint64(p.requests)},
                       {"completed", qint64(p.completed)},
                       {"ttft_ms", percentilesJson(p.ttftMs)},
                       {"tpot_ms", percentilesJson(p.tpotMs)},
                       {"e2e_ms", percentilesJson(p.e2eMs)},
                       {"requests_per_s", p.requestsPerS},
                       {"output_tokens_per_s", p.outputTokensPerS},
                       {"goodput_requests_per_s", p.goodputRequestsPerS},
                       {"slo_attainment", p.sloAttainment},
                       {"kv_peak_share", p.kvPeakShare},
                       {"preemptions", qint64(p.preemptions)},
                       {"slo", QJsonObject{{"met", p.slo.met},
                                           {"ttft_ratio", p.slo.ttftRatio},
                                           {"tpot_ratio", p.slo.tpotRatio},
                                           {"ttft_ms", p.slo.ttftMs},
                                           {"tpot_ms", p.slo.tpotMs},
                                           {"binding", QString::fromStdString(p.slo.binding)}}}};
}

SweepPoint pointFrom(Fields& f, QString* error) {
    SweepPoint p;
    p.rate = f.number("rate", 0);
    p.requests = f.integer("requests");
    p.completed = f.integer("completed");
    p.ttftMs = percentilesFrom(f, "ttft_ms", error);
    p.tpotMs = percentilesFrom(f, "tpot_ms", error);
    p.e2eMs = percentilesFrom(f, "e2e_ms", error);
    p.requestsPerS = f.number("requests_per_s", 0);
    p.outputTokensPerS = f.number("output_tokens_per_s", 0);
    p.goodputRequestsPerS = f.number("goodput_requests_per_s", 0);
    p.sloAttainment = f.number("slo_attainment", 0);
    p.kvPeakShare = f.number("kv_peak_share", 0);
    p.preemptions = f.integer("preemptions");
    Fields slo(f.object("slo"), f.at("slo"), error);
    p.slo.met = slo.flag("met");
    p.slo.ttftRatio = slo.number("ttft_ratio", 0);
    p.slo.tpotRatio = slo.number("tpot_ratio", 0);
    p.slo.ttftMs = slo.number("ttft_ms", 0);
    p.slo.tpotMs = slo.number("tpot_ms", 0);
    p.slo.binding = slo.text("binding");
    return p;
}

} // namespace

void tagInto(QJsonObject& o, const views::RunTag& t) {
    o["plan_name"] = t.plan;
    o["load"] = t.load;
    o["gpus"] = t.gpus;
}

views::RunTag tagFrom(const QJsonObject& o) {
    // Absent before runs were named by their load and GPUs: only the plan then.
    return views::RunTag{o["plan_name"].toString(), o["load"].toString(), o["gpus"].toString()};
}

QJsonObject sweepJson(const views::ShownSweep& s) {
    QJsonArray rates, points;
    for (double r : s.rates) rates.append(r);
    for (const SweepPoint& p : s.sweep.points) points.append(pointJson(p));
    QJsonObject o{{"workload_yaml", QString::fromStdString(toYaml(s.workload))},
                  {"plan", QString::fromStdString(s.sweep.plan)},
                  {"stopped", s.sweep.stopped},
                  {"rates", rates},
                  {"points", points}};
    tagInto(o, s.tag);
    return o;
}

std::optional<views::ShownSweep> sweepFrom(const QJsonObject& o, const QString& file, const QString& where,
                                           QString* error) {
    Fields f(o, where, error);
    const auto workload = workloadFrom(f, file);
    if (!workload) return std::nullopt;
    views::ShownSweep s;
    s.workload = *workload;
    s.tag = tagFrom(o);
    s.sweep.ok = true;
    s.sweep.plan = f.text("plan");
    s.sweep.stopped = f.flag("stopped");
    const QJsonArray rates = f.array("rates");
    for (qsizetype i = 0; i < rates.size() && f.ok(); ++i) {
        const double r = rates[i].toDouble();
        if (!rates[i].isDouble() || !std::isfinite(r) || r <= 0 || (i > 0 && r < s.rates.back()))
            f.fail("rates", QObject::tr("rate %1: expected requests/s > 0, ascending").arg(i));
        s.rates.push_back(r);
    }
    const QJsonArray points = f.array("points");
    if (f.ok() && points.size() > rates.size())
        f.fail("points", QObject::tr("%1 points for %2 rates").arg(points.size()).arg(rates.size()));
    for (qsizetype i = 0; i < points.size() && f.ok(); ++i) {
        if (!points[i].isObject()) {
            f.fail("points", QObject::tr("point %1: expected an object").arg(i));
            break;
        }
        Fields pf(points[i].toObject(), QStringLiteral("%1.points[%2]").arg(where).arg(i), error);
        s.sweep.points.push_back(pointFrom(pf, error));
        // The points are the rates asked, in their order: the first ones where the sweep was stopped.
        if (pf.ok() && s.sweep.points.back().rate != s.rates[size_t(i)])
            pf.fail("rate", QObject::tr("expected %1, the sweep's rate %2").arg(s.rates[size_t(i)]).arg(i));
    }
    if (!f.ok()) return std::nullopt;
    return s;
}

QJsonObject pinJson(const views::ServingPin& p) {
    QJsonObject o;
    if (p.run && p.run->run) {
        QJsonObject r = resultJson(*p.run->run, p.run->workload);
        tagInto(r, p.run->tag);
        o["run"] = r;
    }
    if (p.sweep) o["sweep"] = sweepJson(*p.sweep);
    return o;
}

views::ServingPin pinFrom(const QJsonObject& o, const QString& file, QString* error) {
    views::ServingPin p;
    if (o.contains("run")) {
        views::ShownRun r;
        const QJsonObject ro = o["run"].toObject();
        r.run = resultFrom(ro, file, QStringLiteral("serving.pin.run"), r.workload, error);
        r.tag = tagFrom(ro);
        if (r.run) p.run = std::move(r);
    }
    if (error->isEmpty() && o.contains("sweep"))
        p.sweep = sweepFrom(o["sweep"].toObject(), file, QStringLiteral("serving.pin.sweep"), error);
    if (!error->isEmpty()) return {};
    return p;
}

} // namespace sp::app::detail
