// The loss and its gradient on the batched paths (core/rl/batched.h): the forward pass of the prefix tree,
// the PPO terms per use of a node, and the backward pass of every node as one matrix product per layer.

#include "core/rl/batched.h"

#include <optional>

namespace sp::rl {

template <class S>
double Batched<S>::loss(const Policy& pol, std::span<const Trace> batch, std::span<const double> adv,
                        const MaskFn& mask, double clipEps, double entropyWeight, Params* grad,
                        double* meanEntropy, size_t batchSize) {
    const Net net(pol);
    std::vector<const std::vector<int>*> plans(batch.size());
    for (size_t b = 0; b < batch.size(); ++b) plans[b] = &batch[b].actions;
    const Tree t(pol, net, plans, mask);
    return lossOn(pol, net, t, batch, adv, clipEps, entropyWeight, grad, meanEntropy, batchSize);
}

template <class S>
double Batched<S>::update(Policy& pol, std::span<const Trace> sampled, std::span<const double> adv,
                          std::span<const std::vector<int>> imitated, double imitationAdvantage,
                          const MaskFn& mask, double clipEps, double entropyWeight, int epochs, Params& grad,
                          Adam& adam) {
    std::vector<Trace> batch(sampled.begin(), sampled.end());
    std::vector<double> a(adv.begin(), adv.end());
    for (const auto& plan : imitated) {
        Trace tr;
        tr.actions = plan;
        batch.push_back(std::move(tr));
        a.push_back(imitationAdvantage);
    }
    std::vector<const std::vector<int>*> plans(batch.size());
    for (size_t b = 0; b < batch.size(); ++b) plans[b] = &batch[b].actions;
    std::optional<Net> net(std::in_place, pol);
    Tree t(pol, net.value(), plans, mask, false);
    // The first epoch runs under the parameters the batch was sampled with: its sampled nodes' forward pass
    // is the sampler's, still in its workspace unless the policy or the workspace changed since.
    if (pol.m_sampledId != 0 && pol.m_sampledId == sampledId())
        for (size_t b = 0; b < sampled.size(); ++b) {
            if (sampled[b].sampledBy != pol.m_sampledId) continue;
            for (int i = 0; i < t.n; ++i) {
                const int r = t.row[size_t(t.path[b * size_t(t.n) + size_t(i)])];
                if (r >= 0 && sampled[b].rows[size_t(i)] >= 0) t.src[size_t(r)] = sampled[b].rows[size_t(i)];
            }
        }
    t.forward(*net);
    std::fill(t.src.begin(), t.src.end(), -1);
    // The imitated plans' log-probabilities under the current policy, read from the first epoch's forward
    // pass (as traces() would score them, without a tree of their own).
    for (size_t b = sampled.size(); b < batch.size(); ++b) {
        Trace& tr = batch[b];
        tr.oldLogp.assign(size_t(t.n), 0.0);
        for (int i = 0; i < t.n; ++i) {
            const int k = t.path[b * size_t(t.n) + size_t(i)], r = t.row[size_t(k)];
            if (r >= 0) tr.oldLogp[size_t(i)] = double(t.f.L(r, tr.actions[size_t(i)]));
        }
    }
    double entropy = 0;
    for (int e = 0; e < epochs; ++e) {
        if (e > 0) net.emplace(pol), t.forward(*net);
        double epochEntropy = 0;
        lossOn(pol, *net, t, batch, a, clipEps, entropyWeight, &grad, &epochEntropy, 0);
        if (e == 0) entropy = epochEntropy;
        adam.step(pol.params(), grad);
    }
    return entropy;
}

template <class S>
double Batched<S>::lossOn(const Policy& pol, const Net& net, const Tree& t, std::span<const Trace> batch,
                          std::span<const double> adv, double clipEps, double entropyWeight, Params* grad,
                          double* meanEntropy, size_t batchSize) {
    const int d = kDim, K = int(pol.m_elite.size());
    const double invB = 1.0 / double(std::max<size_t>(1, batchSize > 0 ? batchSize : batch.size()));
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
            dKeys.middleCols(hd * dh, dh).noalias() = dA.transpose() * f.Q.topRows(R).middleCols(hd * dh, dh);
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
        g.emb[size_t(t.depth[size_t(k)] - 1)].row(t.action[size_t(k)]) += sub.row(k).template cast<double>();
        sub.row(t.parent[size_t(k)]) += sub.row(k);
    }
    return total;
}

template double Batched<float>::loss(const Policy&, std::span<const Trace>, std::span<const double>,
                                     const MaskFn&, double, double, Params*, double*, size_t);
template double Batched<double>::loss(const Policy&, std::span<const Trace>, std::span<const double>,
                                      const MaskFn&, double, double, Params*, double*, size_t);
template double Batched<float>::update(Policy&, std::span<const Trace>, std::span<const double>,
                                       std::span<const std::vector<int>>, double, const MaskFn&, double,
                                       double, int, Params&, Adam&);
template double Batched<double>::update(Policy&, std::span<const Trace>, std::span<const double>,
                                        std::span<const std::vector<int>>, double, const MaskFn&, double,
                                        double, int, Params&, Adam&);

} // namespace sp::rl
