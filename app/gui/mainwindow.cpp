#include "core/common/paths.h"
#include "mainwindow_p.h"

namespace sp::app {

MainWindow::MainWindow(QWidget* parent) : MainWindow(Options{}, parent) {}

MainWindow::MainWindow(const Options& options, QWidget* parent)
    : QMainWindow(parent), m_options(options), m_samplesDir(QString::fromStdString(sp::samplesDir())) {
    registerMetatypes();
    m_dialogs = std::make_unique<FileDialogs>(this, m_samplesDir + QStringLiteral("/scenarios"),
                                              m_options.persistSettings);
    m_dialogs->setShippedDir(m_samplesDir); // save dialogs keep out of the program's own samples
    if (m_options.fileAnswer) m_dialogs->setAnswer(m_options.fileAnswer);
    m_controller = new SearchController(this);
    connect(m_controller, &SearchController::progressed, this, &MainWindow::onProgress);
    connect(m_controller, &SearchController::runFinished, this, &MainWindow::onRunFinished);
    connect(m_controller, &SearchController::runFailed, this, &MainWindow::onRunFailed);
    connect(m_controller, &SearchController::batchFinished, this, &MainWindow::onBatchFinished);
    m_refreshTimer.setObjectName(QStringLiteral("eliteRefresh")); // named in bench_gui_stall's report
    m_refreshTimer.setSingleShot(true);
    m_refreshTimer.setInterval(40);
    connect(&m_refreshTimer, &QTimer::timeout, this, &MainWindow::refreshElite);

    buildUi();
    WindowActions::build(*this);
    // Shortcuts a focused text field would otherwise take (a line edit reads Ctrl+E as "end of line").
    qApp->installEventFilter(this);
    // The default size, within the screen it opens on less a title bar and a panel (a 1366x768 laptop opens
    // at 1346x708; a saved geometry, restored below, comes first).
    QSize size(1480, 920);
    if (const QScreen* sc = screen())
        size = size.boundedTo(sc->availableGeometry().size() - QSize(20, 60)).expandedTo(QSize(800, 560));
    resize(size);
    // The search panel as tall as its contents, the scenario panel the rest: its constraints then fit
    // unscrolled at 1600x1000 (after the resize: before it, the docks are split at the default size).
    if (auto* runDock = findChild<QDockWidget*>(QStringLiteral("runDock")))
        resizeDocks({m_scenarioDock, runDock}, {height(), runDock->sizeHint().height()}, Qt::Vertical);
    if (m_options.persistSettings) {
        QSettings s;
        restoreGeometry(s.value(QStringLiteral("window/geometry")).toByteArray());
        restoreState(s.value(QStringLiteral("window/state")).toByteArray());
        // The tabs' and elite table's heights as the user left them (fitSplit's defaults otherwise).
        if (m_split->restoreState(s.value(QStringLiteral("window/split")).toByteArray())) m_splitSized = true;
        rebuildRecentMenu();
    }
    updateTitle();
}

MainWindow::~MainWindow() = default;

void MainWindow::showAbout() {
    QMessageBox::about(
        this, tr("About Shard Planner"),
        tr("<b>Shard Planner</b> %1<p>Plans the parallelism degrees and per-operator sharding of LLM "
           "inference on GPU clusters, after <i>Learning to Shard</i> (arXiv 2509.00217).</p>")
            .arg(QApplication::applicationVersion()));
}

QAction* MainWindow::action(const QString& name) const {
    return m_actions.value(name);
}

void MainWindow::fitScenarioPanel() {
    // Wide enough for the editor's widest row beside the vertical scroll bar, whatever the dock was resized
    // to before.
    const int need = m_editor->minimumSizeHint().width() +
                     m_scenarioScroll->verticalScrollBar()->sizeHint().width() +
                     2 * m_scenarioScroll->frameWidth() + 4;
    if (m_scenarioScroll->minimumWidth() != need) m_scenarioScroll->setMinimumWidth(need);
}

bool MainWindow::eventFilter(QObject* watched, QEvent* e) {
    if (watched == m_editor && e->type() == QEvent::LayoutRequest) {
        fitScenarioPanel();
    } else if (watched == m_split && e->type() == QEvent::Resize && !m_splitSized) {
        fitSplit(); // before the splitter lays out its new height
    } else if (e->type() == QEvent::ShortcutOverride) {
        auto* w = qobject_cast<QWidget*>(watched);
        if (w && w->window() == this) {
            const QKeySequence key(static_cast<QKeyEvent*>(e)->keyCombination());
            for (const char* name : {"exportPlan", "exportHistory", "undo", "redo"}) {
                QAction* a = action(QLatin1String(name));
                if (a && a->isEnabled() && a->shortcut() == key) return true; // not accepted: the action runs
            }
        }
    }
    return QMainWindow::eventFilter(watched, e);
}

// ---------------------------------------------------------------------------------------------------------------
// Scenario

void MainWindow::setScenario(const Scenario& s, const QString& path) {
    m_controller->cancel();
    // rl's policy carries to this scenario only if it is the same problem (the same file opened again):
    // otherwise the same scenario and seed would search differently after another file was open.
    m_controller->keepLearnedFor(s);
    m_paretoRunner->cancel();
    m_pareto->clear();
    m_pareto->setRunning(false);
    m_paretoScenario = nullptr;
    resetServing();
    m_runPanel->setRunning(false);
    m_startAction->setEnabled(true);
    updateStopAction();
    m_editor->setScenario(s);
    m_loadedScenario = s;
    m_undo->reset(s);
    m_ctx = std::make_shared<SearchContext>(s);
    m_scenarioPath = path;
    m_sessionPath.clear();
    m_opened = nullptr;
    m_openedLabel.clear();
    startAfresh(s);
    showPlan(m_ctx->megatron());
    refreshComparison();
    updateTitle();
}

bool MainWindow::openScenario(const QString& path) {
    auto s = loadScenario(path.toStdString());
    if (!s) {
        showError(views::MessageBanner::fromBytes(s.error().str()), Cause::OpenFile);
        return false;
    }
    if (!confirmDiscard(tr("open another scenario"))) return false;
    setScenario(s.value(), path);
    addRecent(path);
    statusBar()->showMessage(tr("Opened %1").arg(QDir::toNativeSeparators(path)), 5000);
    return true;
}

void MainWindow::scenarioEdited() {
    // A field that does not validate keeps its last valid value: the other edits still apply.
    clearFixedErrors();
    refreshParetoStale();
    const Scenario& s = m_editor->scenario();
    if (m_ctx && s == m_ctx->scenario()) {
        m_staleBanner->hide();
        updateTitle();
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

void MainWindow::showError(const QString& message, Cause cause) {
    // Errors quote files: a control character or a byte that is not text shows as an escape, not a glyph.
    const QString text = views::MessageBanner::plainText(message);
    m_banner->showMessage(views::MessageBanner::Kind::Error, text.toHtmlEscaped());
    m_errorCause = cause;
    statusBar()->showMessage(text, 15000);
}

void MainWindow::clearFixedErrors() {
    // An error whose cause was the scenario goes once the scenario no longer has it.
    bool fixed = false;
    switch (m_errorCause) {
    case Cause::InvalidScenario:
        fixed = m_editor->isValid();
        break;
    case Cause::EmptySpace:
        fixed = !SearchSpace(m_editor->scenario()).empty();
        break;
    case Cause::PartFile:
        fixed = true; // a part was loaded or edited since
        break;
    case Cause::OpenFile: // goes when another file opens (clearOpenError)
    case Cause::None:
    case Cause::Other:
        break;
    }
    if (!fixed) return;
    m_banner->hide();
    m_errorCause = Cause::None;
    statusBar()->clearMessage();
}

void MainWindow::clearOpenError() {
    if (m_errorCause != Cause::OpenFile && m_errorCause != Cause::PartFile) return;
    m_banner->hide();
    m_errorCause = Cause::None;
}

void MainWindow::showInfo(const QString& message) {
    m_banner->showMessage(views::MessageBanner::Kind::Info, message.toHtmlEscaped());
    m_errorCause = Cause::None;
    statusBar()->showMessage(message, 10000);
}

QString MainWindow::scenarioTitle() const {
    if (!m_ctx) return tr("No scenario");
    const Scenario& s = m_editor->scenario();
    if (s == m_loadedScenario) return qs(s.name);
    // Edited: say what it is now (the file's name would name the old cluster or workload).
    const QString workload =
        s.workload == m_loadedScenario.workload ? qs(s.workload.name) : tr("edited workload");
    return tr("%1 on %2x%3 %4, %5 (edited)")
        .arg(qs(s.model.name))
        .arg(s.cluster.nodes)
        .arg(s.cluster.gpusPerNode)
        .arg(qs(s.cluster.gpu.name), workload);
}

QString MainWindow::scenarioStatus() const {
    if (!m_ctx) return {};
    const Scenario& s = m_editor->scenario();
    const QString workload =
        s.workload == m_loadedScenario.workload ? qs(s.workload.name) : tr("edited workload");
    return tr("%1 | %2 x %3 %4 | %5")
        .arg(qs(s.model.name))
        .arg(s.cluster.nodes)
        .arg(s.cluster.gpusPerNode)
        .arg(qs(s.cluster.gpu.name), workload);
}

void MainWindow::updateTitle() {
    QString name = scenarioTitle();
    if (!m_sessionPath.isEmpty()) name += QStringLiteral(" (%1)").arg(QFileInfo(m_sessionPath).fileName());
    setWindowTitle(tr("%1[*] - Shard Planner").arg(name));
    setWindowModified(hasUnsavedResults());
    m_statusScenario->setText(scenarioStatus());
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

int MainWindow::ask(const QString& title, const QString& text, int buttons, int defaultButton) {
    if (m_options.ask) return m_options.ask(title, text);
    return QMessageBox::question(this, title, text, QMessageBox::StandardButtons(buttons),
                                 QMessageBox::StandardButton(defaultButton));
}

bool MainWindow::confirmDiscard(const QString& what) {
    if (isSearching() && (m_options.confirmClose || m_options.ask)) {
        // The running search's results would be lost: ask, whether or not earlier ones were saved.
        const int answer =
            ask(tr("Search running"),
                tr("A search is running. Stop it and save the session, or discard its "
                   "results, to %1?")
                    .arg(what),
                QMessageBox::Save | QMessageBox::Discard | QMessageBox::Cancel, QMessageBox::Cancel);
        if (answer == QMessageBox::Save) {
            stopSearchAndWait();
            saveSessionDialog(false);
            return !hasUnsavedResults();
        }
        if (answer != QMessageBox::Discard) return false;
        m_controller->cancel();
        return true;
    }
    if ((!m_options.confirmClose && !m_options.ask) || !hasUnsavedResults()) return true;
    QString which = tr("The search results are not saved.");
    if (!m_unsaved)
        which = tr("The serving results are not saved.");
    else if (m_servingUnsaved)
        which = tr("The search and serving results are not saved.");
    const int answer = ask(tr("Unsaved results"), tr("%1 Save the session before you %2?").arg(which, what),
                           QMessageBox::Save | QMessageBox::Discard | QMessageBox::Cancel, QMessageBox::Save);
    if (answer == QMessageBox::Cancel) return false;
    if (answer == QMessageBox::Save) {
        saveSessionDialog(false);
        return !hasUnsavedResults();
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
        if (m_splitSized) s.setValue(QStringLiteral("window/split"), m_split->saveState());
    }
    e->accept();
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
    if (m_refreshingElite) return;
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
    m_timeline->setPlan(scenario, m_current);
    emit currentPlanChanged();
}

void MainWindow::refreshComparison() {
    if (!m_ctx) return;
    QVector<views::NamedPlan> list;
    list.append({tr("Megatron"), m_ctx->megatron(), nullptr});
    int right = 0;
    const views::PlanRecordPtr best = bestRecord();
    if (best) {
        right = int(list.size());
        list.append({qs(best->label), best, nullptr});
    }
    if (m_current && m_current != m_ctx->megatron() && (!best || !(m_current->plan == best->plan)) &&
        m_current != m_opened) {
        right = int(list.size());
        list.append({tr("Selected: %1").arg(qs(m_current->label)), m_current, nullptr});
    }
    if (m_opened) {
        if (m_current == m_opened) right = int(list.size());
        list.append({tr("Opened: %1").arg(m_openedLabel), m_opened, nullptr});
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
        list.append({label, recordFor(*sorted[i]->candidate, label, sorted[i]->searcher), nullptr});
    }
    m_comparison->setScenario(SearchContext::scenarioOf(m_ctx));
    m_comparison->setCandidates(list, 0, right);
}

void MainWindow::showTab(Tab t) {
    m_tabs->setCurrentIndex(int(t));
}

void MainWindow::showPage(QWidget* view) {
    for (int i = 0; i < m_tabs->count(); ++i)
        if (m_tabs->widget(i) == view || m_tabs->widget(i)->isAncestorOf(view)) m_tabs->setCurrentIndex(i);
}

void MainWindow::appendLearningCurve(int iteration, const QList<QPair<QString, double>>& values) {
    m_learning->appendIteration(iteration, values);
}

} // namespace sp::app
