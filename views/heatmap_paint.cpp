// The sharding heatmap's layout and painting (views/heatmap.h): title, stage or dense/MoE header bands,
// row labels, the cells with their choice or share, the boundaries, and the legend; for screen and export.
#include "views/heatmap.h"

#include "views/format.h"
#include "views/heatmap_p.h"

#include <QLinearGradient>
#include <QPainter>

#include <algorithm>
#include <cmath>

namespace sp::views {

using sharding::layerGroupOfLayer;

ShardingHeatmap::Layout ShardingHeatmap::layoutFor(const QRect& r, const QFontMetrics& fm) const {
    Layout lay;
    const int lh = fm.height();
    int labelW = 0;
    for (int i = 0; i < rowCount(); ++i) labelW = std::max(labelW, fm.horizontalAdvance(rowName(i)));
    lay.labelWidth = labelW + 16;
    lay.title = QRect(r.left() + 8, r.top() + 4, r.width() - 16, lh + 8);
    lay.header =
        QRect(r.left() + lay.labelWidth, lay.title.bottom() + 4, r.width() - lay.labelWidth - 12, 2 * lh + 8);
    const int legendH = m_colorBy == ColorBy::Choice ? 2 * (lh + 6) + 8 : lh * 2 + 16;
    const int gridTop = lay.header.bottom() + 2;
    const int avail = std::max(10, r.bottom() - legendH - gridTop - 8);
    lay.rowHeight = rowCount() > 0 ? std::clamp(double(avail) / rowCount(), double(lh) + 4, 56.0) : 0;
    lay.colWidth = columnCount() > 0 ? double(lay.header.width()) / columnCount() : 0;
    lay.grid = QRect(lay.header.left(), gridTop, lay.header.width(), int(lay.rowHeight * rowCount()));
    lay.legend = QRect(r.left() + 8, lay.grid.bottom() + 12, r.width() - 16, legendH);
    return lay;
}

void ShardingHeatmap::paintTo(QPainter& p, const QRect& r) const {
    p.save();
    p.setRenderHint(QPainter::Antialiasing, false);
    p.fillRect(r, Qt::white);
    p.setFont(font());
    const QFontMetrics fm(font());
    const QColor ink(0x1f, 0x29, 0x37), muted(0x6b, 0x72, 0x80), grid(0xe5, 0xe7, 0xeb);
    if (!m_plan || !m_scenario || m_rows.empty()) {
        p.setPen(muted);
        p.drawText(r, Qt::AlignCenter, tr("No plan selected"));
        p.restore();
        return;
    }
    const Layout lay = layoutFor(r, fm);
    const Breakdown& b = *breakdown();

    // Title.
    QFont bold = font();
    bold.setBold(true);
    p.setFont(bold);
    p.setPen(ink);
    QString title = tr("%1: sharding per operator, %2 of %3 layers")
                        .arg(qs(m_plan->label), qs(b.phase))
                        .arg(m_scenario->model.layers);
    const Degrees& deg = m_plan->plan.degrees;
    if (!m_plan->plan.layerGroups.empty())
        title += tr("; layer groups: %1").arg(qs(layerGroupsText(m_plan->plan)));
    if (deg.tp == 1 && (!m_scenario->model.moe.present() || deg.ep * deg.etp == 1))
        title += tr(" (tp 1: every operator runs whole on its GPU, so the choices do not matter)");
    p.drawText(lay.title, Qt::AlignLeft | Qt::AlignVCenter,
               fm.elidedText(title, Qt::ElideRight, lay.title.width()));
    p.setFont(font());

    const int lh = fm.height();
    const double cw = lay.colWidth, rh = lay.rowHeight;
    const int gx = lay.grid.left(), gy = lay.grid.top();
    auto colX = [&](int c) { return gx + int(std::lround(c * cw)); };

    // Header band 1: stages (layer view with pp > 1), dense/MoE spans otherwise; band 2: column labels.
    const QRect band1(lay.header.left(), lay.header.top(), lay.header.width(), lh + 4);
    const QRect band2(lay.header.left(), band1.bottom() + 2, lay.header.width(), lh + 2);
    const Model& model = m_scenario->model;
    const int L = int(model.layers);
    // Runs of consecutive dense or MoE layers: a dense prefix then MoE layers (DeepSeek), or alternating
    // (Llama 4 Maverick); a boundary line marks the one change of a prefix model.
    std::vector<std::pair<int, int>> runs; // [begin, end) of one kind
    for (int l = 0; l < L; ++l)
        if (l == 0 || model.isMoeLayer(l) != model.isMoeLayer(l - 1))
            runs.push_back({l, l + 1});
        else
            runs.back().second = l + 1;
    struct Span {
        int c0, c1;
        QString text;
        QColor color;
    };
    std::vector<Span> spans;
    if (m_columns == Columns::Layers && m_plan->plan.degrees.pp > 1) {
        int start = 0;
        for (int c = 1; c <= columnCount(); ++c)
            if (c == columnCount() || m_cols[size_t(c)].stage != m_cols[size_t(start)].stage) {
                const int s = m_cols[size_t(start)].stage;
                spans.push_back({start, c, tr("stage %1").arg(s), stageColor(s).lighter(160)});
                start = c;
            }
    } else if (m_columns == Columns::Layers) {
        for (const auto& [b, e] : runs) {
            const bool moe = model.isMoeLayer(b);
            const QString text =
                e - b > 1 ? (moe ? tr("MoE layers") : tr("dense layers")) : (moe ? tr("MoE") : tr("dense"));
            spans.push_back({b, e, text, moe ? QColor(0xfc, 0xe7, 0xf3) : QColor(0xe0, 0xe7, 0xff)});
        }
    }
    for (const Span& s : spans) {
        const QRect sr(colX(s.c0), band1.top(), colX(s.c1) - colX(s.c0) - 1, band1.height());
        p.fillRect(sr, s.color);
        p.setPen(ink);
        if (fm.horizontalAdvance(s.text) + 4 < sr.width()) p.drawText(sr, Qt::AlignCenter, s.text);
    }
    p.setPen(muted);
    if (m_columns == Columns::Layers) {
        const int need = fm.horizontalAdvance(QStringLiteral("000")) + 4;
        int step = 1;
        for (int s : {1, 2, 5, 10, 20, 50, 100, 200, 500})
            if (s * cw >= need) {
                step = s;
                break;
            } else
                step = s;
        for (int c = 0; c < columnCount(); c += step) {
            const QRect lr(colX(c), band2.top(), int(std::max(cw * step, cw)), band2.height());
            p.drawText(QRect(lr.left(), lr.top(), std::max(int(cw), need), lr.height()),
                       (cw >= need ? Qt::AlignHCenter : Qt::AlignLeft) | Qt::AlignVCenter,
                       m_cols[size_t(c)].label);
        }
    } else {
        for (int c = 0; c < columnCount(); ++c) {
            const Column& col = m_cols[size_t(c)];
            const QRect cr(colX(c), band1.top(), colX(c + 1) - colX(c) - 1, band1.height());
            p.fillRect(cr, stageColor(col.stage).lighter(160));
            p.setPen(ink);
            p.drawText(cr, Qt::AlignCenter, fm.elidedText(col.label, Qt::ElideRight, cr.width()));
            p.setPen(muted);
            const QString layers =
                tr("layers %1-%2").arg(col.firstLayer).arg(col.firstLayer + col.layers - 1);
            p.drawText(QRect(cr.left(), band2.top(), cr.width(), band2.height()), Qt::AlignCenter,
                       fm.elidedText(layers, Qt::ElideRight, cr.width()));
        }
    }

    // Row labels.
    p.setPen(ink);
    for (int rI = 0; rI < rowCount(); ++rI) {
        const QRect lr(r.left() + 4, gy + int(rI * rh), lay.labelWidth - 12, int(rh));
        p.drawText(lr, Qt::AlignRight | Qt::AlignVCenter, rowName(rI));
    }

    // Cells.
    const bool gap = cw >= 5;
    for (int c = 0; c < columnCount(); ++c) {
        const int x0 = colX(c), x1 = colX(c + 1) - (gap ? 1 : 0);
        for (int rI = 0; rI < rowCount(); ++rI) {
            const Cell& cell = m_cols[size_t(c)].cells[size_t(rI)];
            const QRect cr(x0, gy + int(rI * rh), x1 - x0, int(rh) - 1);
            if (cell.parts.empty()) {
                p.fillRect(cr, QColor(0xf6, 0xf7, 0xf9));
                continue;
            }
            QColor fill;
            if (m_colorBy == ColorBy::TimeShare) {
                fill = heatColor(m_maxShare > 0 ? (cell.timeMs / m_total) / m_maxShare : 0);
                p.fillRect(cr, fill);
            } else {
                // One band per part (dense and MoE layers of a stage may shard differently).
                const int n = int(cell.parts.size());
                for (int i = 0; i < n; ++i) {
                    const Part& part = cell.parts[size_t(i)];
                    const int y0 = cr.top() + cr.height() * i / n, y1 = cr.top() + cr.height() * (i + 1) / n;
                    fill = familyColor(familyOf(part.op, part.choice));
                    p.fillRect(QRect(cr.left(), y0, cr.width(), y1 - y0), fill);
                }
            }
            // Decide on the nominal cell width, so rounding does not label some cells and not others.
            const int room = int(cw) - (gap ? 1 : 0);
            QString text;
            if (m_colorBy == ColorBy::TimeShare) {
                const double pct = 100 * cell.timeMs / m_total;
                text = QString::number(pct, 'f', pct < 10 ? 1 : 0) + QLatin1Char('%');
                if (fm.horizontalAdvance(text) + 4 > room) text.clear();
            } else {
                const QString full = cellChoice(rI, c);
                if (fm.horizontalAdvance(full) + 8 <= room)
                    text = full;
                else if (cell.parts.size() == 1) {
                    const QString ab = choiceAbbrev(cell.parts[0].op, cell.parts[0].choice);
                    if (fm.horizontalAdvance(ab) + 2 <= room) text = ab;
                }
            }
            if (!text.isEmpty() && cr.height() >= lh) {
                p.setPen(textOn(fill));
                p.drawText(cr, Qt::AlignCenter, text);
            }
        }
    }
    // Stage boundaries (layer view) and the dense/MoE boundary.
    if (m_columns == Columns::Layers) {
        p.setPen(QPen(ink, 2));
        for (int c = 1; c < columnCount(); ++c)
            if (m_cols[size_t(c)].stage != m_cols[size_t(c - 1)].stage)
                p.drawLine(colX(c) - 1, band1.top(), colX(c) - 1, lay.grid.bottom());
        // Layer-group boundaries: where the per-layer operators' choices change.
        const std::vector<int> groupOf = layerGroupOfLayer(m_plan->plan, columnCount());
        p.setPen(QPen(QColor(0xb4, 0x53, 0x09), 2, Qt::DashDotLine));
        for (int c = 1; c < columnCount(); ++c)
            if (groupOf[size_t(c)] != groupOf[size_t(c - 1)])
                p.drawLine(colX(c) - 1, band2.top(), colX(c) - 1, lay.grid.bottom());
        if (runs.size() == 2 && m_plan->plan.degrees.pp > 1) {
            const int firstMoe = runs[1].first;
            p.setPen(QPen(muted, 1, Qt::DashLine));
            p.drawLine(colX(firstMoe) - 1, gy, colX(firstMoe) - 1, lay.grid.bottom());
        }
    }
    p.setPen(QPen(grid, 1));
    p.setBrush(Qt::NoBrush);
    p.drawRect(lay.grid.adjusted(-1, -1, 0, 0));
    if (m_hoverRow >= 0 && m_hoverCol >= 0) {
        p.setPen(QPen(ink, 2));
        p.drawRect(QRect(colX(m_hoverCol), gy + int(m_hoverRow * rh),
                         colX(m_hoverCol + 1) - colX(m_hoverCol) - 1, int(rh) - 1));
    }

    // Legend.
    int x = lay.legend.left(), y = lay.legend.top();
    p.setPen(ink);
    if (m_colorBy == ColorBy::Choice) {
        bool used[kShardFamilyCount] = {};
        for (const Column& col : m_cols)
            for (const Cell& cell : col.cells)
                for (const Part& part : cell.parts) used[int(familyOf(part.op, part.choice))] = true;
        for (int f = 0; f < kShardFamilyCount; ++f) {
            if (!used[f]) continue;
            const QString name = familyName(ShardFamily(f));
            const int w = 14 + 6 + fm.horizontalAdvance(name) + 18;
            if (x + w > lay.legend.right() && x > lay.legend.left()) {
                x = lay.legend.left();
                y += lh + 6;
            }
            p.fillRect(QRect(x, y + (lh - 12) / 2, 14, 12), familyColor(ShardFamily(f)));
            p.drawText(QRect(x + 20, y, w, lh), Qt::AlignLeft | Qt::AlignVCenter, name);
            x += w;
        }
    } else {
        const QRect bar(x, y + 2, 220, 12);
        QLinearGradient g(bar.topLeft(), bar.topRight());
        for (int i = 0; i <= 10; ++i) g.setColorAt(i / 10.0, heatColor(i / 10.0));
        p.fillRect(bar, g);
        p.setPen(muted);
        p.drawText(QRect(bar.left(), bar.bottom() + 2, 60, lh), Qt::AlignLeft, QStringLiteral("0%"));
        p.drawText(QRect(bar.right() - 60, bar.bottom() + 2, 60, lh), Qt::AlignRight,
                   QStringLiteral("%1%").arg(100 * m_maxShare, 0, 'f', 1));
        p.setPen(ink);
        p.drawText(
            QRect(bar.right() + 14, y - 2, lay.legend.width() - bar.width() - 20, lh + 4),
            Qt::AlignLeft | Qt::AlignVCenter,
            tr("share of the %1 per cell: operator time plus the collectives it triggers").arg(qs(b.phase)));
    }
    p.restore();
}

} // namespace sp::views
