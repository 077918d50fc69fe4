// The baselines a person would try (coordinate descent, random drawn decision by decision), warm starts,
// budgets at the limits of the integers and the clock, and the benchmark's figures.
#include "search_fixtures.h"

#include "core/search/benchmark.h"

#include <limits>

using namespace sp;
using namespace sp::test;

class TestSearchBaselines : public QObject {
    Q_OBJECT
private slots:
    // Budgets beyond what the bookkeeping can multiply or the clock can hold saturate instead of overflowing:
    // 2^63 - 1 evaluations (x 20 lookups per evaluation) used to end the run after about 10,000 lookups,
    // 2^63 / 20 at once with no plan evaluated, and 1e308 or infinite seconds overflowed the deadline.
    // With them the run goes on until the toy space (12,531 plans) is exhausted.
    void hugeBudgetsSaturate() {
        const SearchSpace space(toyScenario());
        QCOMPARE(space.size().count, 12531.0);
        ToyObjective toy;
        Engine engine(toy);
        constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
        for (int64_t budget : {kMax, kMax / 20 + 1, kMax / 20 - 1000})
            QCOMPARE(runSearcher("random", space, engine, budget).evaluations, int64_t(12531));
        for (double seconds : {1e308, std::numeric_limits<double>::infinity(), 1e10}) {
            SearchOptions o;
            o.budget.seconds = seconds;
            QCOMPARE(makeSearcher("random")->run(space, engine, o, nullptr, {}).evaluations, int64_t(12531));
            o.budget.evaluations = 100;
            const SearchResult r = makeSearcher("sa")->run(space, engine, o, nullptr, {});
            QCOMPARE(r.evaluations, int64_t(100));
            QVERIFY(!r.stopped);
        }
    }

    // Coordinate descent never ends below its start (the Megatron plan) and ends at a local optimum: no
    // single decision changed (later ones unchanged) scores higher. With restarts, the first descent is the
    // same, so it is never worse than cd at a budget cd does not exhaust.
    void coordinateDescent_data() {
        QTest::addColumn<QString>("scenario");
        for (const char* n : {"llama-3.1-70b-h100-4x8.yaml", "deepseek-v3-h100-32x8.yaml",
                              "llama-3.1-405b-h200-16x8.yaml", "mixtral-8x22b-h100-1x8.yaml"})
            QTest::addRow("%s", n) << QString(n);
    }
    void coordinateDescent() {
        QFETCH(QString, scenario);
        const Scenario s = loadSample(scenario.toStdString());
        const CostModel cm(s);
        const CostModelObjective objective(cm);
        const SearchSpace space(s);
        Engine engine(objective);
        const double start = planScore(cm.evaluate(cm.megatronPlan()));
        const SearchResult cd = runSearcher("cd", space, engine, 100000);
        QVERIFY2(cd.evaluations < 100000, "cd converges well within the budget");
        const double best = planScore(cd.best.metrics);
        QVERIFY(best >= start);
        QVERIFY(!cd.best.choices.empty());
        std::vector<uint8_t> mk;
        int neighbours = 0;
        for (int i = 0; i < space.decisionCount(); ++i) {
            space.mask(i, cd.best.choices, mk);
            for (int k = 0; k < int(mk.size()); ++k) {
                if (!mk[k] || k == cd.best.choices[size_t(i)]) continue;
                std::vector<int> c = cd.best.choices;
                c[size_t(i)] = k;
                if (!space.valid(c)) continue;
                ++neighbours;
                QVERIFY2(planScore(cm.evaluate(space.toPlan(c))) <= best,
                         qPrintable(QString("decision %1 value %2").arg(i).arg(k)));
            }
        }
        QVERIFY(neighbours > 0);
        const SearchResult restarts = runSearcher("cd-restarts", space, engine, cd.evaluations + 200);
        QVERIFY(planScore(restarts.best.metrics) >= best);
        QCOMPARE(restarts.evaluations, cd.evaluations + 200);
    }

    // Warm starts, offered to every searcher alike: from the Megatron plan no searcher ends below it; from
    // coordinate descent none ends below cd with the same seed (the same descent, then the searcher's own
    // work). Uniform random alone stays well below cd at these budgets, so the start is what carries them.
    void warmStarts() {
        const Scenario s = loadSample("deepseek-v3-h100-32x8.yaml");
        const CostModel cm(s);
        const CostModelObjective objective(cm);
        const SearchSpace space(s);
        Engine engine(objective);
        const double megatron = planScore(cm.evaluate(cm.megatronPlan()));
        const SearchResult cd = runSearcher("cd", space, engine, 100000, 4);
        const double cdBest = planScore(cd.best.metrics);
        QVERIFY(runSearcher("random", space, engine, cd.evaluations + 64, 4).best.metrics.throughput <
                0.99 * cdBest);
        for (const char* name : {"random", "random-seq", "sa", "ga", "rl"}) {
            SearchOptions o;
            o.seed = 4;
            o.threads = 1;
            o.budget.evaluations = 40;
            o.warmStart = WarmStart::Megatron;
            QVERIFY2(planScore(makeSearcher(name)->run(space, engine, o, nullptr, {}).best.metrics) >=
                         megatron,
                     name);
            o.warmStart = WarmStart::Descent;
            o.budget.evaluations = cd.evaluations + 64;
            const SearchResult r = makeSearcher(name)->run(space, engine, o, nullptr, {});
            QVERIFY2(planScore(r.best.metrics) >= cdBest, name);
            QCOMPARE(r.evaluations, cd.evaluations + 64);
        }
    }

    // Drawn decision by decision, tp 1 is common (about 1 in 3 of the degrees at each level) where uniform
    // sampling almost never visits it (3 of 12,531 plans).
    void randomSequentialVisitsSmallRegions() {
        const SearchSpace space(toyScenario());
        ToyObjective toy;
        RecordingObjective rec(toy);
        Engine engine(rec);
        const SearchResult r = runSearcher("random-seq", space, engine, 300);
        QCOMPARE(r.evaluations, int64_t(300));
        int tp1 = 0;
        for (const Plan& p : rec.plans()) tp1 += p.degrees.tp == 1;
        QCOMPARE(tp1, 3); // all three (uniform draws: 300 x 3 / 12,531 = 0.07 expected)
    }

    // The benchmark's figures, by hand on five runs against a best-known 100 tokens/s.
    void benchSummary() {
        auto run = [](double best, std::vector<std::pair<int64_t, double>> curve, std::vector<double> cpu,
                      double total) {
            BenchRun r;
            r.best = best;
            r.curve = std::move(curve);
            r.curveCpuSeconds = std::move(cpu);
            r.cpuSeconds = total;
            return r;
        };
        const std::vector<BenchRun> runs{
            run(100, {{10, 50}, {40, 99.5}, {60, 100}}, {0.1, 0.4, 0.6}, 1.0),
            run(99.95, {{5, 99.95}}, {0.05}, 0.5), // within 0.1%
            run(98, {{1, 98}}, {0.01}, 0.2),       // not within 1%
            run(0, {}, {}, 0.3),                   // nothing feasible
            run(99.2, {{20, 99.2}}, {0.2}, 0.4),   // within 1%, not 0.1%
        };
        const BenchSummary s = summarize(runs, 100, 0.3);
        QCOMPARE(s.runs, 5);
        QCOMPARE(s.within01, 0.4);
        QCOMPARE(s.within1, 0.6);
        QCOMPARE(s.medianFraction, 0.992); // of 1, 0.9995, 0.992, 0.98, 0
        QCOMPARE(s.evalsTo1, 40.0);        // of 5, 20, 40, never, never
        QCOMPARE(s.cpuTo1, 0.4);           // of 0.05, 0.2, 0.4, never, never
        QCOMPARE(s.medianCpuSeconds, 0.4); // of 1, 0.5, 0.2, 0.3, 0.4
        QCOMPARE(s.minBest, 0.0);
        QCOMPARE(s.maxBest, 100.0);
        // Cut at 0.3 CPU s: 50, 99.95, 98, 0, 99.2.
        QCOMPARE(s.timeWithin01, 0.2);
        QCOMPARE(s.timeWithin1, 0.4);
        QCOMPARE(s.timeMedianFraction, 0.98);
        // Half the runs within 1% is not a median: "never".
        const BenchSummary half = summarize({runs[0], runs[3]}, 100, 0);
        QVERIFY(std::isinf(half.evalsTo1));
        QVERIFY(std::isnan(half.timeWithin1));
    }
};

QTEST_GUILESS_MAIN(TestSearchBaselines)
#include "tst_search_baselines.moc"
