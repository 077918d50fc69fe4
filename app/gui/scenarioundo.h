#pragma once
// Undo and redo of scenario and constraint edits (Ctrl+Z, Ctrl+Shift+Z). Each valid edit is a step holding
// the scenario before and after; keystrokes in one part of the scenario (model, cluster, workload,
// constraints) within a second of each other are one step. Opening a scenario starts a new history.

#include "core/model/scenario.h"

#include <QElapsedTimer>
#include <QObject>

#include <functional>

class QUndoStack;

namespace sp::app {

class ScenarioUndo : public QObject {
    Q_OBJECT
public:
    /// `apply` shows a scenario (in the editor and the views) without recording it.
    ScenarioUndo(std::function<void(const Scenario&)> apply, QObject* parent = nullptr);
    QUndoStack* stack() const { return m_stack; }
    /// A new history from this scenario.
    void reset(const Scenario& s);
    /// The editor's scenario after a valid edit.
    void record(const Scenario& now);
    bool applying() const { return m_applying; }

private:
    friend class ScenarioEdit;
    void apply(const Scenario& s);

    QUndoStack* m_stack;
    std::function<void(const Scenario&)> m_apply;
    Scenario m_current;
    bool m_applying = false;
};

} // namespace sp::app
