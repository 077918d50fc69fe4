// bench_topology: what the Topology tab costs on large clusters, in the real window. For each cluster size
// (the 1.6T MoE sample's cluster with its node count changed; 8,192 nodes of 8 is 65,536 GPUs) it prints
// the median of several runs, in ms on the GUI thread: switching to the tab from the chart (laid out and
// painted), a plan shown while the tab is open (setPlan and paint), a GPU hovered (its groups outlined),
// Fit, and a scroll by one viewport. Not a CTest test (timings depend on the machine): run it and read the
// table.
//
//   QT_QPA_PLATFORM=offscreen ./bench_topology [--runs N] [--size 1280x720] [nodes...]
#include "mainwindow.h"
#include "views/topology.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QElapsedTimer>
#include <QFile>
#include <QScrollArea>
#include <QScrollBar>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <vector>

namespace {

double medianMs(int runs, const std::function<void()>& before, const std::function<void()>& timed) {
    std::vector<double> t;
    for (int i = 0; i < runs; ++i) {
        before();
        QElapsedTimer c;
        c.start();
        timed();
        t.push_back(double(c.nsecsElapsed()) / 1e6);
    }
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
}

bool writeFile(const QString& path, const QString& text) {
    QFile f(path);
    return f.open(QIODevice::WriteOnly) && f.write(text.toUtf8()) == text.toUtf8().size();
}

} // namespace

int main(int argc, char** argv) {
    QApplication app(argc, argv);
    QCommandLineParser parser;
    parser.addHelpOption();
    QCommandLineOption runsOpt(QStringLiteral("runs"), QStringLiteral("Runs per figure (median)."),
                               QStringLiteral("N"), QStringLiteral("7"));
    QCommandLineOption sizeOpt(QStringLiteral("size"), QStringLiteral("Window size."), QStringLiteral("WxH"),
                               QStringLiteral("1280x720"));
    parser.addOption(runsOpt);
    parser.addOption(sizeOpt);
    parser.addPositionalArgument(QStringLiteral("nodes"), QStringLiteral("Node counts (8 H100 each)."));
    parser.process(app);
    const int runs = std::max(1, parser.value(runsOpt).toInt());
    const QStringList wh = parser.value(sizeOpt).split(QLatin1Char('x'));
    const QSize size(wh.value(0).toInt(), wh.value(1).toInt());
    QStringList nodeCounts = parser.positionalArguments();
    if (nodeCounts.isEmpty())
        nodeCounts = {QStringLiteral("128"), QStringLiteral("512"), QStringLiteral("8192")};

    QTemporaryDir dir;
    const QString samples = QStringLiteral(SHARDPLAN_SAMPLES_DIR);
    std::printf("%-8s %8s %12s %12s %12s %10s %10s   (ms, median of %d, window %dx%d)\n", "nodes", "GPUs",
                "switch tab", "new plan", "hover GPU", "fit", "scroll", runs, size.width(), size.height());
    for (const QString& n : nodeCounts) {
        const QString cluster = dir.filePath(QStringLiteral("c%1.yaml").arg(n));
        const QString scen = dir.filePath(QStringLiteral("s%1.yaml").arg(n));
        if (!writeFile(cluster, QStringLiteral("version: 1\nkind: cluster\nname: %1x8 H100\nnodes: %1\ngpu: "
                                               "h100-sxm\n")
                                    .arg(n)) ||
            !writeFile(scen, QStringLiteral("version: 1\nkind: scenario\nname: 1.6T MoE on %1x8 H100\nmodel: "
                                            "%2/models/moe-1.6t-synthetic.yaml\ncluster: %3\nworkload: "
                                            "%2/workloads/chat-serving.yaml\n")
                                 .arg(n, samples, cluster)))
            return 1;
        sp::app::MainWindow::Options o;
        o.persistSettings = false;
        o.confirmClose = false;
        sp::app::MainWindow w(o);
        w.resize(size);
        w.show();
        if (!QTest::qWaitForWindowExposed(&w) || !w.openScenario(scen)) return 1;
        QTest::qWait(200);
        using Tab = sp::app::MainWindow::Tab;
        sp::views::TopologyView* view = w.topologyView();
        sp::views::TopologyCanvas* canvas = view->canvas();
        auto* scroll = view->findChild<QScrollArea*>();
        auto settle = [&] { QCoreApplication::sendPostedEvents(); };
        auto paint = [&] {
            settle();
            w.tabs()->repaint(); // the tab's page as the window would paint it, synchronously
        };
        const double switchMs = medianMs(
            runs,
            [&] {
                w.showTab(Tab::Chart);
                paint();
            },
            [&] {
                w.showTab(Tab::Topology);
                paint();
            });
        const auto scenario = sp::app::SearchContext::scenarioOf(w.context());
        const auto plan = w.currentPlan();
        const double planMs = medianMs(
            runs, [] {},
            [&] {
                view->setPlan(scenario, plan);
                paint();
            });
        const int gpus = scenario ? scenario->gpus() : 0;
        int hover = 0;
        const double hoverMs = medianMs(
            runs, [&] { hover = (hover + 37) % std::max(1, gpus); },
            [&] {
                canvas->setHoveredGpu(hover);
                paint();
            });
        canvas->setHoveredGpu(-1);
        const double fitMs = medianMs(
            runs,
            [&] {
                canvas->setMinCell(12);
                paint();
            },
            [&] {
                canvas->fit();
                paint();
            });
        QScrollBar* bar = scroll->verticalScrollBar();
        const double scrollMs = medianMs(
            runs, [] {},
            [&] {
                bar->setValue(bar->value() + scroll->viewport()->height() >= bar->maximum()
                                  ? 0
                                  : bar->value() + scroll->viewport()->height());
                paint();
            });
        std::printf("%-8s %8d %12.1f %12.1f %12.1f %10.1f %10.1f\n", qPrintable(n), gpus, switchMs, planMs,
                    hoverMs, fitMs, scrollMs);
        std::fflush(stdout);
    }
    return 0;
}
