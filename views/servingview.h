#pragma once
// The Serving tab: the request-level simulation (core/sim) of a plan the user chooses (the best found, the
// selected, Megatron's, or the disaggregated split selected on the Pareto tab; the tab names it), as charts,
// with its capacity, a sweep over rates and a GPU sizing for a rate. Controls: the plan served, Poisson
// arrivals at a rate or a trace file, the requests to simulate, Run, Capacity (the highest rate under the
// workload's SLOs and what it costs, core/sim/capacity.h), Stop, and Pin / Clear pin. The Simulation page:
// the cumulative distributions of TTFT and TPOT with the workload's SLO as a vertical line (and its
// percentile as a horizontal one), and the run's KV-pool occupancy and queue length over time. The "Rate
// sweep" page: ServingSweepView. The "GPUs for a rate" page: ServingSizingView. Pin keeps the run and the
// sweep shown; the next ones are drawn over them, both named by what differs (servingcompare.h), with a table
// of their figures. The widget runs nothing itself: the main window's ServingRunner does (app/gui). It claims
// no key either: Esc is the window's Stop, which stops whatever runs (one owner, so Qt never finds two
// shortcuts for it).

#include "core/sim/simulator.h"
#include "views/servinganswers.h"
#include "views/servingcompare.h"

#include <QWidget>

#include <memory>
#include <optional>

class QChart;
class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QLineSeries;
class QProgressBar;
class QPushButton;
class QRadioButton;
class QSpinBox;
class QTabWidget;
class QValueAxis;

namespace sp::views {

class ServingSizingView;
class ServingSweepView;

class ServingView : public QWidget {
    Q_OBJECT
public:
    explicit ServingView(QWidget* parent = nullptr);
    ~ServingView() override;

    /// The plan the tab serves (default: the best found, which is Megatron's until a search finds one).
    ServedPlan servedPlan() const;
    void setServedPlan(ServedPlan p);
    /// The plan served, named as the tab shows it ("Best found (sa): pp1 dp2 tp4 ..."), with why it is not
    /// the one chosen when it is not.
    void setPlanName(const QString& text);
    QString planName() const;
    /// Enables "the Pareto point selected" (a disaggregated split), or disables it saying why not (its
    /// tooltip): no split selected on the Pareto tab, or one of the scenario before its edits.
    void setParetoSplitChoice(const QString& unavailable);
    /// The disabled choice's tooltip ("Not available: ..."); empty while it is enabled.
    QString paretoSplitChoiceUnavailable() const;
    /// Disables Capacity saying why (its tooltip): a disaggregated plan has no capacity bisection; empty
    /// enables it.
    void setCapacityUnavailable(const QString& why);

    double rate() const;
    void setRate(double requestsPerS);
    qint64 requests() const;
    void setRequests(qint64 n);
    /// Arrivals from the trace file rather than at the rate.
    bool useTrace() const;
    void setUseTrace(bool on);
    QString tracePath() const;
    void setTracePath(const QString& path);

    /// Enables Stop or Run, Capacity and Find GPUs; the progress bar shows while running.
    void setRunning(bool running);
    bool isRunning() const { return m_running; }
    /// Requests completed of the run's total (0: unknown, a busy bar).
    void setProgress(qint64 completed, qint64 total);
    void setStatus(const QString& text);
    QString status() const;

    /// Draws a finished (or stopped) run named by `tag` (the plan, the rate or trace, the GPUs) against the
    /// workload's SLOs, over the pinned run if there is one.
    void setResult(std::shared_ptr<const SimResult> result, const Workload& workload, const RunTag& tag);
    void setResult(std::shared_ptr<const SimResult> result, const Workload& workload,
                   const QString& planName = {}) {
        setResult(std::move(result), workload, RunTag{planName, {}, {}});
    }
    /// A capacity answer (maxRatePerGpu's row of the plan served), in words, and its run at the highest rate
    /// drawn (row.rate.at) on `gpus` ("8x H200 SXM"); the sweep's range follows it until the user sets one.
    void setCapacity(const MaxRateRow& row, qint64 requestsGiven, const Workload& workload,
                     const QString& gpus = {});
    /// The answer in words only (the charts stay as they are, as when a session restores the answer after
    /// the run it drew).
    void setCapacity(const CapacityAnswer& answer, const Workload& workload);
    /// The GPU sizing page.
    ServingSizingView* sizing() const { return m_sizing; }
    /// The rate sweep page.
    ServingSweepView* sweep() const { return m_sweep; }
    enum class Page { Simulation, Sweep, Sizing };
    void showPage(Page page);
    Page page() const;
    /// Shows the Simulation page, or the "GPUs for a rate" page.
    void showSizing(bool sizing) { showPage(sizing ? Page::Sizing : Page::Simulation); }
    bool showsSizing() const { return page() == Page::Sizing; }
    /// Removes the charts' contents, their SLO lines and ranges, the answers, the sweep and the pin (another
    /// scenario).
    void clear();

    /// Pins the run and the sweep shown (replacing the pin); false when neither is.
    bool pin();
    void clearPin();
    /// A session's pin, drawn under what the tab shows.
    void setPin(ServingPin pin);
    const ServingPin& pinned() const { return m_pin; }
    /// The table of the pinned run and the current, as text ("" without a pinned run): for tests.
    QString runCompareText() const;

    const SimResult* result() const { return m_result.get(); }
    /// What the tab shows, for a session to save and redraw: the run drawn, the workload it is drawn against
    /// (its SLO lines and check) and the plan's name, and the capacity answer with the workload it was
    /// bisected under.
    const std::shared_ptr<const SimResult>& shownResult() const { return m_result; }
    const Workload& resultWorkload() const { return m_resultWorkload; }
    const QString& resultPlanName() const { return m_resultTag.plan; }
    const RunTag& resultTag() const { return m_resultTag; }
    const std::optional<CapacityAnswer>& capacityAnswer() const { return m_capacityAnswer; }
    const Workload& capacityWorkload() const { return m_capacityWorkload; }
    QString summaryText() const;
    QString capacityText() const;
    // The series, for tests and exports.
    QLineSeries* ttftCurve() const { return m_ttft; }
    QLineSeries* tpotCurve() const { return m_tpot; }
    QLineSeries* pinnedTtftCurve() const { return m_pinTtft; }
    QLineSeries* pinnedTpotCurve() const { return m_pinTpot; }
    QLineSeries* ttftSloLine() const { return m_ttftSlo; }
    QLineSeries* tpotSloLine() const { return m_tpotSlo; }
    QLineSeries* kvSeries() const { return m_kv; }
    QLineSeries* queueSeries() const { return m_queue; }
    /// The widget to render when exporting an image (the charts).
    QWidget* plotWidget() const { return m_plots; }

    /// At most this many points draw a CDF (the last is always the maximum, at 1.0).
    static constexpr int kCdfPoints = 400;
    /// The CDF of sorted values as chart points: (v[0], 0), then (v[i], (i + 1) / n) at most kCdfPoints
    /// times, always ending at (v[n-1], 1).
    static QList<QPointF> cdfPoints(const std::vector<double>& sorted);

signals:
    void runRequested();
    void capacityRequested();
    void stopRequested();
    /// "Find GPUs" was clicked on the sizing page.
    void sizeRequested();
    /// "Sweep" was clicked on the rate sweep page.
    void sweepRequested();
    /// The user pinned or cleared the pin: unsaved work.
    void pinChanged();
    /// The plan served changed (by the user or setServedPlan): name it again.
    void servedPlanChanged();
    /// The user chose another plan to serve (not setServedPlan): unsaved work.
    void servedPlanChosen();
    /// "Trace..." was clicked: the main window asks for a file and calls setTracePath.
    void traceRequested();

private:
    // servingcharts.cpp: the Simulation page's charts.
    QWidget* buildCharts();
    void drawRun(const SimResult& s);
    void clearCharts();
    /// The TTFT and TPOT CDFs of the run shown and the pinned run, with the SLO lines.
    void drawCdfs();
    void drawCdf(QChart* chart, QLineSeries* curve, QLineSeries* pinCurve, QLineSeries* slo,
                 QLineSeries* level, bool ttft, const QString& what);
    void updateSourceControls();
    /// The pin's overlays, its table, and the Pin buttons.
    void updatePin();

    QComboBox* m_plan = nullptr;
    QLabel* m_planName = nullptr;
    QRadioButton* m_byRate = nullptr;
    QRadioButton* m_byTrace = nullptr;
    QDoubleSpinBox* m_rate = nullptr;
    QLineEdit* m_trace = nullptr;
    QPushButton* m_traceButton = nullptr;
    QSpinBox* m_requests = nullptr;
    QPushButton* m_run = nullptr;
    QPushButton* m_capacity = nullptr;
    QPushButton* m_stop = nullptr;
    QPushButton* m_pinButton = nullptr;
    QPushButton* m_unpinButton = nullptr;
    QProgressBar* m_progress = nullptr;
    QLabel* m_status = nullptr;
    QTabWidget* m_pages = nullptr;
    QWidget* m_simulationPage = nullptr;
    ServingSizingView* m_sizing = nullptr;
    ServingSweepView* m_sweep = nullptr;
    ServingCompareTable* m_runCompare = nullptr;
    QLabel* m_summary = nullptr;
    QLabel* m_capacityLabel = nullptr;
    QWidget* m_plots = nullptr;
    QChart* m_ttftChart = nullptr;
    QChart* m_tpotChart = nullptr;
    QChart* m_timeChart = nullptr;
    QLineSeries* m_ttft = nullptr;
    QLineSeries* m_tpot = nullptr;
    QLineSeries* m_pinTtft = nullptr;
    QLineSeries* m_pinTpot = nullptr;
    QLineSeries* m_ttftSlo = nullptr;
    QLineSeries* m_tpotSlo = nullptr;
    QLineSeries* m_ttftLevel = nullptr;
    QLineSeries* m_tpotLevel = nullptr;
    QLineSeries* m_kv = nullptr;
    QLineSeries* m_queue = nullptr;
    QValueAxis* m_timeX = nullptr;
    QValueAxis* m_kvAxis = nullptr;
    QValueAxis* m_queueAxis = nullptr;
    std::shared_ptr<const SimResult> m_result;
    Workload m_resultWorkload;
    RunTag m_resultTag;
    ServingPin m_pin;
    std::optional<CapacityAnswer> m_capacityAnswer;
    Workload m_capacityWorkload;
    QString m_capacityUnavailable;
    bool m_running = false;
};

} // namespace sp::views
