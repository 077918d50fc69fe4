#pragma once
// What the search test suites share: sample scenarios, a toy scenario and objective with known structure, an
// objective that records what it evaluates, and running a searcher by name.
#include "core/io/formats.h"
#include "core/searchers/registry.h"

#include <QTest>

#include <atomic>
#include <chrono>
#include <cmath>
#include <mutex>
#include <thread>

namespace sp::test {

inline const std::string kScenarios = SHARDPLAN_SAMPLES_DIR "/scenarios/";

inline Scenario loadSample(const std::string& name) {
    auto s = loadScenario(kScenarios + name);
    if (!s) qFatal("%s", s.error().str().c_str());
    return s.value();
}

/// A small dense scenario on one node of 4 GPUs, counted by hand in spaceSizeHandCount.
inline Scenario toyScenario() {
    Scenario s;
    s.name = "toy";
    Model& m = s.model;
    m.name = "toy";
    m.layers = 2;
    m.hidden = 48;
    m.vocab = 1000;
    m.attention.heads = 6;
    m.attention.kvHeads = 2;
    m.attention.headDim = 8;
    m.ffn = 40;
    s.cluster.name = "toy";
    s.cluster.nodes = 1;
    s.cluster.gpusPerNode = 4;
    s.workload.name = "toy";
    s.workload.inputTokens = 100;
    s.workload.outputTokens = 100;
    return s;
}

/// A synthetic objective with known structure, invariant under the space's equivalences (operator choices do
/// not matter at tp 1; a mesh order counts only through its axes of degree > 1). Plans with pp*tp < 2 are
/// infeasible.
class ToyObjective : public Objective {
public:
    explicit ToyObjective(int sleepMs = 0) : m_sleepMs(sleepMs) {}
    Metrics evaluate(const Plan& p) const override {
        if (m_sleepMs > 0) std::this_thread::sleep_for(std::chrono::milliseconds(m_sleepMs));
        calls.fetch_add(1);
        Metrics m;
        m.valid = true;
        const Degrees& d = p.degrees;
        double t = 1000 + 100 * std::log2(d.tp) - 40 * std::log2(d.pp) + 7 * std::log2(d.dp);
        if (d.tp > 1)
            for (int o = 0; o < kOpCount; ++o) // the operators of a dense model only, like the cost model
                if (o <= int(Op::FfnDown) || o == int(Op::LmHead))
                    t += ((o * 7 + p.choices[o] * 13) % 11) * 3.0;
        for (Axis a : p.meshOrder)
            if (p.degrees.get(a) > 1) {
                t += a == Axis::TP ? 30 : 0; // innermost axis of degree > 1
                break;
            }
        if (d.pp * d.tp < 2) {
            m.feasible = false;
            m.shortfall = 1.5;
            m.violation = "memory: 150% of the toy capacity";
            m.violations = {m.violation};
            return m;
        }
        m.feasible = true;
        m.throughput = t;
        return m;
    }
    mutable std::atomic<int64_t> calls{0};

private:
    int m_sleepMs;
};

/// Records every plan it evaluates (thread-safe), around another objective.
class RecordingObjective : public Objective {
public:
    explicit RecordingObjective(const Objective& inner) : m_inner(inner) {}
    Metrics evaluate(const Plan& p) const override {
        {
            std::lock_guard lk(m_mutex);
            m_plans.push_back(p);
        }
        return m_inner.evaluate(p);
    }
    std::vector<Plan> plans() const {
        std::lock_guard lk(m_mutex);
        return m_plans;
    }

private:
    const Objective& m_inner;
    mutable std::mutex m_mutex;
    mutable std::vector<Plan> m_plans;
};

inline SearchResult runSearcher(const std::string& name, const SearchSpace& space, Engine& engine,
                                int64_t budget, uint64_t seed = 1, int threads = 1, std::stop_token stop = {},
                                Observer* obs = nullptr) {
    auto s = makeSearcher(name);
    if (!s) qFatal("no searcher %s", name.c_str());
    SearchOptions o;
    o.budget.evaluations = budget;
    o.seed = seed;
    o.threads = threads;
    return s->run(space, engine, o, obs, stop);
}

/// Every field of two evaluations' metrics, bit for bit.
inline void sameMetrics(const Metrics& a, const Metrics& b) {
    QCOMPARE(a.valid, b.valid);
    QCOMPARE(a.feasible, b.feasible);
    QCOMPARE(a.throughput, b.throughput);
    QCOMPARE(a.ttftMs, b.ttftMs);
    QCOMPARE(a.tpotMs, b.tpotMs);
    QCOMPARE(a.batch, b.batch);
    QCOMPARE(a.memoryPerGpuGiB, b.memoryPerGpuGiB);
    QCOMPARE(a.weightsGiB, b.weightsGiB);
    QCOMPARE(a.kvCacheGiB, b.kvCacheGiB);
}

} // namespace sp::test
