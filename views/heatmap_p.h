#pragma once
// Shared by the sharding heatmap's files (heatmap.cpp, heatmap_paint.cpp, heatmap_tooltip.cpp): how the
// cost model's breakdown rows map to operators and layers.

#include "core/cost/costmodel.h"
#include "core/model/plan.h"
#include "views/format.h"

#include <QString>

#include <algorithm>
#include <vector>

namespace sp::views::sharding {

/// The operator whose output layout a collective converts (the one that triggers it).
inline QString producerOf(const CommCost& c) {
    if (c.layer == LayerKind::Embedding) return QStringLiteral("embedding");
    if (c.layer == LayerKind::Head) return QStringLiteral("lm_head");
    const QString w = qs(c.where);
    return w.section(QStringLiteral(" -> "), 0, 0).section(QLatin1Char(' '), 0, 0);
}

/// A breakdown row's time per layer: rows of a layer group are weighted by its share of the slowest stage's
/// layers of that kind (OpCost::groupShare).
inline double perLayerMs(double timeMs, double groupShare) {
    return groupShare > 0 ? timeMs / groupShare : timeMs;
}

/// The layer group of each of the model's `layers` layers (all 0 without groups; a plan whose groups do
/// not cover the model keeps its last group for the rest, as Plan::choicesAt does).
inline std::vector<int> layerGroupOfLayer(const Plan& plan, int layers) {
    std::vector<int> out(size_t(std::max(0, layers)), 0);
    int l = 0;
    for (size_t g = 0; g < plan.layerGroups.size(); ++g)
        for (int i = 0; i < plan.layerGroups[g].layers && l < layers; ++i) out[size_t(l++)] = int(g);
    for (; l < layers && !plan.layerGroups.empty(); ++l) out[size_t(l)] = int(plan.layerGroups.size()) - 1;
    return out;
}

} // namespace sp::views::sharding
