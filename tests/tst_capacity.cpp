// The highest rate on each of several clusters (maxRatePerGpu, core/sim/capacity.h): what the CLI's
// `capacity --max-rate` prints and the GUI can run. Rows come in the order asked, a GPU the database does not
// know is that row's error, a fixed plan is used as given, and each rate is maxRate's on the row's plan.
#include "sample_fixtures.h"

#include "core/cost/economics.h"
#include "core/io/gpudb.h"
#include "core/sim/capacity.h"

#include <QTest>

using namespace sp;
using namespace sp::test;

namespace {

/// Llama-3.1-70B on one 8x H200 node under chat requests at p99 SLOs (TTFT 2,000 ms, TPOT 50 ms).
Scenario chatP99() {
    return sampleScenario("llama-3.1-70b-h200-1x8-chat-p99.yaml");
}

/// Short runs: each bisection about ten simulations of a few hundred requests.
MaxRateOptions shortRuns() {
    MaxRateOptions o;
    o.search.sim.requests = 200;
    o.search.steadyLatencies = 3;
    o.search.tolerance = 0.05;
    return o;
}

} // namespace

class TestCapacity : public QObject {
    Q_OBJECT
private slots:
    // Rows in the order asked; an unknown id is its row's error and the rows after it still run. Each GPU
    // type gets the scenario's 8 GPUs (one scale-up domain of 8) and the Megatron plan of that cluster, and
    // its rate is maxRate's on that plan; the cost is the GPUs' price an hour.
    void rowsInTheOrderAsked() {
        const Scenario s = chatP99();
        MaxRateOptions o = shortRuns();
        o.gpus = {"h100-sxm", "no-such-gpu", "h200"};
        const auto rows = maxRatePerGpu(s, o);
        QCOMPARE(rows.size(), size_t(3));
        QCOMPARE(rows[0].gpu, std::string("h100-sxm"));
        QCOMPARE(rows[1].gpu, std::string("no-such-gpu"));
        QCOMPARE(rows[2].gpu, std::string("h200"));
        QVERIFY2(rows[1].error.find("unknown GPU 'no-such-gpu'") != std::string::npos, rows[1].error.c_str());
        QCOMPARE(rows[1].gpus, 0);
        for (size_t i : {0u, 2u}) {
            const MaxRateRow& r = rows[i];
            QVERIFY2(r.error.empty(), r.error.c_str());
            QVERIFY(!r.stopped);
            QCOMPARE(r.gpus, 8);
            QCOMPARE(r.planName, std::string("megatron"));
            const Scenario sc = scenarioOn(s, r.gpu, 1);
            const CostModel model(sc);
            QCOMPARE(r.plan, model.megatronPlan());
            const MaxRate direct = maxRate(model, r.plan, o.search);
            QVERIFY(r.rate.ok && r.rate.rate > 0 && r.rate.at);
            QCOMPARE(r.rate.rate, direct.rate);
            QCOMPARE(r.rate.rateAbove, direct.rateAbove);
            QCOMPARE(r.rate.simulations, direct.simulations);
            QCOMPARE(r.outputTokensPerS, r.rate.at->sustainedOutputTokensPerS);
            QCOMPARE(r.cost.usdPerHour, 8 * findGpu(r.gpu)->pricePerHourUsd);
        }
        // An H200 has more HBM, and faster, than an H100 (core/io/gpudb cites both): it sustains more.
        QVERIFY(rows[2].rate.rate > rows[0].rate.rate);
    }

    // A fixed plan (here DP2 x TP4, not Megatron's TP8) runs as given on the scenario's own cluster, under
    // the name given, and its rate is maxRate's on the same plan: the same bracket from the same runs.
    void fixedPlanAsGiven() {
        const Scenario s = chatP99();
        const CostModel model(s);
        const Plan plan = Plan::megatronChoices({1, 2, 4});
        QVERIFY(!(plan == model.megatronPlan()));
        MaxRateOptions o = shortRuns();
        o.plan = plan;
        o.planName = "dp2-tp4.yaml";
        const auto rows = maxRatePerGpu(s, o);
        QCOMPARE(rows.size(), size_t(1));
        const MaxRateRow& r = rows[0];
        QVERIFY2(r.error.empty(), r.error.c_str());
        QCOMPARE(r.gpu, s.cluster.gpu.name);
        QCOMPARE(r.gpus, 8);
        QCOMPARE(r.plan, plan);
        QCOMPARE(r.planName, std::string("dp2-tp4.yaml"));
        const MaxRate direct = maxRate(model, plan, o.search);
        QVERIFY(direct.ok && direct.rate > 0);
        QCOMPARE(r.rate.rate, direct.rate);
        QCOMPARE(r.rate.rateAbove, direct.rateAbove);
        QCOMPARE(r.rate.simulations, direct.simulations);
        QCOMPARE(r.rate.binding, direct.binding);
        QCOMPARE(r.outputTokensPerS, direct.at->sustainedOutputTokensPerS);
        QCOMPARE(r.cost.usdPerHour, servingCost(s.cluster, 8, r.outputTokensPerS).usdPerHour);
    }

    // What gives no answer is the row's error, said: a fixed plan for 16 GPUs on 8, a searcher that does not
    // exist. None runs a simulation.
    void errorsAreRows() {
        const Scenario s = chatP99();
        MaxRateOptions o = shortRuns();
        o.plan = Plan::megatronChoices({1, 1, 16});
        auto rows = maxRatePerGpu(s, o);
        QCOMPARE(rows.size(), size_t(1));
        QVERIFY2(rows[0].error.find("does not fit") != std::string::npos, rows[0].error.c_str());
        QCOMPARE(rows[0].rate.simulations, 0);

        o = shortRuns();
        o.searcher = "no-such-searcher";
        rows = maxRatePerGpu(s, o);
        QCOMPARE(rows.size(), size_t(1));
        QVERIFY2(rows[0].error.find("no-such-searcher found no feasible plan") != std::string::npos,
                 rows[0].error.c_str());
        QCOMPARE(rows[0].rate.simulations, 0);
    }

    // A stop requested before the first row ends the work there: one row, marked stopped, no rate; and a row
    // callback that answers false ends it after that row.
    void stopsAndCallbacks() {
        const Scenario s = chatP99();
        MaxRateOptions o = shortRuns();
        o.gpus = {"h200", "b200"};
        std::stop_source stop;
        stop.request_stop();
        auto rows = maxRatePerGpu(s, o, {}, stop.get_token());
        QCOMPARE(rows.size(), size_t(1));
        QVERIFY(rows[0].stopped);
        QVERIFY(!rows[0].rate.ok);

        o.gpus = {"no-such-gpu", "h200"};
        std::vector<std::string> seen;
        rows = maxRatePerGpu(s, o, {}, {}, [&](const MaxRateRow& r) {
            seen.push_back(r.gpu);
            return r.error.empty();
        });
        QCOMPARE(rows.size(), size_t(1));
        QCOMPARE(seen, std::vector<std::string>{"no-such-gpu"});
    }
};

QTEST_GUILESS_MAIN(TestCapacity)
#include "tst_capacity.moc"
