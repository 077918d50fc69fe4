#include "views/pareto.h"

#include "views/format.h"
#include "views/messagebanner.h"

#include <QChart>
#include <QChartView>
#include <QCheckBox>
#include <QCursor>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHelpEvent>
#include <QLabel>
#include <QLegendMarker>
#include <QLineSeries>
#include <QLogValueAxis>
#include <QPushButton>
#include <QScatterSeries>
#include <QSpinBox>
#include <QToolButton>
#include <QToolTip>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

namespace sp::views {

namespace {
constexpr int kRedrawMs = 40;
const QString kMegatron = QStringLiteral("megatron");
} // namespace

QColor layoutFamilyColor(const QString& family) {
    // The common families get fixed colours (Tableau 10), so two sweeps read alike; others by hash.
    static const QHash<QString, QColor> fixed{
        {QStringLiteral("TP"), QColor(0x4e, 0x79, 0xa7)},
        {QStringLiteral("TP + EP"), QColor(0x76, 0xb7, 0xb2)},
        {QStringLiteral("attention-DP + EP"), QColor(0xf2, 0x8e, 0x2b)},
        {QStringLiteral("attention-DP + PP + EP"), QColor(0xe1, 0x57, 0x59)},
        {QStringLiteral("TP + PP"), QColor(0xb0, 0x7a, 0xa1)},
        {QStringLiteral("TP + PP + EP"), QColor(0x59, 0xa1, 0x4f)},
        {QStringLiteral("PP"), QColor(0xed, 0xc9, 0x48)},
        {QStringLiteral("DP"), QColor(0x9c, 0x75, 0x5f)},
    };
    if (auto it = fixed.find(family); it != fixed.end()) return *it;
    static const QColor spare[] = {QColor(0xff, 0x9d, 0xa7), QColor(0x8c, 0x56, 0x4b),
                                   QColor(0x17, 0xbe, 0xcf), QColor(0xbc, 0xbd, 0x22),
                                   QColor(0x1f, 0x77, 0xb4)};
    return spare[qHash(family) % (sizeof spare / sizeof spare[0])];
}

ParetoView::ParetoView(QWidget* parent) : QWidget(parent) {
    m_chart = new QChart;
    m_chart->setAnimationOptions(QChart::NoAnimation);
    m_chart->setBackgroundRoundness(0);
    m_chart->setMargins(QMargins(6, 6, 12, 6));
    m_chart->legend()->setAlignment(Qt::AlignBottom);
    m_view = new QChartView(m_chart, this);
    m_view->setRenderHint(QPainter::Antialiasing);
    // A chart keeps a readable height (axes, legend and points); where the tab is shorter (720 p) with a
    // banner above, the page scrolls rather than squeezing the plot (it once got about 40 px).
    m_view->setMinimumHeight(kMinPlotHeight);
    m_view->setToolTip(tr("Throughput per GPU against tokens/s per user: each point a plan searched under a "
                          "TPOT target and the TTFT SLO; click one to select its plan"));
    // A point's tooltip is answered here, before the chart view's own help text (which would replace it).
    m_view->viewport()->installEventFilter(this);

    m_x = new QLogValueAxis;
    m_x->setBase(10);
    m_x->setLabelFormat(QStringLiteral("%g"));
    m_x->setMinorTickCount(8);
    m_x->setTitleText(tr("Tokens/s per user (1000 / TPOT ms)"));
    m_y = new QLogValueAxis;
    m_y->setBase(10);
    m_y->setLabelFormat(QStringLiteral("%g"));
    m_y->setMinorTickCount(8);
    m_y->setTitleText(tr("Tokens/s per GPU"));
    m_chart->addAxis(m_x, Qt::AlignBottom);
    m_chart->addAxis(m_y, Qt::AlignLeft);

    m_megatronLine = new QLineSeries;
    QPen pen(QColor(0x4b, 0x55, 0x63));
    pen.setStyle(Qt::DashLine);
    pen.setWidthF(1.6);
    m_megatronLine->setPen(pen);
    m_megatronLine->setName(tr("Megatron recipe"));
    m_megatronDots = new QScatterSeries;
    m_megatronDots->setMarkerSize(6);
    m_megatronDots->setColor(QColor(0x4b, 0x55, 0x63));
    m_megatronDots->setBorderColor(QColor(0x4b, 0x55, 0x63));
    for (auto* s :
         {static_cast<QAbstractSeries*>(m_megatronLine), static_cast<QAbstractSeries*>(m_megatronDots)}) {
        m_chart->addSeries(s);
        s->attachAxis(m_x);
        s->attachAxis(m_y);
    }
    // One legend entry for the recipe: the line's.
    if (auto markers = m_chart->legend()->markers(m_megatronDots); !markers.isEmpty())
        markers.front()->setVisible(false);

    m_points = new QSpinBox;
    m_points->setRange(2, 64);
    m_points->setValue(16);
    m_points->setToolTip(tr("TPOT targets, both ends included; each is one search"));
    m_budget = new QSpinBox;
    m_budget->setRange(50, 1000000);
    m_budget->setSingleStep(500);
    m_budget->setValue(2000);
    m_budget->setToolTip(tr("Evaluations of each search"));
    m_start = new QPushButton(tr("Sweep"));
    m_start->setToolTip(
        tr("Search the frontier of the current scenario (sa, warm-started target to target)"));
    m_stop = new QPushButton(tr("Stop"));
    m_stop->setEnabled(false);
    m_export = new QPushButton(tr("Export..."));
    m_export->setToolTip(tr("The chart as PNG or SVG, or the points as CSV"));
    m_export->setEnabled(false);
    connect(m_export, &QPushButton::clicked, this, &ParetoView::exportRequested);
    m_status = new QLabel;
    m_status->setObjectName(QStringLiteral("paretoStatus"));
    m_status->setTextFormat(Qt::PlainText);
    // The status has a row of its own and wraps: read whole at any width, never widening the window (in the
    // toolbar it got what width was left, a clipped "1" at the window's narrowest).
    m_status->setWordWrap(true);
    m_status->setContentsMargins(6, 0, 6, 0);
    m_status->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    connect(m_start, &QPushButton::clicked, this,
            [this] { emit startRequested(m_points->value(), qint64(m_budget->value())); });
    connect(m_stop, &QPushButton::clicked, this, &ParetoView::stopRequested);

    buildComparison();

    m_staleBanner = new MessageBanner(this);
    m_staleBanner->setObjectName(QStringLiteral("paretoStaleBanner"));

    // Two rows of controls, so a laptop-wide window holds them: the sweep, then what is drawn beside it.
    auto* bar = new QHBoxLayout;
    bar->setContentsMargins(6, 4, 6, 0);
    bar->addWidget(new QLabel(tr("Points")));
    bar->addWidget(m_points);
    bar->addWidget(new QLabel(tr("Budget per search")));
    bar->addWidget(m_budget);
    bar->addWidget(m_start);
    bar->addWidget(m_stop);
    bar->addStretch(1);
    bar->addWidget(m_export);
    auto* bar2 = new QHBoxLayout;
    bar2->setContentsMargins(6, 2, 6, 0);
    bar2->addWidget(m_disaggBox);
    bar2->addWidget(m_overlayButton);
    bar2->addWidget(m_clearOverlay);
    bar2->addStretch(1);
    auto* lay = new QVBoxLayout(this);
    lay->setContentsMargins(0, 0, 0, 0);
    lay->setSpacing(0);
    lay->addLayout(bar);
    lay->addLayout(bar2);
    lay->addWidget(m_status);
    lay->addWidget(m_staleBanner);
    lay->addWidget(m_view, 1);

    m_flush.setObjectName(QStringLiteral("paretoFlush")); // named in bench_gui_stall's report
    m_flush.setSingleShot(true);
    m_flush.setInterval(kRedrawMs);
    connect(&m_flush, &QTimer::timeout, this, &ParetoView::redraw);
    redraw();
}

ParetoView::~ParetoView() = default;

QWidget* ParetoView::plotWidget() const {
    return m_view;
}

int ParetoView::points() const {
    return m_points->value();
}

int64_t ParetoView::budget() const {
    return m_budget->value();
}

QStringList ParetoView::families() const {
    return m_order;
}

int ParetoView::drawnPoints(const QString& family) const {
    if (family == kMegatron) return int(m_megatronDots->count());
    if (family == QLatin1String("disaggregated")) return int(m_disaggDots->count());
    if (family == QLatin1String("overlay")) return int(m_overlayDots->count());
    auto it = m_families.find(family);
    return it == m_families.end() ? 0 : int(it->series->count());
}

ParetoView::Family& ParetoView::family(const QString& name) {
    auto it = m_families.find(name);
    if (it != m_families.end()) return *it;
    Family f;
    f.series = new QScatterSeries;
    f.series->setName(name);
    f.series->setMarkerSize(11);
    f.series->setColor(layoutFamilyColor(name));
    f.series->setBorderColor(layoutFamilyColor(name).darker(140));
    m_chart->addSeries(f.series);
    f.series->attachAxis(m_x);
    f.series->attachAxis(m_y);
    // The point of this family nearest a position (in log space, as drawn).
    const auto nearest = [this, name](const QPointF& at) -> const ParetoPoint* {
        const Family& fam = m_families[name];
        const ParetoPoint* best = nullptr;
        double bestD = std::numeric_limits<double>::infinity();
        for (const auto& p : fam.points) {
            const double dx = std::log(p.userTokensPerS / at.x()), dy = std::log(p.throughputPerGpu / at.y());
            if (dx * dx + dy * dy < bestD) bestD = dx * dx + dy * dy, best = &p;
        }
        return best;
    };
    connect(f.series, &QScatterSeries::clicked, this, [this, nearest](const QPointF& at) {
        if (const ParetoPoint* p = nearest(at)) {
            selectDisaggregated(-1); // the point selected is this one now
            emit planClicked(*p);
        }
    });
    m_order << name;
    return *m_families.insert(name, f);
}

void ParetoView::clear() {
    for (const QString& n : m_order) {
        m_chart->removeSeries(m_families[n].series);
        delete m_families[n].series;
    }
    m_families.clear();
    m_order.clear();
    m_megatron.clear();
    const bool hadDisaggregated = !m_disagg.empty();
    m_selectedDisagg = -1;
    m_disagg.clear();
    m_result.reset();
    m_export->setEnabled(false);
    m_flush.stop();
    m_status->clear();
    setScenarioName(QString());
    setStale(QString());
    m_dirty = true;
    redraw();
    if (hadDisaggregated) emit disaggregatedSelected();
}

void ParetoView::addPoint(const ParetoPoint& point, bool megatron) {
    if (!(point.userTokensPerS > 0 && point.throughputPerGpu > 0)) return; // a log axis cannot show it
    if (megatron)
        m_megatron.push_back(point);
    else
        family(qs(point.family)).points.push_back(point);
    scheduleRedraw();
}

void ParetoView::setResult(const ParetoResult& result) {
    m_result = result;
    m_export->setEnabled(true);
    for (auto& f : m_families) f.points.clear();
    m_megatron.clear();
    for (const auto& p : result.frontier) addPoint(p, false);
    for (const auto& p : result.megatron) addPoint(p, true);
    // A family seen during the sweep whose points were all dominated leaves the legend.
    for (const QString& n : QStringList(m_order))
        if (m_families[n].points.empty()) {
            m_chart->removeSeries(m_families[n].series);
            delete m_families[n].series;
            m_families.remove(n);
            m_order.removeAll(n);
        }
    m_flush.stop();
    redraw();
}

void ParetoView::setRunning(bool running) {
    m_start->setEnabled(!running);
    m_stop->setEnabled(running);
    m_points->setEnabled(!running);
    m_budget->setEnabled(!running);
    m_disaggBox->setEnabled(!running);
}

void ParetoView::setStatus(const QString& text) {
    m_status->setText(text);
    m_status->setToolTip(text);
}

void ParetoView::setScenarioName(const QString& name) {
    m_scenarioName = name;
    m_chart->setTitle(name.isEmpty() ? QString() : tr("Pareto front: %1").arg(name.toHtmlEscaped()));
}

void ParetoView::setStale(const QString& why) {
    if (why.isEmpty()) {
        m_staleBanner->hide();
        return;
    }
    m_staleBanner->showMessage(MessageBanner::Kind::Warning,
                               tr("<b>The sweep is stale:</b> %1").arg(why.toHtmlEscaped()));
    QToolButton* rerun = m_staleBanner->addAction(tr("Rerun"), tr("Sweep the scenario as it is now"));
    // Also while a sweep of the old scenario runs: the new one supersedes it.
    connect(rerun, &QToolButton::clicked, this,
            [this] { emit startRequested(m_points->value(), qint64(m_budget->value())); });
}

bool ParetoView::isStale() const {
    return !m_staleBanner->isHidden();
}

std::string ParetoView::csv(const Model* model) const {
    if (!m_result) return {};
    ParetoCsvExtras x;
    x.scenario = m_scenarioName.toStdString();
    x.model = model;
    x.disaggregated = m_disagg;
    x.overlayScenario = m_overlayName.toStdString();
    x.overlay = m_overlay;
    return paretoCsv(*m_result, x);
}

QString ParetoView::pointToolTip(const QPoint& at) const {
    // Every drawn point within reach of its marker; the nearest wins, and of equally near ones the series
    // drawn on top (added last: the searched families over the comparisons over the recipe's).
    double bestD = std::numeric_limits<double>::infinity();
    std::function<QString()> best;
    const auto consider = [&](double x, double y, double markerSize, std::function<QString()> text) {
        if (!(x > 0 && y > 0)) return;
        const QPoint p = m_view->mapFromScene(m_chart->mapToPosition(QPointF(x, y)));
        const double d = std::hypot(double(p.x() - at.x()), double(p.y() - at.y()));
        if (d <= markerSize / 2 + 3 && d <= bestD) bestD = d, best = std::move(text);
    };
    const auto describe = [](const ParetoPoint& p, const QString& name) {
        return tr("%1\n%2 tok/s per GPU, %3 tok/s per user\nTPOT %4, TTFT %5, batch %6\n%7")
            .arg(name, formatCompact(p.throughputPerGpu), QString::number(p.userTokensPerS, 'f', 1),
                 formatMs(p.tpotMs), formatMs(p.ttftMs), QString::number(p.metrics.batch),
                 degreesText(p.plan.degrees, p.plan.degrees.ep > 1 || p.plan.degrees.etp > 1));
    };
    for (const auto& p : m_megatron)
        consider(p.userTokensPerS, p.throughputPerGpu, m_megatronDots->markerSize(),
                 [describe, q = &p] { return describe(*q, tr("Megatron recipe (%1)").arg(qs(q->family))); });
    if (m_disaggDots->isVisible())
        for (const auto& p : m_disagg)
            consider(p.userTokensPerS, p.throughputPerGpu, m_disaggDots->markerSize(),
                     [this, q = &p] { return disaggregatedToolTip(*q, disaggregatedGain(*q)); });
    if (m_overlayDots->isVisible())
        for (const auto& p : m_overlay)
            consider(p.userTokensPerS, p.throughputPerGpu, m_overlayDots->markerSize(),
                     [this, q = &p] { return overlayToolTip(*q); });
    for (const QString& n : m_order) {
        const Family& f = *m_families.constFind(n); // the stored one: the text is made from its points later
        for (const auto& p : f.points)
            consider(p.userTokensPerS, p.throughputPerGpu, f.series->markerSize(),
                     [describe, q = &p] { return describe(*q, qs(q->family)); });
    }
    return best ? best() : QString();
}

bool ParetoView::eventFilter(QObject* watched, QEvent* e) {
    if (watched == m_view->viewport() && e->type() == QEvent::ToolTip) {
        const auto* help = static_cast<QHelpEvent*>(e);
        const QString text = pointToolTip(help->pos());
        if (!text.isEmpty()) {
            // Shown until the mouse leaves the point's marker.
            QToolTip::showText(help->globalPos(), text, m_view->viewport(),
                               QRect(help->pos() - QPoint(8, 8), QSize(16, 16)));
            return true;
        }
    }
    return QWidget::eventFilter(watched, e);
}

void ParetoView::scheduleRedraw() {
    m_dirty = true;
    if (!m_flush.isActive()) m_flush.start();
}

void ParetoView::redraw() {
    double x0 = 1e300, x1 = 0, y0 = 1e300, y1 = 0;
    const auto extend = [&](const ParetoPoint& p) {
        x0 = std::min(x0, p.userTokensPerS), x1 = std::max(x1, p.userTokensPerS);
        y0 = std::min(y0, p.throughputPerGpu), y1 = std::max(y1, p.throughputPerGpu);
    };
    for (const QString& n : m_order) {
        Family& f = m_families[n];
        QList<QPointF> pts;
        for (const auto& p : f.points) pts << QPointF(p.userTokensPerS, p.throughputPerGpu), extend(p);
        f.series->replace(pts);
    }
    std::vector<ParetoPoint> mg = m_megatron;
    std::sort(mg.begin(), mg.end(),
              [](const ParetoPoint& a, const ParetoPoint& b) { return a.userTokensPerS < b.userTokensPerS; });
    QList<QPointF> line;
    for (const auto& p : mg) line << QPointF(p.userTokensPerS, p.throughputPerGpu), extend(p);
    m_megatronLine->replace(line);
    m_megatronDots->replace(line);
    drawComparison(x0, x1, y0, y1);
    if (x1 <= 0) x0 = 1, x1 = 100, y0 = 1, y1 = 10000; // nothing yet: a plausible empty frame
    m_x->setRange(x0 / 1.3, x1 * 1.3);
    m_y->setRange(y0 / 1.5, y1 * 1.5);
    m_dirty = false;
    emit redrawn();
}

} // namespace sp::views
