#pragma once
// The Serving tab's GPU sizing page: for a target rate, the fewest GPUs of each type checked under the
// workload's SLOs (fewestGpus, core/sim/capacity.h), as `shardplan capacity --rate R --gpus a,b` prints it:
// nodes, GPUs, TTFT and TPOT at the SLOs' percentile, dollars an hour and per million output tokens, output
// tokens/s per MW of board power and the plan, then what binds one size down. The widget runs nothing: the
// main window's ServingRunner does, and Stop (Esc) is the window's.

#include "views/servinganswers.h"

#include <QWidget>

#include <optional>

class QCheckBox;
class QDoubleSpinBox;
class QLabel;
class QPushButton;
class QTableWidget;

namespace sp::views {

class ServingSizingView : public QWidget {
    Q_OBJECT
public:
    explicit ServingSizingView(QWidget* parent = nullptr);

    double rate() const;
    void setRate(double requestsPerS);
    /// The GPU types checked, in the database's order.
    std::vector<std::string> gpus() const;
    /// Checks these database ids (others unchecked; unknown ids are ignored).
    void setGpus(const std::vector<std::string>& ids);
    /// Checks only `id` (the scenario's GPU type) while the user has not checked or unchecked one.
    void suggestGpu(const std::string& id);
    /// Disables the inputs and the button while the window's runner works.
    void setRunning(bool running);

    /// Shows an answer (a finished or stopped sizing, or a session's).
    void setResult(const GpuSizing& sizing);
    const std::optional<GpuSizing>& result() const { return m_result; }
    void clear();

    /// The table as text, a row a line, cells tab-separated, the header first: for tests.
    QString tableText() const;
    /// The words above and below the table.
    QString headingText() const;
    QString notesText() const;

signals:
    /// "Find GPUs" was clicked.
    void sizeRequested();

private:
    void updateButton();

    QDoubleSpinBox* m_rate = nullptr;
    std::vector<QCheckBox*> m_gpuBoxes; ///< one a GPU type of the database, in its order
    QPushButton* m_size = nullptr;
    QLabel* m_heading = nullptr;
    QTableWidget* m_table = nullptr;
    QLabel* m_notes = nullptr;
    std::optional<GpuSizing> m_result;
    bool m_running = false;
    bool m_touched = false; ///< the user checked or unchecked a GPU type (or a session did)
    bool m_setting = false; ///< the checks change by setGpus
};

} // namespace sp::views
