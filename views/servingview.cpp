#include "views/servingview.h"

#include "views/format.h"

#include <QButtonGroup>
#include <QChart>
#include <QChartView>
#include <QDoubleSpinBox>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLegendMarker>
#include <QLineEdit>
#include <QLineSeries>
#include <QProgressBar>
#include <QPushButton>
#include <QRadioButton>
#include <QSpinBox>
#include <QVBoxLayout>
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

QString percentileName(double p) {
    return p > 0 ? QStringLiteral("p%1").arg(p) : ServingView::tr("mean");
}
} // namespace

ServingView::ServingView(QWidget* parent) : QWidget(parent) {
    m_byRate = new QRadioButton(tr("Rate"));
    m_byRate->setToolTip(tr("Poisson arrivals at this many requests per second"));
    m_byTrace = new QRadioButton(tr("Trace"));
    m_byTrace->setToolTip(tr("Replay a CSV or JSON Lines trace (arrival, input and output tokens; the Azure "
                             "LLM inference layout reads as it is)"));
    auto* source = new QButtonGroup(this);
    source->addButton(m_byRate);
    source->addButton(m_byTrace);
    m_byRate->setChecked(true);
    m_rate = new QDoubleSpinBox;
    m_rate->setRange(0.001, 1e6);
    m_rate->setDecimals(3);
    m_rate->setValue(1.0);
    m_rate->setSuffix(tr(" requests/s"));
    m_trace = new QLineEdit;
    m_trace->setPlaceholderText(tr("trace file"));
    m_traceButton = new QPushButton(tr("Trace..."));
    connect(m_traceButton, &QPushButton::clicked, this, &ServingView::traceRequested);
    m_requests = new QSpinBox;
    m_requests->setRange(1, 10'000'000);
    m_requests->setSingleStep(1000);
    m_requests->setValue(1000);
    m_requests->setToolTip(tr("Requests to simulate (with a trace: its first N)"));
    m_run = new QPushButton(tr("Run"));
    m_run->setToolTip(tr("Simulate the plan shown serving the requests, step by step"));
    m_capacity = new QPushButton(tr("Capacity"));
    m_capacity->setToolTip(
        tr("The highest rate the plan shown sustains under the workload's SLOs (bisection on simulations)"));
    m_stop = new QPushButton(tr("Stop"));
    m_stop->setToolTip(tr("Stop the simulation, keeping what completed (Esc)"));
    m_stop->setEnabled(false);
    connect(m_run, &QPushButton::clicked, this, &ServingView::runRequested);
    connect(m_capacity, &QPushButton::clicked, this, &ServingView::capacityRequested);
    connect(m_stop, &QPushButton::clicked, this, &ServingView::stopRequested);
    connect(m_byRate, &QRadioButton::toggled, this, [this] { updateSourceControls(); });
    m_progress = new QProgressBar;
    m_progress->setMaximumWidth(160);
    m_progress->setVisible(false);
    m_status = new QLabel;
    m_status->setTextFormat(Qt::PlainText);
    m_status->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);

    auto* bar = new QHBoxLayout;
    bar->setContentsMargins(6, 4, 6, 0);
    bar->addWidget(m_byRate);
    bar->addWidget(m_rate);
    bar->addWidget(m_byTrace);
    bar->addWidget(m_trace, 1);
    bar->addWidget(m_traceButton);
    bar->addWidget(new QLabel(tr("Requests")));
    bar->addWidget(m_requests);
    bar->addWidget(m_run);
    bar->addWidget(m_capacity);
    bar->addWidget(m_stop);
    bar->addWidget(m_progress);

    m_summary = new QLabel;
    m_summary->setTextFormat(Qt::PlainText);
    m_summary->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_summary->setFont(QFont(QStringLiteral("monospace")));
    m_capacityLabel = new QLabel;
    m_capacityLabel->setTextFormat(Qt::PlainText);
    m_capacityLabel->setWordWrap(true);
    m_capacityLabel->setTextInteractionFlags(Qt::TextSelectableByMouse);

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
        slo->setName(tr("SLO"));
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
        v->setMinimumHeight(200);
        return v;
    };
    grid->addWidget(view(m_ttftChart), 0, 0);
    grid->addWidget(view(m_tpotChart), 0, 1);
    grid->addWidget(view(m_timeChart), 1, 0, 1, 2);

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 4);
    layout->addLayout(bar);
    auto* texts = new QHBoxLayout;
    texts->setContentsMargins(6, 0, 6, 0);
    texts->addWidget(m_summary);
    texts->addWidget(m_capacityLabel, 1);
    layout->addLayout(texts);
    layout->addWidget(m_plots, 1);
    m_status->setContentsMargins(6, 0, 6, 0);
    layout->addWidget(m_status);
    updateSourceControls();
}

ServingView::~ServingView() = default;

QChart* ServingView::makeChart(const QString& title) {
    auto* c = new QChart;
    c->setAnimationOptions(QChart::NoAnimation);
    c->setBackgroundRoundness(0);
    c->setMargins(QMargins(4, 4, 8, 4));
    c->setTitle(title);
    c->legend()->setAlignment(Qt::AlignBottom);
    return c;
}

void ServingView::updateSourceControls() {
    const bool trace = m_byTrace->isChecked();
    m_rate->setEnabled(!trace && !m_running);
    m_trace->setEnabled(trace && !m_running);
    m_traceButton->setEnabled(trace && !m_running);
    // Capacity bisects the rate: it draws its own arrivals.
    m_capacity->setEnabled(!trace && !m_running);
}

double ServingView::rate() const {
    return m_rate->value();
}
void ServingView::setRate(double r) {
    m_rate->setValue(r);
}
qint64 ServingView::requests() const {
    return m_requests->value();
}
void ServingView::setRequests(qint64 n) {
    m_requests->setValue(int(std::clamp<qint64>(n, 1, m_requests->maximum())));
}
bool ServingView::useTrace() const {
    return m_byTrace->isChecked();
}
void ServingView::setUseTrace(bool on) {
    (on ? m_byTrace : m_byRate)->setChecked(true);
}
QString ServingView::tracePath() const {
    return m_trace->text();
}
void ServingView::setTracePath(const QString& path) {
    m_trace->setText(path);
    if (!path.isEmpty()) setUseTrace(true);
}

void ServingView::setRunning(bool running) {
    m_running = running;
    m_run->setEnabled(!running);
    m_stop->setEnabled(running);
    m_requests->setEnabled(!running);
    m_byRate->setEnabled(!running);
    m_byTrace->setEnabled(!running);
    m_progress->setVisible(running);
    if (running) {
        m_progress->setRange(0, 0);
        m_progress->setValue(0);
    }
    updateSourceControls();
}

void ServingView::setProgress(qint64 completed, qint64 total) {
    if (total <= 0) {
        m_progress->setRange(0, 0);
        return;
    }
    m_progress->setRange(0, 1000);
    m_progress->setValue(int(1000.0 * double(std::min(completed, total)) / double(total)));
}

void ServingView::setStatus(const QString& text) {
    m_status->setText(text);
    m_status->setToolTip(text);
}

QString ServingView::status() const {
    return m_status->text();
}

QString ServingView::summaryText() const {
    return m_summary->text();
}

QString ServingView::capacityText() const {
    return m_capacityLabel->text();
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
    if (auto* x = qobject_cast<QValueAxis*>(chart->axes(Qt::Horizontal).value(0))) x->setRange(0, top);
    if (sloMs > 0) {
        slo->replace({QPointF(sloMs, 0), QPointF(sloMs, 1)});
        slo->setName(tr("SLO %1 (%2)").arg(formatMs(sloMs), percentileName(percentile)));
        slo->setVisible(true);
    } else {
        slo->clear();
        slo->setVisible(false);
    }
    if (sloMs > 0 && percentile > 0) {
        level->replace({QPointF(0, percentile / 100.0), QPointF(top, percentile / 100.0)});
        level->setVisible(true);
    } else {
        level->clear();
        level->setVisible(false);
    }
    // The figures of the run's summary (the sorted values' nearest ranks): a session may keep fewer values
    // than the run had (app/gui/session_serving.h), never other figures.
    chart->setTitle(summary.count == 0 || sorted.empty()
                        ? what
                        : tr("%1: %2 requests, p50 %3, p99 %4")
                              .arg(what, formatInteger(double(summary.count)), formatMs(summary.p50),
                                   formatMs(summary.p99)));
}

void ServingView::setResult(std::shared_ptr<const SimResult> r, const Workload& w) {
    m_result = std::move(r);
    if (!m_result) return clear();
    m_resultWorkload = w;
    const SimResult& s = *m_result;
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

    const SloCheck c = checkSlo(s, w);
    const auto row = [](const QString& name, const Percentiles& p) {
        return QStringLiteral("%1 %2 %3 %4 %5\n")
            .arg(name, -8)
            .arg(p.mean, 9, 'f', 1)
            .arg(p.p50, 9, 'f', 1)
            .arg(p.p90, 9, 'f', 1)
            .arg(p.p99, 9, 'f', 1);
    };
    QString text = QStringLiteral("%1 %2 %3 %4 %5\n")
                       .arg(QString(), -8)
                       .arg(tr("mean"), 9)
                       .arg(QStringLiteral("p50"), 9)
                       .arg(QStringLiteral("p90"), 9)
                       .arg(QStringLiteral("p99"), 9);
    text += row(tr("TTFT ms"), s.ttftMs) + row(tr("TPOT ms"), s.tpotMs) + row(tr("E2E ms"), s.e2eMs);
    text += tr("%1 requests/s, %2 output").arg(s.requestsPerS, 0, 'f', 2).arg(formatRate(s.outputTokensPerS));
    if (w.ttftMs > 0 || w.tpotMs > 0)
        text += tr("\nSLOs at %1 %2; goodput %3 requests/s (%4%)")
                    .arg(percentileName(w.sloPercentile), c.met ? tr("met") : tr("missed"))
                    .arg(s.goodputRequestsPerS, 0, 'f', 2)
                    .arg(100.0 * s.sloAttainment, 0, 'f', 1);
    m_summary->setText(text);
    setStatus(tr("%1: %2 of %3 requests in %4 simulated, %5 steps%6")
                  .arg(qs(s.plan))
                  .arg(formatInteger(double(s.completed)), formatInteger(double(s.requests)),
                       formatDuration(s.durationS), formatInteger(double(s.steps)),
                       s.stopped ? tr(" (stopped)") : QString()));
}

void ServingView::setCapacity(const MaxRate& m, const Workload& w) {
    QString text;
    const QString slo = percentileName(w.sloPercentile);
    if (!m.ok)
        text = tr("Capacity: %1").arg(qs(m.error));
    else if (m.rate <= 0)
        text = tr("Capacity: not even one request at a time meets the %1 SLOs: %2").arg(slo, qs(m.why));
    else
        text =
            tr("Capacity: %1 requests/s under the %2 SLOs (%3 requests/s missed them: %4); %5 simulations%6")
                .arg(m.rate, 0, 'g', 4)
                .arg(slo)
                .arg(m.rateAbove, 0, 'g', 4)
                .arg(qs(m.why))
                .arg(m.simulations)
                .arg(m.stopped ? tr(" (stopped)") : QString());
    m_capacityLabel->setText(text);
    m_capacityAnswer = m;
    m_capacityAnswer->at = m_capacityAnswer->above = nullptr;
    m_capacityWorkload = w;
    if (m.at) {
        setResult(m.at, w);
        setRate(m.rate);
    }
}

void ServingView::clear() {
    m_result.reset();
    m_resultWorkload = {};
    m_capacityAnswer.reset();
    m_capacityWorkload = {};
    for (QLineSeries* s : {m_ttft, m_tpot, m_ttftSlo, m_tpotSlo, m_ttftLevel, m_tpotLevel, m_kv, m_queue})
        s->clear();
    m_ttftChart->setTitle(tr("TTFT"));
    m_tpotChart->setTitle(tr("TPOT"));
    m_timeChart->setTitle(tr("KV pool and queue over time"));
    m_summary->clear();
    m_capacityLabel->clear();
    setStatus(QString());
}

} // namespace sp::views
