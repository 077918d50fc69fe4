// The comparison's stacked bars (views/comparison.h): where each plan's step time goes (compute, memory,
// draft, NVLink, network, pipeline, bubble), with a tooltip per part.
#include "views/comparison.h"

#include "views/format.h"

#include <QBarCategoryAxis>
#include <QBarSet>
#include <QChart>
#include <QChartView>
#include <QComboBox>
#include <QHorizontalStackedBarSeries>
#include <QToolTip>
#include <QValueAxis>

#include <algorithm>

namespace sp::views {

QString ComparisonView::barAxisTitle() const {
    const auto axes = m_chart->axes(Qt::Horizontal);
    return axes.isEmpty() ? QString() : axes.first()->titleText();
}

QStringList ComparisonView::barCategories() const {
    const auto axes = m_chart->axes(Qt::Vertical);
    auto* cat = axes.isEmpty() ? nullptr : qobject_cast<QBarCategoryAxis*>(axes.first());
    return cat ? cat->categories() : QStringList();
}

QHorizontalStackedBarSeries* ComparisonView::barSeries() const {
    const auto all = m_chart->series();
    return all.isEmpty() ? nullptr : qobject_cast<QHorizontalStackedBarSeries*>(all.first());
}

void ComparisonView::refreshBars() {
    m_chart->removeAllSeries();
    for (QAbstractAxis* ax : m_chart->axes()) {
        m_chart->removeAxis(ax);
        delete ax;
    }
    const PlanRecordPtr L = left(), R = right();
    if (!L || !R) return;
    const bool prefill = m_phase->currentIndex() == 1;
    StepSplit a = stepSplit(L->breakdown(prefill)), b = stepSplit(R->breakdown(prefill));
    // Speculative decoding's draft passes apart from the operators they are counted with.
    auto draftOf = [](const Breakdown& br, StepSplit& split) {
        double ms = 0;
        for (const OpCost& o : br.ops)
            if (o.layer == LayerKind::Draft) {
                (o.memoryBound ? split.memoryMs : split.computeMs) -= o.timeMs;
                ms += o.timeMs;
            }
        return ms;
    };
    const double draftA = draftOf(L->breakdown(prefill), a), draftB = draftOf(R->breakdown(prefill), b);
    struct Cat {
        QString name;
        double va, vb;
        QColor color;
    };
    const Cat cats[] = {
        {tr("compute"), a.computeMs, b.computeMs, QColor(0x3b, 0x82, 0xf6)},
        {tr("memory"), a.memoryMs, b.memoryMs, QColor(0x93, 0xc5, 0xfd)},
        {tr("draft"), draftA, draftB, draftColor()},
        {tr("NVLink"), a.nvlinkMs + a.localMs, b.nvlinkMs + b.localMs, linkColor(LinkClass::NvLink)},
        {tr("network"), a.networkMs, b.networkMs, linkColor(LinkClass::Network)},
        {tr("pipeline"), a.pipelineMs, b.pipelineMs, QColor(0xf5, 0x9e, 0x0b)},
        {tr("bubble"), a.bubbleMs, b.bubbleMs, QColor(0xd1, 0xd5, 0xdb)}};
    auto* series = new QHorizontalStackedBarSeries;
    for (const Cat& c : cats) {
        if (c.va <= 0 && c.vb <= 0) continue;
        auto* set = new QBarSet(c.name);
        // Categories run bottom to top: right plan below, left plan on top.
        *set << c.vb << c.va;
        set->setColor(c.color);
        set->setBorderColor(c.color.darker(115));
        set->setLabelColor(c.color.lightnessF() > 0.6 ? QColor(0x1f, 0x29, 0x37) : Qt::white);
        series->append(set);
        const QString name = c.name, left = qs(L->label), right = qs(R->label);
        const double va = c.va, vb = c.vb, ta = a.total() + draftA, tb = b.total() + draftB;
        connect(set, &QBarSet::hovered, this, [=, this](bool on, int index) {
            if (!on) {
                QToolTip::hideText();
                return;
            }
            const bool isRight = index == 0;
            const double v = isRight ? vb : va, t = isRight ? tb : ta;
            QString tip = tr("<b>%1</b>: %2 %3 (%4% of its step)")
                              .arg((isRight ? right : left).toHtmlEscaped(), formatMs(v), name)
                              .arg(t > 0 ? 100 * v / t : 0, 0, 'f', 1);
            if (va > 0) tip += tr("<br>right / left: %1x").arg(vb / va, 0, 'f', 3);
            m_barTip = tip;
            QToolTip::showText(QCursor::pos(), tip, m_chartView);
        });
    }
    // Numbers on the bars: each part's milliseconds (too narrow a part shows none).
    series->setLabelsVisible(true);
    series->setLabelsFormat(QStringLiteral("@value"));
    series->setLabelsPrecision(3);
    series->setLabelsPosition(QAbstractBarSeries::LabelsCenter);
    series->setBarWidth(0.55);
    m_chart->addSeries(series);
    auto* cat = new QBarCategoryAxis;
    // Each bar names its plan and the batch it carries (the steps of two batches are not the same work).
    auto catLabel = [](const PlanRecord& r) {
        return tr("%1<br>batch %2")
            .arg(qs(r.label).section(QStringLiteral(" ("), 0, 0).toHtmlEscaped())
            .arg(r.metrics().batch);
    };
    QString right = catLabel(*R), left = catLabel(*L);
    if (right == left) right += tr(" (right)"); // the axis needs two names
    cat->append({right, left});
    auto* val = new QValueAxis;
    // The phase's long description ("serving step (253 decode + ...)") is the chart's tooltip.
    val->setTitleText(tr("ms per step (slowest stage)"));
    m_chartView->setToolTip(qs(L->breakdown(prefill).phase));
    val->setMin(0);
    val->setMax(std::max({a.total() + draftA, b.total() + draftB, 1e-6}) * 1.05);
    val->applyNiceNumbers();
    m_chart->addAxis(cat, Qt::AlignLeft);
    m_chart->addAxis(val, Qt::AlignBottom);
    series->attachAxis(cat);
    series->attachAxis(val);
    m_chart->setTitle(tr("Where the step time goes"));
    const bool decode = L->hasDecode() && R->hasDecode(), pre = L->hasPrefill() && R->hasPrefill();
    m_phase->setEnabled(decode && pre);
}

} // namespace sp::views
