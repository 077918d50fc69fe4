// The planner window's layout at the sizes users run it at: it fits 1280x720 on every sample; at 1600x1000
// the scenario panel shows its constraints without scrolling and the elite table ten rows; the panel's width
// survives a resize.
#include "gui_fixtures.h"
#include "mainwindow.h"
#include "views/elitemodel.h"
#include "views/runpanel.h"
#include "views/scenarioeditor.h"
#include "views/searchchart.h"
#include "views/timeline.h"
#include "windowactions.h"

#include <QAction>
#include <QDir>
#include <QDockWidget>
#include <QGraphicsTextItem>
#include <QGraphicsView>
#include <QGroupBox>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QRegularExpression>
#include <QScrollArea>
#include <QScrollBar>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTableView>
#include <QTest>
#include <QTextDocument>
#include <QToolButton>

using namespace sp;
using sp::app::MainWindow;
using namespace sp::testing;

namespace {
/// Runs every searcher the panel lists on a short budget, and waits for the chart's throttled redraw.
bool runEverySearcher(MainWindow& w) {
    w.runPanel()->setSelectedSearchers(w.runPanel()->searchers());
    w.runPanel()->setBudget(300);
    QSignalSpy done(&w, &MainWindow::searchFinished);
    w.startSearch();
    const bool ended = done.wait(240000) || done.count() > 0;
    QTest::qWait(100);
    return ended;
}

QGroupBox* groupTitled(QWidget* in, const QString& title) {
    for (QGroupBox* g : in->findChildren<QGroupBox*>())
        if (g->title() == title) return g;
    return nullptr;
}
} // namespace

class TestLayout : public QObject {
    Q_OBJECT
private slots:
    // At 1600x1000 the Constraints group is whole inside the scenario panel's viewport, unscrolled, for a
    // dense and a MoE model on one node (the MoE one has an EP row). On 256 GPUs and more each degree row
    // wraps to two lines and the panel scrolls.
    void constraintsVisibleWithoutScrolling_data() {
        QTest::addColumn<QString>("path");
        QTest::addRow("dense") << kDefault;
        QTest::addRow("moe") << kSamples + QStringLiteral("/scenarios/mixtral-8x22b-h100-1x8.yaml");
    }
    void constraintsVisibleWithoutScrolling() {
        QFETCH(QString, path);
        MainWindow w(testOptions());
        w.resize(1600, 1000);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QVERIFY(w.openScenario(path));
        QTest::qWait(50);
        auto* scroll = qobject_cast<QScrollArea*>(w.scenarioDock()->widget());
        QVERIFY(scroll);
        QCOMPARE(scroll->verticalScrollBar()->value(), 0);
        QGroupBox* constraints = groupTitled(w.scenarioEditor(), QStringLiteral("Constraints"));
        QVERIFY(constraints);
        const QRect r(constraints->mapTo(scroll->viewport(), QPoint(0, 0)), constraints->size());
        // Laid out at its natural height (nothing squeezed), the editor fits: nothing to scroll to.
        const int natural = w.scenarioEditor()->sizeHint().height();
        QVERIFY2(natural <= scroll->viewport()->height(),
                 qPrintable(QStringLiteral("the panel needs %1 px, its viewport is %2 px high")
                                .arg(natural)
                                .arg(scroll->viewport()->height())));
        QVERIFY2(r.top() >= 0 && r.bottom() < scroll->viewport()->height(),
                 qPrintable(QStringLiteral("constraints at %1..%2, viewport %3 px high (editor %4)")
                                .arg(r.top())
                                .arg(r.bottom())
                                .arg(scroll->viewport()->height())
                                .arg(w.scenarioEditor()->height())));
    }

    void eliteTableShowsTenRows() {
        MainWindow w(testOptions());
        w.resize(1600, 1000);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QVERIFY(w.openScenario(kDefault));
        QVERIFY(shortSearch(w, 300));
        QVERIFY(w.eliteModel()->rowCount() >= 10);
        QTableView* t = w.eliteView();
        const int rowH = t->verticalHeader()->defaultSectionSize();
        QVERIFY2(t->viewport()->height() >= 10 * rowH,
                 qPrintable(QStringLiteral("%1 px for rows of %2").arg(t->viewport()->height()).arg(rowH)));
        // The Sharding column (what tells alike rows apart) follows the degrees, inside the view.
        const QHeaderView* h = t->horizontalHeader();
        QCOMPARE(h->visualIndex(views::EliteModel::Sharding), h->visualIndex(views::EliteModel::Degrees) + 1);
        const int right = h->sectionViewportPosition(views::EliteModel::Sharding) +
                          h->sectionSize(views::EliteModel::Sharding);
        QVERIFY2(h->sectionSize(views::EliteModel::Sharding) >= 150 && right <= t->viewport()->width(),
                 qPrintable(QStringLiteral("%1 px wide, ends at %2 of %3")
                                .arg(h->sectionSize(views::EliteModel::Sharding))
                                .arg(right)
                                .arg(t->viewport()->width())));
        // The toolbar's Export Plan button has its own icon, not Save's.
        QAction* exp = w.action(QStringLiteral("exportPlan"));
        QCOMPARE(exp->iconText(), QStringLiteral("Export Plan"));
        QVERIFY(exp->icon().cacheKey() != w.action(QStringLiteral("saveSession"))->icon().cacheKey());
    }

    // A 1280x720 laptop screen: on every sample the window's minimum size fits it, and at that size the
    // scenario panel, the search panel's Start button, the view tabs and the elite table are shown with
    // room to use them.
    void fitsLaptopScreen_data() {
        QTest::addColumn<QString>("path");
        const QDir dir(kSamples + QStringLiteral("/scenarios"));
        for (const QString& f : dir.entryList({QStringLiteral("*.yaml")}, QDir::Files, QDir::Name))
            QTest::addRow("%s", qPrintable(f)) << dir.filePath(f);
    }
    void fitsLaptopScreen() {
        QFETCH(QString, path);
        MainWindow w(testOptions());
        w.resize(1280, 720);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QVERIFY(w.openScenario(path));
        // Every view once, as a user looks at them: each may ask for more room.
        for (int i = 0; i < w.tabs()->count(); ++i) {
            w.tabs()->setCurrentIndex(i);
            QTest::qWait(5);
        }
        w.tabs()->setCurrentIndex(0);
        QTest::qWait(20);
        const QSize min = w.minimumSizeHint().expandedTo(w.minimumSize());
        QVERIFY2(min.width() <= 1280 && min.height() <= 720,
                 qPrintable(QStringLiteral("minimum %1x%2").arg(min.width()).arg(min.height())));
        QCOMPARE(w.size(), QSize(1280, 720));
        auto shown = [&](QWidget* x, int minW, int minH) {
            const QRect r(x->mapTo(&w, QPoint(0, 0)), x->size());
            return x->isVisible() && r.width() >= minW && r.height() >= minH && w.rect().contains(r);
        };
        QVERIFY(shown(w.scenarioDock(), 300, 200));
        QVERIFY(shown(w.tabs(), 600, 250));
        QVERIFY(shown(w.eliteView(), 600, 100));
        QPushButton* start = nullptr;
        for (QPushButton* b : w.runPanel()->findChildren<QPushButton*>())
            if (b->text().contains(QStringLiteral("Start"))) start = b;
        QVERIFY(start);
        QVERIFY(shown(start, 40, 16));
    }

    // Hovering a Timeline item shows its description above the canvas; the longest one (a collective's with
    // its group and bytes, or an operator's with its times) wraps, it never widens the window.
    void timelineHoverKeepsWindowWidth() {
        MainWindow w(testOptions());
        w.resize(1280, 720);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QVERIFY(w.openScenario(kSamples + QStringLiteral("/scenarios/deepseek-v3-gb200-nvl72-x2.yaml")));
        w.showTab(MainWindow::Tab::Timeline);
        QTest::qWait(20);
        const int minWidth = w.minimumSizeHint().width();
        views::TimelineCanvas* canvas = w.timelineView()->canvas();
        int longest = -1;
        qsizetype chars = 0;
        for (int i = 0; i < int(canvas->timeline().items.size()); ++i)
            if (canvas->itemDescription(i).size() > chars)
                chars = canvas->itemDescription(i).size(), longest = i;
        // On one line, wider than the tab (about 730 px at 1280 wide).
        const QString plain =
            canvas->itemDescription(longest).remove(QRegularExpression(QStringLiteral("<[^>]*>")));
        QVERIFY2(w.fontMetrics().horizontalAdvance(plain) > 900, qPrintable(plain));
        canvas->setHoveredItem(longest);
        QTest::qWait(20);
        QCOMPARE(w.minimumSizeHint().width(), minWidth);
        QCOMPARE(w.width(), 1280);
        QVERIFY(w.minimumSizeHint().width() <= 1280);
        // All of it readable: the line wraps within the tab, tall enough for its lines.
        QLabel* info = nullptr;
        for (QLabel* l : w.timelineView()->findChildren<QLabel*>())
            if (l->text() == canvas->itemDescription(longest).replace(QStringLiteral("<br>"),
                                                                      QStringLiteral(" &middot; ")))
                info = l;
        QVERIFY(info);
        const QRect r(info->mapTo(&w, QPoint(0, 0)), info->size());
        QVERIFY(w.rect().contains(r));
        QVERIFY2(info->wordWrap() && info->heightForWidth(info->width()) <= info->height(),
                 qPrintable(QStringLiteral("%1 px wide, %2 px high").arg(info->width()).arg(info->height())));
    }

    // A run of every searcher at 1280x720 leaves the window's minimum width as it was: the elite table's
    // caption ("50 distinct plan(s), best first; ...") on one line widened it from 832 to 1,061 px, and the
    // chart's summary, naming every searcher tied for the best, would have.
    void everySearcherKeepsTheWidth() {
        MainWindow w(testOptions());
        w.resize(1280, 720);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QVERIFY(w.openScenario(kDefault));
        QTest::qWait(20);
        const int before = w.minimumSizeHint().width();
        QVERIFY(runEverySearcher(w));
        QVERIFY2(w.minimumSizeHint().width() <= before,
                 qPrintable(QStringLiteral("minimum width %1 after the run, %2 before")
                                .arg(w.minimumSizeHint().width())
                                .arg(before)));
        QCOMPARE(w.width(), 1280);
    }

    // After that run, the chart's legend shows every searcher's name and best whole, at 1280x720 (a chart
    // legend keeps one row and elided them: "rand...").
    void everySearcherInTheLegend() {
        MainWindow w(testOptions());
        w.resize(1280, 720);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QVERIFY(w.openScenario(kDefault));
        QVERIFY(runEverySearcher(w));
        // What the chart shows as text: its labels, and the chart's own text items.
        views::SearchChart* chart = w.chart();
        QStringList texts;
        for (QLabel* l : chart->findChildren<QLabel*>())
            if (l->isVisible()) {
                QTextDocument doc;
                doc.setHtml(l->text());
                // Line breaks and non-breaking spaces as spaces: an entry may take two lines.
                texts << doc.toPlainText()
                             .replace(QChar(0xa0), QLatin1Char(' '))
                             .replace(QChar(0x2028), QLatin1Char(' '))
                             .simplified();
            }
        for (QGraphicsView* v : chart->findChildren<QGraphicsView*>())
            for (QGraphicsItem* it : v->scene()->items())
                if (auto* t = dynamic_cast<QGraphicsTextItem*>(it); t && t->isVisible())
                    texts << t->toPlainText().simplified();
        const QString shown = texts.join(QLatin1Char('\n'));
        QCOMPARE(chart->searchers().size(), w.runPanel()->searchers().size());
        for (const QString& s : chart->searchers()) {
            // "random-seq  45.2k tok/s" (legendText("megatron") names the reference line: the searcher's own
            // line is that text too).
            const QString entry = s == QLatin1String("megatron") ? QStringLiteral("megatron ")
                                                                 : chart->legendText(s).simplified();
            QVERIFY2(entry.startsWith(s), qPrintable(entry));
            QVERIFY2(shown.contains(entry),
                     qPrintable(QStringLiteral("'%1' not shown whole in:\n%2").arg(entry, shown)));
        }
        QVERIFY2(shown.contains(chart->legendText(QStringLiteral("megatron")).simplified()),
                 qPrintable(shown));
        // Beside the plot, which keeps most of the tab's width.
        QVERIFY2(chart->legend()->width() < chart->width() / 3,
                 qPrintable(
                     QStringLiteral("legend %1 of %2 px").arg(chart->legend()->width()).arg(chart->width())));
        const QStringList cut = cutLabels(chart);
        QVERIFY2(cut.isEmpty(), qPrintable(cut.join(QStringLiteral("; "))));
    }

    // Help > Keyboard Shortcuts (F1) lists every shortcut of the window's actions (Ctrl+2 to Ctrl+6 as the
    // range "Ctrl+1 ... Ctrl+7").
    void shortcutListIsComplete() {
        MainWindow w(testOptions());
        const QString help = app::WindowActions::shortcutsHelp();
        int checked = 0;
        for (QAction* a : w.findChildren<QAction*>()) {
            for (const QKeySequence& k : a->shortcuts()) {
                const QString key = k.toString(QKeySequence::PortableText);
                if (QRegularExpression(QStringLiteral("^Ctrl\\+[2-6]$")).match(key).hasMatch()) continue;
                ++checked;
                QVERIFY2(help.contains(QStringLiteral("<b>") + key) ||
                             help.contains(QStringLiteral(" ") + key),
                         qPrintable(QStringLiteral("%1 (%2) is not listed").arg(key, a->text())));
            }
        }
        QVERIFY(checked >= 15);
        QVERIFY(help.contains(QStringLiteral("Ctrl+1 ... Ctrl+7")));
    }

    void scenarioPanelWidthSurvivesResize() {
        MainWindow w(testOptions());
        w.resize(1600, 1000);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QVERIFY(w.openScenario(kDefault));
        w.resize(1040, 700);
        QTest::qWait(100);
        w.resize(1600, 1000);
        QTest::qWait(100);
        auto* scroll = qobject_cast<QScrollArea*>(w.scenarioDock()->widget());
        QVERIFY(scroll);
        // The editor fits beside the scroll bar: its "..." buttons are inside the viewport.
        QVERIFY2(scroll->viewport()->width() >= w.scenarioEditor()->minimumSizeHint().width(),
                 qPrintable(QStringLiteral("%1 < %2")
                                .arg(scroll->viewport()->width())
                                .arg(w.scenarioEditor()->minimumSizeHint().width())));
        for (QToolButton* b : w.scenarioEditor()->findChildren<QToolButton*>()) {
            if (b->text() != QStringLiteral("\u2026")) continue;
            const QPoint right = b->mapTo(scroll->viewport(), QPoint(b->width() - 1, 0));
            QVERIFY(right.x() < scroll->viewport()->width());
        }
    }
};

QTEST_MAIN(TestLayout)
#include "tst_layout.moc"
