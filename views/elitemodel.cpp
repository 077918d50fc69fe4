#include "views/elitemodel.h"

#include "views/format.h"

#include "core/cost/validity.h"

#include <QBrush>
#include <QFont>

#include <algorithm>

namespace sp::views {

std::vector<EliteEntry> mergeElites(const std::vector<std::pair<QString, std::vector<Candidate>>>& elites,
                                    int k) {
    struct Item {
        const Candidate* c;
        QString searcher;
        double score;
        size_t order;
    };
    std::vector<Item> all;
    size_t order = 0;
    for (const auto& [name, list] : elites)
        for (const Candidate& c : list) all.push_back({&c, name, planScore(c.metrics), order++});
    std::stable_sort(all.begin(), all.end(), [](const Item& a, const Item& b) { return a.score > b.score; });
    std::vector<EliteEntry> out;
    for (const Item& it : all) {
        auto same = std::find_if(out.begin(), out.end(),
                                 [&](const EliteEntry& e) { return e.candidate->plan == it.c->plan; });
        if (same != out.end()) {
            if (!same->searcher.split(QStringLiteral(", ")).contains(it.searcher))
                same->searcher += QStringLiteral(", ") + it.searcher;
            continue;
        }
        if (int(out.size()) >= k) continue;
        out.push_back({std::make_shared<const Candidate>(*it.c), it.searcher});
    }
    return out;
}

EliteModel::EliteModel(QObject* parent) : QAbstractTableModel(parent) {}

void EliteModel::setModel(const Model& model) {
    m_moe = model.moe.present();
    m_ops.clear();
    for (int i = 0; i < kOpCount; ++i)
        if (opRelevant(model, Op(i))) m_ops.push_back(Op(i));
    findCommonParts();
    if (!m_rows.empty()) emit dataChanged(index(0, 0), index(rowCount() - 1, ColumnCount - 1));
}

QStringList EliteModel::shardingParts(const Plan& p) const {
    QStringList parts;
    for (Op op : m_ops)
        if (p.choice(op) != megatronChoice(op))
            parts << QStringLiteral("%1 %2").arg(int(op) >= kBaseOpCount
                                                     ? QStringLiteral("moe.") + qs(kOpNames[size_t(op)])
                                                     : qs(kOpNames[size_t(op)]),
                                                 choiceName(op, p.choice(op)));
    return parts;
}

void EliteModel::findCommonParts() {
    m_commonParts.clear();
    if (m_rows.size() < 2) return;
    m_commonParts = shardingParts(m_rows.front().candidate->plan);
    for (const EliteEntry& e : m_rows) {
        const QStringList own = shardingParts(e.candidate->plan);
        m_commonParts.removeIf([&](const QString& part) { return !own.contains(part); });
    }
}

QString EliteModel::shardingText(const Plan& p, bool leadWithOwn) const {
    const sp::Degrees& d = p.degrees;
    if (d.tp == 1 && (!m_moe || d.ep * d.etp == 1)) return tr("unsharded (tp 1)");
    QStringList parts = shardingParts(p);
    QString text = parts.isEmpty() ? tr("Megatron recipe") : parts.join(QStringLiteral(", "));
    if (leadWithOwn && !m_commonParts.isEmpty()) {
        QStringList own = parts;
        own.removeIf([&](const QString& part) { return m_commonParts.contains(part); });
        if (!own.isEmpty() && own.size() < parts.size())
            text = own.join(QStringLiteral(", ")) + tr("; all rows: ") +
                   m_commonParts.join(QStringLiteral(", "));
    }
    // A plan whose later layers choose differently says so, with what they choose.
    if (!p.layerGroups.empty()) text += tr("; layer groups: %1").arg(qs(layerGroupsText(p, m_ops)));
    return text;
}

int EliteModel::rowOf(const Plan& plan) const {
    for (size_t i = 0; i < m_rows.size(); ++i)
        if (m_rows[i].candidate->plan == plan) return int(i);
    return -1;
}

void EliteModel::clear() {
    if (m_rows.empty()) return;
    beginResetModel();
    m_rows.clear();
    m_rank.clear();
    m_commonParts.clear();
    endResetModel();
}

void EliteModel::setEntries(std::vector<EliteEntry> entries) {
    // 1. Remove rows whose plan is gone (from the bottom, so indices stay valid).
    for (int r = int(m_rows.size()) - 1; r >= 0; --r) {
        const Plan& p = m_rows[size_t(r)].candidate->plan;
        const bool kept = std::any_of(entries.begin(), entries.end(),
                                      [&](const EliteEntry& e) { return e.candidate->plan == p; });
        if (kept) continue;
        beginRemoveRows({}, r, r);
        m_rows.erase(m_rows.begin() + r);
        m_rank.erase(m_rank.begin() + r);
        endRemoveRows();
    }
    // 2. Update the rows that stay; append the new ones. Row order is insertion order; the rank column (and
    // the proxy) gives the order by score.
    std::vector<EliteEntry> added;
    for (EliteEntry& e : entries) {
        const int r = rowOf(e.candidate->plan);
        if (r < 0) {
            added.push_back(std::move(e));
            continue;
        }
        m_rows[size_t(r)] = std::move(e);
    }
    if (!added.empty()) {
        beginInsertRows({}, int(m_rows.size()), int(m_rows.size() + added.size()) - 1);
        for (EliteEntry& e : added) {
            m_rows.push_back(std::move(e));
            m_rank.push_back(0);
        }
        endInsertRows();
    }
    for (size_t i = 0; i < m_rows.size(); ++i) {
        const double s = planScore(m_rows[i].candidate->metrics);
        m_rank[i] = 1 + int(std::count_if(m_rows.begin(), m_rows.end(), [&](const EliteEntry& o) {
                        return planScore(o.candidate->metrics) > s;
                    }));
    }
    findCommonParts();
    if (!m_rows.empty()) emit dataChanged(index(0, 0), index(rowCount() - 1, ColumnCount - 1));
}

int EliteModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : int(m_rows.size());
}
int EliteModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant EliteModel::headerData(int section, Qt::Orientation o, int role) const {
    if (o != Qt::Horizontal) return {};
    static const char* names[ColumnCount] = {"#",       "Throughput", "Per GPU",  "Roofline",
                                             "TTFT",    "TPOT",       "Batch",    "Memory",
                                             "Degrees", "Mesh",       "Searcher", "Sharding"};
    static const char* tips[ColumnCount] = {
        "Rank by throughput (infeasible plans last)",
        "Output tokens/s of the whole cluster (prefill: prompt tokens/s)",
        "Throughput per GPU",
        "Share of the roofline bound (peak compute and bandwidth, no communication)",
        "Time to first token",
        "Time per output token",
        "Sequences per replica per micro-batch (chosen by the cost model)",
        "Peak memory per GPU (of the usable capacity)",
        "Parallelism degrees (MoE layers: expert-parallel, expert-tensor, expert replicas), the layers per "
        "pipeline stage when the plan sets its own split, and speculative decoding when the plan drafts "
        "(\"mtp x1\": MTP, one draft token a step)",
        "Mesh order: axes packed innermost (inside a node) first",
        "The searcher that found the plan",
        "Operator choices that depart from the Megatron recipe (the first layer group's), and the later "
        "layer groups' where the plan has them"};
    if (section < 0 || section >= ColumnCount) return {};
    if (role == Qt::DisplayRole) return tr(names[section]);
    if (role == Qt::ToolTipRole) return tr(tips[section]);
    return {};
}

QVariant EliteModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() >= rowCount() || index.column() >= ColumnCount) return {};
    const EliteEntry& e = m_rows[size_t(index.row())];
    const Metrics& m = e.candidate->metrics;
    const Plan& p = e.candidate->plan;
    const int col = index.column();
    if (role == FeasibleRole) return m.feasible;
    if (role == SortRole || role == Qt::DisplayRole) {
        // Text columns sort by what they show.
        switch (col) {
        case Degrees: {
            // A plan's own pipeline split is part of its shape, and so is speculative decoding ("mtp x1"):
            // plans that differ only by them are told apart.
            QString text = degreesText(p.degrees, m_moe);
            if (!p.stageLayers.empty()) text += QStringLiteral(" | layers ") + qs(stageLayersText(p));
            if (p.spec.on()) text += QStringLiteral(" | ") + qs(specText(p.spec));
            return text;
        }
        case Mesh:
            return meshText(p);
        case Sharding:
            return shardingText(p, true);
        case Searcher:
            return e.searcher;
        default:
            break;
        }
    }
    if (role == SortRole) {
        switch (col) {
        case Rank:
            return m_rank[size_t(index.row())];
        case Throughput:
            return planScore(m);
        case PerGpu:
            return m.throughputPerGpu;
        case Roofline:
            return m.rooflineFraction;
        case Ttft:
            return m.ttftMs;
        case Tpot:
            return m.tpotMs;
        case Batch:
            return qlonglong(m.batch);
        case Memory:
            return m.memoryPerGpuGiB;
        default:
            return {};
        }
    }
    if (role == Qt::DisplayRole) {
        switch (col) {
        case Rank:
            return m_rank[size_t(index.row())];
        case Throughput:
            return m.feasible ? formatRate(m.throughput) : tr("infeasible");
        case PerGpu:
            return m.feasible ? formatCompact(m.throughputPerGpu) : QString();
        case Roofline:
            return m.feasible ? QStringLiteral("%1%").arg(100 * m.rooflineFraction, 0, 'f', 1) : QString();
        case Ttft: // 0: the workload has no such phase
            return m.ttftMs > 0 ? formatMs(m.ttftMs) : QStringLiteral("\u2013");
        case Tpot:
            return m.tpotMs > 0 ? formatMs(m.tpotMs) : QStringLiteral("\u2013");
        case Batch:
            return qlonglong(m.batch);
        case Memory:
            return QStringLiteral("%1 / %2 GiB")
                .arg(m.memoryPerGpuGiB, 0, 'f', 1)
                .arg(m.capacityGiB, 0, 'f', 0);
        default:
            return {};
        }
    }
    if (role == Qt::TextAlignmentRole) {
        if (col == Degrees || col == Mesh || col == Sharding || col == Searcher)
            return int(Qt::AlignLeft | Qt::AlignVCenter);
        return int(Qt::AlignRight | Qt::AlignVCenter);
    }
    if (role == Qt::ForegroundRole && !m.feasible) return QBrush(QColor(0x9c, 0xa3, 0xaf));
    if (role == Qt::DecorationRole && col == Searcher)
        return searcherColor(e.searcher.section(QLatin1Char(','), 0, 0));
    if (role == Qt::ToolTipRole && col == Sharding) return shardingText(p);
    if (role == Qt::ToolTipRole && col == Tpot && m.feasible && m.spec.on() && m.stepMs > 0)
        return tr("Speculative decoding (%1): the step, %2, over the %3 tokens it yields")
            .arg(specSummary(m.spec), formatMs(m.stepMs))
            .arg(m.tokensPerStep, 0, 'f', 2);
    if (role == Qt::ToolTipRole && !m.feasible)
        return tr("Infeasible: %1").arg(qs(m.violation.empty() ? std::string("?") : m.violation));
    if (role == Qt::FontRole && col == Throughput) {
        QFont f;
        f.setBold(true);
        return f;
    }
    return {};
}

} // namespace sp::views
