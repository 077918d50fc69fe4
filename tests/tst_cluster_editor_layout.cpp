// The cluster editor's layout (views/clustereditor.*), offscreen: it fits a 1280x720 screen with every
// field's message shown, and at that size every text it shows is whole (the efficiency factors' fit, the
// price with its dated source and the datasheets were cut after two lines).
#include "core/io/formats.h"
#include "core/io/gpudb.h"
#include "cluster_editor_fixtures.h"
#include "gui_fixtures.h"
#include "mainwindow.h"
#include "views/clustereditor.h"
#include "views/scenarioeditor.h"

#include <QAction>
#include <QComboBox>
#include <QDir>
#include <QLabel>
#include <QTest>

using namespace sp;
using sp::app::MainWindow;
using sp::views::ClusterEditor;
using namespace sp::testing;

class TestClusterEditorLayout : public QObject {
    Q_OBJECT
private slots:
    // The dialog fits a 1280x720 screen, with every field's message shown.
    void fitsALaptopScreen_data() {
        QTest::addColumn<QString>("sample");
        QTest::addRow("h100-4x8") << "h100-4x8";
        QTest::addRow("gb200-nvl72-x2") << "gb200-nvl72-x2";
        QTest::addRow("mi300x-1x8") << "mi300x-1x8";
    }
    void fitsALaptopScreen() {
        QFETCH(QString, sample);
        ClusterEditor d(sampleCluster(sample));
        d.show();
        QVERIFY(QTest::qWaitForWindowExposed(&d));
        // A title bar and frame take about 40 px of the 720.
        const QSize hint = d.sizeHint();
        QVERIFY2(hint.width() <= 1280 && hint.height() <= 680,
                 qPrintable(QStringLiteral("%1x%2").arg(hint.width()).arg(hint.height())));
        for (const char* key : {"name", "nodes", "gpus_per_node", "gpus_per_host", "nvlink_gb_s",
                                "nvlink_latency_us", "mesh_link_gb_s", "nic_gbit_s", "nic_latency_us"})
            typeField(d, key, QStringLiteral("-x"));
        QCOMPARE(d.errors().size(), 8); // every field but the name, which may be "-x"
        const QSize bad = d.sizeHint();
        QVERIFY2(bad.width() <= 1280 && bad.height() <= 680,
                 qPrintable(QStringLiteral("with errors %1x%2").arg(bad.width()).arg(bad.height())));
        d.resize(d.sizeHint());
        shot(&d, QStringLiteral("cluster-editor-errors-%1.png").arg(sample));
    }

    // Opened from the window at 1280x720, with each GPU of the database chosen in turn (and the cluster
    // file's own GPU): every label's text is whole, none wider than its label nor taller than it at its
    // width (the figures' Efficiency, Price and Source rows were cut to two lines), and the dialog stays on
    // the screen.
    void everyTextReadable_data() {
        QTest::addColumn<QString>("sample");
        QTest::addColumn<bool>("ownGpu");
        QTest::addRow("h100-4x8") << "h100-4x8" << false;
        QTest::addRow("own GPU") << "h100-4x8" << true;
    }
    void everyTextReadable() {
        QFETCH(QString, sample);
        QFETCH(bool, ownGpu);
        MainWindow w(testOptions());
        w.resize(1280, 720);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        Scenario s = w.scenarioEditor()->scenario();
        s.cluster = sampleCluster(sample);
        if (ownGpu) s.cluster.gpu.name = "H100 lab sample, measured in our own lab by the team in 2026";
        w.scenarioEditor()->replaceCluster(s.cluster, QString());
        w.action(QStringLiteral("editCluster"))->trigger();
        ClusterEditor* d = w.scenarioEditor()->clusterEditor();
        QVERIFY(d);
        QTRY_VERIFY(d->isVisible());
        auto check = [&](const QString& what) {
            QTest::qWait(20); // word-wrapped labels are laid out from queued events
            const QStringList cut = cutLabels(d);
            QVERIFY2(cut.isEmpty(), qPrintable(what + QStringLiteral(": ") + cut.join(QStringLiteral("; "))));
            QVERIFY2(d->width() <= 1280 && d->height() <= 680,
                     qPrintable(QStringLiteral("%1: %2x%3").arg(what).arg(d->width()).arg(d->height())));
        };
        check(d->gpuCombo()->currentText());
        for (const GpuSpec& g : gpuDatabase()) {
            QVERIFY(d->chooseGpu(QString::fromStdString(g.id)));
            check(QString::fromStdString(g.id));
            if (QTest::currentTestFailed()) return;
        }
        shot(d, QStringLiteral("cluster-editor-%1.png").arg(QLatin1String(QTest::currentDataTag())));
        d->reject();
    }
};

QTEST_MAIN(TestClusterEditorLayout)
#include "tst_cluster_editor_layout.moc"
