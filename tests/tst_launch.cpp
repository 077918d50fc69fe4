// Launch commands: a plan's degrees, batch, lengths, dtypes and headroom as vLLM and SGLang flags, the notes
// on what the flags cannot say, shell quoting, and plans that do not fit refused with the reason. Then the
// older engine versions' rules as read at their releases (SGLang 0.4.9, vLLM 0.10.2: its Ray executor and
// DP ranks each on one host) and the SGLang context-parallel asserts.
#include "core/cost/costmodel.h"
#include "core/export/check.h"
#include "core/export/launch.h"
#include "core/io/formats.h"

#include "launch_fixtures.h"

#include <QTest>

using namespace sp;

namespace {

const std::string kSamples = SHARDPLAN_SAMPLES_DIR;

using namespace test;

/// A Megatron-style plan (column/row, sequence-parallel norms) with the given degrees and batch.
Plan plan(int pp, int dp, int tp, int64_t batch, int ep = 0) {
    Degrees d{pp, dp, tp, ep > 0 ? ep : dp * tp, 1, 1};
    if (ep > 0) d.edp = dp * tp / ep;
    Plan p = Plan::megatronChoices(d);
    p.batch = batch;
    return p;
}

/// The value of `var` in each node's environment that sets it.
QStringList envOf(const LaunchCommand& c, const std::string& var) {
    QStringList out;
    for (const auto& node : c.nodes)
        for (const auto& [name, value] : node.env)
            if (name == var) out << QString::fromStdString(value);
    return out;
}

LaunchCommand command(const Scenario& s, const Plan& p, ServingEngine e, const std::string& model = {}) {
    auto c = launchCommand(s, p, e, model);
    if (!c) qFatal("%s", c.error().str().c_str());
    return c.value();
}

} // namespace

class TestLaunch : public QObject {
    Q_OBJECT
private slots:
    // Llama-3.1-70B, TP8 on one 8-GPU node, chat serving (1000 + 1000 tokens), default headroom 0.05.
    void llama70bTp8OneNode() {
        const Scenario s = compose("llama-3.1-70b.yaml", "h100-1x8.yaml", "chat-serving.yaml");
        const Plan p = plan(1, 1, 8, 64);
        const LaunchCommand v = command(s, p, ServingEngine::Vllm);
        QCOMPARE(list(v.argv), QStringList({"vllm", "serve", "meta-llama/Llama-3.1-70B",
                                            "--tensor-parallel-size", "8", "--max-num-seqs", "64",
                                            "--max-model-len", "2000", "--gpu-memory-utilization", "0.9"}));
        // Megatron's sequence-parallel norms are not vLLM's (replicated norms in the TP group).
        QVERIFY2(hasNote(v, "norms token over tp 8 (vLLM: replicated)"), qPrintable(notes(v)));
        const LaunchCommand g = command(s, p, ServingEngine::Sglang);
        QCOMPARE(list(g.argv),
                 QStringList({"python3", "-m", "sglang.launch_server", "--model-path",
                              "meta-llama/Llama-3.1-70B", "--tp-size", "8", "--max-running-requests", "64",
                              "--context-length", "2000", "--mem-fraction-static", "0.818"}));
        QVERIFY2(hasNote(g, "covers the weights and the KV pool only"), qPrintable(notes(g)));
    }

    // Llama-3.1-8B as four TP2 replicas on one node: vLLM's --max-num-seqs is per DP rank, SGLang gives each
    // plain DP replica the full --max-running-requests.
    void tp2Dp4() {
        const Scenario s = compose("llama-3.1-8b.yaml", "h100-1x8.yaml", "chat-serving.yaml");
        const Plan p = plan(1, 4, 2, 32);
        QCOMPARE(list(command(s, p, ServingEngine::Vllm).argv),
                 QStringList({"vllm", "serve", "meta-llama/Llama-3.1-8B", "--tensor-parallel-size", "2",
                              "--data-parallel-size", "4", "--max-num-seqs", "32", "--max-model-len", "2000",
                              "--gpu-memory-utilization", "0.9"}));
        QCOMPARE(
            list(command(s, p, ServingEngine::Sglang).argv),
            QStringList({"python3", "-m", "sglang.launch_server", "--model-path", "meta-llama/Llama-3.1-8B",
                         "--tp-size", "2", "--dp-size", "4", "--max-running-requests", "32",
                         "--context-length", "2000", "--mem-fraction-static", "0.834"}));
    }

    // samples/plans/deepseek-v3-dp-attention.yaml on 32 x 8 H100: tp 8 splits no weights (token/batch
    // everywhere), EP 256. vLLM: 256 DP ranks of TP 1, EP = TP x DP = 256, 8 DP ranks per node; SGLang: DP
    // attention over tp-size 256 with DeepEP, dense FFN and LM head data-parallel, 32 nodes.
    void deepseekDpAttention() {
        const Scenario s = sampleScenario("deepseek-v3-h100-32x8.yaml");
        auto loaded = loadPlan(kSamples + "/plans/deepseek-v3-dp-attention.yaml");
        QVERIFY(loaded.ok());
        Plan p = loaded.value();
        p.batch = 64;
        const LaunchCommand v = command(s, p, ServingEngine::Vllm);
        // --max-num-seqs: 64 sequences per tp-8 replica spread over its 8 GPUs = 8 per DP rank;
        // --trust-remote-code: the config.json's auto_map names custom code
        // (tests/data/hf/deepseek-v3.config.json).
        QCOMPARE(list(v.argv), QStringList({"vllm",
                                            "serve",
                                            "deepseek-ai/DeepSeek-V3",
                                            "--trust-remote-code",
                                            "--tensor-parallel-size",
                                            "1",
                                            "--data-parallel-size",
                                            "256",
                                            "--data-parallel-size-local",
                                            "8",
                                            "--data-parallel-address",
                                            "${HEAD_NODE_IP}",
                                            "--data-parallel-rpc-port",
                                            "13345",
                                            "--enable-expert-parallel",
                                            "--max-num-seqs",
                                            "8",
                                            "--max-model-len",
                                            "2000",
                                            "--gpu-memory-utilization",
                                            "0.9"}));
        QVERIFY2(hasNote(v, "EP = TP x DP = 1 x 256 = 256, the plan's ep"), qPrintable(notes(v)));
        QVERIFY2(hasNote(v, "--headless --data-parallel-start-rank K*8"), qPrintable(notes(v)));
        // DeepSeek-V3's checkpoint is FP8 already: no --quantization.
        QVERIFY2(hasNote(v, "checkpoint is taken to be FP8 already"), qPrintable(notes(v)));
        // SGLang's own memory fraction for 256 DP-attention ranks: reserved 512 + 8192 x 1.5 + 512 x 2 +
        // 256 / 8 x 1024 + 512 x 256 x 4.5 MiB, far more than 81,559: it would not start. Its reserve without
        // the DP-attention term stands in: 512 + 12,288 + 1,024 + 32,768 = 46,592 MiB, (81,559 - 46,592) /
        // 81,559 = 0.429, with a note; a fraction the scenario gives for SGLang is taken as it is.
        const LaunchCommand own = command(s, p, ServingEngine::Sglang);
        QCOMPARE(*flagAfter(own, "--mem-fraction-static"), std::string("0.429"));
        QVERIFY2(hasNote(own, "would be -"), qPrintable(notes(own)));
        Scenario withFraction = s;
        withFraction.constraints.memoryRule = MemoryRule::Sglang;
        withFraction.constraints.memoryFraction = 0.8;
        const LaunchCommand g = command(withFraction, p, ServingEngine::Sglang);
        // --max-running-requests: 64 per replica x 32 replicas = 2048, split by SGLang among 256 workers.
        QCOMPARE(list(g.argv), QStringList({"python3",
                                            "-m",
                                            "sglang.launch_server",
                                            "--model-path",
                                            "deepseek-ai/DeepSeek-V3",
                                            "--trust-remote-code",
                                            "--tp-size",
                                            "256",
                                            "--dp-size",
                                            "256",
                                            "--enable-dp-attention",
                                            "--ep-size",
                                            "256",
                                            "--moe-a2a-backend",
                                            "deepep",
                                            "--moe-dense-tp-size",
                                            "1",
                                            "--enable-dp-lm-head",
                                            "--nnodes",
                                            "32",
                                            "--node-rank",
                                            "${NODE_RANK}",
                                            "--dist-init-addr",
                                            "${HEAD_NODE_IP}:5000",
                                            "--max-running-requests",
                                            "2048",
                                            "--context-length",
                                            "2000",
                                            "--mem-fraction-static",
                                            "0.8"}));
        QVERIFY2(!hasNote(g, "Operator choices"), qPrintable(notes(g)));
    }

    // An MoE model with tp 1 and dp 8, experts expert-parallel over the 8 GPUs: DP attention in SGLang.
    void moeTp1Dp8() {
        const Scenario s = compose("mixtral-8x7b.yaml", "h100-1x8.yaml", "chat-serving.yaml");
        const Plan p = plan(1, 8, 1, 16, 8);
        QCOMPARE(list(command(s, p, ServingEngine::Vllm).argv),
                 QStringList({"vllm", "serve", "mistralai/Mixtral-8x7B-v0.1", "--tensor-parallel-size", "1",
                              "--data-parallel-size", "8", "--enable-expert-parallel", "--max-num-seqs", "16",
                              "--max-model-len", "2000", "--gpu-memory-utilization", "0.9"}));
        QCOMPARE(list(command(s, p, ServingEngine::Sglang).argv), QStringList({"python3",
                                                                               "-m",
                                                                               "sglang.launch_server",
                                                                               "--model-path",
                                                                               "mistralai/Mixtral-8x7B-v0.1",
                                                                               "--tp-size",
                                                                               "8",
                                                                               "--dp-size",
                                                                               "8",
                                                                               "--enable-dp-attention",
                                                                               "--ep-size",
                                                                               "8",
                                                                               "--moe-a2a-backend",
                                                                               "deepep",
                                                                               "--enable-dp-lm-head",
                                                                               "--max-running-requests",
                                                                               "128",
                                                                               "--context-length",
                                                                               "2000",
                                                                               "--mem-fraction-static",
                                                                               "0.592"}));
        // Experts in two groups of 4 (ep 4 x edp 2): two independent deployments (servers) of 4 GPUs each.
        const Plan two = plan(1, 8, 1, 16, 4);
        const LaunchCommand v = command(s, two, ServingEngine::Vllm);
        QCOMPARE(list(v.argv).mid(3, 5), QStringList({"--tensor-parallel-size", "1", "--data-parallel-size",
                                                      "4", "--enable-expert-parallel"}));
        QVERIFY2(hasNote(v, "one of 2 identical deployments of 4 GPUs"), qPrintable(notes(v)));
        QVERIFY2(hasNote(v, "EP = TP x DP = 1 x 4 = 4, the plan's ep"), qPrintable(notes(v)));
        const LaunchCommand g = command(s, two, ServingEngine::Sglang);
        QCOMPARE(list(g.argv).mid(5, 9),
                 QStringList({"--tp-size", "4", "--dp-size", "4", "--enable-dp-attention", "--ep-size", "4",
                              "--moe-a2a-backend", "deepep"}));
        QVERIFY2(hasNote(g, "one of 2 identical servers of 4 GPUs"), qPrintable(notes(g)));
        // Expert groups of ep 2 x etp 2: vLLM's EP has no expert TP.
        Plan mixed = plan(1, 2, 4, 16);
        mixed.degrees.ep = 2, mixed.degrees.etp = 2, mixed.degrees.edp = 2;
        const LaunchCommand m = command(s, mixed, ServingEngine::Vllm);
        QVERIFY2(hasNote(m, "the plan's expert groups (ep 2 x etp 2) are not expressible"),
                 qPrintable(notes(m)));
        QVERIFY2(list(command(s, mixed, ServingEngine::Sglang).argv)
                     .join(' ')
                     .contains("--tp-size 4 --dp-size 2 --ep-size 2 "),
                 "SGLang: moe TP = tp-size / ep = 2");
    }

    // Attention by batch inside a TP group on a dense model: SGLang's DP attention, a note for vLLM.
    void attentionByBatch() {
        const Scenario s = compose("llama-3.1-8b.yaml", "h100-1x8.yaml", "chat-serving.yaml");
        Plan p = plan(1, 1, 8, 40);
        p.setChoice(Op::Attention, choice::AttnBatch);
        const LaunchCommand g = command(s, p, ServingEngine::Sglang);
        QCOMPARE(list(g.argv).mid(5, 5),
                 QStringList({"--tp-size", "8", "--dp-size", "8", "--enable-dp-attention"}));
        const LaunchCommand v = command(s, p, ServingEngine::Vllm);
        QCOMPARE(list(v.argv).mid(3, 2), QStringList({"--tensor-parallel-size", "8"}));
        QVERIFY2(hasNote(v, "Attention by batch inside tp 8 (data-parallel attention) is not expressible"),
                 qPrintable(notes(v)));
    }

    // Llama-3.1-70B as PP2 x TP8 over two nodes (16 of the 4 x 8 GPUs), decode heavy (256 + 4096 tokens):
    // the replica spans nodes; two micro-batches of 100 are in flight.
    void pp2AcrossNodes() {
        const Scenario s = compose("llama-3.1-70b.yaml", "h100-4x8.yaml", "decode-heavy.yaml", 16);
        const Plan p = plan(2, 1, 8, 100);
        const LaunchCommand v = command(s, p, ServingEngine::Vllm);
        QCOMPARE(list(v.argv),
                 QStringList({"vllm", "serve", "meta-llama/Llama-3.1-70B", "--tensor-parallel-size", "8",
                              "--pipeline-parallel-size", "2", "--nnodes", "2", "--node-rank", "${NODE_RANK}",
                              "--master-addr", "${HEAD_NODE_IP}", "--max-num-seqs", "200", "--max-model-len",
                              "4352", "--gpu-memory-utilization", "0.9"}));
        QVERIFY2(hasNote(v, "adding --headless on nodes 1..1"), qPrintable(notes(v)));
        // 80 layers split evenly in two: no partition to set.
        QVERIFY(!hasNote(v, "VLLM_PP_LAYER_PARTITION"));
        QVERIFY2(v.text().find("export ") == std::string::npos, v.text().c_str());
        const LaunchCommand g = command(s, p, ServingEngine::Sglang);
        QCOMPARE(list(g.argv), QStringList({"python3",
                                            "-m",
                                            "sglang.launch_server",
                                            "--model-path",
                                            "meta-llama/Llama-3.1-70B",
                                            "--tp-size",
                                            "8",
                                            "--pp-size",
                                            "2",
                                            "--nnodes",
                                            "2",
                                            "--node-rank",
                                            "${NODE_RANK}",
                                            "--dist-init-addr",
                                            "${HEAD_NODE_IP}:5000",
                                            "--max-running-requests",
                                            "200",
                                            "--context-length",
                                            "4352",
                                            "--mem-fraction-static",
                                            "0.805"}));

        for (const auto& node : v.nodes)
            QVERIFY(node.env.end() == std::find_if(node.env.begin(), node.env.end(), [](const auto& e) {
                        return e.first == "VLLM_PP_LAYER_PARTITION";
                    }));
    }

    // A balanced plan whose split is not the engine's own: the variable is set for it too. Known answers
    // by hand from each engine's get_pp_indices (cited at engineDefaultStages in core/export/common.cpp)
    // and the balanced split (pipelineStages: the extra layers on the middle stages, on the first pp - 1
    // when there are pp - 1 of them).
    void balancedSplitAgainstTheEngines() {
        // 80 layers in 3 stages: the plan 27, 27, 26. vLLM puts the 2 extra layers on the stages before
        // the last (partitions[-2], [-3]): 27, 27, 26, the same, so nothing is set. SGLang 0.5.6 puts them
        // on the last two stages (26, 27, 27), 0.4.9 all on the last (26, 26, 28): both need the variable.
        const Scenario s3 = compose("llama-3.1-70b.yaml", "h100-4x8.yaml", "decode-heavy.yaml", 24);
        const Plan p3 = plan(3, 1, 8, 10);
        const LaunchCommand v = command(s3, p3, ServingEngine::Vllm);
        QVERIFY2(!hasNote(v, "VLLM_PP_LAYER_PARTITION"), qPrintable(notes(v)));
        QCOMPARE(envOf(v, "VLLM_PP_LAYER_PARTITION"), QStringList());
        for (const char* version : {"0.4.9", "0.5.6"}) {
            const LaunchCommand g = exportOk(s3, p3, ServingEngine::Sglang, version);
            QVERIFY2(hasNote(g, "SGLANG_PP_LAYER_PARTITION=27,27,26"), qPrintable(notes(g)));
            QVERIFY2(
                hasNote(g, std::string("would load ") + (version[2] == '4' ? "26, 26, 28" : "26, 27, 27")),
                qPrintable(notes(g)));
            QCOMPARE(envOf(g, "SGLANG_PP_LAYER_PARTITION"),
                     QStringList({"27,27,26", "27,27,26", "27,27,26"}));
        }
        // 80 layers in 6 stages (tp 4): the plan 13, 14, 14, 13, 13, 13; vLLM alone would load
        // 13, 13, 13, 14, 14, 13.
        const LaunchCommand v6 = command(s3, plan(6, 1, 4, 10), ServingEngine::Vllm);
        QVERIFY2(hasNote(v6, "would load 13, 13, 13, 14, 14, 13"), qPrintable(notes(v6)));
        QCOMPARE(envOf(v6, "VLLM_PP_LAYER_PARTITION"),
                 QStringList({"13,14,14,13,13,13", "13,14,14,13,13,13", "13,14,14,13,13,13"}));
    }

    // A plan with its own layers per stage (38 + 42 of Llama-3.1-70B's 80, pp 2 over two nodes): every
    // node sets the engine's variable to exactly those numbers, which read back as the engines' parsers
    // read them; Dynamo's workers keep it; TensorRT-LLM, which takes no split, exports the balanced one
    // or, strict, refuses.
    void planOwnSplit() {
        const Scenario s = compose("llama-3.1-70b.yaml", "h100-4x8.yaml", "decode-heavy.yaml", 16);
        Plan p = plan(2, 1, 8, 100);
        p.stageLayers = {38, 42};
        const std::vector<std::tuple<ServingEngine, ServingEngine, const char*>> cases = {
            {ServingEngine::Vllm, ServingEngine::Vllm, "VLLM_PP_LAYER_PARTITION"},
            {ServingEngine::Sglang, ServingEngine::Sglang, "SGLANG_PP_LAYER_PARTITION"},
            {ServingEngine::Dynamo, ServingEngine::Vllm, "VLLM_PP_LAYER_PARTITION"},
            {ServingEngine::Dynamo, ServingEngine::Sglang, "SGLANG_PP_LAYER_PARTITION"}};
        for (const auto& [engine, worker, var] : cases) {
            const LaunchCommand lc = exportOk(s, p, engine, {}, worker);
            QVERIFY(!lc.adapted);
            QCOMPARE(lc.nodes.size(), size_t(2));
            const QStringList values = envOf(lc, var);
            QCOMPARE(values, QStringList({"38,42", "38,42"}));
            // get_pp_indices: [int(layer) for layer in value.split(",")], len == pp_size, sum == layers.
            QList<int> parts;
            for (const QString& x : values[0].split(',')) parts << x.trimmed().toInt();
            QCOMPARE(parts, QList<int>({38, 42}));
            QVERIFY2(hasNote(lc, std::string(var) + "=38,42"), qPrintable(notes(lc)));
            const auto version = findEngineVersion(engine, "").value();
            const auto violations = checkLaunch(lc, s, version, worker);
            QVERIFY2(violations.empty(), violations.empty() ? "" : violations[0].c_str());
            // The command text and the scripts export it before the engine starts.
            QVERIFY2(lc.text().find(std::string("export ") + var + "=38,42\n") != std::string::npos,
                     lc.text().c_str());
            QVERIFY(lc.scripts()[1].second.find(std::string("export ") + var + "=38,42\n") !=
                    std::string::npos);
        }
        // The checker reads the variable as the engines do: a wrong sum, count or separator is refused.
        LaunchCommand bad = exportOk(s, p, ServingEngine::Vllm);
        const auto vllm = findEngineVersion(ServingEngine::Vllm, "").value();
        for (const auto& [value, why] :
             std::vector<std::pair<std::string, std::string>>{{"38,41", "adds up to 79 layers"},
                                                              {"80", "has 1 stages for a pipeline of 2"},
                                                              {"38;42", "not a comma-separated list"},
                                                              {"0,80", "gives a stage 0 layers"}}) {
            for (auto& [var, v] : bad.nodes[0].env)
                if (var == "VLLM_PP_LAYER_PARTITION") v = value;
            const auto violations = checkLaunch(bad, s, vllm);
            QVERIFY2(!violations.empty() && violations[0].find(why) != std::string::npos,
                     violations.empty() ? value.c_str() : violations[0].c_str());
        }

        // TensorRT-LLM: Mapping.pp_layers takes no split; 38, 42 is not its own (40, 40).
        ExportOptions o;
        o.engine = ServingEngine::Trtllm;
        const auto t = launchCommand(s, p, o);
        QVERIFY2(t.ok(), t.ok() ? "" : t.error().str().c_str());
        QVERIFY(t.value().adapted);
        QVERIFY(t.value().plan.stageLayers.empty());
        QVERIFY2(hasNote(t.value(), "splits the layers its own way (40, 40 per stage"),
                 qPrintable(notes(t.value())));
        o.adapt = false;
        const auto strict = launchCommand(s, p, o);
        QVERIFY(!strict.ok());
        QVERIFY2(strict.error().str().find("stage_layers") != std::string::npos,
                 strict.error().str().c_str());
        // A split that is TensorRT-LLM's own exports as it is.
        p.stageLayers = {40, 40};
        o.adapt = false;
        QVERIFY(launchCommand(s, p, o).ok());
    }

    // pp 2 x dp 2 x tp 8 on 4 nodes, mesh tp, dp, pp: vLLM lays ranks out tp, pp, dp.
    void meshOrderNote() {
        const Scenario s = compose("llama-3.1-70b.yaml", "h100-4x8.yaml", "decode-heavy.yaml");
        Plan p = plan(2, 2, 8, 50);
        const LaunchCommand v = command(s, p, ServingEngine::Vllm);
        QVERIFY2(hasNote(v, "the plan packs tp, then dp, then pp"), qPrintable(notes(v)));
        QVERIFY2(hasNote(v, "vLLM lays ranks out tp, then pp, then dp"), qPrintable(notes(v)));
        p.meshOrder = {Axis::TP, Axis::PP, Axis::DP};
        QVERIFY(!hasNote(command(s, p, ServingEngine::Vllm), "Mesh order"));
    }

    // FP8 KV cache (and FP8 weights on a BF16 checkpoint).
    void fp8() {
        Scenario s = compose("llama-3.1-8b.yaml", "h100-1x8.yaml", "chat-serving.yaml");
        s.model.kvCache = Dtype::FP8;
        const Plan p = plan(1, 1, 8, 64);
        QStringList v = list(command(s, p, ServingEngine::Vllm).argv);
        QVERIFY(v.join(' ').contains("--kv-cache-dtype fp8 "));
        QVERIFY(!v.contains("--quantization"));
        QStringList g = list(command(s, p, ServingEngine::Sglang).argv);
        QVERIFY(g.join(' ').contains("--kv-cache-dtype fp8_e4m3 "));
        s.model.weights = Dtype::FP8;
        v = list(command(s, p, ServingEngine::Vllm).argv);
        QVERIFY(v.join(' ').contains("--quantization fp8 --kv-cache-dtype fp8 "));
        g = list(command(s, p, ServingEngine::Sglang).argv);
        QVERIFY(g.join(' ').contains("--quantization fp8 --kv-cache-dtype fp8_e4m3 "));
        // A checkpoint named FP8 is not quantized again.
        v = list(command(s, p, ServingEngine::Vllm, "meta-llama/Llama-3.1-8B-Instruct-FP8").argv);
        QVERIFY(!v.contains("--quantization"));
        QCOMPARE(v[2], QString("meta-llama/Llama-3.1-8B-Instruct-FP8"));
    }

    // Plans that do not fit the scenario are refused with the reason.
    void refusesPlansThatDoNotFit() {
        const Scenario s = compose("llama-3.1-8b.yaml", "h100-1x8.yaml", "chat-serving.yaml");
        auto r = launchCommand(s, plan(1, 1, 16, 8), ServingEngine::Vllm);
        QVERIFY(!r.ok());
        const QString msg = QString::fromStdString(r.error().str());
        QVERIFY2(msg.contains("plan does not fit the scenario"), qPrintable(msg));
        QVERIFY2(msg.contains("does not match the 8 GPUs"), qPrintable(msg));
        // Llama-3.1-8B has 32 attention heads: tp 6 does not divide them.
        Scenario six = compose("llama-3.1-8b.yaml", "h100-1x8.yaml", "chat-serving.yaml", 6);
        r = launchCommand(six, plan(1, 1, 6, 8), ServingEngine::Sglang);
        QVERIFY(!r.ok());
        QVERIFY2(QString::fromStdString(r.error().str()).contains("divide the attention heads"),
                 r.error().str().c_str());
    }

    void modelPathAndQuoting() {
        Model m;
        m.name = "DeepSeek-V3";
        m.source = "https://huggingface.co/deepseek-ai/DeepSeek-V3/blob/main/config.json";
        QCOMPARE(defaultModelPath(m), std::string("deepseek-ai/DeepSeek-V3"));
        m.name = "Llama-2-70B";
        m.source = "https://huggingface.co/meta-llama/Llama-2-70b-hf/blob/main/config.json";
        QCOMPARE(defaultModelPath(m), std::string("meta-llama/Llama-2-70b-hf"));
        // The Hub id wins over the source.
        m.hubId = "meta-llama/Llama-2-70b-chat-hf";
        QCOMPARE(defaultModelPath(m), std::string("meta-llama/Llama-2-70b-chat-hf"));
        m.hubId.clear();
        // A synthetic model derived from another's config: the source is not its checkpoint, and a display
        // name is nothing an engine can load, so there is no default.
        m.name = "Synthetic-MoE-1.6T (synthetic)";
        m.source = "https://huggingface.co/deepseek-ai/DeepSeek-V3/blob/main/config.json";
        QCOMPARE(defaultModelPath(m), std::string());
        m.name = "My-Model", m.source = "our own training run";
        QCOMPARE(defaultModelPath(m), std::string());

        QCOMPARE(shellQuote("meta-llama/Llama-3.1-8B"), std::string("meta-llama/Llama-3.1-8B"));
        QCOMPARE(shellQuote("/models/my model"), std::string("'/models/my model'"));
        QCOMPARE(shellQuote("it's"), std::string("'it'\\''s'"));
        QCOMPARE(shellQuote("${HEAD_NODE_IP}:5000"), std::string("\"${HEAD_NODE_IP}:5000\""));
        QCOMPARE(shellQuote("$(reboot)"), std::string("'$(reboot)'"));
        QCOMPARE(shellQuote(""), std::string("''"));

        const Scenario s = compose("llama-3.1-70b.yaml", "h100-1x8.yaml", "chat-serving.yaml");
        const std::string text =
            command(s, plan(1, 1, 8, 64), ServingEngine::Vllm, "/models/llama 70b").text();
        QVERIFY2(text.rfind("vllm serve '/models/llama 70b' \\\n    --tensor-parallel-size 8 \\\n", 0) == 0,
                 text.c_str());
        QVERIFY2(text.find("\n# Operator choices vLLM") != std::string::npos, text.c_str());
    }

    // The attention context-parallel asserts of the same function (commit 001067fffe33): attn_cp_size > 1
    // needs tp_size % attn_cp_size == 0 and tp_size % (dp_size * attn_cp_size) == 0; the flag is
    // --attention-context-parallel-size, alias --attn-cp-size. With cp == moe_dp_size and ep * moe_dp ==
    // tp the moe_dp asserts hold: {tp 8, ep 4, moe_dp 2, cp 2} passes them.
    void sglangContextParallelAsserts() {
        const Scenario s = compose("mixtral-8x7b.yaml", "h100-1x8.yaml", "chat-serving.yaml");
        const EngineVersion now = findEngineVersion(ServingEngine::Sglang, "").value();
        LaunchCommand c = exportOk(s, megatron(1, 1, 8, 16, 8), ServingEngine::Sglang);
        auto check = [&](const std::vector<std::string>& args) { return checkSglangArgs(c, s, now, args); };
        auto has = [](const std::vector<std::string>& v, const char* what) {
            return std::find(v.begin(), v.end(), std::string(what)) != v.end();
        };
        auto v = check({"--tp-size", "8", "--dp-size", "4", "--enable-dp-attention", "--attn-cp-size", "4"});
        QVERIFY(has(v, "SGLang: tp_size must be divisible by dp_size * attn_cp_size")); // 8 % 16
        QVERIFY(!has(v, "SGLang: tp_size must be divisible by attn_cp_size"));          // 8 % 4 == 0
        v = check({"--tp-size", "8", "--attention-context-parallel-size", "3"});
        QVERIFY(has(v, "SGLang: tp_size must be divisible by attn_cp_size"));
        v = check({"--tp-size", "8", "--ep-size", "4", "--moe-dp-size", "2", "--attn-cp-size", "2"});
        for (const char* rule :
             {"SGLang: tp_size % moe_dp_size != 0", "SGLang: ep_size * moe_dp_size > tp_size",
              "SGLang: moe_dp_size > 1 with pp_size > 1", "SGLang: ep_size * moe_dp_size != tp_size",
              "SGLang: moe_dp_size > 1 without attn_cp_size == moe_dp_size",
              "SGLang: tp_size must be divisible by attn_cp_size",
              "SGLang: tp_size must be divisible by dp_size * attn_cp_size"})
            QVERIFY2(!has(v, rule), rule);
        v = check({"--tp-size", "8", "--pp-size", "2", "--ep-size", "2", "--moe-dp-size", "4",
                   "--attn-cp-size", "4"});
        QVERIFY(has(v, "SGLang: moe_dp_size > 1 with pp_size > 1"));
        QVERIFY(!has(v, "SGLang: ep_size * moe_dp_size != tp_size")); // 2 x 4 == 8
    }

    // SGLang 0.4.9 (server_args.py and layers/moe/ep_moe/layer.py at commit ec5f9c6269c1, version.py
    // "0.4.9"): get_moe_impl_class runs the experts expert-parallel over the whole tp_size (EPMoE, or
    // DeepEPMoE with --enable-deepep-moe, both setting ep_size = tp_size and asserting num_experts %
    // tp_size == 0) or tensor-parallel (FusedMoE); --ep-size alone shards nothing. Mixtral's 8 experts on
    // tp-size 8 as {ep 2, etp 4}: refused by 0.4.9 (adapted to ep 8 or ep 1), exported as is by 0.5.6.
    void sglang049ExpertParallel() {
        const Scenario s = compose("mixtral-8x7b.yaml", "h100-1x8.yaml", "chat-serving.yaml");
        const Plan p = megatron(1, 1, 8, 16, 2, 4);
        QVERIFY(!CostModel(s).checkPlan(p));
        ExportOptions o;
        o.engine = ServingEngine::Sglang, o.version = "0.4.9", o.adapt = false;
        const auto refused = launchCommand(s, p, o);
        QVERIFY(!refused.ok());
        QVERIFY2(refused.error().message.find("SGLang 0.4.9 runs the experts expert-parallel over the whole "
                                              "tp-size 8 or tensor-parallel over it, not ep 2 x etp 4") !=
                     std::string::npos,
                 refused.error().message.c_str());
        const LaunchCommand a = exportOk(s, p, ServingEngine::Sglang, "0.4.9");
        QVERIFY(a.adapted);
        const Degrees& d = a.plan.degrees;
        QVERIFY((d.ep == 8 && d.etp == 1) || (d.ep == 1 && d.etp == 8));
        QCOMPARE(hasArg(a, "--enable-deepep-moe"), d.ep == 8);
        QCOMPARE(hasArg(a, "--ep-size"), d.ep == 8);
        const EngineVersion old = findEngineVersion(ServingEngine::Sglang, "0.4.9").value();
        QVERIFY(checkLaunch(a, s, old).empty());
        const LaunchCommand now = exportOk(s, p, ServingEngine::Sglang);
        QVERIFY(!now.adapted);
        QCOMPARE(*flagAfter(now, "--ep-size"), std::string("2"));
        // The checker: --ep-size without an EP MoE flag; EP over a tp_size that does not divide the
        // experts (8 % 3); a KV dtype outside 0.4.9's choices {auto, fp8_e5m2, fp8_e4m3}.
        auto check = [&](const std::vector<std::string>& args) { return checkSglangArgs(now, s, old, args); };
        auto has = [](const std::vector<std::string>& v, const std::string& what) {
            return std::find(v.begin(), v.end(), what) != v.end();
        };
        QVERIFY(
            has(check({"--tp-size", "8", "--ep-size", "2"}),
                "SGLang 0.4.9: --ep-size without --enable-ep-moe or --enable-deepep-moe shards no experts"));
        QVERIFY(has(check({"--tp-size", "3", "--ep-size", "3", "--enable-deepep-moe"}),
                    "SGLang 0.4.9: the experts do not divide by the expert-parallel tp_size 3"));
        QVERIFY(check({"--tp-size", "8", "--ep-size", "8", "--enable-deepep-moe"}).empty());
        QVERIFY(has(check({"--tp-size", "8", "--kv-cache-dtype", "fp8"}),
                    "SGLang 0.4.9: --kv-cache-dtype fp8 is not among auto, fp8_e5m2, fp8_e4m3"));
        QVERIFY(check({"--tp-size", "8", "--kv-cache-dtype", "fp8_e4m3"}).empty());
    }

    // SGLang's default --chunked-prefill-size by GPU memory: 0.5.6 (commit 001067fffe33,
    // _handle_gpu_memory_settings) has a 4096 step from 35 to 60 GiB, 0.4.9's ServerArgs.__post_init__
    // (commit ec5f9c6269c1) goes from 2048 straight to 8192 at 35 GiB. On a GPU of 48 GB (45776 MiB, a
    // hand-made variant of the H100 sample) a 32768-token prompt is 32768 / 4096 = 8 chunks in 0.5.6 and
    // 32768 / 8192 = 4 in 0.4.9.
    void sglangChunkedPrefillByVersion() {
        Scenario s = compose("llama-3.1-8b.yaml", "h100-1x8.yaml", "long-context-prefill.yaml");
        s.cluster.gpu.hbmGB = 48;
        const Plan p = megatron(1, 1, 8, 1);
        QVERIFY2(hasNote(exportOk(s, p, ServingEngine::Sglang),
                         "is 4096 tokens, so each 32768-token prompt is "
                         "prefilled in 8 chunks"),
                 qPrintable(notes(exportOk(s, p, ServingEngine::Sglang))));
        QVERIFY2(hasNote(exportOk(s, p, ServingEngine::Sglang, "0.4.9"),
                         "is 8192 tokens, so each 32768-token "
                         "prompt is prefilled in 4 chunks"),
                 qPrintable(notes(exportOk(s, p, ServingEngine::Sglang, "0.4.9"))));
    }

    // An MoE model's DP ranks larger than a host: DeepSeek-V3 on two GB200 NVL72 racks (hosts of 4 GPUs),
    // the Megatron plan's tp 8. vLLM 0.10.2 places each DP rank on one node (create_dp_placement_groups) and
    // its expert layers span TP x DP, so it is refused under --strict and moved to tp 4 (dp doubled, the
    // expert degrees kept) otherwise; the newer row exports it as is over Ray.
    void vllm0102MoeRanksOnOneHost() {
        const Scenario s = sampleScenario("deepseek-v3-gb200-nvl72-x2.yaml");
        const Plan p = CostModel(s).megatronPlan();
        QCOMPARE(p.degrees.tp, 8);
        QVERIFY(p.degrees.dp > 1);
        ExportOptions o;
        o.engine = ServingEngine::Vllm, o.version = "0.10.2", o.adapt = false;
        const auto refused = launchCommand(s, p, o);
        QVERIFY(!refused.ok());
        QVERIFY2(refused.error().message.find(
                     "vLLM 0.10.2 places each DP rank on one host, and a DP rank here "
                     "is tp 8 x pp 1 = 8 GPUs, more than a host's 4") != std::string::npos,
                 refused.error().message.c_str());
        const LaunchCommand a = exportOk(s, p, ServingEngine::Vllm, "0.10.2");
        QVERIFY(a.adapted);
        QCOMPARE(a.plan.degrees.tp, 4);
        QCOMPARE(a.plan.degrees.dp, 2 * p.degrees.dp);
        QCOMPARE(a.plan.degrees.ep, p.degrees.ep);
        QVERIFY2(hasNote(a, "tp 8 -> 4"), qPrintable(notes(a)));
        QVERIFY(checkLaunch(a, s, findEngineVersion(ServingEngine::Vllm, "0.10.2").value()).empty());
        QVERIFY(!exportOk(s, p, ServingEngine::Vllm).adapted);
    }

    // vLLM: a replica (world size tp x pp) larger than a host. 0.10.2's ParallelConfig.__post_init__
    // (vllm/config/parallel.py at tag v0.10.2, commit e017120ed146) picks the Ray executor itself when
    // --distributed-executor-backend is unset and cuda_device_count_stateless() < world_size; an explicit mp
    // executor is refused (vllm/executor/mp_distributed_executor.py _check_cuda: "please ensure that
    // world_size (16) is less than than max local gpu count (8)"). The newer row (commit 840e7972c6ab)
    // refuses the unset executor too. --nnodes does not exist in 0.10.2 (vllm/engine/arg_utils.py).
    void vllmExecutorRules() {
        const Scenario s = compose("llama-3.1-405b.yaml", "h200-16x8.yaml", "chat-serving.yaml", 16);
        LaunchCommand cmd = exportOk(s, megatron(2, 1, 8, 32), ServingEngine::Vllm, "0.10.2");
        auto with = [&](std::vector<std::string> extra) {
            cmd.argv = {"vllm",
                        "serve",
                        "meta-llama/Llama-3.1-405B",
                        "--tensor-parallel-size",
                        "8",
                        "--pipeline-parallel-size",
                        "2",
                        "--max-model-len",
                        "2000"};
            cmd.argv.insert(cmd.argv.end(), extra.begin(), extra.end());
            NodeLaunch node;
            node.commands = {cmd.argv};
            cmd.nodes = {node};
            return cmd;
        };
        const EngineVersion v10 = findEngineVersion(ServingEngine::Vllm, "0.10.2").value();
        const EngineVersion v12 = findEngineVersion(ServingEngine::Vllm, "0.12.0").value();
        auto mentions = [](const std::vector<std::string>& v, const std::string& part) {
            return std::any_of(v.begin(), v.end(),
                               [&](const auto& x) { return x.find(part) != std::string::npos; });
        };
        // Unset executor: Ray by default in 0.10.2, refused by the newer row.
        auto v = checkLaunch(with({}), s, v10);
        QVERIFY2(!mentions(v, "larger than"), v.empty() ? "" : v[0].c_str());
        v = checkLaunch(with({}), s, v12);
        QVERIFY(mentions(v, "world size 16 is larger than the 8 GPUs of a node without "
                            "--distributed-executor-backend ray or --nnodes"));
        // --data-parallel-backend ray alone also selects Ray in 0.10.2.
        QVERIFY(!mentions(checkLaunch(with({"--data-parallel-backend", "ray"}), s, v10), "larger than"));
        // The mp executor: refused by both.
        v = checkLaunch(with({"--distributed-executor-backend", "mp"}), s, v10);
        QVERIFY(mentions(v, "world size 16 is larger than the 8 GPUs of a node with the mp executor"));
        QVERIFY(mentions(checkLaunch(with({"--distributed-executor-backend", "mp"}), s, v12), "larger than"));
        // Ray named: accepted by both.
        QVERIFY(checkLaunch(with({"--distributed-executor-backend", "ray"}), s, v10).empty());
        // What the export writes for 0.10.2 names Ray (the command says what runs), and passes.
        const LaunchCommand e10 = exportOk(s, megatron(2, 1, 8, 32), ServingEngine::Vllm, "0.10.2");
        QCOMPARE(*flagAfter(e10, "--distributed-executor-backend"), std::string("ray"));
        QVERIFY(checkLaunch(e10, s, v10).empty());
        const LaunchCommand newer = exportOk(s, megatron(2, 1, 8, 32), ServingEngine::Vllm);
        v = checkLaunch(newer, s, v10);
        QVERIFY(std::find(v.begin(), v.end(), "vLLM 0.10.2 does not have --nnodes") != v.end());
        // 0.10.2's KV cache dtypes are CacheDType's (vllm/config/cache.py at v0.10.2): fp8_inc is one of
        // them, fp8_e3m4 is not.
        QVERIFY(checkLaunch(with({"--distributed-executor-backend", "ray", "--kv-cache-dtype", "fp8_inc"}), s,
                            v10)
                    .empty());
        QVERIFY(mentions(
            checkLaunch(with({"--distributed-executor-backend", "ray", "--kv-cache-dtype", "fp8_e3m4"}), s,
                        v10),
            "--kv-cache-dtype fp8_e3m4 is not among auto, fp8, fp8_e4m3, fp8_e5m2, fp8_inc"));
    }
};

QTEST_GUILESS_MAIN(TestLaunch)
#include "tst_launch.moc"
