// The throughput-interactivity Pareto front (core/searchers/pareto.h) and `shardplan pareto`.
#include "core/cost/costmodel.h"
#include "core/io/formats.h"
#include "core/search/space.h"
#include "core/searchers/pareto.h"
#include "core/searchers/registry.h"

#include "clirun.h"
#include <QElapsedTimer>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>

#include <csignal>
#include <stop_token>

using namespace sp;

namespace {

using sp::test::Run;
using sp::test::shardplan;

const std::string kScenarios = SHARDPLAN_SAMPLES_DIR "/scenarios/";
const QString kLlama70b = QStringLiteral(SHARDPLAN_SAMPLES_DIR "/scenarios/llama-3.1-70b-h100-4x8.yaml");
const QString kDeepSeek = QStringLiteral(SHARDPLAN_SAMPLES_DIR "/scenarios/deepseek-v3-h100-32x8.yaml");

Scenario loadSample(const std::string& name) {
    auto s = loadScenario(kScenarios + name);
    if (!s) qFatal("%s", s.error().str().c_str());
    return s.value();
}

ParetoPoint point(double perGpu, double userTps) {
    ParetoPoint p;
    p.throughputPerGpu = perGpu;
    p.userTokensPerS = userTps;
    p.tpotMs = 1000.0 / userTps;
    return p;
}

ParetoOptions smallSweep(int points = 6, int64_t budget = 300) {
    ParetoOptions o;
    o.points = points;
    o.budget = budget;
    o.seed = 3;
    o.threads = 2;
    return o;
}

/// Counts what the sweep reports, and can stop it after the first searched point.
class Recorder final : public ParetoObserver {
public:
    std::stop_source* stopAfterFirst = nullptr;
    int targets = 0, searched = 0, megatron = 0, progressEvents = 0;
    void targetsChosen(const std::vector<double>& t) override { targets = int(t.size()); }
    void pointFound(const ParetoPoint&, bool m, int, int) override {
        (m ? megatron : searched)++;
        if (!m && stopAfterFirst) stopAfterFirst->request_stop();
    }
    void searchProgress(int, const Progress&) override { ++progressEvents; }
};

} // namespace

class TestPareto : public QObject {
    Q_OBJECT
private slots:
    // Hand-made points: (2, 10) dominates (1, 10) and (2, 5); (3, 1) and (1, 20) are extremes; the copy of
    // (2, 10) is kept once.
    void nonDominatedByHand() {
        const auto f =
            nonDominated({point(1, 10), point(2, 10), point(2, 5), point(3, 1), point(1, 20), point(2, 10)});
        QCOMPARE(f.size(), size_t(3));
        QCOMPARE(f[0].throughputPerGpu, 3.0);
        QCOMPARE(f[1].throughputPerGpu, 2.0);
        QCOMPARE(f[1].userTokensPerS, 10.0);
        QCOMPARE(f[2].userTokensPerS, 20.0);
        QVERIFY(dominates(point(2, 10), point(1, 10)));
        QVERIFY(!dominates(point(2, 10), point(2, 10)));
        QVERIFY(!dominates(point(3, 1), point(1, 20)));
    }

    // SearchOptions::starts (the warm start the sweep hands from target to target): evaluated first, so a
    // search of 3 random plans is at least as good as the start it was given; a malformed start is skipped.
    void startsAreEvaluatedFirst() {
        const Scenario s = loadSample("llama-3.1-70b-h100-4x8.yaml");
        const CostModel model(s);
        const CostModelObjective objective(model);
        const SearchSpace space(s);
        Engine engine(objective);
        SearchOptions o;
        o.budget.evaluations = 400;
        const SearchResult good = makeSearcher("sa")->run(space, engine, o, nullptr, {});
        QVERIFY(good.feasible() && !good.best.choices.empty());
        o.budget.evaluations = 3;
        o.seed = 7;
        const SearchResult cold = makeSearcher("random")->run(space, engine, o, nullptr, {});
        o.starts = {std::vector<int>{1, 2}, good.best.choices};
        const SearchResult warm = makeSearcher("random")->run(space, engine, o, nullptr, {});
        QCOMPARE(warm.evaluations, int64_t(3));
        QCOMPARE(warm.best.metrics.throughput, good.best.metrics.throughput);
        QVERIFY(cold.best.metrics.throughput < good.best.metrics.throughput); // else the test shows nothing
        // Coordinate descent begins at the better of the start and the Megatron plan.
        o.budget.evaluations = 0;
        const SearchResult cd = makeSearcher("cd")->run(space, engine, o, nullptr, {});
        QVERIFY(cd.best.metrics.throughput >= good.best.metrics.throughput);
        o.starts.clear();
        const SearchResult cdAlone = makeSearcher("cd")->run(space, engine, o, nullptr, {});
        QVERIFY(cd.evaluations != cdAlone.evaluations); // the start was evaluated and changed the path
    }

    void layoutFamilies() {
        const Scenario ds = loadSample("deepseek-v3-h100-32x8.yaml");
        const Scenario llama = loadSample("llama-3.1-70b-h100-4x8.yaml");
        Plan tp = Plan::megatronChoices({1, 4, 8, 1, 1, 1});
        QCOMPARE(layoutFamily(tp, llama.model), std::string("TP"));
        Plan tpp = Plan::megatronChoices({2, 2, 8, 1, 1, 1});
        QCOMPARE(layoutFamily(tpp, llama.model), std::string("TP + PP"));
        QCOMPARE(layoutFamily(Plan::megatronChoices({1, 32, 1, 1, 1, 1}), llama.model), std::string("DP"));
        Plan dpa = Plan::megatronChoices({1, 32, 8, 256, 1, 1});
        dpa.setChoice(Op::MoeAttention, choice::AttnBatch);
        QCOMPARE(layoutFamily(dpa, ds.model), std::string("attention-DP + EP"));
        QCOMPARE(layoutFamily(Plan::megatronChoices({4, 8, 8, 64, 1, 1}), ds.model),
                 std::string("TP + PP + EP"));
    }

    void refusals() {
        Scenario s = loadSample("llama-3.1-70b-h100-4x8.yaml");
        ParetoOptions o = smallSweep();
        o.searcher = "annealing";
        ParetoResult r = paretoFront(s, o);
        QVERIFY(r.refused);
        QVERIFY(r.message.find("unknown searcher 'annealing'") != std::string::npos);
        s.workload.phase = Phase::Prefill;
        r = paretoFront(s, smallSweep());
        QVERIFY(r.refused);
        QVERIFY(r.message.find("prefill") != std::string::npos);
    }

    // The frontier's properties, on a dense and a MoE scenario.
    void frontier_data() {
        QTest::addColumn<QString>("scenario");
        QTest::addColumn<QString>("searcher");
        QTest::addColumn<bool>("warm");
        QTest::addRow("llama-3.1-70b sa") << "llama-3.1-70b-h100-4x8.yaml"
                                          << "sa" << true;
        QTest::addRow("llama-3.1-70b ga") << "llama-3.1-70b-h100-4x8.yaml"
                                          << "ga" << true;
        QTest::addRow("deepseek-v3 sa") << "deepseek-v3-h100-32x8.yaml"
                                        << "sa" << true;
        QTest::addRow("llama-3.1-70b cd-restarts") << "llama-3.1-70b-h100-4x8.yaml"
                                                   << "cd-restarts" << true;
        QTest::addRow("deepseek-v3 sa cold") << "deepseek-v3-h100-32x8.yaml"
                                             << "sa" << false;
    }
    void frontier() {
        QFETCH(QString, scenario);
        QFETCH(QString, searcher);
        QFETCH(bool, warm);
        const Scenario s = loadSample(scenario.toStdString());
        ParetoOptions o = smallSweep();
        o.searcher = searcher.toStdString();
        o.warm = warm;
        Recorder rec;
        const ParetoResult r = paretoFront(s, o, &rec);
        QVERIFY2(!r.frontier.empty(), r.message.c_str());
        QVERIFY(!r.stopped);
        QCOMPARE(rec.targets, o.points);
        QCOMPARE(r.searches, o.points + 1); // the two ends, then every target but the loosest
        QVERIFY(rec.progressEvents > 0);
        QVERIFY(r.minTpotMs < r.maxTpotMs);
        QCOMPARE(int(r.targetsMs.size()), o.points);
        for (size_t k = 1; k < r.targetsMs.size(); ++k) QVERIFY(r.targetsMs[k] > r.targetsMs[k - 1]);

        // Mutually non-dominated, ordered by tokens/s per user ascending (so throughput descending).
        for (size_t i = 0; i < r.frontier.size(); ++i)
            for (size_t j = 0; j < r.frontier.size(); ++j)
                if (i != j)
                    QVERIFY2(!dominates(r.frontier[i], r.frontier[j]),
                             qPrintable(QString("%1 %2").arg(i).arg(j)));
        for (size_t i = 1; i < r.frontier.size(); ++i) {
            QVERIFY(r.frontier[i].userTokensPerS > r.frontier[i - 1].userTokensPerS);
            QVERIFY(r.frontier[i].throughputPerGpu < r.frontier[i - 1].throughputPerGpu);
        }

        // Every point's plan, re-evaluated under its target and the TTFT SLO, meets them and reproduces it.
        const auto check = [&](const ParetoPoint& p) {
            Scenario t = s;
            t.workload.tpotMs = p.targetTpotMs;
            const Metrics m = CostModel(t).evaluate(p.plan);
            QVERIFY2(m.feasible, m.violation.c_str());
            if (p.targetTpotMs > 0) QVERIFY(m.tpotMs <= p.targetTpotMs * (1 + 1e-9));
            QVERIFY(m.ttftMs <= s.workload.ttftMs);
            QCOMPARE(m.throughputPerGpu, p.throughputPerGpu);
            QCOMPARE(m.tpotMs, p.tpotMs);
            QCOMPARE(p.userTokensPerS, 1000.0 / p.tpotMs);
            QVERIFY(!p.family.empty());
        };
        for (const auto& p : r.frontier) check(p);
        for (const auto& p : r.megatron) check(p);
        QVERIFY(!r.megatron.empty());

        // Every target's search starts at the Megatron plan of that target, so the searched frontier
        // reaches each Megatron point's throughput within its target (from scratch, it may not).
        for (const auto& m : warm ? r.megatron : std::vector<ParetoPoint>{}) {
            const double limit = m.targetTpotMs > 0 ? m.targetTpotMs * (1 + 1e-9) : 1e300;
            bool covered = false;
            for (const auto& p : r.frontier)
                covered =
                    covered || (p.tpotMs <= limit && p.throughputPerGpu >= m.throughputPerGpu * (1 - 1e-12));
            QVERIFY2(covered, qPrintable(QString("Megatron at %1 ms").arg(m.targetTpotMs)));
        }
        // The exchange: no frontier plan, with its batch chosen again, beats another point at that point's
        // target (each target's point is the best of every search's best plans there).
        for (const auto& p : r.frontier) {
            Scenario t = s;
            t.workload.tpotMs = p.targetTpotMs;
            const CostModel cm(t);
            for (const auto& q : r.frontier) {
                Plan free = q.plan;
                free.batch = 0;
                const Metrics m = cm.evaluate(free);
                if (m.feasible) QVERIFY(m.throughputPerGpu <= p.throughputPerGpu * (1 + 1e-12));
            }
        }
        // The tight end is as fast per user as the lowest-TPOT search found (the first target's search
        // keeps that plan feasible).
        QVERIFY(r.frontier.back().tpotMs <= r.minTpotMs * (1 + 1e-9));
    }

    // More targets never lose the best-throughput end (the unconstrained search is the same with the same
    // seed) and never the fastest end (the lowest-TPOT search is too).
    void morePointsKeepTheEnds() {
        const Scenario s = loadSample("llama-3.1-70b-h100-4x8.yaml");
        const ParetoResult few = paretoFront(s, smallSweep(3));
        const ParetoResult many = paretoFront(s, smallSweep(8));
        QVERIFY(!few.frontier.empty() && !many.frontier.empty());
        QVERIFY(many.frontier.front().throughputPerGpu >= few.frontier.front().throughputPerGpu);
        QVERIFY(many.frontier.back().userTokensPerS >= few.frontier.back().userTokensPerS * (1 - 1e-12));
        QVERIFY(many.frontier.size() >= 2);
    }

    void pointAtAnInteractivity() {
        std::vector<ParetoPoint> f = nonDominated({point(30, 5), point(20, 10), point(10, 40)});
        QCOMPARE(pointAtTpot(f, 1000.0 / 10)->throughputPerGpu, 20.0); // TPOT 100 ms: exactly the middle
        QCOMPARE(pointAtTpot(f, 150)->throughputPerGpu, 20.0);
        QCOMPARE(pointAtTpot(f, 1000)->throughputPerGpu, 30.0);
        QVERIFY(pointAtTpot(f, 20) == nullptr);
    }

    // A stop request after the first point: the sweep returns at once with what it has.
    void stopsWithPointsSoFar() {
        const Scenario s = loadSample("deepseek-v3-h100-32x8.yaml");
        std::stop_source stop;
        Recorder rec;
        rec.stopAfterFirst = &stop;
        ParetoOptions o = smallSweep(16, 2000);
        QElapsedTimer t;
        t.start();
        const ParetoResult r = paretoFront(s, o, &rec, stop.get_token());
        QVERIFY(t.elapsed() < 60000);
        QVERIFY(r.stopped);
        QCOMPARE(rec.searched, 1);
        QCOMPARE(r.frontier.size(), size_t(1));
        QVERIFY(r.searches < o.points + 1);
        // A time limit stops it too.
        o.budget = 100000000;
        o.seconds = 0.5;
        t.restart();
        const ParetoResult timed = paretoFront(s, o);
        QVERIFY(timed.stopped);
        QVERIFY(t.elapsed() < 30000);
    }

    void cliUsageErrors_data() {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("message");
        QTest::addRow("no scenario") << QStringList{"pareto"} << "--scenario is required";
        QTest::addRow("points 1") << QStringList{"pareto", "--scenario", kLlama70b, "--points", "1"}
                                  << "--points must be from 2 to 256";
        QTest::addRow("points text") << QStringList{"pareto", "--scenario", kLlama70b, "--points", "many"}
                                     << "--points expects an integer";
        QTest::addRow("budget 0") << QStringList{"pareto", "--scenario", kLlama70b, "--budget", "0"}
                                  << "--budget expects an integer from 1";
        QTest::addRow("searcher") << QStringList{"pareto", "--scenario", kLlama70b, "--searcher", "nope"}
                                  << "unknown searcher 'nope'";
        QTest::addRow("both at") << QStringList{"pareto", "--scenario",    kLlama70b, "--at-tpot",
                                                "20",     "--at-user-tps", "50"}
                                 << "not both";
        QTest::addRow("at-tpot 0") << QStringList{"pareto", "--scenario", kLlama70b, "--at-tpot", "0"}
                                   << "--at-tpot must be a positive";
        QTest::addRow("at-user-tps nan")
            << QStringList{"pareto", "--scenario", kLlama70b, "--at-user-tps", "nan"}
            << "--at-user-tps expects a finite number";
        QTest::addRow("unknown option")
            << QStringList{"pareto", "--scenario", kLlama70b, "--pionts", "4"} << "unknown option --pionts";
        QTest::addRow("positional") << QStringList{"pareto", "--scenario", kLlama70b, "extra"}
                                    << "unexpected argument 'extra'";
    }
    void cliUsageErrors() {
        QFETCH(QStringList, args);
        QFETCH(QString, message);
        const Run r = shardplan(args);
        QCOMPARE(r.code, 2);
        QVERIFY2(r.err.contains(message), qPrintable(r.err));
        QVERIFY(r.err.contains("usage: shardplan pareto"));
    }

    void cliHelpAndBadInput() {
        const Run help = shardplan({"help", "pareto"});
        QCOMPARE(help.code, 0);
        QVERIFY(help.out.contains("shardplan pareto --scenario S"));
        QVERIFY(help.out.contains("--at-tpot MS"));
        QCOMPARE(shardplan({"pareto", "--help"}).out, help.out);
        const Run flag = shardplan({"pareto", "--scenario", kLlama70b, "--no-warm-start=yes"});
        QCOMPARE(flag.code, 2);
        QVERIFY2(flag.err.contains("--no-warm-start takes no value"), qPrintable(flag.err));
        const Run missing = shardplan({"pareto", "--scenario", "/nonexistent.yaml"});
        QCOMPARE(missing.code, 1);
        QVERIFY(missing.err.contains("/nonexistent.yaml"));
    }

    // JSON and CSV agree; --at-tpot between two frontier points picks the faster-throughput one that meets
    // it; a TPOT below the tight end is an error.
    void cliJsonCsvAndAtTpot() {
        QTemporaryDir dir;
        const QString csv = dir.filePath("front.csv");
        const QStringList base{"pareto", "--scenario", kLlama70b, "--points",  "6", "--budget",
                               "300",    "--seed",     "3",       "--threads", "2"};
        const Run r = shardplan(base + QStringList{"--json", "--csv", csv});
        QCOMPARE(r.code, 0);
        const QJsonObject j = QJsonDocument::fromJson(r.out.toUtf8()).object();
        const QJsonArray f = j["frontier"].toArray();
        QVERIFY2(f.size() >= 2, qPrintable(r.out.left(2000)));
        QVERIFY(j["megatron"].toArray().size() >= 1);
        QFile file(csv);
        QVERIFY(file.open(QIODevice::ReadOnly));
        const QStringList lines = QString::fromUtf8(file.readAll()).split('\n', Qt::SkipEmptyParts);
        QCOMPARE(lines.size(), 1 + f.size() + j["megatron"].toArray().size());
        QVERIFY(lines[0].startsWith("frontier,user_tokens_per_s,throughput_per_gpu,tpot_ms"));

        // Between the two fastest-per-user points: the slower-per-user of them (higher throughput) meets it.
        const QJsonObject a = f[f.size() - 2].toObject(), b = f[f.size() - 1].toObject();
        const double at = (a["tpot_ms"].toDouble() + b["tpot_ms"].toDouble()) / 2;
        QVERIFY(at > b["tpot_ms"].toDouble() && at < a["tpot_ms"].toDouble());
        const Run pick = shardplan(base + QStringList{"--json", "--at-tpot", QString::number(at, 'g', 17)});
        QCOMPARE(pick.code, 0);
        const QJsonObject chosen = QJsonDocument::fromJson(pick.out.toUtf8()).object()["at"].toObject();
        QVERIFY(chosen["tpot_ms"].toDouble() <= at);
        double best = 0;
        for (const auto& p : f)
            if (p.toObject()["tpot_ms"].toDouble() <= at)
                best = std::max(best, p.toObject()["throughput_per_gpu"].toDouble());
        QCOMPARE(chosen["throughput_per_gpu"].toDouble(), best);
        QCOMPARE(chosen["tpot_ms"].toDouble(), b["tpot_ms"].toDouble());

        // The same by tokens/s per user, in text: the plan file is printed.
        const Run text =
            shardplan(base + QStringList{"--at-user-tps", QString::number(1000.0 / at, 'g', 17)});
        QCOMPARE(text.code, 0);
        QVERIFY2(text.out.contains("plan file") && text.out.contains("degrees"), qPrintable(text.out));

        const Run none =
            shardplan(base + QStringList{"--at-tpot", QString::number(b["tpot_ms"].toDouble() / 2)});
        QCOMPARE(none.code, 1);
        QVERIFY2(none.err.contains("no frontier point has TPOT"), qPrintable(none.err));
    }

    // The CSV holds every series drawn: the sweep's two, then the disaggregated frontier and the overlay; the
    // loose end's target (no TPOT limit) is empty, not 0; a name with a comma is quoted. Rows by hand.
    void csvHoldsEverySeries() {
        const auto pointAt = [](double perGpu, double tpot, double ttft, double target, int64_t batch,
                                const char* family, Degrees d) {
            ParetoPoint p = point(perGpu, 1000.0 / tpot);
            p.ttftMs = ttft;
            p.targetTpotMs = target;
            p.metrics.batch = batch;
            p.family = family;
            p.plan.degrees = d;
            return p;
        };
        ParetoResult r;
        // By tokens/s per user ascending, as the sweep returns it: the loose end first.
        r.frontier = {pointAt(2000, 200, 900, 0, 64, "attention-DP + EP", {1, 8, 1, 8, 1, 1}),
                      pointAt(300, 20, 300, 20, 4, "TP", {1, 1, 8, 1, 1, 1})};
        r.megatron = {pointAt(150, 40, 500, 0, 32, "TP + EP", {1, 1, 8, 8, 1, 1})};
        ParetoCsvExtras x;
        x.scenario = "DeepSeek-V3 on 4x8";
        DisaggFrontierPoint d;
        d.targetTpotMs = 20;
        d.throughputPerGpu = 450;
        d.userTokensPerS = 1000.0 / 16;
        d.split.plan.prefill.nodes = 1;
        d.split.plan.decode.nodes = 3;
        d.split.plan.decode.plan.degrees = {1, 3, 8, 24, 1, 1};
        d.split.metrics.tpotMs = 16;
        d.split.metrics.ttftMs = 700;
        d.split.metrics.decode.batch = 16;
        d.split.metrics.bound = "decode";
        x.disaggregated = {d};
        x.overlayScenario = "Llama, on H200";
        x.overlay = {pointAt(1000, 100, 800, 0, 128, "TP", {1, 2, 4, 1, 1, 1})};
        const QStringList lines = QString::fromStdString(paretoCsv(r, x)).split('\n', Qt::SkipEmptyParts);
        QCOMPARE(lines.size(), 6);
        QCOMPARE(lines[0],
                 "frontier,user_tokens_per_s,throughput_per_gpu,tpot_ms,ttft_ms,target_tpot_ms,batch,"
                 "family,pp,dp,tp,ep,etp,edp,prefill_nodes,decode_nodes,bound,scenario");
        QCOMPARE(lines[1], "searched,5,2000,200,900,,64,attention-DP + EP,1,8,1,8,1,1,,,,DeepSeek-V3 on 4x8");
        QCOMPARE(lines[2], "searched,50,300,20,300,20,4,TP,1,1,8,1,1,1,,,,DeepSeek-V3 on 4x8");
        QCOMPARE(lines[3], "megatron,25,150,40,500,,32,TP + EP,1,1,8,8,1,1,,,,DeepSeek-V3 on 4x8");
        // 1000 / 16 ms = 62.5 tokens/s per user; no model given, so no decode family.
        QCOMPARE(lines[4], "disaggregated,62.5,450,16,700,20,16,,1,3,8,24,1,1,1,3,decode,DeepSeek-V3 on 4x8");
        QCOMPARE(lines[5], "overlay,10,1000,100,800,,128,TP,1,2,4,1,1,1,,,,\"Llama, on H200\"");
        // With the model, the disaggregated row names its decode pool's layout (dp3 tp8 and EP24: batch-
        // sharded attention would say attention-DP; the default choices shard it by head).
        const Model model = loadSample("deepseek-v3-h100-32x8.yaml").model;
        x.model = &model;
        const QString withModel = QString::fromStdString(paretoCsv(r, x)).split('\n')[4];
        QCOMPARE(withModel.section(',', 7, 7),
                 QString::fromStdString(layoutFamily(d.split.plan.decode.plan, model)));
        QVERIFY(!withModel.section(',', 7, 7).isEmpty());
        // Without extras: the sweep's two series only, as before.
        QCOMPARE(QString::fromStdString(paretoCsv(r)).count('\n'), 4);
    }

    // `--csv` with --disaggregated writes the disaggregated rows too.
    void cliCsvHoldsDisaggregated() {
        QTemporaryDir dir;
        const QString csv = dir.filePath("front.csv");
        const Run r =
            shardplan({"pareto", "--scenario",
                       QString::fromStdString(kScenarios + "deepseek-v3-h100-32x8-long-prompts.yaml"),
                       "--points", "2", "--budget", "100", "--disaggregated", "--pool-budget", "30",
                       "--threads", "2", "--json", "--csv", csv});
        QCOMPARE(r.code, 0);
        const QJsonObject j = QJsonDocument::fromJson(r.out.toUtf8()).object();
        const qsizetype dis = j["disaggregated"].toArray().size();
        QVERIFY2(dis >= 1, qPrintable(r.out.left(500)));
        QFile file(csv);
        QVERIFY(file.open(QIODevice::ReadOnly));
        const QStringList lines = QString::fromUtf8(file.readAll()).split('\n', Qt::SkipEmptyParts);
        QCOMPARE(lines.size(), 1 + j["frontier"].toArray().size() + j["megatron"].toArray().size() + dis);
        QCOMPARE(lines.filter(QRegularExpression("^disaggregated,")).size(), dis);
        const QString scenario = j["scenario"].toString();
        for (const QString& l : lines.mid(1))
            QVERIFY2(l.endsWith(scenario) || l.endsWith(scenario + '"'), qPrintable(l));
    }

    // Ctrl-C stops a long sweep; it prints the points found so far and exits 0.
    void cliInterrupt() {
        QProcess p;
        p.start(QStringLiteral(SHARDPLAN_CLI),
                {"pareto", "--scenario", kDeepSeek, "--budget", "1000000", "--threads", "2"});
        QVERIFY(p.waitForStarted());
        QTest::qWait(1500);
        QElapsedTimer t;
        t.start();
        ::kill(pid_t(p.processId()), SIGINT);
        QVERIFY(p.waitForFinished(20000));
        QVERIFY(t.elapsed() < 10000);
        QCOMPARE(p.exitStatus(), QProcess::NormalExit);
        const QString out = QString::fromUtf8(p.readAllStandardOutput());
        QCOMPARE(p.exitCode(), 0);
        QVERIFY2(out.contains("(stopped)") && out.contains("frontier (1 point)"), qPrintable(out));
    }
};

QTEST_GUILESS_MAIN(TestPareto)
#include "tst_pareto.moc"
