#include "views/degreechecks.h"

#include <QGridLayout>
#include <QToolButton>

#include <algorithm>

namespace sp::views {

namespace {
// Checked values: blue. While "any" is on, every value is allowed: a lighter blue, not greyed out.
const char* kStyle =
    "QToolButton { padding: 1px 2px; }"
    "QToolButton:checked { background: #dbeafe; border: 1px solid #60a5fa; }"
    "QToolButton[implied=\"true\"]:checked { background: #eff6ff; border: 1px dashed #93c5fd; "
    "color: #1e3a8a; }";

QToolButton* toggle(QWidget* parent, const QString& text, const QString& tip) {
    auto* b = new QToolButton(parent);
    b->setText(text);
    b->setCheckable(true);
    b->setToolTip(tip);
    b->setMinimumWidth(b->fontMetrics().horizontalAdvance(QStringLiteral("0000")) + 6);
    b->setStyleSheet(QString::fromLatin1(kStyle));
    return b;
}
} // namespace

DegreeChecks::DegreeChecks(QWidget* parent) : QWidget(parent) {
    auto* lay = new QGridLayout(this);
    lay->setContentsMargins(0, 0, 0, 0);
    lay->setSpacing(2);
}

void DegreeChecks::setValues(int max, const std::vector<int>& allowed) {
    if (m_any) m_any->deleteLater();
    for (QToolButton* b : m_buttons) b->deleteLater();
    m_buttons.clear();
    auto* lay = static_cast<QGridLayout*>(layout());
    while (QLayoutItem* it = lay->takeAt(0)) delete it;
    constexpr int kPerRow = 6; // wraps, so a 1024-GPU cluster still fits a narrow panel
    std::vector<int> values;
    for (int v = 1; v <= std::max(1, max); v *= 2) values.push_back(v);
    for (int v : allowed)
        if (std::find(values.begin(), values.end(), v) == values.end()) values.push_back(v);
    std::sort(values.begin(), values.end());
    m_any = toggle(this, tr("any"), tr("Any degree that divides (not only the powers of two listed)"));
    m_any->setChecked(allowed.empty());
    lay->addWidget(m_any, 0, 0);
    connect(m_any, &QToolButton::toggled, this, [this](bool on) {
        for (QToolButton* b : m_buttons) {
            const QSignalBlocker block(b);
            if (on) b->setChecked(true);
        }
        restyle();
        emit changed();
    });
    for (int v : values) {
        auto* b =
            toggle(this, QString::number(v), tr("Allow %1 (while \"any\" is on: allow only %1)").arg(v));
        b->setChecked(allowed.empty() || std::find(allowed.begin(), allowed.end(), v) != allowed.end());
        connect(b, &QToolButton::clicked, this, [this, b] { valueClicked(b); });
        const int k = int(m_buttons.size()) + 1;
        lay->addWidget(b, k / kPerRow, k % kPerRow);
        m_buttons << b;
    }
    lay->setColumnStretch(kPerRow, 1);
    restyle();
}

void DegreeChecks::valueClicked(QToolButton* b) {
    if (m_any && m_any->isChecked()) {
        // "any" on: the click picks this value alone.
        {
            const QSignalBlocker block(m_any);
            m_any->setChecked(false);
        }
        for (QToolButton* o : m_buttons) {
            const QSignalBlocker block(o);
            o->setChecked(o == b);
        }
    }
    restyle();
    emit changed();
}

void DegreeChecks::restyle() {
    const bool any = isAny();
    for (QToolButton* b : m_buttons) {
        if (b->property("implied").toBool() == any) continue;
        b->setProperty("implied", any);
        b->setStyleSheet(QString::fromLatin1(kStyle)); // re-polish for the property
    }
}

std::vector<int> DegreeChecks::allowed() const {
    if (isAny()) return {};
    std::vector<int> out;
    for (QToolButton* b : m_buttons)
        if (b->isChecked()) out.push_back(b->text().toInt());
    return out;
}

bool DegreeChecks::noneChecked() const {
    if (isAny()) return false;
    return std::none_of(m_buttons.begin(), m_buttons.end(), [](QToolButton* b) { return b->isChecked(); });
}

bool DegreeChecks::isAny() const {
    return !m_any || m_any->isChecked();
}

void DegreeChecks::setAny(bool any) {
    if (m_any) m_any->setChecked(any);
}

void DegreeChecks::setChecked(int value, bool on) {
    if (m_any) {
        const QSignalBlocker block(m_any);
        m_any->setChecked(false);
    }
    for (QToolButton* b : m_buttons)
        if (b->text().toInt() == value) {
            const QSignalBlocker block(b);
            b->setChecked(on);
        }
    restyle();
    emit changed();
}

QList<int> DegreeChecks::values() const {
    QList<int> out;
    for (QToolButton* b : m_buttons) out << b->text().toInt();
    return out;
}

QToolButton* DegreeChecks::button(int value) const {
    for (QToolButton* b : m_buttons)
        if (b->text().toInt() == value) return b;
    return nullptr;
}

} // namespace sp::views
