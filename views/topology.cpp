#include "views/topology.h"

#include "views/format.h"
#include "views/meshgroups.h"
#include "views/topologysummary.h"

#include <QHBoxLayout>
#include <QHelpEvent>
#include <QLabel>
#include <QMouseEvent>
#include <QPainter>
#include <QPainterPath>
#include <QScrollArea>
#include <QScrollBar>
#include <QToolButton>
#include <QToolTip>
#include <QVBoxLayout>
#include <QWheelEvent>

#include <algorithm>
#include <cmath>

namespace sp::views {

namespace {
constexpr int kMinCell = 12; ///< the default smallest GPU cell (zoom 1)
const QColor kInk(0x1f, 0x29, 0x37), kMuted(0x6b, 0x72, 0x80), kNodeFill(0xf8, 0xfa, 0xfc),
    kNodeBorder(0xcb, 0xd5, 0xe1);
const QColor kTpPen(0x1e, 0x3a, 0x8a), kDpPen(0xea, 0x58, 0x0c), kEpPen(0xc0, 0x26, 0xd3);

/// Link shading: a light tint at no load to the link's full colour at half the step spent on it (or more).
QColor shade(LinkClass l, double share) {
    const double t = std::clamp(std::sqrt(std::max(0.0, share) / 0.5), 0.0, 1.0);
    const QColor a(0xe5, 0xe7, 0xeb), b = linkColor(l);
    auto mix = [t](int x, int y) { return int(std::lround(x + (y - x) * t)); };
    return QColor(mix(a.red(), b.red()), mix(a.green(), b.green()), mix(a.blue(), b.blue()));
}

QColor blendWhite(const QColor& c, double f) {
    auto mix = [f](int x) { return int(std::lround(x + (255 - x) * f)); };
    return QColor(mix(c.red()), mix(c.green()), mix(c.blue()));
}

} // namespace

QRect TopologyCanvas::Geometry::nodeRect(int node) const {
    const int c = node % nodeCols, r = node / nodeCols;
    const int totalW = nodeCols * nodeW + (nodeCols - 1) * nodeGapX;
    const int x0 = nodes.left() + std::max(0, (nodes.width() - totalW) / 2);
    return QRect(x0 + c * (nodeW + nodeGapX), nodes.top() + r * (nodeH + nodeGapY), nodeW, nodeH);
}

TopologyCanvas::TopologyCanvas(QWidget* parent) : QWidget(parent) {
    setMouseTracking(true);
    setAttribute(Qt::WA_OpaquePaintEvent);
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Expanding);
}

void TopologyCanvas::setPlan(std::shared_ptr<const Scenario> scenario, PlanRecordPtr plan) {
    m_scenario = std::move(scenario);
    m_plan = std::move(plan);
    if (m_scenario && m_hover >= m_scenario->gpus()) m_hover = -1;
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

int TopologyCanvas::minimumWidthNeeded() const {
    if (!m_scenario) return 0;
    Geometry g;
    g.gpuCols = std::min(std::max(1, m_scenario->cluster.gpusPerNode), 8);
    g.gpuRows = (std::max(1, m_scenario->cluster.gpusPerNode) + g.gpuCols - 1) / g.gpuCols;
    g.setCell(m_minCell, QFontMetrics(font()).height(), m_scenario->cluster.nodes > 1);
    return g.nodeW + 34; // the margins geometry() keeps around the nodes
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

void TopologyCanvas::Geometry::setCell(int s, int lineH, bool multi) {
    // Large cells get labels and roomy padding; small ones (a large cluster fitted) thin frames, so that
    // a thousand GPUs fit a laptop's tab.
    const bool roomy = s >= 12;
    cell = s;
    labelH = s >= 14 ? lineH + 4 : roomy ? 6 : 2;
    pad = roomy ? 8 : std::max(2, s / 2);
    gap = roomy ? 4 : std::max(1, s / 3);
    barGap = roomy ? 3 : 1;
    barH = roomy ? std::max(4, s / 6) : std::max(1, s / 3);
    railH = roomy ? 7 : std::max(2, s / 2);
    nodeGapX = roomy ? 16 : 6;
    nodeGapY = !multi ? 16 : roomy ? 26 : 8;
    nodeW = 2 * pad + gpuCols * s + (gpuCols - 1) * gap;
    nodeH =
        labelH + pad + gpuRows * (s + barGap + barH) + (gpuRows - 1) * gap + railH + pad + (roomy ? 4 : 1);
}

int TopologyCanvas::visibleHeight() const {
    // In the view the canvas scrolls: what is visible is its scroll area's viewport.
    return parentWidget() ? parentWidget()->height() : height();
}

TopologyCanvas::Geometry TopologyCanvas::geometry(const QRect& r) const {
    Geometry g;
    const QFontMetrics fm(font());
    const int lh = fm.height();
    g.title = QRect(r.left() + 10, r.top() + 6, r.width() - 20, lh + 6);
    int legendH = 2 * (lh + 8) + 6;
    g.legend = QRect(r.left() + 10, r.bottom() - legendH, r.width() - 20, legendH);
    g.nodes =
        QRect(r.left() + 22, g.title.bottom() + 10, r.width() - 34, g.legend.top() - g.title.bottom() - 20);
    if (!m_scenario) return g;
    // Memory and link bars under the nodes, then the legend. Always drawn: where the canvas is too short
    // for them the canvas grows (minimumHeightFor) and scrolls.
    const int summaryH = summaryHeight();
    const int top = g.title.bottom() + 10, below = 28 + summaryH + 12 + legendH + 6;
    const int N = std::max(1, m_scenario->cluster.nodes), G = std::max(1, m_scenario->cluster.gpusPerNode);
    g.gpuCols = std::min(G, 8);
    g.gpuRows = (G + g.gpuCols - 1) / g.gpuCols;
    const bool multi = N > 1;
    // The largest cell (at least the zoom's smallest) at which the nodes fit the height, in as many columns
    // as fit the width.
    auto columns = [&](const Geometry& t) {
        return std::clamp((g.nodes.width() + t.nodeGapX) / (t.nodeW + t.nodeGapX), 1, N);
    };
    auto gridHeight = [&](const Geometry& t) {
        const int rows = (N + columns(t) - 1) / columns(t);
        return rows * t.nodeH + (rows - 1) * t.nodeGapY;
    };
    auto largestFitting = [&](int height) {
        for (int s = 96; s >= m_minCell; --s) {
            Geometry t = g;
            t.setCell(s, lh, multi);
            if ((t.nodeW <= g.nodes.width() || s == m_minCell) && gridHeight(t) <= height) return s;
        }
        return -1;
    };
    int cell = -1;
    if (m_fit) {
        // Fit: the whole cluster in the visible part, with the summary and the legend if they fit too
        // (else they follow below it).
        const int visible = r.size() == size() || r.height() <= 1 ? visibleHeight() : r.height();
        cell = largestFitting(r.top() + visible - 1 - top - below);
        if (cell < 0) cell = largestFitting(r.top() + visible - 1 - top - 6);
    } else {
        cell = largestFitting(r.bottom() - top - below);
    }
    // Too many for the height even at the smallest cell: that cell, and the canvas grows (minimumHeightFor)
    // and scrolls.
    g.setCell(cell < 0 ? m_minCell : cell, lh, multi);
    g.nodeCols = columns(g);
    g.nodeRows = (N + g.nodeCols - 1) / g.nodeCols;
    const int gridH = g.nodeRows * g.nodeH + (g.nodeRows - 1) * g.nodeGapY;
    // Nodes, summary and legend as one block, a little above the middle of the canvas.
    legendH = g.legend.height();
    const int block = gridH + 28 + summaryH + 12 + legendH;
    const int spare = std::max(0, r.bottom() - 6 - top - block);
    g.nodes.moveTop(top + spare / 3);
    g.nodes.setHeight(gridH);
    g.summary = QRect(g.nodes.left(), g.nodes.top() + gridH + 28, g.nodes.width(), summaryH);
    g.legend.moveTop(g.summary.bottom() + 12);
    return g;
}

int TopologyCanvas::summaryHeight() const {
    return TopologySummary::height(font());
}

QRect TopologyCanvas::summaryRect(const QRect& canvas) const {
    return geometry(canvas).summary;
}
QRect TopologyCanvas::legendRect(const QRect& canvas) const {
    return geometry(canvas).legend;
}

int TopologyCanvas::minimumHeightFor(int w) const {
    if (!m_scenario) return 240;
    const Geometry g =
        geometry(QRect(0, 0, w, 1)); // no height to spare: minimum cells, columns to fit the width
    const QFontMetrics fm(font());
    const int legendH = 2 * (fm.height() + 8) + 6;
    const int gridH = g.nodeRows * g.nodeH + (g.nodeRows - 1) * g.nodeGapY;
    // title, grid, summary, legend, as laid out by geometry()
    return std::max(240, 6 + fm.height() + 6 + 10 + gridH + 28 + summaryHeight() + 12 + legendH + 8);
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

QRect TopologyCanvas::gpuRect(int gpu, const QRect& canvas) const {
    if (!m_scenario) return {};
    const Geometry g = geometry(canvas);
    const int G = m_scenario->cluster.gpusPerNode;
    const QRect n = g.nodeRect(gpu / G);
    const int i = gpu % G, c = i % g.gpuCols, r = i / g.gpuCols;
    return QRect(n.left() + g.pad + c * (g.cell + g.gap),
                 n.top() + g.labelH + g.pad + r * (g.cell + g.barGap + g.barH + g.gap), g.cell, g.cell);
}

int TopologyCanvas::gpuAt(const QPoint& pos) const {
    if (!m_scenario || !m_plan) return -1;
    const Geometry g = geometry(rect());
    const int G = m_scenario->cluster.gpusPerNode;
    for (int n = 0; n < m_scenario->cluster.nodes; ++n) {
        if (!g.nodeRect(n).contains(pos)) continue;
        for (int i = 0; i < G; ++i)
            if (gpuRect(n * G + i, rect()).adjusted(-2, -2, 2, g.barH + 4).contains(pos)) return n * G + i;
        return -1;
    }
    return -1;
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

void TopologyCanvas::paintEvent(QPaintEvent*) {
    QPainter p(this);
    paintTo(p, rect());
}

void TopologyCanvas::paintTo(QPainter& p, const QRect& r) const {
    p.save();
    p.fillRect(r, Qt::white);
    p.setRenderHint(QPainter::Antialiasing, true);
    p.setFont(font());
    const QFontMetrics fm(font());
    const int lh = fm.height();
    if (!m_scenario || !m_plan) {
        p.setPen(kMuted);
        p.drawText(r, Qt::AlignCenter, tr("No plan selected"));
        p.restore();
        return;
    }
    const Geometry g = geometry(r);
    const Cluster& cl = m_scenario->cluster;
    const Plan& plan = m_plan->plan;
    const Metrics& m = m_plan->metrics();
    const int N = cl.nodes, G = cl.gpusPerNode;
    const bool moe = m_scenario->model.moe.present();

    // Title.
    QFont bold = font();
    bold.setBold(true);
    p.setFont(bold);
    p.setPen(kInk);
    const bool domains = cl.hostGpus() < G; // scale-up domains of several hosts (NVL72)
    const QString title = tr("%1: %2 %3 x %4 %5, %6")
                              .arg(qs(m_plan->label))
                              .arg(N)
                              .arg(domains ? (N == 1 ? tr("NVLink domain") : tr("NVLink domains"))
                                           : (N == 1 ? tr("node") : tr("nodes")))
                              .arg(G)
                              .arg(qs(cl.gpu.name), degreesText(plan.degrees, moe));
    p.drawText(g.title, Qt::AlignLeft | Qt::AlignVCenter,
               fm.elidedText(title, Qt::ElideRight, g.title.width()));
    p.setFont(font());

    std::vector<char> inTp(size_t(N * G), 0), inDp(size_t(N * G), 0), inEp(size_t(N * G), 0);
    for (int x : outlined(Axis::TP)) inTp[size_t(x)] = 1;
    for (int x : outlined(Axis::DP)) inDp[size_t(x)] = 1;
    for (int x : outlined(Axis::EP)) inEp[size_t(x)] = 1;

    // Network fabric (multi-node): a line under each row of nodes, a stub from each node, a trunk joining
    // rows.
    const QColor net = shade(LinkClass::Network, m_share[int(LinkClass::Network)]);
    if (N > 1) {
        p.setPen(QPen(net, 3, Qt::SolidLine, Qt::RoundCap));
        int trunkTop = -1, trunkBottom = -1;
        const int trunkX = g.nodeRect(0).left() - 12;
        for (int row = 0; row < g.nodeRows; ++row) {
            const int first = row * g.nodeCols, last = std::min(N, first + g.nodeCols) - 1;
            const QRect a = g.nodeRect(first), b = g.nodeRect(last);
            const int y = a.bottom() + g.nodeGapY / 2;
            p.drawLine(trunkX, y, b.center().x(), y);
            for (int n = first; n <= last; ++n)
                p.drawLine(g.nodeRect(n).center().x(), g.nodeRect(n).bottom(), g.nodeRect(n).center().x(), y);
            if (trunkTop < 0) trunkTop = y;
            trunkBottom = y;
        }
        p.drawLine(trunkX, trunkTop - (g.nodeRows > 1 ? 0 : 0), trunkX, trunkBottom);
    }

    const QColor nvl = shade(LinkClass::NvLink, m_share[int(LinkClass::NvLink)]);
    for (int n = 0; n < N; ++n) {
        const QRect nr = g.nodeRect(n);
        p.setPen(QPen(kNodeBorder, 1));
        p.setBrush(kNodeFill);
        p.drawRoundedRect(QRectF(nr).adjusted(0.5, 0.5, -0.5, -0.5), 6, 6);
        p.setPen(kMuted);
        // A node is a scale-up domain; where it spans several hosts (GB200 NVL72: 18 compute trays of 4),
        // the label says so and each host's GPUs get a faint outline.
        const int H = std::clamp(cl.hostGpus(), 1, G);
        const bool trays = H < G;
        if (g.cell >= 14) {
            const QString full = trays ? tr("NVLink domain %1: %2 hosts of %3").arg(n).arg(G / H).arg(H)
                                       : tr("node %1").arg(n);
            const QString label = g.nodeW > fm.horizontalAdvance(full + QStringLiteral("  ")) ? full
                                  : g.nodeW > fm.horizontalAdvance(QStringLiteral("node 000  ")) * 1.6
                                      ? tr("node %1").arg(n)
                                      : QString::number(n);
            p.drawText(QRect(nr.left() + g.pad, nr.top() + 2, nr.width() - 2 * g.pad, g.labelH),
                       Qt::AlignLeft | Qt::AlignVCenter, label);
        }
        if (trays && g.gap >= 2) {
            // A band behind each host's cells, every other host shaded (a host's GPUs are consecutive).
            p.setPen(Qt::NoPen);
            for (int first = 0; first < G; first += H) {
                p.setBrush((first / H) % 2 ? QColor(0xc8, 0xd2, 0xe0) : QColor(0xee, 0xf1, 0xf6));
                int i = first;
                while (i < first + H) {
                    const int row = i / g.gpuCols, end = std::min(first + H, (row + 1) * g.gpuCols);
                    const QRect a = gpuRect(n * G + i, r), z = gpuRect(n * G + end - 1, r);
                    const double m = g.gap / 2.0;
                    p.drawRoundedRect(QRectF(a.left() - m, a.top() - m, z.right() - a.left() + 1 + 2 * m,
                                             a.height() + g.barGap + g.barH + 2 * m),
                                      3, 3);
                    i = end;
                }
            }
        }
        // NVLink rail (the node's switch fabric).
        const QRect rail(nr.left() + g.pad, nr.bottom() - g.pad - g.railH, nr.width() - 2 * g.pad, g.railH);
        p.setPen(Qt::NoPen);
        p.setBrush(nvl);
        p.drawRoundedRect(rail, 3, 3);
        for (int i = 0; i < G; ++i) {
            const int gpu = n * G + i;
            const QRect cr = gpuRect(gpu, r);
            // A short connector to the rail.
            p.setPen(QPen(nvl, 2));
            if (i / g.gpuCols == g.gpuRows - 1)
                p.drawLine(cr.center().x(), cr.bottom() + g.barGap + g.barH + 1, cr.center().x(), rail.top());
            const MeshCoords c = meshCoords(plan, gpu);
            QColor fill = stageColor(c.pp);
            const bool member = inTp[size_t(gpu)] || inDp[size_t(gpu)] || inEp[size_t(gpu)];
            if (m_hover >= 0 && !member) fill = blendWhite(fill, 0.65);
            if (g.cell >= 8) {
                p.setPen(QPen(fill.darker(130), 1));
                p.setBrush(fill);
                p.drawRoundedRect(QRectF(cr).adjusted(0.5, 0.5, -0.5, -0.5), 3, 3);
            } else {
                p.fillRect(cr, fill); // too small for a border: a plain square
            }
            if (g.cell >= 22) {
                p.setPen(textOn(fill));
                p.drawText(cr, Qt::AlignCenter, QString::number(i));
            }
            // Memory bar: weights, KV cache, activations, reserve, of the usable capacity.
            const QRect bar(cr.left(), cr.bottom() + 1 + g.barGap, cr.width(), g.barH);
            p.setPen(Qt::NoPen);
            p.setBrush(QColor(0xe5, 0xe7, 0xeb));
            p.drawRect(bar);
            fillMemoryParts(p, bar, m);
            if (m.memoryPerGpuGiB > m.capacityGiB) {
                p.setPen(QPen(QColor(0xdc, 0x26, 0x26), 1.5));
                p.setBrush(Qt::NoBrush);
                p.drawRect(bar);
            }
        }
    }
    // Group outlines for the hovered GPU.
    if (m_hover >= 0) {
        p.setBrush(Qt::NoBrush);
        for (int gpu = 0; gpu < N * G; ++gpu) {
            const QRectF cr = QRectF(gpuRect(gpu, r));
            if (inTp[size_t(gpu)]) {
                p.setPen(QPen(kTpPen, 2.5));
                p.drawRoundedRect(cr.adjusted(-2.5, -2.5, 2.5, 2.5), 4, 4);
            }
            if (inDp[size_t(gpu)]) {
                p.setPen(QPen(kDpPen, 2, Qt::DashLine));
                p.drawRoundedRect(cr.adjusted(2, 2, -2, -2), 3, 3);
            }
            if (inEp[size_t(gpu)] && cr.width() >= 16) {
                p.setPen(QPen(kEpPen, 2, Qt::DotLine));
                p.drawRoundedRect(cr.adjusted(5, 5, -5, -5), 2, 2);
            } else if (inEp[size_t(gpu)]) {
                // Too small for a third ring: a mark in the corner.
                p.setPen(Qt::NoPen);
                p.setBrush(kEpPen);
                p.drawRect(QRectF(cr.right() - 4, cr.top() + 1, 4, 4));
                p.setBrush(Qt::NoBrush);
            }
        }
        const QRectF hr = QRectF(gpuRect(m_hover, r));
        p.setPen(QPen(Qt::black, 2));
        p.drawRoundedRect(hr.adjusted(-4.5, -4.5, 4.5, 4.5), 5, 5);
    }

    if (g.summary.isValid())
        TopologySummary{*m_plan, m_prefill, m_share, m_bytes}.paint(p, g.summary, font());

    // Legend: stages, group outlines, memory, links.
    p.setRenderHint(QPainter::Antialiasing, false);
    int x = g.legend.left(), y = g.legend.top();
    auto item = [&](const QString& text, auto&& swatch) {
        const int w = 16 + 6 + fm.horizontalAdvance(text) + 16;
        if (x + w > g.legend.right() && x > g.legend.left()) {
            x = g.legend.left();
            y += lh + 8;
        }
        swatch(QRect(x, y + (lh - 12) / 2, 16, 12));
        p.setPen(kInk);
        p.drawText(QRect(x + 22, y, w, lh), Qt::AlignLeft | Qt::AlignVCenter, text);
        x += w;
    };
    const int pp = plan.degrees.pp;
    for (int s = 0; s < std::min(pp, 8); ++s)
        item(pp == 1 ? tr("stage 0 (no pipeline)") : tr("stage %1").arg(s),
             [&](QRect sw) { p.fillRect(sw, stageColor(s)); });
    if (pp > 8) item(tr("... %1 stages").arg(pp), [&](QRect) {});
    auto ring = [&](const QColor& c, Qt::PenStyle st) {
        return [&p, c, st](QRect sw) {
            p.setPen(QPen(c, 2, st));
            p.setBrush(Qt::NoBrush);
            p.drawRect(sw.adjusted(1, 1, -1, -1));
        };
    };
    item(tr("TP group"), ring(kTpPen, Qt::SolidLine));
    item(tr("DP group"), ring(kDpPen, Qt::DashLine));
    if (moe) item(tr("EP group"), ring(kEpPen, Qt::DotLine));
    x = g.legend.left();
    y += lh + 8;
    item(tr("weights"), [&](QRect sw) { p.fillRect(sw, kMemWeights); });
    item(tr("KV cache"), [&](QRect sw) { p.fillRect(sw, kMemKv); });
    item(tr("activations"), [&](QRect sw) { p.fillRect(sw, kMemAct); });
    item(tr("reserve (%1 / %2 GiB)").arg(m.memoryPerGpuGiB, 0, 'f', 1).arg(m.capacityGiB, 0, 'f', 1),
         [&](QRect sw) { p.fillRect(sw, kMemReserve); });
    item(tr("NVLink: %1% of the step, %2/GPU")
             .arg(100 * m_share[int(LinkClass::NvLink)], 0, 'f', 1)
             .arg(formatBytes(m_bytes[int(LinkClass::NvLink)])),
         [&](QRect sw) { p.fillRect(sw, nvl); });
    if (N > 1)
        item(tr("network: %1% of the step, %2/GPU")
                 .arg(100 * m_share[int(LinkClass::Network)], 0, 'f', 1)
                 .arg(formatBytes(m_bytes[int(LinkClass::Network)])),
             [&](QRect sw) { p.fillRect(sw, net); });
    p.restore();
}

} // namespace sp::views
