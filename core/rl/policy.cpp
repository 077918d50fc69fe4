#include "core/rl/policy.h"

#include "core/search/rng.h"

#include <algorithm>
#include <cassert>
#include <numeric>
#include <tuple>
#include <unordered_map>

namespace sp::rl {

// ---------------------------------------------------------------- Params

void Params::forEach(const std::function<void(double*, Eigen::Index)>& f) {
    auto visit = [&f](auto& m) { f(m.data(), m.size()); };
    for (auto& e : emb) visit(e);
    for (auto& b : bias) visit(b);
    visit(pos);
    visit(rewardVec), visit(tokenBias);
    visit(Wq), visit(Wk), visit(Wv), visit(Wo);
    visit(W1), visit(b1), visit(W2), visit(b2);
}

Params Params::zerosLike() const {
    Params z = *this;
    z.forEach([](double* p, Eigen::Index n) { Eigen::Map<Vec>(p, n).setZero(); });
    return z;
}

void Params::add(const Params& other) {
    std::vector<const double*> src;
    const_cast<Params&>(other).forEach([&src](double* p, Eigen::Index) { src.push_back(p); });
    size_t i = 0;
    forEach([&](double* p, Eigen::Index n) { Eigen::Map<Vec>(p, n) += Eigen::Map<const Vec>(src[i++], n); });
}

size_t Params::size() const {
    size_t n = 0;
    const_cast<Params*>(this)->forEach([&n](double*, Eigen::Index k) { n += size_t(k); });
    return n;
}

// ---------------------------------------------------------------- Policy

namespace {
/// Gaussian-ish init from the deterministic generator: the sum of four uniforms, centred, scaled.
template <class M> void initRandom(M& m, double scale, Rng& rng) {
    for (Eigen::Index c = 0; c < m.cols(); ++c)
        for (Eigen::Index r = 0; r < m.rows(); ++r)
            m(r, c) =
                scale * (rng.uniform() + rng.uniform() + rng.uniform() + rng.uniform() - 2.0) * 1.7320508;
}
} // namespace

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

Policy::Policy(std::vector<int> choiceCounts, PolicyConfig cfg, uint64_t seed)
    : m_counts(std::move(choiceCounts)), m_cfg(cfg) {
    const int d = kDim, m = kHidden, n = int(m_counts.size());
    Rng rng(seed);
    for (int c : m_counts) {
        m_p.emb.emplace_back(c, d);
        initRandom(m_p.emb.back(), cfg.initScale, rng);
        m_p.bias.emplace_back(Vec::Zero(c));
    }
    m_p.pos.resize(n, d);
    initRandom(m_p.pos, cfg.initScale, rng);
    initRandom(m_p.rewardVec, cfg.initScale, rng);
    m_p.tokenBias.setZero();
    const double sd = 1.0 / std::sqrt(double(d)), s2 = 1.0 / std::sqrt(2.0 * d),
                 sm = 1.0 / std::sqrt(double(m));
    for (MatDD* w : {&m_p.Wq, &m_p.Wk, &m_p.Wv, &m_p.Wo}) initRandom(*w, sd, rng);
    initRandom(m_p.W1, s2, rng);
    m_p.b1.setZero();
    initRandom(m_p.W2, sm, rng);
    m_p.b2.setZero();
    setElite({});
}

void Policy::setElite(std::vector<EliteToken> elite) {
    m_elite = std::move(elite);
    const int d = kDim, K = int(m_elite.size());
    m_tokens.setZero(K, d);
    for (int e = 0; e < K; ++e) {
        auto row = m_tokens.row(e);
        for (int i = 0; i < decisions(); ++i) row += m_p.emb[i].row(m_elite[e].choices[i]);
        row += m_elite[e].reward * m_p.rewardVec.transpose() + m_p.tokenBias.transpose();
    }
    m_keys.noalias() = m_tokens * m_p.Wk.transpose();
    m_values.noalias() = m_tokens * m_p.Wv.transpose();
}

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

// ---------------------------------------------------------------- the batched paths (Compute::Double, Float)

/// Every node of a batch through each layer at once: row r of the matrices below is one node (a decision
/// reached by one prefix), so each layer is one matrix product over the batch instead of one matrix-vector
/// product per node, and the softmaxes and exps run vectorised over whole blocks. The arithmetic is the
/// reference's (Policy::forwardStep and Policy::loss), reordered. Choices are padded to the widest
/// decision (padding is masked), so the logits of every decision share one matrix.
template <class S> struct Batched {
    using M = Eigen::Matrix<S, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
    using CV = Eigen::Matrix<S, Eigen::Dynamic, 1>;
    using RV = Eigen::Matrix<S, 1, Eigen::Dynamic>;

    /// The parameters the forward pass reads, in S.
    struct Net {
        M Wq, Wo, W1, W2, keys, values, pos;
        RV b1, b2;
        std::vector<M> emb;
        std::vector<RV> bias;
        int heads = 1, widest = 1;
        explicit Net(const Policy& pol) {
            const Params& p = pol.m_p;
            Wq = p.Wq.cast<S>(), Wo = p.Wo.cast<S>(), W1 = p.W1.cast<S>(), W2 = p.W2.cast<S>();
            b1 = p.b1.transpose().cast<S>(), b2 = p.b2.transpose().cast<S>();
            keys = pol.m_keys.cast<S>(), values = pol.m_values.cast<S>(), pos = p.pos.cast<S>();
            emb.reserve(p.emb.size()), bias.reserve(p.bias.size());
            for (const auto& e : p.emb) emb.push_back(e.cast<S>()), widest = std::max(widest, int(e.rows()));
            for (const auto& b : p.bias) bias.push_back(b.transpose().cast<S>());
            heads = pol.m_cfg.heads;
        }
    };

    /// The forward pass of up to `capacity` nodes, allocated once: run() uses the top R rows. H (the
    /// queries' inputs h) is filled by the caller; L holds the logits, then the log-probabilities.
    struct Forward {
        M H, Q, A, O, X, Pre1, Z, Y, valid, L, P; ///< A: head h in columns [h K, (h+1) K)
        CV entropy;
        /// Room for `capacity` rows; only grows, so a workspace reused across calls allocates rarely.
        void reserve(const Net& net, int capacity) {
            const int K = int(net.keys.rows());
            if (capacity <= H.rows() && A.cols() == net.heads * K && L.cols() == net.widest) return;
            capacity = std::max(capacity, int(H.rows()));
            H.resize(capacity, kDim), Q.resize(capacity, kDim), A.resize(capacity, net.heads * K);
            O.resize(capacity, kDim), X.resize(capacity, 2 * kDim), Pre1.resize(capacity, kHidden);
            Z.resize(capacity, kHidden), Y.resize(capacity, kDim);
            valid.resize(capacity, net.widest), L.resize(capacity, net.widest),
                P.resize(capacity, net.widest);
            entropy.resize(capacity);
        }
        void run(const Net& net, int R) {
            const int d = kDim, K = int(net.keys.rows()), dh = d / net.heads;
            auto h = H.topRows(R), q = Q.topRows(R), o = O.topRows(R), x = X.topRows(R);
            q.noalias() = h * net.Wq.transpose();
            o.setZero();
            if (K > 0) {
                const S scale = S(1.0 / std::sqrt(double(dh)));
                for (int hd = 0; hd < net.heads; ++hd) {
                    auto a = A.block(0, hd * K, R, K);
                    a.noalias() = q.middleCols(hd * dh, dh) * net.keys.middleCols(hd * dh, dh).transpose();
                    a *= scale;
                    const CV mx = a.rowwise().maxCoeff();
                    a.colwise() -= mx;
                    a = a.array().exp(); // on its own, so that it vectorises
                    const CV z = a.rowwise().sum();
                    a.array().colwise() /= z.array();
                    o.middleCols(hd * dh, dh).noalias() = a * net.values.middleCols(hd * dh, dh);
                }
            }
            x.leftCols(d) = h;
            x.rightCols(d).noalias() = o * net.Wo.transpose();
            auto pre1 = Pre1.topRows(R), y = Y.topRows(R);
            pre1.noalias() = x * net.W1.transpose();
            pre1.rowwise() += net.b1;
            Z.topRows(R) = pre1.cwiseMax(S(0));
            y.noalias() = Z.topRows(R) * net.W2.transpose();
            y.rowwise() += net.b2;
        }
        /// The logits of rows [r0, r0 + cnt), all at decision i (columns past its choices: 0, and masked).
        void logits(const Net& net, int i, int r0, int cnt) {
            const int c = int(net.emb[size_t(i)].rows());
            auto l = L.block(r0, 0, cnt, c);
            l.noalias() = Y.middleRows(r0, cnt) * net.emb[size_t(i)].transpose();
            l.rowwise() += net.bias[size_t(i)];
            if (c < L.cols()) L.block(r0, c, cnt, L.cols() - c).setZero();
        }
        /// Masked softmax of the top R rows of L (logits in, log-probabilities out), after dividing by the
        /// temperature. Masked entries get the logit -1e4 (exp gives 0 in float and double) and probability
        /// exactly 0, so everything vectorises without selects (Eigen's select does not); their
        /// log-probabilities are never read.
        void softmax(int R, double temperature) {
            auto l = L.topRows(R), p = P.topRows(R), v = valid.topRows(R);
            if (temperature != 1.0) l *= S(1.0 / temperature);
            l.array() = l.array() * v.array() + (v.array() - S(1)) * S(1e4);
            const CV mx = l.rowwise().maxCoeff();
            l.colwise() -= mx;
            p = l.array().exp();
            p.array() *= v.array();
            const CV z = p.rowwise().sum();
            p.array().colwise() /= z.array();
            l.array().colwise() -= z.array().log();
            entropy.head(R) = -(p.array() * l.array()).rowwise().sum();
        }
    };

    /// Per thread: the prefix tree's forward pass (0) and the sampler's (1), reused from call to call
    /// (one tree and one sampler alive at a time on a thread, as loss, traces and sampleBatch use them).
    static Forward& workspace(int which) {
        thread_local Forward w[2];
        return w[which];
    }

    /// Reads a mask into row r of `valid`; returns the number of valid choices and the last of them.
    static std::pair<int, int> readMask(const std::vector<uint8_t>& m, int c, M& valid, int r) {
        int count = 0, one = 0;
        for (int j = 0; j < c; ++j) {
            valid(r, j) = m[size_t(j)] ? S(1) : S(0);
            if (m[size_t(j)]) ++count, one = j;
        }
        for (int j = c; j < int(valid.cols()); ++j) valid(r, j) = S(0);
        return {count, one};
    }

    /// The prefix tree of a batch of plans, built from the plans sorted (a node is shared by consecutive
    /// plans with a common prefix), its masks, and the forward pass of its nodes that have a choice, their
    /// rows grouped by decision.
    struct Tree {
        int n = 0, R = 0;
        std::vector<int> depth, parent, action, row, only, path; ///< per node; path: plan b * n + decision i
        std::vector<int> rowsFrom;                               ///< decision i: rows [from_i, from_{i+1})
        Forward& f = workspace(0);

        Tree(const Policy& pol, const Net& net, std::span<const std::vector<int>* const> plans,
             const MaskFn& mask) {
            n = pol.decisions();
            const int B = int(plans.size());
            std::vector<int> order(static_cast<size_t>(B)), first;
            std::iota(order.begin(), order.end(), 0);
            std::sort(order.begin(), order.end(),
                      [&](int a, int b) { return *plans[size_t(a)] < *plans[size_t(b)]; });
            path.assign(size_t(B) * size_t(n), 0);
            for (int k = 0; k < B; ++k) {
                const int b = order[size_t(k)];
                const std::vector<int>& a = *plans[size_t(b)];
                int lcp = -1; // the node at decision i is the previous plan's when i <= lcp
                if (k > 0) {
                    const int prev = order[size_t(k - 1)];
                    const std::vector<int>& pa = *plans[size_t(prev)];
                    lcp = 0;
                    while (lcp < n - 1 && a[size_t(lcp)] == pa[size_t(lcp)]) ++lcp;
                    for (int i = 0; i <= lcp; ++i) path[size_t(b * n + i)] = path[size_t(prev * n + i)];
                }
                for (int i = lcp + 1; i < n; ++i) {
                    path[size_t(b * n + i)] = int(depth.size());
                    depth.push_back(i);
                    parent.push_back(i > 0 ? path[size_t(b * n + i - 1)] : -1);
                    action.push_back(i > 0 ? a[size_t(i - 1)] : 0);
                    first.push_back(b);
                }
            }
            const int N = int(depth.size());
            M prefix = M::Zero(N, kDim);
            for (int k = 1; k < N; ++k)
                prefix.row(k) = prefix.row(parent[size_t(k)]) +
                                net.emb[size_t(depth[size_t(k)] - 1)].row(action[size_t(k)]);
            // Rows for the nodes with a choice, decision by decision.
            std::vector<int> byDepth(static_cast<size_t>(N));
            std::iota(byDepth.begin(), byDepth.end(), 0);
            std::stable_sort(byDepth.begin(), byDepth.end(),
                             [&](int a, int b) { return depth[size_t(a)] < depth[size_t(b)]; });
            row.assign(size_t(N), -1);
            only.assign(size_t(N), -1);
            rowsFrom.assign(size_t(n) + 1, 0);
            f.reserve(net, N);
            std::vector<uint8_t> m;
            int r = 0, i = -1;
            for (int k : byDepth) {
                while (i < depth[size_t(k)]) rowsFrom[size_t(++i)] = r;
                mask(i, *plans[size_t(first[size_t(k)])], m);
                const auto [count, one] = readMask(m, pol.m_counts[size_t(i)], f.valid, r);
                if (count <= 1) {
                    only[size_t(k)] = one;
                    continue;
                }
                f.H.row(r) = net.pos.row(i) + prefix.row(k);
                row[size_t(k)] = r++;
            }
            while (i < n) rowsFrom[size_t(++i)] = r;
            R = r;
            f.run(net, R);
            for (int d = 0; d < n; ++d)
                if (rowsFrom[size_t(d + 1)] > rowsFrom[size_t(d)])
                    f.logits(net, d, rowsFrom[size_t(d)], rowsFrom[size_t(d + 1)] - rowsFrom[size_t(d)]);
            f.softmax(R, 1.0);
        }
    };

    static std::vector<Trace> traces(const Policy& pol, std::span<const std::vector<int>* const> plans,
                                     const MaskFn& mask) {
        const Net net(pol);
        const Tree t(pol, net, plans, mask);
        std::vector<Trace> out(plans.size());
        for (size_t b = 0; b < plans.size(); ++b) {
            Trace& tr = out[b];
            tr.actions = *plans[b];
            tr.oldLogp.assign(size_t(t.n), 0.0);
            for (int i = 0; i < t.n; ++i) {
                const int k = t.path[b * size_t(t.n) + size_t(i)], r = t.row[size_t(k)];
                if (r < 0) {
                    tr.actions[size_t(i)] = t.only[size_t(k)];
                    continue;
                }
                tr.oldLogp[size_t(i)] = double(t.f.L(r, tr.actions[size_t(i)]));
                tr.entropy += double(t.f.entropy[r]);
            }
        }
        return out;
    }

    /// Samples decision by decision, the distinct prefixes of one decision as one batch.
    static std::vector<Trace> sample(const Policy& pol, const MaskFn& mask, std::span<Rng> rngs,
                                     double temperature) {
        const Net net(pol);
        const int n = pol.decisions(), B = int(rngs.size());
        std::vector<Trace> out(static_cast<size_t>(B));
        for (auto& t : out) t.actions.assign(size_t(n), 0), t.oldLogp.assign(size_t(n), 0.0);
        // This decision's nodes: their prefix sums, a sample through each (its actions are the prefix the
        // mask reads), their rows; the next decision's nodes are the distinct (node, action).
        std::vector<int> node(static_cast<size_t>(B), 0), first{0}, nextFirst, nodeRow, nodeOnly, childParent,
            childAction;
        M prefix = M::Zero(B, kDim), nextPrefix(B, kDim);
        Forward& f = workspace(1);
        f.reserve(net, B);
        std::vector<uint8_t> m;
        std::vector<double> w;
        for (int i = 0; i < n; ++i) {
            const int N = int(first.size()), c = pol.m_counts[size_t(i)];
            nodeRow.assign(size_t(N), -1);
            nodeOnly.assign(size_t(N), -1);
            int R = 0;
            for (int k = 0; k < N; ++k) {
                mask(i, out[size_t(first[size_t(k)])].actions, m);
                const auto [count, one] = readMask(m, c, f.valid, R);
                if (count == 1) {
                    nodeOnly[size_t(k)] = one;
                    continue;
                }
                f.H.row(R) = net.pos.row(i) + prefix.row(k);
                nodeRow[size_t(k)] = R++;
            }
            if (R > 0) {
                f.run(net, R);
                f.logits(net, i, 0, R);
                f.softmax(R, temperature);
            }
            childParent.clear(), childAction.clear(), nextFirst.clear();
            for (int b = 0; b < B; ++b) {
                Trace& t = out[size_t(b)];
                const int k = node[size_t(b)], r = nodeRow[size_t(k)];
                if (r < 0) {
                    t.actions[size_t(i)] = nodeOnly[size_t(k)];
                } else {
                    w.assign(f.P.row(r).data(), f.P.row(r).data() + c);
                    const int a = int(rngs[size_t(b)].weighted(w));
                    t.actions[size_t(i)] = a;
                    t.oldLogp[size_t(i)] = double(f.L(r, a));
                    t.entropy += double(f.entropy[r]);
                }
                if (i + 1 == n) continue;
                const int a = t.actions[size_t(i)];
                int child = 0;
                while (child < int(childParent.size()) &&
                       (childParent[size_t(child)] != k || childAction[size_t(child)] != a))
                    ++child;
                if (child == int(childParent.size()))
                    childParent.push_back(k), childAction.push_back(a), nextFirst.push_back(b);
                node[size_t(b)] = child;
            }
            if (i + 1 == n) break;
            for (size_t k = 0; k < childParent.size(); ++k)
                nextPrefix.row(Eigen::Index(k)) =
                    prefix.row(childParent[k]) + net.emb[size_t(i)].row(childAction[k]);
            prefix.swap(nextPrefix);
            first.swap(nextFirst);
        }
        return out;
    }

    static double loss(const Policy& pol, std::span<const Trace> batch, std::span<const double> adv,
                       const MaskFn& mask, double clipEps, double entropyWeight, Params* grad,
                       double* meanEntropy, size_t batchSize) {
        const int d = kDim, K = int(pol.m_elite.size());
        const double invB = 1.0 / double(std::max<size_t>(1, batchSize > 0 ? batchSize : batch.size()));
        const Net net(pol);
        std::vector<const std::vector<int>*> plans(batch.size());
        for (size_t b = 0; b < batch.size(); ++b) plans[b] = &batch[b].actions;
        const Tree t(pol, net, plans, mask);
        const Forward& f = t.f;
        const int n = t.n, R = t.R;
        double total = 0, entropySum = 0;
        // Per row: the summed weights of log p(action) and of the entropy; the one-hot terms per use.
        CV gLogpSum = CV::Zero(R), gEntSum = CV::Zero(R);
        M dL = M::Zero(R, f.L.cols());
        for (size_t b = 0; b < batch.size(); ++b) {
            const Trace& tr = batch[b];
            const double A = adv[b];
            for (int i = 0; i < n; ++i) {
                const int r = t.row[size_t(t.path[b * size_t(n) + size_t(i)])];
                if (r < 0) continue;
                const int action = tr.actions[size_t(i)];
                const double logp = double(f.L(r, action)), ent = double(f.entropy[r]);
                const double rho = std::exp(logp - tr.oldLogp[size_t(i)]);
                const double unclipped = rho * A;
                const double clipped =
                    clipEps > 0 ? std::clamp(rho, 1.0 - clipEps, 1.0 + clipEps) * A : unclipped;
                total -= invB * std::min(unclipped, clipped);
                total -= invB * entropyWeight * ent;
                entropySum += ent;
                if (!grad) continue;
                const bool active = clipEps <= 0 || unclipped <= clipped;
                const double gLogp = active ? -invB * rho * A : 0.0;
                gLogpSum[r] += S(gLogp);
                gEntSum[r] += S(-invB * entropyWeight);
                dL(r, action) += S(gLogp);
            }
        }
        if (meanEntropy) *meanEntropy = entropySum * invB;
        if (!grad || R == 0) return total;

        Params& g = *grad;
        // dlogits: over the uses of a row, gLogp (onehot(a) - p) + gEnt (-p (logp + H)); p is exactly 0
        // where masked, so those entries stay 0.
        {
            const auto p = f.P.topRows(R).array();
            const auto lp = f.L.topRows(R).array();
            dL.array() -= p.colwise() * gLogpSum.array();
            dL.array() -= (p * (lp.colwise() + f.entropy.head(R).array())).colwise() * gEntSum.array();
        }
        M dY(R, d);
        for (int i = 0; i < n; ++i) {
            const int r0 = t.rowsFrom[size_t(i)], cnt = t.rowsFrom[size_t(i + 1)] - r0;
            if (cnt == 0) continue;
            const auto dl = dL.block(r0, 0, cnt, pol.m_counts[size_t(i)]);
            g.bias[size_t(i)] += dl.colwise().sum().transpose().template cast<double>();
            g.emb[size_t(i)] += (dl.transpose() * f.Y.middleRows(r0, cnt)).template cast<double>();
            dY.middleRows(r0, cnt).noalias() = dl * net.emb[size_t(i)];
        }
        const auto Z = f.Z.topRows(R), X = f.X.topRows(R), O = f.O.topRows(R), H = f.H.topRows(R);
        g.W2 += (dY.transpose() * Z).template cast<double>();
        g.b2 += dY.colwise().sum().transpose().template cast<double>();
        M dPre1 = dY * net.W2;
        dPre1.array() *= (f.Pre1.topRows(R).array() > S(0)).template cast<S>();
        g.W1 += (dPre1.transpose() * X).template cast<double>();
        g.b1 += dPre1.colwise().sum().transpose().template cast<double>();
        const M dX = dPre1 * net.W1;
        M dH = dX.leftCols(d);
        const auto dC = dX.rightCols(d);
        g.Wo += (dC.transpose() * O).template cast<double>();
        if (K > 0) {
            const M dO = dC * net.Wo;
            const int dh = d / net.heads;
            const S scale = S(1.0 / std::sqrt(double(dh)));
            M dQ(R, d), dKeys(K, d), dValues(K, d), dA(R, K);
            for (int hd = 0; hd < net.heads; ++hd) {
                const auto a = f.A.block(0, hd * K, R, K);
                const auto dOh = dO.middleCols(hd * dh, dh);
                dA.noalias() = dOh * net.values.middleCols(hd * dh, dh).transpose();
                const CV adot = (a.array() * dA.array()).rowwise().sum();
                dA.colwise() -= adot;
                dA.array() *= a.array() * scale; // dS: softmax backward, scaled
                dQ.middleCols(hd * dh, dh).noalias() = dA * net.keys.middleCols(hd * dh, dh);
                dKeys.middleCols(hd * dh, dh).noalias() =
                    dA.transpose() * f.Q.topRows(R).middleCols(hd * dh, dh);
                dValues.middleCols(hd * dh, dh).noalias() = a.transpose() * dOh;
            }
            g.Wq += (dQ.transpose() * H).template cast<double>();
            dH.noalias() += dQ * net.Wq;
            const RowsD dKd = dKeys.template cast<double>(), dVd = dValues.template cast<double>();
            g.Wk.noalias() += dKd.transpose() * pol.m_tokens;
            g.Wv.noalias() += dVd.transpose() * pol.m_tokens;
            const RowsD dT = dKd * pol.m_p.Wk + dVd * pol.m_p.Wv;
            for (int e = 0; e < K; ++e) {
                for (int i = 0; i < n; ++i)
                    g.emb[size_t(i)].row(pol.m_elite[size_t(e)].choices[size_t(i)]) += dT.row(e);
                g.rewardVec += pol.m_elite[size_t(e)].reward * dT.row(e).transpose();
                g.tokenBias += dT.row(e).transpose();
            }
        } // no elite: the attention output is zero and the query gets no gradient
        for (int i = 0; i < n; ++i) {
            const int r0 = t.rowsFrom[size_t(i)], cnt = t.rowsFrom[size_t(i + 1)] - r0;
            if (cnt > 0) g.pos.row(i) += dH.middleRows(r0, cnt).colwise().sum().template cast<double>();
        }
        // The prefix: E_{i-1}[action] feeds a node and every node below it; children before parents.
        const int N = int(t.depth.size());
        M sub = M::Zero(N, d);
        for (int k = 0; k < N; ++k)
            if (t.row[size_t(k)] >= 0) sub.row(k) = dH.row(t.row[size_t(k)]);
        for (int k = N; k-- > 1;) {
            g.emb[size_t(t.depth[size_t(k)] - 1)].row(t.action[size_t(k)]) +=
                sub.row(k).template cast<double>();
            sub.row(t.parent[size_t(k)]) += sub.row(k);
        }
        return total;
    }
};

// ---------------------------------------------------------------- Policy, continued

Trace Policy::sample(const MaskFn& mask, Rng& rng, double temperature) const {
    if (m_cfg.compute != Compute::Reference)
        return sampleBatch(mask, std::span<Rng>(&rng, 1), temperature)[0];
    return walk(mask, &rng, nullptr, temperature);
}

std::vector<Trace> Policy::sampleBatch(const MaskFn& mask, std::span<Rng> rngs, double temperature) const {
    if (m_cfg.compute == Compute::Float) return Batched<float>::sample(*this, mask, rngs, temperature);
    if (m_cfg.compute == Compute::Double) return Batched<double>::sample(*this, mask, rngs, temperature);
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

Trace Policy::trace(const std::vector<int>& actions, const MaskFn& mask) const {
    if (m_cfg.compute != Compute::Reference) return traces(std::span(&actions, 1), mask)[0];
    return walk(mask, nullptr, &actions, 1.0);
}

std::vector<Trace> Policy::traces(std::span<const std::vector<int>> plans, const MaskFn& mask) const {
    std::vector<const std::vector<int>*> p;
    for (const auto& a : plans) p.push_back(&a);
    if (m_cfg.compute == Compute::Float) return Batched<float>::traces(*this, p, mask);
    if (m_cfg.compute == Compute::Double) return Batched<double>::traces(*this, p, mask);
    std::vector<Trace> out;
    for (const auto& a : plans) out.push_back(walk(mask, nullptr, &a, 1.0));
    return out;
}

double Policy::loss(std::span<const Trace> batch, std::span<const double> adv, const MaskFn& mask,
                    double clipEps, double entropyWeight, Params* grad, double* meanEntropy,
                    size_t batchSize) const {
    if (m_cfg.compute == Compute::Float)
        return Batched<float>::loss(*this, batch, adv, mask, clipEps, entropyWeight, grad, meanEntropy,
                                    batchSize);
    if (m_cfg.compute == Compute::Double)
        return Batched<double>::loss(*this, batch, adv, mask, clipEps, entropyWeight, grad, meanEntropy,
                                     batchSize);
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

// ---------------------------------------------------------------- Adam

Adam::Adam(const Params& shape, double lr, double beta1, double beta2, double eps)
    : m_m(shape.zerosLike()), m_v(shape.zerosLike()), m_lr(lr), m_b1(beta1), m_b2(beta2), m_eps(eps) {}

void Adam::step(Params& p, Params& grad) {
    ++m_t;
    const double c1 = 1.0 - std::pow(m_b1, double(m_t)), c2 = 1.0 - std::pow(m_b2, double(m_t));
    // Visit the four structures in the same order (Params::forEach).
    std::vector<std::pair<double*, Eigen::Index>> gl, ml, vl;
    grad.forEach([&](double* p, Eigen::Index n) { gl.emplace_back(p, n); });
    m_m.forEach([&](double* p, Eigen::Index n) { ml.emplace_back(p, n); });
    m_v.forEach([&](double* p, Eigen::Index n) { vl.emplace_back(p, n); });
    size_t idx = 0;
    p.forEach([&](double* w, Eigen::Index n) {
        Eigen::Map<Vec> W(w, n), g(gl[idx].first, n), mm(ml[idx].first, n), vv(vl[idx].first, n);
        mm = m_b1 * mm + (1.0 - m_b1) * g;
        vv = m_b2 * vv + (1.0 - m_b2) * g.cwiseAbs2();
        W.array() -= m_lr * (mm.array() / c1) / ((vv.array() / c2).sqrt() + m_eps);
        g.setZero();
        ++idx;
    });
}

} // namespace sp::rl
