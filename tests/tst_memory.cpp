// Memory as the engines count it: the GPU's memory as the driver reports it (resources/gpus.yaml), the KV
// pool by the rule of the engine that serves the plan (vLLM, SGLang, TensorRT-LLM), and the exported memory
// flag equal to the fraction the cost model assumed.
#include "core/cost/costmodel.h"
#include "core/export/launch.h"
#include "core/io/formats.h"
#include "core/io/gpudb.h"

#include "sample_fixtures.h"

#include <QTest>

#include <algorithm>
#include <cmath>

using namespace sp;

namespace {

const std::string kSamples = SHARDPLAN_SAMPLES_DIR;

Scenario scenario(const std::string& file) {
    return sp::test::sampleScenario(file);
}

/// Llama-3.1-70B, TP8 on one H100 node, the chat workload without its SLOs (memory decides the batch).
Scenario llama70b(MemoryRule rule, double fraction = 0) {
    Scenario s = scenario("llama-3.1-70b-h100-4x8.yaml");
    s.constraints.gpus = 8;
    s.cluster.nodes = 1;
    s.workload.ttftMs = s.workload.tpotMs = 0;
    s.constraints.memoryRule = rule;
    s.constraints.memoryFraction = fraction;
    return s;
}

Plan tp8() {
    return Plan::megatronChoices({1, 1, 8, 8, 1, 1});
}

std::string flag(const LaunchCommand& c, const std::string& name) {
    auto it = std::find(c.argv.begin(), c.argv.end(), name);
    return it == c.argv.end() || it + 1 == c.argv.end() ? std::string() : *(it + 1);
}

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

} // namespace

class TestMemory : public QObject {
    Q_OBJECT
private slots:
    // What nvidia-smi and rocm-smi report, not the datasheets' 10^9 bytes: 81,559 MiB on an H100 SXM (79.6
    // GiB, where 80 x 10^9 bytes are 74.5 GiB); the MI300X's 206,141,652,992 bytes are 196,592 MiB.
    void driverMemory() {
        QCOMPARE(findGpu("h100-sxm")->gpu.memoryMiB, 81559.0);
        QCOMPARE(findGpu("h100-sxm")->gpu.memoryBytes(), 81559.0 * 1048576);
        QCOMPARE(findGpu("mi300x")->gpu.memoryBytes(), 206141652992.0);
        // A GPU without the figure: the datasheet's bytes stand in.
        Gpu g;
        g.hbmGB = 80;
        QCOMPARE(g.memoryBytes(), 80e9);
    }

    // vLLM: gpu_memory_utilization 0.9 of the 81,559 MiB holds weights, activations, the 2 GiB reserve and
    // the KV cache; the batch is the largest whose cache fits, one more does not.
    void vllmRule() {
        const CostModel cost(llama70b(MemoryRule::Vllm));
        const Metrics m = cost.evaluate(tp8());
        QVERIFY2(m.feasible, m.violation.c_str());
        const double M = 81559.0 / 1024.0;
        QCOMPARE(m.gpuMemoryGiB, M);
        QCOMPARE(m.memoryFraction, 0.9);
        QVERIFY(std::fabs(m.capacityGiB - 0.9 * M) < 1e-9);
        QVERIFY(std::fabs(m.kvPoolGiB - (0.9 * M - m.weightsGiB - m.activationsGiB - m.reserveGiB)) < 1e-9);
        QVERIFY(m.kvCacheGiB <= m.kvPoolGiB && m.memoryPerGpuGiB <= m.capacityGiB);
        // One sequence more does not fit: its cache would pass the pool.
        const double perSeq = m.kvCacheGiB / double(m.batch);
        QVERIFY(m.kvCacheGiB + perSeq > m.kvPoolGiB - 1e-9 * M);
        // A fraction the user gives is taken as it is.
        const Metrics u = CostModel(llama70b(MemoryRule::Vllm, 0.8)).evaluate(tp8());
        QCOMPARE(u.memoryFraction, 0.8);
        QVERIFY(u.batch < m.batch);
    }

    // SGLang: mem_fraction_static of the memory holds the weights and the KV pool. Its default for TP8 on an
    // H100, by its formula (ServerArgs._handle_gpu_memory_settings): reserved 512 + 8192 x 1.5 + 512 x 2 +
    // 8 x 1 / 8 x 1024 = 14,848 MiB, (81,559 - 14,848) / 81,559 = 0.818 (rounded to three places).
    void sglangRule() {
        QCOMPARE(sglangMemFractionStatic(81559, 8, 1, 0, 0, SpecMethod::None), 0.818);
        // TP2: cuda_graph_max_bs 256 below tp 4: 512 + 12,288 + 512 + 256 = 13,568 MiB: 0.834.
        QCOMPARE(sglangMemFractionStatic(81559, 2, 1, 0, 0, SpecMethod::None), 0.834);
        // An EAGLE/MTP draft adds 2,048 MiB: (81,559 - 16,896) / 81,559 = 0.793.
        QCOMPARE(sglangMemFractionStatic(81559, 8, 1, 0, 0, SpecMethod::Mtp), 0.793);
        // A B200 (183,359 MiB): chunked prefill 16,384, so 512 + 24,576 + 1,024 + 1,024 = 27,136: 0.852.
        QCOMPARE(sglangMemFractionStatic(183359, 8, 1, 0, 0, SpecMethod::None), 0.852);
        const Metrics m = CostModel(llama70b(MemoryRule::Sglang)).evaluate(tp8());
        QVERIFY2(m.feasible, m.violation.c_str());
        QCOMPARE(m.memoryFraction, 0.818);
        const double M = 81559.0 / 1024.0;
        QVERIFY(std::fabs(m.kvPoolGiB - (0.818 * M - m.weightsGiB)) < 1e-9);
        QVERIFY(m.kvCacheGiB <= m.kvPoolGiB);
        // The rest holds the activations and the reserve.
        QVERIFY(m.activationsGiB + m.reserveGiB <= (1 - 0.818) * M);
    }

    // TensorRT-LLM: free_gpu_memory_fraction 0.9 of what the weights, activations and reserve leave.
    void trtllmRule() {
        const Metrics m = CostModel(llama70b(MemoryRule::Trtllm)).evaluate(tp8());
        QVERIFY2(m.feasible, m.violation.c_str());
        const double M = 81559.0 / 1024.0, used = m.weightsGiB + m.activationsGiB + m.reserveGiB;
        QVERIFY(std::fabs(m.kvPoolGiB - 0.9 * (M - used)) < 1e-9);
        QVERIFY(m.kvCacheGiB <= m.kvPoolGiB);
    }

    // The exported flag is the fraction the cost model assumed for that engine, and each export is evaluated
    // under its engine's rule: a fraction given for vLLM does not carry over to SGLang.
    void exportedFlagIsTheAssumedFraction() {
        const Plan p = tp8();
        for (const auto& [rule, engine, name] :
             {std::tuple{MemoryRule::Vllm, ServingEngine::Vllm, "--gpu-memory-utilization"},
              std::tuple{MemoryRule::Sglang, ServingEngine::Sglang, "--mem-fraction-static"},
              std::tuple{MemoryRule::Trtllm, ServingEngine::Trtllm, "--kv_cache_free_gpu_memory_fraction"}}) {
            const Scenario s = llama70b(MemoryRule::Vllm);
            auto c = launchCommand(s, p, engine);
            QVERIFY2(c.ok(), c.ok() ? "" : c.error().str().c_str());
            Scenario under = s;
            under.constraints.memoryRule = rule;
            const Metrics m = CostModel(under).evaluate(p);
            QCOMPARE(std::stod(flag(c.value(), name)), m.memoryFraction);
            // The batch cap written is the batch the cost model found under that rule.
            const std::string cap =
                flag(c.value(), engine == ServingEngine::Vllm     ? "--max-num-seqs"
                                : engine == ServingEngine::Sglang ? "--max-running-requests"
                                                                  : "--max_batch_size");
            QCOMPARE(std::stoll(cap), m.batch);
        }
        auto v = launchCommand(llama70b(MemoryRule::Vllm, 0.85), p, ServingEngine::Vllm);
        QCOMPARE(flag(v.value(), "--gpu-memory-utilization"), std::string("0.85"));
        auto g = launchCommand(llama70b(MemoryRule::Vllm, 0.85), p, ServingEngine::Sglang);
        QCOMPARE(flag(g.value(), "--mem-fraction-static"), std::string("0.818"));
    }

    // The files: engine and memory_fraction, and memory_headroom as its older spelling.
    void constraintFields() {
        auto c = parseConstraints("version: 1\nkind: constraints\nengine: sglang\nmemory_fraction: 0.8\n",
                                  "c.yaml");
        QVERIFY(c.ok());
        QCOMPARE(c->memoryRule, MemoryRule::Sglang);
        QCOMPARE(c->memoryFraction, 0.8);
        auto back = parseConstraints(toYaml(c.value()), "c2.yaml");
        QVERIFY(back.ok() && back->memoryRule == MemoryRule::Sglang && back->memoryFraction == 0.8);
        auto old = parseConstraints("version: 1\nkind: constraints\nmemory_headroom: 0.1\n", "c.yaml");
        QVERIFY(old.ok());
        QCOMPARE(old->memoryFraction, 0.9);
        auto both = parseConstraints(
            "version: 1\nkind: constraints\nmemory_headroom: 0.1\nmemory_fraction: 0.8\n", "c.yaml");
        QVERIFY(!both.ok() && both.error().field == "memory_headroom");
        auto bad = parseConstraints("version: 1\nkind: constraints\nengine: tgi\n", "c.yaml");
        QVERIFY(!bad.ok() && bad.error().field == "engine");
    }
};

QTEST_GUILESS_MAIN(TestMemory)
#include "tst_memory.moc"
