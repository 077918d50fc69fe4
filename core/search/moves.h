#pragma once
// Moves shared by the local searchers (sa, ga) and rl's elite refinement: internal to the core library.

#include "core/search/rng.h"
#include "core/search/space.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

namespace sp::detail {

/// Energy to minimize, from planScore: -log(throughput) for a feasible plan (about -5 to -15 in tokens/s);
/// 100 + log(shortfall) for an infeasible one, so no feasible plan is ever traded for an infeasible one and
/// an infeasible chain still descends towards feasibility.
inline double energy(double score) {
    if (score > 0) return -std::log(score);
    if (score == 0) return 50;
    if (!std::isfinite(score)) return 1e9;
    return 100 + std::log(-score);
}

/// Changes decision i of `a` to a different allowed value (drawn uniformly), then repairs the later
/// decisions. Returns false when decision i has no other allowed value.
inline bool changeDecision(const SearchSpace& space, std::vector<int>& a, int i, Rng& rng,
                           std::vector<uint8_t>& mk) {
    space.mask(i, a, mk);
    int others = 0;
    for (int k = 0; k < int(mk.size()); ++k) others += mk[k] && k != a[i];
    if (others == 0) return false;
    int pick = rng.below(others);
    for (int k = 0; k < int(mk.size()); ++k)
        if (mk[k] && k != a[i] && pick-- == 0) {
            a[i] = k;
            break;
        }
    space.repair(a, i + 1, rng);
    return true;
}

/// For each decision, the decisions that make the same choice for another layer group
/// (Constraints::granularity stage or layer-group: `moe.attention`, `g2.moe.attention`, `g3.moe.attention`,
/// ...), in group order; empty lists where the space has one group.
inline std::vector<std::vector<int>> groupCounterparts(const SearchSpace& space) {
    const int n = space.decisionCount();
    std::vector<std::vector<int>> out(static_cast<size_t>(n));
    std::vector<std::string> base(static_cast<size_t>(n));
    bool grouped = false;
    for (int i = 0; i < n; ++i) {
        const Decision& d = space.decision(i);
        if (d.kind != DecisionKind::Operator) continue;
        // A further group's decision is its group's prefix ("g2.", "middle.", "last.") and the first group's
        // name.
        base[size_t(i)] = d.group == 0 ? d.name : d.name.substr(d.name.find('.') + 1);
        grouped |= d.group != 0;
    }
    if (!grouped) return out;
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j)
            if (j != i && !base[size_t(i)].empty() && base[size_t(i)] == base[size_t(j)] &&
                space.decision(i).group != space.decision(j).group)
                out[size_t(i)].push_back(j);
    return out;
}

/// The group move: after decision i changed, another layer group (drawn uniformly among those with a
/// counterpart of i) takes every per-layer choice of decision i's group, where its masks allow; the later
/// decisions are repaired. Runs of layers that change the same operators together (DeepSeek-V3's 128K
/// layer-group optimum shards the MoE layers' qkv, attention and output by head in its two middle runs and by
/// sequence at the ends) are then one move apart instead of several, through worse plans. Returns whether
/// anything changed.
inline bool copyGroup(const SearchSpace& space, std::vector<int>& a, int i,
                      const std::vector<std::vector<int>>& counterparts, Rng& rng, std::vector<uint8_t>& mk) {
    const auto& others = counterparts[size_t(i)];
    if (others.empty()) return false;
    const int from = space.decision(i).group;
    const int to = space.decision(others[size_t(rng.below(int(others.size())))]).group;
    int first = -1;
    for (int x = 0; x < space.decisionCount(); ++x) {
        if (space.decision(x).group != from) continue;
        for (int y : counterparts[size_t(x)]) {
            if (space.decision(y).group != to) continue;
            const int v = a[size_t(x)];
            if (a[size_t(y)] != v) {
                space.mask(y, a, mk);
                if (v < int(mk.size()) && mk[size_t(v)]) {
                    a[size_t(y)] = v;
                    if (first < 0 || y < first) first = y;
                }
            }
            break;
        }
    }
    if (first < 0) return false;
    space.repair(a, first + 1, rng);
    return true;
}

/// The group move with probability `groupMove` after decision i changed. Draws from `rng` only where i has
/// counterparts, so a space without layer groups keeps its trajectories.
inline void maybeCopyGroup(const SearchSpace& space, std::vector<int>& a, int i,
                           const std::vector<std::vector<int>>& counterparts, double groupMove, Rng& rng,
                           std::vector<uint8_t>& mk) {
    if (size_t(i) < counterparts.size() && !counterparts[size_t(i)].empty() && rng.chance(groupMove))
        copyGroup(space, a, i, counterparts, rng, mk);
}

/// Decisions of `a` that have more than one allowed value under their prefix.
inline std::vector<int> movable(const SearchSpace& space, const std::vector<int>& a,
                                std::vector<uint8_t>& mk) {
    std::vector<int> out;
    for (int i = 0; i < space.decisionCount(); ++i) {
        space.mask(i, a, mk);
        int n = 0;
        for (uint8_t x : mk) n += x;
        if (n > 1) out.push_back(i);
    }
    return out;
}

/// A random neighbour: one movable decision changed (uniformly among movable decisions and their values), and
/// where the space has layer groups, with probability `groupMove` the group move after it (copyGroup;
/// `counterparts` is groupCounterparts(space)). Returns false when no decision can move (a space of one
/// plan).
inline bool neighbour(const SearchSpace& space, std::vector<int>& a, Rng& rng, std::vector<uint8_t>& mk,
                      const std::vector<std::vector<int>>& counterparts = {}, double groupMove = 0) {
    const auto m = movable(space, a, mk);
    if (m.empty()) return false;
    const int i = m[rng.below(int(m.size()))];
    if (!changeDecision(space, a, i, rng, mk)) return false;
    maybeCopyGroup(space, a, i, counterparts, groupMove, rng, mk);
    return true;
}

/// Up to `wanted` distinct neighbours of the plans in `from` (one decision changed, a second with probability
/// `secondMove`, the later ones repaired) that `seen` does not know: the plan moved from is drawn towards the
/// front of `from` (the better of two uniform ranks; `from` is best first). At most four tries a neighbour;
/// fewer come back when the neighbourhood is spent. For searchers that refine an elite (rl).
/// Where the space has layer groups, the group move follows the first change with probability `groupMove`
/// (copyGroup; `counterparts` is groupCounterparts(space), or empty).
/// Every plan one decision away from `a` (each other value the masks allow, later decisions repaired), in
/// decision order, without duplicates and without plans `seen` says were evaluated.
template <class Seen>
std::vector<std::vector<int>> allNeighbours(const SearchSpace& space, const std::vector<int>& a,
                                            const Seen& seen, Rng& rng, std::vector<uint8_t>& mk) {
    std::vector<std::vector<int>> out;
    for (int i = 0; i < space.decisionCount(); ++i) {
        space.mask(i, a, mk);
        for (int v = 0; v < int(mk.size()); ++v) {
            if (!mk[size_t(v)] || v == a[size_t(i)]) continue;
            std::vector<int> p = a;
            p[size_t(i)] = v;
            space.repair(p, i + 1, rng);
            if (seen(p) || std::find(out.begin(), out.end(), p) != out.end()) continue;
            out.push_back(std::move(p));
        }
    }
    return out;
}

/// The movable decisions of one plan, kept between calls (a chain that stays on its plan asks again).
struct MovableCache {
    std::vector<int> plan, movable;
};
template <class Seen>
std::vector<std::vector<int>>
freshNeighbours(const SearchSpace& space, const std::vector<const std::vector<int>*>& from, int wanted,
                double secondMove, const Seen& seen, Rng& rng, std::vector<uint8_t>& mk,
                const std::vector<std::vector<int>>& counterparts = {}, double groupMove = 0,
                MovableCache* cache = nullptr) {
    std::vector<std::vector<int>> out;
    if (from.empty()) return out;
    const int n = int(from.size());
    // The movable decisions of each plan moved from, found once a call (the first move's draws are the
    // same as neighbour()'s), or taken from `cache` when it holds the one plan moved from.
    std::vector<std::vector<int>> movableOf(static_cast<size_t>(n));
    std::vector<uint8_t> known(static_cast<size_t>(n), 0);
    if (cache && n == 1) {
        if (cache->plan != *from[0]) cache->plan = *from[0], cache->movable = movable(space, cache->plan, mk);
        movableOf[0] = cache->movable, known[0] = 1;
    }
    for (int tries = 0; tries < 4 * wanted && int(out.size()) < wanted; ++tries) {
        const int src = std::min(rng.below(n), rng.below(n));
        std::vector<int> p = *from[size_t(src)];
        if (!known[size_t(src)]) movableOf[size_t(src)] = movable(space, p, mk), known[size_t(src)] = 1;
        const std::vector<int>& m = movableOf[size_t(src)];
        if (m.empty()) continue;
        const int i = m[rng.below(int(m.size()))];
        if (!changeDecision(space, p, i, rng, mk)) continue;
        maybeCopyGroup(space, p, i, counterparts, groupMove, rng, mk);
        // The second move draws from the first plan's movable decisions (one change leaves them nearly
        // the same; a decision that can no longer move is a move that does not happen), not from the moved
        // plan's, which cost a mask per decision on every try: on the pinned hard-suite space at 20,000
        // evaluations rl's chains had spent a sixth of rl's time there.
        if (rng.chance(secondMove)) changeDecision(space, p, m[rng.below(int(m.size()))], rng, mk);
        if (seen(p) || std::find(out.begin(), out.end(), p) != out.end()) continue;
        out.push_back(std::move(p));
    }
    return out;
}

} // namespace sp::detail
