#pragma once
#include "core/model/scenario.h"

#include <QMainWindow>

namespace sp::views {
class ScenarioSummary;
}

namespace sp::app {

class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    explicit MainWindow(QWidget* parent = nullptr);
    /// Loads a scenario file; on error shows it and keeps the current one.
    bool openScenario(const QString& path);

private:
    void openDialog();
    views::ScenarioSummary* m_summary = nullptr;
    Scenario m_scenario;
    QString m_path;
};

} // namespace sp::app
