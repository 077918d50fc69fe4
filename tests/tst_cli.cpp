// The shardplan command line: exit codes, human and JSON output.
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include "clirun.h"

#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

namespace {
using sp::test::Run;
using sp::test::shardplan;
const QString kSamples = QStringLiteral(SHARDPLAN_SAMPLES_DIR);
} // namespace

class TestCli : public QObject {
    Q_OBJECT
private slots:
    void usageErrors() {
        QCOMPARE(shardplan({}).code, 2);
        QCOMPARE(shardplan({"frobnicate"}).code, 2);
        const Run r = shardplan({"validate"});
        QCOMPARE(r.code, 2);
        QVERIFY(r.err.contains("usage:"));
        QCOMPARE(shardplan({"validate", "--bogus", "x"}).code, 2);
        QCOMPARE(shardplan({"validate", "--kind", "planet", "x"}).code, 2);
    }

    void validateSamples() {
        const Run r = shardplan({"validate", kSamples + "/models/llama-3.1-70b.yaml",
                                 kSamples + "/clusters/h100-4x8.yaml",
                                 kSamples + "/scenarios/deepseek-v3-h100-32x8.yaml"});
        QVERIFY2(r.code == 0, qPrintable(r.err));
        QCOMPARE(r.out.count('\n'), 3);
        QVERIFY(r.out.contains("70.55B parameters"));
        QVERIFY(r.out.contains("32 GPUs"));
    }

    void validateJson() {
        QTemporaryDir dir;
        const QString bad = dir.filePath("bad.yaml");
        QFile f(bad);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("kind: model\nlayers: 3\nhidden: -5\n");
        f.close();
        const Run r = shardplan({"validate", "--json", kSamples + "/models/deepseek-v3.yaml", bad});
        QCOMPARE(r.code, 1);
        const QStringList lines = r.out.trimmed().split('\n');
        QCOMPARE(lines.size(), 2);
        const QJsonObject good = QJsonDocument::fromJson(lines[0].toUtf8()).object();
        QCOMPARE(good["kind"].toString(), QString("model"));
        QVERIFY(good["ok"].toBool());
        QVERIFY(good["error"].isNull());
        // DeepSeek-V3 technical report: 671B total, 37B activated
        QVERIFY(std::abs(good["params_total"].toDouble() - 671e9) < 0.01 * 671e9);
        QVERIFY(std::abs(good["params_active"].toDouble() - 37e9) < 0.5e9);
        const QJsonObject e = QJsonDocument::fromJson(lines[1].toUtf8()).object();
        QVERIFY(!e["ok"].toBool());
        QVERIFY2(e["error"].toString().contains("bad.yaml:3:9: hidden: expected an integer from 1"),
                 qPrintable(e["error"].toString()));
    }

    void evaluateJson() {
        const Run r = shardplan(
            {"evaluate", "--json", "--scenario", kSamples + "/scenarios/llama-3.1-8b-h100-1x8.yaml"});
        QVERIFY2(r.code == 0, qPrintable(r.err));
        const QJsonObject j = QJsonDocument::fromJson(r.out.toUtf8()).object();
        for (const char* k :
             {"throughput_tokens_per_s", "throughput_per_gpu", "ttft_ms", "tpot_ms", "batch",
              "memory_per_gpu_gib", "feasible", "violations", "roofline_fraction", "breakdown", "plan"})
            QVERIFY2(j.contains(k), k);
        QVERIFY(j["feasible"].toBool());
        QVERIFY(j["throughput_tokens_per_s"].toDouble() > 0);
        QCOMPARE(j["plan"].toObject()["degrees"].toObject()["tp"].toInt(), 8); // Megatron: TP = GPUs per node
        QVERIFY(j["breakdown"].toObject()["decode"].toObject()["operators"].toArray().size() > 5);
    }

    void evaluateHumanTable() {
        const Run r = shardplan({"evaluate", "--scenario", kSamples + "/scenarios/deepseek-v3-h100-32x8.yaml",
                                 "--plan", kSamples + "/plans/deepseek-v3-dp-attention.yaml"});
        QVERIFY2(r.code == 0, qPrintable(r.err));
        QVERIFY(r.out.contains("throughput"));
        QVERIFY(r.out.contains("experts dispatch"));
        QVERIFY(r.out.contains("all-to-all"));
    }

    void evaluateBadPlan() {
        QTemporaryDir dir;
        QFile f(dir.filePath("p.yaml"));
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("degrees: {tp: 4, dp: 1}\n");
        f.close();
        const Run r = shardplan({"evaluate", "--scenario", kSamples + "/scenarios/llama-3.1-8b-h100-1x8.yaml",
                                 "--plan", dir.filePath("p.yaml")});
        QCOMPARE(r.code, 1);
        QVERIFY2(
            r.err.contains("p.yaml: plan does not fit the scenario: pp*dp*tp = 4 does not match the 8 GPUs"),
            qPrintable(r.err));
        QCOMPARE(shardplan({"evaluate"}).code, 2);
    }

    void evalSpeedJson() {
        const Run r = shardplan({"bench", "--eval-speed", "--json", "--seconds", "0.2", "--scenario",
                                 kSamples + "/scenarios/llama-3.1-8b-h100-1x8.yaml"});
        QVERIFY2(r.code == 0, qPrintable(r.err));
        const QJsonArray rows = QJsonDocument::fromJson(r.out.toUtf8()).array();
        QCOMPARE(rows.size(), 1);
        QVERIFY(rows[0].toObject()["evals_per_second"].toDouble() > 0);
        QVERIFY(rows[0].toObject()["scenario"].toString().endsWith("llama-3.1-8b-h100-1x8.yaml"));
    }
};

QTEST_GUILESS_MAIN(TestCli)
#include "tst_cli.moc"
