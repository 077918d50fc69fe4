// The serving simulation (core/sim) and what it stands on: the cost model's step at any composition
// (core/cost/stepcost.h), the workload's length distributions and percentile SLOs, traces, cost per token,
// and capacity. Known answers are worked out beside each assertion.
#include "sample_fixtures.h"

#include "core/cost/economics.h"
#include "core/cost/stepcost.h"
#include "core/io/formats.h"
#include "core/io/gpudb.h"
#include "core/sim/capacity.h"
#include "core/sim/draws.h"
#include "core/sim/servingchecks.h"
#include "core/sim/simulator.h"
#include "core/sim/trace.h"

#include <QTemporaryDir>
#include <QTest>

#include <cmath>
#include <fstream>
#include <numeric>

using namespace sp;
using namespace sp::test;

namespace {

bool near(double a, double b, double rel) {
    return std::abs(a - b) <= rel * std::max(std::abs(a), std::abs(b));
}

/// Llama-3.1-70B on 8 H200 (TP8, one replica) under the chat workload: 1,000 prompt and 1,000 output tokens.
Scenario llama70b() {
    return sampleScenario("llama-3.1-70b-h200-1x8-chat.yaml");
}

StepLoad prefillOnly(double tokens, double cached = 0) {
    StepLoad l;
    l.prefillTokens = tokens;
    l.prefillPrompts = 1;
    l.prefillContext = cached + (tokens + 1.0) / 2.0;
    return l;
}

StepLoad decodeOnly(double seqs, double context) {
    StepLoad l;
    l.decodeSeqs = seqs;
    l.decodeContext = context;
    return l;
}

/// One serving check of Llama-3.1-8B on 8 H100 (TensorRT-LLM) written to dir: `extra` lines after the engine,
/// then the plan, a rate of 10 requests/s, the workload and the measured figures given.
Result<std::vector<ServingCheck>> oneCheck(const QTemporaryDir& dir, const std::string& extra,
                                           const std::string& plan, const std::string& workload,
                                           const std::string& measured) {
    const std::string path = dir.filePath("checks.yaml").toStdString();
    std::ofstream(path)
        << "version: 1\nchecks:\n  - id: one\n    source: hand-written\n    model: llama-3.1-8b\n"
           "    cluster: h100-1x8\n    engine: trtllm\n"
        << extra << "    plan: " << plan << "\n    rate: 10\n    workload: " << workload
        << "\n    measured: " << measured << "\n";
    return loadServingChecks(path, kSampleDir);
}

} // namespace

class TestSim : public QObject {
    Q_OBJECT
private slots:
    // ------------------------------------------------------------------ the step at any composition

    // At the steady composition evaluate() prices (B decoding at the mean context, the B E / O prompts
    // that replace the finished ones), StepCost gives evaluate()'s step, bit for bit: one replica (TP8), 32
    // replicas that step together at data-parallel attention's busiest rank (DeepSeek-V3 EP256), two
    // pipeline stages (their cycle is max(pp x slowest, sum)), and an MTP verify step of K + 1 = 2 tokens a
    // sequence.
    void stepCostSteady_data() {
        QTest::addColumn<int>("which");
        QTest::addRow("llama-70b tp8") << 0;
        QTest::addRow("deepseek-v3 dp-attention x32") << 1;
        QTest::addRow("llama-70b pp2 x dp2 x tp8") << 2;
        QTest::addRow("deepseek-v3 mtp x1") << 3;
    }
    void stepCostSteady() {
        QFETCH(int, which);
        Scenario s = which == 0 || which == 2 ? llama70b() : sampleScenario("deepseek-v3-h100-32x8.yaml");
        if (which == 2) s = sampleScenario("llama-3.1-70b-h100-4x8.yaml");
        if (which == 3) {
            s = sampleScenario("deepseek-v3-h200-16x8.yaml");
            s.workload.acceptance[size_t(SpecMethod::Mtp)] = {0.8};
        }
        const CostModel model(s);
        Plan p = model.megatronPlan();
        if (which == 2) p = Plan::megatronChoices({2, 2, 8, 16, 1, 1});
        if (which == 3) p.spec = {SpecMethod::Mtp, 1};
        QVERIFY(!model.checkPlan(p));
        const Metrics m = model.evaluate(p);
        QVERIFY2(m.valid, m.violation.c_str());
        const StepCost cost(model, p);
        QVERIFY(cost.seconds(cost.steadyLoad(double(m.batch))) * 1e3 == m.stepMs);
        if (which == 1) QCOMPARE(cost.lockstepReplicas(), 32); // min(dp 32, ep 256 / tp 8)
        if (which == 3) QCOMPARE(cost.tokensVerified(), 2);
        // A longer context reads more KV: the same step at twice the mean context takes longer, and an
        // empty step none.
        StepLoad longer = cost.steadyLoad(double(m.batch));
        longer.decodeContext *= 2;
        QVERIFY(cost.seconds(longer) > cost.seconds(cost.steadyLoad(double(m.batch))));
        QCOMPARE(cost.seconds(StepLoad{}), 0.0);
    }

    // The KV tokens a replica holds: the pool evaluate() reports (kvPoolGiB, per GPU) over the KV bytes a
    // token takes on a GPU. Llama-3.1-70B keeps 80 layers x 8 KV heads x 128 x 2 (K and V) x 2 bytes =
    // 327,680 bytes a token in BF16; TP8 splits the 8 KV heads, 40,960 bytes per GPU.
    void kvTokensFromThePool() {
        const Scenario s = llama70b();
        const CostModel model(s);
        const Plan p = model.megatronPlan();
        const Metrics m = model.evaluate(p);
        const StepCost cost(model, p);
        const double bytesPerToken = 80.0 * 8 * 128 * 2 * 2 / 8;
        QCOMPARE(bytesPerToken, 40960.0);
        QVERIFY(
            near(cost.kvTokens(double(m.batch)), m.kvPoolGiB * 1024.0 * 1024 * 1024 / bytesPerToken, 1e-9));
    }

    // ------------------------------------------------------------------ the simulation, hand-reasoned

    // Three requests, each alone or in a known company. A (100 prompt, 3 output tokens) arrives at 0 and is
    // prefilled in the first step, s1; B (200, 2) arrives 1 ms later, during it, and is prefilled in the
    // second step beside A's first decode, s2; the third step decodes both (contexts 101 and 200): A's third
    // token and B's second end them. C (50, 2) arrives at 10 s, alone: a prefill step and a decode step.
    //   TTFT: A s1, B s1 + s2 - 0.001, C s4.  TPOT: A (s2 + s3) / 2, B s3, C s5.
    void tinyTraceByHand() {
        const Scenario s = llama70b();
        const CostModel model(s);
        const Plan p = model.megatronPlan();
        const StepCost cost(model, p);
        StepLoad second = prefillOnly(200);
        second.decodeSeqs = 1, second.decodeContext = 100;
        const double s1 = cost.seconds(prefillOnly(100)), s2 = cost.seconds(second),
                     s3 = cost.seconds(decodeOnly(2, (100 + 1 + 200) / 2.0)),
                     s4 = cost.seconds(prefillOnly(50)), s5 = cost.seconds(decodeOnly(1, 50));
        QVERIFY(s1 > 0.001); // B arrives while A's prefill runs
        SimOptions o;
        o.trace = {{0.0, 100, 3}, {0.001, 200, 2}, {10.0, 50, 2}};
        o.requests = 0;
        const auto r = simulate(model, p, o);
        QVERIFY2(r->ok, r->error.c_str());
        QCOMPARE(r->completed, int64_t(3));
        std::vector<double> ttft{s1 * 1e3, (s1 + s2 - 0.001) * 1e3, s4 * 1e3};
        std::vector<double> tpot{(s2 + s3) / 2 * 1e3, s3 * 1e3, s5 * 1e3};
        std::sort(ttft.begin(), ttft.end());
        std::sort(tpot.begin(), tpot.end());
        QCOMPARE(r->ttftSortedMs.size(), size_t(3));
        for (size_t i = 0; i < 3; ++i) {
            QVERIFY2(near(r->ttftSortedMs[i], ttft[i], 1e-9),
                     qPrintable(QString::number(r->ttftSortedMs[i])));
            QVERIFY(near(r->tpotSortedMs[i], tpot[i], 1e-9));
        }
        QCOMPARE(r->steps, int64_t(5));
        QCOMPARE(r->preemptions, int64_t(0));
    }

    // A pipeline's micro-batches share its stages, one at a time in each. Llama-3.1-70B on 8 H200 as TP4 x
    // PP2, one replica: A and B (32 prompt tokens each) arrive at 0 and go to the two micro-batches. A runs
    // stage 1 for p1 and stage 2 for p2 (its prompt's seconds per stage); B enters stage 1 when A leaves it,
    // at p1, and stage 2 when A has left it and its own stage 1 is done: B's first token at max(2 p1, p1 +
    // p2) + p2, not at the 2 max(p1, p2) of a pipeline of its own. Then C and D at 0, routed round robin to
    // A's and B's micro-batches while both are in flight: the micro-batch composed next (A's) takes both, as
    // one scheduler composes a replica's micro-batches from one queue, so C's and D's first tokens come in
    // the same step.
    void pipelineStagesAreShared() {
        const Scenario s = llama70b();
        const CostModel model(s);
        Plan p = model.megatronPlan();
        p.degrees.tp = 4, p.degrees.pp = 2, p.degrees.dp = 1;
        p.degrees.ep = 4, p.degrees.etp = 1, p.degrees.edp = 1;
        QVERIFY2(!model.checkPlan(p), model.checkPlan(p)->c_str());
        const StepCost cost(model, p);
        QCOMPARE(cost.stages(), 2);
        double pre[2];
        cost.stageSeconds(prefillOnly(32), pre);
        QVERIFY(pre[0] > 0 && pre[1] > 0);
        QCOMPARE(cost.seconds(prefillOnly(32)), std::max(2 * std::max(pre[0], pre[1]), pre[0] + pre[1]));
        SimOptions o;
        o.trace = {{0.0, 32, 3}, {0.0, 32, 1}};
        o.requests = 0;
        auto r = simulate(model, p, o);
        QVERIFY2(r->ok, r->error.c_str());
        QCOMPARE(r->completed, int64_t(2));
        const double a = (pre[0] + pre[1]) * 1e3, b = (std::max(2 * pre[0], pre[0] + pre[1]) + pre[1]) * 1e3;
        QVERIFY2(near(r->ttftSortedMs[0], a, 1e-9), qPrintable(QString::number(r->ttftSortedMs[0] - a)));
        QVERIFY2(near(r->ttftSortedMs[1], b, 1e-9), qPrintable(QString::number(r->ttftSortedMs[1] - b)));
        o.trace = {{0.0, 32, 3}, {0.0, 32, 1}, {0.0, 32, 2}, {0.0, 32, 2}};
        o.routing = Routing::RoundRobin;
        r = simulate(model, p, o);
        QVERIFY2(r->ok, r->error.c_str());
        QCOMPARE(r->completed, int64_t(4));
        QCOMPARE(r->ttftSortedMs.size(), size_t(4));
        QVERIFY2(r->ttftSortedMs[2] == r->ttftSortedMs[3] && r->ttftSortedMs[2] > b,
                 qPrintable(QString("%1 %2").arg(r->ttftSortedMs[2]).arg(r->ttftSortedMs[3])));
    }

    // Preemption exactly when the pool is exhausted. Two requests of 32 prompt and 40 output tokens at 0,
    // 16-token blocks: A is prefilled in step 1 (2 blocks), B in step 2; in step k >= 3, A (context 30 + k)
    // needs ceil((31 + k) / 16) blocks and B (context 29 + k) ceil((30 + k) / 16): 5 + 4 = 9 at k = 34 and
    // 5 + 5 = 10 at k = 35. A pool of 10 blocks never runs out; one of 9 runs out at the start of step 35,
    // where B, the latest admitted, preempts itself, once (recomputed after A ends, 65 tokens in 5 blocks).
    void preemptionWhenThePoolRunsOut() {
        const Scenario s = llama70b();
        const CostModel model(s);
        const Plan p = model.megatronPlan();
        const StepCost cost(model, p);
        SimOptions o;
        o.trace = {{0.0, 32, 40}, {0.0, 32, 40}};
        o.requests = 0;
        o.kvBlocks = 10;
        auto r = simulate(model, p, o);
        QVERIFY2(r->ok, r->error.c_str());
        QCOMPARE(r->completed, int64_t(2));
        QCOMPARE(r->preemptions, int64_t(0));
        QCOMPARE(r->kvPeakShare, 1.0); // all 10 blocks at steps 35 to 40
        o.kvBlocks = 9;
        r = simulate(model, p, o);
        QCOMPARE(r->completed, int64_t(2));
        QCOMPARE(r->preemptions, int64_t(1));
        StepLoad second = prefillOnly(32);
        second.decodeSeqs = 1, second.decodeContext = 32;
        double t = cost.seconds(prefillOnly(32)) + cost.seconds(second);
        for (int k = 3; k <= 34; ++k) t += cost.seconds(decodeOnly(2, 29.5 + k));
        QVERIFY2(near(r->firstPreemptionS, t, 1e-9), qPrintable(QString::number(r->firstPreemptionS - t)));
    }

    // The engines' schedulers on the same two requests as above (32 prompt, 40 output tokens at 0; 16-token
    // blocks). TensorRT-LLM's GUARANTEED_NO_EVICT holds a request's whole context from admission: A takes
    // ceil((32 + 40 + 1) / 16) = 5 blocks, so a pool of 10 admits both and one of 9 admits B only when A is done
    // (no preemption; B's first token a prefill after A's last). MAX_UTILIZATION composes steps as vLLM does:
    // the same run, preemption and all.
    void trtllmCapacityPolicies() {
        Scenario s = llama70b();
        s.constraints.memoryRule = MemoryRule::Trtllm;
        const CostModel model(s);
        const Plan p = model.megatronPlan();
        const StepCost cost(model, p);
        SimOptions o;
        o.trace = {{0.0, 32, 40}, {0.0, 32, 40}};
        o.requests = 0;
        o.kvBlocks = 10;
        auto r = simulate(model, p, o);
        QCOMPARE(r->scheduler, std::string("TensorRT-LLM"));
        QCOMPARE(r->completed, int64_t(2));
        QCOMPARE(r->preemptions, int64_t(0));
        QCOMPARE(r->admissionsBlockedByKv, int64_t(0));
        o.kvBlocks = 9;
        r = simulate(model, p, o);
        QCOMPARE(r->completed, int64_t(2));
        QCOMPARE(r->preemptions, int64_t(0));
        QVERIFY(r->admissionsBlockedByKv > 0);
        // A: its prefill, then 39 decode steps alone at contexts 32 to 70; then B's prefill.
        double aDone = cost.seconds(prefillOnly(32));
        for (int j = 1; j <= 39; ++j) aDone += cost.seconds(decodeOnly(1, 31 + j));
        const double bFirst = aDone + cost.seconds(prefillOnly(32));
        QVERIFY2(near(r->ttftSortedMs[1], bFirst * 1e3, 1e-9), qPrintable(QString::number(r->ttftSortedMs[1])));

        o.trtllmCapacity = SimOptions::TrtllmCapacity::MaxUtilization;
        const auto maxUtil = simulate(model, p, o);
        Scenario v = s;
        v.constraints.memoryRule = MemoryRule::Vllm;
        const auto vllm = simulate(CostModel(v), p, o);
        QCOMPARE(maxUtil->preemptions, int64_t(1));
        QCOMPARE(vllm->scheduler, std::string("vLLM V1"));
        QCOMPARE(maxUtil->ttftSortedMs, vllm->ttftSortedMs);
        QCOMPARE(maxUtil->tpotSortedMs, vllm->tpotSortedMs);
    }

    // SGLang runs a prefill batch whenever one can be formed, and never mixes it with decoding: with the trace
    // of tinyTraceByHand (A: 100 prompt, 3 output tokens at 0; B: 200 and 2 at 1 ms), step 2 is B's prefill
    // alone (vLLM's step 2 carried A's decode beside it), step 3 decodes both at contexts 100 and 200, step 4 A
    // alone at 101.
    void sglangPrefillFirst() {
        Scenario s = llama70b();
        s.constraints.memoryRule = MemoryRule::Sglang;
        const CostModel model(s);
        const Plan p = model.megatronPlan();
        const StepCost cost(model, p);
        SimOptions o;
        o.trace = {{0.0, 100, 3}, {0.001, 200, 2}};
        o.requests = 0;
        const auto r = simulate(model, p, o);
        QVERIFY2(r->ok, r->error.c_str());
        QCOMPARE(r->scheduler, std::string("SGLang"));
        QCOMPARE(r->completed, int64_t(2));
        QCOMPARE(r->steps, int64_t(4));
        QCOMPARE(r->mixedSteps, int64_t(0));
        const double s1 = cost.seconds(prefillOnly(100)), s2 = cost.seconds(prefillOnly(200)),
                     s3 = cost.seconds(decodeOnly(2, 150)), s4 = cost.seconds(decodeOnly(1, 101));
        std::vector<double> ttft{s1 * 1e3, (s1 + s2 - 0.001) * 1e3}, tpot{(s2 + s3 + s4) / 2 * 1e3, s3 * 1e3};
        std::sort(ttft.begin(), ttft.end());
        std::sort(tpot.begin(), tpot.end());
        for (size_t i = 0; i < 2; ++i) {
            QVERIFY2(near(r->ttftSortedMs[i], ttft[i], 1e-9), qPrintable(QString::number(r->ttftSortedMs[i])));
            QVERIFY2(near(r->tpotSortedMs[i], tpot[i], 1e-9), qPrintable(QString::number(r->tpotSortedMs[i])));
        }
        Scenario v = s;
        v.constraints.memoryRule = MemoryRule::Vllm;
        QCOMPARE(simulate(CostModel(v), p, o)->mixedSteps, int64_t(1));
    }

    // At a very low rate every request runs alone: its TPOT is the mean of its decode steps at batch 1, over
    // contexts 1,000 to 1,998, which is the cost model's batch-1 decode TPOT at the mean context 1,500 (the
    // attention's KV read is linear in the context; one token of difference in the mean is 10^-5 of it).
    void lowRateRunsAlone() {
        const Scenario s = llama70b();
        const CostModel model(s);
        const Plan p = model.megatronPlan();
        SimOptions o;
        for (int i = 0; i < 8; ++i) o.trace.push_back({100.0 * i, 1000, 1000}); // 100 s apart, ~20 s each
        o.requests = 0;
        const auto r = simulate(model, p, o);
        QVERIFY2(r->ok, r->error.c_str());
        Scenario d = s;
        d.workload.phase = Phase::Decode;
        d.workload.ttftMs = d.workload.tpotMs = 0;
        Plan one = p;
        one.batch = 1;
        const double tpot = CostModel(d).evaluate(one).tpotMs;
        QVERIFY2(near(r->tpotMs.mean, tpot, 1e-3),
                 qPrintable(QString("%1 vs %2").arg(r->tpotMs.mean).arg(tpot)));
        QVERIFY(near(r->tpotMs.max, r->tpotMs.p50, 1e-9)); // alike requests alone: one TPOT
        QCOMPARE(r->preemptions, int64_t(0));
    }

    // Under overload the batch stays full and the simulated throughput approaches the analytical steady
    // state at the plan's batch (7,140 output tokens/s for this plan). Output lengths uniform in 500..1,500
    // (mean 1,000, the analytical O) keep the finishing times from locking into waves.
    void overloadApproachesSteadyState() {
        Scenario s = llama70b();
        s.workload.outputLengths.kind = LengthDist::Kind::Uniform;
        s.workload.outputLengths.min = 500, s.workload.outputLengths.max = 1500;
        const CostModel model(s);
        const Plan p = model.megatronPlan();
        const Metrics m = model.evaluate(p);
        SimOptions o;
        o.rate = 3.0 * m.throughput / 1000.0; // three times the requests/s it sustains
        o.requests = 3000;
        const auto r = simulate(model, p, o);
        QVERIFY2(r->ok, r->error.c_str());
        qInfo("overload: sustained %.0f output tokens/s, analytical %.0f", r->sustainedOutputTokensPerS,
              m.throughput);
        QVERIFY(near(r->sustainedOutputTokensPerS, m.throughput, 0.05));
        QVERIFY(r->ttftMs.p99 > 10 * m.ttftMs); // the queue grows
    }

    // Little's law: the time-average of requests in the system is the arrival rate times the mean time in
    // it. Over the run (it starts and ends empty) the completion rate makes it an identity between two
    // separate tallies (the in-flight integral and the per-request latencies); the offered rate agrees
    // within the run's sampling and its drain (about one latency in a span of 2,000 / 4 = 500 s).
    void littlesLaw() {
        const Scenario s = llama70b();
        const CostModel model(s);
        SimOptions o;
        o.rate = 4.0;
        o.requests = 2000;
        const auto r = simulate(model, model.megatronPlan(), o);
        QVERIFY2(r->ok, r->error.c_str());
        const double w = r->e2eMs.mean / 1e3;
        QVERIFY(near(r->meanInFlight, r->requestsPerS * w, 1e-9));
        QVERIFY2(near(r->meanInFlight, o.rate * w, 0.06),
                 qPrintable(QString("%1 vs %2").arg(r->meanInFlight).arg(o.rate * w)));
    }

    // The same seed gives the same run; another seed another (lognormal lengths, gamma arrivals).
    void sameSeedSameRun() {
        Scenario s = llama70b();
        s.workload.inputLengths = {LengthDist::Kind::Lognormal, 16, 8192, 1000.0, 1.0, {}};
        s.workload.prefixCacheHit = 0.3;
        const CostModel model(s);
        SimOptions o;
        o.rate = 5;
        o.burstCv = 2;
        o.requests = 400;
        const auto a = simulate(model, model.megatronPlan(), o), b = simulate(model, model.megatronPlan(), o);
        QCOMPARE(a->ttftSortedMs, b->ttftSortedMs);
        QCOMPARE(a->tpotSortedMs, b->tpotSortedMs);
        QCOMPARE(a->steps, b->steps);
        QCOMPARE(a->itlMs.p99, b->itlMs.p99);
        o.seed = 2;
        const auto c = simulate(model, model.megatronPlan(), o);
        QVERIFY(c->ttftSortedMs != a->ttftSortedMs);
    }

    // A disaggregated plan: a lone request's first token comes when its KV has crossed to the decode pool:
    // the prefill pool's step for its 1,000 tokens, then its KV (1,000 tokens of Llama-3.1-70B, 327,680 bytes
    // each in BF16) over the prefill replica's 8 NICs at the transfer rate, and one network latency.
    void disaggregatedFirstToken() {
        Scenario s = sampleScenario("llama-3.1-70b-h100-4x8.yaml");
        s.workload.phase = Phase::Serving; // the sample is a decode workload of 256 prompt tokens
        s.workload.inputTokens = 1000;
        const DisaggModel dm(s);
        DisaggPlan p;
        p.prefill = {1, dm.prefillModel(1).megatronPlan()};
        p.decode = {3, dm.decodeModel(3).megatronPlan()};
        QVERIFY2(dm.evaluate(p).valid, dm.evaluate(p).violation.c_str());
        SimOptions o;
        o.trace = {{0.0, 1000, 10}};
        o.requests = 0;
        const auto r = simulate(dm, p, o);
        QVERIFY2(r->ok, r->error.c_str());
        QCOMPARE(r->completed, int64_t(1));
        const StepCost prefill(dm.prefillModel(1), p.prefill.plan);
        QCOMPARE(dm.kvBytesPerPrompt(), 1000.0 * 327680);
        const double transfer =
            1000.0 * 327680 / (8 * dm.nicBytesPerS()) + s.cluster.interNode.latencyUs * 1e-6;
        const double expected = prefill.seconds(prefillOnly(1000)) + transfer;
        QVERIFY2(near(r->ttftMs.mean, expected * 1e3, 1e-9), qPrintable(QString::number(r->ttftMs.mean)));
    }

    // ------------------------------------------------------------------ capacity

    // The highest rate: the run at it meets the p99 SLOs, the run just above misses them, within 1%.
    void maxRateBrackets() {
        Scenario s = llama70b();
        s.workload.sloPercentile = 99;
        const CostModel model(s);
        RateSearchOptions o;
        o.sim.requests = 300;
        o.steadyLatencies = 5;
        const MaxRate m = maxRate(model, model.megatronPlan(), o);
        QVERIFY2(m.ok, m.error.c_str());
        QVERIFY(m.rate > 0 && m.at && m.above);
        QVERIFY(checkSlo(*m.at, s.workload).met);
        QVERIFY(!checkSlo(*m.above, s.workload).met);
        QVERIFY(m.rateAbove - m.rate <= 0.01 * m.rateAbove);
        QVERIFY(m.binding == "ttft" || m.binding == "tpot" || m.binding == "memory");
    }

    // The fewest nodes of a GPU type for a rate: that count meets the SLOs, one node fewer does not; and the
    // cost is the GPUs' price over the tokens they serve.
    void fewestGpusForARate() {
        Scenario s = llama70b();
        s.workload.sloPercentile = 99;
        CapacityOptions o;
        o.rate = 12;
        o.gpus = {"h200"};
        o.sim.requests = 300;
        o.steadyLatencies = 5; // each run about 5 x 50 s of arrivals: well past the batch's 357 in flight
        const auto rows = fewestGpus(s, o);
        QCOMPARE(rows.size(), size_t(1));
        const CapacityRow& r = rows[0];
        QVERIFY2(r.met, r.why.c_str());
        QVERIFY(r.slo.met);
        QCOMPARE(r.gpus, r.nodes * 8);
        QVERIFY(r.nodes >=
                2); // one H200 node serves at most 7,140 / 1,000 = 7.1 requests/s (its steady state)
        const Scenario fewer = scenarioOn(s, "h200", r.nodes - 1);
        const CostModel model(fewer);
        const Plan plan = model.megatronPlan();
        SimOptions so;
        so.rate = o.rate;
        so.requests = steadyRequests(model.evaluate(plan), fewer.workload, o.rate, 5);
        QVERIFY(!checkSlo(*simulate(model, plan, so), fewer.workload).met);
        QCOMPARE(r.cost.usdPerHour, r.gpus * findGpu("h200")->pricePerHourUsd);
    }

    // ------------------------------------------------------------------ cost and energy

    // 8 GPUs at $2 an hour serving 1,000 tokens/s: $16 an hour for 3.6 million tokens, $4.44 a million;
    // at 700 W each, 5.6 kW: 1,000 / 0.0056 = 178,571 tokens/s per MW.
    void costByHand() {
        Cluster c;
        c.pricePerGpuHour = 2.0;
        c.priceSource = "a test";
        c.gpu.tdpW = 700;
        const ServingCost k = servingCost(c, 8, 1000.0);
        QVERIFY(k.priced && k.powered);
        QCOMPARE(k.usdPerHour, 16.0);
        QCOMPARE(k.usdPerMillionTokens, 16.0 / 3.6);
        QCOMPARE(k.megawatts, 0.0056);
        QCOMPARE(k.tokensPerSPerMegawatt, 1000.0 / 0.0056);
        c.pricePerGpuHour = 0, c.gpu.tdpW = 0;
        QVERIFY(!servingCost(c, 8, 1000.0).priced && !servingCost(c, 8, 1000.0).powered);
    }

    // The database's GPUs name their board power, and their price with its source; a cluster file's
    // price_per_gpu_hour overrides the database's; an inline GPU under a database GPU's name takes its power
    // and price (the H100 sample clusters).
    void powerAndPrice() {
        for (const auto& g : gpuDatabase()) {
            if (g.id == "h20") continue; // no public datasheet (see resources/gpus.yaml)
            QVERIFY2(g.gpu.tdpW > 0, g.id.c_str());
            if (g.pricePerHourUsd > 0) QVERIFY2(!g.priceSource.empty(), g.id.c_str());
        }
        QCOMPARE(findGpu("h100-sxm")->gpu.tdpW, 700.0);
        QCOMPARE(findGpu("mi300x")->gpu.tdpW, 750.0);
        const auto inlineH100 = loadCluster(kSampleDir + "/clusters/h100-32x8.yaml");
        QVERIFY(inlineH100);
        QCOMPARE(inlineH100->gpu.tdpW, 700.0);
        QCOMPARE(inlineH100->pricePerGpuHour, findGpu("h100-sxm")->pricePerHourUsd);
        const auto own = parseCluster(
            "version: 1\nkind: cluster\nnodes: 1\ngpu: b200\nprice_per_gpu_hour: 6.5\n", "c.yaml");
        QVERIFY2(own, own.error().str().c_str());
        QCOMPARE(own->pricePerGpuHour, 6.5);
        QCOMPARE(own->priceSource, std::string("the cluster file's price_per_gpu_hour"));
        // Written and read back alike.
        const auto back = parseCluster(toYaml(own.value()), "back.yaml");
        QVERIFY2(back, back.error().str().c_str());
        QVERIFY(back.value() == own.value());
        QCOMPARE(back->gpu.tdpW, 1000.0);
    }

    // ------------------------------------------------------------------ workloads and traces

    void lengthsAndPercentileRead() {
        const auto w = parseWorkload(R"(version: 1
kind: workload
phase: serving
input_tokens: {distribution: lognormal, mean: 1000, cv: 1.5, min: 4, max: 8192}
output_tokens: {distribution: histogram, bins: [[1, 100, 3], [101, 300, 1]]}
prefix_cache_hit: 0.25
slo: {ttft_ms: 2000, tpot_ms: 200, percentile: 99}
)",
                                     "w.yaml");
        QVERIFY2(w, w.error().str().c_str());
        QCOMPARE(w->sloPercentile, 99.0);
        QCOMPARE(w->prefixCacheHit, 0.25);
        QCOMPARE(w->inputLengths.kind, LengthDist::Kind::Lognormal);
        // The histogram's mean: (3 x 50.5 + 200.5) / 4 = 88 (the analytical output length).
        QCOMPARE(w->outputTokens, int64_t(88));
        // The clamped lognormal's mean is below 1,000 (the tail above 8,192 is cut), above the median.
        QVERIFY(w->inputTokens < 1000 && w->inputTokens > 700);
        const auto back = parseWorkload(toYaml(w.value()), "back.yaml");
        QVERIFY2(back, back.error().str().c_str());
        QVERIFY(back.value() == w.value());
    }

    void lengthErrorsSayWhere_data() {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("where");
        const QString head = "version: 1\nkind: workload\nphase: serving\n";
        QTest::addRow("uniform upside down")
            << head + "input_tokens: {distribution: uniform, min: 800, max: 100}\n"
            << "w.yaml:4:54: input_tokens.max: must be at least min (800)";
        QTest::addRow("unknown distribution") << head + "input_tokens: {distribution: zipf}\n"
                                              << "w.yaml:4:30: input_tokens.distribution";
        QTest::addRow("bin without weight")
            << head + "input_tokens: {distribution: histogram, bins: [[1, 2]]}\n"
            << "w.yaml:4:48: input_tokens.bins[0]: expected [lo, hi, weight]";
        QTest::addRow("percentile over 100")
            << head + "input_tokens: 10\nslo: {ttft_ms: 1, percentile: 120}\n"
            << "w.yaml:5:31: slo.percentile";
        QTest::addRow("prefix hit of everything") << head + "input_tokens: 10\nprefix_cache_hit: 1\n"
                                                  << "w.yaml:5:19: prefix_cache_hit";
        // 200,000 bins took 4 s to read and minutes in capacity; 10,000 is the bound.
        QString bins;
        for (int i = 0; i < 10'001; ++i) bins += QString("[%1, %1, 1], ").arg(i + 1);
        bins.chop(2);
        QTest::addRow("too many bins")
            << head + "input_tokens: {distribution: histogram, bins: [" + bins + "]}\n"
            << "w.yaml:4:47: input_tokens.bins: 10001 bins; a histogram has at most 10000";
    }

    // The sampler draws what drawLength's walk over the bins draws, with the same generator calls: the same
    // lengths from the same seed, on bins of zero weight too.
    void samplerDrawsAsTheWalk() {
        LengthDist d;
        d.kind = LengthDist::Kind::Histogram;
        for (int i = 0; i < 300; ++i)
            d.bins.push_back({1 + 10 * i, 10 + 10 * i, i % 7 == 3 ? 0.0 : 1.0 + i % 5});
        d.bins.push_back({5000, 6000, 0.0}); // a last bin of no weight is never drawn
        Rng a(11), b(11);
        const LengthSampler sampler(d, 0);
        for (int i = 0; i < 20000; ++i) {
            // the walk as Rng::weighted does it
            std::vector<double> w;
            for (const auto& bin : d.bins) w.push_back(bin.weight);
            const auto& bin = d.bins[a.weighted(w)];
            const int64_t walked = bin.lo + int64_t(a.below(uint64_t(bin.hi - bin.lo + 1)));
            const int64_t drawn = sampler.draw(b);
            QCOMPARE(drawn, walked);
            QVERIFY(drawn < 5000);
        }
    }
    void lengthErrorsSayWhere() {
        QFETCH(QString, text);
        QFETCH(QString, where);
        const auto w = parseWorkload(text.toStdString(), "w.yaml");
        QVERIFY(!w);
        QVERIFY2(QString::fromStdString(w.error().str()).startsWith(where), w.error().str().c_str());
    }

    // Draws: a lognormal of mean 1,000 and CV 0.5 drawn 200,000 times has that mean and CV within 1% and
    // 3%; the clamped mean expected() computes is what clamped draws average.
    void lengthDraws() {
        Rng rng(7);
        LengthDist d{LengthDist::Kind::Lognormal, 1, 0, 1000.0, 0.5, {}};
        double sum = 0, sq = 0;
        const int n = 200000;
        for (int i = 0; i < n; ++i) {
            const double x = double(drawLength(rng, d, 0));
            sum += x, sq += x * x;
        }
        const double mean = sum / n, cv = std::sqrt(sq / n - mean * mean) / mean;
        QVERIFY2(near(mean, 1000, 0.01), qPrintable(QString::number(mean)));
        QVERIFY2(near(cv, 0.5, 0.03), qPrintable(QString::number(cv)));
        d.max = 1200;
        sum = 0;
        for (int i = 0; i < n; ++i) sum += double(drawLength(rng, d, 0));
        QVERIFY2(near(sum / n, d.expected(), 0.01),
                 qPrintable(QString("%1 vs %2").arg(sum / n).arg(d.expected())));
        // Gamma gaps of shape 1/4 (CV 2): mean k, variance k.
        sum = sq = 0;
        for (int i = 0; i < n; ++i) {
            const double x = drawGamma(rng, 0.25);
            sum += x, sq += x * x;
        }
        QVERIFY(near(sum / n, 0.25, 0.02));
        QVERIFY(near(sq / n - (sum / n) * (sum / n), 0.25, 0.05));
    }

    // The Azure LLM inference trace layout: TIMESTAMP (a date and time), ContextTokens, GeneratedTokens;
    // arrivals from the first row, rows sorted. JSON Lines alike. Errors say file:line:column and the field.
    void traces() {
        const auto csv = parseTrace("TIMESTAMP,ContextTokens,GeneratedTokens\n"
                                    "2023-11-16 18:15:46.6805900,374,44\n"
                                    "2023-11-16 18:15:50.9951690,396,109\n"
                                    "2023-11-16 18:15:46.1805900,879,12\n",
                                    "azure.csv");
        QVERIFY2(csv, csv.error().str().c_str());
        QCOMPARE(csv->size(), size_t(3));
        QCOMPARE((*csv)[0], (TraceRequest{0.0, 879, 12}));
        QVERIFY(near((*csv)[1].arrivalS, 0.5, 1e-6));
        QVERIFY(near((*csv)[2].arrivalS, 50.9951690 - 46.1805900, 1e-6));
        const auto jsonl = parseTrace("{\"arrival_s\": 1.5, \"input_tokens\": 10, \"output_tokens\": 2}\n\n"
                                      "{\"arrival_s\": 0.5, \"input_tokens\": 20, \"output_tokens\": 3}\n",
                                      "t.jsonl");
        QVERIFY2(jsonl, jsonl.error().str().c_str());
        QCOMPARE((*jsonl)[0], (TraceRequest{0.0, 20, 3}));
        QCOMPARE((*jsonl)[1], (TraceRequest{1.0, 10, 2}));
        const auto bad = parseTrace("time,input_tokens,output_tokens\n0.5,12,x\n", "t.csv");
        QVERIFY(!bad);
        QCOMPARE(QString::fromStdString(bad.error().str()),
                 QString("t.csv:2:8: output_tokens: expected a whole number of tokens, not 'x'"));
        const auto noColumn = parseTrace("time,prompt\n1,2\n", "t.csv");
        QVERIFY(!noColumn && noColumn.error().message.find("input_tokens") != std::string::npos);
    }

    // Hostile traces get an error that says where, never an abort or gigabytes: a number past a double's
    // range (nlohmann throws out_of_range.406 for 1e400), a duplicate key (nlohmann keeps the last), a row of
    // commas (each cell once became a string), an arrival whose shift to the first one overflows. A
    // byte-order mark before a CSV header is no part of the header.
    void hostileTraces_data() {
        QTest::addColumn<QByteArray>("text");
        QTest::addColumn<QString>("error");
        const QByteArray row = "{\"arrival_s\": 0, \"input_tokens\": 10, \"output_tokens\": 2}\n";
        QTest::addRow("1e400 arrival")
            << row + "{\"arrival_s\": 1e400, \"input_tokens\": 1, \"output_tokens\": 2}\n"
            << "t.jsonl:2:1: not a JSON object this reader takes";
        QTest::addRow("1e400 other key")
            << QByteArray("{\"arrival_s\": 0, \"x\": -1e400, \"input_tokens\": 1, "
                          "\"output_tokens\": 2}\n")
            << "number overflow";
        QTest::addRow("duplicate key")
            << QByteArray("{\"arrival_s\": 0, \"input_tokens\": 10, \"output_tokens\": 2, "
                          "\"input_tokens\": 99}\n")
            << "t.jsonl:1:58: input_tokens: a duplicate key";
        QTest::addRow("duplicate nested key")
            << QByteArray("{\"arrival_s\": 0, \"input_tokens\": 10, \"output_tokens\": 2, \"m\": {\"a\": 1, "
                          "\"a\": 2}}\n")
            << "a: a duplicate key";
        QTest::addRow("row of commas")
            << QByteArray("time,input_tokens,output_tokens\n") + QByteArray(2'000'000, ',')
            << "t.jsonl:2:1001: the row has more than 1000 cells";
        QTest::addRow("arrival past range")
            << QByteArray("time,input_tokens,output_tokens\n-1e308,1,1\n1e308,1,1\n")
            << "t.jsonl:2:1: arrival_s: '-1e308' is out of range";
        QTest::addRow("BOM before header")
            << QByteArray("\xef\xbb\xbftime,input_tokens,output_tokens\n5,1,2\n7,3,4\n") << "";
    }
    void hostileTraces() {
        QFETCH(QByteArray, text);
        QFETCH(QString, error);
        const auto r = parseTrace(text.toStdString(), "t.jsonl");
        if (error.isEmpty()) {
            QVERIFY2(r, r ? "" : r.error().str().c_str());
            QCOMPARE(r->size(), size_t(2));
            QCOMPARE((*r)[1], (TraceRequest{2.0, 3, 4}));
            return;
        }
        QVERIFY(!r);
        QVERIFY2(QString::fromStdString(r.error().str()).contains(error), r.error().str().c_str());
    }

    // ------------------------------------------------------------------ published serving runs

    // The MLPerf server runs (v4.1 and v5.0) load, simulate at their rates, and the simulated throughput is
    // the run's (the rate times the output length) where the model's capacity at the run's batch is above
    // the rate; the latency errors are in docs/serving.md ("Against MLPerf server runs").
    void mlperfChecksRun() {
        auto checks =
            loadServingChecks(SHARDPLAN_TESTDATA_DIR "/calibration/mlperf-server-sim.yaml", kSampleDir);
        QVERIFY2(checks, checks.error().str().c_str());
        QCOMPARE(checks->size(), size_t(8));
        for (const auto& c : checks.value()) QVERIFY2(c.id.find("v5.1") == std::string::npos, c.id.c_str());
        const ServingCheckReport rep = runServingChecks(checks.value(), 1000, 1, 120); // 120 s, not 600: fast
        for (size_t i = 0; i < rep.loads.size(); ++i) {
            const auto& l = rep.loads[i];
            if (l.measuredTokensPerS > 0.9 * l.analyticalTokensPerS)
                continue; // at or over the model's capacity
            for (const auto& row : rep.rows)
                if (row.id == l.id && row.figure == "output_tokens_per_s")
                    QVERIFY2(std::abs(row.error) < 0.1, qPrintable(QString::fromStdString(row.id)));
        }
    }

    // A check's capacity (the load table of calibrate --serving) is the plan's batch cap where the token
    // budget allows it, else the largest batch the budget allows: 2,048 sequences cannot run in a 512-token
    // step (Llama-3.1-8B, 512 in / 128 out: a step of B sequences carries B (1 + 512 / 128) = 5 B tokens, so
    // the budget holds B = 102), while a cap of 16 runs whole.
    void servingCapacityHonoursTheBudget() {
        QTemporaryDir dir;
        auto check = [&](int batch) {
            auto c = oneCheck(
                dir, "", "{tp: 1, dp: 8, batch: " + std::to_string(batch) + ", prefill_budget: 512}",
                "{phase: serving, input_tokens: 512, output_tokens: 128, slo: {ttft_ms: 1, tpot_ms: 1}}",
                "{tpot_mean_ms: 20}");
            return c ? c->front() : ServingCheck{};
        };
        const ServingCheck wide = check(2048), narrow = check(16);
        QVERIFY(!wide.id.empty() && !narrow.id.empty());
        Scenario free = wide.scenario;
        free.workload.ttftMs = free.workload.tpotMs = 0; // the SLOs (1 ms) would hold every batch to 1
        const CostModel model(free);
        Plan at = wide.plan;
        at.batch = 102;
        const Metrics budgetBound = model.evaluate(at);
        QVERIFY(budgetBound.violations.empty());
        at.batch = 103;
        QVERIFY(!model.evaluate(at).violations.empty()); // one more sequence overflows the budget
        QCOMPARE(servingCapacity(wide), budgetBound.throughput);
        QVERIFY(servingCapacity(wide) <
                model.evaluate(wide.plan).throughput); // the cap's figure overstated it
        at.batch = 16;
        QCOMPARE(servingCapacity(narrow), model.evaluate(at).throughput);
    }

    // Where a check holds its system's offline throughput, it is also simulated at the load the real run
    // carried: the run's 2,000 output tokens/s over an offline 4,000 is 50%, so the simulated rate is the
    // check's times the model's capacity over 4,000, and the figures are compared there (output tokens/s is
    // the rate asked, so it is not among them). Without one, nothing more runs.
    void servingCheckAtItsOwnLoad() {
        QTemporaryDir dir;
        auto write = [&](const std::string& extra) {
            return oneCheck(dir, extra, "{tp: 1, dp: 8, batch: 64}",
                            "{phase: serving, input_tokens: 512, output_tokens: 200}",
                            "{tpot_mean_ms: 20, ttft_mean_ms: 50, output_tokens_per_s: 2000}");
        };
        auto plain = write("");
        QVERIFY2(plain, plain.error().str().c_str());
        QVERIFY(runServingChecks(plain.value(), 200, 1, 0).matched.empty());
        auto held = write("    offline_tokens_per_s: 4000\n");
        QVERIFY2(held, held.error().str().c_str());
        QCOMPARE(held->front().offlineTokensPerS, 4000.0);
        const ServingCheckReport rep = runServingChecks(held.value(), 200, 1, 0);
        QCOMPARE(rep.matched.size(), size_t(1));
        const auto& m = rep.matched.front();
        QCOMPARE(m.load, 0.5);
        QCOMPARE(m.rate, 10.0 * servingCapacity(held->front()) / 4000.0);
        QCOMPARE(m.rows.size(), size_t(2)); // TPOT and TTFT; not the throughput
        for (const auto& r : m.rows) QVERIFY(r.figure != "output_tokens_per_s" && r.simulated > 0);
        auto bad = write("    offline_tokens_per_s: -1\n");
        QVERIFY(!bad);
        QVERIFY2(bad.error().str().find("offline_tokens_per_s") != std::string::npos,
                 bad.error().str().c_str());
    }

    // A check may set the engine's memory fraction its run's config states (memory_fraction); absent, the
    // engine's default for the plan (0); out of range, refused where it is written.
    void servingCheckMemoryFraction() {
        QTemporaryDir dir;
        auto write = [&](const std::string& extra) {
            return oneCheck(dir, extra, "{tp: 1, dp: 8, batch: 64}",
                            "{phase: serving, input_tokens: 512, output_tokens: 128}", "{tpot_mean_ms: 20}");
        };
        auto plain = write("");
        QVERIFY2(plain, plain.error().str().c_str());
        QCOMPARE(plain->front().scenario.constraints.memoryFraction, 0.0);
        auto set = write("    memory_fraction: 0.95\n");
        QVERIFY2(set, set.error().str().c_str());
        QCOMPARE(set->front().scenario.constraints.memoryFraction, 0.95);
        auto bad = write("    memory_fraction: 1.5\n");
        QVERIFY(!bad);
        QVERIFY2(bad.error().line == 8 && bad.error().str().find("memory_fraction") != std::string::npos,
                 bad.error().str().c_str());
    }
};

QTEST_GUILESS_MAIN(TestSim)
#include "tst_sim.moc"
