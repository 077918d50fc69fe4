#pragma once
// The learning curve of a learning searcher (rl): any number of named series sampled per iteration (e.g. mean
// reward, entropy, elite mean). Until the first point arrives it shows a placeholder saying what will fill
// it. Points are buffered and drawn at most every 40 ms, like the search chart.

#include <QHash>
#include <QList>
#include <QPair>
#include <QPointF>
#include <QTimer>
#include <QVector>
#include <QWidget>

class QChart;
class QChartView;
class QLabel;
class QLineSeries;
class QStackedLayout;
class QValueAxis;

namespace sp::views {

class LearningCurveView : public QWidget {
    Q_OBJECT
public:
    explicit LearningCurveView(QWidget* parent = nullptr);

    /// Series listed here go on the right-hand axis (e.g. "entropy", whose scale differs from rewards').
    void setSecondarySeries(const QStringList& names);
    /// One iteration's values, by series name. Series are created on first use, in order of appearance.
    void appendIteration(int iteration, const QList<QPair<QString, double>>& values);
    void clear();
    void setPlaceholderText(const QString& text);

    QStringList seriesNames() const { return m_order; }
    QVector<QPointF> points(const QString& name) const { return m_data.value(name); }
    bool showingPlaceholder() const;
    QWidget* plotWidget() const;

private:
    void redraw();
    QLineSeries* series(const QString& name);

    QStackedLayout* m_stack = nullptr;
    QLabel* m_placeholder = nullptr;
    QChart* m_chart = nullptr;
    QChartView* m_view = nullptr;
    QValueAxis *m_x = nullptr, *m_yLeft = nullptr, *m_yRight = nullptr;
    QStringList m_secondary, m_order;
    QHash<QString, QVector<QPointF>> m_data;
    QHash<QString, QLineSeries*> m_series;
    QTimer m_flush;
};

} // namespace sp::views
