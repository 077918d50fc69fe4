#include "session.h"

#include "core/io/formats.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

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
            rs.append(QJsonObject{{"searcher", r.searcher},
                                  {"evaluations", qint64(r.evaluations)},
                                  {"seconds", r.seconds},
                                  {"stopped", r.stopped},
                                  {"message", r.message},
                                  {"curve", curve},
                                  {"elite", elite}});
        }
        results["runs"] = rs;
        if (openedPlan)
            results["opened_plan"] = QJsonObject{{"label", openedLabel}, {"plan", planJson(*openedPlan)}};
        if (selectedPlan) results["selected_plan"] = planJson(*selectedPlan);
        root["results"] = results;
    }
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
    return s;
}

} // namespace sp::app
