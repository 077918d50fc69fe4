// Why a plan wins (core/analysis): hand-built evaluations with figures worked out beside each check, and the
// identity the analysis rests on (throughput = sequences in flight / step) against the cost model.
#include "core/analysis/why.h"
#include "core/io/formats.h"

#include <QTest>

using namespace sp;

namespace {
Scenario sample(const char* name) {
    auto s = loadScenario(std::string(SHARDPLAN_SAMPLES_DIR) + "/scenarios/" + name);
    if (!s) qFatal("%s", s.error().str().c_str());
    return s.value();
}

Plan plan(int dp, int tp, int pp = 1) {
    Degrees d;
    d.dp = dp, d.tp = tp, d.pp = pp;
    d.ep = 1, d.etp = 1, d.edp = dp * tp;
    return Plan::megatronChoices(d);
}

/// A feasible evaluation with one dense layer's worth of compute and NVLink time in its decode step.
Evaluation eval(int64_t batch, double throughput, double computeMs, double nvlinkMs, double weightsGiB) {
    Evaluation e;
    e.metrics.valid = e.metrics.feasible = true;
    e.metrics.batch = batch;
    e.metrics.throughput = throughput;
    e.metrics.weightsGiB = weightsGiB;
    e.decode.denseLayers = 1;
    OpCost op{LayerKind::Dense, "ffn_up", "column", computeMs, 0, computeMs, false, 0};
    e.decode.ops.push_back(op);
    CommCost c{LayerKind::Dense, "ffn_down -> norms", Collective::AllReduce, LinkClass::NvLink, 8, 0,
               nvlinkMs};
    e.decode.comms.push_back(c);
    e.decode.stageMs = computeMs + nvlinkMs;
    e.decode.phase = "decode step";
    return e;
}

bool has(const std::string& text, const char* part) {
    return text.find(part) != std::string::npos;
}
} // namespace

class TestWhy : public QObject {
    Q_OBJECT
private slots:
    void moreReplicasMoreInFlight() {
        // A: dp128 tp8, batch 100: 12,800 sequences in flight, 50 ms step -> 256,000 tok/s.
        // B: dp512 tp2, batch 79: 40,448 in flight (3.16x), 45 ms step (0.9x) -> 898,844 tok/s (3.51x).
        const Scenario s = sample("llama-3.1-8b-h100-1x8.yaml"); // serving
        const Why w = explainWhy(s, plan(128, 8), eval(100, 256000, 30, 20, 20), plan(512, 2),
                                 eval(79, 40448 / 0.045, 35, 10, 10));
        QCOMPARE(w.a.inFlight, int64_t(12800));
        QCOMPARE(w.b.inFlight, int64_t(40448));
        QVERIFY(qFuzzyCompare(w.a.stepMs, 50.0));
        QVERIFY(qFuzzyCompare(w.b.stepMs, 45.0));
        QVERIFY(qFuzzyCompare(w.replicaRatio, 4.0));
        QVERIFY(qFuzzyCompare(w.inFlightRatio, 3.16));
        QVERIFY(qFuzzyCompare(w.stepRatio, 0.9));
        QVERIFY(qFuzzyCompare(w.throughputRatio, 3.16 / 0.9));
        QVERIFY2(has(w.sentence, "dp512 tp2 reaches 3.51x the throughput of dp128 tp8"), w.sentence.c_str());
        QVERIFY2(has(w.sentence, "runs four times the replicas, so 3.16x the sequences are in flight"),
                 w.sentence.c_str());
        // The step: compute 30 -> 35 ms, NVLink 20 -> 10 ms: the NVLink part moved most.
        QVERIFY2(has(w.sentence, "the step is 0.9x as long (NVLink 10 ms less)"), w.sentence.c_str());
        // ln 3.16 = 1.15 against -ln 0.9 = 0.105: the sequences in flight carry it.
        QVERIFY2(has(w.sentence, "Most of the difference comes from the sequences in flight."),
                 w.sentence.c_str());
        // Rows: replicas and sequences in flight, each side.
        QCOMPARE(w.rows[0].key, std::string("replicas"));
        QCOMPARE(w.rows[0].a, 128.0);
        QCOMPARE(w.rows[0].b, 512.0);
        QCOMPARE(w.rows[2].key, std::string("in_flight"));
        QCOMPARE(w.rows[2].b, 40448.0);
    }

    void biggerBatchFromFreedMemory() {
        // Same replicas; B holds half the weights per GPU (8 against 16 GiB) and runs batch 128 against 64:
        // 2x in flight, step 25 against 20 ms (1.25x): 2 / 1.25 = 1.6x the throughput.
        const Scenario s = sample("llama-3.1-8b-h100-1x8.yaml");
        const Why w = explainWhy(s, plan(1, 8), eval(64, 64 / 0.020, 15, 5, 16), plan(1, 8),
                                 eval(128, 128 / 0.025, 22, 3, 8), "A", "B");
        QVERIFY(qFuzzyCompare(w.throughputRatio, 1.6));
        QVERIFY2(has(w.sentence,
                     "B reaches 1.60x the throughput of A: 2.00x the sequences are in flight (128 per "
                     "replica against 64); the step is 1.25x as long (compute 7 ms more)."),
                 w.sentence.c_str());
        QVERIFY2(has(w.sentence, "each GPU holds 8 GiB of weights against 16"), w.sentence.c_str());
    }

    void prefillStepCountsThePrompt() {
        // Prefill: throughput = dp x pp x B x I / cycle. dp2, batch 4, 1,000-token prompts at 80,000 tok/s:
        // 8 prompts x 1,000 tokens / 80,000 = 0.1 s.
        Scenario s = sample("llama-3.1-8b-h100-1x8.yaml");
        s.workload.phase = Phase::Prefill;
        s.workload.inputTokens = 1000;
        Metrics m;
        m.feasible = true;
        m.batch = 4;
        m.throughput = 80000;
        const PlanFigures f = planFigures(s, plan(2, 4), m);
        QCOMPARE(f.inFlight, int64_t(8));
        QVERIFY(qFuzzyCompare(f.stepMs, 100.0));
    }

    void infeasibleSideIsNamed() {
        const Scenario s = sample("llama-3.1-8b-h100-1x8.yaml");
        Evaluation bad = eval(10, 0, 1, 1, 1);
        bad.metrics.feasible = false;
        bad.metrics.violation = "TPOT 80.0 ms at batch 10 exceeds the SLO of 50 ms";
        const Why w = explainWhy(s, plan(1, 8), eval(64, 3200, 15, 5, 16), plan(8, 1), bad);
        QCOMPARE(w.throughputRatio, 0.0);
        QCOMPARE(w.sentence,
                 std::string("dp8 is infeasible: TPOT 80.0 ms at batch 10 exceeds the SLO of 50 ms."));
    }

    void stepIsTheCostModelsCycle() {
        // Serving and decode: TPOT is the cycle (README, "Phases"), so the step derived from throughput and
        // sequences in flight must equal the cost model's TPOT.
        for (const char* name : {"llama-3.1-8b-h100-1x8.yaml", "llama-3.1-70b-h100-4x8.yaml"}) {
            const Scenario s = sample(name);
            const CostModel model(s);
            const Plan p = model.megatronPlan();
            const Evaluation e = model.explain(p);
            QVERIFY(e.metrics.feasible);
            const PlanFigures f = planFigures(s, p, e.metrics);
            QVERIFY2(std::abs(f.stepMs - e.metrics.tpotMs) < 1e-6 * e.metrics.tpotMs,
                     qPrintable(QStringLiteral("%1: step %2 ms, TPOT %3 ms")
                                    .arg(QLatin1String(name))
                                    .arg(f.stepMs)
                                    .arg(e.metrics.tpotMs)));
            // The same plan against itself: the same throughput, the same step.
            const Why w = explainWhy(s, p, e, p, e);
            QVERIFY(qFuzzyCompare(w.throughputRatio, 1.0));
            QVERIFY2(has(w.sentence, "reach the same throughput"), w.sentence.c_str());
        }
    }

    void words() {
        QCOMPARE(timesWord(4.0), std::string("four times"));
        QCOMPARE(timesWord(0.5), std::string("half"));
        QCOMPARE(timesWord(3.2), std::string("3.20x"));
        Plan p = plan(512, 2);
        QCOMPARE(degreesName(p, false), std::string("dp512 tp2"));
        QCOMPARE(degreesName(plan(1, 1), false), std::string("tp1"));
    }
};

QTEST_MAIN(TestWhy)
#include "tst_why.moc"
