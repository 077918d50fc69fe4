#pragma once
// Moves shared by the local searchers (sa, ga) and rl's elite refinement: internal to the core library.

#include "core/search/rng.h"
#include "core/search/space.h"

#include <algorithm>
#include <cmath>
#include <limits>
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

/// A random neighbour: one movable decision changed (uniformly among movable decisions and their values).
/// Returns false when no decision can move (a space of one plan).
inline bool neighbour(const SearchSpace& space, std::vector<int>& a, Rng& rng, std::vector<uint8_t>& mk) {
    const auto m = movable(space, a, mk);
    if (m.empty()) return false;
    return changeDecision(space, a, m[rng.below(int(m.size()))], rng, mk);
}

/// Up to `wanted` distinct neighbours of the plans in `from` (one decision changed, a second with probability
/// `secondMove`, the later ones repaired) that `seen` does not know: the plan moved from is drawn towards the
/// front of `from` (the better of two uniform ranks; `from` is best first). At most four tries a neighbour;
/// fewer come back when the neighbourhood is spent. For searchers that refine an elite (rl).
template <class Seen>
std::vector<std::vector<int>>
freshNeighbours(const SearchSpace& space, const std::vector<const std::vector<int>*>& from, int wanted,
                double secondMove, const Seen& seen, Rng& rng, std::vector<uint8_t>& mk) {
    std::vector<std::vector<int>> out;
    if (from.empty()) return out;
    const int n = int(from.size());
    // The movable decisions of each plan moved from, found once a call (the first move's draws are the
    // same as neighbour()'s).
    std::vector<std::vector<int>> movableOf(static_cast<size_t>(n));
    std::vector<uint8_t> known(static_cast<size_t>(n), 0);
    for (int tries = 0; tries < 4 * wanted && int(out.size()) < wanted; ++tries) {
        const int src = std::min(rng.below(n), rng.below(n));
        std::vector<int> p = *from[size_t(src)];
        if (!known[size_t(src)]) movableOf[size_t(src)] = movable(space, p, mk), known[size_t(src)] = 1;
        const std::vector<int>& m = movableOf[size_t(src)];
        if (m.empty() || !changeDecision(space, p, m[rng.below(int(m.size()))], rng, mk)) continue;
        if (rng.chance(secondMove)) neighbour(space, p, rng, mk);
        if (seen(p) || std::find(out.begin(), out.end(), p) != out.end()) continue;
        out.push_back(std::move(p));
    }
    return out;
}

} // namespace sp::detail
