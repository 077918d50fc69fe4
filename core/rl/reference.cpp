// The reference path (Compute::Reference): plan by plan and node by node in double precision, the path the
// finite-difference checks were first written for and the one the batched paths are held to.

#include "core/rl/policy.h"

#include "core/search/rng.h"

#include <algorithm>
#include <unordered_map>

namespace sp::rl {

struct Policy::Step {
    VecD h, q, c, y;
    Vec2D x;
    VecM pre1, z;
    Vec logits;
    AttentionCache att;
    SoftmaxCache sm;
    int action = 0;
    bool trivial = false; ///< one valid choice: no network, no gradient
};

void Policy::forwardStep(int i, const VecD& h, const std::vector<uint8_t>& mask, Step& s,
                         double temperature) const {
    s.h = h;
    s.q.noalias() = m_p.Wq * h;
    attentionForward(s.q, m_keys, m_values, m_cfg.heads, s.att);
    s.c.noalias() = m_p.Wo * s.att.o;
    s.x << h, s.c;
    linearForward(m_p.W1, m_p.b1, s.x, s.pre1);
    reluForward(s.pre1, s.z);
    linearForward(m_p.W2, m_p.b2, s.z, s.y);
    s.logits.noalias() = m_p.emb[i] * s.y;
    s.logits += m_p.bias[i];
    if (temperature != 1.0) s.logits /= temperature;
    maskedSoftmaxForward(s.logits, mask, s.sm);
}

Trace Policy::walk(const MaskFn& mask, Rng* rng, const std::vector<int>* given, double temperature) const {
    const int n = decisions();
    Trace t;
    t.actions = given ? *given : std::vector<int>(n, 0);
    t.oldLogp.assign(n, 0.0);
    VecD prefix = VecD::Zero();
    std::vector<uint8_t> m;
    Step s;
    for (int i = 0; i < n; ++i) {
        mask(i, t.actions, m);
        int valid = 0, only = 0;
        for (int k = 0; k < int(m.size()); ++k)
            if (m[k]) ++valid, only = k;
        if (valid == 1) {
            t.actions[i] = only; // a forced decision: no network, log-probability 0
        } else {
            forwardStep(i, m_p.pos.row(i).transpose() + prefix, m, s, temperature);
            if (!given) t.actions[i] = int(rng->weighted(s.sm.p));
            t.oldLogp[i] = s.sm.logp[t.actions[i]];
            t.entropy += s.sm.entropy;
        }
        prefix += m_p.emb[i].row(t.actions[i]).transpose();
    }
    return t;
}

std::vector<Trace> Policy::sampleReference(const MaskFn& mask, std::span<Rng> rngs,
                                           double temperature) const {
    // A prefix tree of the decisions reached: a node's mask and distribution depend on its prefix alone, so
    // samples that share a prefix share its forward pass (the same arithmetic as sample(), so the same
    // traces).
    struct Node {
        VecD prefix = VecD::Zero();
        int only = -1; ///< the one valid choice of a forced decision
        SoftmaxCache sm;
        bool ready = false;
    };
    const int n = decisions();
    std::vector<Node> nodes(1);
    std::unordered_map<uint64_t, int> children;
    std::vector<uint8_t> m;
    Step s;
    std::vector<Trace> out(rngs.size());
    for (size_t b = 0; b < rngs.size(); ++b) {
        Trace& t = out[b];
        t.actions.assign(size_t(n), 0);
        t.oldLogp.assign(size_t(n), 0.0);
        int node = 0;
        for (int i = 0; i < n; ++i) {
            if (!nodes[size_t(node)].ready) {
                mask(i, t.actions, m);
                int valid = 0, only = 0;
                for (int k = 0; k < int(m.size()); ++k)
                    if (m[k]) ++valid, only = k;
                Node& nd = nodes[size_t(node)];
                if (valid == 1) {
                    nd.only = only;
                } else {
                    forwardStep(i, m_p.pos.row(i).transpose() + nd.prefix, m, s, temperature);
                    nd.sm = s.sm;
                }
                nd.ready = true;
            }
            const Node& nd = nodes[size_t(node)];
            if (nd.only >= 0) {
                t.actions[size_t(i)] = nd.only; // a forced decision: no network, log-probability 0
            } else {
                t.actions[size_t(i)] = int(rngs[b].weighted(nd.sm.p));
                t.oldLogp[size_t(i)] = nd.sm.logp[t.actions[size_t(i)]];
                t.entropy += nd.sm.entropy;
            }
            if (i + 1 == n) break;
            const int a = t.actions[size_t(i)];
            auto [it, added] = children.emplace((uint64_t(node) << 20) | uint64_t(a), int(nodes.size()));
            if (added) {
                Node c;
                c.prefix = nodes[size_t(node)].prefix + m_p.emb[size_t(i)].row(a).transpose();
                nodes.push_back(std::move(c));
            }
            node = it->second;
        }
    }
    return out;
}

double Policy::lossReference(std::span<const Trace> batch, std::span<const double> adv, const MaskFn& mask,
                             double clipEps, double entropyWeight, Params* grad, double* meanEntropy,
                             size_t batchSize) const {
    const int n = decisions(), d = kDim, K = int(m_elite.size());
    const double invB = 1.0 / double(std::max<size_t>(1, batchSize > 0 ? batchSize : batch.size()));
    double total = 0, entropySum = 0;
    // The traces as a prefix tree: a node is a decision reached by a given prefix of actions, and everything
    // the network computes there depends on that prefix alone. Traces that share a prefix (most of them once
    // the policy has converged; all of a duplicate) share its nodes, so each node's forward pass runs once,
    // and its backward pass once on the sum of its traces' logit gradients (backward is linear in them).
    struct Node {
        int depth = 0, parent = -1, action = 0; ///< action: the parent's decision that leads here
        VecD prefix = VecD::Zero();             ///< sum of the embeddings of the actions before `depth`
        Step s;
        Vec dlogits;
        VecD sub = VecD::Zero(); ///< backward: gradient reaching h of this node and every node below it
        bool used = false;       ///< some trace's loss depends on this node's logits
    };
    std::vector<Node> nodes;
    nodes.reserve(batch.size() * size_t(n) / 2 + 8);
    std::unordered_map<uint64_t, int> children; // (parent node, action) -> node
    std::vector<std::vector<int>> path(batch.size());
    std::vector<uint8_t> m;
    nodes.emplace_back();
    for (size_t b = 0; b < batch.size(); ++b) {
        const Trace& t = batch[b];
        path[b].resize(size_t(n));
        int node = 0;
        for (int i = 0; i < n; ++i) {
            path[b][size_t(i)] = node;
            if (i + 1 == n) break;
            const uint64_t key = (uint64_t(node) << 20) | uint64_t(t.actions[size_t(i)]);
            auto [it, added] = children.emplace(key, int(nodes.size()));
            if (added) {
                Node c;
                c.depth = i + 1;
                c.parent = node;
                c.action = t.actions[size_t(i)];
                c.prefix = nodes[size_t(node)].prefix + m_p.emb[size_t(i)].row(c.action).transpose();
                nodes.push_back(std::move(c));
            }
            node = it->second;
        }
    }
    // Forward, once per node (a node's first trace supplies the prefix its mask reads).
    std::vector<int> firstTrace(nodes.size(), -1);
    for (size_t b = 0; b < batch.size(); ++b)
        for (int i = 0; i < n; ++i)
            if (int& f = firstTrace[size_t(path[b][size_t(i)])]; f < 0) f = int(b);
    for (size_t k = 0; k < nodes.size(); ++k) {
        Node& nd = nodes[k];
        mask(nd.depth, batch[size_t(firstTrace[k])].actions, m);
        nd.s.trivial = std::count(m.begin(), m.end(), uint8_t(1)) <= 1;
        if (!nd.s.trivial) forwardStep(nd.depth, m_p.pos.row(nd.depth).transpose() + nd.prefix, m, nd.s, 1.0);
    }
    // The loss, trace by trace; each trace's logit gradient is added to its nodes.
    for (size_t b = 0; b < batch.size(); ++b) {
        const Trace& t = batch[b];
        const double A = adv[b];
        for (int i = 0; i < n; ++i) {
            Node& nd = nodes[size_t(path[b][size_t(i)])];
            if (nd.s.trivial) continue;
            const int action = t.actions[size_t(i)];
            const double logp = nd.s.sm.logp[action];
            const double rho = std::exp(logp - t.oldLogp[size_t(i)]);
            const double unclipped = rho * A;
            const double clipped =
                clipEps > 0 ? std::clamp(rho, 1.0 - clipEps, 1.0 + clipEps) * A : unclipped;
            total -= invB * std::min(unclipped, clipped);
            total -= invB * entropyWeight * nd.s.sm.entropy;
            entropySum += nd.s.sm.entropy;
            if (!grad) continue;
            // d min(rho A, clip(rho) A)/d logp = rho A where the unclipped term is the smaller (or clipping
            // is off)
            const bool active = clipEps <= 0 || unclipped <= clipped;
            const double gLogp = active ? -invB * rho * A : 0.0;
            Vec& dl = nd.dlogits;
            if (!nd.used) dl.setZero(nd.s.sm.p.size()), nd.used = true;
            maskedSoftmaxBackwardAdd(nd.s.sm, action, gLogp, -invB * entropyWeight, dl);
        }
    }
    if (grad) {
        // Backward, children before parents (they were created after them).
        Params& g = *grad;
        RowsD dKeys = RowsD::Zero(K, d), dValues = RowsD::Zero(K, d);
        Vec dO, dq;
        VecD dy, dh, dc;
        VecM dz, dpre1;
        Vec2D dx;
        for (size_t k = nodes.size(); k-- > 0;) {
            Node& nd = nodes[k];
            const int i = nd.depth;
            if (nd.used) {
                const Step& s = nd.s;
                const Vec& dlogits = nd.dlogits;
                // logits = E_i y + beta_i
                g.bias[size_t(i)] += dlogits;
                g.emb[size_t(i)].noalias() += dlogits * s.y.transpose();
                dy.noalias() = m_p.emb[size_t(i)].transpose() * dlogits;
                linearBackward(m_p.W2, s.z, dy, g.W2, g.b2, dz);
                reluBackward(s.pre1, dz, dpre1);
                linearBackward(m_p.W1, s.x, dpre1, g.W1, g.b1, dx);
                dh = dx.head(d);
                dc = dx.tail(d);
                g.Wo.noalias() += dc * s.att.o.transpose();
                dO.noalias() = m_p.Wo.transpose() * dc;
                attentionBackward(s.q, m_keys, m_values, m_cfg.heads, s.att, dO, dq, dKeys, dValues);
                const VecD dqd = dq;
                g.Wq.noalias() += dqd * s.h.transpose();
                dh.noalias() += m_p.Wq.transpose() * dqd;
                g.pos.row(i) += dh.transpose();
                nd.sub += dh;
            }
            if (nd.parent >= 0) {
                // E_{i-1}[action] feeds the prefix of this node and of every node below it.
                g.emb[size_t(i - 1)].row(nd.action) += nd.sub.transpose();
                nodes[size_t(nd.parent)].sub += nd.sub;
            }
        }
        if (K > 0) {
            g.Wk.noalias() += dKeys.transpose() * m_tokens;
            g.Wv.noalias() += dValues.transpose() * m_tokens;
            const RowsD dT = dKeys * m_p.Wk + dValues * m_p.Wv;
            for (int e = 0; e < K; ++e) {
                for (int i = 0; i < n; ++i)
                    g.emb[size_t(i)].row(m_elite[size_t(e)].choices[size_t(i)]) += dT.row(e);
                g.rewardVec += m_elite[size_t(e)].reward * dT.row(e).transpose();
                g.tokenBias += dT.row(e).transpose();
            }
        }
    }
    if (meanEntropy) *meanEntropy = entropySum * invB;
    return total;
}

} // namespace sp::rl
