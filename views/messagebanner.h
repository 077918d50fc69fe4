#pragma once
// An inline message strip (in the manner of KMessageWidget): an icon, a text, optional action buttons and a
// close button, coloured by severity. Shown above the content instead of modal dialogs, so the user's work
// stays in view.

#include <QFrame>

#include <string_view>

class QLabel;
class QHBoxLayout;
class QToolButton;

namespace sp::views {

class MessageBanner : public QFrame {
    Q_OBJECT
public:
    enum class Kind { Info, Positive, Warning, Error };
    explicit MessageBanner(QWidget* parent = nullptr);

    /// Shows the message (replacing any previous one and its actions). `text` is rich text.
    void showMessage(Kind kind, const QString& text);
    /// Shows plain text (plainText(), then HTML-escaped).
    void showPlainMessage(Kind kind, const QString& text);

    /// `text` with what would not show as itself written as an escape, as core/common/text.h's printable()
    /// writes them: control characters (\t, \r, \x1b; a line break stays one), format characters that
    /// reorder or hide the text (U+202E), unpaired surrogates, private-use and unassigned code points, and
    /// U+FFFD (what a byte that was not UTF-8 became) as \u{...}.
    static QString plainText(const QString& text);
    /// Bytes from a file (or an error quoting one) as text: valid UTF-8 decoded, each byte that is not
    /// written as \xNN, then plainText().
    static QString fromBytes(std::string_view bytes);
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
