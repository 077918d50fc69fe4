// Hostile input files and file writes: every case gives a clear error (where and what) or a whole file, never
// a crash, a hang, a silent first-wins or a quote of a file the user did not mean to show.
#include "core/io/formats.h"
#include "core/io/reader.h"

#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QTest>

#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <thread>
#include <vector>

using namespace sp;

namespace {

std::string write(const QTemporaryDir& dir, const QString& name, const std::string& text) {
    const std::string path = dir.filePath(name).toStdString();
    std::ofstream(path, std::ios::binary) << text;
    return path;
}

std::string slurp(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

const std::string kWorkload = "version: 1\nkind: workload\nname: w\nphase: decode\ninput_tokens: 1024\n"
                              "output_tokens: 256\n";

} // namespace

class TestHostile : public QObject {
    Q_OBJECT
private slots:
    void duplicateYamlKeyNamesBothPlaces() {
        const auto r = parseWorkload(kWorkload + "name: second\n", "w.yaml");
        QVERIFY(!r);
        // line 3 holds the first 'name', line 7 the second
        QVERIFY2(r.error().str().find("w.yaml:7:1: name: duplicate key 'name' (first at line 3, column 1)") !=
                     std::string::npos,
                 r.error().str().c_str());
    }

    void duplicateNestedKey() {
        const auto r = parseWorkload(kWorkload + "slo:\n  ttft_ms: 100\n  ttft_ms: 200\n", "w.yaml");
        QVERIFY(!r);
        QVERIFY2(r.error().str().find("w.yaml:9:3: slo.ttft_ms: duplicate key 'ttft_ms' (first at line 8") !=
                     std::string::npos,
                 r.error().str().c_str());
    }

    void duplicateJsonKey() {
        // JSON tools keep the last, YAML tools the first: an error either way.
        const auto r = parseModel(R"({"architectures": ["LlamaForCausalLM"],
  "hidden_size": 4096,
  "hidden_size": 8192})",
                                  "config.json");
        QVERIFY(!r);
        QVERIFY2(
            r.error().str().find("config.json:3:3: hidden_size: duplicate key 'hidden_size' (first at line "
                                 "2, column 3)") != std::string::npos,
            r.error().str().c_str());
    }

    void secondDocumentIsAnError() {
        const auto r = parseWorkload(kWorkload + "---\nkind: model\n", "w.yaml");
        QVERIFY(!r);
        QVERIFY2(r.error().str().find("w.yaml:8:1:") == 0, r.error().str().c_str());
        QVERIFY(r.error().message.find("a second document") != std::string::npos);
        // A lone document-start marker is not a second document.
        QVERIFY(parseWorkload("---\n" + kWorkload, "w.yaml"));
    }

    void hugeJsonNumberHasALine() {
        const auto r = parseModel(
            "{\n  \"architectures\": [\"LlamaForCausalLM\"],\n  \"hidden_size\": 1e400\n}", "config.json");
        QVERIFY(!r);
        QVERIFY2(r.error().str().find("config.json:3:18: number out of range: 1e400") == 0,
                 r.error().str().c_str());
    }

    void deepNestingSaysTooDeepAndWhere() {
        const std::string deepFlow = "a: " + std::string(5000, '[') + std::string(5000, ']') + "\n";
        const auto y = parseWorkload(deepFlow, "deep.yaml");
        QVERIFY(!y);
        // The 2001st '[' is at column 3 + 2001.
        QVERIFY2(y.error().str().find("deep.yaml:1:2004: malformed YAML: nested too deeply") == 0,
                 y.error().str().c_str());
        const std::string deepJson = "{\"a\": " + std::string(5000, '[') + std::string(5000, ']') + "}";
        const auto j = parseModel(deepJson, "deep.json");
        QVERIFY(!j);
        // '{' is the first level, so the 2000th '[' (column 7 + 1999) is one too many.
        QVERIFY2(j.error().str().find("deep.json:1:2006: malformed JSON: nested too deeply") == 0,
                 j.error().str().c_str());
        // Block nesting: yaml-cpp's own depth guard, reported with its position.
        std::string block = "a:\n";
        for (int i = 1; i < 2100; ++i) block += std::string(size_t(i), ' ') + "b:\n";
        const auto b = parseWorkload(block, "block.yaml");
        QVERIFY(!b);
        QVERIFY2(b.error().message.find("nested too deeply") != std::string::npos, b.error().str().c_str());
        QVERIFY(b.error().line > 1);
        // Brackets inside quoted strings and comments are not nesting.
        QVERIFY(parseWorkload(kWorkload + "# " + std::string(3000, '[') + "\n", "w.yaml"));
        const auto q = parseWorkload(kWorkload + "note: \"" + std::string(3000, '[') + "\"\n", "w.yaml");
        QVERIFY(!q && q.error().message.find("nested too deeply") == std::string::npos);
    }

    void aliasesCannotLoopOrExplode() {
        // An alias inside its own anchor is a cycle; nested aliases double at each level (10^6 values past
        // 20).
        const auto c = parseWorkload(kWorkload + "extra: &a [*a]\n", "w.yaml");
        QVERIFY(!c);
        QVERIFY2(c.error().message.find("or an alias that refers to itself") != std::string::npos,
                 c.error().str().c_str());
        std::string bomb = kWorkload + "l0: &l0 [x, x]\n";
        for (int i = 1; i <= 25; ++i)
            bomb += "l" + std::to_string(i) + ": &l" + std::to_string(i) + " [*l" + std::to_string(i - 1) +
                    ", *l" + std::to_string(i - 1) + "]\n";
        const auto b = parseWorkload(bomb, "w.yaml");
        QVERIFY(!b);
        QVERIFY2(b.error().message.find("too many values") != std::string::npos, b.error().str().c_str());
    }

    // A flow list of millions of values: yaml-cpp built every node before any check (60 MB: 47 s, 4 GB, then
    // bad_alloc). The text's commas, colons, dashes, brackets and lines bound the values before it parses.
    void millionsOfValuesAreRefusedBeforeParsing() {
        std::string list = kWorkload + "extra: [";
        for (int i = 0; i < 1'100'000; ++i) list += "1,";
        list += "1]\n";
        const auto r = parseWorkload(list, "w.yaml");
        QVERIFY(!r);
        QVERIFY2(r.error().message.find("too many values") != std::string::npos, r.error().str().c_str());
        QCOMPARE(r.error().line, 7); // the list's line
    }

    // GPU totals are products of two bounded numbers: 100,000 nodes of 100,000 GPUs wrapped an int to
    // 1.41e9 and to negative counts. The total is checked in 64 bits against 2^20.
    void clusterGpuTotalIsBounded() {
        const std::string head = "version: 1\nkind: cluster\ngpu: b200\n";
        const auto r = parseCluster(head + "nodes: 100000\ngpus_per_node: 100000\n", "c.yaml");
        QVERIFY(!r);
        QVERIFY2(
            r.error().str().find("c.yaml:5:16: gpus_per_node: 100000 nodes of 100000 GPUs are 10000000000 "
                                 "GPUs; a cluster has at most 1048576") != std::string::npos,
            r.error().str().c_str());
        const auto r2 = parseCluster(head + "nodes: 21475\ngpus_per_node: 100000\n", "c.yaml");
        QVERIFY(!r2);
        QVERIFY2(r2.error().message.find("2147500000 GPUs") != std::string::npos, r2.error().str().c_str());
        // 2^20 itself is a cluster: 16,384 domains of 64 GPUs.
        const auto ok = parseCluster(head + "nodes: 16384\ngpus_per_node: 64\n", "c.yaml");
        QVERIFY2(ok, ok ? "" : ok.error().str().c_str());
        QCOMPARE(ok->gpus(), 1 << 20);
    }

    void nonRegularFilesAreRefused() {
        const auto z = loadModel("/dev/zero");
        QVERIFY(!z);
        QVERIFY2(z.error().str() == "/dev/zero: not a regular file (a device, FIFO or socket cannot be read)",
                 z.error().str().c_str());
        QTemporaryDir dir;
        const std::string fifo = dir.filePath("pipe.yaml").toStdString();
        QCOMPARE(::mkfifo(fifo.c_str(), 0600), 0);
        const auto f = loadScenario(fifo); // would block forever waiting for a writer
        QVERIFY(!f);
        QVERIFY(f.error().message.find("not a regular file") != std::string::npos);
        const auto d = loadPlan(dir.path().toStdString());
        QVERIFY(!d);
        QVERIFY2(d.error().message == "is a folder, not a file", d.error().str().c_str());
        const auto m = loadPlan(dir.filePath("missing.yaml").toStdString());
        QVERIFY(!m);
        QCOMPARE(m.error().message, std::string("no such file"));
    }

    void filesOverTheLimitAreRefused() {
        QTemporaryDir dir;
        const std::string big = dir.filePath("big.yaml").toStdString();
        { std::ofstream(big) << ""; }
        // Sparse: 64 MiB + 1 byte without writing them.
        std::filesystem::resize_file(big, uintmax_t(io::kMaxFileBytes) + 1);
        const auto r = loadModel(big);
        QVERIFY(!r);
        QVERIFY2(r.error().message.find("the file is too large (64 MiB; at most 64 MiB)") !=
                     std::string::npos,
                 r.error().str().c_str());
        std::filesystem::resize_file(big, uintmax_t(io::kMaxFileBytes));
        const auto ok = loadModel(big); // at the limit: read (and rejected as YAML, not for its size)
        QVERIFY(!ok);
        QVERIFY2(ok.error().message.find("too large") == std::string::npos, ok.error().str().c_str());
    }

    void scenarioPartOfTheWrongKindIsNotQuoted() {
        QTemporaryDir dir;
        QDir(dir.path()).mkpath("a/b");
        write(dir, "secret.txt", "SECRET-FIRST-LINE:x:0:0\nsecond line\n");
        const std::string cluster = std::string(SHARDPLAN_SAMPLES_DIR) + "/clusters/h100-1x8.yaml";
        const std::string s =
            write(dir, "a/b/s.yaml",
                  "version: 1\nkind: scenario\nmodel: ../../secret.txt\ncluster: " + cluster +
                      "\nworkload: w.yaml\n");
        const auto r = loadScenario(s);
        QVERIFY(!r);
        const std::string e = r.error().str();
        QVERIFY2(e.find("SECRET") == std::string::npos, e.c_str());
        QVERIFY2(e.find("s.yaml:3:8: model: '") != std::string::npos, e.c_str());
        QVERIFY2(e.find("secret.txt' is not a model file (it is not a YAML or JSON mapping)") !=
                     std::string::npos,
                 e.c_str());
        // A mapping of another kind: named by kind, never by its keys.
        const std::string s2 = write(dir, "s2.yaml",
                                     "version: 1\nkind: scenario\nmodel: " + cluster +
                                         "\ncluster: " + cluster + "\nworkload: w.yaml\n");
        const auto r2 = loadScenario(s2);
        QVERIFY(!r2);
        QVERIFY2(r2.error().message.find("h100-1x8.yaml' is not a model file (it is a cluster file)") !=
                     std::string::npos,
                 r2.error().str().c_str());
        write(dir, "keys.yaml", "SECRETKEY: 1\nother: 2\n");
        const auto r3 = loadScenario(write(dir, "s3.yaml",
                                           "version: 1\nkind: scenario\nmodel: keys.yaml\n"
                                           "cluster: " +
                                               cluster + "\nworkload: w.yaml\n"));
        QVERIFY(!r3);
        QVERIFY2(r3.error().str().find("SECRET") == std::string::npos, r3.error().str().c_str());
        QVERIFY(r3.error().message.find("does not look like one") != std::string::npos);
        // A model file with a YAML syntax error: the parser's error and where, as validate gives it (it once
        // said only "not a YAML or JSON mapping").
        write(dir, "broken.yaml", "version: 1\nkind: model\nname: m\nlayers: [1, 2\n");
        const auto r4 = loadScenario(write(
            dir, "s4.yaml",
            "version: 1\nkind: scenario\nmodel: broken.yaml\ncluster: " + cluster + "\nworkload: w.yaml\n"));
        QVERIFY(!r4);
        const auto direct = loadModel(dir.filePath("broken.yaml").toStdString());
        QVERIFY(!direct);
        QVERIFY2(r4.error().message.find("broken.yaml:" + std::to_string(direct.error().line) + ":" +
                                         std::to_string(direct.error().column) + ": " +
                                         direct.error().message) != std::string::npos,
                 (r4.error().str() + " | " + direct.error().str()).c_str());
        QVERIFY2(direct.error().message.find("malformed YAML") != std::string::npos,
                 direct.error().str().c_str());
    }

    void longScalarsAreNotQuotedWhole() {
        const auto r = parseModel(std::string(5000, 'x') + "\n", "m.yaml");
        QVERIFY(!r);
        QVERIFY(r.error().str().size() < 200);
        QVERIFY2(r.error().message.find("found plain text") != std::string::npos, r.error().str().c_str());
    }

    void atomicWriteReplacesAndLeavesNoTemporary() {
        QTemporaryDir dir;
        const std::string target = dir.filePath("plan.json").toStdString();
        QVERIFY(writeFileAtomic(target, "one"));
        QVERIFY(writeFileAtomic(target, "two"));
        QCOMPARE(slurp(target), std::string("two"));
        QCOMPARE(QDir(dir.path()).entryList(QDir::AllEntries | QDir::Hidden | QDir::NoDotAndDotDot),
                 QStringList{"plan.json"});
        struct stat st {};
        QCOMPARE(::stat(target.c_str(), &st), 0);
        const mode_t mask = ::umask(0);
        ::umask(mask);
        QCOMPARE(st.st_mode & 0777, 0666 & ~mask); // like any new file, not mkstemp's 0600
    }

    void atomicWriteIgnoresPlantedSymlink() {
        // The old fixed temporary name: a link planted there must not redirect the write.
        QTemporaryDir dir;
        const std::string victim = write(dir, "victim.txt", "untouched");
        const std::string target = dir.filePath("plan.json").toStdString();
        QCOMPARE(::symlink(victim.c_str(), dir.filePath(".~plan.json.tmp").toStdString().c_str()), 0);
        QVERIFY(writeFileAtomic(target, "the plan"));
        QCOMPARE(slurp(victim), std::string("untouched"));
        QCOMPARE(slurp(target), std::string("the plan"));
    }

    void atomicWriteOntoAFolderSaysWhy() {
        QTemporaryDir dir;
        QDir(dir.path()).mkdir("out");
        const auto r = writeFileAtomic(dir.filePath("out").toStdString(), "x");
        QVERIFY(!r);
        QVERIFY2(r.error().message == "cannot replace the file: Is a directory", r.error().str().c_str());
        const auto n = writeFileAtomic(dir.filePath("no/such/folder/p.json").toStdString(), "x");
        QVERIFY(!n);
        QVERIFY2(n.error().message == "cannot write the file: No such file or directory",
                 n.error().str().c_str());
        QCOMPARE(QDir(dir.path()).entryList(QDir::AllEntries | QDir::Hidden | QDir::NoDotAndDotDot),
                 QStringList{"out"});
    }

    void concurrentWritersNeverTearTheFile() {
        // Eight writers, each with its own large content, race on one file: afterwards it holds exactly one
        // writer's content (a shared temporary would interleave them), and no temporary is left behind.
        QTemporaryDir dir;
        const std::string target = dir.filePath("plan.json").toStdString();
        constexpr int kWriters = 8, kRounds = 25;
        std::vector<std::string> contents;
        for (int w = 0; w < kWriters; ++w) contents.push_back(std::string(256 * 1024, char('a' + w)));
        std::atomic<int> failures{0};
        for (int round = 0; round < kRounds; ++round) {
            std::atomic<bool> go{false};
            std::vector<std::thread> threads;
            for (int w = 0; w < kWriters; ++w)
                threads.emplace_back([&, w] {
                    while (!go.load()) std::this_thread::yield();
                    if (!writeFileAtomic(target, contents[size_t(w)])) ++failures;
                });
            go = true;
            for (auto& t : threads) t.join();
            const std::string got = slurp(target);
            QVERIFY2(std::find(contents.begin(), contents.end(), got) != contents.end(),
                     qPrintable(QString("round %1: a torn file of %2 bytes").arg(round).arg(got.size())));
        }
        QCOMPARE(failures.load(), 0);
        QCOMPARE(QDir(dir.path()).entryList(QDir::AllEntries | QDir::Hidden | QDir::NoDotAndDotDot),
                 QStringList{"plan.json"});
    }
};

QTEST_GUILESS_MAIN(TestHostile)
#include "tst_hostile.moc"
