#include "session_serving.h"
#include "session_serving_p.h"

#include "core/io/formats.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QObject>
#include <QtEndian>

#include <bit>
#include <cmath>
#include <limits>

namespace sp::app {

namespace detail {

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
    for (size_t i = 0; i < v.size(); ++i) qToLittleEndian(std::bit_cast<quint64>(v[i]), bytes.data() + i * 8);
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

std::shared_ptr<const SimResult> resultFrom(const QJsonObject& o, const QString& file, const QString& where,
                                            Workload& w, QString* error) {
    Fields f(o, where, error);
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
        r->timeline.push_back(
            {p[0].toDouble(), int64_t(p[1].toDouble()), int64_t(p[2].toDouble()), p[3].toDouble()});
    }
    if (!f.ok()) return nullptr;
    return r;
}

QJsonObject costJson(const ServingCost& c) {
    return QJsonObject{{"priced", c.priced},
                       {"powered", c.powered},
                       {"usd_per_gpu_hour", c.usdPerGpuHour},
                       {"usd_per_hour", c.usdPerHour},
                       {"usd_per_million_tokens", c.usdPerMillionTokens},
                       {"tdp_w", c.tdpW},
                       {"megawatts", c.megawatts},
                       {"tokens_per_s_per_megawatt", c.tokensPerSPerMegawatt},
                       {"price_source", QString::fromStdString(c.priceSource)}};
}

ServingCost costFrom(Fields& parent, const char* key, QString* error) {
    ServingCost c;
    if (!parent.has(key)) return c; // an answer saved before costs were kept: none shown
    Fields f(parent.object(key), parent.at(key), error);
    c.priced = f.flag("priced");
    c.powered = f.flag("powered");
    c.usdPerGpuHour = f.number("usd_per_gpu_hour", 0);
    c.usdPerHour = f.number("usd_per_hour", 0);
    c.usdPerMillionTokens = f.number("usd_per_million_tokens", 0);
    c.tdpW = f.number("tdp_w", 0);
    c.megawatts = f.number("megawatts", 0);
    c.tokensPerSPerMegawatt = f.number("tokens_per_s_per_megawatt", 0);
    c.priceSource = f.text("price_source");
    return c;
}

QJsonObject planJson(const Plan& p) {
    return QJsonDocument::fromJson(QByteArray::fromStdString(toJson(p))).object();
}

Plan planFrom(Fields& f, const char* key, const QString& file) {
    const QByteArray text = QJsonDocument(f.object(key)).toJson(QJsonDocument::Compact);
    if (!f.ok()) return {};
    auto p = parsePlan(text.toStdString(), file.toStdString());
    if (!p) {
        f.fail(key, QString::fromStdString(p.error().str()));
        return {};
    }
    return p.value();
}

QJsonObject capacityJson(const views::CapacityAnswer& a, const Workload& w) {
    const MaxRateRow& r = a.row;
    const MaxRate& m = r.rate;
    QJsonObject o{{"workload_yaml", QString::fromStdString(toYaml(w))},
                  {"ok", m.ok},
                  {"error", QString::fromStdString(m.error)},
                  {"rate", m.rate},
                  {"rate_above", m.rateAbove},
                  {"binding", QString::fromStdString(m.binding)},
                  {"why", QString::fromStdString(m.why)},
                  {"simulations", m.simulations},
                  {"stopped", m.stopped},
                  {"gpu", QString::fromStdString(r.gpu)},
                  {"gpus", r.gpus},
                  {"plan_name", QString::fromStdString(r.planName)},
                  {"plan", planJson(r.plan)},
                  {"row_error", QString::fromStdString(r.error)},
                  {"row_stopped", r.stopped},
                  {"output_tokens_per_s", r.outputTokensPerS},
                  {"cost", costJson(r.cost)},
                  {"requests_given", qint64(a.requestsGiven)},
                  {"requests_at_rate", qint64(a.requestsAtRate)}};
    return o;
}

std::optional<views::CapacityAnswer> capacityFrom(const QJsonObject& o, const QString& file, Workload& w,
                                                  QString* error) {
    Fields f(o, QStringLiteral("serving.capacity"), error);
    const auto workload = workloadFrom(f, file);
    if (!workload) return std::nullopt;
    w = *workload;
    views::CapacityAnswer a;
    MaxRateRow& r = a.row;
    MaxRate& m = r.rate;
    m.ok = f.flag("ok");
    m.error = f.text("error");
    m.rate = f.number("rate", 0);
    m.rateAbove = f.number("rate_above", 0);
    m.binding = f.text("binding");
    m.why = f.text("why");
    m.simulations = int(std::min<int64_t>(f.integer("simulations"), std::numeric_limits<int>::max()));
    m.stopped = f.flag("stopped");
    // The row's fields: absent in sessions saved before capacity went through maxRatePerGpu.
    r.gpu = f.text("gpu");
    r.gpus = int(std::min<int64_t>(f.optionalInteger("gpus", 0), std::numeric_limits<int>::max()));
    r.planName = f.text("plan_name");
    if (f.has("plan")) r.plan = planFrom(f, "plan", file);
    r.error = f.has("row_error") ? f.text("row_error") : m.error;
    r.stopped = f.flag("row_stopped");
    r.outputTokensPerS = f.optionalNumber("output_tokens_per_s", 0, 0);
    r.cost = costFrom(f, "cost", error);
    a.requestsGiven = f.optionalInteger("requests_given", 0);
    a.requestsAtRate = f.optionalInteger("requests_at_rate", 0);
    if (!f.ok()) return std::nullopt;
    return a;
}

QJsonObject sizingJson(const views::GpuSizing& z) {
    QJsonArray gpus, rows;
    for (const std::string& id : z.gpus) gpus.append(QString::fromStdString(id));
    for (const CapacityRow& r : z.rows) {
        QJsonObject row{{"gpu", QString::fromStdString(r.gpu)},
                        {"met", r.met},
                        {"why", QString::fromStdString(r.why)},
                        {"nodes", r.nodes},
                        {"gpus", r.gpus},
                        {"slo_met", r.slo.met},
                        {"ttft_ms", r.slo.ttftMs},
                        {"tpot_ms", r.slo.tpotMs},
                        {"ttft_ratio", r.slo.ttftRatio},
                        {"tpot_ratio", r.slo.tpotRatio},
                        {"binding", QString::fromStdString(r.slo.binding)},
                        {"cost", costJson(r.cost)},
                        {"simulations", r.simulations}};
        if (r.gpus > 0) row["plan"] = planJson(r.plan);
        rows.append(row);
    }
    return QJsonObject{{"workload_yaml", QString::fromStdString(toYaml(z.workload))},
                       {"rate", z.rate},
                       {"gpus", gpus},
                       {"requests", qint64(z.requests)},
                       {"moe", z.moe},
                       {"stopped", z.stopped},
                       {"rows", rows}};
}

std::optional<views::GpuSizing> sizingFrom(const QJsonObject& o, const QString& file, QString* error) {
    Fields f(o, QStringLiteral("serving.sizing"), error);
    const auto workload = workloadFrom(f, file);
    if (!workload) return std::nullopt;
    views::GpuSizing z;
    z.workload = *workload;
    z.rate = f.number("rate", 0);
    z.requests = f.integer("requests");
    z.moe = f.flag("moe");
    z.stopped = f.flag("stopped");
    for (const QJsonValue& id : f.array("gpus")) z.gpus.push_back(id.toString().toStdString());
    const QJsonArray rows = f.array("rows");
    for (qsizetype i = 0; i < rows.size() && f.ok(); ++i) {
        const QString where = QStringLiteral("serving.sizing.rows[%1]").arg(i);
        if (!rows[i].isObject()) {
            f.fail("rows", QObject::tr("row %1: expected an object").arg(i));
            break;
        }
        Fields rf(rows[i].toObject(), where, error);
        CapacityRow r;
        r.gpu = rf.text("gpu");
        r.met = rf.flag("met");
        r.why = rf.text("why");
        r.nodes = int(std::min<int64_t>(rf.integer("nodes"), std::numeric_limits<int>::max()));
        r.gpus = int(std::min<int64_t>(rf.integer("gpus"), std::numeric_limits<int>::max()));
        r.slo.met = rf.flag("slo_met");
        r.slo.ttftMs = rf.number("ttft_ms", 0);
        r.slo.tpotMs = rf.number("tpot_ms", 0);
        r.slo.ttftRatio = rf.number("ttft_ratio", 0);
        r.slo.tpotRatio = rf.number("tpot_ratio", 0);
        r.slo.binding = rf.text("binding");
        r.cost = costFrom(rf, "cost", error);
        r.simulations = int(std::min<int64_t>(rf.integer("simulations"), std::numeric_limits<int>::max()));
        if (r.gpus > 0) r.plan = planFrom(rf, "plan", file);
        z.rows.push_back(std::move(r));
    }
    if (!f.ok()) return std::nullopt;
    return z;
}

} // namespace detail

using namespace detail;

std::vector<double> thinSorted(const std::vector<double>& sorted, size_t max) {
    const size_t n = sorted.size();
    if (n <= max || max == 0) return sorted;
    std::vector<double> out(max);
    // Quantile j + 1 of max: the value of rank ceil((j + 1) n / max), in whole numbers.
    for (size_t j = 0; j < max; ++j) out[j] = sorted[((j + 1) * n + max - 1) / max - 1];
    return out;
}

QJsonObject servingJson(const SessionServing& s) {
    QJsonArray sizingGpus;
    for (const std::string& id : s.sizingGpus) sizingGpus.append(QString::fromStdString(id));
    QJsonObject o{{"source", s.useTrace ? QStringLiteral("trace") : QStringLiteral("rate")},
                  {"rate", s.rate},
                  {"requests", qint64(s.requests)},
                  {"trace", s.tracePath},
                  {"plan", views::servedPlanKey(s.served)},
                  {"sizing_rate", s.sizingRate},
                  {"sizing_gpus", sizingGpus},
                  {"page", s.sizingShown  ? QStringLiteral("sizing")
                           : s.sweepShown ? QStringLiteral("sweep")
                                          : QStringLiteral("simulation")},
                  {"sweep_from", s.sweepFrom},
                  {"sweep_to", s.sweepTo},
                  {"sweep_steps", s.sweepSteps}};
    if (s.servedSplitTpotMs > 0) o["pareto_split_tpot_ms"] = s.servedSplitTpotMs;
    if (s.result) {
        QJsonObject r = resultJson(*s.result, s.resultWorkload);
        tagInto(r, views::RunTag{s.resultPlan, s.resultLoad, s.resultGpus});
        o["result"] = r;
    }
    if (s.sweep) o["sweep"] = sweepJson(*s.sweep);
    if (!s.pin.empty()) o["pin"] = pinJson(s.pin);
    if (s.capacity) o["capacity"] = capacityJson(*s.capacity, s.capacityWorkload);
    if (s.sizing) o["sizing"] = sizingJson(*s.sizing);
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
    // The inputs this version added: absent in older sessions, which keep the defaults.
    if (f.has("plan")) {
        if (auto p = views::servedPlanFromKey(o["plan"].toString()))
            s.served = *p;
        else
            f.fail("plan", QObject::tr("expected 'best', 'selected', 'megatron' or 'pareto-split'"));
    }
    s.servedSplitTpotMs = f.optionalNumber("pareto_split_tpot_ms", 0, 0);
    if (f.has("sizing_rate")) {
        if (const double rate = f.number("sizing_rate", 0); rate > 0)
            s.sizingRate = rate;
        else
            f.fail("sizing_rate", QObject::tr("expected requests/s > 0"));
    }
    if (f.has("sizing_gpus"))
        for (const QJsonValue& id : f.array("sizing_gpus"))
            s.sizingGpus.push_back(id.toString().toStdString());
    s.sizingShown = o["page"].toString() == QLatin1String("sizing");
    s.sweepShown = o["page"].toString() == QLatin1String("sweep");
    if (f.has("sweep_from") || f.has("sweep_to") || f.has("sweep_steps")) {
        s.sweepFrom = f.number("sweep_from", 0.001);
        s.sweepTo = f.number("sweep_to", 0.001);
        s.sweepSteps = int(std::min<int64_t>(f.integer("sweep_steps", 1), 100));
        s.sweepRangeSet = true;
    }
    // The inputs are kept whatever the results are; results that do not read are left out whole.
    QString results;
    if (o.contains("result")) {
        s.result = resultFrom(o["result"].toObject(), file, QStringLiteral("serving.result"),
                              s.resultWorkload, &results);
        const views::RunTag tag = tagFrom(o["result"].toObject());
        s.resultPlan = tag.plan, s.resultLoad = tag.load, s.resultGpus = tag.gpus;
    }
    if (results.isEmpty() && o.contains("capacity"))
        s.capacity = capacityFrom(o["capacity"].toObject(), file, s.capacityWorkload, &results);
    if (results.isEmpty() && o.contains("sizing"))
        s.sizing = sizingFrom(o["sizing"].toObject(), file, &results);
    if (results.isEmpty() && o.contains("sweep"))
        s.sweep = sweepFrom(o["sweep"].toObject(), file, QStringLiteral("serving.sweep"), &results);
    if (results.isEmpty() && o.contains("pin")) s.pin = pinFrom(o["pin"].toObject(), file, &results);
    if (!results.isEmpty()) {
        s.result = nullptr;
        s.resultPlan.clear();
        s.resultLoad.clear();
        s.resultGpus.clear();
        s.capacity.reset();
        s.sizing.reset();
        s.sweep.reset();
        s.pin = {};
    }
    if (error.isEmpty()) error = results;
    if (!error.isEmpty()) s.error = QStringLiteral("%1: %2").arg(file, error);
    return s;
}

} // namespace sp::app
