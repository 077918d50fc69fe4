// The cluster editor (views/clustereditor.*) and the scenario panel's Cluster box, offscreen: the GPU type
// sets the figures of resources/gpus.yaml, nodes and GPUs per domain and host, invalid values refused with
// their message and nothing lost, the saved file loads back equal, the box says "edited" after a change and
// what picking another sample changed, and the edits go through the window's undo.
#include "core/io/formats.h"
#include "core/io/gpudb.h"
#include "cluster_editor_fixtures.h"
#include "gui_fixtures.h"
#include "mainwindow.h"
#include "views/clustereditor.h"
#include "views/format.h"
#include "views/messagebanner.h"
#include "views/scenarioeditor.h"

#include <QAction>
#include <QComboBox>
#include <QDir>
#include <QGuiApplication>
#include <QLabel>
#include <QLineEdit>
#include <QProcess>
#include <QPushButton>
#include <QScreen>
#include <QSignalSpy>
#include <QStatusBar>
#include <QTemporaryDir>
#include <QTest>
#include <QUndoStack>

using namespace sp;
using sp::app::MainWindow;
using sp::views::ClusterEditor;
using sp::views::ScenarioEditor;
using namespace sp::testing;

namespace {

Scenario sampleScenario(const QString& name) {
    auto s = loadScenario(
        (kSamples + QStringLiteral("/scenarios/") + name + QStringLiteral(".yaml")).toStdString());
    if (!s) qFatal("%s", s.error().str().c_str());
    return s.value();
}

} // namespace

class TestClusterEditor : public QObject {
    Q_OBJECT
private slots:
    // Choosing B200 for a 4x8 H100 cluster: the GPU is gpus.yaml's b200 entry, and with it its NVLink, NIC
    // and family factors; the nodes stay.
    void gpuTypeSetsItsFigures() {
        ClusterEditor d(sampleCluster(QStringLiteral("h100-4x8")));
        d.show();
        QCOMPARE(d.gpuCombo()->currentData().toString(), QStringLiteral("h100-sxm"));
        QVERIFY(d.figuresText().contains(QStringLiteral("989 dense"))); // H100 SXM bf16, gpus.yaml
        QVERIFY(d.chooseGpu(QStringLiteral("b200")));
        const Cluster& c = d.cluster();
        QVERIFY(c.gpu == findGpu("b200")->gpu);
        // resources/gpus.yaml, b200: bf16 2,250, fp8 4,500, fp4 9,000 dense; 180 GB (183,359 MiB) at 7.7
        // TB/s; NVLink 5 900 GB/s one way in domains of 8; 400 Gb/s NIC per GPU (50 GB/s).
        QCOMPARE(c.gpu.name, std::string("B200 180GB (HGX B200)"));
        QCOMPARE(c.gpu.tflops[size_t(Dtype::BF16)], 2250.0);
        QCOMPARE(c.gpu.tflops[size_t(Dtype::FP8)], 4500.0);
        QCOMPARE(c.gpu.tflops[size_t(Dtype::FP4)], 9000.0);
        QCOMPARE(c.gpu.hbmGB, 180.0);
        QCOMPARE(c.gpu.memoryMiB, 183359.0);
        QCOMPARE(c.gpu.hbmTBs, 7.7);
        QCOMPARE(c.intraNode.gbPerS, 900.0);
        QCOMPARE(c.intraNode.name, std::string("NVLink 5 + NVSwitch"));
        QCOMPARE(c.gpusPerNode, 8);
        QCOMPARE(c.interNode.gbPerS, 50.0);
        QCOMPARE(c.nodes, 4);
        // Blackwell's fitted factors (gpus.yaml families: compute 0.4352, launch 14.66 us).
        QCOMPARE(c.efficiency.compute, 0.4352);
        QCOMPARE(c.efficiency.launchUs, 14.66);
        // The figures shown, with their source, and what the choice changed.
        const QString figs = d.figuresText();
        for (const char* s :
             {"4,500 dense", "9,000 dense", "2,250 dense", "180 GB", "183,359 MiB", "7.7 TB/s",
              "NVIDIA Blackwell", "900 GB/s per GPU one way, 8 GPUs per domain", "400 Gb/s per GPU",
              "NVIDIA HGX B200 datasheet; NVIDIA DGX B200 datasheet", "fitted on 49 measurements"})
            QVERIFY2(figs.contains(QLatin1String(s)), qPrintable(s + QStringLiteral(" not in:\n") + figs));
        QVERIFY2(d.gpuNote().contains(QStringLiteral("GPU H100 SXM5 80GB \u2192 B200 180GB (HGX B200)")),
                 qPrintable(d.gpuNote()));
        QVERIFY2(d.gpuNote().contains(QStringLiteral("NVLink 450 \u2192 900 GB/s per GPU")),
                 qPrintable(d.gpuNote()));
        QCOMPARE(d.field(QStringLiteral("nvlink_gb_s"))->text(), QStringLiteral("900"));
        // GB200: one NVLink domain of 72 (gpus.yaml gb200: bf16 2,500 dense, 186 GB at 8 TB/s).
        QVERIFY(d.chooseGpu(QStringLiteral("gb200")));
        QCOMPARE(d.cluster().gpusPerNode, 72);
        QCOMPARE(d.cluster().gpus(), 4 * 72);
        QCOMPARE(d.cluster().gpu.tflops[size_t(Dtype::BF16)], 2500.0);
        QCOMPARE(d.cluster().gpu.hbmGB, 186.0);
        QCOMPARE(d.field(QStringLiteral("gpus_per_node"))->text(), QStringLiteral("72"));
        // docs/desktop-planner.md's resources/screenshots/cluster-editor.png (SHARDPLAN_SHOTS=DIR
        // tst_cluster_editor).
        typeField(d, "name", QStringLiteral("4x72 GB200 NVL72"));
        shot(&d, QStringLiteral("cluster-editor.png"));
    }

    // A name that counts the cluster follows its GPU and counts ("32x8 H100 SXM" was kept for 16 x 8 H200s); one
    // the user typed stays. The scale-out network keeps its name (a GPU choice renamed it "NIC"). The file holds
    // each number in its shortest form (4.8, where "4.7999999999999998" was written).
    void nameFollowsNetworkKeepsNumbersShortest() {
        Cluster start = sampleCluster(QStringLiteral("h100-32x8"));
        QCOMPARE(start.name, std::string("32x8 H100 SXM"));
        start.interNode.name = "InfiniBand NDR";
        ClusterEditor d(start);
        d.show();
        typeField(d, "nodes", QStringLiteral("16"));
        QVERIFY(d.chooseGpu(QStringLiteral("h200")));
        QCOMPARE(d.cluster().name, "16x8 " + findGpu("h200")->gpu.name);
        QCOMPARE(d.cluster().interNode.name, std::string("InfiniBand NDR"));
        typeField(d, "name", QStringLiteral("prod pod"));
        typeField(d, "nodes", QStringLiteral("12"));
        QVERIFY(d.chooseGpu(QStringLiteral("b200")));
        QCOMPARE(d.cluster().name, std::string("prod pod"));
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("c.yaml"));
        Cluster h200 = d.cluster();
        h200.gpu = findGpu("h200")->gpu;   // 4.8 TB/s (gpus.yaml h200)
        h200.gpu.name = "H200 lab sample"; // no database entry's: written inline, with its figures
        QVERIFY(views::saveClusterFile(h200, path));
        QFile f(path);
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QString text = QString::fromUtf8(f.readAll());
        QVERIFY2(text.contains(QStringLiteral("hbm_tb_s: 4.8\n")), qPrintable(text));
        QVERIFY2(!text.contains(QStringLiteral("99999")), qPrintable(text));
        auto back = loadCluster(path.toStdString());
        QVERIFY(back.ok());
        QCOMPARE(back->gpu.hbmTBs, 4.8);
        QCOMPARE(back->efficiency, h200.efficiency);
    }

    // A cluster whose GPU is not in the database keeps it listed first, with the file's own figures.
    void ownGpuListedFirst() {
        Cluster c = sampleCluster(QStringLiteral("h100-4x8"));
        c.gpu.name = "H100 lab sample";
        c.gpu.hbmTBs = 3.0;
        ClusterEditor d(c);
        QCOMPARE(d.gpuCombo()->currentIndex(), 0);
        QVERIFY(d.gpuCombo()->currentText().contains(QStringLiteral("H100 lab sample")));
        QVERIFY(d.figuresText().contains(QStringLiteral("the cluster file's own figures")));
        QVERIFY(d.chooseGpu(QStringLiteral("h200")));
        QCOMPARE(d.cluster().gpu.hbmGB, 141.0); // gpus.yaml h200: 141 GB
        d.gpuCombo()->setCurrentIndex(0);       // and back
        QVERIFY(d.cluster().gpu == c.gpu);
        QVERIFY(d.cluster().efficiency == c.efficiency);
    }

    // Nodes, GPUs per NVLink domain and per host: 6 domains of 4 = 24 GPUs in 12 hosts of 2.
    void nodesAndGpusPerNode() {
        ClusterEditor d(sampleCluster(QStringLiteral("h100-4x8")));
        d.show();
        typeField(d, "nodes", QStringLiteral("6"));
        typeField(d, "gpus_per_node", QStringLiteral("4"));
        typeField(d, "gpus_per_host", QStringLiteral("2"));
        QVERIFY2(d.isValid(), qPrintable(d.errors().join(QLatin1Char('\n'))));
        QCOMPARE(d.cluster().nodes, 6);
        QCOMPARE(d.cluster().gpusPerNode, 4);
        QCOMPARE(d.cluster().gpusPerHost, 2);
        QCOMPARE(d.cluster().gpus(), 24);
        QCOMPARE(d.cluster().hosts(), 12);
        // A host as large as the domain is no host size of its own (as the file reader has it).
        typeField(d, "gpus_per_host", QStringLiteral("4"));
        QCOMPARE(d.cluster().gpusPerHost, 0);
        // The summary line: 6 x 4 = 24 GPUs; 24 / 4 = 6 hosts of 4 (one host per domain).
        // With a price per GPU-hour the line adds the cluster's: 24 x the price an hour.
        QString expected = QStringLiteral("24 GPUs: 6 NVLink domain(s) of 4, 6 host(s) of 4");
        if (d.cluster().pricePerGpuHour > 0)
            expected +=
                QStringLiteral("; $%1 an hour").arg(views::formatInteger(24 * d.cluster().pricePerGpuHour));
        bool summary = false;
        for (QLabel* l : d.findChildren<QLabel*>()) summary = summary || l->text() == expected;
        QVERIFY2(summary, qPrintable(expected));
    }

    // Refused with a message, outlined, the text kept; the cluster keeps its last valid value, Apply and Save
    // refuse, and fixing the field applies it together with the valid edits made meanwhile.
    void invalidValuesRefused_data() {
        QTest::addColumn<QString>("key");
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("message");
        QTest::addColumn<QString>("fixed");
        QTest::addRow("0 nodes") << "nodes"
                                 << "0"
                                 << "expected a whole number from 1 to 100,000"
                                 << "5";
        QTest::addRow("host not dividing the domain") << "gpus_per_host"
                                                      << "3"
                                                      << "must divide the GPUs per NVLink domain (8)"
                                                      << "2";
        QTest::addRow("no NVLink bandwidth") << "nvlink_gb_s"
                                             << ""
                                             << "give the link's GB/s per GPU"
                                             << "450";
        QTest::addRow("several nodes without a NIC") << "nic_gbit_s"
                                                     << ""
                                                     << "4 nodes need a NIC bandwidth"
                                                     << "400";
        QTest::addRow("not a number") << "nvlink_latency_us"
                                      << "3 us"
                                      << "expected a number"
                                      << "3";
    }
    void invalidValuesRefused() {
        QFETCH(QString, key);
        QFETCH(QString, text);
        QFETCH(QString, message);
        QFETCH(QString, fixed);
        const Cluster before = sampleCluster(QStringLiteral("h100-4x8"));
        ClusterEditor d(before);
        d.show();
        QVERIFY(QTest::qWaitForWindowExposed(&d));
        typeField(d, "name", QStringLiteral("my cluster")); // a valid edit before
        QCOMPARE(d.cluster().name, std::string("my cluster"));
        Cluster valid = d.cluster();
        typeField(d, key.toLatin1().constData(), text);
        QVERIFY(!d.isValid());
        QVERIFY2(d.fieldError(key).contains(message), qPrintable(d.fieldError(key)));
        QVERIFY(d.field(key)->property("invalid").toBool());
        QVERIFY(!d.field(key)->styleSheet().isEmpty());
        QCOMPARE(d.field(key)->text(), text); // the text typed stays
        QVERIFY(d.cluster() == valid);
        // The message is shown under the field.
        bool shown = false;
        for (QLabel* l : d.findChildren<QLabel*>())
            shown = shown || (l->isVisible() && l->text().contains(message));
        QVERIFY(shown);
        QVERIFY(!d.applyButton()->isEnabled());
        d.accept();
        QVERIFY(d.isVisible()); // not closed
        QCOMPARE(d.result(), int(QDialog::Rejected));
        QTemporaryDir dir;
        QString error;
        QVERIFY(!d.saveAs(dir.filePath(QStringLiteral("c.yaml")), &error));
        QVERIFY2(error.contains(message), qPrintable(error));
        QVERIFY(!QFileInfo::exists(dir.filePath(QStringLiteral("c.yaml"))));
        // A valid edit made meanwhile is kept; fixing the field applies both.
        typeField(d, "nodes" == key ? "name" : "nodes",
                  "nodes" == key ? QStringLiteral("mine") : QStringLiteral("4"));
        QVERIFY(d.cluster() == valid);
        typeField(d, key.toLatin1().constData(), fixed);
        QVERIFY2(d.isValid(), qPrintable(d.errors().join(QLatin1Char('\n'))));
        QVERIFY(d.fieldError(key).isEmpty());
        QVERIFY(!d.field(key)->property("invalid").toBool());
        QVERIFY(d.applyButton()->isEnabled());
        if (key == QLatin1String("nodes")) {
            QCOMPARE(d.cluster().name, std::string("mine"));
            QCOMPARE(d.cluster().nodes, 5);
        }
        if (key == QLatin1String("gpus_per_host")) QCOMPARE(d.cluster().hosts(), 16);
    }

    // Every sample cluster, and one edited in every field, saved and read back by the core reader: equal.
    // The price per GPU-hour: choosing a GPU puts in the database's (a dated cloud list price), the user's
    // own is kept with its source, is saved as price_per_gpu_hour and reads back; a negative price is
    // refused.
    void pricePerGpuHour() {
        ClusterEditor d(sampleCluster(QStringLiteral("h100-4x8")));
        d.show();
        QVERIFY(d.chooseGpu(QStringLiteral("b200")));
        const GpuSpec* b200 = findGpu("b200");
        QVERIFY(b200 && b200->pricePerHourUsd > 0);
        QCOMPARE(d.cluster().pricePerGpuHour, b200->pricePerHourUsd);
        QCOMPARE(d.cluster().priceSource, b200->priceSource);
        QCOMPARE(d.field(QStringLiteral("price_per_gpu_hour"))->text().toDouble(), b200->pricePerHourUsd);
        typeField(d, "price_per_gpu_hour", QStringLiteral("-1"));
        QVERIFY(!d.isValid());
        QVERIFY(!d.fieldError(QStringLiteral("price_per_gpu_hour")).isEmpty());
        typeField(d, "price_per_gpu_hour", QStringLiteral("3.25"));
        QVERIFY2(d.isValid(), qPrintable(d.errors().join(QLatin1Char('\n'))));
        QCOMPARE(d.cluster().pricePerGpuHour, 3.25);
        QCOMPARE(d.cluster().priceSource, std::string("the cluster file's price_per_gpu_hour"));
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("priced.yaml"));
        QVERIFY(d.saveAs(path));
        auto back = loadCluster(path.toStdString());
        QVERIFY2(back.ok(), back.error().str().c_str());
        QCOMPARE(back->pricePerGpuHour, 3.25);
        // 4 nodes x 8 B200 at $3.25: $104 an hour.
        bool summary = false;
        for (QLabel* l : d.findChildren<QLabel*>())
            summary = summary || l->text().endsWith(QStringLiteral("; $104 an hour"));
        QVERIFY(summary);
    }

    void savedFileLoadsBackEqual_data() {
        QTest::addColumn<QString>("sample");
        for (const QFileInfo& fi :
             QDir(kSamples + QStringLiteral("/clusters")).entryInfoList({QStringLiteral("*.yaml")}))
            QTest::addRow("%s", qPrintable(fi.completeBaseName())) << fi.completeBaseName();
    }
    void savedFileLoadsBackEqual() {
        QFETCH(QString, sample);
        QTemporaryDir dir;
        ClusterEditor d(sampleCluster(sample));
        const QString same = dir.filePath(QStringLiteral("same.yaml"));
        QSignalSpy saved(&d, &ClusterEditor::saved);
        QVERIFY(d.saveAs(same));
        QCOMPARE(saved.count(), 1);
        auto back = loadCluster(same.toStdString());
        QVERIFY2(back.ok(), back.error().str().c_str());
        QVERIFY(back.value() == sampleCluster(sample));

        QVERIFY(d.chooseGpu(QStringLiteral("b300")));
        typeField(d, "name", QStringLiteral("20x8 B300, reserved"));
        typeField(d, "nodes", QStringLiteral("20"));
        typeField(d, "gpus_per_host", QStringLiteral("4"));
        typeField(d, "nvlink_latency_us", QStringLiteral("2.5"));
        typeField(d, "nic_gbit_s", QStringLiteral("800"));
        typeField(d, "nic_name", QStringLiteral("ConnectX-8"));
        QVERIFY2(d.isValid(), qPrintable(d.errors().join(QLatin1Char('\n'))));
        // The dialog asks where (the window's file dialogs answer it there) and adds the suffix.
        QString proposed;
        d.setAskPath([&](const QString&, const QString& name, const QString&) {
            proposed = name;
            return dir.filePath(QStringLiteral("edited"));
        });
        auto* save = [&d]() -> QPushButton* {
            for (QPushButton* b : d.findChildren<QPushButton*>())
                if (b->text() == QStringLiteral("Save As...")) return b;
            return nullptr;
        }();
        QVERIFY(save);
        save->click();
        QCOMPARE(proposed, QStringLiteral("20x8-b300-reserved.yaml"));
        const QString edited = dir.filePath(QStringLiteral("edited.yaml"));
        QVERIFY(QFileInfo::exists(edited));
        auto again = loadCluster(edited.toStdString());
        QVERIFY2(again.ok(), again.error().str().c_str());
        QVERIFY(again.value() == d.cluster());
        QCOMPARE(again.value().nodes, 20);
        QCOMPARE(again.value().gpusPerHost, 4);
        QCOMPARE(again.value().interNode.gbPerS, 100.0); // 800 Gb/s
        QVERIFY(again.value().gpu == findGpu("b300")->gpu);
    }

    // A GPU from the database is saved as `gpu: <id>` (it was written inline, figures only), so the file
    // reads back to the same entry: its figures, price and fitted factors with their sources, and the
    // editor opens on it; a price of the user's is written. (A GPU of the file's own stays inline: above.)
    void databaseGpuSavedById() {
        QTemporaryDir dir;
        ClusterEditor d(sampleCluster(QStringLiteral("h100-4x8")));
        QVERIFY(d.chooseGpu(QStringLiteral("b300")));
        typeField(d, "nodes", QStringLiteral("6"));
        const QString path = dir.filePath(QStringLiteral("b300.yaml"));
        QVERIFY(d.saveAs(path));
        const QString text = readAll(path);
        QVERIFY2(text.contains(QStringLiteral("\ngpu: b300\n")), qPrintable(text));
        QVERIFY2(!text.contains(QStringLiteral("hbm_gb")), qPrintable(text));
        // The database's price and Blackwell's fitted factors are what `gpu: b300` reads: not repeated.
        QVERIFY2(!text.contains(QStringLiteral("price_per_gpu_hour")), qPrintable(text));
        QVERIFY2(!text.contains(QStringLiteral("efficiency")), qPrintable(text));
        auto back = loadCluster(path.toStdString());
        QVERIFY2(back.ok(), back.error().str().c_str());
        QVERIFY(back.value() == d.cluster());
        const GpuSpec* b300 = findGpu("b300");
        QCOMPARE(views::databaseGpu(back->gpu), b300);
        QCOMPARE(back->priceSource, b300->priceSource);
        QCOMPARE(back->efficiencySource, familySource(findGpuFamily(b300->family), b300->gpu.name));
        ClusterEditor again(back.value());
        QCOMPARE(again.gpuCombo()->currentData().toString(), QStringLiteral("b300"));

        // Every database GPU, on two nodes, with a price of the user's: its id, and the price.
        for (const GpuSpec& g : gpuDatabase()) {
            Cluster c = clusterOf(g, 2);
            c.pricePerGpuHour = 1.25;
            const QString p = dir.filePath(views::qs(g.id) + QStringLiteral(".yaml"));
            QVERIFY(views::saveClusterFile(c, p));
            const QString t = readAll(p);
            QVERIFY2(t.contains(QStringLiteral("\ngpu: %1\n").arg(views::qs(g.id))), qPrintable(t));
            QVERIFY2(t.contains(QStringLiteral("price_per_gpu_hour: 1.25")), qPrintable(t));
            auto r = loadCluster(p.toStdString());
            QVERIFY2(r.ok(), r.error().str().c_str());
            QVERIFY2(r.value() == c, g.id.c_str());
            QCOMPARE(views::databaseGpu(r->gpu), &g);
        }
    }

    // The file the editor saves is one the CLI reads: `shardplan validate` on it names the chosen GPU and the
    // counts typed. B300 in 20 domains of 8, hosts of 4: 20 x 8 = 160 GPUs, 160 / 4 = 40 hosts.
    void savedFileReadByTheCli() {
        QTemporaryDir dir;
        ClusterEditor d(sampleCluster(QStringLiteral("h100-4x8")));
        QVERIFY(d.chooseGpu(QStringLiteral("b300")));
        typeField(d, "name", QStringLiteral("lab B300"));
        typeField(d, "nodes", QStringLiteral("20"));
        typeField(d, "gpus_per_host", QStringLiteral("4"));
        QVERIFY2(d.isValid(), qPrintable(d.errors().join(QLatin1Char('\n'))));
        const QString path = dir.filePath(QStringLiteral("lab.yaml"));
        QVERIFY(d.saveAs(path));
        QProcess cli;
        cli.start(QStringLiteral(SHARDPLAN_CLI),
                  {QStringLiteral("validate"), QStringLiteral("--kind"), QStringLiteral("cluster"), path});
        QVERIFY(cli.waitForFinished(20000));
        const QString out = QString::fromUtf8(cli.readAllStandardOutput()).trimmed();
        QVERIFY2(cli.exitCode() == 0, qPrintable(QString::fromUtf8(cli.readAllStandardError())));
        QCOMPARE(out,
                 path + QStringLiteral(": cluster lab B300: 160 GPUs (20x8 B300 288GB (HGX B300), 40 hosts "
                                       "of 4)"));
    }

    // The Cluster box names the sample while the cluster is the sample's, "<sample> (edited)" once a field
    // changes it (the tooltip says what changed), and the sample again when the edit is undone by hand.
    void clusterBoxSaysEdited() {
        ScenarioEditor ed(kSamples);
        ed.setScenario(sampleScenario(QStringLiteral("deepseek-v3-b200-18x8")));
        QComboBox* box = ed.pickerCombo(FileKind::Cluster);
        QCOMPARE(box->currentText(), QStringLiteral("b200-18x8"));
        QSignalSpy edits(&ed, &ScenarioEditor::edited);
        typeInto(ed.field(QStringLiteral("nodes")), QStringLiteral("64"));
        QCOMPARE(edits.count(), 2); // "6", "64"
        QCOMPARE(ed.scenario().cluster.nodes, 64);
        QCOMPARE(box->currentText(), QStringLiteral("b200-18x8 (edited)"));
        const QString tip = box->itemData(box->currentIndex(), Qt::ToolTipRole).toString();
        QVERIFY2(tip.contains(QStringLiteral("nodes 18 \u2192 64")), qPrintable(tip));
        typeInto(ed.field(QStringLiteral("gpus_per_node")), QStringLiteral("4"));
        QCOMPARE(box->currentText(), QStringLiteral("b200-18x8 (edited)"));
        typeInto(ed.field(QStringLiteral("gpus_per_node")), QStringLiteral("8"));
        typeInto(ed.field(QStringLiteral("nodes")), QStringLiteral("18"));
        QCOMPARE(box->currentText(), QStringLiteral("b200-18x8"));
        // A cluster that is no sample's under another name: custom.
        Scenario s = ed.scenario();
        s.cluster.name = "lab cluster";
        ed.setScenario(s);
        QCOMPARE(box->currentText(), QStringLiteral("lab cluster (custom)"));
    }

    // Picking another sample takes the file as it is (b200-18x8 is 18 nodes of 8) and says what that changed,
    // the node count first; the note goes when the cluster is edited again.
    void pickingAClusterSaysWhatChanged() {
        ScenarioEditor ed(kSamples);
        ed.resize(420, 900);
        ed.show();
        ed.setScenario(sampleScenario(QStringLiteral("llama-3.1-70b-h100-4x8")));
        typeInto(ed.field(QStringLiteral("nodes")), QStringLiteral("64"));
        QCOMPARE(ed.scenario().cluster.nodes, 64);
        QVERIFY(ed.clusterNote().isEmpty());
        QComboBox* box = ed.pickerCombo(FileKind::Cluster);
        const int b200 = box->findText(QStringLiteral("b200-18x8"));
        QVERIFY(b200 >= 0);
        box->setCurrentIndex(b200);
        emit box->activated(b200);
        QCOMPARE(ed.scenario().cluster.nodes, 18);
        QCOMPARE(box->currentText(), QStringLiteral("b200-18x8"));
        const QString note = ed.clusterNote();
        for (const char* s :
             {"b200-18x8: ", "nodes 64 \u2192 18", "GPUs in all 512 \u2192 144",
              "GPU H100 SXM5 80GB \u2192 B200 180GB (HGX B200)", "HBM 80 \u2192 180 GB",
              "NVLink 450 \u2192 900 GB/s per GPU", "efficiency: NVIDIA Blackwell's factors", "Edit > Undo"})
            QVERIFY2(note.contains(QString::fromUtf8(s)), qPrintable(s + QStringLiteral(" not in: ") + note));
        shot(&ed, QStringLiteral("scenario-panel-picked.png"));
        typeInto(ed.field(QStringLiteral("nodes")), QStringLiteral("9"));
        QVERIFY(ed.clusterNote().isEmpty());
        QCOMPARE(box->currentText(), QStringLiteral("b200-18x8 (edited)"));
        shot(&ed, QStringLiteral("scenario-panel-edited.png"));
        // The same sample again changes nothing else than the nodes.
        emit box->activated(box->findText(QStringLiteral("b200-18x8")));
        QCOMPARE(ed.clusterNote(), QStringLiteral("b200-18x8: nodes 9 \u2192 18; GPUs in all 72 \u2192 144. "
                                                  "Edit > Undo takes it back."));
    }

    // The panel's Nodes field refuses a second node where the cluster has no NIC (a one-node file may leave
    // inter_node out): collectives across nodes would have no link to run over.
    void panelNodesNeedANic() {
        ScenarioEditor ed(kSamples);
        ed.show();
        ed.setScenario(sampleScenario(QStringLiteral("llama-3.1-70b-mi300x-1x8")));
        QCOMPARE(ed.scenario().cluster.interNode.gbPerS, 0.0);
        typeInto(ed.field(QStringLiteral("nodes")), QStringLiteral("2"));
        QVERIFY2(ed.fieldError(QStringLiteral("nodes")).contains(QStringLiteral("no NIC between nodes")),
                 qPrintable(ed.fieldError(QStringLiteral("nodes"))));
        QCOMPARE(ed.scenario().cluster.nodes, 1);
        QCOMPARE(ed.field(QStringLiteral("nodes"))->text(), QStringLiteral("2"));
    }

    // The panel's GPUs per node keeps the hosts whole: the NVL72 sample's domains are 18 hosts of 4, so 70 is
    // refused (70 / 4 is no whole number of hosts), its text kept, and 36 (9 hosts of 4) taken.
    void panelGpusPerNodeKeepsHostsWhole() {
        ScenarioEditor ed(kSamples);
        ed.show();
        ed.setScenario(sampleScenario(QStringLiteral("deepseek-v3-gb200-nvl72-x2")));
        QCOMPARE(ed.scenario().cluster.gpusPerHost, 4);
        typeInto(ed.field(QStringLiteral("gpus_per_node")), QStringLiteral("70"));
        QVERIFY2(ed.fieldError(QStringLiteral("gpus_per_node"))
                     .contains(QStringLiteral("must be a multiple of the GPUs per host (4)")),
                 qPrintable(ed.fieldError(QStringLiteral("gpus_per_node"))));
        QCOMPARE(ed.scenario().cluster.gpusPerNode, 72);
        QCOMPARE(ed.field(QStringLiteral("gpus_per_node"))->text(), QStringLiteral("70"));
        typeInto(ed.field(QStringLiteral("gpus_per_node")), QStringLiteral("36"));
        QVERIFY(ed.fieldError(QStringLiteral("gpus_per_node")).isEmpty());
        QCOMPARE(ed.scenario().cluster.gpusPerNode, 36);
        QCOMPARE(ed.scenario().cluster.hosts(), 18); // 2 x 36 / 4
    }

    // In the window: Edit > Edit Cluster opens the editor on the scenario's cluster; Apply is one undoable
    // edit; File > Save Cluster As writes the scenario's cluster and the box then names that file.
    void windowEditsWithUndoAndSaves() {
        QTemporaryDir dir;
        MainWindow::Options o = testOptions();
        QString asked;
        o.fileAnswer = [&](const QString& title, const QString&, const QString&) {
            asked = title;
            return dir.filePath(QStringLiteral("my-cluster"));
        };
        MainWindow w(o);
        w.show();
        QVERIFY(w.openScenario(kSamples + QStringLiteral("/scenarios/llama-3.1-70b-h100-4x8.yaml")));
        ScenarioEditor* ed = w.scenarioEditor();
        QAction* edit = w.action(QStringLiteral("editCluster"));
        QVERIFY(edit);
        QCOMPARE(edit->text(), QStringLiteral("Edit &Cluster..."));
        edit->trigger();
        ClusterEditor* d = ed->clusterEditor();
        QVERIFY(d);
        QTRY_VERIFY(d->isVisible());
        QVERIFY(d->isModal());
        QVERIFY(d->cluster() == ed->scenario().cluster);
        QVERIFY(d->chooseGpu(QStringLiteral("h200")));
        typeField(*d, "nodes", QStringLiteral("8"));
        d->applyButton()->click();
        QTRY_VERIFY(!ed->clusterEditor()); // closed and deleted
        QCOMPARE(ed->scenario().cluster.nodes, 8);
        QCOMPARE(ed->scenario().cluster.gpu.hbmGB, 141.0);
        QCOMPARE(ed->field(QStringLiteral("nodes"))->text(), QStringLiteral("8"));
        // The name counted the cluster, so it follows ("4x8 H100 SXM" is not 8 x 8 H200s), and the picker
        // names the edited cluster by it.
        QCOMPARE(ed->pickerCombo(FileKind::Cluster)->currentText(),
                 QString::fromStdString("8x8 " + findGpu("h200")->gpu.name) + QStringLiteral(" (custom)"));
        // Its name, so it follows ("4x8 H100 SXM" is not 8 x 8 H200s).
        QCOMPARE(ed->scenario().cluster.name, "8x8 " + findGpu("h200")->gpu.name);
        QVERIFY2(ed->clusterNote().contains(QStringLiteral("nodes 4 \u2192 8")), qPrintable(ed->clusterNote()));
        QVERIFY2(ed->clusterNote().contains(QStringLiteral("4x8 H100 SXM")), qPrintable(ed->clusterNote()));
        QUndoStack* undo = w.scenarioUndo()->stack();
        QCOMPARE(undo->count(), 1);
        QCOMPARE(undo->undoText(), QStringLiteral("Edit cluster"));
        w.action(QStringLiteral("undo"))->trigger();
        QCOMPARE(ed->scenario().cluster, sampleCluster(QStringLiteral("h100-4x8")));
        QCOMPARE(ed->pickerCombo(FileKind::Cluster)->currentText(), QStringLiteral("h100-4x8"));
        w.action(QStringLiteral("redo"))->trigger();
        QCOMPARE(ed->scenario().cluster.nodes, 8);
        // Cancel changes nothing.
        edit->trigger();
        QTRY_VERIFY(ed->clusterEditor());
        typeField(*ed->clusterEditor(), "nodes", QStringLiteral("2"));
        ed->clusterEditor()->reject();
        QTRY_VERIFY(!ed->clusterEditor());
        QCOMPARE(ed->scenario().cluster.nodes, 8);
        QCOMPARE(undo->count(), 1);

        QAction* save = w.action(QStringLiteral("saveClusterAs"));
        QVERIFY(save);
        save->trigger();
        QCOMPARE(asked, QStringLiteral("Save Cluster As"));
        const QString path = dir.filePath(QStringLiteral("my-cluster.yaml"));
        auto back = loadCluster(path.toStdString());
        QVERIFY2(back.ok(), back.error().str().c_str());
        QVERIFY(back.value() == ed->scenario().cluster);
        QCOMPARE(ed->pickerCombo(FileKind::Cluster)->currentText(), QStringLiteral("my-cluster"));
        QVERIFY(w.statusBar()->currentMessage().contains(QStringLiteral("my-cluster.yaml")));
        // A failed write says where and why and leaves the scenario as it was.
        w.fileDialogs().setAnswer([&](const QString&, const QString&, const QString&) {
            return dir.filePath(QStringLiteral("no-such-dir/c.yaml"));
        });
        save->trigger();
        QVERIFY(!QFileInfo::exists(dir.filePath(QStringLiteral("no-such-dir/c.yaml"))));
        QVERIFY2(w.messageBanner()->text().contains(QStringLiteral("no-such-dir")),
                 qPrintable(w.messageBanner()->text()));
        QCOMPARE(ed->scenario().cluster.nodes, 8);
    }
};

QTEST_MAIN(TestClusterEditor)
#include "tst_cluster_editor.moc"
