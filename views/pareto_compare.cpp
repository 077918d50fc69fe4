// The Pareto chart's comparison series (views/pareto.h): the disaggregated frontier of the sweep shown and
// the overlay of another scenario's frontier.
#include "views/pareto.h"

#include "views/format.h"

#include <QChart>
#include <QChartView>
#include <QCheckBox>
#include <QLegendMarker>
#include <QLineSeries>
#include <QLogValueAxis>
#include <QPushButton>
#include <QScatterSeries>

#include <algorithm>
#include <cmath>
#include <limits>

namespace sp::views {

namespace {
const QColor kDisagg(0x7b, 0x2d, 0x8e);  // purple: no layout family uses it (layoutFamilyColor)
const QColor kOverlay(0xc0, 0x1c, 0x8b); // magenta: apart from the families and the disaggregated purple
} // namespace

void ParetoView::buildComparison() {
    m_disaggBox = new QCheckBox(tr("Compare with disaggregated serving"));
    m_disaggBox->setToolTip(tr("After the sweep, search the best prefill/decode split at each of its TPOT "
                               "targets and draw that frontier beside it"));
    m_overlayButton = new QPushButton(tr("Overlay scenario..."));
    m_overlayButton->setToolTip(tr("Sweep another scenario file and draw its frontier over this one"));
    m_clearOverlay = new QPushButton(tr("Clear overlay"));
    m_clearOverlay->setEnabled(false);
    connect(m_overlayButton, &QPushButton::clicked, this, &ParetoView::overlayRequested);
    connect(m_clearOverlay, &QPushButton::clicked, this, [this] {
        clearOverlay();
        emit overlayCleared();
    });

    m_disaggDots = new QScatterSeries;
    m_disaggDots->setName(tr("disaggregated (best split)"));
    m_disaggDots->setMarkerShape(QScatterSeries::MarkerShapeTriangle);
    m_disaggDots->setMarkerSize(13);
    m_disaggDots->setColor(kDisagg);
    m_disaggDots->setBorderColor(kDisagg.darker(150));
    m_disaggDots->setSelectedColor(kDisagg.lighter(160));
    // A click selects the nearest split (in log space, as drawn): the Serving tab may serve it.
    connect(m_disaggDots, &QScatterSeries::clicked, this, [this](const QPointF& at) {
        int best = -1;
        double bestD = std::numeric_limits<double>::infinity();
        for (size_t i = 0; i < m_disagg.size(); ++i) {
            const auto& p = m_disagg[i];
            const double dx = std::log(p.userTokensPerS / at.x()), dy = std::log(p.throughputPerGpu / at.y());
            if (dx * dx + dy * dy < bestD) bestD = dx * dx + dy * dy, best = int(i);
        }
        selectDisaggregated(best);
    });
    m_overlayLine = new QLineSeries;
    QPen pen(kOverlay);
    pen.setWidthF(2);
    m_overlayLine->setPen(pen);
    m_overlayDots = new QScatterSeries;
    m_overlayDots->setMarkerShape(QScatterSeries::MarkerShapeRectangle);
    m_overlayDots->setMarkerSize(8);
    m_overlayDots->setColor(kOverlay);
    m_overlayDots->setBorderColor(kOverlay.darker(150));
    for (auto* s : {static_cast<QAbstractSeries*>(m_disaggDots), static_cast<QAbstractSeries*>(m_overlayLine),
                    static_cast<QAbstractSeries*>(m_overlayDots)}) {
        m_chart->addSeries(s);
        s->attachAxis(m_x);
        s->attachAxis(m_y);
    }
    // The legend lists a comparison only while it is drawn (the line's entry for the overlay).
    m_disaggDots->setVisible(false);
    m_overlayLine->setVisible(false);
    m_overlayDots->setVisible(false);
    if (auto markers = m_chart->legend()->markers(m_overlayDots); !markers.isEmpty())
        markers.front()->setVisible(false);
}

QString ParetoView::disaggregatedToolTip(const DisaggFrontierPoint& p, double gain) {
    const DisaggMetrics& m = p.split.metrics;
    return tr("disaggregated: %1 prefill + %2 decode nodes (%3-bound)\n%4 tok/s per GPU, %5 tok/s per "
              "user\nTPOT %6 (target %7), TTFT %8\n%9")
        .arg(p.split.plan.prefill.nodes)
        .arg(p.split.plan.decode.nodes)
        .arg(qs(m.bound), formatCompact(p.throughputPerGpu), QString::number(p.userTokensPerS, 'f', 1),
             formatMs(m.tpotMs), formatMs(p.targetTpotMs), formatMs(m.ttftMs),
             gain > 0 ? tr("%1x the aggregated frontier at that TPOT").arg(gain, 0, 'f', 2)
                      : tr("the aggregated frontier has no plan at that TPOT"));
}

QString ParetoView::overlayToolTip(const ParetoPoint& p) const {
    return tr("%1: %2\n%3 tok/s per GPU, %4 tok/s per user\nTPOT %5, TTFT %6, batch %7")
        .arg(m_overlayName, qs(p.family), formatCompact(p.throughputPerGpu),
             QString::number(p.userTokensPerS, 'f', 1), formatMs(p.tpotMs), formatMs(p.ttftMs),
             QString::number(p.metrics.batch));
}

bool ParetoView::disaggregated() const {
    return m_disaggBox->isChecked();
}

void ParetoView::setDisaggregatedChecked(bool on) {
    m_disaggBox->setChecked(on);
}

double ParetoView::disaggregatedGain(const DisaggFrontierPoint& p) const {
    if (!m_result) return 0;
    // The same reading as `shardplan pareto --disaggregated`: the best frontier plan under that target.
    const ParetoPoint* q = pointAtTpot(m_result->frontier, p.targetTpotMs * (1 + 1e-9));
    return q && q->throughputPerGpu > 0 ? p.throughputPerGpu / q->throughputPerGpu : 0.0;
}

void ParetoView::selectDisaggregated(int index) {
    if (index < 0 || size_t(index) >= m_disagg.size()) index = -1;
    if (index == m_selectedDisagg) return;
    m_selectedDisagg = index;
    m_disaggDots->deselectAllPoints();
    if (index >= 0 && index < m_disaggDots->count()) m_disaggDots->setPointSelected(index, true);
    emit disaggregatedSelected();
}

const DisaggFrontierPoint* ParetoView::selectedDisaggregated() const {
    return m_selectedDisagg >= 0 && size_t(m_selectedDisagg) < m_disagg.size()
               ? &m_disagg[size_t(m_selectedDisagg)]
               : nullptr;
}

void ParetoView::setDisaggregated(const std::vector<DisaggFrontierPoint>& points) {
    m_selectedDisagg = -1;
    m_disagg.clear();
    for (const auto& p : points)
        if (p.userTokensPerS > 0 && p.throughputPerGpu > 0) m_disagg.push_back(p); // a log axis shows these
    m_flush.stop();
    redraw();
    emit disaggregatedSelected(); // none selected, of other points
}

void ParetoView::setOverlay(const QString& name, const ParetoResult& result) {
    m_overlayName = name;
    m_overlay.clear();
    for (const auto& p : result.frontier)
        if (p.userTokensPerS > 0 && p.throughputPerGpu > 0) m_overlay.push_back(p);
    m_overlayLine->setName(name);
    m_clearOverlay->setEnabled(true);
    m_flush.stop();
    redraw();
}

void ParetoView::clearOverlay() {
    m_overlayName.clear();
    m_overlay.clear();
    m_clearOverlay->setEnabled(false);
    m_flush.stop();
    redraw();
}

void ParetoView::setOverlayRunning(bool running) {
    m_overlayButton->setEnabled(!running);
    m_clearOverlay->setEnabled(!running && !m_overlayName.isEmpty());
}

void ParetoView::drawComparison(double& x0, double& x1, double& y0, double& y1) {
    const auto extend = [&](double x, double y) {
        x0 = std::min(x0, x), x1 = std::max(x1, x), y0 = std::min(y0, y), y1 = std::max(y1, y);
    };
    QList<QPointF> dis, ov;
    for (const auto& p : m_disagg)
        dis << QPointF(p.userTokensPerS, p.throughputPerGpu), extend(p.userTokensPerS, p.throughputPerGpu);
    for (const auto& p : m_overlay)
        ov << QPointF(p.userTokensPerS, p.throughputPerGpu), extend(p.userTokensPerS, p.throughputPerGpu);
    m_disaggDots->replace(dis);
    m_disaggDots->deselectAllPoints();
    if (m_selectedDisagg >= 0 && m_selectedDisagg < int(dis.size()))
        m_disaggDots->setPointSelected(m_selectedDisagg, true);
    m_disaggDots->setVisible(!dis.isEmpty());
    m_overlayLine->replace(ov);
    m_overlayDots->replace(ov);
    m_overlayLine->setVisible(!ov.isEmpty());
    m_overlayDots->setVisible(!ov.isEmpty());
    if (auto markers = m_chart->legend()->markers(m_overlayDots); !markers.isEmpty())
        markers.front()->setVisible(false);
}

} // namespace sp::views
