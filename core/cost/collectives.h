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

namespace sp {

enum class Collective;

/// Achieved link figures of a cluster, in bytes/s and seconds.
struct Net {
    double bwIntra = 0, bwInter = 0, alphaIntra = 0, alphaInter = 0;
    double meshLink = 0; ///< a point-to-point domain's achieved bytes/s of one link; 0 behind a switch
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
/// alpha + bytes * secondsPerByte.
inline double collectiveTime(Collective k, GroupShape g, const Net& n, double bytes) {
    return g.size <= 1 ? 0.0 : collectiveAlpha(k, g, n) + bytes * collectiveSecondsPerByte(k, g, n);
}

} // namespace sp
