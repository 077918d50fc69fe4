// The GPU database and scale-up domains: `gpu: <id>` in cluster files, NVL72 racks as one domain of 72, and
// what that does to the cost of an expert all-to-all.
#include "core/cost/collectives.h"
#include "core/cost/compiled.h"
#include "core/cost/costmodel.h"
#include "core/io/formats.h"
#include "core/io/gpudb.h"
#include "core/model/quant.h"

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

    // Every GPU belongs to a family; a cluster of it runs with the family's fitted factors and says so, or
    // says that nothing was fitted for it; factors of the cluster file's own win and are named as such.
    void familyFactors() {
        for (const auto& g : gpuDatabase()) QVERIFY2(findGpuFamily(g.family), g.id.c_str());
        const GpuFamily* cdna3 = findGpuFamily(findGpu("mi300x")->family);
        QVERIFY(cdna3 && cdna3->fitted && cdna3->measurements > 0 && !cdna3->fittedOn.empty());
        const Cluster amd = cluster("mi300x-1x8.yaml");
        QCOMPARE(amd.efficiency, cdna3->efficiency);
        QVERIFY(amd.efficiency.compute != Efficiency{}.compute); // not Hopper's
        QVERIFY2(amd.efficiencySource.find("fitted on " + std::to_string(cdna3->measurements) +
                                           " measurements") != std::string::npos,
                 amd.efficiencySource.c_str());
        // An unfitted family (Ada: no published measurements here) runs with Hopper's factors and says it.
        auto l40s = parseCluster("kind: cluster\nnodes: 1\ngpu: l40s\n", "c.yaml");
        QVERIFY(l40s.ok());
        QCOMPARE(l40s->efficiency, Efficiency{});
        QVERIFY2(l40s->efficiencySource.find("no measurements for L40S") != std::string::npos,
                 l40s->efficiencySource.c_str());
        // The file's own factor replaces the family's, the others stay the family's.
        auto own =
            parseCluster("kind: cluster\nnodes: 1\ngpu: mi300x\nefficiency: {compute: 0.5}\n", "c.yaml");
        QVERIFY(own.ok());
        QCOMPARE(own->efficiency.compute, 0.5);
        QCOMPARE(own->efficiency.kvRead, cdna3->efficiency.kvRead);
        QVERIFY(own->efficiencySource.rfind("the cluster file's own factors", 0) == 0);
    }

    // AMD's Infinity Fabric is point to point: a ring all-reduce among g of its 8 GPUs uses g - 1 of the 64
    // GB/s links (7 x 128 GB/s both ways, the MI300X data sheet), not the 448 GB/s of all seven. By hand, bus
    // time per byte of one pass, (g - 1) / g / bandwidth, times 2 for an all-reduce: TP2 2 x 1/2 / 64e9 =
    // 1/64e9 s a byte, TP8 2 x 7/8 / 448e9 (all seven links), at intra_node efficiency 1.
    void meshDomain() {
        Cluster c = cluster("mi300x-1x8.yaml");
        QCOMPARE(c.intraNode.meshLinkGbPerS, 64.0);
        c.efficiency.intraNode = 1.0;
        const Net n = Net::of(c);
        QCOMPARE(collectiveSecondsPerByte(Collective::AllReduce, {2, 2, 1}, n), 1.0 / 64e9);
        QCOMPARE(collectiveSecondsPerByte(Collective::AllReduce, {8, 8, 1}, n), 2.0 * 7.0 / 8.0 / 448e9);
        QCOMPARE(collectiveSecondsPerByte(Collective::AllReduce, {4, 4, 1}, n), 2.0 * 3.0 / 4.0 / 192e9);
        // Behind a switch (H100 NVLink) a pair gets the whole 450 GB/s.
        Cluster h = cluster("h100-1x8.yaml");
        h.efficiency.intraNode = 1.0;
        QCOMPARE(collectiveSecondsPerByte(Collective::AllReduce, {2, 2, 1}, Net::of(h)), 1.0 / 450e9);
    }

    // A collective's time is the least of its lines (core/cost/collectives.h). On the H100 node at intra_node
    // 0.6 (a bus of 270 GB/s), 3 us a link step, an 8-GPU all-reduce, by hand:
    //  - 64 KiB: the engines' one-stage kernel, 2 x 3 us + 65,536 x 7 / 270e9 = 7.70 us (two stages:
    //    9 + 0.42; NCCL's LL: 6.6 + 14 x 0.6 = 15 us of latency alone);
    //  - 4 MiB: two stages, 3 x 3 us + 4,194,304 x 2 x 7/8 / 270e9 = 36.18 us (one stage stops at 256 KiB;
    //    NCCL's LL128 40.6 + 29.5, Simple 8.4 + 14 x 3.4 + 27.2 = 83.2, LL 15 + 108.7);
    //  - 64 MiB: past the engines' 8 MiB, NCCL's Simple: 56 + 67,108,864 x 1.75 / 270e9 = 490.96 us (LL128
    //    40.6 + 472.8).
    // Across two nodes the one hierarchical line; over PCIe, NCCL's LL and Simple with PCIe's step latencies.
    void collectiveLinesByHand() {
        Cluster h = cluster("h100-1x8.yaml");
        h.efficiency.intraNode = 0.6;
        h.intraNode.latencyUs = 3;
        const Net n = Net::of(h);
        const CommLineTable table(n, 8);
        auto us = [&](Collective k, GroupShape g, double bytes) {
            costimpl::CommTerm t;
            t.kind = k, t.group = g, t.bytesPerTok = bytes;
            t.price(n, table);
            return t.time(1.0) * 1e6;
        };
        const double bus = 450e9 * 0.6;
        QVERIFY(std::abs(us(Collective::AllReduce, {8, 8, 1}, 65536) - (6.0 + 65536 * 7 / bus * 1e6)) < 1e-9);
        QVERIFY(std::abs(us(Collective::AllReduce, {8, 8, 1}, 4194304) - (9.0 + 4194304 * 1.75 / bus * 1e6)) <
                1e-9);
        QVERIFY(std::abs(us(Collective::AllReduce, {8, 8, 1}, 67108864) -
                         (8.4 + 14 * 3.4 + 67108864 * 1.75 / bus * 1e6)) < 1e-9);
        QVERIFY(std::abs(us(Collective::AllReduce, {8, 8, 1}, 65536) - 7.70) < 0.01);
        QVERIFY(std::abs(us(Collective::AllReduce, {8, 8, 1}, 4194304) - 36.18) < 0.01);
        QVERIFY(std::abs(us(Collective::AllReduce, {8, 8, 1}, 67108864) - 490.96) < 0.01);
        // A reduce-scatter has no engine kernel: NCCL's LL at 512 KiB, 6.6 + 7 x 0.6 us and 7/8 of the bytes at
        // a third of the bus (90 GB/s, over LL's 87.7 cap): 10.8 + 5.23 us.
        QVERIFY(std::abs(us(Collective::ReduceScatter, {8, 8, 1}, 524288) - (10.8 + 524288 * 0.875 / 87.7e9 * 1e6)) <
                1e-9);
        // Two nodes: collectiveAlpha + bytes x collectiveSecondsPerByte, one line.
        const GroupShape two{16, 8, 2};
        QVERIFY(std::abs(us(Collective::AllReduce, two, 4194304) -
                         (collectiveAlpha(Collective::AllReduce, two, n) +
                          4194304 * collectiveSecondsPerByte(Collective::AllReduce, two, n)) *
                             1e6) < 1e-9);
        // PCIe: no LL128 and no engine kernel; at 64 KiB, LL with PCIe's 1.0 us a step: 6.6 + 14 + 65,536 x 1.75
        // / (a quarter of the bus).
        Cluster pcie = h;
        pcie.intraNode.name = "PCIe Gen5";
        const Net np = Net::of(pcie);
        const CommLineTable pcieTable(np, 8);
        costimpl::CommTerm t;
        t.kind = Collective::AllReduce, t.group = {8, 8, 1}, t.bytesPerTok = 65536;
        t.price(np, pcieTable);
        QVERIFY(t.multi);
        QCOMPARE(t.multi->lines, 2);
        QVERIFY(std::abs(t.time(1.0) * 1e6 - (20.6 + 65536 * 1.75 / (bus / 4) * 1e6)) < 1e-9);
    }

    // The segments a scenario's table prices with (CommLines::fast) are the least of the valid lines
    // (CommLines::at) everywhere: from 1 byte to 1 GiB in steps of 2^(1/8), and at every line's limit and
    // just past it (where an engine kernel stops taking the message), on a switch, a mesh and PCIe.
    void collectiveSegmentsAreTheEnvelope() {
        Cluster pcie = cluster("h100-1x8.yaml");
        pcie.intraNode.name = "PCIe Gen5";
        for (const Cluster& c : {cluster("h100-1x8.yaml"), cluster("mi300x-1x8.yaml"), pcie}) {
            const CommLineTable table(Net::of(c), 8);
            for (Collective k : {Collective::AllReduce, Collective::ReduceScatter, Collective::AllGather})
                for (int p : {2, 4, 8}) {
                    const CommLines* l = table.find(k, {p, p, 1});
                    QVERIFY(l);
                    QVERIFY(l->segs >= 1);
                    std::vector<double> bytes;
                    for (double b = 1; b < 1.1e9; b *= std::pow(2.0, 0.125)) bytes.push_back(b);
                    for (int i = 0; i < l->lines; ++i)
                        if (std::isfinite(l->maxBytes[i]))
                            bytes.push_back(l->maxBytes[i]), bytes.push_back(std::nextafter(l->maxBytes[i], 1e300));
                    for (double b : bytes)
                        QVERIFY2(std::abs(l->fast(b) / l->at(b) - 1) < 1e-12,
                                 qPrintable(QString("%1 bytes: %2 against %3").arg(b).arg(l->fast(b)).arg(l->at(b))));
                }
            // Across nodes, or a kind without NCCL's ring: no entry (one line).
            QVERIFY(!table.find(Collective::AllReduce, {16, 8, 2}));
            QVERIFY(!table.find(Collective::AllToAll, {8, 8, 1}));
        }
        // A scale-up link of no bandwidth (a file may say 0): every line infinite past 0 bytes, and so the segments.
        Cluster none = cluster("h100-1x8.yaml");
        none.intraNode.gbPerS = 0;
        const CommLineTable table(Net::of(none), 8);
        const CommLines* l = table.find(Collective::AllReduce, {8, 8, 1});
        QVERIFY(l && l->segs >= 1);
        QVERIFY(std::isinf(l->fast(65536)) && std::isinf(l->at(65536)));
    }

    // FP4 GEMMs run at compute_fp4 of the FP4 peak where it is set: an NVFP4 model's expert GEMMs on a B200
    // at half the factor take, where compute-bound, twice the time.
    void fp4ComputeFactor() {
        auto s = loadScenario(kSamples + "/scenarios/qwen3-235b-b200-1x8.yaml");
        QVERIFY(s.ok());
        Scenario a = s.value();
        a.model.quant = nvfp4Quant();
        a.workload.phase = Phase::Prefill;
        a.workload.fixedBatch = true, a.workload.batch = 8;
        a.cluster.efficiency.computeFp4 = 0.6;
        Scenario b = a;
        b.cluster.efficiency.computeFp4 = 0.3;
        Plan p = CostModel(a).megatronPlan();
        p.overlap = Overlap::Off; // one schedule for both (auto may split the slower one into two halves)
        auto experts = [&](const Scenario& sc) {
            for (const auto& o : CostModel(sc).explain(p).prefill.ops)
                if (o.op == "experts") return o.computeMs;
            return -1.0;
        };
        const double ca = experts(a), cb = experts(b);
        QVERIFY(ca > 0);
        QVERIFY2(std::abs(cb / ca - 2.0) < 1e-9, qPrintable(QString("%1 vs %2").arg(ca).arg(cb)));
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
