#pragma once
// A planner session on disk (JSON): the scenario being edited (as YAML text, constraints included), the run
// settings, and the results (each searcher's elite plans with their metrics, its curve and counts), the plan
// opened from a file and the selected plan, the Pareto sweep shown (session_pareto.cpp), and the Serving
// tab's inputs and results (session_serving.cpp), and the fleet dock's fleet as shown. Restoring re-evaluates
// the plans with the cost model (deterministic), so the metrics shown are always the model's; the Serving
// tab's runs are kept as they ran. A learning searcher's run keeps what it learned
// (core/searchers/registry.h, learnedStateJson).

#include "core/io/fleetfiles.h"
#include "core/model/disaggplan.h"
#include "core/model/scenario.h"
#include "core/search/engine.h"
#include "session_serving.h"

#include <QByteArray>
#include <QPointF>
#include <QString>
#include <QStringList>
#include <QVector>

#include <memory>
#include <optional>
#include <vector>

namespace sp::app {

struct SessionRun {
    QString searcher;
    std::vector<Candidate> elite; ///< best first
    QVector<QPointF> curve;       ///< (evaluations, best feasible throughput) at each improvement
    int64_t evaluations = 0;
    double seconds = 0;
    bool stopped = false;
    QString message;
    /// What the searcher learned (rl's carried policy): the window's next Run of it starts from it. A file's
    /// policy that does not read is left out (learnedError says why); the rest of the session opens.
    std::shared_ptr<const LearnedState> learned;
    QString learnedError;
};

/// A point of a saved Pareto series: its plan (batch fixed) and the TPOT target it was searched under.
struct SessionParetoPoint {
    double targetTpotMs = 0; ///< 0: none (the loose end)
    Plan plan;
    std::string searcher;
};

struct SessionDisaggPoint {
    double targetTpotMs = 0;
    DisaggPlan plan; ///< batches fixed
};

/// The Pareto tab's sweep: every series drawn and the scenario each was swept on.
struct SessionPareto {
    QString name;      ///< the swept scenario's name, as the chart's title gives it
    Scenario scenario; ///< the scenario swept
    std::vector<SessionParetoPoint> frontier, megatron;
    std::vector<SessionDisaggPoint> disaggregated;
    bool disaggregatedChecked = false;
    std::vector<double> targetsMs;
    double minTpotMs = 0, maxTpotMs = 0;
    int64_t evaluations = 0;
    int searches = 0;
    double seconds = 0;
    bool stopped = false;
    QString overlayName; ///< empty: no overlay
    Scenario overlayScenario;
    std::vector<SessionParetoPoint> overlay;
};

struct Session {
    static constexpr int kVersion = 1;
    QString scenarioPath; ///< where the scenario came from (informational)
    Scenario scenario;    ///< as edited
    bool hasResults = false;
    Scenario resultsScenario; ///< the scenario the results were computed on
    QStringList searchers;
    int64_t budget = 2000;
    uint64_t seed = 1;
    std::vector<SessionRun> runs;
    std::optional<Plan> openedPlan;
    QString openedLabel;
    std::optional<Plan> selectedPlan;
    std::optional<SessionPareto> pareto;
    std::optional<SessionServing> serving; ///< absent in sessions saved before the tab was kept
    /// The fleet dock's fleet as shown (edited rates and SLOs, N-1) and the file it came from; absent when
    /// the dock showed none.
    std::optional<Fleet> fleet;
    QString fleetOrigin;

    QByteArray toJson() const;
    /// Parses a session file's content. `file` names it in errors and is the base for relative paths.
    static std::optional<Session> fromJson(const QByteArray& json, const QString& file, QString* error);
};

} // namespace sp::app
