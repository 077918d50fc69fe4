#include "views/servingsweep.h"

#include "views/format.h"
#include "views/servinganswers.h"
#include "views/servingplot.h"

#include <QChartView>
#include <QDoubleSpinBox>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineSeries>
#include <QLocale>
#include <QLogValueAxis>
#include <QPushButton>
#include <QSpinBox>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

namespace sp::views {

using namespace plot;

ServingSweepView::ServingSweepView(QWidget* parent) : QWidget(parent) {
    const auto rateBox = [] {
        auto* b = new QDoubleSpinBox;
        b->setRange(0.001, 1e6);
        b->setDecimals(3);
        return b;
    };
    m_from = rateBox();
    m_from->setValue(1);
    m_from->setToolTip(tr("The lowest rate simulated, requests/s"));
    m_to = rateBox();
    m_to->setValue(8);
    m_to->setSuffix(tr(" requests/s"));
    m_to->setToolTip(tr("The highest rate simulated, requests/s"));
    m_steps = new QSpinBox;
    m_steps->setRange(1, 100);
    m_steps->setValue(8);
    m_steps->setSuffix(tr(" rates"));
    m_steps->setToolTip(tr("Rates evenly spaced from the lowest to the highest, both included"));
    const auto touched = [this] {
        if (!m_setting) m_touched = true;
    };
    connect(m_from, &QDoubleSpinBox::valueChanged, this, touched);
    connect(m_to, &QDoubleSpinBox::valueChanged, this, touched);
    connect(m_steps, &QSpinBox::valueChanged, this, touched);
    m_run = new QPushButton(tr("Sweep"));
    m_run->setToolTip(
        tr("Simulate the plan served at each rate (the Requests given, more where 20 request "
           "latencies at the rate take more), one after another; Stop (Esc) keeps the rates done"));
    connect(m_run, &QPushButton::clicked, this, [this] {
        // The range swept stays for the next sweep (another plan's, over a pinned one), not the suggestion.
        m_touched = true;
        emit sweepRequested();
    });

    auto* inputs = new QHBoxLayout;
    inputs->addWidget(new QLabel(tr("From")));
    inputs->addWidget(m_from);
    inputs->addWidget(new QLabel(tr("to")));
    inputs->addWidget(m_to);
    inputs->addWidget(m_steps);
    inputs->addWidget(m_run);
    inputs->addStretch(1);

    m_summary = new QLabel;
    m_summary->setTextFormat(Qt::PlainText);
    m_summary->setWordWrap(true);
    m_summary->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_summary->setVisible(false);
    m_compare = new ServingCompareTable;
    m_compare->setVisible(false);

    m_ttft = makePlot(tr("TTFT"), kTtftColor, true);
    m_tpot = makePlot(tr("TPOT"), kTpotColor, false);
    m_plots = new QWidget;
    auto* grid = new QGridLayout(m_plots);
    grid->setContentsMargins(0, 0, 0, 0);
    grid->setSpacing(2);
    int column = 0;
    for (QChart* c : {m_ttft.chart, m_tpot.chart}) {
        auto* v = new QChartView(c);
        v->setRenderHint(QPainter::Antialiasing);
        // As the Simulation page's charts: below this the axes' labels elide; the tab scrolls down instead.
        v->setMinimumHeight(260);
        v->setMinimumWidth(160);
        grid->addWidget(v, 0, column++);
    }

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(6, 4, 6, 0);
    layout->setSpacing(4);
    layout->addLayout(inputs);
    layout->addWidget(m_summary);
    layout->addWidget(m_compare);
    layout->addWidget(m_plots, 1);
    redraw();
}

double ServingSweepView::from() const {
    return m_from->value();
}
double ServingSweepView::to() const {
    return m_to->value();
}
int ServingSweepView::steps() const {
    return m_steps->value();
}

void ServingSweepView::setRange(double from, double to, int steps) {
    m_setting = true;
    m_from->setValue(from);
    m_to->setValue(to);
    m_steps->setValue(steps);
    m_setting = false;
    m_touched = true;
}

std::vector<double> ServingSweepView::rates() const {
    return sweepRates(from(), to(), steps());
}

void ServingSweepView::suggestTop(double top) {
    if (m_touched || !(top > 0)) return;
    // A round step, so the rates read as numbers a person would pick: 1.2, 2.4, ... rather than 1.0425.
    const int n = m_steps->value();
    const double step = niceTop(top / n);
    m_setting = true;
    m_from->setValue(step);
    m_to->setValue(step * n);
    m_setting = false;
}

void ServingSweepView::setRunning(bool running) {
    for (QWidget* w : std::initializer_list<QWidget*>{m_from, m_to, m_steps, m_run}) w->setEnabled(!running);
}

void ServingSweepView::setSweep(std::optional<ShownSweep> sweep) {
    m_sweep = std::move(sweep);
    redraw();
}

void ServingSweepView::setPinned(const std::optional<ShownSweep>& pinned) {
    m_pinned = pinned;
    redraw();
}

void ServingSweepView::clear() {
    m_sweep.reset();
    m_pinned.reset();
    redraw();
}

QString ServingSweepView::summaryText() const {
    return m_summary->text();
}

QString ServingSweepView::compareText() const {
    return m_compare->isVisibleTo(this) ? m_compare->text() : QString();
}

ServingSweepView::Plot ServingSweepView::makePlot(const QString& what, const QColor& color, bool log) {
    Plot p;
    p.chart = makeChart(what);
    p.x = valueAxis(tr("rate (requests/s)"));
    if (log) {
        auto* y = new QLogValueAxis;
        y->setBase(10);
        y->setLabelFormat(QStringLiteral("%g"));
        // In seconds: past the capacity TTFT reaches minutes, and "%g" of milliseconds would print 1e+06.
        y->setTitleText(tr("%1 (s, log)").arg(what));
        p.y = y;
    } else {
        p.y = valueAxis(tr("%1 (ms)").arg(what));
    }
    p.chart->addAxis(p.x, Qt::AlignBottom);
    p.chart->addAxis(p.y, Qt::AlignLeft);
    const auto add = [&](QLineSeries*& s, const QPen& pen, bool points) {
        s = new QLineSeries;
        s->setPen(pen);
        s->setPointsVisible(points);
        p.chart->addSeries(s);
        s->attachAxis(p.x);
        s->attachAxis(p.y);
    };
    // The pinned sweep first, so the current one is drawn over it.
    add(p.pinP50, pen(kPinnedColor, 1.2, Qt::DashLine), true);
    add(p.pinP99, pen(kPinnedColor, 2.4, Qt::DashLine), true);
    add(p.pinBest, pen(kPinnedColor, 1.2, Qt::DotLine), false);
    add(p.p50, pen(color, 1.2), true);
    add(p.p99, pen(color, 2.6), true);
    add(p.slo, pen(kSloColor, 1.6, Qt::DashLine), false);
    add(p.best, pen(kMetColor, 2, Qt::DotLine), false);
    return p;
}

void ServingSweepView::redraw() {
    QString current, pinned;
    if (m_pinned) {
        const auto names = m_sweep ? distinctNames(m_pinned->tag, m_sweep->tag, tr("this sweep"))
                                   : std::pair{tr("pinned"), QString()};
        pinned = names.first;
        current = names.second;
        m_compare->showSweeps(*m_pinned, m_sweep ? &*m_sweep : nullptr);
    }
    m_compare->setVisible(m_pinned.has_value());
    drawPlot(m_ttft, true, current, pinned);
    drawPlot(m_tpot, false, current, pinned);
    updateSummary();
}

void ServingSweepView::drawPlot(Plot& p, bool ttft, const QString& currentName, const QString& pinnedName) {
    const auto figure = [ttft](const SweepPoint& s) -> const Percentiles& {
        return ttft ? s.ttftMs : s.tpotMs;
    };
    const double unit = ttft ? 1e-3 : 1.0; // TTFT in seconds (see makePlot)
    double maxRate = 0, lo = std::numeric_limits<double>::max(), hi = 0;
    const auto curves = [&](const std::optional<ShownSweep>& s, QLineSeries* p50, QLineSeries* p99) {
        QList<QPointF> a, b;
        if (s)
            for (const SweepPoint& pt : s->sweep.points) {
                // A log axis draws no value <= 0 (a run with no TPOT: one-token outputs).
                for (auto [list, v] :
                     {std::pair{&a, unit * figure(pt).p50}, std::pair{&b, unit * figure(pt).p99}})
                    if (v > 0 || !ttft) {
                        list->append(QPointF(pt.rate, v));
                        lo = std::min(lo, v), hi = std::max(hi, v);
                    }
                maxRate = std::max(maxRate, pt.rate);
            }
        if (s)
            for (double r : s->rates) maxRate = std::max(maxRate, r);
        p50->replace(a);
        p99->replace(b);
    };
    curves(m_sweep, p.p50, p.p99);
    curves(m_pinned, p.pinP50, p.pinP99);
    const ShownSweep* shown = m_sweep ? &*m_sweep : m_pinned ? &*m_pinned : nullptr;
    const double slo = unit * (shown ? (ttft ? shown->workload.ttftMs : shown->workload.tpotMs) : 0);
    if (slo > 0) lo = std::min(lo, slo), hi = std::max(hi, slo);
    if (hi <= 0) lo = ttft ? 0.01 : 1, hi = ttft ? 1 : 10;
    setNiceRange(p.x, std::max(maxRate, 0.001) * 1.05);
    const double xTop = p.x->max();
    double yLo = 0, yHi = 0;
    if (auto* log = qobject_cast<QLogValueAxis*>(p.y)) {
        yLo = std::pow(10.0, std::floor(std::log10(std::max(lo, 1e-6) * 0.9)));
        yHi = std::pow(10.0, std::ceil(std::log10(hi * 1.1)));
        log->setRange(yLo, yHi);
    } else {
        auto* y = static_cast<QValueAxis*>(p.y);
        setNiceRange(y, hi * 1.08);
        yHi = y->max();
    }
    if (slo > 0) {
        p.slo->replace({QPointF(0, slo), QPointF(xTop, slo)});
        // Short: the legend shares the chart's width (its line is at the value).
        p.slo->setName(tr("%1 SLO").arg(sloPercentileName(shown->workload.sloPercentile)));
    } else {
        p.slo->clear();
    }
    p.slo->setVisible(slo > 0);
    const auto mark = [&](const std::optional<ShownSweep>& s, QLineSeries* line) {
        const int best = s ? highestMeeting(s->sweep.points) : -1;
        if (best < 0) {
            line->clear();
            line->setVisible(false);
            return 0.0;
        }
        const double r = s->sweep.points[size_t(best)].rate;
        line->replace({QPointF(r, yLo), QPointF(r, yHi)});
        line->setVisible(true);
        return r;
    };
    const double best = mark(m_sweep, p.best);
    p.best->setName(tr("in SLOs up to %1/s").arg(QLocale(QLocale::English).toString(best, 'g', 4)));
    mark(m_pinned, p.pinBest);
    // Without a pin, p50 and p99 each have a marker; with one, a sweep's pair is one entry by its name (p50
    // thin, p99 thick, as the title says), and the two names take the legend's width (the SLO line and the
    // mark read as they do without a pin; the table says the rates).
    const bool pin = m_pinned.has_value();
    p.p50->setName(tr("p50"));
    p.p99->setName(pin ? currentName : tr("p99"));
    p.pinP99->setName(pinnedName);
    for (QLineSeries* s : {p.p50, p.p99}) s->setVisible(m_sweep.has_value());
    for (QLineSeries* s : {p.pinP50, p.pinP99}) s->setVisible(pin);
    for (QLineSeries* s : {p.pinP50, p.pinBest}) hideMarker(p.chart, s);
    if (pin)
        for (QLineSeries* s : {p.p50, p.slo, p.best}) hideMarker(p.chart, s);
    const QString what = ttft ? tr("TTFT") : tr("TPOT");
    p.chart->setTitle(pin || m_sweep ? tr("%1 against the rate: p50 (thin), p99 (thick)").arg(what)
                                     : tr("%1 against the rate").arg(what));
}

void ServingSweepView::updateSummary() {
    if (!m_sweep) {
        m_summary->clear();
        m_summary->setToolTip(QString());
        m_summary->setVisible(false);
        return;
    }
    const ShownSweep& s = *m_sweep;
    const Workload& w = s.workload;
    const std::vector<SweepPoint>& pts = s.sweep.points;
    const QString slo = sloPercentileName(w.sloPercentile);
    // Two lines at 1280x720: the answer and what misses above it; the SLOs' values are the charts' dashed
    // lines, the runs' lengths in the tooltip.
    QString text = s.tag.gpus.isEmpty() ? s.tag.plan + QStringLiteral(": ")
                                        : tr("%1 on %2: ").arg(s.tag.plan, s.tag.gpus);
    const int best = highestMeeting(pts);
    if (pts.empty()) {
        text += tr("no rate done yet.");
    } else if (w.ttftMs <= 0 && w.tpotMs <= 0) {
        text += tr("the workload sets no SLOs.");
    } else if (best < 0) {
        text += tr("misses the %1 SLOs at every rate.").arg(slo);
    } else {
        const SweepPoint& b = pts[size_t(best)];
        text += tr("%1 SLOs met up to %2, %3 output tokens/s.")
                    .arg(slo, rateText(b.rate), formatInteger(b.outputTokensPerS));
    }
    // The first rate above the best that misses, and why.
    for (const SweepPoint& p : pts)
        if (!p.slo.met && (best < 0 || p.rate > pts[size_t(best)].rate)) {
            const bool ttft = p.slo.binding == "ttft";
            text += u' ' + tr("At %1: %2 %3 %4, over %5.")
                               .arg(rateText(p.rate), slo, ttft ? tr("TTFT") : tr("TPOT"),
                                    formatMs(ttft ? p.slo.ttftMs : p.slo.tpotMs),
                                    formatMs(ttft ? w.ttftMs : w.tpotMs));
            break;
        }
    if (s.sweep.stopped)
        text += u' ' + tr("Stopped after %1 of %2 rates.").arg(pts.size()).arg(s.rates.size());
    else if (pts.size() < s.rates.size())
        text += u' ' + tr("%1 of %2 rates done.").arg(pts.size()).arg(s.rates.size());
    m_summary->setText(text);
    m_summary->setToolTip(
        pts.empty()
            ? QString()
            : tr("%1 SLOs: %2. Each run simulates the Requests given, more where 20 request latencies at "
                 "its rate take more (a run starts empty): %3 at %4.")
                  .arg(slo, sloText(w), formatInteger(double(pts.back().requests)),
                       rateText(pts.back().rate)));
    m_summary->setVisible(true);
}

} // namespace sp::views
