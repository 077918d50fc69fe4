#include "views/timeline.h"

#include "views/format.h"
#include "views/meshgroups.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QMouseEvent>
#include <QPainter>
#include <QScrollArea>
#include <QScrollBar>
#include <QShortcut>
#include <QToolButton>
#include <QToolTip>
#include <QVBoxLayout>
#include <QWheelEvent>

#include <algorithm>
#include <cmath>

namespace sp::views {

namespace {
const QColor kCompute(0x3b, 0x82, 0xf6), kMemory(0x93, 0xc5, 0xfd), kPipeline(0xf5, 0x9e, 0x0b),
    kBubble(0xd1, 0xd5, 0xdb);

QString collectiveName(Collective c) {
    switch (c) {
    case Collective::AllReduce:
        return QStringLiteral("all-reduce");
    case Collective::ReduceScatter:
        return QStringLiteral("reduce-scatter");
    case Collective::AllGather:
        return QStringLiteral("all-gather");
    case Collective::AllToAll:
        return QStringLiteral("all-to-all");
    case Collective::SendRecv:
        return QStringLiteral("send/recv");
    case Collective::Gather:
        return QStringLiteral("gather");
    }
    return {};
}

QString linkName(LinkClass l) {
    switch (l) {
    case LinkClass::Local:
        return QObject::tr("local");
    case LinkClass::NvLink:
        return QObject::tr("NVLink");
    case LinkClass::Network:
        return QObject::tr("network");
    }
    return {};
}

/// The operator a collective follows: "qkv -> attention" follows qkv.
QString fromOp(const std::string& where) {
    const QString w = qs(where);
    const int i = w.indexOf(QStringLiteral(" ->"));
    return (i < 0 ? w : w.left(i)).trimmed();
}

QColor itemColor(const TimelineItem& it) {
    switch (it.kind) {
    case TimelineItem::Kind::Compute:
        return kCompute;
    case TimelineItem::Kind::Memory:
        return kMemory;
    case TimelineItem::Kind::Comm:
        return linkColor(it.link);
    case TimelineItem::Kind::Pipeline:
        return kPipeline;
    case TimelineItem::Kind::Bubble:
        return kBubble;
    case TimelineItem::Kind::Draft:
        return draftColor();
    }
    return kCompute;
}

/// The draft block's label from the breakdown's "mtp x3: 1 pass over 768 tokens + 2 over 256":
/// "draft: mtp x3 \u2014 1 pass over 768 tokens + 2 over 256".
QString draftName(const std::string& draft) {
    QString d = qs(draft);
    const int colon = d.indexOf(QStringLiteral(": "));
    if (colon >= 0) d.replace(colon, 2, QStringLiteral(" \u2014 "));
    return QObject::tr("draft: %1").arg(d);
}

bool onCommTrack(const TimelineItem& it) {
    return it.kind == TimelineItem::Kind::Comm || it.kind == TimelineItem::Kind::Pipeline;
}
} // namespace

Timeline buildTimeline(const Scenario& s, const PlanRecord& rec, bool prefill, const TimelineOptions& o) {
    Timeline t;
    const Breakdown& b = rec.breakdown(prefill);
    const int pp = std::max(1, rec.plan.degrees.pp);
    t.stages = pp;
    for (const StageSpan& span : stageSpans(int(s.model.layers), rec.plan))
        t.layers.emplace_back(span.begin, span.count);
    t.stageMs.assign(size_t(pp), 0.0);
    auto kindOf = [&](int layer) { return s.model.isMoeLayer(layer) ? LayerKind::Moe : LayerKind::Dense; };
    for (int st = 0; st < pp; ++st) {
        double now = 0;
        auto place = [&](LayerKind kind, int layer) {
            std::vector<const CommCost*> comms;
            for (const CommCost& c : b.comms)
                if (c.layer == kind) comms.push_back(&c);
            std::vector<bool> used(comms.size(), false);
            auto placeComm = [&](const CommCost& c, double prevOpMs) {
                TimelineItem it;
                it.kind = TimelineItem::Kind::Comm;
                it.stage = st;
                it.layer = layer;
                it.hiddenMs = o.hiddenMs ? std::clamp(o.hiddenMs(c), 0.0, std::min(prevOpMs, c.timeMs)) : 0.0;
                it.durMs = c.timeMs;
                if (c.overlapped && c.fullMs > c.timeMs) {
                    // Two-batch overlap: the breakdown gives the exposed part; the rest ran under the other
                    // half-batch's compute.
                    it.durMs = c.fullMs;
                    it.hiddenMs = c.fullMs - c.timeMs;
                }
                it.startMs = now - it.hiddenMs;
                it.link = c.link;
                it.name = collectiveName(c.kind);
                it.detail = QObject::tr("%1 over %2 GPUs (%3), %4 per GPU")
                                .arg(qs(c.where))
                                .arg(c.group)
                                .arg(linkName(c.link), formatBytes(c.bytes));
                now = std::max(now, it.endMs());
                t.items.push_back(it);
            };
            for (const OpCost& op : b.ops) {
                if (op.layer != kind) continue;
                TimelineItem it;
                it.kind = op.memoryBound ? TimelineItem::Kind::Memory : TimelineItem::Kind::Compute;
                it.stage = st;
                it.layer = layer;
                it.startMs = now;
                it.durMs = op.timeMs;
                it.name = qs(op.op);
                it.detail =
                    QObject::tr("%1; %2-bound (compute %3, memory %4)")
                        .arg(qs(op.choice), op.memoryBound ? QObject::tr("memory") : QObject::tr("compute"),
                             formatMs(op.computeMs), formatMs(op.memoryMs));
                now += op.timeMs;
                t.items.push_back(it);
                for (size_t i = 0; i < comms.size(); ++i)
                    if (!used[i] && fromOp(comms[i]->where) == it.name) {
                        used[i] = true;
                        placeComm(*comms[i], op.timeMs);
                    }
            }
            for (size_t i = 0; i < comms.size(); ++i)
                if (!used[i]) placeComm(*comms[i], 0);
        };
        if (st == 0) place(LayerKind::Embedding, -1);
        const auto [first, count] = t.layers[size_t(st)];
        for (int l = first; l < first + count; ++l) place(kindOf(l), l);
        if (st == pp - 1) place(LayerKind::Head, -1);
        if (st == pp - 1 && !b.draft.empty()) {
            // Speculative decoding: the draft passes follow the verify pass (everything above) on the last
            // stage. The breakdown lists them only when the last stage is the slowest.
            const Metrics& m = rec.metrics();
            TimelineItem it;
            it.kind = TimelineItem::Kind::Draft;
            it.stage = st;
            it.startMs = now;
            it.durMs = b.draftMs;
            it.name = draftName(b.draft);
            it.detail = QObject::tr("speculative decoding: %1; after the verify pass")
                            .arg(specSummary(m.spec.on() ? m.spec : rec.plan.spec, m.tokensPerStep));
            now += it.durMs;
            t.items.push_back(it);
        }
        if (st < pp - 1 && b.pipelineTransferMs > 0) {
            TimelineItem it;
            it.kind = TimelineItem::Kind::Pipeline;
            it.stage = st;
            it.startMs = now;
            it.durMs = b.pipelineTransferMs;
            it.name = QObject::tr("send to stage %1").arg(st + 1);
            it.detail = QObject::tr("activations to the next pipeline stage");
            now += it.durMs;
            t.items.push_back(it);
        }
        t.stageMs[size_t(st)] = now;
    }
    t.stepMs = *std::max_element(t.stageMs.begin(), t.stageMs.end());
    for (int st = 0; st < pp; ++st) {
        const double idle = t.stepMs - t.stageMs[size_t(st)];
        if (idle <= 1e-9 * t.stepMs) continue;
        TimelineItem it;
        it.kind = TimelineItem::Kind::Bubble;
        it.stage = st;
        it.startMs = t.stageMs[size_t(st)];
        it.durMs = idle;
        it.name = QObject::tr("bubble");
        it.detail = QObject::tr("stage %1 waits for the slowest stage").arg(st);
        t.items.push_back(it);
    }
    std::stable_sort(t.items.begin(), t.items.end(), [](const TimelineItem& a, const TimelineItem& b) {
        if (a.stage != b.stage) return a.stage < b.stage;
        if (onCommTrack(a) != onCommTrack(b)) return !onCommTrack(a);
        return a.startMs < b.startMs;
    });
    return t;
}

// ---------------------------------------------------------------------------------------------------------------

TimelineCanvas::TimelineCanvas(QWidget* parent) : QWidget(parent) {
    setMouseTracking(true);
    setAttribute(Qt::WA_OpaquePaintEvent);
}

void TimelineCanvas::setPlan(std::shared_ptr<const Scenario> scenario, PlanRecordPtr plan) {
    m_scenario = std::move(scenario);
    m_plan = std::move(plan);
    rebuild();
}

void TimelineCanvas::setPrefill(bool prefill) {
    m_prefill = prefill;
    rebuild();
}

void TimelineCanvas::rebuild() {
    m_timeline = m_scenario && m_plan ? buildTimeline(*m_scenario, *m_plan, m_prefill) : Timeline{};
    m_hover = -1;
    const Frame f = frame(QRect(0, 0, std::max(width(), 360), 1));
    // A plan that drafts has a line more under the legend, and maybe a second legend line.
    const int extra = m_plan && m_plan->metrics().spec.on() ? 2 * (QFontMetrics(font()).height() + 4) : 0;
    setMinimumHeight(std::max(200, 60 + m_timeline.stages * f.laneH + 60 + extra));
    update();
}

TimelineCanvas::Frame TimelineCanvas::frame(const QRect& r) const {
    Frame f;
    const int lh = QFontMetrics(font()).height();
    f.trackH = std::max(12, lh);
    // Many stages: thinner lanes (the canvas scrolls past that).
    f.laneH = m_timeline.stages > 16 ? 2 * f.trackH + 6 : 2 * f.trackH + 18;
    const int top = r.top() + lh + 30, left = r.left() + kLabelsW;
    const int h = std::max(f.laneH, m_timeline.stages * f.laneH);
    f.plot = QRect(left, top, std::max(50, r.width() - kLabelsW - kRightW), h);
    f.msPerPx = m_timeline.stepMs > 0 ? m_timeline.stepMs / f.plot.width() : 1;
    return f;
}

QRectF TimelineCanvas::itemRect(int i, const QRect& canvas) const {
    if (i < 0 || i >= int(m_timeline.items.size())) return {};
    return itemRectIn(frame(canvas), i);
}

QRectF TimelineCanvas::itemRectIn(const Frame& f, int i) const {
    const TimelineItem& it = m_timeline.items[size_t(i)];
    const double x = f.plot.left() + it.startMs / f.msPerPx, w = std::max(1.0, it.durMs / f.msPerPx);
    const int laneTop = f.plot.top() + it.stage * f.laneH + 3;
    const int y = onCommTrack(it) ? laneTop + f.trackH + 2 : laneTop;
    const int h = it.kind == TimelineItem::Kind::Bubble ? 2 * f.trackH + 2 : f.trackH;
    return QRectF(x, y, w, h);
}

int TimelineCanvas::itemAt(const QPoint& pos) const {
    // Bubbles span both tracks: look at the other items first.
    int bubble = -1;
    const Frame f = frame(rect());
    for (int i = 0; i < int(m_timeline.items.size()); ++i) {
        if (!itemRectIn(f, i).adjusted(-0.5, 0, 0.5, 0).contains(pos)) continue;
        if (m_timeline.items[size_t(i)].kind != TimelineItem::Kind::Bubble) return i;
        bubble = i;
    }
    return bubble;
}

QString TimelineCanvas::itemDescription(int i) const {
    if (i < 0 || i >= int(m_timeline.items.size())) return {};
    const TimelineItem& it = m_timeline.items[size_t(i)];
    QString where = tr("stage %1").arg(it.stage);
    if (it.layer >= 0) where += tr(", layer %1").arg(it.layer);
    QString s = tr("<b>%1</b> (%2): %3, from %4 to %5 of the %6 step")
                    .arg(it.name.toHtmlEscaped(), where, formatMs(it.durMs), formatMs(it.startMs),
                         formatMs(it.endMs()), formatMs(m_timeline.stepMs));
    if (!it.detail.isEmpty()) s += QStringLiteral("<br>") + it.detail.toHtmlEscaped();
    if (it.hiddenMs > 0) s += tr("<br>%1 of it hidden under compute").arg(formatMs(it.hiddenMs));
    return s;
}

bool TimelineCanvas::hasDraft() const {
    return std::any_of(m_timeline.items.begin(), m_timeline.items.end(),
                       [](const TimelineItem& it) { return it.kind == TimelineItem::Kind::Draft; });
}

void TimelineCanvas::paintEvent(QPaintEvent*) {
    QPainter p(this);
    paintTo(p, rect());
}

void TimelineCanvas::paintTo(QPainter& p, const QRect& r) const {
    p.save();
    p.fillRect(r, Qt::white);
    const QFontMetrics fm(font());
    p.setFont(font());
    if (!m_plan || m_timeline.items.empty()) {
        p.setPen(QColor(0x6b, 0x72, 0x80));
        p.drawText(r, Qt::AlignCenter, tr("No plan to lay out."));
        p.restore();
        return;
    }
    const Frame f = frame(r);
    const Breakdown& b = m_plan->breakdown(m_prefill);
    p.setPen(QColor(0x11, 0x18, 0x27));
    p.drawText(QRect(r.left() + 10, r.top() + 6, r.width() - 20, fm.height() + 4), Qt::AlignLeft,
               tr("%1: one %2, %3 per step, %n pipeline stage(s)", "", m_timeline.stages)
                   .arg(qs(m_plan->label), qs(b.phase), formatMs(m_timeline.stepMs)));
    // Time axis: about eight ticks.
    const double raw = m_timeline.stepMs / 8,
                 mag = std::pow(10.0, std::floor(std::log10(std::max(raw, 1e-9))));
    const double tick = raw / mag < 2 ? 2 * mag : raw / mag < 5 ? 5 * mag : 10 * mag;
    p.setPen(QColor(0xe5, 0xe7, 0xeb));
    for (double t = 0; t <= m_timeline.stepMs * 1.0001; t += tick) {
        const int x = int(f.plot.left() + t / f.msPerPx);
        p.setPen(QColor(0xe5, 0xe7, 0xeb));
        p.drawLine(x, f.plot.top() - 4, x, f.plot.bottom());
        p.setPen(QColor(0x6b, 0x72, 0x80));
        p.drawText(QRect(x - 40, f.plot.top() - fm.height() - 6, 80, fm.height()), Qt::AlignCenter,
                   formatMs(t));
    }
    // Lanes.
    for (int st = 0; st < m_timeline.stages; ++st) {
        const int top = f.plot.top() + st * f.laneH;
        if (st % 2 == 1) p.fillRect(QRect(r.left(), top, r.width(), f.laneH), QColor(0xf9, 0xfa, 0xfb));
        p.setPen(QColor(0x37, 0x41, 0x51));
        const auto [first, count] = m_timeline.layers[size_t(st)];
        p.drawText(QRect(r.left() + 8, top + 2, 110, f.trackH), Qt::AlignLeft | Qt::AlignVCenter,
                   tr("stage %1").arg(st));
        p.setPen(QColor(0x6b, 0x72, 0x80));
        p.drawText(QRect(r.left() + 8, top + f.trackH + 2, 110, f.trackH), Qt::AlignLeft | Qt::AlignVCenter,
                   tr("layers %1-%2").arg(first).arg(first + count - 1));
    }
    p.setRenderHint(QPainter::Antialiasing, false);
    for (int i = 0; i < int(m_timeline.items.size()); ++i) {
        const TimelineItem& it = m_timeline.items[size_t(i)];
        const QRectF rr = itemRectIn(f, i);
        const QColor c = itemColor(it);
        if (it.kind == TimelineItem::Kind::Bubble) {
            p.fillRect(rr, QBrush(c, Qt::BDiagPattern));
            p.setPen(QPen(c.darker(130), 1, Qt::DashLine));
            p.drawRect(rr);
            if (rr.width() > fm.horizontalAdvance(it.name) + 8) {
                p.setPen(QColor(0x4b, 0x55, 0x63));
                p.drawText(rr, Qt::AlignCenter, it.name);
            }
            continue;
        }
        p.fillRect(rr, c);
        if (it.hiddenMs > 0) // the overlap hook: the hidden part hatched over the compute before it
            p.fillRect(QRectF(rr.left(), rr.top(), it.hiddenMs / f.msPerPx, rr.height()),
                       QBrush(c.darker(150), Qt::Dense5Pattern));
        if (rr.width() >= 4) {
            p.setPen(c.darker(125));
            p.drawLine(rr.topRight(), rr.bottomRight());
        }
        QString label = it.name;
        if (it.kind == TimelineItem::Kind::Draft) // shortened to what fits: "draft: mtp x3", "draft"
            for (const QString& shorter : {it.name.section(QStringLiteral(" \u2014 "), 0, 0), tr("draft")})
                if (rr.width() <= fm.horizontalAdvance(label) + 6) label = shorter;
        if (rr.width() > fm.horizontalAdvance(label) + 6) {
            p.setPen(c.lightnessF() > 0.6 ? QColor(0x1f, 0x29, 0x37) : Qt::white);
            p.drawText(rr, Qt::AlignCenter, label);
        }
    }
    if (m_hover >= 0) {
        p.setPen(QPen(QColor(0x11, 0x18, 0x27), 2));
        p.setBrush(Qt::NoBrush);
        p.drawRect(itemRectIn(f, m_hover).adjusted(-1, -1, 1, 1));
    }
    // Legend.
    const bool drafts = hasDraft();
    int x = r.left() + 120, y = f.plot.bottom() + 14;
    std::vector<std::pair<QColor, QString>> legend{{kCompute, tr("compute-bound operator")},
                                                   {kMemory, tr("memory-bound operator")},
                                                   {linkColor(LinkClass::NvLink), tr("collective, NVLink")},
                                                   {linkColor(LinkClass::Network), tr("collective, network")},
                                                   {kPipeline, tr("pipeline send")},
                                                   {kBubble, tr("bubble (idle)")}};
    // Only a plan that drafts has the entry; beside the operators, so a narrow canvas keeps it.
    if (drafts) legend.insert(legend.begin() + 2, {draftColor(), tr("draft passes")});
    bool wrapped = false;
    for (const auto& [c, text] : legend) {
        const int w = fm.horizontalAdvance(text) + 30;
        if (x + w > r.right()) {
            // The draft's entry takes a second line rather than push the others out.
            if (!drafts || wrapped) break;
            wrapped = true;
            x = r.left() + 120;
            y += fm.height() + 4;
        }
        if (text.startsWith(tr("bubble")))
            p.fillRect(QRect(x, y, 14, 12), QBrush(c, Qt::BDiagPattern));
        else
            p.fillRect(QRect(x, y, 14, 12), c);
        p.setPen(QColor(0x37, 0x41, 0x51));
        p.drawText(QRect(x + 18, y - 2, w, fm.height()), Qt::AlignLeft | Qt::AlignVCenter, text);
        x += w;
    }
    p.setPen(QColor(0x6b, 0x72, 0x80));
    p.drawText(
        QRect(r.left() + 120, y + fm.height() + 4, r.width() - 130, fm.height() + 2), Qt::AlignLeft,
        std::any_of(m_timeline.items.begin(), m_timeline.items.end(),
                    [](const TimelineItem& it) { return it.hiddenMs > 0; })
            ? tr("MoE layers run as two overlapped half-batches: a collective's hatched part ran under the "
                 "other half's compute.")
            : tr("Collectives run after the operator before them."));
    const Metrics& m = m_plan->metrics();
    QString spec;
    if (drafts)
        spec = tr("Speculative decoding (%1): a verify pass, then the draft passes; TPOT = step / %2.")
                   .arg(specSummary(m.spec, m.tokensPerStep))
                   .arg(m.tokensPerStep, 0, 'f', 2);
    else if (&b == &m_plan->eval.decode && m.spec.on()) // the breakdown is the slowest stage's
        spec = tr("Speculative decoding (%1): its draft passes, on the last stage, are not drawn: the "
                  "breakdown is the slowest stage's.")
                   .arg(specSummary(m.spec, m.tokensPerStep));
    if (!spec.isEmpty())
        p.drawText(QRect(r.left() + 120, y + 2 * (fm.height() + 4), r.width() - 130, fm.height() + 2),
                   Qt::AlignLeft, spec);
    p.restore();
}

void TimelineCanvas::mouseMoveEvent(QMouseEvent* e) {
    const int i = itemAt(e->position().toPoint());
    if (i != m_hover) {
        m_hover = i;
        update();
        emit hovered(i);
    }
    if (i >= 0)
        QToolTip::showText(e->globalPosition().toPoint(), itemDescription(i), this);
    else
        QToolTip::hideText();
}

void TimelineCanvas::setHoveredItem(int i) {
    if (i < -1 || i >= int(m_timeline.items.size()) || i == m_hover) return;
    m_hover = i;
    update();
    emit hovered(i);
}

void TimelineCanvas::wheelEvent(QWheelEvent* e) {
    if (!(e->modifiers() & Qt::ControlModifier)) return QWidget::wheelEvent(e); // the scroll area scrolls
    const int steps = e->angleDelta().y() / 120;
    if (steps != 0) emit zoomRequested(steps, int(e->position().x()));
    e->accept();
}

void TimelineCanvas::leaveEvent(QEvent*) {
    if (m_hover < 0) return;
    m_hover = -1;
    update();
    emit hovered(-1);
}

// ---------------------------------------------------------------------------------------------------------------

TimelineView::TimelineView(QWidget* parent) : QWidget(parent) {
    m_canvas = new TimelineCanvas;
    m_phase = new QComboBox(this);
    m_phase->addItems({tr("Decode step"), tr("Prefill pass")});
    m_phase->setToolTip(tr("Which pass to lay out"));
    m_info = new QLabel(tr("Hover an operator or collective for its numbers."), this);
    m_info->setTextFormat(Qt::RichText);
    m_info->setStyleSheet(QStringLiteral("color: #374151;"));
    // A long description wraps (two lines kept, so the canvas does not jump) rather than widen the window.
    m_info->setWordWrap(true);
    m_info->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    m_info->setMinimumHeight(2 * m_info->fontMetrics().lineSpacing());
    auto button = [this](const QString& text, const QString& tip) {
        auto* b = new QToolButton(this);
        b->setText(text);
        b->setToolTip(tip);
        b->setAutoRaise(true);
        return b;
    };
    QToolButton* fit = button(tr("Fit"), tr("The whole step in the view (0)"));
    QToolButton* out = button(QStringLiteral("\u2212"), tr("Zoom out the time axis (-, Ctrl+wheel)"));
    QToolButton* in = button(QStringLiteral("+"), tr("Zoom in the time axis (+, Ctrl+wheel)"));
    m_zoomLabel = new QLabel(this);
    m_zoomLabel->setStyleSheet(QStringLiteral("color: #6b7280;"));
    auto* bar = new QHBoxLayout;
    bar->setContentsMargins(10, 6, 10, 2);
    bar->addWidget(m_info, 1);
    bar->addWidget(fit);
    bar->addWidget(out);
    bar->addWidget(in);
    bar->addWidget(m_zoomLabel);
    bar->addWidget(m_phase);
    auto* scroll = new QScrollArea(this);
    m_scroll = scroll;
    scroll->setWidget(m_canvas);
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    scroll->viewport()->installEventFilter(this); // a wider view keeps the zoom
    connect(fit, &QToolButton::clicked, this, [this] { setZoom(1); });
    connect(out, &QToolButton::clicked, this, [this] { setZoom(m_zoom / 1.25); });
    connect(in, &QToolButton::clicked, this, [this] { setZoom(m_zoom * 1.25); });
    connect(m_canvas, &TimelineCanvas::zoomRequested, this, [this](int steps, int x) {
        setZoom(m_zoom * std::pow(1.25, steps), x - m_scroll->horizontalScrollBar()->value());
    });
    const std::pair<QKeySequence, double> keys[] = {{QKeySequence(Qt::Key_Plus), 1.25},
                                                    {QKeySequence(Qt::Key_Equal), 1.25},
                                                    {QKeySequence(Qt::Key_Minus), 1 / 1.25},
                                                    {QKeySequence(Qt::Key_0), 0}};
    for (const auto& [key, factor] : keys) {
        auto* sc = new QShortcut(key, this);
        sc->setContext(Qt::WidgetWithChildrenShortcut);
        connect(sc, &QShortcut::activated, this, [this, f = factor] { setZoom(f == 0 ? 1 : m_zoom * f); });
    }
    applyZoom();
    auto* lay = new QVBoxLayout(this);
    lay->setContentsMargins(0, 0, 0, 0);
    lay->setSpacing(0);
    lay->addLayout(bar);
    lay->addWidget(scroll, 1);
    connect(m_phase, &QComboBox::currentIndexChanged, this, [this](int i) { m_canvas->setPrefill(i == 1); });
    connect(m_canvas, &TimelineCanvas::hovered, this, [this](int i) {
        m_info->setText(i < 0 ? tr("Hover an operator or collective for its numbers.")
                              : m_canvas->itemDescription(i).replace(QStringLiteral("<br>"),
                                                                     QStringLiteral(" &middot; ")));
    });
}

void TimelineView::setZoom(double zoom, int anchor) {
    zoom = std::clamp(zoom, 1.0, kMaxZoom);
    QScrollBar* h = m_scroll->horizontalScrollBar();
    const int vw = m_scroll->viewport()->width();
    if (anchor < 0) anchor = vw / 2;
    // The time under the anchor, as a share of the axis: the same share after the zoom.
    const int left = TimelineCanvas::kLabelsW, margins = left + TimelineCanvas::kRightW;
    const double at = double(h->value() + anchor - left) / std::max(1, m_canvas->width() - margins);
    m_zoom = zoom;
    applyZoom();
    h->setValue(left + int(std::lround(at * (m_canvas->width() - margins))) - anchor);
}

void TimelineView::applyZoom() {
    const int vw = m_scroll->viewport()->width();
    // The time axis (not the labels beside it) grows with the zoom.
    const int margins = TimelineCanvas::kLabelsW + TimelineCanvas::kRightW;
    const int w = m_zoom <= 1 ? 0 : margins + int(std::lround(m_zoom * std::max(50, vw - margins)));
    if (m_canvas->minimumWidth() != w) m_canvas->setMinimumWidth(w);
    // At once (not at the next layout pass), so the scroll position can be set from the new width.
    if (m_canvas->width() < w) m_canvas->resize(w, m_canvas->height());
    m_zoomLabel->setText(m_zoom <= 1 ? tr("whole step")
                                     : tr("\u00d7%1").arg(m_zoom, 0, 'f', m_zoom < 10 ? 1 : 0));
}

bool TimelineView::eventFilter(QObject* watched, QEvent* e) {
    if (watched == m_scroll->viewport() && e->type() == QEvent::Resize && m_zoom > 1) applyZoom();
    return QWidget::eventFilter(watched, e);
}

void TimelineView::setPlan(std::shared_ptr<const Scenario> scenario, PlanRecordPtr plan) {
    m_plan = plan;
    const bool both = plan && plan->hasDecode() && plan->hasPrefill();
    m_phase->setEnabled(both);
    if (plan && !plan->hasDecode()) {
        const QSignalBlocker b(m_phase);
        m_phase->setCurrentIndex(1);
    }
    m_canvas->setPrefill(m_phase->currentIndex() == 1);
    m_canvas->setPlan(std::move(scenario), std::move(plan));
}

} // namespace sp::views
