#pragma once
// Runs the shardplan command line for the CLI tests: exit code, standard output and error.
#include <QProcess>
#include <QString>
#include <QStringList>

namespace sp::test {

struct Run {
    int code = -1; ///< -1 when the process crashed
    QString out, err;
};

inline Run shardplan(const QStringList& args) {
    QProcess p;
    p.start(QStringLiteral(SHARDPLAN_CLI), args);
    p.waitForFinished(600000);
    return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1,
            QString::fromUtf8(p.readAllStandardOutput()), QString::fromUtf8(p.readAllStandardError())};
}

} // namespace sp::test
