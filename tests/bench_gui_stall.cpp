// bench_gui_stall: how long the GUI thread's event loop stalls while a search runs in the real window.
// A 5 ms timer records the gaps between its ticks during the search; the longest gap is the worst stall the
// user could feel. Not a CTest test (timings depend on the machine): run it and read the table.
//
// --views keeps the newer views open and busy as a user would during the search: the calibration window
// (the project's measurements, a fit running), a Pareto sweep alongside the search, the tabs cycled through
// Pareto front, timeline, topology (a GPU hovered: its groups outlined) and chart every 300 ms, and the
// elite table's rows selected in turn every 500 ms, so the plan views rebuild for new plans. The stall is
// then measured until the search, the sweep and the fit have all ended.
//
//   QT_QPA_PLATFORM=offscreen ./bench_gui_stall [--budget N] [--searchers a,b,c] [--views] [--repeat N]
//                                               [scenario.yaml...]
#include "mainwindow.h"
#include "views/calibrationview.h"
#include "views/comparison.h"
#include "views/elitemodel.h"
#include "views/pareto.h"
#include "views/runpanel.h"
#include "views/timeline.h"
#include "views/topology.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QDockWidget>
#include <QElapsedTimer>
#include <QFileInfo>
#include <QHash>
#include <QImage>
#include <QPainter>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTest>
#include <QTimer>

#include <QEventLoop>

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <functional>
#include <vector>

namespace {
/// Times every event the GUI thread delivers, to name what the longest stalls were spent on.
class TimingApp : public QApplication {
public:
    using QApplication::QApplication;
    struct Slow {
        double ms;
        QString what;
    };
    std::vector<Slow> slow; ///< events over 8 ms while measuring
    bool measuring = false;
    /// The most CPU time the GUI thread spent on one event while measuring: its own work, whatever the
    /// machine's load (a stall also counts the time other threads and processes held the core).
    double maxCpuMs = 0;
    static double threadCpuMs() {
        timespec ts{};
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
        return double(ts.tv_sec) * 1e3 + double(ts.tv_nsec) / 1e6;
    }
    bool notify(QObject* receiver, QEvent* e) override {
        // Names first: the receiver may be deleted by its event (a deferred delete).
        const char* cls = receiver->metaObject()->className();
        const QString name = receiver->objectName();
        const char* parent = receiver->parent() ? receiver->parent()->metaObject()->className() : nullptr;
        const QEvent::Type type = e->type();
        QElapsedTimer t;
        t.start();
        const double cpu0 = threadCpuMs();
        ++depth;
        const bool r = QApplication::notify(receiver, e);
        --depth;
        const double ms = t.nsecsElapsed() / 1e6;
        if (measuring && depth == 0) maxCpuMs = std::max(maxCpuMs, threadCpuMs() - cpu0);
        if (measuring && ms > 8 && depth == 0) { // outermost events only: nested ones are part of them
            // "type to Class (parent Class)": a timer's or a scene's owner names what it drives.
            QString what = QStringLiteral("%1 to %2").arg(int(type)).arg(QLatin1String(cls));
            if (!name.isEmpty()) what += QStringLiteral(" '%1'").arg(name);
            if (parent) what += QStringLiteral(" (parent %1)").arg(QLatin1String(parent));
            slow.push_back({ms, what});
        }
        return r;
    }
    int depth = 0;
};
struct Figures {
    double seconds = 0, maxGap = 0, median = 0, p99 = 0, maxCpu = 0;
    size_t ticks = 0;
};

/// The event loop's gaps while `busy` holds (checked at every tick), at most `limitMs`.
Figures measureWhile(TimingApp& app, const std::function<bool()>& busy, int limitMs) {
    std::vector<double> gaps;
    QElapsedTimer clock, total;
    QTimer tick;
    tick.setInterval(5);
    tick.setTimerType(Qt::PreciseTimer);
    QEventLoop loop;
    QObject::connect(&tick, &QTimer::timeout, [&] {
        gaps.push_back(clock.nsecsElapsed() / 1e6);
        clock.restart();
        if (!busy() || total.elapsed() > limitMs) loop.quit();
    });
    app.measuring = true;
    app.maxCpuMs = 0;
    total.start();
    clock.start();
    tick.start();
    loop.exec();
    tick.stop();
    app.measuring = false;
    Figures f;
    f.seconds = total.elapsed() / 1000.0;
    f.maxCpu = app.maxCpuMs;
    std::sort(gaps.begin(), gaps.end());
    f.ticks = gaps.size();
    if (!gaps.empty()) {
        f.maxGap = gaps.back();
        f.median = gaps[gaps.size() / 2];
        f.p99 = gaps[std::min(gaps.size() - 1, size_t(double(gaps.size()) * 0.99))];
    }
    return f;
}

double medianOf(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0 : v[v.size() / 2];
}
} // namespace

int main(int argc, char** argv) {
    TimingApp app(argc, argv);
    QCommandLineParser parser;
    parser.addHelpOption();
    QCommandLineOption budgetOpt(QStringLiteral("budget"), QStringLiteral("Evaluations per searcher."),
                                 QStringLiteral("N"), QStringLiteral("2000"));
    QCommandLineOption searchersOpt(QStringLiteral("searchers"), QStringLiteral("Comma-separated searchers."),
                                    QStringLiteral("LIST"), QStringLiteral("random,sa,ga,rl"));
    QCommandLineOption threadsOpt(QStringLiteral("threads"),
                                  QStringLiteral("Evaluation threads per searcher (0: all)."),
                                  QStringLiteral("N"), QStringLiteral("0"));
    QCommandLineOption hiddenOpt(QStringLiteral("hidden"),
                                 QStringLiteral("Do not show the window (no painting)."));
    QCommandLineOption tabOpt(
        QStringLiteral("tab"),
        QStringLiteral("The view shown during the search: chart, sharding, topology, comparison, "
                       "plan, timeline or pareto (default: timeline; --views cycles them)."),
        QStringLiteral("NAME"), QStringLiteral("timeline"));
    QCommandLineOption viewsOpt(
        QStringLiteral("views"),
        QStringLiteral("The newer views open and busy: calibration window with a fit, a Pareto sweep, the "
                       "tabs cycled, elite rows selected in turn."));
    QCommandLineOption pointsOpt(QStringLiteral("pareto-points"),
                                 QStringLiteral("With --views: TPOT targets of the Pareto sweep."),
                                 QStringLiteral("N"), QStringLiteral("8"));
    QCommandLineOption repeatOpt(QStringLiteral("repeat"),
                                 QStringLiteral("Runs per scenario; the last line gives their medians."),
                                 QStringLiteral("N"), QStringLiteral("1"));
    for (const auto* o :
         {&tabOpt, &threadsOpt, &hiddenOpt, &budgetOpt, &searchersOpt, &viewsOpt, &pointsOpt, &repeatOpt})
        parser.addOption(*o);
    parser.addPositionalArgument(QStringLiteral("scenarios"), QStringLiteral("Scenario files."));
    parser.process(app);
    QStringList scenarios = parser.positionalArguments();
    if (scenarios.isEmpty())
        scenarios = {QStringLiteral(SHARDPLAN_SAMPLES_DIR "/scenarios/llama-3.1-8b-h100-1x8.yaml"),
                     QStringLiteral(SHARDPLAN_SAMPLES_DIR "/scenarios/deepseek-v3-h100-32x8.yaml"),
                     QStringLiteral(SHARDPLAN_SAMPLES_DIR "/scenarios/moe-1.6t-h100-128x8.yaml")};
    const bool views = parser.isSet(viewsOpt);
    const int repeat = std::max(1, parser.value(repeatOpt).toInt());
    const qint64 budget = parser.value(budgetOpt).toLongLong();

    std::printf("%-34s %8s %-16s %9s %12s %10s %8s %8s %11s\n", "scenario", "budget", "searchers", "seconds",
                "max stall ms", "median ms", "p99 ms", "ticks", "max cpu ms");
    for (const QString& path : scenarios) {
        std::vector<double> maxGaps, p99s, secs, cpus;
        for (int run = 0; run < repeat; ++run) {
            sp::app::MainWindow::Options o;
            o.persistSettings = false;
            o.confirmClose = false;
            o.threadsPerRun = parser.value(threadsOpt).toInt();
            sp::app::MainWindow w(o);
            w.resize(1600, 1000);
            if (!parser.isSet(hiddenOpt)) {
                w.show();
                if (!QTest::qWaitForWindowExposed(&w)) return 1;
            }
            if (!w.openScenario(path)) return 1;
            using Tab = sp::app::MainWindow::Tab;
            QTabWidget* tabs = w.tabs();
            const QHash<QString, QWidget*> tabPages{
                {QStringLiteral("chart"), tabs->widget(int(Tab::Chart))},
                {QStringLiteral("sharding"), tabs->widget(int(Tab::Sharding))},
                {QStringLiteral("topology"), tabs->widget(int(Tab::Topology))},
                {QStringLiteral("comparison"), tabs->widget(int(Tab::Comparison))},
                {QStringLiteral("plan"), tabs->widget(int(Tab::Plan))},
                {QStringLiteral("timeline"), tabs->widget(int(Tab::Timeline))},
                {QStringLiteral("pareto"), w.paretoView()}};
            w.showPage(tabPages.value(parser.value(tabOpt), tabs->widget(int(Tab::Timeline))));
            const int gpus = sp::app::SearchContext::scenarioOf(w.context())->gpus();
            if (views) {
                w.showCalibration(); // floating, the project's measurements loaded and drawn
                w.topologyView()->canvas()->setHoveredGpu(gpus > 8 ? gpus / 2 + 1 : 0);
            }
            QTest::qWait(300); // the first paint of the scenario is not part of the search
            QStringList searchers;
            for (const QString& s : parser.value(searchersOpt).split(QLatin1Char(',')))
                if (w.runPanel()->searchers().contains(s)) searchers << s;
            w.runPanel()->setSelectedSearchers(searchers);
            w.runPanel()->setBudget(budget);

            QTimer cycle, select;
            int page = 0, row = 0;
            std::vector<double> selectMs; // selecting a row: every plan view rebuilt for its plan
            if (views) {
                const QList<QWidget*> pages{w.paretoView(), tabs->widget(int(Tab::Timeline)),
                                            tabs->widget(int(Tab::Topology)), tabs->widget(int(Tab::Chart))};
                QObject::connect(&cycle, &QTimer::timeout,
                                 [&, pages] { w.showPage(pages[page++ % pages.size()]); });
                cycle.setObjectName(QStringLiteral("benchTabCycle"));
                select.setObjectName(QStringLiteral("benchSelectRow"));
                QObject::connect(&select, &QTimer::timeout, [&] {
                    const int rows = w.eliteModel()->rowCount();
                    if (rows == 0) return;
                    QElapsedTimer c;
                    c.start();
                    w.selectEliteRow(row++ % std::min(rows, 10));
                    selectMs.push_back(c.nsecsElapsed() / 1e6);
                });
                cycle.start(300);
                select.start(500);
            }
            w.startSearch();
            if (views) {
                // What Start in the Pareto tab and Fit in the calibration window do.
                emit w.paretoView()->startRequested(parser.value(pointsOpt).toInt(),
                                                    std::max<qint64>(200, budget / 4));
                w.calibrationView()->fit();
            }
            const Figures f = measureWhile(
                app,
                [&] {
                    return w.isSearching() ||
                           (views && (w.paretoRunner()->isRunning() || w.calibrationView()->isFitting()));
                },
                600000);
            cycle.stop();
            select.stop();
            maxGaps.push_back(f.maxGap);
            p99s.push_back(f.p99);
            secs.push_back(f.seconds);
            cpus.push_back(f.maxCpu);
            const QString name = QFileInfo(path).completeBaseName().left(views ? 28 : 34);
            std::printf("%-34s %8lld %-16s %9.2f %12.1f %10.1f %8.1f %8zu %11.1f\n",
                        qPrintable(views ? name + QStringLiteral(" views") : name), budget,
                        qPrintable(searchers.join(QLatin1Char('+'))), f.seconds, f.maxGap, f.median, f.p99,
                        f.ticks, f.maxCpu);
            std::sort(app.slow.begin(), app.slow.end(), [](auto& a, auto& b) { return a.ms > b.ms; });
            for (size_t i = 0; i < std::min<size_t>(4, app.slow.size()); ++i)
                std::fprintf(stderr, "    slow event: %.1f ms (event type %s)\n", app.slow[i].ms,
                             qPrintable(app.slow[i].what));
            app.slow.clear();
            if (!selectMs.empty())
                std::printf("%-34s selecting an elite row: median %.1f ms, max %.1f ms (%zu selections)\n",
                            "", medianOf(selectMs), *std::max_element(selectMs.begin(), selectMs.end()),
                            selectMs.size());
            if (run + 1 < repeat) continue;
            if (repeat > 1)
                std::printf("%-34s median of %d runs: seconds %.2f, max stall %.1f ms, p99 %.1f ms, "
                            "max cpu %.1f ms\n",
                            "", repeat, medianOf(secs), medianOf(maxGaps), medianOf(p99s), medianOf(cpus));
            // The new views' own cost on the selected plan, once the search ended: laying out and painting
            // the timeline and the topology, and the comparison's refresh (with the why analysis), median of
            // five (ms, GUI thread).
            auto median5 = [](auto&& f) {
                std::vector<double> t;
                for (int i = 0; i < 5; ++i) {
                    QElapsedTimer c;
                    c.start();
                    f();
                    t.push_back(c.nsecsElapsed() / 1e6);
                }
                return medianOf(t);
            };
            const auto scen = sp::app::SearchContext::scenarioOf(w.context());
            const auto plan = w.currentPlan();
            QImage img(1200, 500, QImage::Format_ARGB32);
            const double tl = median5([&] {
                w.timelineView()->setPlan(scen, plan);
                QPainter p(&img);
                w.timelineView()->canvas()->paintTo(p, img.rect());
            });
            const double topo = median5([&] {
                w.topologyView()->setPlan(scen, plan);
                QPainter p(&img);
                w.topologyView()->canvas()->paintTo(p, img.rect());
            });
            const double cmp = median5([&] { w.comparisonView()->setScenario(scen); });
            std::printf("%-34s timeline layout+paint %.1f ms (%zu items), topology %.1f ms (%d GPUs), "
                        "comparison refresh %.1f ms\n",
                        "", tl, w.timelineView()->canvas()->timeline().items.size(), topo, gpus, cmp);
            std::fflush(stdout);
        }
    }
    return 0;
}
