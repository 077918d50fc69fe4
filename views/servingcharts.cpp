// The Serving tab's charts (ServingView, servingview.h): the TTFT and TPOT CDFs with the SLO lines (and the
// pinned run's, grey and dashed), and the KV pool and queue over a run.
#include "views/format.h"
#include "views/servingplot.h"
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

using namespace plot;

namespace {
QValueAxis* horizontalAxis(QChart* c) {
    return qobject_cast<QValueAxis*>(c->axes(Qt::Horizontal).value(0));
}
} // namespace

QWidget* ServingView::buildCharts() {
    m_ttftChart = makeChart(tr("TTFT"));
    m_tpotChart = makeChart(tr("TPOT"));
    m_timeChart = makeChart(tr("KV pool and queue over time"));
    const auto makeCdf = [](QChart* chart, const QColor& color, const QString& name, QLineSeries*& curve,
                            QLineSeries*& pinned, QLineSeries*& slo, QLineSeries*& level) {
        auto* x = valueAxis(name + tr(" (ms)"));
        auto* y = valueAxis(tr("CDF"), QStringLiteral("%.1f"));
        y->setRange(0, 1);
        y->setTickCount(6);
        chart->addAxis(x, Qt::AlignBottom);
        chart->addAxis(y, Qt::AlignLeft);
        // The pinned run first, so the current one is drawn over it.
        pinned = new QLineSeries;
        pinned->setPen(pen(kPinnedColor, 2, Qt::DashLine));
        curve = new QLineSeries;
        curve->setName(name);
        curve->setPen(pen(color, 2));
        slo = new QLineSeries;
        slo->setPen(pen(kSloColor, 1.6, Qt::DashLine));
        level = new QLineSeries;
        level->setPen(pen(kSloColor, 1, Qt::DotLine));
        for (QLineSeries* s : {pinned, curve, slo, level}) {
            chart->addSeries(s);
            s->attachAxis(x);
            s->attachAxis(y);
        }
        if (auto m = chart->legend()->markers(level); !m.isEmpty()) m.front()->setVisible(false);
    };
    makeCdf(m_ttftChart, kTtftColor, tr("TTFT"), m_ttft, m_pinTtft, m_ttftSlo, m_ttftLevel);
    makeCdf(m_tpotChart, kTpotColor, tr("TPOT"), m_tpot, m_pinTpot, m_tpotSlo, m_tpotLevel);

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
    for (QLineSeries* s : {m_pinTtft, m_pinTpot}) {
        s->clear();
        s->setVisible(false);
    }
    m_ttft->setName(tr("TTFT"));
    m_tpot->setName(tr("TPOT"));
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

void ServingView::drawCdf(QChart* chart, QLineSeries* curve, QLineSeries* pinCurve, QLineSeries* slo,
                          QLineSeries* level, bool ttft, const QString& what) {
    const SimResult* run = m_result.get();
    const ShownRun* pin = m_pin.run ? &*m_pin.run : nullptr;
    const auto sorted = [ttft](const SimResult& r) -> const std::vector<double>& {
        return ttft ? r.ttftSortedMs : r.tpotSortedMs;
    };
    curve->replace(run ? cdfPoints(sorted(*run)) : QList<QPointF>());
    pinCurve->replace(pin ? cdfPoints(sorted(*pin->run)) : QList<QPointF>());
    pinCurve->setVisible(pin != nullptr);
    // Against the run's workload, or the pinned one's when only it is drawn.
    const Workload& w = run ? m_resultWorkload : pin ? pin->workload : m_resultWorkload;
    const double sloMs = run || pin ? (ttft ? w.ttftMs : w.tpotMs) : 0;
    const double percentile = w.sloPercentile;
    double maxV = sloMs;
    for (const SimResult* r : {run, pin ? pin->run.get() : nullptr})
        if (r && !sorted(*r).empty()) maxV = std::max(maxV, sorted(*r).back());
    const double top = niceTop(maxV * 1.05);
    if (QValueAxis* x = horizontalAxis(chart)) x->setRange(0, top);
    if (sloMs > 0) {
        slo->replace({QPointF(sloMs, 0), QPointF(sloMs, 1)});
        // With a pin the two runs' names share the legend: the SLO's value is where its line is.
        slo->setName(pin ? tr("%1 SLO").arg(sloPercentileName(percentile))
                         : tr("SLO %1 (%2)").arg(formatMs(sloMs), sloPercentileName(percentile)));
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
    // With a pin, each curve is named by what differs between the two runs.
    if (pin) {
        const auto names =
            run ? distinctNames(pin->tag, m_resultTag, tr("this run")) : std::pair{tr("pinned"), QString()};
        pinCurve->setName(names.first);
        curve->setName(names.second);
    } else {
        curve->setName(what);
        pinCurve->setName(QString());
    }
    curve->setVisible(run != nullptr || !pin);
    // The level's marker stays out of the legend whatever its visibility did to it.
    hideMarker(chart, level);
    if (!pin) hideMarker(chart, pinCurve);
    // The figures of the run's summary (the sorted values' nearest ranks): a session may keep fewer values
    // than the run had (app/gui/session_serving.h), never other figures.
    const Percentiles* summary = run ? (ttft ? &run->ttftMs : &run->tpotMs) : nullptr;
    chart->setTitle(!summary || summary->count == 0 || sorted(*run).empty()
                        ? what
                        : tr("%1: %2 requests, p50 %3, p99 %4")
                              .arg(what, formatInteger(double(summary->count)), formatMs(summary->p50),
                                   formatMs(summary->p99)));
}

void ServingView::drawCdfs() {
    drawCdf(m_ttftChart, m_ttft, m_pinTtft, m_ttftSlo, m_ttftLevel, true, tr("TTFT"));
    drawCdf(m_tpotChart, m_tpot, m_pinTpot, m_tpotSlo, m_tpotLevel, false, tr("TPOT"));
}

void ServingView::drawRun(const SimResult& s) {
    drawCdfs();
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
