// Every sample file, truncated at many points and randomly mutated, gives a clean result: a value or an error
// naming the file; never a crash or a hang (CTest's timeout catches a hang).
#include "core/io/fleetfiles.h"
#include "core/io/formats.h"
#include "core/io/gpudb.h"
#include "core/sim/trace.h"

#include <QDirIterator>
#include <QFile>
#include <QTest>

#include <algorithm>
#include <chrono>
#include <random>

using namespace sp;

namespace {

struct Sample {
    QString path;
    FileKind kind;
    std::string text;
    bool trace = false; ///< a request trace (CSV or JSON Lines, core/sim/trace.h), not a YAML/JSON input
};

std::vector<Sample> samples() {
    std::vector<Sample> out;
    // The samples, the Hugging Face config.json fixtures (their JSON reader and the HF mapping), the
    // workload fixtures (length distributions) and the request traces (CSV and JSON Lines readers).
    QStringList files;
    for (const QString& root :
         {QStringLiteral(SHARDPLAN_SAMPLES_DIR), QStringLiteral(SHARDPLAN_TESTDATA_DIR "/hf"),
          QStringLiteral(SHARDPLAN_TESTDATA_DIR "/workloads"),
          QStringLiteral(SHARDPLAN_TESTDATA_DIR "/traces")}) {
        QDirIterator it(root, {"*.yaml", "*.json", "*.csv", "*.jsonl"}, QDir::Files,
                        QDirIterator::Subdirectories);
        while (it.hasNext()) files << it.next();
    }
    files.sort();
    for (const QString& p : files) {
        if (p.endsWith(".csv") || p.endsWith(".jsonl")) {
            QFile f(p);
            if (f.open(QIODevice::ReadOnly))
                out.push_back({p, FileKind::Workload, f.readAll().toStdString(), true});
            continue;
        }
        QFile f(p);
        if (!f.open(QIODevice::ReadOnly)) continue;
        const std::string text = f.readAll().toStdString();
        auto k = detectKind(p.toStdString());
        if (!k) continue;
        out.push_back({p, *k, text});
    }
    return out;
}

// Parses text as the given kind; returns "" when it loaded, else the error string. The label keeps the
// sample's folder so a scenario's relative paths still resolve.
std::string parseAs(const Sample& s, const std::string& text, const std::string& label) {
    auto msg = [](const auto& r) { return r.ok() ? std::string() : r.error().str(); };
    if (s.trace) return msg(parseTrace(text, label));
    switch (s.kind) {
    case FileKind::Model:
        return msg(parseModel(text, label));
    case FileKind::Cluster:
        return msg(parseCluster(text, label));
    case FileKind::Workload:
        return msg(parseWorkload(text, label));
    case FileKind::Constraints:
        return msg(parseConstraints(text, label));
    case FileKind::Scenario:
        return msg(parseScenario(text, label));
    case FileKind::Plan:
        return msg(parsePlan(text, label));
    case FileKind::Fleet:
        return msg(parseFleet(text, label));
    case FileKind::Prices:
        try {
            parsePriceList(text, label);
            return {};
        } catch (const InputError& e) {
            return e.what();
        }
    }
    return {};
}

} // namespace

class TestRobustness : public QObject {
    Q_OBJECT
private slots:
    void samplesLoad() {
        const auto all = samples();
        QVERIFY2(all.size() >= 25, qPrintable(QString("only %1 samples").arg(all.size())));
        QVERIFY2(std::count_if(all.begin(), all.end(), [](const Sample& s) { return s.trace; }) >= 2,
                 "the trace fixtures are missing");
        QVERIFY2(std::count_if(all.begin(), all.end(),
                               [](const Sample& s) { return s.kind == FileKind::Fleet; }) >= 1,
                 "the fleet sample is missing");
        QVERIFY2(std::count_if(all.begin(), all.end(),
                               [](const Sample& s) { return s.kind == FileKind::Prices; }) >= 1,
                 "the price list sample is missing");
        for (const auto& s : all) {
            const std::string err = parseAs(s, s.text, s.path.toStdString());
            if (s.path.endsWith("gpt2.config.json")) // the unsupported-architecture fixture
                QVERIFY2(err.find("unsupported architecture") != std::string::npos, err.c_str());
            else
                QVERIFY2(err.empty(), err.c_str());
        }
    }

    void truncated() {
        int errors = 0, cases = 0;
        for (const auto& s : samples()) {
            const std::string label = s.path.toStdString();
            const size_t n = s.text.size();
            const size_t step = std::max<size_t>(1, n / 60);
            for (size_t cut = 0; cut < n; cut += step) {
                const std::string err = parseAs(s, s.text.substr(0, cut), label);
                ++cases;
                if (!err.empty()) {
                    ++errors;
                    QVERIFY2(err.rfind(label, 0) == 0 || err.find(".yaml") != std::string::npos ||
                                 err.find(".json") != std::string::npos,
                             err.c_str());
                }
            }
        }
        qInfo("%d truncations, %d rejected with an error", cases, errors);
        QVERIFY(errors > cases / 2); // most truncations drop a required field
    }

    void mutated() {
        // SHARDPLAN_MUTATIONS raises the trials per sample (CI's sanitizer pass runs many more), and
        // SHARDPLAN_MUTATION_SEED draws other mutations (CI's pass takes it from the commit, so each commit
        // tries new ones and a rerun of one commit the same); a failure names the seed, sample and trial.
        const int trials = qEnvironmentVariableIntValue("SHARDPLAN_MUTATIONS") > 0
                               ? qEnvironmentVariableIntValue("SHARDPLAN_MUTATIONS")
                               : 150;
        bool seeded = false;
        const uint32_t seed = qEnvironmentVariable("SHARDPLAN_MUTATION_SEED").toUInt(&seeded);
        std::mt19937 rng(seeded ? seed : 12345u);
        qInfo("mutation seed %u, %d trials per sample", seeded ? seed : 12345u, trials);
        const std::string junk = ":{}[],-#&*!|>'\"%@` \n\t0123456789.eE-xyz";
        int errors = 0, cases = 0;
        struct {
            double ms = 0;
            std::string sample;
            int trial = 0;
        } slowest; // the slowest mutation's load: where a loader does more work than the input warrants
        for (const auto& s : samples()) {
            const std::string label = s.path.toStdString();
            for (int trial = 0; trial < trials; ++trial) {
                std::string t = s.text;
                const int edits = 1 + int(rng() % 4);
                for (int e = 0; e < edits && !t.empty(); ++e) {
                    const size_t pos = rng() % t.size();
                    switch (rng() % 4) {
                    case 0:
                        t[pos] = junk[rng() % junk.size()];
                        break; // replace
                    case 1:
                        t.erase(pos, 1 + rng() % 8);
                        break; // delete a run
                    case 2:
                        t.insert(pos, 1, junk[rng() % junk.size()]);
                        break; // insert
                    case 3:
                        t.insert(pos, t.substr(rng() % t.size(), 1 + rng() % 40));
                        break; // duplicate a run
                    }
                }
                const auto t0 = std::chrono::steady_clock::now();
                const std::string err = parseAs(s, t, label);
                const double ms =
                    std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
                if (ms > slowest.ms) slowest = {ms, label, trial};
                ++cases;
                if (!err.empty()) {
                    ++errors;
                    QVERIFY2(err.find(':') != std::string::npos,
                             ("trial " + std::to_string(trial) + " of " + label + ": " + err).c_str());
                }
            }
        }
        qInfo("%d mutations, %d rejected with an error; the slowest loaded in %.1f ms (trial %d of %s)",
              cases, errors, slowest.ms, slowest.trial, slowest.sample.c_str());
        QVERIFY(errors > 0);
    }
};

QTEST_GUILESS_MAIN(TestRobustness)
#include "tst_robustness.moc"
