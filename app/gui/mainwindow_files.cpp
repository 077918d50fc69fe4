// The main window's files: opening any file by its kind, the session dialogs, and the exports (plan, launch
// command, history, images) with their dialogs.
#include "mainwindow_p.h"

namespace sp::app {

// ---------------------------------------------------------------------------------------------------------------
// Files

bool MainWindow::openFile(const QString& path) {
    if (QFileInfo(path).suffix() == kSessionSuffix) return openSession(path);
    auto kind = detectKind(path.toStdString());
    if (!kind) {
        showError(views::MessageBanner::fromBytes(kind.error().str()), Cause::OpenFile);
        return false;
    }
    switch (kind.value()) {
    case FileKind::Scenario:
        return openScenario(path);
    case FileKind::Plan:
        return openPlan(path);
    case FileKind::Fleet: {
        // The fleet dock, on this file (a bad one leaves the fleet shown before).
        QString error;
        if (!openFleet(path, &error)) {
            showError(views::MessageBanner::fromBytes(error.toStdString()), Cause::OpenFile);
            return false;
        }
        clearOpenError();
        addRecent(path);
        return true;
    }
    case FileKind::Prices:
        // Replacing the database's prices while views and workers read them is not done: at start-up only.
        showError(
            tr("%1 is a price list: start the planner with it (shardplanner --prices %1), or give it to "
               "the CLI with --prices")
                .arg(path),
            Cause::OpenFile);
        return false;
    default: {
        QString error;
        if (!m_editor->loadPart(kind.value(), path, &error)) return false; // shown through failed()
        clearOpenError();
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
        showError(views::MessageBanner::fromBytes(plan.error().str()), Cause::OpenFile);
        return false;
    }
    if (!m_ctx) {
        showError(tr("Open a scenario before a plan."), Cause::OpenFile);
        return false;
    }
    if (auto why = m_ctx->costModel().checkPlan(plan.value())) {
        showError(tr("%1: the plan does not fit the scenario: %2").arg(path, qs(*why)), Cause::OpenFile);
        return false;
    }
    m_openedLabel = QFileInfo(path).fileName();
    m_opened = views::makePlanRecord(m_ctx->costModel(), plan.value(), m_openedLabel.toStdString(), "file");
    m_eliteView->selectionModel()->clearSelection();
    clearOpenError();
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
    const QString path = m_dialogs->openFile(
        tr("Open"), tr("Shard Planner files (*.yaml *.yml *.json *.%1);;Sessions (*.%1);;All files (*)")
                        .arg(kSessionSuffix));
    if (!path.isEmpty()) openFile(path);
}

bool MainWindow::saveSession(const QString& path) {
    return SessionFiles::save(*this, path);
}

bool MainWindow::openSession(const QString& path) {
    return SessionFiles::open(*this, path);
}

void MainWindow::saveSessionDialog(bool saveAs) {
    QString path = m_sessionPath;
    if (saveAs || path.isEmpty()) {
        const QString name = m_sessionPath.isEmpty() ? fileNameFor(scenarioTitle(), kSessionSuffix)
                                                     : QFileInfo(m_sessionPath).fileName();
        path = m_dialogs->saveFile(tr("Save Session"), name,
                                   tr("Shard Planner sessions (*.%1)").arg(kSessionSuffix), kSessionSuffix);
        if (path.isEmpty()) return;
    }
    saveSession(path);
}

void MainWindow::openSessionDialog() {
    const QString path = m_dialogs->openFile(
        tr("Open Session"), tr("Shard Planner sessions (*.%1);;All files (*)").arg(kSessionSuffix));
    if (!path.isEmpty()) openSession(path);
}

// ---------------------------------------------------------------------------------------------------------------
// Exports

views::PlanRecordPtr MainWindow::exportedPlan() {
    const views::PlanRecordPtr r = m_current ? m_current : (m_ctx ? m_ctx->megatron() : nullptr);
    if (!r) showError(tr("No plan to export."));
    return r;
}

bool MainWindow::exportPlan(const QString& path) {
    const views::PlanRecordPtr r = exportedPlan();
    if (!r) return false;
    QString error;
    if (!views::saveFile(path, planFileText(*r, m_ctx->scenario(), scenarioTitle(), path), &error)) {
        showError(error);
        return false;
    }
    statusBar()->showMessage(tr("Exported %1 to %2").arg(qs(r->label), QDir::toNativeSeparators(path)), 8000);
    return true;
}

bool MainWindow::exportLaunchCommand(ServingEngine engine, const QString& path) {
    const views::PlanRecordPtr r = exportedPlan();
    if (!r) return false;
    QString error;
    const QByteArray text = launchScript(*r, m_ctx->scenario(), scenarioTitle(), engine, &error);
    if (text.isEmpty() || !views::saveFile(path, text, &error)) {
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
    QString error;
    if (!views::saveFile(path, m_runs.historyCsv().toUtf8(), &error)) {
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
    case Tab::Timeline: {
        views::TimelineCanvas* c = m_timeline->canvas();
        ok = views::saveImage(c, path, &error, [c](QPainter& p, const QRect& r) { c->paintTo(p, r); });
        break;
    }
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
    const QString path = m_dialogs->saveFile(tr("Export Plan"), QStringLiteral("plan.yaml"),
                                             tr("YAML plan (*.yaml *.yml);;JSON plan (*.json)"));
    if (!path.isEmpty()) exportPlan(path);
}

void MainWindow::exportLaunchDialog(ServingEngine engine) {
    const QString name = QStringLiteral("launch-%1.sh").arg(qs(nameOf(engine)));
    const QString path = m_dialogs->saveFile(tr("Export Launch Command"), name, tr("Shell script (*.sh)"));
    if (!path.isEmpty()) exportLaunchCommand(engine, path);
}

bool MainWindow::exportLaunchFiles(const ExportOptions& options, const QString& dir) {
    const views::PlanRecordPtr r = exportedPlan();
    if (!r) return false;
    auto command = launchCommand(m_ctx->scenario(), r->plan, options);
    if (!command) {
        showError(qs(command.error().str()));
        return false;
    }
    auto written = writeLaunchDirectory(dir.toStdString(), command.value(),
                                        toYaml(command->plan, m_ctx->scenario().model));
    if (!written) {
        showError(qs(written.error().str()));
        return false;
    }
    QString message = tr("Exported %1 for %2 %3: %n file(s) in %4", nullptr, int(written->size()))
                          .arg(qs(r->label), qs(nameOf(options.engine)), qs(command->version),
                               QDir::toNativeSeparators(dir));
    if (command->adapted) message += tr(" (adapted: see NOTES.txt)");
    statusBar()->showMessage(message, 10000);
    return true;
}

void MainWindow::exportLaunchFilesDialog() {
    if (!exportedPlan()) return;
    LaunchExportDialog dialog(
        m_launchDir.isEmpty() ? QDir(m_dialogs->lastDir()).filePath(QStringLiteral("launch")) : m_launchDir,
        this);
    dialog.setOptions(m_launchOptions);
    if (dialog.exec() != QDialog::Accepted) return;
    m_launchOptions = dialog.options();
    m_launchDir = dialog.directory();
    exportLaunchFiles(m_launchOptions, m_launchDir);
}

void MainWindow::exportCsvDialog() {
    const QString path =
        m_dialogs->saveFile(tr("Export Search History"), QStringLiteral("history.csv"), tr("CSV (*.csv)"));
    if (!path.isEmpty()) exportHistoryCsv(path);
}

void MainWindow::exportImageDialog(Tab view) {
    const QString base = tabName(view).toLower().replace(QLatin1Char(' '), QLatin1Char('-'));
    const QString path =
        m_dialogs->saveFile(tr("Export %1").arg(tabName(view)), base + QStringLiteral(".png"),
                            tr("PNG image (*.png);;SVG image (*.svg)"));
    if (!path.isEmpty()) exportImage(view, path);
}

} // namespace sp::app
