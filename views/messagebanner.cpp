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

void MessageBanner::showPlainMessage(Kind kind, const QString& text) {
    showMessage(kind, plainText(text).toHtmlEscaped());
}

QString MessageBanner::plainText(const QString& text) {
    QString out;
    out.reserve(text.size());
    for (auto it = text.cbegin(); it != text.cend(); ++it) {
        char32_t c = it->unicode();
        if (it->isHighSurrogate() && it + 1 != text.cend() && (it + 1)->isLowSurrogate()) {
            c = QChar::surrogateToUcs4(*it, *(it + 1));
            ++it;
        }
        if (c == '\n') {
            out += QChar(u'\n');
        } else if (c == '\t') {
            out += QStringLiteral("\\t");
        } else if (c == '\r') {
            out += QStringLiteral("\\r");
        } else if (c < 0x20 || c == 0x7f) {
            out += QStringLiteral("\\x%1").arg(uint(c), 2, 16, QChar(u'0'));
        } else {
            const QChar::Category cat = QChar::category(c);
            const bool hidden = cat == QChar::Other_Control || cat == QChar::Other_Format ||
                                cat == QChar::Other_Surrogate || cat == QChar::Other_PrivateUse ||
                                cat == QChar::Other_NotAssigned || c == 0xfffd;
            if (hidden)
                out += QStringLiteral("\\u{%1}").arg(uint(c), 4, 16, QChar(u'0'));
            else
                out += QString::fromUcs4(&c, 1);
        }
    }
    return out;
}

QString MessageBanner::fromBytes(std::string_view bytes) {
    QString out;
    const auto* b = reinterpret_cast<const unsigned char*>(bytes.data());
    const size_t n = bytes.size();
    for (size_t i = 0; i < n;) {
        // The length of the UTF-8 sequence starting here and its smallest code point (no overlong forms).
        const unsigned char c = b[i];
        size_t len = 0;
        char32_t cp = 0, min = 0;
        if (c < 0x80)
            len = 1, cp = c;
        else if ((c & 0xe0) == 0xc0)
            len = 2, cp = c & 0x1f, min = 0x80;
        else if ((c & 0xf0) == 0xe0)
            len = 3, cp = c & 0x0f, min = 0x800;
        else if ((c & 0xf8) == 0xf0)
            len = 4, cp = c & 0x07, min = 0x10000;
        bool ok = len > 0 && i + len <= n;
        for (size_t k = 1; ok && k < len; ++k) {
            ok = (b[i + k] & 0xc0) == 0x80;
            cp = (cp << 6) | (b[i + k] & 0x3f);
        }
        ok = ok && cp >= min && cp <= 0x10ffff && !(cp >= 0xd800 && cp <= 0xdfff);
        if (!ok) {
            out += QStringLiteral("\\x%1").arg(uint(c), 2, 16, QChar(u'0'));
            ++i;
            continue;
        }
        out += QString::fromUcs4(&cp, 1);
        i += len;
    }
    return plainText(out);
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
