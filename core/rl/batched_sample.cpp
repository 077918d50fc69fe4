// Sampling and scoring on the batched paths (core/rl/batched.h).

#include "core/rl/batched.h"

namespace sp::rl {

template <class S>
std::vector<Trace> Batched<S>::traces(const Policy& pol, std::span<const std::vector<int>* const> plans,
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

template <class S>
std::vector<Trace> Batched<S>::sample(const Policy& pol, const MaskFn& mask, std::span<Rng> rngs,
                                      double temperature) {
    const Net net(pol);
    const int n = pol.decisions(), B = int(rngs.size());
    std::vector<Trace> out(static_cast<size_t>(B));
    for (auto& t : out)
        t.actions.assign(size_t(n), 0), t.oldLogp.assign(size_t(n), 0.0), t.rows.assign(size_t(n), -1);
    // This decision's nodes: their prefix sums, a sample through each (its actions are the prefix the
    // mask reads), their rows; the next decision's nodes are the distinct (node, action).
    std::vector<int> node(static_cast<size_t>(B), 0), first{0}, nextFirst, nodeRow, nodeOnly, childParent,
        childAction;
    M prefix = M::Zero(B, kDim), nextPrefix(B, kDim);
    // Every decision's rows stay in the workspace (decision i from `base`), so that update() can take the
    // forward pass of the sampled nodes from it while the policy is unchanged.
    Forward& f = workspace(1);
    f.reserve(net, B * n);
    const uint64_t id = pol.noteSampling();
    sampledId() = id;
    int base = 0;
    std::vector<uint8_t> m;
    std::vector<double> w;
    for (int i = 0; i < n; ++i) {
        const int N = int(first.size()), c = pol.m_counts[size_t(i)];
        nodeRow.assign(size_t(N), -1);
        nodeOnly.assign(size_t(N), -1);
        int R = 0;
        for (int k = 0; k < N; ++k) {
            mask(i, out[size_t(first[size_t(k)])].actions, m);
            const auto [count, one] = readMask(m, c, f.valid, base + R);
            if (count == 1) {
                nodeOnly[size_t(k)] = one;
                continue;
            }
            f.H.row(base + R) = net.pos.row(i) + prefix.row(k);
            nodeRow[size_t(k)] = base + R++;
        }
        if (R > 0) {
            f.run(net, R, base);
            f.logits(net, i, base, R);
            f.softmax(R, temperature, base);
        }
        base += R;
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
                t.rows[size_t(i)] = r;
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
    for (auto& t : out) t.sampledBy = id;
    return out;
}

template struct Batched<float>;
template struct Batched<double>;

} // namespace sp::rl
