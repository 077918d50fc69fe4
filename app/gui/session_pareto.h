#pragma once
// The Pareto tab's sweep in a session (session.h): taken from what the chart draws, and restored by
// re-evaluating each saved plan under its own TPOT target with the cost model, as the sweep evaluated it. A
// plan that no longer fits its scenario (a file edited by hand, another version) is left out and said so.

#include "session.h"

#include "core/searchers/disagg_search.h"
#include "core/searchers/pareto.h"

#include <QStringList>

namespace sp::app {

/// The sweep as the chart shows it: `name` (its title), the scenario swept, its result and disaggregated
/// frontier, and the overlay (null scenario: none).
SessionPareto sessionPareto(const QString& name, const Scenario& scenario, const ParetoResult& result,
                            const std::vector<DisaggFrontierPoint>& disaggregated, bool disaggregatedChecked,
                            const QString& overlayName, const Scenario* overlayScenario,
                            const std::vector<ParetoPoint>& overlay);

struct RestoredPareto {
    ParetoResult result;
    std::vector<DisaggFrontierPoint> disaggregated;
    ParetoResult overlay; ///< its frontier only
    QStringList dropped;  ///< "pareto frontier: why" for each point left out
};

RestoredPareto restorePareto(const SessionPareto& saved);

} // namespace sp::app
