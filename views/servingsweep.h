#pragma once
// The Serving tab's "Rate sweep" page: the plan served simulated at evenly spaced rates (sweepRates,
// core/sim/sweep.h), drawn as p50 and p99 TTFT and TPOT against the rate with the workload's SLO lines, and
// the highest rate meeting the SLOs marked. A pinned sweep (ServingView's Pin) is overlaid in grey, dashed,
// both named by what differs, with a table of their answers. The range starts from the capacity answer or the
// plan's analytical rate until the user sets one. The widget runs nothing: the main window's ServingRunner
// does, and Stop (Esc) is the window's.

#include "views/servingcompare.h"

#include <QWidget>

#include <optional>

class QAbstractAxis;
class QChart;
class QDoubleSpinBox;
class QLabel;
class QLineSeries;
class QLogValueAxis;
class QPushButton;
class QSpinBox;
class QValueAxis;

namespace sp::views {

class ServingSweepView : public QWidget {
    Q_OBJECT
public:
    explicit ServingSweepView(QWidget* parent = nullptr);

    double from() const;
    double to() const;
    int steps() const;
    /// The inputs (a session's, or a test's): the range is then the user's, never suggested again.
    void setRange(double from, double to, int steps);
    /// The rates asked: `steps` from `from` to `to` (empty when from > to).
    std::vector<double> rates() const;
    /// A range around a rate the plan sustains (the capacity answer, or its analytical rate): up to
    /// `top` requests/s in the steps set, while the user has not set a range.
    void suggestTop(double top);
    /// Disables the inputs and Sweep while the window's runner works.
    void setRunning(bool running);

    /// Draws a sweep (done, stopped, or its points so far while it runs); nullopt clears.
    void setSweep(std::optional<ShownSweep> sweep);
    const std::optional<ShownSweep>& sweep() const { return m_sweep; }
    /// Overlays a pinned sweep (null: none).
    void setPinned(const std::optional<ShownSweep>& pinned);
    void clear();

    QString summaryText() const;
    QString compareText() const;
    // The series, for tests: p50 and p99 of TTFT and TPOT, the SLO lines, the mark at the highest rate
    // meeting the SLOs, and the pinned sweep's p50 and p99.
    QLineSeries* ttftP50() const { return m_ttft.p50; }
    QLineSeries* ttftP99() const { return m_ttft.p99; }
    QLineSeries* tpotP50() const { return m_tpot.p50; }
    QLineSeries* tpotP99() const { return m_tpot.p99; }
    QLineSeries* ttftSlo() const { return m_ttft.slo; }
    QLineSeries* tpotSlo() const { return m_tpot.slo; }
    QLineSeries* ttftBest() const { return m_ttft.best; }
    QLineSeries* tpotBest() const { return m_tpot.best; }
    QLineSeries* pinnedTtftP99() const { return m_ttft.pinP99; }
    QLineSeries* pinnedTpotP99() const { return m_tpot.pinP99; }
    QWidget* plotWidget() const { return m_plots; }

signals:
    /// "Sweep" was clicked.
    void sweepRequested();

private:
    /// One chart: a figure against the rate.
    struct Plot {
        QChart* chart = nullptr;
        QValueAxis* x = nullptr;
        QAbstractAxis* y = nullptr; ///< log for TTFT (it grows by orders past the capacity), linear for TPOT
        QLineSeries *p50 = nullptr, *p99 = nullptr, *slo = nullptr, *best = nullptr;
        QLineSeries *pinP50 = nullptr, *pinP99 = nullptr, *pinBest = nullptr;
    };
    Plot makePlot(const QString& what, const QColor& color, bool log);
    void redraw();
    void drawPlot(Plot& p, bool ttft, const QString& currentName, const QString& pinnedName);
    void updateSummary();

    QDoubleSpinBox* m_from = nullptr;
    QDoubleSpinBox* m_to = nullptr;
    QSpinBox* m_steps = nullptr;
    QPushButton* m_run = nullptr;
    QLabel* m_summary = nullptr;
    ServingCompareTable* m_compare = nullptr;
    QWidget* m_plots = nullptr;
    Plot m_ttft, m_tpot;
    std::optional<ShownSweep> m_sweep, m_pinned;
    bool m_touched = false; ///< the user (or a session) set the range
    bool m_setting = false; ///< the range changes by suggestTop or setRange
};

} // namespace sp::views
