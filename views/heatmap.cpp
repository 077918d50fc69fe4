#include "views/heatmap.h"

#include "core/cost/validity.h"
#include "views/format.h"
#include "views/heatmap_p.h"
#include "views/meshgroups.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QHelpEvent>
#include <QLabel>
#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>

#include <algorithm>

namespace sp::views {

using sharding::layerGroupOfLayer;
using sharding::perLayerMs;
using sharding::producerOf;

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
