// shardplanner: the desktop planner.
#include "mainwindow.h"

#include "core/common/error.h"
#include "core/common/paths.h"
#include "core/common/version.h"
#include "core/io/formats.h"
#include "core/io/gpudb.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QDir>

#include <cstdio>

int main(int argc, char** argv) {
    QApplication app(argc, argv);
    QApplication::setApplicationName(QStringLiteral("Shard Planner"));
    QApplication::setOrganizationName(QStringLiteral("ShardPlanner"));
    QApplication::setApplicationVersion(QString::fromLatin1(sp::kVersion));

    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral("Plans the sharding of LLM inference on GPU clusters."));
    parser.addHelpOption();
    parser.addVersionOption();
    parser.addPositionalArgument(
        QStringLiteral("files"),
        QStringLiteral("Scenario, model, cluster, workload, constraints, plan or session files "
                       "(default: the sample scenario)"),
        QStringLiteral("[files...]"));
    QCommandLineOption shots(QStringLiteral("screenshot"),
                             QStringLiteral("Run a short search, save a PNG of each view into DIR and quit."),
                             QStringLiteral("DIR"));
    shots.setFlags(QCommandLineOption::HiddenFromHelp);
    QCommandLineOption budget(QStringLiteral("screenshot-budget"),
                              QStringLiteral("Budget of the screenshot search."), QStringLiteral("N"),
                              QStringLiteral("1500"));
    budget.setFlags(QCommandLineOption::HiddenFromHelp);
    QCommandLineOption prices(
        QStringLiteral("prices"),
        QStringLiteral("A price list (basis: and usd_per_gpu_hour:) that replaces the GPU "
                       "database's prices in every cost answer."),
        QStringLiteral("FILE"));
    parser.addOption(shots);
    parser.addOption(budget);
    parser.addOption(prices);
    parser.process(app);
    // Before any window or worker reads the database.
    if (parser.isSet(prices)) {
        try {
            sp::usePriceList(sp::loadPriceList(parser.value(prices).toStdString()));
        } catch (const sp::InputError& e) {
            std::fprintf(stderr, "shardplanner: %s\n", e.what());
            return 1;
        }
    }

    sp::app::MainWindow::Options options;
    if (parser.isSet(shots)) options.persistSettings = options.confirmClose = false;
    sp::app::MainWindow w(options);
    // Parts (model, cluster, ...) and plans apply to a scenario: the sample one unless the first file is a
    // scenario or a session.
    const QStringList files = parser.positionalArguments();
    int first = 0;
    if (!files.isEmpty()) {
        const auto kind = sp::detectKind(files.first().toStdString());
        const bool whole = files.first().endsWith(QLatin1String(".spsession")) ||
                           (kind.ok() && kind.value() == sp::FileKind::Scenario);
        if (whole && w.openFile(files.first())) first = 1;
    }
    if (!w.context())
        w.openScenario(QString::fromStdString(sp::samplesDir() + "/scenarios/llama-3.1-8b-h100-1x8.yaml"));
    for (int i = first; i < files.size(); ++i) w.openFile(files[i]);
    if (parser.isSet(shots)) {
        w.runScreenshots(parser.value(shots), parser.value(budget).toLongLong());
    } else {
        w.show();
    }
    return app.exec();
}
