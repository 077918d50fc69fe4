// Operator choices by runs of layers (Plan::layerGroups): the plan's one form, checkPlan's messages, the cost
// model pricing each run by its own choices (and the all-gather where a token-sharded residual meets a run that
// keeps it whole), and the search space's stage and layer-group granularities, counted by hand, enumerated and
// mapped back.
#include "sample_fixtures.h"
#include "search_fixtures.h"

#include "core/cost/collectives.h"
#include "core/cost/validity.h"
#include "core/search/moves.h"
#include "core/search/rng.h"

#include <QTest>

#include <set>

using namespace sp;
using namespace sp::test;

namespace {

/// Llama-3.1-8B decoding on one 8x H100 node at a fixed batch of 64, TP8: 32 identical layers.
Scenario llama8() {
    Scenario s = compose("llama-3.1-8b.yaml", "h100-1x8.yaml", "decode-heavy.yaml");
    s.workload.phase = Phase::Decode;
    s.workload.ttftMs = s.workload.tpotMs = 0;
    return s;
}

Plan tp8() {
    Plan p = Plan::megatronChoices({1, 1, 8, 8, 1, 1});
    p.batch = 64;
    return p;
}

/// The Megatron plan with data-parallel attention: token-sharded qkv and out_proj around batch-sharded
/// attention, the residual token-sharded as before (no new collective at the ends of the attention block).
std::array<int8_t, kOpCount> dpAttention(std::array<int8_t, kOpCount> c) {
    c[int(Op::Qkv)] = choice::QkvToken;
    c[int(Op::Attention)] = choice::AttnBatch;
    c[int(Op::OutProj)] = choice::OutToken;
    return c;
}

Plan grouped(const Plan& base, std::vector<std::pair<int, std::array<int8_t, kOpCount>>> runs) {
    Plan p = base;
    for (auto& [n, ch] : runs) p.layerGroups.push_back({n, ch});
    normalizeLayerGroups(p);
    return p;
}

bool close(double a, double b, double rel = 1e-12) {
    return std::abs(a - b) <= rel * std::max(std::abs(a), std::abs(b));
}

/// The toy scenario with pins that keep its spaces small enough to enumerate (out_proj token-sharded, ffn_up column, ffn_down row).
Scenario toyPinned(Granularity g) {
    Scenario s = toyScenario();
    s.constraints.pinned[int(Op::OutProj)] = choice::OutToken;
    s.constraints.pinned[int(Op::FfnUp)] = choice::UpColumn;
    s.constraints.pinned[int(Op::FfnDown)] = choice::DownRow;
    s.constraints.granularity = g;
    return s;
}

std::string key(const Plan& p) {
    std::string k = std::to_string(p.degrees.pp) + "/" + std::to_string(p.degrees.tp) + "/";
    for (Axis a : p.meshOrder) k += std::to_string(int(a));
    for (int8_t c : p.choices) k += "," + std::to_string(c);
    for (const LayerGroup& g : p.layerGroups) {
        k += "|" + std::to_string(g.layers) + ":";
        for (int8_t c : g.choices) k += std::to_string(c);
    }
    return k;
}

} // namespace

class TestLayerGroups : public QObject {
    Q_OBJECT
private slots:
    // Neighbours that choose alike merge; one group left is no groups; the first group's choices become the
    // plan's; the embedding, the head and the experts are the plan's in every group.
    void normalForm() {
        Plan p = tp8();
        const auto a = p.choices, b = dpAttention(p.choices);
        Plan q = grouped(p, {{10, a}, {6, a}, {16, b}});
        QCOMPARE(q.layerGroups.size(), size_t(2));
        QCOMPARE(q.layerGroups[0].layers, 16);
        QCOMPARE(q.layerGroups[1].layers, 16);
        QVERIFY(q.choices == a);
        QCOMPARE(q.choicesAt(15)[int(Op::Attention)], int8_t(choice::AttnHead));
        QCOMPARE(q.choicesAt(16)[int(Op::Attention)], int8_t(choice::AttnBatch));
        QCOMPARE(layerGroupsText(q), std::string("layers 0-15 | 16-31: qkv token, attention batch, out_proj token"));
        // Starting with b: the plan takes b's choices; an lm_head choice inside a group does not survive.
        auto b2 = b;
        b2[int(Op::LmHead)] = choice::HeadRow;
        Plan r = grouped(p, {{16, b2}, {16, a}});
        QCOMPARE(r.choice(Op::Attention), int8_t(choice::AttnBatch));
        QCOMPARE(r.choice(Op::LmHead), int8_t(choice::HeadVocab));
        QCOMPARE(r.layerGroups[0].choices[int(Op::LmHead)], int8_t(choice::HeadVocab));
        QVERIFY(grouped(p, {{16, a}, {16, a}}).layerGroups.empty());
    }

    void checkPlanSaysWhere() {
        const Scenario s = llama8();
        const CostModel cm(s);
        const Plan p = tp8();
        const auto a = p.choices, b = dpAttention(p.choices);
        QVERIFY(!cm.checkPlan(grouped(p, {{16, a}, {16, b}})));
        Plan q = grouped(p, {{16, a}, {16, b}});
        q.layerGroups[1].layers = 10;
        QCOMPARE(cm.checkPlan(q).value_or(""), std::string("layer_groups add up to 26 layers; the model has 32"));
        q.layerGroups[1].layers = 0;
        QCOMPARE(cm.checkPlan(q).value_or(""), std::string("layer group 2 of 2 has 0 layers"));
        q = grouped(p, {{16, a}, {16, b}});
        q.layerGroups[1].choices[int(Op::Embedding)] = choice::EmbReplicated;
        QCOMPARE(cm.checkPlan(q).value_or(""),
                 std::string("layer group 2 of 2: embedding is chosen once for the whole model"));
        q = grouped(p, {{16, a}, {16, b}});
        q.layerGroups.push_back(q.layerGroups[1]);
        q.layerGroups[1].layers = q.layerGroups[2].layers = 8;
        QCOMPARE(cm.checkPlan(q).value_or(""),
                 std::string("layer group 3 of 3 chooses as the group before it does (merge them)"));
        q = grouped(p, {{16, a}, {16, b}});
        q.choices = b;
        QCOMPARE(cm.checkPlan(q).value_or(""),
                 std::string("layer group 1 of 2: its choices must be the plan's own (operators)"));
        // 32 heads do not divide over... every choice is checked in every group: sequence attention over 8
        // GPUs is allowed, but not a pin's contradiction.
        Scenario pinned = s;
        pinned.constraints.pinned[int(Op::Attention)] = choice::AttnHead;
        const CostModel cp(pinned);
        QVERIFY(cp.checkPlan(grouped(p, {{16, a}, {16, b}})).value_or("").starts_with("layer group 2 of 2: "));
        Plan many = p;
        for (int i = 0; i < 5; ++i) many.layerGroups.push_back({i == 4 ? 28 : 1, i % 2 ? b : a});
        QCOMPARE(cm.checkPlan(many).value_or(""),
                 std::string("layer_groups has 5 groups; a plan has 2 to 4 (or none)"));
    }

    // Half the layers of one kind, half of another, at a fixed batch with no new boundary collective (both
    // keep the residual token-sharded): the stage is the embedding, the head and 16 layers of each, so its
    // step time, weights and KV are the means of the two uniform plans' (every term is linear in the layers).
    void eachRunPricedByItsOwnChoices() {
        const CostModel cm(llama8());
        const Plan pa = tp8();
        Plan pb = pa;
        pb.choices = dpAttention(pa.choices);
        const Plan pab = grouped(pa, {{16, pa.choices}, {16, pb.choices}});
        const Metrics a = cm.evaluate(pa), b = cm.evaluate(pb), ab = cm.evaluate(pab);
        QVERIFY(a.valid && b.valid && ab.valid);
        QCOMPARE(ab.batch, int64_t(64));
        QVERIFY(std::abs(a.tpotMs - b.tpotMs) > 1e-3 * a.tpotMs); // the two kinds do differ
        QVERIFY(close(ab.tpotMs, (a.tpotMs + b.tpotMs) / 2));
        QVERIFY(close(ab.weightsGiB, (a.weightsGiB + b.weightsGiB) / 2));
        QVERIFY(close(ab.kvCacheGiB, (a.kvCacheGiB + b.kvCacheGiB) / 2));
        // The order of the runs does not matter here.
        const Metrics ba = cm.evaluate(grouped(pa, {{16, pb.choices}, {16, pa.choices}}));
        QVERIFY(close(ba.tpotMs, ab.tpotMs));
        // explain's rows: each group's, weighed by its share of the stage's layers.
        const Evaluation e = cm.explain(pab);
        double attnHead = 0, attnBatch = 0;
        for (const OpCost& o : e.decode.ops)
            if (o.op == "attention") {
                QCOMPARE(o.groupShare, 0.5);
                (o.choice == "head" ? attnHead : attnBatch) += 1;
                QCOMPARE(o.layerGroup, o.choice == "head" ? 0 : 1);
            }
        QCOMPARE(attnHead, 1.0);
        QCOMPARE(attnBatch, 1.0);
    }

    // A token-sharded residual (sequence-parallel norms) followed by a run that keeps it replicated: the second
    // run's first layer gathers it, an all-gather of B x hidden activations over the tp group. The other way a
    // GPU keeps its slice. With R the replicated kind: T|R + R|T = T + R + one gather, since the embedding
    // hands to the first run and the head takes the last run's residual.
    void boundaryGather() {
        const Scenario s = llama8();
        const CostModel cm(s);
        const Plan pt = tp8();
        Plan pr = pt;
        pr.choices[int(Op::Norms)] = choice::NormReplicated;
        const Plan tr = grouped(pt, {{16, pt.choices}, {16, pr.choices}});
        const Plan rt = grouped(pt, {{16, pr.choices}, {16, pt.choices}});
        QVERIFY(!cm.checkPlan(tr) && !cm.checkPlan(rt));
        const double gatherMs =
            cm.evaluate(tr).tpotMs + cm.evaluate(rt).tpotMs - cm.evaluate(pt).tpotMs - cm.evaluate(pr).tpotMs;
        // By hand: 64 tokens x 4096 x 2 bytes (BF16) gathered over the node's 8 GPUs, as NCCL's ring prices it
        // (core/cost/collectives.h). LL wins at 512 KiB: 6.6 us + 7 steps x 0.6 us, and 7/8 of the bytes at a
        // third of the bus bandwidth (450 GB/s x intra_node), at most 87.7 GB/s: 10.8 + 5.2 = 16.0 us (LL128:
        // 27.3 us of latency alone; Simple: 32.2).
        const double bytes = 64.0 * 4096 * 2;
        const double bus = std::min(87.7e9, 450e9 * s.cluster.efficiency.intraNode / 3.0);
        QCOMPARE(s.cluster.intraNode.gbPerS, 450.0);
        const double expect = ((6.6 + 7 * 0.6) * 1e-6 + bytes * 7.0 / 8.0 / bus) * 1e3;
        QVERIFY2(close(gatherMs, expect, 1e-9), qPrintable(QString("%1 vs %2").arg(gatherMs).arg(expect)));
        int rows = 0;
        for (const CommCost& c : cm.explain(tr).decode.comms) rows += c.where == "layer group boundary";
        QCOMPARE(rows, 1);
        for (const CommCost& c : cm.explain(rt).decode.comms) QVERIFY(c.where != "layer group boundary");
    }

    // Stage granularity on the toy (4 GPUs, 2 layers, pp 1 or 2; out_proj and the FFN pinned). Per-layer
    // operators norms 2 x qkv 3 x attention 3 = 18 at tp 2, 2 x 2 x 2 = 8 at tp 4 (6 heads do not divide: qkv
    // row or token, attention sequence or batch), 1 at tp 1; with the embedding (2) and the head (3) the
    // type-granularity counts per (pp, tp) leaf are 1, 108, 48. Leaves and their distinct mesh orders:
    // (1,1,4) 1, (1,2,2) 2, (1,4,1) 1, (2,1,2) 2, (2,2,1) 2. Stage granularity gives pp 2 a last stage of its
    // own: 18 more at tp 2. Type: 1 + 2x108 + 48 + 2x1 + 2x108 = 483; stage: 1 + 216 + 48 + 2 + 2x108x18 =
    // 4155; layer groups (2, for every pp): 1 + 2x108x18 + 48x8 + 2 + 2x108x18 = 8163.
    void spaceCountedByHand() {
        QCOMPARE(SearchSpace(toyPinned(Granularity::Type)).size().count, 483.0);
        QCOMPARE(SearchSpace(toyPinned(Granularity::Stage)).size().count, 4155.0);
        QCOMPARE(SearchSpace(toyPinned(Granularity::LayerGroup)).size().count, 8163.0);
        const SearchSpace stage(toyPinned(Granularity::Stage));
        QCOMPARE(stage.decision(stage.decisionCount() - 1).name, std::string("last.ffn_down"));
        const SearchSpace groups(toyPinned(Granularity::LayerGroup));
        QCOMPARE(groups.decision(groups.decisionCount() - 6).name, std::string("g2.norms"));
    }

    // With the layers per stage searched too (stage_layers: tuned), the stage groups follow the plan's own split.
    // The toy with 6 layers and pp 2 fixed: the split (3 + a, 3 - a), a in -2..2, 5 splits; leaves (pp 2, tp 1,
    // dp 2) 2 mesh orders x 1, (2, 2, 1) 2 x 108 x 18 (the last stage's own choices): (2 + 3888) x 5 = 19,450.
    void stageGroupsFollowTheSplit() {
        Scenario s = toyPinned(Granularity::Stage);
        s.model.layers = 6;
        s.constraints.stageSplit = StageSplit::Tuned;
        s.constraints.allowed[int(Axis::PP)] = {2};
        const SearchSpace space(s);
        const CostModel cm(s);
        QCOMPARE(space.size().count, 19450.0);
        int64_t n = 0, bad = 0;
        space.forEach([&](std::span<const int> a) {
            ++n;
            const Plan p = space.toPlan(a);
            if (!p.layerGroups.empty()) {
                // The first group is the first stage, whatever the split.
                const int first = p.stageLayers.empty() ? 3 : p.stageLayers.front();
                bad += p.layerGroups.front().layers != first;
            }
            const auto back = space.fromPlan(p);
            bad += cm.checkPlan(p).has_value() || !back || !std::equal(back->begin(), back->end(), a.begin(), a.end());
            return true;
        });
        QCOMPARE(n, int64_t(19450));
        QCOMPARE(bad, int64_t(0));
    }

    // Every assignment: a valid plan in its one form, all distinct, that maps back to itself and that the
    // cost model accepts; as many as counted.
    void enumeratedAndMappedBack() {
        for (Granularity g : {Granularity::Stage, Granularity::LayerGroup}) {
            const Scenario s = toyPinned(g);
            const SearchSpace space(s);
            const CostModel cm(s);
            std::set<std::string> seen;
            int64_t n = 0, withGroups = 0;
            bool ok = true;
            space.forEach([&](std::span<const int> a) {
                ++n;
                const Plan p = space.toPlan(a);
                withGroups += !p.layerGroups.empty();
                Plan q = p;
                normalizeLayerGroups(q);
                const auto back = space.fromPlan(p);
                if (cm.checkPlan(p) || !(q == p) || !seen.insert(key(p)).second || !back ||
                    !std::equal(back->begin(), back->end(), a.begin(), a.end())) {
                    ok = false;
                    qWarning("%s: %s", key(p).c_str(), cm.checkPlan(p).value_or("").c_str());
                    return false;
                }
                return true;
            });
            QVERIFY(ok);
            QCOMPARE(double(n), space.size().count);
            // Plans whose groups choose alike are the type-granularity plans (483 of them).
            QCOMPARE(n - withGroups, int64_t(483));
        }
    }

    // Uniform sampling weighs every plan alike: over 20,000 draws, the share of pp 2 plans under the stage
    // granularity is near 3890 / 4155 (= 0.936), far from the type granularity's 218 / 483.
    void uniformSampling() {
        const SearchSpace space(toyPinned(Granularity::Stage));
        Rng rng(7);
        int pp2 = 0;
        const int n = 20000;
        for (int i = 0; i < n; ++i) {
            const auto a = space.sample(rng);
            QVERIFY(space.valid(a));
            pp2 += space.toPlan(a).degrees.pp == 2;
        }
        QVERIFY2(std::abs(double(pp2) / n - 3890.0 / 4155.0) < 0.01, qPrintable(QString::number(pp2)));
    }

    // DeepSeek-V3 in four runs of layers: its three dense layers all lie in the first run, so the further runs'
    // dense-layer operators choose nothing (one value, the first run's), while their MoE-layer operators do.
    void operatorsARunDoesNotHaveAreNotDecided() {
        Scenario s = compose("deepseek-v3.yaml", "h100-4x8.yaml", "chat-serving.yaml");
        s.constraints.granularity = Granularity::LayerGroup;
        s.constraints.layerGroups = 4;
        const SearchSpace space(s);
        const CostModel cm(s);
        std::vector<int> dense, moe;
        for (int i = 0; i < space.decisionCount(); ++i) {
            const Decision& d = space.decision(i);
            if (d.group == 0 || d.kind != DecisionKind::Operator) continue;
            const bool moeOp = d.op == Op::MoeNorms || d.op == Op::MoeQkv || d.op == Op::MoeAttention ||
                               d.op == Op::MoeOutProj || d.op == Op::Router || d.op == Op::SharedExperts;
            (moeOp ? moe : dense).push_back(i);
        }
        QCOMPARE(dense.size(), size_t(3 * 6)); // norms, qkv, attention, out_proj, ffn_up, ffn_down
        QCOMPARE(moe.size(), size_t(3 * 6));   // the MoE layers' four, router, shared_experts
        Rng rng(3);
        std::vector<uint8_t> mk;
        int moeDiffers = 0;
        for (int k = 0; k < 300; ++k) {
            const auto a = space.sample(rng);
            QVERIFY(space.valid(a));
            for (int i : dense) {
                space.mask(i, a, mk);
                QCOMPARE(int(std::count(mk.begin(), mk.end(), 1)), 1);
                const std::string base = space.decision(i).name.substr(3); // "g2.qkv" -> "qkv"
                for (int j = 0; j < space.decisionCount(); ++j)
                    if (space.decision(j).name == base) QCOMPARE(a[size_t(i)], a[size_t(j)]);
            }
            const Plan p = space.toPlan(a);
            QVERIFY(!cm.checkPlan(p));
            const auto back = space.fromPlan(p);
            QVERIFY(back && *back == a);
            if (!p.layerGroups.empty())
                for (const LayerGroup& g : p.layerGroups)
                    moeDiffers += g.choices[int(Op::MoeAttention)] != p.choices[int(Op::MoeAttention)];
        }
        QVERIFY(moeDiffers > 0);
    }

    // The group move of the local searchers (detail::copyGroup): after one of a run's choices changed,
    // another run takes all of that run's choices; every other run, the degrees and the run moved from stay
    // as they were, and the plan stays valid. A space of one run has no counterparts, so no group moves.
    void groupMoveCopiesARun() {
        Scenario s = compose("deepseek-v3.yaml", "h100-4x8.yaml", "chat-serving.yaml");
        s.constraints.granularity = Granularity::LayerGroup;
        s.constraints.layerGroups = 4;
        const SearchSpace space(s);
        const auto cp = detail::groupCounterparts(space);
        int i = -1;
        for (int k = 0; k < space.decisionCount(); ++k)
            if (space.decision(k).name == "g2.moe.attention") i = k;
        QVERIFY(i >= 0);
        std::set<std::string> names;
        for (int j : cp[size_t(i)]) names.insert(space.decision(j).name);
        QCOMPARE(names, (std::set<std::string>{"moe.attention", "g3.moe.attention", "g4.moe.attention"}));
        for (int k = 0; k < space.decisionCount(); ++k)
            if (space.decision(k).kind != DecisionKind::Operator) QVERIFY(cp[size_t(k)].empty());

        Rng rng(11);
        std::vector<uint8_t> mk;
        int moved = 0;
        std::set<int> targets;
        for (int t = 0; t < 200; ++t) {
            const auto before = space.sample(rng);
            auto a = before;
            if (!detail::copyGroup(space, a, i, cp, rng, mk)) {
                QCOMPARE(a, before);
                continue;
            }
            ++moved;
            QVERIFY(space.valid(a));
            int to = -1;
            for (int k = 0; k < space.decisionCount(); ++k) {
                if (a[size_t(k)] == before[size_t(k)]) continue;
                const Decision& d = space.decision(k);
                QVERIFY2(d.kind == DecisionKind::Operator && d.group != 1, d.name.c_str()); // g2 is group 1
                QVERIFY(to < 0 || to == d.group);
                to = d.group;
            }
            QVERIFY(to >= 0);
            targets.insert(to);
            // The run moved to now chooses as g2 does, operator by operator.
            for (int k = 0; k < space.decisionCount(); ++k) {
                if (space.decision(k).group != 1) continue;
                for (int j : cp[size_t(k)])
                    if (space.decision(j).group == to) QCOMPARE(a[size_t(j)], a[size_t(k)]);
            }
        }
        QVERIFY(moved > 100); // random plans' runs rarely choose alike already
        QCOMPARE(targets, (std::set<int>{0, 2, 3}));

        s.constraints.granularity = Granularity::Type;
        const SearchSpace flat(s);
        for (const auto& c : detail::groupCounterparts(flat)) QVERIFY(c.empty());
    }

    // sa and ga take the group move only where the space has layer groups: on a space without them a run with
    // the move is the same run as one without (no extra random draws), on a grouped space it is not.
    void groupMoveOnlyUnderLayerGroups() {
        Scenario s = compose("deepseek-v3.yaml", "h100-4x8.yaml", "chat-serving.yaml");
        const auto runs = [](const Scenario& sc, double groupMove) {
            const CostModel cm(sc);
            const CostModelObjective objective(cm);
            Engine engine(objective);
            const SearchSpace space(sc);
            SearchOptions o;
            o.budget.evaluations = 600, o.seed = 5, o.threads = 1;
            AnnealingParams ap;
            ap.groupMove = groupMove;
            GeneticParams gp;
            gp.groupMove = groupMove;
            return std::pair{AnnealingSearcher(ap).run(space, engine, o, nullptr, {}),
                             GeneticSearcher(gp).run(space, engine, o, nullptr, {})};
        };
        const auto sameRun = [](const SearchResult& a, const SearchResult& b) {
            return a.best.choices == b.best.choices && a.curve == b.curve;
        };
        const auto [flatSa1, flatGa1] = runs(s, 1.0);
        const auto [flatSa0, flatGa0] = runs(s, 0.0);
        QVERIFY(sameRun(flatSa1, flatSa0));
        QVERIFY(sameRun(flatGa1, flatGa0));
        s.constraints.granularity = Granularity::LayerGroup;
        s.constraints.layerGroups = 4;
        const auto [groupSa1, groupGa1] = runs(s, 1.0);
        const auto [groupSa0, groupGa0] = runs(s, 0.0);
        QVERIFY(!sameRun(groupSa1, groupSa0));
        QVERIFY(!sameRun(groupGa1, groupGa0));
    }

    // A plan the type granularity cannot hold is not in its space; a grouped plan whose runs do not follow the
    // stages is not in the stage space either.
    void foreignPlansRefused() {
        const Scenario s = toyPinned(Granularity::Type);
        Plan p = Plan::megatronChoices({1, 2, 2, 4, 1, 1});
        p.choices[int(Op::OutProj)] = choice::OutToken;
        auto b = p.choices;
        b[int(Op::Attention)] = choice::AttnBatch;
        b[int(Op::Qkv)] = choice::QkvToken;
        const Plan q = grouped(p, {{1, p.choices}, {1, b}});
        QVERIFY(SearchSpace(s).fromPlan(p));
        QVERIFY(!SearchSpace(s).fromPlan(q));
        // pp 1 under the stage granularity: one stage, one group.
        QVERIFY(!SearchSpace(toyPinned(Granularity::Stage)).fromPlan(q));
        QVERIFY(SearchSpace(toyPinned(Granularity::LayerGroup)).fromPlan(q));
    }
};

QTEST_GUILESS_MAIN(TestLayerGroups)
#include "tst_layer_groups.moc"
