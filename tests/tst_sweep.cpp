// A sweep over request rates (sweepRates, core/sim/sweep.h): the rates asked, evenly spaced; each point is
// the single run at its rate (simulate with the same options and the requests it reports); a stop keeps the
// points done; the highest rate meeting the SLOs is the highest point whose check is met.
#include "sample_fixtures.h"

#include "core/sim/capacity.h"
#include "core/sim/sweep.h"

#include <QTest>

#include <cmath>

using namespace sp;
using namespace sp::test;

namespace {
/// Llama-3.1-70B on one 8x H200 node under chat requests at p99 SLOs (TTFT 2,000 ms, TPOT 50 ms).
Scenario chatP99() {
    return sampleScenario("llama-3.1-70b-h200-1x8-chat-p99.yaml");
}
} // namespace

class TestSweep : public QObject {
    Q_OBJECT
private slots:
    void ratesAreEvenlySpaced() {
        QCOMPARE(sweepRates(1, 8, 8), (std::vector<double>{1, 2, 3, 4, 5, 6, 7, 8}));
        QCOMPARE(sweepRates(0.5, 2, 4), (std::vector<double>{0.5, 1, 1.5, 2}));
        // By hand: 0.1 + 0.2 i / 2 for i = 0, 1, 2; the last is `to` exactly.
        const auto r = sweepRates(0.1, 0.3, 3);
        QCOMPARE(r.size(), size_t(3));
        QCOMPARE(r[1], 0.2);
        QCOMPARE(r[2], 0.3);
        QCOMPARE(sweepRates(3, 9, 1), std::vector<double>{3});
        QVERIFY(sweepRates(2, 1, 3).empty()); // descending
        QVERIFY(sweepRates(0, 1, 3).empty()); // a rate of 0
        QVERIFY(sweepRates(1, 2, 0).empty());
    }

    // Each point equals the single run at its rate, its requests raised to 20 analytical latencies at the
    // rate where more (as maxRate's runs are), and is checked against the workload's SLOs.
    void pointsAreSingleRuns() {
        const Scenario s = chatP99();
        const CostModel model(s);
        const Plan plan = model.megatronPlan();
        RateSweepOptions o;
        o.rates = {1, 4, 12};
        o.sim.requests = 150;
        o.steadyLatencies = 2;
        std::vector<size_t> seen;
        const RateSweep sweep =
            sweepRates(model, plan, o, {}, {}, [&seen](const SweepPoint&, size_t i) { seen.push_back(i); });
        QVERIFY2(sweep.ok, sweep.error.c_str());
        QVERIFY(!sweep.stopped);
        QCOMPARE(seen, (std::vector<size_t>{0, 1, 2}));
        QCOMPARE(sweep.points.size(), size_t(3));
        const Metrics m = model.evaluate(plan);
        for (size_t i = 0; i < 3; ++i) {
            const SweepPoint& p = sweep.points[i];
            QCOMPARE(p.rate, o.rates[i]);
            QCOMPARE(p.requests, std::max<int64_t>(150, steadyRequests(m, s.workload, p.rate, 2)));
            SimOptions single;
            single.rate = p.rate;
            single.requests = p.requests;
            const auto r = simulate(model, plan, single);
            QVERIFY(r->ok);
            QVERIFY(p == sweepPoint(p.rate, *r, s.workload));
            QCOMPARE(p.ttftMs.p99, r->ttftMs.p99);
            QCOMPARE(p.tpotMs.p50, r->tpotMs.p50);
            QCOMPARE(p.slo.met, checkSlo(*r, s.workload).met);
        }
        // 1 request/s is far below the plan's capacity (5.59/s, docs/serving.md); 12/s far above it.
        QVERIFY(sweep.points[0].slo.met);
        QVERIFY(!sweep.points[2].slo.met);
        const int best = highestMeeting(sweep.points);
        QVERIFY(best >= 0 && best < 2);
        QVERIFY(!sweep.plan.empty());
    }

    // A stop after the first point: that point is kept, the run cut short is not, and the sweep says so.
    void stopKeepsThePointsDone() {
        const CostModel model(chatP99());
        RateSweepOptions o;
        o.rates = {1, 2, 3, 4};
        o.sim.requests = 100;
        o.steadyLatencies = 0;
        std::stop_source stop;
        const RateSweep sweep = sweepRates(model, model.megatronPlan(), o, {}, stop.get_token(),
                                           [&stop](const SweepPoint&, size_t) { stop.request_stop(); });
        QVERIFY(sweep.ok);
        QVERIFY(sweep.stopped);
        QCOMPARE(sweep.points.size(), size_t(1));
        QCOMPARE(sweep.points[0].rate, 1.0);
        QCOMPARE(sweep.points[0].completed, int64_t(100));
    }

    // A disaggregated plan: each point is the single run of the split at its rate, its requests raised to 2
    // latencies of the split (its TTFT, then its TPOT for each further token).
    void disaggregatedPointsAreSingleRuns() {
        Scenario s = sampleScenario("llama-3.1-70b-h100-4x8.yaml");
        s.workload.phase = Phase::Serving; // the sample is a decode workload
        const DisaggModel dm(s);
        DisaggPlan p;
        p.prefill = {1, dm.prefillModel(1).megatronPlan()};
        p.decode = {3, dm.decodeModel(3).megatronPlan()};
        const DisaggMetrics m = dm.evaluate(p);
        QVERIFY2(m.valid, m.violation.c_str());
        RateSweepOptions o;
        o.rates = {1, 3};
        o.sim.requests = 40;
        o.steadyLatencies = 2;
        const RateSweep sweep = sweepRates(dm, p, o);
        QVERIFY2(sweep.ok, sweep.error.c_str());
        QCOMPARE(sweep.points.size(), size_t(2));
        for (const SweepPoint& pt : sweep.points) {
            const double latencyS = (m.ttftMs + double(s.workload.outputTokens - 1) * m.tpotMs) * 1e-3;
            QCOMPARE(pt.requests, std::max<int64_t>(40, int64_t(std::ceil(pt.rate * 2 * latencyS))));
            SimOptions single;
            single.rate = pt.rate;
            single.requests = pt.requests;
            const auto r = simulate(dm, p, single);
            QVERIFY2(r->ok, r->error.c_str());
            QVERIFY(pt == sweepPoint(pt.rate, *r, s.workload));
        }
        QVERIFY(sweep.plan.find("decode pool") != std::string::npos);
        DisaggPlan bad = p;
        bad.decode.nodes = 1; // 1 + 1 of 4 nodes
        const RateSweep r2 = sweepRates(dm, bad, o);
        QVERIFY(!r2.ok);
        QVERIFY2(r2.error.find("does not fit") != std::string::npos, r2.error.c_str());
    }

    void highestMeetingIsTheHighestRateMet() {
        std::vector<SweepPoint> pts(4);
        for (size_t i = 0; i < pts.size(); ++i) pts[i].rate = double(i + 1), pts[i].slo.met = false;
        QCOMPARE(highestMeeting(pts), -1);
        pts[0].slo.met = pts[2].slo.met = true; // a point met above one missed still counts
        QCOMPARE(highestMeeting(pts), 2);
    }

    void badInputIsAnError() {
        const CostModel model(chatP99());
        RateSweepOptions o;
        o.rates = {1, -2};
        const RateSweep r = sweepRates(model, model.megatronPlan(), o);
        QVERIFY(!r.ok);
        QVERIFY2(r.error.find("positive") != std::string::npos, r.error.c_str());
        Plan bad = model.megatronPlan();
        bad.degrees.tp = 3; // does not divide the 8 GPUs
        o.rates = {1};
        const RateSweep r2 = sweepRates(model, bad, o);
        QVERIFY(!r2.ok);
        QVERIFY2(r2.error.find("does not fit") != std::string::npos, r2.error.c_str());
    }
};

QTEST_GUILESS_MAIN(TestSweep)
#include "tst_sweep.moc"
