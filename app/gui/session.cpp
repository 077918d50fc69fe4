#include "session.h"

#include "core/common/error.h"
#include "core/io/formats.h"
#include "core/searchers/registry.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

#include <algorithm>
#include <cmath>

namespace sp::app {

namespace {

QJsonObject planJson(const Plan& p) {
    return QJsonDocument::fromJson(QByteArray::fromStdString(toJson(p))).object();
}

std::optional<Plan> planFrom(const QJsonValue& v, const QString& file, QString* error) {
    const QByteArray text = QJsonDocument(v.toObject()).toJson(QJsonDocument::Compact);
    auto r = parsePlan(text.toStdString(), file.toStdString());
    if (!r) {
        if (error) *error = QString::fromStdString(r.error().str());
        return std::nullopt;
    }
    return r.value();
}

QJsonObject metricsJson(const Metrics& m) {
    return QJsonObject{{"feasible", m.feasible},
                       {"throughput_tokens_per_s", m.throughput},
                       {"throughput_per_gpu", m.throughputPerGpu},
                       {"ttft_ms", m.ttftMs},
                       {"tpot_ms", m.tpotMs},
                       {"batch", qint64(m.batch)},
                       {"memory_per_gpu_gib", m.memoryPerGpuGiB},
                       {"roofline_fraction", m.rooflineFraction},
                       {"violation", QString::fromStdString(m.violation)}};
}

void putScenario(QJsonObject& o, const Scenario& s) {
    o["scenario_yaml"] = QString::fromStdString(toYaml(s));
    o["constraints_yaml"] = QString::fromStdString(toYaml(s.constraints));
}

std::optional<Scenario> scenarioFrom(const QJsonObject& o, const QString& where, const QString& file,
                                     QString* error) {
    auto s = parseScenario(o["scenario_yaml"].toString().toStdString(), file.toStdString());
    if (!s) {
        *error = QObject::tr("%1.scenario_yaml: %2").arg(where, QString::fromStdString(s.error().str()));
        return std::nullopt;
    }
    if (o.contains("constraints_yaml")) {
        auto c = parseConstraints(o["constraints_yaml"].toString().toStdString(), file.toStdString());
        if (!c) {
            *error =
                QObject::tr("%1.constraints_yaml: %2").arg(where, QString::fromStdString(c.error().str()));
            return std::nullopt;
        }
        s.value().constraints = c.value();
    }
    return s.value();
}

/// A finite number >= 0 (a TPOT target: null for none), or nullopt.
std::optional<double> nonNegative(const QJsonValue& v) {
    if (v.isNull() || v.isUndefined()) return 0.0;
    if (!v.isDouble() || !std::isfinite(v.toDouble()) || v.toDouble() < 0) return std::nullopt;
    return v.toDouble();
}

QJsonArray paretoPointsJson(const std::vector<SessionParetoPoint>& points) {
    QJsonArray a;
    for (const auto& p : points)
        a.append(
            QJsonObject{{"target_tpot_ms", p.targetTpotMs > 0 ? QJsonValue(p.targetTpotMs) : QJsonValue()},
                        {"searcher", QString::fromStdString(p.searcher)},
                        {"plan", planJson(p.plan)}});
    return a;
}

bool paretoPointsFrom(const QJsonValue& v, const QString& where, const QString& file,
                      std::vector<SessionParetoPoint>& out, QString* error) {
    if (!v.isUndefined() && !v.isArray()) {
        *error = QObject::tr("%1: expected a list of points").arg(where);
        return false;
    }
    const QJsonArray a = v.toArray();
    for (qsizetype i = 0; i < a.size(); ++i) {
        const QString at = QStringLiteral("%1[%2]").arg(where).arg(i);
        const QJsonObject o = a[i].toObject();
        SessionParetoPoint p;
        const auto target = nonNegative(o["target_tpot_ms"]);
        if (!target) {
            *error = QObject::tr("%1.target_tpot_ms: expected a number of ms >= 0, or null").arg(at);
            return false;
        }
        p.targetTpotMs = *target;
        p.searcher = o["searcher"].toString().toStdString();
        QString perr;
        auto plan = planFrom(o["plan"], file, &perr);
        if (!plan) {
            *error = QStringLiteral("%1.plan: %2").arg(at, perr);
            return false;
        }
        p.plan = *plan;
        out.push_back(std::move(p));
    }
    return true;
}

QJsonObject paretoJson(const SessionPareto& p) {
    QJsonObject o;
    o["name"] = p.name;
    putScenario(o, p.scenario);
    QJsonArray targets;
    for (double t : p.targetsMs) targets.append(t);
    o["targets_tpot_ms"] = targets;
    o["min_tpot_ms"] = p.minTpotMs;
    o["max_tpot_ms"] = p.maxTpotMs;
    o["evaluations"] = qint64(p.evaluations);
    o["searches"] = p.searches;
    o["seconds"] = p.seconds;
    o["stopped"] = p.stopped;
    o["frontier"] = paretoPointsJson(p.frontier);
    o["megatron"] = paretoPointsJson(p.megatron);
    o["disaggregated_checked"] = p.disaggregatedChecked;
    QJsonArray dis;
    for (const auto& d : p.disaggregated)
        dis.append(QJsonObject{{"target_tpot_ms", d.targetTpotMs},
                               {"prefill_nodes", d.plan.prefill.nodes},
                               {"prefill", planJson(d.plan.prefill.plan)},
                               {"decode_nodes", d.plan.decode.nodes},
                               {"decode", planJson(d.plan.decode.plan)}});
    o["disaggregated"] = dis;
    if (!p.overlayName.isEmpty()) {
        QJsonObject ov;
        ov["name"] = p.overlayName;
        putScenario(ov, p.overlayScenario);
        ov["frontier"] = paretoPointsJson(p.overlay);
        o["overlay"] = ov;
    }
    return o;
}

std::optional<SessionPareto> paretoFrom(const QJsonObject& o, const QString& file, QString* error) {
    SessionPareto p;
    p.name = o["name"].toString();
    auto s = scenarioFrom(o, QStringLiteral("pareto"), file, error);
    if (!s) return std::nullopt;
    p.scenario = *s;
    for (const QJsonValue& t : o["targets_tpot_ms"].toArray()) {
        const auto v = nonNegative(t);
        if (!v || *v <= 0) {
            *error = QObject::tr("pareto.targets_tpot_ms: expected positive numbers of ms");
            return std::nullopt;
        }
        p.targetsMs.push_back(*v);
    }
    const auto minT = nonNegative(o["min_tpot_ms"]), maxT = nonNegative(o["max_tpot_ms"]),
               seconds = nonNegative(o["seconds"]);
    if (!minT || !maxT || !seconds) {
        *error = QObject::tr("pareto: min_tpot_ms, max_tpot_ms and seconds must be numbers >= 0");
        return std::nullopt;
    }
    p.minTpotMs = *minT, p.maxTpotMs = *maxT, p.seconds = *seconds;
    p.evaluations = std::max<qint64>(0, o["evaluations"].toInteger());
    p.searches = std::max(0, o["searches"].toInt());
    p.stopped = o["stopped"].toBool();
    p.disaggregatedChecked = o["disaggregated_checked"].toBool();
    if (!paretoPointsFrom(o["frontier"], QStringLiteral("pareto.frontier"), file, p.frontier, error) ||
        !paretoPointsFrom(o["megatron"], QStringLiteral("pareto.megatron"), file, p.megatron, error))
        return std::nullopt;
    const QJsonArray dis = o["disaggregated"].toArray();
    for (qsizetype i = 0; i < dis.size(); ++i) {
        const QString at = QStringLiteral("pareto.disaggregated[%1]").arg(i);
        const QJsonObject d = dis[i].toObject();
        const auto target = nonNegative(d["target_tpot_ms"]);
        if (!target || *target <= 0) {
            *error = QObject::tr("%1.target_tpot_ms: expected a positive number of ms").arg(at);
            return std::nullopt;
        }
        // Each pool's plan in the form every plan of a session has (planJson): a dense model's plan keeps its
        // fields too, so it comes back as it was.
        SessionDisaggPoint point{*target, {}};
        for (auto [name, pool] : {std::pair{QStringLiteral("prefill"), &point.plan.prefill},
                                  std::pair{QStringLiteral("decode"), &point.plan.decode}}) {
            const QJsonValue nodes = d[name + QStringLiteral("_nodes")];
            if (!nodes.isDouble() || nodes.toDouble() < 1 ||
                nodes.toDouble() != std::floor(nodes.toDouble()) || nodes.toDouble() > 1e6) {
                *error = QObject::tr("%1.%2_nodes: expected a whole number of nodes >= 1").arg(at, name);
                return std::nullopt;
            }
            pool->nodes = nodes.toInt();
            QString perr;
            auto plan = planFrom(d[name], file, &perr);
            if (!plan) {
                *error = QStringLiteral("%1.%2: %3").arg(at, name, perr);
                return std::nullopt;
            }
            pool->plan = *plan;
        }
        p.disaggregated.push_back(std::move(point));
    }
    if (o.contains("overlay")) {
        const QJsonObject ov = o["overlay"].toObject();
        p.overlayName = ov["name"].toString();
        if (p.overlayName.isEmpty()) {
            *error = QObject::tr("pareto.overlay.name: expected the overlaid scenario's name");
            return std::nullopt;
        }
        auto os = scenarioFrom(ov, QStringLiteral("pareto.overlay"), file, error);
        if (!os) return std::nullopt;
        p.overlayScenario = *os;
        if (!paretoPointsFrom(ov["frontier"], QStringLiteral("pareto.overlay.frontier"), file, p.overlay,
                              error))
            return std::nullopt;
    }
    return p;
}

} // namespace

QByteArray Session::toJson() const {
    QJsonObject root;
    root["version"] = kVersion;
    root["kind"] = QStringLiteral("shardplanner-session");
    root["scenario_path"] = scenarioPath;
    root["scenario_yaml"] = QString::fromStdString(toYaml(scenario));
    root["constraints_yaml"] = QString::fromStdString(toYaml(scenario.constraints));
    root["run"] = QJsonObject{{"searchers", QJsonArray::fromStringList(searchers)},
                              {"budget", qint64(budget)},
                              {"seed", QString::number(seed)}};
    if (hasResults) {
        QJsonObject results;
        results["scenario_yaml"] = QString::fromStdString(toYaml(resultsScenario));
        QJsonArray rs;
        for (const SessionRun& r : runs) {
            QJsonArray elite;
            for (const Candidate& c : r.elite) {
                QJsonArray choices;
                for (int x : c.choices) choices.append(x);
                elite.append(QJsonObject{
                    {"plan", planJson(c.plan)}, {"choices", choices}, {"metrics", metricsJson(c.metrics)}});
            }
            QJsonArray curve;
            for (const QPointF& p : r.curve) curve.append(QJsonArray{qint64(p.x()), p.y()});
            QJsonObject ro{{"searcher", r.searcher}, {"evaluations", qint64(r.evaluations)},
                           {"seconds", r.seconds},   {"stopped", r.stopped},
                           {"message", r.message},   {"curve", curve},
                           {"elite", elite}};
            if (r.learned)
                if (const std::string text = learnedStateJson(*r.learned); !text.empty())
                    ro["learned"] = QJsonDocument::fromJson(QByteArray::fromStdString(text)).object();
            rs.append(ro);
        }
        results["runs"] = rs;
        if (openedPlan)
            results["opened_plan"] = QJsonObject{{"label", openedLabel}, {"plan", planJson(*openedPlan)}};
        if (selectedPlan) results["selected_plan"] = planJson(*selectedPlan);
        root["results"] = results;
    }
    if (pareto) root["pareto"] = paretoJson(*pareto);
    if (serving) root["serving"] = servingJson(*serving);
    if (fleet)
        root["fleet"] =
            QJsonObject{{"origin", fleetOrigin}, {"fleet_yaml", QString::fromStdString(toYaml(*fleet))}};
    return QJsonDocument(root).toJson(QJsonDocument::Indented);
}

std::optional<Session> Session::fromJson(const QByteArray& json, const QString& file, QString* error) {
    auto fail = [&](const QString& msg) -> std::optional<Session> {
        if (error) *error = QStringLiteral("%1: %2").arg(file, msg);
        return std::nullopt;
    };
    QJsonParseError pe;
    const QJsonDocument doc = QJsonDocument::fromJson(json, &pe);
    if (doc.isNull())
        return fail(QObject::tr("not JSON: %1 at offset %2").arg(pe.errorString()).arg(pe.offset));
    const QJsonObject root = doc.object();
    if (root["kind"].toString() != QLatin1String("shardplanner-session"))
        return fail(QObject::tr("kind: expected 'shardplanner-session'"));
    if (root["version"].toInt() != kVersion) return fail(QObject::tr("version: expected %1").arg(kVersion));
    Session s;
    s.scenarioPath = root["scenario_path"].toString();
    auto scen = parseScenario(root["scenario_yaml"].toString().toStdString(), file.toStdString());
    if (!scen) return fail(QObject::tr("scenario_yaml: %1").arg(QString::fromStdString(scen.error().str())));
    s.scenario = scen.value();
    if (root.contains("constraints_yaml")) {
        auto c = parseConstraints(root["constraints_yaml"].toString().toStdString(), file.toStdString());
        if (!c) return fail(QObject::tr("constraints_yaml: %1").arg(QString::fromStdString(c.error().str())));
        s.scenario.constraints = c.value();
    }
    const QJsonObject run = root["run"].toObject();
    for (const QJsonValue& v : run["searchers"].toArray()) s.searchers << v.toString();
    s.budget = run["budget"].toInteger(2000);
    s.seed = run["seed"].toString(QStringLiteral("1")).toULongLong();
    if (root.contains("results")) {
        const QJsonObject results = root["results"].toObject();
        auto rsc = parseScenario(results["scenario_yaml"].toString().toStdString(), file.toStdString());
        if (!rsc)
            return fail(
                QObject::tr("results.scenario_yaml: %1").arg(QString::fromStdString(rsc.error().str())));
        s.resultsScenario = rsc.value();
        s.hasResults = true;
        for (const QJsonValue& rv : results["runs"].toArray()) {
            const QJsonObject ro = rv.toObject();
            SessionRun r;
            r.searcher = ro["searcher"].toString();
            r.evaluations = ro["evaluations"].toInteger();
            r.seconds = ro["seconds"].toDouble();
            r.stopped = ro["stopped"].toBool();
            r.message = ro["message"].toString();
            for (const QJsonValue& p : ro["curve"].toArray())
                r.curve.append(QPointF(double(p.toArray().at(0).toInteger()), p.toArray().at(1).toDouble()));
            for (const QJsonValue& ev : ro["elite"].toArray()) {
                const QJsonObject eo = ev.toObject();
                QString perr;
                auto plan = planFrom(eo["plan"], file, &perr);
                if (!plan) return fail(QObject::tr("results: %1").arg(perr));
                Candidate c;
                c.plan = *plan;
                for (const QJsonValue& x : eo["choices"].toArray()) c.choices.push_back(x.toInt());
                r.elite.push_back(std::move(c)); // metrics: re-evaluated by the caller
            }
            if (ro.contains("learned")) {
                const std::string at =
                    file.toStdString() + " results.runs[" + std::to_string(s.runs.size()) + "].learned";
                try {
                    r.learned = parseLearnedState(
                        QJsonDocument(ro["learned"].toObject()).toJson(QJsonDocument::Compact).toStdString(),
                        at);
                } catch (const InputError& e) {
                    r.learnedError = QString::fromStdString(e.what());
                }
            }
            s.runs.push_back(std::move(r));
        }
        if (results.contains("opened_plan")) {
            const QJsonObject o = results["opened_plan"].toObject();
            QString perr;
            s.openedPlan = planFrom(o["plan"], file, &perr);
            if (!s.openedPlan) return fail(QObject::tr("opened_plan: %1").arg(perr));
            s.openedLabel = o["label"].toString();
        }
        if (results.contains("selected_plan")) {
            QString perr;
            s.selectedPlan = planFrom(results["selected_plan"], file, &perr);
            if (!s.selectedPlan) return fail(QObject::tr("selected_plan: %1").arg(perr));
        }
    }
    if (root.contains("pareto")) {
        QString perr;
        s.pareto = paretoFrom(root["pareto"].toObject(), file, &perr);
        if (!s.pareto) return fail(perr);
    }
    if (root.contains("serving")) {
        if (!root["serving"].isObject()) return fail(QObject::tr("serving: expected an object"));
        s.serving = servingFrom(root["serving"].toObject(), file);
    }
    if (root.contains("fleet")) {
        const QJsonObject f = root["fleet"].toObject();
        auto fleet = parseFleet(f["fleet_yaml"].toString().toStdString(), file.toStdString());
        if (!fleet) return fail(QObject::tr("fleet: %1").arg(QString::fromStdString(fleet.error().str())));
        s.fleet = fleet.value();
        s.fleetOrigin = f["origin"].toString();
    }
    return s;
}

} // namespace sp::app
