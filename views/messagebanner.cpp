#include "views/messagebanner.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QStyle>
#include <QToolButton>

namespace sp::views {

MessageBanner::MessageBanner(QWidget* parent) : QFrame(parent) {
    setObjectName(QStringLiteral("MessageBanner"));
    auto* lay = new QHBoxLayout(this);
    lay->setContentsMargins(10, 6, 6, 6);
    lay->setSpacing(8);
    m_icon = new QLabel(this);
    m_text = new QLabel(this);
    m_text->setWordWrap(true);
    m_text->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_text->setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Preferred);
    m_actions = new QHBoxLayout;
    m_actions->setSpacing(4);
    auto* close = new QToolButton(this);
    close->setAutoRaise(true);
    close->setText(QStringLiteral("\u2715"));
    close->setToolTip(tr("Dismiss"));
    connect(close, &QToolButton::clicked, this, [this] {
        hide();
        emit closed();
    });
    lay->addWidget(m_icon, 0, Qt::AlignTop);
    lay->addWidget(m_text, 1);
    lay->addLayout(m_actions);
    lay->addWidget(close, 0, Qt::AlignTop);
    hide();
}

void MessageBanner::showMessage(Kind kind, const QString& text) {
    m_kind = kind;
    clearActions();
    QString bg, border;
    QStyle::StandardPixmap icon = QStyle::SP_MessageBoxInformation;
    switch (kind) {
    case Kind::Info:
        bg = QStringLiteral("#e8f1fd"), border = QStringLiteral("#8db7ef");
        break;
    case Kind::Positive:
        bg = QStringLiteral("#e7f6ec"), border = QStringLiteral("#7cc795");
        break;
    case Kind::Warning:
        bg = QStringLiteral("#fff6e0"), border = QStringLiteral("#f0c36d");
        icon = QStyle::SP_MessageBoxWarning;
        break;
    case Kind::Error:
        bg = QStringLiteral("#fdecec"), border = QStringLiteral("#ec9a9a");
        icon = QStyle::SP_MessageBoxCritical;
        break;
    }
    setStyleSheet(
        QStringLiteral("#MessageBanner { background: %1; border: 1px solid %2; border-radius: 4px; }"
                       "#MessageBanner QLabel { color: #1f2937; background: transparent; }")
            .arg(bg, border));
    const int sz = style()->pixelMetric(QStyle::PM_SmallIconSize);
    m_icon->setPixmap(style()->standardIcon(icon).pixmap(sz, sz));
    m_text->setText(text);
    show();
}

QToolButton* MessageBanner::addAction(const QString& text, const QString& toolTip) {
    auto* b = new QToolButton(this);
    b->setText(text);
    b->setToolTip(toolTip);
    b->setToolButtonStyle(Qt::ToolButtonTextOnly);
    m_actions->addWidget(b);
    return b;
}

void MessageBanner::clearActions() {
    while (QLayoutItem* it = m_actions->takeAt(0)) {
        if (QWidget* w = it->widget()) w->deleteLater();
        delete it;
    }
}

QString MessageBanner::text() const {
    return m_text->text();
}

} // namespace sp::views
