// The cost model: hand-computed cases, properties over random plans on every sample, invalid plans, and two
// public facts that must come out the right way round.
#include "core/common/text.h"
#include "core/cost/collectives.h"
#include "core/cost/costmodel.h"
#include "core/cost/validity.h"
#include "core/io/formats.h"
#include "core/model/weights.h"
#include "core/search/rng.h"
#include "core/search/space.h"

#include <QDirIterator>
#include <QTest>

#include <cmath>
#include <cstdio>
#include <random>

using namespace sp;

namespace {

const QString kSamples = QStringLiteral(SHARDPLAN_SAMPLES_DIR);
const QString kFacts = QStringLiteral(SHARDPLAN_TESTDATA_DIR "/facts/");

Scenario scenario(const QString& path) {
    auto s = loadScenario(path.toStdString());
    if (!s) qFatal("%s", s.error().str().c_str());
    return s.value();
}

Plan plan(const QString& path) {
    auto p = loadPlan(path.toStdString());
    if (!p) qFatal("%s", p.error().str().c_str());
    return p.value();
}

/// Llama-3.1-8B on one H100 (of the 1x8 sample), one prompt of `input` tokens, fixed batch 1.
Scenario oneH100(Phase phase, int input) {
    Scenario s = scenario(kSamples + "/scenarios/llama-3.1-8b-h100-1x8.yaml");
    s.constraints.gpus = 1;
    s.workload.phase = phase;
    s.workload.inputTokens = input;
    s.workload.outputTokens = 16;
    s.workload.ttftMs = s.workload.tpotMs = 0;
    s.workload.fixedBatch = true;
    s.workload.batch = 1;
    // Round factors for the hand calculations below (the sample cluster's are fitted to measurements).
    s.cluster.efficiency.compute = 0.7, s.cluster.efficiency.memory = 0.8, s.cluster.efficiency.launchUs = 4;
    s.cluster.efficiency.kvRead = 0.8, s.cluster.efficiency.opOverlap = 1.0; // the pure roofline
    return s;
}

const OpCost& findOp(const Breakdown& b, const char* op) {
    for (const auto& o : b.ops)
        if (o.op == op) return o;
    qFatal("no operator %s", op);
}

/// A random valid plan: random degrees (powers of two), mesh order and choices, rejected until checkPlan
/// passes.
std::optional<Plan> randomPlan(const CostModel& cm, std::mt19937& rng) {
    const Scenario& s = cm.scenario();
    const int G = s.gpus();
    for (int tries = 0; tries < 5000; ++tries) {
        Plan p;
        const int tp = 1 << (rng() % 5), pp = 1 << (rng() % 4);
        if (G % (tp * pp)) continue;
        p.degrees = {pp, G / (tp * pp), tp, 1, 1, 1};
        const int stage = p.degrees.dp * tp;
        for (int i = 0; i < kOpCount; ++i) p.choices[i] = int8_t(rng() % choiceNames(Op(i)).size());
        if (s.model.moe.present()) {
            const int c = p.choice(Op::Experts);
            if (c == choice::ExpTensor)
                p.degrees.etp = stage;
            else if (c == choice::ExpToken)
                p.degrees.edp = stage;
            else {
                p.degrees.ep = 1 << (rng() % 9);
                if (stage % p.degrees.ep) continue;
                p.degrees.etp = 1, p.degrees.edp = stage / p.degrees.ep;
            }
        } else {
            p.degrees.ep = stage;
        }
        std::array<Axis, 3> order{Axis::TP, Axis::DP, Axis::PP};
        std::shuffle(order.begin(), order.end(), rng);
        p.meshOrder = order;
        if (!cm.checkPlan(p)) return p;
    }
    return std::nullopt;
}

QStringList sampleScenarios() {
    QStringList out;
    QDirIterator it(kSamples + "/scenarios", {"*.yaml"}, QDir::Files);
    while (it.hasNext()) out << it.next();
    out.sort();
    return out;
}

} // namespace

class TestCost : public QObject {
    Q_OBJECT
private slots:
    // H100 SXM (sample cluster's peaks): 989 TFLOP/s BF16 x compute efficiency 0.7; 3.35 TB/s x memory
    // efficiency 0.8; launch 4 us.
    void gemmMemoryBoundAtBatchOne() {
        const CostModel cm(oneH100(Phase::Decode, 1000));
        const Evaluation e = cm.explain(cm.megatronPlan());
        QVERIFY(e.metrics.valid);
        const OpCost& up = findOp(e.decode, "ffn_up");
        QVERIFY(up.memoryBound);
        // gate+up weights: 2 x 4096 x 14336 x 2 bytes = 234,881,024 B; plus 1 token in (4096) and out (28672)
        // x 2 B.
        const double bytes = 234881024.0 + (4096 + 28672) * 2.0;
        QCOMPARE_LE(std::abs(up.memoryMs - bytes / (3.35e12 * 0.8) * 1e3), 1e-9);
        QCOMPARE_LE(std::abs(up.timeMs - (bytes / (3.35e12 * 0.8) * 1e3 + 0.004)), 1e-9); // = 0.0916 ms
        // FLOPs: 2 x 1 x 4096 x 28672 = 234,881,024 -> 0.34 us of compute: far below the memory time
        QCOMPARE_LE(std::abs(up.computeMs - 2.0 * 4096 * 28672 / (989e12 * 0.7) * 1e3), 1e-9);
    }

    void gemmComputeBoundAtLargeM() {
        const CostModel cm(oneH100(Phase::Prefill, 4096));
        const Evaluation e = cm.explain(cm.megatronPlan());
        const OpCost& up = findOp(e.prefill, "ffn_up");
        QVERIFY(!up.memoryBound);
        // 2 x 4096 tokens x 4096 x 28672 = 962.1 GFLOP / 692.3 TFLOP/s = 1.390 ms
        const double flops = 2.0 * 4096 * 4096 * 28672;
        QCOMPARE_LE(std::abs(up.computeMs - flops / (989e12 * 0.7) * 1e3), 1e-9);
        QVERIFY(std::abs(up.computeMs - 1.3897) < 1e-3);
        QVERIFY(up.memoryMs < up.computeMs / 3);
    }

    // NVLink 450 GB/s x 0.8 = 360 GB/s, 3 us per step; NIC 400 Gb/s = 50 GB/s x 0.9 = 45 GB/s, 6 us per step.
    void ringAllReduce() {
        Cluster c;
        c.intraNode = {"nvlink", 450, 3};
        c.interNode = {"ib", 50, 6};
        c.efficiency.intraNode = 0.8, c.efficiency.interNode = 0.9;
        const Net net = Net::of(c);
        const double bytes = 1e9;
        // 8 GPUs in one node: 2 (p-1)/p bytes / bw = 2 x 7/8 x 1e9 / 360e9 = 4.8611 ms; latency 2 log2(8) x 3
        // us.
        const double inNode = collectiveTime(Collective::AllReduce, {8, 8, 1}, net, bytes);
        QCOMPARE_LE(std::abs(inNode - (2.0 * 7 / 8 * 1e9 / 360e9 + 18e-6)), 1e-12);
        // 16 GPUs on 2 nodes: reduce-scatter in the node (7/8 over NVLink), ring across 2 nodes on 1/8 of the
        // data per NIC ((2-1)/2 / 8 of it), all-gather in the node: 2 x (7/8 / 360e9 + 1/16 / 45e9) x 1e9
        // = 2 x (2.4306 + 1.3889) ms = 7.6389 ms; latency 2 x (3 x 3 + 1 x 6) us = 30 us.
        const double twoNodes = collectiveTime(Collective::AllReduce, {16, 8, 2}, net, bytes);
        QCOMPARE_LE(std::abs(twoNodes - (2.0 * (7.0 / 8 / 360e9 + 1.0 / 16 / 45e9) * 1e9 + 30e-6)), 1e-12);
        QVERIFY(std::abs(twoNodes - 7.6689e-3) < 1e-6);
        // 16 GPUs one per node: a plain ring over the NICs, 2 x 15/16 x 1e9 / 45e9 = 41.667 ms + 2 x 4 x 6 us
        const double spread = collectiveTime(Collective::AllReduce, {16, 1, 16}, net, bytes);
        QCOMPARE_LE(std::abs(spread - (2.0 * 15 / 16 * 1e9 / 45e9 + 48e-6)), 1e-12);
    }

    // log2ceil counts bits; it must equal the floating ceil(log2(n)) it replaced, for every group size.
    void log2ceilIsExact() {
        for (int n = 1; n <= (1 << 20); ++n)
            if (log2ceil(n) != (n <= 1 ? 0.0 : std::ceil(std::log2(double(n)))))
                QFAIL(qPrintable(QString::number(n)));
        for (int n : {(1 << 30) - 1, 1 << 30, (1 << 30) + 1, 2147483647})
            QCOMPARE(log2ceil(n), std::ceil(std::log2(double(n))));
        QCOMPARE(log2ceil(72), 7.0); // an NVL72 domain: 64 < 72 <= 128
    }

    void allToAllAcrossNodes() {
        Cluster c;
        c.intraNode = {"nvlink", 450, 3};
        c.interNode = {"ib", 50, 6};
        c.efficiency.intraNode = 0.8, c.efficiency.interNode = 0.9;
        const Net net = Net::of(c);
        // 16 GPUs on 2 nodes, 1 GB held per GPU: 7/16 of it to node peers over NVLink (1.215 ms) and 8/16
        // across the NIC (0.5 GB / 45 GB/s = 11.111 ms) at once: the NIC bounds it. Latency 3 + 6 us.
        const double t = collectiveTime(Collective::AllToAll, {16, 8, 2}, net, 1e9);
        QCOMPARE_LE(std::abs(t - (0.5e9 / 45e9 + 9e-6)), 1e-12);
        // inside one node: 7/8 of 1 GB over NVLink = 2.4306 ms + 3 us
        const double in = collectiveTime(Collective::AllToAll, {8, 8, 1}, net, 1e9);
        QCOMPARE_LE(std::abs(in - (7.0 / 8 * 1e9 / 360e9 + 3e-6)), 1e-12);
    }

    void noCommunicationWithoutTpAndPp_data() {
        QTest::addColumn<QString>("path");
        for (const auto& f : sampleScenarios())
            QTest::addRow("%s", qPrintable(QFileInfo(f).completeBaseName())) << f;
    }
    void noCommunicationWithoutTpAndPp() {
        QFETCH(QString, path);
        const Scenario s = scenario(path);
        const CostModel cm(s);
        const int G = s.gpus();
        Plan p = Plan::megatronChoices({1, G, 1, G, 1, 1});
        if (s.model.moe.present()) p.degrees = {1, G, 1, 1, 1, G}, p.setChoice(Op::Experts, choice::ExpToken);
        QVERIFY2(!cm.checkPlan(p), cm.checkPlan(p)->c_str());
        const Evaluation e = cm.explain(p);
        QVERIFY(e.decode.comms.empty() && e.prefill.comms.empty());
    }

    // Summed over the GPUs, weight memory = parameters x bytes x replication.
    void weightMemoryConservation_data() { noCommunicationWithoutTpAndPp_data(); }
    void weightMemoryConservation() {
        QFETCH(QString, path);
        const Scenario s = scenario(path);
        const CostModel cm(s);
        const ParamCounts pc = countParams(s.model);
        // Bytes per group as the checkpoint stores them (a quantized checkpoint keeps its embedding, router,
        // head and norms in the compute dtype).
        const auto bytesPer = [&](ParamGroup g) { return weightBytesPerParam(s.model, g); };
        double totalBytes = -pc.finalNorm * bytesPer(ParamGroup::Norms);
        for (int g = 0; g < kParamGroupCount; ++g)
            totalBytes += paramsOf(s.model, ParamGroup(g)) * bytesPer(ParamGroup(g));
        const int G = s.gpus();
        auto summed = [&](const Plan& p) {
            // every stage's dp*tp GPUs: peak-stage figure x pp over-counts, so sum per stage via one-stage
            // plans
            const Evaluation e = cm.explain(p);
            double perGpu = 0;
            for (const auto& b : {e.decode.ops.empty() ? e.prefill : e.decode})
                for (const auto& o : b.ops) {
                    const double layers = o.layer == LayerKind::Dense ? b.denseLayers
                                          : o.layer == LayerKind::Moe ? b.moeLayers
                                                                      : 1.0;
                    perGpu += o.weightBytes * layers;
                }
            return perGpu * G;
        };
        // All replicated (tp 1, pp 1): each GPU holds everything (but the final norm, ignored).
        Plan rep = Plan::megatronChoices({1, G, 1, G, 1, 1});
        if (s.model.moe.present())
            rep.degrees = {1, G, 1, 1, 1, G}, rep.setChoice(Op::Experts, choice::ExpToken);
        QVERIFY(!cm.checkPlan(rep));
        QVERIFY2(std::abs(summed(rep) / (totalBytes * G) - 1.0) < 1e-9,
                 qPrintable(QString::number(summed(rep) / (totalBytes * G), 'g', 12)));
        // Megatron on a dense model, one stage: each weight once per tp group, so dp copies (norms, which are
        // replicated in the group, add a negligible 2h per layer per extra GPU).
        if (!s.model.moe.present()) {
            const int tp = std::min(8, G);
            Plan meg = Plan::megatronChoices({1, G / tp, tp, G, 1, 1});
            if (cm.checkPlan(meg)) return;
            const double expected = totalBytes * (G / tp);
            QVERIFY2(std::abs(summed(meg) / expected - 1.0) < 1e-3,
                     qPrintable(QString::number(summed(meg) / expected)));
        } else {
            // Experts expert-parallel over the stage (edp 1, ep dividing the experts), the rest replicated
            // (tp 1): experts once, everything else G times.
            int ep = G;
            while (s.model.moe.experts % ep) ep /= 2;
            Plan p = Plan::megatronChoices({1, G, 1, ep, 1, G / ep});
            QVERIFY(!cm.checkPlan(p));
            const double routed = pc.routedExpert * double(s.model.moe.experts) *
                                  double(s.model.moeLayers()) * bytesPer(ParamGroup::Experts);
            const double expected = (totalBytes - routed) * G + routed * (G / ep);
            QVERIFY2(std::abs(summed(p) / expected - 1.0) < 1e-9,
                     qPrintable(QString::number(summed(p) / expected)));
        }
    }

    // Where the layers' types lie as a contiguous dense prefix and one attention kind (every model before
    // interleaved MoE and mixed attention), the stage counts equal the closed form the cost model used
    // before it counted layers by type: dense = clamp(first_dense_layers - begin, 0, n), the rest MoE.
    void stageCountsMatchClosedFormForContiguousModels() {
        QStringList files;
        for (const QString& dir : {kSamples + "/models", QStringLiteral(SHARDPLAN_TESTDATA_DIR "/hf")}) {
            QDirIterator it(dir, {"*.yaml", "*.config.json"}, QDir::Files);
            while (it.hasNext()) files << it.next();
        }
        int checked = 0;
        for (const QString& f : files) {
            auto loaded = loadModel(f.toStdString());
            if (!loaded) continue; // a fixture of an unsupported architecture
            const Model& m = loaded.value();
            bool contiguous = m.moe.layerStep == 1 && m.moe.denseLayerList.empty();
            for (int64_t i = 1; i < m.layers; ++i) contiguous &= m.layerAttention(i) == m.layerAttention(0);
            if (!contiguous) continue;
            ++checked;
            const int L = int(m.layers);
            const int firstDense = int(m.moe.present() ? m.moe.firstDenseLayers : L);
            const LayerAttention a = m.layerAttention(0);
            for (int pp = 1; pp <= std::min(L, 64); ++pp) {
                const auto types = stageLayerTypes(m, pp);
                const auto spans = pipelineStages(L, pp);
                QCOMPARE(int(types.size()), pp);
                for (int i = 0; i < pp; ++i) {
                    const auto [begin, n] = spans[size_t(i)];
                    const int dense = std::clamp(firstDense - begin, 0, n);
                    std::array<int, kLayerTypes> expect{};
                    expect[size_t(layerTypeOf(false, a))] = dense;
                    expect[size_t(layerTypeOf(true, a))] += n - dense;
                    QVERIFY2(types[size_t(i)] == expect,
                             qPrintable(QStringLiteral("%1 pp %2 stage %3").arg(f).arg(pp).arg(i)));
                }
            }
        }
        QCOMPARE_GE(checked, 15); // the sample models and most fixtures
    }

    // Layers by type as they lie. Llama 4 Maverick (tests/data/hf/llama-4-maverick.config.json: 48 layers,
    // interleave_moe_layer_step 2, so layers 1, 3, 5, ... are MoE) on pp 4: 12 layers a stage, 6 of them MoE
    // (the contiguous closed form with first_dense_layers 0 made all 12 MoE). Qwen3-Next-80B-A3B (48 layers,
    // layer_types linear, linear, linear, full repeating): 9 linear-attention and 3 full-attention layers a
    // stage. gpt-oss-120b (36 layers, sliding and full alternating from layer 0): stages of 9 layers from
    // layers 0, 9, 18, 27, so 5 sliding + 4 full, then 4 + 5, 5 + 4, 4 + 5.
    void stageCountsByLayerType() {
        auto hf = [](const char* file) {
            auto m = loadModel(SHARDPLAN_TESTDATA_DIR "/hf/" + std::string(file));
            if (!m) qFatal("%s", m.error().str().c_str());
            return m.value();
        };
        const Model mav = hf("llama-4-maverick.config.json");
        QCOMPARE(mav.layers, int64_t(48));
        for (const auto& st : stageLayerTypes(mav, 4)) {
            int moe = 0, dense = 0;
            for (int t = 0; t < kLayerTypes; ++t) (layerTypeIsMoe(t) ? moe : dense) += st[size_t(t)];
            QCOMPARE(moe, 6);
            QCOMPARE(dense, 6);
        }
        const Model next = hf("qwen3-next-80b-a3b.config.json");
        for (const auto& st : stageLayerTypes(next, 4)) {
            QCOMPARE(st[size_t(layerTypeOf(true, LayerAttention::Linear))], 9);
            QCOMPARE(st[size_t(layerTypeOf(true, LayerAttention::Full))], 3);
        }
        const Model oss = hf("gpt-oss-120b.config.json");
        const auto ossStages = stageLayerTypes(oss, 4);
        for (int i = 0; i < 4; ++i) {
            QCOMPARE(ossStages[size_t(i)][size_t(layerTypeOf(true, LayerAttention::Sliding))], i % 2 ? 4 : 5);
            QCOMPARE(ossStages[size_t(i)][size_t(layerTypeOf(true, LayerAttention::Full))], i % 2 ? 5 : 4);
        }
        // The cost model prices Maverick's stages the same way: its breakdown of a pp-4 plan shows 6 dense
        // and 6 MoE layers in the slowest stage.
        Scenario s = scenario(kSamples + "/scenarios/llama-3.1-70b-h200-1x8-chat.yaml");
        s.model = mav;
        const CostModel cm(s);
        Plan p = Plan::megatronChoices({4, 1, 2, 2, 1, 1});
        QVERIFY2(!cm.checkPlan(p), cm.checkPlan(p)->c_str());
        const Evaluation e = cm.explain(p);
        QCOMPARE(e.decode.moeLayers, 6);
        QCOMPARE(e.decode.denseLayers, 6);
    }

    // Qwen3-Next-80B-A3B on pp 4 (8 H200, dp 2, tp 1, experts replicated): a stage holds 9 linear-attention
    // and 3 full-attention MoE layers, each priced with its own projections (config.json: hidden 2048;
    // linear: 16 key heads and 32 value heads of 128, conv kernel 4; full: 16 heads and 2 KV heads of 256,
    // an output gate, q/k norms; 512 experts of 512 plus one shared expert of 512 with a gate):
    //   linear attention: in_proj_qkvz 2048 x (2 x 2048 + 2 x 4096) = 25,165,824, in_proj_ba 2048 x 64 =
    //     131,072, conv1d (2 x 2048 + 4096) x 4 = 32,768, dt_bias + A_log 64, norm 128, out_proj 4096 x 2048
    //     = 8,388,608: 33,718,464;
    //   full attention: q and gate 2048 x 8192 = 16,777,216, k and v 2048 x 1024 = 2,097,152, o 4096 x 2048
    //     = 8,388,608, q/k norms 512: 27,263,488;
    //   every layer: norms 4,096, router 2048 x 512 = 1,048,576, experts 512 x 3 x 2048 x 512 =
    //     1,610,612,736, shared expert 3 x 2048 x 512 + gate 2048 = 3,147,776: 1,614,813,184;
    //   9 x 1,648,531,648 + 3 x 1,642,076,672 = 19,763,014,848, plus the embedding (or the head) 151,936 x
    //   2048 = 311,164,928 on an end stage: 20,074,179,776 parameters, x 2 bytes (BF16) = 40,148,359,552 B.
    void hybridStageWeightsByLayerType() {
        const Scenario s = scenario(kSamples + "/scenarios/qwen3-next-80b-a3b-h200-1x8.yaml");
        const CostModel cm(s);
        Plan p = Plan::megatronChoices({4, 2, 1, 1, 1, 2});
        p.setChoice(Op::Experts, choice::ExpToken);
        QVERIFY2(!cm.checkPlan(p), cm.checkPlan(p)->c_str());
        const Metrics m = cm.evaluate(p);
        QVERIFY(m.valid);
        const double expect = 40148359552.0 / (1024.0 * 1024.0 * 1024.0);
        QVERIFY2(std::abs(m.weightsGiB / expect - 1.0) < 1e-12,
                 qPrintable(QString::number(m.weightsGiB / expect, 'g', 12)));
    }

    // gpt-oss-120b on pp 4 (chat serving: 1,000 in / 1,000 out, so a paged cache holds 1,000 + 500 = 1,500
    // tokens a sequence on average): its stages are not alike, stage 3 (layers 27-35) has 5 full-attention
    // and 4 sliding-window layers. KV per token per layer: 2 x 8 KV heads x 64 x 2 bytes = 2,048 B; a full
    // layer keeps 1,500 tokens, a sliding one its window of 128: 5 x 1,500 x 2,048 + 4 x 128 x 2,048 =
    // 16,408,576 B a sequence, for each of the pp micro-batches' sequences in flight. (One average over all
    // 36 layers would give 4.5 of each: 13,824,000 + 1,179,648 = 15,003,648 B.)
    void slidingWindowStageKvByLayerType() {
        const Scenario s = scenario(kSamples + "/scenarios/gpt-oss-120b-h100-1x8.yaml");
        const CostModel cm(s);
        const Plan p = Plan::megatronChoices({4, 2, 1, 2, 1, 1});
        QVERIFY2(!cm.checkPlan(p), cm.checkPlan(p)->c_str());
        const Metrics m = cm.evaluate(p);
        QVERIFY(m.feasible);
        const double perSeq = m.kvCacheGiB * 1024.0 * 1024.0 * 1024.0 / (4.0 * double(m.batch));
        QVERIFY2(std::abs(perSeq / 16408576.0 - 1.0) < 1e-12, qPrintable(QString::number(perSeq, 'f', 1)));
    }

    // More bandwidth or more FLOP/s is never slower; same input, same output.
    void monotoneAndDeterministic_data() { noCommunicationWithoutTpAndPp_data(); }
    void monotoneAndDeterministic() {
        QFETCH(QString, path);
        const Scenario base = scenario(path);
        std::mt19937 rng(7);
        const CostModel cm(base);
        std::vector<Scenario> faster;
        for (int k = 0; k < 4; ++k) {
            Scenario f = base;
            if (k == 0) f.cluster.gpu.hbmTBs *= 1.5;
            if (k == 1)
                for (auto& t : f.cluster.gpu.tflops) t *= 2.0;
            if (k == 2) f.cluster.intraNode.gbPerS *= 2.0;
            if (k == 3) f.cluster.interNode.gbPerS *= 2.0;
            faster.push_back(f);
        }
        int checked = 0;
        for (int i = 0; i < 40; ++i) {
            auto p = randomPlan(cm, rng);
            if (!p) continue;
            const Metrics a = cm.evaluate(*p);
            const Metrics again = CostModel(base).evaluate(*p);
            QCOMPARE(a.throughput, again.throughput);
            QCOMPARE(a.batch, again.batch);
            QCOMPARE(a.memoryPerGpuGiB, again.memoryPerGpuGiB);
            QCOMPARE(a.violations, again.violations);
            // at the same batch, every latency is no longer and throughput no lower
            Plan fixed = *p;
            fixed.batch = a.batch;
            const Metrics slow = cm.evaluate(fixed);
            for (const Scenario& f : faster) {
                const Metrics fast = CostModel(f).evaluate(fixed);
                QVERIFY(fast.throughput >= slow.throughput * (1 - 1e-12));
                QVERIFY(fast.tpotMs <= slow.tpotMs * (1 + 1e-12));
                QVERIFY(fast.ttftMs <= slow.ttftMs * (1 + 1e-12));
                // with the batch chosen again, a feasible plan stays feasible
                if (a.feasible) QVERIFY(CostModel(f).evaluate(*p).feasible);
            }
            ++checked;
        }
        QVERIFY(checked >= 10);
    }

    void invalidPlansRejected_data() {
        QTest::addColumn<QString>("scenario");
        QTest::addColumn<QString>("planText");
        QTest::addColumn<QString>("expected");
        const QString llama8 = kSamples + "/scenarios/llama-3.1-8b-h100-1x8.yaml";
        const QString ds = kSamples + "/scenarios/deepseek-v3-h100-32x8.yaml";
        QTest::addRow("gpus") << llama8 << "degrees: {tp: 4, dp: 1}"
                              << "pp*dp*tp = 4 does not match the 8 GPUs";
        QTest::addRow("valid control") << llama8 << "degrees: {tp: 8, dp: 1}\noperators: {attention: head}"
                                       << "";
        QTest::addRow("too many stages") << ds << "degrees: {pp: 128, dp: 1, tp: 2, ep: 2}"
                                         << "pp (128) exceeds the model's 61 layers";
        QTest::addRow("heads") << ds << "degrees: {pp: 1, dp: 1, tp: 256, ep: 256}"
                               << "needs tp (256) to divide the attention heads (128)";
        QTest::addRow("ep over experts") << kSamples + "/scenarios/moe-1.6t-h100-128x8.yaml"
                                         << "degrees: {pp: 1, dp: 1024, tp: 1, ep: 1024}"
                                         << "ep (1024) exceeds the 512 experts";
        QTest::addRow("tensor experts")
            << ds << "degrees: {pp: 1, dp: 32, tp: 8, ep: 8, etp: 32}\noperators: {experts: tensor}"
            << "experts: tensor shards every expert";
    }
    void invalidPlansRejected() {
        QFETCH(QString, scenario);
        QFETCH(QString, planText);
        QFETCH(QString, expected);
        const CostModel cm(::scenario(scenario));
        auto p = parsePlan(planText.toStdString(), "p.yaml");
        QVERIFY2(p.ok(), p.error().str().c_str());
        const auto why = cm.checkPlan(p.value());
        if (expected.isEmpty()) { // the valid control case
            QVERIFY(!why);
            return;
        }
        QVERIFY(why);
        QVERIFY2(QString::fromStdString(*why).contains(expected), why->c_str());
        const Metrics m = cm.evaluate(p.value());
        QVERIFY(!m.valid && !m.feasible);
        QCOMPARE(QString::fromStdString(m.violation), QString::fromStdString(*why));
    }

    // (a) DeepSeek-V3 decode on 12x8 H100, ~2,000 tokens of KV: data-parallel attention with wide expert
    // parallelism is several times faster than TP16 (SGLang, lmsys.org/blog/2025-05-05-large-scale-ep: 5.2x;
    // "up to 5x" in its introduction). The blog's TP16 ran with DP attention ("a TP size of 16 and DP
    // attention", tp16-dp-attention.yaml); vanilla `--tp 16` keeps attention tensor-parallel (tp16.yaml).
    void factDpAttentionBeatsTp16() {
        const Scenario s = scenario(kFacts + "deepseek-v3-decode-h100-12x8.yaml");
        const Plan wide = plan(kFacts + "dp-attention-wide-ep.yaml"),
                   tp16dpa = plan(kFacts + "tp16-dp-attention.yaml");
        const CostModel cm(s);
        const Metrics dpa = cm.evaluate(wide), tp16 = cm.evaluate(plan(kFacts + "tp16.yaml")),
                      tp = cm.evaluate(tp16dpa);
        QVERIFY(dpa.feasible && tp16.feasible && tp.feasible);
        const double vanilla = dpa.throughput / tp16.throughput, own = dpa.throughput / tp.throughput;
        qInfo("at the model's batches and kernels: DP attention + EP96 %.0f tok/s (batch %lld); TP16 with DP "
              "attention %.0f (batch %lld): %.1fx; vanilla TP16 %.0f: %.1fx",
              dpa.throughput, (long long)dpa.batch, tp.throughput, (long long)tp.batch, own, tp16.throughput,
              vanilla);
        QVERIFY(dpa.throughput > tp.throughput && tp.throughput > tp16.throughput);
        // Vanilla TP16 keeps the MLA latent cache whole on each of its 16 GPUs, so the ~29 GiB its weights
        // leave of vLLM's 0.9 of the 79.6 GiB hold about 224 sequences of 2,000 tokens, and every step
        // streams 40.2 GiB of weights and the 29.3 GiB cache: at 90% and 79% of 3.35 TB/s that is 14.3 +
        // 11.9 = 26.2 ms, a bound of about 8,550 tok/s a replica (534 a GPU) with free communication and
        // kernels, where DP attention at SGLang's measured 22,282 tok/s a node (2,785 a GPU) is already 5.2x.
        QVERIFY(vanilla > 5.2);
        // The comparison SGLang measured, with the two things its runs fixed taken from sources, not fitted:
        //  - the batches: 256 sequences a GPU with EP (the blog's decode table, "SGLang (Default)"), and the
        //    blog's "4x larger batch sizes enabled by EP" for TP16, so 64 (the model's own memory account
        //    holds 104 at vLLM's 0.9 of the 81,559 MiB; SGLang's --mem-fraction-static of 0.79 at tp >= 16,
        //    server_args.py, leaves room for about 51);
        //  - the experts' kernel: TP16 without DeepEP runs the Triton fused-MoE kernel, which vLLM's
        //    benchmark (vllm-project/vllm pull request #13932, H100, DeepSeek-V3 FP8, E 256, K 7,168, top-8)
        //    times at 1,810 and 1,893 us for the 1.41 GB of TP8 shards at 512 and 1,024 tokens: 0.232 and
        //    0.222 of 3.35 TB/s, so fused_moe_memory 0.23 (the closest shapes to TP16's 256-wide shards and
        //    ~1,000 gathered tokens). EP96 runs DeepGEMM behind DeepEP, at the default factors (the SGLang
        //    EP72 decode row of measurements.yaml is within 1% with them).
        Scenario ran = s;
        ran.workload.fixedBatch = true;
        ran.workload.batch = 256;
        const Metrics dpaRan = CostModel(ran).evaluate(wide);
        ran.workload.batch = 64;
        ran.cluster.efficiency.fusedMoeMemory = 0.23;
        const Metrics tpRan = CostModel(ran).evaluate(tp16dpa);
        QVERIFY(dpaRan.feasible && tpRan.feasible);
        const double ratio = dpaRan.throughput / tpRan.throughput;
        qInfo("as SGLang ran them: DP attention + EP96 at 256 a GPU %.0f tok/s (%.0f a GPU; SGLang measured "
              "2,785 with EP72); TP16 with DP attention at 64 a GPU with the Triton kernel's stream %.0f "
              "(%.0f a GPU): %.1fx",
              dpaRan.throughput, dpaRan.throughput / 96.0, tpRan.throughput, tpRan.throughput / 96.0, ratio);
        QVERIFY2(ratio > 3.0 && ratio < 8.0, qPrintable(QString::number(ratio)));
        // Either alone is not enough: at 64 a GPU with the default kernel factors 1.8x, at the model's own
        // 104 with the Triton kernel's stream under 3x (2.6x). At the model's batches with the default factors
        // (today's fused-MoE kernels, at the Hopper fit's 0.9) the ratio is 1.5x: what a planner asked about
        // today's engines with tuned kernels should answer, and no fact of the 2025 runs.
        Scenario kernelOnly = s;
        kernelOnly.cluster.efficiency.fusedMoeMemory = 0.23;
        ran.cluster.efficiency.fusedMoeMemory = 0;
        QVERIFY(dpaRan.throughput / CostModel(ran).evaluate(tp16dpa).throughput < 3.0);
        QVERIFY(dpa.throughput / CostModel(kernelOnly).evaluate(tp16dpa).throughput < 3.0);
    }

    // (b) Llama-2-70B FP8 on one 8xH100 node at maximum throughput: TP2 x 4 replicas beats TP8 (MLPerf v4.1).
    void factTp2x4BeatsTp8() {
        const CostModel cm(scenario(kFacts + "llama-2-70b-fp8-h100-1x8.yaml"));
        const Metrics tp2 = cm.evaluate(plan(kFacts + "tp2x4.yaml"));
        const Metrics tp8 = cm.evaluate(plan(kFacts + "tp8.yaml"));
        QVERIFY(tp2.feasible && tp8.feasible);
        qInfo("TP2x4 %.0f tok/s, TP8 %.0f tok/s", tp2.throughput, tp8.throughput);
        QVERIFY(tp2.throughput > tp8.throughput);
    }

    // (c) Llama-3.1-405B FP8 on one 8x H200 node (NVIDIA's post on pipeline parallelism in TensorRT-LLM,
    // developer.nvidia.com/blog, "Boosting Llama 3.1 405B Throughput by Another 1.5x on NVIDIA H200 Tensor
    // Core GPUs and NVLink Switch"): pipeline parallelism gives the most throughput at full load, tensor
    // parallelism the lowest latency for one user.
    void factPipelineForThroughputTensorForLatency() {
        Scenario s;
        s.model = loadModel((kSamples + "/models/llama-3.1-405b.yaml").toStdString()).value();
        s.model.weights = s.model.kvCache = Dtype::FP8;
        s.cluster = loadCluster((kSamples + "/clusters/h200-1x8.yaml").toStdString()).value();
        s.workload.phase = Phase::Serving;
        s.workload.inputTokens = s.workload.outputTokens = 2048;
        const CostModel cm(s);
        const Plan tp8 = Plan::megatronChoices({1, 1, 8, 8, 1, 1}),
                   pp8 = Plan::megatronChoices({8, 1, 1, 1, 1, 1});
        const Metrics tpMax = cm.evaluate(tp8), ppMax = cm.evaluate(pp8);
        QVERIFY(tpMax.feasible && ppMax.feasible);
        s.workload.fixedBatch = true;
        s.workload.batch = 1;
        const CostModel one(s);
        const Metrics tp1 = one.evaluate(tp8), pp1 = one.evaluate(pp8);
        qInfo("full load: PP8 %.0f tok/s, TP8 %.0f; batch 1: TP8 TPOT %.1f ms, PP8 %.1f ms", ppMax.throughput,
              tpMax.throughput, tp1.tpotMs, pp1.tpotMs);
        QVERIFY(ppMax.throughput > tpMax.throughput);
        QVERIFY(tp1.tpotMs < pp1.tpotMs);
    }

    // Contiguous balanced stages, the extra layers in the middle: 61 layers on 4 stages = 15 + 16 + 15 + 15.
    void pipelineStagesBalanced() {
        using Spans = std::vector<std::pair<int, int>>;
        QCOMPARE(pipelineStages(61, 4), (Spans{{0, 15}, {15, 16}, {31, 15}, {46, 15}}));
        QCOMPARE(pipelineStages(80, 1), (Spans{{0, 80}}));
        QCOMPARE(pipelineStages(80, 3), (Spans{{0, 27}, {27, 27}, {54, 26}})); // two extra on three stages
        QCOMPARE(pipelineStages(126, 8),
                 (Spans{{0, 15}, {15, 16}, {31, 16}, {47, 16}, {63, 16}, {79, 16}, {95, 16}, {111, 15}}));
    }

    void batchIsLargestFeasible() {
        // The chosen batch meets the SLOs and fits; one more does not.
        const Scenario s = scenario(kSamples + "/scenarios/llama-3.1-8b-h100-1x8.yaml");
        const CostModel cm(s);
        const Plan p = cm.megatronPlan();
        const Metrics m = cm.evaluate(p);
        QVERIFY(m.feasible && m.batch > 1);
        Plan more = p;
        more.batch = m.batch + 1;
        QVERIFY(!cm.evaluate(more).feasible);
        more.batch = m.batch;
        QVERIFY(cm.evaluate(more).feasible);
        QVERIFY(m.memoryPerGpuGiB <= m.capacityGiB);
        QVERIFY(m.tpotMs <= s.workload.tpotMs && m.ttftMs <= s.workload.ttftMs);
        QVERIFY(m.rooflineFraction > 0 && m.rooflineFraction < 1);
    }

    void megatronPlanIsValidEverywhere_data() { noCommunicationWithoutTpAndPp_data(); }
    void megatronPlanIsValidEverywhere() {
        QFETCH(QString, path);
        const CostModel cm(scenario(path));
        const Plan p = cm.megatronPlan();
        QVERIFY2(!cm.checkPlan(p), cm.checkPlan(p)->c_str());
        QVERIFY(p.degrees.tp <= cm.scenario().cluster.gpusPerNode);
        QVERIFY(cm.evaluate(p).valid);
    }

    // checkChoice's fast verdict (choiceAllowed) is its message path's (detail::choiceProblem) for every
    // operator and choice (and one out of range on each side) of every sample's model, at tp 1 to 96, unpinned and
    // with each choice pinned in turn; both verdicts occur.
    void choiceAllowedAgrees_data() { noCommunicationWithoutTpAndPp_data(); }
    void choiceAllowedAgrees() {
        QFETCH(QString, path);
        Scenario s = scenario(path);
        int allowed = 0, refused = 0;
        for (int i = 0; i < kOpCount; ++i) {
            const Op op = Op(i);
            const int n = int(choiceNames(op).size());
            for (int pin = -1; pin < n; ++pin) {
                s.constraints.pinned[size_t(i)] = int8_t(pin);
                for (int tp = 1; tp <= 96; ++tp) {
                    const Degrees d{1, 1, tp, 1, 1, 1};
                    for (int c = -1; c <= n; ++c) {
                        const bool fast = choiceAllowed(s, d, op, c);
                        const auto why = detail::choiceProblem(s, d, op, c);
                        QVERIFY2(fast == !why, qPrintable(QString("%1 choice %2 at tp %3, pin %4: %5")
                                                              .arg(QString::fromLatin1(kOpNames[size_t(i)].data()))
                                                              .arg(c)
                                                              .arg(tp)
                                                              .arg(pin)
                                                              .arg(why ? why->c_str() : "allowed")));
                        QCOMPARE(checkChoice(s, d, op, c), why);
                        (fast ? allowed : refused)++;
                    }
                }
            }
            s.constraints.pinned[size_t(i)] = -1;
        }
        QVERIFY(allowed > 0 && refused > 0);
    }

    // An infeasible plan's reasons are worded with std::to_chars (Sentence), as printf would word them: the
    // figures of the three conversions the cost model uses, over magnitudes and halfway cases, and the
    // sentences of a plan that misses every limit, rebuilt here with snprintf from its metrics.
    void violationWording() {
        std::mt19937_64 rng(7);
        for (int i = 0; i < 20000; ++i) {
            const double v = i % 3 == 0   ? std::ldexp(double(rng() % 100000000), -int(rng() % 40))
                             : i % 3 == 1 ? double(rng() % 100000) / 10.0 + 0.05
                                          : std::pow(10.0, double(rng() % 2000) / 100.0 - 5.0);
            char a[512];
            std::snprintf(a, sizeof a, "%.1f %.3g %.0f %lld", v, v, v, (long long)(rng() % 1000000) - 500000);
            long long n = 0;
            std::sscanf(std::strrchr(a, ' ') + 1, "%lld", &n);
            Sentence b;
            b << Fixed{v, 1} << " " << General{v, 3} << " " << Fixed{v, 0} << " " << n;
            QCOMPARE(b.take(), std::string(a));
        }
        Scenario s = scenario(kSamples + "/scenarios/llama-3.1-70b-h100-1x8-chat.yaml");
        s.workload.tpotMs = 0.5, s.workload.ttftMs = 0.5; // no step is this fast
        s.workload.fixedBatch = true, s.workload.batch = 1000000; // nor fits this batch, nor its budget
        s.constraints.memoryRule = MemoryRule::Vllm;
        const Metrics m = CostModel(s).evaluate(CostModel(s).megatronPlan());
        QVERIFY(m.valid && !m.feasible);
        QCOMPARE(int(m.violations.size()), 4);
        char memory[240], budget[200], ttft[160], tpot[160];
        std::snprintf(memory, sizeof memory,
                      "memory: %.1f GiB per GPU needed at batch %lld, %.1f GiB usable (KV cache %.1f GiB, pool %.1f "
                      "GiB by %s %.3g of %.1f)",
                      m.memoryPerGpuGiB, (long long)m.batch, m.capacityGiB, m.kvCacheGiB, m.kvPoolGiB,
                      "vllm gpu_memory_utilization",
                      m.memoryFraction, m.gpuMemoryGiB);
        std::snprintf(budget, sizeof budget, "prefill budget: a step at batch %lld needs %.0f tokens, the budget is %.0f",
                      (long long)m.batch, 1e6 + 1e6 * double(s.workload.inputTokens) / double(s.workload.outputTokens),
                      double(m.prefillBudget));
        std::snprintf(ttft, sizeof ttft, "TTFT %.1f ms at batch %lld exceeds the SLO of %.3g ms", m.ttftMs,
                      (long long)m.batch, s.workload.ttftMs);
        std::snprintf(tpot, sizeof tpot, "TPOT %.1f ms at batch %lld exceeds the SLO of %.3g ms", m.tpotMs,
                      (long long)m.batch, s.workload.tpotMs);
        QCOMPARE(m.violations[0], std::string(memory));
        QCOMPARE(m.violations[1], std::string(budget));
        QCOMPARE(m.violations[2], std::string(ttft));
        QCOMPARE(m.violations[3], std::string(tpot));
    }

    // DeepSeek-V3 on 18x8 B200 (chat: 1,000 in / 1,000 out), data-parallel attention over 72 ranks, MTP x1:
    // the busiest rank's prefill is one whole prompt (the 1,000-token chunk), prompts x preCrit / pre = 1 in
    // exact arithmetic, which the doubles gave as 1.0000000000000002 at batches 136 and 138, and ceil counted
    // two prompts there: the attention core's prefill twice, TPOT 51.17 ms at 136 against 49.97 at 137. Each
    // batch's step must take longer than the one below it.
    void wholeShareRoundsToItself() {
        const Scenario s = scenario(kSamples + "/scenarios/deepseek-v3-b200-18x8.yaml");
        auto plan = parsePlan("version: 1\nkind: plan\n"
                              "degrees: {pp: 2, dp: 72, tp: 1, ep: 8, etp: 1, edp: 9}\n"
                              "speculative: {method: mtp, draft_tokens: 1}\n",
                              "test");
        QVERIFY2(plan.ok(), plan.error().str().c_str());
        const CostModel model(s);
        double prev = 0;
        for (int64_t b = 120; b <= 160; ++b) {
            Plan p = plan.value();
            p.batch = b;
            const Metrics m = model.evaluate(p);
            QVERIFY(m.valid);
            QVERIFY2(
                m.stepMs > prev,
                qPrintable(
                    QString("batch %1: step %2 ms, %3 at the batch below").arg(b).arg(m.stepMs).arg(prev)));
            prev = m.stepMs;
        }
    }

    // The secant batch search must choose exactly the batch plain bisection chooses (and so the same
    // metrics, bit for bit), on plans drawn from every sample's search space, at the sample's SLOs and at
    // tighter and looser ones (other boundaries, other shapes of the SLO ratio).
    void batchSearchesAgree_data() { noCommunicationWithoutTpAndPp_data(); }
    void batchSearchesAgree() {
        QFETCH(QString, path);
        const Scenario base = scenario(path);
        int compared = 0, searched = 0;
        for (const double scale : {1.0, 0.4, 3.0}) {
            Scenario s = base;
            s.workload.tpotMs *= scale, s.workload.ttftMs *= scale;
            CostModel secant(s), bisect(s);
            bisect.setBatchSearch(BatchSearch::Bisection);
            const SearchSpace space(s);
            if (space.empty()) continue;
            Rng rng(uint64_t(1000 + compared));
            for (int i = 0; i < 150; ++i) {
                const std::vector<int> x = i % 2 ? space.sampleByDecision(rng) : space.sample(rng);
                if (x.empty()) continue;
                const Plan p = space.toPlan(x);
                const Metrics a = secant.evaluate(p), b = bisect.evaluate(p);
                QCOMPARE(a.valid, b.valid);
                QCOMPARE(a.batch, b.batch);
                QCOMPARE(a.throughput, b.throughput); // exact: the same batch through the same arithmetic
                QCOMPARE(a.tpotMs, b.tpotMs);
                QCOMPARE(a.ttftMs, b.ttftMs);
                QCOMPARE(a.violations, b.violations);
                ++compared, searched += a.valid && a.batch > 1;
            }
        }
        QVERIFY(compared >= 300);
        // The comparison exercises the search (a 32K-token prefill's token budget holds one prompt per step,
        // so its samples never search; the decode and serving samples do).
        if (base.workload.phase != Phase::Prefill)
            QVERIFY2(searched > 50, qPrintable(QString::number(searched)));
    }
};

QTEST_GUILESS_MAIN(TestCost)
#include "tst_cost.moc"
