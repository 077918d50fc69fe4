// Exports read back: every sample scenario's Megatron plan, a short search's best plan and 50 random valid
// plans, exported for every engine and known version, parsed back from the node scripts and checked
// against that version's flags and asserts (core/export/check.h). Then the engine-version rules one by one:
// unknown versions, the SGLang --moe-dp-size asserts (tst_launch.cpp has the older versions' rules), the
// context capped by max_position_embeddings, the model path.
#include "core/cost/costmodel.h"
#include "core/cost/disagg.h"
#include "core/export/check.h"
#include "core/export/disagg_launch.h"
#include "core/export/launch.h"
#include "core/io/formats.h"
#include "core/search/engine.h"
#include "core/search/rng.h"
#include "core/search/space.h"
#include "core/searchers/registry.h"

#include "launch_fixtures.h"
#include <QDir>
#include <QProcess>
#include <QTemporaryDir>
#include <yaml-cpp/yaml.h>

#include <QTest>

#include <csignal>

using namespace sp;

namespace {

const std::string kSamples = SHARDPLAN_SAMPLES_DIR;
/// The property test's Llama-3.1-8B scenario with workload acceptance rates for EAGLE-3 and n-gram.
constexpr const char* kSpecVariant = "llama-3.1-8b-h100-1x8.yaml with eagle3 and ngram rates";

using namespace test;

/// The attention-DP + EP plan: every attention-side operator on each GPU's own tokens (DP attention),
/// experts over 8 GPUs.
Plan attentionDpPlan(int tp, int ep, int64_t batch) {
    Plan p = Plan::megatronChoices(Degrees{1, 1, tp, ep, 1, tp / ep});
    for (Op op : {Op::Embedding}) p.setChoice(op, choice::EmbReplicated);
    for (Op op : {Op::Norms, Op::MoeNorms}) p.setChoice(op, choice::NormToken);
    for (Op op : {Op::Qkv, Op::MoeQkv}) p.setChoice(op, choice::QkvToken);
    for (Op op : {Op::Attention, Op::MoeAttention}) p.setChoice(op, choice::AttnBatch);
    for (Op op : {Op::OutProj, Op::MoeOutProj}) p.setChoice(op, choice::OutToken);
    p.setChoice(Op::Router, choice::RouterToken);
    p.setChoice(Op::FfnUp, choice::UpToken);
    p.setChoice(Op::FfnDown, choice::DownToken);
    p.setChoice(Op::SharedExperts, choice::SharedToken);
    p.setChoice(Op::LmHead, choice::HeadToken);
    p.batch = batch;
    return p;
}

struct Target {
    ServingEngine engine;
    EngineVersion version;
    ServingEngine worker = ServingEngine::Vllm;
    std::string label() const {
        return std::string(nameOf(engine)) + " " + version.version +
               (engine == ServingEngine::Dynamo ? "/" + std::string(nameOf(worker)) : "");
    }
};

std::vector<Target> targets() {
    std::vector<Target> out;
    for (ServingEngine e : servingEngines())
        for (const auto& v : engineVersions(e)) {
            if (e == ServingEngine::Dynamo) {
                for (ServingEngine w : {ServingEngine::Vllm, ServingEngine::Sglang, ServingEngine::Trtllm})
                    out.push_back({e, v, w});
            } else {
                out.push_back({e, v});
            }
        }
    return out;
}

} // namespace

class TestExport : public QObject {
    Q_OBJECT
private slots:
    // SGLang 0.5.6 on B200/GB200 picks trtllm_mla (KV pages of 64) for DeepSeek-V3, divides
    // --chunked-prefill-size by the DP-attention size, then asserts the share divides by the page
    // (server_args.py at 7ae368efde14: L1366-1384, L1491-1503, L4017-4023). Its default 16,384 over 6 DP
    // workers is 2,730 a worker: "AssertionError: chunked_prefill_size must be divisible by page_size". Every
    // exported DP-attention launch must pass that assertion, the written size or the default.
    void sglangChunkDividesByPageOnBlackwell() {
        int dpAttention = 0, offDefault = 0;
        for (const char* file : {"deepseek-v3-b200-18x8.yaml", "deepseek-v3-gb200-nvl72-x2.yaml"}) {
            auto loaded = loadScenario(kSamples + "/scenarios/" + file);
            QVERIFY2(loaded.ok(), loaded.error().str().c_str());
            const Scenario& s = loaded.value();
            QCOMPARE(s.model.architecture, std::string("DeepseekV3ForCausalLM"));
            const CostModel cost(s);
            const SearchSpace space(s);
            Rng rng(5);
            for (int i = 0; i < 300; ++i) {
                const Plan p = space.toPlan(i % 2 ? space.sample(rng) : space.sampleByDecision(rng));
                ExportOptions o;
                o.engine = ServingEngine::Sglang, o.version = "0.5.6";
                const auto r = launchCommand(s, p, o);
                if (!r) continue;
                const auto& a = r->argv;
                const auto value = [&a](const char* flag) -> int64_t {
                    const auto it = std::find(a.begin(), a.end(), flag);
                    return it == a.end() || it + 1 == a.end() ? 0 : std::stoll(*(it + 1));
                };
                if (std::find(a.begin(), a.end(), "--enable-dp-attention") == a.end()) continue;
                ++dpAttention;
                const int64_t dp = value("--dp-size"), given = value("--chunked-prefill-size");
                QVERIFY(dp > 1);
                const int64_t chunk = given > 0 ? given : 16384; // the default above 160 GiB (B200: 179 GiB)
                offDefault += (16384 / dp) % 64 != 0;
                QVERIFY2((chunk / dp) % 64 == 0,
                         qPrintable(QString("%1, dp %2: --chunked-prefill-size %3 gives %4 a worker")
                                        .arg(file)
                                        .arg(dp)
                                        .arg(chunk)
                                        .arg(chunk / dp)));
                // Written only where the default fails, and no larger than it; the start-up checks pass the
                // command, and refuse it with the default (the flag taken out) where the default fails.
                QVERIFY(given == 0 || ((16384 / dp) % 64 != 0 && given <= 16384));
                const EngineVersion v56 = findEngineVersion(ServingEngine::Sglang, "0.5.6").value();
                QVERIFY(checkLaunch(r.value(), s, v56).empty());
                if (given > 0) {
                    LaunchCommand bare = r.value();
                    const auto drop = [](std::vector<std::string>& cmd) {
                        const auto it = std::find(cmd.begin(), cmd.end(), "--chunked-prefill-size");
                        if (it != cmd.end() && it + 1 != cmd.end()) cmd.erase(it, it + 2);
                    };
                    drop(bare.argv);
                    for (auto& node : bare.nodes)
                        for (auto& cmd : node.commands) drop(cmd);
                    const auto found = checkLaunch(bare, s, v56);
                    QVERIFY2(std::any_of(found.begin(), found.end(),
                                         [](const std::string& x) {
                                             return x.find("chunked_prefill_size must be divisible by page_size") !=
                                                    std::string::npos;
                                         }),
                             found.empty() ? "no violation" : found[0].c_str());
                }
            }
        }
        QVERIFY2(offDefault > 0, qPrintable(QString("no DP size the default fails among %1").arg(dpAttention)));
    }

    void everyExportPassesItsEngineChecks_data() {
        QTest::addColumn<QString>("scenario");
        for (const auto& f : QDir(QString::fromStdString(kSamples + "/scenarios")).entryList({"*.yaml"}))
            QTest::addRow("%s", qPrintable(f)) << f;
        // Llama-3.1-8B with acceptance rates for its EAGLE-3 head and for n-gram lookup, so that the search
        // space (and the random plans) hold those methods too (see kSpecVariant below).
        QTest::addRow("%s", kSpecVariant) << QString(kSpecVariant);
    }

    void everyExportPassesItsEngineChecks() {
        QFETCH(QString, scenario);
        const bool variant = scenario == kSpecVariant;
        auto loaded =
            loadScenario(kSamples + "/scenarios/" +
                         (variant ? std::string("llama-3.1-8b-h100-1x8.yaml") : scenario.toStdString()));
        QVERIFY2(loaded.ok(), loaded.error().str().c_str());
        Scenario s = loaded.value();
        if (variant) {
            // Test inputs, not measurements: rates falling with depth, as acceptance does.
            s.workload.acceptance[size_t(SpecMethod::Eagle3)] = {0.8, 0.7, 0.6};
            s.workload.acceptance[size_t(SpecMethod::Ngram)] = {0.5, 0.3};
        }
        const CostModel cost(s);
        std::vector<std::pair<std::string, Plan>> plans = {{"megatron", cost.megatronPlan()}};
        {
            const CostModelObjective objective(cost);
            const SearchSpace space(s);
            Engine engine(objective);
            SearchOptions o;
            o.budget.evaluations = 200;
            o.seed = 7;
            const SearchResult r = makeSearcher("sa")->run(space, engine, o, nullptr, {});
            QVERIFY(r.evaluations > 0);
            plans.push_back({"best of sa 200", r.best.plan});
            Rng rng(12);
            for (int i = 0; i < 50; ++i) {
                const Plan p = space.toPlan(i % 2 ? space.sample(rng) : space.sampleByDecision(rng));
                QVERIFY(!cost.checkPlan(p));
                plans.push_back({"random " + std::to_string(i), p});
                // The same layout with its own layers per stage: one layer moved from the first stage to
                // the last, so the exports must set the engines' layer partition (or adapt and refuse).
                const int pp = p.degrees.pp, L = int(s.model.layers);
                if (pp > 1 && L / pp >= 2) {
                    Plan own = p;
                    for (const auto& [begin, n] : pipelineStages(L, pp)) own.stageLayers.push_back(n);
                    own.stageLayers.front() -= 1, own.stageLayers.back() += 1;
                    QVERIFY(!cost.checkPlan(own));
                    plans.push_back({"random " + std::to_string(i) + " with its own stage_layers", own});
                }
            }
        }
        // The synthetic model has no checkpoint: its exports name one.
        const std::string model = s.model.hubId.empty() ? "/models/synthetic" : "";
        int exported = 0, refused = 0, adapted = 0, graphs = 0, speculative = 0;
        for (const Target& t : targets()) {
            // A release that cannot load the model, or an engine that does not run on the cluster's GPUs,
            // refuses every plan with that reason, the Megatron plan too (issue 37).
            std::string whole;
            for (const auto& [what, plan] : plans) {
                ExportOptions o;
                o.engine = t.engine, o.version = t.version.version, o.dynamoWorker = t.worker,
                o.modelPath = model;
                const auto r = launchCommand(s, plan, o);
                if (&plan == &plans[0].second && !r &&
                    (r.error().message.find(" cannot load ") != std::string::npos ||
                     r.error().message.find(" runs on NVIDIA GPUs only") != std::string::npos))
                    whole = r.error().message;
                if (!whole.empty()) {
                    QVERIFY2(!r && r.error().message == whole, (t.label() + ", " + what).c_str());
                    ++refused;
                    continue;
                }
                if (!r) {
                    // The Megatron plan is always exported (adapted where needed); any other plan, the
                    // search's best included, may be refused with the engine's reason (issue 12: "refused
                    // with the reason, or exported with the nearest runnable layout").
                    QVERIFY2(&plan != &plans[0].second,
                             (t.label() + ", " + what + ": " + r.error().message).c_str());
                    // A refusal says why; the only reasons are the ones the engines give.
                    QVERIFY2(r.error().message.find("cannot export") != std::string::npos,
                             (t.label() + ", " + what + ": " + r.error().message).c_str());
                    ++refused;
                    qInfo("refused: %s, %s %s: %s", t.label().c_str(), what.c_str(),
                          degreesTextForTest(plan).c_str(), r.error().message.c_str());
                    continue;
                }
                ++exported;
                adapted += r->adapted;
                speculative += r->plan.spec.on();
                QCOMPARE(r->version, t.version.version);
                const auto violations = checkLaunch(r.value(), s, t.version, t.worker);
                if (!violations.empty()) {
                    std::string all;
                    for (const auto& v : violations) all += "\n  " + v;
                    QFAIL((t.label() + ", " + what + " " + degreesTextForTest(plan) + ":" + all + "\n" +
                           r->text())
                              .c_str());
                }
                // Dynamo's Kubernetes graph, where it writes one: the same checks on its workers, and its
                // replicas x nodes x GPUs per pod equal to the plan's GPUs.
                for (const auto& [file, yaml] : r->deployFiles) {
                    QCOMPARE(file, std::string("dynamo-graph.yaml"));
                    ++graphs;
                    const auto gv = checkDynamoGraph(yaml, s, s.gpus(), t.worker);
                    if (!gv.empty())
                        QFAIL((t.label() + ", " + what + " " + degreesTextForTest(plan) +
                               ": dynamo-graph.yaml: " + gv[0] + "\n" + yaml)
                                  .c_str());
                }
                // A plan exported with its own layers per stage: every node that starts something sets the
                // engine's variable to exactly those numbers (TensorRT-LLM has none: it exports the
                // balanced split instead, adapted).
                const ServingEngine e = t.engine == ServingEngine::Dynamo ? t.worker : t.engine;
                if (!r->plan.stageLayers.empty()) {
                    QVERIFY2(e != ServingEngine::Trtllm, (t.label() + ", " + what).c_str());
                    std::string want;
                    for (int n : r->plan.stageLayers) want += (want.empty() ? "" : ",") + std::to_string(n);
                    const char* var =
                        e == ServingEngine::Vllm ? "VLLM_PP_LAYER_PARTITION" : "SGLANG_PP_LAYER_PARTITION";
                    for (const auto& node : r->nodes) {
                        if (node.commands.empty()) continue;
                        const auto it = std::find_if(node.env.begin(), node.env.end(),
                                                     [&](const auto& kv) { return kv.first == var; });
                        QVERIFY2(it != node.env.end() && it->second == want,
                                 (t.label() + ", " + what + ": no " + var + "=" + want).c_str());
                    }
                }
            }
        }
        qInfo("%s: %d exported (%d with the nearest runnable layout, %d with speculative decoding), %d "
              "refused; %d Dynamo graphs",
              qPrintable(scenario), exported, adapted, speculative, refused, graphs);
        QVERIFY(exported >= 2 * int(targets().size()));
    }

    // ------------------------------------------------------------------------------------------------
    // Known answers. Dense: Llama-3.1-70B, TP 8 on one 8 x H100 node, chat serving (1000 + 1000 tokens),
    // 64 sequences, headroom 0.05.
    void knownDense() {
        const Scenario s = compose("llama-3.1-70b.yaml", "h100-1x8.yaml", "chat-serving.yaml");
        const Plan p = megatron(1, 1, 8, 64);
        // vLLM (docs.vllm.ai engine args): `vllm serve MODEL --tensor-parallel-size 8`; --max-num-seqs is
        // the scheduler's sequence cap; --max-model-len = 1000 + 1000.
        QCOMPARE(list(exportOk(s, p, ServingEngine::Vllm).argv),
                 QStringList({"vllm", "serve", "meta-llama/Llama-3.1-70B", "--tensor-parallel-size", "8",
                              "--max-num-seqs", "64", "--max-model-len", "2000", "--gpu-memory-utilization",
                              "0.9"}));
        // SGLang (docs.sglang.io server arguments): --tp-size, --max-running-requests, --context-length,
        // --mem-fraction-static.
        QCOMPARE(list(exportOk(s, p, ServingEngine::Sglang).argv),
                 QStringList({"python3", "-m", "sglang.launch_server", "--model-path",
                              "meta-llama/Llama-3.1-70B", "--tp-size", "8", "--max-running-requests", "64",
                              "--context-length", "2000", "--mem-fraction-static", "0.818"}));
        // TensorRT-LLM (trtllm-serve reference, tensorrt_llm/commands/serve.py): --max_num_tokens keeps its
        // default 8192 (a 1000-token prompt fits); --max_seq_len 2000.
        const LaunchCommand t = exportOk(s, p, ServingEngine::Trtllm);
        QStringList argv = list(t.argv);
        const int f = int(argv.indexOf("--kv_cache_free_gpu_memory_fraction"));
        QVERIFY(f > 0);
        const double fraction = argv[f + 1].toDouble();
        argv.remove(f, 2);
        QCOMPARE(argv, QStringList({"trtllm-serve", "meta-llama/Llama-3.1-70B", "--backend", "pytorch",
                                    "--tp_size", "8", "--pp_size", "1", "--max_batch_size", "64",
                                    "--max_num_tokens", "8192", "--max_seq_len", "2000",
                                    "--extra_llm_api_options", "extra-llm-api-options.yaml"}));
        // The KV fraction of the memory left after weights, activations and reserve: TensorRT-LLM's default
        // 0.9, the rule the cost model sized the pool with when the plan is served by TensorRT-LLM: its pool
        // is 0.9 x (81,559 MiB - weights - activations - reserve), by hand from its figures.
        QCOMPARE(fraction, 0.9);
        Scenario trt = s;
        trt.constraints.memoryRule = MemoryRule::Trtllm;
        const Metrics m = CostModel(trt).evaluate(p);
        const double used = m.weightsGiB + m.activationsGiB + m.reserveGiB;
        QVERIFY2(std::abs(m.kvPoolGiB - 0.9 * (81559.0 / 1024.0 - used)) < 1e-9, qPrintable(argv.join(' ')));
        QVERIFY(m.kvCacheGiB <= m.kvPoolGiB);
        QCOMPARE(QString::fromStdString(t.files.at(0).second),
                 QString("# TensorRT-LLM LLM API options for this plan (tensorrt_llm/llmapi/llm_args.py)\n"
                         "enable_attention_dp: false\n"
                         "kv_cache_config:\n  free_gpu_memory_fraction: %1\n"
                         "cuda_graph_config:\n  max_batch_size: 64\n  enable_padding: true\n")
                     .arg(argv.isEmpty() ? QString() : list(t.argv)[f + 1]));
        // Dynamo (components/src/dynamo/frontend, dynamo/vllm/args.py): the frontend in the background, the
        // vLLM worker with vLLM's own flags and --model.
        const LaunchCommand d = exportOk(s, p, ServingEngine::Dynamo);
        QCOMPARE(d.nodes.size(), size_t(1));
        QCOMPARE(d.nodes[0].background, size_t(1));
        QCOMPARE(list(d.nodes[0].commands[0]),
                 QStringList({"python3", "-m", "dynamo.frontend", "--http-port", "8000"}));
        QCOMPARE(list(d.argv),
                 QStringList({"python3", "-m", "dynamo.vllm", "--model", "meta-llama/Llama-3.1-70B",
                              "--tensor-parallel-size", "8", "--max-num-seqs", "64", "--max-model-len",
                              "2000", "--gpu-memory-utilization", "0.9"}));
    }

    // MoE with attention DP + EP: Qwen3-235B-A22B (128 experts, 64 heads) on 8 x H200, every attention-side
    // operator on each GPU's own tokens, EP 8, 32 sequences.
    void knownMoeAttentionDp() {
        const Scenario s = compose("qwen3-235b-a22b.yaml", "h200-1x8.yaml", "chat-serving.yaml");
        const Plan p = attentionDpPlan(8, 8, 32);
        // vLLM (docs/serving/data_parallel_deployment.md): DP 8 of TP 1 with --enable-expert-parallel makes
        // EP = TP x DP = 8; --max-num-seqs is per DP rank: 32 / 8 = 4.
        QCOMPARE(list(exportOk(s, p, ServingEngine::Vllm).argv),
                 QStringList({"vllm", "serve", "Qwen/Qwen3-235B-A22B", "--tensor-parallel-size", "1",
                              "--data-parallel-size", "8", "--enable-expert-parallel", "--max-num-seqs", "4",
                              "--max-model-len", "2000", "--gpu-memory-utilization", "0.9"}));
        // SGLang (docs.sglang.io expert parallelism, server arguments): DP attention over tp-size 8
        // (attention TP = 8 / 8 = 1), EP 8 with DeepEP all-to-all (--moe-a2a-backend deepep sets ep = tp);
        // the LM head data-parallel. 0.4.9 spells DeepEP --enable-deepep-moe.
        const QStringList sglang = {"python3",
                                    "-m",
                                    "sglang.launch_server",
                                    "--model-path",
                                    "Qwen/Qwen3-235B-A22B",
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
                                    "32",
                                    "--context-length",
                                    "2000",
                                    "--mem-fraction-static",
                                    "0.769"};
        QCOMPARE(list(exportOk(s, p, ServingEngine::Sglang).argv), sglang);
        QStringList old = sglang;
        old.replace(old.indexOf("--moe-a2a-backend"), "--enable-deepep-moe");
        old.removeAt(old.indexOf("deepep"));
        QCOMPARE(list(exportOk(s, p, ServingEngine::Sglang, "0.4.9").argv), old);
        // TensorRT-LLM (llm_args.py): enable_attention_dp with tp_size 8, moe_expert_parallel_size 8 x
        // moe_tensor_parallel_size 1 = 8; max_batch_size per attention-DP rank: 32 / 8 = 4.
        const LaunchCommand t = exportOk(s, p, ServingEngine::Trtllm);
        QCOMPARE(list(t.argv).mid(0, 12),
                 QStringList({"trtllm-serve", "Qwen/Qwen3-235B-A22B", "--backend", "pytorch", "--tp_size",
                              "8", "--pp_size", "1", "--ep_size", "8", "--max_batch_size", "4"}));
        const QString yaml = QString::fromStdString(t.files.at(0).second);
        for (const char* line :
             {"enable_attention_dp: true\n", "moe_expert_parallel_size: 8\n", "moe_tensor_parallel_size: 1\n",
              "moe_config:\n  backend: CUTLASS\n", "cuda_graph_config:\n  max_batch_size: 4\n"})
            QVERIFY2(yaml.contains(line), qPrintable(yaml));
        // Dynamo with the SGLang worker: SGLang's flags under dynamo.sglang.
        QStringList dyn = sglang;
        dyn[2] = "dynamo.sglang";
        QCOMPARE(list(exportOk(s, p, ServingEngine::Dynamo, {}, ServingEngine::Sglang).argv), dyn);
    }

    // Multi-node: Llama-3.1-405B as TP 8 x PP 2 over two 8 x H200 nodes, 32 sequences per micro-batch (64
    // in flight).
    void knownMultiNode() {
        const Scenario s = compose("llama-3.1-405b.yaml", "h200-16x8.yaml", "chat-serving.yaml", 16);
        const Plan p = megatron(2, 1, 8, 32);
        const QStringList common = {"vllm",
                                    "serve",
                                    "meta-llama/Llama-3.1-405B",
                                    "--tensor-parallel-size",
                                    "8",
                                    "--pipeline-parallel-size",
                                    "2"};
        const QStringList tail = {"--max-num-seqs",           "64", "--max-model-len", "2000",
                                  "--gpu-memory-utilization", "0.9"};
        // vLLM 0.12 (docs/serving/parallelism_scaling.md): multiprocessing over nodes with --nnodes,
        // --node-rank, --master-addr; --headless on the other nodes.
        const LaunchCommand v = exportOk(s, p, ServingEngine::Vllm);
        QCOMPARE(list(v.argv), common +
                                   QStringList({"--nnodes", "2", "--node-rank", "${NODE_RANK}",
                                                "--master-addr", "${HEAD_NODE_IP}"}) +
                                   tail);
        QCOMPARE(v.nodes.size(), size_t(2));
        QCOMPARE(list(v.nodes[1].commands.back()).mid(v.argv.size()), QStringList({"--headless"}));
        QCOMPARE(v.nodes[1].env.front(), (std::pair<std::string, std::string>{"NODE_RANK", "1"}));
        // vLLM 0.10 (docs/serving/distributed_serving.md of that release): a Ray cluster, and
        // --distributed-executor-backend ray (ParallelConfig refuses a world size above the host's GPUs).
        const LaunchCommand v10 = exportOk(s, p, ServingEngine::Vllm, "0.10.2");
        QCOMPARE(list(v10.argv), common + QStringList({"--distributed-executor-backend", "ray"}) + tail);
        QCOMPARE(list(v10.nodes[0].commands[0]), QStringList({"ray", "start", "--head", "--port", "6379"}));
        QCOMPARE(list(v10.nodes[1].commands[0]),
                 QStringList({"ray", "start", "--address", "${HEAD_NODE_IP}:6379", "--block"}));
        // SGLang (server arguments: --nnodes, --node-rank, --dist-init-addr).
        QCOMPARE(list(exportOk(s, p, ServingEngine::Sglang).argv), QStringList({"python3",
                                                                                "-m",
                                                                                "sglang.launch_server",
                                                                                "--model-path",
                                                                                "meta-llama/Llama-3.1-405B",
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
                                                                                "64",
                                                                                "--context-length",
                                                                                "2000",
                                                                                "--mem-fraction-static",
                                                                                "0.89"}));
        // TensorRT-LLM (deployment guides: mpirun ... trtllm-llmapi-launch trtllm-serve): 16 ranks from node
        // 0.
        const LaunchCommand t = exportOk(s, p, ServingEngine::Trtllm);
        QCOMPARE(list(t.argv).mid(0, 13),
                 QStringList({"mpirun", "--allow-run-as-root", "-np", "16", "--hostfile", "${HOSTFILE}",
                              "trtllm-llmapi-launch", "trtllm-serve", "meta-llama/Llama-3.1-405B",
                              "--backend", "pytorch", "--tp_size", "8"}));
        QVERIFY(t.nodes[1].commands.empty());
    }

    // ------------------------------------------------------------------------------------------------
    // The rules one by one, and the checker catching what the exports used to write.
    // Every row names its source, the flags the exports may write and the asserts a layout can break.
    void versionTables() {
        for (ServingEngine e : servingEngines()) {
            const auto& rows = engineVersions(e);
            QVERIFY(!rows.empty());
            for (const auto& r : rows) {
                QCOMPARE(r.engine, e);
                QVERIFY(!r.version.empty() && r.source.find(".py") != std::string::npos);
                QVERIFY(!r.flags.empty() && !r.constraints.empty());
            }
        }
        // The difference between the vLLM rows is --nnodes; between the SGLang rows the DeepEP switch.
        const auto& v = engineVersions(ServingEngine::Vllm);
        QVERIFY(!v.front().nnodes && v.back().nnodes);
        QVERIFY(std::count(v.back().flags.begin(), v.back().flags.end(), "--nnodes") == 1);
        QVERIFY(std::count(v.front().flags.begin(), v.front().flags.end(), "--nnodes") == 0);
        const auto& g = engineVersions(ServingEngine::Sglang);
        QVERIFY(std::count(g.front().flags.begin(), g.front().flags.end(), "--enable-deepep-moe") == 1);
        QVERIFY(std::count(g.back().flags.begin(), g.back().flags.end(), "--moe-a2a-backend") == 1);
    }

    void unknownVersionListsTheKnownOnes() {
        const Scenario s = compose("llama-3.1-8b.yaml", "h100-1x8.yaml", "chat-serving.yaml");
        ExportOptions o;
        o.engine = ServingEngine::Sglang, o.version = "0.1";
        const auto r = launchCommand(s, megatron(1, 1, 8, 8), o);
        QVERIFY(!r.ok());
        QVERIFY2(r.error().message.find("unknown sglang version '0.1' (known: 0.4.9, 0.5.6)") !=
                     std::string::npos,
                 r.error().message.c_str());
        QCOMPARE(findEngineVersion(ServingEngine::Vllm, "").value().version,
                 engineVersions(ServingEngine::Vllm).back().version);
        // TensorRT-LLM 1.0's parser could not be read at its release, so it is not offered.
        o.engine = ServingEngine::Trtllm, o.version = "1.0";
        const auto t = launchCommand(s, megatron(1, 1, 8, 8), o);
        QVERIFY(!t.ok());
        QVERIFY2(t.error().message.find("unknown trtllm version '1.0' (known: 1.2)") != std::string::npos,
                 t.error().message.c_str());
    }

    // SGLang asserts ep_size * moe_dp_size == tp_size and pp_size == 1 for moe_dp_size > 1 (server_args.py,
    // ServerArgs._handle_context_parallelism, read at commit 001067fffe33427bee0ed2f007fb7551a1d76b44). {tp8,
    // ep2, etp2, edp2} and {pp2, tp4, ep2, edp2} used to export
    // --moe-dp-size 2; now they are refused under --strict, or moved to the nearer layout with its cost.
    void sglangMoeDp() {
        const Scenario s = compose("mixtral-8x7b.yaml", "h100-1x8.yaml", "chat-serving.yaml");
        for (const Plan& p : {megatron(1, 1, 8, 16, 2, 2), megatron(2, 1, 4, 16, 2, 1)}) {
            ExportOptions o;
            o.engine = ServingEngine::Sglang, o.adapt = false;
            const auto refused = launchCommand(s, p, o);
            QVERIFY(!refused.ok());
            QVERIFY2(refused.error().message.find("expert replicas inside one server") != std::string::npos,
                     refused.error().message.c_str());
            const LaunchCommand a = exportOk(s, p, ServingEngine::Sglang);
            QVERIFY(a.adapted);
            QVERIFY(!hasArg(a, "--moe-dp-size"));
            QVERIFY2(hasNote(a, "Layout changed") && hasNote(a, "tokens/s for the plan"),
                     qPrintable(notes(a)));
            QVERIFY(!CostModel(s).checkPlan(a.plan));
            QVERIFY(checkLaunch(a, s, findEngineVersion(ServingEngine::Sglang, "").value()).empty());
        }
        // The checker refuses the old command.
        LaunchCommand old = exportOk(s, megatron(1, 1, 8, 16, 8), ServingEngine::Sglang);
        old.argv.insert(old.argv.end(), {"--ep-size", "2", "--moe-dp-size", "2"});
        old.nodes[0].commands = {old.argv};
        const auto v = checkLaunch(old, s, findEngineVersion(ServingEngine::Sglang, "").value());
        QVERIFY(std::find(v.begin(), v.end(), "SGLang: ep_size * moe_dp_size != tp_size") != v.end());
        QVERIFY(std::find(v.begin(), v.end(),
                          "SGLang: moe_dp_size > 1 without attn_cp_size == moe_dp_size") != v.end());
    }

    // SGLang 0.5.6's FusedMoE asserts (experts - fused shared) % moe_ep_size == 0 (python/sglang/srt/layers/
    // moe/fused_moe_triton/layer.py at commit 7ae368efde14). DeepSeek-V3's 256 experts over ep 72 (one GB200
    // NVL72 rack, DP attention) used to export --ep-size 72 alone; now 32 redundant slots make 288 = 4 x 72
    // (ceil(256 / 72) = 4 per GPU, what the cost model prices), or, for a model whose SGLang code takes no
    // redundant experts, the nearest ep that divides the experts.
    void sglangExpertsDivide() {
        const Scenario s = compose("deepseek-v3.yaml", "gb200-nvl72-x2.yaml", "chat-serving.yaml", 72);
        const Plan p = attentionDpPlan(72, 72, 64);
        QVERIFY(!CostModel(s).checkPlan(p));
        const EngineVersion v = findEngineVersion(ServingEngine::Sglang, "0.5.6").value();
        for (ServingEngine e : {ServingEngine::Sglang, ServingEngine::Dynamo}) {
            const LaunchCommand c = exportOk(s, p, e, {}, ServingEngine::Sglang);
            QVERIFY(!c.adapted);
            QCOMPARE(*flagAfter(c, "--ep-size"), std::string("72"));
            QCOMPARE(*flagAfter(c, "--ep-num-redundant-experts"), std::string("32"));
            QVERIFY2(hasNote(c, "288 expert slots, 4 per GPU"), qPrintable(notes(c)));
            QVERIFY(checkLaunch(c, s, findEngineVersion(e, "").value(), ServingEngine::Sglang).empty());
            // The old command, without the slots, breaks FusedMoE's assert.
            LaunchCommand old = c;
            for (NodeLaunch& node : old.nodes)
                for (auto& cmd : node.commands) {
                    auto at = std::find(cmd.begin(), cmd.end(), "--ep-num-redundant-experts");
                    if (at != cmd.end()) cmd.erase(at, at + 2);
                }
            const auto violations =
                checkLaunch(old, s, findEngineVersion(e, "").value(), ServingEngine::Sglang);
            QVERIFY2(
                std::find(violations.begin(), violations.end(),
                          "SGLang 0.5.6: FusedMoE asserts (experts + redundant) % ep_size == 0, and 256 + 0 "
                          "experts do not divide by 72") != violations.end(),
                violations.empty() ? "none" : violations[0].c_str());
        }
        // A model of unknown architecture: no redundant slots; ep 72 -> 8, the largest divisor of 256 that
        // divides 72, evaluated and noted, or refused under --strict.
        Scenario unknown = s;
        unknown.model.architecture.clear();
        ExportOptions o;
        o.engine = ServingEngine::Sglang, o.adapt = false;
        const auto refused = launchCommand(unknown, p, o);
        QVERIFY(!refused.ok());
        QVERIFY2(refused.error().message.find("FusedMoE divides the 256 experts evenly over ep-size 72") !=
                     std::string::npos,
                 refused.error().message.c_str());
        const LaunchCommand a = exportOk(unknown, p, ServingEngine::Sglang);
        QVERIFY(a.adapted);
        QCOMPARE(a.plan.degrees.ep, 8);
        QVERIFY(!hasArg(a, "--ep-num-redundant-experts"));
        QVERIFY2(hasNote(a, "ep 72 -> 8"), qPrintable(notes(a)));
        QVERIFY(checkLaunch(a, unknown, v).empty());
    }

    // gpt-oss and Qwen3-Next were exported for SGLang 0.4.9, whose model registry has neither: no gpt_oss.py
    // or qwen3_next.py among python/sglang/srt/models at commit ec5f9c6269c1 (0.5.6, commit 7ae368efde14,
    // has both). Refused with the reason whatever --strict says (no layout helps); vLLM 0.10.2 has both
    // (vllm/model_executor/models/registry.py at e017120ed146).
    void modelRegistry() {
        const std::pair<const char*, const char*> models[] = {
            {"gpt-oss-120b.yaml", "GptOssForCausalLM"}, {"qwen3-next-80b-a3b.yaml", "Qwen3NextForCausalLM"}};
        for (const auto& [file, arch] : models) {
            const Scenario s = compose(file, "h200-1x8.yaml", "chat-serving.yaml");
            const Plan p = CostModel(s).megatronPlan();
            const auto r = launchCommand(s, p, [] {
                ExportOptions o;
                o.engine = ServingEngine::Sglang, o.version = "0.4.9";
                return o;
            }());
            QVERIFY(!r.ok());
            QVERIFY2(r.error().message.find(
                         std::string("sglang 0.4.9 cannot load ") + s.model.name + ": " + arch +
                         " is not in its model registry (python/sglang/srt/models/*.py "
                         "EntryClass at commit ec5f9c6269c1); support came in 0.5.6") != std::string::npos,
                     r.error().message.c_str());
            const LaunchCommand now = exportOk(s, p, ServingEngine::Sglang, "0.5.6");
            QVERIFY(checkLaunch(now, s, findEngineVersion(ServingEngine::Sglang, "0.5.6").value()).empty());
            QVERIFY(!hasNote(now, "Model support"));
            QVERIFY(exportOk(s, p, ServingEngine::Vllm, "0.10.2").argv.size() > 3);
            // The checker refuses a 0.4.9 launch of it.
            const auto v = checkLaunch(now, s, findEngineVersion(ServingEngine::Sglang, "0.4.9").value());
            const std::string want =
                std::string("node0.sh: sglang 0.4.9 has no ") + arch +
                " in its model registry (python/sglang/srt/models/*.py EntryClass at commit "
                "ec5f9c6269c1)";
            QVERIFY2(std::find(v.begin(), v.end(), want) != v.end(), v.empty() ? "none" : v[0].c_str());
        }
        // An architecture shardplan does not import is exported with a note; TensorRT-LLM's registry was not
        // read, which its note says.
        Scenario s = compose("llama-3.1-8b.yaml", "h100-1x8.yaml", "chat-serving.yaml");
        s.model.architecture = "Phi3ForCausalLM";
        QVERIFY(hasNote(exportOk(s, megatron(1, 1, 8, 8), ServingEngine::Sglang, "0.4.9"),
                        "Phi3ForCausalLM is not among the architectures checked against sglang 0.4.9"));
        s.model.architecture = "LlamaForCausalLM";
        QVERIFY(hasNote(exportOk(s, megatron(1, 1, 8, 8), ServingEngine::Trtllm),
                        "trtllm 1.2's model registry was not read"));
    }

    // AMD GPUs: TensorRT-LLM (and Dynamo's TensorRT-LLM worker) is a CUDA build (NVIDIA/TensorRT-LLM
    // docs/source/installation/linux.md at 004da3c27360) and used to be exported for the MI300X sample;
    // refused now. vLLM and SGLang export their ROCm builds: the images and variables their ROCm docs and
    // Dockerfiles give (vLLM v0.10.2 rocm.inc.md, VLLM_ROCM_USE_AITER; SGLang 0.5.6 docker/rocm.Dockerfile,
    // SGLANG_USE_AITER=1), no DeepEP (Hopper only, deepseek-ai/DeepEP README), KV blocks of 1 for vLLM's
    // AITER MLA (vllm/platforms/rocm.py at v0.10.2).
    void amdGpus() {
        for (const char* cluster : {"mi300x-1x8.yaml"}) {
            auto c = loadCluster(kSamples + "/clusters/" + cluster);
            QVERIFY(c.ok() && amdGpu(c->gpu));
        }
        for (const char* name : {"Instinct MI325X 256GB", "Instinct MI355X 288GB", "AMD MI300X", "mi300x"})
            QVERIFY2(amdGpu(Gpu{name, {}, 0, 0}), name);
        for (const char* name : {"H100 SXM5 80GB", "GB200", "B200", "L40S 48GB", "H20 96GB"})
            QVERIFY2(!amdGpu(Gpu{name, {}, 0, 0}), name);

        auto loaded = loadScenario(kSamples + "/scenarios/llama-3.1-70b-mi300x-1x8.yaml");
        QVERIFY(loaded.ok());
        const Scenario s = loaded.value();
        const Plan p = CostModel(s).megatronPlan();
        for (ServingEngine w : {ServingEngine::Trtllm, ServingEngine::Vllm}) {
            for (ServingEngine e : {ServingEngine::Trtllm, ServingEngine::Dynamo}) {
                if (e == ServingEngine::Trtllm && w != ServingEngine::Trtllm) continue;
                ExportOptions o;
                o.engine = e, o.dynamoWorker = w;
                const auto r = launchCommand(s, p, o);
                if (w != ServingEngine::Trtllm) {
                    QVERIFY(r.ok());
                    continue;
                }
                QVERIFY(!r.ok());
                QVERIFY2(r.error().message.find("runs on NVIDIA GPUs only") != std::string::npos &&
                             r.error().message.find("Instinct MI300X 192GB") != std::string::npos,
                         r.error().message.c_str());
            }
        }
        // What the old export wrote: TensorRT-LLM's launch, which the checker refuses on this cluster.
        Scenario nvidia = s;
        nvidia.cluster.gpu.name = "H100 SXM5 80GB";
        const LaunchCommand old = exportOk(nvidia, p, ServingEngine::Trtllm);
        const auto v = checkLaunch(old, s, findEngineVersion(ServingEngine::Trtllm, "").value());
        QVERIFY(std::find(v.begin(), v.end(),
                          "node0.sh: TensorRT-LLM on Instinct MI300X 192GB, which it cannot run on") !=
                v.end());

        const LaunchCommand vllm = exportOk(s, p, ServingEngine::Vllm);
        QVERIFY(std::find(vllm.nodes[0].env.begin(), vllm.nodes[0].env.end(),
                          std::pair<std::string, std::string>("VLLM_ROCM_USE_AITER", "1")) !=
                vllm.nodes[0].env.end());
        QVERIFY2(hasNote(vllm, "the image rocm/vllm") && hasNote(vllm, "AITER's flash attention"),
                 qPrintable(notes(vllm)));
        QVERIFY(vllm.text().find("export VLLM_ROCM_USE_AITER=1\n") != std::string::npos);
        const LaunchCommand sglang = exportOk(s, p, ServingEngine::Sglang);
        for (const char* var : {"SGLANG_USE_AITER", "HSA_NO_SCRATCH_RECLAIM"})
            QVERIFY(std::find(sglang.nodes[0].env.begin(), sglang.nodes[0].env.end(),
                              std::pair<std::string, std::string>(var, "1")) != sglang.nodes[0].env.end());
        QVERIFY2(hasNote(sglang, "lmsysorg/sglang:v0.5.6-rocm700-mi30x"), qPrintable(notes(sglang)));
        QVERIFY(!hasNote(exportOk(nvidia, p, ServingEngine::Sglang), "ROCm"));

        // MoE on MI300X: SGLang without DeepEP (0.4.9: EPMoE with --enable-ep-moe); DeepSeek-V3's MLA on vLLM
        // with KV blocks of one token.
        const Scenario q = compose("qwen3-235b-a22b.yaml", "mi300x-1x8.yaml", "chat-serving.yaml");
        const LaunchCommand moe = exportOk(q, attentionDpPlan(8, 8, 32), ServingEngine::Sglang);
        QVERIFY(!hasArg(moe, "--moe-a2a-backend") && *flagAfter(moe, "--ep-size") == "8");
        QVERIFY2(hasNote(moe, "DeepEP's all-to-all needs NVIDIA Hopper GPUs"), qPrintable(notes(moe)));
        QVERIFY(checkLaunch(moe, q, findEngineVersion(ServingEngine::Sglang, "").value()).empty());
        const LaunchCommand moe49 = exportOk(q, attentionDpPlan(8, 8, 32), ServingEngine::Sglang, "0.4.9");
        QVERIFY(hasArg(moe49, "--enable-ep-moe") && !hasArg(moe49, "--enable-deepep-moe"));
        QVERIFY(checkLaunch(moe49, q, findEngineVersion(ServingEngine::Sglang, "0.4.9").value()).empty());
        const Scenario ds = compose("deepseek-v3.yaml", "mi300x-1x8.yaml", "chat-serving.yaml");
        const LaunchCommand mla = exportOk(ds, megatron(1, 1, 8, 16, 8), ServingEngine::Vllm);
        QCOMPARE(*flagAfter(mla, "--block-size"), std::string("1"));
        LaunchCommand noBlock = mla;
        for (auto& cmd : noBlock.nodes[0].commands) {
            auto at = std::find(cmd.begin(), cmd.end(), "--block-size");
            if (at != cmd.end()) cmd.erase(at, at + 2);
        }
        const auto vb = checkLaunch(noBlock, ds, findEngineVersion(ServingEngine::Vllm, "").value());
        QVERIFY(std::find(vb.begin(), vb.end(),
                          "node0.sh: vLLM's AITER MLA backend with a KV block size other than 1") !=
                vb.end());
    }

    // gpt-oss on Hopper: TensorRT-LLM's gpt-oss guide (examples/models/core/gpt_oss/README.md, read at
    // 0ee4114cc7fe) gives the TRITON MoE backend there ("use the TRITON backend on Hopper"), which has expert
    // parallelism but no expert TP. The export used to write CUTLASS; Blackwell keeps it.
    void trtllmGptOssHopper() {
        auto loaded = loadScenario(kSamples + "/scenarios/gpt-oss-120b-h100-1x8.yaml");
        QVERIFY(loaded.ok());
        const Scenario s = loaded.value();
        const EngineVersion v = findEngineVersion(ServingEngine::Trtllm, "").value();
        const LaunchCommand ep8 = exportOk(s, megatron(1, 1, 8, 16, 8), ServingEngine::Trtllm);
        const std::string yaml = ep8.files.at(0).second;
        QVERIFY2(yaml.find("moe_config:\n  backend: TRITON\n") != std::string::npos, yaml.c_str());
        QVERIFY2(hasNote(ep8, "moe_config backend TRITON"), qPrintable(notes(ep8)));
        QVERIFY(checkLaunch(ep8, s, v).empty());
        LaunchCommand old = ep8;
        old.files[0].second.replace(old.files[0].second.find("TRITON"), 6, "CUTLASS");
        const auto violations = checkLaunch(old, s, v);
        QVERIFY(std::find(
                    violations.begin(), violations.end(),
                    "TensorRT-LLM: gpt-oss on H100 SXM5 80GB with moe_config backend CUTLASS, not TRITON as "
                    "its gpt-oss guide gives for Hopper") != violations.end());
        // Expert TP 2 (ep 4 x etp 2): TRITON has none, so ep 4 -> 8, etp 2 -> 1, or refused under --strict.
        const Plan etp2 = megatron(1, 1, 8, 16, 4, 2);
        ExportOptions o;
        o.engine = ServingEngine::Trtllm, o.adapt = false;
        const auto refused = launchCommand(s, etp2, o);
        QVERIFY(!refused.ok());
        QVERIFY2(refused.error().message.find("TRITON MoE backend") != std::string::npos,
                 refused.error().message.c_str());
        const LaunchCommand a = exportOk(s, etp2, ServingEngine::Trtllm);
        QVERIFY(a.adapted && a.plan.degrees.ep == 8 && a.plan.degrees.etp == 1);
        QVERIFY2(hasNote(a, "ep 4 -> 8, etp 2 -> 1"), qPrintable(notes(a)));
        QVERIFY(checkLaunch(a, s, v).empty());
        // Blackwell: CUTLASS, as before.
        const Scenario b = compose("gpt-oss-120b.yaml", "b200-1x8.yaml", "chat-serving.yaml");
        QVERIFY(
            exportOk(b, megatron(1, 1, 8, 16, 8), ServingEngine::Trtllm).files.at(0).second.find("CUTLASS") !=
            std::string::npos);
    }

    // Disaggregated SGLang had no router: the notes named one. Now router.sh starts sglang_router in PD mode
    // (sgl-router/bindings/python/sglang_router/router_args.py at 7ae368efde14: --pd-disaggregation,
    // --prefill URL [BOOTSTRAP_PORT], --decode URL) naming every server that serves an API; the servers
    // listen on 0.0.0.0 (their default host is 127.0.0.1) and prefill servers sharing a node get a bootstrap
    // port each (default 8998).
    void disaggRouter() {
        const Scenario s = compose("llama-3.1-8b.yaml", "h100-4x8.yaml", "chat-serving.yaml");
        DisaggPlan d;
        // 16 servers of 1 GPU over 2 nodes (ports 8000..8007 on each: SGLang's --dp-size spans no nodes);
        // 2 decode servers of 8 GPUs, one per node.
        d.prefill = {2, megatron(1, 16, 1, 8)};
        d.decode = {2, megatron(1, 2, 8, 32)};
        ExportOptions o;
        o.engine = ServingEngine::Sglang;
        auto l = disaggregatedLaunch(s, d, o);
        QVERIFY2(l.ok(), l.ok() ? "" : l.error().str().c_str());
        const auto& r = l->router.commands.at(0);
        QCOMPARE(list(r).mid(0, 10),
                 QStringList({"python3", "-m", "sglang_router.launch_router", "--pd-disaggregation",
                              "--prefill", "http://${PREFILL_NODE0_IP}:8000", "8998", "--prefill",
                              "http://${PREFILL_NODE0_IP}:8001", "8999"}));
        QCOMPARE(std::count(r.begin(), r.end(), "--prefill"), 16);
        QVERIFY(std::find(r.begin(), r.end(), "http://${PREFILL_NODE1_IP}:8007") != r.end());
        QCOMPARE(list(r).mid(int(r.size()) - 8),
                 QStringList({"--decode", "http://${DECODE_NODE0_IP}:30000", "--decode",
                              "http://${DECODE_NODE1_IP}:30000", "--host", "0.0.0.0", "--port", "8080"}));
        QCOMPARE(l->router.env.size(), size_t(4)); // PREFILL_NODE0..1_IP, DECODE_NODE0..1_IP, set by the user
        const EngineVersion v = findEngineVersion(ServingEngine::Sglang, "").value();
        QVERIFY(checkDisaggLaunch(l.value(), s, d, v).empty());
        const auto files = l->files("", "");
        const auto router = std::find_if(files.begin(), files.end(),
                                         [](const ExportFile& f) { return f.name == "router.sh"; });
        QVERIFY(router != files.end() && router->executable);
        QVERIFY(router->content.find(": \"${DECODE_NODE1_IP:?set DECODE_NODE1_IP") != std::string::npos);
        QVERIFY(l->text().find("# router\n") != std::string::npos);
        QVERIFY2(std::any_of(l->notes.begin(), l->notes.end(),
                             [](const std::string& n) {
                                 return n.find("router.sh starts SGLang's PD router") == 0 ||
                                        n.find("router.sh starts") != std::string::npos;
                             }),
                 l->notes.front().c_str());
        // What the export wrote before: no router, servers on 127.0.0.1 sharing bootstrap port 8998.
        DisaggLaunch old = l.value();
        old.router = {};
        for (LaunchCommand* lc : {&old.prefill, &old.decode})
            for (NodeLaunch& node : lc->nodes)
                for (auto& cmd : node.commands) {
                    for (const char* flag : {"--host", "--disaggregation-bootstrap-port"}) {
                        auto at = std::find(cmd.begin(), cmd.end(), flag);
                        if (at != cmd.end()) cmd.erase(at, at + 2);
                    }
                }
        const auto violations = checkDisaggLaunch(old, s, d, v);
        for (const char* want :
             {"no router in front of the pools", "PREFILL node 0: two servers on bootstrap port 8998",
              "DECODE node 1: a server on host 127.0.0.1, which the router on another host cannot "
              "reach"})
            QVERIFY2(std::find(violations.begin(), violations.end(), want) != violations.end(), want);
        // Dynamo's frontend routes: no router.
        o.engine = ServingEngine::Dynamo, o.dynamoWorker = ServingEngine::Sglang;
        auto dyn = disaggregatedLaunch(s, d, o);
        QVERIFY(dyn.ok() && dyn->router.commands.empty());
    }

    // search --disaggregated found splits the SGLang export refused: DeepSeek-V3 with long prompts on 32 x 8
    // H100 (docs/disaggregated.md's example), 18 prefill nodes of pp9 x dp16 x tp1 (etp 2): SGLang's servers
    // are the expert group's 2 GPUs x pp 9 = 18, three hosts each, "launches need 24 hosts, the cluster has
    // 18". Now the pool moves to the nearest pipeline depth whose servers pack (pp 8: 16-GPU servers), both
    // the pool and the whole split evaluated in the notes; --strict still refuses with the reason.
    void disaggPacking() {
        auto loaded = loadScenario(kSamples + "/scenarios/deepseek-v3-h100-32x8-long-prompts.yaml");
        QVERIFY(loaded.ok());
        const Scenario s = loaded.value();
        DisaggPlan d;
        d.prefill = {18, megatron(9, 16, 1, 1, 1, 2)};
        d.decode = {14, attentionDpPlan(2, 2, 112)};
        d.decode.plan.degrees = Degrees{1, 56, 2, 112, 1, 1};
        QVERIFY(!DisaggModel(s).checkSplit(18, 14));
        QVERIFY(DisaggModel(s).evaluate(d).valid);
        ExportOptions o;
        o.engine = ServingEngine::Sglang, o.adapt = false;
        auto strict = disaggregatedLaunch(s, d, o);
        QVERIFY(!strict.ok());
        QVERIFY2(strict.error().message.find(
                     "prefill pool: cannot export to sglang 0.5.6: its launches need 24 hosts "
                     "of 8 GPUs, the cluster has 18") != std::string::npos,
                 strict.error().message.c_str());
        o.adapt = true;
        auto l = disaggregatedLaunch(s, d, o);
        QVERIFY2(l.ok(), l.ok() ? "" : l.error().str().c_str());
        QVERIFY(l->prefill.adapted && !l->decode.adapted);
        QCOMPARE(l->prefill.plan.degrees.pp, 8);
        QVERIFY2(hasNote(l->prefill, "pp 9 -> 8, dp 16 -> 18, edp 8 -> 9"), qPrintable(notes(l->prefill)));
        QVERIFY(int(l->prefill.nodes.size()) <= 18);
        QVERIFY2(std::any_of(l->notes.begin(), l->notes.end(),
                             [](const std::string& n) {
                                 return n.find("Layout changed in the prefill pool") == 0 &&
                                        n.find("output tokens/s per GPU for the plan and") !=
                                            std::string::npos;
                             }),
                 l->notes.back().c_str());
        QVERIFY(
            checkDisaggLaunch(l.value(), s, d, findEngineVersion(ServingEngine::Sglang, "").value()).empty());
    }

    // What the scripts need and could not say: trust-remote-code for a config that names custom code
    // (DeepSeek-V3's auto_map, tests/data/hf/deepseek-v3.config.json), HF_TOKEN for a gated repository
    // (meta-llama), DeepEP's NVSHMEM/IBGDA settings across nodes (deep_ep/buffer.py at dcfd954851157;
    // SGLang's lws_pd_deploy.md at 7ae368efde14), NCCL_SOCKET_IFNAME / GLOO_SOCKET_IFNAME across nodes
    // (SGLang's deploy_on_k8s.md at 7ae368efde14).
    void environmentNotes() {
        auto loaded = loadScenario(kSamples + "/scenarios/deepseek-v3-h200-16x8.yaml");
        QVERIFY(loaded.ok());
        const Scenario s = loaded.value();
        const Plan p = CostModel(s).megatronPlan();
        for (ServingEngine e : {ServingEngine::Vllm, ServingEngine::Sglang}) {
            const LaunchCommand c = exportOk(s, p, e);
            QVERIFY(hasArg(c, "--trust-remote-code"));
            QVERIFY2(hasNote(c, "Custom code: DeepseekV3ForCausalLM") && hasNote(c, "Network interfaces") &&
                         hasNote(c, "NCCL_SOCKET_IFNAME and GLOO_SOCKET_IFNAME"),
                     qPrintable(notes(c)));
            const EngineVersion v = findEngineVersion(e, "").value();
            QVERIFY(checkLaunch(c, s, v).empty());
            LaunchCommand old = c;
            for (NodeLaunch& node : old.nodes)
                for (auto& cmd : node.commands) std::erase(cmd, std::string("--trust-remote-code"));
            const auto violations = checkLaunch(old, s, v);
            QVERIFY2(std::find(violations.begin(), violations.end(),
                               "node0.sh: DeepseekV3ForCausalLM's config names custom code (auto_map), and "
                               "--trust-remote-code is not given") != violations.end(),
                     violations.empty() ? "none" : violations[0].c_str());
        }
        Scenario two = s; // two nodes: one server of 16 GPUs, DeepEP over both
        two.constraints.gpus = 16;
        const LaunchCommand sglang = exportOk(two, attentionDpPlan(16, 16, 64), ServingEngine::Sglang);
        QVERIFY2(hasArg(sglang, "--moe-a2a-backend") && hasNote(sglang, "DeepEP across nodes") &&
                     hasNote(sglang, "NVSHMEM_IB_GID_INDEX"),
                 qPrintable(notes(sglang)));
        const LaunchCommand t = exportOk(s, p, ServingEngine::Trtllm);
        QVERIFY(t.files.at(0).second.find("trust_remote_code: true\n") != std::string::npos);
        QVERIFY(checkLaunch(t, s, findEngineVersion(ServingEngine::Trtllm, "").value()).empty());
        QVERIFY(exportOk(s, p, ServingEngine::Dynamo, {}, ServingEngine::Trtllm)
                    .files.at(0)
                    .second.find("trust_remote_code: true\n") != std::string::npos);
        // Llama: no custom code, a gated repository; one node: no network note.
        const Scenario l = compose("llama-3.1-70b.yaml", "h100-1x8.yaml", "chat-serving.yaml");
        const LaunchCommand llama = exportOk(l, megatron(1, 1, 8, 64), ServingEngine::Vllm);
        QVERIFY(!hasArg(llama, "--trust-remote-code"));
        QVERIFY2(hasNote(llama, "meta-llama/Llama-3.1-70B is a gated repository") &&
                     hasNote(llama, "HF_TOKEN") && !hasNote(llama, "Network interfaces") &&
                     !hasNote(llama, "DeepEP"),
                 qPrintable(notes(llama)));
        QVERIFY(!hasNote(
            launchCommand(l, megatron(1, 1, 8, 64), ServingEngine::Vllm, "/models/llama").value(), "gated"));
    }

    // Kubernetes: --engine dynamo writes dynamo-graph.yaml beside the scripts, a DynamoGraphDeployment as
    // Dynamo's own examples write one (components/backends/*/deploy/{agg,disagg,disagg-multinode,
    // agg-with-config}.yaml at ai-dynamo/dynamo 416ff06e7feabb). Parsed back: the kinds, one frontend,
    // replicas x nodes x GPUs per pod = the plan's GPUs, the workers' arguments through the same checks as
    // the scripts.
    void dynamoGraph() {
        // SGLang worker over 16 nodes: one multinode worker (nodeCount 16, 8 GPUs a pod); the operator gives
        // the ranks, so the args carry no --nnodes, --node-rank or --dist-init-addr.
        auto loaded = loadScenario(kSamples + "/scenarios/deepseek-v3-h200-16x8.yaml");
        QVERIFY(loaded.ok());
        const Scenario s = loaded.value();
        const LaunchCommand c =
            exportOk(s, CostModel(s).megatronPlan(), ServingEngine::Dynamo, {}, ServingEngine::Sglang);
        QCOMPARE(c.deployFiles.size(), size_t(1));
        const std::string yaml = c.deployFiles[0].second;
        const auto docs = YAML::LoadAll(yaml);
        QCOMPARE(docs.size(), size_t(1));
        const YAML::Node g = docs[0];
        QCOMPARE(g["kind"].as<std::string>(), std::string("DynamoGraphDeployment"));
        QCOMPARE(g["apiVersion"].as<std::string>(), std::string("nvidia.com/v1alpha1"));
        const YAML::Node w = g["spec"]["services"]["Worker"];
        QCOMPARE(g["spec"]["services"]["Frontend"]["componentType"].as<std::string>(),
                 std::string("frontend"));
        QCOMPARE(w["replicas"].as<int>() * w["multinode"]["nodeCount"].as<int>() *
                     std::stoi(w["resources"]["limits"]["gpu"].as<std::string>()),
                 128);
        QCOMPARE(w["multinode"]["nodeCount"].as<int>(), 16);
        std::vector<std::string> args;
        for (const auto& a : w["extraPodSpec"]["mainContainer"]["args"]) args.push_back(a.as<std::string>());
        QVERIFY(std::find(args.begin(), args.end(), "--nnodes") == args.end() &&
                std::find(args.begin(), args.end(), "--trust-remote-code") != args.end());
        QVERIFY(checkDynamoGraph(yaml, s, 128, ServingEngine::Sglang).empty());
        // A graph whose GPUs do not add up, or whose worker breaks an engine rule, is refused.
        std::string wrong = yaml;
        wrong.replace(wrong.find("gpu: \"8\""), 8, "gpu: \"4\"");
        const auto v = checkDynamoGraph(wrong, s, 128, ServingEngine::Sglang);
        QVERIFY(std::find(v.begin(), v.end(),
                          "the workers' replicas x nodes x GPUs add up to 64, the plan's GPUs are 128") !=
                v.end());
        std::string noTrust = yaml;
        noTrust.erase(noTrust.find("            - \"--trust-remote-code\"\n"), 35);
        QVERIFY(!checkDynamoGraph(noTrust, s, 128, ServingEngine::Sglang).empty());

        // vLLM workers, several to a node: replicas of one pod each; TensorRT-LLM's options in a ConfigMap.
        const Scenario l = compose("llama-3.1-8b.yaml", "h100-1x8.yaml", "chat-serving.yaml");
        const LaunchCommand v2 = exportOk(l, megatron(1, 4, 2, 8), ServingEngine::Dynamo);
        const YAML::Node vw = YAML::LoadAll(v2.deployFiles.at(0).second).at(0)["spec"]["services"]["Worker"];
        QCOMPARE(vw["replicas"].as<int>() * std::stoi(vw["resources"]["limits"]["gpu"].as<std::string>()), 8);
        QVERIFY(checkDynamoGraph(v2.deployFiles.at(0).second, l, 8, ServingEngine::Vllm).empty());
        const LaunchCommand t =
            exportOk(l, megatron(1, 1, 8, 8), ServingEngine::Dynamo, {}, ServingEngine::Trtllm);
        const auto tdocs = YAML::LoadAll(t.deployFiles.at(0).second);
        QCOMPARE(tdocs.size(), size_t(2));
        QCOMPARE(tdocs[0]["kind"].as<std::string>(), std::string("ConfigMap"));
        QVERIFY(tdocs[0]["data"]["extra-llm-api-options.yaml"].as<std::string>() == t.files.at(0).second);
        QVERIFY(checkDynamoGraph(t.deployFiles.at(0).second, l, 8, ServingEngine::Trtllm).empty());

        // --out-dir writes it, listed in the manifest; the engines other than Dynamo write none.
        QTemporaryDir dir;
        auto written = writeLaunchDirectory(dir.path().toStdString(), c, "plan: {}\n");
        QVERIFY(written.ok());
        QVERIFY(QFile::exists(dir.filePath("dynamo-graph.yaml")));
        QFile manifest(dir.filePath(".shardplan-export"));
        QVERIFY(manifest.open(QIODevice::ReadOnly) && manifest.readAll().contains("dynamo-graph.yaml\n"));
        QVERIFY(exportOk(s, CostModel(s).megatronPlan(), ServingEngine::Sglang).deployFiles.empty());

        // Disaggregated: one graph, a frontend and prefill and decode workers.
        const Scenario ds = compose("llama-3.1-70b.yaml", "h100-4x8.yaml", "chat-serving.yaml");
        DisaggPlan d;
        d.prefill = {1, megatron(1, 1, 8, 8)};
        d.decode = {3, megatron(1, 3, 8, 32)};
        ExportOptions o;
        o.engine = ServingEngine::Dynamo, o.dynamoWorker = ServingEngine::Vllm;
        auto dl = disaggregatedLaunch(ds, d, o);
        QVERIFY2(dl.ok(), dl.ok() ? "" : dl.error().str().c_str());
        QVERIFY(dl->prefill.deployFiles.empty() && dl->decode.deployFiles.empty());
        QCOMPARE(dl->deployFiles.size(), size_t(1));
        const YAML::Node dg = YAML::LoadAll(dl->deployFiles[0].second).at(0)["spec"]["services"];
        QCOMPARE(dg["prefill"]["subComponentType"].as<std::string>(), std::string("prefill"));
        QCOMPARE(dg["decode"]["subComponentType"].as<std::string>(), std::string("decode"));
        const auto dv = checkDynamoGraph(dl->deployFiles[0].second, ds, 32, ServingEngine::Vllm);
        QVERIFY2(dv.empty(), dv.empty() ? "" : dv[0].c_str());
        const auto files = dl->files("", "");
        QVERIFY(std::any_of(files.begin(), files.end(),
                            [](const ExportFile& f) { return f.name == "dynamo-graph.yaml"; }));
    }

    // ------------------------------------------------------------------------------------------------
    // Speculative decoding (Plan::spec), as each engine and version spells it. The known answers are the
    // rows' citations (core/export/vllm.cpp, sglang.cpp, trtllm.cpp); E by hand from the rates.

    // DeepSeek-V3's MTP, K = 1, on the SGLang large-EP plan (pp 1). The model's default acceptance is 0.85
    // (samples/models/deepseek-v3.yaml: DeepSeek-V3 report, section 5.4.3), so E = 1 + 0.85 = 1.85.
    void speculativeMtpFlags() {
        const Scenario s = compose("deepseek-v3.yaml", "h100-32x8.yaml", "chat-serving.yaml");
        auto loaded = loadPlan(kSamples + "/plans/deepseek-v3-dp-attention.yaml");
        QVERIFY2(loaded.ok(), loaded.error().str().c_str());
        Plan p = loaded.value();
        p.spec = {SpecMethod::Mtp, 1};
        const auto check = [&](const LaunchCommand& lc, ServingEngine e, const std::string& version,
                               ServingEngine worker = ServingEngine::Vllm) {
            QVERIFY2(!lc.adapted, qPrintable(notes(lc)));
            QVERIFY(lc.plan.spec == p.spec);
            const auto v = checkLaunch(lc, s, findEngineVersion(e, version).value(), worker);
            QVERIFY2(v.empty(), v.empty() ? "" : v[0].c_str());
            QVERIFY2(hasNote(lc, "The plan assumes acceptance rates 0.85") &&
                         hasNote(lc, "E = 1.85 tokens") &&
                         hasNote(lc, "Real acceptance depends on the text served"),
                     qPrintable(notes(lc)));
        };
        // vLLM: 0.10.2 names DeepSeek's module deepseek_mtp; 0.12.0 folds the MTP names into "mtp".
        const LaunchCommand v10 = exportOk(s, p, ServingEngine::Vllm, "0.10.2");
        QCOMPARE(flagAfter(v10, "--speculative-config").value_or(""),
                 std::string(R"({"method":"deepseek_mtp","num_speculative_tokens":1})"));
        check(v10, ServingEngine::Vllm, "0.10.2");
        const LaunchCommand v12 = exportOk(s, p, ServingEngine::Vllm, "0.12.0");
        QCOMPARE(flagAfter(v12, "--speculative-config").value_or(""),
                 std::string(R"({"method":"mtp","num_speculative_tokens":1})"));
        check(v12, ServingEngine::Vllm, "0.12.0");
        // SGLang, both rows: EAGLE over the target's own NextN module, a chain of 1 (topk 1), verify 1 + 1.
        // 0.5.6 fills the draft path with the model's for DeepSeek (server_args.py _handle_speculative_decoding
        // at 7ae368efde14, L1661-1719) and warns when one is given ("DeepSeek MTP does not require setting
        // speculative_draft_model_path."), so its export gives none.
        for (const char* version : {"0.4.9", "0.5.6"}) {
            const LaunchCommand g = exportOk(s, p, ServingEngine::Sglang, version);
            QCOMPARE(flagAfter(g, "--speculative-algorithm").value_or(""), std::string("EAGLE"));
            QCOMPARE(flagAfter(g, "--speculative-draft-model-path").value_or(""),
                     std::string(std::string(version) == "0.4.9" ? "deepseek-ai/DeepSeek-V3" : ""));
            QCOMPARE(flagAfter(g, "--speculative-num-steps").value_or(""), std::string("1"));
            QCOMPARE(flagAfter(g, "--speculative-eagle-topk").value_or(""), std::string("1"));
            QCOMPARE(flagAfter(g, "--speculative-num-draft-tokens").value_or(""), std::string("2"));
            check(g, ServingEngine::Sglang, version);
        }
        // TensorRT-LLM: the YAML's speculative_config.
        const LaunchCommand t = exportOk(s, p, ServingEngine::Trtllm);
        QVERIFY(!t.files.empty());
        const YAML::Node y = YAML::Load(t.files[0].second);
        QCOMPARE(y["speculative_config"]["decoding_type"].as<std::string>(), std::string("MTP"));
        QCOMPARE(y["speculative_config"]["num_nextn_predict_layers"].as<int>(), 1);
        check(t, ServingEngine::Trtllm, "");
        // Dynamo's workers take their engine's newest row's flags.
        const LaunchCommand dv = exportOk(s, p, ServingEngine::Dynamo, "", ServingEngine::Vllm);
        QCOMPARE(flagAfter(dv, "--speculative-config").value_or(""),
                 std::string(R"({"method":"mtp","num_speculative_tokens":1})"));
        check(dv, ServingEngine::Dynamo, "", ServingEngine::Vllm);
        const LaunchCommand ds = exportOk(s, p, ServingEngine::Dynamo, "", ServingEngine::Sglang);
        QCOMPARE(flagAfter(ds, "--speculative-algorithm").value_or(""), std::string("EAGLE"));
        check(ds, ServingEngine::Dynamo, "", ServingEngine::Sglang);
        const LaunchCommand dt = exportOk(s, p, ServingEngine::Dynamo, "", ServingEngine::Trtllm);
        QVERIFY(dt.files[0].second.find("decoding_type: MTP") != std::string::npos);
        check(dt, ServingEngine::Dynamo, "", ServingEngine::Trtllm);
    }

    // Each rule of the checker fails on a command that breaks it; the first is what every export did before
    // speculative decoding was written: the plan's MTP silently dropped.
    void speculativeChecks() {
        const Scenario s = compose("deepseek-v3.yaml", "h100-32x8.yaml", "chat-serving.yaml");
        auto loaded = loadPlan(kSamples + "/plans/deepseek-v3-dp-attention.yaml");
        QVERIFY(loaded.ok());
        Plan p = loaded.value();
        p.spec = {SpecMethod::Mtp, 1};
        // `lc` with `flag`'s value set to `value` in every command (erased with its value when empty).
        const auto with = [](LaunchCommand lc, const std::string& flag, const std::string& value) {
            const auto edit = [&](std::vector<std::string>& a) {
                auto it = std::find(a.begin(), a.end(), flag);
                if (it == a.end() || it + 1 == a.end()) return;
                if (value.empty())
                    a.erase(it, it + 2);
                else
                    *(it + 1) = value;
            };
            edit(lc.argv);
            for (auto& node : lc.nodes)
                for (auto& cmd : node.commands) edit(cmd);
            return lc;
        };
        const auto breaks = [&s](const LaunchCommand& lc, const EngineVersion& v, const std::string& part) {
            const auto found = checkLaunch(lc, s, v);
            const bool hit = std::any_of(found.begin(), found.end(), [&](const std::string& x) {
                return x.find(part) != std::string::npos;
            });
            if (!hit)
                qWarning("expected '%s', found: %s", part.c_str(), found.empty() ? "none" : found[0].c_str());
            return hit;
        };
        const EngineVersion v10 = findEngineVersion(ServingEngine::Vllm, "0.10.2").value();
        const EngineVersion v12 = findEngineVersion(ServingEngine::Vllm, "0.12.0").value();
        const LaunchCommand a = exportOk(s, p, ServingEngine::Vllm, "0.12.0");
        QVERIFY(checkLaunch(a, s, v12).empty());
        // The old behaviour: no --speculative-config for a plan that runs MTP.
        QVERIFY(
            breaks(with(a, "--speculative-config", ""), v12,
                   "the plan runs speculative decoding mtp x1, and the command has no --speculative-config"));
        // A method 0.12.0 does not take for DeepSeek-V3, another K, JSON that is not, a field it lacks.
        QVERIFY(breaks(with(a, "--speculative-config", R"({"method":"eagle","num_speculative_tokens":1})"),
                       v12, "speculative method 'eagle' is not one it runs"));
        QVERIFY(breaks(with(a, "--speculative-config", R"({"method":"mtp","num_speculative_tokens":2})"), v12,
                       "drafts 2 tokens per step, the plan 1"));
        QVERIFY(breaks(with(a, "--speculative-config", "{method: mtp}"), v12, "is not JSON"));
        QVERIFY(breaks(with(a, "--speculative-config", R"({"method":"mtp","k":1})"), v12,
                       "SpeculativeConfig has no field k"));
        // 0.10.2 spells DeepSeek's module deepseek_mtp: "mtp" is not in its SpeculativeMethod.
        QVERIFY(breaks(a, v10, "speculative method 'mtp' is not one it runs for DeepseekV3ForCausalLM"));
        // A plan without speculative decoding, a command with it.
        LaunchCommand none = a;
        none.plan.spec = {};
        QVERIFY(breaks(none, v12, "runs speculative decoding (mtp), and the plan has none"));

        // SGLang: num_draft_tokens = num_steps + 1 with topk 1; a tree where the plan prices a chain; no
        // flags.
        const EngineVersion g56 = findEngineVersion(ServingEngine::Sglang, "0.5.6").value();
        const LaunchCommand g = exportOk(s, p, ServingEngine::Sglang, "0.5.6");
        QVERIFY(checkLaunch(g, s, g56).empty());
        QVERIFY(breaks(with(g, "--speculative-num-draft-tokens", "3"), g56,
                       "the verify width is num_steps + 1 = 2, --speculative-num-draft-tokens says 3"));
        QVERIFY(breaks(with(g, "--speculative-eagle-topk", "4"), g56, "drafts a tree"));
        QVERIFY(breaks(with(with(g, "--speculative-algorithm", ""), "--speculative-num-steps", ""), g56,
                       "--speculative-eagle-topk without --speculative-algorithm"));
        QVERIFY(breaks(with(g, "--speculative-algorithm", "NGRAM"), g56, "NGRAM with --enable-dp-attention"));
        const EngineVersion g49 = findEngineVersion(ServingEngine::Sglang, "0.4.9").value();
        QVERIFY(breaks(
            with(exportOk(s, p, ServingEngine::Sglang, "0.4.9"), "--speculative-algorithm", "STANDALONE"),
            g49, "--speculative-algorithm STANDALONE is not one it runs"));
        QVERIFY(breaks(with(exportOk(s, p, ServingEngine::Sglang, "0.4.9"), "--speculative-draft-model-path",
                            "lmsys/DeepSeek-V3-NextN"),
                       g49, "not the target checkpoint"));
        LaunchCommand piped = g;
        for (auto* cmd : {&piped.argv, &piped.nodes[0].commands.back()})
            cmd->insert(cmd->end(), {"--pp-size", "2"});
        QVERIFY(breaks(piped, g56, "speculative decoding with --pp-size 2"));

        // TensorRT-LLM: the YAML without speculative_config, and a key its decoding_type does not take.
        const EngineVersion t12 = findEngineVersion(ServingEngine::Trtllm, "").value();
        const LaunchCommand t = exportOk(s, p, ServingEngine::Trtllm);
        QVERIFY(checkLaunch(t, s, t12).empty());
        LaunchCommand noSpec = t, badKey = t;
        std::string& yaml = noSpec.files[0].second;
        yaml = yaml.substr(0, yaml.find("speculative_config:"));
        QVERIFY(breaks(noSpec, t12, "the command has no speculative_config"));
        badKey.files[0].second += "  max_matching_ngram_size: 4\n";
        QVERIFY(breaks(badKey, t12, "decoding_type MTP takes no max_matching_ngram_size"));
    }

    // A method the version cannot run goes through the refusal: adapted to the nearest layout it runs (the
    // plan without speculative decoding, or at pp 1 when the pipeline is why), with the reason in a note;
    // refused under --strict.
    void speculativeRefusals() {
        Scenario s = compose("llama-3.1-8b.yaml", "h100-1x8.yaml", "chat-serving.yaml");
        s.workload.acceptance[size_t(SpecMethod::Eagle3)] = {0.8, 0.7, 0.6};
        s.workload.acceptance[size_t(SpecMethod::Ngram)] = {0.5, 0.3};
        s.workload.acceptance[size_t(SpecMethod::Draft)] = {0.7, 0.5};
        // A draft model for the test: Llama-3.2-1B's shapes (huggingface.co/meta-llama/Llama-3.2-1B
        // config.json: 16 layers, hidden 2048, intermediate 8192, 32 heads, 8 KV heads, head_dim 64).
        DraftModule d;
        d.layers = 16, d.hidden = 2048, d.ffn = 8192, d.heads = 32, d.kvHeads = 8, d.headDim = 64;
        d.vocab = 128256, d.hubId = "meta-llama/Llama-3.2-1B";
        s.model.spec.draft = d;
        const auto strict = [&s](const Plan& p, ServingEngine e, const std::string& version) {
            ExportOptions o;
            o.engine = e, o.version = version, o.adapt = false;
            const auto r = launchCommand(s, p, o);
            return r.ok() ? std::string() : r.error().message;
        };
        // EAGLE-3, K = 3 with rates 0.8, 0.7, 0.6: E = 1 + 0.8 + 0.56 + 0.336 = 2.696.
        Plan e3 = megatron(1, 1, 8, 64);
        e3.spec = {SpecMethod::Eagle3, 3};
        const LaunchCommand v = exportOk(s, e3, ServingEngine::Vllm);
        QCOMPARE(flagAfter(v, "--speculative-config").value_or(""),
                 std::string(R"({"method":"eagle3","model":"yuhuili/EAGLE3-LLaMA3.1-Instruct-8B",)"
                             R"("num_speculative_tokens":3})"));
        QVERIFY2(hasNote(v, "E = 2.696 tokens"), qPrintable(notes(v)));
        // With a pipeline: vLLM and SGLang refuse it; TensorRT-LLM runs it.
        Plan piped = megatron(2, 1, 4, 64);
        piped.spec = {SpecMethod::Eagle3, 3};
        for (const auto& [e, who] : std::vector<std::pair<ServingEngine, std::string>>{
                 {ServingEngine::Vllm, "vLLM 0.12.0"}, {ServingEngine::Sglang, "SGLang 0.5.6"}}) {
            const std::string why = who + " runs no speculative decoding with pipeline parallelism (pp 2";
            QVERIFY2(strict(piped, e, "").find(why) != std::string::npos, strict(piped, e, "").c_str());
            const LaunchCommand a = exportOk(s, piped, e);
            QVERIFY(a.adapted);
            QVERIFY(!a.plan.spec.on() || a.plan.degrees.pp == 1);
            QVERIFY2(hasNote(a, "Layout changed: " + why), qPrintable(notes(a)));
            QVERIFY(checkLaunch(a, s, findEngineVersion(e, "").value()).empty());
        }
        QVERIFY(!exportOk(s, piped, ServingEngine::Trtllm).adapted);
        // n-gram: SGLang 0.4.9 has none; 0.5.6 verifies K + 1 tokens without num-steps; vLLM's lookup window.
        Plan ng = megatron(1, 1, 8, 64);
        ng.spec = {SpecMethod::Ngram, 2};
        QVERIFY2(strict(ng, ServingEngine::Sglang, "0.4.9").find("SGLang 0.4.9 has no n-gram") !=
                     std::string::npos,
                 strict(ng, ServingEngine::Sglang, "0.4.9").c_str());
        const LaunchCommand g56 = exportOk(s, ng, ServingEngine::Sglang, "0.5.6");
        QCOMPARE(flagAfter(g56, "--speculative-algorithm").value_or(""), std::string("NGRAM"));
        QCOMPARE(flagAfter(g56, "--speculative-num-draft-tokens").value_or(""), std::string("3"));
        QVERIFY(!hasArg(g56, "--speculative-num-steps"));
        QCOMPARE(flagAfter(exportOk(s, ng, ServingEngine::Vllm), "--speculative-config").value_or(""),
                 std::string(R"({"method":"ngram","num_speculative_tokens":2,"prompt_lookup_max":4,)"
                             R"("prompt_lookup_min":2})"));
        // A separate draft model: refused by both vLLM rows and SGLang 0.4.9; SGLang 0.5.6's STANDALONE;
        // TensorRT-LLM's Draft_Target.
        Plan dm = megatron(1, 1, 8, 64);
        dm.spec = {SpecMethod::Draft, 2};
        for (const char* version : {"0.10.2", "0.12.0"})
            QVERIFY(strict(dm, ServingEngine::Vllm, version)
                        .find(std::string("vLLM ") + version + " runs no separate draft model") !=
                    std::string::npos);
        QVERIFY(strict(dm, ServingEngine::Sglang, "0.4.9").find("runs no separate draft model") !=
                std::string::npos);
        const LaunchCommand a = exportOk(s, dm, ServingEngine::Vllm);
        QVERIFY(a.adapted && !a.plan.spec.on());
        QVERIFY2(hasNote(a, "speculative decoding draft x2 -> none"), qPrintable(notes(a)));
        const LaunchCommand st = exportOk(s, dm, ServingEngine::Sglang, "0.5.6");
        QCOMPARE(flagAfter(st, "--speculative-algorithm").value_or(""), std::string("STANDALONE"));
        QCOMPARE(flagAfter(st, "--speculative-draft-model-path").value_or(""), d.hubId);
        const LaunchCommand t = exportOk(s, dm, ServingEngine::Trtllm);
        const YAML::Node y = YAML::Load(t.files[0].second);
        QCOMPARE(y["speculative_config"]["decoding_type"].as<std::string>(), std::string("Draft_Target"));
        QCOMPARE(y["speculative_config"]["speculative_model_dir"].as<std::string>(), d.hubId);
        QVERIFY(y["disable_overlap_scheduler"].as<bool>());
        for (const LaunchCommand* lc : {&st, &t}) {
            const auto found = checkLaunch(*lc, s, findEngineVersion(lc->engine, lc->version).value());
            QVERIFY2(found.empty(), found.empty() ? "" : found[0].c_str());
        }
        // MTP for a model whose file names no architecture: no engine knows its module.
        Scenario ds = compose("deepseek-v3.yaml", "h100-32x8.yaml", "chat-serving.yaml");
        ds.model.architecture.clear();
        auto dp = loadPlan(kSamples + "/plans/deepseek-v3-dp-attention.yaml");
        QVERIFY(dp.ok());
        Plan mtp = dp.value();
        mtp.spec = {SpecMethod::Mtp, 1};
        ExportOptions o;
        o.engine = ServingEngine::Trtllm, o.adapt = false;
        const auto r = launchCommand(ds, mtp, o);
        QVERIFY(!r.ok());
        QVERIFY2(r.error().message.find("has no MTP draft module for DeepSeek-V3 (its model file names no "
                                        "architecture)") != std::string::npos,
                 r.error().message.c_str());
    }

    // No engine shards different layers differently, so a plan with layer groups is refused by every engine
    // (and Dynamo, and each pool of a disaggregated launch) with the groups in the reason; adapting exports
    // the first group's choices for every layer, with a note saying so.
    void layerGroupsRefused() {
        const Scenario s = compose("llama-3.1-70b.yaml", "h100-1x8.yaml", "chat-serving.yaml");
        Plan p = megatron(1, 1, 8, 32);
        Plan uniform = p;
        // Llama-3.1-70B's 80 layers: 0-39 as Megatron's, 40-79 with batch-sharded attention.
        LayerGroup second{40, p.choices};
        second.choices[int(Op::Attention)] = choice::AttnBatch;
        p.layerGroups = {LayerGroup{40, p.choices}, second};
        const std::string groups = "layers 0-39 | 40-79: attention batch";
        QCOMPARE(layerGroupsText(p), groups);
        for (const auto& [e, name] :
             std::vector<std::pair<ServingEngine, std::string>>{{ServingEngine::Vllm, "vLLM"},
                                                                {ServingEngine::Sglang, "SGLang"},
                                                                {ServingEngine::Trtllm, "TensorRT-LLM"},
                                                                {ServingEngine::Dynamo, "Dynamo"}}) {
            const std::string reason =
                name + " shards every layer alike; the plan's layer groups choose " + groups;
            ExportOptions o;
            o.engine = e, o.adapt = false;
            const auto refused = launchCommand(s, p, o);
            QVERIFY2(!refused.ok(), name.c_str());
            QVERIFY2(refused.error().message.find(reason) != std::string::npos,
                     refused.error().message.c_str());
            const LaunchCommand a = exportOk(s, p, e);
            QVERIFY(a.adapted);
            QVERIFY(a.plan.layerGroups.empty());
            QVERIFY(a.plan == uniform); // the first group's choices, nothing else moved
            QVERIFY2(hasNote(a, "Layout changed: " + reason), qPrintable(notes(a)));
            QVERIFY2(hasNote(a, "layer groups -> the first group's choices for every layer"),
                     qPrintable(notes(a)));
            // The same launch as the uniform plan's.
            QCOMPARE(list(a.argv), list(exportOk(s, uniform, e).argv));
        }
        // Each pool of a disaggregated launch: the prefill pool's groups are dropped with the note.
        const Scenario ds = compose("llama-3.1-70b.yaml", "h100-4x8.yaml", "chat-serving.yaml");
        DisaggPlan d;
        d.prefill = {1, p};
        d.decode = {3, megatron(1, 3, 8, 32)};
        ExportOptions o;
        o.engine = ServingEngine::Sglang;
        auto l = disaggregatedLaunch(ds, d, o);
        QVERIFY2(l.ok(), l.error().str().c_str());
        QVERIFY(l->prefill.adapted && l->prefill.plan.layerGroups.empty());
        QVERIFY(!l->decode.adapted);
        QVERIFY2(hasNote(l->prefill, "SGLang shards every layer alike"), qPrintable(notes(l->prefill)));
        o.adapt = false;
        auto strict = disaggregatedLaunch(ds, d, o);
        QVERIFY(!strict.ok());
        QVERIFY2(strict.error().message.find("prefill pool: cannot export to sglang") != std::string::npos &&
                     strict.error().message.find("layer groups choose " + groups) != std::string::npos,
                 strict.error().message.c_str());
    }

    // vLLM 0.10.2 has no --all2all-backend and no VLLM_RAY_DP_PACK_STRATEGY (vllm/engine/arg_utils.py and
    // vllm/envs.py at v0.10.2): its notes name VLLM_ALL2ALL_BACKEND (default "naive") instead.
    void vllmOldNotes() {
        const Scenario s = compose("qwen3-235b-a22b.yaml", "h200-1x8.yaml", "chat-serving.yaml");
        const Plan p = megatron(1, 1, 8, 32, 8);
        const LaunchCommand old = exportOk(s, p, ServingEngine::Vllm, "0.10.2");
        // The variable for 0.10.2, and where it went after (0.11.1's flag; 0.16.0 removed the variable).
        QVERIFY2(hasNote(old, "VLLM_ALL2ALL_BACKEND=naive") &&
                     hasNote(old, "From vLLM 0.11.1 the flag --all2all-backend takes these values; 0.16.0 "
                                  "removed the variable."),
                 qPrintable(notes(old)));
        const LaunchCommand now = exportOk(s, p, ServingEngine::Vllm);
        QVERIFY2(hasNote(now, "--all2all-backend") && !hasNote(now, "VLLM_ALL2ALL_BACKEND"),
                 qPrintable(notes(now)));
        // Two DP ranks of pp 2 x tp 8 (16 GPUs, two hosts each): the newer row spans nodes with Ray's pack
        // strategy; 0.10.2's Ray DP backend puts each DP rank on one node (vllm/v1/engine/utils.py,
        // create_dp_placement_groups), so it exports two deployments of one replica, each on Ray.
        const Scenario big = compose("llama-3.1-405b.yaml", "h200-16x8.yaml", "chat-serving.yaml", 32);
        const Plan dp2 = megatron(2, 2, 8, 32);
        const LaunchCommand ray10 = exportOk(big, dp2, ServingEngine::Vllm, "0.10.2");
        QVERIFY2(hasNote(ray10, "runs it with Ray") && !hasNote(ray10, "VLLM_RAY_DP_PACK_STRATEGY"),
                 qPrintable(notes(ray10)));
        QVERIFY2(hasNote(ray10, "one of 2 identical deployments of 16 GPUs, one per replica (dp 2)"),
                 qPrintable(notes(ray10)));
        QVERIFY(!hasArg(ray10, "--data-parallel-size") && !hasArg(ray10, "--data-parallel-backend"));
        QCOMPARE(ray10.nodes.size(), size_t(4));
        QVERIFY(checkLaunch(ray10, big, findEngineVersion(ServingEngine::Vllm, "0.10.2").value()).empty());
        // The newer row's command (one launch, DP 2 over Ray) is refused by 0.10.2's checker.
        LaunchCommand one = exportOk(big, dp2, ServingEngine::Vllm);
        QCOMPARE(*flagAfter(one, "--data-parallel-backend"), std::string("ray"));
        const auto v = checkLaunch(one, big, findEngineVersion(ServingEngine::Vllm, "0.10.2").value());
        QVERIFY(
            std::find(v.begin(), v.end(),
                      "vLLM 0.10.2: DP ranks of 16 GPUs under the Ray DP backend, which places each on one "
                      "node of 8") != v.end());
        QVERIFY(hasNote(exportOk(big, dp2, ServingEngine::Vllm), "VLLM_RAY_DP_PACK_STRATEGY=span"));
    }

    // The context: input + output, capped by max_position_embeddings (Llama-2-70B's config.json: 4096), or
    // refused when the prompt alone is longer.
    void contextLimitedByTheModel() {
        Scenario s = compose("llama-2-70b.yaml", "h100-1x8.yaml", "long-context-prefill.yaml");
        const auto r = launchCommand(s, megatron(1, 1, 8, 1), ServingEngine::Vllm);
        QVERIFY(!r.ok());
        QVERIFY2(r.error().message.find("need a context of 32769 tokens, longer than Llama-2-70B's "
                                        "max_position_embeddings 4096") != std::string::npos,
                 r.error().message.c_str());
        s.workload.inputTokens = 3000, s.workload.outputTokens = 2000;
        for (ServingEngine e : {ServingEngine::Vllm, ServingEngine::Sglang, ServingEngine::Trtllm}) {
            const LaunchCommand c = exportOk(s, megatron(1, 1, 8, 8), e);
            const char* flag = e == ServingEngine::Vllm     ? "--max-model-len"
                               : e == ServingEngine::Sglang ? "--context-length"
                                                            : "--max_seq_len";
            const auto at = std::find(c.argv.begin(), c.argv.end(), flag);
            QVERIFY(at != c.argv.end());
            QCOMPARE(*(at + 1), std::string("4096"));
            QVERIFY2(hasNote(c, "outputs stop after 1096 tokens instead of 2000"), qPrintable(notes(c)));
        }
        // The checker refuses the old 32769.
        s = compose("llama-2-70b.yaml", "h100-1x8.yaml", "chat-serving.yaml");
        LaunchCommand old = exportOk(s, megatron(1, 1, 8, 8), ServingEngine::Vllm);
        *(std::find(old.argv.begin(), old.argv.end(), "--max-model-len") + 1) = "32769";
        old.nodes[0].commands = {old.argv};
        const auto v = checkLaunch(old, s, findEngineVersion(ServingEngine::Vllm, "").value());
        QVERIFY(!v.empty() &&
                v[0].find("--max-model-len 32769 exceeds the model's max_position_embeddings 4096") == 0);
    }

    // The prefill budget is the engine's default: a 32768-token prompt on H200 (141 GB) is 4 chunks of 8192
    // for vLLM (arg_utils.py get_batch_defaults: 8192 on 70 GiB or more) and SGLang (server_args.py: 8192
    // below 160 GiB); TensorRT-LLM, whose chunked prefill is off, gets --max_num_tokens 32768.
    void prefillBudget() {
        const Scenario s = compose("qwen3-235b-a22b.yaml", "h200-1x8.yaml", "long-context-prefill.yaml");
        const Plan p = megatron(1, 1, 8, 1, 8);
        QVERIFY(hasNote(exportOk(s, p, ServingEngine::Vllm), "prefilled in 4 chunks"));
        QVERIFY(hasNote(exportOk(s, p, ServingEngine::Sglang), "prefilled in 4 chunks"));
        const auto t = exportOk(s, p, ServingEngine::Trtllm).argv;
        QCOMPARE(*(std::find(t.begin(), t.end(), "--max_num_tokens") + 1), std::string("32768"));
    }

    // The model path: the Hub id; a model with none needs --model.
    void modelPath() {
        Scenario s = compose("llama-3.1-8b.yaml", "h100-1x8.yaml", "chat-serving.yaml");
        s.model.source = "config.json";
        QCOMPARE(exportOk(s, megatron(1, 1, 8, 8), ServingEngine::Sglang).argv[4],
                 std::string("meta-llama/Llama-3.1-8B"));
        s.model.hubId.clear();
        const auto r = launchCommand(s, megatron(1, 1, 8, 8), ServingEngine::Vllm);
        QVERIFY(!r.ok());
        QVERIFY2(r.error().message.find("has no Hugging Face id (hub_id)") != std::string::npos &&
                     r.error().message.find("--model") != std::string::npos,
                 r.error().message.c_str());
        QCOMPARE(launchCommand(s, megatron(1, 1, 8, 8), ServingEngine::Vllm, "/models/l8b").value().argv[2],
                 std::string("/models/l8b"));
    }

    // DP ranks of 6 GPUs do not pack into 8-GPU nodes: node 0's command only, the rest by hand (a note).
    void vllmRanksThatDoNotPack() {
        const Scenario s = compose("llama-3.1-8b.yaml", "h100-4x8.yaml", "chat-serving.yaml", 12);
        const LaunchCommand c = exportOk(s, megatron(3, 2, 2, 8), ServingEngine::Vllm);
        QCOMPARE(c.nodes.size(), size_t(2));
        QCOMPARE(c.nodes[0].commands, std::vector<std::vector<std::string>>{c.argv});
        QVERIFY(c.nodes[1].commands.empty());
        QVERIFY(c.scripts()[1].second.find("# nothing to start here") != std::string::npos);
        QVERIFY2(hasNote(c, "do not pack evenly into nodes of 8"), qPrintable(notes(c)));
        QVERIFY(checkLaunch(c, s, findEngineVersion(ServingEngine::Vllm, "").value()).empty());
    }

    // The scripts read back as their commands, quoting included.
    void scriptsParseBack() {
        const Scenario s = compose("llama-3.1-8b.yaml", "h100-1x8.yaml", "chat-serving.yaml");
        const auto r = launchCommand(s, megatron(1, 4, 2, 8), ServingEngine::Vllm, "/models/it's here");
        QVERIFY(r.ok());
        const auto scripts = r->scripts();
        QCOMPARE(scripts.size(), size_t(1));
        const auto cmds = parseScript(scripts[0].second);
        QCOMPARE(cmds, r->nodes[0].commands);
        QCOMPARE(cmds[0][2], std::string("/models/it's here"));
    }

    // --out-dir writes node scripts, the plan and NOTES.txt; export --searcher stops on Ctrl-C with the
    // best plan so far.
    void cliOutDirAndInterrupt() {
        QTemporaryDir dir;
        QProcess p;
        p.start(SHARDPLAN_CLI, {"export", "--scenario",
                                QString::fromStdString(kSamples + "/scenarios/llama-3.1-70b-h100-4x8.yaml"),
                                "--engine", "vllm", "--engine-version", "0.10.2", "--out-dir", dir.path()});
        QVERIFY(p.waitForFinished(60000));
        QCOMPARE(p.exitCode(), 0);
        for (const char* f : {"node0.sh", "plan.yaml", "NOTES.txt"})
            QVERIFY2(QFile::exists(dir.filePath(f)), f);
        QVERIFY(QFileInfo(dir.filePath("node0.sh")).isExecutable());
        QVERIFY(loadPlan(dir.filePath("plan.yaml").toStdString()).ok());
        p.start(SHARDPLAN_CLI, {"export", "--scenario",
                                QString::fromStdString(kSamples + "/scenarios/llama-3.1-8b-h100-1x8.yaml"),
                                "--engine", "vllm", "--engine-version", "9.9"});
        QVERIFY(p.waitForFinished(60000));
        QCOMPARE(p.exitCode(), 2);
        QVERIFY2(p.readAllStandardError().contains("known: 0.10.2, 0.12.0"), "unknown version");

        p.start(SHARDPLAN_CLI,
                {"export", "--scenario",
                 QString::fromStdString(kSamples + "/scenarios/moe-1.6t-h100-128x8.yaml"), "--searcher", "sa",
                 "--budget", "100000000", "--engine", "sglang", "--model", "/m"});
        QVERIFY(p.waitForStarted());
        QTest::qWait(1500);
        ::kill(pid_t(p.processId()), SIGINT);
        QVERIFY(p.waitForFinished(60000));
        const QString err = p.readAllStandardError(), out = p.readAllStandardOutput();
        QCOMPARE(p.exitStatus(), QProcess::NormalExit);
        QVERIFY2(err.contains("(stopped)"), qPrintable(err));
        QVERIFY2(out.contains("sglang.launch_server"), qPrintable(out + err));
    }

    // export --searcher with a model that has no Hub id and no --model used to search its whole budget, then
    // fail for want of a path; now it fails before searching (a budget of 10^8 would run for minutes).
    void cliModelPathBeforeSearch() {
        QProcess p;
        p.start(SHARDPLAN_CLI, {"export", "--scenario",
                                QString::fromStdString(kSamples + "/scenarios/moe-1.6t-h100-128x8.yaml"),
                                "--searcher", "sa", "--budget", "100000000", "--engine", "sglang"});
        QVERIFY(p.waitForStarted());
        const bool finished = p.waitForFinished(20000);
        if (!finished) p.kill(), p.waitForFinished(5000);
        QVERIFY2(finished, "export searched before checking the model path");
        QCOMPARE(p.exitCode(), 1);
        const QString err = p.readAllStandardError();
        QVERIFY2(err.contains("has no Hugging Face id (hub_id)") && err.contains("--model") &&
                     !err.contains("evaluations"),
                 qPrintable(err));
    }

private:
    static std::string degreesTextForTest(const Plan& p) {
        const Degrees& d = p.degrees;
        return "{pp" + std::to_string(d.pp) + " dp" + std::to_string(d.dp) + " tp" + std::to_string(d.tp) +
               " ep" + std::to_string(d.ep) + " etp" + std::to_string(d.etp) + " edp" +
               std::to_string(d.edp) + "}";
    }
};

QTEST_GUILESS_MAIN(TestExport)
#include "tst_export.moc"
