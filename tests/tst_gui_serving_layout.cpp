// The Serving tab at 1280x720 (a laptop): every button and label lies inside the tab's visible width, none is
// cut or elided, and the page does not scroll sideways; long answers wrap. SHARDPLAN_SHOTS=DIR saves the tab
// as drawn.
#include "core/io/gpudb.h"
#include "gui_fixtures.h"
#include "views/scenarioeditor.h"
#include "views/servingsizing.h"
#include "views/servingsweep.h"
#include "views/servingview.h"

#include <QAbstractButton>
#include <QCheckBox>
#include <QLabel>
#include <QScrollArea>
#include <QScrollBar>
#include <QTabWidget>
#include <QTest>

using namespace sp;
using namespace sp::testing;

namespace {

QScrollArea* scrollOf(QWidget* w) {
    for (QWidget* p = w->parentWidget(); p; p = p->parentWidget())
        if (auto* s = qobject_cast<QScrollArea*>(p)) return s;
    return nullptr;
}

/// What is cut or outside `visible` (the scroll area's viewport) among the buttons and labels shown in
/// `page`.
QStringList cut(QWidget* page, QWidget* visible) {
    QStringList out;
    const int width = visible->width();
    const auto name = [](QWidget* w, const QString& text) {
        return QStringLiteral("%1 '%2'").arg(QString::fromLatin1(w->metaObject()->className()),
                                             text.left(60));
    };
    for (QWidget* w : page->findChildren<QWidget*>()) {
        auto* button = qobject_cast<QAbstractButton*>(w);
        auto* label = qobject_cast<QLabel*>(w);
        if ((!button && !label) || !w->isVisibleTo(page)) continue;
        // Inside a chart view's scene or a table's cells nothing is a widget: these are the controls.
        const QRect r(w->mapTo(visible, QPoint(0, 0)), w->size());
        const QString text = button ? button->text() : label->text();
        if (text.isEmpty()) continue;
        if (r.left() < 0 || r.right() >= width)
            out << QStringLiteral("%1 at x %2..%3, the tab shows 0..%4")
                       .arg(name(w, text))
                       .arg(r.left())
                       .arg(r.right())
                       .arg(width - 1);
        if (button && button->sizeHint().width() > button->width())
            out << QStringLiteral("%1 %2 px wide, needs %3")
                       .arg(name(w, text))
                       .arg(w->width())
                       .arg(button->sizeHint().width());
        if (label && label->textFormat() != Qt::RichText) {
            const QRect c = label->contentsRect();
            if (label->wordWrap()) {
                if (label->heightForWidth(label->width()) > label->height())
                    out << QStringLiteral("%1 %2 px high, needs %3 at %4 px wide")
                               .arg(name(w, text))
                               .arg(label->height())
                               .arg(label->heightForWidth(label->width()))
                               .arg(label->width());
            } else {
                const QFontMetrics fm(label->font());
                const QSize need = fm.size(0, text);
                if (need.width() > c.width() || need.height() > c.height())
                    out << QStringLiteral("%1 %2x%3 px, needs %4x%5")
                               .arg(name(w, text))
                               .arg(c.width())
                               .arg(c.height())
                               .arg(need.width())
                               .arg(need.height());
            }
        }
    }
    return out;
}
} // namespace

class TestGuiServingLayout : public QObject {
    Q_OBJECT
private slots:
    void controlsFitAt1280x720() {
        MainWindow w(testOptions());
        w.resize(1280, 720);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QVERIFY(w.openScenario(kP99));
        views::ServingView* v = w.servingView();
        w.showPage(v);
        QApplication::processEvents();
        QScrollArea* scroll = scrollOf(v);
        QVERIFY(scroll);
        QWidget* visible = scroll->viewport();
        QVERIFY(visible->width() > 400);
        QStringList problems = cut(v, visible);
        if (scroll->horizontalScrollBar()->maximum() > 0)
            problems << QStringLiteral("the page scrolls sideways: %1 px wide in %2")
                            .arg(v->width())
                            .arg(visible->width());
        QVERIFY2(problems.isEmpty(), qPrintable(problems.join(QStringLiteral("\n"))));
    }

    // The longest words the tab shows wrap within it: a capacity answer with its costs and request counts, a
    // long plan name, on the sweep page a sweep over a pinned one with their table, and on the sizing page a
    // table and notes of three GPU types.
    void answersWrapAt1280x720() {
        MainWindow w(testOptions());
        w.resize(1280, 720);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QVERIFY(w.openScenario(kP99));
        views::ServingView* v = w.servingView();
        w.showPage(v);
        const Workload wl = w.scenarioEditor()->scenario().workload;
        views::CapacityAnswer a;
        a.row.gpu = "h200";
        a.row.gpus = 8;
        a.row.planName = "Best found (sa, ga): pp1 dp2 tp4 | layers 40,40 | mtp x1";
        a.row.rate.ok = true;
        a.row.rate.rate = 6.6734;
        a.row.rate.rateAbove = 6.7421;
        a.row.rate.simulations = 11;
        a.row.rate.why = "p99 TPOT 53.1 ms over the SLO of 50.0 ms";
        a.row.outputTokensPerS = 1'234'567;
        a.row.cost.priced = a.row.cost.powered = true;
        a.row.cost.usdPerHour = 43.26;
        a.row.cost.usdPerMillionTokens = 9.734;
        a.row.cost.tokensPerSPerMegawatt = 1'133'136;
        a.requestsGiven = 1000;
        a.requestsAtRate = 6891;
        v->setCapacity(a, wl);
        v->setPlanName(QString::fromStdString(a.row.planName) +
                       QStringLiteral(" — 1.01M tok/s at the steady state (the search's plans are of the "
                                      "scenario before its edits)"));
        v->setStatus(
            QStringLiteral("Simulation 12: 6,891 of 6,891 requests completed, and a few more words to "
                           "wrap past the tab's right edge at this width"));
        views::GpuSizing z;
        z.rate = 20;
        z.gpus = {"b200", "h200", "mi300x"};
        z.requests = 1000;
        z.workload = wl;
        for (const std::string& id : z.gpus) {
            CapacityRow r;
            r.gpu = id;
            r.met = id != "mi300x";
            r.nodes = 3, r.gpus = 24;
            r.plan = w.context()->megatron()->plan;
            r.why =
                r.met ? "at 16 GPUs: ttft (p99 TTFT 309249 ms over the SLO of 2000 ms)"
                      : "not met up to 4096 nodes: 32768 GPUs: tpot (p99 TPOT 53.1 ms over the SLO of 50 ms)";
            r.cost.priced = r.cost.powered = true;
            r.cost.usdPerGpuHour = 5.408;
            r.cost.priceSource = "a public cloud's on-demand list price, 2025-06";
            z.rows.push_back(r);
        }
        v->sizing()->setResult(z);
        views::ShownSweep sweep;
        sweep.rates = sweepRates(0.75, 9, 12);
        sweep.workload = wl;
        sweep.tag = views::RunTag{QString::fromStdString(a.row.planName), views::sweepLoadText(sweep.rates),
                                  QStringLiteral("8x H200 SXM 141GB")};
        for (double r : sweep.rates) {
            SweepPoint p;
            p.rate = r;
            p.ttftMs.p50 = 100 * r, p.ttftMs.p99 = 300 * r * r, p.tpotMs.p50 = 5 * r, p.tpotMs.p99 = 6 * r;
            p.slo.met = r < 7;
            p.slo.binding = "tpot";
            p.slo.tpotMs = 6 * r;
            p.requests = 6891;
            sweep.sweep.points.push_back(p);
        }
        views::ShownSweep pinned = sweep;
        pinned.tag.plan = QStringLiteral("Megatron: pp1 dp1 tp8");
        v->sweep()->setSweep(sweep);
        v->setPin(views::ServingPin{std::nullopt, pinned});
        for (auto page : {views::ServingView::Page::Simulation, views::ServingView::Page::Sweep,
                          views::ServingView::Page::Sizing}) {
            v->showPage(page);
            QApplication::processEvents();
            QScrollArea* scroll = scrollOf(v);
            QWidget* visible = scroll->viewport();
            QStringList problems = cut(v, visible);
            if (scroll->horizontalScrollBar()->maximum() > 0)
                problems << QStringLiteral("the page scrolls sideways: %1 px wide in %2")
                                .arg(v->width())
                                .arg(visible->width());
            QVERIFY2(problems.isEmpty(), qPrintable(problems.join(QStringLiteral("\n"))));
        }
        if (const QByteArray dir = qgetenv("SHARDPLAN_SHOTS"); !dir.isEmpty()) {
            v->showSizing(false);
            QApplication::processEvents();
            QVERIFY(w.grab().save(QString::fromLocal8Bit(dir) + QStringLiteral("/serving-1280x720.png")));
            v->showPage(views::ServingView::Page::Sweep);
            QApplication::processEvents();
            QVERIFY(
                w.grab().save(QString::fromLocal8Bit(dir) + QStringLiteral("/serving-sweep-1280x720.png")));
            v->showSizing(true);
            QApplication::processEvents();
            QVERIFY(
                w.grab().save(QString::fromLocal8Bit(dir) + QStringLiteral("/serving-sizing-1280x720.png")));
        }
        // Every GPU type of the database is offered, none cut (the check boxes are buttons: checked above).
        QCOMPARE(qsizetype(v->sizing()->findChildren<QCheckBox*>().size()), qsizetype(gpuDatabase().size()));
    }
};

QTEST_MAIN(TestGuiServingLayout)
#include "tst_gui_serving_layout.moc"
