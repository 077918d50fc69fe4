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
        QTest::addColumn<double>("active");
        QTest::addColumn<double>("activeTolerance");
        // Published: Llama 3.1 model card (70.6B, 405.9B in the HF safetensors metadata); Mixtral-8x22B announcement
        // (141B total, 39B active); DeepSeek-V3 technical report (671B total, 37B activated).
        // Totals are published to 3-4 significant digits: 1%. Two-digit "active" figures (37B, 39B) are rounded to
        // the billion, so the half-unit of that rounding is the tolerance.
        QTest::addRow("llama-3.1-70b") << "samples/models/llama-3.1-70b.yaml" << 70.6e9 << 0.0 << 0.0;
        QTest::addRow("llama-3.1-405b") << "samples/models/llama-3.1-405b.yaml" << 405.9e9 << 0.0 << 0.0;
        QTest::addRow("mixtral-8x22b") << "samples/models/mixtral-8x22b.yaml" << 141e9 << 39e9 << 0.5e9;
        QTest::addRow("deepseek-v3") << "samples/models/deepseek-v3.yaml" << 671e9 << 37e9 << 0.5e9;
        QTest::addRow("hf deepseek-v3") << "tests/data/hf/deepseek-v3.config.json" << 671e9 << 37e9 << 0.5e9;
        QTest::addRow("hf mixtral") << "tests/data/hf/mixtral-8x22b.config.json" << 141e9 << 39e9 << 0.5e9;
        QTest::addRow("hf llama-3.1-70b") << "tests/data/hf/llama-3.1-70b.config.json" << 70.6e9 << 0.0 << 0.0;
    }
    void published() {
        QFETCH(QString, file);
        QFETCH(double, total);
        QFETCH(double, active);
        QFETCH(double, activeTolerance);
        const QString root = QStringLiteral(SHARDPLAN_SAMPLES_DIR "/..");
        auto m = loadModel((root + "/" + file).toStdString());
        QVERIFY2(m.ok(), m.error().str().c_str());
        const ParamCounts p = countParams(m.value());
        QVERIFY2(std::abs(p.total - total) / total < 0.01, qPrintable(QString("total %1").arg(p.total / 1e9)));
        if (active > 0)
            QVERIFY2(std::abs(p.active - active) <= activeTolerance, qPrintable(QString("active %1").arg(p.active / 1e9)));
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
        m.moe = {4, 2, 16, 1, 8, 1};       // 4 experts top-2 of ffn 16, one shared of ffn 8, first layer dense
        const ParamCounts q = countParams(m);
        // MoE layer: attention 192 + norms 16 + router 8*4 + 4 experts * 384 + shared 3*8*8 = 1968
        QCOMPARE(q.moeLayer, 1968.0);
        QCOMPARE(q.moeLayerActive, 192 + 16 + 32 + 2 * 384 + 192.0);
        QCOMPARE(q.total, 592 + 1968 + 168.0);
    }
};

QTEST_GUILESS_MAIN(TestParams)
#include "tst_params.moc"
