#include "views/searchchart.h"

#include "views/format.h"

#include <QChart>
#include <QChartView>
#include <QCheckBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineSeries>
#include <QLogValueAxis>
#include <QVBoxLayout>
#include <QValueAxis>

#include <algorithm>
#include <cmath>

namespace sp::views {

namespace {
constexpr int kRedrawMs = 40;

QLineSeries* dashedLine(const QString& name, const QColor& color) {
    auto* s = new QLineSeries;
    s->setName(name);
    QPen pen(color);
    pen.setStyle(Qt::DashLine);
    pen.setWidthF(1.6);
    s->setPen(pen);
    return s;
}
} // namespace

SearchChart::SearchChart(QWidget* parent) : QWidget(parent) {
    m_chart = new QChart;
    m_chart->setAnimationOptions(QChart::NoAnimation);
    m_chart->setBackgroundRoundness(0);
    m_chart->setMargins(QMargins(6, 6, 12, 6));
    m_chart->legend()->hide(); // m_legend instead: a chart's legend elides what does not fit its row
    m_plot = new QWidget(this);
    m_plot->setAutoFillBackground(true); // an exported image is the chart's white, not transparent
    m_plot->setBackgroundRole(QPalette::Base);
    m_view = new QChartView(m_chart, m_plot);
    m_view->setRenderHint(QPainter::Antialiasing);
    m_view->setToolTip(tr("Best feasible throughput found against evaluations spent, one line per searcher"));

    m_y = new QValueAxis;
    m_y->setLabelFormat(QStringLiteral("%.0f"));
    m_y->setTitleText(tr("Best throughput (tok/s)"));
    m_y->setMin(0);
    m_chart->addAxis(m_y, Qt::AlignLeft);

    m_megatronLine = dashedLine(tr("Megatron"), QColor(0x4b, 0x55, 0x63));
    m_rooflineLine = dashedLine(tr("Roofline bound"), QColor(0xdc, 0x26, 0x26));
    m_chart->addSeries(m_megatronLine);
    m_chart->addSeries(m_rooflineLine);
    m_megatronLine->attachAxis(m_y);
    m_rooflineLine->attachAxis(m_y);
    rebuildXAxis();

    m_logBox = new QCheckBox(tr("&Log x"), this);
    m_logBox->setChecked(true);
    m_logBox->setToolTip(tr("Logarithmic evaluation axis (Ctrl+L): early progress becomes visible"));
    connect(m_logBox, &QCheckBox::toggled, this, &SearchChart::setLogX);
    m_rooflineBox = new QCheckBox(tr("Roofline to scale"), this);
    m_rooflineBox->setToolTip(
        tr("Stretch the throughput axis to the roofline bound (often far above any real "
           "plan: it ignores communication and assumes peak efficiency)"));
    connect(m_rooflineBox, &QCheckBox::toggled, this, [this] {
        m_rangeDirty = true;
        redraw();
    });
    m_summary = new QLabel(this);
    m_summary->setTextFormat(Qt::RichText);
    // Wrapped: with many searchers tied for the best it names them all, and a label on one line would widen
    // the window to its text (the window's minimum width grew by 230 px after a run of every searcher).
    m_summary->setWordWrap(true);
    // The legend beside the plot, one entry a line: under it, wrapped, ten searchers took three lines more
    // than a laptop's tab has; in the chart, on one row, their names were elided.
    m_legend = new QLabel(m_plot);
    m_legend->setTextFormat(Qt::RichText);
    m_legend->setContentsMargins(4, 14, 10, 6);
    auto* plotLay = new QHBoxLayout(m_plot);
    plotLay->setContentsMargins(0, 0, 0, 0);
    plotLay->setSpacing(0);
    plotLay->addWidget(m_view, 1);
    plotLay->addWidget(m_legend, 0, Qt::AlignTop);

    auto* bar = new QHBoxLayout;
    bar->setContentsMargins(6, 4, 6, 0);
    bar->addWidget(m_summary, 1);
    bar->addWidget(m_rooflineBox);
    bar->addWidget(m_logBox);
    auto* lay = new QVBoxLayout(this);
    lay->setContentsMargins(0, 0, 0, 0);
    lay->setSpacing(0);
    lay->addLayout(bar);
    lay->addWidget(m_plot, 1);

    m_flush.setObjectName(QStringLiteral("searchchartFlush")); // named in bench_gui_stall's report
    m_flush.setSingleShot(true);
    m_flush.setInterval(kRedrawMs);
    connect(&m_flush, &QTimer::timeout, this, &SearchChart::redraw);
    updateAxes();
}

SearchChart::~SearchChart() = default;

QWidget* SearchChart::plotWidget() const {
    return m_plot;
}

void SearchChart::updateLegend() {
    // "━━ random  45.2k tok/s", a note in brackets on a line of its own: "╍╍ Roofline bound 3.71M tok/s",
    // "(above scale)" (the legend stays narrow; the plot keeps the width).
    auto entry = [](const QLineSeries* s) {
        const bool dashed = s->pen().style() != Qt::SolidLine;
        QString name = s->name().toHtmlEscaped().replace(QLatin1Char(' '), QStringLiteral("&nbsp;"));
        name.replace(QStringLiteral("&nbsp;("), QStringLiteral("<br>&nbsp;&nbsp;&nbsp;&nbsp;&nbsp;&nbsp;("));
        return QStringLiteral("<span style=\"color:%1\"><b>%2</b></span>&nbsp;%3")
            .arg(s->pen().color().name(),
                 dashed ? QStringLiteral("\u254d\u254d") : QStringLiteral("\u2501\u2501"), name);
    };
    QStringList entries;
    for (const QLineSeries* s : {m_megatronLine, m_rooflineLine})
        if (s->isVisible()) entries << entry(s);
    for (const QString& n : m_order) entries << entry(m_lines[n].series);
    const QString text = entries.join(QStringLiteral("<br>"));
    if (m_legend->text() != text) m_legend->setText(text);
}

void SearchChart::clear() {
    for (const QString& n : m_order) {
        Line& l = m_lines[n];
        m_chart->removeSeries(l.series);
        delete l.series;
    }
    m_lines.clear();
    m_order.clear();
    m_flush.stop();
    redraw();
}

void SearchChart::setReference(double megatron, double roofline) {
    m_megatron = megatron;
    m_roofline = roofline;
    m_rangeDirty = true;
    // An infeasible Megatron plan keeps its legend entry, with no line, so the missing line is explained.
    m_megatronLine->setName(megatron > 0 ? tr("Megatron %1").arg(formatRate(megatron))
                                         : tr("Megatron plan infeasible (no line)"));
    m_rooflineLine->setName(tr("Roofline bound %1").arg(formatRate(roofline)));
    m_rooflineLine->setVisible(roofline > 0);
    m_megatronLine->setVisible(true);
    if (megatron <= 0) m_megatronLine->clear();
    const QSignalBlocker block(m_rooflineBox);
    m_rooflineBox->setChecked(roofline > 0 && megatron > 0 && roofline <= 3 * megatron);
    scheduleRedraw();
}

void SearchChart::setBudgetHint(double evaluations) {
    m_budget = std::max(10.0, evaluations);
    scheduleRedraw();
}

SearchChart::Line& SearchChart::line(const QString& searcher) {
    auto it = m_lines.find(searcher);
    if (it != m_lines.end()) return *it;
    Line l;
    l.series = new QLineSeries;
    l.series->setName(searcher);
    QPen pen(searcherColor(searcher));
    pen.setWidthF(2.2);
    l.series->setPen(pen);
    m_chart->addSeries(l.series);
    l.series->attachAxis(m_x);
    l.series->attachAxis(m_y);
    m_order << searcher;
    return *m_lines.insert(searcher, l);
}

void SearchChart::addPoints(const QString& searcher, const std::vector<std::pair<int64_t, double>>& points) {
    Line& l = line(searcher);
    for (const auto& [e, best] : points) {
        l.improvements.append(QPointF(double(e), best));
        l.lastX = std::max(l.lastX, e);
    }
    l.dirty = true;
    scheduleRedraw();
}

void SearchChart::setProgress(const QString& searcher, int64_t evaluations) {
    Line& l = line(searcher);
    if (evaluations == l.lastX) return;
    l.lastX = std::max(l.lastX, evaluations);
    l.dirty = true;
    scheduleRedraw();
}

void SearchChart::setCurve(const QString& searcher, const QVector<QPointF>& improvements,
                           int64_t evaluations) {
    Line& l = line(searcher);
    l.improvements = improvements;
    l.finished = true;
    l.lastX = evaluations;
    for (const QPointF& p : improvements) l.lastX = std::max(l.lastX, int64_t(p.x()));
    l.dirty = true;
    scheduleRedraw();
}

QStringList SearchChart::searchers() const {
    return m_order;
}
QVector<QPointF> SearchChart::curve(const QString& searcher) const {
    return m_lines.value(searcher).improvements;
}
int64_t SearchChart::evaluations(const QString& searcher) const {
    return m_lines.value(searcher).lastX;
}
QString SearchChart::legendText(const QString& series) const {
    if (series == QLatin1String("megatron"))
        return m_megatronLine->isVisible() ? m_megatronLine->name() : QString();
    if (series == QLatin1String("roofline"))
        return m_rooflineLine->isVisible() ? m_rooflineLine->name() : QString();
    auto it = m_lines.find(series);
    return it == m_lines.end() ? QString() : it->series->name();
}
bool SearchChart::rooflineAboveAxis() const {
    return m_roofline / m_yScale > m_y->max();
}
int SearchChart::drawnPoints(const QString& searcher) const {
    auto it = m_lines.find(searcher);
    return it == m_lines.end() ? 0 : int(it->series->count());
}

void SearchChart::scheduleRedraw() {
    if (!m_flush.isActive()) m_flush.start();
}

void SearchChart::setLogX(bool on) {
    if (on == m_logX) return;
    m_logX = on;
    {
        const QSignalBlocker b(m_logBox);
        m_logBox->setChecked(on);
    }
    rebuildXAxis();
    for (Line& l : m_lines) l.dirty = true;
    m_rangeDirty = true;
    redraw();
    emit logXChanged(on);
}

void SearchChart::rebuildXAxis() {
    if (m_x) {
        for (QAbstractSeries* s : m_chart->series()) s->detachAxis(m_x);
        m_chart->removeAxis(m_x);
        delete m_x;
    }
    if (m_logX) {
        auto* a = new QLogValueAxis;
        a->setBase(10);
        a->setLabelFormat(QStringLiteral("%g"));
        a->setMinorTickCount(8);
        m_x = a;
    } else {
        auto* a = new QValueAxis;
        a->setLabelFormat(QStringLiteral("%.0f"));
        m_x = a;
    }
    m_x->setTitleText(tr("Evaluations"));
    m_chart->addAxis(m_x, Qt::AlignBottom);
    for (QAbstractSeries* s : m_chart->series()) s->attachAxis(m_x);
}

void SearchChart::updateAxes() {
    double xMax = m_budget;
    double yMax = m_megatron;
    for (const Line& l : m_lines) {
        xMax = std::max(xMax, double(l.lastX));
        for (const QPointF& p : l.improvements) yMax = std::max(yMax, p.y());
    }
    if (m_rooflineBox->isChecked()) yMax = std::max(yMax, m_roofline);
    if (yMax <= 0) yMax = std::max(1.0, m_roofline);
    // Units that keep the tick labels short.
    m_yScale = yMax >= 2e6 ? 1e6 : yMax >= 2e3 ? 1e3 : 1;
    const QString unit = m_yScale == 1e6   ? QStringLiteral("M tok/s")
                         : m_yScale == 1e3 ? QStringLiteral("k tok/s")
                                           : QStringLiteral("tok/s");
    // Axis changes relayout the whole chart: apply them only when something moved.
    const QString title = tr("Best throughput (%1)").arg(unit);
    if (m_y->titleText() != title) m_y->setTitleText(title);
    const double yMin = m_megatron > 0 ? 0.6 * m_megatron : 0.0;
    const double xMin = m_logX ? 1.0 : 0.0;
    xMax = std::max(xMax, xMin + 1);
    // Rounded up to a quarter of the magnitude, so small improvements do not move the axis.
    const double top = yMax * 1.08 / m_yScale;
    const double quarter = std::pow(10.0, std::floor(std::log10(top))) / 4;
    const QRectF want(QPointF(xMin, yMin / m_yScale), QPointF(xMax, std::ceil(top / quarter) * quarter));
    if (want == m_lastRange && !m_rangeDirty) return;
    m_lastRange = want;
    m_rangeDirty = false;
    // The interesting band is around and above the Megatron plan: start the axis below it rather than at zero
    // (plans far below Megatron are clipped; the legend and the table keep their values).
    m_y->setRange(want.top(), want.bottom());
    m_y->applyNiceNumbers();
    if (m_y->min() < 0) m_y->setMin(0);
    const QString fmt = m_y->max() < 10 ? QStringLiteral("%.1f") : QStringLiteral("%.0f");
    if (m_y->labelFormat() != fmt) m_y->setLabelFormat(fmt);
    if (m_logX) {
        static_cast<QLogValueAxis*>(m_x)->setRange(1, xMax * 1.05);
    } else {
        auto* a = static_cast<QValueAxis*>(m_x);
        a->setRange(0, xMax);
        a->applyNiceNumbers();
    }
    const double x0 = xMin,
                 x1 = m_logX ? static_cast<QLogValueAxis*>(m_x)->max() : static_cast<QValueAxis*>(m_x)->max();
    if (m_megatron > 0)
        m_megatronLine->replace({QPointF(x0, m_megatron / m_yScale), QPointF(x1, m_megatron / m_yScale)});
    m_rooflineLine->replace({QPointF(x0, m_roofline / m_yScale), QPointF(x1, m_roofline / m_yScale)});
    // "above scale" only when the line is above the axis, whatever the checkbox says.
    const QString rname = m_roofline <= 0 || m_roofline / m_yScale <= m_y->max()
                              ? tr("Roofline bound %1").arg(formatRate(m_roofline))
                              : tr("Roofline bound %1 (above scale)").arg(formatRate(m_roofline));
    if (m_rooflineLine->name() != rname) m_rooflineLine->setName(rname);
}

void SearchChart::redraw() {
    const double oldScale = m_yScale;
    updateAxes();
    const bool rescaled = oldScale != m_yScale;
    QStringList bestNames;
    double best = 0;
    for (const QString& n : m_order) {
        const Line& l = m_lines[n];
        if (l.improvements.isEmpty()) continue;
        const double b = l.improvements.last().y();
        if (b > best * (1 + 1e-9))
            best = b, bestNames = QStringList{n};
        else if (b >= best * (1 - 1e-9))
            bestNames << n;
    }
    const QString bestName = bestNames.join(QStringLiteral(", "));
    for (const QString& n : m_order) {
        Line& l = m_lines[n];
        if (!l.dirty && !rescaled) continue;
        l.dirty = false;
        // A step line: flat until each improvement, then up; flat again to the current evaluation count.
        QList<QPointF> pts;
        pts.reserve(l.improvements.size() * 2 + 1);
        double y = 0;
        for (const QPointF& p : l.improvements) {
            const double x = std::max(1.0, p.x());
            if (!pts.isEmpty()) pts.append(QPointF(x, y));
            y = p.y() / m_yScale;
            pts.append(QPointF(x, y));
        }
        if (!pts.isEmpty() && double(l.lastX) > pts.last().x()) pts.append(QPointF(double(l.lastX), y));
        l.series->replace(pts);
        // Legend text changes relayout the chart: only when the best changed.
        const QString name =
            l.improvements.isEmpty()
                ? (l.finished ? tr("%1 (no feasible plan)").arg(n) : tr("%1 (no feasible plan yet)").arg(n))
                : QStringLiteral("%1  %2").arg(n, formatRate(l.improvements.last().y()));
        if (l.series->name() != name) l.series->setName(name);
    }
    if (best > 0) {
        QString s = tr("<b>Best %1</b> (%2)").arg(formatRate(best), bestName.toHtmlEscaped());
        if (m_megatron > 0) s += tr(" &middot; %1x Megatron").arg(best / m_megatron, 0, 'f', 3);
        if (m_roofline > 0)
            s += tr(" &middot; %1% of the roofline bound").arg(100 * best / m_roofline, 0, 'f', 1);
        if (m_summary->text() != s) m_summary->setText(s);
    } else if (m_megatron > 0) {
        m_summary->setText(tr("Megatron plan: %1 &middot; roofline bound %2")
                               .arg(formatRate(m_megatron), formatRate(m_roofline)));
    } else {
        m_summary->setText(tr("Roofline bound %1").arg(formatRate(m_roofline)));
    }
    updateLegend();
    ++m_redraws;
    emit redrawn();
}

} // namespace sp::views
