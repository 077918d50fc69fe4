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
#include <QPainter>
#include <QPixmap>
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

    // Issue 38, defect 4: the sweep shown is marked stale once the scenario is no longer the one swept (a
    // model part opened), not once it is again (undo); Rerun sweeps the scenario as it is.
    void sweepMarkedStale() {
        MainWindow w(testOptions());
        w.resize(1600, 1000);
        w.show();
        QVERIFY(w.openScenario(kDefault));
        auto* v = w.paretoView();
        w.showPage(v);
        sweepSize(v, 2, 60);
        QVERIFY(sweep(v));
        QVERIFY(!v->isStale());
        const QString swept = v->scenarioName();
        QCOMPARE(swept, w.scenarioTitle());

        QVERIFY(w.openFile(kHfGptOss)); // the model replaced: the sweep is of the 8B
        QVERIFY(v->isStale());
        QVERIFY(v->staleBanner()->isVisibleTo(v));
        QCOMPARE(v->staleBanner()->kind(), views::MessageBanner::Kind::Warning);
        QVERIFY2(v->staleBanner()->text().contains("stale") && v->staleBanner()->text().contains(swept),
                 qPrintable(v->staleBanner()->text()));
        QVERIFY(v->result()); // still shown
        if (const QByteArray shots = qgetenv("SHARDPLAN_SCREENSHOT_DIR"); !shots.isEmpty())
            QVERIFY(w.grab().save(QString::fromLocal8Bit(shots) + "/pareto-stale.png"));

        w.scenarioUndo()->stack()->undo(); // the 8B again
        QVERIFY(!v->isStale());
        w.scenarioUndo()->stack()->redo();
        QVERIFY(v->isStale());

        QToolButton* rerun = nullptr;
        for (auto* b : v->staleBanner()->findChildren<QToolButton*>())
            if (b->text() == QLatin1String("Rerun")) rerun = b;
        QVERIFY(rerun);
        rerun->click();
        QVERIFY(!v->isStale());
        QPushButton* sweepButton = button(v, QStringLiteral("Sweep"));
        QTRY_VERIFY_WITH_TIMEOUT(sweepButton->isEnabled() && v->result(), 60000);
        QCOMPARE(v->scenarioName(), w.scenarioTitle()); // the gpt-oss scenario's
        QVERIFY(v->scenarioName() != swept);
        QVERIFY(!v->isStale());
    }

    // Issue 38, defect 11: the tooltip at a point is that point's (TPOT, TTFT, batch, degrees), whichever
    // series it belongs to; where a searched point lies on a Megatron point, the searched one (drawn on top)
    // answers; away from the points, the chart's help text.
    void pointToolTips() {
        views::ParetoView v;
        v.resize(900, 600);
        v.show();
        QVERIFY(QTest::qWaitForWindowExposed(&v));
        ParetoResult r;
        r.frontier = {point(2000, 50, "attention-DP + EP", 96, {1, 8, 1, 8, 1, 1}, 0),
                      point(400, 12.5, "TP + EP", 4, {1, 1, 8, 8, 1, 1}, 12.5)};
        r.megatron = {point(2000, 50, "TP + EP", 64, {1, 1, 8, 8, 1, 1}, 0), // under the searched one
                      point(100, 20, "TP + EP", 8, {1, 1, 8, 8, 1, 1}, 20)};
        v.setResult(r);
        DisaggFrontierPoint d;
        d.targetTpotMs = 25;
        d.throughputPerGpu = 800;
        d.userTokensPerS = 40;
        d.split.plan.prefill.nodes = 1;
        d.split.plan.decode.nodes = 3;
        d.split.metrics.tpotMs = 25;
        d.split.metrics.ttftMs = 900;
        d.split.metrics.bound = "decode";
        v.setDisaggregated({d});
        QCoreApplication::processEvents();

        const QString searched = toolTipAt(&v, drawnAt(&v, 80, 400));
        QVERIFY2(searched.startsWith("TP + EP\n") && searched.contains("TPOT 12.5 ms") &&
                     searched.contains("batch 4") && searched.contains("tp8") && searched.contains("ep8"),
                 qPrintable(searched));
        // Two pixels off the centre is still the point.
        const QString near = toolTipAt(&v, drawnAt(&v, 80, 400) + QPoint(2, -2));
        QCOMPARE(near, searched);
        const QString top = toolTipAt(&v, drawnAt(&v, 20, 2000));
        QVERIFY2(top.startsWith("attention-DP + EP\n") && top.contains("batch 96") && top.contains("dp8"),
                 qPrintable(top));
        const QString megatron = toolTipAt(&v, drawnAt(&v, 50, 100));
        QVERIFY2(megatron.startsWith("Megatron recipe") && megatron.contains("TPOT 20.0 ms") &&
                     megatron.contains("batch 8"),
                 qPrintable(megatron));
        const QString dis = toolTipAt(&v, drawnAt(&v, 40, 800));
        QVERIFY2(dis.startsWith("disaggregated: 1 prefill + 3 decode nodes (decode-bound)"), qPrintable(dis));
        // 800 per GPU against the best frontier plan with TPOT <= 25 ms: 400 at 12.5 ms, so 2.00x.
        QVERIFY2(dis.contains("2.00x the aggregated frontier"), qPrintable(dis));
        const QString empty = toolTipAt(&v, drawnAt(&v, 8, 8000));
        QCOMPARE(empty, v.plotWidget()->toolTip());
        QVERIFY(v.pointToolTip(drawnAt(&v, 8, 8000)).isEmpty());
    }

    // Issue 38, defect 5: Export writes every series drawn (the disaggregated and the overlay too), the loose
    // end's target empty; the PNG and SVG carry the swept scenario's name as their title.
    void exportsHoldEverySeries() {
        MainWindow::Options o = testOptions();
        QString answer;
        o.fileAnswer = [&answer](const QString&, const QString&, const QString&) { return answer; };
        MainWindow w(o);
        w.resize(1600, 1000);
        w.show();
        QVERIFY(w.openScenario(kDefault));
        auto* v = w.paretoView();
        w.showPage(v);
        ParetoResult r;
        r.frontier = {point(2000, 50, "TP", 96, {1, 4, 2, 1, 1, 1}, 0),
                      point(400, 12.5, "TP", 4, {1, 1, 8, 1, 1, 1}, 12.5)};
        r.megatron = {point(1500, 40, "TP", 64, {1, 1, 8, 1, 1, 1}, 0)};
        v->setScenarioName("Llama, 8B on 1x8 H100");
        v->setResult(r);
        DisaggFrontierPoint d;
        d.targetTpotMs = 25;
        d.throughputPerGpu = 800;
        d.userTokensPerS = 40;
        d.split.plan.prefill.nodes = 1;
        d.split.plan.decode.nodes = 1;
        d.split.metrics.tpotMs = 25;
        d.split.metrics.bound = "prefill";
        v->setDisaggregated({d});
        ParetoResult ov;
        ov.frontier = {point(900, 30, "TP", 16, {1, 2, 4, 1, 1, 1}, 0)};
        v->setOverlay("H200", ov);

        QTemporaryDir dir;
        QPushButton* exportButton = button(v, QStringLiteral("Export..."));
        QVERIFY(exportButton && exportButton->isEnabled());
        answer = dir.filePath("front.csv");
        exportButton->click();
        const QStringList lines = readAll(answer).split('\n', Qt::SkipEmptyParts);
        QCOMPARE(lines.size(), 1 + 2 + 1 + 1 + 1);
        QCOMPARE(lines[1].section(',', 0, 0), "searched");
        QCOMPARE(lines[1].section(',', 5, 5), ""); // the loose end: no TPOT limit
        QCOMPARE(lines[2].section(',', 5, 5), "12.5");
        QCOMPARE(lines[3].section(',', 0, 0), "megatron");
        QVERIFY2(lines[4].startsWith("disaggregated,40,800,25,"), qPrintable(lines[4]));
        QVERIFY2(lines[4].contains(",1,1,prefill,\"Llama, 8B on 1x8 H100\""), qPrintable(lines[4]));
        QVERIFY2(lines[5].startsWith("overlay,") && lines[5].endsWith(",H200"), qPrintable(lines[5]));

        answer = dir.filePath("front.svg");
        exportButton->click();
        QVERIFY2(readAll(answer).contains("Pareto front: Llama, 8B on 1x8 H100"), "the title in the SVG");
        // The PNG: the title's dark text in the band above the plot, which is blank without it.
        const auto darkInTitleBand = [&](const QString& path) {
            QImage img(path);
            int dark = 0;
            for (int y = 0; y < 28; ++y)
                for (int x = img.width() / 4; x < img.width() * 3 / 4; ++x)
                    dark += qGray(img.pixel(x, y)) < 100;
            return dark;
        };
        answer = dir.filePath("front.png");
        exportButton->click();
        QVERIFY(darkInTitleBand(answer) > 50);
        v->setScenarioName(QString());
        QCoreApplication::processEvents(); // the chart lays its title out again
        answer = dir.filePath("untitled.png");
        exportButton->click();
        QCOMPARE(darkInTitleBand(answer), 0);
    }

    // Sessions keep the sweep: every series' points (re-evaluated to the same numbers), the scenario swept,
    // the overlay; a restored point still shows its plan; a sweep of another scenario restores stale.
    void sessionKeepsSweep() {
        QTemporaryDir dir;
        const QString scenario = twoNodeScenario(dir);
        MainWindow::Options o = testOptions();
        QString answer;
        o.fileAnswer = [&answer](const QString&, const QString&, const QString&) { return answer; };
        o.threadsPerRun = 1;
        MainWindow w(o);
        w.resize(1600, 1000);
        w.show();
        QVERIFY(w.openScenario(scenario));
        auto* v = w.paretoView();
        w.showPage(v);
        sweepSize(v, 3, 80);
        v->setDisaggregatedChecked(true);
        QVERIFY(sweep(v));
        QVERIFY(v->result()->frontier.size() >= 2);
        QVERIFY(!v->disaggregatedPoints().empty());
        answer = kDefault; // the overlay: the same model on one node
        button(v, QStringLiteral("Overlay scenario..."))->click();
        QTRY_VERIFY_WITH_TIMEOUT(!v->overlayName().isEmpty(), 60000);
        QVERIFY(!v->overlayPoints().empty());
        const QString path = dir.filePath("s.spsession");
        QVERIFY(w.saveSession(path));

        MainWindow w2(o);
        w2.show();
        QVERIFY(w2.openScenario(kDefault));
        QVERIFY(w2.openSession(path));
        auto* v2 = w2.paretoView();
        QVERIFY(v2->result());
        samePoints(v2->result()->frontier, v->result()->frontier);
        samePoints(v2->result()->megatron, v->result()->megatron);
        QCOMPARE(v2->result()->targetsMs, v->result()->targetsMs);
        QCOMPARE(v2->result()->evaluations, v->result()->evaluations);
        QCOMPARE(v2->disaggregatedPoints().size(), v->disaggregatedPoints().size());
        for (size_t i = 0; i < v->disaggregatedPoints().size(); ++i) {
            const auto &a = v2->disaggregatedPoints()[i], &b = v->disaggregatedPoints()[i];
            QCOMPARE(a.throughputPerGpu, b.throughputPerGpu);
            QCOMPARE(a.userTokensPerS, b.userTokensPerS);
            QCOMPARE(a.targetTpotMs, b.targetTpotMs);
            QVERIFY(a.split.plan == b.split.plan);
        }
        QVERIFY(v2->disaggregated());
        QCOMPARE(v2->overlayName(), v->overlayName());
        samePoints(v2->overlayPoints(), v->overlayPoints());
        QCOMPARE(v2->scenarioName(), v->scenarioName());
        QVERIFY(!v2->isStale());
        QCOMPARE(QString::fromStdString(v2->csv(nullptr)), QString::fromStdString(v->csv(nullptr)));
        emit v2->planClicked(v2->result()->frontier.front());
        QVERIFY(w2.currentPlan());
        QCOMPARE(w2.currentPlan()->plan, v->result()->frontier.front().plan);

        // Saved after an edit: the sweep is of the scenario before it, and reads stale when restored.
        QVERIFY(w.openFile(kHfGptOss));
        QVERIFY(v->isStale());
        const QString edited = dir.filePath("edited.spsession");
        QVERIFY(w.saveSession(edited));
        MainWindow w3(o);
        QVERIFY(w3.openSession(edited));
        QVERIFY(w3.paretoView()->result());
        QVERIFY(w3.paretoView()->isStale());

        // A plan of the sweep that does not fit its scenario (pp 3: 3x the GPUs it had, of 16) is left out
        // and said so; a malformed one is an error naming it, the window as it was.
        QJsonObject root = QJsonDocument::fromJson(readAll(path).toUtf8()).object();
        QJsonObject pareto = root["pareto"].toObject();
        QJsonArray frontier = pareto["frontier"].toArray();
        QJsonObject p0 = frontier[0].toObject(), plan = p0["plan"].toObject(),
                    deg = plan["degrees"].toObject();
        deg["pp"] = 3;
        plan["degrees"] = deg;
        p0["plan"] = plan;
        frontier[0] = p0;
        pareto["frontier"] = frontier;
        root["pareto"] = pareto;
        const QString tampered = dir.filePath("tampered.spsession");
        QFile t(tampered);
        QVERIFY(t.open(QIODevice::WriteOnly));
        t.write(QJsonDocument(root).toJson());
        t.close();
        MainWindow w4(o);
        QVERIFY2(w4.openSession(tampered), qPrintable(w4.messageBanner()->text()));
        QCOMPARE(w4.paretoView()->result()->frontier.size(), v->result()->frontier.size() - 1);
        QVERIFY2(w4.messageBanner()->text().contains("Pareto frontier"),
                 qPrintable(w4.messageBanner()->text()));

        deg["tp"] = "eight";
        plan["degrees"] = deg;
        p0["plan"] = plan;
        frontier[0] = p0;
        pareto["frontier"] = frontier;
        root["pareto"] = pareto;
        QVERIFY(t.open(QIODevice::WriteOnly | QIODevice::Truncate));
        t.write(QJsonDocument(root).toJson());
        t.close();
        QVERIFY(!w4.openSession(tampered));
        QVERIFY2(w4.messageBanner()->text().contains("pareto.frontier[0].plan"),
                 qPrintable(w4.messageBanner()->text()));
        QCOMPARE(w4.paretoView()->result()->frontier.size(), v->result()->frontier.size() - 1);
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

    // The pictures of the Pareto tab in docs/pareto.md and docs/desktop-planner.md, when
    // SHARDPLAN_README_PICTURES names a folder: each sample swept with the tab's defaults (16 points, 2,000
    // evaluations a search), the tab as the window shows it at 1600 x 1000; the disaggregated one with the
    // tooltip of a split drawn over it.
    void readmePictures() {
        const QString out = QString::fromLocal8Bit(qgetenv("SHARDPLAN_README_PICTURES"));
        if (out.isEmpty()) QSKIP("SHARDPLAN_README_PICTURES is not set");
        const struct {
            const char* scenario;
            const char* picture;
            bool disaggregated;
        } shots[] = {{"deepseek-v3-h100-32x8.yaml", "pareto.png", false},
                     {"deepseek-v3-h200-16x8.yaml", "pareto-deepseek-v3-h200.png", false},
                     {"llama-3.1-70b-h100-1x8-chat.yaml", "pareto-llama-70b-h100.png", false},
                     {"llama-3.1-70b-h200-1x8-chat.yaml", "pareto-llama-70b-h200.png", false},
                     {"deepseek-v3-h100-32x8-long-prompts.yaml", "pareto-disaggregated.png", true}};
        for (const auto& shot : shots) {
            MainWindow w(testOptions());
            w.resize(1600, 1000);
            w.show();
            QVERIFY(w.openScenario(kSamples + "/scenarios/" + shot.scenario));
            auto* v = w.paretoView();
            w.showPage(v);
            v->setDisaggregatedChecked(shot.disaggregated);
            QVERIFY(sweep(v));
            if (shot.disaggregated) QTRY_VERIFY_WITH_TIMEOUT(!v->disaggregatedPoints().empty(), 120000);
            QTest::qWait(100);
            QPixmap picture = w.tabs()->grab();
            if (shot.disaggregated) {
                // The tooltip of a split a third of the way along, painted where it shows (kept inside).
                const auto& d = v->disaggregatedPoints()[v->disaggregatedPoints().size() / 3];
                QWidget* vp = qobject_cast<QChartView*>(v->plotWidget())->viewport();
                const QPoint at = drawnAt(v, d.userTokensPerS, d.throughputPerGpu);
                QVERIFY(!toolTipAt(v, at).isEmpty());
                for (QWidget* tip : QApplication::topLevelWidgets())
                    if (tip->inherits("QTipLabel") && tip->isVisible()) {
                        QPainter painter(&picture);
                        const QPixmap text = tip->grab();
                        QPoint pos = w.tabs()->mapFromGlobal(vp->mapToGlobal(at)) + QPoint(4, 16);
                        pos.setX(std::min(pos.x(), picture.width() - text.width() - 4));
                        painter.drawPixmap(pos, text);
                    }
            }
            QVERIFY(picture.save(out + "/" + shot.picture));
        }
    }
};

QTEST_MAIN(TestGuiParetoFiles)
#include "tst_gui_pareto_files.moc"
