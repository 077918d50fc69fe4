// The reusable widgets of views/: group placement, the elite model, the throttled chart, the heatmap, the
// comparison, the scenario editor and the image export (the topology and timeline: tst_plan_views).
// Offscreen.
#include "core/cost/economics.h"
#include "core/io/formats.h"
#include "core/search/engine.h"
#include "core/search/rng.h"
#include "core/search/space.h"
#include "view_fixtures.h"
#include "views/comparison.h"
#include "views/degreechecks.h"
#include "views/elitemodel.h"
#include "views/format.h"
#include "views/heatmap.h"
#include "views/imageexport.h"
#include "views/learningcurve.h"
#include "views/meshgroups.h"
#include "views/plandetails.h"
#include "views/planrecord.h"
#include "views/scenarioeditor.h"
#include "views/searchchart.h"
#include "views/timeline.h"
#include "views/topology.h"

#include <QAbstractItemModelTester>
#include <QApplication>
#include <QBarSet>
#include <QCheckBox>
#include <QComboBox>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QHeaderView>
#include <QHorizontalStackedBarSeries>
#include <QImage>
#include <QLabel>
#include <QLineEdit>
#include <QPainter>
#include <QScrollArea>
#include <QSignalSpy>
#include <QSortFilterProxyModel>
#include <QSpinBox>
#include <QStyle>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QTextDocument>
#include <QToolButton>
#include <QWheelEvent>

#include <numeric>

using namespace sp;
using namespace sp::views;
using namespace sp::testing;

namespace {
/// The first cell of `t` whose text does not fit it whole, word-wrapped in its column and row, in words; empty
/// when every one does.
QString cutCell(const QTableWidget* t) {
    // The cell's text margins, as the style lays an item view's text out (QCommonStyle).
    const int margins = 2 * (t->style()->pixelMetric(QStyle::PM_FocusFrameHMargin, nullptr, t) + 1);
    for (int r = 0; r < t->rowCount(); ++r)
        for (int c = 0; c < t->columnCount(); ++c) {
            const QTableWidgetItem* it = t->item(r, c);
            if (!it || it->text().isEmpty()) continue;
            const int room = t->columnWidth(c) - margins;
            const QRect need =
                QFontMetrics(it->font()).boundingRect(QRect(0, 0, room, 10000), Qt::TextWordWrap, it->text());
            if (need.width() > room || need.height() > t->rowHeight(r))
                return QStringLiteral("row %1 column %2: \"%3\" needs %4 x %5 px, has %6 x %7")
                    .arg(r)
                    .arg(c)
                    .arg(it->text())
                    .arg(need.width())
                    .arg(need.height())
                    .arg(room)
                    .arg(t->rowHeight(r));
        }
    return {};
}

/// `n` distinct evaluated candidates of a scenario (random valid plans).
std::vector<Candidate> candidates(const Scenario& s, int n, uint64_t seed) {
    const CostModel model(s);
    const SearchSpace space(s);
    Rng rng(seed);
    std::vector<Candidate> out;
    for (int tries = 0; int(out.size()) < n && tries < 50 * n; ++tries) {
        Candidate c;
        c.choices = space.sample(rng);
        c.plan = space.toPlan(c.choices);
        if (std::any_of(out.begin(), out.end(), [&](const Candidate& o) { return o.plan == c.plan; }))
            continue;
        c.metrics = model.evaluate(c.plan);
        out.push_back(std::move(c));
    }
    std::sort(out.begin(), out.end(), [](const Candidate& a, const Candidate& b) {
        return planScore(a.metrics) > planScore(b.metrics);
    });
    return out;
}
} // namespace

class TestViews : public QObject {
    Q_OBJECT
private slots:
    // A run under a second reads in tenths, not "0 s" (a 5.7 s Pareto sweep once said "in 0 s" beside it).
    void durationsUnderTenSecondsShowTenths() {
        QCOMPARE(formatDuration(0.4), QStringLiteral("0.4 s"));
        QCOMPARE(formatDuration(5.74), QStringLiteral("5.7 s"));
        QCOMPARE(formatDuration(0.0), QStringLiteral("0.0 s"));
        QCOMPARE(formatDuration(42.2), QStringLiteral("42 s"));
        QCOMPARE(formatDuration(200), QStringLiteral("3 min 20 s"));
        QCOMPARE(formatDuration(-1), QStringLiteral("-"));
    }

    void meshGroups() {
        // 8 GPUs, tp2 dp2 pp2, tp innermost then dp: rank = tp + 2 dp + 4 pp. GPU 5 = (pp 1, dp 0, tp 1).
        Plan p = planWith({2, 2, 2, 1, 1, 1});
        p.degrees.pp = 2, p.degrees.dp = 2, p.degrees.tp = 2;
        const MeshCoords c = meshCoords(p, 5);
        QCOMPARE(c.pp, 1);
        QCOMPARE(c.dp, 0);
        QCOMPARE(c.tp, 1);
        QCOMPARE(groupOf(p, 5, Axis::TP), (std::vector<int>{4, 5}));
        QCOMPARE(groupOf(p, 5, Axis::DP), (std::vector<int>{5, 7}));
        QCOMPARE(groupOf(p, 5, Axis::PP), (std::vector<int>{1, 5}));
        // dp innermost: rank = dp + 2 tp + 4 pp, so GPU 5 = (pp 1, dp 1, tp 0); its TP partner is 7, DP
        // partner 4.
        p.meshOrder = {Axis::DP, Axis::TP, Axis::PP};
        QCOMPARE(groupOf(p, 5, Axis::TP), (std::vector<int>{5, 7}));
        QCOMPARE(groupOf(p, 5, Axis::DP), (std::vector<int>{4, 5}));
        // MoE: tp4 dp2 on 8 GPUs regroup as ep4 etp2 (etp innermost over the tp-first local ranks 0..7):
        // local = tp + 4 dp = the GPU here; etp = local % 2, ep = local / 2.
        Plan m = planWith({1, 2, 4, 4, 2, 1});
        m.degrees = Degrees{};
        m.degrees.pp = 1, m.degrees.dp = 2, m.degrees.tp = 4, m.degrees.ep = 4, m.degrees.etp = 2,
        m.degrees.edp = 1;
        QCOMPARE(groupOf(m, 0, Axis::EP), (std::vector<int>{0, 2, 4, 6}));
        QCOMPARE(groupOf(m, 0, Axis::ETP), (std::vector<int>{0, 1}));
        QCOMPARE(groupOf(m, 3, Axis::EP), (std::vector<int>{1, 3, 5, 7}));
        QCOMPARE(meshCoords(m, 6).ep, 3);
    }

    void stages() {
        // 61 layers on 4 stages: 15 each, the one extra on a middle stage (stage 1).
        auto s = stageSpans(61, 4);
        QCOMPARE(int(s.size()), 4);
        QCOMPARE(s[0].count, 15);
        QCOMPARE(s[1].count, 16);
        QCOMPARE(s[2].count, 15);
        QCOMPARE(s[3].begin, 46);
        // 80 on 3: 26 + 2 extra; with extra == pp - 1 the extras go to the first stages (27, 27, 26).
        s = stageSpans(80, 3);
        QCOMPARE(s[0].count + s[1].count + s[2].count, 80);
        QCOMPARE(s[2].count, 26);
    }

    void eliteModelTester() {
        const Scenario s = scenario("llama-3.1-70b-h100-4x8.yaml");
        const auto pool = candidates(s, 60, 7);
        QVERIFY(pool.size() >= 40);
        EliteModel model;
        model.setModel(s.model);
        QSortFilterProxyModel proxy;
        proxy.setSourceModel(&model);
        proxy.setSortRole(EliteModel::SortRole);
        proxy.sort(EliteModel::Rank);
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QAbstractItemModelTester proxyTester(&proxy, QAbstractItemModelTester::FailureReportingMode::QtTest);
        // Sliding windows over the pool: rows come, go and stay, as during a search.
        for (int start = 0; start + 20 <= int(pool.size()); start += 7) {
            std::vector<std::pair<QString, std::vector<Candidate>>> lists{
                {QStringLiteral("sa"), {pool.begin() + start, pool.begin() + start + 12}},
                {QStringLiteral("ga"), {pool.begin() + start + 8, pool.begin() + start + 20}}};
            const auto merged = mergeElites(lists, 16);
            model.setEntries(merged);
            QCOMPARE(model.rowCount(), int(merged.size()));
            // Plans found by both are listed once, naming both.
            QVERIFY(std::any_of(merged.begin(), merged.end(),
                                [](const EliteEntry& e) { return e.searcher == "sa, ga"; }));
        }
        // Sorted by rank through the proxy: best first.
        const double top =
            proxy.data(proxy.index(0, EliteModel::Throughput), EliteModel::SortRole).toDouble();
        for (int r = 1; r < proxy.rowCount(); ++r)
            QVERIFY(proxy.data(proxy.index(r, EliteModel::Throughput), EliteModel::SortRole).toDouble() <=
                    top);
        QCOMPARE(proxy.data(proxy.index(0, EliteModel::Rank)).toInt(), 1);
        // A plan with its own pipeline split shows it beside its degrees.
        Candidate split = pool.front();
        split.plan.degrees = {4, 2, 4, 8, 1, 1};
        split.plan.stageLayers = {19, 21, 21, 19};
        model.setEntries({EliteEntry{std::make_shared<const Candidate>(split), QStringLiteral("sa")}});
        QCOMPARE(model.data(model.index(0, EliteModel::Degrees)).toString(),
                 QStringLiteral("pp4 dp2 tp4 | layers 19 + 21 + 21 + 19"));
        model.clear();
        QCOMPARE(model.rowCount(), 0);
    }

    void chartThrottles() {
        SearchChart chart;
        chart.resize(800, 500);
        chart.show();
        chart.setReference(1000, 5000);
        chart.setBudgetHint(2000);
        const int before = chart.redraws();
        QElapsedTimer t;
        t.start();
        // 500 events in a burst: at most one redraw per 40 ms follows.
        for (int i = 1; i <= 500; ++i) {
            chart.addPoints(QStringLiteral("sa"), {{int64_t(i), 1000.0 + i}});
            chart.setProgress(QStringLiteral("random"), i);
        }
        QCOMPARE(chart.redraws(), before); // nothing drawn synchronously
        QTRY_VERIFY_WITH_TIMEOUT(chart.drawnPoints(QStringLiteral("sa")) > 0, 2000);
        QVERIFY(chart.redraws() - before <= 1 + int(t.elapsed() / 40));
        QCOMPARE(chart.curve(QStringLiteral("sa")).size(), 500);
        // A step line: two points per improvement after the first.
        QCOMPARE(chart.drawnPoints(QStringLiteral("sa")), 2 * 500 - 1);
        chart.clear();
        QVERIFY(chart.searchers().isEmpty());
    }

    void learningCurvePlaceholder() {
        LearningCurveView v;
        QVERIFY(v.showingPlaceholder());
        v.appendIteration(1, {{QStringLiteral("mean reward"), 0.5}, {QStringLiteral("entropy"), 2.0}});
        v.appendIteration(2, {{QStringLiteral("mean reward"), 0.7}, {QStringLiteral("entropy"), 1.8}});
        QTRY_VERIFY(!v.showingPlaceholder());
        QCOMPARE(v.seriesNames().size(), 2);
        QCOMPARE(v.points(QStringLiteral("entropy")).size(), 2);
        v.clear();
        QVERIFY(v.showingPlaceholder());
    }

    void stepSplitMatchesStage() {
        // With one stage, operators and collectives add up to the stage time.
        const Scenario s = scenario("deepseek-v3-h100-32x8.yaml");
        const CostModel model(s);
        const auto rec = makePlanRecord(model, model.megatronPlan(), "Megatron", "megatron");
        QCOMPARE(rec->plan.degrees.pp, 1);
        const Breakdown& b = rec->breakdown(false);
        const StepSplit split = stepSplit(b);
        QVERIFY2(std::abs(split.total() - b.stageMs) < 1e-6 * b.stageMs + 1e-9,
                 qPrintable(QStringLiteral("%1 vs %2").arg(split.total()).arg(b.stageMs)));
        QVERIFY(split.networkMs > 0); // DeepSeek-V3's EP all-to-all spans nodes
    }

    void heatmap() {
        const Scenario s = scenario("deepseek-v3-h100-32x8.yaml");
        const CostModel model(s);
        auto sc = std::make_shared<const Scenario>(s);
        const auto rec = makePlanRecord(model, model.megatronPlan(), "Megatron", "megatron");
        ShardingHeatmap map;
        map.resize(1000, 600);
        map.setPlan(sc, rec);
        QCOMPARE(map.columnCount(), 61);
        QStringList rows;
        for (int r = 0; r < map.rowCount(); ++r) rows << map.rowName(r);
        // DeepSeek-V3: 3 dense layers (FFN rows) then MoE layers (router, experts, shared experts).
        QCOMPARE(rows, (QStringList{"embedding", "norms", "qkv", "attention", "out_proj", "ffn_up",
                                    "ffn_down", "router", "experts", "shared_experts", "lm_head"}));
        const int experts = int(rows.indexOf("experts")), ffn = int(rows.indexOf("ffn_up"));
        QCOMPARE(map.cellChoice(experts, 10), QStringLiteral("expert"));
        QVERIFY(map.cellChoice(experts, 1).isEmpty()); // layer 1 is dense
        QVERIFY(map.cellChoice(ffn, 10).isEmpty());    // layer 10 is MoE
        QVERIFY(map.cellToolTip(experts, 10).contains("all-to-all"));
        QVERIFY(map.cellToolTip(experts, 10).contains("network"));
        double total = 0;
        for (int c = 0; c < map.columnCount(); ++c)
            for (int r = 0; r < map.rowCount(); ++r) total += map.cellShare(r, c);
        QVERIFY(std::abs(total - 1.0) < 1e-9);
        map.setColumns(ShardingHeatmap::Columns::Stages);
        QCOMPARE(map.columnCount(), rec->plan.degrees.pp);
        map.setColorBy(ShardingHeatmap::ColorBy::TimeShare);
        QImage img(1000, 600, QImage::Format_ARGB32);
        QPainter p(&img);
        map.paintTo(p, img.rect()); // no crash, and something drawn
        p.end();
        QVERIFY(img.pixelColor(500, 300) != QColor(Qt::black));
    }

    // The plan summary says what a serving TTFT is made of: the step in flight and the prompt's chunk steps
    // (chat serving, 1,000-token prompts: one chunk under the default budget of 8,192; at a budget of 600,
    // ceil(1000 / (600 - B)) of them). Decode has no such line.
    void ttftChunksInThePlanSummary() {
        const Scenario s = scenario("llama-3.1-70b-h100-1x8-chat.yaml");
        const CostModel model(s);
        Plan p = planWith({1, 1, 8, 1, 1, 1});
        const auto rec = makePlanRecord(model, p, "tp8", "test");
        auto sc = std::make_shared<const Scenario>(s);
        PlanDetails details;
        details.setPlan(sc, rec);
        QVERIFY2(details.summaryText().contains("then one chunk step of the prompt"), qPrintable(details.summaryText()));
        QVERIFY2(details.summaryText().contains("prefill budget 8,192 tokens a step"), qPrintable(details.summaryText()));
        p.prefillBudget = 600;
        const auto small = makePlanRecord(model, p, "small budget", "test");
        const int64_t B = small->metrics().batch;
        QVERIFY(B < 600);
        const int k = int(std::ceil(1000.0 / double(600 - B)));
        QCOMPARE(small->metrics().ttftChunks, k);
        details.setPlan(sc, small);
        if (k > 1)
            QVERIFY2(details.summaryText().contains(QString("then %1 chunk steps of the prompt").arg(k)),
                     qPrintable(details.summaryText()));
        const Scenario d = scenario("llama-3.1-70b-h100-4x8.yaml"); // decode
        const CostModel dm(d);
        details.setPlan(std::make_shared<const Scenario>(d), makePlanRecord(dm, planWith({1, 4, 8, 1, 1, 1}), "d", "t"));
        QVERIFY(!details.summaryText().contains("chunk step"));
    }

    // A plan with its own layers per stage: Llama-3.1-70B's 80 layers as 14 + 22 + 22 + 22 on pp 4 (the
    // balanced split is 20 each). The heatmap's stage columns, the layer columns' stages, the timeline's
    // stages and the plan summary all follow it; a split that does not fit the model shows as balanced.
    void stageBoundariesFollowThePlan() {
        const Scenario s = scenario("llama-3.1-70b-h100-4x8.yaml");
        const CostModel model(s);
        Plan p = planWith({4, 1, 8, 1, 1, 8});
        p.stageLayers = {14, 22, 22, 22};
        QVERIFY2(!model.checkPlan(p), model.checkPlan(p).value_or("").c_str());
        const auto rec = makePlanRecord(model, p, "uneven", "test");
        auto sc = std::make_shared<const Scenario>(s);
        const std::vector<std::pair<int, int>> expected = {{0, 14}, {14, 22}, {36, 22}, {58, 22}};

        ShardingHeatmap map;
        map.resize(1000, 600);
        map.setPlan(sc, rec);
        QCOMPARE(map.columnCount(), 80);
        QCOMPARE(map.columnStage(13), 0);
        QCOMPARE(map.columnStage(14), 1);
        QCOMPARE(map.columnStage(35), 1);
        QCOMPARE(map.columnStage(36), 2);
        QCOMPARE(map.columnStage(79), 3);
        map.setColumns(ShardingHeatmap::Columns::Stages);
        QCOMPARE(map.columnCount(), 4);
        for (int c = 0; c < 4; ++c) QCOMPARE(map.columnLayers(c), expected[size_t(c)]);

        const Timeline t = buildTimeline(s, *rec, false);
        QCOMPARE(t.layers, expected);
        // The first stage holds 8 layers fewer (and the embedding, not the head): it finishes first and
        // waits, a bubble on stage 0.
        QVERIFY(t.stageMs[0] < t.stageMs[1]);
        bool bubble0 = false;
        for (const TimelineItem& it : t.items)
            bubble0 = bubble0 || (it.kind == TimelineItem::Kind::Bubble && it.stage == 0);
        QVERIFY(bubble0);

        PlanDetails details;
        details.setPlan(sc, rec);
        QVERIFY2(details.summaryText().contains("Layers per stage: 14 + 22 + 22 + 22 (the plan's own split)"),
                 qPrintable(details.summaryText()));
        const auto balanced = makePlanRecord(model, planWith({4, 1, 8, 1, 1, 8}), "balanced", "test");
        details.setPlan(sc, balanced);
        QVERIFY2(details.summaryText().contains("Layers per stage: 20 + 20 + 20 + 20 (balanced)"),
                 qPrintable(details.summaryText()));
        // The comparison names the split as the one difference.
        ComparisonView cmp;
        cmp.setScenario(sc);
        cmp.setCandidates({{QStringLiteral("balanced"), balanced, nullptr}, {QStringLiteral("uneven"), rec, nullptr}}, 0, 1);
        QCOMPARE(cmp.differences(), QStringList{"layers per stage"});

        Plan wrong = p;
        wrong.stageLayers = {14, 22, 22, 21}; // 79 layers: drawn as the balanced split
        const auto spans = stageSpans(80, wrong);
        QCOMPARE(spans.size(), size_t(4));
        for (const StageSpan& st : spans) QCOMPARE(st.count, 20);

        // The picture: the timeline of the uneven plan, for looking at.
        if (const QByteArray dir = qgetenv("SHARDPLAN_SHOTS"); !dir.isEmpty()) {
            TimelineCanvas canvas;
            canvas.resize(1400, 420);
            canvas.setPlan(sc, rec);
            QImage img(canvas.size(), QImage::Format_ARGB32);
            img.fill(Qt::white);
            QPainter pa(&img);
            canvas.paintTo(pa, img.rect());
            pa.end();
            img.save(QString::fromLocal8Bit(dir) + "/timeline-uneven.png");
            QImage hm(1400, 500, QImage::Format_ARGB32);
            hm.fill(Qt::white);
            QPainter ph(&hm);
            map.setColumns(ShardingHeatmap::Columns::Layers);
            map.paintTo(ph, hm.rect());
            ph.end();
            hm.save(QString::fromLocal8Bit(dir) + "/heatmap-uneven.png");
        }
    }

    // Llama 4 Maverick (tests/data/hf/llama-4-maverick.config.json: 48 layers, interleave_moe_layer_step 2:
    // layers 1, 3, 5, ... are MoE, the others dense, as transformers' Llama4TextConfig lays them out): the
    // heatmap shows FFN cells on even layers and expert cells on odd ones, and each of 4 stages holds 6 of
    // each.
    void heatmapInterleavedMoe() {
        Scenario s = scenario("llama-3.1-70b-h100-4x8.yaml");
        auto m = loadModel(SHARDPLAN_TESTDATA_DIR "/hf/llama-4-maverick.config.json");
        QVERIFY2(m.ok(), m.error().str().c_str());
        s.model = m.value();
        const CostModel model(s);
        Plan p = Plan::megatronChoices({4, 1, 8, 8, 1, 1});
        p.degrees.ep = 8, p.degrees.etp = 1, p.degrees.edp = 1;
        p.setChoice(Op::Experts, choice::ExpExpert);
        QVERIFY2(!model.checkPlan(p), model.checkPlan(p)->c_str());
        auto sc = std::make_shared<const Scenario>(s);
        ShardingHeatmap map;
        map.resize(1000, 600);
        map.setPlan(sc, makePlanRecord(model, p, "pp4", "manual"));
        QCOMPARE(map.columnCount(), 48);
        QStringList rows;
        for (int r = 0; r < map.rowCount(); ++r) rows << map.rowName(r);
        const int experts = int(rows.indexOf("experts")), ffn = int(rows.indexOf("ffn_up"));
        QVERIFY(experts >= 0 && ffn >= 0);
        for (int l : {0, 2, 46}) {
            QVERIFY2(!map.cellChoice(ffn, l).isEmpty(), qPrintable(QString::number(l)));
            QVERIFY2(map.cellChoice(experts, l).isEmpty(), qPrintable(QString::number(l)));
        }
        for (int l : {1, 3, 47}) {
            QVERIFY2(map.cellChoice(ffn, l).isEmpty(), qPrintable(QString::number(l)));
            QVERIFY2(!map.cellChoice(experts, l).isEmpty(), qPrintable(QString::number(l)));
        }
        map.setColumns(ShardingHeatmap::Columns::Stages);
        QCOMPARE(map.columnCount(), 4);
        for (int c = 0; c < 4; ++c) {
            QVERIFY(!map.cellChoice(ffn, c).isEmpty() && !map.cellChoice(experts, c).isEmpty());
            QVERIFY2(map.cellToolTip(experts, c).contains("MoE layers (x6)"),
                     qPrintable(map.cellToolTip(experts, c)));
            QVERIFY2(map.cellToolTip(ffn, c).contains("(x6)"), qPrintable(map.cellToolTip(ffn, c)));
        }
    }

    // A plan with layer groups: Llama-3.1-70B's 80 layers as 0-29 (Megatron's head-sharded attention) and
    // 30-79 (batch-sharded), on pp 4 (stages of 20 layers). The breakdown's attention rows are set by hand,
    // one per group, so the times are known: group 0's row 0.3 ms at a share of 0.6 (0.5 ms per layer),
    // group 1's 0.8 ms at 0.4 (2.0 ms per layer), and no collectives from attention.
    void heatmapLayerGroups() {
        const Scenario s = scenario("llama-3.1-70b-h100-4x8.yaml");
        const CostModel model(s);
        Plan p = planWith({4, 1, 8, 1, 1, 8});
        LayerGroup second{50, p.choices};
        second.choices[size_t(Op::Attention)] = choice::AttnBatch;
        p.layerGroups = {LayerGroup{30, p.choices}, second};
        auto rec = std::make_shared<PlanRecord>(*makePlanRecord(model, p, "grouped", "test"));
        Breakdown& b = rec->eval.decode.ops.empty() ? rec->eval.prefill : rec->eval.decode;
        OpCost attention;
        for (const OpCost& o : b.ops)
            if (o.layer == LayerKind::Dense && o.op == "attention") attention = o;
        QCOMPARE(QString::fromStdString(attention.op), QStringLiteral("attention"));
        std::erase_if(b.ops, [](const OpCost& o) { return o.op == "attention"; });
        std::erase_if(b.comms, [](const CommCost& c) { return c.where.rfind("attention", 0) == 0; });
        OpCost g0 = attention, g1 = attention;
        g0.layerGroup = 0, g0.groupShare = 0.6, g0.timeMs = 0.3;
        g1.layerGroup = 1, g1.groupShare = 0.4, g1.timeMs = 0.8, g1.choice = "batch";
        b.ops.push_back(g0);
        b.ops.push_back(g1);
        auto sc = std::make_shared<const Scenario>(s);

        ShardingHeatmap map;
        map.resize(1000, 600);
        map.setPlan(sc, rec);
        QStringList rows;
        for (int r = 0; r < map.rowCount(); ++r) rows << map.rowName(r);
        const int attn = int(rows.indexOf("attention")), qkv = int(rows.indexOf("qkv"));
        QCOMPARE(map.columnCount(), 80);
        QCOMPARE(map.cellChoice(attn, 29), QStringLiteral("head"));
        QCOMPARE(map.cellChoice(attn, 30), QStringLiteral("batch")); // layer 30: group 1's first
        QCOMPARE(map.cellChoice(attn, 79), QStringLiteral("batch"));
        QCOMPARE(map.cellChoice(qkv, 30), map.cellChoice(qkv, 29)); // what the groups share
        QVERIFY(std::abs(map.cellMs(attn, 10) - 0.5) < 1e-12);      // 0.3 / 0.6
        QVERIFY(std::abs(map.cellMs(attn, 40) - 2.0) < 1e-12);      // 0.8 / 0.4
        QVERIFY2(map.cellToolTip(attn, 40).contains("of layer group 1"),
                 qPrintable(map.cellToolTip(attn, 40)));
        QVERIFY2(map.cellToolTip(attn, 40).contains(formatMs(2.0)), qPrintable(map.cellToolTip(attn, 40)));
        // Stage columns: stage 1 holds layers 20-39, ten of each group: both parts, 10 x 0.5 + 10 x 2.0 ms.
        map.setColumns(ShardingHeatmap::Columns::Stages);
        QCOMPARE(map.columnCount(), 4);
        QCOMPARE(map.cellChoice(attn, 0), QStringLiteral("head"));
        QCOMPARE(map.cellChoice(attn, 1), QStringLiteral("head / batch"));
        QCOMPARE(map.cellChoice(attn, 2), QStringLiteral("batch"));
        QVERIFY(std::abs(map.cellMs(attn, 1) - 25.0) < 1e-9);
        QVERIFY(std::abs(map.cellMs(attn, 0) - 10.0) < 1e-9); // 20 x 0.5
        if (const QByteArray dir = qgetenv("SHARDPLAN_SHOTS"); !dir.isEmpty()) {
            for (auto cols : {ShardingHeatmap::Columns::Layers, ShardingHeatmap::Columns::Stages}) {
                map.setColumns(cols);
                QImage hm(1400, 500, QImage::Format_ARGB32);
                hm.fill(Qt::white);
                QPainter ph(&hm);
                map.paintTo(ph, hm.rect());
                ph.end();
                hm.save(QString::fromLocal8Bit(dir) + (cols == ShardingHeatmap::Columns::Layers
                                                           ? "/heatmap-groups-layers.png"
                                                           : "/heatmap-groups-stages.png"));
            }
        }

        // The plan details and the comparison name the groups; the elite table marks the plan.
        PlanDetails details;
        details.setPlan(sc, rec);
        QVERIFY2(details.summaryText().contains("Layer groups: layers 0-29 | 30-79: attention batch"),
                 qPrintable(details.summaryText()));
        const auto uniform = makePlanRecord(model, planWith({4, 1, 8, 1, 1, 8}), "uniform", "test");
        details.setPlan(sc, uniform);
        QVERIFY(!details.summaryText().contains("Layer groups"));
        ComparisonView cmp;
        cmp.setScenario(sc);
        cmp.setCandidates({{QStringLiteral("uniform"), uniform, nullptr}, {QStringLiteral("grouped"), rec, nullptr}}, 0, 1);
        QCOMPARE(cmp.differences(), QStringList{"layer groups"});
        EliteModel elite;
        elite.setModel(s.model);
        Candidate c;
        c.plan = p;
        c.metrics = rec->metrics();
        elite.setEntries({EliteEntry{std::make_shared<const Candidate>(c), QStringLiteral("sa")}});
        QVERIFY2(elite.data(elite.index(0, EliteModel::Sharding))
                     .toString()
                     .contains("layer groups: layers 0-29 | 30-79: attention batch"),
                 qPrintable(elite.data(elite.index(0, EliteModel::Sharding)).toString()));
    }

    // Elite rows that differ only in their operator choices: the Sharding column (the last, often cut by
    // the table's width) leads with each row's own departures from the Megatron recipe, those every row
    // shares after "all rows:"; the tooltip keeps the operators' order.
    void eliteShardingLeadsWithWhatDiffers() {
        const Scenario s = scenario("llama-3.1-8b-h100-1x8.yaml");
        const CostModel model(s);
        Plan a = model.megatronPlan(), b = model.megatronPlan();
        a.setChoice(Op::Qkv, choice::QkvRow);
        a.setChoice(Op::Attention, choice::AttnBatch);
        b.setChoice(Op::Attention, choice::AttnBatch);
        b.setChoice(Op::OutProj, choice::OutToken);
        EliteModel elite;
        elite.setModel(s.model);
        auto entry = [&](const Plan& p) {
            Candidate c;
            c.plan = p;
            c.metrics = model.evaluate(p);
            return EliteEntry{std::make_shared<const Candidate>(c), QStringLiteral("sa")};
        };
        elite.setEntries({entry(a), entry(b)});
        auto text = [&](int row, int role) {
            return elite.data(elite.index(row, EliteModel::Sharding), role).toString();
        };
        QCOMPARE(text(0, Qt::DisplayRole), QStringLiteral("qkv row; all rows: attention batch"));
        QCOMPARE(text(1, Qt::DisplayRole), QStringLiteral("out_proj token; all rows: attention batch"));
        QCOMPARE(text(1, Qt::ToolTipRole), QStringLiteral("attention batch, out_proj token"));
        // One row: nothing to tell apart, the operators' order.
        elite.clear();
        elite.setEntries({entry(b)});
        QCOMPARE(text(0, Qt::DisplayRole), QStringLiteral("attention batch, out_proj token"));
    }

    void comparisonMarksDifferences() {
        const Scenario s = scenario("llama-3.1-8b-h100-1x8.yaml");
        const CostModel model(s);
        auto sc = std::make_shared<const Scenario>(s);
        const auto meg = makePlanRecord(model, model.megatronPlan(), "Megatron", "megatron");
        Plan other = model.megatronPlan();
        other.setChoice(Op::Qkv, choice::QkvRow);
        other.setChoice(Op::Attention, choice::AttnBatch);
        QVERIFY(!model.checkPlan(other));
        const auto rec = makePlanRecord(model, other, "Edited", "test");
        ComparisonView v;
        v.resize(1200, 700);
        v.setScenario(sc);
        v.setCandidates({{QStringLiteral("Megatron"), meg, nullptr}, {QStringLiteral("Edited"), rec, nullptr}}, 0, 1);
        QCOMPARE(v.differences(), (QStringList{"qkv", "attention"}));
        QTableWidget* t = v.settingsTable();
        int marked = 0;
        for (int r = 0; r < t->rowCount(); ++r) {
            const bool differs = t->item(r, 0)->data(Qt::UserRole).toBool();
            marked += differs;
            QCOMPARE(differs, t->item(r, 1)->text() != t->item(r, 2)->text());
            if (differs) QVERIFY(t->item(r, 0)->font().bold());
        }
        QCOMPARE(marked, 2);
        // Same plan on both sides: nothing differs.
        v.setSides(0, 0);
        QVERIFY(v.differences().isEmpty());
        // The throughput ratio is right / left.
        v.setSides(0, 1);
        const QString ratio = v.metricsTable()->item(0, 3)->text();
        QCOMPARE(ratio,
                 QStringLiteral("%1x").arg(rec->metrics().throughput / meg->metrics().throughput, 0, 'f', 3));
        // In a narrow window the names, figures and ratios stay whole (a long value on two lines), and each
        // name's tooltip says what it is.
        v.resize(900, 600);
        v.show();
        QVERIFY(QTest::qWaitForWindowExposed(&v));
        QTableWidget* m = v.metricsTable();
        const QString cut = cutCell(m);
        QVERIFY2(cut.isEmpty(), qPrintable(cut));
        for (int r = 0; r < m->rowCount(); ++r)
            QVERIFY(m->item(r, 0)->toolTip().startsWith(m->item(r, 0)->text()));
    }

    // Speculative decoding in the plan views: DeepSeek-V3's MTP module, one draft token at the model's
    // cited 0.85 acceptance, so E = 1 + 0.85 = 1.85 tokens a step and TPOT = step / 1.85.
    void speculativeInThePlanViews() {
        const Scenario s = scenario("deepseek-v3-h100-32x8.yaml");
        const CostModel model(s);
        auto sc = std::make_shared<const Scenario>(s);
        auto loaded = loadPlan((kSamples + "/plans/deepseek-v3-dp-attention.yaml").toStdString());
        QVERIFY2(loaded.ok(), loaded.error().str().c_str());
        Plan p = loaded.value();
        const auto plain = makePlanRecord(model, p, "plain", "test");
        p.spec = {SpecMethod::Mtp, 1};
        const auto mtp = makePlanRecord(model, p, "mtp", "test");
        const Metrics& m = mtp->metrics();
        QVERIFY(m.feasible);
        QVERIFY(std::abs(m.tokensPerStep - 1.85) < 1e-12);
        QVERIFY(std::abs(m.tpotMs - m.stepMs / 1.85) < 1e-9 * m.tpotMs);

        PlanDetails details;
        details.setPlan(sc, mtp);
        const QString text = details.summaryText();
        QVERIFY2(
            text.contains(QStringLiteral("Speculative decoding: MTP, 1 draft token, 1.85 tokens a step.")),
            qPrintable(text));
        const QString tpot = QStringLiteral("%1 / 1.85 = %2").arg(formatMs(m.stepMs), formatMs(m.tpotMs));
        QVERIFY2(text.contains(tpot), qPrintable(tpot + QStringLiteral(" in ") + text));
        QVERIFY2(text.contains(formatMs(mtp->breakdown(false).draftMs)), qPrintable(text));
        QVERIFY(details.planText().contains(QStringLiteral("mtp")));
        // Three draft tokens at 0.9, 0.8, 0.7: E = 1 + 0.9 + 0.72 + 0.504 = 3.124.
        Scenario s3 = s;
        s3.workload.acceptance[size_t(SpecMethod::Mtp)] = {0.9, 0.8, 0.7};
        const CostModel model3(s3);
        Plan p3 = p;
        p3.spec.draftTokens = 3;
        details.setPlan(std::make_shared<const Scenario>(s3), makePlanRecord(model3, p3, "mtp x3", "test"));
        QVERIFY2(details.summaryText().contains(QStringLiteral("MTP, 3 draft tokens, 3.12 tokens a step")),
                 qPrintable(details.summaryText()));
        // Without it the summary says nothing of it.
        details.setPlan(sc, plain);
        QVERIFY(!details.summaryText().contains(QStringLiteral("peculative")));

        // The comparison: speculative decoding is the one setting that differs, and E has a row.
        ComparisonView v;
        v.resize(1200, 700);
        v.setScenario(sc);
        v.setCandidates({{QStringLiteral("plain"), plain, nullptr}, {QStringLiteral("mtp"), mtp, nullptr}}, 0, 1);
        QCOMPARE(v.differences(), QStringList{"speculative decoding"});
        QTableWidget* t = v.settingsTable();
        bool row = false;
        for (int r = 0; r < t->rowCount(); ++r)
            if (t->item(r, 0)->text().endsWith(QStringLiteral("speculative decoding"))) {
                row = true;
                QCOMPARE(t->item(r, 1)->text(), QStringLiteral("off"));
                QCOMPARE(t->item(r, 2)->text(), QStringLiteral("MTP, 1 draft token"));
                QVERIFY(t->item(r, 0)->font().bold());
            }
        QVERIFY(row);
        QTableWidget* mt = v.metricsTable();
        bool eRow = false;
        for (int r = 0; r < mt->rowCount(); ++r) {
            if (mt->item(r, 0)->text() == QStringLiteral("TPOT"))
                QVERIFY2(mt->item(r, 2)->toolTip().contains(QStringLiteral("/ 1.85")),
                         qPrintable(mt->item(r, 2)->toolTip()));
            if (mt->item(r, 0)->text() == QStringLiteral("Tokens a step (E)")) {
                eRow = true;
                QCOMPARE(mt->item(r, 1)->text(), QStringLiteral("1.00"));
                QCOMPARE(mt->item(r, 2)->text(), QStringLiteral("1.85"));
            }
        }
        QVERIFY(eRow);
        // The bars put the draft passes apart: its set holds 0 for the plain plan and the draft for mtp.
        QHorizontalStackedBarSeries* bars = v.barSeries();
        QVERIFY(bars);
        const QBarSet* draft = nullptr;
        for (QBarSet* set : bars->barSets())
            if (set->label() == QStringLiteral("draft")) draft = set;
        QVERIFY(draft);
        QCOMPARE(draft->at(0), mtp->breakdown(false).draftMs); // right plan below
        QCOMPARE(draft->at(1), 0.0);
        // Two plans without it: no draft bar, no E row.
        v.setCandidates({{QStringLiteral("plain"), plain, nullptr}, {QStringLiteral("plain too"), plain, nullptr}}, 0, 1);
        for (QBarSet* set : v.barSeries()->barSets()) QVERIFY(set->label() != QStringLiteral("draft"));
        for (int r = 0; r < mt->rowCount(); ++r)
            QVERIFY(mt->item(r, 0)->text() != QStringLiteral("Tokens a step (E)"));

        // The elite table names it beside the degrees; its TPOT tooltip gives step / E.
        EliteModel elite;
        elite.setModel(s.model);
        Candidate c;
        c.plan = p;
        c.metrics = m;
        elite.setEntries({EliteEntry{std::make_shared<const Candidate>(c), QStringLiteral("sa")}});
        QVERIFY2(
            elite.data(elite.index(0, EliteModel::Degrees)).toString().endsWith(QStringLiteral(" | mtp x1")),
            qPrintable(elite.data(elite.index(0, EliteModel::Degrees)).toString()));
        QVERIFY(elite.data(elite.index(0, EliteModel::Tpot), Qt::ToolTipRole).toString().contains("1.85"));
    }

    // The constraints' speculative decoding: searched (the default), off, or pinned to one of the options the
    // scenario offers; a pin the scenario cannot run is an error that names why.
    void scenarioEditorSpeculative() {
        Scenario s = scenario("deepseek-v3-h100-32x8.yaml");
        s.workload.acceptance[size_t(SpecMethod::Mtp)] = {0.9, 0.8, 0.7}; // up to three draft tokens
        ScenarioEditor ed(kSamples);
        ed.setScenario(s);
        QCoreApplication::sendPostedEvents();
        const int width = ed.minimumSizeHint().width();
        QComboBox* spec = ed.specCombo();
        QVERIFY(spec && spec->isEnabled());
        QCOMPARE(spec->currentIndex(), 0);
        QCOMPARE(int(ed.scenario().constraints.specPolicy), int(Constraints::SpecPolicy::Search));
        QStringList items;
        for (int i = 0; i < spec->count(); ++i) items << spec->itemText(i);
        QCOMPARE(items, (QStringList{"searched", "off", "mtp x1", "mtp x2", "mtp x3"}));
        // E = 1 + 0.9 + 0.72 + 0.504 = 3.124 for three.
        QCOMPARE(spec->itemData(4, Qt::ToolTipRole).toString(),
                 QStringLiteral("MTP, 3 draft tokens, 3.12 tokens a step"));
        // Searched weighs none and the three: four times the plans of off.
        const double searched = SearchSpace(ed.scenario()).size().count;
        QSignalSpy edits(&ed, &ScenarioEditor::edited);
        spec->setCurrentIndex(1);
        QCOMPARE(edits.count(), 1);
        QCOMPARE(int(ed.scenario().constraints.specPolicy), int(Constraints::SpecPolicy::Off));
        QCOMPARE(SearchSpace(ed.scenario()).size().count * 4, searched);
        // Pinned to mtp x3: every plan drafts three.
        spec->setCurrentIndex(4);
        QCOMPARE(edits.count(), 2);
        QCOMPARE(int(ed.scenario().constraints.specPolicy), int(Constraints::SpecPolicy::Pinned));
        QCOMPARE(ed.scenario().constraints.specPin, (Speculative{SpecMethod::Mtp, 3}));
        const SearchSpace pinned(ed.scenario());
        QCOMPARE(pinned.size().count * 4, searched);
        Rng rng(3);
        QCOMPARE(pinned.toPlan(pinned.sample(rng)).spec, (Speculative{SpecMethod::Mtp, 3}));
        QVERIFY(ed.errors().isEmpty());
        // Saved and shown again.
        const std::string saved = toYaml(ed.scenario());
        auto back = parseScenario(saved, (kSamples + "/scenarios/saved.yaml").toStdString());
        QVERIFY2(back.ok(), back.error().str().c_str());
        QCOMPARE(back.value().constraints.specPin, (Speculative{SpecMethod::Mtp, 3}));
        ScenarioEditor again(kSamples);
        again.setScenario(back.value());
        QCOMPARE(again.specCombo()->currentText(), QStringLiteral("mtp x3"));
        // Back to searched: the pin goes with it.
        again.specCombo()->setCurrentIndex(0);
        QCOMPARE(int(again.scenario().constraints.specPolicy), int(Constraints::SpecPolicy::Search));
        QCOMPARE(again.scenario().constraints.specPin, Speculative{});
        // A model without MTP modules: the pin stays, outlined, and the editor says why (no search runs).
        const auto llama = loadModel((kSamples + "/models/llama-3.1-8b.yaml").toStdString());
        QVERIFY(llama.ok());
        ed.replaceModel(llama.value(), QString());
        QCOMPARE(ed.specCombo()->currentText(), QStringLiteral("mtp x3"));
        QVERIFY2(ed.errors().join(' ').contains(QStringLiteral("has no MTP modules")),
                 qPrintable(ed.errors().join(' ')));
        // The marked pin does not widen the panel (once the layouts take the new items in).
        QCoreApplication::sendPostedEvents();
        QVERIFY(ed.minimumSizeHint().width() <= width);
        if (const QByteArray shots = qgetenv("SHARDPLAN_SHOTS"); !shots.isEmpty()) {
            ed.resize(540, 800);
            ed.grab().save(QString::fromLocal8Bit(shots) + "/scenario-editor-speculative.png");
        }
        ed.specCombo()->setCurrentIndex(0);
        QVERIFY(ed.errors().isEmpty());
        // Prefill drafts nothing: the control is off.
        Scenario prefill = s;
        prefill.workload.phase = Phase::Prefill;
        ed.setScenario(prefill);
        QVERIFY(!ed.specCombo()->isEnabled());
        QCOMPARE(ed.specCombo()->count(), 2);
    }

    void comparisonSaysWhy() {
        // Megatron (tp8, one replica) against dp8 tp1 on one node: eight times the replicas.
        const Scenario s = scenario("llama-3.1-8b-h100-1x8.yaml");
        const CostModel model(s);
        const auto meg = makePlanRecord(model, model.megatronPlan(), "Megatron", "megatron");
        Plan dp8 = Plan::megatronChoices({1, 8, 1, 1, 1, 8});
        QVERIFY2(!model.checkPlan(dp8), model.checkPlan(dp8).value_or("").c_str());
        const auto rec = makePlanRecord(model, dp8, "dp8", "test");
        QVERIFY(rec->metrics().feasible);
        ComparisonView v;
        v.resize(1200, 700);
        v.setScenario(std::make_shared<const Scenario>(s));
        v.setCandidates({{QStringLiteral("Megatron"), meg, nullptr}, {QStringLiteral("dp8"), rec, nullptr}}, 0, 1);
        // Rows: replicas 1 and 8, sequences in flight = dp x pp x batch of each side.
        QTableWidget* t = v.metricsTable();
        auto row = [t](const QString& name) {
            for (int r = 0; r < t->rowCount(); ++r)
                if (t->item(r, 0)->text() == name) return r;
            return -1;
        };
        const int rep = row(QStringLiteral("Replicas (dp)")),
                  inf = row(QStringLiteral("Sequences in flight"));
        QVERIFY(rep >= 0 && inf >= 0);
        QCOMPARE(t->item(rep, 1)->text(), QStringLiteral("1"));
        QCOMPARE(t->item(rep, 2)->text(), QStringLiteral("8"));
        QCOMPARE(t->item(inf, 2)->text(), formatInteger(double(8 * rec->metrics().batch)));
        QVERIFY(!t->item(rep, 0)->toolTip().isEmpty());
        QVERIFY2(v.whySentence().contains(QStringLiteral("eight times the replicas")),
                 qPrintable(v.whySentence()));
        // Numbers on the bars, and a tooltip for a part.
        QHorizontalStackedBarSeries* bars = v.barSeries();
        QVERIFY(bars && bars->isLabelsVisible());
        QBarSet* compute = bars->barSets().first();
        emit compute->hovered(true, 1); // the left plan's bar (categories run bottom to top)
        QVERIFY2(v.lastBarTip().contains(QStringLiteral("Megatron")) &&
                     v.lastBarTip().contains(QStringLiteral("ms")),
                 qPrintable(v.lastBarTip()));
        QVERIFY(v.lastBarTip().contains(QStringLiteral("right / left")));
    }

    // The why whole at 1280x720: the Comparison tab of the main window there is about 710 x 330 pixels, in a
    // scroll area (app/gui scrolledPage). The plan that reaches 13.1x Megatron's throughput with MTP x1: the
    // view is no wider than the tab, its label shows the why exactly as `shardplan compare` words it (first
    // sentence included) and tall enough for all of it, no metric name, value or ratio is cut, and ratios
    // keep three decimals.
    void comparisonShowsTheWhyWhole() {
        const Scenario s = scenario("deepseek-v3-h100-32x8.yaml");
        const CostModel model(s);
        auto plan = loadPlan(SHARDPLAN_TESTDATA_DIR "/plans/deepseek-v3-h100-32x8-mtp.yaml");
        QVERIFY2(plan.ok(), plan.error().str().c_str());
        const auto meg = makePlanRecord(model, model.megatronPlan(), "Megatron", "megatron");
        const auto mtp = makePlanRecord(model, plan.value(), "Opened: mtp.yaml", "file");
        QScrollArea tab;
        tab.setWidgetResizable(true);
        auto* v = new ComparisonView;
        tab.setWidget(v);
        tab.resize(712, 330);
        tab.show();
        v->setScenario(std::make_shared<const Scenario>(s));
        v->setCandidates({{QStringLiteral("Megatron"), meg, nullptr}, {QStringLiteral("Opened: mtp.yaml"), mtp, nullptr}}, 0,
                         1);
        QVERIFY(QTest::qWaitForWindowExposed(&tab));
        QTest::qWait(50); // the queued fit of the metrics table
        QVERIFY2(v->width() <= tab.viewport()->width(),
                 qPrintable(QStringLiteral("%1 wide in %2").arg(v->width()).arg(tab.viewport()->width())));
        // The words: the core's, whole (the label's rich text read back as plain text).
        const std::string why =
            explainWhy(model, meg->plan, mtp->plan, "Megatron", "Opened: mtp.yaml").sentence;
        QCOMPARE(v->whySentence(), QString::fromStdString(why));
        QTextDocument doc;
        doc.setHtml(v->verdictLabel()->text());
        const QString shown = doc.toPlainText().simplified();
        QVERIFY2(shown.contains(QString::fromStdString(why)), qPrintable(shown));
        QVERIFY2(shown.contains(QStringLiteral("reaches 16.43x the throughput of Megatron: ")), qPrintable(shown));
        QVERIFY(shown.contains(QStringLiteral("is speculative decoding's (MTP x1 against none), not the "
                                              "sharding's")));
        QLabel* label = v->verdictLabel();
        QVERIFY2(label->heightForWidth(label->width()) <= label->height(),
                 qPrintable(QStringLiteral("needs %1, has %2")
                                .arg(label->heightForWidth(label->width()))
                                .arg(label->height())));
        QVERIFY(label->geometry().right() <= v->width());
        // Every cell of the metrics table fits its column (a long value on more lines), its row tall enough.
        QTableWidget* t = v->metricsTable();
        const QString cut = cutCell(t);
        QVERIFY2(cut.isEmpty(), qPrintable(cut));
        int rows = t->horizontalHeader()->height();
        for (int r = 0; r < t->rowCount(); ++r) rows += t->rowHeight(r);
        QVERIFY2(t->height() >= rows, qPrintable(QStringLiteral("%1 for %2").arg(t->height()).arg(rows)));
        // The throughput ratio as the CLI prints it: 13.134, not 13.1.
        const double q = mtp->metrics().throughput / meg->metrics().throughput;
        QVERIFY(q > 10);
        QCOMPARE(t->item(0, 3)->text(), QStringLiteral("%1x").arg(q, 0, 'f', 3));
    }

    // Issue 38's case: DeepSeek-V3 on 18x8 B200, TP pinned to 8, TPOT 30 ms; the right plan shards qkv,
    // attention, out_proj and the rest by token or batch. The view names each batch's limit, lists what each
    // of the right plan's settings costs when taken back, and a click puts that plan on the left.
    void comparisonNamesTheLimitAndWhatIfs() {
        Scenario s = scenario("deepseek-v3-b200-18x8.yaml");
        s.workload.tpotMs = 30;
        s.constraints.allowed[size_t(Axis::TP)] = {8};
        s.constraints.specPolicy = Constraints::SpecPolicy::Off;
        const CostModel model(s);
        const Plan a = model.megatronPlan();
        Plan b = a;
        using namespace choice;
        b.setChoice(Op::Qkv, QkvToken), b.setChoice(Op::MoeQkv, QkvToken);
        b.setChoice(Op::Attention, AttnBatch), b.setChoice(Op::MoeAttention, AttnBatch);
        b.setChoice(Op::OutProj, OutToken), b.setChoice(Op::MoeOutProj, OutToken);
        QVERIFY(!model.checkPlan(b));
        const auto ra = makePlanRecord(model, a, "Megatron", "megatron");
        const auto rb = makePlanRecord(model, b, "Learned", "rl");
        ComparisonView v;
        v.resize(1200, 800);
        v.setScenario(std::make_shared<const Scenario>(s));
        v.setCandidates({{QStringLiteral("Megatron"), ra, nullptr}, {QStringLiteral("Learned"), rb, nullptr}},
                        0, 1);
        QTableWidget* t = v.metricsTable();
        auto row = [t](const QString& name) {
            for (int r = 0; r < t->rowCount(); ++r)
                if (t->item(r, 0)->text() == name) return r;
            return -1;
        };
        const int limit = row(QStringLiteral("Batch stops at"));
        QVERIFY(limit >= 0);
        QCOMPARE(t->item(limit, 1)->text(), QStringLiteral("the TPOT SLO of 30 ms"));
        QCOMPARE(t->item(limit, 2)->text(), QStringLiteral("the TPOT SLO of 30 ms"));
        QVERIFY2(v.whySentence().contains(QStringLiteral("Both batches stop at the TPOT SLO of 30 ms.")),
                 qPrintable(v.whySentence()));
        QVERIFY2(v.whySentence().contains(QStringLiteral("NVLink collectives")), qPrintable(v.whySentence()));
        // What if: one row per differing operator, costliest first; each ratio is the cost model's.
        QTableWidget* w = v.whatIfTable();
        QCOMPARE(w->rowCount(), 6);
        const Metrics mb = model.evaluate(b);
        double previous = 0;
        for (int r = 0; r < w->rowCount(); ++r) {
            // Named and valued as in the settings table.
            const QString field = w->item(r, 0)->text();
            QTableWidget* st = v.settingsTable();
            int at = -1;
            for (int k = 0; k < st->rowCount(); ++k)
                if (st->item(k, 0)->text() == QStringLiteral("\u2260 ") + field) at = k;
            QVERIFY2(at >= 0, qPrintable(field));
            QCOMPARE(w->item(r, 1)->text(), st->item(at, 2)->text());
            QCOMPARE(w->item(r, 2)->text(), st->item(at, 1)->text());
            const auto diffs = planDifferences(s.model, a, b);
            QCOMPARE(int(diffs.size()), w->rowCount());
            // The row's tooltip is the what-if's summary: "moe.qkv column (as A): 0.588x B's throughput ...".
            const auto d = std::find_if(diffs.begin(), diffs.end(), [&](const PlanDiff& x) {
                return w->item(r, 0)->toolTip().startsWith(QString::fromStdString(x.field + " " + x.a + " "));
            });
            QVERIFY2(d != diffs.end(), qPrintable(w->item(r, 0)->toolTip()));
            const auto f = withSettingOf(b, a, d->field);
            QVERIFY(f);
            const double ratio = model.evaluate(*f).throughput / mb.throughput;
            QCOMPARE(w->item(r, 3)->text(), QStringLiteral("%1x").arg(ratio, 0, 'f', 3));
            QVERIFY(ratio >= previous);
            previous = ratio;
        }
        // A click: the right plan with that one setting taken back goes on the left; it is the one
        // difference.
        const QString first = w->item(0, 0)->text();
        v.showWhatIf(0);
        QCOMPARE(v.differences(), QStringList{first});
        QVERIFY(v.left()->label.find("Learned with " + first.toStdString()) == 0);
        QCOMPARE(v.right()->label, std::string("Learned"));
        // Only differences: the metric rows both plans share are left out (replicas: 18 on both sides).
        QVERIFY(row(QStringLiteral("Replicas (dp)")) >= 0);
        v.setSides(0, 1);
        auto* only = v.findChild<QCheckBox*>();
        QVERIFY(only && only->text() == QStringLiteral("Only differences"));
        only->setChecked(true);
        QCOMPARE(row(QStringLiteral("Replicas (dp)")), -1);
        QCOMPARE(row(QStringLiteral("Batch stops at")), -1); // both at the TPOT SLO
        QVERIFY(row(QStringLiteral("Batch per replica")) >= 0);
        for (int r = 0; r < t->rowCount(); ++r)
            QVERIFY(r == 0 || t->item(r, 1)->text() != t->item(r, 2)->text());
        only->setChecked(false);
        // The bars: a short axis title, and each bar names its plan's batch.
        QCOMPARE(v.barAxisTitle(), QStringLiteral("ms per step (slowest stage)"));
        QCOMPARE(v.barCategories(),
                 (QStringList{QStringLiteral("Learned<br>batch %1").arg(mb.batch),
                              QStringLiteral("Megatron<br>batch %1").arg(ra->metrics().batch)}));
    }

    // Two scenarios side by side: Llama 3.1 70B on 4x8 H100 against the same model on 1x8 MI300X. The
    // figures compare as they stand, the scenarios are named settings, and no what-if is offered.
    void comparisonOfTwoScenarios() {
        const Scenario h = scenario("llama-3.1-70b-h100-4x8.yaml"),
                       m = scenario("llama-3.1-70b-mi300x-1x8.yaml");
        const CostModel mh(h), mm(m);
        const auto rh = makePlanRecord(mh, mh.megatronPlan(), "H100 Megatron", "megatron");
        const auto rm = makePlanRecord(mm, mm.megatronPlan(), "MI300X Megatron", "megatron");
        auto sh = std::make_shared<const Scenario>(h);
        ComparisonView v;
        v.resize(1200, 800);
        v.setScenario(sh);
        v.setCandidates({{QStringLiteral("H100"), rh, nullptr},
                         {QStringLiteral("MI300X"), rm, std::make_shared<const Scenario>(m)}},
                        0, 1);
        QCOMPARE(v.scenarioOf(1)->cluster.gpu.name, m.cluster.gpu.name);
        QVERIFY(v.differences().contains(QStringLiteral("GPU")));
        QVERIFY(v.differences().contains(QStringLiteral("scenario")));
        QVERIFY(!v.differences().contains(QStringLiteral("model")));
        QCOMPARE(v.whatIfTable()->rowCount(), 0);
        const auto verdict = v.findChildren<QLabel*>();
        QVERIFY(std::any_of(verdict.begin(), verdict.end(), [&](const QLabel* l) {
            return l->text().contains(QStringLiteral("The plans serve two scenarios")) &&
                   l->text().contains(QString::fromStdString(m.name).toHtmlEscaped());
        }));
        QTableWidget* t = v.metricsTable();
        QCOMPARE(t->item(0, 3)->text(),
                 QStringLiteral("%1x").arg(rm->metrics().throughput / rh->metrics().throughput, 0, 'f', 3));
        // From files, as the "Other Scenario..." button does: the B200 sample's Megatron plan goes on the
        // right, and stays listed when the window's plans change.
        const QString b200 = kSamples + "/scenarios/qwen3-235b-b200-1x8.yaml";
        QCOMPARE(v.addFromScenario(b200), QString());
        QVERIFY(v.right()->label.find(": Megatron") != std::string::npos);
        QCOMPARE(v.scenarioOf(1)->cluster.gpu.name,
                 loadScenario(b200.toStdString()).value().cluster.gpu.name);
        QCOMPARE(v.scenarioOf(0)->name, h.name);
        v.setCandidates({{QStringLiteral("H100"), rh, nullptr}}, 0, 0);
        QCOMPARE(v.findChildren<QComboBox*>().first()->count(), 2); // H100 and the B200 Megatron plan
        // Bad input says where and what; nothing listed is lost.
        QTemporaryDir dir;
        const QString bad = dir.filePath("bad.yaml");
        QFile f(bad);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("name: x\nmodel: [\n");
        f.close();
        const QString error = v.addFromScenario(bad);
        QVERIFY2(error.contains("bad.yaml:"), qPrintable(error));
        const QString plan = kSamples + "/plans/deepseek-v3-dp-attention.yaml";
        const QString misfit = v.addFromScenario(b200, plan);
        QVERIFY2(misfit.contains("does not fit"), qPrintable(misfit));
        QVERIFY(v.right()->label.find(": Megatron") != std::string::npos);
        v.setCandidates({{QStringLiteral("H100"), rh, nullptr},
                         {QStringLiteral("MI300X"), rm, std::make_shared<const Scenario>(m)}},
                        0, 1);
        // Cost per million tokens on each side's GPUs: the price per GPU-hour of all its GPUs over its
        // million tokens an hour (the right side is the B200 plan the user put there).
        QVERIFY(!t->findItems(QStringLiteral("Per million tokens"), Qt::MatchExactly).isEmpty());
        for (int r = 0; r < t->rowCount(); ++r)
            if (t->item(r, 0)->text() == QStringLiteral("Per million tokens")) {
                const Scenario& x = *v.scenarioOf(1);
                const double tps = v.right()->metrics().throughput;
                const ServingCost c = servingCost(x.cluster, x.gpus(), tps);
                QVERIFY(c.priced && c.usdPerGpuHour > 0);
                QCOMPARE(
                    t->item(r, 2)->text(),
                    QStringLiteral("$%1").arg(c.usdPerGpuHour * x.gpus() / (tps * 3600 / 1e6), 0, 'f', 3));
            }
        // Sequences in flight from each plan's own figures: dp x pp x batch.
        for (int r = 0; r < t->rowCount(); ++r)
            if (t->item(r, 0)->text() == QStringLiteral("Sequences in flight")) {
                // The right side stays on the B200 plan the user put there.
                const Degrees& d = v.right()->plan.degrees;
                QCOMPARE(t->item(r, 2)->text(),
                         formatInteger(double(d.dp * d.pp * v.right()->metrics().batch)));
            }
    }

    void scenarioEditorValidates() {
        ScenarioEditor ed(kSamples);
        const Scenario s = scenario("llama-3.1-70b-h100-4x8.yaml");
        ed.setScenario(s);
        QSignalSpy edited(&ed, &ScenarioEditor::edited);
        QLineEdit* nodes = ed.field(QStringLiteral("nodes"));
        QVERIFY(nodes);
        QTest::keyClick(nodes, Qt::Key_A, Qt::ControlModifier);
        QTest::keyClicks(nodes, QStringLiteral("0"));
        QVERIFY(ed.fieldError(QStringLiteral("nodes")).contains("whole number from 1"));
        QVERIFY(!ed.isValid());
        QCOMPARE(ed.scenario().cluster.nodes, 4); // unchanged
        QCOMPARE(edited.count(), 0);
        QTest::keyClick(nodes, Qt::Key_Backspace);
        QTest::keyClicks(nodes, QStringLiteral("8"));
        QVERIFY(ed.isValid());
        QCOMPARE(ed.scenario().cluster.nodes, 8);
        QVERIFY(edited.count() >= 1);
        // SLO: not a number. Both SLO fields say their unit.
        const auto labels = ed.findChildren<QLabel*>();
        for (const QString& name : {QStringLiteral("TTFT SLO (ms)"), QStringLiteral("TPOT (ms)")})
            QVERIFY2(
                std::any_of(labels.begin(), labels.end(), [&](const QLabel* l) { return l->text() == name; }),
                qPrintable(name));
        QLineEdit* tpot = ed.field(QStringLiteral("tpot_ms"));
        tpot->selectAll();
        QTest::keyClicks(tpot, QStringLiteral("fast"));
        QVERIFY(ed.fieldError(QStringLiteral("tpot_ms")).contains("expected a number"));
        tpot->selectAll();
        QTest::keyClicks(tpot, QStringLiteral("40"));
        QCOMPARE(ed.scenario().workload.tpotMs, 40.0);
        // Degrees: allow only tp 4 and 8.
        DegreeChecks* tp = ed.degreeChecks(Axis::TP);
        for (int v : tp->values()) tp->setChecked(v, v == 4 || v == 8);
        QCOMPARE(ed.scenario().constraints.allowed[size_t(Axis::TP)], (std::vector<int>{4, 8}));
        tp->setAny(true);
        QVERIFY(ed.scenario().constraints.allowed[size_t(Axis::TP)].empty());
        // Pin qkv to row, then free it.
        QComboBox* pin = ed.pinCombo(Op::Qkv);
        pin->setCurrentIndex(1 + choice::QkvRow);
        emit pin->activated(1 + choice::QkvRow);
        QCOMPARE(int(ed.scenario().constraints.pinned[size_t(Op::Qkv)]), int(choice::QkvRow));
        // Layers per stage: tuned, saved with the scenario and shown again when it is loaded.
        QComboBox* split = ed.stageSplitCombo();
        QVERIFY(split);
        QCOMPARE(split->currentIndex(), int(StageSplit::Balanced));
        split->setCurrentIndex(int(StageSplit::Tuned));
        QCOMPARE(int(ed.scenario().constraints.stageSplit), int(StageSplit::Tuned));
        const std::string saved = toYaml(ed.scenario());
        QVERIFY2(saved.find("stage_layers: tuned") != std::string::npos, saved.c_str());
        auto reloaded = parseScenario(saved, (kSamples + "/scenarios/saved.yaml").toStdString());
        QVERIFY2(reloaded.ok(), reloaded.error().str().c_str());
        ScenarioEditor again(kSamples);
        again.setScenario(reloaded.value());
        QCOMPARE(again.stageSplitCombo()->currentIndex(), int(StageSplit::Tuned));
        if (const QByteArray shots = qgetenv("SHARDPLAN_SHOTS"); !shots.isEmpty()) {
            again.resize(520, 1000);
            again.grab().save(QString::fromLocal8Bit(shots) + "/scenario-editor-stage-split.png");
        }
        again.stageSplitCombo()->setCurrentIndex(int(StageSplit::Balanced));
        QCOMPARE(int(again.scenario().constraints.stageSplit), int(StageSplit::Balanced));
        // Operator choices per layer group, 3 groups: saved with the scenario and shown again; the count is
        // enabled for per layer group only.
        QComboBox* gran = ed.granularityCombo();
        QSpinBox* groups = ed.layerGroupsSpin();
        QVERIFY(gran && groups);
        QCOMPARE(gran->currentIndex(), int(Granularity::Type));
        QVERIFY(!groups->isEnabled());
        QSignalSpy granEdits(&ed, &ScenarioEditor::edited);
        gran->setCurrentIndex(int(Granularity::LayerGroup));
        QVERIFY(groups->isEnabled());
        groups->setValue(3);
        QCOMPARE(granEdits.count(), 2); // each an edit of its own (the window's undo steps)
        QCOMPARE(int(ed.scenario().constraints.granularity), int(Granularity::LayerGroup));
        QCOMPARE(ed.scenario().constraints.layerGroups, 3);
        const std::string grouped = toYaml(ed.scenario());
        QVERIFY2(grouped.find("granularity: layer-group") != std::string::npos, grouped.c_str());
        QVERIFY2(grouped.find("layer_groups: 3") != std::string::npos, grouped.c_str());
        auto groupedBack = parseScenario(grouped, (kSamples + "/scenarios/saved.yaml").toStdString());
        QVERIFY2(groupedBack.ok(), groupedBack.error().str().c_str());
        ScenarioEditor third(kSamples);
        third.setScenario(groupedBack.value());
        QCOMPARE(third.granularityCombo()->currentIndex(), int(Granularity::LayerGroup));
        // The prefill budget: searched adds the budget's decision to the space (one more decision, five times
        // the plans: kSearchedPrefillBudgets has five values), is saved with the scenario and shown again; the
        // combo is disabled for decode, which has no prefill.
        QVERIFY(ed.prefillBudgetCombo());
        QVERIFY(!ed.prefillBudgetCombo()->isEnabled()); // this scenario decodes only
        ScenarioEditor chat(kSamples);
        chat.setScenario(scenario("llama-3.1-70b-h100-1x8-chat.yaml"));
        QComboBox* budget = chat.prefillBudgetCombo();
        QCOMPARE(budget->currentIndex(), 0);
        QVERIFY(budget->isEnabled());
        const SearchSpace before(chat.scenario());
        QSignalSpy budgetEdits(&chat, &ScenarioEditor::edited);
        budget->setCurrentIndex(1);
        QCOMPARE(budgetEdits.count(), 1);
        QVERIFY(chat.scenario().constraints.searchPrefillBudget);
        const SearchSpace after(chat.scenario());
        QCOMPARE(after.decisionCount(), before.decisionCount() + 1);
        QCOMPARE(after.size().count, before.size().count * 5.0);
        const std::string budgeted = toYaml(chat.scenario());
        QVERIFY2(budgeted.find("prefill_budget: searched") != std::string::npos, budgeted.c_str());
        auto budgetBack = parseScenario(budgeted, (kSamples + "/scenarios/saved.yaml").toStdString());
        QVERIFY2(budgetBack.ok(), budgetBack.error().str().c_str());
        ScenarioEditor fourth(kSamples);
        fourth.setScenario(budgetBack.value());
        QCOMPARE(fourth.prefillBudgetCombo()->currentIndex(), 1);
        Scenario decode = budgetBack.value();
        decode.workload.phase = Phase::Decode;
        fourth.setScenario(decode);
        QVERIFY(!fourth.prefillBudgetCombo()->isEnabled());
        budget->setCurrentIndex(0);
        QVERIFY(!chat.scenario().constraints.searchPrefillBudget);
        QCOMPARE(third.layerGroupsSpin()->value(), 3);
        QVERIFY(third.layerGroupsSpin()->isEnabled());
        third.granularityCombo()->setCurrentIndex(int(Granularity::Stage));
        QCOMPARE(int(third.scenario().constraints.granularity), int(Granularity::Stage));
        QVERIFY(!third.layerGroupsSpin()->isEnabled());
        QCOMPARE(third.layerGroupsSpin()->maximum(), kMaxLayerGroups);
        QCOMPARE(third.layerGroupsSpin()->minimum(), 2);
        // A broken model file: the error names the file, the model stays.
        QTemporaryDir dir;
        const QString bad = dir.filePath(QStringLiteral("bad.yaml"));
        QFile f(bad);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("kind: model\nlayers: 3\nhidden: -5\n");
        f.close();
        QString error;
        QVERIFY(!ed.loadPart(FileKind::Model, bad, &error));
        QVERIFY2(error.contains("bad.yaml:3:9: hidden"), qPrintable(error));
        QCOMPARE(ed.scenario().model.name, s.model.name);
    }

    void planYamlRoundTrip() {
        const Scenario s = scenario("deepseek-v3-h100-32x8.yaml");
        const auto pool = candidates(s, 5, 3);
        for (const Candidate& c : pool) {
            const std::string y = toYaml(c.plan);
            auto back = parsePlan(y, "plan.yaml");
            QVERIFY2(back.ok(), back.ok() ? "" : back.error().str().c_str());
            QVERIFY(back.value() == c.plan);
            QVERIFY(y.find("degrees: {") != std::string::npos); // block style, degrees on one line
        }
    }

    void imageExport() {
        const Scenario s = scenario("llama-3.1-8b-h100-1x8.yaml");
        const CostModel model(s);
        ShardingHeatmap map;
        map.resize(900, 500);
        map.setPlan(std::make_shared<const Scenario>(s),
                    makePlanRecord(model, model.megatronPlan(), "Megatron", "m"));
        QTemporaryDir dir;
        QString error;
        const auto paint = [&map](QPainter& p, const QRect& r) { map.paintTo(p, r); };
        QVERIFY2(saveImage(&map, dir.filePath("h.png"), &error, paint), qPrintable(error));
        QVERIFY2(saveImage(&map, dir.filePath("h.svg"), &error, paint), qPrintable(error));
        QImage png(dir.filePath("h.png"));
        QCOMPARE(png.size(), QSize(1800, 1000)); // twice the widget's pixels
        QFile svg(dir.filePath("h.svg"));
        QVERIFY(svg.open(QIODevice::ReadOnly));
        const QByteArray head = svg.readAll();
        QVERIFY(head.contains("<svg"));
        QVERIFY(head.contains("qkv"));
        // A failed write leaves nothing behind.
        QVERIFY(!saveImage(&map, dir.filePath("missing/dir/h.png"), &error, paint));
        QVERIFY(!error.isEmpty());
        QVERIFY(!QFile::exists(dir.filePath("missing/dir/h.png")));
    }

    void chartLegendTellsTheTruth() {
        SearchChart chart;
        chart.resize(900, 500);
        chart.show();
        // Roofline 1.5x Megatron: drawn to scale, not "above scale".
        chart.setReference(1000, 1500);
        chart.addPoints(QStringLiteral("sa"), {{10, 1100}});
        QTRY_VERIFY(chart.redraws() > 0);
        QTRY_VERIFY(!chart.legendText(QStringLiteral("roofline")).isEmpty());
        QVERIFY(!chart.rooflineAboveAxis());
        QVERIFY(!chart.legendText(QStringLiteral("roofline")).contains(QStringLiteral("above scale")));
        // Roofline 20x: off the axis, and the legend says so.
        chart.setReference(1000, 20000);
        const int n = chart.redraws();
        QTRY_VERIFY(chart.redraws() > n);
        QVERIFY(chart.rooflineAboveAxis());
        QVERIFY(chart.legendText(QStringLiteral("roofline")).contains(QStringLiteral("above scale")));
        // An infeasible Megatron plan keeps a legend entry that says why there is no line.
        chart.setReference(0, 20000);
        QVERIFY(chart.legendText(QStringLiteral("megatron")).contains(QStringLiteral("infeasible")));
        // A run that ended without a feasible plan is no longer "yet" to find one.
        chart.setProgress(QStringLiteral("ga"), 50);
        QTRY_VERIFY(chart.legendText(QStringLiteral("ga")).contains(QStringLiteral("yet")));
        chart.setCurve(QStringLiteral("ga"), {}, 100);
        QTRY_VERIFY(!chart.legendText(QStringLiteral("ga")).contains(QStringLiteral("yet")));
        QVERIFY(chart.legendText(QStringLiteral("ga")).contains(QStringLiteral("no feasible plan")));
    }

    void degreeOneClick() {
        DegreeChecks d;
        d.setValues(8, {});
        QVERIFY(d.isAny());
        QSignalSpy changed(&d, &DegreeChecks::changed);
        // "any" on: every value reads as allowed and is clickable (not greyed out); clicking 8 pins it.
        QVERIFY(d.button(8)->isEnabled() && d.button(8)->isChecked());
        QTest::mouseClick(d.button(8), Qt::LeftButton);
        QVERIFY(!d.isAny());
        QCOMPARE(d.allowed(), std::vector<int>{8});
        QCOMPARE(changed.count(), 1);
        // Then clicks toggle values as usual.
        QTest::mouseClick(d.button(4), Qt::LeftButton);
        QCOMPARE(d.allowed(), (std::vector<int>{4, 8}));
    }
};

QTEST_MAIN(TestViews)
#include "tst_views.moc"
