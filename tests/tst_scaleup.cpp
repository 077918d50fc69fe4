// The GPU database and scale-up domains: `gpu: <id>` in cluster files, NVL72 racks as one domain of 72, and
// what that does to the cost of an expert all-to-all.
#include "core/cost/collectives.h"
#include "core/cost/costmodel.h"
#include "core/io/formats.h"
#include "core/io/gpudb.h"

#include <QTest>

using namespace sp;

namespace {
const std::string kSamples = SHARDPLAN_SAMPLES_DIR;

Cluster cluster(const std::string& file) {
    auto c = loadCluster(kSamples + "/clusters/" + file);
    if (!c) qFatal("%s", c.error().str().c_str());
    return c.value();
}

// A group of `size` consecutive GPUs fills a scale-up domain before it spills into the next (the cost model's
// placement for the innermost axis).
GroupShape consecutive(const Cluster& c, int size) {
    const int per = std::min(size, c.gpusPerNode);
    return GroupShape{size, per, (size + per - 1) / per};
}
} // namespace

class TestScaleUp : public QObject {
    Q_OBJECT
private slots:
    void databaseHasEveryGpu() {
        for (const char* id : {"a100-sxm-80gb", "h100-sxm", "h100-nvl", "h200", "h20", "b200", "b300",
                               "gb200", "gb300", "mi300x", "mi325x", "mi355x", "l40s"}) {
            const GpuSpec* g = findGpu(id);
            QVERIFY2(g, id);
            QVERIFY2(!g->source.empty(), id);
            QVERIFY2(g->gpu.tflops[int(Dtype::BF16)] > 0 && g->gpu.hbmGB > 0 && g->gpu.hbmTBs > 0, id);
            QVERIFY2(g->scaleUp.gbPerS > 0 && g->scaleUpDomain > 0 && g->nicGbitPerGpu > 0, id);
        }
        // Figures against the datasheets (resources/gpus.yaml cites them): GB200 NVL72 is one domain of 72
        // with 1.8 TB/s per GPU (900 each way) and 10 PF dense FP4; MI300X has 192 GB at 5.3 TB/s.
        QCOMPARE(findGpu("gb200")->scaleUpDomain, 72);
        QCOMPARE(findGpu("gb200")->scaleUp.gbPerS, 900.0);
        QCOMPARE(findGpu("gb200")->gpu.tflops[int(Dtype::FP4)], 10000.0);
        QCOMPARE(findGpu("mi300x")->gpu.hbmGB, 192.0);
        QCOMPARE(findGpu("mi300x")->gpu.hbmTBs, 5.3);
    }

    void clusterByGpuId() {
        const Cluster nvl = cluster("gb200-nvl72-x2.yaml");
        QCOMPARE(nvl.gpus(), 144);
        QCOMPARE(nvl.gpusPerNode, 72);
        QCOMPARE(nvl.hostGpus(), 4);
        QCOMPARE(nvl.hosts(), 36);
        QCOMPARE(nvl.intraNode.gbPerS, 900.0);
        QCOMPARE(nvl.interNode.gbPerS, 400.0 / 8);
        // Written inline, read back the same (gpus_per_host kept).
        auto again = parseCluster(toYaml(nvl), "saved.yaml");
        QVERIFY2(again.ok(), again.error().str().c_str());
        QVERIFY(again.value() == nvl);

        auto unknown = parseCluster("kind: cluster\nnodes: 1\ngpu: b201\n", "c.yaml");
        QVERIFY(!unknown.ok());
        const std::string msg = unknown.error().str();
        QVERIFY2(msg.find("c.yaml:3:6") != std::string::npos, msg.c_str());
        QVERIFY2(msg.find("did you mean 'b200'") != std::string::npos, msg.c_str());
        QVERIFY2(msg.find("a100-sxm-80gb, h100-sxm") != std::string::npos &&
                     msg.find("l40s") != std::string::npos,
                 msg.c_str());
        auto badHost = parseCluster("kind: cluster\nnodes: 1\ngpu: gb200\ngpus_per_host: 5\n", "c.yaml");
        QVERIFY(!badHost.ok());
        QVERIFY(badHost.error().str().find("gpus_per_host") != std::string::npos);
    }

    // A 32-way all-to-all (an expert group of 32) of 64 MB per GPU: inside one NVL72 domain it runs on
    // NVLink, so its time does not move when the NIC gets 10x slower; on 144 B200 in 8-GPU hosts the same
    // group spans 4 hosts and crosses the network, and its time follows the NIC.
    void expertAllToAllStaysInNvl72() {
        const double bytes = 64e6;
        Cluster nvl = cluster("gb200-nvl72-x2.yaml");
        Cluster hgx = cluster("b200-18x8.yaml");
        const GroupShape inDomain = consecutive(nvl, 32), acrossHosts = consecutive(hgx, 32);
        QCOMPARE(inDomain.nodes, 1);
        QCOMPARE(acrossHosts.nodes, 4);
        const double tNvl = collectiveTime(Collective::AllToAll, inDomain, Net::of(nvl), bytes);
        const double tHgx = collectiveTime(Collective::AllToAll, acrossHosts, Net::of(hgx), bytes);
        qInfo("32-way all-to-all of 64 MB: NVL72 %.3f ms, 8-GPU hosts %.3f ms", tNvl * 1e3, tHgx * 1e3);
        QVERIFY2(tHgx > 3 * tNvl, qPrintable(QString("nvl72 %1 s, hgx %2 s").arg(tNvl).arg(tHgx)));
        Cluster nvlSlowNic = nvl, hgxSlowNic = hgx;
        nvlSlowNic.interNode.gbPerS /= 10;
        hgxSlowNic.interNode.gbPerS /= 10;
        QCOMPARE(collectiveTime(Collective::AllToAll, inDomain, Net::of(nvlSlowNic), bytes), tNvl);
        QVERIFY(collectiveTime(Collective::AllToAll, acrossHosts, Net::of(hgxSlowNic), bytes) > 5 * tHgx);
    }
};

QTEST_GUILESS_MAIN(TestScaleUp)
#include "tst_scaleup.moc"
