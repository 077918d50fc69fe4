#pragma once
// Internal to core/search: the search space's state. space.cpp builds it (the degree trie, the operator
// masks, the count); space_walk.cpp reads it (masks, sampling, repair, conversion to and from plans).

#include "core/cost/costmodel.h"
#include "core/search/space.h"

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <utility>
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

    /// Whether group j (Decision::group; 0: the first) exists in a plan of pp stages.
    bool groupActive(int j, int pp) const {
        if (granularity != Granularity::Stage) return true;
        return j == 0 || (j == 2 && pp >= 2) || (j == 1 && pp >= 3);
    }
    /// Whether an operator runs in any of the `n` layers from `begin` (a MoE layer's operators in MoE layers,
    /// the others in dense layers).
    bool opIn(Op op, int begin, int n) const {
        const int moeLayers = moePrefix[size_t(begin + n)] - moePrefix[size_t(begin)];
        const bool moeOp = op == Op::MoeNorms || op == Op::MoeQkv || op == Op::MoeAttention ||
                           op == Op::MoeOutProj || op == Op::Router || op == Op::SharedExperts;
        return moeOp ? moeLayers > 0 : n - moeLayers > 0;
    }
    /// Whether a further group's decision i chooses freely at pp (else it takes the first group's value): its
    /// group is in the pipeline and, where the spans are fixed, has a layer the operator runs in.
    bool groupFree(int i, int pp) const {
        const Decision& dec = decisions[size_t(i)];
        if (!groupActive(dec.group, pp)) return false;
        if (!fixedSpans) return true;
        const auto span = groupSpan(dec.group, pp, {});
        return span.second > 0 && opIn(dec.op, span.first, span.second);
    }
    /// The factor the further groups multiply a (pp, tp) leaf's completions by.
    double groupFactor(int pp, int tpIndex) const {
        double f = 1;
        for (int i = opEnd; i < groupEnd; ++i)
            if (groupFree(i, pp)) {
                const auto& mk = opMasks[size_t(tpIndex)][size_t(baseOf[size_t(i)] - firstOp)];
                f *= double(std::count(mk.begin(), mk.end(), 1));
            }
        return f;
    }
    /// The first layer and the layers of group j of a plan with `stageLayers` (empty: balanced) and pp
    /// stages.
    std::pair<int, int> groupSpan(int j, int pp, const std::vector<int>& stageLayers) const {
        if (granularity == Granularity::LayerGroup) return stageSpan(layers, sets, j);
        auto stage = [&](int i) {
            if (stageLayers.empty()) return stageSpan(layers, pp, i);
            int b = 0;
            for (int k = 0; k < i; ++k) b += stageLayers[size_t(k)];
            return std::pair<int, int>{b, stageLayers[size_t(i)]};
        };
        if (pp <= 1) return j == 0 ? std::pair<int, int>{0, layers} : std::pair<int, int>{layers, 0};
        const auto first = stage(0), last = stage(pp - 1);
        if (j == 0) return first;
        if (j == 2) return last;
        return {first.second, last.first - first.second};
    }
    int firstOp = 0;
    int opEnd = 0; ///< one past the last operator decision of the first group
    /// Further layer groups' operator decisions: [opEnd, groupEnd), group-major, each group repeating the
    /// per-layer operators of [firstOp, opEnd) (baseOf maps a decision to the first group's).
    int groupEnd = 0;
    Granularity granularity = Granularity::Type;
    int sets = 1; ///< layer groups the decisions choose for (stage: first, middle, last)
    /// Per set: its group (Decision::group); the stage granularity's groups are 0 first, 1 middle, 2 last.
    std::vector<int> setGroup{0};
    std::vector<int> baseOf; ///< per decision: the first group's decision it repeats; itself otherwise
    /// Per layer boundary: MoE layers before it (moePrefix[l] of layers [0, l)), to tell which operators a
    /// run of layers has (a dense layer's or a MoE layer's).
    std::vector<int> moePrefix;
    /// Whether a group's span is known from pp alone (layer groups; stage groups under a balanced split), so
    /// that a further group's decision for an operator none of its layers has can take the first group's
    /// value (one value: the choice changes nothing).
    bool fixedSpans = false;
    int firstSplit = -1;     ///< the FirstStage decision (LastStage follows it); -1 under a balanced split
    int budgetDecision = -1; ///< the PrefillBudget decision; -1 when the budget is not searched
    int specDecision = -1;   ///< the Speculative decision (the last one); -1 when there is none
    /// Values of the trailing decisions that every prefix takes alike (the budget, speculative decoding).
    double trailingFactor() const {
        return (budgetDecision >= 0 ? double(decisions[size_t(budgetDecision)].values.size()) : 1.0) *
               (specDecision >= 0 ? double(decisions[size_t(specDecision)].values.size()) : 1.0);
    }
    int layers = 0;
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

    /// Layers of the first and last stage and of the middle ones under the balanced split of pp stages.
    struct Ends {
        int first = 0, last = 0, middle = 0;
    };
    Ends balancedEnds(int pp) const {
        const auto f = stageSpan(layers, pp, 0), l = stageSpan(layers, pp, pp - 1);
        return {f.second, l.second, layers - f.second - (pp > 1 ? l.second : 0)};
    }
    /// Whether the first stage may hold `a` layers more and the last `b` more (each stage keeps a layer).
    bool splitOk(int pp, int a, int b) const {
        if (pp <= 1) return a == 0 && b == 0;
        const Ends e = balancedEnds(pp);
        if (e.first + a < 1 || e.last + b < 1) return false;
        if (pp == 2) return a + b == 0;
        return e.middle - a - b >= pp - 2;
    }
    /// The plan's layers per stage for deltas (a, b); empty for (0, 0), the balanced split itself.
    std::vector<int> stageLayersOf(int pp, int a, int b) const {
        if (a == 0 && b == 0) return {};
        const Ends e = balancedEnds(pp);
        std::vector<int> n(static_cast<size_t>(pp), 0);
        n.front() = e.first + a, n.back() = e.last + b;
        const int mid = e.middle - a - b;
        for (int j = 0; j < pp - 2; ++j) n[size_t(j + 1)] = stageSpan(mid, pp - 2, j).second;
        return n;
    }
    /// The valid (a, b) pairs of pp: the factor a pp multiplies its completions by.
    double splitCount(int pp) const {
        if (firstSplit < 0) return 1.0;
        double n = 0;
        for (int a : decisions[size_t(firstSplit)].values)
            for (int b : decisions[size_t(firstSplit + 1)].values) n += splitOk(pp, a, b);
        return n;
    }

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
