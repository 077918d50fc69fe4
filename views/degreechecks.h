#pragma once
// A row of toggle buttons for the allowed values of one parallelism degree: "any", or a choice among the
// powers of two up to a maximum (plus any other value already allowed). While "any" is on every value reads
// as allowed; clicking one value then allows just that one (pin TP to 8 in one click).

#include <QList>
#include <QWidget>

#include <vector>

class QToolButton;

namespace sp::views {

class DegreeChecks : public QWidget {
    Q_OBJECT
public:
    explicit DegreeChecks(QWidget* parent = nullptr);
    /// Rebuilds the buttons for values up to `max`, checked per `allowed` (empty: "any").
    void setValues(int max, const std::vector<int>& allowed);
    /// The allowed list: empty for "any".
    std::vector<int> allowed() const;
    bool noneChecked() const;
    void setAny(bool any);
    bool isAny() const;
    /// Checks or unchecks one value (turning "any" off).
    void setChecked(int value, bool on);
    QList<int> values() const;
    /// The button of a value (nullptr if not listed), and the "any" button.
    QToolButton* button(int value) const;
    QToolButton* anyButton() const { return m_any; }

signals:
    void changed();

private:
    void valueClicked(QToolButton* b);
    void restyle();

    QToolButton* m_any = nullptr;
    QList<QToolButton*> m_buttons;
};

} // namespace sp::views
