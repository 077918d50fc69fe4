#pragma once
// Where a plan's groups of GPUs land on the cluster's nodes: their shapes (nodes spanned, GPUs per node) and
// link class, counted on every evaluation and so inline. Internal to core/cost.

#include "core/cost/collectives.h"
#include "core/cost/costmodel.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

namespace sp::costimpl {

inline LinkClass linkOf(const GroupShape& g) {
    return g.size <= 1 ? LinkClass::Local : g.nodes > 1 ? LinkClass::Network : LinkClass::NvLink;
}

/// The shape of a group of `size` GPUs whose nodes come in non-decreasing order, `nodeAt(i)` the i-th.
template <class NodeAt> GroupShape shapeOfSorted(int size, const NodeAt& nodeAt) {
    GroupShape g;
    g.size = size;
    if (size <= 1) return g;
    int nodes = 0, run = 0, most = 0, fewest = size, last = -1;
    for (int i = 0; i < size; ++i) {
        const int node = nodeAt(i);
        if (node != last) {
            if (run > 0) fewest = std::min(fewest, run);
            ++nodes, run = 0, last = node;
        }
        most = std::max(most, ++run);
    }
    fewest = std::min(fewest, run);
    g.nodes = nodes;
    g.perNode = most;
    g.fewest = fewest < most ? fewest : 0;
    return g;
}

/// Members {a*sa + b*sb : a < ka, b < kb} of a mesh with gpn GPUs per node: how many nodes they span and the
/// most on one node. With the larger stride outermost the ids increase, so one pass counts them.
inline GroupShape placeCounted(int ka, int sa, int kb, int sb, int gpn) {
    if (sa > sb) std::swap(ka, kb), std::swap(sa, sb);
    // Member i = a + b ka is GPU a sa + b sb; runs of consecutive members on one node are counted as
    // shapeOfSorted counts them, a node at a time rather than a member at a time (groups run to thousands
    // of GPUs, and this is on every evaluation).
    GroupShape g;
    g.size = ka * kb;
    if (g.size <= 1) return g;
    int nodes = 0, run = 0, most = 0, fewest = g.size, last = -1;
    auto feed = [&](int node, int members) {
        if (node != last) {
            if (run > 0) fewest = std::min(fewest, run);
            ++nodes, run = 0, last = node;
        }
        most = std::max(most, run += members);
    };
    for (int b = 0; b < kb; ++b) {
        const int id0 = b * sb;
        for (int a = 0; a < ka;) {
            const int node = (id0 + a * sa) / gpn;
            // the members of this row below the next node's first GPU
            const int upTo = std::min(ka, ((node + 1) * gpn - id0 + sa - 1) / sa);
            feed(node, upTo - a);
            a = upTo;
        }
    }
    fewest = std::min(fewest, run);
    g.nodes = nodes;
    g.perNode = most;
    g.fewest = fewest < most ? fewest : 0;
    return g;
}

/// placeCounted, remembered: a plan's groups take a few shapes among many plans, and counting one takes a
/// pass per node or per row, with two integer divisions each (a one-GPU-a-node pipeline group of 64 stages,
/// an expert group of 256 rows of one GPU). A table per thread keeps the latest shape of each slot: 2,048
/// slots (72 KiB), as the 1.6T sample's plans alone place some thousand groups (256 slots lost a tenth of its
/// evaluation speed to recounting, bench --eval-speed).
constexpr uint32_t kPlaceSlots = 2048;
inline uint32_t placeSlot(int ka, int sa, int kb, int sb, int gpn) {
    const uint32_t h = (uint32_t(ka) * 2654435761u) ^ (uint32_t(sa) * 40503u) ^ (uint32_t(kb) * 2246822519u) ^
                       (uint32_t(sb) * 3266489917u) ^ uint32_t(gpn);
    return (h ^ (h >> 15)) & (kPlaceSlots - 1);
}
inline GroupShape place(int ka, int sa, int kb, int sb, int gpn) {
    struct Entry {
        int ka = -1, sa = 0, kb = 0, sb = 0, gpn = 0;
        GroupShape g;
    };
    thread_local std::array<Entry, kPlaceSlots> table;
    Entry& e = table[placeSlot(ka, sa, kb, sb, gpn)];
    if (e.ka == ka && e.sa == sa && e.kb == kb && e.sb == sb && e.gpn == gpn) return e.g;
    e = {ka, sa, kb, sb, gpn, placeCounted(ka, sa, kb, sb, gpn)};
    return e.g;
}

/// The first k members, in tp-first order (rank r at (r % tp) * sTp + (r / tp) * sDp), of a mesh with gpn
/// GPUs per node: an expert replica that takes whole tp groups and part of the next (ep * etp = 12 over
/// tp groups of 8 holds one group and half of another).
inline GroupShape placeFirst(int k, int tp, int sTp, int sDp, int gpn) {
    if (k <= 1) return shapeOfSorted(k, [](int) { return 0; });
    std::vector<int> node(static_cast<size_t>(k));
    for (int r = 0; r < k; ++r) node[size_t(r)] = ((r % tp) * sTp + (r / tp) * sDp) / gpn;
    std::sort(node.begin(), node.end());
    return shapeOfSorted(k, [&](int i) { return node[size_t(i)]; });
}

} // namespace sp::costimpl
