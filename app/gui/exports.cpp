#include "exports.h"

#include "core/io/formats.h"
#include "views/format.h"

#include <QFileInfo>
#include <QRegularExpression>

namespace sp::app {

QByteArray planFileText(const views::PlanRecord& r, const Scenario& s, const QString& title,
                        const QString& path) {
    if (QFileInfo(path).suffix().compare(QLatin1String("json"), Qt::CaseInsensitive) == 0)
        return QByteArray::fromStdString(toJson(r.plan, s.model));
    const Metrics& m = r.metrics();
    std::string text = "# " + r.label + " for " + title.toStdString() + "\n";
    if (m.feasible)
        text += "# " + views::formatRate(m.throughput).toStdString() + ", TTFT " +
                views::formatMs(m.ttftMs).toStdString() + ", TPOT " +
                views::formatMs(m.tpotMs).toStdString() + ", batch " + std::to_string(m.batch) +
                " (exported by Shard Planner)\n";
    text += toYaml(r.plan, s.model);
    return QByteArray::fromStdString(text);
}

QByteArray launchScript(const views::PlanRecord& r, const Scenario& s, const QString& title,
                        ServingEngine engine, QString* error) {
    auto command = launchCommand(s, r.plan, engine);
    if (!command) {
        if (error) *error = views::qs(command.error().str());
        return {};
    }
    return QByteArray::fromStdString("#!/bin/sh\n# " + r.label + " for " + title.toStdString() +
                                     " (exported by Shard Planner)\n" + command->text());
}

QString fileNameFor(const QString& title, const QString& suffix) {
    QString base = title.toLower();
    base.replace(QRegularExpression(QStringLiteral("[^a-z0-9.]+")), QStringLiteral("-"));
    base.remove(QRegularExpression(QStringLiteral("^-+|-+$")));
    if (base.isEmpty()) base = QStringLiteral("untitled");
    return base + QLatin1Char('.') + suffix;
}

} // namespace sp::app
