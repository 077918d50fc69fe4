#include "mainwindow.h"

#include "core/io/formats.h"
#include "views/scenariosummary.h"

#include <QFileDialog>
#include <QMenuBar>
#include <QMessageBox>
#include <QStatusBar>

namespace sp::app {

MainWindow::MainWindow(QWidget* parent) : QMainWindow(parent) {
    m_summary = new views::ScenarioSummary(this);
    setCentralWidget(m_summary);
    auto* file = menuBar()->addMenu(tr("&File"));
    file->addAction(tr("&Open Scenario..."), QKeySequence::Open, this, &MainWindow::openDialog);
    file->addSeparator();
    file->addAction(tr("&Quit"), QKeySequence::Quit, this, &QWidget::close);
    resize(1100, 720);
    setWindowTitle(tr("Shard Planner"));
}

bool MainWindow::openScenario(const QString& path) {
    auto s = loadScenario(path.toStdString());
    if (!s) {
        QMessageBox::warning(this, tr("Cannot open scenario"), QString::fromStdString(s.error().str()));
        statusBar()->showMessage(QString::fromStdString(s.error().str()));
        return false;
    }
    m_scenario = s.value();
    m_path = path;
    m_summary->setScenario(m_scenario);
    setWindowTitle(tr("%1 - Shard Planner").arg(QString::fromStdString(m_scenario.name)));
    statusBar()->showMessage(tr("Opened %1").arg(path), 5000);
    return true;
}

void MainWindow::openDialog() {
    const QString path = QFileDialog::getOpenFileName(this, tr("Open Scenario"), QFileInfo(m_path).absolutePath(),
                                                      tr("Scenarios (*.yaml *.yml *.json);;All files (*)"));
    if (!path.isEmpty()) openScenario(path);
}

} // namespace sp::app
