#pragma once
// Shared by the widget suites (tst_views, tst_plan_views): the sample scenarios and hand-made plans.

#include "core/io/formats.h"
#include "core/model/plan.h"

#include <QString>
#include <QtGlobal>

namespace sp::testing {

inline const QString kSamples = QStringLiteral(SHARDPLAN_SAMPLES_DIR);

/// A sample scenario by file name; a broken sample stops the suite.
inline Scenario scenario(const char* name) {
    auto s = loadScenario((kSamples + QStringLiteral("/scenarios/") + QLatin1String(name)).toStdString());
    if (!s) qFatal("%s", s.error().str().c_str());
    return s.value();
}

inline Plan planWith(Degrees d, std::array<Axis, 3> mesh = {Axis::TP, Axis::DP, Axis::PP}) {
    Plan p = Plan::megatronChoices(d);
    p.meshOrder = mesh;
    return p;
}

} // namespace sp::testing
