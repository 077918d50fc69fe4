// The sharding heatmap's cell tooltip (views/heatmap.h): per part of a cell, its choice, compute and memory
// time, weights, and the collectives it triggers and receives.
#include "views/heatmap.h"

#include "views/format.h"
#include "views/heatmap_p.h"

namespace sp::views {

using sharding::perLayerMs;
using sharding::producerOf;

namespace {

QString consumerOf(const CommCost& c) {
    const QString w = qs(c.where);
    return w.contains(QStringLiteral(" -> ")) ? w.section(QStringLiteral(" -> "), 1, 1) : QString();
}

QString commLine(const CommCost& c) {
    return QObject::tr("%1 over %2, %3 GPUs, %4 per GPU, %5")
        .arg(qs(nameOf(c.kind)), qs(nameOf(c.link)))
        .arg(c.group)
        .arg(formatBytes(c.bytes), formatMs(perLayerMs(c.timeMs, c.groupShare)));
}

QString kindName(LayerKind k) {
    switch (k) {
    case LayerKind::Dense:
        return QObject::tr("dense");
    case LayerKind::Moe:
        return QObject::tr("MoE");
    case LayerKind::Embedding:
        return QObject::tr("embedding");
    case LayerKind::Head:
        return QObject::tr("head");
    case LayerKind::Draft:
        return QObject::tr("draft");
    }
    return {};
}

} // namespace

QString ShardingHeatmap::cellToolTip(int row, int col) const {
    if (col < 0 || col >= columnCount() || row < 0 || row >= rowCount()) return {};
    const Column& column = m_cols[size_t(col)];
    const Cell& cell = column.cells[size_t(row)];
    if (cell.parts.empty()) return {};
    const Breakdown& b = *breakdown();
    QString where = m_columns == Columns::Layers
                        ? tr("layer %1 (stage %2)").arg(column.firstLayer).arg(column.stage)
                        : tr("stage %1: layers %2-%3")
                              .arg(column.stage)
                              .arg(column.firstLayer)
                              .arg(column.firstLayer + column.layers - 1);
    const bool grouped = !m_plan->plan.layerGroups.empty();
    QString t = QStringLiteral("<b>%1</b> &middot; %2").arg(rowName(row), where);
    for (const Part& p : cell.parts) {
        t += QStringLiteral("<hr>");
        t += tr("<b>%1</b> in %2 layers").arg(choiceName(p.op, p.choice), kindName(p.kind));
        if (p.count > 1) t += tr(" (x%1)").arg(p.count);
        const bool layerRow = p.kind == LayerKind::Dense || p.kind == LayerKind::Moe;
        if (grouped && layerRow) t += tr(" of layer group %1").arg(p.group);
        const std::string name(kOpNames[size_t(p.op)]);
        const OpCost* oc = nullptr;
        for (const OpCost& o : b.ops)
            if (o.layer == p.kind && o.layerGroup == p.group && o.op == name) oc = &o;
        if (oc) {
            const double share = oc->groupShare > 0 ? oc->groupShare : 1.0;
            t += tr("<br>compute %1, memory %2: <b>%3</b> per layer, %4-bound")
                     .arg(formatMs(oc->computeMs / share), formatMs(oc->memoryMs / share),
                          formatMs(perLayerMs(oc->timeMs, oc->groupShare)),
                          oc->memoryBound ? tr("memory") : tr("compute"));
            t += tr("<br>weights %1 per GPU").arg(formatBytes(oc->weightBytes));
        } else {
            t += tr("<br><i>not in the slowest stage's breakdown</i>");
        }
        const QString n = qs(name);
        QStringList out, in;
        for (const CommCost& c : b.comms) {
            if (c.layer != p.kind || c.layerGroup != p.group) continue;
            if (producerOf(c) == n)
                out << commLine(c);
            else if (consumerOf(c) == n)
                in << tr("%1 (from %2)").arg(commLine(c), qs(c.where).section(QStringLiteral(" -> "), 0, 0));
        }
        t += out.isEmpty() ? tr("<br>triggers no collective")
                           : tr("<br>triggers: %1").arg(out.join(QStringLiteral("<br>&nbsp;&nbsp;")));
        if (!in.isEmpty()) t += tr("<br>receives: %1").arg(in.join(QStringLiteral("<br>&nbsp;&nbsp;")));
    }
    t += QStringLiteral("<hr>") + tr("%1% of the %2 (operator + the collectives it triggers)")
                                      .arg(100 * cellShare(row, col), 0, 'f', 2)
                                      .arg(qs(b.phase));
    return t;
}

} // namespace sp::views
