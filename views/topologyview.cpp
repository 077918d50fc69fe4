// The topology canvas in its view: the hover line, Fit and zoom buttons, the scroll area it pans.
#include "views/topology.h"

#include <QEvent>
#include <QHBoxLayout>
#include <QLabel>
#include <QScrollArea>
#include <QScrollBar>
#include <QToolButton>
#include <QVBoxLayout>

namespace sp::views {

TopologyView::TopologyView(QWidget* parent) : QWidget(parent) {
    m_canvas = new TopologyCanvas;
    m_info = new QLabel(this);
    m_info->setWordWrap(true);
    m_info->setContentsMargins(10, 6, 10, 2);
    m_info->setStyleSheet(QStringLiteral("color: #374151;"));
    m_info->setText(tr("Hover a GPU to outline its tensor-, data- and expert-parallel groups."));
    auto* scroll = new QScrollArea(this);
    m_scroll = scroll;
    scroll->setWidget(m_canvas);
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    auto button = [this](const QString& text, const QString& tip) {
        auto* b = new QToolButton(this);
        b->setText(text);
        b->setToolTip(tip);
        b->setAutoRaise(true);
        return b;
    };
    QToolButton* fit = button(tr("Fit"), tr("Fit the cluster to the window (smallest GPU cells)"));
    QToolButton* out = button(QStringLiteral("−"), tr("Zoom out (Ctrl+wheel)"));
    QToolButton* in = button(QStringLiteral("+"), tr("Zoom in (Ctrl+wheel); drag to pan"));
    m_zoom = new QLabel(this);
    m_zoom->setStyleSheet(QStringLiteral("color: #6b7280;"));
    auto* bar = new QHBoxLayout;
    bar->setContentsMargins(0, 0, 8, 0);
    bar->addWidget(m_info, 1);
    bar->addWidget(fit);
    bar->addWidget(out);
    bar->addWidget(in);
    bar->addWidget(m_zoom);
    auto* lay = new QVBoxLayout(this);
    lay->setContentsMargins(0, 0, 0, 0);
    lay->setSpacing(0);
    lay->addLayout(bar);
    lay->addWidget(scroll, 1);
    connect(fit, &QToolButton::clicked, this, [this] {
        m_canvas->fit();
        m_scroll->verticalScrollBar()->setValue(0);
        m_scroll->horizontalScrollBar()->setValue(0);
    });
    // Zoom from the cells as drawn: the layout draws them larger than the smallest allowed when there is
    // room.
    connect(out, &QToolButton::clicked, this, [this] { m_canvas->setMinCell(m_canvas->cell() * 4 / 5); });
    connect(in, &QToolButton::clicked, this, [this] { m_canvas->setMinCell(m_canvas->cell() * 5 / 4 + 1); });
    auto showZoom = [this] {
        m_zoom->setText(m_canvas->fitted() ? tr("fitted") : tr("cells ≥ %1 px").arg(m_canvas->minCell()));
    };
    connect(m_canvas, &TopologyCanvas::zoomChanged, this, showZoom);
    showZoom();
    // Fit follows the visible part: a taller or shorter viewport lays the cluster out again.
    scroll->viewport()->installEventFilter(this);
    connect(m_canvas, &TopologyCanvas::panRequested, this, [scroll](QPoint d) {
        scroll->horizontalScrollBar()->setValue(scroll->horizontalScrollBar()->value() + d.x());
        scroll->verticalScrollBar()->setValue(scroll->verticalScrollBar()->value() + d.y());
    });
    connect(m_canvas, &TopologyCanvas::hoveredGpuChanged, this, [this](int gpu) {
        m_info->setText(gpu < 0 ? tr("Hover a GPU to outline its tensor-, data- and expert-parallel groups.")
                                : m_canvas->gpuDescription(gpu));
    });
}

bool TopologyView::eventFilter(QObject* watched, QEvent* e) {
    if (watched == m_scroll->viewport() && e->type() == QEvent::Resize && m_canvas->fitted()) {
        const int h = m_canvas->minimumHeightFor(m_canvas->width());
        if (h != m_canvas->minimumHeight()) m_canvas->setMinimumHeight(h);
        m_canvas->update();
    }
    return QWidget::eventFilter(watched, e);
}

void TopologyView::setPlan(std::shared_ptr<const Scenario> scenario, PlanRecordPtr plan) {
    m_canvas->setPlan(std::move(scenario), std::move(plan));
    if (m_canvas->hoveredGpu() >= 0) m_info->setText(m_canvas->gpuDescription(m_canvas->hoveredGpu()));
}

} // namespace sp::views
