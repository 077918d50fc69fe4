#pragma once
// What the main window's source files share: the includes, the window's constants and the tab names.

#include "mainwindow.h"

#include "core/io/formats.h"
#include "core/searchers/registry.h"
#include "exports.h"
#include "launchexportdialog.h"
#include "sessionfiles.h"
#include "views/comparison.h"
#include "views/elitemodel.h"
#include "views/format.h"
#include "views/heatmap.h"
#include "views/imageexport.h"
#include "views/learningcurve.h"
#include "views/messagebanner.h"
#include "views/pareto.h"
#include "views/plandetails.h"
#include "views/runpanel.h"
#include "views/scenarioeditor.h"
#include "views/searchchart.h"
#include "views/timeline.h"
#include "views/topology.h"
#include "windowactions.h"

#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QDir>
#include <QDockWidget>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QHeaderView>
#include <QKeyEvent>
#include <QLabel>
#include <QLineEdit>
#include <QMenuBar>
#include <QMessageBox>
#include <QScrollArea>
#include <QScrollBar>
#include <QSettings>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QStatusBar>
#include <QTabWidget>
#include <QTableView>
#include <QToolBar>
#include <QToolButton>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

namespace sp::app {

using views::qs;

inline constexpr int kEliteRows = 50;
inline constexpr int kMaxRecent = 10;
/// The view tabs' height, before the elite table below gets more than its minimum (MainWindow::fitSplit).
inline constexpr int kTabsHeight = 400;
/// A rerun's starts: the best plans of each searcher's last run (as the Pareto sweep hands on 16).
inline constexpr int kRerunStarts = 16;
inline const QString kSessionSuffix = QStringLiteral("spsession");

inline QString tabName(MainWindow::Tab t) {
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
    case MainWindow::Tab::Timeline:
        return QObject::tr("Timeline");
    }
    return {};
}

} // namespace sp::app
