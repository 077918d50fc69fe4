#pragma once
// The sharding heatmap: operators (rows) by layers or pipeline stages (columns), each cell coloured by its
// sharding choice or by its share of the step time, from the cost model's breakdown. Custom painted; the same
// painting serves the screen and the PNG/SVG export.

#include "core/model/scenario.h"
#include "views/planrecord.h"

#include <QWidget>

#include <memory>
#include <utility>
#include <vector>

class QButtonGroup;
class QComboBox;

namespace sp::views {

class ShardingHeatmap : public QWidget {
    Q_OBJECT
public:
    enum class ColorBy { Choice, TimeShare };
    enum class Columns { Layers, Stages };

    explicit ShardingHeatmap(QWidget* parent = nullptr);

    void setPlan(std::shared_ptr<const Scenario> scenario, PlanRecordPtr plan);
    void setColorBy(ColorBy c);
    void setColumns(Columns c);
    void setPrefill(bool prefill);
    ColorBy colorBy() const { return m_colorBy; }
    Columns columns() const { return m_columns; }
    bool prefill() const { return m_prefill; }

    int rowCount() const { return int(m_rows.size()); }
    int columnCount() const { return int(m_cols.size()); }
    QString rowName(int row) const;
    /// The tooltip text of a cell (empty for a cell the operator does not occur in).
    QString cellToolTip(int row, int col) const;
    /// The share of the pass time in a cell, in [0, 1].
    double cellShare(int row, int col) const;
    /// The choice name(s) shown in a cell ("column", or "column / token" when dense and MoE layers, or the
    /// layer groups a stage column spans, differ).
    QString cellChoice(int row, int col) const;
    /// The time of a cell, ms: every occurrence of the operator in the column, with the collectives it
    /// triggers (per layer: the breakdown row of the layer's kind and group, timeMs / groupShare).
    double cellMs(int row, int col) const;
    /// A column's pipeline stage and the layers it covers (first layer, count).
    int columnStage(int col) const { return m_cols[size_t(col)].stage; }
    std::pair<int, int> columnLayers(int col) const {
        return {m_cols[size_t(col)].firstLayer, m_cols[size_t(col)].layers};
    }

    /// Paints the whole heatmap (title, headers, cells, legend) into `rect`.
    void paintTo(QPainter& p, const QRect& rect) const;
    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

protected:
    void paintEvent(QPaintEvent*) override;
    bool event(QEvent* e) override;
    void mouseMoveEvent(QMouseEvent* e) override;
    void leaveEvent(QEvent* e) override;

private:
    struct Part {
        Op op;
        int choice = 0;
        LayerKind kind;
        int group = 0;     ///< the layer group (Plan::layerGroups; 0 without groups)
        int count = 0;     ///< layers of this kind and group in the column
        double opMs = 0;   ///< per occurrence
        double commMs = 0; ///< collectives it triggers, per occurrence
    };
    struct Cell {
        std::vector<Part> parts;
        double timeMs = 0; ///< all occurrences in the column
    };
    struct Column {
        QString label;
        int stage = 0;
        int firstLayer = 0, layers = 0;
        std::vector<Cell> cells; ///< one per row
    };
    struct Layout {
        QRect title, header, grid, legend;
        int labelWidth = 0;
        double colWidth = 0, rowHeight = 0;
    };
    void rebuild();
    Layout layoutFor(const QRect& r, const QFontMetrics& fm) const;
    bool cellAt(const QPoint& pos, int& row, int& col) const;
    const Breakdown* breakdown() const;

    std::shared_ptr<const Scenario> m_scenario;
    PlanRecordPtr m_plan;
    ColorBy m_colorBy = ColorBy::Choice;
    Columns m_columns = Columns::Layers;
    bool m_prefill = false;
    std::vector<Op> m_rows; ///< base operators shown
    std::vector<Column> m_cols;
    double m_total = 0, m_maxShare = 0;
    int m_hoverRow = -1, m_hoverCol = -1;
};

/// The heatmap with its toolbar (colour by, columns, phase).
class ShardingView : public QWidget {
    Q_OBJECT
public:
    explicit ShardingView(QWidget* parent = nullptr);
    ShardingHeatmap* heatmap() const { return m_map; }
    void setPlan(std::shared_ptr<const Scenario> scenario, PlanRecordPtr plan);

private:
    ShardingHeatmap* m_map = nullptr;
    QComboBox* m_colorBy = nullptr;
    QComboBox* m_columns = nullptr;
    QComboBox* m_phase = nullptr;
};

} // namespace sp::views
