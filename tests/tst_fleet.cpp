// A fleet (core/sim/fleet.h, `shardplan capacity --fleet`): several models on one GPU inventory at least
// cost. The integer program gets made-up rates and prices injected, so its answers are known by hand and
// checked against exhaustive enumeration; the whole answer runs on the sample with analytical rates
// (milliseconds); the file loader's errors name file, line and field.
#include "clirun.h"
#include "sample_fixtures.h"

#include "core/common/error.h"
#include "core/io/fleetfiles.h"
#include "core/io/formats.h"
#include "core/io/gpudb.h"
#include "core/sim/fleet.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>

#include <functional>
#include <random>

using namespace sp;
using namespace sp::test;

namespace {

const std::string kFleet = kSampleDir + "/fleet-three-models.yaml";

FleetCandidate cand(int model, int type, int gpus, double rate, double usd) {
    return {model, type, gpus, rate, usd};
}

double costOf(const FleetProblem& p, const std::vector<int>& x) {
    double c = 0;
    for (size_t j = 0; j < x.size(); ++j) c += x[j] * p.candidates[j].usdPerHour;
    return c;
}

/// The worst node's loss of model m, by brute force: a whole-node replica, or any sub-multiset of its
/// smaller replicas that fits one node (written apart from the solver's knapsack on purpose).
double bruteLoss(const FleetProblem& p, const std::vector<int>& x, int m) {
    double worst = 0;
    for (int g = 0; g < int(p.types.size()); ++g) {
        const int gpn = p.types[size_t(g)].gpusPerNode;
        std::vector<int> subs;
        for (int j = 0; j < int(x.size()); ++j) {
            const FleetCandidate& c = p.candidates[size_t(j)];
            if (c.model != m || c.type != g || x[size_t(j)] == 0) continue;
            if (c.gpus >= gpn)
                worst = std::max(worst, c.rate);
            else
                subs.push_back(j);
        }
        std::function<void(size_t, int, double)> fill = [&](size_t i, int room, double rate) {
            worst = std::max(worst, rate);
            if (i == subs.size()) return;
            const FleetCandidate& c = p.candidates[size_t(subs[i])];
            for (int n = 0; n <= x[size_t(subs[i])] && n * c.gpus <= room; ++n)
                fill(i + 1, room - n * c.gpus, rate + n * c.rate);
        };
        fill(0, gpn, 0.0);
    }
    return worst;
}

/// Every count vector within the inventory: the cheapest that meets every rate (and N-1), or infeasible.
struct Brute {
    bool feasible = false;
    double cost = 0;
};
Brute exhaustive(const FleetProblem& p) {
    Brute best;
    std::vector<int> x(p.candidates.size(), 0);
    std::function<void(size_t)> walk = [&](size_t j) {
        if (j == x.size()) {
            std::vector<int64_t> used(p.types.size(), 0);
            std::vector<double> rate(p.rates.size(), 0.0);
            for (size_t k = 0; k < x.size(); ++k) {
                used[size_t(p.candidates[k].type)] += int64_t(x[k]) * p.candidates[k].gpus;
                rate[size_t(p.candidates[k].model)] += x[k] * p.candidates[k].rate;
            }
            for (size_t g = 0; g < used.size(); ++g)
                if (used[g] > int64_t(p.types[g].nodes) * p.types[g].gpusPerNode) return;
            for (size_t m = 0; m < rate.size(); ++m) {
                const double loss = p.nMinus1 && p.rates[m] > 0 ? bruteLoss(p, x, int(m)) : 0.0;
                if (rate[m] - loss < p.rates[m] * (1 - 1e-9)) return;
            }
            const double c = costOf(p, x);
            if (!best.feasible || c < best.cost) best = {true, c};
            return;
        }
        const FleetCandidate& c = p.candidates[j];
        const int most = p.types[size_t(c.type)].nodes * p.types[size_t(c.type)].gpusPerNode / c.gpus;
        for (int n = 0; n <= most; ++n) {
            x[j] = n;
            walk(j + 1);
        }
        x[j] = 0;
    };
    walk(0);
    return best;
}

/// A fleet file's text with the sample models, resolved from the samples folder.
Result<Fleet> fleetText(const std::string& text) {
    return parseFleet(text, kSampleDir + "/fleet-test.yaml");
}

const char* kGood = R"(version: 1
kind: fleet
inventory:
  - {gpu: h100-sxm, nodes: 2}
models:
  - name: small
    model: models/llama-3.1-8b.yaml
    workload: workloads/chat-serving.yaml
    rate: 5
)";

std::string replaced(std::string text, const std::string& from, const std::string& to) {
    const auto at = text.find(from);
    if (at == std::string::npos) qFatal("no '%s' in the fixture", from.c_str());
    return text.replace(at, from.size(), to);
}

FleetModel sampleModel(const char* name, const char* file, const char* workload, double rate) {
    auto m = loadModel(kSampleDir + "/models/" + file);
    auto w = loadWorkload(kSampleDir + "/workloads/" + workload);
    if (!m || !w) qFatal("cannot load the sample files");
    FleetModel f;
    f.name = name, f.model = m.value(), f.workload = w.value(), f.rate = rate;
    return f;
}

FleetGpuType gpuType(const char* id, int nodes) {
    FleetGpuType t;
    t.id = id, t.nodes = nodes, t.gpusPerNode = 8, t.pricePerGpuHour = 2;
    return t;
}

FleetOptions analytical() {
    FleetOptions o;
    o.analytical = true;
    return o;
}

} // namespace

class TestFleet : public QObject {
    Q_OBJECT
private slots:
    // One model, one node of 8 GPUs. A: 1 GPU, 2 requests/s, $0.90; B: 2 GPUs, 5 requests/s, $2.00. B is the
    // cheaper per request/s ($0.40 against $0.45), yet for 6 requests/s three A ($2.70, 6/s) beat one B and
    // one A ($2.90) and two B ($4.00): the rounding decides, and the solver finds it.
    void roundingBeatsTheCheapestPerRequest() {
        FleetProblem p;
        p.rates = {6};
        p.types = {{1, 8}};
        p.candidates = {cand(0, 0, 1, 2, 0.9), cand(0, 0, 2, 5, 2.0)};
        const FleetSolution s = solveFleet(p);
        QVERIFY(s.feasible && s.exact);
        QCOMPARE(s.counts, (std::vector<int>{3, 0}));
        QCOMPARE(s.usdPerHour, 2.7);
    }

    // The inventory binds. Type X: one node of 4 GPUs at $1 a 1-request/s replica; type Y: one node of 8 at
    // $2. 6 requests/s: all 4 of X and 2 of Y, $8 (X alone cannot: 4 GPUs).
    void inventoryBinds() {
        FleetProblem p;
        p.rates = {6};
        p.types = {{1, 4}, {1, 8}};
        p.candidates = {cand(0, 0, 1, 1, 1), cand(0, 1, 1, 1, 2)};
        const FleetSolution s = solveFleet(p);
        QCOMPARE(s.counts, (std::vector<int>{4, 2}));
        QCOMPARE(s.usdPerHour, 8.0);
    }

    // Two models want the cheap type X (4 GPUs). P runs on X at $1 or on Y at $1.50 a request/s; Q on X at $1
    // or on Y at $6 (0.5 requests/s for $3). Each needs 4 requests/s. Q gets X ($4), P goes to Y ($6): $10.
    // Giving X to P (listed first) would cost $4 + 8 x $3 = $28.
    void modelsCompeteForTheCheapType() {
        FleetProblem p;
        p.rates = {4, 4};
        p.types = {{1, 4}, {1, 8}};
        p.candidates = {cand(0, 0, 1, 1, 1), cand(0, 1, 1, 1, 1.5), cand(1, 0, 1, 1, 1),
                        cand(1, 1, 1, 0.5, 3)};
        const FleetSolution s = solveFleet(p);
        QCOMPARE(s.counts, (std::vector<int>{0, 4, 4, 0}));
        QCOMPARE(s.usdPerHour, 10.0);
    }

    // N-1 on two nodes of 8 GPUs: a whole-node replica W (10 requests/s, $8) or a half-node one H (5.5/s,
    // $4.20). For 10 requests/s one W does ($8; two H, $8.40, cost more). Losing any node: one W must
    // survive, so two W ($16; cap 20 - 10). Four H would give 22 - 11 (two share a node) = 11 for $16.80; W +
    // 2 H gives 21 - 11 = 10 for $16.40: dearer than 2 W. On one node nothing survives its loss: infeasible.
    void nMinusOne() {
        FleetProblem p;
        p.rates = {10};
        p.types = {{2, 8}};
        p.candidates = {cand(0, 0, 8, 10, 8), cand(0, 0, 4, 5.5, 4.2)};
        FleetSolution s = solveFleet(p);
        QCOMPARE(s.counts, (std::vector<int>{1, 0}));
        p.nMinus1 = true;
        s = solveFleet(p);
        QVERIFY(s.feasible && s.exact);
        QCOMPARE(s.counts, (std::vector<int>{2, 0}));
        QCOMPARE(s.usdPerHour, 16.0);
        QCOMPARE(worstNodeLoss(p, s.counts, 0), 10.0);
        QCOMPARE(worstNodeLoss(p, {0, 4}, 0), 11.0); // two halves share a node
        QCOMPARE(worstNodeLoss(p, {1, 2}, 0), 11.0);
        QVERIFY(fleetFeasible(p, {1, 2}) && !fleetFeasible(p, {1, 1}));
        p.types = {{1, 8}};
        s = solveFleet(p);
        QVERIFY(!s.feasible && s.exact);
    }

    // Random small programs, with and without N-1: the solver's cost is the exhaustive minimum, its counts
    // meet every rate, and it is infeasible exactly when enumeration finds nothing.
    void optimalAgainstEnumeration() {
        std::mt19937 rng(2024);
        auto uni = [&](double a, double b) { return std::uniform_real_distribution<double>(a, b)(rng); };
        int checked = 0, feasible = 0, nMinus1 = 0;
        for (int trial = 0; trial < 700; ++trial) {
            FleetProblem p;
            p.nMinus1 = trial % 2 == 1;
            const int M = 1 + int(rng() % 3), T = 1 + int(rng() % 2);
            for (int g = 0; g < T; ++g) p.types.push_back({1 + int(rng() % 2), rng() % 2 ? 4 : 2});
            for (int m = 0; m < M; ++m) p.rates.push_back(uni(0.5, 6));
            double domain = 1;
            for (int m = 0; m < M; ++m)
                for (int g = 0; g < T; ++g) {
                    const int gpn = p.types[size_t(g)].gpusPerNode, nodes = p.types[size_t(g)].nodes;
                    std::vector<int> sizes{1, gpn / 2, gpn};
                    if (nodes > 1) sizes.push_back(2 * gpn);
                    const double price = uni(1, 3);
                    for (int size : sizes) {
                        if (rng() % 3 == 0) continue;
                        p.candidates.push_back(
                            cand(m, g, size, uni(0.3, 1.5) * size, price * size * uni(0.9, 1.1)));
                        domain *= 1 + nodes * gpn / size;
                    }
                }
            if (domain > 3e5) continue;
            const Brute b = exhaustive(p);
            const FleetSolution s = solveFleet(p);
            QVERIFY(s.exact);
            QVERIFY2(s.feasible == b.feasible, qPrintable(QString("trial %1").arg(trial)));
            ++checked;
            if (!b.feasible) continue;
            ++feasible;
            nMinus1 += p.nMinus1;
            QVERIFY2(std::abs(s.usdPerHour - b.cost) <= 1e-9 * b.cost,
                     qPrintable(QString("trial %1: %2 against %3").arg(trial).arg(s.usdPerHour).arg(b.cost)));
            QVERIFY(fleetFeasible(p, s.counts));
            QVERIFY(std::abs(costOf(p, s.counts) - s.usdPerHour) <= 1e-9 * b.cost);
        }
        qInfo("%d programs checked, %d feasible (%d with N-1)", checked, feasible, nMinus1);
        QVERIFY(checked >= 400 && feasible >= 150 && nMinus1 >= 40);
    }

    // A node limit cuts the search short: the answer says it is not proven.
    void nodeLimitSaysNotExact() {
        FleetProblem p;
        p.rates = {6};
        p.types = {{1, 8}};
        p.candidates = {cand(0, 0, 1, 2, 0.9), cand(0, 0, 2, 5, 2.0)};
        p.nodeLimit = 2;
        QVERIFY(!solveFleet(p).exact);
    }

    // The sample with analytical rates: every rate met within the inventory, the cost the sum of the
    // replicas', each replica's rate the cost model's throughput / output tokens on its own scenario, and N-1
    // dearer.
    void sampleAnalytical() {
        auto f = loadFleet(kFleet);
        QVERIFY2(f.ok(), f.error().str().c_str());
        QCOMPARE(f->models.size(), size_t(3));
        QCOMPARE(f->inventory.size(), size_t(4));
        const FleetAnswer a = planFleet(f.value(), analytical());
        QVERIFY2(a.ok, a.error.c_str());
        QVERIFY(a.solution.exact);
        QVERIFY(fleetFeasible(a.problem, a.solution.counts));
        QCOMPARE(a.solution.usdPerHour, costOf(a.problem, a.solution.counts));
        int used = 0;
        for (size_t j = 0; j < a.solution.counts.size(); ++j) {
            if (a.solution.counts[j] == 0) continue;
            ++used;
            const FleetReplica& r = a.replicas[size_t(a.replicaOf[j])];
            const FleetModel& m = f->models[size_t(r.model)];
            const FleetGpuType& t = f->inventory[size_t(r.type)];
            const CostModel model(fleetScenario(m, t, r.nodes, r.gpus));
            QCOMPARE(r.plan, model.megatronPlan());
            QCOMPARE(r.rate, model.evaluate(r.plan).throughput / double(m.workload.outputTokens));
            QCOMPARE(r.usdPerHour, r.gpus * t.pricePerGpuHour);
        }
        QVERIFY(used >= 3);
        QVERIFY(!a.binds.empty());
        FleetOptions o = analytical();
        o.nMinus1 = true;
        const FleetAnswer n1 = planFleet(f.value(), o);
        QVERIFY2(n1.ok, n1.error.c_str());
        QVERIFY(n1.solution.exact && n1.problem.nMinus1);
        QVERIFY(fleetFeasible(n1.problem, n1.solution.counts));
        QVERIFY(n1.solution.usdPerHour > a.solution.usdPerHour);
    }

    // Simulated rates are maxRate's on the replica's plan (short runs here).
    void simulatedRateIsMaxRate() {
        Fleet f;
        f.inventory = {gpuType("h200", 1)};
        f.models = {sampleModel("small", "llama-3.1-8b.yaml", "chat-lognormal-p99.yaml", 3)};
        FleetOptions o;
        o.search.sim.requests = 200;
        o.search.steadyLatencies = 3;
        o.search.tolerance = 0.05;
        const FleetAnswer a = planFleet(f, o);
        QVERIFY2(a.ok, a.error.c_str());
        const FleetReplica& r = a.replicas.front(); // one GPU
        QCOMPARE(r.gpus, 1);
        QVERIFY(r.ok && r.simulations > 0);
        const CostModel model(fleetScenario(f.models[0], f.inventory[0], r.nodes, r.gpus));
        QCOMPARE(r.rate, maxRate(model, r.plan, o.search).rate);
    }

    // No answer: the error names the model and why.
    void infeasibleNamesTheModel() {
        Fleet f;
        f.inventory = {gpuType("h200", 1)};
        // Far beyond one node.
        f.models = {sampleModel("big", "llama-3.1-70b.yaml", "chat-serving.yaml", 1000)};
        FleetAnswer a = planFleet(f, analytical());
        QVERIFY(!a.ok);
        QVERIFY2(
            a.error.find("model 'big' cannot be served: it asks for 1000 requests/s, and the whole inventory "
                         "gives it at most") != std::string::npos,
            a.error.c_str());
        // No replica fits: 405B in BF16 (810 GB) on 8 L40S of 48 GB.
        f.inventory = {gpuType("l40s", 1)};
        f.models = {sampleModel("huge", "llama-3.1-405b.yaml", "chat-serving.yaml", 1)};
        a = planFleet(f, analytical());
        QVERIFY2(a.error.find("model 'huge' cannot be served: no replica of it fits") != std::string::npos &&
                     a.error.find("l40s: no plan on 8 GPUs (1 node): memory") != std::string::npos,
                 a.error.c_str());
        // Each fits one H200 node alone (about 7.5 requests/s at most), not both.
        f.inventory = {gpuType("h200", 1)};
        f.models = {sampleModel("a", "llama-3.1-70b.yaml", "chat-serving.yaml", 5),
                    sampleModel("b", "llama-3.1-70b.yaml", "chat-serving.yaml", 5)};
        a = planFleet(f, analytical());
        QVERIFY2(a.error.find("model 'b' cannot be served beside 'a'") != std::string::npos, a.error.c_str());
        // N-1 on one node: nothing survives its loss.
        FleetOptions o = analytical();
        o.nMinus1 = true;
        f.models.pop_back();
        a = planFleet(f, o);
        QVERIFY2(a.error.find("model 'a' cannot be served") != std::string::npos &&
                     a.error.find("(N-1)") != std::string::npos,
                 a.error.c_str());
    }

    void loaderReadsTheFile() {
        auto f = fleetText(kGood);
        QVERIFY2(f.ok(), f.error().str().c_str());
        QCOMPARE(f->inventory[0].gpusPerNode, 8); // the database's domain
        QCOMPARE(f->inventory[0].pricePerGpuHour, findGpu("h100-sxm")->pricePerHourUsd);
        QCOMPARE(f->inventory[0].priceSource, findGpu("h100-sxm")->priceSource);
        QCOMPARE(f->models[0].rate, 5.0);
        QVERIFY(!f->nMinus1);
        // An inline workload needs no phase; a price overrides the database's.
        auto g = fleetText(
            replaced(replaced(kGood, "workload: workloads/chat-serving.yaml",
                              "workload: {input_tokens: 500, output_tokens: 100, slo: {tpot_ms: 40}}"),
                     "nodes: 2}", "nodes: 2, price_per_gpu_hour: 1.5}"));
        QVERIFY2(g.ok(), g.error().str().c_str());
        QCOMPARE(g->models[0].workload.phase, Phase::Serving);
        QCOMPARE(g->inventory[0].pricePerGpuHour, 1.5);
        QCOMPARE(g->inventory[0].priceSource, std::string("the fleet file"));
    }

    // A fleet written out (toYaml: what the desktop planner's Save Fleet As writes) reads back to the same
    // fleet and the same answer: an edited rate and SLO kept, the file's own MI300X price kept and the price
    // list's prices not frozen into the file.
    void writtenFleetReadsBack() {
        auto f = loadFleet(kFleet);
        QVERIFY2(f.ok(), f.error().str().c_str());
        Fleet edited = f.value();
        edited.models[1].rate = 48;
        edited.models[1].workload.ttftMs = 1500;
        const std::string text = toYaml(edited);
        QVERIFY2(text.find("price_per_gpu_hour: 1.85") != std::string::npos, text.c_str()); // the file's own
        QCOMPARE(int(std::count(text.begin(), text.end(), '$')), 0);
        QVERIFY(text.find("price_per_gpu_hour: 2.73") == std::string::npos); // the price list's, not written
        auto back = parseFleet(text, "written.yaml");
        QVERIFY2(back.ok(), back.ok() ? "" : back.error().str().c_str());
        QCOMPARE(back->name, edited.name);
        QVERIFY(!back->nMinus1);
        edited.nMinus1 = true;
        QVERIFY(parseFleet(toYaml(edited), "n-1.yaml")->nMinus1);
        edited.nMinus1 = false;
        QCOMPARE(back->inventory.size(), edited.inventory.size());
        for (size_t i = 0; i < edited.inventory.size(); ++i) {
            QCOMPARE(back->inventory[i].id, edited.inventory[i].id);
            QCOMPARE(back->inventory[i].nodes, edited.inventory[i].nodes);
            QCOMPARE(back->inventory[i].gpusPerNode, edited.inventory[i].gpusPerNode);
            QCOMPARE(back->inventory[i].pricePerGpuHour, edited.inventory[i].pricePerGpuHour);
            QCOMPARE(back->inventory[i].priceSource, edited.inventory[i].priceSource);
        }
        QCOMPARE(back->models.size(), edited.models.size());
        for (size_t i = 0; i < edited.models.size(); ++i) {
            QCOMPARE(back->models[i].name, edited.models[i].name);
            QCOMPARE(back->models[i].rate, edited.models[i].rate);
            QVERIFY(back->models[i].model == edited.models[i].model);
            QVERIFY(back->models[i].constraints == edited.models[i].constraints);
            QCOMPARE(back->models[i].workload.tpotMs, edited.models[i].workload.tpotMs);
            QCOMPARE(back->models[i].workload.ttftMs, edited.models[i].workload.ttftMs);
            QCOMPARE(back->models[i].workload.sloPercentile, edited.models[i].workload.sloPercentile);
        }
        const FleetAnswer a = planFleet(edited, analytical()), b = planFleet(back.value(), analytical());
        QVERIFY2(a.ok && b.ok, a.error.c_str());
        QCOMPARE(b.solution.usdPerHour, a.solution.usdPerHour);
        QCOMPARE(b.solution.counts, a.solution.counts);
    }

    void loaderErrors_data() {
        QTest::addColumn<QString>("from");
        QTest::addColumn<QString>("to");
        QTest::addColumn<QString>("error");
        const QString f = QString::fromStdString(kSampleDir + "/fleet-test.yaml");
        QTest::addRow("missing rate") << "    rate: 5\n"
                                      << "" << f + ":6:5: models[0].rate: missing required field";
        QTest::addRow("missing inventory") << "inventory:\n  - {gpu: h100-sxm, nodes: 2}\n"
                                           << "" << f + ":1:1: inventory: missing required field";
        QTest::addRow("unknown gpu")
            << "gpu: h100-sxm"
            << "gpu: h1000" << f + ":4:11: inventory[0].gpu: unknown GPU 'h1000'; known: a100-sxm-80gb";
        QTest::addRow("negative nodes")
            << "nodes: 2"
            << "nodes: -1" << f + ":4:28: inventory[0].nodes: expected an integer from 1 to";
        QTest::addRow("rate not a number")
            << "rate: 5"
            << "rate: fast" << f + ":9:11: models[0].rate: expected a number, found 'fast'";
        QTest::addRow("rate zero") << "rate: 5"
                                   << "rate: 0"
                                   << "models[0].rate: expected a number from";
        QTest::addRow("too many gpus a node")
            << "nodes: 2}"
            << "nodes: 2, gpus_per_node: 9}"
            << "inventory[0].gpus_per_node: expected an integer from 1 to 8";
        QTest::addRow("twice") << "  - {gpu: h100-sxm, nodes: 2}\n"
                               << "  - {gpu: h100-sxm, nodes: 2}\n  - {gpu: h100-sxm, nodes: 1}\n"
                               << f + ":5:11: inventory[1].gpu: 'h100-sxm' is listed twice (first at line 4)";
        QTest::addRow("no slo") << "workload: workloads/chat-serving.yaml"
                                << "workload: {input_tokens: 500, output_tokens: 100}"
                                << "models[0].workload: the workload sets no SLO";
        QTest::addRow("prefill") << "workload: workloads/chat-serving.yaml"
                                 << "workload: workloads/long-context-prefill.yaml"
                                 << "the workload's phase must be serving";
        QTest::addRow("gpu count") << "    rate: 5\n"
                                   << "    rate: 5\n    constraints: {gpus: 8}\n"
                                   << "models[0].constraints: gpus: the fleet chooses";
        QTest::addRow("no price") << "gpu: h100-sxm"
                                  << "gpu: h20"
                                  << "has no price for 'h20': give price_per_gpu_hour";
        QTest::addRow("unknown key") << "kind: fleet"
                                     << "kind: fleet\nheadrom: n-1"
                                     << "headrom: unknown key (did you mean 'headroom'?)";
        QTest::addRow("model file") << "models/llama-3.1-8b.yaml"
                                    << "models/none.yaml"
                                    << "models[0].model: 'models/none.yaml' is neither a file nor a model";
    }
    void loaderErrors() {
        QFETCH(QString, from);
        QFETCH(QString, to);
        QFETCH(QString, error);
        const auto f = fleetText(replaced(kGood, from.toStdString(), to.toStdString()));
        QVERIFY(!f.ok());
        QVERIFY2(QString::fromStdString(f.error().str()).contains(error), f.error().str().c_str());
    }

    // Prices on one basis: every priced GPU of the database names the same one (so $/M tokens compare across
    // GPUs); a user's list replaces the table whole (a GPU it leaves out has no price), the fleet and a
    // cluster take its prices and name its basis, and the built-in list restores the table.
    void priceLists() {
        int priced = 0;
        for (const auto& g : gpuDatabase())
            if (g.pricePerHourUsd > 0) {
                ++priced;
                QVERIFY2(g.priceSource.rfind(priceBasis(), 0) == 0, g.id.c_str());
            }
        QVERIFY(priced >= 5);
        QTemporaryDir dir;
        const std::string path = dir.filePath("prices.yaml").toStdString();
        auto write = [&](const char* text) {
            QFile file(QString::fromStdString(path));
            QVERIFY(file.open(QIODevice::WriteOnly | QIODevice::Truncate));
            file.write(text);
        };
        write("basis: our 2027 contract\nusd_per_gpu_hour:\n  h100-sxm: 2.10\n  b200: {usd: 4.20, note: a "
              "quote}\n");
        usePriceList(loadPriceList(path));
        QCOMPARE(findGpu("h100-sxm")->pricePerHourUsd, 2.10);
        QCOMPARE(findGpu("b200")->pricePerHourUsd, 4.20);
        QCOMPARE(findGpu("b200")->priceSource, std::string("our 2027 contract; a quote"));
        QCOMPARE(findGpu("h100-sxm")->priceSource, std::string("our 2027 contract"));
        QCOMPARE(findGpu("h200")->pricePerHourUsd, 0.0);
        QCOMPARE(priceBasis(), std::string("our 2027 contract"));
        auto f = fleetText(kGood);
        QVERIFY2(f.ok(), f.error().str().c_str());
        QCOMPARE(f->inventory[0].pricePerGpuHour, 2.10);
        QCOMPARE(f->inventory[0].priceSource, std::string("our 2027 contract"));
        const auto c = parseCluster("version: 1\nkind: cluster\nnodes: 1\ngpu: h200\n", "c.yaml");
        QVERIFY(c && c->pricePerGpuHour == 0.0);
        usePriceList(builtinPriceList());
        QVERIFY(findGpu("h200")->pricePerHourUsd > 0 && findGpu("h100-sxm")->pricePerHourUsd != 2.10);
        QCOMPARE(priceBasis(), builtinPriceList().basis);
        // A bad list says where and what, and changes nothing.
        const struct {
            const char* text;
            const char* error;
        } bad[] = {
            {"basis: x\nusd_per_gpu_hour:\n  h100-sxn: 2\n",
             ":3:3: usd_per_gpu_hour.h100-sxn: unknown GPU 'h100-sxn' (did you mean 'h100-sxm'?)"},
            {"usd_per_gpu_hour: {h100-sxm: 2}\n", ":1:1: basis: missing required field"},
            {"basis: ' '\nusd_per_gpu_hour: {h100-sxm: 2}\n", "basis: say where the prices come from"},
            {"basis: x\nusd_per_gpu_hour: {h100-sxm: -2}\n", "usd_per_gpu_hour.h100-sxm: expected a number"},
            {"basis: x\nusd_per_gpu_hour: {h100-sxm: 2, h100-sxm: 3}\n", ""},
            {"basis: x\nusd_per_gpu_hour: {b200: 2}\ncurrency: eur\n", "currency: unknown key"},
            {"basis: x\nusd_per_gpu_hour: {b200: {usd: 2, notes: y}}\n",
             "usd_per_gpu_hour.b200.notes: unknown key"},
        };
        const double before = findGpu("h100-sxm")->pricePerHourUsd;
        for (const auto& b : bad) {
            write(b.text);
            try {
                usePriceList(loadPriceList(path));
                QFAIL(b.text);
            } catch (const InputError& e) {
                QVERIFY2(std::string(e.what()).find(b.error) != std::string::npos, e.what());
                QVERIFY2(std::string(e.what()).rfind(path, 0) == 0, e.what());
            }
            QCOMPARE(findGpu("h100-sxm")->pricePerHourUsd, before);
        }
    }

    // --prices FILE on the command line: the cost answer takes the list's price and names its basis; a bad
    // list is an input error with its line.
    void priceListCommandLine() {
        QTemporaryDir dir;
        const QString path = dir.filePath("prices.yaml");
        QFile file(path);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write("basis: \"our 2027 contract\"\nusd_per_gpu_hour:\n  h100-sxm: 2.0\n");
        file.close();
        const QString scenario = QString::fromStdString(kSampleDir) + "/scenarios/llama-3.1-8b-h100-1x8.yaml";
        Run r = shardplan({"evaluate", "--scenario", scenario, "--prices", path});
        QVERIFY2(r.code == 0, qPrintable(r.err));
        QVERIFY2(r.out.contains("at $2 a GPU-hour (our 2027 contract)"), qPrintable(r.out));
        r = shardplan({"evaluate", "--scenario", scenario, "--json", "--prices=" + path});
        QVERIFY2(r.code == 0, qPrintable(r.err));
        const QJsonObject cost = QJsonDocument::fromJson(r.out.toUtf8()).object()["cost"].toObject();
        QCOMPARE(cost["usd_per_gpu_hour"].toDouble(), 2.0);
        QCOMPARE(cost["price_source"].toString(), QString("our 2027 contract"));
        QVERIFY(file.open(QIODevice::WriteOnly | QIODevice::Truncate));
        file.write("basis: x\nusd_per_gpu_hour:\n  h100: 2.0\n");
        file.close();
        r = shardplan({"evaluate", "--scenario", scenario, "--prices", path});
        QCOMPARE(r.code, 1);
        QVERIFY2(r.err.contains(path + ":3:3: usd_per_gpu_hour.h100: unknown GPU 'h100'"), qPrintable(r.err));
        QCOMPARE(shardplan({"evaluate", "--scenario", scenario, "--prices"}).code, 1);
        QVERIFY(shardplan({"help", "evaluate"}).out.contains("--prices FILE"));
        // The sample list (synthetic rates) on the same scenario: $2.10 a GPU-hour, its basis named.
        const QString sample = QString::fromStdString(kSampleDir) + "/prices-example.yaml";
        r = shardplan({"evaluate", "--scenario", scenario, "--prices", sample});
        QVERIFY2(r.code == 0 && r.out.contains("at $2.1 a GPU-hour (example contract rates (synthetic))"),
                 qPrintable(r.out + r.err));
    }

    // validate tells fleets and price lists by their kind (or, without one, by their keys) and reads them
    // with their own loaders; a file given the wrong --kind says which it is.
    void validateFleetsAndPrices() {
        const QString fleet = QString::fromStdString(kFleet);
        const QString prices = QString::fromStdString(kSampleDir) + "/prices-example.yaml";
        Run r = shardplan({"validate", fleet, prices});
        QVERIFY2(r.code == 0, qPrintable(r.err));
        QVERIFY2(r.out.contains(fleet + ": fleet ") && r.out.contains("3 models on 4 GPU types (80 GPUs)"),
                 qPrintable(r.out));
        QVERIFY2(r.out.contains(prices + ": prices 4 GPUs priced (example contract rates (synthetic))"),
                 qPrintable(r.out));
        r = shardplan({"validate", "--kind", "fleet", prices});
        QCOMPARE(r.code, 1);
        QVERIFY2(r.err.contains(prices + ":5:7: kind: expected a fleet file, found kind 'prices'"),
                 qPrintable(r.err));
        r = shardplan({"validate", "--kind", "prices", fleet});
        QCOMPARE(r.code, 1);
        QVERIFY2(r.err.contains("kind: expected a prices file, found kind 'fleet'"), qPrintable(r.err));
        // Without kind: the keys tell.
        QTemporaryDir dir;
        const QString bare = dir.filePath("bare.yaml");
        QFile file(bare);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write("basis: x\nusd_per_gpu_hour: {h100-sxm: 2}\n");
        file.close();
        QCOMPARE(detectKind(bare.toStdString()).value(), FileKind::Prices);
        r = shardplan({"validate", "--json", bare});
        QVERIFY2(r.code == 0 && r.out.contains("\"kind\":\"prices\""), qPrintable(r.out + r.err));
    }

    // The command line: text and JSON on the sample, usage errors, a bad file's error with its line.
    void commandLine() {
        const QString fleet = QString::fromStdString(kFleet);
        Run r = shardplan({"capacity", "--fleet", fleet, "--analytical", "--json"});
        QVERIFY2(r.code == 0, qPrintable(r.err));
        const QJsonObject j = QJsonDocument::fromJson(r.out.toUtf8()).object();
        QCOMPARE(j["rates"].toString(), QString("analytical"));
        QVERIFY(j["usd_per_hour"].toDouble() > 0);
        QVERIFY(j["solver"].toObject()["exact"].toBool());
        QVERIFY(j["assignments"].toArray().size() >= 3);
        QCOMPARE(j["models"].toArray().size(), 3);
        r = shardplan({"capacity", "--fleet", fleet, "--analytical", "--n-1"});
        QVERIFY2(r.code == 0, qPrintable(r.err));
        QVERIFY2(r.out.contains("headroom  n-1") && r.out.contains("what binds") && r.out.contains("exactly"),
                 qPrintable(r.out));
        QCOMPARE(shardplan({"capacity", "--fleet", fleet, "--rate", "3"}).code, 2);
        QCOMPARE(shardplan({"capacity", "--fleet", fleet, "--analytical", "--requests", "10"}).code, 2);
        r = shardplan({"capacity", "--scenario",
                       QString::fromStdString(kSampleDir) + "/scenarios/llama-3.1-8b-h100-1x8.yaml", "--rate",
                       "2", "--n-1"});
        QCOMPARE(r.code, 2);
        QVERIFY2(r.err.contains("go with --fleet"), qPrintable(r.err));
        QTemporaryDir dir;
        const QString bad = dir.filePath("bad.yaml");
        QFile file(bad);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write("kind: fleet\ninventory:\n  - {gpu: h100-sxm, nodes: many}\nmodels: []\n");
        file.close();
        r = shardplan({"capacity", "--fleet", bad});
        QCOMPARE(r.code, 1);
        QVERIFY2(r.err.contains(bad + ":3:28: inventory[0].nodes: expected an integer"), qPrintable(r.err));
        r = shardplan({"help", "capacity"});
        QVERIFY(r.out.contains("--fleet FILE") && r.out.contains("--n-1") && r.out.contains("--analytical"));
    }
};

QTEST_GUILESS_MAIN(TestFleet)
#include "tst_fleet.moc"
