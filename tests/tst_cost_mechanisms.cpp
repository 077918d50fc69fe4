// The serving mechanisms of the cost model, each against a hand calculation: MoE dispatch traffic by layout,
// node-limited and de-duplicated dispatch, two-batch overlap, chunked-prefill serving steps, paged KV memory,
// and the attention core's precision.
#include "core/cost/collectives.h"
#include "core/cost/costmodel.h"
#include "core/cost/impl.h"
#include "core/io/formats.h"
#include "core/model/quant.h"
#include "core/search/engine.h"
#include "core/search/rng.h"
#include "core/search/space.h"
#include "core/searchers/registry.h"
#include "search_fixtures.h"

#include <QDir>
#include <QTest>

#include <cmath>
#include <map>

using namespace sp;

namespace {

const QString kSamples = QStringLiteral(SHARDPLAN_SAMPLES_DIR);

Scenario scenario(const QString& path) {
    auto s = loadScenario(path.toStdString());
    if (!s) qFatal("%s", s.error().str().c_str());
    return s.value();
}

/// Llama-3.1-8B (the sample model) on one H100 at a fixed batch of B sequences of I + O tokens, no SLOs.
Scenario llamaOneGpu(Phase phase, int64_t input, int64_t output, int64_t batch) {
    Scenario s = scenario(kSamples + "/scenarios/llama-3.1-8b-h100-1x8.yaml");
    s.constraints.gpus = 1;
    s.workload.phase = phase;
    s.workload.inputTokens = input;
    s.workload.outputTokens = output;
    s.workload.ttftMs = s.workload.tpotMs = 0;
    s.workload.fixedBatch = true;
    s.workload.batch = batch;
    return s;
}

/// DeepSeek-V3 (the sample model) on `nodes` x 8 H100 (the 4x8 sample cluster's figures).
Scenario deepseek(int nodes, Phase phase, int input, int64_t batch) {
    Scenario s = scenario(kSamples + "/scenarios/deepseek-v3-h100-32x8.yaml");
    auto c = loadCluster((kSamples + "/clusters/h100-4x8.yaml").toStdString());
    if (!c) qFatal("%s", c.error().str().c_str());
    s.cluster = c.value();
    s.cluster.nodes = nodes;
    s.constraints = Constraints{};
    s.workload.phase = phase;
    s.workload.inputTokens = input;
    s.workload.outputTokens = 1;
    s.workload.ttftMs = s.workload.tpotMs = 0;
    s.workload.fixedBatch = true;
    s.workload.batch = batch;
    return s;
}

/// Data-parallel attention over every GPU, experts expert-parallel over them (SGLang's and DeepSeek's
/// layout).
Plan dpAttention(int gpus) {
    Plan p = Plan::megatronChoices({1, gpus, 1, gpus, 1, 1});
    return p;
}

const CommCost* findComm(const Breakdown& b, const std::string& where) {
    for (const auto& c : b.comms)
        if (c.where == where) return &c;
    return nullptr;
}

const OpCost* findOp(const Breakdown& b, const std::string& op) {
    for (const auto& o : b.ops)
        if (o.op == op) return &o;
    return nullptr;
}

double layerTime(const Breakdown& b, LayerKind kind, double& comms) {
    double ops = 0;
    comms = 0;
    for (const auto& o : b.ops)
        if (o.layer == kind) ops += o.timeMs;
    for (const auto& c : b.comms)
        if (c.layer == kind) comms += c.timeMs;
    return ops;
}

} // namespace

class TestCostMechanisms : public QObject {
    Q_OBJECT
private slots:
    // Mixtral-8x7B with --tp 8 as the engines run it (ep 1, expert TP 8, replicated residual): every GPU
    // already holds every token, so there is no dispatch, only the all-reduce after the experts.
    void pureExpertTpNeedsNoDispatch() {
        Scenario s = scenario(kSamples + "/scenarios/mixtral-8x22b-h100-1x8.yaml");
        Plan p = Plan::megatronChoices({1, 1, 8, 1, 8, 1});
        p.setChoice(Op::Experts, choice::ExpTensor);
        p.setChoice(Op::Norms, choice::NormReplicated);
        p.setChoice(Op::MoeNorms, choice::NormReplicated);
        const CostModel cm(s);
        QVERIFY(!cm.checkPlan(p));
        const Evaluation e = cm.explain(p);
        const Breakdown& b = e.decode.ops.empty() ? e.prefill : e.decode;
        QVERIFY(!findComm(b, "experts dispatch"));
        QVERIFY(!findComm(b, "experts combine"));
        const CommCost* reduce = findComm(b, "experts -> norms");
        QVERIFY(reduce);
        QCOMPARE(reduce->kind, Collective::AllReduce);
        // vLLM's expert parallelism inside one TP group (tp 8, ep 8): the same, every rank has the tokens.
        p.degrees = {1, 1, 8, 8, 1, 1};
        p.setChoice(Op::Experts, choice::ExpExpert);
        const Evaluation e2 = cm.explain(p);
        const Breakdown& b2 = e2.decode.ops.empty() ? e2.prefill : e2.decode;
        QVERIFY(!findComm(b2, "experts dispatch"));
    }

    // The same layout with sequence-parallel (token-sharded) norms, as Megatron runs it: the replicated
    // router gathers the tokens once (an all-gather of the hidden state), so the experts need no dispatch,
    // the shared experts read the same gathered copy (no second all-gather), and one reduce-scatter returns
    // the shared and routed partial sums to the token owners. Per token: 2 collectives of h values in the
    // MoE block instead of a dispatch of top-k x (etp - 1) copies.
    void sequenceParallelExpertTpGathersOnce() {
        const CostModel cm(deepseek(1, Phase::Decode, 2000, 128));
        Plan p = Plan::megatronChoices({1, 1, 8, 1, 8, 1});
        p.setChoice(Op::Experts, choice::ExpTensor);
        QCOMPARE(int(p.choice(Op::MoeNorms)), int(choice::NormToken));
        QVERIFY(!cm.checkPlan(p));
        const Evaluation e = cm.explain(p);
        QVERIFY(!findComm(e.decode, "experts dispatch"));
        QVERIFY(!findComm(e.decode, "experts combine"));
        const CommCost* gather = findComm(e.decode, "norms -> router");
        QVERIFY(gather);
        QCOMPARE(gather->kind, Collective::AllGather);
        QVERIFY(!findComm(e.decode, "router -> shared_experts"));
        int moeComms = 0;
        for (const auto& c : e.decode.comms)
            if (c.layer == LayerKind::Moe) ++moeComms;
        // attention: all-gather before QKV, reduce-scatter after out_proj; MoE: the gather and the
        // reduce-scatter.
        QCOMPARE(moeComms, 4);
        const CommCost* scatter = findComm(e.decode, "experts -> norms");
        QVERIFY(scatter);
        QCOMPARE(scatter->kind, Collective::ReduceScatter);
        QCOMPARE(scatter->bytes, gather->bytes);
    }

    // DP attention + EP 8 inside one node, a decode step of 128 tokens per GPU (DeepEP low-latency: one
    // message per destination GPU). Of a token's 8 picks, 1/8 land on its own GPU: 7 travel, all over NVLink.
    // Dispatch is FP8 with one fp32 scale per 128 values: 7168 x (1 + 4/128) = 7392 bytes a copy; the combine
    // returns BF16: 7168 x 2 = 14336.
    void dpAttentionDispatchBytes() {
        const CostModel cm(deepseek(1, Phase::Decode, 2000, 128));
        const Evaluation e = cm.explain(dpAttention(8));
        const CommCost* d = findComm(e.decode, "experts dispatch");
        const CommCost* c = findComm(e.decode, "experts combine");
        QVERIFY(d && c);
        QCOMPARE(d->link, LinkClass::NvLink);
        QCOMPARE(d->bytes, 128.0 * 7.0 * 7392.0);
        QCOMPARE(c->bytes, 128.0 * 7.0 * 14336.0);
    }

    // DP attention with tensor-parallel experts (ep 1, etp 8) inside one node, a decode step of 128 tokens
    // per GPU: the engines gather every token to the 7 other GPUs once (SGLang's DP gather, vLLM's
    // allgather_reducescatter), whatever its 8 picks, in BF16 (7168 x 2 = 14336 bytes a copy), and return
    // the partial sums by a reduce-scatter of the same size. Sending each pick to each shard would be 8 x 7
    // copies. On 2 nodes with etp 16 (SGLang's TP16 with DP attention): 15 copies, 8 of them to the other
    // node, the same in a prefill pass (no per-node de-duplication: every GPU needs every token).
    void tensorParallelExpertsGatherEachTokenOnce() {
        const CostModel cm(deepseek(1, Phase::Decode, 2000, 128));
        const Evaluation e = cm.explain(Plan::megatronChoices({1, 8, 1, 1, 8, 1}));
        const CommCost* d = findComm(e.decode, "experts dispatch");
        const CommCost* c = findComm(e.decode, "experts combine");
        QVERIFY(d && c);
        QCOMPARE(d->kind, Collective::AllGather);
        QCOMPARE(c->kind, Collective::ReduceScatter);
        QCOMPARE(d->link, LinkClass::NvLink);
        QCOMPARE(d->bytes, 128.0 * 7.0 * 14336.0);
        QCOMPARE(c->bytes, 128.0 * 7.0 * 14336.0);

        const CostModel two(deepseek(2, Phase::Decode, 2000, 128));
        const Evaluation e2 = two.explain(Plan::megatronChoices({1, 16, 1, 1, 16, 1}));
        const CommCost* d2 = findComm(e2.decode, "experts dispatch");
        QVERIFY(d2);
        QCOMPARE(d2->link, LinkClass::Network);
        QCOMPARE(d2->bytes, 128.0 * 15.0 * 14336.0);
        // Priced as an NCCL all-gather of the 16 x 128 tokens (29.4 MB): 7/8 of it over NVLink at 450 GB/s x
        // 0.626, and 1/16 of it over each NIC at 50 GB/s x 0.9, plus 3 NVLink and 1 NIC latency steps (3 and
        // 6 us): 0.091 + 0.041 + 0.015 = 0.147 ms. Sending each token from its GPU to the 8 GPUs of the other
        // node (what the model did before) takes 128 x 8 x 14336 B / 45 GB/s = 0.326 ms on the NIC alone.
        const double S = 16.0 * 128.0 * 14336.0;
        const double ms = (S * (7.0 / 8.0) / (450e9 * 0.626) + S / 16.0 / (50e9 * 0.9) + 15e-6) * 1e3;
        QVERIFY2(std::fabs(d2->fullMs - ms) < 1e-3 * ms, qPrintable(QString::number(d2->fullMs)));
        const CostModel pre(deepseek(2, Phase::Prefill, 2000, 2));
        const Evaluation e3 = pre.explain(Plan::megatronChoices({1, 16, 1, 1, 16, 1}));
        const CommCost* d3 = findComm(e3.prefill, "experts dispatch");
        QVERIFY(d3);
        QCOMPARE(d3->bytes, 2.0 * 2000.0 * 15.0 * 14336.0);
    }

    // The fused-MoE kernel's own weight stream (Efficiency::fusedMoeMemory). TP16 with DP attention on two
    // H100 nodes, 128 sequences a GPU: 16 x 128 x 8 copies reach all 256 experts (a miss is (255/256)^16384,
    // about e^-64), so a GPU streams its whole 1/16 of every expert. At half the bandwidth that stream takes
    // exactly its time once more: weight bytes / (3.35 TB/s x 0.9). The tokens' activations stay at
    // `memory`. 0.9 (= memory) changes nothing; layouts fed by a DeepEP dispatch keep `memory`; vLLM's
    // expert parallelism inside a tp group (no dispatch) runs the fused kernel.
    void fusedMoeKernelStream() {
        Scenario s = deepseek(2, Phase::Decode, 2000, 128);
        const Plan tp16 = Plan::megatronChoices({1, 16, 1, 1, 16, 1});
        const Evaluation base = CostModel(s).explain(tp16);
        s.cluster.efficiency.fusedMoeMemory = 0.45;
        const Evaluation slow = CostModel(s).explain(tp16);
        const OpCost *a = findOp(base.decode, "experts"), *b = findOp(slow.decode, "experts");
        QVERIFY(a && b);
        const double once = a->weightBytes / (3.35e12 * 0.9) * 1e3;
        QVERIFY2(std::fabs(b->memoryMs - a->memoryMs - once) < 1e-9 * once,
                 qPrintable(QString("%1 - %2 vs %3").arg(b->memoryMs).arg(a->memoryMs).arg(once)));
        QCOMPARE(b->weightBytes, a->weightBytes); // what the GPU holds does not change
        QVERIFY(slow.metrics.throughput < base.metrics.throughput);

        s.cluster.efficiency.fusedMoeMemory = 0.9;
        QCOMPARE(CostModel(s).evaluate(tp16).throughput, base.metrics.throughput);

        // Data-parallel attention with EP 16: DeepEP dispatches, DeepGEMM's stream stays at `memory`.
        s.cluster.efficiency.fusedMoeMemory = 0.45;
        Scenario d = s;
        d.cluster.efficiency.fusedMoeMemory = 0;
        QCOMPARE(CostModel(s).evaluate(dpAttention(16)).throughput,
                 CostModel(d).evaluate(dpAttention(16)).throughput);

        // vLLM's EP inside one tp group of 8 (every rank holds every token, no dispatch): the fused kernel.
        Scenario one = deepseek(1, Phase::Decode, 2000, 128), oneSlow = one;
        oneSlow.cluster.efficiency.fusedMoeMemory = 0.45;
        Plan vllmEp = Plan::megatronChoices({1, 1, 8, 8, 1, 1});
        vllmEp.setChoice(Op::Experts, choice::ExpExpert);
        const Evaluation c = CostModel(one).explain(vllmEp), e = CostModel(oneSlow).explain(vllmEp);
        const OpCost *fast = findOp(c.decode, "experts"), *slowed = findOp(e.decode, "experts");
        QVERIFY(fast && slowed);
        QVERIFY(slowed->memoryMs > fast->memoryMs);
    }

    // Prefill on 4x8 H100, EP 32 (DeepEP normal kernels: one copy per destination node over the NIC, then
    // NVLink). Per token: 8 x (1 - 1/32) = 7.75 copies travel; of the 31 other GPUs 24 are on other nodes.
    // Without de-duplication 7.75 x 24/31 = 6 copies would cross the NIC. Node-limited routing (n_group 8,
    // topk_group 4, two groups a node): a node is missed with C(6,4)/C(8,4) = 15/70, so 4 x 55/70 nodes are
    // reached, 3/4 of them remote: 33/14 = 2.357 copies cross the NIC. NVLink carries the 7.75 x 7/31 = 1.75
    // copies for the own node plus the forwarding of the 6 remote ones to 7 of 8 GPUs there: 5.25.
    void nodeLimitedDedupDispatchBytes() {
        const int tokens = 4 * 2000;
        Scenario s = deepseek(4, Phase::Prefill, 2000, 4);
        const CostModel cm(s);
        const Evaluation e = cm.explain(dpAttention(32));
        const CommCost* d = findComm(e.prefill, "experts dispatch");
        QVERIFY(d);
        QCOMPARE(d->link, LinkClass::Network);
        const double nic = 4.0 * (55.0 / 70.0) * 0.75, nvlink = 1.75 + 5.25;
        QVERIFY(std::fabs(d->bytes - tokens * (nic + nvlink) * 7392.0) < 1e-6 * d->bytes);
        // Unrestricted routing: 4 (1 - (3/4)^7.75) nodes reached.
        s.model.moe.groups = s.model.moe.topkGroups = 0;
        const Evaluation u = CostModel(s).explain(dpAttention(32));
        const double nicU = 4.0 * (1.0 - std::pow(0.75, 7.75)) * 0.75;
        QVERIFY(std::fabs(findComm(u.prefill, "experts dispatch")->bytes -
                          tokens * (nicU + nvlink) * 7392.0) < 1e-6 * d->bytes);
        QVERIFY(nicU > nic);
    }

    // An expert replica that ends part-way through a tp group: DeepSeek-V3 decode on 3x8 H100, dp 3 x tp 8
    // with token-sharded norms, attention and router (each GPU owns its tokens), ep 12 x edp 2. The MoE
    // ranks run tp-first over the 24 GPUs, so a replica holds one node and half of the next: 8 + 4 GPUs.
    // Of a token's 8 picks, 11/12 travel (22/3 copies), spread over its 11 peers. A GPU of the 4 has 3
    // peers on its node, so 8/11 of its copies leave over its NIC (16/3 copies), 2 over NVLink; the
    // all-to-all ends with it. A copy is 7392 bytes (FP8 and its scales), split over the 8 GPUs of the tp
    // group: 924 bytes a replica token. NIC: 16/3 x 924 / (50 GB/s x 0.9) = 1.095e-7 s a token, NVLink
    // 2 x 924 / (450 GB/s x 0.626) = 6.6e-9: NIC-bound. (Counted as 8 GPUs on one node, it ran all on
    // NVLink; counted from the 8, only 4/11 would leave.)
    void expertReplicaAcrossPartOfATpGroup() {
        const int64_t batch = 120;
        Scenario s = deepseek(3, Phase::Decode, 2000, batch);
        Plan p = Plan::megatronChoices({1, 3, 8, 12, 1, 2});
        for (Op o : {Op::Norms, Op::MoeNorms}) p.setChoice(o, choice::NormToken);
        for (Op o : {Op::Qkv, Op::MoeQkv}) p.setChoice(o, choice::QkvToken);
        for (Op o : {Op::Attention, Op::MoeAttention}) p.setChoice(o, choice::AttnBatch);
        for (Op o : {Op::OutProj, Op::MoeOutProj}) p.setChoice(o, choice::OutToken);
        p.setChoice(Op::Router, choice::RouterToken);
        p.setChoice(Op::SharedExperts, choice::SharedToken);
        const CostModel cm(s);
        QVERIFY2(!cm.checkPlan(p), cm.checkPlan(p)->c_str());
        const Evaluation e = cm.explain(p);
        const CommCost* d = findComm(e.decode, "experts dispatch");
        QVERIFY(d);
        QCOMPARE(d->link, LinkClass::Network);
        QCOMPARE(d->group, 12);
        const double copies = 8.0 * 11.0 / 12.0, perGpu = 7392.0 / 8.0;
        QVERIFY(std::fabs(d->bytes - batch * copies * perGpu) < 1e-9 * d->bytes);
        const Net net = Net::of(s.cluster);
        GroupShape g;
        g.size = 12, g.perNode = 8, g.nodes = 2, g.fewest = 4;
        const double nic = copies * 8.0 / 11.0, nvlink = copies * 3.0 / 11.0;
        const double sec = collectiveAlpha(Collective::AllToAll, g, net) +
                           batch * std::max(nic * perGpu / 45e9, nvlink * perGpu / (450e9 * 0.626));
        QVERIFY2(std::fabs(d->fullMs / (sec * 1e3) - 1) < 1e-9,
                 qPrintable(QString("dispatch %1 ms, expected %2 ms").arg(d->fullMs).arg(sec * 1e3)));
    }

    // Placement counts a group's nodes by whole runs of a node's GPUs (costimpl::place). Checked against a
    // member-by-member count over mesh strides as compile() makes them (the inner axis's stride times its
    // degree, or more, for the outer one), both orders, with 1-72 GPUs a node; and by hand: tp 8 at stride 1
    // on 8-GPU nodes is one node of 8; dp 3 at stride 8 on 4-GPU nodes is three nodes of one (0, 8, 16);
    // 12 ranks at stride 1 with 8 a node are 8 + 4.
    void placementCountsNodes() {
        using costimpl::place;
        auto same = [](GroupShape g, int size, int nodes, int perNode, int fewest) {
            return g.size == size && g.nodes == nodes && g.perNode == perNode && g.fewest == fewest;
        };
        QVERIFY(same(place(8, 1, 1, 8, 8), 8, 1, 8, 0));
        QVERIFY(same(place(1, 1, 3, 8, 4), 3, 3, 1, 0));
        QVERIFY(same(place(12, 1, 1, 12, 8), 12, 2, 8, 4));
        int compared = 0;
        for (int gpn : {1, 4, 8, 72})
            for (int ka : {1, 2, 3, 5, 8, 12, 16, 64, 256})
                for (int kb : {1, 2, 3, 4, 9, 32})
                    for (int sa : {1, 2, 3, 8, 24})
                        for (int m : {1, 2, 3}) {
                            const int sb = sa * ka * m;
                            std::map<int, int> perNodeCount;
                            for (int b = 0; b < kb; ++b)
                                for (int a = 0; a < ka; ++a) ++perNodeCount[(a * sa + b * sb) / gpn];
                            int most = 0, fewest = ka * kb;
                            for (const auto& [node, n] : perNodeCount)
                                most = std::max(most, n), fewest = std::min(fewest, n);
                            const int nodes = int(perNodeCount.size());
                            const GroupShape g = place(ka, sa, kb, sb, gpn), h = place(kb, sb, ka, sa, gpn);
                            const bool one = ka * kb <= 1;
                            QVERIFY2(same(g, ka * kb, one ? 1 : nodes, one ? 1 : most,
                                          one || fewest == most ? 0 : fewest),
                                     qPrintable(QString("ka %1 sa %2 kb %3 sb %4 gpn %5")
                                                    .arg(ka)
                                                    .arg(sa)
                                                    .arg(kb)
                                                    .arg(sb)
                                                    .arg(gpn)));
                            QVERIFY(same(h, g.size, g.nodes, g.perNode, g.fewest));
                            ++compared;
                        }
        QCOMPARE(compared, 4 * 9 * 6 * 5 * 3);
        // place() remembers shapes in a table per thread: after the pass above has filled and overwritten it,
        // what it returns, now mostly from the table, must still be what counting gives.
        for (int sa : {24, 8, 3, 2, 1})
            for (int ka : {256, 64, 16, 12, 8, 5, 3, 2, 1})
                for (int gpn : {72, 8, 4, 1})
                    for (int kb : {32, 9, 4, 3, 2, 1}) {
                        const GroupShape g = place(ka, sa, kb, sa * ka, gpn);
                        const GroupShape h = costimpl::placeCounted(ka, sa, kb, sa * ka, gpn);
                        QVERIFY(same(g, h.size, h.nodes, h.perNode, h.fewest));
                    }
        // Two groups that share a slot of the table and differ in one figure: the second must not be given
        // the first's shape. For each figure, the first such pair found by a scan.
        const std::array<int, 5> base{4, 2, 8, 8, 8}; // ka sa kb sb gpn: 32 GPUs on four nodes of 8
        auto shape = [](const std::array<int, 5>& k) {
            return std::array<GroupShape, 2>{place(k[0], k[1], k[2], k[3], k[4]),
                                             costimpl::placeCounted(k[0], k[1], k[2], k[3], k[4])};
        };
        auto slot = [](const std::array<int, 5>& k) {
            return costimpl::placeSlot(k[0], k[1], k[2], k[3], k[4]);
        };
        for (int field = 0; field < 5; ++field) {
            std::array<int, 5> other = base;
            for (int v = 1; v < 100000; ++v) {
                other[size_t(field)] = v;
                if (v != base[size_t(field)] && slot(other) == slot(base) &&
                    costimpl::placeCounted(other[0], other[1], other[2], other[3], other[4]).nodes !=
                        costimpl::placeCounted(base[0], base[1], base[2], base[3], base[4]).nodes)
                    break;
            }
            QVERIFY(slot(other) == slot(base) && other != base);
            shape(base);
            const auto [got, counted] = shape(other);
            QVERIFY2(same(got, counted.size, counted.nodes, counted.perNode, counted.fewest),
                     qPrintable(QString("field %1 = %2").arg(field).arg(other[size_t(field)])));
        }
    }

    // The prefill all-to-all against DeepEP's own benchmark (deepseek-ai/DeepEP README at 0297fc8, V2 normal
    // kernels on SM90 with CX7 400 Gb/s NICs: 8,192 tokens a rank, hidden 7168, top-8 of 256 experts, FP8
    // dispatch, BF16 combine). Its figure is "logical" bandwidth: tests/elastic/test_ep.py (6757592) counts,
    // per token, one copy for every node its picks reach, its own node included, and routes uniformly ("TODO:
    // support top-k groups"). A token crosses the network once per remote node it reaches, so where the
    // NICs bind, logical = reached / remote x the NIC's rate. With the picks that leave the rank (7.5 of 8
    // on 16 ranks, 7.75 on 32) uniform over N nodes, reached = N (1 - (1 - 1/N)^picks), and by symmetry
    // (N - 1) / N of the nodes reached are remote, so logical = N / (N - 1) x 45 GB/s:
    //   EP 8 x 2: 90 GB/s (measured 90 dispatch, 81 combine);
    //   EP 8 x 4: 60 GB/s (measured 61 and 61).
    void deepEpLogicalBandwidth_data() {
        QTest::addColumn<int>("nodes");
        QTest::addColumn<double>("dispatchGBs");
        QTest::addColumn<double>("combineGBs");
        QTest::addRow("EP 8x2") << 2 << 90.0 << 81.0;
        QTest::addRow("EP 8x4") << 4 << 61.0 << 61.0;
    }
    void deepEpLogicalBandwidth() {
        QFETCH(int, nodes);
        QFETCH(double, dispatchGBs);
        QFETCH(double, combineGBs);
        const int64_t tokens = 8192;
        Scenario s = deepseek(nodes, Phase::Prefill, int(tokens), 1);
        s.model.moe.groups = s.model.moe.topkGroups = 0; // uniform routing, as the benchmark's
        Plan p = dpAttention(nodes * 8);
        p.overlap = Overlap::Off;
        const CostModel cm(s);
        QVERIFY2(!cm.checkPlan(p), cm.checkPlan(p)->c_str());
        const Evaluation e = cm.explain(p);
        const double N = nodes, picks = 8.0 * (1.0 - 1.0 / (8.0 * N));
        const double reached = N * (1.0 - std::pow(1.0 - 1.0 / N, picks));
        const Net net = Net::of(s.cluster);
        GroupShape g;
        g.size = nodes * 8, g.perNode = 8, g.nodes = nodes;
        const double alpha = collectiveAlpha(Collective::AllToAll, g, net);
        for (const auto& [where, bytes, measured] :
             {std::tuple{"experts dispatch", 7168.0 * (1 + 4.0 / 128), dispatchGBs},
              std::tuple{"experts combine", 7168.0 * 2, combineGBs}}) {
            const CommCost* c = findComm(e.prefill, where);
            QVERIFY(c);
            QCOMPARE(c->link, LinkClass::Network);
            const double logical = double(tokens) * reached * bytes / (c->fullMs * 1e-3 - alpha) / 1e9;
            qInfo("%s %s: the model's logical bandwidth %.1f GB/s, DeepEP measured %.0f",
                  QTest::currentDataTag(), where, logical, measured);
            // Four nodes: the NICs bind, 60 GB/s against 61 (the NIC at 0.9 of 50 GB/s; the test allows 5%).
            // Two nodes: the model has the NVLink side bind (7 copies a token at 0.626 of 450 GB/s, the NCCL
            // collectives' factor) and gives 80 GB/s against 81 (68 at the factor of 0.529 fitted before
            // NCCL's protocols priced the collectives; the test allows 15% here). DeepEP's NVLink forwarding reaches
            // about 0.7 of the line rate (its intranode 153 of H800's 200 GB/s; 726 GB/s logical on B200's
            // 900), and it sends a token once per rank reached, not once per pick (for DeepSeek-V3 on
            // EP8, 5.3 ranks for 8 picks). Modelled so, this case gives 90 GB/s, but the two measured
            // end-to-end EP prefill rows move away from their measurements (RTP-LLM on 4 H800 nodes +4% ->
            // +16%, TensorRT-LLM DeepSeek-R1 on 8 H200 +5% -> +22%; SGLang's 4x8 H100 row stays +19%): a cost
            // these runs pay elsewhere is not modelled yet, so the all-to-all is left as it is.
            QVERIFY2(std::fabs(logical / measured - 1.0) < (nodes == 2 ? 0.15 : 0.05),
                     qPrintable(QString("%1 GB/s against %2").arg(logical).arg(measured)));
        }
    }

    // Two-batch overlap on a decode step: each half (B/2 tokens) has compute o and communication x in a MoE
    // layer; the layer takes 2 (max(o, x) + (1 - overlap) min(o, x)). Checked against the breakdowns of a
    // plan without overlap at B and B/2.
    void twoBatchOverlapLayerTime() {
        Scenario s = deepseek(9, Phase::Decode, 2000, 256);
        for (double ov : {0.0, 0.5, 1.0}) {
            s.cluster.efficiency.overlap = ov;
            Plan off = dpAttention(72), on = off;
            off.overlap = Overlap::Off;
            on.overlap = Overlap::TwoBatch;
            const Evaluation eOff = CostModel(s).explain(off), eOn = CostModel(s).explain(on);
            QVERIFY(eOn.decode.twoBatchOverlap && !eOff.decode.twoBatchOverlap);
            Scenario half = s;
            half.workload.batch = 128;
            const Evaluation eHalf = CostModel(half).explain(off);
            double x2 = 0, xFull = 0;
            const double o2 = layerTime(eHalf.decode, LayerKind::Moe, x2);
            const double oFull = layerTime(eOff.decode, LayerKind::Moe, xFull);
            const double tbo = 2.0 * (std::max(o2, x2) + (1.0 - ov) * std::min(o2, x2));
            // The stage: the MoE layers change, the dense layers, embedding and head do not.
            const double expect = eOff.decode.stageMs + eOff.decode.moeLayers * (tbo - (oFull + xFull));
            QVERIFY2(
                std::fabs(eOn.decode.stageMs - expect) < 1e-9 * expect,
                qPrintable(
                    QString("overlap %1: %2 ms, expected %3").arg(ov).arg(eOn.decode.stageMs).arg(expect)));
            // Auto takes the faster.
            const Metrics autoM = CostModel(s).evaluate(dpAttention(72));
            QVERIFY(autoM.tpotMs <= std::min(eOn.metrics.tpotMs, eOff.metrics.tpotMs) * (1 + 1e-12));
        }
        // With nothing hidden, splitting only costs: each half re-reads the weights.
        s.cluster.efficiency.overlap = 0.0;
        Plan on = dpAttention(72), off = on;
        on.overlap = Overlap::TwoBatch;
        off.overlap = Overlap::Off;
        QVERIFY(CostModel(s).evaluate(on).tpotMs > CostModel(s).evaluate(off).tpotMs);
    }

    // A serving step with chunked prefill: Llama-3.1-8B on one H100, 1000-token prompts, 100 output tokens,
    // 10 sequences: each step carries the 10 decode tokens and 10 x 1000 / 100 = 100 prefill tokens in one
    // pass. The FFN up/gate GEMM sees 110 tokens: 2 x (2 x 4096 x 14336) x 110 FLOPs at 989 TFLOP/s times
    // the cluster's compute efficiency.
    // A new prompt fits the spare budget (8192 - 10) in one step: TTFT = the step in flight, then a step of
    // the 10 decode tokens and the whole prompt (1,000 tokens), longer than the steady one. Its time is a
    // steady step of the same plan at O = 10 (10 x 1000 / 10 = 1,000 prefill tokens, one prompt), where
    // TTFT is therefore exactly two steps; at O = 100 the decode tokens' contexts differ (1,050 against
    // 1,005 on average), so there it agrees within 1%. And TTFT less a step is at least the prompt's own
    // FLOPs at the peak: 2 x 6.98e9 a token (32 layers of 218.1M weights: q and o 4096 x 4096, k and v
    // 4096 x 1024, up, gate and down 3 x 4096 x 14336) x 1,000 tokens, which the model before (two steady
    // steps, 110 tokens each) was below.
    void batchedPrefillStep() {
        Scenario s = llamaOneGpu(Phase::Serving, 1000, 100, 10);
        const CostModel cm(s);
        const Evaluation e = cm.explain(Plan::megatronChoices({1, 1, 1, 1, 1, 1}));
        QVERIFY(e.metrics.feasible);
        QVERIFY(QString::fromStdString(e.decode.phase).contains("10 decode + 100 prefill"));
        const double flops = 2.0 * (2.0 * 4096 * 14336) * 110;
        for (const auto& o : e.decode.ops)
            if (o.op == "ffn_up")
                QVERIFY(std::fabs(o.computeMs - flops / (989e12 * s.cluster.efficiency.compute) * 1e3) <
                        1e-9);
        Scenario tenOut = llamaOneGpu(Phase::Serving, 1000, 10, 10);
        const Metrics one = CostModel(tenOut).evaluate(Plan::megatronChoices({1, 1, 1, 1, 1, 1}));
        QVERIFY(std::fabs(one.ttftMs - 2.0 * one.tpotMs) < 1e-9 * one.ttftMs);
        const double chunkStep = e.metrics.ttftMs - e.metrics.tpotMs;
        QCOMPARE(e.metrics.ttftChunks, 1);
        QVERIFY(std::fabs(e.metrics.chunkMs - chunkStep) < 1e-9 * chunkStep);
        QVERIFY2(std::fabs(chunkStep / one.tpotMs - 1.0) < 0.01,
                 qPrintable(
                     QString("chunk step %1 ms, steady step at O 10 %2 ms").arg(chunkStep).arg(one.tpotMs)));
        const double promptFlopsMs = 2.0 * 6.98e9 * 1000 / (989e12 * s.cluster.efficiency.compute) * 1e3;
        QVERIFY2(
            chunkStep >= promptFlopsMs,
            qPrintable(
                QString("chunk step %1 ms, the prompt's FLOPs %2 ms").arg(chunkStep).arg(promptFlopsMs)));
        QCOMPARE(e.metrics.prefillBudget, kDefaultPrefillBudget);
        // A step may not carry more than the budget: at 8,192 tokens, B (1 + 1000/100) <= 8192 gives B <=
        // 744.
        s.workload.fixedBatch = false;
        QVERIFY(CostModel(s).evaluate(Plan::megatronChoices({1, 1, 1, 1, 1, 1})).batch <= 744);
        Plan small = Plan::megatronChoices({1, 1, 1, 1, 1, 1});
        small.prefillBudget = 1100; // 1100 / 11 = 100 sequences at most
        QCOMPARE(CostModel(s).evaluate(small).batch, int64_t(100));
    }

    // A serving step starts B / O new prompts on average, far below one with long answers: Llama-3.1-8B
    // (32 heads of 128: 4 x 32 x 128 = 16,384 attention FLOPs per query-key pair) on one H100, 20,000-token
    // prompts, 2,000 output tokens, 16 sequences (BF16 KV: 16 x 21,000 x 128 KiB = 44 GB). The step's
    // attention core scores the 16 decode tokens against their mean context (20,000 + 2,000 / 2 = 21,000) and
    // 16 / 2,000 of one prompt's causal pairs (20,000 x 20,001 / 2), not a whole prompt: (16384 x 21000 x 16
    // + 16384 x 200,010,000 x 0.008) FLOPs at the BF16 peak (989 TFLOP/s) times the cluster's compute
    // efficiency.
    void servingStepStartsAFractionOfAPrompt() {
        Scenario s = llamaOneGpu(Phase::Serving, 20000, 2000, 16);
        const Evaluation e = CostModel(s).explain(Plan::megatronChoices({1, 1, 1, 1, 1, 1}));
        QVERIFY2(e.metrics.feasible, e.metrics.violation.c_str());
        const double flops = 16384.0 * 21000 * 16 + 16384.0 * (20000.0 * 20001 / 2) * (16.0 / 2000);
        const double expectMs = flops / (989e12 * s.cluster.efficiency.compute) * 1e3;
        bool seen = false;
        for (const auto& o : e.decode.ops)
            if (o.op == "attention") {
                seen = true;
                QVERIFY2(
                    std::fabs(o.computeMs / expectMs - 1) < 1e-9,
                    qPrintable(QString("attention %1 ms, expected %2 ms").arg(o.computeMs).arg(expectMs)));
            }
        QVERIFY(seen);
    }

    // The attention core's KV reads stream at the KV bandwidth, weights and activations at the weight
    // bandwidth: Llama-3.1-8B decode on one H100 (3.35 TB/s), 10 sequences of 1,000 + 100 tokens, a mean
    // context of 1,050. A layer reads 10 x 1050 x 8 KV heads x 128 x 2 (K, V) x 2 bytes = 43,008,000 B of
    // cache, plus 10 tokens x (6,144 q/k/v + 4,096 out) x 2 bytes = 204,800 B of activations.
    void kvReadsAtTheKvBandwidth() {
        Scenario s = llamaOneGpu(Phase::Decode, 1000, 100, 10);
        s.cluster.efficiency.memory = 0.8;
        s.cluster.efficiency.kvRead = 0.5;
        const Evaluation e = CostModel(s).explain(Plan::megatronChoices({1, 1, 1, 1, 1, 1}));
        QVERIFY(e.metrics.feasible);
        const double kv = 10.0 * 1050 * 8 * 128 * 2 * 2, act = 10.0 * (6144 + 4096) * 2;
        const double expectMs = (act / (3.35e12 * 0.8) + kv / (3.35e12 * 0.5)) * 1e3;
        bool seen = false;
        for (const auto& o : e.decode.ops)
            if (o.op == "attention") {
                seen = true;
                QVERIFY2(
                    std::fabs(o.memoryMs / expectMs - 1) < 1e-9,
                    qPrintable(QString("attention %1 ms, expected %2 ms").arg(o.memoryMs).arg(expectMs)));
            }
        QVERIFY(seen);
    }

    // The engines' own layout against the best plan the search finds (DeepSeek-V3, about 2k tokens of
    // context; SGLang, lmsys.org/blog/2025-05-05-large-scale-ep, and DeepSeek's inference overview run
    // attention-DP + wide EP with two-batch overlap): prefill on 4x8 H100, decode on 9x8 H100.
    void engineLayoutsNearTheSearchBest_data() {
        QTest::addColumn<int>("nodes");
        QTest::addColumn<int>("phase");
        QTest::addRow("prefill 4x8") << 4 << int(Phase::Prefill);
        QTest::addRow("decode 9x8") << 9 << int(Phase::Decode);
    }
    void engineLayoutsNearTheSearchBest() {
        QFETCH(int, nodes);
        QFETCH(int, phase);
        Scenario s = deepseek(nodes, Phase(phase), 2000, 1);
        s.workload.fixedBatch = false;
        // SGLang's decode ran 256 sequences a GPU at 22,282 tok/s a node: 2048 / 22,282 = 92 ms a token;
        // the comparison holds the search to that interactivity.
        if (Phase(phase) == Phase::Decode) s.workload.tpotMs = 100;
        // The engines ran without speculative decoding: so does the search.
        s.constraints.specPolicy = Constraints::SpecPolicy::Off;
        const CostModel cost(s);
        Plan engine = dpAttention(nodes * 8);
        engine.overlap = Overlap::TwoBatch;
        const Metrics e = cost.evaluate(engine);
        QVERIFY2(e.feasible, e.violation.c_str());
        const CostModelObjective objective(cost);
        const SearchSpace space(s);
        Engine eng(objective);
        SearchOptions o;
        o.budget.evaluations = 5000;
        o.seed = 1;
        const SearchResult r = makeSearcher("sa")->run(space, eng, o, nullptr, {});
        const Metrics best = cost.evaluate(r.best.plan);
        const double ratio = e.throughput / std::max(best.throughput, e.throughput);
        const Degrees& d = r.best.plan.degrees;
        qInfo("engine layout %.0f tok/s, search best %.0f tok/s (pp%d dp%d tp%d ep%d etp%d edp%d): %.3fx",
              e.throughput, best.throughput, d.pp, d.dp, d.tp, d.ep, d.etp, d.edp, ratio);
        // Holds: the engines' layout is within 20% of the best (it was 0.70-0.76x before the fitted factors).
        QVERIFY(ratio > 0.8);
        // Known misses (target 10%), since the collectives inside a node are priced as NCCL and the engines
        // run them: prefill 0.87x (the best, pp1 x attention-DP32 with EP16 and two expert replicas each over
        // two nodes, 293,735 against 255,405 tok/s: 1.49 ms of dispatch a MoE layer before overlap against
        // EP32's 3.12, where a token's picks reach 3.1 of the 4 nodes even with node-limited routing); decode
        // 0.88x (the best, pp9 x dp8 with EP8 inside each stage's node, 225,554 against 199,409; it was
        // 0.906x against pp9 x dp4 x tp2 before).
        const QByteArray why = QStringLiteral("engine layout %1x of the search best, target 0.9x")
                                   .arg(ratio, 0, 'f', 2)
                                   .toUtf8();
        if (ratio < 0.9) QEXPECT_FAIL("", why.constData(), Continue);
        QVERIFY(ratio >= 0.9);
    }

    // Paged KV at a known batch: Llama-3.1-8B (32 layers, 8 KV heads of 128, BF16 K and V), 10 sequences of
    // 1000 + 100 tokens. Paged: on average input + output/2 = 1050 tokens written:
    // 10 x 1050 x 32 x 8 x 128 x 2 x 2 bytes = 1,376,256,000 B = 1.2817 GiB; the worst case, 1100 tokens.
    void pagedKvMemory() {
        Scenario s = llamaOneGpu(Phase::Serving, 1000, 100, 10);
        const Plan p = Plan::megatronChoices({1, 1, 1, 1, 1, 1});
        const double perToken = 32.0 * 8 * 128 * 2 * 2, gib = 1024.0 * 1024 * 1024;
        QVERIFY(std::fabs(CostModel(s).evaluate(p).kvCacheGiB - 10 * 1050 * perToken / gib) < 1e-9);
        s.workload.kvReservation = Workload::KvReservation::Worst;
        QVERIFY(std::fabs(CostModel(s).evaluate(p).kvCacheGiB - 10 * 1100 * perToken / gib) < 1e-9);
    }

    // Sliding-window layers hold at most their window: gpt-oss-120b alternates 128-token sliding and full
    // layers (18 each; 8 KV heads of 64, BF16: 2,048 bytes a token a layer). Four sequences of 10,000 + 1,000
    // tokens, paged (10,500 written on average), on one GPU: 4 x 2048 x (18 x 10500 + 18 x 128) bytes =
    // 1.4596 GiB; with every layer full, 4 x 2048 x 36 x 10500 = 2.8839 GiB.
    void slidingWindowKvStopsAtTheWindow() {
        Scenario s = scenario(kSamples + "/scenarios/llama-3.1-8b-h100-1x8.yaml");
        s.model = loadModel((kSamples + "/models/gpt-oss-120b.yaml").toStdString()).value();
        s.constraints.gpus = 1;
        s.workload = Workload{};
        s.workload.phase = Phase::Serving;
        s.workload.inputTokens = 10000, s.workload.outputTokens = 1000;
        s.workload.fixedBatch = true, s.workload.batch = 4;
        const Plan p = Plan::megatronChoices({1, 1, 1, 1, 1, 1});
        const double gib = 1024.0 * 1024 * 1024;
        QVERIFY(std::fabs(CostModel(s).evaluate(p).kvCacheGiB - 4.0 * 2048 * (18 * 10500 + 18 * 128) / gib) <
                1e-9);
        s.model.attentionPattern.clear(); // every layer full
        QVERIFY(std::fabs(CostModel(s).evaluate(p).kvCacheGiB - 4.0 * 2048 * 36 * 10500 / gib) < 1e-9);
    }

    // The roofline bound counts what each layer attends to. gpt-oss-120b, decode at 10,000 + 1,000 tokens
    // (mean context 10,500): its 18 sliding layers read 128 tokens, its 18 full layers 10,500. On 8 H100s the
    // decode bound is bandwidth over the KV bytes a token reads (2,048 B a token a layer: 8 KV heads of 64,
    // BF16), so it is 36 x 10,500 / (18 x 10,500 + 18 x 128) = 1.9759x the bound with every layer full.
    void rooflineFollowsWindows() {
        Scenario s = scenario(kSamples + "/scenarios/llama-3.1-8b-h100-1x8.yaml");
        s.model = loadModel((kSamples + "/models/gpt-oss-120b.yaml").toStdString()).value();
        s.workload = Workload{};
        s.workload.phase = Phase::Decode;
        s.workload.inputTokens = 10000, s.workload.outputTokens = 1000;
        const double windowed = CostModel(s).rooflineThroughput();
        s.model.attentionPattern.clear(); // every layer full
        const double full = CostModel(s).rooflineThroughput();
        const double expected = 36.0 * 10500 / (18.0 * 10500 + 18.0 * 128);
        QVERIFY2(std::fabs(windowed / full / expected - 1.0) < 1e-9,
                 qPrintable(QString::number(windowed / full, 'g', 10)));
    }

    // Linear-attention layers hold a constant state: Qwen3-Next (3 linear layers to 1 full) grows its KV by
    // the full layers' share only when the context doubles.
    void linearAttentionStateIsConstant() {
        Scenario s = scenario(kSamples + "/scenarios/llama-3.1-8b-h100-1x8.yaml");
        s.model = loadModel((kSamples + "/models/qwen3-next-80b-a3b.yaml").toStdString()).value();
        s.workload = Workload{};
        s.workload.phase = Phase::Decode;
        s.workload.fixedBatch = true, s.workload.batch = 1;
        s.workload.outputTokens = 1;
        const Plan p = Plan::megatronChoices({1, 1, 8, 8, 1, 1});
        auto kvAt = [&](int64_t ctx) {
            s.workload.inputTokens = ctx;
            return CostModel(s).evaluate(p).kvCacheGiB * 1024.0 * 1024 * 1024;
        };
        const auto& a = s.model.attention;
        const double perTokenPerGpu =
            2.0 * double(a.kvHeads * a.headDim) * 2.0 / std::min<int64_t>(8, a.kvHeads);
        const int64_t full = s.model.layers / 4;
        const double grow = kvAt(20000) - kvAt(10000);
        // (decode context is input + output/2: 10,000.5 -> 20,000.5 tokens)
        QVERIFY2(std::fabs(grow - full * 10000.0 * perTokenPerGpu) < 1e-6 * grow,
                 qPrintable(QString("%1 vs %2").arg(grow).arg(full * 10000.0 * perTokenPerGpu)));
        QVERIFY(kvAt(10000) > full * 10000.0 * perTokenPerGpu); // plus the linear layers' state
    }

    // FP8 weights make the GEMMs FP8, not the attention core: its compute time stays at the BF16 rate while
    // the QKV projection's halves (989 -> 1979 TFLOP/s).
    void attentionAtActivationPrecision() {
        Scenario s = scenario(kSamples + "/scenarios/llama-3.1-8b-h100-1x8.yaml");
        s.constraints.gpus = 1;
        s.workload.phase = Phase::Prefill;
        s.workload.inputTokens = 4096;
        s.workload.fixedBatch = true;
        s.workload.batch = 1;
        const Plan p = Plan::megatronChoices({1, 1, 1, 1, 1, 1});
        const Evaluation bf16 = CostModel(s).explain(p);
        s.model.weights = Dtype::FP8;
        const Evaluation fp8 = CostModel(s).explain(p);
        auto op = [](const Evaluation& e, const char* name) {
            for (const auto& o : e.prefill.ops)
                if (o.op == name && o.layer == LayerKind::Dense) return o.computeMs;
            return -1.0;
        };
        QCOMPARE(op(fp8, "attention"), op(bf16, "attention"));
        QVERIFY(std::fabs(op(fp8, "qkv") - op(bf16, "qkv") * 989.0 / 1979.0) < 1e-9);
    }

    // Each parameter group at its own bytes and GEMM rate: gpt-oss-120b keeps attention in BF16 beside
    // MXFP4 experts (4-bit values + one 1-byte scale per 32: 0.53125 bytes a weight). On one H100: QKV is
    // 2880 x (64 + 2 x 8) x 64 = 14,745,600 weights, 29,491,200 bytes; a layer's 128 experts are
    // 128 x 3 x 2880 x 2880 x 0.53125 = 1,692,057,600 bytes. Hopper has no FP4 MMA, so MXFP4 runs against
    // BF16 activations (vLLM's SM90 backend) at the BF16 rate; with NVFP4 on a B200 the experts' GEMMs run
    // at the FP4 peak (9,000 dense TFLOP/s against 2,250 for BF16) while attention stays at BF16.
    void weightBytesAndRatesPerGroup() {
        Scenario s = scenario(kSamples + "/scenarios/llama-3.1-8b-h100-1x8.yaml");
        s.model = loadModel((kSamples + "/models/gpt-oss-120b.yaml").toStdString()).value();
        s.constraints.gpus = 1;
        s.workload.phase = Phase::Prefill;
        s.workload.inputTokens = 2048;
        s.workload.fixedBatch = true;
        s.workload.batch = 1;
        const Plan p = Plan::megatronChoices({1, 1, 1, 1, 1, 1});
        auto find = [](const Evaluation& e, const char* name) {
            for (const auto& o : e.prefill.ops)
                if (o.op == name && o.layer == LayerKind::Moe) return o;
            return OpCost{};
        };
        const Evaluation h100 = CostModel(s).explain(p);
        QCOMPARE(find(h100, "qkv").weightBytes, 29491200.0);
        QCOMPARE(find(h100, "experts").weightBytes, 1692057600.0);
        // BF16 activations: the experts' and the QKV's rates are both the BF16 GEMM rate, so their compute
        // times per FLOP are the same up to the grouped-GEMM factor.
        const double eff = s.cluster.efficiency.groupedGemm;
        const auto& e = s.model.moe;
        const double tokens = 2048.0, hq = 2880.0 * 5120.0, he = 3.0 * 2880.0 * double(e.expertFfn);
        const double qkvPerFlop = find(h100, "qkv").computeMs / (2.0 * tokens * hq);
        const double expPerFlop = find(h100, "experts").computeMs / (2.0 * tokens * double(e.topK) * he);
        QVERIFY(std::fabs(expPerFlop * eff / qkvPerFlop - 1.0) < 1e-9);
        // NVFP4 on B200: the experts run 9000 / 2250 = 4x the peak per FLOP, at the Blackwell family's FP4
        // share of it (compute_fp4) against QKV's (unquantized) BF16 share (compute): 4 x compute_fp4 /
        // compute.
        auto b200 = loadCluster((kSamples + "/clusters/b200-1x8.yaml").toStdString());
        QVERIFY2(b200.ok(), b200.error().str().c_str());
        s.cluster = b200.value();
        s.model.quant = nvfp4Quant();
        s.model.quant.quantized[int(ParamGroup::Attention)] = false;
        const Evaluation b = CostModel(s).explain(p);
        const double bQkv = find(b, "qkv").computeMs / (2.0 * tokens * hq);
        const double bExp = find(b, "experts").computeMs / (2.0 * tokens * double(e.topK) * he);
        const Efficiency& be = s.cluster.efficiency;
        QVERIFY2(std::fabs(bQkv / (bExp * be.groupedGemm) - 4.0 * be.fp4Compute() / be.compute) < 1e-9,
                 qPrintable(QString::number(bQkv / (bExp * be.groupedGemm))));
    }

    // evaluate() reuses one compiled plan per thread. Plans of dense and MoE models, with and without
    // pipelines and layer groups, evaluated in turn on one thread must give what explain() gives, which
    // compiles each into a fresh one.
    void reusedCompiledPlanMatchesAFreshOne() {
        const QStringList paths{kSamples + "/scenarios/deepseek-v3-h100-32x8.yaml",
                                kSamples + "/scenarios/llama-3.1-70b-h100-4x8.yaml",
                                kSamples + "/benchmarks/deepseek-v3-4x8-128k-layer-groups.yaml",
                                kSamples + "/benchmarks/deepseek-v3-32x8-long-pp4-split.yaml"};
        std::vector<CostModel> models;
        std::vector<std::vector<Plan>> plans;
        for (const QString& path : paths) {
            const Scenario s = scenario(path);
            models.emplace_back(s);
            const SearchSpace space(s);
            Rng rng(11);
            auto& ps = plans.emplace_back();
            while (ps.size() < 40) {
                const std::vector<int> x = ps.size() % 2 ? space.sampleByDecision(rng) : space.sample(rng);
                if (!x.empty()) ps.push_back(space.toPlan(x));
            }
        }
        int compared = 0;
        for (size_t i = 0; i < 40; ++i)
            for (size_t m = 0; m < models.size(); ++m) {
                const Metrics a = models[m].evaluate(plans[m][i]), b = models[m].explain(plans[m][i]).metrics;
                sp::test::sameMetrics(a, b);
                if (QTest::currentTestFailed()) return;
                QCOMPARE(a.violations, b.violations);
                compared += a.valid;
            }
        QVERIFY(compared > 100);
    }

    // The batch search's probes and the memory account work out each class of alike pipeline stages once
    // (Compiled::classOf). Every stage must be in the class of the stages it is alike to and in no other, and
    // the pass times and the memory limit must be those of the plain loop over every stage, exactly, on plans
    // from the hard suite's spaces (uneven and searched stage splits, layer groups, deep pipelines).
    void stageClassesMatchEveryStage() {
        QDir dir(kSamples + "/benchmarks");
        int plans = 0, fewerClasses = 0, manyClasses = 0;
        for (const QString& f : dir.entryList({"*.yaml"})) {
            const Scenario s = scenario(dir.filePath(f));
            const CostModel::Impl impl(s);
            const SearchSpace space(s);
            Rng rng(7);
            for (int i = 0; i < 60; ++i) {
                const std::vector<int> x = i % 2 ? space.sampleByDecision(rng) : space.sample(rng);
                if (x.empty()) continue;
                const Plan p = space.toPlan(x);
                if (impl.checkPlan(p)) continue;
                Compiled c;
                impl.compile(p, c);
                const int pp = c.d.pp, nc = int(c.classStage.size());
                QCOMPARE(int(c.classOf.size()), pp);
                auto alike = [&](const Stage& a, const Stage& b) {
                    return a.first == b.first && a.last == b.last && a.lastMoe == b.lastMoe &&
                           a.lastGroup == b.lastGroup && a.gathers == b.gathers &&
                           std::equal(a.n.begin(), a.n.begin() + c.nSlots, b.n.begin());
                };
                for (int q = 0; q < nc; ++q) {
                    QCOMPARE(c.classOf[size_t(c.classStage[size_t(q)])], q);
                    if (q > 0) QVERIFY(c.classStage[size_t(q)] > c.classStage[size_t(q - 1)]);
                }
                for (int a = 0; a < pp; ++a)
                    for (int b = 0; b < pp; ++b)
                        QCOMPARE(alike(c.stages[size_t(a)], c.stages[size_t(b)]),
                                 c.classOf[size_t(a)] == c.classOf[size_t(b)]);
                for (const double B : {1.0, 7.0, 64.0}) {
                    const Step st = impl.stepAt(c, B);
                    const PassTimes t = impl.passTimes(c, st);
                    // The loop over every stage, as it was before the classes.
                    std::array<double, kMaxSlots> tt{};
                    bool unused = false;
                    for (int k = 0; k < c.nSlots; ++k)
                        tt[size_t(k)] =
                            impl.blockTime(c, c.body[k][0], c.body[k][1], st, impl.slotMoe[k], unused);
                    const double te = impl.blockTime(c, c.emb[0], c.emb[1], st, false, unused);
                    const double th = impl.blockTime(c, c.head[0], c.head[1], st, false, unused);
                    const double gather =
                        c.nGroups > 1 ? CostModel::Impl::commTime(c.regather, st.critical().tokens()) : 0.0;
                    double sum = 0, most = 0;
                    int slowest = 0;
                    for (int k = 0; k < pp; ++k) {
                        const Stage& sg = c.stages[size_t(k)];
                        double body = 0.0;
                        for (int j = 0; j < c.nSlots; ++j) body += sg.n[size_t(j)] * tt[size_t(j)];
                        if (sg.gathers > 0) body += sg.gathers * gather;
                        // The last stage also runs speculative decoding's draft passes.
                        const double draft = c.spec.on() ? impl.draftTime(c, st) : 0.0;
                        const double tk = body + (sg.first ? te : 0.0) + (sg.last ? th + draft : 0.0) +
                                          impl.p2pTime(c, sg, st.tokens());
                        sum += tk;
                        if (tk > most) most = tk, slowest = k;
                    }
                    QCOMPARE(t.stageSum, sum);
                    QCOMPARE(t.stageMax, most);
                    QCOMPARE(t.slowest, slowest);
                }
                double best = double(kMaxBatch);
                for (int k = 0; k < pp; ++k) {
                    double fixed, perSeq, w, kv;
                    impl.stageMemory(c, k, fixed, perSeq, w, kv);
                    const double b = impl.stageBatchLimit(c, fixed, perSeq, w, kv);
                    best = b < 1.0 ? 0.0 : std::min(best, b);
                    if (best == 0.0) break;
                }
                QCOMPARE(impl.memoryBatchLimit(c), int64_t(best));
                ++plans, fewerClasses += nc<pp, manyClasses += nc> 3;
            }
        }
        QVERIFY2(plans > 200 && fewerClasses > 50 && manyClasses > 10,
                 qPrintable(QString("%1 %2 %3").arg(plans).arg(fewerClasses).arg(manyClasses)));
    }
};

QTEST_GUILESS_MAIN(TestCostMechanisms)
#include "tst_cost_mechanisms.moc"
