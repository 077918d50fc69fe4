#include "views/servinganswers.h"

#include "views/format.h"

#include <QLocale>
#include <QObject>

namespace sp::views {

QString servedPlanKey(ServedPlan p) {
    switch (p) {
    case ServedPlan::Best:
        return QStringLiteral("best");
    case ServedPlan::Selected:
        return QStringLiteral("selected");
    case ServedPlan::Megatron:
        return QStringLiteral("megatron");
    case ServedPlan::ParetoSplit:
        return QStringLiteral("pareto-split");
    }
    return QString();
}

std::optional<ServedPlan> servedPlanFromKey(const QString& key) {
    for (ServedPlan p :
         {ServedPlan::Best, ServedPlan::Selected, ServedPlan::Megatron, ServedPlan::ParetoSplit})
        if (servedPlanKey(p) == key) return p;
    return std::nullopt;
}

QString sloPercentileName(double percentile) {
    return percentile > 0 ? QStringLiteral("p%1").arg(percentile) : QObject::tr("mean");
}

QString sloText(const Workload& w) {
    const auto ms = [](double v) {
        return v > 0 ? QLocale(QLocale::English).toString(v, 'g', 4) + QStringLiteral(" ms")
                     : QStringLiteral("-");
    };
    return QObject::tr("%1 TTFT %2, TPOT %3")
        .arg(sloPercentileName(w.sloPercentile), ms(w.ttftMs), ms(w.tpotMs));
}

QString formatGrouped(double v, int decimals) {
    return QLocale(QLocale::English).toString(v, 'f', decimals);
}

QString planShapeText(const Plan& p, bool moe) {
    // As EliteModel's Degrees column: plans that differ only by their split or drafting are told apart.
    QString text = degreesText(p.degrees, moe);
    if (!p.stageLayers.empty()) text += QStringLiteral(" | layers ") + qs(stageLayersText(p));
    if (p.spec.on()) text += QStringLiteral(" | ") + qs(specText(p.spec));
    return text;
}

CapacityAnswer capacityAnswer(const MaxRateRow& row, int64_t requestsGiven) {
    CapacityAnswer a;
    a.row = row;
    a.requestsGiven = requestsGiven;
    a.requestsAtRate = row.rate.at ? row.rate.at->requests : 0;
    a.row.rate.at = a.row.rate.above = nullptr;
    return a;
}

CapacityOptions sizingOptions(double rate, const std::vector<std::string>& gpus, int64_t requests) {
    CapacityOptions o;
    o.rate = rate;
    o.gpus = gpus;
    o.sim.requests = requests;
    return o;
}

} // namespace sp::views
