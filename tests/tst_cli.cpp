// The shardplan command line: exit codes, human and JSON output.
#include "clirun.h"
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <nlohmann/json.hpp>

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

    // A plan file with its own layers per stage: validate and evaluate show them; one whose stages do not
    // add up to the model's 80 layers (Llama-3.1-70B) is refused with the file and checkPlan's reason.
    void stageLayers() {
        QTemporaryDir dir;
        auto write = [&](const QString& name, const QByteArray& text) {
            QFile f(dir.filePath(name));
            if (!f.open(QIODevice::WriteOnly)) qFatal("cannot write %s", qPrintable(name));
            f.write(text);
            return dir.filePath(name);
        };
        const QString good = write("good.yaml", "version: 1\nkind: plan\ndegrees: {pp: 2, tp: 4}\n"
                                                "stage_layers: [38, 42]\n");
        const QString bad = write("bad.yaml", "version: 1\nkind: plan\ndegrees: {pp: 2, tp: 4}\n"
                                              "stage_layers: [38, 41]\n");
        const QString scenario = kSamples + "/scenarios/llama-3.1-70b-h100-1x8-chat.yaml";
        Run r = shardplan({"validate", good});
        QVERIFY2(r.code == 0, qPrintable(r.err));
        QVERIFY2(r.out.contains("layers per stage 38 + 42"), qPrintable(r.out));
        r = shardplan({"evaluate", "--scenario", scenario, "--plan", good});
        QVERIFY2(r.code == 0, qPrintable(r.err));
        QVERIFY2(r.out.contains("pp2 x dp1 x tp4, layers per stage 38 + 42"), qPrintable(r.out));
        // Chat serving: TTFT is the step in flight and one chunk step (1,000-token prompts, budget 8,192).
        QVERIFY2(r.out.contains(" + 1 chunk step of "), qPrintable(r.out));
        r = shardplan({"evaluate", "--scenario", scenario, "--plan", bad});
        QCOMPARE(r.code, 1);
        QVERIFY2(r.err.contains(bad +
                                ": plan does not fit the scenario: stage_layers add up to 79 layers; the "
                                "model has 80"),
                 qPrintable(r.err));
        r = shardplan({"export", "--scenario", scenario, "--plan", bad, "--engine", "vllm"});
        QCOMPARE(r.code, 1);
        QVERIFY2(r.err.contains(bad + ": plan does not fit the scenario: stage_layers add up to 79"),
                 qPrintable(r.err));
        // compare names the split among what differs.
        const QString even = write("even.yaml", "version: 1\nkind: plan\ndegrees: {pp: 2, tp: 4}\n");
        r = shardplan({"compare", "--scenario", scenario, even, good, "--json"});
        QVERIFY2(r.code == 0, qPrintable(r.err));
        const auto diffs = nlohmann::json::parse(r.out.toStdString())["differences"];
        QCOMPARE(int(diffs.size()), 1);
        QCOMPARE(diffs[0]["field"].get<std::string>(), std::string("stage_layers"));
        QCOMPARE(diffs[0]["a"].get<std::string>(), std::string("balanced"));
        QCOMPARE(diffs[0]["b"].get<std::string>(), std::string("38 + 42"));
        // A constraints file choosing the tuned split reads; validate says so.
        const QString tuned = write("k.yaml", "version: 1\nkind: constraints\nstage_layers: tuned\n");
        r = shardplan({"validate", tuned});
        QVERIFY2(r.code == 0, qPrintable(r.err));
        QVERIFY2(r.out.contains("layers per stage tuned"), qPrintable(r.out));
        const QString wrong = write("w.yaml", "version: 1\nkind: constraints\nstage_layers: uneven\n");
        r = shardplan({"validate", wrong});
        QCOMPARE(r.code, 1);
        QVERIFY2(r.err.contains("w.yaml:3:15: stage_layers: expected one of balanced or tuned"),
                 qPrintable(r.err));
    }

    // A plan file with layer groups: validate, evaluate and export's plan line show them, the JSON output
    // carries them, compare lists them among what differs, and export (adapting) says it drops them.
    void layerGroups() {
        QTemporaryDir dir;
        auto write = [&](const QString& name, const QByteArray& text) {
            QFile f(dir.filePath(name));
            if (!f.open(QIODevice::WriteOnly)) qFatal("cannot write %s", qPrintable(name));
            f.write(text);
            return dir.filePath(name);
        };
        // Llama-3.1-70B's 80 layers: 0-29 as the top level says, 30-79 with token-sharded FFNs.
        const QString grouped =
            write("grouped.yaml", "version: 1\nkind: plan\ndegrees: {tp: 8}\n"
                                  "layer_groups:\n  - {layers: 30}\n"
                                  "  - {layers: 50, operators: {ffn_up: token, ffn_down: token}}\n");
        const QString plain = write("plain.yaml", "version: 1\nkind: plan\ndegrees: {tp: 8}\n");
        const QString scenario = kSamples + "/scenarios/llama-3.1-70b-h100-1x8-chat.yaml";
        const QString line = "layer groups: layers 0-29 | 30-79: ffn_up token, ffn_down token";
        Run r = shardplan({"validate", grouped});
        QVERIFY2(r.code == 0, qPrintable(r.err));
        QVERIFY2(r.out.contains(line), qPrintable(r.out));
        r = shardplan({"evaluate", "--scenario", scenario, "--plan", grouped});
        QVERIFY2(r.code == 0, qPrintable(r.err));
        QVERIFY2(r.out.contains("pp1 x dp1 x tp8, " + line), qPrintable(r.out));
        r = shardplan({"evaluate", "--scenario", scenario, "--plan", plain});
        QVERIFY2(r.code == 0, qPrintable(r.err));
        QVERIFY2(!r.out.contains("layer groups"), qPrintable(r.out));
        r = shardplan({"evaluate", "--scenario", scenario, "--plan", grouped, "--json"});
        QVERIFY2(r.code == 0, qPrintable(r.err));
        const auto j = nlohmann::json::parse(r.out.toStdString());
        QCOMPARE(int(j["plan"]["layer_groups"].size()), 2);
        QCOMPARE(j["plan"]["layer_groups"][1]["layers"].get<int>(), 50);
        QCOMPARE(j["plan"]["layer_groups"][1]["operators"]["ffn_up"].get<std::string>(),
                 std::string("token"));
        r = shardplan({"compare", "--scenario", scenario, plain, grouped, "--json"});
        QVERIFY2(r.code == 0, qPrintable(r.err));
        const auto diffs = nlohmann::json::parse(r.out.toStdString())["differences"];
        QCOMPARE(int(diffs.size()), 1);
        QCOMPARE(diffs[0]["field"].get<std::string>(), std::string("layer_groups"));
        QCOMPARE(diffs[0]["a"].get<std::string>(), std::string("none"));
        QCOMPARE(diffs[0]["b"].get<std::string>(),
                 std::string("layers 0-29 | 30-79: ffn_up token, ffn_down token"));
        r = shardplan({"compare", "--scenario", scenario, plain, grouped});
        QVERIFY2(r.code == 0, qPrintable(r.err));
        QVERIFY2(r.out.contains("layer_groups") &&
                     r.out.contains("B         " + grouped + ": pp1 x dp1 x tp8, "),
                 qPrintable(r.out));
        r = shardplan({"export", "--scenario", scenario, "--plan", grouped, "--engine", "vllm"});
        QVERIFY2(r.code == 0, qPrintable(r.err));
        QVERIFY2(
            r.err.contains("Layout changed: vLLM shards every layer alike; the plan's layer groups choose "
                           "layers 0-29"),
            qPrintable(r.err));
        QVERIFY2(r.out.contains("vllm serve"), qPrintable(r.out));
        r = shardplan({"export", "--scenario", scenario, "--plan", grouped, "--engine", "vllm", "--strict"});
        QCOMPARE(r.code, 1);
        QVERIFY2(r.err.contains("vLLM shards every layer alike"), qPrintable(r.err));
        // A constraints file choosing layer groups reads; validate says so.
        const QString k = write("k.yaml", "version: 1\nkind: constraints\ngranularity: layer-group\n"
                                          "layer_groups: 3\n");
        r = shardplan({"validate", k});
        QVERIFY2(r.code == 0, qPrintable(r.err));
        QVERIFY2(r.out.contains("operator choices per layer group (3 groups)"), qPrintable(r.out));
        const QString wrong = write("w.yaml", "version: 1\nkind: constraints\ngranularity: per-layer\n");
        r = shardplan({"validate", wrong});
        QCOMPARE(r.code, 1);
        QVERIFY2(r.err.contains("w.yaml:3:14: granularity: expected one of type, stage or layer-group"),
                 qPrintable(r.err));
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
        const QJsonObject row = rows[0].toObject();
        QVERIFY(row["evals_per_cpu_second"].toDouble() > 0);
        QVERIFY(row["bisection_evals_per_cpu_second"].toDouble() > 0);
        QCOMPARE(row["plans"].toInt(), 512); // drawn from the search space
        QVERIFY(row["max_pp"].toInt() >= 1 && row["max_pp"].toInt() <= 8);
        QVERIFY(rows[0].toObject()["scenario"].toString().endsWith("llama-3.1-8b-h100-1x8.yaml"));
    }

    // export --format json|yaml writes a plan file that `validate` accepts; the default plan is Megatron's.
    void exportPlanFiles() {
        QTemporaryDir dir;
        const QString scenario = kSamples + "/scenarios/llama-3.1-8b-h100-1x8.yaml";
        const QString json = dir.filePath("plan.json"), yaml = dir.filePath("plan.yaml");
        Run r = shardplan({"export", "--scenario", scenario, "--format", "json", "--out", json});
        QVERIFY2(r.code == 0, qPrintable(r.err));
        QVERIFY(r.out.isEmpty());
        r = shardplan({"validate", "--kind", "plan", json});
        QVERIFY2(r.code == 0, qPrintable(r.err));
        // The Megatron plan on one 8-GPU node: TP = the GPUs of the node.
        QVERIFY2(r.out.contains("plan pp1 x dp1 x tp8"), qPrintable(r.out));
        // To stdout, from a searcher: the same plan file format.
        r = shardplan({"export", "--scenario", scenario, "--searcher", "random", "--budget", "50", "--seed",
                       "3", "--format", "yaml"});
        QVERIFY2(r.code == 0, qPrintable(r.err));
        QVERIFY(r.out.contains("kind: plan"));
        QFile f(yaml);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(r.out.toUtf8());
        f.close();
        QCOMPARE(shardplan({"validate", yaml}).code, 0);
    }

    void exportLaunchCommand() {
        const QString scenario = kSamples + "/scenarios/llama-3.1-8b-h100-1x8.yaml";
        Run r = shardplan({"export", "--scenario", scenario, "--plan",
                           kSamples + "/plans/llama-3.1-8b-tp8.yaml", "--format", "vllm"});
        QVERIFY2(r.code == 0, qPrintable(r.err));
        QVERIFY2(r.out.startsWith("vllm serve meta-llama/Llama-3.1-8B \\\n"), qPrintable(r.out));
        QVERIFY2(r.out.contains("--tensor-parallel-size 8"), qPrintable(r.out));
        QVERIFY(r.out.contains("\n# "));
        r = shardplan(
            {"export", "--scenario", scenario, "--format", "sglang", "--model", "/models/llama 8b"});
        QVERIFY2(r.code == 0, qPrintable(r.err));
        QVERIFY2(r.out.contains("--model-path '/models/llama 8b'"), qPrintable(r.out));
        QVERIFY(r.out.contains("--tp-size 8"));
    }

    // `help export` listed --format alone; it now comes from the table export's parser is built from
    // (app/cli/export_commands.cpp, exportOptions). Every option the help names is one the parser accepts,
    // and the engine options are among them.
    void exportHelp() {
        for (const QStringList& args : {QStringList{"help", "export"}, QStringList{"export", "--help"}}) {
            const Run r = shardplan(args);
            QCOMPARE(r.code, 0);
            for (const char* o : {"--format", "--engine", "--engine-version", "--worker", "--strict",
                                  "--out-dir", "--model", "--searcher", "--plan", "--out "})
                QVERIFY2(r.out.contains(o), qPrintable(QString(o) + " missing from:\n" + r.out));
        }
        const Run help = shardplan({"help", "export"});
        QStringList named;
        for (const QString& line : help.out.split('\n')) {
            const QString t = line.trimmed();
            if (t.startsWith("--")) named << t.section(' ', 0, 0);
        }
        QVERIFY2(named.size() >= 13, qPrintable(help.out));
        const QString scenario = kSamples + "/scenarios/llama-3.1-8b-h100-1x8.yaml";
        QTemporaryDir dir; // --out and --out-dir write their value: a path in here, not the working directory
        const QString value = dir.filePath("x");
        for (const QString& o : named) {
            // Each with a value where it takes one; what matters is that it is not an unknown option.
            const Run r = shardplan({"export", "--scenario", scenario, o, value, "--format", "json"});
            QVERIFY2(!r.err.contains("unknown option"), qPrintable(o + ": " + r.err));
        }
        QVERIFY(shardplan({"export", "--scenario", scenario, "--bogus", "--format", "json"})
                    .err.contains("unknown option"));
    }

    void exportErrors() {
        const QString scenario = kSamples + "/scenarios/llama-3.1-8b-h100-1x8.yaml";
        // Usage: a format that does not exist, no format, --plan with --searcher, --model on a plan file.
        Run r = shardplan({"export", "--scenario", scenario, "--format", "trtllm"});
        QCOMPARE(r.code, 2);
        QVERIFY2(r.err.contains("--format must be json, yaml, vllm or sglang"), qPrintable(r.err));
        QCOMPARE(shardplan({"export", "--scenario", scenario}).code, 2);
        QCOMPARE(shardplan({"export", "--scenario", scenario, "--format", "vllm", "--plan", "p.yaml",
                            "--searcher", "sa"})
                     .code,
                 2);
        QCOMPARE(shardplan({"export", "--scenario", scenario, "--format", "json", "--model", "m"}).code, 2);
        QCOMPARE(shardplan({"export", "--scenario", scenario, "--format", "vllm", "--budget", "10"}).code, 2);
        // Bad input: a plan that does not fit the scenario, a plan file that does not exist.
        QTemporaryDir dir;
        QFile f(dir.filePath("p.yaml"));
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("degrees: {tp: 4, dp: 1}\n");
        f.close();
        r = shardplan(
            {"export", "--scenario", scenario, "--plan", dir.filePath("p.yaml"), "--format", "vllm"});
        QCOMPARE(r.code, 1);
        QVERIFY2(
            r.err.contains("p.yaml: plan does not fit the scenario: pp*dp*tp = 4 does not match the 8 GPUs"),
            qPrintable(r.err));
        QVERIFY(r.out.isEmpty());
        r = shardplan(
            {"export", "--scenario", scenario, "--plan", dir.filePath("missing.yaml"), "--format", "json"});
        QCOMPARE(r.code, 1);
        QVERIFY2(r.err.contains("missing.yaml"), qPrintable(r.err));
        // A failed write leaves no file.
        r = shardplan({"export", "--scenario", scenario, "--format", "vllm", "--out",
                       dir.filePath("no/such/dir/launch.sh")});
        QCOMPARE(r.code, 1);
        QVERIFY(!QFile::exists(dir.filePath("no/such/dir/launch.sh")));
    }
};

QTEST_GUILESS_MAIN(TestCli)
#include "tst_cli.moc"
