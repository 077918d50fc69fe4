// Disaggregated plan files (core/io/formats.h), search --disaggregated (core/searchers/disagg_search.h) and
// the CLI verbs on them.
#include "core/cost/disagg.h"
#include "core/export/check.h"
#include "core/export/disagg_launch.h"
#include "core/io/formats.h"
#include "core/search/space.h"
#include "core/searchers/disagg_search.h"
#include "core/searchers/pareto.h"
#include "core/searchers/registry.h"
#include "core/sim/capacity.h"

#include "clirun.h"
#include "sample_fixtures.h"

#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>

using namespace sp;
using sp::test::compose;
using sp::test::Run;
using sp::test::shardplan;

namespace {

Scenario llama8b(int nodes) {
    Scenario s = compose("llama-3.1-8b.yaml", "h100-4x8.yaml", "chat-serving.yaml");
    s.cluster.nodes = nodes;
    return s;
}

/// A two-pool plan for DeepSeek-V3 on 32x8 H100 (a MoE model: every field is written, so it round-trips).
const char* kDeepSeekPlan = R"(version: 1
kind: plan
disaggregated:
  prefill:
    nodes: 4
    degrees: {pp: 1, dp: 4, tp: 8, ep: 32, etp: 1, edp: 1}
    operators: {attention: head, experts: expert}
  decode:
    nodes: 28
    degrees: {pp: 1, dp: 224, tp: 1, ep: 224, etp: 1, edp: 1}
    batch: 64
)";

QString write(const QTemporaryDir& dir, const QString& name, const std::string& text) {
    const QString path = dir.filePath(name);
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly)) qFatal("cannot write %s", qPrintable(path));
    f.write(text.data(), qint64(text.size()));
    return path;
}

/// A scenario file for Llama-3.1-8B on `nodes` x 8 H100, chat serving, built from the sample files.
QString llamaScenarioFile(const QTemporaryDir& dir, int nodes) {
    const std::string samples = SHARDPLAN_SAMPLES_DIR;
    Scenario s = llama8b(nodes);
    s.name = "Llama-3.1-8B on " + std::to_string(nodes) + "x8 H100, chat serving";
    return write(dir, "llama.yaml", toYaml(s));
}

} // namespace

class TestDisaggSearch : public QObject {
    Q_OBJECT
private slots:
    // ------------------------------------------------------------------------------------------ plan files
    void roundTrip() {
        const Scenario s = compose("deepseek-v3.yaml", "h100-32x8.yaml", "chat-serving.yaml");
        auto p = parseDisaggPlan(kDeepSeekPlan, "ds.yaml", &s);
        QVERIFY2(p.ok(), p.error().str().c_str());
        QCOMPARE(p->prefill.nodes, 4);
        QCOMPARE(p->decode.nodes, 28);
        QCOMPARE(p->prefill.plan.degrees.tp, 8);
        QCOMPARE(p->decode.plan.degrees.dp, 224);
        QCOMPARE(p->decode.plan.batch, int64_t(64));
        QCOMPARE(int(p->prefill.plan.choice(Op::Attention)), int(choice::AttnHead));
        for (const std::string& text : {toYaml(p.value(), s.model), toJson(p.value(), s.model)}) {
            auto back = parseDisaggPlan(text, "back.yaml", &s);
            QVERIFY2(back.ok(), back.error().str().c_str());
            QVERIFY(back.value() == p.value());
        }
        // A single-plan reader refuses it, naming the key.
        auto single = parsePlan(kDeepSeekPlan, "ds.yaml");
        QVERIFY(!single.ok());
        QVERIFY2(single.error().str().find("ds.yaml:4:3: disaggregated: a disaggregated plan") == 0,
                 single.error().str().c_str());
    }

    void hostileFiles_data() {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("error");
        const std::string base = kDeepSeekPlan;
        auto replaced = [&](const std::string& from, const std::string& to) {
            std::string t = base;
            t.replace(t.find(from), from.size(), to);
            return QString::fromStdString(t);
        };
        QTest::addRow("nodes do not add up") << replaced("nodes: 28", "nodes: 27")
                                             << "bad.yaml:9:12: disaggregated.decode.nodes: prefill 4 + "
                                                "decode 27 nodes = 31, but the cluster has 32";
        QTest::addRow("pool does not divide") << replaced("dp: 4, tp: 8, ep: 32", "dp: 5, tp: 8, ep: 40")
                                              << "bad.yaml:6:14: disaggregated.prefill.degrees: pp*dp*tp = "
                                                 "40 does not match the prefill pool's "
                                                 "4 nodes x 8 GPUs = 32";
        QTest::addRow("no nodes") << replaced("    nodes: 4\n", "") << "disaggregated.prefill.nodes";
        QTest::addRow("zero nodes") << replaced("nodes: 4", "nodes: 0") << "disaggregated.prefill.nodes";
        QTest::addRow("unknown key") << replaced("batch: 64", "batches: 64") << "batches";
        QTest::addRow("no decode pool")
            << QString::fromStdString(base.substr(0, base.find("  decode:"))) << "disaggregated.decode";
    }
    void hostileFiles() {
        QFETCH(QString, text);
        QFETCH(QString, error);
        const Scenario s = compose("deepseek-v3.yaml", "h100-32x8.yaml", "chat-serving.yaml");
        auto p = parseDisaggPlan(text.toStdString(), "bad.yaml", &s);
        QVERIFY(!p.ok());
        QVERIFY2(QString::fromStdString(p.error().str()).contains(error), p.error().str().c_str());
    }

    // ------------------------------------------------------------------------------------------------ search
    void rescale() {
        Plan p = Plan::megatronChoices({});
        p.degrees = {2, 24, 1, 8, 1, 3}; // 48 GPUs; MoE stage of 24 = ep 8 x edp 3
        auto q = rescalePlan(p, 48, 64); // dp 32: stage 32, edp 3 does not divide, ep kept: edp 4
        QVERIFY(q.has_value());
        QCOMPARE(q->degrees.dp, 32);
        QCOMPARE(q->degrees.ep, 8);
        QCOMPARE(q->degrees.edp, 4);
        q = rescalePlan(p, 48, 72); // dp 36: stage 36 = ep 12 x edp 3
        QVERIFY(q.has_value());
        QCOMPARE(q->degrees.ep, 12);
        QVERIFY(!rescalePlan(p, 48, 49).has_value()); // pp x tp = 2 does not divide 49
    }

    // With the exhaustive searcher every pool plan is that pool's optimum: the disaggregated search must
    // find, for its chosen split, pools at least as good as each pool searched alone; the split must be the
    // best of all splits; and its plan must re-evaluate to what the search reports.
    void exhaustiveMatchesPoolsAlone() {
        const Scenario s = llama8b(3);
        DisaggSearchOptions o;
        o.searcher = "exhaustive";
        const DisaggSearchResult r = searchDisaggregated(s, o);
        QVERIFY2(r.found && r.best.metrics.feasible, r.message.c_str());
        QCOMPARE(int(r.splits.size()), 2); // 1+2 and 2+1
        QCOMPARE(r.searches, 4);
        const DisaggModel dm(s);
        const DisaggMetrics again = dm.evaluate(r.best.plan);
        QCOMPARE(again.throughput, r.best.metrics.throughput);
        QCOMPARE(again.ttftMs, r.best.metrics.ttftMs);
        QCOMPARE(again.tpotMs, r.best.metrics.tpotMs);
        for (const DisaggSplit& x : r.splits)
            QVERIFY(x.metrics.throughputPerGpu <= r.best.metrics.throughputPerGpu);
        // Each pool searched alone, exhaustively.
        const int np = r.best.plan.prefill.nodes, nd = r.best.plan.decode.nodes;
        const auto alone = [&](const Objective& objective, const Scenario& pool) {
            const SearchSpace space(pool);
            Engine engine(objective);
            return makeSearcher("exhaustive")->run(space, engine, {}, nullptr, {}).best.metrics.throughput;
        };
        struct Prefill final : Objective {
            const DisaggModel& m;
            int n;
            Prefill(const DisaggModel& m, int n) : m(m), n(n) {}
            Metrics evaluate(const Plan& p) const override { return m.evaluatePrefill(p, n); }
        };
        const double preAlone = alone(Prefill(dm, np), dm.prefillModel(np).scenario());
        const double decAlone = alone(CostModelObjective(dm.decodeModel(nd)), dm.decodeModel(nd).scenario());
        QVERIFY(r.best.metrics.prefill.throughput >= preAlone * (1 - 1e-12));
        QVERIFY(r.best.metrics.decode.throughput >= decAlone * (1 - 1e-12));
        // Rate matching with those pools: the same result.
        QVERIFY(std::abs(r.best.metrics.requestsPerS - std::min({preAlone / 1000.0, decAlone / 1000.0,
                                                                 r.best.metrics.networkRequestsPerS})) <
                1e-9 * r.best.metrics.requestsPerS);
    }

    // With sa on DeepSeek-V3 (32 nodes, budget 200 a pool): every split is searched, the result re-evaluates
    // to what the search reports, and each pool is at least its Megatron plan (every pool search starts
    // there), so the chosen split beats the Megatron plans on every split.
    void annealingOnDeepSeek() {
        const Scenario s = compose("deepseek-v3.yaml", "h100-32x8.yaml", "chat-serving.yaml");
        DisaggSearchOptions o;
        o.budget = 200;
        const DisaggSearchResult r = searchDisaggregated(s, o);
        QVERIFY2(r.found && r.best.metrics.feasible, r.message.c_str());
        QCOMPARE(int(r.splits.size()), 31);
        QCOMPARE(r.searches, 62);
        const DisaggModel dm(s);
        QCOMPARE(dm.evaluate(r.best.plan).throughput, r.best.metrics.throughput);
        double megatronBest = 0;
        for (int k = 1; k < 32; ++k) {
            const DisaggMetrics m = dm.evaluate(
                {{k, dm.prefillModel(k).megatronPlan()}, {32 - k, dm.decodeModel(32 - k).megatronPlan()}});
            if (m.feasible) megatronBest = std::max(megatronBest, m.throughputPerGpu);
        }
        qInfo("disaggregated best %.0f tokens/s per GPU at %d+%d; Megatron pools at best %.0f",
              r.best.metrics.throughputPerGpu, r.best.plan.prefill.nodes, r.best.plan.decode.nodes,
              megatronBest);
        QVERIFY(r.best.metrics.throughputPerGpu >= megatronBest);
    }

    // The sample of long prompts (samples/scenarios/deepseek-v3-h100-32x8-long-prompts.yaml: 8K in, 1K out,
    // TPOT 50 ms): the aggregated serving step carries 8 prefill tokens per decode token, so the TPOT
    // keeps its batch small, while a decode pool runs pure decode steps; disaggregation must win clearly
    // (the cost model gives 4.4x with sa at budget 2000 against budget 200 per pool).
    void longPromptSampleWins() {
        auto s = loadScenario(std::string(SHARDPLAN_SAMPLES_DIR) +
                              "/scenarios/deepseek-v3-h100-32x8-long-prompts.yaml");
        QVERIFY2(s.ok(), s.error().str().c_str());
        const CostModel agg(s.value());
        const CostModelObjective objective(agg);
        const SearchSpace space(s.value());
        Engine engine(objective);
        SearchOptions so;
        so.budget.evaluations = 2000;
        so.warmStart = WarmStart::Megatron;
        const SearchResult a = makeSearcher("sa")->run(space, engine, so, nullptr, {});
        QVERIFY2(a.feasible(), a.message.c_str());
        DisaggSearchOptions o;
        o.budget = 200;
        const DisaggSearchResult d = searchDisaggregated(s.value(), o);
        QVERIFY2(d.found && d.best.metrics.feasible, d.message.c_str());
        qInfo("aggregated %.1f, disaggregated %.1f tokens/s per GPU (%d+%d nodes)",
              a.best.metrics.throughputPerGpu, d.best.metrics.throughputPerGpu, d.best.plan.prefill.nodes,
              d.best.plan.decode.nodes);
        QVERIFY(d.best.metrics.throughputPerGpu > 2.0 * a.best.metrics.throughputPerGpu);
    }

    // Two clusters (decode_cluster): pool sizes 1..2 of each, searched exhaustively, every pairing; the
    // answer is the least cost per million tokens over the four pairings of each pool's exhaustive best, and
    // one split is reported per prefill size (its cheapest decode pool).
    void twoClustersExhaustive() {
        Scenario s = llama8b(2);
        s.cluster.pricePerGpuHour = 2.0;
        Cluster dc = s.cluster;
        dc.gpu.name = "test GPU", dc.gpu.hbmTBs *= 2, dc.pricePerGpuHour = 5.0; // synthetic
        s.decodeCluster = dc;
        DisaggSearchOptions o;
        o.searcher = "exhaustive";
        const DisaggSearchResult r = searchDisaggregated(s, o);
        QVERIFY2(r.found && r.best.metrics.feasible, r.message.c_str());
        QCOMPARE(r.searches, 4); // prefill 1, 2 nodes; decode 1, 2 nodes
        QCOMPARE(int(r.splits.size()), 2);
        const DisaggModel dm(s);
        struct Prefill final : Objective {
            const DisaggModel& m;
            int n;
            Prefill(const DisaggModel& m, int n) : m(m), n(n) {}
            Metrics evaluate(const Plan& p) const override { return m.evaluatePrefill(p, n); }
        };
        const auto best = [](const Objective& objective, const Scenario& pool) {
            const SearchSpace space(pool);
            Engine engine(objective);
            return makeSearcher("exhaustive")->run(space, engine, {}, nullptr, {}).best.plan;
        };
        double cheapest = 1e300;
        for (int kp = 1; kp <= 2; ++kp)
            for (int kd = 1; kd <= 2; ++kd) {
                DisaggPlan p{
                    {kp, best(Prefill(dm, kp), dm.prefillModel(kp).scenario())},
                    {kd, best(CostModelObjective(dm.decodeModel(kd)), dm.decodeModel(kd).scenario())}};
                const DisaggMetrics m = dm.evaluate(p);
                QVERIFY2(m.feasible, m.violation.c_str());
                QCOMPARE(m.usdPerHour, 8.0 * kp * 2.0 + 8.0 * kd * 5.0); // 8 GPUs a node, $2 and $5
                cheapest = std::min(cheapest, m.usdPerMTokens);
            }
        QVERIFY(std::abs(r.best.metrics.usdPerMTokens - cheapest) < 1e-9 * cheapest);
        for (const DisaggSplit& x : r.splits) QVERIFY(x.metrics.usdPerMTokens >= cheapest * (1 - 1e-12));
        // The plan file reproduces it.
        QCOMPARE(dm.evaluate(r.best.plan).usdPerMTokens, r.best.metrics.usdPerMTokens);
    }

    // The disaggregated frontier over two clusters ranks by cost: no point is beaten on both tokens/s per
    // user and tokens per dollar by another, each point's cost is its split's, and along the frontier a
    // faster answer for users costs more per token.
    void frontierByCostOnTwoClusters() {
        Scenario s = llama8b(2);
        s.cluster.pricePerGpuHour = 2.0;
        Cluster dc = s.cluster;
        dc.gpu.name = "test GPU", dc.gpu.hbmTBs *= 2, dc.pricePerGpuHour = 9.0; // synthetic: dear and fast
        s.decodeCluster = dc;
        DisaggSearchOptions o;
        o.budget = 200;
        const auto points = disaggregatedFrontier(s, {10, 20, 40, 80}, o);
        QVERIFY(!points.empty());
        for (const auto& p : points) {
            QVERIFY(p.usdPerMTokens > 0);
            Scenario at = s;
            at.workload.tpotMs = p.targetTpotMs;
            QCOMPARE(DisaggModel(at).evaluate(p.split.plan).usdPerMTokens, p.usdPerMTokens);
            for (const auto& q : points)
                QVERIFY(!(q.usdPerMTokens < p.usdPerMTokens && q.userTokensPerS > p.userTokensPerS));
        }
        for (size_t i = 1; i < points.size(); ++i) // faster for users costs more, or it would dominate
            QVERIFY(points[i].usdPerMTokens > points[i - 1].usdPerMTokens);
    }

    // capacity --disaggregated (cheapestDisaggregated) on Llama-3.1-8B, 3 nodes of 8 H100 at $2 a GPU-hour:
    // below what one prefill node and one decode node serve, the answer is those 2 nodes (the least any split
    // can cost: a node each), one node left off; above it and below what 3 nodes serve, 3 nodes; above every
    // pairing, no answer, with the most any pairing reaches.
    void capacityCheapestPairing() {
        Scenario s = llama8b(3);
        s.cluster.pricePerGpuHour = 2.0;
        DisaggCapacityOptions o;
        o.search.searcher = "exhaustive";
        o.sim.requests = 300;
        const DisaggSearchResult all = searchDisaggregated(s, o.search);
        DisaggOptions spare;
        spare.spareNodes = true;
        const DisaggModel dm(s, spare);
        const auto rateOf = [&](int kp, int kd) {
            return dm.evaluate({{kp, *all.prefillPlans[size_t(kp)]}, {kd, *all.decodePlans[size_t(kd)]}})
                .requestsPerS;
        };
        const double one = rateOf(1, 1);
        const double three = std::max(rateOf(2, 1), rateOf(1, 2));
        QVERIFY2(one > 0 && three > one, qPrintable(QString("1+1 %1, 3 nodes %2").arg(one).arg(three)));
        o.rate = 0.5 * one;
        DisaggCapacity r = cheapestDisaggregated(s, o);
        QVERIFY2(r.met, r.why.c_str());
        QCOMPARE(r.split.plan.prefill.nodes + r.split.plan.decode.nodes, 2);
        QCOMPARE(r.cost.usdPerHour, 16 * 2.0);
        QVERIFY(r.slo.met && r.run);
        QCOMPARE(r.candidates, 3);    // 1+1, 2+1 and 1+2 all reach half of 1+1's rate
        o.rate = 0.5 * (one + three); // above 1+1's rate
        r = cheapestDisaggregated(s, o);
        QVERIFY2(r.met, r.why.c_str());
        QCOMPARE(r.split.plan.prefill.nodes + r.split.plan.decode.nodes, 3);
        QVERIFY(r.split.metrics.requestsPerS >= o.rate);
        o.rate = 2 * three;
        r = cheapestDisaggregated(s, o);
        QVERIFY(!r.met);
        QCOMPARE(r.candidates, 0);
        QVERIFY2(r.why.find("no pairing of pool sizes reaches") == 0, r.why.c_str());
    }

    // The hand-checked case of docs/disaggregated.md: DeepSeek-V3, 8K in / 1K out, prefill on 32x8 H100 and
    // decode on 18x8 B200 (samples/scenarios/deepseek-v3-h100-prefill-b200-decode.yaml), each GPU at the
    // database's price ($2.73 and $6.22 a GPU-hour). The search's cost is the pools' GPUs at their prices
    // over the output tokens of an hour. At the rate it serves, each GPU alone sized by capacity
    // --disaggregated: a B200 node prefills about 1.6x and decodes about 2x an H100 node's requests at 2.28x
    // its price, so H100 alone is the cheapest, the mixed plan next (its decode pool must be B200), B200
    // alone the dearest.
    void mixedSampleCost() {
        const std::string dir = std::string(SHARDPLAN_SAMPLES_DIR) + "/scenarios/";
        auto mixed = loadScenario(dir + "deepseek-v3-h100-prefill-b200-decode.yaml");
        QVERIFY2(mixed.ok(), mixed.ok() ? "" : mixed.error().str().c_str());
        const Scenario& s = mixed.value();
        QVERIFY(s.decodeCluster && s.decodeCluster->gpu.name != s.cluster.gpu.name);
        const double h100 = s.cluster.pricePerGpuHour, b200 = s.decodeCluster->pricePerGpuHour;
        QVERIFY(std::abs(h100 - 2.73) < 1e-9 && std::abs(b200 - 6.22) < 1e-9); // resources/gpus.yaml prices
        DisaggSearchOptions o;
        o.budget = 1000; // the answers no longer move with the budget (the same at 3,000)
        const DisaggSearchResult r = searchDisaggregated(s, o);
        QVERIFY2(r.found && r.best.metrics.feasible, r.message.c_str());
        const DisaggMetrics& m = r.best.metrics;
        const double usd = m.prefillGpus * h100 + m.decodeGpus * b200;
        QVERIFY(std::abs(m.usdPerHour - usd) < 1e-9);
        QVERIFY(std::abs(m.usdPerMTokens - usd / (3600.0 * m.throughput) * 1e6) < 1e-9);
        QCOMPARE(m.throughput, m.requestsPerS * 1024.0);
        // The same load on each: the mixed clusters, H100 alone, B200 alone.
        DisaggCapacityOptions co;
        co.rate = std::floor(m.requestsPerS);
        co.search = o;
        co.sim.requests = 500;
        Scenario h100Only = s, b200Only = s;
        h100Only.decodeCluster.reset();
        b200Only.cluster = *s.decodeCluster, b200Only.decodeCluster.reset();
        double perHour[3] = {0, 0, 0};
        int i = 0;
        for (const Scenario* x :
             {&s, static_cast<const Scenario*>(&h100Only), static_cast<const Scenario*>(&b200Only)}) {
            const DisaggCapacity c = cheapestDisaggregated(*x, co);
            QVERIFY2(c.met, c.why.c_str());
            perHour[i++] = c.cost.usdPerHour;
        }
        qInfo("%.0f requests/s: mixed $%.2f/hour (search: %d+%d nodes, $%.3f/M), H100 alone $%.2f, B200 "
              "alone $%.2f",
              co.rate, perHour[0], r.best.plan.prefill.nodes, r.best.plan.decode.nodes, m.usdPerMTokens,
              perHour[1], perHour[2]);
        QVERIFY(perHour[1] < perHour[0]);
        QVERIFY(perHour[0] < perHour[2]);
    }

    // The disaggregated frontier beside the aggregated one on the long-prompt sample: its points are
    // mutually non-dominated, each re-evaluates under its own TPOT target to what was reported and meets
    // it, and disaggregation wins at some interactivity (the reasoning of longPromptSampleWins).
    void frontierBesideAggregated() {
        auto s = loadScenario(std::string(SHARDPLAN_SAMPLES_DIR) +
                              "/scenarios/deepseek-v3-h100-32x8-long-prompts.yaml");
        QVERIFY(s.ok());
        ParetoOptions po;
        po.points = 4;
        po.budget = 300;
        const ParetoResult agg = paretoFront(s.value(), po);
        QVERIFY2(!agg.frontier.empty(), agg.message.c_str());
        DisaggSearchOptions o;
        o.budget = 100;
        const auto dis = disaggregatedFrontier(s.value(), agg.targetsMs, o);
        QVERIFY(!dis.empty());
        bool wins = false;
        for (size_t i = 0; i < dis.size(); ++i) {
            const DisaggFrontierPoint& p = dis[i];
            for (size_t j = 0; j < dis.size(); ++j)
                if (i != j)
                    QVERIFY(!(dis[j].throughputPerGpu >= p.throughputPerGpu &&
                              dis[j].userTokensPerS >= p.userTokensPerS));
            if (i > 0) QVERIFY(dis[i - 1].userTokensPerS < p.userTokensPerS);
            Scenario at = s.value();
            at.workload.tpotMs = p.targetTpotMs;
            const DisaggMetrics m = DisaggModel(at).evaluate(p.split.plan);
            QVERIFY2(m.feasible, m.violation.c_str());
            QCOMPARE(m.throughputPerGpu, p.throughputPerGpu);
            QVERIFY(m.tpotMs <= p.targetTpotMs);
            const ParetoPoint* a = pointAtTpot(agg.frontier, p.targetTpotMs);
            if (a && p.throughputPerGpu > a->throughputPerGpu) wins = true;
        }
        QVERIFY(wins);
    }

    void refusals() {
        Scenario s = llama8b(2);
        s.workload.phase = Phase::Decode;
        DisaggSearchResult r = searchDisaggregated(s, {});
        QVERIFY(r.refused);
        QVERIFY2(r.message.find("must be serving") != std::string::npos, r.message.c_str());
        DisaggSearchOptions o;
        o.searcher = "nope";
        r = searchDisaggregated(llama8b(2), o);
        QVERIFY(r.refused);
        r = searchDisaggregated(llama8b(1), {});
        QVERIFY(r.refused);
        QVERIFY2(r.message.find("at least 2 nodes") != std::string::npos, r.message.c_str());
    }

    // SGLang: each pool's servers carry --disaggregation-mode and the Mooncake backend, and pass the
    // exporter's own check of the version's parser (core/export/check.h).
    void sglangExport() {
        const Scenario s = compose("deepseek-v3.yaml", "h100-32x8.yaml", "chat-serving.yaml");
        auto p = parseDisaggPlan(kDeepSeekPlan, "ds.yaml", &s);
        QVERIFY(p.ok());
        ExportOptions o;
        o.engine = ServingEngine::Sglang;
        auto l = disaggregatedLaunch(s, p.value(), o);
        QVERIFY2(l.ok(), l.error().str().c_str());
        const auto version = findEngineVersion(ServingEngine::Sglang, "");
        for (const auto& [lc, mode, phase, nodes] : {std::tuple{&l->prefill, "prefill", Phase::Prefill, 4},
                                                     std::tuple{&l->decode, "decode", Phase::Decode, 28}}) {
            const auto parsed = parseEngineCommand(lc->argv);
            QVERIFY(parsed.has_value());
            QCOMPARE(QString::fromStdString(parsed->options.at("--disaggregation-mode")), QString(mode));
            QCOMPARE(QString::fromStdString(parsed->options.at("--disaggregation-transfer-backend")),
                     QStringLiteral("mooncake"));
            for (const NodeLaunch& n : lc->nodes)
                for (const auto& cmd : n.commands)
                    if (auto c = parseEngineCommand(cmd)) QVERIFY(c->has("--disaggregation-mode"));
            const auto broken = checkLaunch(*lc, poolScenario(s, phase, nodes), version.value());
            QVERIFY2(broken.empty(), broken.empty() ? "" : broken.front().c_str());
            QVERIFY(lc->notesText().find("not mapped") == std::string::npos);
        }
        QVERIFY(l->text().find("# decode pool") != std::string::npos);
        o.engine = ServingEngine::Vllm;
        QVERIFY(!disaggregatedLaunch(s, p.value(), o).ok());
        o.engine = ServingEngine::Sglang;
        o.version = engineVersions(ServingEngine::Sglang).front().version;
        auto old = disaggregatedLaunch(s, p.value(), o);
        QVERIFY(!old.ok());
        QVERIFY2(old.error().message.find("read from SGLang") != std::string::npos,
                 old.error().message.c_str());
    }

    // Pools on two GPU types (the mixed sample's best split): SGLang's and Dynamo's exports write each pool
    // for its own cluster and pass the same start-up checks, each pool's against its own cluster
    // (poolScenario); a decode pool on AMD GPUs behind an NVIDIA prefill pool is refused with the reason.
    void twoGpuTypesExport() {
        auto loaded = loadScenario(std::string(SHARDPLAN_SAMPLES_DIR) +
                                   "/scenarios/deepseek-v3-h100-prefill-b200-decode.yaml");
        QVERIFY(loaded.ok());
        Scenario s = loaded.value();
        DisaggSearchOptions so;
        so.budget = 200;
        const DisaggSearchResult r = searchDisaggregated(s, so);
        QVERIFY2(r.found && r.best.metrics.feasible, r.message.c_str());
        const DisaggPlan& p = r.best.plan;
        for (ServingEngine worker : {ServingEngine::Sglang, ServingEngine::Vllm}) {
            ExportOptions o;
            o.engine = worker == ServingEngine::Sglang ? ServingEngine::Sglang : ServingEngine::Dynamo;
            o.dynamoWorker = worker;
            auto l = disaggregatedLaunch(s, p, o);
            QVERIFY2(l.ok(), l.ok() ? "" : l.error().str().c_str());
            const EngineVersion v = findEngineVersion(o.engine, "").value();
            const auto broken = checkDisaggLaunch(l.value(), s, p, v, worker);
            QVERIFY2(broken.empty(), broken.empty() ? "" : broken.front().c_str());
            QVERIFY2(std::any_of(l->notes.begin(), l->notes.end(),
                                 [](const std::string& n) {
                                     return n.find("Two GPU types: the prefill pool's scripts run on H100") ==
                                                0 &&
                                            n.find("decode pool's on B200") != std::string::npos;
                                 }),
                     l->notes.front().c_str());
            // Each pool's scripts are as many nodes as its pool has, of its own cluster's GPUs.
            QVERIFY(int(l->prefill.nodes.size()) <= p.prefill.nodes);
            QVERIFY(int(l->decode.nodes.size()) <= p.decode.nodes);
        }
        // The decode pool on MI300X: two vendors, refused.
        auto amd =
            loadScenario(std::string(SHARDPLAN_SAMPLES_DIR) + "/scenarios/llama-3.1-70b-mi300x-1x8.yaml");
        QVERIFY(amd.ok());
        s.decodeCluster = amd.value().cluster;
        s.decodeCluster->nodes = p.decode.nodes;
        ExportOptions o;
        o.engine = ServingEngine::Sglang;
        auto refused = disaggregatedLaunch(s, p, o);
        QVERIFY(!refused.ok());
        QVERIFY2(refused.error().message.find("decode pool on AMD GPUs") != std::string::npos,
                 refused.error().message.c_str());
    }

    // Dynamo (ai-dynamo/dynamo vllm/backend_args.py at d195d280e13e, vllm/args.py at 000a36a7399a): one
    // frontend for both pools, on the prefill pool's node 0; every vLLM worker marked with its role and
    // the NIXL connector the prefill worker must name; SGLang workers with SGLang's own flags and NIXL;
    // TensorRT-LLM workers refused (their cache transceiver options are not written).
    void dynamoExport() {
        const Scenario s = compose("deepseek-v3.yaml", "h100-32x8.yaml", "chat-serving.yaml");
        auto p = parseDisaggPlan(kDeepSeekPlan, "ds.yaml", &s);
        QVERIFY(p.ok());
        ExportOptions o;
        o.engine = ServingEngine::Dynamo;
        o.dynamoWorker = ServingEngine::Vllm;
        auto l = disaggregatedLaunch(s, p.value(), o);
        QVERIFY2(l.ok(), l.error().str().c_str());
        const auto count = [](const LaunchCommand& lc, const std::string& word) {
            int n = 0;
            for (const NodeLaunch& node : lc.nodes)
                for (const auto& cmd : node.commands) n += int(std::count(cmd.begin(), cmd.end(), word));
            return n;
        };
        QCOMPARE(count(l->prefill, "dynamo.frontend"), 1);
        QCOMPARE(count(l->decode, "dynamo.frontend"), 0);
        for (const auto& [lc, mode] : {std::pair{&l->prefill, "prefill"}, std::pair{&l->decode, "decode"}}) {
            const int workers = count(*lc, "dynamo.vllm");
            QVERIFY(workers > 0);
            QCOMPARE(count(*lc, mode), workers);                   // each worker: --disaggregation-mode MODE
            QCOMPARE(count(*lc, "--kv-transfer-config"), workers); // and the NIXL connector
            for (const NodeLaunch& node : lc->nodes)
                for (const auto& cmd : node.commands) {
                    const auto at = std::find(cmd.begin(), cmd.end(), "--kv-transfer-config");
                    if (at != cmd.end()) QVERIFY(at[1].find("NixlConnector") != std::string::npos);
                }
        }
        QCOMPARE(l->prefill.nodes.front().background, size_t(1)); // the frontend runs in the background
        QVERIFY(l->prefill.notesText().find("not mapped") == std::string::npos);
        o.dynamoWorker = ServingEngine::Sglang;
        l = disaggregatedLaunch(s, p.value(), o);
        QVERIFY2(l.ok(), l.error().str().c_str());
        QVERIFY(count(l->decode, "dynamo.sglang") > 0);
        QCOMPARE(count(l->decode, "nixl"), count(l->decode, "dynamo.sglang"));
        o.dynamoWorker = ServingEngine::Trtllm;
        const auto refused = disaggregatedLaunch(s, p.value(), o);
        QVERIFY(!refused.ok());
        QVERIFY2(refused.error().message.find("cache transceiver") != std::string::npos,
                 refused.error().message.c_str());
    }

    // ----------------------------------------------------------------------------------------------------
    // CLI
    void cli() {
        QTemporaryDir dir;
        const QString scenario = llamaScenarioFile(dir, 2);
        const QString out = dir.filePath("disagg.yaml");
        Run run = shardplan(
            {"search", "--scenario", scenario, "--disaggregated", "--budget", "300", "--json", "--out", out});
        QVERIFY2(run.code == 0, qPrintable(run.err));
        const QJsonObject found = QJsonDocument::fromJson(run.out.toUtf8()).object();
        const double reported = found["metrics"].toObject()["throughput_tokens_per_s"].toDouble();
        QVERIFY(reported > 0);
        // validate, evaluate (the file re-evaluates to what search reported)
        run = shardplan({"validate", out});
        QVERIFY2(run.code == 0, qPrintable(run.err + run.out));
        QVERIFY2(run.out.contains("disaggregated: prefill 1 nodes"), qPrintable(run.out));
        run = shardplan({"evaluate", "--scenario", scenario, "--plan", out, "--json"});
        QVERIFY2(run.code == 0, qPrintable(run.err));
        const QJsonObject ev = QJsonDocument::fromJson(run.out.toUtf8()).object();
        QCOMPARE(ev["throughput_tokens_per_s"].toDouble(), reported);
        QVERIFY(ev["bound"].toString() == "prefill" || ev["bound"].toString() == "decode");
        run = shardplan({"evaluate", "--scenario", scenario, "--plan", out, "--load", "0.5"});
        QVERIFY2(run.code == 0, qPrintable(run.err));
        QVERIFY2(run.out.contains("KV transfer") && run.out.contains("-bound"), qPrintable(run.out));
        // compare against an aggregated plan
        const QString agg = dir.filePath("agg.yaml");
        run = shardplan({"search", "--scenario", scenario, "--searcher", "megatron", "--out", agg});
        QVERIFY2(run.code == 0, qPrintable(run.err));
        run = shardplan({"compare", "--scenario", scenario, agg, out});
        QVERIFY2(run.code == 0, qPrintable(run.err));
        QVERIFY2(run.out.contains("aggregated, pp") && run.out.contains("disaggregated, prefill 1 node"),
                 qPrintable(run.out));
        run = shardplan({"compare", "--scenario", scenario, agg, out, "--json"});
        QVERIFY2(run.code == 0, qPrintable(run.err));
        const QJsonObject cmp = QJsonDocument::fromJson(run.out.toUtf8()).object();
        QVERIFY(cmp["b"].toObject()["disaggregated"].toBool());
        QVERIFY(!cmp["a"].toObject()["disaggregated"].toBool());
        // hostile: the plan on a cluster of another size, --load on a single plan
        const QString three = dir.filePath("three.yaml");
        {
            Scenario s3 = llama8b(3);
            write(dir, "three.yaml", toYaml(s3));
        }
        run = shardplan({"evaluate", "--scenario", three, "--plan", out});
        QCOMPARE(run.code, 1);
        QVERIFY2(run.err.contains("disagg.yaml:") && run.err.contains("but the cluster has 3"),
                 qPrintable(run.err));
        run = shardplan({"evaluate", "--scenario", scenario, "--plan", agg, "--load", "0.5"});
        QCOMPARE(run.code, 2);
        run = shardplan({"search", "--scenario", scenario, "--disaggregated", "--warm-start", "cd"});
        QCOMPARE(run.code, 2);
        // export: both pools' SGLang servers; other engines refused; the plan file written again
        run = shardplan({"export", "--scenario", scenario, "--plan", out, "--engine", "sglang"});
        QVERIFY2(run.code == 0, qPrintable(run.err));
        QVERIFY2(run.out.contains("--disaggregation-mode prefill") &&
                     run.out.contains("--disaggregation-mode decode"),
                 qPrintable(run.out));
        run = shardplan({"export", "--scenario", scenario, "--plan", out, "--engine", "vllm"});
        QCOMPARE(run.code, 1);
        QVERIFY2(run.err.contains("exports to SGLang") && run.err.contains("Dynamo"), qPrintable(run.err));
        run = shardplan({"export", "--scenario", scenario, "--plan", out, "--format", "json"});
        QVERIFY2(run.code == 0, qPrintable(run.err));
        QVERIFY(QJsonDocument::fromJson(run.out.toUtf8()).object()["disaggregated"].isObject());
        // pareto --disaggregated: the frontier of splits beside the aggregated one
        run = shardplan({"pareto", "--scenario", scenario, "--points", "3", "--budget", "100",
                         "--disaggregated", "--pool-budget", "50", "--json"});
        QVERIFY2(run.code == 0, qPrintable(run.err));
        QVERIFY(QJsonDocument::fromJson(run.out.toUtf8()).object()["disaggregated"].isArray());
        run = shardplan({"pareto", "--scenario", scenario, "--pool-budget", "50"});
        QCOMPARE(run.code, 2);
        // capacity --disaggregated: the cheapest pools for a rate, simulated; with --max-rate or --gpus a
        // usage error; a rate no pairing reaches is bad input with the reason.
        run = shardplan({"capacity", "--scenario", scenario, "--rate", "5", "--disaggregated", "--budget",
                         "100", "--requests", "200", "--json"});
        QVERIFY2(run.code == 0, qPrintable(run.err));
        const QJsonObject cap = QJsonDocument::fromJson(run.out.toUtf8()).object();
        QVERIFY(cap["met"].toBool());
        QVERIFY(cap["analytical_requests_per_s"].toDouble() >= 5);
        QVERIFY(cap["slo"].toObject()["met"].toBool());
        QCOMPARE(cap["prefill"].toObject()["nodes"].toInt() + cap["decode"].toObject()["nodes"].toInt(), 2);
        run = shardplan({"capacity", "--scenario", scenario, "--max-rate", "--disaggregated"});
        QCOMPARE(run.code, 2);
        run = shardplan(
            {"capacity", "--scenario", scenario, "--rate", "5", "--gpus", "b200", "--disaggregated"});
        QCOMPARE(run.code, 2);
        run = shardplan(
            {"capacity", "--scenario", scenario, "--rate", "1e6", "--disaggregated", "--budget", "50"});
        QCOMPARE(run.code, 1);
        QVERIFY2(run.err.contains("no pairing of pool sizes reaches"), qPrintable(run.err));
    }
};

QTEST_GUILESS_MAIN(TestDisaggSearch)
#include "tst_disagg_search.moc"
