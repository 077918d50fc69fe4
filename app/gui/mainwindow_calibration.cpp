// The main window's calibration dock (Tools > Calibration...): the measurements against the cost model, the
// fit of the cluster's efficiency factors (views/calibrationview.h), and "Use the fitted cluster", which is
// an edit of the scenario like any other: undoable, and the results go stale.
#include "mainwindow_p.h"

#include "core/common/paths.h"
#include "core/cost/costmodel.h"
#include "views/calibrationview.h"
#include "views/fleetview.h"

namespace sp::app {

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
    m_calibrationDock = new QDockWidget(tr("Calibration"), this);
    m_calibrationDock->setObjectName(QStringLiteral("calibrationDock"));
    m_calibrationDock->setWidget(m_calibration);
    addDockWidget(Qt::RightDockWidgetArea, m_calibrationDock);
    m_calibrationDock->hide();
}

void MainWindow::showCalibration() {
    if (m_calibration->origin().isEmpty()) {
        // The first time: float it at a size where the table and the plot read, and load the project's file.
        if (!m_calibrationDock->isVisible()) {
            m_calibrationDock->setFloating(true);
            m_calibrationDock->resize(1100, 760);
        }
        m_calibration->loadFile(QString::fromStdString(calibrationFile()));
    }
    m_calibrationDock->show();
    m_calibrationDock->raise();
    m_calibrationDock->activateWindow();
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

} // namespace sp::app

namespace sp::app {

// The fleet planner (Tools > Fleet...): several models on one GPU inventory at least cost
// (views/fleetview.h).
void MainWindow::buildFleetDock() {
    m_fleet = new views::FleetView;
    m_fleetDock = new QDockWidget(tr("Fleet"), this);
    m_fleetDock->setObjectName(QStringLiteral("fleetDock"));
    m_fleetDock->setWidget(m_fleet);
    addDockWidget(Qt::RightDockWidgetArea, m_fleetDock);
    m_fleetDock->hide();
}

void MainWindow::showFleet() {
    if (!m_fleet->fleet()) {
        if (!m_fleetDock->isVisible()) {
            m_fleetDock->setFloating(true);
            m_fleetDock->resize(1100, 820);
        }
        m_fleet->loadFile(m_samplesDir + QStringLiteral("/fleet-three-models.yaml"));
    }
    m_fleetDock->show();
    m_fleetDock->raise();
    m_fleetDock->activateWindow();
}

} // namespace sp::app
