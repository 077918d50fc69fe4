// The prefill token budget as a search decision (constraints: prefill_budget: searched): counted, mapped to and
// from plans, left out where it changes nothing (decode), and priced as the engines run it (TTFT in chunks of the
// budget's spare tokens).
#include "sample_fixtures.h"
#include "search_fixtures.h"
#include "core/io/formats.h"

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

    // Llama-3.1-8B serving 8K-token prompts on TP8 at a fixed batch of 64: the steady step is the same at any
    // budget (B decode tokens and B I / O prefill tokens), and a new prompt takes, after the step in progress,
    // k = ceil(I / (budget - B)) steps that each carry the B decode tokens and a chunk of I / k tokens.
    // Where the steady step's prefill is that chunk (O = B k), a chunk step is a steady step, so
    // TTFT = (1 + k) TPOT: 2,048 gives k = ceil(8192 / 1984) = 5 (O = 320, TTFT six steps), 32,768 gives
    // k = 1 (O = 64, two steps). At the workload's own O = 1,024 the chunk steps are longer than the steady
    // one; the small budget's five read the weights five times where the large budget's one does once.
    void ttftInChunks() {
        Scenario s = compose("llama-3.1-8b.yaml", "h100-1x8.yaml", "long-prompt-serving.yaml");
        s.workload.ttftMs = s.workload.tpotMs = 0;
        Plan p = Plan::megatronChoices({1, 1, 8, 8, 1, 1});
        p.batch = 64;
        const auto at = [&](int64_t output, int64_t budget) {
            Scenario o = s;
            o.workload.outputTokens = output;
            Plan q = p;
            q.prefillBudget = budget;
            const Metrics m = CostModel(o).evaluate(q);
            if (!m.valid) qFatal("invalid: %s", m.violation.c_str());
            return m;
        };
        const Metrics five = at(320, 2048), one = at(64, 32768);
        QVERIFY(std::abs(five.ttftMs / five.tpotMs - 6.0) < 1e-12);
        QCOMPARE(five.ttftChunks, 5);
        QCOMPARE(one.ttftChunks, 1);
        QVERIFY(std::abs(one.ttftMs / one.tpotMs - 2.0) < 1e-12);
        const Metrics small = at(1024, 2048), large = at(1024, 32768);
        QCOMPARE(small.tpotMs, large.tpotMs);
        QVERIFY(small.ttftMs > large.ttftMs);
        QVERIFY(small.ttftMs - small.tpotMs > 5 * small.tpotMs); // five chunk steps, each above a steady one
        // The larger budget's activations are sized for its pass: more memory.
        QVERIFY(large.memoryPerGpuGiB > small.memoryPerGpuGiB);
    }

    // Where the TTFT SLO binds, the budget sets the batch: Llama-3.1-70B on 4x8 H100 (pp1 x dp2 x tp16),
    // 8,192-token prompts, TTFT 300 ms, TPOT 50 ms. At the default 8,192 the spare budget beside B decode
    // tokens is below the prompt, so it always takes two chunk steps (k = ceil(8192 / (8192 - B)) = 2), each
    // reading the weights; at 16,384 it takes one while B <= 8,192. The smaller k leaves room for a larger
    // batch under the same TTFT, and the searched budget finds it (docs/search.md's figure ("The search
    // space"): 2,304 against 1,580 tok/s with sa).
    void budgetSetsTheBatchUnderATightTtft() {
        Scenario s = compose("llama-3.1-70b.yaml", "h100-4x8.yaml", "long-prompt-serving.yaml");
        s.workload.ttftMs = 300;
        s.workload.tpotMs = 50;
        const CostModel cm(s);
        // The plan sa finds (tensor-parallel attention over two nodes with token-sharded projections).
        auto parsed = parsePlan(R"({"version": 1, "kind": "plan",
            "degrees": {"pp": 1, "dp": 2, "tp": 16},
            "operators": {"embedding": "replicated", "norms": "token", "qkv": "token", "attention": "head",
                          "out_proj": "token", "ffn_up": "column", "ffn_down": "row", "lm_head": "row"}})",
                                "inline");
        QVERIFY2(parsed.ok(), parsed.error().str().c_str());
        Plan p = parsed.value();
        const Metrics two = cm.evaluate(p);
        p.prefillBudget = 16384;
        const Metrics one = cm.evaluate(p);
        QVERIFY2(two.feasible && one.feasible, (two.violation + " / " + one.violation).c_str());
        QVERIFY(two.ttftMs <= 300 && one.ttftMs <= 300);
        QVERIFY2(one.batch > two.batch, qPrintable(QString("batch %1 at 16,384, %2 at 8,192").arg(one.batch).arg(two.batch)));
        QVERIFY(one.throughput > 1.2 * two.throughput);
    }
};

QTEST_GUILESS_MAIN(TestPrefillBudget)
#include "tst_prefill_budget.moc"
