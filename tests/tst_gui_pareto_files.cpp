// The Pareto tab and the files around it, offscreen: a stale sweep says so, a point's tooltip is that
// point's, the exports hold every series drawn (and the image its scenario's name), sessions keep the sweep;
// and the window's messages about files and runs: an error of a previous open goes with the next successful
// one and never shows a raw byte, a stopped run reads "stopped", a running search can be saved on Open/Quit.
#include "core/io/formats.h"
#include "gui_fixtures.h"
#include "mainwindow.h"
#include "runtracker.h"
#include "views/messagebanner.h"
#include "views/pareto.h"
#include "views/runpanel.h"
#include "views/scenarioeditor.h"

#include <QAbstractButton>
#include <QChart>
#include <QChartView>
#include <QCheckBox>
#include <QFile>
#include <QHelpEvent>
#include <QImage>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QMessageBox>
#include <QProgressBar>
#include <QPushButton>
#include <QSpinBox>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QTimer>
#include <QToolButton>
#include <QToolTip>
#include <QUndoStack>

using namespace sp;
using sp::app::MainWindow;
using namespace sp::testing;

namespace {

const QString kHfGptOss = QStringLiteral(SHARDPLAN_TESTDATA_DIR "/hf/gpt-oss-120b.config.json");

QPushButton* button(QWidget* in, const QString& text) {
    for (auto* b : in->findChildren<QPushButton*>())
        if (b->text() == text) return b;
    return nullptr;
}

/// Sets the Pareto tab's points and budget per search.
void sweepSize(views::ParetoView* v, int points, int budget) {
    const auto spins = v->findChildren<QSpinBox*>();
    QVERIFY(spins.size() == 2);
    spins[0]->setValue(points);
    spins[1]->setValue(budget);
}

/// Clicks Sweep and waits for the sweep to end.
bool sweep(views::ParetoView* v) {
    QPushButton* b = button(v, QStringLiteral("Sweep"));
    if (!b || !b->isEnabled()) return false;
    b->click();
    QTest::qWait(0);
    for (int i = 0; i < 1200 && !b->isEnabled(); ++i) QTest::qWait(50);
    return b->isEnabled() && v->result();
}

ParetoPoint point(double perGpu, double tpot, const char* family, int64_t batch, Degrees d, double target) {
    ParetoPoint p;
    p.throughputPerGpu = perGpu;
    p.tpotMs = tpot;
    p.userTokensPerS = 1000.0 / tpot;
    p.ttftMs = 400;
    p.targetTpotMs = target;
    p.family = family;
    p.metrics.batch = batch;
    p.plan.degrees = d;
    return p;
}

/// Where a point is drawn, in the chart view's viewport.
QPoint drawnAt(views::ParetoView* v, double userTps, double perGpu) {
    auto* cv = qobject_cast<QChartView*>(v->plotWidget());
    return cv->mapFromScene(cv->chart()->mapToPosition(QPointF(userTps, perGpu)));
}

/// The tooltip the chart shows when the mouse rests at `at` (a tooltip event, as the application sends it).
QString toolTipAt(views::ParetoView* v, const QPoint& at) {
    QToolTip::hideText();
    QWidget* vp = qobject_cast<QChartView*>(v->plotWidget())->viewport();
    QHelpEvent e(QEvent::ToolTip, at, vp->mapToGlobal(at));
    QApplication::sendEvent(vp, &e);
    return QToolTip::isVisible() ? QToolTip::text() : QString();
}

/// The default sample on two nodes (the disaggregated comparison needs two), written to `dir`.
QString twoNodeScenario(const QTemporaryDir& dir) {
    auto loaded = loadScenario(kDefault.toStdString());
    if (!loaded) qFatal("%s", loaded.error().str().c_str());
    Scenario s = loaded.value();
    s.cluster.nodes = 2;
    s.name = "llama-3.1-8b-h100-2x8";
    const QString path = dir.filePath("llama-3.1-8b-h100-2x8.yaml");
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly)) qFatal("cannot write %s", qPrintable(path));
    f.write(QByteArray::fromStdString(toYaml(s)));
    return path;
}

void samePoints(const std::vector<ParetoPoint>& a, const std::vector<ParetoPoint>& b) {
    QCOMPARE(a.size(), b.size());
    for (size_t i = 0; i < a.size(); ++i) {
        QCOMPARE(a[i].throughputPerGpu, b[i].throughputPerGpu);
        QCOMPARE(a[i].userTokensPerS, b[i].userTokensPerS);
        QCOMPARE(a[i].ttftMs, b[i].ttftMs);
        QCOMPARE(a[i].targetTpotMs, b[i].targetTpotMs);
        QCOMPARE(a[i].metrics.batch, b[i].metrics.batch);
        QCOMPARE(a[i].family, b[i].family);
        QCOMPARE(a[i].plan, b[i].plan);
    }
}

} // namespace

class TestGuiParetoFiles : public QObject {
    Q_OBJECT
private slots:
    // Bytes from a file show as escapes: 0x89 is not UTF-8, ESC a control character, U+202E (E2 80 AE) would
    // reverse the text after it; a line break stays one, e-acute (C3 A9) is text.
    void bannerTextEscapesBytes() {
        QCOMPARE(views::MessageBanner::fromBytes("a\x89z\x1b[0m\xe2\x80\xae"
                                                 "cd\n\xc3\xa9\t"),
                 QStringLiteral("a\\x89z\\x1b[0m\\u{202e}cd\n\u00e9\\t"));
        QCOMPARE(views::MessageBanner::fromBytes(std::string_view("nul\0end", 7)),
                 QStringLiteral("nul\\x00end"));
        // An overlong "/" (C0 AF) and a lone continuation byte are not UTF-8 either.
        QCOMPARE(views::MessageBanner::fromBytes("\xc0\xaf\x80"), QStringLiteral("\\xc0\\xaf\\x80"));
        QCOMPARE(views::MessageBanner::plainText(QStringLiteral("x\u0000y\ufffd")),
                 QStringLiteral("x\\x00y\\u{fffd}"));
    }

    // Issue 38, defect 3: a binary file opened as YAML leaves an error (its NUL shown as \x00, not as a
    // glyph); opening a Hugging Face config.json next takes the error away.
    void nextOpenClearsFileError() {
        MainWindow w(testOptions());
        w.show();
        QVERIFY(w.openScenario(kDefault));
        QTemporaryDir dir;
        const QString bin = dir.filePath("image.yaml");
        QFile f(bin);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(QByteArray("\x89PNG\r\n\x1a\n\0\0\0\rIHDR\x89", 17));
        f.close();
        QVERIFY(!w.openFile(bin));
        QVERIFY(w.messageBanner()->isVisible());
        QCOMPARE(w.messageBanner()->kind(), views::MessageBanner::Kind::Error);
        const QString text = w.messageBanner()->text();
        QVERIFY2(text.contains("image.yaml") && text.contains("\\x00"), qPrintable(text));
        for (QChar c : text) QVERIFY2(c.unicode() >= 0x20 && c != QChar(0xfffd), qPrintable(text));

        QVERIFY(w.openFile(kHfGptOss));
        QVERIFY2(!w.messageBanner()->isVisible(), qPrintable(w.messageBanner()->text()));
        QCOMPARE(QString::fromStdString(w.scenarioEditor()->scenario().model.name).contains("gpt-oss"), true);

        // The same for a plan file that does not parse, then one that opens.
        const QString badPlan = dir.filePath("plan.yaml");
        QFile p(badPlan);
        QVERIFY(p.open(QIODevice::WriteOnly));
        p.write("kind: plan\ndegrees: {tp: [\n");
        p.close();
        QVERIFY(!w.openFile(badPlan));
        QVERIFY(w.messageBanner()->isVisible());
        QVERIFY(w.openScenario(kDefault));
        QVERIFY(!w.messageBanner()->isVisible());
    }

    // Issue 38, defect 8: a stopped run reads "stopped", its bar as far as it got.
    void stoppedRunReadsStopped() {
        MainWindow w(testOptions());
        w.show();
        QVERIFY(w.openScenario(kDefault));
        w.runPanel()->setSelectedSearchers({QStringLiteral("random")});
        w.runPanel()->setBudget(50'000'000);
        QSignalSpy done(&w, &MainWindow::searchFinished);
        w.startSearch();
        QTRY_VERIFY_WITH_TIMEOUT(w.runs().contains("random") && w.runs().at("random").evaluations > 0, 30000);
        w.stopSearch();
        QVERIFY(done.wait(30000) || done.count() > 0);
        const QProgressBar* bar = w.runPanel()->progressBar();
        QVERIFY2(bar->format().startsWith("stopped"), qPrintable(bar->format()));
        QVERIFY(bar->value() > 0);
        QVERIFY(bar->value() < bar->maximum());
        QCOMPARE(bar->maximum(), 50'000'000);
        QVERIFY(w.runPanel()->rateText().startsWith("Stopped."));

        // A run that ends by itself reads "done", its bar full.
        QVERIFY(shortSearch(w, 100));
        QCOMPARE(w.runPanel()->progressBar()->format(), "done");
        QCOMPARE(w.runPanel()->progressBar()->value(), w.runPanel()->progressBar()->maximum());
    }

    // Issue 38, defect 12: the "Search running" dialog on Open offers Save: the search stops, the session
    // (with its results) is saved, and the other scenario opens. The dialog itself is answered, as a user
    // would.
    void searchRunningOffersSave() {
        QTemporaryDir dir;
        const QString path = dir.filePath("running.spsession");
        MainWindow::Options o = testOptions();
        o.confirmClose = true;
        o.fileAnswer = [&path](const QString&, const QString&, const QString&) { return path; };
        MainWindow w(o);
        w.show();
        QVERIFY(w.openScenario(kDefault));
        w.runPanel()->setSelectedSearchers({QStringLiteral("random")});
        w.runPanel()->setBudget(50'000'000);
        w.startSearch();
        QTRY_VERIFY_WITH_TIMEOUT(w.runs().contains("random") && w.runs().at("random").evaluations > 0, 30000);
        QStringList asked;
        QTimer answer;
        connect(&answer, &QTimer::timeout, this, [&] {
            auto* box = qobject_cast<QMessageBox*>(QApplication::activeModalWidget());
            if (!box) return;
            asked << box->windowTitle() + ": " + box->text();
            QAbstractButton* save = box->button(QMessageBox::Save);
            QVERIFY(box->button(QMessageBox::Discard) && box->button(QMessageBox::Cancel));
            if (save)
                save->click();
            else
                box->button(QMessageBox::Cancel)->click();
        });
        answer.start(20);
        const bool opened = w.openScenario(kSamples + "/scenarios/gpt-oss-120b-h100-1x8.yaml");
        answer.stop();
        QCOMPARE(asked.size(), 1);
        QVERIFY2(asked[0].startsWith("Search running: ") && asked[0].contains("save the session"),
                 qPrintable(asked[0]));
        QVERIFY(opened);
        QVERIFY(!w.isSearching());
        QVERIFY(QFileInfo::exists(path));
        const QJsonObject saved = QJsonDocument::fromJson(readAll(path).toUtf8()).object();
        const QJsonArray runs = saved["results"].toObject()["runs"].toArray();
        QCOMPARE(runs.size(), 1);
        QVERIFY(runs[0].toObject()["stopped"].toBool());
        QVERIFY(runs[0].toObject()["evaluations"].toInteger() > 0);
        QVERIFY(!runs[0].toObject()["elite"].toArray().isEmpty());
        QVERIFY(QString::fromStdString(w.scenarioEditor()->scenario().model.name).contains("gpt-oss"));
    }

    // Issue 38, defect 12: the run panel says that rl is Learn to Shard, the paper's method.
    void rlIsLearnToShard() {
        MainWindow w(testOptions());
        QVERIFY(w.runPanel()->searchers().contains("rl"));
        QCOMPARE(w.runPanel()->searcherLabel("rl"), QStringLiteral("rl \u2014 Learn to Shard"));
        QVERIFY(w.runPanel()->searcherToolTip("rl").contains("paper"));
        QCOMPARE(w.runPanel()->searcherLabel("sa"), "sa");
        w.runPanel()->setSelectedSearchers({QStringLiteral("rl"), QStringLiteral("sa")});
        QCOMPARE(w.runPanel()->selectedSearchers(), QStringList({"sa", "rl"}));
    }
};

QTEST_MAIN(TestGuiParetoFiles)
#include "tst_gui_pareto_files.moc"
