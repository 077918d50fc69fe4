// shardplanner: the desktop planner.
#include "mainwindow.h"

#include <QApplication>
#include <QDir>

int main(int argc, char** argv) {
    QApplication app(argc, argv);
    QApplication::setApplicationName(QStringLiteral("Shard Planner"));
    QApplication::setOrganizationName(QStringLiteral("ShardPlanner"));
    sp::app::MainWindow w;
    const QStringList args = QApplication::arguments();
    const QString path = args.size() > 1 ? args.at(1)
                                         : QStringLiteral(SHARDPLAN_SAMPLES_DIR "/scenarios/llama-3.1-8b-h100-1x8.yaml");
    w.openScenario(path);
    w.show();
    return app.exec();
}
