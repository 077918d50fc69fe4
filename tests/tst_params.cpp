// Parameter counts derived from the structure, against the published figures.
#include "core/io/formats.h"

#include <QTest>

using namespace sp;

class TestParams : public QObject {
    Q_OBJECT
private slots:
    void published_data() {
        QTest::addColumn<QString>("file");
        QTest::addColumn<double>("total");
        QTest::addColumn<double>("totalTolerance"); ///< absolute; 0: 1% of the total
        QTest::addColumn<double>("active");
        QTest::addColumn<double>("activeTolerance");
        QTest::addColumn<int>("convention"); ///< how the source counts "active": see below
        // Published: Llama 3.1 model card (70.6B, 405.9B in the HF safetensors metadata); Mixtral-8x22B
        // announcement (141B total, 39B active); DeepSeek-V3 technical report (671B total, 37B activated).
        // Totals are published to 3-4 significant digits: 1%. Two-digit "active" figures (37B, 39B) are
        // rounded to the billion, so the half-unit of that rounding is the tolerance.
        QTest::addRow("llama-3.1-70b")
            << "samples/models/llama-3.1-70b.yaml" << 70.6e9 << 0.0 << 0.0 << 0.0 << 0;
        QTest::addRow("llama-3.1-405b")
            << "samples/models/llama-3.1-405b.yaml" << 405.9e9 << 0.0 << 0.0 << 0.0 << 0;
        QTest::addRow("mixtral-8x22b")
            << "samples/models/mixtral-8x22b.yaml" << 141e9 << 0.0 << 39e9 << 0.5e9 << 0;
        QTest::addRow("deepseek-v3") << "samples/models/deepseek-v3.yaml" << 671e9 << 0.0 << 37e9 << 0.5e9
                                     << 0;
        QTest::addRow("hf deepseek-v3")
            << "tests/data/hf/deepseek-v3.config.json" << 671e9 << 0.0 << 37e9 << 0.5e9 << 0;
        QTest::addRow("hf mixtral") << "tests/data/hf/mixtral-8x22b.config.json" << 141e9 << 0.0 << 39e9
                                    << 0.5e9 << 0;
        QTest::addRow("hf llama-3.1-70b")
            << "tests/data/hf/llama-3.1-70b.config.json" << 70.6e9 << 0.0 << 0.0 << 0.0 << 0;
        // Conventions for "active": 0 as ParamCounts::active (the LM head, not the input embedding); 1 with
        // the input embedding as well (Meta's Llama 4 "17B active"); 2 without the LM head either, i.e. the
        // transformer blocks only (Qwen's "non-embedding" count, Z.ai's GLM-4.5 "32B active", Qwen3-Next's
        // "3B activated"). 3: the total includes the MTP layers (DeepSeek-V3.2's 685B is the checkpoint: main
        // model + MTP). Qwen/Qwen3-8B model card: "Number of Parameters: 8.2B; Number of Parameters
        // (Non-Embedding): 6.95B".
        QTest::addRow("hf qwen3-8b") << "tests/data/hf/qwen3-8b.config.json" << 8.2e9 << 0.05e9 << 6.95e9
                                     << 0.005e9 << 2;
        // Mistral AI, "Announcing Mistral 7B" (2023-09-27): "a 7.3B parameter model".
        QTest::addRow("hf mistral-7b")
            << "tests/data/hf/mistral-7b-v0.1.config.json" << 7.3e9 << 0.0 << 0.0 << 0.0 << 0;
        // mistralai/Mistral-Small-24B-Instruct-2501 model card: "24B parameters" (to the billion).
        QTest::addRow("hf mistral-small-24b")
            << "tests/data/hf/mistral-small-24b.config.json" << 24e9 << 0.5e9 << 0.0 << 0.0 << 0;
        // meta-llama/Llama-4-Scout-17B-16E model card: 17B active, 109B total; Maverick: 17B active, 400B
        // total (both with the vision encoder, which Model::visionParams holds).
        QTest::addRow("hf llama-4-scout")
            << "tests/data/hf/llama-4-scout.config.json" << 109e9 << 0.0 << 17e9 << 0.5e9 << 1;
        QTest::addRow("hf llama-4-maverick")
            << "tests/data/hf/llama-4-maverick.config.json" << 400e9 << 0.0 << 17e9 << 0.5e9 << 1;
        // OpenAI, "gpt-oss-120b & gpt-oss-20b Model Card" (2025-08-05), Table 1: 116.83B total, 5.13B active;
        // 20.91B total, 3.61B active (their active count includes the unembedding, not the embedding:
        // convention 0).
        QTest::addRow("hf gpt-oss-120b")
            << "tests/data/hf/gpt-oss-120b.config.json" << 116.83e9 << 0.0 << 5.13e9 << 0.01e9 << 0;
        QTest::addRow("hf gpt-oss-20b")
            << "tests/data/hf/gpt-oss-20b.config.json" << 20.91e9 << 0.0 << 3.61e9 << 0.01e9 << 0;
        // zai-org/GLM-4.5 model card: "355 billion total parameters and 32 billion active parameters".
        QTest::addRow("hf glm-4.5") << "tests/data/hf/glm-4.5.config.json" << 355e9 << 0.0 << 32e9 << 0.5e9
                                    << 2;
        // deepseek-ai/DeepSeek-V3.2-Exp: the checkpoint's 685B (with MTP, as DeepSeek-V3's 671B + 14B); 37B
        // activated as V3 (the indexer adds 0.85B).
        QTest::addRow("hf deepseek-v3.2")
            << "tests/data/hf/deepseek-v3.2-exp.config.json" << 685e9 << 0.0 << 37e9 << 0.5e9 << 3;
        // MiniMaxAI/MiniMax-M2 model card: "230 billion total parameters with 10 billion active parameters".
        QTest::addRow("hf minimax-m2")
            << "tests/data/hf/minimax-m2.config.json" << 230e9 << 0.0 << 10e9 << 0.5e9 << 0;
        // Qwen/Qwen3-Next-80B-A3B-Instruct model card: "80B parameters in total and 3B activated".
        QTest::addRow("hf qwen3-next")
            << "tests/data/hf/qwen3-next-80b-a3b.config.json" << 80e9 << 0.0 << 3e9 << 0.5e9 << 2;
    }
    void published() {
        QFETCH(QString, file);
        QFETCH(double, total);
        QFETCH(double, totalTolerance);
        QFETCH(double, active);
        QFETCH(double, activeTolerance);
        QFETCH(int, convention);
        const QString root = QStringLiteral(SHARDPLAN_SAMPLES_DIR "/..");
        auto m = loadModel((root + "/" + file).toStdString());
        QVERIFY2(m.ok(), m.error().str().c_str());
        const ParamCounts p = countParams(m.value());
        const double t = p.total + (convention == 3 ? p.mtp : 0.0);
        const double tolerance = totalTolerance > 0 ? totalTolerance : 0.01 * total;
        QVERIFY2(std::abs(t - total) <= tolerance, qPrintable(QString("total %1").arg(t / 1e9)));
        const double a =
            p.active + (convention == 1 ? p.embedding : 0.0) - (convention == 2 ? p.lmHead : 0.0);
        if (active > 0)
            QVERIFY2(std::abs(a - active) <= activeTolerance, qPrintable(QString("active %1").arg(a / 1e9)));
    }

    // Qwen3-Next-80B-A3B to the parameter: 79,674,391,296 total and 3,874,929,408 active with the embedding,
    // from the checkpoint's safetensors headers as quoted in a public parameter-count test (config:
    // https://huggingface.co/Qwen/Qwen3-Coder-Next/blob/main/config.json, same dimensions). Our count leaves
    // out the MTP module and nothing else, so it must come within 0.05%.
    void qwen3NextExact() {
        auto m = loadModel(SHARDPLAN_TESTDATA_DIR "/hf/qwen3-next-80b-a3b.config.json");
        QVERIFY2(m.ok(), m.error().str().c_str());
        const ParamCounts p = countParams(m.value());
        QVERIFY2(std::abs(p.total - 79'674'391'296.0) / 79'674'391'296.0 < 5e-4,
                 qPrintable(QString::number(p.total, 'f', 0)));
        const double activeWithEmbedding = p.active + p.embedding;
        QVERIFY2(std::abs(activeWithEmbedding - 3'874'929'408.0) / 3'874'929'408.0 < 5e-4,
                 qPrintable(QString::number(activeWithEmbedding, 'f', 0)));
    }

    // A hand count on a tiny model: hidden 8, 2 layers, 2 heads x 4, 1 KV head, ffn 16, vocab 10, untied.
    void handCount() {
        Model m;
        m.layers = 2;
        m.hidden = 8;
        m.vocab = 10;
        m.attention.heads = 2;
        m.attention.kvHeads = 1;
        m.attention.headDim = 4;
        m.ffn = 16;
        const ParamCounts p = countParams(m);
        // q 8x8 + k 8x4 + v 8x4 + o 8x8 = 192; norms 16; ffn 3*8*16 = 384; per layer 592
        QCOMPARE(p.denseLayer, 592.0);
        // 2 layers + embedding 80 + head 80 + final norm 8
        QCOMPARE(p.total, 2 * 592.0 + 80 + 80 + 8);
        QCOMPARE(p.active, p.total - 80); // dense: everything but the embedding table
        m.moe = {4, 2, 16, 1,    8,
                 1, 1, {}, false}; // 4 experts top-2 of ffn 16, one shared of ffn 8, first layer dense
        const ParamCounts q = countParams(m);
        // MoE layer: attention 192 + norms 16 + router 8*4 + 4 experts * 384 + shared 3*8*8 = 1968
        QCOMPARE(q.moeLayer, 1968.0);
        QCOMPARE(q.moeLayerActive, 192 + 16 + 32 + 2 * 384 + 192.0);
        QCOMPARE(q.total, 592 + 1968 + 168.0);
    }

    // The tiny model of handCount with the MoE on every second layer (layer_step 2): layer 0 dense (592),
    // layer 1 MoE (1968); then a linear-attention layer in place of the first one, key/value heads 1 x 4 / 2
    // x 4, kernel 4: in_proj_qkvz 8 x (2*4 + 2*8) = 192, in_proj_ba 8 x 4 = 32, conv (8 + 8) x 4 = 64,
    // dt_bias and A_log 2 + 2, norm 4, out_proj 8 x 8 = 64: 360 parameters instead of the 192 of attention.
    void handCountInterleavedAndLinear() {
        Model m;
        m.layers = 2;
        m.hidden = 8;
        m.vocab = 10;
        m.attention.heads = 2;
        m.attention.kvHeads = 1;
        m.attention.headDim = 4;
        m.ffn = 16;
        m.moe = {4, 2, 16, 1, 8, 0, 2, {}, false};
        QCOMPARE(m.moeLayers(), int64_t(1));
        QVERIFY(!m.isMoeLayer(0) && m.isMoeLayer(1));
        const ParamCounts p = countParams(m);
        QCOMPARE(p.total, 592 + 1968 + 168.0);
        m.attention.linear = {1, 2, 4, 4, 4};
        m.attentionPattern = {LayerAttention::Linear, LayerAttention::Full};
        const ParamCounts q = countParams(m);
        QCOMPARE(q.linearAttention, 360.0);
        QCOMPARE(q.total, p.total - 192 + 360);
    }

    // moeLayers() is a closed form; it must count exactly the layers isMoeLayer() says are MoE, for every
    // mix of dense prefix, interleave step and dense-layer list (with repeats and out-of-range entries).
    void moeLayersCountsWhatIsMoeLayerSays() {
        Model m;
        m.moe.experts = 8, m.moe.topK = 2, m.moe.expertFfn = 16;
        int cases = 0;
        for (int64_t L : {0, 1, 2, 7, 48, 61})
            for (int64_t first : {0, 1, 3, 60, 100})
                for (int64_t step : {1, 2, 3, 4})
                    for (const std::vector<int64_t>& list : std::vector<std::vector<int64_t>>{
                             {}, {0}, {3, 3, 47}, {5, -1, 200, 11, 5}, {1, 3, 5, 7, 9, 11}}) {
                        m.layers = L, m.moe.firstDenseLayers = first, m.moe.layerStep = step;
                        m.moe.denseLayerList = list;
                        int64_t loop = 0;
                        for (int64_t i = 0; i < L; ++i) loop += m.isMoeLayer(i);
                        QCOMPARE(m.moeLayers(), loop);
                        ++cases;
                    }
        QCOMPARE(cases, 6 * 5 * 4 * 5);
        m.moe.experts = 0; // a dense model has none
        QCOMPARE(m.moeLayers(), int64_t(0));
    }
};

QTEST_GUILESS_MAIN(TestParams)
#include "tst_params.moc"
