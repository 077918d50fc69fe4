#pragma once
// The selected plan in words: metrics against the SLOs and the roofline, memory, degrees and every operator's
// choice, and the plan file text (what File > Export > Plan writes).

#include "core/model/scenario.h"
#include "views/planrecord.h"

#include <QWidget>

#include <memory>

class QPlainTextEdit;
class QTextBrowser;

namespace sp::views {

class PlanDetails : public QWidget {
    Q_OBJECT
public:
    explicit PlanDetails(QWidget* parent = nullptr);
    void setPlan(std::shared_ptr<const Scenario> scenario, PlanRecordPtr plan);
    QString summaryText() const;
    QString planText() const;

private:
    QTextBrowser* m_summary = nullptr;
    QPlainTextEdit* m_yaml = nullptr;
};

} // namespace sp::views
