// File formats: every sample round-trips, every error class names file, line and field, HF import.
#include "core/io/formats.h"

#include <QDirIterator>
#include <QTest>

using namespace sp;

namespace {
QStringList sampleFiles(const QString& sub) {
    QStringList out;
    QDirIterator it(QStringLiteral(SHARDPLAN_SAMPLES_DIR "/") + sub, {"*.yaml", "*.json"}, QDir::Files);
    while (it.hasNext()) out << it.next();
    out.sort();
    return out;
}
const QString kHf = QStringLiteral(SHARDPLAN_TESTDATA_DIR "/hf/");
} // namespace

class TestFormats : public QObject {
    Q_OBJECT
private slots:
    void roundTrip_data() {
        QTest::addColumn<QString>("path");
        for (const auto& sub : {"models", "clusters", "workloads", "scenarios", "plans"})
            for (const auto& f : sampleFiles(sub))
                QTest::addRow("%s", qPrintable(QFileInfo(f).fileName())) << f;
        for (const auto& f : QDir(kHf).entryList({"*.config.json"}))
            if (!f.startsWith("gpt2")) QTest::addRow("hf/%s", qPrintable(f)) << kHf + f;
    }
    // load, save, load: equal.
    void roundTrip() {
        QFETCH(QString, path);
        const std::string p = path.toStdString();
        auto kind = detectKind(p);
        QVERIFY2(kind.ok(), kind.error().str().c_str());
        auto check = [&](const auto& loaded, auto parse) {
            QVERIFY2(loaded.ok(), loaded.error().str().c_str());
            const std::string text = toYaml(loaded.value());
            auto again = parse(text, std::string("saved.yaml"));
            QVERIFY2(again.ok(), (again.error().str() + "\n" + text).c_str());
            QVERIFY2(again.value() == loaded.value(), text.c_str());
        };
        switch (*kind) {
        case FileKind::Model:
            check(loadModel(p), parseModel);
            break;
        case FileKind::Cluster:
            check(loadCluster(p), parseCluster);
            break;
        case FileKind::Workload:
            check(loadWorkload(p), parseWorkload);
            break;
        case FileKind::Constraints:
            check(loadConstraints(p), parseConstraints);
            break;
        case FileKind::Scenario:
            check(loadScenario(p), parseScenario);
            break;
        case FileKind::Plan: {
            check(loadPlan(p), parsePlan);
            auto plan = loadPlan(p);
            auto fromJson = parsePlan(toJson(plan.value()), "saved.json");
            QVERIFY2(fromJson.ok(), fromJson.error().str().c_str());
            QVERIFY(fromJson.value() == plan.value());
            break;
        }
        case FileKind::Fleet:
        case FileKind::Prices:
            QFAIL("fleets and price lists are read, never written: not among the round-trip samples");
        }
    }

    void errors_data() {
        QTest::addColumn<QString>("kind");
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>(
            "expected"); // the exact "file:line:column: field: ..." prefix or a substring
        const QString model = "version: 1\nkind: model\nname: m\nlayers: 2\nhidden: 64\nvocab: 100\n"
                              "attention:\n  heads: 4\n  kv_heads: 2\n  head_dim: 16\nffn: 128\n";
        QTest::addRow("malformed yaml") << "model"
                                        << "m.yaml"
                                        << "layers: [1, 2\nhidden: 3\n"
                                        << "m.yaml:";
        QTest::addRow("malformed yaml message") << "model"
                                                << "m.yaml"
                                                << "a: b: c\n"
                                                << "malformed YAML";
        QTest::addRow("malformed json") << "plan"
                                        << "p.json"
                                        << "{\n  \"degrees\": {\"tp\": 8,}\n}\n"
                                        << "p.json:2:";
        QTest::addRow("not a mapping") << "model"
                                       << "m.yaml"
                                       << "- 1\n- 2\n"
                                       << "expected a mapping";
        QTest::addRow("missing field") << "model"
                                       << "m.yaml" << QString(model).replace("hidden: 64\n", "")
                                       << "m.yaml:1:1: hidden: missing required field";
        QTest::addRow("unknown key") << "model"
                                     << "m.yaml" << model + "layer: 3\n"
                                     << "m.yaml:12:1: layer: unknown key (did you mean 'layers'?)";
        QTest::addRow("nested unknown key")
            << "model"
            << "m.yaml" << QString(model).replace("  head_dim", "  head_dimm")
            << "m.yaml:10:3: attention.head_dimm: unknown key (did you mean 'head_dim'?)";
        QTest::addRow("wrong type") << "model"
                                    << "m.yaml" << QString(model).replace("layers: 2", "layers: two")
                                    << "m.yaml:4:9: layers: expected an integer, found 'two'";
        QTest::addRow("wrong type list") << "model"
                                         << "m.yaml" << QString(model).replace("hidden: 64", "hidden: [64]")
                                         << "m.yaml:5:9: hidden: expected an integer, found a list";
        QTest::addRow("non-positive size") << "model"
                                           << "m.yaml" << QString(model).replace("vocab: 100", "vocab: 0")
                                           << "m.yaml:6:8: vocab: expected an integer from 1 to";
        QTest::addRow("heads not divisible")
            << "model"
            << "m.yaml" << QString(model).replace("kv_heads: 2", "kv_heads: 3")
            << "m.yaml:9:13: attention.kv_heads: heads (4) must be a multiple of kv_heads (3)";
        QTest::addRow("top_k above experts")
            << "model"
            << "m.yaml" << model + "moe: {experts: 4, top_k: 8, expert_ffn: 32}\n"
            << "m.yaml:12:26: moe.top_k: top_k (8) exceeds experts (4)";
        QTest::addRow("bad dtype") << "model"
                                   << "m.yaml" << model + "dtypes: {weights: fp9}\n"
                                   << "m.yaml:12:19: dtypes.weights: expected one of fp32, bf16, fp16, fp8, "
                                      "int8, fp4 or int4, found 'fp9'";
        QTest::addRow("wrong kind") << "cluster"
                                    << "c.yaml" << model << "c.yaml:2:7: kind: expected a cluster file";
        QTest::addRow("bad version") << "model"
                                     << "m.yaml" << QString(model).replace("version: 1", "version: 7")
                                     << "m.yaml:1:10: version: unsupported version 7";
        QTest::addRow("cluster without compute")
            << "cluster"
            << "c.yaml"
            << "nodes: 1\ngpus_per_node: 8\ngpu: {tflops: {}, hbm_gb: 80, hbm_tb_s: 3.35}\nintra_node: "
               "{gb_s_per_gpu: 450}\n"
            << "c.yaml:3:15: gpu.tflops: give the dense TFLOP/s of at least one dtype";
        QTest::addRow("multi-node without NIC")
            << "cluster"
            << "c.yaml"
            << "nodes: 2\ngpus_per_node: 8\ngpu: {tflops: {bf16: 989}, hbm_gb: 80, hbm_tb_s: "
               "3.35}\nintra_node: {gb_s_per_gpu: 450}\n"
            << "c.yaml:1:1: inter_node: missing required field";
        QTest::addRow("bad phase") << "workload"
                                   << "w.yaml"
                                   << "phase: decod\ninput_tokens: 10\n"
                                   << "w.yaml:1:8: phase: expected one of prefill, decode or serving, found "
                                      "'decod' (did you mean 'decode'?)";
        QTest::addRow("fixed batch without size")
            << "workload"
            << "w.yaml"
            << "phase: decode\ninput_tokens: 10\nbatch: {policy: fixed}\n"
            << "w.yaml:3:8: batch.size: missing required field";
        QTest::addRow("bad pin") << "constraints"
                                 << "k.yaml"
                                 << "pinned: {qkv: columns}\n"
                                 << "k.yaml:1:15: pinned.qkv: expected one of column, row or token, found "
                                    "'columns' (did you mean 'column'?)";
        QTest::addRow("bad degree list") << "constraints"
                                         << "k.yaml"
                                         << "degrees: {tp: [1, 2, -4]}\n"
                                         << "k.yaml:1:22: degrees.tp[2]: expected an integer from 1 to";
        QTest::addRow("plan expert degrees") << "plan"
                                             << "p.yaml"
                                             << "degrees: {dp: 2, tp: 4, ep: 4}\n"
                                             << "p.yaml:1:10: degrees: ep*etp*edp (4) must equal dp*tp (8)";
        QTest::addRow("plan mesh order") << "plan"
                                         << "p.yaml"
                                         << "degrees: {tp: 8, ep: 8}\nmesh_order: [tp, tp, pp]\n"
                                         << "p.yaml:2:18: mesh_order[1]: expected each of tp, dp and pp once";
        QTest::addRow("plan json field")
            << "plan"
            << "p.json"
            << "{\n  \"degrees\": {\"tp\": 8, \"ep\": 8},\n  \"operators\": {\"qkv\": \"diagonal\"}\n}\n"
            << "p.json:3:24: operators.qkv: expected one of column, row or token, found 'diagonal'";
        QTest::addRow("plan stage_layers count") << "plan"
                                                 << "p.yaml"
                                                 << "degrees: {pp: 2, tp: 4}\nstage_layers: [40]\n"
                                                 << "p.yaml:2:15: stage_layers: 1 stages listed for pp 2";
        QTest::addRow("plan stage_layers zero")
            << "plan"
            << "p.yaml"
            << "degrees: {pp: 2, tp: 4}\nstage_layers: [80, 0]\n"
            << "p.yaml:2:20: stage_layers[1]: expected an integer from 1 to";
        QTest::addRow("plan stage_layers not a list") << "plan"
                                                      << "p.yaml"
                                                      << "degrees: {pp: 2}\nstage_layers: 40+40\n"
                                                      << "p.yaml:2:15: stage_layers:";
        QTest::addRow("constraints bad stage_layers")
            << "constraints"
            << "k.yaml"
            << "stage_layers: even\n"
            << "k.yaml:1:15: stage_layers: expected one of balanced or tuned, found 'even'";
        QTest::addRow("scenario missing part file")
            << "scenario"
            << "/tmp/s.yaml"
            << "model: nowhere.yaml\ncluster: c.yaml\nworkload: w.yaml\n"
            << "/tmp/s.yaml:1:8: model: no such file '/tmp/nowhere.yaml'";
        QTest::addRow("hf unsupported architecture")
            << "model"
            << "x.json"
            << "{\"architectures\": [\"GPT2LMHeadModel\"], \"n_layer\": 12}"
            << "x.json:1:19: architectures: unsupported architecture 'GPT2LMHeadModel'; supported: "
               "LlamaForCausalLM";
        QTest::addRow("hf missing field")
            << "model"
            << "x.json"
            << "{\"architectures\": [\"LlamaForCausalLM\"],\n \"hidden_size\": 64}"
            << "x.json:1:1: num_hidden_layers: missing required field";
    }
    void errors() {
        QFETCH(QString, kind);
        QFETCH(QString, file);
        QFETCH(QString, text);
        QFETCH(QString, expected);
        const std::string t = text.toStdString(), f = file.toStdString();
        Error e;
        bool ok = true;
        auto take = [&](const auto& r) {
            ok = r.ok();
            if (!ok) e = r.error();
        };
        if (kind == "model")
            take(parseModel(t, f));
        else if (kind == "cluster")
            take(parseCluster(t, f));
        else if (kind == "workload")
            take(parseWorkload(t, f));
        else if (kind == "constraints")
            take(parseConstraints(t, f));
        else if (kind == "scenario")
            take(parseScenario(t, f));
        else
            take(parsePlan(t, f));
        QVERIFY2(!ok, "expected an error");
        const QString msg = QString::fromStdString(e.str());
        QVERIFY2(msg.contains(expected), qPrintable("got: " + msg));
        QCOMPARE(QString::fromStdString(e.file), file);
        QVERIFY2(e.line > 0, qPrintable("no line in: " + msg));
    }

    // efficiency.fused_moe_memory: read, written back only when set (0, the default, streams the fused-MoE
    // kernel at `memory`), and bounded to a fraction.
    void fusedMoeMemoryField() {
        const std::string text = "nodes: 1\ngpus_per_node: 8\ngpu: h100-sxm\n";
        auto plain = parseCluster(text, "c.yaml");
        QVERIFY2(plain.ok(), plain.error().str().c_str());
        QCOMPARE(plain.value().efficiency.fusedMoeMemory, 0.0);
        QVERIFY(toYaml(plain.value()).find("fused_moe_memory") == std::string::npos);
        auto set = parseCluster(text + "efficiency: {fused_moe_memory: 0.23}\n", "c.yaml");
        QVERIFY2(set.ok(), set.error().str().c_str());
        QCOMPARE(set.value().efficiency.fusedMoeMemory, 0.23);
        auto again = parseCluster(toYaml(set.value()), "saved.yaml");
        QVERIFY2(again.ok(), again.error().str().c_str());
        QVERIFY(again.value() == set.value());
        auto bad = parseCluster(text + "efficiency: {fused_moe_memory: 1.5}\n", "c.yaml");
        QVERIFY(!bad.ok());
        QVERIFY2(QString::fromStdString(bad.error().str()).contains("fused_moe_memory"),
                 bad.error().str().c_str());
    }

    // A plan's own layers per stage and the constraints' stage_layers choice survive a save and a load, in
    // YAML and JSON; the balanced defaults are not written.
    void stageLayersRoundTrip() {
        auto plan = parsePlan("degrees: {pp: 3, tp: 4}\nstage_layers: [26, 28, 26]\n", "p.yaml");
        QVERIFY2(plan.ok(), plan.error().str().c_str());
        QCOMPARE(plan.value().stageLayers, std::vector<int>({26, 28, 26}));
        for (const std::string& text : {toYaml(plan.value()), toJson(plan.value())}) {
            QVERIFY2(text.find("stage_layers") != std::string::npos, text.c_str());
            auto again = parsePlan(text, text[0] == '{' ? "saved.json" : "saved.yaml");
            QVERIFY2(again.ok(), again.error().str().c_str());
            QCOMPARE(again.value().stageLayers, std::vector<int>({26, 28, 26}));
            QVERIFY(again.value() == plan.value());
        }
        Plan balanced = plan.value();
        balanced.stageLayers.clear();
        QVERIFY(toYaml(balanced).find("stage_layers") == std::string::npos);

        auto c = parseConstraints("stage_layers: tuned\n", "k.yaml");
        QVERIFY2(c.ok(), c.error().str().c_str());
        QCOMPARE(int(c.value().stageSplit), int(StageSplit::Tuned));
        const std::string text = toYaml(c.value());
        QVERIFY2(text.find("stage_layers: tuned") != std::string::npos, text.c_str());
        auto again = parseConstraints(text, "saved.yaml");
        QVERIFY2(again.ok(), again.error().str().c_str());
        QVERIFY(again.value() == c.value());
        auto plain = parseConstraints("memory_headroom: 0.1\n", "k.yaml");
        QVERIFY(plain.ok());
        QCOMPARE(int(plain.value().stageSplit), int(StageSplit::Balanced));
        QVERIFY(toYaml(plain.value()).find("stage_layers") == std::string::npos);
    }

    // A plan's layer groups survive a save and a load, in YAML and JSON, dense and MoE, single and
    // disaggregated; the first group is written with its layers only, a later one with what differs from it.
    void layerGroupsRoundTrip() {
        const std::string text = "degrees: {pp: 2, tp: 4}\n"
                                 "operators: {qkv: column, attention: head}\n"
                                 "layer_groups:\n"
                                 "  - {layers: 30}\n"
                                 "  - {layers: 31, operators: {qkv: token, attention: batch}}\n";
        auto plan = parsePlan(text, "g.yaml");
        QVERIFY2(plan.ok(), plan.error().str().c_str());
        const Plan& p = plan.value();
        QCOMPARE(p.layerGroups.size(), size_t(2));
        QCOMPARE(p.layerGroups[0].layers, 30);
        QCOMPARE(p.layerGroups[1].layers, 31);
        // Layer 30 is the second group's first: qkv token, attention batch; layer 29 the first group's.
        QCOMPARE(int(p.choicesAt(30)[int(Op::Qkv)]), int(choice::QkvToken));
        QCOMPARE(int(p.choicesAt(30)[int(Op::Attention)]), int(choice::AttnBatch));
        QCOMPARE(int(p.choicesAt(29)[int(Op::Qkv)]), int(choice::QkvColumn));
        // Only the named operators change: the MoE layers' qkv keeps the top-level choice (column).
        QCOMPARE(int(p.choicesAt(30)[int(Op::MoeQkv)]), int(choice::QkvColumn));
        QCOMPARE(QString::fromStdString(layerGroupsText(p)),
                 QStringLiteral("layers 0-29 | 30-60: qkv token, attention batch"));
        Model dense;
        dense.layers = 61;
        for (const std::string& out : {toYaml(p), toJson(p), toYaml(p, dense), toJson(p, dense)}) {
            QVERIFY2(out.find("layer_groups") != std::string::npos, out.c_str());
            auto again = parsePlan(out, out[0] == '{' ? "saved.json" : "saved.yaml");
            QVERIFY2(again.ok(), (again.error().str() + "\n" + out).c_str());
            QVERIFY2(again.value() == p, out.c_str());
        }
        // The YAML form: one group a line, the first with its layers only.
        const std::string yaml = toYaml(p);
        QVERIFY2(yaml.find("  - {layers: 30}\n") != std::string::npos, yaml.c_str());
        QVERIFY2(yaml.find("  - {layers: 31, operators: {qkv: token, attention: batch}}") !=
                     std::string::npos,
                 yaml.c_str());
        // A MoE-layer operator of its own in a group.
        auto moe = parsePlan("degrees: {tp: 8}\nlayer_groups:\n  - {layers: 3}\n"
                             "  - {layers: 58, moe_layer_operators: {attention: batch}}\n",
                             "m.yaml");
        QVERIFY2(moe.ok(), moe.error().str().c_str());
        QCOMPARE(int(moe.value().choicesAt(3)[int(Op::MoeAttention)]), int(choice::AttnBatch));
        QCOMPARE(int(moe.value().choicesAt(3)[int(Op::Attention)]), int(choice::AttnHead));
        auto moeAgain = parsePlan(toJson(moe.value()), "saved.json");
        QVERIFY2(moeAgain.ok(), moeAgain.error().str().c_str());
        QVERIFY(moeAgain.value() == moe.value());
        // Without groups nothing is written.
        Plan plain = p;
        plain.layerGroups.clear();
        QVERIFY(toYaml(plain).find("layer_groups") == std::string::npos);
        QVERIFY(toJson(plain).find("layer_groups") == std::string::npos);
        // A disaggregated plan's pools carry them too.
        DisaggPlan d;
        d.prefill = {1, p};
        d.decode = {1, plain};
        Model moeModel = dense;
        moeModel.moe.experts = 8;
        moeModel.moe.topK = 2;
        moeModel.moe.expertFfn = 1024;
        for (const std::string& out : {toYaml(d, moeModel), toJson(d, moeModel)}) {
            auto again = parseDisaggPlan(out, out[0] == '{' ? "saved.json" : "saved.yaml");
            QVERIFY2(again.ok(), (again.error().str() + "\n" + out).c_str());
            QVERIFY2(again.value().prefill.plan == p, out.c_str());
            QVERIFY(again.value().decode.plan.layerGroups.empty());
        }
    }

    // The reader puts groups in one form: equal neighbours merge, a single group is dropped, the first
    // group's choices become the plan's.
    void layerGroupsNormalized() {
        // Groups 2 and 3 choose alike (qkv token): 20 + 20 + 21 -> 20 + 41.
        auto merged = parsePlan(
            "degrees: {tp: 8}\nlayer_groups:\n  - {layers: 20}\n  - {layers: 20, operators: {qkv: token}}\n"
            "  - {layers: 21, operators: {qkv: token}}\n",
            "n.yaml");
        QVERIFY2(merged.ok(), merged.error().str().c_str());
        QCOMPARE(merged.value().layerGroups.size(), size_t(2));
        QCOMPARE(merged.value().layerGroups[1].layers, 41);
        // A group that repeats the top-level choices merges into the first: no groups left.
        auto same = parsePlan("degrees: {tp: 8}\noperators: {qkv: row}\nlayer_groups:\n  - {layers: 20}\n"
                              "  - {layers: 41, operators: {qkv: row}}\n",
                              "n.yaml");
        QVERIFY2(same.ok(), same.error().str().c_str());
        QVERIFY(same.value().layerGroups.empty());
        QCOMPARE(int(same.value().choice(Op::Qkv)), int(choice::QkvRow));
        // The first group's own operators become the plan's.
        auto first = parsePlan("degrees: {tp: 8}\nlayer_groups:\n  - {layers: 20, operators: {ffn_up: "
                               "token}}\n  - {layers: 41}\n",
                               "n.yaml");
        QVERIFY2(first.ok(), first.error().str().c_str());
        QCOMPARE(int(first.value().choice(Op::FfnUp)), int(choice::UpToken));
        QCOMPARE(int(first.value().layerGroups[1].choices[int(Op::FfnUp)]), int(choice::UpColumn));
    }

    // Wrong layer groups: an error with file, line and column, naming what is wrong.
    void layerGroupsErrors_data() {
        QTest::addColumn<QString>("text");
        QTest::addColumn<int>("line");
        QTest::addColumn<QString>("expected");
        // Lines of the groups' text; the lm_head value (row) sits on its line 3, column 39 (1-based: 38
        // characters before it).
        QTest::addRow("lm_head")
            << "layer_groups:\n  - {layers: 30}\n  - {layers: 31, operators: {lm_head: row}}\n"
            << 3 << "chosen once for the whole model";
        QTest::addRow("embedding")
            << "layer_groups:\n  - {layers: 30}\n  - layers: 31\n    operators: {embedding: replicated}\n"
            << 4 << "chosen once for the whole model";
        QTest::addRow("experts")
            << "layer_groups:\n  - {layers: 30}\n  - {layers: 31, operators: {experts: token}}\n"
            << 3 << "chosen once for the whole model";
        QTest::addRow("layers 0") << "layer_groups:\n  - {layers: 0}\n  - {layers: 61}\n"
                                  << 2 << "at least 1 layer";
        QTest::addRow("no layers") << "layer_groups:\n  - {layers: 30}\n  - {operators: {qkv: token}}\n"
                                   << 3 << "layers";
        QTest::addRow("not a list") << "layer_groups: 2\n" << 1 << "expected a list";
        QTest::addRow("five groups")
            << "layer_groups: [{layers: 1}, {layers: 1}, {layers: 1}, {layers: 1}, {layers: 1}]\n"
            << 1 << "at most 4";
        QTest::addRow("unknown key") << "layer_groups:\n  - {layers: 30, operator: {qkv: token}}\n"
                                     << 2 << "operators";
    }
    void layerGroupsErrors() {
        QFETCH(QString, text);
        QFETCH(int, line);
        QFETCH(QString, expected);
        // The groups follow the degrees' line.
        auto r = parsePlan("degrees: {tp: 8}\n" + text.toStdString(), "bad.yaml");
        QVERIFY2(!r.ok(), "expected an error");
        const QString msg = QString::fromStdString(r.error().str());
        QVERIFY2(msg.contains(expected), qPrintable(msg));
        QCOMPARE(r.error().line, line + 1);
        QVERIFY2(r.error().column > 0, qPrintable(msg));
        if (QTest::currentDataTag() == QByteArray("lm_head")) QCOMPARE(r.error().column, 39);
    }

    // The constraints' granularity and layer-group count: read, written only when not the default, refused
    // when out of range.
    void granularityRoundTrip() {
        auto c = parseConstraints("granularity: layer-group\nlayer_groups: 3\n", "k.yaml");
        QVERIFY2(c.ok(), c.error().str().c_str());
        QCOMPARE(int(c.value().granularity), int(Granularity::LayerGroup));
        QCOMPARE(c.value().layerGroups, 3);
        const std::string text = toYaml(c.value());
        QVERIFY2(text.find("granularity: layer-group") != std::string::npos, text.c_str());
        QVERIFY2(text.find("layer_groups: 3") != std::string::npos, text.c_str());
        auto again = parseConstraints(text, "saved.yaml");
        QVERIFY2(again.ok(), again.error().str().c_str());
        QVERIFY(again.value() == c.value());

        auto stage = parseConstraints("granularity: stage\n", "k.yaml");
        QVERIFY2(stage.ok(), stage.error().str().c_str());
        QCOMPARE(int(stage.value().granularity), int(Granularity::Stage));
        const std::string stageText = toYaml(stage.value());
        QVERIFY2(stageText.find("granularity: stage") != std::string::npos, stageText.c_str());
        QVERIFY2(stageText.find("layer_groups") == std::string::npos, stageText.c_str());

        auto plain = parseConstraints("memory_headroom: 0.1\n", "k.yaml");
        QVERIFY(plain.ok());
        QCOMPARE(int(plain.value().granularity), int(Granularity::Type));
        QCOMPARE(plain.value().layerGroups, 2);
        QVERIFY(toYaml(plain.value()).find("granularity") == std::string::npos);

        const std::vector<std::pair<std::string, std::string>> bad{
            {"granularity: layer\n", "layer-group"},                        // did you mean
            {"granularity: layer-group\nlayer_groups: 5\n", "from 2 to 4"}, // kMaxLayerGroups
            {"granularity: layer-group\nlayer_groups: 1\n", "from 2 to 4"},
            {"granularity: stage\nlayer_groups: 3\n", "granularity: layer-group"}};
        for (const auto& [t, expected] : bad) {
            auto r = parseConstraints(t, "k.yaml");
            QVERIFY2(!r.ok(), t.c_str());
            const std::string msg = r.error().str();
            QVERIFY2(msg.find(expected) != std::string::npos, msg.c_str());
            QVERIFY2(r.error().line > 0, msg.c_str());
        }
    }

    // Values from the public model cards / config.json files (sources in tests/data/hf/SOURCES.md).
    void hfImport() {
        auto llama = loadModel((kHf + "llama-3.1-70b.config.json").toStdString());
        QVERIFY2(llama.ok(), llama.error().str().c_str());
        QCOMPARE(llama->layers, 80);
        QCOMPARE(llama->hidden, 8192);
        QCOMPARE(llama->attention.heads, 64);
        QCOMPARE(llama->attention.kvHeads, 8);
        QCOMPARE(llama->attention.headDim, 128);
        QCOMPARE(llama->ffn, 28672);
        QCOMPARE(llama->vocab, 128256);
        QVERIFY(!llama->moe.present());

        auto mixtral = loadModel((kHf + "mixtral-8x22b.config.json").toStdString());
        QVERIFY2(mixtral.ok(), mixtral.error().str().c_str());
        QCOMPARE(mixtral->layers, 56);
        QCOMPARE(mixtral->hidden, 6144);
        QCOMPARE(mixtral->moe.experts, 8);
        QCOMPARE(mixtral->moe.topK, 2);
        QCOMPARE(mixtral->moe.expertFfn, 16384);
        QCOMPARE(mixtral->attention.kvHeads, 8);

        auto qwen = loadModel((kHf + "qwen3-235b-a22b.config.json").toStdString());
        QVERIFY2(qwen.ok(), qwen.error().str().c_str());
        QCOMPARE(qwen->layers, 94);
        QCOMPARE(qwen->hidden, 4096);
        QCOMPARE(qwen->attention.heads, 64);
        QCOMPARE(qwen->attention.kvHeads, 4);
        QCOMPARE(qwen->attention.headDim, 128); // explicit head_dim (not hidden/heads = 64)
        QCOMPARE(qwen->moe.experts, 128);
        QCOMPARE(qwen->moe.topK, 8);
        QCOMPARE(qwen->moe.expertFfn, 1536);
        QCOMPARE(qwen->moe.sharedExperts, 0);

        auto ds = loadModel((kHf + "deepseek-v3.config.json").toStdString());
        QVERIFY2(ds.ok(), ds.error().str().c_str());
        QVERIFY(ds->attention.type == AttentionType::MLA);
        QCOMPARE(ds->layers, 61);
        QCOMPARE(ds->attention.heads, 128);
        QCOMPARE(ds->attention.mla.qLoraRank, 1536);
        QCOMPARE(ds->attention.mla.kvLoraRank, 512);
        QCOMPARE(ds->attention.mla.qkNopeHeadDim, 128);
        QCOMPARE(ds->attention.mla.qkRopeHeadDim, 64);
        QCOMPARE(ds->attention.mla.vHeadDim, 128);
        QCOMPARE(ds->moe.experts, 256);
        QCOMPARE(ds->moe.topK, 8);
        QCOMPARE(ds->moe.sharedExperts, 1);
        QCOMPARE(ds->moe.firstDenseLayers, 3);
        QCOMPARE(ds->mtpLayers, 1);
        QVERIFY(ds->weights == Dtype::FP8); // quantization_config: fp8

        auto gpt2 = loadModel((kHf + "gpt2.config.json").toStdString());
        QVERIFY(!gpt2.ok());
        QVERIFY(QString::fromStdString(gpt2.error().str()).contains("DeepseekV3ForCausalLM"));
    }

    // The architecture: config.json's architectures[0] on import; a model file's `architecture:` key, which
    // each sample sets to the value of the config.json it cites (the copies in tests/data/hf).
    void architecture() {
        const std::pair<const char*, const char*> pairs[] = {
            {"llama-3.1-70b", "LlamaForCausalLM"},      {"mixtral-8x22b", "MixtralForCausalLM"},
            {"qwen3-235b-a22b", "Qwen3MoeForCausalLM"}, {"deepseek-v3", "DeepseekV3ForCausalLM"},
            {"gpt-oss-120b", "GptOssForCausalLM"},      {"qwen3-next-80b-a3b", "Qwen3NextForCausalLM"}};
        for (const auto& [file, arch] : pairs) {
            auto hf = loadModel((kHf + file + ".config.json").toStdString());
            QVERIFY2(hf.ok(), hf.error().str().c_str());
            QCOMPARE(QString::fromStdString(hf->architecture), QString(arch));
            auto sample = loadModel(std::string(SHARDPLAN_SAMPLES_DIR) + "/models/" + file + ".yaml");
            QVERIFY2(sample.ok(), sample.error().str().c_str());
            QCOMPARE(QString::fromStdString(sample->architecture), QString(arch));
        }
        // A model file without the key has none (the exports then check nothing against the registries).
        auto synthetic = loadModel(std::string(SHARDPLAN_SAMPLES_DIR) + "/models/moe-1.6t-synthetic.yaml");
        QVERIFY(synthetic.ok() && synthetic->architecture.empty());
    }

    void atomicWriteLeavesNoHalfFile() {
        const std::string dir = QDir::tempPath().toStdString() + "/sp-no-such-dir-xyz/plan.json";
        auto r = writeFileAtomic(dir, "{}");
        QVERIFY(!r.ok());
        QVERIFY(r.error().str().find("cannot write") != std::string::npos);
        const std::string ok = QDir::tempPath().toStdString() + "/sp-atomic-test.json";
        QVERIFY(writeFileAtomic(ok, toJson(Plan::megatronChoices({}))).ok());
        QVERIFY(loadPlan(ok).ok());
    }
};

QTEST_GUILESS_MAIN(TestFormats)
#include "tst_formats.moc"
