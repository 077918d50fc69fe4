#pragma once
// The values that cross threads (worker -> GUI) and the one place their metatypes are registered.

#include "core/search/engine.h"
#include "core/sim/capacity.h"
#include "core/sim/sweep.h"
#include "views/planrecord.h"
#include "views/servinganswers.h"

#include <QMetaType>
#include <QString>

#include <memory>
#include <utility>
#include <vector>

namespace sp::app {

/// One searcher's progress since the last update, coalesced from its Observer events. Immutable once sent.
struct SearchUpdate {
    QString searcher;
    int64_t evaluations = 0;
    double seconds = 0;
    double bestThroughput = 0;
    std::vector<Candidate> elite;                       ///< the latest elite set, best first
    std::vector<std::pair<int64_t, double>> curveDelta; ///< improvements since the previous update
    std::vector<LearningPoint> learningDelta;           ///< learning-curve points since the previous update
    bool final = false;
};
using SearchUpdatePtr = std::shared_ptr<const SearchUpdate>;
using SearchResultPtr = std::shared_ptr<const SearchResult>;
// The Serving tab's (ServingRunner): a simulated run, a capacity answer (with its runs), a rate sweep, a GPU
// sizing.
using SimResultPtr = std::shared_ptr<const SimResult>;
using MaxRateRowPtr = std::shared_ptr<const MaxRateRow>;
using RateSweepPtr = std::shared_ptr<const RateSweep>;
using GpuSizingPtr = std::shared_ptr<const views::GpuSizing>;

/// Registers the metatypes above (idempotent). Called once at startup by the main window.
void registerMetatypes();

} // namespace sp::app

Q_DECLARE_METATYPE(sp::app::SearchUpdatePtr)
Q_DECLARE_METATYPE(sp::app::SearchResultPtr)
Q_DECLARE_METATYPE(sp::views::PlanRecordPtr)
Q_DECLARE_METATYPE(sp::app::SimResultPtr)
Q_DECLARE_METATYPE(sp::app::MaxRateRowPtr)
Q_DECLARE_METATYPE(sp::app::RateSweepPtr)
Q_DECLARE_METATYPE(sp::app::GpuSizingPtr)
