#pragma once
// The cluster topology: nodes as boxes with their GPUs, coloured by pipeline stage, a memory bar under each
// GPU, NVLink rails and the network fabric shaded by the share of the step spent communicating on them.
// Hovering a GPU outlines its TP, DP and (MoE) EP groups.

#include "core/model/scenario.h"
#include "views/planrecord.h"

#include <QWidget>

#include <memory>
#include <optional>
#include <utility>
#include <vector>

class QLabel;
class QScrollArea;

namespace sp::views {

class TopologyCanvas : public QWidget {
    Q_OBJECT
public:
    explicit TopologyCanvas(QWidget* parent = nullptr);
    /// The smallest GPU cell the layout may shrink to; larger values zoom in (the canvas grows and scrolls;
    /// drag to pan, Ctrl+wheel to zoom). Cells are as large as the visible part allows, at least this.
    static constexpr int kFitCell = 3;
    void setMinCell(int px);
    int minCell() const { return m_minCell; }
    /// Fits the whole cluster in the visible part (its scroll area's viewport), at cells of kFitCell or more;
    /// the summary and the legend follow below when they do not fit too. Zooming leaves it.
    void fit();
    bool fitted() const { return m_fit; }
    /// The size of the GPU cells as drawn now.
    int cell() const;

    void setPlan(std::shared_ptr<const Scenario> scenario, PlanRecordPtr plan);
    void setPrefill(bool prefill);
    /// The GPU whose groups are outlined (-1: none). Hovering sets it.
    void setHoveredGpu(int gpu);
    int hoveredGpu() const { return m_hover; }
    /// The GPUs outlined for the hovered GPU's group along TP, DP or EP (empty when nothing is hovered).
    std::vector<int> outlined(Axis axis) const;
    /// A one-line description of a GPU: node, stage, indices, groups.
    QString gpuDescription(int gpu) const;
    /// GPU under a point, or -1.
    int gpuAt(const QPoint& pos) const;
    /// Where a GPU is drawn for a given canvas rectangle.
    QRect gpuRect(int gpu, const QRect& canvas) const;

    /// Share of the step time on each link class, and bytes per GPU per step.
    double linkShare(LinkClass l) const;
    double linkBytes(LinkClass l) const;

    /// Paints the canvas laid out in `rect`; only what meets `exposed` (default: all of it) is drawn.
    void paintTo(QPainter& p, const QRect& rect, const QRect& exposed = {}) const;
    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;
    /// The height at which the smallest readable GPU cells fit this width (larger clusters scroll).
    int minimumHeightFor(int width) const;
    /// The width the smallest cells need (a node wider than the view scrolls sideways).
    int minimumWidthNeeded() const;
    /// Where the summary (memory, communication and operator bars) and the legend are drawn.
    QRect summaryRect(const QRect& canvas) const;
    QRect legendRect(const QRect& canvas) const;

signals:
    void hoveredGpuChanged(int gpu);
    void zoomChanged();
    /// A drag asks the view to scroll by this many pixels.
    void panRequested(QPoint delta);

protected:
    void paintEvent(QPaintEvent*) override;
    void mouseMoveEvent(QMouseEvent* e) override;
    void mousePressEvent(QMouseEvent* e) override;
    void mouseReleaseEvent(QMouseEvent* e) override;
    void wheelEvent(QWheelEvent* e) override;
    void leaveEvent(QEvent*) override;
    bool event(QEvent* e) override;
    void resizeEvent(QResizeEvent*) override;

private:
    struct Geometry {
        QRect title, nodes, legend, summary; ///< summary: memory and link bars under the nodes (when room)
        int nodeCols = 1, nodeRows = 1, gpuCols = 1, gpuRows = 1;
        int cell = 0, barGap = 0, barH = 0, gap = 0, pad = 0, labelH = 0, railH = 0;
        int nodeW = 0, nodeH = 0, nodeGapX = 0, nodeGapY = 0;
        QRect nodeRect(int node) const;
        /// Cell size and the frames around it (labels, padding, rails: thinner at small cells).
        void setCell(int s, int lineH, bool multi);
    };
    /// The layout in `r`, computed once per rectangle, zoom and plan (painting asks for it per GPU).
    const Geometry& geometry(const QRect& r) const;
    Geometry computeGeometry(const QRect& r) const;
    QRect cellRect(const Geometry& g, int gpu) const;
    /// Nodes [first, last) whose rows meet the vertical span [top, bottom].
    std::pair<int, int> nodesBetween(const Geometry& g, int top, int bottom) const;
    int visibleHeight() const;
    void relayout();
    void recompute();
    int summaryHeight() const;

    std::shared_ptr<const Scenario> m_scenario;
    PlanRecordPtr m_plan;
    bool m_prefill = false;
    int m_hover = -1;
    int m_minCell = 12;
    bool m_fit = false;
    std::optional<QPoint> m_dragFrom;
    double m_share[3] = {0, 0, 0};
    double m_bytes[3] = {0, 0, 0};
    /// The last layouts computed, with what they depend on besides the rectangle (a 65,536-GPU cluster
    /// took 250 ms to switch to when each GPU's cell computed the layout again).
    struct CachedGeometry {
        QRect rect;
        QSize widget; ///< Fit fills the visible part when asked for the whole canvas
        int minCell = 0, visible = 0, lineH = 0;
        bool fit = false;
        const Scenario* scenario = nullptr;
        Geometry g;
    };
    mutable std::vector<CachedGeometry> m_geometries;
    std::vector<uint16_t> m_stage; ///< each GPU's pipeline stage, per plan
};

/// The canvas with a hint line, in a scroll area for very large clusters.
class TopologyView : public QWidget {
    Q_OBJECT
public:
    explicit TopologyView(QWidget* parent = nullptr);
    TopologyCanvas* canvas() const { return m_canvas; }
    void setPlan(std::shared_ptr<const Scenario> scenario, PlanRecordPtr plan);

protected:
    bool eventFilter(QObject* watched, QEvent* e) override;

private:
    TopologyCanvas* m_canvas = nullptr;
    QLabel* m_info = nullptr;
    QLabel* m_zoom = nullptr;
    QScrollArea* m_scroll = nullptr;
};

} // namespace sp::views
