#include "views/heatmap.h"

#include "core/cost/validity.h"
#include "views/format.h"
#include "views/meshgroups.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QHelpEvent>
#include <QLabel>
#include <QLinearGradient>
#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>

#include <algorithm>
#include <cmath>

namespace sp::views {

namespace {

constexpr Op kRowOrder[] = {Op::Embedding, Op::Norms,  Op::Qkv,     Op::Attention,     Op::OutProj, Op::FfnUp,
                            Op::FfnDown,   Op::Router, Op::Experts, Op::SharedExperts, Op::LmHead};

/// The MoE-layer override of a base operator, or the operator itself.
Op moeOverride(Op op) {
    switch (op) {
    case Op::Norms:
        return Op::MoeNorms;
    case Op::Qkv:
        return Op::MoeQkv;
    case Op::Attention:
        return Op::MoeAttention;
    case Op::OutProj:
        return Op::MoeOutProj;
    default:
        return op;
    }
}

bool inDense(Op op) {
    return op == Op::Norms || op == Op::Qkv || op == Op::Attention || op == Op::OutProj || op == Op::FfnUp ||
           op == Op::FfnDown;
}
bool inMoe(Op op) {
    return op == Op::Norms || op == Op::Qkv || op == Op::Attention || op == Op::OutProj || op == Op::Router ||
           op == Op::Experts || op == Op::SharedExperts;
}

/// The operator whose output layout a collective converts (the one that triggers it).
QString producerOf(const CommCost& c) {
    if (c.layer == LayerKind::Embedding) return QStringLiteral("embedding");
    if (c.layer == LayerKind::Head) return QStringLiteral("lm_head");
    const QString w = qs(c.where);
    return w.section(QStringLiteral(" -> "), 0, 0).section(QLatin1Char(' '), 0, 0);
}
QString consumerOf(const CommCost& c) {
    const QString w = qs(c.where);
    return w.contains(QStringLiteral(" -> ")) ? w.section(QStringLiteral(" -> "), 1, 1) : QString();
}

/// A breakdown row's time per layer: rows of a layer group are weighted by its share of the slowest stage's
/// layers of that kind (OpCost::groupShare).
double perLayerMs(double timeMs, double groupShare) {
    return groupShare > 0 ? timeMs / groupShare : timeMs;
}

QString commLine(const CommCost& c) {
    return QObject::tr("%1 over %2, %3 GPUs, %4 per GPU, %5")
        .arg(qs(nameOf(c.kind)), qs(nameOf(c.link)))
        .arg(c.group)
        .arg(formatBytes(c.bytes), formatMs(perLayerMs(c.timeMs, c.groupShare)));
}

/// The layer group of each of the model's `layers` layers (all 0 without groups; a plan whose groups do
/// not cover the model keeps its last group for the rest, as Plan::choicesAt does).
std::vector<int> layerGroupOfLayer(const Plan& plan, int layers) {
    std::vector<int> out(size_t(std::max(0, layers)), 0);
    int l = 0;
    for (size_t g = 0; g < plan.layerGroups.size(); ++g)
        for (int i = 0; i < plan.layerGroups[g].layers && l < layers; ++i) out[size_t(l++)] = int(g);
    for (; l < layers && !plan.layerGroups.empty(); ++l) out[size_t(l)] = int(plan.layerGroups.size()) - 1;
    return out;
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

ShardingHeatmap::ShardingHeatmap(QWidget* parent) : QWidget(parent) {
    setMouseTracking(true);
    setAttribute(Qt::WA_OpaquePaintEvent);
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Expanding);
}

void ShardingHeatmap::setPlan(std::shared_ptr<const Scenario> scenario, PlanRecordPtr plan) {
    m_scenario = std::move(scenario);
    m_plan = std::move(plan);
    rebuild();
}

void ShardingHeatmap::setColorBy(ColorBy c) {
    m_colorBy = c;
    update();
}

void ShardingHeatmap::setColumns(Columns c) {
    m_columns = c;
    rebuild();
}

void ShardingHeatmap::setPrefill(bool prefill) {
    m_prefill = prefill;
    rebuild();
}

const Breakdown* ShardingHeatmap::breakdown() const {
    return m_plan ? &m_plan->breakdown(m_prefill) : nullptr;
}

QString ShardingHeatmap::rowName(int row) const {
    return row >= 0 && row < rowCount() ? qs(kOpNames[size_t(m_rows[size_t(row)])]) : QString();
}

void ShardingHeatmap::rebuild() {
    m_rows.clear();
    m_cols.clear();
    m_total = m_maxShare = 0;
    m_hoverRow = m_hoverCol = -1;
    if (!m_scenario || !m_plan) {
        update();
        return;
    }
    const Model& model = m_scenario->model;
    const Plan& plan = m_plan->plan;
    const Breakdown& b = *breakdown();
    for (Op op : kRowOrder)
        if (opRelevant(model, op) || opRelevant(model, moeOverride(op))) m_rows.push_back(op);

    const int L = int(model.layers);
    const auto spans = stageSpans(L, plan);
    auto stageOfLayer = [&](int l) {
        for (size_t i = 0; i < spans.size(); ++i)
            if (l < spans[i].begin + spans[i].count) return int(i);
        return int(spans.size()) - 1;
    };
    if (m_columns == Columns::Layers) {
        for (int l = 0; l < L; ++l) m_cols.push_back({QString::number(l), stageOfLayer(l), l, 1, {}});
    } else {
        for (size_t i = 0; i < spans.size(); ++i)
            m_cols.push_back({tr("stage %1").arg(i), int(i), spans[i].begin, spans[i].count, {}});
    }

    // Per layer of a kind and layer group: the breakdown rows of that group, whose times are weighted by the
    // group's share of the slowest stage's layers of the kind (a group the slowest stage does not hold has
    // no rows).
    auto opMs = [&](LayerKind k, int g, Op op) {
        const std::string name(kOpNames[size_t(op)]);
        for (const OpCost& o : b.ops)
            if (o.layer == k && o.layerGroup == g && o.op == name) return perLayerMs(o.timeMs, o.groupShare);
        return 0.0;
    };
    auto commMs = [&](LayerKind k, int g, Op op) {
        const QString name = qs(kOpNames[size_t(op)]);
        double t = 0;
        for (const CommCost& c : b.comms)
            if (c.layer == k && c.layerGroup == g && producerOf(c) == name)
                t += perLayerMs(c.timeMs, c.groupShare);
        return t;
    };
    auto part = [&](Op op, LayerKind k, int g, int count) {
        const int8_t choice =
            plan.layerGroups.empty() ? plan.choice(op) : plan.layerGroups[size_t(g)].choices[size_t(op)];
        return Part{op, choice, k, g, count, opMs(k, g, op), commMs(k, g, op)};
    };
    const std::vector<int> groupOfLayer = layerGroupOfLayer(plan, L);
    for (Column& col : m_cols) {
        const int begin = col.firstLayer, end = col.firstLayer + col.layers;
        // Layers of the column by layer group, then kind: MoE layers lie where the model says (after a dense
        // prefix, or interleaved: Llama 4).
        std::vector<std::pair<int, int>> byGroup; // (dense, moe) layers per group
        for (int l = begin; l < end; ++l) {
            const size_t g = size_t(groupOfLayer[size_t(l)]);
            if (byGroup.size() <= g) byGroup.resize(g + 1);
            (model.isMoeLayer(l) ? byGroup[g].second : byGroup[g].first) += 1;
        }
        for (Op op : m_rows) {
            Cell cell;
            if (op == Op::Embedding) {
                if (begin == 0) cell.parts.push_back(part(op, LayerKind::Embedding, 0, 1));
            } else if (op == Op::LmHead) {
                if (end == L) cell.parts.push_back(part(op, LayerKind::Head, 0, 1));
            } else {
                for (size_t g = 0; g < byGroup.size(); ++g) {
                    const auto [dense, moe] = byGroup[g];
                    if (dense > 0 && inDense(op))
                        cell.parts.push_back(part(op, LayerKind::Dense, int(g), dense));
                    if (moe > 0 && inMoe(op))
                        cell.parts.push_back(part(moeOverride(op), LayerKind::Moe, int(g), moe));
                }
            }
            for (const Part& p : cell.parts) cell.timeMs += p.count * (p.opMs + p.commMs);
            m_total += cell.timeMs;
            col.cells.push_back(std::move(cell));
        }
    }
    for (const Column& col : m_cols)
        for (const Cell& c : col.cells)
            m_maxShare = std::max(m_maxShare, m_total > 0 ? c.timeMs / m_total : 0.0);
    updateGeometry();
    update();
}

double ShardingHeatmap::cellShare(int row, int col) const {
    if (col < 0 || col >= columnCount() || row < 0 || row >= rowCount() || m_total <= 0) return 0;
    return m_cols[size_t(col)].cells[size_t(row)].timeMs / m_total;
}

double ShardingHeatmap::cellMs(int row, int col) const {
    if (col < 0 || col >= columnCount() || row < 0 || row >= rowCount()) return 0;
    return m_cols[size_t(col)].cells[size_t(row)].timeMs;
}

QString ShardingHeatmap::cellChoice(int row, int col) const {
    if (col < 0 || col >= columnCount() || row < 0 || row >= rowCount()) return {};
    QStringList names;
    for (const Part& p : m_cols[size_t(col)].cells[size_t(row)].parts) {
        const QString n = choiceName(p.op, p.choice);
        if (!names.contains(n)) names << n;
    }
    return names.join(QStringLiteral(" / "));
}

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

QSize ShardingHeatmap::sizeHint() const {
    return {900, 520};
}
QSize ShardingHeatmap::minimumSizeHint() const {
    return {360, 240};
}

bool ShardingHeatmap::cellAt(const QPoint& pos, int& row, int& col) const {
    const Layout lay = layoutFor(rect(), fontMetrics());
    if (!lay.grid.contains(pos) || lay.colWidth <= 0 || lay.rowHeight <= 0) return false;
    col = std::min(columnCount() - 1, int((pos.x() - lay.grid.left()) / lay.colWidth));
    row = std::min(rowCount() - 1, int((pos.y() - lay.grid.top()) / lay.rowHeight));
    return true;
}

bool ShardingHeatmap::event(QEvent* e) {
    if (e->type() == QEvent::ToolTip) {
        auto* he = static_cast<QHelpEvent*>(e);
        int row, col;
        const QString tip = cellAt(he->pos(), row, col) ? cellToolTip(row, col) : QString();
        if (tip.isEmpty())
            QToolTip::hideText();
        else
            QToolTip::showText(he->globalPos(), tip, this);
        return true;
    }
    return QWidget::event(e);
}

void ShardingHeatmap::mouseMoveEvent(QMouseEvent* e) {
    int row = -1, col = -1;
    if (!cellAt(e->position().toPoint(), row, col)) row = col = -1;
    if (row != m_hoverRow || col != m_hoverCol) {
        m_hoverRow = row;
        m_hoverCol = col;
        update();
    }
}

void ShardingHeatmap::leaveEvent(QEvent*) {
    m_hoverRow = m_hoverCol = -1;
    update();
}

void ShardingHeatmap::paintEvent(QPaintEvent*) {
    QPainter p(this);
    paintTo(p, rect());
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

// ---------------------------------------------------------------------------------------------------------------

ShardingView::ShardingView(QWidget* parent) : QWidget(parent) {
    m_map = new ShardingHeatmap(this);
    m_colorBy = new QComboBox(this);
    m_colorBy->addItems({tr("Sharding choice"), tr("Share of step time")});
    m_colorBy->setToolTip(
        tr("Colour cells by the operator's sharding choice, or by its share of the step time"));
    m_columns = new QComboBox(this);
    m_columns->addItems({tr("Layers"), tr("Pipeline stages")});
    m_columns->setToolTip(tr("One column per layer, or one per pipeline stage"));
    m_phase = new QComboBox(this);
    m_phase->addItems({tr("Decode step"), tr("Prefill pass")});
    m_phase->setToolTip(tr("Which pass of the workload the times come from"));
    auto* bar = new QHBoxLayout;
    bar->setContentsMargins(8, 6, 8, 0);
    auto label = [this](const QString& t) { return new QLabel(t, this); };
    bar->addWidget(label(tr("Colour:")));
    bar->addWidget(m_colorBy);
    bar->addSpacing(12);
    bar->addWidget(label(tr("Columns:")));
    bar->addWidget(m_columns);
    bar->addSpacing(12);
    bar->addWidget(label(tr("Phase:")));
    bar->addWidget(m_phase);
    bar->addStretch(1);
    auto* lay = new QVBoxLayout(this);
    lay->setContentsMargins(0, 0, 0, 0);
    lay->addLayout(bar);
    lay->addWidget(m_map, 1);
    connect(m_colorBy, &QComboBox::currentIndexChanged, this, [this](int i) {
        m_map->setColorBy(i == 0 ? ShardingHeatmap::ColorBy::Choice : ShardingHeatmap::ColorBy::TimeShare);
    });
    connect(m_columns, &QComboBox::currentIndexChanged, this, [this](int i) {
        m_map->setColumns(i == 0 ? ShardingHeatmap::Columns::Layers : ShardingHeatmap::Columns::Stages);
    });
    connect(m_phase, &QComboBox::currentIndexChanged, this, [this](int i) { m_map->setPrefill(i == 1); });
}

void ShardingView::setPlan(std::shared_ptr<const Scenario> scenario, PlanRecordPtr plan) {
    const bool decode = !plan || plan->hasDecode(), prefill = plan && plan->hasPrefill();
    {
        const QSignalBlocker b(m_phase);
        if (!decode)
            m_phase->setCurrentIndex(1);
        else if (!prefill)
            m_phase->setCurrentIndex(0);
        m_phase->setEnabled(decode && prefill);
    }
    m_map->setPrefill(m_phase->currentIndex() == 1);
    m_map->setPlan(std::move(scenario), std::move(plan));
}

} // namespace sp::views
