// The command line's conventions (--version, help VERB, VERB --help) and hostile input: exit codes and
// messages, never an abort, a hang or an uncaught exception.
#include "clirun.h"

#include "core/common/version.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QMap>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>

#include <csignal>
#include <sys/stat.h>

namespace {

/// Whether the process catches SIGINT yet (bit 1 of SigCgt in /proc/PID/status): tests signal only then,
/// since on a loaded machine reading the inputs can take longer than any fixed wait, and SIGINT before it
/// kills.
bool catchesSigint(qint64 pid) {
    QFile f(QStringLiteral("/proc/%1/status").arg(pid));
    if (!f.open(QIODevice::ReadOnly)) return false;
    for (const QByteArray& line : f.readAll().split('\n'))
        if (line.startsWith("SigCgt:")) return (line.mid(7).trimmed().toULongLong(nullptr, 16) & 2u) != 0;
    return false;
}

using sp::test::Run;
using sp::test::shardplan;
const QString kSamples = QStringLiteral(SHARDPLAN_SAMPLES_DIR);
const QString kScenario = kSamples + "/scenarios/llama-3.1-8b-h100-1x8.yaml";

/// Runs a shell command line with $0 set to the CLI: for arguments that are not valid UTF-8.
Run shell(const QString& script) {
    QProcess p;
    p.start("/bin/sh", {"-c", script, QStringLiteral(SHARDPLAN_CLI)});
    p.waitForFinished(120000);
    return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1,
            QString::fromUtf8(p.readAllStandardOutput()), QString::fromUtf8(p.readAllStandardError())};
}

QString writeFile(const QTemporaryDir& dir, const QString& name, const QByteArray& text) {
    QFile f(dir.filePath(name));
    if (!f.open(QIODevice::WriteOnly)) return {};
    f.write(text);
    return f.fileName();
}

QJsonObject jsonLine(const QString& out) {
    return QJsonDocument::fromJson(out.trimmed().toUtf8()).object();
}
} // namespace

class TestCliInput : public QObject {
    Q_OBJECT
private slots:
    void version() {
        const Run r = shardplan({"--version"});
        QCOMPARE(r.code, 0);
        QCOMPARE(r.out, QString("shardplan %1\n").arg(sp::kVersion));
        QVERIFY(QRegularExpression("^\\d+\\.\\d+\\.\\d+$").match(sp::kVersion).hasMatch());
    }

    void helpForOneCommand() {
        for (const char* verb :
             {"validate", "evaluate", "calibrate", "search", "compare", "export", "bench"}) {
            const Run a = shardplan({"help", verb});
            QVERIFY2(a.code == 0, verb);
            QVERIFY2(a.out.startsWith(QString("usage:\n  shardplan %1 ").arg(verb)), qPrintable(a.out));
            QVERIFY2(!a.out.contains("commands:"), qPrintable(a.out)); // that verb only, not the whole list
            const Run b = shardplan({verb, "--help"});
            QVERIFY2(b.code == 0, verb);
            QCOMPARE(b.out, a.out);
        }
        // bench has two forms, both shown.
        const Run bench = shardplan({"help", "bench"});
        QVERIFY(bench.out.contains("--eval-speed") && bench.out.contains("--searchers LIST"));
        QVERIFY(shardplan({"search", "-h"}).out.contains("--searcher NAME"));
        const Run unknown = shardplan({"help", "frobnicate"});
        QCOMPARE(unknown.code, 2);
        QVERIFY(unknown.err.contains("unknown command 'frobnicate'"));
        QCOMPARE(shardplan({"help"}).code, 0);
    }

    void validateJsonNeverAborts() {
        QTemporaryDir dir;
        const QString unknownKind = writeFile(dir, "what.yaml", "colour: blue\n");
        const QString empty = writeFile(dir, "empty.yaml", "");
        const QString missing = dir.filePath("missing.yaml");
        const Run r = shardplan({"validate", "--json", unknownKind, empty, missing});
        QCOMPARE(r.code, 1);
        const QStringList lines = r.out.trimmed().split('\n');
        QCOMPARE(lines.size(), 3);
        const QJsonObject a = jsonLine(lines[0]), b = jsonLine(lines[1]), c = jsonLine(lines[2]);
        for (const auto& o : {a, b, c}) {
            QVERIFY(o["kind"].isNull());
            QVERIFY(!o["ok"].toBool());
        }
        QVERIFY2(a["error"].toString().contains("cannot tell what kind of file this is"),
                 qPrintable(lines[0]));
        QVERIFY2(b["error"].toString().contains("found nothing"), qPrintable(lines[1]));
        QVERIFY2(c["error"].toString().endsWith("missing.yaml: no such file"), qPrintable(lines[2]));
    }

    void validateJsonInvalidUtf8() {
        QTemporaryDir dir;
        // A model name, an unknown key and a file name with bytes that are not UTF-8: valid JSON out, with
        // U+FFFD for the bad bytes in keys and file names; a name that is not UTF-8 is refused (the exports
        // write it into JSON and YAML), the byte named.
        QByteArray model;
        QFile sample(kSamples + "/models/llama-3.1-8b.yaml");
        QVERIFY(sample.open(QIODevice::ReadOnly));
        model = sample.readAll();
        model.replace(QByteArray("name: "), QByteArray("name: bad\xff\xfe "));
        writeFile(dir, "m.yaml", model);
        writeFile(dir, "k.yaml", "kind: cluster\nbad\xff: 1\n");
        const Run r =
            shell(QString("cd '%1' && printf 'kind: workload\\n' > \"$(printf 'f\\377.yaml')\" && "
                          "\"$0\" validate --json m.yaml k.yaml \"$(printf 'f\\377.yaml')\"; rc=$?; "
                          "rm -f \"$(printf 'f\\377.yaml')\"; exit $rc")
                      .arg(dir.path()));
        QCOMPARE(r.code, 1);
        const QStringList lines = r.out.trimmed().split('\n');
        QCOMPARE(lines.size(), 3);
        const QJsonObject m = jsonLine(lines[0]), k = jsonLine(lines[1]), f = jsonLine(lines[2]);
        QVERIFY2(!m["ok"].toBool(), qPrintable(lines[0]));
        QVERIFY2(m["error"].toString().contains("name: the text has a byte that is not UTF-8 (\\xff) at byte 4"),
                 qPrintable(lines[0]));
        QVERIFY2(k["error"].toString().contains(QString("bad\uFFFD: unknown key")), qPrintable(lines[1]));
        QCOMPARE(f["file"].toString(), QString("f\uFFFD.yaml"));
    }

    void nonRegularInputsEveryVerb() {
        // /dev/zero would be read until memory runs out; each verb refuses it at once.
        const QString z = "/dev/zero", why = "/dev/zero: not a regular file";
        const QList<QStringList> calls = {
            {"validate", z},
            {"evaluate", "--scenario", z},
            {"evaluate", "--scenario", kScenario, "--plan", z},
            {"compare", "--scenario", kScenario, z, kSamples + "/plans/llama-3.1-8b-tp8.json"},
            {"export", "--scenario", kScenario, "--plan", z, "--format", "json"},
            {"search", "--scenario", z, "--searcher", "megatron"},
            {"calibrate", z},
        };
        for (const auto& args : calls) {
            const Run r = shardplan(args);
            QVERIFY2(r.code == 1, qPrintable(args.join(' ')));
            QVERIFY2(r.err.contains(why), qPrintable(args.join(' ') + ": " + r.err));
        }
    }

    void fifoDoesNotHang() {
        QTemporaryDir dir;
        const QString fifo = dir.filePath("pipe.yaml");
        QCOMPARE(::mkfifo(fifo.toLocal8Bit().constData(), 0600), 0);
        QProcess p;
        p.start(QStringLiteral(SHARDPLAN_CLI), {"validate", fifo});
        QVERIFY2(p.waitForFinished(30000), "validate on a FIFO still waits for a writer after 30 s");
        QCOMPARE(p.exitCode(), 1);
        QVERIFY(QString::fromUtf8(p.readAllStandardError()).contains("not a regular file"));
    }

    void tooLargeFile() {
        QTemporaryDir dir;
        QFile f(dir.filePath("big.yaml"));
        QVERIFY(f.open(QIODevice::WriteOnly));
        QVERIFY(f.resize(qint64(65) << 20)); // sparse
        f.close();
        const Run r = shardplan({"validate", f.fileName()});
        QCOMPARE(r.code, 1);
        QVERIFY2(r.err.contains("the file is too large (65 MiB; at most 64 MiB)"), qPrintable(r.err));
    }

    void numericFlagsAreBounded() {
        const QList<QPair<QStringList, QString>> cases = {
            {{"--budget", "9223372036854775807"}, "--budget expects an integer from 1 to 1000000000000"},
            {{"--budget", "99999999999999999999"}, "--budget expects an integer"}, // beyond long long
            {{"--budget", "460000000000000000"}, "--budget expects an integer from 1"},
            {{"--budget", "0"}, "--budget expects an integer from 1"},
            {{"--seconds", "1e308"}, "--seconds expects a finite number from 0.1 to 1000000"},
            // So short that the search would end before its first evaluation: refused with the range.
            {{"--seconds", "1e-300"}, "--seconds expects a finite number from 0.1 to 1000000"},
            {{"--seconds", "inf"}, "--seconds expects a finite number"},
            {{"--seconds", "nan"}, "--seconds expects a finite number"},
            {{"--seconds", "-1"}, "--seconds expects a finite number from 0.1"},
            {{"--seed", "-5"}, "--seed expects an integer from 0"},
            {{"--threads", "100000"}, "--threads expects an integer from 0 to 4096"},
        };
        for (const auto& [flags, message] : cases) {
            const Run r =
                shardplan(QStringList{"search", "--scenario", kScenario, "--searcher", "random"} + flags);
            QVERIFY2(r.code == 2, qPrintable(flags.join(' ')));
            QVERIFY2(r.err.contains(message), qPrintable(flags.join(' ') + ": " + r.err));
        }
        const Run bench = shardplan({"bench", "--scenario", kScenario, "--seeds", "0"});
        QCOMPARE(bench.code, 2);
        QVERIFY2(bench.err.contains("--seeds expects an integer from 1 to 10000"), qPrintable(bench.err));
        QCOMPARE(shardplan({"bench", "--eval-speed", "--seconds", "inf"}).code, 2);
        // Gamma gaps of shape 1 / cv^2: 1e-160 made the shape infinite, and simulate grew to gigabytes.
        for (const char* verb : {"simulate", "capacity"}) {
            const Run cv = shardplan({verb, "--scenario", kScenario, "--rate", "1", "--burst-cv", "1e-160"});
            QCOMPARE(cv.code, 2);
            QVERIFY2(cv.err.contains("--burst-cv expects a finite number from 0.01 to 100"),
                     qPrintable(cv.err));
        }
        QCOMPARE(shardplan({"export", "--scenario", kScenario, "--searcher", "sa", "--budget", "1e30",
                            "--format", "json"})
                     .code,
                 2);
        // In range still works: a budget near the top is accepted and a wall-clock limit ends the search.
        const Run ok = shardplan({"search", "--scenario", kScenario, "--searcher", "random", "--budget",
                                  "1000000000000", "--seconds", "0.5"});
        QVERIFY2(ok.code == 0, qPrintable(ok.err));
        QVERIFY(ok.out.contains("pp"));
    }

    void exportOntoAFolderSaysWhy() {
        QTemporaryDir dir;
        QDir(dir.path()).mkdir("out.json");
        const Run r = shardplan(
            {"export", "--scenario", kScenario, "--format", "json", "--out", dir.filePath("out.json")});
        QCOMPARE(r.code, 1);
        QVERIFY2(r.err.contains("cannot replace the file: Is a directory"), qPrintable(r.err));
        QVERIFY(!r.err.contains("Success"));
    }

    void duplicateKeyFromTheCommandLine() {
        QTemporaryDir dir;
        const QString w = writeFile(dir, "w.yaml", "kind: workload\nphase: decode\nphase: prefill\n");
        const Run r = shardplan({"validate", w});
        QCOMPARE(r.code, 1);
        QVERIFY2(r.err.contains("w.yaml:3:1: phase: duplicate key 'phase' (first at line 2, column 1)"),
                 qPrintable(r.err));
    }

    // bench --best reads its file as every input is read: a FIFO, a device, deep nesting, a duplicate key and
    // a file over 64 MiB each get an error with the place, never a hang, a crash or an abort.
    void benchBestFileIsReadLikeEveryInput() {
        QTemporaryDir dir;
        const QString fifo = dir.filePath("fifo.json");
        QCOMPARE(::mkfifo(fifo.toLocal8Bit().constData(), 0600), 0);
        QFile big(dir.filePath("big.json"));
        QVERIFY(big.open(QIODevice::WriteOnly));
        QVERIFY(big.resize(qint64(65) << 20)); // sparse
        big.close();
        const QList<QPair<QString, QString>> cases = {
            {fifo, "fifo.json: not a regular file"},
            {"/dev/zero", "/dev/zero: not a regular file"},
            {writeFile(dir, "deep.json", QByteArray(200000, '[')),
             "deep.json:1:2001: malformed JSON: nested too deeply"},
            {writeFile(dir, "dup.json", "{\"version\": 1,\n\"scenarios\": {},\n\"scenarios\": {}}\n"),
             "dup.json:3:1: scenarios: duplicate key 'scenarios' (first at line 2, column 1)"},
            {big.fileName(), "big.json: the file is too large (65 MiB; at most 64 MiB)"},
            {writeFile(dir, "list.json", "[1, 2]"), "list.json:1:1: malformed JSON: expected a mapping"},
        };
        for (const auto& [file, why] : cases) {
            for (const char* flag : {"--best", "--refresh-best"}) {
                QProcess p;
                p.start(QStringLiteral(SHARDPLAN_CLI),
                        {"bench", "--scenario", kScenario, "--searchers", "random", "--budget", "10",
                         "--seeds", "1", flag, file});
                QVERIFY2(p.waitForFinished(30000), qPrintable(file + " still read after 30 s"));
                const QString err = QString::fromUtf8(p.readAllStandardError());
                QVERIFY2(p.exitStatus() == QProcess::NormalExit && p.exitCode() == 1,
                         qPrintable(file + ": " + err));
                QVERIFY2(err.contains(why), qPrintable(err));
            }
        }
    }

    // A scenario file named like a formula is one quoted, inert CSV field (OWASP "CSV Injection"): the row
    // keeps its columns and the cell starts with an apostrophe, not '='.
    void benchCsvQuotesTheScenarioName() {
        QTemporaryDir dir;
        QFile src(kScenario);
        QVERIFY(src.open(QIODevice::ReadOnly));
        QByteArray text = src.readAll();
        // The scenario's relative paths point at the samples from the temporary folder.
        text.replace("../", (kSamples + "/").toUtf8());
        const QString scenario = writeFile(dir, "=1+2,\"x.yaml", text);
        const QString csv = dir.filePath("bench.csv");
        const Run r = shardplan({"bench", "--scenario", scenario, "--searchers", "random", "--budget", "10",
                                 "--seeds", "1", "--csv", csv});
        QVERIFY2(r.code == 0, qPrintable(r.err));
        QFile f(csv);
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QStringList lines = QString::fromUtf8(f.readAll()).trimmed().split('\n');
        QCOMPARE(lines.size(), 2);
        QVERIFY2(lines[1].startsWith("\"'=1+2,\"\"x\",random,10,"), qPrintable(lines[1]));
        // As many fields as the header once the quoted one is read as one.
        QString row = lines[1];
        row.remove(QRegularExpression("^\"(?:[^\"]|\"\")*\""));
        QCOMPARE(row.count(','), lines[0].count(','));
    }

    void exportOntoADanglingLinkSaysWhy() {
        QTemporaryDir dir;
        const QString link = dir.filePath("out");
        QVERIFY(QFile::link(dir.filePath("nowhere/else"), link));
        const Run r = shardplan({"export", "--scenario", kScenario, "--engine", "vllm", "--out-dir", link});
        QCOMPARE(r.code, 1);
        QVERIFY2(
            r.err.contains("out: a link to '" + dir.filePath("nowhere/else") + "', which does not exist"),
            qPrintable(r.err));
        QVERIFY(!r.err.contains("File exists"));
    }

    // Every option a verb's help lists is one its parser accepts, and every option the README's command
    // table gives a verb is in that verb's help (help bench lacked --budgets, --best, --warm-start and
    // --refresh-best; help calibrate lacked --fit): both come from one table (app/cli/verbs.cpp).
    void helpListsWhatTheParserAndReadmeHave() {
        // The options of `help VERB`, each with whether it takes a value ("  --budget N   ...").
        auto helpOptions = [](const QString& verb) {
            const Run h = shardplan(QStringList{"help"} + verb.split(' '));
            QMap<QString, bool> out;
            const QString options = h.out.mid(h.out.indexOf("\noptions:\n"));
            QRegularExpression re("\\n  (--[a-z][a-z0-9-]*)( [A-Z][A-Z0-9,]*)?  ");
            for (auto it = re.globalMatch(options); it.hasNext();) {
                const auto m = it.next();
                out[m.captured(1)] = !m.captured(2).isEmpty();
            }
            return out;
        };
        const QStringList verbs = {
            "validate", "evaluate", "calibrate",          "search",   "compare",  "export",
            "bench",    "pareto",   "bench --eval-speed", "simulate", "capacity", "bench --sim-speed"};
        QMap<QString, QMap<QString, bool>> help;
        for (const QString& verb : verbs) {
            help[verb] = helpOptions(verb);
            QVERIFY2(help[verb].size() >= 2, qPrintable(verb));
            // All of them at once, values naming no file: the parser knows each (the error is about the
            // missing file or a conflict, never an unknown option).
            QStringList args = verb.split(' ');
            for (auto it = help[verb].cbegin(); it != help[verb].cend(); ++it) {
                args << it.key();
                if (it.value()) args << "no-such-file";
            }
            const Run r = shardplan(args);
            QVERIFY2(r.code != 0 && !r.err.contains("unknown option"), qPrintable(verb + ": " + r.err));
            const Run bad = shardplan(verb.split(' ') + QStringList{"--no-such-option"});
            QCOMPARE(bad.code, 2);
            QVERIFY2(bad.err.contains("unknown option --no-such-option"), qPrintable(bad.err));
        }
        // The README's table of commands.
        QFile readme(QStringLiteral(SHARDPLAN_SAMPLES_DIR "/../README.md"));
        QVERIFY(readme.open(QIODevice::ReadOnly));
        const QString text = QString::fromUtf8(readme.readAll());
        const int start = text.indexOf("## The command line\n\n```sh\n");
        QVERIFY(start >= 0);
        const int end = text.indexOf("```", start + 30);
        QString verb;
        int checked = 0;
        for (const QString& line : text.mid(start, end - start).split('\n')) {
            const QString code = line.section(" # ", 0, 0);
            if (code.startsWith("shardplan ")) {
                verb = code.section(' ', 1, 1);
                if (verb == "bench" && code.contains("--eval-speed")) verb = "bench --eval-speed";
                if (verb == "bench" && code.contains("--sim-speed")) verb = "bench --sim-speed";
            } else if (!code.startsWith(' ')) {
                continue;
            }
            QVERIFY2(help.contains(verb), qPrintable(verb));
            QRegularExpression re("(--[a-z][a-z0-9-]*)");
            for (auto it = re.globalMatch(code); it.hasNext();) {
                const QString o = it.next().captured(1);
                if ((verb == "bench --eval-speed" && o == "--eval-speed") ||
                    (verb == "bench --sim-speed" && o == "--sim-speed"))
                    continue;
                QVERIFY2(help[verb].contains(o),
                         qPrintable("README: shardplan " + verb + " " + o + " is not in its help"));
                ++checked;
            }
        }
        QVERIFY(checked > 60);
    }

    // calibrate: an error points at the line and column of the bad value (a cloned row lost them and said
    // :1:1); --fit lists the rows it skipped; with --json a failure still writes JSON to stdout.
    void calibrateErrorsAndSkippedRows() {
        QTemporaryDir dir;
        QFile src(QStringLiteral(SHARDPLAN_TESTDATA_DIR "/calibration/measurements.yaml"));
        QVERIFY(src.open(QIODevice::ReadOnly));
        QByteArray text = src.readAll();
        text.replace("value: 29228.22", "value: abc");
        QVERIFY(text.contains("value: abc"));
        const int line = text.left(text.indexOf("value: abc")).count('\n') + 1;
        const int row = int(text.left(text.indexOf("value: abc")).count("\n  - id: ")) - 1; // its index
        const QString bad = writeFile(dir, ".bad-value-test.yaml", text);
        // The file's relative paths (clusters/...) resolve beside it.
        QVERIFY(QFile::link(QStringLiteral(SHARDPLAN_TESTDATA_DIR "/calibration/clusters"),
                            dir.filePath("clusters")));
        const Run r = shardplan({"calibrate", bad});
        const Run fit = shardplan({"calibrate", "--fit", bad, "--json"});
        QCOMPARE(r.code, 1);
        const QString where =
            QString(".bad-value-test.yaml:%1:12: measurements[%2].value: expected a number").arg(line).arg(row);
        QVERIFY2(r.err.contains(where), qPrintable(r.err));
        QCOMPARE(fit.code, 1);
        const QJsonObject j = jsonLine(fit.out);
        QVERIFY2(j["error"].toString().contains(where), qPrintable(fit.out));
        QCOMPARE(j["exit_status"].toInt(), 1);
        // Every verb with --json: a usage error too.
        const Run usage = shardplan({"search", "--json", "--scenario", kScenario, "--searcher", "nope"});
        QCOMPARE(usage.code, 2);
        QVERIFY2(jsonLine(usage.out)["error"].toString().startsWith("unknown searcher 'nope'"),
                 qPrintable(usage.out));
        // The measurement file's MLPerf rows state no mean input length: skipped, and said so.
        const Run skipped = shardplan(
            {"calibrate", "--fit", QStringLiteral(SHARDPLAN_TESTDATA_DIR "/calibration/measurements.yaml"),
             "--factors", "compute"});
        QVERIFY2(skipped.code == 0, qPrintable(skipped.err));
        QVERIFY2(
            skipped.out.contains("skipped: mlperf-v4.1-llama2-70b-h200x8-offline: input length not stated"),
            qPrintable(skipped.out));
    }

    // calibrate and calibrate --serving say their errors by GPU family and engine as well as overall, in text and
    // JSON; a family's count in the JSON equals its rows.
    void calibrateReportsByFamilyAndEngine() {
        const QString file = QStringLiteral(SHARDPLAN_TESTDATA_DIR "/calibration/blackwell-measurements.yaml");
        const Run text = shardplan({"calibrate", file});
        QVERIFY2(text.code == 0, qPrintable(text.err));
        QVERIFY2(text.out.contains("by GPU family and engine:"), qPrintable(text.out));
        QVERIFY2(QRegularExpression(R"(\n  blackwell\s+trtllm\s+\d+ measurements median absolute error\s+\d+\.\d%)")
                     .match(text.out)
                     .hasMatch(),
                 qPrintable(text.out));
        const Run json = shardplan({"calibrate", file, "--json"});
        QVERIFY2(json.code == 0, qPrintable(json.err));
        const QJsonObject j = jsonLine(json.out);
        int blackwellRows = 0;
        for (const auto& r : j["rows"].toArray())
            if (r.toObject()["family"].toString() == "blackwell") ++blackwellRows;
        QVERIFY(blackwellRows > 0);
        bool found = false;
        for (const auto& g : j["groups"].toArray()) {
            const QJsonObject o = g.toObject();
            if (o["family"].toString() != "blackwell") continue;
            found = true;
            QCOMPARE(o["engine"].toString(), QString("trtllm"));
            QCOMPARE(o["count"].toInt(), blackwellRows);
            QVERIFY(o["median_abs_error"].toDouble() > 0);
        }
        QVERIFY(found);
    }

    // The README is a front door (at most 300 lines) and every page it and docs/ link to, and every picture,
    // is there: a page moved or renamed fails here, not in a reader's browser.
    void readmeAndDocsLinksResolve() {
        const QString root = QStringLiteral(SHARDPLAN_SAMPLES_DIR "/..");
        QFile readme(root + "/README.md");
        QVERIFY(readme.open(QIODevice::ReadOnly));
        const int lines = QString::fromUtf8(readme.readAll()).count('\n');
        QVERIFY2(lines <= 300, qPrintable(QString("README.md has %1 lines").arg(lines)));
        QStringList pages{root + "/README.md"};
        for (const QString& f : QDir(root + "/docs").entryList({"*.md"}, QDir::Files)) pages << root + "/docs/" + f;
        QVERIFY(pages.size() >= 9);
        const QRegularExpression link(R"(\]\(([^)\s]+)\))");
        int checked = 0;
        for (const QString& page : pages) {
            QFile f(page);
            QVERIFY(f.open(QIODevice::ReadOnly));
            const QString text = QString::fromUtf8(f.readAll());
            for (auto it = link.globalMatch(text); it.hasNext();) {
                QString target = it.next().captured(1);
                if (target.startsWith("http") || target.startsWith('#') || target.startsWith("mailto:")) continue;
                target = target.section('#', 0, 0);
                const QString path = QFileInfo(page).absolutePath() + "/" + target;
                QVERIFY2(QFileInfo::exists(path), qPrintable(page + " links to " + target + ", which is not there"));
                ++checked;
            }
        }
        QVERIFY(checked >= 30);
    }

    // Ctrl-C stops calibrate --fit within a second with the factors fitted so far, as search stops with the
    // best plan so far (the fit of 182 runs with its leave-one-out fits takes minutes).
    void calibrateFitStopsOnCtrlC() {
        const QString d = QStringLiteral(SHARDPLAN_TESTDATA_DIR "/calibration/");
        QProcess p;
        p.start(QStringLiteral(SHARDPLAN_CLI),
                {"calibrate", "--json", "--fit", d + "measurements.yaml," + d + "trtllm-perf-overview.yaml",
                 "--cluster", d + "clusters/h800-1x8.yaml"});
        QVERIFY(p.waitForStarted());
        QTRY_VERIFY_WITH_TIMEOUT(catchesSigint(p.processId()), 60000);
        QTest::qWait(300);
        ::kill(pid_t(p.processId()), SIGINT);
        QVERIFY(p.waitForFinished(10000));
        QCOMPARE(p.exitStatus(), QProcess::NormalExit);
        QCOMPARE(p.exitCode(), 0);
        const QJsonObject j = jsonLine(QString::fromUtf8(p.readAllStandardOutput()));
        QVERIFY(j["stopped"].toBool());
        QVERIFY(j["factors"].toArray().size() >= 10);
        QVERIFY(j["median_abs_error_after"].toDouble() > 0);
        // The leave-one-out errors are those of the fits done: fewer than the runs.
        QVERIFY(j["loo_errors"].toArray().size() < j["after"].toArray().size());
    }

    // Ctrl-C in the other long verbs: each ends within seconds and says it was interrupted; capacity prints
    // no rate (a bisection cut short once printed "max rate 0 requests/s" and exit 0), calibrate --serving
    // and bench
    // --sim-speed report the runs that completed, or say there were none (both once died with nothing said).
    void longVerbsSayInterrupted_data() {
        QTest::addColumn<QStringList>("args");
        QTest::addRow("capacity --max-rate") << QStringList{
            "capacity",   "--scenario", kSamples + "/scenarios/llama-3.1-70b-h200-1x8-chat-p99.yaml",
            "--max-rate", "--requests", "1000000"};
        QTest::addRow("calibrate --serving")
            << QStringList{"calibrate", "--serving", "--requests", "1000000"};
        QTest::addRow("bench --sim-speed") << QStringList{"bench", "--sim-speed", "--requests", "10000000"};
    }
    void longVerbsSayInterrupted() {
        QFETCH(QStringList, args);
        QProcess p;
        p.start(QStringLiteral(SHARDPLAN_CLI), args);
        QVERIFY(p.waitForStarted());
        QTRY_VERIFY_WITH_TIMEOUT(catchesSigint(p.processId()), 60000);
        QTest::qWait(300);
        ::kill(pid_t(p.processId()), SIGINT);
        QVERIFY(p.waitForFinished(20000));
        QCOMPARE(p.exitStatus(), QProcess::NormalExit);
        const QString out = QString::fromUtf8(p.readAllStandardOutput());
        const QString err = QString::fromUtf8(p.readAllStandardError());
        QVERIFY2((out + err).contains("interrupted"), qPrintable(out + err));
        if (args[0] == "capacity") {
            QCOMPARE(p.exitCode(), 1);
            QVERIFY2(!out.contains("max rate"), qPrintable(out));
            QVERIFY2(err.contains("no capacity answer"), qPrintable(err));
        } else {
            // Nothing completed: exit 1 and said so; some runs completed: exit 0 and the rows are marked
            // partial.
            QVERIFY2(p.exitCode() == 1 ? err.contains("before the first run completed")
                                       : p.exitCode() == 0 && (out + err).contains("completed"),
                     qPrintable(QString::number(p.exitCode()) + ": " + out + err));
        }
    }
};

QTEST_GUILESS_MAIN(TestCliInput)
#include "tst_cli_input.moc"
