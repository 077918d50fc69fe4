#pragma once
// The layers of the Learn-to-Shard policy, each a forward and a backward pass in Eigen (double precision, so
// a finite-difference gradient check is exact to ~1e-7). Templates over Eigen expressions, so the policy's
// fixed-size vectors and matrices pass without copies. Backward functions add into gradient accumulators.

#include <Eigen/Dense>

#include <cmath>
#include <cstdint>
#include <vector>

namespace sp::rl {

using Vec = Eigen::VectorXd;
using Mat = Eigen::MatrixXd;

// ---------------------------------------------------------------- linear + ReLU

/// y = W x + b
template <class W, class B, class X, class Y> void linearForward(const W& w, const B& b, const X& x, Y& y) {
    y.noalias() = w * x;
    y += b;
}
/// dW += dy x^T, db += dy, dx = W^T dy
template <class W, class X, class DY, class DW, class DB, class DX>
void linearBackward(const W& w, const X& x, const DY& dy, DW& dW, DB& db, DX& dx) {
    dW.noalias() += dy * x.transpose();
    db += dy;
    dx.noalias() = w.transpose() * dy;
}
template <class X, class Y> void reluForward(const X& x, Y& y) {
    y = x.cwiseMax(0.0);
}
template <class X, class DY, class DX> void reluBackward(const X& x, const DY& dy, DX& dx) {
    dx = (x.array() > 0.0).select(dy, 0.0);
}

// ---------------------------------------------------------------- multi-head attention, one query

/// One query vector attends over K key/value rows: per head h (columns [h*dh, (h+1)*dh)),
/// alpha_h = softmax(Kmat_h q_h / sqrt(dh)), o_h = alpha_h^T Vmat_h. Kmat and Vmat are the projected keys and
/// values (K x d); the projections themselves are linear and handled by the caller.
struct AttentionCache {
    Mat alpha; ///< heads x K
    Vec o;     ///< d
};

// Plain loops: K (<= 32) and the head width (8) are far too small for Eigen's blocked products to pay off.
template <class Q, class KM, class VM>
void attentionForward(const Q& q, const KM& Kmat, const VM& Vmat, int heads, AttentionCache& c) {
    const int d = int(q.size()), K = int(Kmat.rows()), dh = d / heads;
    c.alpha.resize(heads, K);
    c.o.setZero(d);
    if (K == 0) return;
    const double scale = 1.0 / std::sqrt(double(dh));
    for (int h = 0; h < heads; ++h) {
        const int c0 = h * dh;
        double mx = -INFINITY;
        for (int k = 0; k < K; ++k) {
            double s = 0;
            for (int j = 0; j < dh; ++j) s += Kmat(k, c0 + j) * q[c0 + j];
            s *= scale;
            c.alpha(h, k) = s;
            mx = std::max(mx, s);
        }
        double z = 0;
        for (int k = 0; k < K; ++k) z += (c.alpha(h, k) = std::exp(c.alpha(h, k) - mx));
        const double inv = 1.0 / z;
        for (int k = 0; k < K; ++k) {
            const double a = (c.alpha(h, k) *= inv);
            for (int j = 0; j < dh; ++j) c.o[c0 + j] += a * Vmat(k, c0 + j);
        }
    }
}

/// Given dO: dq (set), and dKmat, dVmat (accumulated).
template <class Q, class KM, class VM, class DO, class DQ, class DK, class DV>
void attentionBackward(const Q& q, const KM& Kmat, const VM& Vmat, int heads, const AttentionCache& c,
                       const DO& dO, DQ& dq, DK& dKmat, DV& dVmat) {
    const int d = int(q.size()), K = int(Kmat.rows()), dh = d / heads;
    dq.setZero(d);
    if (K == 0) return;
    const double scale = 1.0 / std::sqrt(double(dh));
    double dA[256];
    for (int h = 0; h < heads; ++h) {
        const int c0 = h * dh;
        double adot = 0;
        for (int k = 0; k < K; ++k) {
            const double a = c.alpha(h, k);
            double s = 0;
            for (int j = 0; j < dh; ++j) {
                s += Vmat(k, c0 + j) * dO[c0 + j];
                dVmat(k, c0 + j) += a * dO[c0 + j];
            }
            dA[k] = s;
            adot += a * s;
        }
        for (int k = 0; k < K; ++k) {
            const double dS = c.alpha(h, k) * (dA[k] - adot) * scale; // softmax backward, scaled
            for (int j = 0; j < dh; ++j) {
                dq[c0 + j] += dS * Kmat(k, c0 + j);
                dKmat(k, c0 + j) += dS * q[c0 + j];
            }
        }
    }
}

// ---------------------------------------------------------------- masked softmax head

/// Log-probabilities over the valid entries of `logits` (invalid ones: -inf), and the entropy of the
/// distribution.
struct SoftmaxCache {
    Vec logp; ///< -inf where masked
    Vec p;    ///< 0 where masked
    double entropy = 0;
};

template <class L>
void maskedSoftmaxForward(const L& logits, const std::vector<uint8_t>& mask, SoftmaxCache& c) {
    const int n = int(logits.size());
    double mx = -INFINITY;
    for (int k = 0; k < n; ++k)
        if (mask[k]) mx = std::max(mx, double(logits[k]));
    double z = 0;
    c.p.setZero(n);
    for (int k = 0; k < n; ++k)
        if (mask[k]) z += (c.p[k] = std::exp(logits[k] - mx));
    c.p /= z;
    const double logz = mx + std::log(z);
    c.logp.resize(n);
    c.entropy = 0;
    for (int k = 0; k < n; ++k) {
        c.logp[k] = mask[k] ? logits[k] - logz : -INFINITY;
        if (mask[k] && c.p[k] > 0) c.entropy -= c.p[k] * c.logp[k];
    }
}

/// dlogits for a loss that depends on log p(action) with weight gLogp and on the entropy with weight
/// gEntropy: d logp(a)/dlogits = onehot(a) - p;  dH/dlogits_k = -p_k (logp_k + H).
inline void maskedSoftmaxBackward(const SoftmaxCache& c, int action, double gLogp, double gEntropy,
                                  Vec& dlogits) {
    const int n = int(c.p.size());
    dlogits.resize(n);
    for (int k = 0; k < n; ++k) {
        const double pk = c.p[k];
        double g = -gLogp * pk;
        if (pk > 0) g += gEntropy * (-pk * (c.logp[k] + c.entropy));
        dlogits[k] = g;
    }
    dlogits[action] += gLogp;
}

/// The same, added to dlogits (which has the logits' size): for gradients summed over several uses of one
/// softmax.
inline void maskedSoftmaxBackwardAdd(const SoftmaxCache& c, int action, double gLogp, double gEntropy,
                                     Vec& dlogits) {
    const int n = int(c.p.size());
    for (int k = 0; k < n; ++k) {
        const double pk = c.p[k];
        double g = -gLogp * pk;
        if (pk > 0) g += gEntropy * (-pk * (c.logp[k] + c.entropy));
        dlogits[k] += g;
    }
    dlogits[action] += gLogp;
}

} // namespace sp::rl
