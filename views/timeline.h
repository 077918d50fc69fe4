#pragma once
// The step timeline of a plan (after Nsight Systems' timeline): one lane per pipeline stage, operators on its
// compute track and collectives on its communication track, on a common time axis, from the cost model's
// breakdown (per-layer operator and collective times, times the layers of each stage). Stages shorter than
// the slowest idle at the end of the step: the bubble, marked. Hover an item for its numbers.
//
// The breakdown does not report communication overlapped with compute yet: every collective runs after the
// operator before it. TimelineOptions::hiddenMs is the hook for it: a collective with hidden time starts that
// much earlier, under the operator before it, drawn hatched.
//
// Under speculative decoding the last stage's step is the verify pass (the layers, embedding and head, as
// without) followed by the draft passes: one block of Breakdown::draftMs, in its own colour.

#include "core/model/scenario.h"
#include "views/planrecord.h"

#include <QWidget>

#include <functional>
#include <memory>
#include <vector>

class QLabel;
class QComboBox;
class QScrollArea;

namespace sp::views {

struct TimelineItem {
    /// Draft: speculative decoding's draft passes of the step (the last stage, after the verify pass).
    enum class Kind { Compute, Memory, Comm, Pipeline, Bubble, Draft };
    Kind kind = Kind::Compute;
    int stage = 0;
    int layer = -1; ///< model layer index (-1: embedding, head, pipeline, bubble)
    double startMs = 0, durMs = 0;
    double hiddenMs = 0; ///< of a collective: the part under compute (0 until the breakdown reports it)
    QString name;        ///< operator or collective
    QString detail;      ///< choice, link, group, bytes
    LinkClass link = LinkClass::Local;
    double endMs() const { return startMs + durMs; }
};

struct TimelineOptions {
    /// The part of a collective hidden under the compute before it, in ms (the overlap hook). Default: none.
    std::function<double(const CommCost&)> hiddenMs;
};

struct Timeline {
    int stages = 1;
    double stepMs = 0;                       ///< the slowest stage
    std::vector<double> stageMs;             ///< busy time of each stage
    std::vector<TimelineItem> items;         ///< sorted by stage, then track, then start
    std::vector<std::pair<int, int>> layers; ///< (first layer, count) per stage
};

/// Lays out one step of every stage (decode step, or prefill pass with `prefill`).
Timeline buildTimeline(const Scenario& s, const PlanRecord& plan, bool prefill,
                       const TimelineOptions& o = {});

class TimelineCanvas : public QWidget {
    Q_OBJECT
public:
    explicit TimelineCanvas(QWidget* parent = nullptr);
    void setPlan(std::shared_ptr<const Scenario> scenario, PlanRecordPtr plan);
    void setPrefill(bool prefill);
    const Timeline& timeline() const { return m_timeline; }
    /// The item under a point (index into timeline().items), or -1.
    int itemAt(const QPoint& pos) const;
    QString itemDescription(int index) const;
    /// Whether the step shows speculative decoding's draft passes (a Draft item).
    bool hasDraft() const;
    /// Outlines an item and reports it as hovered (-1: none), as the mouse would (the screenshot mode).
    void setHoveredItem(int index);
    /// Where an item is drawn in a canvas rectangle.
    QRectF itemRect(int index, const QRect& canvas) const;
    void paintTo(QPainter& p, const QRect& rect) const;
    /// Pixels left and right of the time axis (stage labels, margin).
    static constexpr int kLabelsW = 120, kRightW = 16;
    QSize sizeHint() const override { return {900, 420}; }
    QSize minimumSizeHint() const override { return {360, 200}; }

signals:
    void hovered(int index);
    /// Ctrl+wheel: zoom the time axis by 1.25 per step about this x (canvas coordinates).
    void zoomRequested(int steps, int x);

protected:
    void paintEvent(QPaintEvent*) override;
    void mouseMoveEvent(QMouseEvent* e) override;
    void leaveEvent(QEvent*) override;
    void wheelEvent(QWheelEvent* e) override;

private:
    struct Frame {
        QRect plot;
        double msPerPx = 1;
        int laneH = 0, trackH = 0;
    };
    Frame frame(const QRect& r) const;
    QRectF itemRectIn(const Frame& f, int index) const;
    void rebuild();

    std::shared_ptr<const Scenario> m_scenario;
    PlanRecordPtr m_plan;
    bool m_prefill = false;
    Timeline m_timeline;
    int m_hover = -1;
};

/// The canvas with the phase picker, a hover line and the zoom of the time axis: 1 fits the step to the
/// view; more widens the canvas, which scrolls (Ctrl+wheel, the + and - buttons or keys; 0 or Fit resets).
class TimelineView : public QWidget {
    Q_OBJECT
public:
    explicit TimelineView(QWidget* parent = nullptr);
    TimelineCanvas* canvas() const { return m_canvas; }
    void setPlan(std::shared_ptr<const Scenario> scenario, PlanRecordPtr plan);
    static constexpr double kMaxZoom = 256;
    double zoom() const { return m_zoom; }
    /// Zooms the time axis, keeping the time under `anchor` (x in the view's viewport; -1: its middle) in
    /// place.
    void setZoom(double zoom, int anchor = -1);

protected:
    bool eventFilter(QObject* watched, QEvent* e) override;

private:
    void applyZoom();

    TimelineCanvas* m_canvas = nullptr;
    QComboBox* m_phase = nullptr;
    QLabel* m_info = nullptr;
    QLabel* m_zoomLabel = nullptr;
    QScrollArea* m_scroll = nullptr;
    PlanRecordPtr m_plan;
    double m_zoom = 1;
};

} // namespace sp::views
