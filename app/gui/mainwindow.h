#pragma once
// The planner's main window: the scenario and run panels (docks), the live chart and the plan views (tabs),
// the elite table, and the wiring between them and the searches. Menus and actions (windowactions), file
// dialogs (filedialogs), exports (exports), sessions (sessionfiles) and the runs of a batch (runtracker)
// live in their own files.

#include "filedialogs.h"
#include "metatypes.h"
#include "paretorunner.h"
#include "runtracker.h"
#include "scenarioundo.h"
#include "searchcontext.h"
#include "searchcontroller.h"

#include "core/export/launch.h"

#include <QElapsedTimer>
#include <QHash>
#include <QMainWindow>
#include <QTimer>

#include <functional>
#include <memory>
#include <optional>

class QAction;
class QDockWidget;
class QLabel;
class QScrollArea;
class QLineEdit;
class QMenu;
class QSortFilterProxyModel;
class QSplitter;
class QTableView;
class QTabWidget;

namespace sp {
struct Fleet;
}

namespace sp::views {
class CalibrationView;
class FleetView;
class ComparisonView;
class EliteModel;
class LearningCurveView;
class MessageBanner;
class ParetoView;
class PlanDetails;
class ServingView;
class RunPanel;
class ScenarioEditor;
class SearchChart;
class ShardingView;
class TimelineView;
class TopologyView;
} // namespace sp::views

namespace sp::app {

class ServingRunner;
struct SessionServing;

class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    struct Options {
        bool persistSettings = true; ///< restore and save window state and recent files (QSettings)
        bool confirmClose = true;    ///< ask before discarding unsaved results
        int threadsPerRun = 0;       ///< evaluation threads per searcher; 0: all cores
        /// Answers the questions (discard results?) instead of a message box: (title, text) -> a
        /// QMessageBox::StandardButton. Tests set it.
        std::function<int(const QString& title, const QString& text)> ask;
        /// Answers the file dialogs instead of showing them (see FileDialogs::Answer).
        FileDialogs::Answer fileAnswer;
    };
    /// The tabs of the central area, in order.
    enum class Tab { Chart, LearningCurve, Sharding, Topology, Comparison, Plan, Timeline };

    explicit MainWindow(QWidget* parent = nullptr);
    MainWindow(const Options& options, QWidget* parent = nullptr);
    ~MainWindow() override;

    // Files. Each returns false (and shows the error in the window) on bad input, keeping the current state.
    /// Opens any supported file by its kind: scenario, model/cluster/workload/constraints (replace that part
    /// of the current scenario), plan (evaluated and shown), or a session (.spsession).
    bool openFile(const QString& path);
    bool openScenario(const QString& path);
    bool openPlan(const QString& path);
    bool saveSession(const QString& path);
    bool openSession(const QString& path);

    // Search.
    void startSearch();
    void stopSearch();
    bool isSearching() const;
    /// Search > Stop (Esc): stops whatever runs, each keeping what it has: the search, the Pareto sweep and
    /// its overlay, the serving simulation or capacity bisection.
    void stopRunning();

    // Exports (atomic writes). Images: .png or .svg by suffix.
    bool exportPlan(const QString& path);
    bool exportHistoryCsv(const QString& path);
    bool exportImage(Tab view, const QString& path);
    /// The selected plan's launch command for a serving engine, as a shell script.
    bool exportLaunchCommand(ServingEngine engine, const QString& path);
    /// The selected plan's launch files for any engine and version (one script per node, plan.yaml,
    /// NOTES.txt) into `dir`, as `shardplan export --out-dir`; refusals and write errors are shown.
    bool exportLaunchFiles(const ExportOptions& options, const QString& dir);

    // State, for tests and scripting.
    views::ScenarioEditor* scenarioEditor() const { return m_editor; }
    views::RunPanel* runPanel() const { return m_runPanel; }
    views::SearchChart* chart() const { return m_chart; }
    views::LearningCurveView* learningCurve() const { return m_learning; }
    views::EliteModel* eliteModel() const { return m_eliteModel; }
    QSortFilterProxyModel* eliteProxy() const { return m_proxy; }
    QTableView* eliteView() const { return m_eliteView; }
    views::ShardingView* shardingView() const { return m_sharding; }
    views::TopologyView* topologyView() const { return m_topology; }
    views::ComparisonView* comparisonView() const { return m_comparison; }
    views::PlanDetails* planDetails() const { return m_details; }
    views::TimelineView* timelineView() const { return m_timeline; }
    views::CalibrationView* calibrationView() const { return m_calibration; }
    views::ParetoView* paretoView() const { return m_pareto; }
    ParetoRunner* paretoRunner() const { return m_paretoRunner; }
    views::ServingView* servingView() const { return m_serving; }
    ServingRunner* servingRunner() const { return m_servingRunner; }
    /// The disaggregated sweep's options for a Pareto sweep's, as `shardplan pareto --disaggregated`'s.
    static DisaggSearchOptions disaggregatedOptions(const ParetoOptions& o);
    QDockWidget* calibrationDock() const { return m_calibrationDock; }
    views::FleetView* fleetView() const { return m_fleet; }
    QDockWidget* fleetDock() const { return m_fleetDock; }
    /// Tools > Calibration: shows the calibration dock, loading the project's measurements the first time.
    void showCalibration();
    /// Tools > Fleet...: the fleet planner's dock, with the sample fleet the first time.
    void showFleet();
    /// The fleet dock on a fleet file (File > Open of one); false, with the error in `error`, where it is
    /// bad.
    bool openFleet(const QString& path, QString* error = nullptr);
    /// A session's fleet in the fleet dock, shown.
    void showFleetFromSession(const Fleet& f, const QString& origin);
    views::MessageBanner* messageBanner() const { return m_banner; }
    views::MessageBanner* staleBanner() const { return m_staleBanner; }
    QTabWidget* tabs() const { return m_tabs; }
    SearchController* controller() const { return m_controller; }
    const SearchContextPtr& context() const { return m_ctx; }
    const RunTracker& runs() const { return m_runs; }
    ScenarioUndo* scenarioUndo() const { return m_undo; }
    FileDialogs& fileDialogs() { return *m_dialogs; }
    /// The scenario's name as shown in the title and the exports: its file's name, or what it has become
    /// once edited.
    QString scenarioTitle() const;
    /// The text of the window's status line about the scenario (model, cluster, workload).
    QString scenarioStatus() const;
    QDockWidget* scenarioDock() const { return m_scenarioDock; }
    /// A named action of the menus ("exportPlan", "saveSession", "start", ...), for tests and scripting.
    QAction* action(const QString& name) const;
    /// The plan shown in the views (selected row, opened plan, or the Megatron plan).
    views::PlanRecordPtr currentPlan() const { return m_current; }
    views::PlanRecordPtr openedPlan() const { return m_opened; }
    /// Results a session would keep that are not saved: a search's, or the Serving tab's.
    bool hasUnsavedResults() const { return m_unsaved || m_servingUnsaved; }
    /// Selects an elite row (by model row) and shows it.
    void selectEliteRow(int modelRow);
    void showTab(Tab t);
    /// Shows the tab whose page is `view` or holds it (pages wider or taller than the tab scroll inside one).
    void showPage(QWidget* view);

    /// Feeds the learning-curve tab (for a learning searcher): one iteration's named values.
    void appendLearningCurve(int iteration, const QList<QPair<QString, double>>& values);

    /// Screenshot mode: runs a short search, then grabs the window on each tab into `dir`, then quits.
    void runScreenshots(const QString& dir, qint64 budget);

signals:
    /// A search batch ended (finished or stopped); its results are in the views.
    void searchFinished();
    /// The plan shown in the views changed.
    void currentPlanChanged();

protected:
    void closeEvent(QCloseEvent* e) override;
    bool eventFilter(QObject* watched, QEvent* e) override;

private:
    friend class WindowActions;
    friend class SessionFiles;
    /// What an error in the banner is about, so that it goes away when its cause is fixed.
    enum class Cause { None, InvalidScenario, EmptySpace, PartFile, OpenFile, Other };

    void buildUi();
    void buildParetoTab();
    static QScrollArea* scrolledPage(QWidget* page);
    void buildParetoOverlay();
    /// Marks the Pareto tab's sweep stale when the scenario being edited is not the one swept.
    void refreshParetoStale();
    void buildCalibrationDock();
    void buildFleetDock();
    // The Serving tab: mainwindow_serving.cpp.
    void buildServingTab();
    /// A plan the Serving tab serves, and its name as the tab shows it: "Best found (sa): pp1 dp2 tp4 -
    /// 1.01M tok/s at the steady state", with why it is not the one chosen when it is not.
    struct ServingPlan {
        Plan plan;
        QString name;  ///< "Best found (sa)", "Megatron", the selected row's or opened file's label
        QString label; ///< the name and the plan's shape: "Best found (sa): pp1 dp2 tp4"
        QString shown; ///< the label, the plan's throughput, and the note
        /// Requests/s at its steady-state throughput (0: infeasible): the rate sweep's range starts from it.
        double analyticRate = 0;
        /// A disaggregated plan (the Pareto tab's split) served instead of `plan`.
        std::optional<DisaggPlan> split;
    };
    ServingPlan servingPlan(const Scenario& s) const;
    /// The edited scenario and the plan the Serving tab simulates (the one the user chose); nullopt after
    /// showing why not.
    std::optional<std::pair<Scenario, ServingPlan>> servingScenario();
    /// Names the plan served in the tab (the choice, a search's progress, a selection or an edit).
    void updateServingPlan();
    void resetServing(); ///< another scenario: the Serving tab's run dropped, its charts cleared
    /// The Serving tab as a session keeps it (SessionFiles), and restored from one.
    SessionServing servingSession() const;
    /// Restores the tab; returns why the Pareto split it served is not restored ("" when it is, or none).
    QString restoreServing(const SessionServing& saved);
    /// Why the Serving tab cannot serve the Pareto tab's disaggregated point ("" when it can).
    QString servingSplitUnavailable(const Scenario& s) const;
    /// Search > Stop is enabled while anything runs (it owns Esc: see stopRunning).
    void updateStopAction();
    /// "Use the fitted cluster": the scenario's cluster efficiency replaced, as an undoable edit.
    void useFittedEfficiency(const Efficiency& fitted);
    void showAbout();
    void setScenario(const Scenario& s, const QString& path);
    void scenarioEdited();
    void clearResults();
    /// Results, banners and the chart's reference lines reset for the search context of scenario s.
    void startAfresh(const Scenario& s);
    void showError(const QString& message, Cause cause = Cause::Other);
    void clearFixedErrors();
    /// A file opened: an error left by opening (or loading a part of) a previous one goes.
    void clearOpenError();
    int ask(const QString& title, const QString& text, int buttons, int defaultButton);
    void fitScenarioPanel();
    /// The splitter between the view tabs and the elite table at its default sizes (until the user moves it).
    void fitSplit();
    /// The elite table's height for `rows` rows.
    int eliteViewHeight(int rows) const;
    void showInfo(const QString& message);
    void updateTitle();
    void addRecent(const QString& path);
    void rebuildRecentMenu();
    bool confirmDiscard(const QString& what);
    /// Stops the search and returns once its batch has ended (its results kept, as Stop keeps them).
    void stopSearchAndWait();

    void onProgress(quint64 batch, SearchUpdatePtr u);
    void onRunFinished(quint64 batch, const QString& searcher, SearchResultPtr r);
    void onRunFailed(quint64 batch, const QString& searcher, const QString& message);
    void onBatchFinished(quint64 batch, bool stopped);
    void refreshElite();
    void refreshProgress();
    void eliteSelectionChanged();
    void showPlan(views::PlanRecordPtr record);
    void refreshComparison();
    views::PlanRecordPtr recordFor(const Candidate& c, const QString& label, const QString& searcher);
    views::PlanRecordPtr bestRecord();

    void openDialog();
    void saveSessionDialog(bool saveAs);
    void openSessionDialog();
    void exportPlanDialog();
    void exportCsvDialog();
    void exportImageDialog(Tab view);
    void exportLaunchDialog(ServingEngine engine);
    void exportLaunchFilesDialog();
    ExportOptions m_launchOptions; ///< the launch-files dialog's last choices
    QString m_launchDir;
    views::PlanRecordPtr exportedPlan();

    Options m_options;
    QString m_samplesDir;
    std::unique_ptr<FileDialogs> m_dialogs;
    QDockWidget* m_scenarioDock = nullptr;
    QScrollArea* m_scenarioScroll = nullptr;
    QHash<QString, QAction*> m_actions;
    Cause m_errorCause = Cause::None;
    ScenarioUndo* m_undo = nullptr;
    Scenario m_loadedScenario; ///< as opened, before edits (the title tells when it was edited)
    views::ScenarioEditor* m_editor = nullptr;
    views::RunPanel* m_runPanel = nullptr;
    views::SearchChart* m_chart = nullptr;
    views::LearningCurveView* m_learning = nullptr;
    views::EliteModel* m_eliteModel = nullptr;
    QSortFilterProxyModel* m_proxy = nullptr;
    QTableView* m_eliteView = nullptr;
    QLineEdit* m_eliteFilter = nullptr;
    QLabel* m_eliteCaption = nullptr;
    views::ShardingView* m_sharding = nullptr;
    views::TopologyView* m_topology = nullptr;
    views::ComparisonView* m_comparison = nullptr;
    views::PlanDetails* m_details = nullptr;
    views::TimelineView* m_timeline = nullptr;
    views::ParetoView* m_pareto = nullptr;
    ParetoRunner* m_paretoRunner = nullptr;
    ParetoRunner* m_overlayRunner = nullptr;           ///< sweeps the scenario overlaid on the Pareto tab
    std::shared_ptr<const Scenario> m_paretoScenario;  ///< of the sweep shown in the Pareto tab
    std::shared_ptr<const Scenario> m_overlayScenario; ///< of the overlay shown in the Pareto tab
    views::ServingView* m_serving = nullptr;
    ServingRunner* m_servingRunner = nullptr;
    QTimer* m_servingPlanTimer = nullptr; ///< names the best plan at most every 250 ms during a search
    views::CalibrationView* m_calibration = nullptr;
    QDockWidget* m_calibrationDock = nullptr;
    views::FleetView* m_fleet = nullptr;
    QDockWidget* m_fleetDock = nullptr;
    views::MessageBanner* m_banner = nullptr;
    views::MessageBanner* m_staleBanner = nullptr;
    QTabWidget* m_tabs = nullptr;
    QSplitter* m_split = nullptr; ///< the view tabs above, the elite table below
    bool m_splitSized = false;    ///< moved by the user, or restored: fitSplit leaves it
    QLabel* m_statusScenario = nullptr;
    QMenu* m_recentMenu = nullptr;
    QAction* m_startAction = nullptr;
    QAction* m_stopAction = nullptr;

    SearchController* m_controller = nullptr;
    SearchContextPtr m_ctx; ///< the scenario of the results shown (or of the scenario, before any search)
    QString m_scenarioPath;
    QString m_sessionPath;
    RunTracker m_runs;
    bool m_hasResults = false;
    bool m_unsaved = false;        ///< search results (or an opened plan's) not saved
    bool m_servingUnsaved = false; ///< the Serving tab's run, answers or plan choice not saved
    QElapsedTimer m_runClock;
    QTimer m_refreshTimer; ///< throttles elite-table and progress updates (40 ms)
    views::PlanRecordPtr m_current, m_opened;
    QString m_openedLabel;
    std::vector<views::PlanRecordPtr> m_records; ///< explained plans of this context (a small cache)
    bool m_userSelected = false;
    bool m_refreshingElite = false; ///< selection changes made by a refresh of the rows show nothing
};

} // namespace sp::app
