#include "mainwindow.h"

#include "core/common/paths.h"
#include "core/io/formats.h"
#include "core/search/searcher.h"
#include "session.h"
#include "views/comparison.h"
#include "views/elitemodel.h"
#include "views/format.h"
#include "views/heatmap.h"
#include "views/imageexport.h"
#include "views/learningcurve.h"
#include "views/messagebanner.h"
#include "views/plandetails.h"
#include "views/runpanel.h"
#include "views/scenarioeditor.h"
#include "views/searchchart.h"
#include "views/topology.h"

#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QDir>
#include <QDockWidget>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QMenuBar>
#include <QMessageBox>
#include <QScrollArea>
#include <QSettings>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QStatusBar>
#include <QTabWidget>
#include <QTableView>
#include <QTextStream>
#include <QToolBar>
#include <QToolButton>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <set>

namespace sp::app {

using views::qs;

namespace {
constexpr int kEliteRows = 50;
constexpr int kMaxRecent = 10;
const QString kSessionSuffix = QStringLiteral("spsession");

QString tabName(MainWindow::Tab t) {
    switch (t) {
    case MainWindow::Tab::Chart:
        return QObject::tr("Search progress");
    case MainWindow::Tab::LearningCurve:
        return QObject::tr("Learning curve");
    case MainWindow::Tab::Sharding:
        return QObject::tr("Sharding");
    case MainWindow::Tab::Topology:
        return QObject::tr("Topology");
    case MainWindow::Tab::Comparison:
        return QObject::tr("Comparison");
    case MainWindow::Tab::Plan:
        return QObject::tr("Plan");
    }
    return {};
}
} // namespace

MainWindow::MainWindow(QWidget* parent) : MainWindow(Options{}, parent) {}

MainWindow::MainWindow(const Options& options, QWidget* parent)
    : QMainWindow(parent), m_options(options), m_samplesDir(QString::fromStdString(sp::samplesDir())) {
    registerMetatypes();
    m_controller = new SearchController(this);
    connect(m_controller, &SearchController::progressed, this, &MainWindow::onProgress);
    connect(m_controller, &SearchController::runFinished, this, &MainWindow::onRunFinished);
    connect(m_controller, &SearchController::runFailed, this, &MainWindow::onRunFailed);
    connect(m_controller, &SearchController::batchFinished, this, &MainWindow::onBatchFinished);
    m_refreshTimer.setSingleShot(true);
    m_refreshTimer.setInterval(40);
    connect(&m_refreshTimer, &QTimer::timeout, this, &MainWindow::refreshElite);

    buildUi();
    buildActions();
    resize(1480, 920);
    if (m_options.persistSettings) {
        QSettings s;
        restoreGeometry(s.value(QStringLiteral("window/geometry")).toByteArray());
        restoreState(s.value(QStringLiteral("window/state")).toByteArray());
        rebuildRecentMenu();
    }
    updateTitle();
}

MainWindow::~MainWindow() = default;

// ---------------------------------------------------------------------------------------------------------------
// Building

void MainWindow::buildUi() {
    setDockNestingEnabled(true);
    // Scenario dock.
    m_editor = new views::ScenarioEditor(m_samplesDir);
    auto* scroll = new QScrollArea;
    scroll->setWidget(m_editor);
    scroll->setWidgetResizable(true);
    scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    scroll->setFrameShape(QFrame::NoFrame);
    scroll->setMinimumWidth(m_editor->minimumSizeHint().width() + 24);
    auto* scenarioDock = new QDockWidget(tr("Scenario"), this);
    scenarioDock->setObjectName(QStringLiteral("scenarioDock"));
    scenarioDock->setWidget(scroll);
    scenarioDock->setFeatures(QDockWidget::DockWidgetMovable | QDockWidget::DockWidgetFloatable);
    addDockWidget(Qt::LeftDockWidgetArea, scenarioDock);
    connect(m_editor, &views::ScenarioEditor::edited, this, &MainWindow::scenarioEdited);
    connect(m_editor, &views::ScenarioEditor::failed, this, &MainWindow::showError);

    // Run dock.
    m_runPanel = new views::RunPanel;
    QStringList names, checked;
    for (const std::string& n : searcherNames()) names << QString::fromStdString(n);
    for (const char* n : {"random", "sa", "ga", "rl"})
        if (names.contains(QLatin1String(n))) checked << QLatin1String(n);
    m_runPanel->setSearchers(names, checked);
    auto* runDock = new QDockWidget(tr("Search"), this);
    runDock->setObjectName(QStringLiteral("runDock"));
    runDock->setWidget(m_runPanel);
    runDock->setFeatures(QDockWidget::DockWidgetMovable | QDockWidget::DockWidgetFloatable);
    addDockWidget(Qt::LeftDockWidgetArea, runDock);
    splitDockWidget(scenarioDock, runDock, Qt::Vertical);
    resizeDocks({scenarioDock, runDock}, {620, 300}, Qt::Vertical);
    resizeDocks({scenarioDock}, {400}, Qt::Horizontal);
    connect(m_runPanel, &views::RunPanel::startRequested, this, &MainWindow::startSearch);
    connect(m_runPanel, &views::RunPanel::stopRequested, this, &MainWindow::stopSearch);

    // Central: banners, view tabs, elite table.
    m_banner = new views::MessageBanner;
    m_staleBanner = new views::MessageBanner;
    m_chart = new views::SearchChart;
    m_learning = new views::LearningCurveView;
    m_learning->setSecondarySeries({QStringLiteral("entropy"), QStringLiteral("temperature")});
    m_sharding = new views::ShardingView;
    m_topology = new views::TopologyView;
    m_comparison = new views::ComparisonView;
    m_details = new views::PlanDetails;
    m_tabs = new QTabWidget;
    m_tabs->setDocumentMode(true);
    const std::pair<Tab, QWidget*> tabs[] = {
        {Tab::Chart, m_chart},       {Tab::LearningCurve, m_learning}, {Tab::Sharding, m_sharding},
        {Tab::Topology, m_topology}, {Tab::Comparison, m_comparison},  {Tab::Plan, m_details}};
    const char* tips[] = {"Best throughput against evaluations, per searcher (Ctrl+1)",
                          "The rl searcher's learning curve (Ctrl+2)",
                          "Sharding choice or time share per operator and layer (Ctrl+3)",
                          "GPUs, pipeline stages, parallel groups and link load (Ctrl+4)",
                          "Two plans side by side (Ctrl+5)",
                          "The selected plan's metrics and file (Ctrl+6)"};
    for (const auto& [t, w] : tabs) {
        const int i = m_tabs->addTab(w, tabName(t));
        m_tabs->setTabToolTip(i, tr(tips[i]));
    }

    m_eliteModel = new views::EliteModel(this);
    m_proxy = new QSortFilterProxyModel(this);
    m_proxy->setSourceModel(m_eliteModel);
    m_proxy->setSortRole(views::EliteModel::SortRole);
    m_proxy->setFilterKeyColumn(-1);
    m_proxy->setFilterCaseSensitivity(Qt::CaseInsensitive);
    m_eliteView = new QTableView;
    m_eliteView->setModel(m_proxy);
    m_eliteView->setSortingEnabled(true);
    m_eliteView->sortByColumn(views::EliteModel::Rank, Qt::AscendingOrder);
    m_eliteView->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_eliteView->setSelectionMode(QAbstractItemView::SingleSelection);
    m_eliteView->setAlternatingRowColors(true);
    m_eliteView->setWordWrap(false);
    m_eliteView->verticalHeader()->hide();
    m_eliteView->verticalHeader()->setDefaultSectionSize(m_eliteView->fontMetrics().height() + 8);
    m_eliteView->horizontalHeader()->setStretchLastSection(true);
    m_eliteView->horizontalHeader()->setHighlightSections(false);
    m_eliteView->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_eliteView->setToolTip(tr("The best distinct plans found; select one to show it in every view"));
    connect(m_eliteView->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            &MainWindow::eliteSelectionChanged);
    connect(m_eliteView, &QTableView::clicked, this, [this] { m_userSelected = true; });
    m_eliteCaption = new QLabel(tr("<b>Elite plans</b>"));
    m_eliteFilter = new QLineEdit;
    m_eliteFilter->setPlaceholderText(tr("Filter (searcher, degrees, mesh...)"));
    m_eliteFilter->setClearButtonEnabled(true);
    m_eliteFilter->setMaximumWidth(320);
    m_eliteFilter->setToolTip(tr("Show only the rows containing this text (Ctrl+F)"));
    connect(m_eliteFilter, &QLineEdit::textChanged, m_proxy, &QSortFilterProxyModel::setFilterFixedString);

    auto* elitePanel = new QWidget;
    auto* el = new QVBoxLayout(elitePanel);
    el->setContentsMargins(6, 4, 6, 0);
    el->setSpacing(4);
    auto* eh = new QHBoxLayout;
    eh->addWidget(m_eliteCaption, 1);
    eh->addWidget(m_eliteFilter);
    el->addLayout(eh);
    el->addWidget(m_eliteView, 1);

    auto* split = new QSplitter(Qt::Vertical);
    split->addWidget(m_tabs);
    split->addWidget(elitePanel);
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 2);
    split->setChildrenCollapsible(false);
    auto* central = new QWidget;
    auto* cl = new QVBoxLayout(central);
    cl->setContentsMargins(4, 4, 4, 0);
    cl->setSpacing(4);
    cl->addWidget(m_banner);
    cl->addWidget(m_staleBanner);
    cl->addWidget(split, 1);
    setCentralWidget(central);

    m_statusScenario = new QLabel;
    m_statusScenario->setStyleSheet(QStringLiteral("color: #4b5563; padding: 0 6px;"));
    statusBar()->addPermanentWidget(m_statusScenario);
}

void MainWindow::buildActions() {
    auto* file = menuBar()->addMenu(tr("&File"));
    QAction* open = file->addAction(style()->standardIcon(QStyle::SP_DialogOpenButton), tr("&Open..."),
                                    QKeySequence::Open, this, &MainWindow::openDialog);
    open->setToolTip(
        tr("Open a scenario, model, cluster, workload, constraints, plan or session file (Ctrl+O)"));
    m_recentMenu = file->addMenu(tr("Open &Recent"));
    file->addAction(tr("Open &Session..."), QKeySequence(tr("Ctrl+Shift+O")), this,
                    &MainWindow::openSessionDialog);
    file->addSeparator();
    QAction* save = file->addAction(style()->standardIcon(QStyle::SP_DialogSaveButton), tr("&Save Session"),
                                    QKeySequence::Save, this, [this] { saveSessionDialog(false); });
    save->setToolTip(tr("Save the scenario, settings and results (Ctrl+S)"));
    file->addAction(tr("Save Session &As..."), QKeySequence(tr("Ctrl+Shift+S")), this,
                    [this] { saveSessionDialog(true); });
    file->addSeparator();
    auto* exp = file->addMenu(tr("&Export"));
    QAction* expPlan =
        exp->addAction(tr("&Plan..."), QKeySequence(tr("Ctrl+E")), this, &MainWindow::exportPlanDialog);
    expPlan->setToolTip(tr("Write the selected plan as YAML or JSON (Ctrl+E)"));
    expPlan->setIcon(style()->standardIcon(QStyle::SP_DialogSaveButton));
    exp->addAction(tr("Launch Command (&vLLM)..."), this, [this] { exportLaunchDialog(ServingEngine::Vllm); })
        ->setToolTip(tr("Write the selected plan as a vLLM launch command (a shell script)"));
    exp->addAction(tr("Launch Command (&SGLang)..."), this,
                   [this] { exportLaunchDialog(ServingEngine::Sglang); })
        ->setToolTip(tr("Write the selected plan as an SGLang launch command (a shell script)"));
    exp->addAction(tr("Search &History (CSV)..."), QKeySequence(tr("Ctrl+Shift+E")), this,
                   &MainWindow::exportCsvDialog);
    exp->addSeparator();
    for (Tab t : {Tab::Chart, Tab::LearningCurve, Tab::Sharding, Tab::Topology, Tab::Comparison})
        exp->addAction(tr("%1 Image (PNG, SVG)...").arg(tabName(t)), this,
                       [this, t] { exportImageDialog(t); });
    file->addSeparator();
    file->addAction(tr("&Quit"), QKeySequence::Quit, this, &QWidget::close);

    auto* search = menuBar()->addMenu(tr("&Search"));
    m_startAction = search->addAction(style()->standardIcon(QStyle::SP_MediaPlay), tr("&Start"), this,
                                      &MainWindow::startSearch);
    m_startAction->setShortcuts({QKeySequence(tr("Ctrl+R")), QKeySequence(Qt::Key_F5)});
    m_startAction->setToolTip(tr("Run the checked searchers on the edited scenario (Ctrl+R)"));
    m_stopAction = search->addAction(style()->standardIcon(QStyle::SP_MediaStop), tr("S&top"), this,
                                     &MainWindow::stopSearch);
    m_stopAction->setShortcut(QKeySequence(Qt::Key_Escape));
    m_stopAction->setToolTip(tr("Stop the search, keeping the best plans so far (Esc)"));
    m_stopAction->setEnabled(false);
    search->addSeparator();
    search->addAction(tr("&Clear Results"), this, [this] {
        if (!confirmDiscard(tr("clear the results"))) return;
        m_controller->cancel();
        m_runPanel->setRunning(false);
        clearResults();
        showPlan(m_ctx ? m_ctx->megatron() : nullptr);
        refreshComparison();
        m_staleBanner->hide();
        updateTitle();
    });

    auto* view = menuBar()->addMenu(tr("&View"));
    int key = Qt::Key_1;
    for (Tab t : {Tab::Chart, Tab::LearningCurve, Tab::Sharding, Tab::Topology, Tab::Comparison, Tab::Plan})
        view->addAction(tabName(t), QKeySequence(Qt::CTRL | Qt::Key(key++)), this, [this, t] { showTab(t); });
    view->addSeparator();
    QAction* logX = view->addAction(tr("&Logarithmic Evaluations Axis"), QKeySequence(tr("Ctrl+L")));
    logX->setCheckable(true);
    logX->setChecked(m_chart->logX());
    connect(logX, &QAction::triggered, m_chart, &views::SearchChart::setLogX);
    connect(m_chart, &views::SearchChart::logXChanged, logX, &QAction::setChecked);
    view->addAction(tr("&Filter Elite Plans"), QKeySequence::Find, this, [this] {
        m_eliteFilter->setFocus();
        m_eliteFilter->selectAll();
    });
    view->addSeparator();
    for (QDockWidget* d : findChildren<QDockWidget*>()) view->addAction(d->toggleViewAction());

    auto* help = menuBar()->addMenu(tr("&Help"));
    help->addAction(tr("&Keyboard Shortcuts"), QKeySequence::HelpContents, this, [this] {
        QMessageBox::information(
            this, tr("Keyboard shortcuts"),
            tr("<table cellpadding='3'>"
               "<tr><td><b>Ctrl+O</b></td><td>Open a file (scenario, part, plan, session)</td></tr>"
               "<tr><td><b>Ctrl+S / Ctrl+Shift+S</b></td><td>Save the session / as</td></tr>"
               "<tr><td><b>Ctrl+Shift+O</b></td><td>Open a session</td></tr>"
               "<tr><td><b>Ctrl+R, F5</b></td><td>Start (or rerun) the search</td></tr>"
               "<tr><td><b>Esc</b></td><td>Stop the search</td></tr>"
               "<tr><td><b>Ctrl+E / Ctrl+Shift+E</b></td><td>Export the plan / the search history</td></tr>"
               "<tr><td><b>Ctrl+1 ... Ctrl+6</b></td><td>Progress, learning curve, sharding, topology, "
               "comparison, plan</td></tr>"
               "<tr><td><b>Ctrl+L</b></td><td>Logarithmic evaluations axis</td></tr>"
               "<tr><td><b>Ctrl+F</b></td><td>Filter the elite plans</td></tr>"
               "<tr><td><b>Ctrl+Q</b></td><td>Quit</td></tr></table>"));
    });
    help->addAction(tr("&About Shard Planner"), this, [this] {
        QMessageBox::about(
            this, tr("About Shard Planner"),
            tr("<b>Shard Planner</b> %1<p>Plans the parallelism degrees and per-operator sharding of LLM "
               "inference on GPU clusters, after <i>Learning to Shard</i> (arXiv 2509.00217).</p>")
                .arg(QApplication::applicationVersion()));
    });

    auto* bar = addToolBar(tr("Main"));
    bar->setObjectName(QStringLiteral("mainToolBar"));
    bar->setMovable(false);
    bar->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
    bar->addAction(open);
    bar->addAction(save);
    bar->addSeparator();
    bar->addAction(m_startAction);
    bar->addAction(m_stopAction);
    bar->addSeparator();
    bar->addAction(expPlan);
}

// ---------------------------------------------------------------------------------------------------------------
// Scenario

void MainWindow::setScenario(const Scenario& s, const QString& path) {
    m_controller->cancel();
    m_runPanel->setRunning(false);
    m_startAction->setEnabled(true);
    m_stopAction->setEnabled(false);
    m_editor->setScenario(s);
    m_ctx = std::make_shared<SearchContext>(s);
    m_scenarioPath = path;
    m_sessionPath.clear();
    clearResults();
    m_opened = nullptr;
    m_openedLabel.clear();
    m_banner->hide();
    m_staleBanner->hide();
    m_eliteModel->setModel(s.model);
    const views::PlanRecordPtr& meg = m_ctx->megatron();
    m_chart->setReference(meg->metrics().feasible ? meg->metrics().throughput : 0, m_ctx->roofline());
    m_chart->setBudgetHint(double(m_runPanel->budget()));
    showPlan(meg);
    refreshComparison();
    updateTitle();
}

bool MainWindow::openScenario(const QString& path) {
    auto s = loadScenario(path.toStdString());
    if (!s) {
        showError(qs(s.error().str()));
        return false;
    }
    if (!confirmDiscard(tr("open another scenario"))) return false;
    setScenario(s.value(), path);
    addRecent(path);
    statusBar()->showMessage(tr("Opened %1").arg(QDir::toNativeSeparators(path)), 5000);
    return true;
}

void MainWindow::scenarioEdited() {
    if (!m_editor->isValid()) return; // the editor shows what is wrong
    const Scenario& s = m_editor->scenario();
    if (m_ctx && s == m_ctx->scenario()) {
        m_staleBanner->hide();
        return;
    }
    if (m_hasResults || isSearching()) {
        m_staleBanner->showMessage(
            views::MessageBanner::Kind::Warning,
            tr("<b>Results are stale:</b> the scenario changed since they were computed. "
               "They stay on display until you rerun."));
        QToolButton* rerun =
            m_staleBanner->addAction(tr("Rerun"), tr("Search again with the edited scenario (Ctrl+R)"));
        connect(rerun, &QToolButton::clicked, this, &MainWindow::startSearch);
        updateTitle();
        return;
    }
    // Nothing computed yet: the views follow the edits at once.
    m_ctx = std::make_shared<SearchContext>(s);
    m_records.clear();
    if (m_opened) {
        if (auto why = m_ctx->costModel().checkPlan(m_opened->plan)) {
            showInfo(tr("The opened plan no longer fits the scenario (%1); it was set aside.").arg(qs(*why)));
            m_opened = nullptr;
        } else {
            m_opened = views::makePlanRecord(m_ctx->costModel(), m_opened->plan, m_opened->label, "file");
        }
    }
    m_eliteModel->setModel(s.model);
    const views::PlanRecordPtr& meg = m_ctx->megatron();
    m_chart->setReference(meg->metrics().feasible ? meg->metrics().throughput : 0, m_ctx->roofline());
    showPlan(m_opened ? m_opened : meg);
    refreshComparison();
    updateTitle();
}

void MainWindow::clearResults() {
    m_refreshTimer.stop();
    m_runs.clear();
    m_runOrder.clear();
    m_chart->clear();
    m_learning->clear();
    m_eliteModel->clear();
    m_runPanel->resetStatus();
    m_records.clear();
    m_hasResults = false;
    m_unsaved = false;
    m_userSelected = false;
    m_eliteCaption->setText(tr("<b>Elite plans</b>"));
}

// ---------------------------------------------------------------------------------------------------------------
// Messages and title

void MainWindow::showError(const QString& message) {
    m_banner->showMessage(views::MessageBanner::Kind::Error, message.toHtmlEscaped());
    statusBar()->showMessage(message, 15000);
}

void MainWindow::showInfo(const QString& message) {
    m_banner->showMessage(views::MessageBanner::Kind::Info, message.toHtmlEscaped());
    statusBar()->showMessage(message, 10000);
}

void MainWindow::updateTitle() {
    QString name = m_ctx ? qs(m_editor->scenario().name) : tr("No scenario");
    if (!m_sessionPath.isEmpty()) name += QStringLiteral(" (%1)").arg(QFileInfo(m_sessionPath).fileName());
    setWindowTitle(tr("%1[*] - Shard Planner").arg(name));
    setWindowModified(m_unsaved);
    if (m_ctx) {
        const Scenario& s = m_editor->scenario();
        m_statusScenario->setText(tr("%1 | %2 x %3 %4 | %5")
                                      .arg(qs(s.model.name))
                                      .arg(s.cluster.nodes)
                                      .arg(s.cluster.gpusPerNode)
                                      .arg(qs(s.cluster.gpu.name), qs(s.workload.name)));
    }
}

void MainWindow::addRecent(const QString& path) {
    if (!m_options.persistSettings) return;
    QSettings s;
    QStringList list = s.value(QStringLiteral("recentFiles")).toStringList();
    const QString abs = QFileInfo(path).absoluteFilePath();
    list.removeAll(abs);
    list.prepend(abs);
    while (list.size() > kMaxRecent) list.removeLast();
    s.setValue(QStringLiteral("recentFiles"), list);
    rebuildRecentMenu();
}

void MainWindow::rebuildRecentMenu() {
    m_recentMenu->clear();
    const QStringList list = m_options.persistSettings
                                 ? QSettings().value(QStringLiteral("recentFiles")).toStringList()
                                 : QStringList();
    int i = 1;
    for (const QString& path : list) {
        QAction* a =
            m_recentMenu->addAction(QStringLiteral("&%1 %2").arg(i++).arg(QFileInfo(path).fileName()), this,
                                    [this, path] { openFile(path); });
        a->setToolTip(path);
        a->setStatusTip(path);
    }
    m_recentMenu->setEnabled(!list.isEmpty());
}

bool MainWindow::confirmDiscard(const QString& what) {
    if (!m_options.confirmClose || !m_unsaved) return true;
    const auto answer = QMessageBox::question(
        this, tr("Unsaved results"),
        tr("The search results are not saved. Save the session before you %1?").arg(what),
        QMessageBox::Save | QMessageBox::Discard | QMessageBox::Cancel, QMessageBox::Save);
    if (answer == QMessageBox::Cancel) return false;
    if (answer == QMessageBox::Save) {
        saveSessionDialog(false);
        return !m_unsaved;
    }
    return true;
}

void MainWindow::closeEvent(QCloseEvent* e) {
    if (!confirmDiscard(tr("quit"))) {
        e->ignore();
        return;
    }
    m_controller->cancel();
    if (m_options.persistSettings) {
        QSettings s;
        s.setValue(QStringLiteral("window/geometry"), saveGeometry());
        s.setValue(QStringLiteral("window/state"), saveState());
    }
    e->accept();
}

// ---------------------------------------------------------------------------------------------------------------
// Search

bool MainWindow::isSearching() const {
    return m_controller->isRunning();
}

void MainWindow::startSearch() {
    if (!m_editor->isValid()) {
        showError(tr("Fix the scenario first: %1").arg(m_editor->errors().join(QStringLiteral("; "))));
        return;
    }
    const QStringList names = m_runPanel->selectedSearchers();
    if (names.isEmpty()) {
        showError(tr("Check at least one searcher in the Search panel."));
        return;
    }
    const Scenario s = m_editor->scenario();
    if (!m_ctx || !(m_ctx->scenario() == s)) {
        m_ctx = std::make_shared<SearchContext>(s);
        if (m_opened && m_ctx->costModel().checkPlan(m_opened->plan))
            m_opened = nullptr;
        else if (m_opened)
            m_opened = views::makePlanRecord(m_ctx->costModel(), m_opened->plan, m_opened->label, "file");
    }
    if (m_ctx->space().empty()) {
        showError(tr("No valid plan to search: %1").arg(qs(m_ctx->space().emptyReason())));
        return;
    }
    clearResults();
    m_banner->hide();
    m_staleBanner->hide();
    m_eliteModel->setModel(s.model);
    const views::PlanRecordPtr& meg = m_ctx->megatron();
    m_chart->setReference(meg->metrics().feasible ? meg->metrics().throughput : 0, m_ctx->roofline());
    m_chart->setBudgetHint(double(m_runPanel->budget()));
    const SpaceSize size = m_ctx->space().size();
    for (const QString& n : names) {
        RunState r;
        if (n == QLatin1String("megatron"))
            r.target = 1;
        else if (n == QLatin1String("exhaustive"))
            r.target =
                size.exact && size.count <= ExhaustiveSearcher::kDefaultLimit ? int64_t(size.count) : 0;
        else
            r.target = m_runPanel->budget();
        m_runs.insert(n, r);
        m_runOrder << n;
        m_runPanel->setSearcherStatus(n, 0, 0, tr("starting"));
    }
    m_hasResults = true;
    m_runPanel->setRunning(true);
    m_startAction->setEnabled(false);
    m_stopAction->setEnabled(true);
    showPlan(m_opened ? m_opened : meg);
    m_runClock.start();
    SearchController::Request req;
    req.searchers = names;
    req.budget = m_runPanel->budget();
    req.seed = m_runPanel->seed();
    req.threads = m_options.threadsPerRun;
    m_controller->start(m_ctx, req);
    statusBar()->showMessage(tr("Searching with %1...").arg(names.join(QStringLiteral(", "))));
    updateTitle();
}

void MainWindow::stopSearch() {
    if (!isSearching()) return;
    m_controller->stop();
    statusBar()->showMessage(tr("Stopping..."));
}

void MainWindow::onProgress(quint64 batch, SearchUpdatePtr u) {
    if (batch != m_controller->currentBatch() || !m_runs.contains(u->searcher)) return;
    RunState& r = m_runs[u->searcher];
    r.evaluations = u->evaluations;
    r.seconds = u->seconds;
    r.best = u->bestThroughput;
    r.elite = u->elite;
    for (const auto& [e, b] : u->curveDelta) r.curve.append(QPointF(double(e), b));
    m_chart->addPoints(u->searcher, u->curveDelta);
    m_chart->setProgress(u->searcher, u->evaluations);
    // A learning searcher's iterations: mean reward and elite mean on the left axis (log tokens/s), the
    // policy's entropy and its sampling temperature on the right.
    for (const LearningPoint& lp : u->learningDelta)
        appendLearningCurve(int(lp.iteration),
                            {{tr("mean reward (log tok/s)"), lp.meanReward},
                             {tr("elite mean (log tok/s)"), lp.eliteMean > 0 ? std::log(lp.eliteMean) : 0.0},
                             {QStringLiteral("entropy"), lp.entropy},
                             {QStringLiteral("temperature"), lp.temperature}});
    if (!m_refreshTimer.isActive()) m_refreshTimer.start();
}

void MainWindow::onRunFinished(quint64 batch, const QString& searcher, SearchResultPtr res) {
    if (batch != m_controller->currentBatch() || !m_runs.contains(searcher)) return;
    RunState& r = m_runs[searcher];
    r.finished = true;
    r.stopped = res->stopped;
    r.elite = res->elite;
    r.evaluations = res->evaluations;
    r.seconds = res->seconds;
    r.best = res->feasible() ? res->best.metrics.throughput : 0;
    r.message = qs(res->message);
    r.curve.clear();
    for (const auto& [e, b] : res->curve) r.curve.append(QPointF(double(e), b));
    if (res->refused) r.target = 0;
    m_chart->setCurve(searcher, r.curve, r.evaluations);
    if (res->refused)
        m_banner->showMessage(views::MessageBanner::Kind::Warning,
                              tr("<b>%1</b> did not run: %2").arg(searcher, r.message.toHtmlEscaped()));
    else if (!res->message.empty())
        m_banner->showMessage(views::MessageBanner::Kind::Info,
                              tr("<b>%1</b>: %2").arg(searcher, r.message.toHtmlEscaped()));
    if (!m_refreshTimer.isActive()) m_refreshTimer.start();
}

void MainWindow::onRunFailed(quint64 batch, const QString& searcher, const QString& message) {
    if (batch != m_controller->currentBatch()) return;
    if (m_runs.contains(searcher)) {
        m_runs[searcher].finished = true;
        m_runs[searcher].target = m_runs[searcher].evaluations;
    }
    showError(tr("%1 failed: %2").arg(searcher, message));
}

void MainWindow::onBatchFinished(quint64 batch, bool stopped) {
    if (batch != m_controller->currentBatch()) return;
    m_runPanel->setRunning(false);
    m_startAction->setEnabled(true);
    m_stopAction->setEnabled(false);
    refreshElite();
    const auto best = bestCandidate();
    QString text;
    if (best) {
        QStringList who;
        for (const QString& n : m_runOrder)
            if (m_runs[n].best >= best->metrics.throughput * (1 - 1e-9)) who << n;
        const double meg =
            m_ctx->megatron()->metrics().feasible ? m_ctx->megatron()->metrics().throughput : 0;
        text = tr("Best %1 (%2)")
                   .arg(views::formatRate(best->metrics.throughput), who.join(QStringLiteral(", ")));
        if (meg > 0) text += tr(", %1x Megatron").arg(best->metrics.throughput / meg, 0, 'f', 3);
        text += tr(", in %1").arg(views::formatDuration(m_runClock.elapsed() / 1000.0));
    } else {
        text = tr("No feasible plan found");
    }
    if (stopped) text = tr("Stopped. %1").arg(text);
    m_runPanel->setFinished(text);
    statusBar()->showMessage(text, 15000);
    m_unsaved = true;
    if (!m_userSelected && m_eliteModel->rowCount() > 0) {
        const QModelIndex top = m_proxy->index(0, 0);
        m_eliteView->sortByColumn(views::EliteModel::Rank, Qt::AscendingOrder);
        selectEliteRow(m_proxy->mapToSource(top).row());
        m_userSelected = false;
    }
    refreshComparison();
    updateTitle();
    emit searchFinished();
}

void MainWindow::refreshElite() {
    std::vector<std::pair<QString, std::vector<Candidate>>> lists;
    for (const QString& n : m_runOrder) lists.emplace_back(n, m_runs[n].elite);
    const bool first = m_eliteModel->rowCount() == 0;
    m_eliteModel->setEntries(views::mergeElites(lists, kEliteRows));
    if (first && m_eliteModel->rowCount() > 0) {
        m_eliteView->resizeColumnsToContents();
        for (int c = 0; c < views::EliteModel::ColumnCount - 1; ++c)
            m_eliteView->setColumnWidth(c, m_eliteView->columnWidth(c) + 6);
        // The sharding summary (last) takes what is left; its full text is in the tooltip.
        m_eliteView->setColumnWidth(views::EliteModel::Sharding, 120);
    }
    m_eliteCaption->setText(
        tr("<b>Elite plans</b> &nbsp;<span style='color:#6b7280'>%n distinct plan(s), best first; "
           "select one to show it in every view</span>",
           "", m_eliteModel->rowCount()));
    refreshProgress();
}

void MainWindow::refreshProgress() {
    int64_t done = 0, total = 0, evals = 0;
    for (const QString& n : m_runOrder) {
        const RunState& r = m_runs[n];
        const int64_t target = r.finished ? r.evaluations : r.target;
        done += std::min(r.evaluations, std::max<int64_t>(target, r.evaluations));
        total += std::max(target, r.evaluations);
        evals += r.evaluations;
        QString note;
        if (r.finished && r.target == 0 && r.evaluations == 0) note = tr("refused");
        m_runPanel->setSearcherStatus(n, r.evaluations, r.best, note);
    }
    if (!isSearching()) return;
    const double secs = std::max(1e-3, m_runClock.elapsed() / 1000.0);
    const double rate = double(evals) / secs;
    const double left = rate > 0 ? double(total - done) / rate : -1;
    m_runPanel->setProgress(done, total, rate, left);
}

std::optional<Candidate> MainWindow::bestCandidate() const {
    std::optional<Candidate> best;
    for (const RunState& r : m_runs)
        for (const Candidate& c : r.elite)
            if (c.metrics.feasible && (!best || c.metrics.throughput > best->metrics.throughput)) best = c;
    return best;
}

// ---------------------------------------------------------------------------------------------------------------
// Selection and views

views::PlanRecordPtr MainWindow::recordFor(const Candidate& c, const QString& label,
                                           const QString& searcher) {
    const std::string l = label.toStdString();
    for (const auto& r : m_records)
        if (r->plan == c.plan) {
            if (r->label == l) return r;
            auto copy = std::make_shared<views::PlanRecord>(*r);
            copy->label = l;
            return copy;
        }
    auto r = views::makePlanRecord(m_ctx->costModel(), c.plan, l, searcher.toStdString());
    m_records.push_back(r);
    if (m_records.size() > 200) m_records.erase(m_records.begin());
    return r;
}

views::PlanRecordPtr MainWindow::bestRecord() {
    if (m_eliteModel->rowCount() == 0) return nullptr;
    // Rank 1 is the first row of the merged list (it is kept sorted best first).
    const auto& entries = m_eliteModel->entries();
    const auto it = std::max_element(entries.begin(), entries.end(), [](const auto& a, const auto& b) {
        return planScore(a.candidate->metrics) < planScore(b.candidate->metrics);
    });
    if (!it->candidate->metrics.feasible) return nullptr;
    return recordFor(*it->candidate, tr("Best found (%1)").arg(it->searcher), it->searcher);
}

void MainWindow::selectEliteRow(int modelRow) {
    if (modelRow < 0 || modelRow >= m_eliteModel->rowCount()) return;
    const QModelIndex idx = m_proxy->mapFromSource(m_eliteModel->index(modelRow, 0));
    m_eliteView->selectionModel()->setCurrentIndex(idx, QItemSelectionModel::ClearAndSelect |
                                                            QItemSelectionModel::Rows);
    m_eliteView->scrollTo(idx);
}

void MainWindow::eliteSelectionChanged() {
    const QModelIndex cur = m_eliteView->selectionModel()->currentIndex();
    if (!cur.isValid()) return;
    const int row = m_proxy->mapToSource(cur).row();
    if (row < 0 || row >= m_eliteModel->rowCount()) return;
    const views::EliteEntry& e = m_eliteModel->entry(row);
    const int rank = m_eliteModel->data(m_eliteModel->index(row, views::EliteModel::Rank)).toInt();
    const QString label = rank == 1 && e.candidate->metrics.feasible
                              ? tr("Best found (%1)").arg(e.searcher)
                              : tr("Elite #%1 (%2)").arg(rank).arg(e.searcher);
    showPlan(recordFor(*e.candidate, label, e.searcher));
    if (!isSearching()) refreshComparison();
}

void MainWindow::showPlan(views::PlanRecordPtr record) {
    m_current = std::move(record);
    const auto scenario = SearchContext::scenarioOf(m_ctx);
    m_sharding->setPlan(scenario, m_current);
    m_topology->setPlan(scenario, m_current);
    m_details->setPlan(scenario, m_current);
    emit currentPlanChanged();
}

void MainWindow::refreshComparison() {
    if (!m_ctx) return;
    QVector<views::NamedPlan> list;
    list.append({tr("Megatron"), m_ctx->megatron()});
    int right = 0;
    const views::PlanRecordPtr best = bestRecord();
    if (best) {
        right = int(list.size());
        list.append({qs(best->label), best});
    }
    if (m_current && m_current != m_ctx->megatron() && (!best || !(m_current->plan == best->plan)) &&
        m_current != m_opened) {
        right = int(list.size());
        list.append({tr("Selected: %1").arg(qs(m_current->label)), m_current});
    }
    if (m_opened) {
        if (m_current == m_opened) right = int(list.size());
        list.append({tr("Opened: %1").arg(m_openedLabel), m_opened});
    }
    // The next few elite plans, so either side can pick them.
    const auto& entries = m_eliteModel->entries();
    std::vector<const views::EliteEntry*> sorted;
    for (const auto& e : entries) sorted.push_back(&e);
    std::stable_sort(sorted.begin(), sorted.end(), [](auto* a, auto* b) {
        return planScore(a->candidate->metrics) > planScore(b->candidate->metrics);
    });
    for (size_t i = 1; i < sorted.size() && i < 10; ++i) {
        const QString label = tr("Elite #%1 (%2)").arg(i + 1).arg(sorted[i]->searcher);
        list.append({label, recordFor(*sorted[i]->candidate, label, sorted[i]->searcher)});
    }
    m_comparison->setScenario(SearchContext::scenarioOf(m_ctx));
    m_comparison->setCandidates(list, 0, right);
}

void MainWindow::showTab(Tab t) {
    m_tabs->setCurrentIndex(int(t));
}

void MainWindow::appendLearningCurve(int iteration, const QList<QPair<QString, double>>& values) {
    m_learning->appendIteration(iteration, values);
}

// ---------------------------------------------------------------------------------------------------------------
// Files

bool MainWindow::openFile(const QString& path) {
    if (QFileInfo(path).suffix() == kSessionSuffix) return openSession(path);
    auto kind = detectKind(path.toStdString());
    if (!kind) {
        showError(qs(kind.error().str()));
        return false;
    }
    switch (kind.value()) {
    case FileKind::Scenario:
        return openScenario(path);
    case FileKind::Plan:
        return openPlan(path);
    default: {
        QString error;
        if (!m_editor->loadPart(kind.value(), path, &error)) return false; // shown through failed()
        addRecent(path);
        statusBar()->showMessage(tr("Replaced the %1 of the scenario with %2")
                                     .arg(qs(nameOf(kind.value())), QFileInfo(path).fileName()),
                                 8000);
        return true;
    }
    }
}

bool MainWindow::openPlan(const QString& path) {
    auto plan = loadPlan(path.toStdString());
    if (!plan) {
        showError(qs(plan.error().str()));
        return false;
    }
    if (!m_ctx) {
        showError(tr("Open a scenario before a plan."));
        return false;
    }
    if (auto why = m_ctx->costModel().checkPlan(plan.value())) {
        showError(tr("%1: the plan does not fit the scenario: %2").arg(path, qs(*why)));
        return false;
    }
    m_openedLabel = QFileInfo(path).fileName();
    m_opened = views::makePlanRecord(m_ctx->costModel(), plan.value(), m_openedLabel.toStdString(), "file");
    m_eliteView->selectionModel()->clearSelection();
    showPlan(m_opened);
    refreshComparison();
    addRecent(path);
    const Metrics& m = m_opened->metrics();
    statusBar()->showMessage(
        m.feasible ? tr("Opened plan %1: %2").arg(m_openedLabel, views::formatRate(m.throughput))
                   : tr("Opened plan %1: infeasible, %2").arg(m_openedLabel, qs(m.violation)),
        10000);
    return true;
}

void MainWindow::openDialog() {
    const QString dir = m_scenarioPath.isEmpty() ? m_samplesDir : QFileInfo(m_scenarioPath).absolutePath();
    const QString path = QFileDialog::getOpenFileName(
        this, tr("Open"), dir,
        tr("Shard Planner files (*.yaml *.yml *.json *.%1);;Sessions (*.%1);;All files (*)")
            .arg(kSessionSuffix));
    if (!path.isEmpty()) openFile(path);
}

bool MainWindow::saveSession(const QString& path) {
    Session s;
    s.scenarioPath = m_scenarioPath;
    s.scenario = m_editor->scenario();
    s.searchers = m_runPanel->selectedSearchers();
    s.budget = m_runPanel->budget();
    s.seed = m_runPanel->seed();
    s.hasResults = m_hasResults && m_ctx;
    if (s.hasResults) {
        s.resultsScenario = m_ctx->scenario();
        for (const QString& n : m_runOrder) {
            const RunState& r = m_runs[n];
            s.runs.push_back({n, r.elite, r.curve, r.evaluations, r.seconds, r.stopped, r.message});
        }
    }
    if (m_opened) {
        s.openedPlan = m_opened->plan;
        s.openedLabel = m_openedLabel;
        s.hasResults = s.hasResults || m_ctx;
        if (!m_hasResults && m_ctx) s.resultsScenario = m_ctx->scenario();
    }
    if (m_current && m_current != m_ctx->megatron()) s.selectedPlan = m_current->plan;
    QString error;
    if (!views::saveFile(path, s.toJson(), &error)) {
        showError(error);
        return false;
    }
    m_sessionPath = path;
    m_unsaved = false;
    addRecent(path);
    updateTitle();
    statusBar()->showMessage(tr("Saved session %1").arg(QDir::toNativeSeparators(path)), 5000);
    return true;
}

bool MainWindow::openSession(const QString& path) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) {
        showError(tr("%1: cannot read: %2").arg(path, f.errorString()));
        return false;
    }
    QString error;
    auto s = Session::fromJson(f.readAll(), path, &error);
    if (!s) {
        showError(error);
        return false;
    }
    if (!confirmDiscard(tr("open another session"))) return false;
    setScenario(s->hasResults ? s->resultsScenario : s->scenario, s->scenarioPath);
    if (!s->searchers.isEmpty()) m_runPanel->setSelectedSearchers(s->searchers);
    m_runPanel->setBudget(s->budget);
    m_runPanel->setSeed(s->seed);
    if (s->hasResults) {
        for (SessionRun& run : s->runs) {
            RunState r;
            r.elite = std::move(run.elite);
            for (Candidate& c : r.elite) c.metrics = m_ctx->costModel().evaluate(c.plan);
            r.curve = run.curve;
            r.evaluations = r.target = run.evaluations;
            r.seconds = run.seconds;
            r.stopped = run.stopped;
            r.message = run.message;
            r.finished = true;
            r.best = run.curve.isEmpty() ? 0 : run.curve.last().y();
            m_runs.insert(run.searcher, r);
            m_runOrder << run.searcher;
            m_chart->setCurve(run.searcher, r.curve, r.evaluations);
        }
        m_hasResults = !s->runs.empty();
        refreshElite();
        if (s->openedPlan && !m_ctx->costModel().checkPlan(*s->openedPlan)) {
            m_openedLabel = s->openedLabel;
            m_opened = views::makePlanRecord(m_ctx->costModel(), *s->openedPlan, m_openedLabel.toStdString(),
                                             "file");
        }
        bool shown = false;
        if (s->selectedPlan) {
            const int row = m_eliteModel->rowOf(*s->selectedPlan);
            if (row >= 0) {
                selectEliteRow(row);
                shown = true;
            } else if (m_opened && m_opened->plan == *s->selectedPlan) {
                showPlan(m_opened);
                shown = true;
            }
        }
        if (!shown && m_eliteModel->rowCount() > 0)
            selectEliteRow(m_proxy->mapToSource(m_proxy->index(0, 0)).row());
        m_runPanel->setFinished(tr("Restored from %1").arg(QFileInfo(path).fileName()));
    }
    if (!(s->scenario == m_ctx->scenario())) {
        m_editor->setScenario(s->scenario);
        scenarioEdited(); // shows the stale banner (results) or follows the edits (none)
    }
    refreshComparison();
    m_sessionPath = path;
    m_unsaved = false;
    addRecent(path);
    updateTitle();
    statusBar()->showMessage(tr("Opened session %1").arg(QDir::toNativeSeparators(path)), 5000);
    return true;
}

void MainWindow::saveSessionDialog(bool saveAs) {
    QString path = m_sessionPath;
    if (saveAs || path.isEmpty()) {
        const QString dir =
            m_scenarioPath.isEmpty() ? QDir::homePath() : QFileInfo(m_scenarioPath).absolutePath();
        path = QFileDialog::getSaveFileName(this, tr("Save Session"), dir,
                                            tr("Shard Planner sessions (*.%1)").arg(kSessionSuffix));
        if (path.isEmpty()) return;
        if (QFileInfo(path).suffix().isEmpty()) path += QLatin1Char('.') + kSessionSuffix;
    }
    saveSession(path);
}

void MainWindow::openSessionDialog() {
    const QString path =
        QFileDialog::getOpenFileName(this, tr("Open Session"), QDir::homePath(),
                                     tr("Shard Planner sessions (*.%1);;All files (*)").arg(kSessionSuffix));
    if (!path.isEmpty()) openSession(path);
}

// ---------------------------------------------------------------------------------------------------------------
// Exports

bool MainWindow::exportPlan(const QString& path) {
    const views::PlanRecordPtr r = m_current ? m_current : (m_ctx ? m_ctx->megatron() : nullptr);
    if (!r) {
        showError(tr("No plan to export."));
        return false;
    }
    std::string text;
    if (QFileInfo(path).suffix().compare(QLatin1String("json"), Qt::CaseInsensitive) == 0) {
        text = toJson(r->plan);
    } else {
        const Metrics& m = r->metrics();
        text = "# " + r->label + " for " + m_ctx->scenario().name + "\n";
        if (m.feasible)
            text += "# " + views::formatRate(m.throughput).toStdString() + ", TTFT " +
                    views::formatMs(m.ttftMs).toStdString() + ", TPOT " +
                    views::formatMs(m.tpotMs).toStdString() + ", batch " + std::to_string(m.batch) +
                    " (exported by Shard Planner)\n";
        text += toYaml(r->plan);
    }
    QString error;
    if (!views::saveFile(path, QByteArray::fromStdString(text), &error)) {
        showError(error);
        return false;
    }
    statusBar()->showMessage(tr("Exported %1 to %2").arg(qs(r->label), QDir::toNativeSeparators(path)), 8000);
    return true;
}

bool MainWindow::exportLaunchCommand(ServingEngine engine, const QString& path) {
    const views::PlanRecordPtr r = m_current ? m_current : (m_ctx ? m_ctx->megatron() : nullptr);
    if (!r) {
        showError(tr("No plan to export."));
        return false;
    }
    auto command = launchCommand(m_ctx->scenario(), r->plan, engine);
    if (!command) {
        showError(qs(command.error().str()));
        return false;
    }
    const std::string text = "#!/bin/sh\n# " + r->label + " for " + m_ctx->scenario().name +
                             " (exported by Shard Planner)\n" + command->text();
    QString error;
    if (!views::saveFile(path, QByteArray::fromStdString(text), &error)) {
        showError(error);
        return false;
    }
    QFile::setPermissions(path,
                          QFile::permissions(path) | QFile::ExeOwner | QFile::ExeGroup | QFile::ExeOther);
    statusBar()->showMessage(tr("Exported the %1 launch command of %2 to %3")
                                 .arg(engine == ServingEngine::Vllm ? tr("vLLM") : tr("SGLang"), qs(r->label),
                                      QDir::toNativeSeparators(path)),
                             8000);
    return true;
}

bool MainWindow::exportHistoryCsv(const QString& path) {
    // One row per evaluation count at which any searcher improved (or ended); each searcher's best so far.
    std::set<int64_t> xs;
    for (const QString& n : m_runOrder) {
        for (const QPointF& p : m_runs[n].curve) xs.insert(int64_t(p.x()));
        if (m_runs[n].evaluations > 0) xs.insert(m_runs[n].evaluations);
    }
    QString out;
    QTextStream ts(&out);
    ts << "evaluations";
    for (const QString& n : m_runOrder) ts << ",best_" << n << "_tokens_per_s";
    ts << '\n';
    for (int64_t x : xs) {
        ts << x;
        for (const QString& n : m_runOrder) {
            const RunState& r = m_runs[n];
            ts << ',';
            if (x > r.evaluations) continue;
            double best = 0;
            for (const QPointF& p : r.curve)
                if (int64_t(p.x()) <= x) best = p.y();
            if (best > 0) ts << QString::number(best, 'f', 3);
        }
        ts << '\n';
    }
    ts.flush();
    QString error;
    if (!views::saveFile(path, out.toUtf8(), &error)) {
        showError(error);
        return false;
    }
    statusBar()->showMessage(tr("Exported the search history to %1").arg(QDir::toNativeSeparators(path)),
                             8000);
    return true;
}

bool MainWindow::exportImage(Tab view, const QString& path) {
    QString error;
    bool ok = false;
    switch (view) {
    case Tab::Sharding: {
        views::ShardingHeatmap* h = m_sharding->heatmap();
        ok = views::saveImage(h, path, &error, [h](QPainter& p, const QRect& r) { h->paintTo(p, r); });
        break;
    }
    case Tab::Topology: {
        views::TopologyCanvas* c = m_topology->canvas();
        ok = views::saveImage(c, path, &error, [c](QPainter& p, const QRect& r) { c->paintTo(p, r); });
        break;
    }
    case Tab::Chart:
        showTab(view);
        ok = views::saveImage(m_chart->plotWidget(), path, &error);
        break;
    case Tab::LearningCurve:
        showTab(view);
        ok = views::saveImage(m_learning->plotWidget(), path, &error);
        break;
    case Tab::Comparison:
        showTab(view);
        ok = views::saveImage(m_comparison, path, &error);
        break;
    case Tab::Plan:
        showTab(view);
        ok = views::saveImage(m_details, path, &error);
        break;
    }
    if (!ok) {
        showError(error);
        return false;
    }
    statusBar()->showMessage(tr("Exported %1 to %2").arg(tabName(view), QDir::toNativeSeparators(path)),
                             8000);
    return true;
}

void MainWindow::exportPlanDialog() {
    const QString dir =
        m_scenarioPath.isEmpty() ? QDir::homePath() : QFileInfo(m_scenarioPath).absolutePath();
    QString selected;
    QString path =
        QFileDialog::getSaveFileName(this, tr("Export Plan"), QDir(dir).filePath(QStringLiteral("plan.yaml")),
                                     tr("YAML plan (*.yaml *.yml);;JSON plan (*.json)"), &selected);
    if (path.isEmpty()) return;
    if (QFileInfo(path).suffix().isEmpty())
        path += selected.contains(QLatin1String("json")) ? QStringLiteral(".json") : QStringLiteral(".yaml");
    exportPlan(path);
}

void MainWindow::exportLaunchDialog(ServingEngine engine) {
    const QString dir =
        m_scenarioPath.isEmpty() ? QDir::homePath() : QFileInfo(m_scenarioPath).absolutePath();
    const QString name = QStringLiteral("launch-%1.sh").arg(qs(nameOf(engine)));
    QString path = QFileDialog::getSaveFileName(this, tr("Export Launch Command"), QDir(dir).filePath(name),
                                                tr("Shell script (*.sh)"));
    if (path.isEmpty()) return;
    if (QFileInfo(path).suffix().isEmpty()) path += QStringLiteral(".sh");
    exportLaunchCommand(engine, path);
}

void MainWindow::exportCsvDialog() {
    QString path = QFileDialog::getSaveFileName(this, tr("Export Search History"),
                                                QStringLiteral("history.csv"), tr("CSV (*.csv)"));
    if (path.isEmpty()) return;
    if (QFileInfo(path).suffix().isEmpty()) path += QStringLiteral(".csv");
    exportHistoryCsv(path);
}

void MainWindow::exportImageDialog(Tab view) {
    QString selected;
    QString base = tabName(view).toLower().replace(QLatin1Char(' '), QLatin1Char('-'));
    QString path =
        QFileDialog::getSaveFileName(this, tr("Export %1").arg(tabName(view)), base + QStringLiteral(".png"),
                                     tr("PNG image (*.png);;SVG image (*.svg)"), &selected);
    if (path.isEmpty()) return;
    if (QFileInfo(path).suffix().isEmpty())
        path += selected.contains(QLatin1String("svg")) ? QStringLiteral(".svg") : QStringLiteral(".png");
    exportImage(view, path);
}

// ---------------------------------------------------------------------------------------------------------------
// Screenshots

void MainWindow::runScreenshots(const QString& dir, qint64 budget) {
    QDir().mkpath(dir);
    resize(1600, 1000);
    m_runPanel->setBudget(budget);
    QStringList run;
    for (const char* n : {"random", "sa", "ga", "rl"})
        if (m_runPanel->searchers().contains(QLatin1String(n))) run << QLatin1String(n);
    m_runPanel->setSelectedSearchers(run);
    struct Shot {
        Tab tab;
        QString file;
    };
    auto shots = std::make_shared<QVector<Shot>>(
        QVector<Shot>{{Tab::Chart, QStringLiteral("planner-search.png")},
                      {Tab::Sharding, QStringLiteral("planner-sharding.png")},
                      {Tab::Topology, QStringLiteral("planner-topology.png")},
                      {Tab::Comparison, QStringLiteral("planner-comparison.png")},
                      {Tab::Plan, QStringLiteral("planner-plan.png")},
                      {Tab::LearningCurve, QStringLiteral("planner-learning-curve.png")}});
    auto next = std::make_shared<std::function<void(int)>>();
    *next = [this, dir, shots, next](int i) {
        if (i > 0) {
            const Shot& prev = (*shots)[i - 1];
            grab().save(QDir(dir).filePath(prev.file));
        }
        if (i == shots->size()) {
            exportImage(Tab::Sharding, QDir(dir).filePath(QStringLiteral("view-sharding.png")));
            exportImage(Tab::Topology, QDir(dir).filePath(QStringLiteral("view-topology.png")));
            exportImage(Tab::Sharding, QDir(dir).filePath(QStringLiteral("view-sharding.svg")));
            m_editor->grab().save(QDir(dir).filePath(QStringLiteral("panel-scenario.png")));
            m_runPanel->grab().save(QDir(dir).filePath(QStringLiteral("panel-search.png")));
            QTimer::singleShot(0, qApp, &QCoreApplication::quit);
            return;
        }
        showTab((*shots)[i].tab);
        if ((*shots)[i].tab == Tab::Topology) {
            // Outline the groups of a GPU in the middle of the cluster.
            const int gpus = m_ctx ? m_ctx->scenario().gpus() : 0;
            m_topology->canvas()->setHoveredGpu(gpus > 8 ? gpus / 2 + 1 : std::min(1, gpus - 1));
        }
        QTimer::singleShot(400, this, [next, i] { (*next)(i + 1); });
    };
    connect(
        this, &MainWindow::searchFinished, this, [next] { QTimer::singleShot(300, [next] { (*next)(0); }); },
        Qt::SingleShotConnection);
    show();
    QTimer::singleShot(200, this, &MainWindow::startSearch);
}

} // namespace sp::app
