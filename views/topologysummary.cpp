#include "views/topologysummary.h"

#include "views/format.h"

#include <QPainter>

#include <algorithm>

namespace sp::views {

namespace {
const QColor kInk(0x1f, 0x29, 0x37), kMuted(0x6b, 0x72, 0x80);
} // namespace

/// Weights, KV cache, activations and reserve as consecutive shares of the usable capacity.
void fillMemoryParts(QPainter& p, const QRect& bar, const Metrics& m) {
    const double cap = std::max(1e-9, m.capacityGiB);
    double x = bar.left();
    const std::pair<double, QColor> parts[] = {{m.weightsGiB, kMemWeights},
                                               {m.kvCacheGiB, kMemKv},
                                               {m.activationsGiB, kMemAct},
                                               {m.reserveGiB, kMemReserve}};
    for (const auto& [gib, col] : parts) {
        const double w = std::min(double(bar.right() + 1) - x, bar.width() * gib / cap);
        if (w <= 0) continue;
        p.fillRect(QRectF(x, bar.top(), w, bar.height()), col);
        x += w;
    }
}

int TopologySummary::height(const QFont& font) {
    const int lh = QFontMetrics(font).height();
    return 3 * (2 * lh + 12) + 8;
}

void TopologySummary::paint(QPainter& p, const QRect& r, const QFont& font) const {
    const Metrics& m = plan.metrics();
    const Breakdown& b = plan.breakdown(prefill);
    const QFontMetrics fm(font);
    const int lh = fm.height();
    const int labelW = fm.horizontalAdvance(tr("Communication per %1").arg(qs(b.phase))) + 16;
    const int barW = std::min(720, r.width() - labelW - 20);
    if (barW < 160) return;
    const int x0 = r.left() + std::max(0, (r.width() - labelW - barW) / 2);
    p.save();
    p.setRenderHint(QPainter::Antialiasing, false);
    int y = r.top();
    // A labelled bar with its figures in small print underneath.
    auto row = [&](const QString& label, auto&& drawBar, const QString& note) {
        p.setPen(kInk);
        p.drawText(QRect(x0, y, labelW - 8, lh + 4), Qt::AlignRight | Qt::AlignVCenter, label);
        const QRect bar(x0 + labelW, y + 2, barW, lh);
        p.fillRect(bar, QColor(0xf1, 0xf5, 0xf9));
        drawBar(bar);
        p.setPen(QColor(0xcb, 0xd5, 0xe1));
        p.setBrush(Qt::NoBrush);
        p.drawRect(bar.adjusted(0, 0, -1, -1));
        p.setPen(kMuted);
        p.drawText(QRect(bar.left(), bar.bottom() + 2, barW, lh + 2), Qt::AlignLeft | Qt::AlignVCenter,
                   fm.elidedText(note, Qt::ElideRight, barW));
        y += 2 * lh + 12;
    };
    // Memory: the four parts of the usable capacity.
    row(
        tr("Memory per GPU"), [&](const QRect& bar) { fillMemoryParts(p, bar, m); },
        tr("%1 of %2 GiB usable (weights %3, KV %4, activations %5, reserve %6)")
            .arg(m.memoryPerGpuGiB, 0, 'f', 1)
            .arg(m.capacityGiB, 0, 'f', 1)
            .arg(m.weightsGiB, 0, 'f', 1)
            .arg(m.kvCacheGiB, 0, 'f', 1)
            .arg(m.activationsGiB, 0, 'f', 1)
            .arg(m.reserveGiB, 0, 'f', 1));
    // Communication: the share of the step on each link class.
    const double nv = share[int(LinkClass::NvLink)], net = share[int(LinkClass::Network)];
    const double pipe = b.stageMs > 0 ? b.pipelineTransferMs / b.stageMs : 0;
    row(
        tr("Communication per %1").arg(qs(b.phase)),
        [&](const QRect& bar) {
            double x = bar.left();
            for (const auto& [share, col] :
                 {std::pair{nv, linkColor(LinkClass::NvLink)}, std::pair{net, linkColor(LinkClass::Network)},
                  std::pair{pipe, QColor(0xf5, 0x9e, 0x0b)}}) {
                const double w = std::min(double(bar.right() + 1) - x, bar.width() * share);
                if (w > 0) p.fillRect(QRectF(x, bar.top(), w, bar.height()), col);
                x += std::max(0.0, w);
            }
        },
        tr("NVLink %1% (%2/GPU), network %3% (%4/GPU), pipeline %5% of the %6 slowest stage")
            .arg(100 * nv, 0, 'f', 1)
            .arg(formatBytes(bytes[int(LinkClass::NvLink)]))
            .arg(100 * net, 0, 'f', 1)
            .arg(formatBytes(bytes[int(LinkClass::Network)]))
            .arg(100 * pipe, 0, 'f', 1)
            .arg(formatMs(b.stageMs)));
    // Compute: what the rest of the step is spent on.
    const StepSplit split = stepSplit(b);
    const double tot = std::max(1e-12, split.total());
    row(
        tr("Operators"),
        [&](const QRect& bar) {
            const double wc = bar.width() * split.computeMs / tot, wm = bar.width() * split.memoryMs / tot;
            p.fillRect(QRectF(bar.left(), bar.top(), wc, bar.height()), QColor(0x3b, 0x82, 0xf6));
            p.fillRect(QRectF(bar.left() + wc, bar.top(), wm, bar.height()), QColor(0x93, 0xc5, 0xfd));
        },
        tr("compute-bound %1, memory-bound %2 of the %3")
            .arg(formatMs(split.computeMs), formatMs(split.memoryMs), qs(b.phase)));
    p.restore();
}

} // namespace sp::views
