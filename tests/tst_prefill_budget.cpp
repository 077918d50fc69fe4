// The prefill token budget as a search decision (constraints: prefill_budget: searched): counted, mapped to and
// from plans, left out where it changes nothing (decode), and priced as the engines run it (TTFT in chunks of the
// budget's spare tokens).
#include "sample_fixtures.h"
#include "search_fixtures.h"

#include <QTest>

#include <set>

using namespace sp;
using namespace sp::test;

class TestPrefillBudget : public QObject {
    Q_OBJECT
private slots:
    // The toy (12,531 plans, tst_search spaceSizeHandCount) serving: five budgets each, 62,655; a decode workload
    // has no budget decision (a step is its batch's tokens).
    void counted() {
        Scenario s = toyScenario();
        s.workload.phase = Phase::Serving;
        s.constraints.searchPrefillBudget = true;
        const SearchSpace space(s);
        QCOMPARE(space.size().count, 5.0 * 12531);
        QCOMPARE(space.decision(space.decisionCount() - 1).name, std::string("prefill_budget"));
        std::set<int64_t> budgets;
        int64_t n = 0;
        bool ok = true;
        space.forEach([&](std::span<const int> a) {
            ++n;
            const Plan p = space.toPlan(a);
            budgets.insert(p.prefillBudget);
            const auto back = space.fromPlan(p);
            ok = ok && back && std::equal(back->begin(), back->end(), a.begin(), a.end());
            return ok;
        });
        QVERIFY(ok);
        QCOMPARE(n, int64_t(5 * 12531));
        // The default is written as such (0), so a plan of the default budget is the one without the decision.
        QCOMPARE(budgets, (std::set<int64_t>{0, 2048, 4096, 16384, 32768}));
        s.workload.phase = Phase::Decode;
        QCOMPARE(SearchSpace(s).size().count, 12531.0);
    }

    // A budget the search does not weigh is outside its space; without the decision the budget is not looked at.
    void foreignBudget() {
        Scenario s = toyScenario();
        s.workload.phase = Phase::Serving;
        Plan p = Plan::megatronChoices({1, 2, 2, 4, 1, 1});
        p.prefillBudget = 1000;
        QVERIFY(SearchSpace(s).fromPlan(p));
        s.constraints.searchPrefillBudget = true;
        QVERIFY(!SearchSpace(s).fromPlan(p));
        p.prefillBudget = 16384;
        QVERIFY(SearchSpace(s).fromPlan(p));
    }

    // Llama-3.1-8B serving 8K-token prompts on TP8 at a fixed batch of 64: the step is the same at any budget
    // (B decode tokens and B I / O prefill tokens), and a new prompt takes ceil(I / (budget - B)) steps of the
    // spare budget after the one in progress: 2,048 gives 1 + ceil(8192 / 1984) = 6 cycles, 32,768 gives
    // 1 + ceil(8192 / 32704) = 2, a third of the TTFT.
    void ttftInChunks() {
        Scenario s = compose("llama-3.1-8b.yaml", "h100-1x8.yaml", "long-prompt-serving.yaml");
        s.workload.ttftMs = s.workload.tpotMs = 0;
        const CostModel cm(s);
        Plan p = Plan::megatronChoices({1, 1, 8, 8, 1, 1});
        p.batch = 64;
        p.prefillBudget = 2048;
        const Metrics small = cm.evaluate(p);
        p.prefillBudget = 32768;
        const Metrics large = cm.evaluate(p);
        QVERIFY(small.valid && large.valid);
        QCOMPARE(small.tpotMs, large.tpotMs);
        QVERIFY(std::abs(small.ttftMs / large.ttftMs - 3.0) < 1e-12);
        // The larger budget's activations are sized for its pass: more memory.
        QVERIFY(large.memoryPerGpuGiB > small.memoryPerGpuGiB);
    }
};

QTEST_GUILESS_MAIN(TestPrefillBudget)
#include "tst_prefill_budget.moc"
