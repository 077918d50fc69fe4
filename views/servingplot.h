#pragma once
// What the Serving tab's charts share (servingcharts.cpp, servingsweep.cpp): their colours, axes and frame.

#include <QChart>
#include <QColor>
#include <QLegendMarker>
#include <QValueAxis>
#include <QXYSeries>

#include <cmath>

namespace sp::views::plot {

inline const QColor kTtftColor(0x4e, 0x79, 0xa7);
inline const QColor kTpotColor(0xf2, 0x8e, 0x2b);
inline const QColor kSloColor(0xc0, 0x39, 0x2b);
inline const QColor kQueueColor(0x59, 0xa1, 0x4f);
/// A pinned run or sweep: grey and dashed, behind the current one.
inline const QColor kPinnedColor(0x6e, 0x6e, 0x6e);
/// The highest rate meeting the SLOs.
inline const QColor kMetColor(0x2e, 0x8b, 0x57);

inline QValueAxis* valueAxis(const QString& title, const QString& format = QStringLiteral("%g")) {
    auto* a = new QValueAxis;
    a->setTitleText(title);
    a->setLabelFormat(format);
    return a;
}

/// A round top for an axis from 0 that holds v.
inline double niceTop(double v) {
    if (!(v > 0)) return 1;
    const double p = std::pow(10.0, std::floor(std::log10(v)));
    for (double m : {1.0, 1.2, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0})
        if (m * p >= v) return m * p;
    return 10 * p;
}

/// An axis from 0 to niceTop(v), its ticks at round steps (1, 2, 2.5 or 5 times a power of ten).
inline void setNiceRange(QValueAxis* a, double v) {
    const double top = niceTop(v);
    a->setRange(0, top);
    for (int n : {6, 5, 7, 4}) {
        const double step = top / (n - 1);
        const double m = step / std::pow(10.0, std::floor(std::log10(step) + 1e-9));
        for (double nice : {1.0, 2.0, 2.5, 5.0})
            if (std::abs(m - nice) < 1e-6) {
                a->setTickCount(n);
                return;
            }
    }
    a->setTickCount(5);
}

inline QChart* makeChart(const QString& title) {
    auto* c = new QChart;
    c->setAnimationOptions(QChart::NoAnimation);
    c->setBackgroundRoundness(0);
    c->setMargins(QMargins(4, 4, 8, 4));
    c->setTitle(title);
    c->legend()->setAlignment(Qt::AlignBottom);
    return c;
}

inline QPen pen(const QColor& color, double width, Qt::PenStyle style = Qt::SolidLine) {
    QPen p(color);
    p.setWidthF(width);
    p.setStyle(style);
    return p;
}

/// Keeps a series out of the legend (whatever its visibility or name did to its marker).
inline void hideMarker(QChart* chart, QAbstractSeries* s) {
    for (QLegendMarker* m : chart->legend()->markers(s)) m->setVisible(false);
}

} // namespace sp::views::plot
