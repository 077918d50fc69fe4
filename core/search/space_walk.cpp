// The search space's queries: validity masks, sampling (uniform over valid plans, or one decision at a
// time), completion and repair of partial assignments, enumeration, and conversion to and from plans.
#include "core/cost/validity.h"
#include "core/search/rng.h"
#include "core/search/space.h"
#include "core/search/space_impl.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace sp {

using namespace spacedetail;

SearchSpace::~SearchSpace() = default;
SearchSpace::SearchSpace(const SearchSpace& o) : d(std::make_unique<Impl>(*o.d)) {}
SearchSpace& SearchSpace::operator=(const SearchSpace& o) {
    if (this != &o) d = std::make_unique<Impl>(*o.d);
    return *this;
}
SearchSpace::SearchSpace(SearchSpace&&) noexcept = default;
SearchSpace& SearchSpace::operator=(SearchSpace&&) noexcept = default;

const Scenario& SearchSpace::scenario() const {
    return d->s;
}
const std::vector<Decision>& SearchSpace::decisions() const {
    return d->decisions;
}
int SearchSpace::decisionCount() const {
    return int(d->decisions.size());
}
const Decision& SearchSpace::decision(int i) const {
    return d->decisions[i];
}
bool SearchSpace::empty() const {
    return d->count <= 0;
}
const std::string& SearchSpace::emptyReason() const {
    return d->emptyReason;
}
uint64_t SearchSpace::fingerprint() const {
    return d->fingerprint;
}

SpaceSize SearchSpace::size() const {
    return {d->count, d->count <= 9007199254740992.0};
}

void SearchSpace::mask(int i, std::span<const int> prefix, std::vector<uint8_t>& out) const {
    const Impl& m = *d;
    const auto& values = m.decisions[i].values;
    out.assign(values.size(), 0);
    if (m.count <= 0) return;
    const int level = m.decisionLevel[i];
    if (level >= 0) {
        const int node = m.walk(prefix, level);
        if (node < 0) return;
        const auto& ch = m.nodes[node].child;
        for (size_t k = 0; k < ch.size(); ++k) out[k] = ch[k] >= 0;
        return;
    }
    if (i == m.budgetDecision || i == m.specDecision) {
        if (m.walk(prefix, int(m.levelDecision.size())) < 0) return;
        std::fill(out.begin(), out.end(), 1);
        return;
    }
    if (m.firstSplit >= 0 && (i == m.firstSplit || i == m.firstSplit + 1)) {
        if (m.walk(prefix, 1) < 0) return;
        const int pp = m.value(prefix, 0);
        if (i == m.firstSplit) {
            // A first-stage value is allowed when some last-stage value completes it.
            for (int k = 0; k < int(values.size()); ++k)
                for (int b : m.decisions[size_t(i + 1)].values)
                    out[k] = out[k] || m.splitOk(pp, values[k], b);
        } else {
            if (int(prefix.size()) <= m.firstSplit || prefix[m.firstSplit] < 0 ||
                prefix[m.firstSplit] >= int(m.decisions[size_t(m.firstSplit)].values.size()))
                return;
            const int a = m.value(prefix, m.firstSplit);
            for (int k = 0; k < int(values.size()); ++k) out[k] = m.splitOk(pp, a, values[k]);
        }
        return;
    }
    // Mesh order and operators need the degrees before them: pp and tp (and, to be sure they are valid, all
    // the degree decisions that precede i).
    const int levels = i == Impl::kMesh ? 2 : int(m.levelDecision.size());
    if (m.walk(prefix, levels) < 0) return;
    if (i == Impl::kMesh) {
        Degrees g;
        g.pp = m.value(prefix, 0), g.tp = m.value(prefix, 1), g.dp = m.gpus / (g.pp * g.tp);
        for (int k = 0; k < int(values.size()); ++k) out[k] = canonicalMesh(k, g) == k;
        return;
    }
    const int base = m.baseOf[size_t(i)];
    const auto& mk = m.opMasks[prefix[1]][base - m.firstOp];
    if (i >= m.opEnd && !m.groupFree(i, m.value(prefix, 0))) {
        // A group this pipeline does not have, or an operator none of the group's layers runs, takes the
        // first group's choice.
        if (int(prefix.size()) > base && prefix[base] >= 0 && prefix[base] < int(mk.size()) &&
            mk[prefix[base]])
            out[size_t(prefix[base])] = 1;
        return;
    }
    std::copy(mk.begin(), mk.end(), out.begin());
}

bool SearchSpace::valid(std::span<const int> a) const {
    const Impl& m = *d;
    if (m.count <= 0 || int(a.size()) != decisionCount()) return false;
    if (m.walk(a, int(m.levelDecision.size())) < 0) return false;
    if (a[Impl::kMesh] < 0 || a[Impl::kMesh] >= int(kMeshOrders.size())) return false;
    const Degrees g = m.degreesOf(a);
    if (canonicalMesh(a[Impl::kMesh], g) != a[Impl::kMesh]) return false;
    for (int i = m.firstOp; i < m.groupEnd; ++i) {
        const int base = m.baseOf[size_t(i)];
        const auto& mk = m.opMasks[a[1]][base - m.firstOp];
        if (a[i] < 0 || a[i] >= int(mk.size()) || !mk[a[i]]) return false;
        if (i >= m.opEnd && !m.groupFree(i, g.pp) && a[i] != a[base]) return false;
    }
    if (m.firstSplit >= 0) {
        for (int i : {m.firstSplit, m.firstSplit + 1})
            if (a[i] < 0 || a[i] >= int(m.decisions[size_t(i)].values.size())) return false;
        if (!m.splitOk(g.pp, m.value(a, m.firstSplit), m.value(a, m.firstSplit + 1))) return false;
    }
    for (int i : {m.budgetDecision, m.specDecision})
        if (i >= 0 && (a[i] < 0 || a[i] >= int(m.decisions[size_t(i)].values.size()))) return false;
    return true;
}

Plan SearchSpace::toPlan(std::span<const int> a) const {
    const Impl& m = *d;
    Plan p;
    p.degrees = m.degreesOf(a);
    p.meshOrder = kMeshOrders[a[Impl::kMesh]];
    p.choices = m.fixedOps[a[1]];
    if (m.moe) p.setChoice(Op::Experts, m.value(a, 3));
    for (int i = m.firstOp; i < m.opEnd; ++i) p.setChoice(m.decisions[i].op, m.value(a, i));
    if (m.firstSplit >= 0)
        p.stageLayers = m.stageLayersOf(p.degrees.pp, m.value(a, m.firstSplit), m.value(a, m.firstSplit + 1));
    if (m.groupEnd > m.opEnd) {
        // One group per set the pipeline has, in layer order; normalizeLayerGroups merges those alike.
        const int perSet = (m.groupEnd - m.opEnd) / (m.sets - 1);
        std::array<std::pair<int, int>, kMaxLayerGroups> order{};
        int n = 0;
        for (int j = 0; j < m.sets; ++j) {
            const int group = m.setGroup[size_t(j)];
            if (!m.groupActive(group, p.degrees.pp)) continue;
            order[size_t(n++)] = {group, j};
        }
        std::sort(order.begin(), order.begin() + n);
        for (int k = 0; k < n; ++k) {
            const auto [group, j] = order[size_t(k)];
            LayerGroup lg;
            lg.layers = m.groupSpan(group, p.degrees.pp, p.stageLayers).second;
            lg.choices = p.choices;
            if (j > 0)
                for (int t = 0; t < perSet; ++t) {
                    const int i = m.opEnd + (j - 1) * perSet + t;
                    lg.choices[size_t(m.decisions[size_t(i)].op)] = int8_t(m.value(a, i));
                }
            if (lg.layers > 0) p.layerGroups.push_back(lg);
        }
        normalizeLayerGroups(p);
    }
    if (m.budgetDecision >= 0) {
        const int64_t v = m.value(a, m.budgetDecision);
        p.prefillBudget = v == kDefaultPrefillBudget ? 0 : v; // the default written as such
    }
    if (m.specDecision >= 0) p.spec = specOfValue(m.value(a, m.specDecision));
    p.batch = 0;
    return p;
}

std::optional<std::vector<int>> SearchSpace::fromPlan(const Plan& p) const {
    const Impl& m = *d;
    if (m.count <= 0) return std::nullopt;
    const Degrees& g = p.degrees;
    if (g.pp < 1 || g.tp < 1 || g.dp < 1 || int64_t(g.pp) * g.dp * g.tp != m.gpus) return std::nullopt;
    std::vector<int> a(decisionCount(), 0);
    auto find = [&](int i, int v) {
        const auto& vals = m.decisions[i].values;
        auto it = std::find(vals.begin(), vals.end(), v);
        a[i] = it == vals.end() ? -1 : int(it - vals.begin());
        return it != vals.end();
    };
    if (!find(0, g.pp) || !find(1, g.tp)) return std::nullopt;
    if (m.moe) {
        if (int64_t(g.ep) * g.etp * g.edp != int64_t(g.dp) * g.tp) return std::nullopt;
        if (!find(4, g.ep) || !find(5, g.etp)) return std::nullopt;
        const int ex = p.choice(Op::Experts);
        if (!find(3, ex) || m.walk(a, 5) < 0) {
            // Tensor and token experts may be kept in their expert-parallel form (see the constructor).
            if (ex == choice::ExpExpert || checkDegrees(m.s, g, ex) || checkChoice(m.s, g, Op::Experts, ex) ||
                !find(3, choice::ExpExpert))
                return std::nullopt;
        }
    }
    if (m.walk(a, int(m.levelDecision.size())) < 0) return std::nullopt;
    int order = -1;
    for (int k = 0; k < int(kMeshOrders.size()); ++k)
        if (kMeshOrders[k] == p.meshOrder) order = k;
    if (order < 0) return std::nullopt;
    a[Impl::kMesh] = canonicalMesh(order, m.degreesOf(a));
    if (m.firstSplit < 0 && !p.stageLayers.empty()) return std::nullopt; // an uneven split, not searched
    if (m.firstSplit >= 0) {
        int da = 0, db = 0;
        if (!p.stageLayers.empty()) {
            if (int(p.stageLayers.size()) != g.pp) return std::nullopt;
            const auto e = m.balancedEnds(g.pp);
            da = p.stageLayers.front() - e.first, db = p.stageLayers.back() - e.last;
            if (!m.splitOk(g.pp, da, db) || m.stageLayersOf(g.pp, da, db) != p.stageLayers)
                return std::nullopt;
        }
        if (!find(m.firstSplit, da) || !find(m.firstSplit + 1, db)) return std::nullopt;
    }
    if (m.budgetDecision >= 0 &&
        !find(m.budgetDecision, int(p.prefillBudget > 0 ? p.prefillBudget : kDefaultPrefillBudget)))
        return std::nullopt; // a budget the search does not weigh
    if (m.specDecision >= 0 ? !find(m.specDecision, specValue(p.spec)) : p.spec.on())
        return std::nullopt; // speculative decoding the search does not weigh
    for (int i = m.firstOp; i < m.opEnd; ++i) {
        const auto& mk = m.opMasks[a[1]][i - m.firstOp];
        if (g.tp == 1) {
            // One choice stands for all at tp 1, but the plan must still keep the pins.
            if (auto pin = m.s.constraints.pinned[int(m.decisions[i].op)];
                pin >= 0 && pin != p.choice(m.decisions[i].op))
                return std::nullopt;
            a[i] = int(std::find(mk.begin(), mk.end(), 1) - mk.begin());
            continue;
        }
        if (!find(i, p.choice(m.decisions[i].op)) || !mk[a[i]]) return std::nullopt;
    }
    if (m.groupEnd == m.opEnd) return p.layerGroups.empty() ? std::optional(a) : std::nullopt;
    // Further groups: each set's choices as the plan's layers at the set's first layer hold them, then the
    // plan of that assignment must choose as this one on every layer.
    for (int i = m.opEnd; i < m.groupEnd; ++i) {
        const int base = m.baseOf[size_t(i)], group = m.decisions[size_t(i)].group;
        const auto& mk = m.opMasks[a[1]][base - m.firstOp];
        const auto span = m.groupSpan(group, g.pp, p.stageLayers);
        if (g.tp == 1 || !m.groupFree(i, g.pp) || span.second <= 0) {
            a[i] = a[base];
            continue;
        }
        if (!find(i, p.choicesAt(span.first)[size_t(m.decisions[size_t(i)].op)]) || !mk[a[i]])
            return std::nullopt;
    }
    const Plan q = toPlan(a);
    for (int l = 0; l < m.layers && g.tp > 1; ++l)
        for (int i = m.firstOp; i < m.opEnd; ++i) {
            const Op op = m.decisions[size_t(i)].op;
            if (isLayerOp(op) && m.opIn(op, l, 1) && q.choicesAt(l)[size_t(op)] != p.choicesAt(l)[size_t(op)])
                return std::nullopt;
        }
    return a;
}

void SearchSpace::complete(std::vector<int>& a, int from, Rng& rng) const {
    const Impl& m = *d;
    a.resize(decisionCount(), 0);
    std::vector<uint8_t> mk;
    std::vector<double> w;
    for (int i = from; i < decisionCount(); ++i) {
        const int level = m.decisionLevel[i];
        if (level >= 0) {
            // Each value weighted by its number of valid completions: the draw is uniform over whole plans.
            const int node = m.walk(a, level);
            if (node < 0)
                throw std::logic_error("SearchSpace::complete: the prefix does not follow the masks");
            const auto& ch = m.nodes[node].child;
            w.assign(ch.size(), 0);
            for (size_t k = 0; k < ch.size(); ++k)
                if (ch[k] >= 0) w[k] = m.nodes[ch[k]].completions;
        } else if (i == m.firstSplit) {
            // A first-stage value weighted by its valid last-stage values: uniform over whole plans.
            mask(i, a, mk);
            w.assign(mk.size(), 0);
            const int pp = m.value(a, 0);
            for (size_t k = 0; k < mk.size(); ++k)
                if (mk[k])
                    for (int b : m.decisions[size_t(i + 1)].values)
                        w[k] += m.splitOk(pp, m.decisions[size_t(i)].values[k], b);
        } else {
            // Every allowed mesh order or operator choice has the same number of completions.
            mask(i, a, mk);
            w.assign(mk.begin(), mk.end());
        }
        a[i] = int(rng.weighted(w));
    }
}

std::vector<int> SearchSpace::sample(Rng& rng) const {
    std::vector<int> a;
    complete(a, 0, rng);
    return a;
}

std::vector<int> SearchSpace::sampleByDecision(Rng& rng) const {
    std::vector<int> a(decisionCount(), 0);
    std::vector<uint8_t> mk;
    for (int i = 0; i < decisionCount(); ++i) {
        mask(i, a, mk);
        a[i] = int(rng.weighted(mk));
    }
    return a;
}

void SearchSpace::repair(std::vector<int>& a, int from, Rng& rng) const {
    a.resize(decisionCount(), -1);
    std::vector<uint8_t> mk;
    std::vector<int> best;
    for (int i = from; i < decisionCount(); ++i) {
        mask(i, a, mk);
        if (a[i] >= 0 && a[i] < int(mk.size()) && mk[a[i]]) continue;
        const Decision& dec = d->decisions[i];
        best.clear();
        if (isDegree(dec.kind) && a[i] >= 0 && a[i] < int(mk.size())) {
            // Degrees: the closest valid one on a log scale (8 -> 4 or 16), which keeps the plan's shape.
            double bestDist = 1e300;
            const double old = std::log2(double(dec.values[a[i]]));
            for (int k = 0; k < int(mk.size()); ++k) {
                if (!mk[k]) continue;
                const double dist = std::abs(std::log2(double(dec.values[k])) - old);
                if (dist < bestDist - 1e-9) best.clear(), bestDist = dist;
                if (dist < bestDist + 1e-9) best.push_back(k);
            }
        } else if ((dec.kind == DecisionKind::FirstStage || dec.kind == DecisionKind::LastStage) &&
                   a[i] >= 0 && a[i] < int(mk.size())) {
            // Stage layers: the closest valid count, which keeps the split's shape.
            int bestDist = 1 << 30;
            for (int k = 0; k < int(mk.size()); ++k) {
                if (!mk[k]) continue;
                const int dist = std::abs(dec.values[k] - dec.values[a[i]]);
                if (dist < bestDist) best.clear(), bestDist = dist;
                if (dist == bestDist) best.push_back(k);
            }
        } else {
            for (int k = 0; k < int(mk.size()); ++k)
                if (mk[k]) best.push_back(k);
        }
        a[i] = best.empty() ? 0 : best[rng.below(int(best.size()))];
    }
}

bool SearchSpace::forEach(const std::function<bool(std::span<const int>)>& visit) const {
    if (empty()) return true;
    const int n = decisionCount();
    std::vector<int> a(n, 0);
    std::vector<std::vector<uint8_t>> masks(n);
    std::function<bool(int)> rec = [&](int i) -> bool {
        if (i == n) return visit(std::span<const int>(a));
        mask(i, a, masks[i]);
        for (int k = 0; k < int(masks[i].size()); ++k) {
            if (!masks[i][k]) continue;
            a[i] = k;
            if (!rec(i + 1)) return false;
        }
        return true;
    };
    return rec(0);
}

std::optional<std::vector<int>> SearchSpace::megatronLike() const {
    const Impl& m = *d;
    if (empty()) return std::nullopt;
    const int n = decisionCount();
    std::vector<int> a(n, 0);
    std::vector<uint8_t> mk;
    auto allowed = [&](int i) {
        mask(i, a, mk);
        std::vector<int> ks;
        for (int k = 0; k < int(mk.size()); ++k)
            if (mk[k]) ks.push_back(k);
        return ks;
    };
    const int gpn = std::max(1, m.s.cluster.gpusPerNode);
    for (int i = 0; i < n; ++i) {
        const Decision& dec = m.decisions[i];
        const auto ks = allowed(i);
        int pick = ks.front();
        switch (dec.kind) {
        case DecisionKind::PP:
        case DecisionKind::ETP:
            pick = ks.front();
            break; // smallest
        case DecisionKind::EP:
            pick = ks.back();
            break; // widest expert parallelism
        case DecisionKind::TP: {
            // The largest tp inside a node under which every operator's Megatron choice is valid.
            auto score = [&](int k) {
                bool megatronOk = true;
                for (int o = m.firstOp; o < m.opEnd; ++o)
                    megatronOk = megatronOk && m.opMasks[k][o - m.firstOp][megatronChoice(m.decisions[o].op)];
                return std::make_tuple(dec.values[k] <= gpn, megatronOk,
                                       dec.values[k] <= gpn ? dec.values[k] : -dec.values[k]);
            };
            for (int k : ks)
                if (score(k) > score(pick)) pick = k;
            break;
        }
        case DecisionKind::MeshOrder:
            pick = ks.front();
            break; // tp innermost first
        case DecisionKind::PrefillBudget:
            for (int k : ks)
                if (dec.values[k] == int(kDefaultPrefillBudget)) pick = k;
            break;
        case DecisionKind::Speculative:
            pick = ks.front(); // none where it may be (the recipe runs no speculation), else the pin
            break;
        case DecisionKind::FirstStage:
        case DecisionKind::LastStage:
            // The balanced split where it completes (pp 2 pairs the last stage with the first).
            for (int k : ks)
                if (dec.values[k] == 0) pick = k;
            break;
        case DecisionKind::Experts:
        case DecisionKind::Operator: {
            const int want =
                dec.kind == DecisionKind::Experts ? int(choice::ExpExpert) : megatronChoice(dec.op);
            for (int k : ks)
                if (dec.values[k] == want) pick = k;
            break;
        }
        }
        a[i] = pick;
    }
    return a;
}

} // namespace sp
