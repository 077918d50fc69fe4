#pragma once
// The summary under the topology's nodes (TopologyCanvas): memory per GPU, the step's communication on
// each link class and the operators' compute- and memory-bound time, as labelled bars with their figures.

#include "views/planrecord.h"

#include <QColor>
#include <QCoreApplication>

class QFont;
class QPainter;
class QRect;

namespace sp::views {

/// Memory colours: weights, KV cache, activations, reserve (the GPUs' bars, the summary and the legend).
inline const QColor kMemWeights(0x3b, 0x82, 0xf6), kMemKv(0x8b, 0x5c, 0xf6), kMemAct(0xf5, 0x9e, 0x0b),
    kMemReserve(0x9c, 0xa3, 0xaf);

/// Weights, KV cache, activations and reserve as consecutive shares of the usable capacity.
void fillMemoryParts(QPainter& p, const QRect& bar, const Metrics& m);

struct TopologySummary {
    Q_DECLARE_TR_FUNCTIONS(TopologySummary)
public:
    const PlanRecord& plan;
    bool prefill;
    const double (&share)[3]; ///< share of the step on each link class (LinkClass order)
    const double (&bytes)[3]; ///< bytes per GPU per step on each link class

    /// The height paint() needs for a font.
    static int height(const QFont& font);
    /// Draws the three bars centred in r (nothing when r is too narrow for readable bars).
    void paint(QPainter& p, const QRect& r, const QFont& font) const;
};

} // namespace sp::views
