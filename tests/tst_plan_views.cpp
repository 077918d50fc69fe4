// The plan views of views/ that draw a plan in place: the topology (groups, summary, zoom at 1,024 GPUs)
// and the step timeline (it adds up to the step, bubbles marked). Offscreen.
#include "core/io/formats.h"
#include "view_fixtures.h"
#include "views/format.h"
#include "views/imageexport.h"
#include "views/meshgroups.h"
#include "views/planrecord.h"
#include "views/timeline.h"
#include "views/topology.h"

#include <QApplication>
#include <QFileInfo>
#include <QImage>
#include <QPainter>
#include <QScrollArea>
#include <QTemporaryDir>
#include <QTest>
#include <QToolButton>
#include <QWheelEvent>

#include <algorithm>
#include <numeric>

using namespace sp;
using namespace sp::views;

using namespace sp::testing;

class TestPlanViews : public QObject {
    Q_OBJECT
private slots:
    void topology() {
        const Scenario s = scenario("llama-3.1-70b-h100-4x8.yaml");
        const CostModel model(s);
        auto sc = std::make_shared<const Scenario>(s);
        Plan p = Plan::megatronChoices({1, 4, 8, 1, 1, 1});
        p.degrees = Degrees{};
        p.degrees.pp = 2, p.degrees.dp = 2, p.degrees.tp = 8;
        p.degrees.ep = 1, p.degrees.etp = 8, p.degrees.edp = 2;
        QVERIFY2(!model.checkPlan(p), model.checkPlan(p).value_or("").c_str());
        const auto rec = makePlanRecord(model, p, "tp8 pp2", "test");
        TopologyCanvas canvas;
        canvas.resize(1000, 700);
        canvas.setPlan(sc, rec);
        canvas.setHoveredGpu(9);
        // tp innermost: GPU 9 is tp 1 of the second dp replica of stage 0: its TP group is node 1
        // (GPUs 8..15).
        std::vector<int> tp(8);
        std::iota(tp.begin(), tp.end(), 8);
        QCOMPARE(canvas.outlined(Axis::TP), tp);
        QCOMPARE(canvas.outlined(Axis::DP), (std::vector<int>{1, 9}));
        QVERIFY(canvas.outlined(Axis::EP).empty()); // dense model
        QVERIFY(canvas.linkShare(LinkClass::NvLink) > 0);
        QVERIFY(canvas.gpuDescription(9).contains("node 1"));
        const QRect r = canvas.gpuRect(13, canvas.rect());
        QCOMPARE(canvas.gpuAt(r.center()), 13);
        // A 1024-GPU cluster paints (scrolls rather than shrinking to nothing).
        const Scenario big = scenario("moe-1.6t-h100-128x8.yaml");
        const CostModel bigModel(big);
        canvas.setPlan(std::make_shared<const Scenario>(big),
                       makePlanRecord(bigModel, bigModel.megatronPlan(), "Megatron", "megatron"));
        QVERIFY(canvas.minimumHeightFor(1000) > 700);
        QImage img(1000, canvas.minimumHeightFor(1000), QImage::Format_ARGB32);
        QPainter painter(&img);
        canvas.paintTo(painter, img.rect());
    }

    // A GB200 NVL72 domain spans 18 hosts of 4: every other host's cells sit on a shaded band, so the gap
    // between GPUs 4 and 5 (host 1) is darker than the gap between GPUs 0 and 1 (host 0); an 8-GPU HGX
    // node is one host and has no bands.
    void topologyDrawsHostsInsideADomain() {
        auto paint = [](const Scenario& s, int a, int b) {
            const CostModel model(s);
            auto sc = std::make_shared<const Scenario>(s);
            TopologyCanvas canvas;
            canvas.resize(1200, 900);
            canvas.setPlan(sc, makePlanRecord(model, model.megatronPlan(), "Megatron", "megatron"));
            QImage img(canvas.size(), QImage::Format_ARGB32);
            QPainter painter(&img);
            canvas.paintTo(painter, img.rect());
            painter.end();
            const QRect ra = canvas.gpuRect(a, img.rect()), rb = canvas.gpuRect(b, img.rect());
            return img.pixelColor((ra.right() + rb.left()) / 2 + 1, ra.center().y()).lightness();
        };
        const Scenario nvl = scenario("deepseek-v3-gb200-nvl72-x2.yaml");
        QCOMPARE(nvl.cluster.hostGpus(), 4);
        QVERIFY2(paint(nvl, 4, 5) + 20 < paint(nvl, 0, 1),
                 qPrintable(QString("%1 vs %2").arg(paint(nvl, 4, 5)).arg(paint(nvl, 0, 1))));
        const Scenario hgx = scenario("llama-3.1-70b-h100-4x8.yaml");
        QCOMPARE(paint(hgx, 4, 5), paint(hgx, 0, 1));
    }

    // Painting only the part shown (a 65,536-GPU cluster took 250 ms to switch to when every GPU was
    // drawn) draws what painting the whole canvas draws there: the view's pixels, scrolled to a hovered GPU
    // in the middle of the cluster, equal the whole canvas's at the same place, the hovered GPU's groups
    // outlined, each shown GPU in its stage's colour.
    void topologyDrawsTheShownPartAsTheWhole_data() {
        QTest::addColumn<QString>("file");
        QTest::addColumn<int>("hover");
        QTest::addColumn<bool>("fit");
        QTest::addRow("1,024 GPUs") << "moe-1.6t-h100-128x8.yaml" << 517 << false;
        QTest::addRow("1,024 GPUs fitted") << "moe-1.6t-h100-128x8.yaml" << 700 << true;
        QTest::addRow("NVL72") << "deepseek-v3-gb200-nvl72-x2.yaml" << 140 << false;
    }
    void topologyDrawsTheShownPartAsTheWhole() {
        QFETCH(QString, file);
        QFETCH(int, hover);
        QFETCH(bool, fit);
        const Scenario s = scenario(qPrintable(file));
        const CostModel model(s);
        const Plan meg = model.megatronPlan();
        TopologyView view;
        view.resize(727, 290); // the Topology tab at 1280x720
        view.setPlan(std::make_shared<const Scenario>(s), makePlanRecord(model, meg, "Megatron", "megatron"));
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        TopologyCanvas* canvas = view.canvas();
        if (fit)
            canvas->fit();
        else
            canvas->setMinCell(24); // larger than the view: it scrolls
        canvas->setHoveredGpu(hover);
        auto* scroll = view.findChild<QScrollArea*>();
        const QRect cell = canvas->gpuRect(hover, canvas->rect());
        scroll->ensureVisible(cell.center().x(), cell.center().y(), 100, 100);
        QTest::qWait(20);
        QVERIFY(canvas->height() > scroll->viewport()->height()); // a part is shown
        const QRect shown(canvas->mapFrom(scroll->viewport(), QPoint(0, 0)), scroll->viewport()->size());
        QVERIFY(shown.top() > 0);
        QImage whole(canvas->size(), QImage::Format_ARGB32_Premultiplied);
        {
            QPainter p(&whole);
            canvas->paintTo(p, canvas->rect());
        }
        const QImage part =
            canvas->grab(shown).toImage().convertToFormat(QImage::Format_ARGB32_Premultiplied);
        QCOMPARE(part.size(), shown.size());
        // Equal but for the antialiasing where a clip cuts a line (a step of the last bit or two).
        int differ = 0;
        for (int y = 0; y < part.height(); ++y)
            for (int x = 0; x < part.width(); ++x) {
                const QRgb a = part.pixel(x, y), b = whole.pixel(shown.left() + x, shown.top() + y);
                differ += std::abs(qRed(a) - qRed(b)) > 2 || std::abs(qGreen(a) - qGreen(b)) > 2 ||
                          std::abs(qBlue(a) - qBlue(b)) > 2;
            }
        QVERIFY2(differ == 0,
                 qPrintable(
                     QStringLiteral("%1 of %2 pixels differ").arg(differ).arg(part.width() * part.height())));
        // The hovered GPU's ring (black, 4.5 px outside its cell) and its TP group's members in the picture.
        if (!fit)
            QCOMPARE(part.pixelColor(cell.left() - 5 - shown.left(), cell.center().y() - shown.top()),
                     QColor(Qt::black));
        int cells = 0;
        for (int gpu = 0; gpu < s.cluster.gpus(); ++gpu) {
            const QRect c = canvas->gpuRect(gpu, canvas->rect());
            if (!shown.contains(c)) continue;
            ++cells;
            const QColor want = stageColor(meshCoords(meg, gpu).pp);
            // Above the GPU's number (drawn in the middle of large cells), inside the rings.
            const QPoint at(c.center().x(), c.top() + std::max(1, c.height() / 4));
            const QColor got = part.pixelColor(at - shown.topLeft());
            const bool member = gpu == hover || std::ranges::binary_search(canvas->outlined(Axis::TP), gpu) ||
                                std::ranges::binary_search(canvas->outlined(Axis::DP), gpu) ||
                                std::ranges::binary_search(canvas->outlined(Axis::EP), gpu);
            // Members in the stage's colour; the others faded towards white (where no ring crosses).
            if (member && c.width() >= 12) QCOMPARE(got, want);
            if (!member) QVERIFY2(got.lightness() > want.lightness(), qPrintable(QString::number(gpu)));
        }
        QVERIFY2(cells >= 16, qPrintable(QString::number(cells)));
        if (const QByteArray dir = qgetenv("SHARDPLAN_SHOTS"); !dir.isEmpty())
            whole.save(QString::fromLocal8Bit(dir) +
                       QStringLiteral("/topology-whole-%1.png").arg(QTest::currentDataTag()));
    }

    void topologySummaryReachable() {
        // 128x8 (1,024 GPUs) in a wide canvas, and 1x8 in the canvas left at a 1040x700 window: the summary
        // bars and the legend lie inside the canvas's height (the scroll area reaches all of it).
        struct Case {
            const char* scenario;
            int width, height;
        };
        for (const Case& c :
             {Case{"moe-1.6t-h100-128x8.yaml", 1200, 600}, Case{"llama-3.1-8b-h100-1x8.yaml", 700, 250}}) {
            const Scenario s = scenario(c.scenario);
            const CostModel model(s);
            TopologyView view;
            view.resize(c.width, c.height);
            view.canvas()->setPlan(std::make_shared<const Scenario>(s),
                                   makePlanRecord(model, model.megatronPlan(), "Megatron", "megatron"));
            view.show();
            QVERIFY(QTest::qWaitForWindowExposed(&view));
            TopologyCanvas* canvas = view.canvas();
            const int h = std::max(canvas->height(), canvas->minimumHeightFor(canvas->width()));
            const QRect full(0, 0, canvas->width(), h);
            const QRect summary = canvas->summaryRect(full), legend = canvas->legendRect(full);
            QVERIFY2(summary.isValid() && summary.height() > 0, c.scenario);
            QVERIFY2(full.contains(summary) && full.contains(legend),
                     qPrintable(QStringLiteral("%1: summary %2..%3, legend ..%4 in %5")
                                    .arg(QLatin1String(c.scenario))
                                    .arg(summary.top())
                                    .arg(summary.bottom())
                                    .arg(legend.bottom())
                                    .arg(h)));
            QVERIFY(summary.top() > canvas->gpuRect(s.gpus() - 1, full).bottom());
            QVERIFY(canvas->height() >= legend.bottom());
        }
    }

    void timelineAddsUpToTheStep() {
        // One stage (Megatron on 1x8): the stage's operators and collectives, one after the other, take the
        // breakdown's slowest-stage time.
        const Scenario s = scenario("llama-3.1-8b-h100-1x8.yaml");
        const CostModel model(s);
        const auto meg = makePlanRecord(model, model.megatronPlan(), "Megatron", "megatron");
        const Breakdown& b = meg->breakdown(false);
        Timeline t = buildTimeline(s, *meg, false);
        QCOMPARE(t.stages, 1);
        double busy = 0;
        int ops = 0, comms = 0;
        for (const TimelineItem& it : t.items) {
            busy += it.durMs;
            ops += it.kind == TimelineItem::Kind::Compute || it.kind == TimelineItem::Kind::Memory;
            comms += it.kind == TimelineItem::Kind::Comm;
        }
        QVERIFY2(std::abs(t.stepMs - b.stageMs) < 1e-6 * b.stageMs,
                 qPrintable(QStringLiteral("%1 vs %2").arg(t.stepMs).arg(b.stageMs)));
        QVERIFY(std::abs(busy - t.stepMs) < 1e-9 * t.stepMs); // no gaps, no overlap
        // 32 dense layers, each with the breakdown's dense operators.
        int denseOps = 0;
        for (const OpCost& o : b.ops) denseOps += o.layer == LayerKind::Dense;
        QVERIFY(ops >= 32 * denseOps);
        QVERIFY(comms >= 32); // tp8: at least one all-reduce per layer
        // The overlap hook: half of every collective under the compute before it shortens the step by that.
        double hidden = 0;
        TimelineOptions o;
        o.hiddenMs = [](const CommCost& c) { return c.timeMs / 2; };
        t = buildTimeline(s, *meg, false, o);
        for (const TimelineItem& it : t.items) hidden += it.hiddenMs;
        QVERIFY(hidden > 0);
        QVERIFY(std::abs(t.stepMs - (b.stageMs - hidden)) < 1e-6 * b.stageMs);
    }

    void timelineMarksBubbles() {
        // 80 layers on pp 3: 26 + 27 + 27 (pipelineStages); the shorter stage idles: a bubble, and every
        // stage ends at the step.
        const Scenario s = scenario("llama-3.1-70b-h100-4x8.yaml");
        const CostModel model(s);
        Plan p = Plan::megatronChoices({1, 1, 8, 1, 1, 8});
        p.degrees.pp = 4; // 4 x 8 = 32 GPUs
        QVERIFY2(!model.checkPlan(p), model.checkPlan(p).value_or("").c_str());
        const auto rec = makePlanRecord(model, p, "pp4", "test");
        const Timeline t = buildTimeline(s, *rec, false);
        QCOMPARE(t.stages, 4);
        int bubbles = 0, sends = 0;
        for (const TimelineItem& it : t.items) {
            if (it.kind == TimelineItem::Kind::Bubble) {
                ++bubbles;
                QVERIFY(std::abs(it.endMs() - t.stepMs) < 1e-9 * t.stepMs);
            }
            sends += it.kind == TimelineItem::Kind::Pipeline;
        }
        QVERIFY(bubbles >= 1);
        QCOMPARE(sends, rec->breakdown(false).pipelineTransferMs > 0 ? 3 : 0);
        // Hover: the item under its own rectangle, described with its numbers; the image exports.
        TimelineCanvas canvas;
        canvas.resize(1200, 500);
        canvas.setPlan(std::make_shared<const Scenario>(s), rec);
        int probe = -1;
        for (int i = 0; i < int(canvas.timeline().items.size()); ++i)
            if (canvas.itemRect(i, canvas.rect()).width() > 6 &&
                canvas.timeline().items[size_t(i)].kind != TimelineItem::Kind::Bubble) {
                probe = i;
                break;
            }
        QVERIFY(probe >= 0);
        QCOMPARE(canvas.itemAt(canvas.itemRect(probe, canvas.rect()).center().toPoint()), probe);
        QVERIFY(canvas.itemDescription(probe).contains(QStringLiteral("stage ")));
        QVERIFY(canvas.itemDescription(probe).contains(QStringLiteral(" ms")));
        QTemporaryDir dir;
        for (const char* ext : {"png", "svg"}) {
            const QString path = dir.filePath(QStringLiteral("timeline.%1").arg(QLatin1String(ext)));
            QString error;
            QVERIFY2(saveImage(&canvas, path, &error,
                               [&](QPainter& pa, const QRect& r) { canvas.paintTo(pa, r); }),
                     qPrintable(error));
            QVERIFY(QFileInfo(path).size() > 1000);
        }
    }

    // Speculative decoding (DeepSeek-V3's MTP module, one draft token at the model's cited 0.85 acceptance):
    // the last stage's step is the verify pass, then one draft block of Breakdown::draftMs; the stage still
    // adds up to the breakdown's step. The same plan without it has no draft block.
    void timelineDraftsAfterTheVerifyPass_data() {
        QTest::addColumn<int>("pp");
        QTest::addRow("pp1") << 1;
        QTest::addRow("pp2") << 2;
    }
    void timelineDraftsAfterTheVerifyPass() {
        QFETCH(int, pp);
        const Scenario s = scenario("deepseek-v3-h100-32x8.yaml");
        const CostModel model(s);
        auto loaded = loadPlan((kSamples + "/plans/deepseek-v3-dp-attention.yaml").toStdString());
        QVERIFY2(loaded.ok(), loaded.error().str().c_str());
        Plan p = loaded.value();
        p.degrees.pp = pp, p.degrees.dp /= pp, p.degrees.ep /= pp; // the same 256 GPUs
        QVERIFY2(!model.checkPlan(p), model.checkPlan(p).value_or("").c_str());
        const auto plain = makePlanRecord(model, p, "plain", "test");
        p.spec = {SpecMethod::Mtp, 1};
        const auto mtp = makePlanRecord(model, p, "mtp", "test");
        const Breakdown& b = mtp->breakdown(false);
        QVERIFY2(b.draftMs > 0, b.draft.c_str()); // the last stage, with the draft, is the slowest
        const Timeline t = buildTimeline(s, *mtp, false);
        QCOMPARE(t.stages, pp);
        int draft = -1, drafts = 0;
        double verifyEnd = 0;
        for (int i = 0; i < int(t.items.size()); ++i) {
            const TimelineItem& it = t.items[size_t(i)];
            if (it.kind == TimelineItem::Kind::Draft) {
                draft = i;
                ++drafts;
            } else if (it.stage == pp - 1 && it.kind != TimelineItem::Kind::Bubble) {
                verifyEnd = std::max(verifyEnd, it.endMs());
            }
        }
        QCOMPARE(drafts, 1);
        const TimelineItem& d = t.items[size_t(draft)];
        QCOMPARE(d.stage, pp - 1);
        QCOMPARE(d.durMs, b.draftMs);
        QVERIFY(std::abs(d.startMs - verifyEnd) < 1e-9 * t.stepMs); // right after the verify pass
        QVERIFY2(std::abs(t.stageMs[size_t(pp - 1)] - b.stageMs) < 1e-6 * b.stageMs,
                 qPrintable(QStringLiteral("%1 vs %2").arg(t.stageMs[size_t(pp - 1)]).arg(b.stageMs)));
        QVERIFY2(d.name.startsWith(QStringLiteral("draft: mtp x1 \u2014 1 pass over ")), qPrintable(d.name));
        // One draft token is one pass: no "+ 0 over ..." after it.
        QVERIFY2(d.name.endsWith(QStringLiteral(" tokens")), qPrintable(d.name));
        // Without speculative decoding: no draft block, and the last stage is shorter by about the draft.
        const Timeline without = buildTimeline(s, *plain, false);
        for (const TimelineItem& it : without.items) QVERIFY(it.kind != TimelineItem::Kind::Draft);
        QVERIFY(without.stageMs[size_t(pp - 1)] < t.stageMs[size_t(pp - 1)]);
        // The prefill pass drafts nothing.
        for (const TimelineItem& it : buildTimeline(s, *mtp, true).items)
            QVERIFY(it.kind != TimelineItem::Kind::Draft);

        // Drawn: hovering the block names it, the method and E; the legend has the entry only with it.
        TimelineCanvas canvas;
        canvas.resize(1200, 200 + 60 * pp);
        canvas.setPlan(std::make_shared<const Scenario>(s), mtp);
        QVERIFY(canvas.hasDraft());
        const QRectF r = canvas.itemRect(draft, canvas.rect());
        QCOMPARE(canvas.itemAt(r.center().toPoint()), draft);
        const QString tip = canvas.itemDescription(draft);
        QVERIFY2(tip.contains(QStringLiteral("stage %1").arg(pp - 1)) &&
                     tip.contains(QStringLiteral("MTP, 1 draft token")) &&
                     tip.contains(QStringLiteral("tokens a step")),
                 qPrintable(tip));
        // The block is teal, not an operator's blue.
        QImage img(canvas.size(), QImage::Format_RGB32);
        {
            QPainter pa(&img);
            canvas.paintTo(pa, canvas.rect());
        }
        QCOMPARE(img.pixelColor(QPoint(int(r.left()) + 1, int(r.top()) + 1)), draftColor()); // off its label
        canvas.setPlan(std::make_shared<const Scenario>(s), plain);
        QVERIFY(!canvas.hasDraft());
        if (const QByteArray dir = qgetenv("SHARDPLAN_SHOTS"); !dir.isEmpty()) {
            canvas.setPlan(std::make_shared<const Scenario>(s), mtp);
            canvas.grab().save(QString::fromLocal8Bit(dir) +
                               QStringLiteral("/timeline-mtp-pp%1.png").arg(pp));
        }
    }

    void topologyZoom() {
        // 1,024 GPUs: Fit shrinks the cells so less height is needed; zooming in grows it; Ctrl+wheel zooms.
        const Scenario s = scenario("moe-1.6t-h100-128x8.yaml");
        const CostModel model(s);
        TopologyCanvas canvas;
        canvas.resize(1200, 600);
        canvas.setPlan(std::make_shared<const Scenario>(s),
                       makePlanRecord(model, model.megatronPlan(), "Megatron", "megatron"));
        const int normal = canvas.minimumHeightFor(1200);
        canvas.setMinCell(TopologyCanvas::kFitCell);
        const int fit = canvas.minimumHeightFor(1200);
        QVERIFY2(fit < normal, qPrintable(QStringLiteral("fit %1, normal %2").arg(fit).arg(normal)));
        const QRect full(0, 0, 1200, std::max(600, fit));
        QVERIFY(full.contains(canvas.summaryRect(full)) && full.contains(canvas.legendRect(full)));
        canvas.setMinCell(24);
        QVERIFY(canvas.minimumHeightFor(1200) > normal);
        QWheelEvent wheel(QPointF(10, 10), QPointF(10, 10), QPoint(), QPoint(0, 120), Qt::NoButton,
                          Qt::ControlModifier, Qt::NoScrollPhase, false);
        QApplication::sendEvent(&canvas, &wheel);
        QVERIFY(canvas.minCell() > 24);
        // Hovering outlines only that GPU's groups: its TP group of tp GPUs.
        canvas.setHoveredGpu(9);
        QCOMPARE(int(canvas.outlined(Axis::TP).size()), model.megatronPlan().degrees.tp);
    }

    // Fit puts every GPU in the visible part of the view, checked on the picture: the cell of each GPU lies
    // in the scroll area's viewport and its centre has its pipeline stage's colour (Megatron on GB200 NVL72
    // x2: 2 domains of 72 GPUs, pp1; on the 1.6T MoE: 128 nodes of 8, 1,024 GPUs). Sizes: the Topology tab
    // at 1280x720 and at 1600x1000. Then + and - change the drawing: larger, then smaller cells.
    void topologyFitShowsEveryGpu_data() {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QSize>("size");
        for (const char* f : {"deepseek-v3-gb200-nvl72-x2.yaml", "moe-1.6t-h100-128x8.yaml"}) {
            QTest::addRow("%s laptop", f) << QString::fromLatin1(f) << QSize(727, 290);
            QTest::addRow("%s desktop", f) << QString::fromLatin1(f) << QSize(1050, 560);
        }
    }
    void topologyFitShowsEveryGpu() {
        QFETCH(QString, file);
        QFETCH(QSize, size);
        const Scenario s = scenario(qPrintable(file));
        const CostModel model(s);
        const Plan meg = model.megatronPlan();
        TopologyView view;
        view.resize(size);
        view.setPlan(std::make_shared<const Scenario>(s), makePlanRecord(model, meg, "Megatron", "megatron"));
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        auto button = [&](const QString& text) {
            for (QToolButton* b : view.findChildren<QToolButton*>())
                if (b->text() == text) return b;
            return static_cast<QToolButton*>(nullptr);
        };
        QVERIFY(button(QStringLiteral("Fit")));
        button(QStringLiteral("Fit"))->click();
        QTest::qWait(20);
        TopologyCanvas* canvas = view.canvas();
        auto* scroll = view.findChild<QScrollArea*>();
        const QRect viewport(scroll->viewport()->mapTo(&view, QPoint(0, 0)), scroll->viewport()->size());
        const QImage img = view.grab().toImage();
        auto shownCells = [&](QString* firstMissing) {
            int shown = 0;
            for (int gpu = 0; gpu < s.gpus(); ++gpu) {
                const QRect cell = canvas->gpuRect(gpu, canvas->rect());
                const QRect r(canvas->mapTo(&view, cell.topLeft()), cell.size());
                const QColor want = stageColor(meshCoords(meg, gpu).pp);
                // Above the GPU's number (drawn in the middle of large cells), below the border.
                const QPoint at(r.left() + r.width() / 2, r.top() + std::max(2, r.height() / 5));
                const QColor got =
                    viewport.contains(r) ? img.pixelColor(at * img.devicePixelRatio()) : QColor();
                const bool same = got.isValid() && std::abs(got.red() - want.red()) <= 12 &&
                                  std::abs(got.green() - want.green()) <= 12 &&
                                  std::abs(got.blue() - want.blue()) <= 12;
                if (same)
                    ++shown;
                else if (firstMissing && firstMissing->isEmpty())
                    *firstMissing = QStringLiteral("GPU %1 at %2,%3 %4x%5 (viewport %6x%7 at %8,%9)")
                                        .arg(gpu)
                                        .arg(r.x())
                                        .arg(r.y())
                                        .arg(r.width())
                                        .arg(r.height())
                                        .arg(viewport.width())
                                        .arg(viewport.height())
                                        .arg(viewport.x())
                                        .arg(viewport.y());
            }
            return shown;
        };
        QString missing;
        const int shown = shownCells(&missing);
        QVERIFY2(shown == s.gpus(), qPrintable(QStringLiteral("%1 of %2 GPUs shown; first missing: %3")
                                                   .arg(shown)
                                                   .arg(s.gpus())
                                                   .arg(missing)));
        // Zooming in draws larger cells, zooming out smaller ones again.
        const int fitted = canvas->gpuRect(0, canvas->rect()).width();
        QVERIFY(fitted >= TopologyCanvas::kFitCell);
        button(QStringLiteral("+"))->click();
        QTest::qWait(20);
        const int in = canvas->gpuRect(0, canvas->rect()).width();
        QVERIFY2(in > fitted, qPrintable(QStringLiteral("%1 -> %2").arg(fitted).arg(in)));
        QVERIFY(view.grab().toImage() != img);
        button(QStringLiteral("\u2212"))->click();
        QTest::qWait(20);
        QVERIFY(canvas->gpuRect(0, canvas->rect()).width() < in);
    }

    // The Timeline's time axis zooms: Ctrl+wheel by 1.25 a step (the time under the mouse stays put), the +
    // and - keys, and Fit back to the whole step. DeepSeek-V3's 61 layers on one stage: at 1x an
    // operator is a few pixels wide, at 1.25^4 = 2.44x it is 2.44 times as wide.
    void timelineZooms() {
        const Scenario s = scenario("deepseek-v3-h200-16x8.yaml");
        const CostModel model(s);
        TimelineView view;
        view.resize(900, 400);
        view.setPlan(std::make_shared<const Scenario>(s),
                     makePlanRecord(model, model.megatronPlan(), "Megatron", "megatron"));
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        TimelineCanvas* canvas = view.canvas();
        auto* scroll = view.findChild<QScrollArea*>();
        const int vw = scroll->viewport()->width();
        QCOMPARE(canvas->width(), vw);
        // The longest item: its width grows with the zoom (the first pixel of rounding aside).
        int longest = 0;
        for (int i = 0; i < int(canvas->timeline().items.size()); ++i)
            if (canvas->timeline().items[size_t(i)].durMs > canvas->timeline().items[size_t(longest)].durMs)
                longest = i;
        auto width = [&] { return canvas->itemRect(longest, canvas->rect()).width(); };
        const double w1 = width();
        const QImage before = view.grab().toImage();
        // Four wheel steps with Ctrl over the middle of the canvas.
        const QPoint at(vw / 2, 100);
        const double tAt = (at.x() - canvas->itemRect(0, canvas->rect()).left()); // px from the step's start
        for (int k = 0; k < 4; ++k) {
            QWheelEvent wheel(QPointF(canvas->mapFrom(scroll->viewport(), at)),
                              QPointF(scroll->viewport()->mapToGlobal(at)), QPoint(), QPoint(0, 120),
                              Qt::NoButton, Qt::ControlModifier, Qt::NoScrollPhase, false);
            QApplication::sendEvent(canvas, &wheel);
            QTest::qWait(5);
        }
        QVERIFY2(qAbs(width() / w1 - 2.44140625) < 0.05 * 2.44140625,
                 qPrintable(QStringLiteral("%1 -> %2 px").arg(w1).arg(width())));
        QVERIFY(canvas->width() > 2 * vw);
        QVERIFY(qAbs(view.zoom() - 2.44140625) < 1e-6);
        // The point of the step under the mouse is still under it (within a few pixels).
        const double tNow =
            canvas->mapFrom(scroll->viewport(), at).x() - canvas->itemRect(0, canvas->rect()).left();
        QVERIFY2(qAbs(tNow / tAt - view.zoom()) < 0.05 * view.zoom(),
                 qPrintable(QStringLiteral("%1 px from the start, was %2").arg(tNow).arg(tAt)));
        QVERIFY(view.grab().toImage() != before);
        // Keys: + zooms in, - out.
        view.setFocus();
        const double z = view.zoom();
        QTest::keyClick(&view, Qt::Key_Plus);
        QVERIFY(qAbs(view.zoom() - z * 1.25) < 1e-9);
        QTest::keyClick(&view, Qt::Key_Minus);
        QTest::keyClick(&view, Qt::Key_Minus);
        QVERIFY(qAbs(view.zoom() - z / 1.25) < 1e-9);
        // Fit: the whole step in the view again.
        for (QToolButton* b : view.findChildren<QToolButton*>())
            if (b->text() == QStringLiteral("Fit")) b->click();
        QCOMPARE(view.zoom(), 1.0);
        QTRY_COMPARE(canvas->width(), vw);
        QCOMPARE(width(), w1);
    }
};

QTEST_MAIN(TestPlanViews)
#include "tst_plan_views.moc"
