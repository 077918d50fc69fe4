#pragma once
// The fleet planner: several models on one GPU inventory at the least cost an hour (core/sim/fleet.h's
// planFleet, as `shardplan capacity --fleet FILE --analytical` answers it). It shows the inventory, each GPU
// type's GPUs drawn by the model that runs on them, the models with their rates and SLOs, the assignment, the
// cost and what binds. A rate or an SLO edited here solves again (on a worker thread; Stop or Esc cancels),
// and the answer says what moved: the cost before and after, and which assignments changed.

#include "core/io/fleetfiles.h"
#include "core/sim/fleet.h"

#include <QFutureWatcher>
#include <QWidget>

#include <memory>
#include <optional>
#include <stop_token>

class QCheckBox;
class QLabel;
class QPushButton;
class QTableWidget;
class QTimer;

namespace sp::views {

class FleetBars;

class FleetView : public QWidget {
    Q_OBJECT
public:
    explicit FleetView(QWidget* parent = nullptr);
    ~FleetView() override;

    /// Reads a fleet file and solves it; false, with the error shown and in `error`, where the file is bad
    /// (the fleet shown before stays).
    bool loadFile(const QString& path, QString* error = nullptr);
    /// Shows a fleet and solves it.
    void setFleet(const Fleet& f, const QString& origin = {});
    const std::optional<Fleet>& fleet() const { return m_fleet; }
    const QString& origin() const { return m_origin; }
    /// The answer shown (absent before the first, or while none could be found).
    const std::optional<FleetAnswer>& answer() const { return m_answer; }
    bool running() const { return m_running; }

    /// Model m's rate (requests/s) and SLOs (ms; 0: none), as an edit in the table does: solves again.
    void setModelRate(int m, double rate);
    void setModelSlo(int m, double ttftMs, double tpotMs);
    /// Writes the fleet as shown (its edited rates and SLOs, the N-1 choice) to `path`, which then names it;
    /// on failure says why in the status line (and in *error) and returns false.
    bool saveTo(const QString& path, QString* error = nullptr);
    /// The fleet as shown: the loaded one with the edited rates and SLOs and the N-1 choice; nullopt: none.
    std::optional<Fleet> shownFleet() const;

    /// The texts shown, for tests: the total, what changed since the answer before, the assignment table
    /// (a row a line, cells tab-separated, the header first), the inventory lines and what binds.
    QString totalText() const;
    QString changeText() const;
    QString assignmentText() const;
    QString inventoryText() const;
    QString bindsText() const;
    QString statusText() const;

public slots:
    void openFile();
    void saveFile();
    void solve();
    void stop();

signals:
    /// A solve ended (answered, stopped or failed).
    void solved();
    /// The user changed the fleet shown (a rate, an SLO, the N-1 choice): what a saved session would lose.
    void edited();

private:
    void solveLater();
    /// The models table's spin box at (row, col) shows value (an edit made through the API, not the box).
    void syncSpin(int row, int col, double value);
    void finished();
    void showFleet();
    void showAnswer();
    void setRunning(bool running);

    std::optional<Fleet> m_fleet;
    QString m_origin;
    std::optional<FleetAnswer> m_answer;
    /// The answer before the latest edit, and what the edit was: the change line compares them.
    std::optional<FleetAnswer> m_before;
    QString m_edit;
    bool m_running = false;
    bool m_again = false; ///< an edit arrived while solving: solve again when it ends
    std::stop_source m_stop;
    QFutureWatcher<FleetAnswer>* m_watcher = nullptr;
    QTimer* m_debounce = nullptr;

    QLabel* m_file = nullptr;
    QPushButton* m_open = nullptr;
    QPushButton* m_save = nullptr;
    QCheckBox* m_nMinus1 = nullptr;
    QPushButton* m_stopButton = nullptr;
    QLabel* m_status = nullptr;
    QTableWidget* m_models = nullptr;
    FleetBars* m_bars = nullptr;
    QLabel* m_total = nullptr;
    QLabel* m_change = nullptr;
    QTableWidget* m_assignment = nullptr;
    QLabel* m_binds = nullptr;
    bool m_filling = false; ///< the models table is being filled, not edited
};

} // namespace sp::views
