#pragma once
#include "core/model/scenario.h"

#include <QTreeWidget>

namespace sp::views {

/// A read-only tree of a scenario's model, cluster, workload and constraints, with derived figures.
class ScenarioSummary : public QTreeWidget {
    Q_OBJECT
public:
    explicit ScenarioSummary(QWidget* parent = nullptr);
    void setScenario(const Scenario& s);
};

} // namespace sp::views
