#pragma once
// Alpha-beta costs of NCCL-style collectives on the two-level hierarchy (NVLink inside a node, one NIC per
// GPU across nodes). A group is placed as `perNode` GPUs on each of `nodes` nodes.
//
// Bandwidth terms follow the ring algorithms (hierarchical across nodes: reduce-scatter inside the node, the
// inter-node ring on 1/perNode of the data over every GPU's own NIC at once, all-gather inside the node);
// latency terms are log-depth, as NCCL switches to tree/LL algorithms for the small messages where latency
// matters. Payload conventions (bytes per GPU): all-reduce, reduce-scatter and all-gather/gather: the full
// tensor; all-to-all: the data one GPU holds before the exchange.

#include "core/model/cluster.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <vector>

namespace sp {

enum class Collective;

/// Achieved link figures of a cluster, in bytes/s and seconds.
struct Net {
    double bwIntra = 0, bwInter = 0, alphaIntra = 0, alphaInter = 0;
    double meshLink = 0; ///< a point-to-point domain's achieved bytes/s of one link; 0 behind a switch
    bool pcie = false;   ///< the scale-up link is PCIe (NCCL's PCI latencies, no LL128)
    /// Bytes/s a GPU moves to `perNode - 1` peers in its node at once: all of bwIntra behind a switch, the
    /// links to them in a point-to-point mesh.
    double intra(double perNode) const {
        return meshLink > 0 ? std::min(bwIntra, std::max(1.0, perNode - 1.0) * meshLink) : bwIntra;
    }
    static Net of(const Cluster& c) {
        Net n;
        n.bwIntra = c.intraNode.gbPerS * 1e9 * c.efficiency.intraNode;
        n.meshLink = c.intraNode.meshLinkGbPerS * 1e9 * c.efficiency.intraNode;
        n.bwInter = c.interNode.gbPerS * 1e9 * c.efficiency.interNode;
        if (n.bwInter <= 0) n.bwInter = n.bwIntra; // single node: never used
        n.alphaIntra = c.intraNode.latencyUs * 1e-6;
        n.alphaInter = c.interNode.latencyUs * 1e-6;
        n.pcie = c.intraNode.name.find("PCIe") != std::string::npos;
        return n;
    }
};

/// A group of `size` GPUs, `perNode` on each of `nodes` nodes (the most on one node where they are uneven;
/// `fewest` then holds the least, 0 where every node holds `perNode`).
struct GroupShape {
    int size = 1, perNode = 1, nodes = 1;
    int fewest = 0;
    int fewestPerNode() const { return fewest > 0 ? fewest : perNode; }
};

inline double log2ceil(int n) {
    // ceil(log2(n)) as an integer: the bits of n - 1 (2^(k-1) < n <= 2^k gives k). Equal to the floating
    // form for every int (its log2 of a non-power of two is never within rounding of an integer), without a
    // libm call on every collective of every plan.
    return n <= 1 ? 0.0 : double(std::bit_width(unsigned(n - 1)));
}

/// Seconds per payload byte (see the payload conventions above).
double collectiveSecondsPerByte(Collective k, GroupShape g, const Net& n);
/// Fixed seconds per call.
double collectiveAlpha(Collective k, GroupShape g, const Net& n);

/// A collective's time as the least of up to five alpha-beta lines: time = min_i (alpha[i] + bytes *
/// secPerByte[i]) over the first `lines` whose maxBytes[i] holds the message.
struct CommLines {
    static constexpr int kMax = 5;
    int lines = 1;
    double alpha[kMax] = {}, secPerByte[kMax] = {};
    double maxBytes[kMax] = {HUGE_VAL, HUGE_VAL, HUGE_VAL, HUGE_VAL, HUGE_VAL};
    /// The same function as segments of one line each, found once (envelope()): segment i holds for bytes up
    /// to segEnd[i] (the last to HUGE_VAL), so a time is one comparison per segment and one line.
    static constexpr int kSegs = 16;
    int segs = 0;
    double segEnd[kSegs] = {}, segAlpha[kSegs] = {}, segSlope[kSegs] = {};
    /// The least of the valid lines at `bytes` (the definition).
    double at(double bytes) const {
        double t = HUGE_VAL;
        for (int i = 0; i < lines; ++i)
            if (bytes <= maxBytes[i]) t = std::min(t, alpha[i] + secPerByte[i] * bytes);
        return t;
    }
    /// Fills the segments: between consecutive candidate points (the lines' crossings and their limits) one
    /// line is the least throughout, the one least at the interval's middle.
    void envelope();
    /// at(bytes) through the segments.
    double fast(double bytes) const {
        int i = 0;
        while (bytes > segEnd[i]) ++i;
        return segAlpha[i] + segSlope[i] * bytes;
    }
};

/// The cost lines of a collective. An all-reduce, reduce-scatter or all-gather inside one node is priced as
/// NCCL prices its ring (src/graph/tuning.cc, NVIDIA/nccl at b6475625): three protocols, each a latency (a
/// base plus a per-step hardware latency over the ring's 2 (n - 1) or n - 1 steps) and a bus bandwidth, and
/// NCCL runs whichever is fastest for the message. LL: base 6.6 us, 0.6 us a step over NVLink (1.0 over
/// PCIe), a quarter of the bus bandwidth for an all-reduce (a third otherwise), at most 87.7 GB/s; LL128
/// (NVLink only): 14 us, 1.9 us a step, 0.92 of it; Simple: 8.4 us, 3.4 us a step (5.7 over PCIe), all of it. The bus bandwidth is the link's times intra_node (so a fitted
/// intra_node is the large-message efficiency). Small messages (a decode step's) pay the latency of LL at a
/// quarter of the bandwidth, large ones (a prefill chunk's) stream at the full bus bandwidth: the single
/// alpha-beta line it replaces could fit only one of the two.
/// An all-reduce of 2, 4, 6 or 8 GPUs of one fully connected domain (a switch, or a point-to-point mesh such
/// as AMD's Infinity Fabric, where vLLM on ROCm runs the same kernel) up to 8 MiB also has the engines' own kernel: vLLM's custom all-reduce (vllm/distributed/device_communicators/custom_all_reduce.py:
/// max_size 8192 * 1024, world sizes 2, 4, 6, 8, a fully connected domain; csrc/custom_all_reduce.cuh at
/// 036bb685), which SGLang runs too and TensorRT-LLM has its own of (one-shot and two-shot). One stage (under
/// 512 KiB on up to 4 GPUs, 256 KiB on 8): each GPU reads its n - 1 peers' buffers, between two barriers;
/// two stages: a reduce-scatter and an all-gather through the peers' buffers, (n - 1) / n of the message each,
/// three barriers. A barrier is a flag over the link: one link latency (the cluster's latency_us). No NCCL
/// ring step latency, so the middle sizes of a decode step (0.25-8 MiB) cost a third to a half of NCCL's.
/// Any other collective, and one across nodes: the one line of collectiveAlpha and collectiveSecondsPerByte.
CommLines collectiveLines(Collective k, GroupShape g, const Net& n);

/// The lines of every collective that has several on a cluster (an all-reduce, reduce-scatter or all-gather
/// inside one node), computed once per scenario for each kind and group size: a plan's terms point at them
/// instead of each holding its own.
class CommLineTable {
public:
    CommLineTable() = default;
    CommLineTable(const Net& n, int gpusPerNode);
    /// The entry for the kind and group; null where the collective has one line.
    const CommLines* find(Collective k, GroupShape g) const {
        const int slot = slotOf(k);
        if (slot < 0 || g.nodes != 1 || g.size <= 1 || g.size >= perKind_) return nullptr;
        return &lines_[size_t(slot * perKind_ + g.size)];
    }

private:
    static int slotOf(Collective k);
    int perKind_ = 0;
    std::vector<CommLines> lines_;
};
/// alpha + bytes * secondsPerByte.
inline double collectiveTime(Collective k, GroupShape g, const Net& n, double bytes) {
    return g.size <= 1 ? 0.0 : collectiveAlpha(k, g, n) + bytes * collectiveSecondsPerByte(k, g, n);
}

} // namespace sp
