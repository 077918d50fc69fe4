#pragma once
// Shared by the scenario editor's files (scenarioeditor.cpp, scenarioeditor_constraints.cpp).

#include <QLabel>
#include <QString>

namespace sp::views::editor {

inline constexpr const char* kErrorStyle = "color: #b91c1c;";
inline constexpr const char* kInfoStyle = "color: #4b5563;";
/// A change the user should notice (what picking another cluster changed).
inline constexpr const char* kNoticeStyle = "color: #92400e;";

/// A word-wrapped note (info or error), hidden until it has something to say.
inline QLabel* makeNote(QWidget* parent, const char* style) {
    auto* l = new QLabel(parent);
    l->setWordWrap(true);
    l->setStyleSheet(QString::fromLatin1(style));
    l->hide();
    return l;
}

} // namespace sp::views::editor
