#include "views/topology.h"

#include "views/meshgroups.h"

#include <QHelpEvent>
#include <QMouseEvent>
#include <QPaintEvent>
#include <QPainter>
#include <QToolTip>
#include <QWheelEvent>

#include <algorithm>
#include <cmath>

namespace sp::views {

namespace {
constexpr int kMinCell = 12; ///< the default smallest GPU cell (zoom 1)
} // namespace

TopologyCanvas::TopologyCanvas(QWidget* parent) : QWidget(parent) {
    setMouseTracking(true);
    setAttribute(Qt::WA_OpaquePaintEvent);
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Expanding);
}

void TopologyCanvas::setPlan(std::shared_ptr<const Scenario> scenario, PlanRecordPtr plan) {
    m_scenario = std::move(scenario);
    m_plan = std::move(plan);
    m_geometries.clear();
    if (m_scenario && m_hover >= m_scenario->gpus()) m_hover = -1;
    // Each GPU's stage once per plan, not per paint.
    m_stage.clear();
    if (m_scenario && m_plan) {
        m_stage.resize(size_t(std::max(0, m_scenario->cluster.gpus())));
        for (size_t gpu = 0; gpu < m_stage.size(); ++gpu)
            m_stage[gpu] = uint16_t(std::min(65535, meshCoords(m_plan->plan, int(gpu)).pp));
    }
    relayout();
    recompute();
}

void TopologyCanvas::setMinCell(int px) {
    px = std::clamp(px, kFitCell, 96);
    if (px == m_minCell && !m_fit) return;
    m_minCell = px;
    m_fit = false;
    relayout();
    update();
    emit zoomChanged();
}

void TopologyCanvas::fit() {
    m_minCell = kFitCell;
    m_fit = true;
    relayout();
    update();
    emit zoomChanged();
}

int TopologyCanvas::cell() const {
    return m_scenario ? geometry(rect()).cell : m_minCell;
}

void TopologyCanvas::relayout() {
    const int w = std::max(360, minimumWidthNeeded());
    if (w != minimumWidth()) setMinimumWidth(w);
    const int h = minimumHeightFor(std::max(width(), w));
    if (h != minimumHeight()) setMinimumHeight(h);
}

void TopologyCanvas::mousePressEvent(QMouseEvent* e) {
    if (e->button() == Qt::LeftButton) m_dragFrom = e->globalPosition().toPoint();
    QWidget::mousePressEvent(e);
}

void TopologyCanvas::mouseReleaseEvent(QMouseEvent* e) {
    m_dragFrom.reset();
    unsetCursor();
    QWidget::mouseReleaseEvent(e);
}

void TopologyCanvas::wheelEvent(QWheelEvent* e) {
    if (!(e->modifiers() & Qt::ControlModifier)) return QWidget::wheelEvent(e); // the scroll area scrolls
    const int steps = e->angleDelta().y() / 120;
    // From the cells as drawn (Fit or a wide view draws them larger than the zoom's smallest).
    if (steps != 0) setMinCell(int(std::lround(cell() * std::pow(1.25, steps))) + (steps > 0 ? 1 : 0));
    e->accept();
}

void TopologyCanvas::setPrefill(bool prefill) {
    m_prefill = prefill;
    recompute();
}

void TopologyCanvas::recompute() {
    std::fill(std::begin(m_share), std::end(m_share), 0.0);
    std::fill(std::begin(m_bytes), std::end(m_bytes), 0.0);
    if (m_plan) {
        const Breakdown& b = m_plan->breakdown(m_prefill);
        for (const CommCost& c : b.comms) {
            const int n = occurrences(b, c.layer);
            m_share[int(c.link)] += c.timeMs * n;
            m_bytes[int(c.link)] += c.bytes * n;
        }
        for (double& s : m_share) s = b.stageMs > 0 ? s / b.stageMs : 0;
    }
    updateGeometry();
    update();
}

double TopologyCanvas::linkShare(LinkClass l) const {
    return m_share[int(l)];
}
double TopologyCanvas::linkBytes(LinkClass l) const {
    return m_bytes[int(l)];
}

void TopologyCanvas::setHoveredGpu(int gpu) {
    if (!m_scenario || gpu >= m_scenario->gpus()) gpu = -1;
    if (gpu == m_hover) return;
    m_hover = gpu;
    update();
    emit hoveredGpuChanged(gpu);
}

std::vector<int> TopologyCanvas::outlined(Axis axis) const {
    if (m_hover < 0 || !m_plan) return {};
    const bool moe = m_scenario && m_scenario->model.moe.present();
    if ((axis == Axis::EP || axis == Axis::ETP || axis == Axis::EDP) && !moe) return {};
    return groupOf(m_plan->plan, m_hover, axis);
}

QString TopologyCanvas::gpuDescription(int gpu) const {
    if (!m_plan || !m_scenario || gpu < 0) return {};
    const Plan& p = m_plan->plan;
    const int gpn = m_scenario->cluster.gpusPerNode;
    const MeshCoords c = meshCoords(p, gpu);
    auto span = [&](Axis a) {
        const auto g = groupOf(p, gpu, a);
        int nodes = 0, last = -1;
        std::vector<int> ns;
        for (int x : g) ns.push_back(x / gpn);
        std::sort(ns.begin(), ns.end());
        for (int n : ns)
            if (n != last) ++nodes, last = n;
        return tr("%1 GPU%2 on %3 node%4")
            .arg(g.size())
            .arg(g.size() == 1 ? "" : "s")
            .arg(nodes)
            .arg(nodes == 1 ? "" : "s");
    };
    QString s = tr("GPU %1 (node %2, slot %3): stage %4, dp %5, tp %6")
                    .arg(gpu)
                    .arg(gpu / gpn)
                    .arg(gpu % gpn)
                    .arg(c.pp)
                    .arg(c.dp)
                    .arg(c.tp);
    if (m_scenario->model.moe.present()) s += tr(", ep %1, etp %2, edp %3").arg(c.ep).arg(c.etp).arg(c.edp);
    s += tr(". TP group: %1; DP group: %2").arg(span(Axis::TP), span(Axis::DP));
    if (m_scenario->model.moe.present()) s += tr("; EP group: %1").arg(span(Axis::EP));
    return s;
}

void TopologyCanvas::resizeEvent(QResizeEvent*) {
    relayout();
}

QSize TopologyCanvas::sizeHint() const {
    return {900, 560};
}
QSize TopologyCanvas::minimumSizeHint() const {
    return {360, 240};
}

void TopologyCanvas::mouseMoveEvent(QMouseEvent* e) {
    if (m_dragFrom && (e->buttons() & Qt::LeftButton)) {
        // Drag to pan (the view scrolls by the movement).
        const QPoint now = e->globalPosition().toPoint();
        emit panRequested(*m_dragFrom - now);
        m_dragFrom = now;
        setCursor(Qt::ClosedHandCursor);
        return;
    }
    setHoveredGpu(gpuAt(e->position().toPoint()));
}
void TopologyCanvas::leaveEvent(QEvent*) {
    setHoveredGpu(-1);
}

bool TopologyCanvas::event(QEvent* e) {
    if (e->type() == QEvent::ToolTip) {
        auto* he = static_cast<QHelpEvent*>(e);
        const int gpu = gpuAt(he->pos());
        if (gpu < 0 || !m_plan) {
            QToolTip::hideText();
            return true;
        }
        const Metrics& m = m_plan->metrics();
        QString tip = gpuDescription(gpu).replace(QStringLiteral(". "), QStringLiteral(".<br>"));
        tip += tr("<br>memory (peak stage): weights %1, KV cache %2, activations %3, reserve %4 of %5 GiB "
                  "usable")
                   .arg(m.weightsGiB, 0, 'f', 1)
                   .arg(m.kvCacheGiB, 0, 'f', 1)
                   .arg(m.activationsGiB, 0, 'f', 1)
                   .arg(m.reserveGiB, 0, 'f', 1)
                   .arg(m.capacityGiB, 0, 'f', 1);
        QToolTip::showText(he->globalPos(), tip, this);
        return true;
    }
    return QWidget::event(e);
}

void TopologyCanvas::paintEvent(QPaintEvent* e) {
    QPainter p(this);
    paintTo(p, rect(), e->rect()); // in its scroll area, only the part shown
}

} // namespace sp::views
