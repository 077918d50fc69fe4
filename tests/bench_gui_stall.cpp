// bench_gui_stall: how long the GUI thread's event loop stalls while a search runs in the real window.
// A 5 ms timer records the gaps between its ticks during the search; the longest gap is the worst stall the
// user could feel. Not a CTest test (timings depend on the machine): run it and read the table.
//
//   QT_QPA_PLATFORM=offscreen ./bench_gui_stall [--budget N] [--searchers a,b,c] [scenario.yaml...]
#include "mainwindow.h"
#include "views/comparison.h"
#include "views/timeline.h"
#include "views/runpanel.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QElapsedTimer>
#include <QFileInfo>
#include <QHash>
#include <QImage>
#include <QPainter>
#include <QSignalSpy>
#include <QTest>
#include <QTimer>

#include <algorithm>
#include <cstdio>
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
    std::vector<Slow> slow; ///< events over 8 ms
    bool notify(QObject* receiver, QEvent* e) override {
        QElapsedTimer t;
        t.start();
        const QEvent::Type type = e->type();
        ++depth;
        const bool r = QApplication::notify(receiver, e);
        --depth;
        const double ms = t.nsecsElapsed() / 1e6;
        if (ms > 8 && depth == 0) // outermost events only: nested ones are part of them
            slow.push_back({ms, QStringLiteral("%1 to %2")
                                    .arg(int(type))
                                    .arg(QLatin1String(receiver->metaObject()->className()))});
        return r;
    }
    int depth = 0;
};
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
                       "plan or timeline (default: timeline)."),
        QStringLiteral("NAME"), QStringLiteral("timeline"));
    parser.addOption(tabOpt);
    parser.addOption(threadsOpt);
    parser.addOption(hiddenOpt);
    parser.addOption(budgetOpt);
    parser.addOption(searchersOpt);
    parser.addPositionalArgument(QStringLiteral("scenarios"), QStringLiteral("Scenario files."));
    parser.process(app);
    QStringList scenarios = parser.positionalArguments();
    if (scenarios.isEmpty())
        scenarios = {QStringLiteral(SHARDPLAN_SAMPLES_DIR "/scenarios/llama-3.1-8b-h100-1x8.yaml"),
                     QStringLiteral(SHARDPLAN_SAMPLES_DIR "/scenarios/deepseek-v3-h100-32x8.yaml"),
                     QStringLiteral(SHARDPLAN_SAMPLES_DIR "/scenarios/moe-1.6t-h100-128x8.yaml")};

    std::printf("%-34s %8s %-16s %9s %12s %10s %8s %8s\n", "scenario", "budget", "searchers", "seconds",
                "max stall ms", "median ms", "p99 ms", "ticks");
    for (const QString& path : scenarios) {
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
        const QHash<QString, Tab> tabs{
            {QStringLiteral("chart"), Tab::Chart},       {QStringLiteral("sharding"), Tab::Sharding},
            {QStringLiteral("topology"), Tab::Topology}, {QStringLiteral("comparison"), Tab::Comparison},
            {QStringLiteral("plan"), Tab::Plan},         {QStringLiteral("timeline"), Tab::Timeline}};
        w.showTab(tabs.value(parser.value(tabOpt), Tab::Timeline));
        QTest::qWait(200); // the first paint of the scenario is not part of the search
        QStringList searchers;
        for (const QString& s : parser.value(searchersOpt).split(QLatin1Char(',')))
            if (w.runPanel()->searchers().contains(s)) searchers << s;
        w.runPanel()->setSelectedSearchers(searchers);
        w.runPanel()->setBudget(parser.value(budgetOpt).toLongLong());

        std::vector<double> gaps;
        QElapsedTimer clock, total;
        QTimer tick;
        tick.setInterval(5);
        tick.setTimerType(Qt::PreciseTimer);
        QObject::connect(&tick, &QTimer::timeout, [&] {
            gaps.push_back(clock.nsecsElapsed() / 1e6);
            clock.restart();
        });
        QSignalSpy done(&w, &sp::app::MainWindow::searchFinished);
        total.start();
        clock.start();
        tick.start();
        w.startSearch();
        done.wait(600000);
        tick.stop();
        const double seconds = total.elapsed() / 1000.0;
        std::vector<double> sorted = gaps;
        std::sort(sorted.begin(), sorted.end());
        const double maxGap = sorted.empty() ? 0 : sorted.back();
        const double median = sorted.empty() ? 0 : sorted[sorted.size() / 2];
        const double p99 =
            sorted.empty() ? 0 : sorted[std::min(sorted.size() - 1, size_t(double(sorted.size()) * 0.99))];
        std::printf("%-34s %8lld %-16s %9.2f %12.1f %10.1f %8.1f %8zu\n",
                    qPrintable(QFileInfo(path).completeBaseName().left(34)),
                    parser.value(budgetOpt).toLongLong(), qPrintable(searchers.join(QLatin1Char('+'))),
                    seconds, maxGap, median, p99, gaps.size());
        std::sort(app.slow.begin(), app.slow.end(), [](auto& a, auto& b) { return a.ms > b.ms; });
        for (size_t i = 0; i < std::min<size_t>(4, app.slow.size()); ++i)
            std::fprintf(stderr, "    slow event: %.1f ms (event type %s)\n", app.slow[i].ms,
                         qPrintable(app.slow[i].what));
        app.slow.clear();
        // The new views' own cost on the selected plan, once the search ended: laying out and painting the
        // timeline, and the comparison's refresh (with the why analysis), median of five (ms, GUI thread).
        auto median5 = [](auto&& f) {
            std::vector<double> t;
            for (int i = 0; i < 5; ++i) {
                QElapsedTimer c;
                c.start();
                f();
                t.push_back(c.nsecsElapsed() / 1e6);
            }
            std::sort(t.begin(), t.end());
            return t[2];
        };
        const auto scen = sp::app::SearchContext::scenarioOf(w.context());
        const auto plan = w.currentPlan();
        QImage img(1200, 500, QImage::Format_ARGB32);
        const double tl = median5([&] {
            w.timelineView()->setPlan(scen, plan);
            QPainter p(&img);
            w.timelineView()->canvas()->paintTo(p, img.rect());
        });
        const double cmp = median5([&] { w.comparisonView()->setScenario(scen); });
        std::printf("%-34s timeline layout+paint %.1f ms, comparison refresh %.1f ms (%zu timeline items)\n", "",
                    tl, cmp, w.timelineView()->canvas()->timeline().items.size());
        std::fflush(stdout);
    }
    return 0;
}
