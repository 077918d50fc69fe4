#include "windowactions.h"

#include "mainwindow.h"
#include "views/clustereditor.h"
#include "views/messagebanner.h"
#include "views/runpanel.h"
#include "views/scenarioeditor.h"
#include "views/searchchart.h"

#include <QAction>
#include <QDir>
#include <QDockWidget>
#include <QIcon>
#include <QLineEdit>
#include <QMenuBar>
#include <QMessageBox>
#include <QPainter>
#include <QPixmap>
#include <QStatusBar>
#include <QStyle>
#include <QTabWidget>
#include <QToolBar>
#include <QUndoStack>

namespace sp::app {

namespace {
/// The Export Plan icon: a document with an arrow leaving it (drawn, so it differs from Save's floppy disk).
QIcon exportPlanIcon() {
    QPixmap pm(32, 32);
    pm.fill(Qt::transparent);
    QPainter p(&pm);
    p.setRenderHint(QPainter::Antialiasing);
    p.setPen(QPen(QColor(0x37, 0x41, 0x51), 2));
    p.setBrush(QColor(0xf9, 0xfa, 0xfb));
    p.drawRect(QRectF(5, 3, 16, 24));
    p.setPen(QPen(QColor(0x9c, 0xa3, 0xaf), 1.5));
    for (int y : {9, 14, 19}) p.drawLine(QPointF(9, y), QPointF(17, y));
    p.setPen(QPen(QColor(0x25, 0x63, 0xeb), 3, Qt::SolidLine, Qt::RoundCap, Qt::RoundJoin));
    p.drawLine(QPointF(16, 22), QPointF(29, 22));
    p.drawPolyline(QPolygonF({QPointF(24, 17), QPointF(29, 22), QPointF(24, 27)}));
    return QIcon(pm);
}
} // namespace

QString WindowActions::shortcutsHelp() {
    return MainWindow::tr(
        "<table cellpadding='3'>"
        "<tr><td><b>Ctrl+O</b></td><td>Open a file (scenario, part, plan, session)</td></tr>"
        "<tr><td><b>Ctrl+S / Ctrl+Shift+S</b></td><td>Save the session / as</td></tr>"
        "<tr><td><b>Ctrl+Shift+O</b></td><td>Open a session</td></tr>"
        "<tr><td><b>Ctrl+R, F5</b></td><td>Start (or rerun) the search</td></tr>"
        "<tr><td><b>Esc</b></td><td>Stop what runs: the search, the Pareto sweep, the serving "
        "simulation</td></tr>"
        "<tr><td><b>Ctrl+Z / Ctrl+Shift+Z</b></td><td>Undo / redo a scenario or constraint "
        "edit</td></tr>"
        "<tr><td><b>Ctrl+E / Ctrl+Shift+E</b></td><td>Export the plan / the search history</td></tr>"
        "<tr><td><b>Ctrl+Alt+E</b></td><td>Export the plan's launch files (vLLM, SGLang, Dynamo)</td></tr>"
        "<tr><td><b>Ctrl+1 ... Ctrl+7</b></td><td>Progress, learning curve, sharding, topology, "
        "comparison, plan, timeline</td></tr>"
        "<tr><td><b>Ctrl+8 / Ctrl+9</b></td><td>Pareto front / Serving</td></tr>"
        "<tr><td><b>Ctrl+Tab / Ctrl+Shift+Tab</b></td><td>Next / previous tab, wherever the focus is "
        "in the window</td></tr>"
        "<tr><td><b>+ / - / 0, Ctrl+wheel</b></td><td>Timeline: zoom the time axis in / out / whole step; "
        "topology: Ctrl+wheel zooms</td></tr>"
        "<tr><td><b>Ctrl+L</b></td><td>Logarithmic evaluations axis</td></tr>"
        "<tr><td><b>Ctrl+F</b></td><td>Filter the elite plans</td></tr>"
        "<tr><td><b>Ctrl+Shift+C</b></td><td>Calibration: measured runs and the fit</td></tr>"
        "<tr><td><b>Ctrl+Shift+F</b></td><td>Fleet: several models on one GPU inventory at least "
        "cost</td></tr>"
        "<tr><td><b>F1</b></td><td>This list</td></tr>"
        "<tr><td><b>Ctrl+Q</b></td><td>Quit</td></tr></table>");
}

void WindowActions::build(MainWindow& w) {
    using Tab = MainWindow::Tab;
    auto reg = [&w](const QString& name, QAction* a) {
        w.m_actions.insert(name, a);
        return a;
    };
    QStyle* st = w.style();
    auto* file = w.menuBar()->addMenu(MainWindow::tr("&File"));
    QAction* open =
        reg(QStringLiteral("open"),
            file->addAction(st->standardIcon(QStyle::SP_DialogOpenButton), MainWindow::tr("&Open..."),
                            QKeySequence::Open, &w, &MainWindow::openDialog));
    open->setToolTip(MainWindow::tr(
        "Open a scenario, model, cluster, workload, constraints, plan or session file (Ctrl+O)"));
    w.m_recentMenu = file->addMenu(MainWindow::tr("Open &Recent"));
    reg(QStringLiteral("openSession"),
        file->addAction(MainWindow::tr("Open &Session..."), QKeySequence(MainWindow::tr("Ctrl+Shift+O")), &w,
                        &MainWindow::openSessionDialog));
    file->addSeparator();
    QAction* save =
        reg(QStringLiteral("saveSession"),
            file->addAction(st->standardIcon(QStyle::SP_DialogSaveButton), MainWindow::tr("&Save Session"),
                            QKeySequence::Save, &w, [&w] { w.saveSessionDialog(false); }));
    save->setToolTip(MainWindow::tr("Save the scenario, settings and results (Ctrl+S)"));
    reg(QStringLiteral("saveSessionAs"),
        file->addAction(MainWindow::tr("Save Session &As..."), QKeySequence(MainWindow::tr("Ctrl+Shift+S")),
                        &w, [&w] { w.saveSessionDialog(true); }));
    // The scenario's cluster as a cluster file (the cluster editor's Save As saves the one being edited);
    // both ask through the window's file dialogs.
    const QString clusterFilter = MainWindow::tr("Cluster file (*.yaml *.yml)");
    w.m_editor->setAskSavePath([&w](const QString& title, const QString& name, const QString& filter) {
        return w.m_dialogs->saveFile(title, name, filter, QStringLiteral("yaml"));
    });
    reg(QStringLiteral("saveClusterAs"),
        file->addAction(MainWindow::tr("Save &Cluster As..."), &w,
                        [&w, clusterFilter] {
                            const QString path =
                                w.m_dialogs->saveFile(MainWindow::tr("Save Cluster As"),
                                                      views::clusterFileName(w.m_editor->scenario().cluster),
                                                      clusterFilter, QStringLiteral("yaml"));
                            if (path.isEmpty()) return;
                            QString error;
                            if (!w.m_editor->saveCluster(path, &error)) {
                                w.showError(error);
                                return;
                            }
                            w.statusBar()->showMessage(
                                MainWindow::tr("Saved the cluster to %1").arg(QDir::toNativeSeparators(path)),
                                8000);
                        }))
        ->setToolTip(MainWindow::tr("Write the scenario's cluster as a cluster file (YAML)"));
    file->addSeparator();
    auto* exp = file->addMenu(MainWindow::tr("&Export"));
    QAction* expPlan = reg(QStringLiteral("exportPlan"),
                           exp->addAction(MainWindow::tr("&Plan..."), QKeySequence(MainWindow::tr("Ctrl+E")),
                                          &w, &MainWindow::exportPlanDialog));
    expPlan->setIconText(MainWindow::tr("Export Plan"));
    expPlan->setToolTip(MainWindow::tr("Write the selected plan as YAML or JSON (Ctrl+E)"));
    expPlan->setIcon(exportPlanIcon());
    reg(QStringLiteral("exportVllm"), exp->addAction(MainWindow::tr("Launch Command (&vLLM)..."), &w, [&w] {
        w.exportLaunchDialog(ServingEngine::Vllm);
    }))->setToolTip(MainWindow::tr("Write the selected plan as a vLLM launch command (a shell script)"));
    reg(QStringLiteral("exportSglang"), exp->addAction(MainWindow::tr("Launch Command (&SGLang)..."), &w,
                                                       [&w] { w.exportLaunchDialog(ServingEngine::Sglang); }))
        ->setToolTip(MainWindow::tr("Write the selected plan as an SGLang launch command (a shell script)"));
    reg(QStringLiteral("exportLaunchFiles"),
        exp->addAction(MainWindow::tr("&Launch Files (any engine, version, one script per node)..."),
                       QKeySequence(MainWindow::tr("Ctrl+Alt+E")), &w, &MainWindow::exportLaunchFilesDialog))
        ->setToolTip(
            MainWindow::tr("Write the selected plan's launch scripts for vLLM, SGLang, TensorRT-LLM or "
                           "Dynamo, one per node, with plan.yaml and NOTES.txt (Ctrl+Alt+E)"));
    reg(QStringLiteral("exportHistory"),
        exp->addAction(MainWindow::tr("Search &History (CSV)..."),
                       QKeySequence(MainWindow::tr("Ctrl+Shift+E")), &w, &MainWindow::exportCsvDialog));
    exp->addSeparator();
    for (Tab t :
         {Tab::Chart, Tab::LearningCurve, Tab::Sharding, Tab::Topology, Tab::Comparison, Tab::Timeline})
        exp->addAction(MainWindow::tr("%1 Image (PNG, SVG)...").arg(w.m_tabs->tabText(int(t))), &w,
                       [&w, t] { w.exportImageDialog(t); });
    file->addSeparator();
    file->addAction(MainWindow::tr("&Quit"), QKeySequence::Quit, &w, &QWidget::close);

    auto* edit = w.menuBar()->addMenu(MainWindow::tr("&Edit"));
    QAction* undo =
        reg(QStringLiteral("undo"), w.m_undo->stack()->createUndoAction(&w, MainWindow::tr("&Undo")));
    undo->setShortcut(QKeySequence::Undo);
    undo->setToolTip(MainWindow::tr("Undo the last scenario or constraint edit (Ctrl+Z)"));
    QAction* redo =
        reg(QStringLiteral("redo"), w.m_undo->stack()->createRedoAction(&w, MainWindow::tr("&Redo")));
    redo->setShortcut(QKeySequence(MainWindow::tr("Ctrl+Shift+Z")));
    redo->setToolTip(MainWindow::tr("Redo the edit undone (Ctrl+Shift+Z)"));
    edit->addAction(undo);
    edit->addAction(redo);
    edit->addSeparator();
    reg(QStringLiteral("editCluster"),
        edit->addAction(MainWindow::tr("Edit &Cluster..."), w.m_editor, &views::ScenarioEditor::editCluster))
        ->setToolTip(MainWindow::tr("The cluster editor: GPU type, nodes, GPUs per NVLink domain and host, "
                                    "network; saves cluster files"));

    auto* search = w.menuBar()->addMenu(MainWindow::tr("&Search"));
    w.m_startAction = reg(QStringLiteral("start"),
                          search->addAction(st->standardIcon(QStyle::SP_MediaPlay), MainWindow::tr("&Start"),
                                            &w, &MainWindow::startSearch));
    w.m_startAction->setShortcuts({QKeySequence(MainWindow::tr("Ctrl+R")), QKeySequence(Qt::Key_F5)});
    w.m_startAction->setToolTip(MainWindow::tr("Run the checked searchers on the edited scenario (Ctrl+R)"));
    // The one owner of Esc: it stops whatever runs (a tab's own Esc would make Qt find two shortcuts and run
    // neither, "Ambiguous shortcut overload"). Enabled while anything runs (MainWindow::updateStopAction).
    w.m_stopAction =
        reg(QStringLiteral("stop"), search->addAction(st->standardIcon(QStyle::SP_MediaStop),
                                                      MainWindow::tr("S&top"), &w, &MainWindow::stopRunning));
    w.m_stopAction->setShortcut(QKeySequence(Qt::Key_Escape));
    w.m_stopAction->setToolTip(MainWindow::tr("Stop what runs: the search (keeping the best plans so far), "
                                              "the Pareto sweep, the serving simulation, the calibration fit "
                                              "(Esc)"));
    w.m_stopAction->setEnabled(false);
    // A floating dock is a window of its own: Esc there reaches the window's Stop through the dock.
    if (w.m_calibrationDock) w.m_calibrationDock->addAction(w.m_stopAction);
    search->addSeparator();
    reg(QStringLiteral("clearResults"), search->addAction(MainWindow::tr("&Clear Results"), &w, [&w] {
        if (!w.confirmDiscard(MainWindow::tr("clear the results"))) return;
        w.m_controller->cancel();
        w.m_runPanel->setRunning(false);
        w.m_startAction->setEnabled(true);
        w.updateStopAction();
        w.clearResults();
        w.showPlan(w.m_ctx ? w.m_ctx->megatron() : nullptr);
        w.refreshComparison();
        w.m_staleBanner->hide();
        w.updateTitle();
    }));
    auto* forget = reg(QStringLiteral("forgetLearned"),
                       search->addAction(MainWindow::tr("&Forget What rl Learned"), &w, [&w] {
                           w.m_controller->forgetLearned();
                           w.statusBar()->showMessage(
                               MainWindow::tr("rl's next run starts from the shipped prior"), 5000);
                       }));
    forget->setToolTip(MainWindow::tr("rl's next run starts from the shipped prior, not from the policy its "
                                      "last run ended with"));

    auto* tools = w.menuBar()->addMenu(MainWindow::tr("&Tools"));
    reg(QStringLiteral("calibration"),
        tools->addAction(MainWindow::tr("&Calibration..."), QKeySequence(MainWindow::tr("Ctrl+Shift+C")), &w,
                         &MainWindow::showCalibration))
        ->setToolTip(MainWindow::tr("The cost model against measured runs, and the fit of the cluster's "
                                    "efficiency factors to them (Ctrl+Shift+C)"));
    reg(QStringLiteral("fleet"),
        tools->addAction(MainWindow::tr("&Fleet..."), QKeySequence(MainWindow::tr("Ctrl+Shift+F")), &w,
                         &MainWindow::showFleet))
        ->setToolTip(MainWindow::tr("Several models on one GPU inventory at the least cost an hour, and what a "
                                    "rate or an SLO changes (Ctrl+Shift+F)"));

    auto* view = w.menuBar()->addMenu(MainWindow::tr("&View"));
    // Every tab, in order, Ctrl+1 to Ctrl+9 (the Pareto front and Serving tabs included); its tooltip names
    // the key.
    QTabWidget* tabs = w.m_tabs;
    for (int i = 0; i < tabs->count() && i < 9; ++i) {
        const QKeySequence key(Qt::CTRL | Qt::Key(Qt::Key_1 + i));
        reg(QStringLiteral("tab%1").arg(i + 1),
            view->addAction(tabs->tabText(i), key, &w, [tabs, i] { tabs->setCurrentIndex(i); }));
        tabs->setTabToolTip(
            i, QStringLiteral("%1 (%2)").arg(tabs->tabToolTip(i), key.toString(QKeySequence::NativeText)));
    }
    // The window's, not the tab bar's (that one acts only while the tabs have the focus): a focused field of
    // the scenario panel or the elite table switches the tabs too. Ctrl+Shift+Tab also matches the Backtab
    // that X11 sends (QShortcutMap tries Tab after Backtab).
    auto step = [tabs](int by) {
        if (tabs->count() > 0)
            tabs->setCurrentIndex((tabs->currentIndex() + by + tabs->count()) % tabs->count());
    };
    reg(QStringLiteral("nextTab"),
        view->addAction(MainWindow::tr("&Next Tab"), QKeySequence(Qt::CTRL | Qt::Key_Tab), &w,
                        [step] { step(1); }));
    reg(QStringLiteral("previousTab"),
        view->addAction(MainWindow::tr("&Previous Tab"), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_Tab), &w,
                        [step] { step(-1); }));
    view->addSeparator();
    QAction* logX = view->addAction(MainWindow::tr("&Logarithmic Evaluations Axis"),
                                    QKeySequence(MainWindow::tr("Ctrl+L")));
    logX->setCheckable(true);
    logX->setChecked(w.m_chart->logX());
    QObject::connect(logX, &QAction::triggered, w.m_chart, &views::SearchChart::setLogX);
    QObject::connect(w.m_chart, &views::SearchChart::logXChanged, logX, &QAction::setChecked);
    view->addAction(MainWindow::tr("&Filter Elite Plans"), QKeySequence::Find, &w, [&w] {
        w.m_eliteFilter->setFocus();
        w.m_eliteFilter->selectAll();
    });
    view->addSeparator();
    // The panels shown or hidden (closable docks: a dock's toggle action is disabled otherwise); the window's
    // saved state keeps which are shown.
    for (QDockWidget* d : w.findChildren<QDockWidget*>()) {
        QAction* toggle = d->toggleViewAction();
        toggle->setText(MainWindow::tr("%1 Panel").arg(d->windowTitle()));
        toggle->setToolTip(MainWindow::tr("Show or hide the %1 panel").arg(d->windowTitle().toLower()));
        reg(d->objectName(), toggle);
        view->addAction(toggle);
    }

    auto* help = w.menuBar()->addMenu(MainWindow::tr("&Help"));
    help->addAction(MainWindow::tr("&Keyboard Shortcuts"), QKeySequence::HelpContents, &w, [&w] {
        QMessageBox::information(&w, MainWindow::tr("Keyboard shortcuts"), shortcutsHelp());
    });
    help->addAction(MainWindow::tr("&About Shard Planner"), &w, &MainWindow::showAbout);

    auto* bar = w.addToolBar(MainWindow::tr("Main"));
    bar->setObjectName(QStringLiteral("mainToolBar"));
    bar->setMovable(false);
    bar->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
    bar->addAction(open);
    bar->addAction(save);
    bar->addSeparator();
    bar->addAction(w.m_startAction);
    bar->addAction(w.m_stopAction);
    bar->addSeparator();
    bar->addAction(expPlan);
}

} // namespace sp::app
