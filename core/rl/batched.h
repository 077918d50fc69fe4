#pragma once
// The batched paths of the policy (Compute::Double, Compute::Float): every node of a batch through each layer
// as one matrix product. Internal to core/rl: batched_sample.cpp (sampling, scoring) and batched_loss.cpp
// (the loss and its gradient) define the members declared here.

#include "core/rl/policy.h"
#include "core/search/rng.h"

#include <algorithm>
#include <numeric>
#include <span>
#include <vector>

namespace sp::rl {

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
        /// The network on rows [r0, r0 + R) of H, up to Y.
        void run(const Net& net, int R, int r0 = 0) {
            const int d = kDim, K = int(net.keys.rows()), dh = d / net.heads;
            auto h = H.middleRows(r0, R), q = Q.middleRows(r0, R), o = O.middleRows(r0, R),
                 x = X.middleRows(r0, R);
            q.noalias() = h * net.Wq.transpose();
            o.setZero();
            if (K > 0) {
                const S scale = S(1.0 / std::sqrt(double(dh)));
                for (int hd = 0; hd < net.heads; ++hd) {
                    auto a = A.block(r0, hd * K, R, K);
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
            auto pre1 = Pre1.middleRows(r0, R), y = Y.middleRows(r0, R), z = Z.middleRows(r0, R);
            pre1.noalias() = x * net.W1.transpose();
            pre1.rowwise() += net.b1;
            z = pre1.cwiseMax(S(0));
            y.noalias() = z * net.W2.transpose();
            y.rowwise() += net.b2;
        }
        /// Copies rows [from, from + R) of `src` up to Y (what run() computes from H) into rows [to, to + R).
        void copyRun(const Forward& src, int from, int to, int R) {
            H.middleRows(to, R) = src.H.middleRows(from, R), Q.middleRows(to, R) = src.Q.middleRows(from, R);
            A.middleRows(to, R) = src.A.middleRows(from, R), O.middleRows(to, R) = src.O.middleRows(from, R);
            X.middleRows(to, R) = src.X.middleRows(from, R);
            Pre1.middleRows(to, R) = src.Pre1.middleRows(from, R);
            Z.middleRows(to, R) = src.Z.middleRows(from, R), Y.middleRows(to, R) = src.Y.middleRows(from, R);
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
        void softmax(int R, double temperature, int r0 = 0) {
            auto l = L.middleRows(r0, R), p = P.middleRows(r0, R), v = valid.middleRows(r0, R);
            if (temperature != 1.0) l *= S(1.0 / temperature);
            l.array() = l.array() * v.array() + (v.array() - S(1)) * S(1e4);
            const CV mx = l.rowwise().maxCoeff();
            l.colwise() -= mx;
            p = l.array().exp();
            p.array() *= v.array();
            const CV z = p.rowwise().sum();
            p.array().colwise() /= z.array();
            l.array().colwise() -= z.array().log();
            entropy.segment(r0, R) = -(p.array() * l.array()).rowwise().sum();
        }
    };

    /// Per thread: the prefix tree's forward pass (0), the sampler's (1), and the rows of a tree not found
    /// in the sampler's (2), reused from call to call (one tree and one sampler alive at a time on a thread,
    /// as loss, traces, update and sampleBatch use them).
    static Forward& workspace(int which) {
        thread_local Forward w[3];
        return w[which];
    }
    /// The sampler's workspace holds the forward pass of the sampling call with this id (0: none).
    static uint64_t& sampledId() {
        thread_local uint64_t id = 0;
        return id;
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
    /// rows grouped by decision. The structure and the masks depend on the plans alone, so the epochs of an
    /// update build the tree once and run forward() again after each step of the parameters.
    struct Tree {
        int n = 0, R = 0;
        std::vector<int> depth, parent, action, row, only, path; ///< per node; path: plan b * n + decision i
        std::vector<int> rowsFrom;                               ///< decision i: rows [from_i, from_{i+1})
        std::vector<int> rowNode;                                ///< per row: its node
        Forward& f = workspace(0);
        M prefix; ///< per node: the sum of the embeddings of the actions before it

        /// Per row: its row in the sampler's workspace when that forward pass is still the policy's (-1:
        /// compute it); filled by update() before forward().
        std::vector<int> src;

        Tree(const Policy& pol, const Net& net, std::span<const std::vector<int>* const> plans,
             const MaskFn& mask, bool run = true) {
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
                row[size_t(k)] = r++;
                rowNode.push_back(k);
            }
            while (i < n) rowsFrom[size_t(++i)] = r;
            R = r;
            src.assign(size_t(R), -1);
            if (run) forward(net);
        }
        /// The forward pass of every row under `net`'s parameters (the masks stay).
        void forward(const Net& net) {
            const int N = int(depth.size());
            prefix.resize(N, kDim);
            if (N > 0) prefix.row(0).setZero();
            for (int k = 1; k < N; ++k)
                prefix.row(k) = prefix.row(parent[size_t(k)]) +
                                net.emb[size_t(depth[size_t(k)] - 1)].row(action[size_t(k)]);
            // Rows the sampler computed under these parameters are copied; the others go through the network
            // together (gathered into workspace 2 and back).
            const Forward& sampled = workspace(1);
            Forward& g = workspace(2);
            int G = 0;
            for (int r = 0; r < R; ++r)
                if (src[size_t(r)] < 0) ++G;
            if (G == R) {
                for (int r = 0; r < R; ++r) {
                    const int k = rowNode[size_t(r)];
                    f.H.row(r) = net.pos.row(depth[size_t(k)]) + prefix.row(k);
                }
                f.run(net, R);
            } else {
                g.reserve(net, G);
                G = 0;
                for (int r = 0; r < R; ++r) {
                    if (src[size_t(r)] >= 0) continue;
                    const int k = rowNode[size_t(r)];
                    g.H.row(G++) = net.pos.row(depth[size_t(k)]) + prefix.row(k);
                }
                if (G > 0) g.run(net, G);
                G = 0;
                for (int r = 0; r < R; ++r)
                    f.copyRun(src[size_t(r)] >= 0 ? sampled : g, src[size_t(r)] >= 0 ? src[size_t(r)] : G++,
                              r, 1);
            }
            for (int d = 0; d < n; ++d)
                if (rowsFrom[size_t(d + 1)] > rowsFrom[size_t(d)])
                    f.logits(net, d, rowsFrom[size_t(d)], rowsFrom[size_t(d + 1)] - rowsFrom[size_t(d)]);
            f.softmax(R, 1.0);
        }
    };

    static std::vector<Trace> traces(const Policy& pol, std::span<const std::vector<int>* const> plans,
                                     const MaskFn& mask);
    /// Samples decision by decision, the distinct prefixes of one decision as one batch.
    static std::vector<Trace> sample(const Policy& pol, const MaskFn& mask, std::span<Rng> rngs,
                                     double temperature);
    static double loss(const Policy& pol, std::span<const Trace> batch, std::span<const double> adv,
                       const MaskFn& mask, double clipEps, double entropyWeight, Params* grad,
                       double* meanEntropy, size_t batchSize);
    /// The loss over the tree `t` of `batch` (its forward pass run under `net`), and its gradient.
    static double lossOn(const Policy& pol, const Net& net, const Tree& t, std::span<const Trace> batch,
                         std::span<const double> adv, double clipEps, double entropyWeight, Params* grad,
                         double* meanEntropy, size_t batchSize);
    /// Policy::update on one tree for every epoch.
    static double update(Policy& pol, std::span<const Trace> sampled, std::span<const double> adv,
                         std::span<const std::vector<int>> imitated, double imitationAdvantage,
                         const MaskFn& mask, double clipEps, double entropyWeight, int epochs, Params& grad,
                         Adam& adam);
};

} // namespace sp::rl
