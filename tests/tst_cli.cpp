// The shardplan command line: exit codes, human and JSON output.
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

namespace {
struct Run {
    int code = -1;
    QString out, err;
};
Run shardplan(const QStringList& args) {
    QProcess p;
    p.start(QStringLiteral(SHARDPLAN_CLI), args);
    p.waitForFinished(600000);
    return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1, QString::fromUtf8(p.readAllStandardOutput()),
            QString::fromUtf8(p.readAllStandardError())};
}
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
        const Run r = shardplan({"validate", kSamples + "/models/llama-3.1-70b.yaml", kSamples + "/clusters/h100-4x8.yaml",
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
};

QTEST_GUILESS_MAIN(TestCli)
#include "tst_cli.moc"
