// The topology canvas's painting (views/topology.h): nodes, GPU cells with their memory bars, the NVLink
// rails and network fabric shaded by load, the hovered GPU's group outlines, the summary and the legend.
#include "views/topology.h"

#include "views/format.h"
#include "views/meshgroups.h"
#include "views/topologysummary.h"

#include <QPainter>

#include <algorithm>
#include <cmath>

namespace sp::views {

namespace {
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

void TopologyCanvas::paintTo(QPainter& p, const QRect& r, const QRect& exposed) const {
    // Only what meets the exposed part is drawn: in its scroll area a 65,536-GPU cluster shows a few
    // hundred nodes of its thousands.
    const QRect ex = exposed.isNull() ? r : exposed.intersected(r);
    p.save();
    p.fillRect(ex, Qt::white);
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

    // The hovered GPU's groups (membership by GPU only while one is hovered).
    const std::vector<int> tpGroup = outlined(Axis::TP), dpGroup = outlined(Axis::DP),
                           epGroup = outlined(Axis::EP);
    std::vector<char> inGroup;
    if (m_hover >= 0) {
        inGroup.assign(size_t(N * G), 0);
        for (const auto* group : {&tpGroup, &dpGroup, &epGroup})
            for (int x : *group) inGroup[size_t(x)] = 1;
    }

    // The nodes whose rows meet the exposed part (a row's network line lies in the gap below it).
    const auto [firstNode, endNode] = nodesBetween(g, ex.top() - g.nodeGapY, ex.bottom());
    // Network fabric (multi-node): a line under each row of nodes, a stub from each node, a trunk joining
    // rows.
    const QColor net = shade(LinkClass::Network, m_share[int(LinkClass::Network)]);
    if (N > 1) {
        p.setPen(QPen(net, 3, Qt::SolidLine, Qt::RoundCap));
        const int trunkX = g.nodeRect(0).left() - 12;
        auto rowY = [&](int row) { return g.nodeRect(row * g.nodeCols).bottom() + g.nodeGapY / 2; };
        for (int row = firstNode / g.nodeCols; row * g.nodeCols < endNode; ++row) {
            const int first = row * g.nodeCols, last = std::min(N, first + g.nodeCols) - 1;
            const QRect b = g.nodeRect(last);
            const int y = rowY(row);
            p.drawLine(trunkX, y, b.center().x(), y);
            for (int n = first; n <= last; ++n)
                p.drawLine(g.nodeRect(n).center().x(), g.nodeRect(n).bottom(), g.nodeRect(n).center().x(), y);
        }
        p.drawLine(trunkX, std::max(rowY(0), ex.top() - 4), trunkX,
                   std::min(rowY(g.nodeRows - 1), ex.bottom() + 4));
    }

    const QColor nvl = shade(LinkClass::NvLink, m_share[int(LinkClass::NvLink)]);
    for (int n = firstNode; n < endNode; ++n) {
        const QRect nr = g.nodeRect(n);
        if (!nr.intersects(ex)) continue;
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
                    const QRect a = cellRect(g, n * G + i), z = cellRect(g, n * G + end - 1);
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
            const QRect cr = cellRect(g, gpu);
            // A short connector to the rail.
            p.setPen(QPen(nvl, 2));
            if (i / g.gpuCols == g.gpuRows - 1)
                p.drawLine(cr.center().x(), cr.bottom() + g.barGap + g.barH + 1, cr.center().x(), rail.top());
            QColor fill =
                stageColor(size_t(gpu) < m_stage.size() ? m_stage[size_t(gpu)] : meshCoords(plan, gpu).pp);
            if (m_hover >= 0 && !inGroup[size_t(gpu)]) fill = blendWhite(fill, 0.65);
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
        // Only the groups' members (each group is sorted by GPU), in GPU order, only where shown.
        const QRect near = ex.adjusted(-8, -8, 8, 8);
        std::vector<int> members;
        for (const auto* group : {&tpGroup, &dpGroup, &epGroup})
            for (int x : *group)
                if (near.intersects(cellRect(g, x))) members.push_back(x);
        std::sort(members.begin(), members.end());
        members.erase(std::unique(members.begin(), members.end()), members.end());
        auto in = [](const std::vector<int>& group, int x) {
            return std::binary_search(group.begin(), group.end(), x);
        };
        p.setBrush(Qt::NoBrush);
        for (int gpu : members) {
            const QRectF cr = QRectF(cellRect(g, gpu));
            if (in(tpGroup, gpu)) {
                p.setPen(QPen(kTpPen, 2.5));
                p.drawRoundedRect(cr.adjusted(-2.5, -2.5, 2.5, 2.5), 4, 4);
            }
            if (in(dpGroup, gpu)) {
                p.setPen(QPen(kDpPen, 2, Qt::DashLine));
                p.drawRoundedRect(cr.adjusted(2, 2, -2, -2), 3, 3);
            }
            if (in(epGroup, gpu) && cr.width() >= 16) {
                p.setPen(QPen(kEpPen, 2, Qt::DotLine));
                p.drawRoundedRect(cr.adjusted(5, 5, -5, -5), 2, 2);
            } else if (in(epGroup, gpu)) {
                // Too small for a third ring: a mark in the corner.
                p.setPen(Qt::NoPen);
                p.setBrush(kEpPen);
                p.drawRect(QRectF(cr.right() - 4, cr.top() + 1, 4, 4));
                p.setBrush(Qt::NoBrush);
            }
        }
        p.setBrush(Qt::NoBrush);
        const QRectF hr = QRectF(cellRect(g, m_hover));
        p.setPen(QPen(Qt::black, 2));
        p.drawRoundedRect(hr.adjusted(-4.5, -4.5, 4.5, 4.5), 5, 5);
    }

    if (g.summary.isValid() && g.summary.intersects(ex))
        TopologySummary{*m_plan, m_prefill, m_share, m_bytes}.paint(p, g.summary, font());
    if (!g.legend.intersects(ex)) {
        p.restore();
        return;
    }

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
