// The main window's widgets (docks, tabs, elite table, banners) and the screenshot mode.
#include "mainwindow_p.h"

#include <QStyle>

namespace sp::app {

QScrollArea* MainWindow::scrolledPage(QWidget* page) {
    // A view wider or taller than a laptop's tab area scrolls inside its tab rather than widen the window.
    auto* scroll = new QScrollArea;
    scroll->setWidget(page);
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    return scroll;
}

// ---------------------------------------------------------------------------------------------------------------
// Building

void MainWindow::buildUi() {
    setDockNestingEnabled(true);
    // Scenario dock.
    m_editor = new views::ScenarioEditor(m_samplesDir);
    auto* scroll = new QScrollArea;
    m_scenarioScroll = scroll;
    scroll->setWidget(m_editor);
    scroll->setWidgetResizable(true);
    scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    scroll->setFrameShape(QFrame::NoFrame);
    m_editor->installEventFilter(this); // its minimum width changes with the constraints shown
    auto* scenarioDock = new QDockWidget(tr("Scenario"), this);
    m_scenarioDock = scenarioDock;
    scenarioDock->setObjectName(QStringLiteral("scenarioDock"));
    scenarioDock->setWidget(scroll);
    // Closable: View > Scenario Panel hides and shows it (the window's saved state keeps which).
    scenarioDock->setFeatures(QDockWidget::DockWidgetClosable | QDockWidget::DockWidgetMovable |
                              QDockWidget::DockWidgetFloatable);
    addDockWidget(Qt::LeftDockWidgetArea, scenarioDock);
    connect(m_editor, &views::ScenarioEditor::edited, this, &MainWindow::scenarioEdited);
    m_undo = new ScenarioUndo(
        [this](const Scenario& s) {
            m_editor->setScenario(s);
            scenarioEdited();
        },
        this);
    connect(m_editor, &views::ScenarioEditor::edited, this, [this] { m_undo->record(m_editor->scenario()); });
    connect(m_editor, &views::ScenarioEditor::failed, this,
            [this](const QString& message) { showError(message, Cause::PartFile); });
    fitScenarioPanel();

    // Run dock.
    m_runPanel = new views::RunPanel;
    QStringList names, checked;
    for (const std::string& n : searcherNames()) names << QString::fromStdString(n);
    for (const char* n : {"random", "sa", "ga", "rl"})
        if (names.contains(QLatin1String(n))) checked << QLatin1String(n);
    m_runPanel->setSearchers(names, checked);
    // No taller than its contents: the scenario panel above gets the rest of the height.
    m_runPanel->setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Maximum);
    auto* runDock = new QDockWidget(tr("Search"), this);
    runDock->setObjectName(QStringLiteral("runDock"));
    runDock->setWidget(m_runPanel);
    runDock->setFeatures(QDockWidget::DockWidgetClosable | QDockWidget::DockWidgetMovable |
                         QDockWidget::DockWidgetFloatable);
    addDockWidget(Qt::LeftDockWidgetArea, runDock);
    splitDockWidget(scenarioDock, runDock, Qt::Vertical);
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
    m_timeline = new views::TimelineView;
    m_tabs = new QTabWidget;
    m_tabs->setDocumentMode(true);
    const std::pair<Tab, QWidget*> tabs[] = {
        {Tab::Chart, m_chart},       {Tab::LearningCurve, m_learning}, {Tab::Sharding, m_sharding},
        {Tab::Topology, m_topology}, {Tab::Comparison, m_comparison},  {Tab::Plan, m_details},
        {Tab::Timeline, m_timeline}};
    const char* tips[] = {"Best throughput against evaluations, per searcher",
                          "The rl searcher's learning curve",
                          "Sharding choice or time share per operator and layer",
                          "GPUs, pipeline stages, parallel groups and link load",
                          "Two plans side by side",
                          "The selected plan's metrics and file",
                          "One step of the selected plan: operators and collectives per pipeline stage"};
    for (const auto& [t, w] : tabs) {
        // The topology and the timeline scroll their canvases themselves.
        const bool scrolls = t == Tab::Topology || t == Tab::Timeline;
        const int i = m_tabs->addTab(scrolls ? w : scrolledPage(w), tabName(t));
        m_tabs->setTabToolTip(i, tr(tips[i]));
    }
    buildParetoTab();
    buildCalibrationDock();
    buildFleetDock();

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
    // Three rows at least, so that the splitter above it moves on a 720 px screen (a minimum of ten rows
    // left it no room either way); fitSplit gives it ten when there is room.
    m_eliteView->setMinimumHeight(eliteViewHeight(3));
    m_eliteView->horizontalHeader()->setStretchLastSection(true);
    // The operator choices beside the degrees: rows alike in every figure differ there, and at the end of a
    // wide table the column was cut off.
    {
        QHeaderView* h = m_eliteView->horizontalHeader();
        h->moveSection(h->visualIndex(views::EliteModel::Sharding), h->visualIndex(views::EliteModel::Mesh));
    }
    m_eliteView->horizontalHeader()->setHighlightSections(false);
    m_eliteView->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_eliteView->setToolTip(tr("The best distinct plans found; select one to show it in every view"));
    connect(m_eliteView->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            &MainWindow::eliteSelectionChanged);
    connect(m_eliteView, &QTableView::clicked, this, [this] { m_userSelected = true; });
    buildServingTab(); // the last tab; it names the best plan of the elite model
    m_eliteCaption = new QLabel(tr("<b>Elite plans</b>"));
    // Wrapped: on one line its text after a run set the window's minimum width (832 -> 1,061 px).
    m_eliteCaption->setWordWrap(true);
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
    m_split = split;
    split->setObjectName(QStringLiteral("centralSplit"));
    split->addWidget(m_tabs);
    split->addWidget(elitePanel);
    // A taller window gives its height to the views; the elite table keeps the height it was given.
    split->setStretchFactor(0, 1);
    split->setStretchFactor(1, 0);
    split->setChildrenCollapsible(false);
    split->installEventFilter(this); // its resizes: fitSplit, until the user moves it
    connect(split, &QSplitter::splitterMoved, this, [this] { m_splitSized = true; });
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

int MainWindow::eliteViewHeight(int rows) const {
    // The header, the rows, the frame, and a horizontal scroll bar when the columns are wider than the view.
    return m_eliteView->horizontalHeader()->sizeHint().height() +
           rows * m_eliteView->verticalHeader()->defaultSectionSize() + 6 +
           m_eliteView->style()->pixelMetric(QStyle::PM_ScrollBarExtent);
}

void MainWindow::fitSplit() {
    // The elite table gets ten rows when the tabs keep kTabsHeight px, else what is left, down to its
    // minimum: at 1280x720 the tabs get 400 px (a ten-row minimum of the table left them 240 to 340), at
    // 1600x1000 the table its ten rows.
    QWidget* elite = m_split->widget(1);
    const int avail = m_split->contentsRect().height() - m_split->handleWidth();
    if (avail <= 0) return;
    const int preferred = elite->sizeHint().height() - m_eliteView->sizeHint().height() + eliteViewHeight(10);
    const int least = std::max(elite->minimumSizeHint().height(), elite->minimumHeight());
    const int height = std::max(least, std::min(preferred, avail - kTabsHeight));
    if (m_split->sizes() != QList<int>{avail - height, height}) m_split->setSizes({avail - height, height});
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
                      {Tab::Timeline, QStringLiteral("planner-timeline.png")},
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
            // A large cluster fitted to the window.
            if (gpus > 64) m_topology->canvas()->fit();
        }
        if ((*shots)[i].tab == Tab::Timeline) {
            // A plan that drafts: its draft passes hovered, so the picture names them.
            const auto& items = m_timeline->canvas()->timeline().items;
            for (int k = 0; k < int(items.size()); ++k)
                if (items[size_t(k)].kind == views::TimelineItem::Kind::Draft)
                    m_timeline->canvas()->setHoveredItem(k);
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
