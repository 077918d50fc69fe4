#pragma once
// An inline message strip (in the manner of KMessageWidget): an icon, a text, optional action buttons and a
// close button, coloured by severity. Shown above the content instead of modal dialogs, so the user's work
// stays in view.

#include <QFrame>

class QLabel;
class QHBoxLayout;
class QToolButton;

namespace sp::views {

class MessageBanner : public QFrame {
    Q_OBJECT
public:
    enum class Kind { Info, Positive, Warning, Error };
    explicit MessageBanner(QWidget* parent = nullptr);

    /// Shows the message (replacing any previous one and its actions).
    void showMessage(Kind kind, const QString& text);
    /// Adds a button to the current message; `triggered` fires when it is clicked.
    QToolButton* addAction(const QString& text, const QString& toolTip = {});
    void clearActions();
    QString text() const;
    Kind kind() const { return m_kind; }

signals:
    void closed();

private:
    Kind m_kind = Kind::Info;
    QLabel* m_icon = nullptr;
    QLabel* m_text = nullptr;
    QHBoxLayout* m_actions = nullptr;
};

} // namespace sp::views
