#pragma once
// What the window exports, as text: the plan file (with a header naming the plan, the scenario and its
// metrics) and the launch script of a serving engine. The window writes them (atomically) and reports.

#include "core/export/launch.h"
#include "core/model/scenario.h"
#include "views/planrecord.h"

#include <QByteArray>
#include <QString>

namespace sp::app {

/// YAML (with a comment header) or JSON by the path's suffix; a dense model's plan has no MoE fields.
QByteArray planFileText(const views::PlanRecord& plan, const Scenario& scenario, const QString& scenarioTitle,
                        const QString& path);
/// The launch command as a shell script, or empty with `error` set (the plan does not fit the engine).
QByteArray launchScript(const views::PlanRecord& plan, const Scenario& scenario, const QString& scenarioTitle,
                        ServingEngine engine, QString* error);
/// A file name made from a title: lower case, words joined by '-'.
QString fileNameFor(const QString& title, const QString& suffix);

} // namespace sp::app
