#pragma once
// Internal to core/search: the search space's state. space.cpp builds it (the degree trie, the operator
// masks, the count); space_walk.cpp reads it (masks, sampling, repair, conversion to and from plans).

#include "core/search/space.h"

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace sp {

namespace spacedetail {

/// The axes of degree > 1 in the order a mesh order lists them: two orders with the same key place GPUs
/// alike.
inline std::array<int, 3> meshKey(int order, const Degrees& d) {
    std::array<int, 3> key{-1, -1, -1};
    int n = 0;
    for (Axis a : kMeshOrders[order])
        if (d.get(a) > 1) key[n++] = int(a);
    return key;
}

inline int canonicalMesh(int order, const Degrees& d) {
    const auto key = meshKey(order, d);
    for (int j = 0; j < order; ++j)
        if (meshKey(j, d) == key) return j;
    return order;
}

inline bool isDegree(DecisionKind k) {
    return k == DecisionKind::PP || k == DecisionKind::TP || k == DecisionKind::EP || k == DecisionKind::ETP;
}

} // namespace spacedetail

struct SearchSpace::Impl {
    Scenario s;
    int gpus = 0;
    bool moe = false;
    std::vector<Decision> decisions;
    // The degree decisions form a trie (levels: pp, tp[, experts, ep, etp]); only prefixes with a valid
    // completion exist in it. The mesh order sits between tp and experts but depends on pp and tp alone.
    static constexpr int kMesh = 2;
    std::vector<int> levelDecision; ///< trie level -> decision index
    std::vector<int> decisionLevel; ///< decision index -> trie level, -1 when not a degree decision
    struct Node {
        std::vector<int32_t> child; ///< per value index of the level's decision; -1: no valid completion
        double completions = 0;     ///< valid complete assignments below (mesh orders and operators included)
    };
    std::vector<Node> nodes; ///< nodes[0]: the root
    int firstOp = 0;
    /// Per tp value index: per operator decision, the valid choices (operator validity depends on tp only).
    std::vector<std::vector<std::vector<uint8_t>>> opMasks;
    std::vector<double> opProduct; ///< per tp value index: product of valid choice counts
    std::vector<std::array<int8_t, kOpCount>>
        fixedOps; ///< per tp value index: choices of the other operators
    double count = 0;
    std::string emptyReason;
    int reasonStage = -1;
    uint64_t fingerprint = 0;

    void reason(int stage, const std::string& why) {
        if (stage > reasonStage) reasonStage = stage, emptyReason = why;
    }

    int value(std::span<const int> a, int i) const { return decisions[i].values[a[i]]; }

    Degrees degreesOf(std::span<const int> a) const {
        Degrees g;
        g.pp = value(a, 0);
        g.tp = value(a, 1);
        g.dp = gpus / (g.pp * g.tp);
        if (moe) {
            g.ep = value(a, 4);
            g.etp = value(a, 5);
            g.edp = g.dp * g.tp / (g.ep * g.etp);
        } else {
            // Dense models have no expert layers; keep ep*etp*edp == dp*tp as plan files require.
            g.ep = g.dp * g.tp;
        }
        return g;
    }

    /// The trie node reached by the degree decisions of `a` up to (not including) level `levels`; -1 if
    /// invalid.
    int walk(std::span<const int> a, int levels) const {
        int node = 0;
        for (int l = 0; l < levels; ++l) {
            const int i = levelDecision[l];
            if (int(a.size()) <= i) return -1;
            const auto& ch = nodes[node].child;
            if (a[i] < 0 || a[i] >= int(ch.size()) || ch[a[i]] < 0) return -1;
            node = ch[a[i]];
        }
        return node;
    }
};

} // namespace sp
