#pragma once
// Shared by the scenario editor's files (scenarioeditor.cpp, scenarioeditor_model.cpp,
// scenarioeditor_cluster.cpp, scenarioeditor_workload.cpp, scenarioeditor_constraints.cpp).

#include <QHBoxLayout>
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

/// Two fields on one form row: "first [....]  second label [....]" (a compact panel: the constraints fit
/// below without scrolling at 1600x1000). Each field's box keeps its error note under it.
inline QWidget* pairRow(QWidget* parent, QWidget* first, const QString& secondLabel, QWidget* second) {
    auto* w = new QWidget(parent);
    auto* h = new QHBoxLayout(w);
    h->setContentsMargins(0, 0, 0, 0);
    h->addWidget(first, 1);
    auto* l = new QLabel(secondLabel, w);
    h->addWidget(l, 0, Qt::AlignTop);
    h->addWidget(second, 1);
    // The label sits level with the line edits (their boxes grow downwards with an error).
    l->setMinimumHeight(first->sizeHint().height());
    return w;
}

} // namespace sp::views::editor
