// The topology canvas's geometry (views/topology.h): node and GPU cell sizes for the zoom or Fit, where each
// node, GPU, the summary and the legend go, and which GPU lies under a point.
#include "views/topology.h"

#include "views/topologysummary.h"

#include <QFontMetrics>

#include <algorithm>

namespace sp::views {

QRect TopologyCanvas::Geometry::nodeRect(int node) const {
    const int c = node % nodeCols, r = node / nodeCols;
    const int totalW = nodeCols * nodeW + (nodeCols - 1) * nodeGapX;
    const int x0 = nodes.left() + std::max(0, (nodes.width() - totalW) / 2);
    return QRect(x0 + c * (nodeW + nodeGapX), nodes.top() + r * (nodeH + nodeGapY), nodeW, nodeH);
}

int TopologyCanvas::minimumWidthNeeded() const {
    if (!m_scenario) return 0;
    Geometry g;
    g.gpuCols = std::min(std::max(1, m_scenario->cluster.gpusPerNode), 8);
    g.gpuRows = (std::max(1, m_scenario->cluster.gpusPerNode) + g.gpuCols - 1) / g.gpuCols;
    g.setCell(m_minCell, QFontMetrics(font()).height(), m_scenario->cluster.nodes > 1);
    return g.nodeW + 34; // the margins geometry() keeps around the nodes
}

void TopologyCanvas::Geometry::setCell(int s, int lineH, bool multi) {
    // Large cells get labels and roomy padding; small ones (a large cluster fitted) thin frames, so that
    // a thousand GPUs fit a laptop's tab.
    const bool roomy = s >= 12;
    cell = s;
    labelH = s >= 14 ? lineH + 4 : roomy ? 6 : 2;
    pad = roomy ? 8 : std::max(2, s / 2);
    gap = roomy ? 4 : std::max(1, s / 3);
    barGap = roomy ? 3 : 1;
    barH = roomy ? std::max(4, s / 6) : std::max(1, s / 3);
    railH = roomy ? 7 : std::max(2, s / 2);
    nodeGapX = roomy ? 16 : 6;
    nodeGapY = !multi ? 16 : roomy ? 26 : 8;
    nodeW = 2 * pad + gpuCols * s + (gpuCols - 1) * gap;
    nodeH =
        labelH + pad + gpuRows * (s + barGap + barH) + (gpuRows - 1) * gap + railH + pad + (roomy ? 4 : 1);
}

int TopologyCanvas::visibleHeight() const {
    // In the view the canvas scrolls: what is visible is its scroll area's viewport.
    return parentWidget() ? parentWidget()->height() : height();
}

const TopologyCanvas::Geometry& TopologyCanvas::geometry(const QRect& r) const {
    const int lh = QFontMetrics(font()).height();
    const int visible = m_fit ? visibleHeight() : 0;
    for (const CachedGeometry& c : m_geometries)
        if (c.rect == r && c.widget == size() && c.minCell == m_minCell && c.fit == m_fit &&
            c.visible == visible && c.lineH == lh && c.scenario == m_scenario.get())
            return c.g;
    // A few rectangles are asked for in turn (the canvas's, minimumHeightFor's, an export's).
    if (m_geometries.size() >= 4) m_geometries.erase(m_geometries.begin());
    m_geometries.push_back({r, size(), m_minCell, visible, lh, m_fit, m_scenario.get(), computeGeometry(r)});
    return m_geometries.back().g;
}

TopologyCanvas::Geometry TopologyCanvas::computeGeometry(const QRect& r) const {
    Geometry g;
    const QFontMetrics fm(font());
    const int lh = fm.height();
    g.title = QRect(r.left() + 10, r.top() + 6, r.width() - 20, lh + 6);
    int legendH = 2 * (lh + 8) + 6;
    g.legend = QRect(r.left() + 10, r.bottom() - legendH, r.width() - 20, legendH);
    g.nodes =
        QRect(r.left() + 22, g.title.bottom() + 10, r.width() - 34, g.legend.top() - g.title.bottom() - 20);
    if (!m_scenario) return g;
    // Memory and link bars under the nodes, then the legend. Always drawn: where the canvas is too short
    // for them the canvas grows (minimumHeightFor) and scrolls.
    const int summaryH = summaryHeight();
    const int top = g.title.bottom() + 10, below = 28 + summaryH + 12 + legendH + 6;
    const int N = std::max(1, m_scenario->cluster.nodes), G = std::max(1, m_scenario->cluster.gpusPerNode);
    g.gpuCols = std::min(G, 8);
    g.gpuRows = (G + g.gpuCols - 1) / g.gpuCols;
    const bool multi = N > 1;
    // The largest cell (at least the zoom's smallest) at which the nodes fit the height, in as many columns
    // as fit the width.
    auto columns = [&](const Geometry& t) {
        return std::clamp((g.nodes.width() + t.nodeGapX) / (t.nodeW + t.nodeGapX), 1, N);
    };
    auto gridHeight = [&](const Geometry& t) {
        const int rows = (N + columns(t) - 1) / columns(t);
        return rows * t.nodeH + (rows - 1) * t.nodeGapY;
    };
    auto largestFitting = [&](int height) {
        for (int s = 96; s >= m_minCell; --s) {
            Geometry t = g;
            t.setCell(s, lh, multi);
            if ((t.nodeW <= g.nodes.width() || s == m_minCell) && gridHeight(t) <= height) return s;
        }
        return -1;
    };
    int cell = -1;
    if (m_fit) {
        // Fit: the whole cluster in the visible part, with the summary and the legend if they fit too
        // (else they follow below it).
        const int visible = r.size() == size() || r.height() <= 1 ? visibleHeight() : r.height();
        cell = largestFitting(r.top() + visible - 1 - top - below);
        if (cell < 0) cell = largestFitting(r.top() + visible - 1 - top - 6);
    } else {
        cell = largestFitting(r.bottom() - top - below);
    }
    // Too many for the height even at the smallest cell: that cell, and the canvas grows (minimumHeightFor)
    // and scrolls.
    g.setCell(cell < 0 ? m_minCell : cell, lh, multi);
    g.nodeCols = columns(g);
    g.nodeRows = (N + g.nodeCols - 1) / g.nodeCols;
    const int gridH = g.nodeRows * g.nodeH + (g.nodeRows - 1) * g.nodeGapY;
    // Nodes, summary and legend as one block, a little above the middle of the canvas.
    legendH = g.legend.height();
    const int block = gridH + 28 + summaryH + 12 + legendH;
    const int spare = std::max(0, r.bottom() - 6 - top - block);
    g.nodes.moveTop(top + spare / 3);
    g.nodes.setHeight(gridH);
    g.summary = QRect(g.nodes.left(), g.nodes.top() + gridH + 28, g.nodes.width(), summaryH);
    g.legend.moveTop(g.summary.bottom() + 12);
    return g;
}

int TopologyCanvas::summaryHeight() const {
    return TopologySummary::height(font());
}

QRect TopologyCanvas::summaryRect(const QRect& canvas) const {
    return geometry(canvas).summary;
}
QRect TopologyCanvas::legendRect(const QRect& canvas) const {
    return geometry(canvas).legend;
}

int TopologyCanvas::minimumHeightFor(int w) const {
    if (!m_scenario) return 240;
    const Geometry g =
        geometry(QRect(0, 0, w, 1)); // no height to spare: minimum cells, columns to fit the width
    const QFontMetrics fm(font());
    const int legendH = 2 * (fm.height() + 8) + 6;
    const int gridH = g.nodeRows * g.nodeH + (g.nodeRows - 1) * g.nodeGapY;
    // title, grid, summary, legend, as laid out by geometry()
    return std::max(240, 6 + fm.height() + 6 + 10 + gridH + 28 + summaryHeight() + 12 + legendH + 8);
}

QRect TopologyCanvas::gpuRect(int gpu, const QRect& canvas) const {
    if (!m_scenario) return {};
    return cellRect(geometry(canvas), gpu);
}

QRect TopologyCanvas::cellRect(const Geometry& g, int gpu) const {
    const int G = m_scenario->cluster.gpusPerNode;
    const QRect n = g.nodeRect(gpu / G);
    const int i = gpu % G, c = i % g.gpuCols, r = i / g.gpuCols;
    return QRect(n.left() + g.pad + c * (g.cell + g.gap),
                 n.top() + g.labelH + g.pad + r * (g.cell + g.barGap + g.barH + g.gap), g.cell, g.cell);
}

std::pair<int, int> TopologyCanvas::nodesBetween(const Geometry& g, int top, int bottom) const {
    const int N = m_scenario ? m_scenario->cluster.nodes : 0;
    const int pitch = std::max(1, g.nodeH + g.nodeGapY);
    const int first = std::clamp((top - g.nodes.top() - g.nodeH) / pitch, 0, g.nodeRows);
    const int last = std::clamp((bottom - g.nodes.top()) / pitch + 1, 0, g.nodeRows);
    return {std::min(N, first * g.nodeCols), std::min(N, last * g.nodeCols)};
}

int TopologyCanvas::gpuAt(const QPoint& pos) const {
    if (!m_scenario || !m_plan) return -1;
    const Geometry g = geometry(rect());
    const int G = m_scenario->cluster.gpusPerNode;
    const auto [first, last] = nodesBetween(g, pos.y(), pos.y());
    for (int n = first; n < last; ++n) {
        if (!g.nodeRect(n).contains(pos)) continue;
        for (int i = 0; i < G; ++i)
            if (cellRect(g, n * G + i).adjusted(-2, -2, 2, g.barH + 4).contains(pos)) return n * G + i;
        return -1;
    }
    return -1;
}

} // namespace sp::views
