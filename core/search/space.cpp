#include "core/search/space.h"

#include "core/cost/validity.h"
#include "core/io/formats.h"
#include "core/search/rng.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>

namespace sp {

namespace {

std::vector<int> divisorsOf(int n) {
    std::vector<int> out;
    for (int k = 1; k <= n; ++k)
        if (n % k == 0) out.push_back(k);
    return out;
}

/// The axes of degree > 1 in the order a mesh order lists them: two orders with the same key place GPUs
/// alike.
std::array<int, 3> meshKey(int order, const Degrees& d) {
    std::array<int, 3> key{-1, -1, -1};
    int n = 0;
    for (Axis a : kMeshOrders[order])
        if (d.get(a) > 1) key[n++] = int(a);
    return key;
}

int canonicalMesh(int order, const Degrees& d) {
    const auto key = meshKey(order, d);
    for (int j = 0; j < order; ++j)
        if (meshKey(j, d) == key) return j;
    return order;
}

uint64_t fnv(uint64_t h, const void* data, size_t n) {
    const auto* p = static_cast<const unsigned char*>(data);
    for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 0x100000001b3ull;
    return h;
}

/// The choice of an operator that is not searched: the pin, else the Megatron choice, else the first valid
/// one (so checkPlan accepts it even if it checks irrelevant operators too).
int fixedChoice(const Scenario& s, const Degrees& g, Op op) {
    std::vector<int> prefs;
    if (s.constraints.pinned[int(op)] >= 0) prefs.push_back(s.constraints.pinned[int(op)]);
    prefs.push_back(megatronChoice(op));
    for (int c = 0; c < int(choiceNames(op).size()); ++c) prefs.push_back(c);
    for (int c : prefs)
        if (c >= 0 && c < int(choiceNames(op).size()) && !checkChoice(s, g, op, c)) return c;
    return megatronChoice(op);
}

bool isDegree(DecisionKind k) {
    return k == DecisionKind::PP || k == DecisionKind::TP || k == DecisionKind::EP || k == DecisionKind::ETP;
}

} // namespace

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

SearchSpace::SearchSpace(const Scenario& scenario) : d(std::make_unique<Impl>()) {
    Impl& m = *d;
    m.s = scenario;
    const Scenario& s = m.s;
    m.gpus = s.gpus();
    m.moe = s.model.moe.present();

    // Relevant operators become decisions; the experts operator is the Experts decision for MoE models.
    std::vector<Op> opDecisions;
    for (int o = 0; o < kOpCount; ++o)
        if (opRelevant(s.model, Op(o)) && Op(o) != Op::Experts) opDecisions.push_back(Op(o));

    // Enumerate the valid degree tuples, values first (indices are assigned once the value sets are known).
    struct Tuple {
        int pp, tp, experts, ep, etp;
    };
    std::vector<Tuple> tuples;
    std::map<int, std::vector<std::vector<uint8_t>>> masksByTp;
    std::map<int, bool> tpOk;
    auto opsAllowTp = [&](int tp) {
        if (auto it = tpOk.find(tp); it != tpOk.end()) return it->second;
        Degrees g;
        g.tp = tp;
        bool ok = true;
        std::vector<std::vector<uint8_t>> masks;
        for (Op op : opDecisions) {
            const int n = int(choiceNames(op).size());
            std::vector<uint8_t> mk(n, 0);
            std::string why;
            for (int c = 0; c < n; ++c) {
                auto e = checkChoice(s, g, op, c);
                mk[c] = !e;
                if (e && why.empty()) why = *e;
            }
            if (std::count(mk.begin(), mk.end(), 1) == 0) {
                ok = false;
                m.reason(1, "tp = " + std::to_string(tp) + ": " + why);
            } else if (tp == 1) {
                // Every sharding over a tensor-parallel group of one GPU is the same computation: keep one.
                const int keep = fixedChoice(s, g, op);
                std::fill(mk.begin(), mk.end(), 0);
                mk[keep] = 1;
            }
            masks.push_back(std::move(mk));
        }
        masksByTp[tp] = std::move(masks);
        return tpOk[tp] = ok;
    };

    if (m.gpus <= 0) m.reason(0, "the scenario has no GPUs");
    for (int pp : m.gpus > 0 ? divisorsOf(m.gpus) : std::vector<int>{}) {
        for (int tp : divisorsOf(m.gpus / pp)) {
            const int dp = m.gpus / pp / tp;
            Degrees g;
            g.pp = pp, g.dp = dp, g.tp = tp, g.ep = dp * tp;
            if (!m.moe) {
                if (auto e = checkDegrees(s, g, choice::ExpExpert)) {
                    m.reason(0, *e);
                    continue;
                }
                if (!opsAllowTp(tp)) continue;
                tuples.push_back({pp, tp, 0, dp * tp, 1});
                continue;
            }
            // Degrees of the dense part alone first, so the reason for an empty space names the right rule.
            {
                Scenario dense = s;
                dense.model.moe = Moe{};
                if (auto e = checkDegrees(dense, g, choice::ExpExpert)) {
                    m.reason(0, *e);
                    continue;
                }
            }
            if (!opsAllowTp(tp)) continue;
            for (int ex = 0; ex < int(choiceNames(Op::Experts).size()); ++ex) {
                if (auto e = checkChoice(s, g, Op::Experts, ex)) {
                    m.reason(2, *e);
                    continue;
                }
                const bool expertAllowed = !checkChoice(s, g, Op::Experts, choice::ExpExpert);
                for (int ep : divisorsOf(dp * tp))
                    for (int etp : divisorsOf(dp * tp / ep)) {
                        Degrees h = g;
                        h.ep = ep, h.etp = etp, h.edp = dp * tp / (ep * etp);
                        if (auto e = checkDegrees(s, h, ex)) {
                            m.reason(2, *e);
                            continue;
                        }
                        // Tensor (ep 1, edp 1) and token (ep 1, etp 1) are expert parallelism with those
                        // degrees: the same plan. Keep the expert form when it is allowed.
                        if (ex != choice::ExpExpert && expertAllowed &&
                            !checkDegrees(s, h, choice::ExpExpert))
                            continue;
                        tuples.push_back({pp, tp, ex, ep, etp});
                    }
            }
        }
    }

    // Decisions.
    auto uniqueValues = [&](auto get) {
        std::vector<int> v;
        for (const Tuple& t : tuples) v.push_back(get(t));
        std::sort(v.begin(), v.end());
        v.erase(std::unique(v.begin(), v.end()), v.end());
        return v;
    };
    auto degreeDecision = [&](DecisionKind k, const char* name, std::vector<int> values) {
        Decision dec;
        dec.kind = k;
        dec.name = name;
        dec.values = std::move(values);
        for (int v : dec.values) dec.labels.push_back(std::to_string(v));
        m.decisions.push_back(std::move(dec));
    };
    degreeDecision(DecisionKind::PP, "pp", uniqueValues([](const Tuple& t) { return t.pp; }));
    degreeDecision(DecisionKind::TP, "tp", uniqueValues([](const Tuple& t) { return t.tp; }));
    {
        Decision dec;
        dec.kind = DecisionKind::MeshOrder;
        dec.name = "mesh_order";
        for (int k = 0; k < int(kMeshOrders.size()); ++k) {
            dec.values.push_back(k);
            std::string label;
            for (Axis a : kMeshOrders[k])
                label += (label.empty() ? "" : ",") + std::string(kAxisNames[int(a)]);
            dec.labels.push_back(label);
        }
        m.decisions.push_back(std::move(dec));
    }
    m.levelDecision = {0, 1};
    if (m.moe) {
        Decision dec;
        dec.kind = DecisionKind::Experts;
        dec.op = Op::Experts;
        dec.name = "experts";
        dec.values = uniqueValues([](const Tuple& t) { return t.experts; });
        for (int v : dec.values) dec.labels.emplace_back(choiceNames(Op::Experts)[v]);
        m.decisions.push_back(std::move(dec));
        degreeDecision(DecisionKind::EP, "ep", uniqueValues([](const Tuple& t) { return t.ep; }));
        degreeDecision(DecisionKind::ETP, "etp", uniqueValues([](const Tuple& t) { return t.etp; }));
        m.levelDecision = {0, 1, 3, 4, 5};
    }
    m.firstOp = int(m.decisions.size());
    for (Op op : opDecisions) {
        Decision dec;
        dec.kind = DecisionKind::Operator;
        dec.op = op;
        dec.name = std::string(op >= Op::MoeNorms ? "moe." : "") + std::string(kOpNames[int(op)]);
        for (int c = 0; c < int(choiceNames(op).size()); ++c) {
            dec.values.push_back(c);
            dec.labels.emplace_back(choiceNames(op)[c]);
        }
        m.decisions.push_back(std::move(dec));
    }
    m.decisionLevel.assign(m.decisions.size(), -1);
    for (int l = 0; l < int(m.levelDecision.size()); ++l) m.decisionLevel[m.levelDecision[l]] = l;

    // Per tp value: operator masks, their product, and the choices of the operators that are not decisions.
    const auto& tps = m.decisions[1].values;
    for (int tp : tps) {
        auto masks = masksByTp.at(tp);
        double product = 1;
        for (const auto& mk : masks) product *= double(std::count(mk.begin(), mk.end(), 1));
        m.opMasks.push_back(std::move(masks));
        m.opProduct.push_back(product);
        Degrees g;
        g.tp = tp;
        std::array<int8_t, kOpCount> fixed{};
        for (int o = 0; o < kOpCount; ++o) fixed[o] = int8_t(fixedChoice(s, g, Op(o)));
        m.fixedOps.push_back(fixed);
    }

    // The trie.
    m.nodes.emplace_back();
    auto indexOf = [&](int decision, int v) {
        const auto& vals = m.decisions[decision].values;
        return int(std::lower_bound(vals.begin(), vals.end(), v) - vals.begin());
    };
    const int levels = int(m.levelDecision.size());
    for (const Tuple& t : tuples) {
        const std::array<int, 5> vals{t.pp, t.tp, t.experts, t.ep, t.etp};
        int node = 0;
        for (int l = 0; l < levels; ++l) {
            const int dec = m.levelDecision[l];
            if (m.nodes[node].child.empty()) m.nodes[node].child.assign(m.decisions[dec].values.size(), -1);
            const int k = indexOf(dec, vals[l]);
            if (m.nodes[node].child[k] < 0) {
                m.nodes[node].child[k] = int32_t(m.nodes.size());
                m.nodes.emplace_back();
            }
            node = m.nodes[node].child[k];
        }
        m.nodes[node].completions = m.opProduct[indexOf(1, t.tp)];
    }
    // Completions bottom-up; the (pp, tp) nodes multiply by their number of distinct mesh orders.
    std::function<double(int, int, int, int)> finish = [&](int node, int level, int pp, int tp) -> double {
        Impl::Node& n = m.nodes[node];
        double sum = n.completions;
        if (level < levels) {
            sum = 0;
            for (int k = 0; k < int(n.child.size()); ++k) {
                if (n.child[k] < 0) continue;
                const int v = m.decisions[m.levelDecision[level]].values[k];
                sum += finish(n.child[k], level + 1, level == 0 ? v : pp, level == 1 ? v : tp);
            }
        }
        if (level == 2) {
            Degrees g;
            g.pp = pp, g.tp = tp, g.dp = m.gpus / (pp * tp);
            int distinct = 0;
            for (int k = 0; k < int(kMeshOrders.size()); ++k) distinct += canonicalMesh(k, g) == k;
            sum *= distinct;
        }
        return n.completions = sum;
    };
    m.count = tuples.empty() ? 0 : finish(0, 0, 1, 1);
    if (tuples.empty() && m.emptyReason.empty()) m.emptyReason = "no degrees satisfy the constraints";

    // Everything the cache key depends on: the scenario (the objective's input) and the decisions.
    uint64_t h = 0xcbf29ce484222325ull;
    const std::string yaml = toYaml(s);
    h = fnv(h, yaml.data(), yaml.size());
    for (const Decision& dec : m.decisions) {
        h = fnv(h, dec.name.data(), dec.name.size());
        h = fnv(h, dec.values.data(), dec.values.size() * sizeof(int));
    }
    m.fingerprint = h;
}

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
    const auto& mk = m.opMasks[prefix[1]][i - m.firstOp];
    std::copy(mk.begin(), mk.end(), out.begin());
}

bool SearchSpace::valid(std::span<const int> a) const {
    const Impl& m = *d;
    if (m.count <= 0 || int(a.size()) != decisionCount()) return false;
    if (m.walk(a, int(m.levelDecision.size())) < 0) return false;
    if (a[Impl::kMesh] < 0 || a[Impl::kMesh] >= int(kMeshOrders.size())) return false;
    const Degrees g = m.degreesOf(a);
    if (canonicalMesh(a[Impl::kMesh], g) != a[Impl::kMesh]) return false;
    for (int i = m.firstOp; i < decisionCount(); ++i) {
        const auto& mk = m.opMasks[a[1]][i - m.firstOp];
        if (a[i] < 0 || a[i] >= int(mk.size()) || !mk[a[i]]) return false;
    }
    return true;
}

Plan SearchSpace::toPlan(std::span<const int> a) const {
    const Impl& m = *d;
    Plan p;
    p.degrees = m.degreesOf(a);
    p.meshOrder = kMeshOrders[a[Impl::kMesh]];
    p.choices = m.fixedOps[a[1]];
    if (m.moe) p.setChoice(Op::Experts, m.value(a, 3));
    for (int i = m.firstOp; i < decisionCount(); ++i) p.setChoice(m.decisions[i].op, m.value(a, i));
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
    for (int i = m.firstOp; i < decisionCount(); ++i) {
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
                for (int o = m.firstOp; o < n; ++o)
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
