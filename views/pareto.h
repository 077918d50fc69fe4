#pragma once
// The throughput-interactivity Pareto front (core/search/pareto.h) as a chart: tokens/s per GPU against
// tokens/s per user, one scatter series per layout family ("TP", "attention-DP + EP", ...), the Megatron
// recipe's frontier as a dashed grey line, and the run controls (points, budget per search, start, stop).
//
// Points arrive as the sweep finds them (addPoint); they are buffered and a single-shot 40 ms timer moves
// them into the series, as in SearchChart. setResult() replaces them with the final frontier, dominated
// points dropped. The widget runs nothing itself: the main window's ParetoRunner does (app/gui).

#include "core/search/pareto.h"

#include <QHash>
#include <QTimer>
#include <QVector>
#include <QWidget>

#include <optional>
#include <vector>

class QChart;
class QChartView;
class QLabel;
class QLineSeries;
class QLogValueAxis;
class QPushButton;
class QScatterSeries;
class QSpinBox;

namespace sp::views {

class ParetoView : public QWidget {
    Q_OBJECT
public:
    explicit ParetoView(QWidget* parent = nullptr);
    ~ParetoView() override;

    /// Removes every point (a new scenario or a new sweep).
    void clear();
    /// Buffers a point the sweep found (megatron: of the recipe's frontier).
    void addPoint(const ParetoPoint& point, bool megatron);
    /// The sweep's end: its frontier replaces the points shown.
    void setResult(const ParetoResult& result);
    /// Enables Start or Stop, and says what runs.
    void setRunning(bool running);
    void setStatus(const QString& text);

    int points() const;
    int64_t budget() const;
    /// The layout families shown, in the order they first appeared.
    QStringList families() const;
    /// Points drawn in a family's series (0 until the first redraw); "megatron" for the recipe's.
    int drawnPoints(const QString& family) const;
    /// The widget to render when exporting an image.
    QWidget* plotWidget() const;
    /// The last sweep's result (setResult), or null.
    const ParetoResult* result() const { return m_result ? &*m_result : nullptr; }

signals:
    void startRequested(int points, qint64 budget);
    void stopRequested();
    /// Export (PNG, SVG or CSV) was asked for; enabled once a sweep has ended.
    void exportRequested();
    /// A point of the searched frontier was clicked.
    void planClicked(const sp::ParetoPoint& point);
    void redrawn();

private:
    struct Family {
        QScatterSeries* series = nullptr;
        std::vector<ParetoPoint> points;
    };
    Family& family(const QString& name);
    void scheduleRedraw();
    void redraw();

    QChart* m_chart = nullptr;
    QChartView* m_view = nullptr;
    QLogValueAxis* m_x = nullptr;
    QLogValueAxis* m_y = nullptr;
    QLineSeries* m_megatronLine = nullptr;
    QScatterSeries* m_megatronDots = nullptr;
    std::vector<ParetoPoint> m_megatron;
    QHash<QString, Family> m_families;
    QStringList m_order;
    QSpinBox* m_points = nullptr;
    QSpinBox* m_budget = nullptr;
    QPushButton* m_start = nullptr;
    QPushButton* m_stop = nullptr;
    QPushButton* m_export = nullptr;
    std::optional<ParetoResult> m_result;
    QLabel* m_status = nullptr;
    QTimer m_flush;
    bool m_dirty = false;
};

/// A stable colour per layout family name.
QColor layoutFamilyColor(const QString& family);

} // namespace sp::views
