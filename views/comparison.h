#pragma once
// Two plans side by side: their metrics with ratios, their degrees and operator choices with the differences
// highlighted, and stacked bars of where the step time goes (compute, memory, communication per link class,
// pipeline), built from the two cost-model breakdowns.

#include "core/model/scenario.h"
#include "views/planrecord.h"

#include <QVector>
#include <QWidget>

#include <memory>

class QBarCategoryAxis;
class QChart;
class QChartView;
class QCheckBox;
class QComboBox;
class QHorizontalStackedBarSeries;
class QLabel;
class QSplitter;
class QTableWidget;
class QValueAxis;

namespace sp::views {

struct NamedPlan {
    QString name; ///< as listed in the side pickers: "Megatron", "Best found (sa)", "Elite #3", "Opened:
                  ///< tp8.yaml"
    PlanRecordPtr record;
    /// The scenario the plan was evaluated in; null: the view's. Two plans of different scenarios (the same
    /// model on H100 and on B200, or two workloads) compare as they stand, with the scenarios named.
    std::shared_ptr<const Scenario> scenario;
};

class ComparisonView : public QWidget {
    Q_OBJECT
public:
    explicit ComparisonView(QWidget* parent = nullptr);

    void setScenario(std::shared_ptr<const Scenario> scenario);
    /// The plans either side can show. Sides the user picked stay on the same name when it is still listed;
    /// otherwise they go to the given defaults.
    void setCandidates(const QVector<NamedPlan>& plans, int defaultLeft, int defaultRight);
    void setSides(int left, int right);
    int leftIndex() const;
    int rightIndex() const;
    PlanRecordPtr left() const;
    PlanRecordPtr right() const;

    /// The settings (degrees, "mesh order", operator names) whose values differ between the two sides.
    QStringList differences() const;
    /// Why the right plan differs in throughput (core/analysis explainWhy: the words `shardplan compare`
    /// prints), whole; empty when the plans are not of one scenario.
    QString whySentence() const;
    /// The label above the tables that shows it (word-wrapped, never cut short).
    QLabel* verdictLabel() const { return m_verdict; }
    /// The step-time bars (their sets carry the numbers; hovering one shows its tooltip).
    QHorizontalStackedBarSeries* barSeries() const;
    QString lastBarTip() const { return m_barTip; }
    QTableWidget* settingsTable() const { return m_settings; }
    QTableWidget* metricsTable() const { return m_metrics; }
    /// One row per setting of the right plan that can be taken back to the left plan's alone, the costliest
    /// first: the setting, both values, the right plan's throughput with the left's value (x its own), and
    /// the batch it then holds. Clicking a row shows that plan on the left against the right.
    QTableWidget* whatIfTable() const { return m_whatIf; }
    /// Shows what-if row `row` (as a click does): the right plan with that one setting taken back to the
    /// left's goes on the left side.
    void showWhatIf(int row);
    /// Adds a plan of another scenario (the same model on other GPUs, another workload) to both pickers and
    /// shows it on the right: the plan file `planPath`, or that scenario's Megatron plan when it is empty. It
    /// stays listed when the window's plans change. Returns what went wrong (file and place), or "".
    QString addFromScenario(const QString& scenarioPath, const QString& planPath = {});
    /// The scenario of side 0 (left) or 1 (right).
    std::shared_ptr<const Scenario> scenarioOf(int side) const;
    QString barAxisTitle() const;
    QStringList barCategories() const;
    /// The widget to render for image export (the whole comparison).
    QWidget* exportWidget() { return this; }

protected:
    void resizeEvent(QResizeEvent* event) override;

private:
    void refresh();
    void refreshBars();
    /// The metrics table as tall as its rows, which wrap their long values.
    void fitMetricsHeight();
    /// Tables beside the bars where both fit at full width, else the bars below the tables.
    void arrange();

    std::shared_ptr<const Scenario> m_scenario;
    std::shared_ptr<const CostModel> m_model; ///< of m_scenario: the why's batch limits and what-ifs
    QVector<NamedPlan> m_plans;
    QVector<NamedPlan> m_foreign; ///< plans of other scenarios the user added: listed after the window's
    std::vector<WhatIf> m_whatIfs;
    bool m_userPicked = false;
    QComboBox* m_left = nullptr;
    QComboBox* m_right = nullptr;
    QComboBox* m_phase = nullptr;
    QCheckBox* m_onlyDiff = nullptr;
    QLabel* m_verdict = nullptr;
    QTableWidget* m_metrics = nullptr;
    QTableWidget* m_settings = nullptr;
    QTableWidget* m_whatIf = nullptr;
    QChart* m_chart = nullptr;
    QChartView* m_chartView = nullptr;
    QSplitter* m_split = nullptr;
    QStringList m_diff;
    QString m_why;
    QString m_barTip;
};

} // namespace sp::views
