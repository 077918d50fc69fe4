#pragma once
// The elite table: the best distinct plans found by the searchers, with their metrics. A flat table model for
// a QSortFilterProxyModel; updates are applied as row inserts/removals/changes, so a selection survives the
// live updates of a running search.

#include "core/search/engine.h"

#include <QAbstractTableModel>
#include <QStringList>

#include <memory>
#include <vector>

namespace sp::views {

struct EliteEntry {
    std::shared_ptr<const Candidate> candidate;
    QString searcher; ///< who found it ("sa", or "sa, ga" when several did)
};

/// Merges the elite sets of several searchers: best first by planScore, a plan found by several listed once
/// (with every finder named), at most `k` entries.
std::vector<EliteEntry> mergeElites(const std::vector<std::pair<QString, std::vector<Candidate>>>& elites,
                                    int k);

class EliteModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column {
        Rank,
        Throughput,
        PerGpu,
        Roofline,
        Ttft,
        Tpot,
        Batch,
        Memory,
        Degrees,
        Mesh,
        Searcher,
        Sharding,
        ColumnCount
    };
    /// Numeric value for sorting (Qt::DisplayRole is formatted text).
    static constexpr int SortRole = Qt::UserRole;
    /// Whether the plan is feasible (bool).
    static constexpr int FeasibleRole = Qt::UserRole + 1;

    explicit EliteModel(QObject* parent = nullptr);

    /// The model the plans are for: MoE degrees (ep, etp, edp) show in the degrees column, and the sharding
    /// column lists the operators (of this model) whose choice departs from the Megatron recipe.
    void setModel(const Model& model);
    /// Replaces the rows, keeping rows whose plan stays (so views keep their selection).
    void setEntries(std::vector<EliteEntry> entries);
    void clear();
    const EliteEntry& entry(int row) const { return m_rows[size_t(row)]; }
    const std::vector<EliteEntry>& entries() const { return m_rows; }
    /// The row holding this plan, or -1.
    int rowOf(const Plan& plan) const;

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation o, int role = Qt::DisplayRole) const override;

private:
    /// The operator choices that depart from the Megatron recipe; with `leadWithOwn`, those every row shares
    /// come last ("...; all rows: ..."), so a narrow column shows what tells the rows apart.
    QString shardingText(const Plan& p, bool leadWithOwn = false) const;
    QStringList shardingParts(const Plan& p) const;
    void findCommonParts();
    QStringList m_commonParts; ///< departures every row (of two or more) has
    std::vector<EliteEntry> m_rows;
    /// Rank by score of each row, updated once per setEntries (so a row's data changes only with
    /// dataChanged).
    std::vector<int> m_rank;
    bool m_moe = false;
    std::vector<Op> m_ops; ///< operators relevant to the model
};

} // namespace sp::views
