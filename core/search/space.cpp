#include "core/search/space.h"
#include "core/search/space_impl.h"

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

} // namespace

using namespace spacedetail;

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
    m.opEnd = int(m.decisions.size());
    m.layers = int(s.model.layers);
    const std::vector<int> pps = m.decisions[0].values; // a copy: decisions grow below
    // Finer granularity: the per-layer operators once more for each further layer group.
    m.granularity = s.constraints.granularity;
    m.sets = 1;
    if (m.granularity == Granularity::Stage && !pps.empty() && pps.back() > 1)
        m.sets = pps.back() >= 3 ? 3 : 2;
    if (m.granularity == Granularity::LayerGroup)
        m.sets = std::clamp(std::min(s.constraints.layerGroups, m.layers), 1, kMaxLayerGroups);
    if (m.sets <= 1) m.granularity = Granularity::Type;
    m.baseOf.clear();
    for (int i = 0; i < m.opEnd; ++i) m.baseOf.push_back(i);
    m.setGroup = {0};
    for (int j = 1; j < m.sets; ++j) {
        // Stage granularity with pp at most 2 has no middle group: its groups are the first and the last.
        const int group = m.granularity == Granularity::Stage && m.sets == 2 ? 2 : j;
        m.setGroup.push_back(group);
        const std::string prefix = m.granularity == Granularity::Stage
                                       ? (group == 1 ? "middle." : "last.")
                                       : "g" + std::to_string(group + 1) + ".";
        for (int i = m.firstOp; i < m.opEnd; ++i) {
            if (!isLayerOp(m.decisions[size_t(i)].op)) continue;
            Decision dec = m.decisions[size_t(i)];
            dec.group = group;
            dec.name = prefix + dec.name;
            m.decisions.push_back(std::move(dec));
            m.baseOf.push_back(i);
        }
    }
    m.groupEnd = int(m.decisions.size());
    if (s.constraints.stageSplit == StageSplit::Tuned && !pps.empty() && pps.back() > 1) {
        // Layers of the first and the last stage beyond the balanced split: the ends also hold the embedding
        // and the head (and their memory), so the balanced split need not be the fastest.
        m.firstSplit = int(m.decisions.size());
        for (auto [kind, name] : {std::pair{DecisionKind::FirstStage, "first_stage_layers"},
                                  std::pair{DecisionKind::LastStage, "last_stage_layers"}}) {
            Decision dec;
            dec.kind = kind;
            dec.name = name;
            for (int v = -3; v <= 3; ++v) {
                dec.values.push_back(v);
                dec.labels.push_back((v > 0 ? "+" : "") + std::to_string(v));
            }
            m.decisions.push_back(std::move(dec));
        }
    }
    if (s.constraints.searchPrefillBudget && s.workload.phase != Phase::Decode) {
        // The prefill token budget per pass: memory for activations against the chunks a prompt's prefill
        // takes (TTFT) and the batch it allows.
        m.budgetDecision = int(m.decisions.size());
        Decision dec;
        dec.kind = DecisionKind::PrefillBudget;
        dec.name = "prefill_budget";
        for (int64_t v : kSearchedPrefillBudgets) {
            dec.values.push_back(int(v));
            dec.labels.push_back(std::to_string(v));
        }
        m.decisions.push_back(std::move(dec));
    }
    // Speculative decoding: none, or each method the model has with each draft count the acceptance rates
    // cover (or the constraints' pin alone), every plan alike.
    if (const auto options = speculativeOptions(s); !options.empty()) {
        m.specDecision = int(m.decisions.size());
        Decision dec;
        dec.kind = DecisionKind::Speculative;
        dec.name = "speculative";
        if (s.constraints.specPolicy != Constraints::SpecPolicy::Pinned) {
            dec.values.push_back(0);
            dec.labels.push_back("none");
        }
        for (const Speculative& o : options) {
            dec.values.push_back(specValue(o));
            dec.labels.push_back(specText(o));
        }
        m.decisions.push_back(std::move(dec));
    }
    m.moePrefix.assign(size_t(m.layers) + 1, 0);
    for (int l = 0; l < m.layers; ++l)
        m.moePrefix[size_t(l + 1)] = m.moePrefix[size_t(l)] + s.model.isMoeLayer(l);
    m.fixedSpans = m.granularity == Granularity::LayerGroup || m.firstSplit < 0;
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
        m.nodes[node].completions =
            m.opProduct[indexOf(1, t.tp)] * m.groupFactor(t.pp, indexOf(1, t.tp)) * m.trailingFactor();
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
        if (level == 1) sum *= m.splitCount(pp); // the stage split depends on pp alone
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

} // namespace sp
