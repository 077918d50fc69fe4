#pragma once
// Live chart of a search: best feasible throughput against evaluations, one step line per searcher, with the
// Megatron plan and the roofline bound as dashed horizontal lines.
//
// Points arrive often (every progress event of every searcher); they are buffered and a single-shot 40 ms
// timer moves the buffer into the series, so the chart redraws at most 25 times a second whatever the event
// rate.

#include <QHash>
#include <QPointF>
#include <QRectF>
#include <QTimer>
#include <QVector>
#include <QWidget>

#include <cstdint>
#include <utility>
#include <vector>

class QChart;
class QChartView;
class QCheckBox;
class QLineSeries;
class QAbstractAxis;
class QValueAxis;
class QLabel;

namespace sp::views {

class SearchChart : public QWidget {
    Q_OBJECT
public:
    explicit SearchChart(QWidget* parent = nullptr);
    ~SearchChart() override;

    /// Removes every searcher line (the reference lines stay).
    void clear();
    /// The Megatron plan's and the roofline's throughput (tokens/s); 0 hides a line.
    void setReference(double megatron, double roofline);
    /// The x range to show from the start (e.g. the budget), so the axis does not jump as points arrive.
    void setBudgetHint(double evaluations);
    /// Buffers improvement points (evaluations, best throughput) of a searcher.
    void addPoints(const QString& searcher, const std::vector<std::pair<int64_t, double>>& points);
    /// Buffers the searcher's current evaluation count: its line extends flat to it.
    void setProgress(const QString& searcher, int64_t evaluations);
    /// Replaces a searcher's whole curve at once, once it has ended (or restoring a session).
    void setCurve(const QString& searcher, const QVector<QPointF>& improvements, int64_t evaluations);

    void setLogX(bool on);
    bool logX() const { return m_logX; }

    QStringList searchers() const;
    /// The improvement points held (pending ones included).
    QVector<QPointF> curve(const QString& searcher) const;
    /// Evaluations reached by a searcher (pending included).
    int64_t evaluations(const QString& searcher) const;
    /// Points currently drawn in the searcher's series (0 until the first redraw).
    int drawnPoints(const QString& searcher) const;
    /// The legend text of a searcher's line, or of "megatron" / "roofline" (empty: not in the legend).
    QString legendText(const QString& series) const;
    bool rooflineAboveAxis() const;
    /// Redraws done so far (tests check the throttle with it).
    int redraws() const { return m_redraws; }
    /// The widget to render when exporting an image: the chart with its legend.
    QWidget* plotWidget() const;
    /// The legend beside the chart: one entry a line, none cut (a QChart legend keeps one row and elides its
    /// entries: ten searchers did not fit). Rich text.
    QLabel* legend() const { return m_legend; }

signals:
    /// After each redraw.
    void redrawn();
    void logXChanged(bool on);

private:
    struct Line {
        QLineSeries* series = nullptr;
        QVector<QPointF> improvements;
        int64_t lastX = 0;
        bool dirty = false;
        bool finished = false; ///< the run ended (setCurve)
    };
    Line& line(const QString& searcher);
    void scheduleRedraw();
    void redraw();
    void rebuildXAxis();
    void updateAxes();
    void updateLegend();

    QChart* m_chart = nullptr;
    QChartView* m_view = nullptr;
    QCheckBox* m_logBox = nullptr;
    QCheckBox* m_rooflineBox = nullptr;
    QLabel* m_summary = nullptr;
    QLabel* m_legend = nullptr;
    QWidget* m_plot = nullptr; ///< the chart view and its legend
    QAbstractAxis* m_x = nullptr;
    QValueAxis* m_y = nullptr;
    QLineSeries* m_megatronLine = nullptr;
    QLineSeries* m_rooflineLine = nullptr;
    QHash<QString, Line> m_lines;
    QStringList m_order;
    QTimer m_flush;
    double m_megatron = 0, m_roofline = 0, m_budget = 100;
    double m_yScale = 1;
    QRectF m_lastRange;       ///< the ranges last applied (x0, y0, x1, y1)
    bool m_rangeDirty = true; ///< apply the ranges even if unchanged (axis rebuilt, references changed)
    bool m_logX = true;       ///< most improvements come early: log by default
    int m_redraws = 0;
};

} // namespace sp::views
