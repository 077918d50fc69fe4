// Uneven pipeline splits (Plan::stageLayers): the cost model prices the split as given, checkPlan says where
// a split does not add up, and under a tuned split (Constraints::stageSplit) the search space holds the first
// and last stages' layers as two decisions, counted, sampled and mapped back like the others.
#include "search_fixtures.h"

#include "core/cost/validity.h"
#include "core/search/rng.h"

#include <QTest>

using namespace sp;
using namespace sp::test;

namespace {

Scenario toyTuned(int layers) {
    Scenario s = toyScenario();
    s.model.layers = layers;
    s.constraints.stageSplit = StageSplit::Tuned;
    return s;
}

} // namespace

class TestStageSplit : public QObject {
    Q_OBJECT
private slots:
    // The toy scenario (4 GPUs; spaceSizeHandCount in tst_search counts its operators: tp 1 one plan, tp 2
    // 2916, tp 4 864) with 6 layers, so pp 4 is allowed too. Balanced, (pp, tp, dp) times the mesh orders
    // that differ: pp 1: (1,1,4) 1 + (1,2,2) 2 x 2916 + (1,4,1) 864 = 6697; pp 2: (2,1,2) 2 x 1 + (2,2,1) 2 x
    // 2916 = 5834; pp 4: (4,1,1) 1. Total 12,532. Tuned, the (first, last) deltas in -3..3 that keep a layer
    // in every stage:
    //   pp 2, balanced (3, 3), last = -first: first in -2..2: 5 pairs;
    //   pp 4, balanced (1, 2, 2, 1): first, last >= 0 and the two middle stages keep a layer each
    //   (4 - a - b >= 2): (0,0) (0,1) (0,2) (1,0) (1,1) (2,0): 6 pairs.
    // Total 6697 + 5 x 5834 + 6 x 1 = 35,873.
    void spaceSizeHandCount() {
        Scenario s = toyTuned(6);
        s.constraints.stageSplit = StageSplit::Balanced;
        QCOMPARE(SearchSpace(s).size().count, 12532.0);
        s.constraints.stageSplit = StageSplit::Tuned;
        const SearchSpace space(s);
        QCOMPARE(space.size().count, 35873.0);
        int64_t n = 0, uneven = 0;
        space.forEach([&](std::span<const int> a) {
            ++n;
            const Plan p = space.toPlan(a);
            uneven += !p.stageLayers.empty();
            if (checkStageLayers(s, p)) return false;
            return true;
        });
        QCOMPARE(n, int64_t(35873));
        QCOMPARE(uneven, int64_t(35873 - 12532)); // (0, 0) is the balanced plan itself, with no stage_layers
    }

    // The split of given deltas, by hand: pp 4 of 6 layers is (1, 2, 2, 1); first +1, last +1 leaves 2 layers
    // for the two middle stages: (2, 1, 1, 2). A split whose middle stages are uneven is not in the space.
    void splitByHand() {
        const Scenario s = toyTuned(6);
        const SearchSpace space(s);
        Plan p = Plan::megatronChoices({4, 1, 1, 1, 1, 1});
        p.stageLayers = {2, 1, 1, 2};
        const auto a = space.fromPlan(p);
        QVERIFY(a);
        QCOMPARE(space.toPlan(*a).stageLayers, (std::vector<int>{2, 1, 1, 2}));
        const int first = space.decisionCount() - 2;
        QCOMPARE(space.decision(first).name, std::string("first_stage_layers"));
        QCOMPARE(space.decision(first).values[size_t((*a)[size_t(first)])], 1);
        QCOMPARE(space.decision(first + 1).values[size_t((*a)[size_t(first + 1)])], 1);
        p.stageLayers = {1, 3, 1, 1};
        QVERIFY(!space.fromPlan(p));
        // Under the balanced split an uneven plan is outside the space.
        Scenario b = s;
        b.constraints.stageSplit = StageSplit::Balanced;
        p.stageLayers = {2, 1, 1, 2};
        QVERIFY(!SearchSpace(b).fromPlan(p));
    }

    // Uniform sampling weighs each first-stage value by its valid last-stage values: pp 2 holds 29,170 of the
    // 35,873 plans (0.8131).
    void uniformSampling() {
        const SearchSpace space(toyTuned(6));
        Rng rng(5);
        int pp2 = 0;
        const int n = 20000;
        for (int k = 0; k < n; ++k) pp2 += space.toPlan(space.sample(rng)).degrees.pp == 2;
        QVERIFY2(std::abs(pp2 / double(n) - 29170.0 / 35873.0) < 0.01, std::to_string(pp2).c_str());
    }

    void masksMatchCostModel_data() {
        QTest::addColumn<QString>("scenario");
        for (const char* f : {"llama-3.1-8b-h100-1x8.yaml", "llama-3.1-405b-h200-16x8.yaml",
                              "deepseek-v3-h100-32x8.yaml", "qwen3-235b-h200-1x8.yaml"})
            QTest::addRow("%s", f) << QString(f);
    }
    // Mask walks under a tuned split reach only plans the cost model accepts, which map back to themselves.
    void masksMatchCostModel() {
        QFETCH(QString, scenario);
        Scenario s = loadSample(scenario.toStdString());
        s.constraints.stageSplit = StageSplit::Tuned;
        const CostModel cm(s);
        const SearchSpace space(s);
        Rng rng(11);
        std::vector<uint8_t> mk;
        int uneven = 0;
        for (int k = 0; k < 2000; ++k) {
            std::vector<int> a(size_t(space.decisionCount()));
            for (int i = 0; i < space.decisionCount(); ++i) {
                space.mask(i, a, mk);
                std::vector<int> ok;
                for (int v = 0; v < int(mk.size()); ++v)
                    if (mk[size_t(v)]) ok.push_back(v);
                QVERIFY2(!ok.empty(), space.decision(i).name.c_str());
                a[size_t(i)] = ok[size_t(rng.below(int(ok.size())))];
            }
            QVERIFY(space.valid(a));
            const Plan p = space.toPlan(a);
            const auto why = cm.checkPlan(p);
            QVERIFY2(!why, why ? why->c_str() : "");
            uneven += !p.stageLayers.empty();
            const auto back = space.fromPlan(p);
            QVERIFY(back && *back == a);
        }
        QVERIFY(uneven > 0);
    }

    // checkPlan names what is wrong with a split.
    void checkPlanSaysWhere() {
        const Scenario s = loadSample("llama-3.1-8b-h100-1x8.yaml"); // 32 layers
        const CostModel cm(s);
        Plan p = Plan::megatronChoices({2, 1, 4, 4, 1, 1});
        p.stageLayers = {20, 10};
        auto e = cm.checkPlan(p);
        QVERIFY(e && e->find("add up to 30") != std::string::npos && e->find("32") != std::string::npos);
        p.stageLayers = {32};
        e = cm.checkPlan(p);
        QVERIFY(e && e->find("1 entries for pp 2") != std::string::npos);
        p.stageLayers = {32, 0};
        e = cm.checkPlan(p);
        QVERIFY(e && e->find("stage 1 has 0") != std::string::npos);
        QVERIFY(!cm.evaluate(p).valid);
        p.stageLayers = {20, 12};
        QVERIFY(!cm.checkPlan(p));
    }

    // The split is priced as given: the balanced split written out equals no split, bit for bit; at a fixed
    // batch the slowest stage's layers follow the split, and the head's stage with more layers is slower than
    // the embedding's.
    void priced() {
        const Scenario s = loadSample("llama-3.1-8b-h100-1x8.yaml");
        const CostModel cm(s);
        Plan p = Plan::megatronChoices({2, 1, 4, 4, 1, 1});
        const Evaluation chosen = cm.explain(p);
        p.stageLayers = {16, 16};
        sameMetrics(chosen.metrics, cm.explain(p).metrics);
        p.stageLayers.clear();
        p.batch = 64;
        const Evaluation plain = cm.explain(p);
        p.stageLayers = {20, 12};
        const Evaluation front = cm.explain(p);
        QCOMPARE(front.decode.denseLayers, 20); // the 20-layer stage is the slowest
        p.stageLayers = {12, 20};
        const Evaluation back = cm.explain(p);
        QCOMPARE(back.decode.denseLayers, 20);
        // Both slowest stages hold 20 layers; the last also runs the LM head (128,256 x 4,096: about 2.4 of
        // the model's 218M-parameter layers), the first only looks up the embedding.
        QVERIFY2(
            back.decode.stageMs > front.decode.stageMs,
            (std::to_string(back.decode.stageMs) + " vs " + std::to_string(front.decode.stageMs)).c_str());
        QVERIFY(front.decode.stageMs > plain.decode.stageMs);
    }

    // With pp 4 and tp 2 fixed and the operators pinned, the tuned space is the mesh orders times the splits;
    // exhaustive search finds the best of the splits enumerated here by hand (first 8 + a, last 8 + b, the
    // middle stages sharing 16 - a - b evenly). Here that is the balanced split: at the TPOT-bound batch the
    // head's stage (8 layers and the head) is the slowest, but the head costs less than a layer, so any layer
    // it gives away makes another stage of 9.
    void exhaustiveFindsBestSplit() {
        Scenario s = loadSample("llama-3.1-8b-h100-1x8.yaml");
        s.constraints.stageSplit = StageSplit::Tuned;
        s.constraints.allowed[int(Axis::PP)] = {4};
        s.constraints.allowed[int(Axis::TP)] = {2};
        for (int o = 0; o < kOpCount; ++o) s.constraints.pinned[size_t(o)] = int8_t(megatronChoice(Op(o)));
        const CostModel cm(s);
        const SearchSpace space(s);
        const CostModelObjective objective(cm);
        Engine engine(objective);
        const SearchResult ex = runSearcher("exhaustive", space, engine, 0, 1, 0);
        double best = 0, balanced = 0;
        for (const auto& order : kMeshOrders) {
            for (int a = -3; a <= 3; ++a)
                for (int b = -3; b <= 3; ++b) {
                    Plan p = Plan::megatronChoices({4, 1, 2, 2, 1, 1});
                    p.meshOrder = order;
                    const int mid = 16 - a - b;
                    p.stageLayers = {8 + a, (mid + 1) / 2, mid / 2, 8 + b};
                    const Metrics m = cm.evaluate(p);
                    if (m.feasible) best = std::max(best, m.throughput);
                    if (a == 0 && b == 0 && m.feasible) balanced = std::max(balanced, m.throughput);
                }
        }
        QVERIFY(ex.feasible());
        QCOMPARE(ex.best.metrics.throughput, best);
        QCOMPARE(ex.best.metrics.throughput, balanced);
        QVERIFY(ex.best.plan.stageLayers.empty());
    }
};

QTEST_GUILESS_MAIN(TestStageSplit)
#include "tst_stage_split.moc"
