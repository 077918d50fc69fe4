#pragma once
// The throughput-interactivity Pareto front (core/searchers/pareto.h) as a chart: tokens/s per GPU against
// tokens/s per user, one scatter series per layout family ("TP", "attention-DP + EP", ...), the Megatron
// recipe's frontier as a dashed grey line, and the run controls (points, budget per search, start, stop).
//
// Beside them, optionally: the disaggregated frontier at the same TPOT targets
// (core/searchers/disagg_search.h), triangles, each with its split and its gain over the aggregated frontier
// at that TPOT; and the frontier of another scenario (an overlay, e.g. H100 against H200), a solid line named
// after it.
//
// Points arrive as the sweep finds them (addPoint); they are buffered and a single-shot 40 ms timer moves
// them into the series, as in SearchChart. setResult() replaces them with the final frontier, dominated
// points dropped. The widget runs nothing itself: the main window's ParetoRunner does (app/gui).

#include "core/searchers/disagg_search.h"
#include "core/searchers/pareto.h"

#include <QHash>
#include <QTimer>
#include <QVector>
#include <QWidget>

#include <optional>
#include <vector>

class QCheckBox;
class QChart;
class QChartView;
class QLabel;
class QLineSeries;
class QLogValueAxis;
class QPushButton;
class QScatterSeries;
class QSpinBox;

namespace sp::views {

class MessageBanner;

class ParetoView : public QWidget {
    Q_OBJECT
public:
    /// The plot's least height, px: below it the page scrolls.
    static constexpr int kMinPlotHeight = 260;
    explicit ParetoView(QWidget* parent = nullptr);
    ~ParetoView() override;

    /// Removes every point of the current scenario (a new scenario or a new sweep); the overlay stays.
    void clear();
    /// Buffers a point the sweep found (megatron: of the recipe's frontier).
    void addPoint(const ParetoPoint& point, bool megatron);
    /// The sweep's end: its frontier replaces the points shown.
    void setResult(const ParetoResult& result);
    /// Enables Start or Stop, and says what runs.
    void setRunning(bool running);
    void setStatus(const QString& text);
    /// The name of the scenario swept: the chart's title (and so the exported image's); clear() empties it.
    void setScenarioName(const QString& name);
    QString scenarioName() const { return m_scenarioName; }
    /// Marks the sweep shown stale (the scenario changed since): a warning above the chart saying `why`, with
    /// Rerun (startRequested); an empty `why` clears it, as clear() and a new sweep do.
    void setStale(const QString& why);
    bool isStale() const;
    MessageBanner* staleBanner() const { return m_staleBanner; }
    /// The text of the tooltip at a position of the plot widget's viewport: the nearest point drawn within
    /// reach of its marker (searched, Megatron, disaggregated or overlay), topmost first; empty when none is.
    QString pointToolTip(const QPoint& viewportPos) const;

    /// The disaggregated frontier of the sweep shown (replaces the previous one).
    void setDisaggregated(const std::vector<DisaggFrontierPoint>& points);
    /// Another scenario's frontier, drawn as a line named `name`; replaces the previous overlay.
    void setOverlay(const QString& name, const ParetoResult& result);
    void clearOverlay();
    /// The overlay's name; empty when there is none.
    QString overlayName() const { return m_overlayName; }
    /// The overlay's points drawn.
    const std::vector<ParetoPoint>& overlayPoints() const { return m_overlay; }
    /// While an overlay sweep runs, its controls are disabled.
    void setOverlayRunning(bool running);

    /// "Compare with disaggregated serving" is ticked.
    bool disaggregated() const;
    void setDisaggregatedChecked(bool on);
    /// Gain of a disaggregated point over the aggregated frontier's best plan under the same TPOT target;
    /// 0 when that frontier has none.
    double disaggregatedGain(const DisaggFrontierPoint& p) const;
    const std::vector<DisaggFrontierPoint>& disaggregatedPoints() const { return m_disagg; }
    /// Selects the disaggregated point at `index` (a click on its triangle does; -1 or an index out of
    /// range clears), drawn selected; the Serving tab may serve it. A new frontier, clear() or a click on a
    /// searched point clears it.
    void selectDisaggregated(int index);
    /// The disaggregated point selected, or null.
    const DisaggFrontierPoint* selectedDisaggregated() const;

    int points() const;
    int64_t budget() const;
    /// The layout families shown, in the order they first appeared.
    QStringList families() const;
    /// Points drawn in a family's series (0 until the first redraw); "megatron" for the recipe's,
    /// "disaggregated" for the disaggregated frontier's, "overlay" for the overlay's.
    int drawnPoints(const QString& family) const;
    /// The widget to render when exporting an image.
    QWidget* plotWidget() const;
    /// The last sweep's result (setResult), or null.
    const ParetoResult* result() const { return m_result ? &*m_result : nullptr; }
    /// Every series drawn as CSV (core paretoCsv): the sweep's, the disaggregated and the overlay's.
    std::string csv(const Model* model) const;

protected:
    bool eventFilter(QObject* watched, QEvent* e) override;

signals:
    void startRequested(int points, qint64 budget);
    void stopRequested();
    /// Export (PNG, SVG or CSV) was asked for; enabled once a sweep has ended.
    void exportRequested();
    /// A point of the searched frontier was clicked.
    void planClicked(const sp::ParetoPoint& point);
    /// The disaggregated point selected changed (selectedDisaggregated; null: none), or the points it is
    /// chosen from did (setDisaggregated, clear).
    void disaggregatedSelected();
    void redrawn();
    /// "Overlay scenario..." was clicked: the main window asks for a file and sweeps it.
    void overlayRequested();
    /// "Clear overlay" was clicked (the overlay is already gone).
    void overlayCleared();

private:
    struct Family {
        QScatterSeries* series = nullptr;
        std::vector<ParetoPoint> points;
    };
    Family& family(const QString& name);
    void buildComparison(); ///< the disaggregated and overlay series and controls (pareto_compare.cpp)
    /// Draws the comparison series and extends the axes' range by their points.
    void drawComparison(double& x0, double& x1, double& y0, double& y1);
    void scheduleRedraw();
    void redraw();
    /// The comparison series' tooltips (pareto_compare.cpp).
    static QString disaggregatedToolTip(const DisaggFrontierPoint& p, double gain);
    QString overlayToolTip(const ParetoPoint& p) const;

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
    QCheckBox* m_disaggBox = nullptr;
    QPushButton* m_overlayButton = nullptr;
    QPushButton* m_clearOverlay = nullptr;
    QScatterSeries* m_disaggDots = nullptr;
    std::vector<DisaggFrontierPoint> m_disagg;
    int m_selectedDisagg = -1;
    QLineSeries* m_overlayLine = nullptr;
    QScatterSeries* m_overlayDots = nullptr;
    QString m_overlayName;
    std::vector<ParetoPoint> m_overlay;
    std::optional<ParetoResult> m_result;
    QLabel* m_status = nullptr;
    MessageBanner* m_staleBanner = nullptr;
    QString m_scenarioName;
    QTimer m_flush;
    bool m_dirty = false;
};

/// A stable colour per layout family name.
QColor layoutFamilyColor(const QString& family);

} // namespace sp::views
