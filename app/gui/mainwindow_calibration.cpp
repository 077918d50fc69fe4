// The main window's tool docks. Calibration (Tools > Calibration...): the measurements against the cost
// model, the fit of the cluster's efficiency factors (views/calibrationview.h), and "Use the fitted cluster",
// which is an edit of the scenario like any other: undoable, and the results go stale. Fleet (Tools >
// Fleet...): several models on one GPU inventory at least cost (views/fleetview.h).
#include "mainwindow_p.h"

#include "core/common/paths.h"
#include "core/cost/costmodel.h"
#include "views/calibrationview.h"
#include "views/fleetview.h"

#include <functional>

namespace sp::app {

namespace {

/// A tool's dock, hidden until its action shows it.
QDockWidget* addToolDock(QMainWindow* w, const QString& title, const QString& name, QWidget* content) {
    auto* d = new QDockWidget(title, w);
    d->setObjectName(name);
    d->setWidget(content);
    w->addDockWidget(Qt::RightDockWidgetArea, d);
    d->hide();
    return d;
}

/// The first time (`first`), a hidden dock floats at `size`, where its tables read; `load` fills it; then it
/// is shown and raised.
void showToolDock(QDockWidget* d, bool first, QSize size, const std::function<void()>& load) {
    if (first) {
        if (!d->isVisible()) {
            d->setFloating(true);
            d->resize(size);
        }
        load();
    }
    d->show();
    d->raise();
    d->activateWindow();
}

} // namespace

void MainWindow::buildCalibrationDock() {
    m_calibration = new views::CalibrationView(m_samplesDir);
    m_calibration->setBaseSource([this]() -> std::optional<views::CalibrationView::Base> {
        if (!m_editor->isValid()) return std::nullopt;
        const Scenario& s = m_editor->scenario();
        const CostModel model(s);
        // The plan shown, when it still fits the edited scenario; else the scenario's Megatron plan.
        Plan plan = m_current && !model.checkPlan(m_current->plan) ? m_current->plan : model.megatronPlan();
        return views::CalibrationView::Base{s, plan};
    });
    connect(m_calibration, &views::CalibrationView::fittingChanged, this, &MainWindow::updateStopAction);
    connect(m_calibration, &views::CalibrationView::useFittedRequested, this,
            &MainWindow::useFittedEfficiency);
    m_calibrationDock =
        addToolDock(this, tr("Calibration"), QStringLiteral("calibrationDock"), m_calibration);
}

void MainWindow::showCalibration() {
    // The first time, the project's measurement file.
    showToolDock(m_calibrationDock, m_calibration->origin().isEmpty(), QSize(1100, 760),
                 [this] { m_calibration->loadFile(QString::fromStdString(calibrationFile())); });
}

void MainWindow::useFittedEfficiency(const Efficiency& fitted) {
    Scenario s = m_editor->scenario();
    if (s.cluster.efficiency == fitted) {
        statusBar()->showMessage(tr("The cluster already has the fitted efficiency factors"), 5000);
        return;
    }
    s.cluster.efficiency = fitted;
    // As an undo step applies a scenario, then recorded as an edit (Ctrl+Z restores the factors).
    m_editor->setScenario(s);
    scenarioEdited();
    m_undo->record(m_editor->scenario());
    statusBar()->showMessage(tr("The cluster now has the fitted efficiency factors (Ctrl+Z undoes)"), 8000);
}

void MainWindow::buildFleetDock() {
    m_fleet = new views::FleetView;
    m_fleetDock = addToolDock(this, tr("Fleet"), QStringLiteral("fleetDock"), m_fleet);
    // A session keeps the fleet as shown (sessionfiles.cpp): an edit is unsaved until the session is saved.
    connect(m_fleet, &views::FleetView::edited, this, [this] {
        m_unsaved = true;
        updateTitle();
    });
}

void MainWindow::showFleet() {
    openFleet({});
}

void MainWindow::showFleetFromSession(const Fleet& f, const QString& origin) {
    showToolDock(m_fleetDock, true, QSize(1100, 820), [&] { m_fleet->setFleet(f, origin); });
}

bool MainWindow::openFleet(const QString& path, QString* error) {
    // The first time without a file, the sample fleet.
    const QString file = path.isEmpty() ? m_samplesDir + QStringLiteral("/fleet-three-models.yaml") : path;
    bool ok = true;
    showToolDock(m_fleetDock, !m_fleet->fleet() || !path.isEmpty(), QSize(1100, 820),
                 [&] { ok = m_fleet->loadFile(file, error); });
    return ok;
}

} // namespace sp::app
