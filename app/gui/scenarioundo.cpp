#include "scenarioundo.h"

#include <QUndoCommand>
#include <QUndoStack>

namespace sp::app {

namespace {
/// Which part of the scenario an edit changed: 1 model, 2 cluster, 3 workload, 4 constraints, 0 several.
int partOf(const Scenario& a, const Scenario& b) {
    int part = 0, n = 0;
    if (!(a.model == b.model)) part = 1, ++n;
    if (!(a.cluster == b.cluster)) part = 2, ++n;
    if (!(a.workload == b.workload)) part = 3, ++n;
    if (!(a.constraints == b.constraints)) part = 4, ++n;
    return n == 1 ? part : 0;
}
} // namespace

class ScenarioEdit : public QUndoCommand {
public:
    ScenarioEdit(ScenarioUndo* owner, Scenario before, Scenario after)
        : m_owner(owner), m_before(std::move(before)), m_after(std::move(after)),
          m_part(partOf(m_before, m_after)) {
        static const char* names[] = {"Edit scenario", "Change model", "Edit cluster", "Edit workload",
                                      "Edit constraints"};
        setText(QObject::tr(names[m_part]));
        m_clock.start();
    }
    void undo() override { m_owner->apply(m_before); }
    void redo() override {
        if (m_first) {
            m_first = false; // the edit is already shown
            return;
        }
        m_owner->apply(m_after);
    }
    int id() const override { return 1; }
    bool mergeWith(const QUndoCommand* other) override {
        const auto* o = static_cast<const ScenarioEdit*>(other);
        if (m_part == 0 || o->m_part != m_part || m_clock.elapsed() > 1000) return false;
        m_after = o->m_after;
        m_clock.restart();
        return true;
    }

private:
    ScenarioUndo* m_owner;
    Scenario m_before, m_after;
    int m_part;
    bool m_first = true;
    QElapsedTimer m_clock;
};

ScenarioUndo::ScenarioUndo(std::function<void(const Scenario&)> apply, QObject* parent)
    : QObject(parent), m_stack(new QUndoStack(this)), m_apply(std::move(apply)) {}

void ScenarioUndo::reset(const Scenario& s) {
    m_stack->clear();
    m_current = s;
}

void ScenarioUndo::record(const Scenario& now) {
    if (m_applying || now == m_current) return;
    m_stack->push(new ScenarioEdit(this, m_current, now));
    m_current = now;
}

void ScenarioUndo::apply(const Scenario& s) {
    m_applying = true;
    m_current = s;
    m_apply(s);
    m_applying = false;
}

} // namespace sp::app
