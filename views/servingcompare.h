#pragma once
// Two runs (or two rate sweeps) of the Serving tab side by side: the one the user pinned and the one shown
// now, overlaid on the same charts, each named in the legend by what differs between them (the plan, the
// rate or the arrivals, the GPUs), and a small table of their figures. The values here are what a session
// keeps (app/gui/session_serving.h).

#include "core/model/cluster.h"
#include "core/sim/sweep.h"

#include <QString>
#include <QTableWidget>

#include <memory>
#include <optional>
#include <utility>

namespace sp::views {

/// What names a run or a sweep in words: the plan as the tab names it ("Megatron: pp1 dp1 tp8"), the load
/// ("2.5 requests/s", "trace chat.csv", "1-8 requests/s") and the GPUs ("8x H200 SXM").
struct RunTag {
    QString plan, load, gpus;
    bool operator==(const RunTag&) const = default;
};
/// "2.5 requests/s".
QString rateText(double requestsPerS);
/// A sweep's load: "0.5-4 requests/s" (short: a legend shows it).
QString sweepLoadText(const std::vector<double>& rates);
/// "8x H200 SXM".
QString gpusText(const Cluster& c);

/// The names of two runs in a legend or a table: what differs between their tags (the plan by its name
/// before the colon where that differs, else with its shape; the load; the GPUs), joined by commas;
/// "pinned" and `current` where nothing does.
std::pair<QString, QString> distinctNames(const RunTag& pinned, const RunTag& current,
                                          const QString& currentWord);

/// A run the tab draws: the simulation, the workload whose SLOs it is drawn against, and its name.
struct ShownRun {
    std::shared_ptr<const SimResult> run;
    Workload workload;
    RunTag tag;
};
/// A sweep the tab draws: its points (done so far while it runs), the rates asked, the workload and name.
struct ShownSweep {
    RateSweep sweep;
    std::vector<double> rates; ///< asked (the points are these, or their first ones when stopped)
    Workload workload;
    RunTag tag;
};
/// What Pin kept: the run and the sweep shown when it was clicked (either may be absent).
struct ServingPin {
    std::optional<ShownRun> run;
    std::optional<ShownSweep> sweep;
    bool empty() const { return !run && !sweep; }
};

/// The small table under a pin: a row for the pinned run (or sweep), one for the current, their figures in
/// columns. It is as high as its rows, and never scrolls.
class ServingCompareTable : public QTableWidget {
    Q_OBJECT
public:
    explicit ServingCompareTable(QWidget* parent = nullptr);
    /// Runs: TTFT and TPOT p50 and p99, output tokens/s, SLO attainment and the check. current may be null.
    void showRuns(const ShownRun& pinned, const ShownRun* current);
    /// Sweeps: the rates, the highest meeting the SLOs, and its tokens/s, TTFT and TPOT at the SLOs'
    /// percentile. current may be null.
    void showSweeps(const ShownSweep& pinned, const ShownSweep* current);
    /// The header and the rows, a row a line, cells tab-separated: for tests.
    QString text() const;

private:
    void fill(const QStringList& header, const QList<QStringList>& rows, const QStringList& tips);
};

} // namespace sp::views
