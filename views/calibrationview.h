#pragma once
// The calibration view (issue 10): measured runs against the cost model's predictions
// (core/cost/calibration.h), a table of the measurements with their errors and a residual plot (error % per
// measurement, before and after a fit), and the fit of the cluster's efficiency factors to them.
//
// It reads the project's measurement format or the JSON of `vllm bench serve --save-result` (which needs the
// scenario and plan it ran with: the base, asked of baseSource()). Fit runs fitEfficiency on the global
// thread pool, starting from the base scenario's cluster efficiency; it takes seconds to minutes and cannot
// be stopped, so the view does not wait for it when destroyed: the worker owns copies of its inputs and its
// result is dropped (a QFutureWatcher child of the view disconnects with it; QCoreApplication waits for the
// pool at exit). "Use the fitted cluster" only emits useFittedRequested(); the main window applies it.

#include "core/cost/calibration.h"

#include <QFutureWatcher>
#include <QString>
#include <QWidget>

#include <functional>
#include <memory>
#include <optional>

class QChart;
class QChartView;
class QLabel;
class QLineSeries;
class QProgressBar;
class QPushButton;
class QScatterSeries;
class QSortFilterProxyModel;
class QStandardItemModel;
class QTableView;
class QValueAxis;

namespace sp::views {

class MessageBanner;

class CalibrationView : public QWidget {
    Q_OBJECT
public:
    /// The scenario and plan a `vllm bench` JSON ran with, and whose cluster efficiency a fit starts from.
    struct Base {
        Scenario scenario;
        Plan plan;
    };
    using BaseSource = std::function<std::optional<Base>()>;

    enum Column { Id, Metric, Measured, Predicted, Error, Fitted, LeaveOneOut, LeaveSourceOut, ColumnCount };
    /// The number of a cell (an error as a fraction: predicted / measured - 1), for sorting and tests.
    static constexpr int ValueRole = Qt::UserRole + 1;

    /// `samplesDir` holds the models/ and clusters/ that measurement files name.
    explicit CalibrationView(const QString& samplesDir, QWidget* parent = nullptr);
    ~CalibrationView() override;

    /// Where the base comes from (the main window: its edited scenario and shown plan). Unset or nullopt:
    /// JSON files cannot be read, and a fit starts from each file's own first cluster.
    void setBaseSource(BaseSource source) { m_baseSource = std::move(source); }

    /// Reads a measurement file (.json: `vllm bench serve --save-result`, else the project's YAML) and shows
    /// it. On error: false, the message in the banner, the previous measurements kept.
    bool loadFile(const QString& path);
    /// Shows a set of cases (any earlier fit is dropped). `origin` names it in the header.
    void setCalibrationSet(const CalibrationSet& set, const QString& origin);
    /// Starts a fit of the shown cases (no-op while one runs). Emits fitFinished() or shows the error.
    void fit();
    /// Asks the running fit to stop (the Fit button reads "Stop" while one runs; Esc); it ends within one
    /// pass over the runs and emits fitStopped(). No-op when none runs.
    void stopFit();

    bool isFitting() const { return m_fitting; }
    const CalibrationSet& calibrationSet() const { return m_set; }
    const CalibrationReport& report() const { return m_report; }
    /// The last fit of the shown cases, or null.
    const FitResult* fitResult() const { return m_fit ? m_fit.get() : nullptr; }
    QString origin() const { return m_origin; }

    QStandardItemModel* model() const { return m_model; }
    MessageBanner* banner() const { return m_banner; }
    QPushButton* fitButton() const { return m_fitButton; }
    QPushButton* useButton() const { return m_useButton; }
    QTableView* table() const { return m_table; }
    QLabel* summary() const { return m_summary; }
    /// Points drawn in the residual plot: before (false) or after (true) the fit.
    int plottedPoints(bool after) const;
    QWidget* plotWidget() const;

signals:
    /// "Use the fitted cluster": replace the scenario's cluster efficiency with these factors.
    void useFittedRequested(const sp::Efficiency& fitted);
    void fitFinished();
    /// A fit started or ended (finished, stopped or failed): the window's Stop follows it.
    void fittingChanged(bool fitting);
    /// The fit was stopped (stopFit()) before it finished; nothing changed.
    void fitStopped();
    /// A file was read and shown.
    void loaded();

private:
    struct FitOutcome {
        std::shared_ptr<const FitResult> result;
        QString error;
        bool stopped = false;
    };
    void openDialog();
    void fitDone(quint64 run);
    void fillTable();
    void redrawPlot();
    void setFitting(bool on);
    void showSummary();
    void showError(const QString& text);

    QString m_samplesDir;
    BaseSource m_baseSource;
    CalibrationSet m_set;
    CalibrationReport m_report;
    std::shared_ptr<const FitResult> m_fit;
    QString m_origin;
    quint64 m_run = 0; ///< the current fit; results of a superseded one (another file) are dropped
    bool m_fitting = false;
    QFutureWatcher<FitOutcome>* m_watcher = nullptr;
    std::shared_ptr<std::atomic<bool>> m_stop; ///< the running fit's stop flag, shared with its worker

    MessageBanner* m_banner = nullptr;
    QLabel* m_source = nullptr;
    QLabel* m_summary = nullptr;
    QLabel* m_factors = nullptr;
    QPushButton* m_openButton = nullptr;
    QPushButton* m_fitButton = nullptr;
    QPushButton* m_useButton = nullptr;
    QProgressBar* m_busy = nullptr;
    QStandardItemModel* m_model = nullptr;
    QSortFilterProxyModel* m_proxy = nullptr;
    QTableView* m_table = nullptr;
    QChart* m_chart = nullptr;
    QChartView* m_view = nullptr;
    QValueAxis* m_x = nullptr;
    QValueAxis* m_y = nullptr;
    QScatterSeries* m_before = nullptr;
    QScatterSeries* m_after = nullptr;
    QLineSeries* m_zero = nullptr;
};

} // namespace sp::views
