// Disaggregated prefill/decode serving (core/cost/disagg.h): the KV bytes and transfer by hand, the rate
// matching, and the two cases where the answer is known without the planner: a very slow network makes
// disaggregation lose, long prompts under a tight TPOT make it win.
#include "core/cost/disagg.h"
#include "core/search/space.h"
#include "core/searchers/registry.h"

#include "sample_fixtures.h"

#include <QTest>

using namespace sp;
using sp::test::compose;

namespace {

/// The best plan a searcher finds for a scenario (aggregated), or for one pool (its scenario).
Candidate searchBest(const CostModel& cm, const char* searcher = "sa", int64_t budget = 1500) {
    const SearchSpace space(cm.scenario());
    const CostModelObjective objective(cm);
    Engine engine(objective);
    SearchOptions o;
    o.budget.evaluations = budget;
    o.seed = 7;
    o.warmStart = WarmStart::Megatron;
    auto s = makeSearcher(searcher);
    return s->run(space, engine, o, nullptr, {}).best;
}

/// Data-parallel replicas of one GPU each: a dense model that fits one GPU, no collective at all.
Plan replicas(int gpus) {
    Degrees d;
    d.dp = gpus;
    Plan p = Plan::megatronChoices(d);
    return p;
}

Scenario llama8bOn2Nodes() {
    Scenario s = compose("llama-3.1-8b.yaml", "h100-4x8.yaml", "chat-serving.yaml");
    s.cluster.nodes = 2;
    return s;
}

} // namespace

class TestDisagg : public QObject {
    Q_OBJECT
private slots:
    // The KV layouts, by hand from the sample model files.
    void kvBytesPerPrompt() {
        // Llama-3.1-8B (GQA): 32 layers x (K and V) x 8 KV heads x 128 head dim x 2 bytes (bf16)
        // = 131,072 bytes per token; 1,000 prompt tokens: 131,072,000 bytes.
        const DisaggModel llama(llama8bOn2Nodes());
        QCOMPARE(llama.kvBytesPerPrompt(), 131072000.0);
        // DeepSeek-V3 (MLA): 61 layers x (512 latent + 64 rope key) x 2 bytes (bf16) = 70,272 bytes per
        // token; 1,000 tokens: 70,272,000 bytes (the latent is shared by all 128 heads).
        const DisaggModel ds(compose("deepseek-v3.yaml", "h100-32x8.yaml", "chat-serving.yaml"));
        QCOMPARE(ds.kvBytesPerPrompt(), 70272000.0);
    }

    // A small case by hand: Llama-3.1-8B, one node of 8 one-GPU replicas per pool.
    void handComputed() {
        const Scenario s = llama8bOn2Nodes();
        const DisaggModel dm(s);
        // NIC: 400 Gb/s = 50 GB/s per GPU, times 0.475 (Mooncake) = 23.75 GB/s.
        QCOMPARE(dm.nicBytesPerS(), 23.75e9);
        DisaggPlan p{{1, replicas(8)}, {1, replicas(8)}};
        const DisaggMetrics r = dm.evaluate(p);
        QVERIFY2(r.valid, r.violation.c_str());
        QCOMPARE(r.prefillGpus, 8);
        QCOMPARE(r.decodeGpus, 8);
        QCOMPARE(r.prefillInstances, 8);
        // The transfer of one pass of B prompts over one replica's single NIC:
        // B x 131,072,000 / 23.75e9 s = B x 5.5188 ms, plus the 6 us network latency.
        const double perPrompt = 131072000.0 / 23.75e9 * 1e3;
        QVERIFY(std::abs(r.transferMs - (double(r.prefill.batch) * perPrompt + 0.006)) < 1e-9);
        // The network bound: min(8, 8) x 23.75e9 / 131,072,000 = 1,449.6 requests/s.
        QVERIFY(std::abs(r.networkRequestsPerS - 1449.58) < 0.01);
        // The pools' own rates: the pool scenarios evaluated directly at the batches the layer chose.
        Plan pre = p.prefill.plan, dec = p.decode.plan;
        pre.batch = r.prefill.batch;
        const Metrics mp = CostModel(poolScenario(s, Phase::Prefill, 1)).evaluate(pre);
        const Metrics md = CostModel(poolScenario(s, Phase::Decode, 1)).evaluate(dec);
        QCOMPARE(r.prefillRequestsPerS, mp.throughput / 1000.0); // prompt tokens/s over 1,000 tokens
        QCOMPARE(r.decodeRequestsPerS, md.throughput / 1000.0);  // output tokens/s over 1,000 tokens
        const double rate = std::min({mp.throughput, md.throughput, 1449.58 * 1000.0}) / 1000.0;
        QVERIFY(std::abs(r.requestsPerS - rate) < 1e-2);
        QVERIFY(std::abs(r.throughput - r.requestsPerS * 1000.0) < 1e-6);
        QCOMPARE(r.throughputPerGpu, r.throughput / 16.0);
        // The bound and the idle share of the other pools.
        const QString bound = QString::fromStdString(r.bound);
        if (bound == "prefill")
            QCOMPARE(r.decodeIdle, 1.0 - r.requestsPerS / r.decodeRequestsPerS);
        else
            QCOMPARE(r.prefillIdle, 1.0 - r.requestsPerS / r.prefillRequestsPerS);
        QVERIFY(bound == "prefill" || bound == "decode");
        // TTFT = the prefill pass + the transfer; TPOT from the decode pool.
        QVERIFY(std::abs(r.ttftMs - (mp.ttftMs + r.transferMs)) < 1e-9);
        QCOMPARE(r.tpotMs, md.tpotMs);
        QVERIFY2(r.feasible, r.violation.c_str());
    }

    // Two clusters (a scenario's decode_cluster), by hand: prefill on one node of 8 H100 (400 Gb/s NICs, 6
    // us), decode on two nodes of 4 GPUs of another cluster whose NICs run 200 Gb/s at 10 us and whose GPUs
    // stream twice the bytes (a stand-in for a newer GPU; synthetic figures, the arithmetic is the test).
    void twoClusters() {
        Scenario s = llama8bOn2Nodes();
        s.cluster.nodes = 1;
        s.cluster.pricePerGpuHour = 2.0;
        Cluster dc = s.cluster;
        dc.name = "2x4 test GPU", dc.gpu.name = "test GPU", dc.gpu.hbmTBs *= 2;
        dc.nodes = 2, dc.gpusPerNode = 4, dc.gpusPerHost = 4;
        dc.interNode.gbPerS = 25, dc.interNode.latencyUs = 10;
        dc.pricePerGpuHour = 5.0;
        s.decodeCluster = dc;
        const DisaggModel dm(s);
        QVERIFY(dm.twoClusters());
        QVERIFY(!dm.checkScenario());
        // The slower NIC: 200 Gb/s = 25 GB/s per GPU, times 0.475 = 11.875 GB/s.
        QCOMPARE(dm.nicBytesPerS(), 11.875e9);
        // Each pool within its own cluster, in any pairing.
        QVERIFY(!dm.checkSplit(1, 1));
        QVERIFY(!dm.checkSplit(1, 2));
        QVERIFY2(dm.checkSplit(2, 1)->find("prefill pool's 2 nodes exceed its cluster's 1") !=
                     std::string::npos,
                 dm.checkSplit(2, 1)->c_str());
        QVERIFY(dm.checkSplit(1, 3)->find("decode pool's 3 nodes exceed its cluster's 2") !=
                std::string::npos);
        // The decode pool runs on the decode cluster's GPUs.
        const Scenario decodePool = poolScenario(s, Phase::Decode, 2);
        QCOMPARE(decodePool.cluster.gpu.name, std::string("test GPU"));
        QCOMPARE(decodePool.gpus(), 8);
        QVERIFY(!decodePool.decodeCluster);
        QCOMPARE(poolScenario(s, Phase::Prefill, 1).cluster.gpu.name, s.cluster.gpu.name);

        // Prefill: 8 one-GPU replicas; decode: 4 replicas of TP 2 on the 8 GPUs of 2 nodes.
        Degrees tp2;
        tp2.dp = 4, tp2.tp = 2;
        const DisaggPlan p{{1, replicas(8)}, {2, Plan::megatronChoices(tp2)}};
        const DisaggMetrics r = dm.evaluate(p);
        QVERIFY2(r.valid, r.violation.c_str());
        QCOMPARE(r.prefillGpus, 8);
        QCOMPARE(r.decodeGpus, 8);
        // Transfer of a pass of B prompts over a replica's one NIC at 11.875 GB/s, plus the larger latency
        // (10 us), plus the re-layout from TP 1 to TP 2: 2 / 1 messages where one would do, 10 us more.
        const double perPrompt = 131072000.0 / 11.875e9 * 1e3;
        QVERIFY(std::abs(r.relayoutMs - 0.010) < 1e-12);
        QVERIFY(std::abs(r.transferMs - (double(r.prefill.batch) * perPrompt + 0.010 + 0.010)) < 1e-9);
        // The network: min(8 x 50, 8 x 25) GB/s x 0.475 / 131,072,000 B = 724.79 requests/s.
        QVERIFY(std::abs(r.networkRequestsPerS - 724.79) < 0.01);
        // The decode pool's rate is the decode cluster's cost model's.
        Plan dec = p.decode.plan;
        const Metrics md = CostModel(decodePool).evaluate(dec);
        QCOMPARE(r.decodeRequestsPerS, md.throughput / 1000.0);
        Scenario samePool = decodePool;
        samePool.cluster = s.cluster, samePool.cluster.nodes = 1;
        QVERIFY(CostModel(samePool).evaluate(dec).throughput != md.throughput); // a different GPU
        // Cost: 8 GPUs at $2 and 8 at $5 = $56 an hour, over the output tokens of an hour.
        QCOMPARE(r.usdPerHour, 56.0);
        QVERIFY(std::abs(r.usdPerMTokens - 56.0 / (3600.0 * r.throughput) * 1e6) < 1e-12);
        // Unpriced decode cluster: no cost.
        s.decodeCluster->pricePerGpuHour = 0;
        QCOMPARE(DisaggModel(s).evaluate(p).usdPerMTokens, 0.0);
    }

    // Queueing at a chosen load: M/D/1 on the prefill pool, u S / (2 (1 - u)).
    void queueing() {
        const Scenario s = llama8bOn2Nodes();
        DisaggOptions o;
        o.load = 0.8;
        const DisaggModel dm(s, o);
        const DisaggMetrics r = dm.evaluate({{1, replicas(8)}, {1, replicas(8)}});
        QVERIFY(r.valid);
        const double u = 0.8 * r.requestsPerS / r.prefillRequestsPerS;
        const double pass = r.prefill.ttftMs - r.transferMs;
        QVERIFY(std::abs(r.queueMs - u * pass / (2 * (1 - u))) < 1e-9);
        QVERIFY(r.queueMs > 0);
        QVERIFY(std::abs(r.ttftMs - (r.prefill.ttftMs + r.queueMs)) < 1e-9);
    }

    // A workload's fixed batch is the serving batch: the decode pool runs it, the prefill pool still picks
    // its prompts per pass (the 8B prompt pass fits 8 prompts in the 8,192-token budget: 8 x 1,000).
    void fixedBatchIsTheDecodeBatch() {
        Scenario s = llama8bOn2Nodes();
        s.workload.fixedBatch = true;
        s.workload.batch = 64;
        const DisaggMetrics r = DisaggModel(s).evaluate({{1, replicas(8)}, {1, replicas(8)}});
        QVERIFY2(r.valid, r.violation.c_str());
        QCOMPARE(r.decode.batch, int64_t(64));
        QCOMPARE(r.prefill.batch, int64_t(8));
    }

    // The TTFT SLO counts the transfer: a slow NIC makes the prefill pool shrink its batch, then fail.
    void transferInTtft() {
        Scenario s = llama8bOn2Nodes();
        s.cluster.interNode.gbPerS = 0.05; // 0.4 Gb/s: one prompt's KV takes 131 MB / 23.75 MB/s = 5.5 s
        const DisaggMetrics r = DisaggModel(s).evaluate({{1, replicas(8)}, {1, replicas(8)}});
        QVERIFY(r.valid);
        QVERIFY(!r.feasible);
        QCOMPARE(r.prefill.batch, int64_t(1));
        QVERIFY2(r.violation.find("prefill pool: TTFT") != std::string::npos, r.violation.c_str());
        QVERIFY2(r.violation.find("KV transfer") != std::string::npos, r.violation.c_str());
    }

    void badSplits() {
        const DisaggModel dm(llama8bOn2Nodes());
        DisaggMetrics r = dm.evaluate({{2, replicas(16)}, {1, replicas(8)}});
        QVERIFY(!r.valid);
        QVERIFY2(r.violation.find("do not add up to the cluster's 2") != std::string::npos,
                 r.violation.c_str());
        r = dm.evaluate({{0, replicas(8)}, {2, replicas(16)}});
        QVERIFY2(r.violation.find("at least one node") != std::string::npos, r.violation.c_str());
        r = dm.evaluate({{1, replicas(16)}, {1, replicas(8)}});
        QVERIFY2(r.violation.find("prefill pool: pp*dp*tp = 16 does not match the 8 GPUs") !=
                     std::string::npos,
                 r.violation.c_str());
        Scenario one = llama8bOn2Nodes();
        one.cluster.nodes = 1;
        QVERIFY(DisaggModel(one).checkScenario().has_value());
    }

    // A very slow network: every prompt's 131 MB of KV crosses it, so for ANY split and ANY plans the
    // disaggregated rate is at most min(G_p, G_d) x nic x 0.475 / K <= 8 x (0.5 GB/s x 0.475) / 131.072 MB
    // = 14.5 requests/s, i.e. 14,496 output tokens/s on the 16 GPUs (906 per GPU). The aggregated plan of
    // 16 one-GPU replicas never touches the network and serves far more (each H100 runs its own 8B
    // replica). 4 Gb/s per GPU keeps a prompt's transfer (0.55 s) inside the 2 s TTFT, so disaggregation
    // loses on throughput, not on the SLO.
    void slowNetworkLoses() {
        Scenario s = llama8bOn2Nodes();
        s.cluster.interNode.gbPerS = 0.5; // 4 Gb/s
        const CostModel agg(s);
        const Candidate best = searchBest(agg);
        QVERIFY2(best.metrics.feasible, best.metrics.violation.c_str());
        const DisaggModel dm(s);
        const double bound = 8 * 0.5e9 * 0.475 / 131072000.0 * 1000.0;
        QVERIFY(std::abs(bound - 14496.0) < 1.0);
        QVERIFY2(best.metrics.throughput > 1.5 * bound, std::to_string(best.metrics.throughput).c_str());
        // The best the disaggregated layer reaches with each pool's own best plan: network-bound, below.
        const Candidate pre = searchBest(dm.prefillModel(1)), dec = searchBest(dm.decodeModel(1));
        const DisaggMetrics r = dm.evaluate({{1, pre.plan}, {1, dec.plan}});
        QVERIFY2(r.feasible, r.violation.c_str());
        qInfo("aggregated %.0f tok/s; disaggregated %.0f tok/s (%s-bound; bound %.0f)",
              best.metrics.throughput, r.throughput, r.bound.c_str(), bound);
        QCOMPARE(QString::fromStdString(r.bound), QStringLiteral("network"));
        QVERIFY(r.throughput <= bound * 1.0001);
        QVERIFY(r.throughput < best.metrics.throughput);
    }

    // Long prompts under a tight TPOT: Llama-3.1-70B on 2x8 H100, 16,384 prompt tokens, 512 output tokens,
    // TPOT 20 ms (TTFT 10 s). Aggregated, every serving step also carries the prefill of the prompts that
    // replace finished sequences, B x I / O = 32 B tokens next to the B decode tokens (chunked prefill): a
    // compute-heavy step, so only a few sequences fit the 20 ms. Disaggregated, the decode pool runs pure
    // decode steps, memory-bound (weights and KV read once per step), so its batch grows until the reads
    // fill 20 ms; the prefill pool runs whole prompts at GEMM efficiency with no TPOT to meet; the 5.4 GB
    // of KV per prompt (80 layers x 2 x 8 x 128 x 2 bytes x 16,384) move in 28 ms over the 8 NICs of a
    // tp-8 prefill replica (5.37e9 / (8 x 23.75e9)), small beside the prefill itself.
    // Disaggregation must win, by a clear margin, and through the decode batch.
    void longPromptsTightTpotWins() {
        Scenario s = compose("llama-3.1-70b.yaml", "h100-4x8.yaml", "chat-serving.yaml");
        s.cluster.nodes = 2;
        s.workload.inputTokens = 16384;
        s.workload.outputTokens = 512;
        s.workload.tpotMs = 20;
        s.workload.ttftMs = 10000;
        const CostModel agg(s);
        const Candidate best = searchBest(agg);
        QVERIFY2(best.metrics.feasible, best.metrics.violation.c_str());
        const DisaggModel dm(s);
        QCOMPARE(dm.kvBytesPerPrompt(), 80.0 * 2 * 8 * 128 * 2 * 16384);
        const Candidate pre = searchBest(dm.prefillModel(1)), dec = searchBest(dm.decodeModel(1));
        const DisaggMetrics r = dm.evaluate({{1, pre.plan}, {1, dec.plan}});
        QVERIFY2(r.feasible, r.violation.c_str());
        qInfo(
            "aggregated %.0f tok/s (batch %lld, TPOT %.1f ms); disaggregated %.0f tok/s (decode batch %lld, "
            "TPOT %.1f ms, TTFT %.0f ms, %s-bound)",
            best.metrics.throughput, (long long)best.metrics.batch, best.metrics.tpotMs, r.throughput,
            (long long)r.decode.batch, r.tpotMs, r.ttftMs, r.bound.c_str());
        QVERIFY(r.throughput > 1.5 * best.metrics.throughput);
        QVERIFY(r.decode.batch > best.metrics.batch);
        QVERIFY(r.tpotMs <= 20.0 && r.ttftMs <= 10000.0);
    }
};

QTEST_GUILESS_MAIN(TestDisagg)
#include "tst_disagg.moc"
