// The Serving tab's charts (ServingView, servingview.h): the TTFT and TPOT CDFs with the SLO lines, and the
// KV pool and queue over a run.
#include "views/format.h"
#include "views/servingview.h"

#include <QChart>
#include <QChartView>
#include <QGridLayout>
#include <QLegendMarker>
#include <QLineSeries>
#include <QValueAxis>

#include <algorithm>
#include <cmath>

namespace sp::views {

namespace {
const QColor kTtftColor(0x4e, 0x79, 0xa7);
const QColor kTpotColor(0xf2, 0x8e, 0x2b);
const QColor kSloColor(0xc0, 0x39, 0x2b);
const QColor kQueueColor(0x59, 0xa1, 0x4f);

QValueAxis* valueAxis(const QString& title, const QString& format = QStringLiteral("%g")) {
    auto* a = new QValueAxis;
    a->setTitleText(title);
    a->setLabelFormat(format);
    return a;
}

/// A round top for an axis from 0 that holds v.
double niceTop(double v) {
    if (!(v > 0)) return 1;
    const double p = std::pow(10.0, std::floor(std::log10(v)));
    for (double m : {1.0, 1.2, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0})
        if (m * p >= v) return m * p;
    return 10 * p;
}

QChart* makeChart(const QString& title) {
    auto* c = new QChart;
    c->setAnimationOptions(QChart::NoAnimation);
    c->setBackgroundRoundness(0);
    c->setMargins(QMargins(4, 4, 8, 4));
    c->setTitle(title);
    c->legend()->setAlignment(Qt::AlignBottom);
    return c;
}

QValueAxis* horizontalAxis(QChart* c) {
    return qobject_cast<QValueAxis*>(c->axes(Qt::Horizontal).value(0));
}
} // namespace

QWidget* ServingView::buildCharts() {
    m_ttftChart = makeChart(tr("TTFT"));
    m_tpotChart = makeChart(tr("TPOT"));
    m_timeChart = makeChart(tr("KV pool and queue over time"));
    const auto makeCdf = [](QChart* chart, const QColor& color, const QString& name, QLineSeries*& curve,
                            QLineSeries*& slo, QLineSeries*& level) {
        auto* x = valueAxis(name + tr(" (ms)"));
        auto* y = valueAxis(tr("CDF"), QStringLiteral("%.1f"));
        y->setRange(0, 1);
        y->setTickCount(6);
        chart->addAxis(x, Qt::AlignBottom);
        chart->addAxis(y, Qt::AlignLeft);
        curve = new QLineSeries;
        curve->setName(name);
        QPen pen(color);
        pen.setWidthF(2);
        curve->setPen(pen);
        slo = new QLineSeries;
        QPen sloPen(kSloColor);
        sloPen.setStyle(Qt::DashLine);
        sloPen.setWidthF(1.6);
        slo->setPen(sloPen);
        level = new QLineSeries;
        QPen levelPen(kSloColor);
        levelPen.setStyle(Qt::DotLine);
        level->setPen(levelPen);
        for (QLineSeries* s : {curve, slo, level}) {
            chart->addSeries(s);
            s->attachAxis(x);
            s->attachAxis(y);
        }
        if (auto m = chart->legend()->markers(level); !m.isEmpty()) m.front()->setVisible(false);
    };
    makeCdf(m_ttftChart, kTtftColor, tr("TTFT"), m_ttft, m_ttftSlo, m_ttftLevel);
    makeCdf(m_tpotChart, kTpotColor, tr("TPOT"), m_tpot, m_tpotSlo, m_tpotLevel);

    m_timeX = valueAxis(tr("time (s)"));
    m_kvAxis = valueAxis(tr("KV %"), QStringLiteral("%.0f"));
    m_kvAxis->setRange(0, 100);
    m_queueAxis = valueAxis(tr("waiting"), QStringLiteral("%.0f"));
    m_timeChart->addAxis(m_timeX, Qt::AlignBottom);
    m_timeChart->addAxis(m_kvAxis, Qt::AlignLeft);
    m_timeChart->addAxis(m_queueAxis, Qt::AlignRight);
    m_kv = new QLineSeries;
    m_kv->setName(tr("KV pool in use (%)"));
    QPen kvPen(kTtftColor);
    kvPen.setWidthF(1.6);
    m_kv->setPen(kvPen);
    m_queue = new QLineSeries;
    m_queue->setName(tr("requests waiting"));
    QPen queuePen(kQueueColor);
    queuePen.setWidthF(1.6);
    m_queue->setPen(queuePen);
    m_timeChart->addSeries(m_kv);
    m_kv->attachAxis(m_timeX);
    m_kv->attachAxis(m_kvAxis);
    m_timeChart->addSeries(m_queue);
    m_queue->attachAxis(m_timeX);
    m_queue->attachAxis(m_queueAxis);

    m_plots = new QWidget;
    auto* grid = new QGridLayout(m_plots);
    grid->setContentsMargins(0, 0, 0, 0);
    grid->setSpacing(2);
    const auto view = [](QChart* c) {
        auto* v = new QChartView(c);
        v->setRenderHint(QPainter::Antialiasing);
        // Below about 200 px the chart elides its axes' labels; a laptop's tab scrolls down to the rest.
        v->setMinimumHeight(200);
        v->setMinimumWidth(160);
        return v;
    };
    grid->addWidget(view(m_ttftChart), 0, 0);
    grid->addWidget(view(m_tpotChart), 0, 1);
    grid->addWidget(view(m_timeChart), 1, 0, 1, 2);
    clearCharts();
    return m_plots;
}

void ServingView::clearCharts() {
    for (QLineSeries* s : {m_ttft, m_tpot, m_ttftSlo, m_tpotSlo, m_ttftLevel, m_tpotLevel, m_kv, m_queue})
        s->clear();
    // No run, no SLO: its lines leave the legend with their names, and the axes go back to where they
    // started, so nothing of another scenario's run stays.
    for (QLineSeries* s : {m_ttftSlo, m_tpotSlo, m_ttftLevel, m_tpotLevel}) {
        s->setName(tr("SLO"));
        s->setVisible(false);
    }
    for (QChart* c : {m_ttftChart, m_tpotChart})
        if (QValueAxis* x = horizontalAxis(c)) x->setRange(0, 1);
    m_timeX->setRange(0, 1);
    m_queueAxis->setRange(0, 4);
    m_ttftChart->setTitle(tr("TTFT"));
    m_tpotChart->setTitle(tr("TPOT"));
    m_timeChart->setTitle(tr("KV pool and queue over time"));
}

QList<QPointF> ServingView::cdfPoints(const std::vector<double>& sorted) {
    QList<QPointF> pts;
    const size_t n = sorted.size();
    if (n == 0) return pts;
    pts.reserve(kCdfPoints + 2);
    pts.append(QPointF(sorted.front(), 0.0));
    const size_t step = std::max<size_t>(1, (n + kCdfPoints - 1) / kCdfPoints);
    for (size_t i = step - 1; i < n; i += step) pts.append(QPointF(sorted[i], double(i + 1) / double(n)));
    if (pts.back().y() < 1.0) pts.append(QPointF(sorted.back(), 1.0));
    return pts;
}

void ServingView::drawCdf(QChart* chart, QLineSeries* curve, QLineSeries* slo, QLineSeries* level,
                          const std::vector<double>& sorted, const Percentiles& summary, double sloMs,
                          double percentile, const QString& what) {
    curve->replace(cdfPoints(sorted));
    const double maxV = sorted.empty() ? 0 : sorted.back();
    const double top = niceTop(std::max(maxV, sloMs) * 1.05);
    if (QValueAxis* x = horizontalAxis(chart)) x->setRange(0, top);
    if (sloMs > 0) {
        slo->replace({QPointF(sloMs, 0), QPointF(sloMs, 1)});
        slo->setName(tr("SLO %1 (%2)").arg(formatMs(sloMs), sloPercentileName(percentile)));
        slo->setVisible(true);
    } else {
        slo->clear();
        slo->setName(tr("SLO"));
        slo->setVisible(false);
    }
    if (sloMs > 0 && percentile > 0) {
        level->replace({QPointF(0, percentile / 100.0), QPointF(top, percentile / 100.0)});
        level->setVisible(true);
    } else {
        level->clear();
        level->setVisible(false);
    }
    // The level's marker stays out of the legend whatever its visibility did to it.
    if (auto m = chart->legend()->markers(level); !m.isEmpty()) m.front()->setVisible(false);
    // The figures of the run's summary (the sorted values' nearest ranks): a session may keep fewer values
    // than the run had (app/gui/session_serving.h), never other figures.
    chart->setTitle(summary.count == 0 || sorted.empty()
                        ? what
                        : tr("%1: %2 requests, p50 %3, p99 %4")
                              .arg(what, formatInteger(double(summary.count)), formatMs(summary.p50),
                                   formatMs(summary.p99)));
}

void ServingView::drawRun(const SimResult& s, const Workload& w) {
    drawCdf(m_ttftChart, m_ttft, m_ttftSlo, m_ttftLevel, s.ttftSortedMs, s.ttftMs, w.ttftMs, w.sloPercentile,
            tr("TTFT"));
    drawCdf(m_tpotChart, m_tpot, m_tpotSlo, m_tpotLevel, s.tpotSortedMs, s.tpotMs, w.tpotMs, w.sloPercentile,
            tr("TPOT"));
    QList<QPointF> kv, queue;
    double maxQueue = 0;
    for (const SimResult::Point& p : s.timeline) {
        kv.append(QPointF(p.t, 100.0 * p.kvShare));
        queue.append(QPointF(p.t, double(p.waiting)));
        maxQueue = std::max(maxQueue, double(p.waiting));
    }
    m_kv->replace(kv);
    m_queue->replace(queue);
    m_timeX->setRange(0, niceTop(s.timeline.empty() ? s.durationS : s.timeline.back().t));
    m_queueAxis->setRange(0, std::max(4.0, niceTop(maxQueue)));
    m_timeChart->setTitle(tr("KV pool and queue over time: peak %1% of the pool, %2 preemptions")
                              .arg(100.0 * s.kvPeakShare, 0, 'f', 1)
                              .arg(s.preemptions));
}

} // namespace sp::views
