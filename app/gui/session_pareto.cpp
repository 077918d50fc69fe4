#include "session_pareto.h"

#include "core/cost/costmodel.h"
#include "core/cost/disagg.h"

#include <QObject>

#include <map>
#include <memory>

namespace sp::app {

namespace {

Scenario withTpot(const Scenario& s, double tpotMs) {
    Scenario t = s;
    t.workload.tpotMs = tpotMs;
    return t;
}

std::vector<SessionParetoPoint> savedPoints(const std::vector<ParetoPoint>& points) {
    std::vector<SessionParetoPoint> out;
    for (const auto& p : points) out.push_back({p.targetTpotMs, p.plan, p.searcher});
    return out;
}

/// The points of one series re-evaluated as the sweep evaluated them (its plan under its target and the
/// TTFT SLO), in the order saved.
std::vector<ParetoPoint> reevaluate(const Scenario& s, const std::vector<SessionParetoPoint>& saved,
                                    const QString& series, QStringList& dropped) {
    std::map<double, std::unique_ptr<CostModel>> models; // one per target
    std::vector<ParetoPoint> out;
    for (const auto& sp : saved) {
        auto& m = models[sp.targetTpotMs];
        if (!m) m = std::make_unique<CostModel>(withTpot(s, sp.targetTpotMs));
        if (auto why = m->checkPlan(sp.plan)) {
            dropped << QStringLiteral("%1: %2").arg(series, QString::fromStdString(*why));
            continue;
        }
        const Metrics metrics = m->evaluate(sp.plan);
        if (!metrics.feasible || !(metrics.tpotMs > 0)) {
            dropped
                << QObject::tr("%1: infeasible (%2)").arg(series, QString::fromStdString(metrics.violation));
            continue;
        }
        ParetoPoint p;
        p.targetTpotMs = sp.targetTpotMs;
        p.metrics = metrics;
        p.plan = sp.plan;
        p.plan.batch = metrics.batch;
        p.throughputPerGpu = metrics.throughputPerGpu;
        p.tpotMs = metrics.tpotMs;
        p.ttftMs = metrics.ttftMs;
        p.userTokensPerS = 1000.0 / metrics.tpotMs;
        p.family = layoutFamily(p.plan, s.model);
        p.searcher = sp.searcher;
        out.push_back(std::move(p));
    }
    return out;
}

} // namespace

SessionPareto sessionPareto(const QString& name, const Scenario& scenario, const ParetoResult& r,
                            const std::vector<DisaggFrontierPoint>& disaggregated, bool disaggregatedChecked,
                            const QString& overlayName, const Scenario* overlayScenario,
                            const std::vector<ParetoPoint>& overlay) {
    SessionPareto p;
    p.name = name;
    p.scenario = scenario;
    p.frontier = savedPoints(r.frontier);
    p.megatron = savedPoints(r.megatron);
    for (const auto& d : disaggregated) p.disaggregated.push_back({d.targetTpotMs, d.split.plan});
    p.disaggregatedChecked = disaggregatedChecked;
    p.targetsMs = r.targetsMs;
    p.minTpotMs = r.minTpotMs;
    p.maxTpotMs = r.maxTpotMs;
    p.evaluations = r.evaluations;
    p.searches = r.searches;
    p.seconds = r.seconds;
    p.stopped = r.stopped;
    if (overlayScenario && !overlayName.isEmpty()) {
        p.overlayName = overlayName;
        p.overlayScenario = *overlayScenario;
        p.overlay = savedPoints(overlay);
    }
    return p;
}

RestoredPareto restorePareto(const SessionPareto& saved) {
    RestoredPareto r;
    r.result.frontier = reevaluate(saved.scenario, saved.frontier, QObject::tr("Pareto frontier"), r.dropped);
    r.result.megatron = reevaluate(saved.scenario, saved.megatron, QObject::tr("Pareto Megatron"), r.dropped);
    r.result.targetsMs = saved.targetsMs;
    r.result.minTpotMs = saved.minTpotMs;
    r.result.maxTpotMs = saved.maxTpotMs;
    r.result.evaluations = saved.evaluations;
    r.result.searches = saved.searches;
    r.result.seconds = saved.seconds;
    r.result.stopped = saved.stopped;
    for (const auto& d : saved.disaggregated) {
        const DisaggModel model(withTpot(saved.scenario, d.targetTpotMs));
        const QString series = QObject::tr("Pareto disaggregated");
        std::optional<std::string> why = model.checkScenario();
        if (!why) why = model.checkSplit(d.plan.prefill.nodes, d.plan.decode.nodes);
        if (!why) why = model.prefillModel(d.plan.prefill.nodes).checkPlan(d.plan.prefill.plan);
        if (!why) why = model.decodeModel(d.plan.decode.nodes).checkPlan(d.plan.decode.plan);
        if (why) {
            r.dropped << QStringLiteral("%1: %2").arg(series, QString::fromStdString(*why));
            continue;
        }
        const DisaggMetrics m = model.evaluate(d.plan);
        if (!m.feasible || !(m.tpotMs > 0)) {
            r.dropped << QObject::tr("%1: infeasible (%2)").arg(series, QString::fromStdString(m.violation));
            continue;
        }
        r.disaggregated.push_back(
            {d.targetTpotMs, m.throughputPerGpu, 1000.0 / m.tpotMs, m.usdPerMTokens, {d.plan, m}});
    }
    if (!saved.overlayName.isEmpty())
        r.overlay.frontier =
            reevaluate(saved.overlayScenario, saved.overlay, QObject::tr("Pareto overlay"), r.dropped);
    return r;
}

} // namespace sp::app
