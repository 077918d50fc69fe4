#include "views/learningcurve.h"

#include "views/format.h"

#include <QChart>
#include <QChartView>
#include <QLabel>
#include <QLineSeries>
#include <QStackedLayout>
#include <QValueAxis>

#include <algorithm>
#include <cmath>
#include <limits>

namespace sp::views {

namespace {
struct NiceRange {
    double min, max;
    int ticks;
};

/// Qt's QValueAxis::applyNiceNumbers() (qvalueaxis.cpp, looseNiceNumbers and niceNumber, Qt 6.4) computed
/// without touching the axis: the range widened to whole steps of 1, 2 or 5 times a power of ten.
double niceNumber(double x, bool ceiling) {
    const double z = std::pow(10.0, std::floor(std::log10(x)));
    double q = x / z;
    if (ceiling)
        q = q <= 1.0 ? 1 : q <= 2.0 ? 2 : q <= 5.0 ? 5 : 10;
    else
        q = q < 1.5 ? 1 : q < 3.0 ? 2 : q < 7.0 ? 5 : 10;
    return q * z;
}

NiceRange niceRange(double lo, double hi, int ticks) {
    const double range = niceNumber(hi - lo, true);
    const double step = niceNumber(range / (ticks - 1), false);
    const double a = std::floor(lo / step), b = std::ceil(hi / step);
    return {a * step, b * step, int(b - a) + 1};
}
} // namespace

LearningCurveView::LearningCurveView(QWidget* parent) : QWidget(parent) {
    m_stack = new QStackedLayout(this);
    m_placeholder = new QLabel(this);
    m_placeholder->setAlignment(Qt::AlignCenter);
    m_placeholder->setWordWrap(true);
    m_placeholder->setMargin(40);
    m_placeholder->setStyleSheet(QStringLiteral("color: #6b7280; font-size: 11pt;"));
    setPlaceholderText(
        tr("<p><b>The learning curve fills when the rl searcher runs.</b></p>"
           "<p>It plots, per policy iteration, the mean reward of the sampled plans, the policy "
           "entropy and the mean of the elite set.</p>"));
    m_chart = new QChart;
    m_chart->setAnimationOptions(QChart::NoAnimation);
    m_chart->setBackgroundRoundness(0);
    m_chart->legend()->setAlignment(Qt::AlignBottom);
    m_view = new QChartView(m_chart, this);
    m_view->setRenderHint(QPainter::Antialiasing);
    m_x = new QValueAxis;
    m_x->setTitleText(tr("Iteration"));
    m_x->setLabelFormat(QStringLiteral("%.0f"));
    m_yLeft = new QValueAxis;
    m_yLeft->setTitleText(tr("Reward"));
    m_yRight = new QValueAxis;
    m_yRight->setTitleText(tr("Entropy"));
    m_yRight->setVisible(false);
    m_chart->addAxis(m_x, Qt::AlignBottom);
    m_chart->addAxis(m_yLeft, Qt::AlignLeft);
    m_chart->addAxis(m_yRight, Qt::AlignRight);
    m_stack->addWidget(m_placeholder);
    m_stack->addWidget(m_view);
    m_flush.setObjectName(QStringLiteral("learningcurveFlush")); // named in bench_gui_stall's report
    m_flush.setSingleShot(true);
    m_flush.setInterval(40);
    connect(&m_flush, &QTimer::timeout, this, &LearningCurveView::redraw);
}

void LearningCurveView::setPlaceholderText(const QString& text) {
    m_placeholder->setText(text);
}
bool LearningCurveView::showingPlaceholder() const {
    return m_stack->currentWidget() == m_placeholder;
}
QWidget* LearningCurveView::plotWidget() const {
    return m_stack->currentWidget();
}

void LearningCurveView::setSecondarySeries(const QStringList& names) {
    m_secondary = names;
    if (!names.isEmpty()) m_yRight->setTitleText(names.join(QStringLiteral(", ")));
}

QLineSeries* LearningCurveView::series(const QString& name) {
    if (auto it = m_series.find(name); it != m_series.end()) return *it;
    auto* s = new QLineSeries;
    s->setName(name);
    static const QColor palette[] = {QColor(0x25, 0x63, 0xeb), QColor(0xc0, 0x26, 0xd3),
                                     QColor(0x16, 0xa3, 0x4a), QColor(0xe0, 0x7b, 0x24),
                                     QColor(0x0f, 0x76, 0x6e), QColor(0x6b, 0x72, 0x80)};
    QPen pen(palette[m_order.size() % 6]);
    pen.setWidthF(2);
    if (m_secondary.contains(name)) pen.setStyle(Qt::DashLine);
    s->setPen(pen);
    m_chart->addSeries(s);
    s->attachAxis(m_x);
    s->attachAxis(m_secondary.contains(name) ? m_yRight : m_yLeft);
    if (m_secondary.contains(name)) m_yRight->setVisible(true);
    m_series.insert(name, s);
    m_order << name;
    return s;
}

void LearningCurveView::appendIteration(int iteration, const QList<QPair<QString, double>>& values) {
    for (const auto& [name, v] : values) m_data[name].append(QPointF(iteration, v));
    if (!m_flush.isActive()) m_flush.start();
}

void LearningCurveView::clear() {
    m_flush.stop();
    for (QLineSeries* s : std::as_const(m_series)) {
        m_chart->removeSeries(s);
        delete s;
    }
    m_series.clear();
    m_order.clear();
    m_data.clear();
    m_yRight->setVisible(false);
    m_stack->setCurrentWidget(m_placeholder);
}

void LearningCurveView::redraw() {
    double xMax = 1, lMin = std::numeric_limits<double>::max(), lMax = -lMin, rMin = lMin, rMax = -lMin;
    for (auto it = m_data.cbegin(); it != m_data.cend(); ++it) {
        QLineSeries* s = series(it.key());
        s->replace(QList<QPointF>(it->begin(), it->end()));
        const bool right = m_secondary.contains(it.key());
        for (const QPointF& p : *it) {
            xMax = std::max(xMax, p.x());
            (right ? rMin : lMin) = std::min(right ? rMin : lMin, p.y());
            (right ? rMax : lMax) = std::max(right ? rMax : lMax, p.y());
        }
    }
    // One range change per axis, and none while the nice range holds: each change lays the axis labels out
    // again on the GUI thread (QValueAxis::setRange, then applyNiceNumbers, was two of them per redraw).
    auto fit = [](QValueAxis* a, double lo, double hi, bool pad = true) {
        if (lo > hi) return;
        const double margin = pad ? (hi - lo) * 0.05 + 1e-9 : 0;
        const NiceRange n = niceRange(lo - margin, hi + margin, 5);
        if (a->tickCount() != n.ticks) a->setTickCount(n.ticks);
        a->setRange(n.min, n.max); // a no-op when unchanged
    };
    fit(m_x, 0, xMax, false);
    fit(m_yLeft, lMin, lMax);
    fit(m_yRight, rMin, rMax);
    if (!m_data.isEmpty()) m_stack->setCurrentWidget(m_view);
}

} // namespace sp::views
