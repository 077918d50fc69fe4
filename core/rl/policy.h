#pragma once
// The Learn-to-Shard policy (after arXiv 2509.00217): an autoregressive distribution over a search space's
// decisions, conditioned on the elite history, the best distinct plans found so far.
//
//  - every choice of every decision has an embedding E_i[k] (d), every decision a position embedding P_i;
//  - an elite plan is one token: the sum of its choices' embeddings, plus u * (its normalized reward), plus a
//  bias;
//  - for decision i of a sample, the query h_i = P_i + sum_{j<i} E_j[a_j] (the decisions already taken)
//  attends,
//    with multi-head attention (projections Wq, Wk, Wv, Wo), over the elite tokens, giving c_i;
//  - an MLP on [h_i; c_i] gives y_i (d); logits_i[k] = E_i[k] . y_i + beta_i[k]; invalid choices are masked.
//
// Training: PPO with clipping (per decision, the plan's advantage on every decision), or REINFORCE with the
// batch mean as baseline (the first PPO epoch is exactly that), plus an entropy bonus; gradients by hand,
// checked against finite differences in tests/tst_rl.cpp.

#include "core/rl/layers.h"

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

namespace sp {
class Rng;
}

namespace sp::rl {

/// The network's widths are compile-time constants: fixed-size Eigen products are several times faster than
/// dynamic ones at these sizes, and the policy runs for every sampled plan.
inline constexpr int kDim = 16;    ///< d: embeddings, attention
inline constexpr int kHidden = 32; ///< MLP width

using VecD = Eigen::Matrix<double, kDim, 1>;
using VecM = Eigen::Matrix<double, kHidden, 1>;
using Vec2D = Eigen::Matrix<double, 2 * kDim, 1>;
using MatDD = Eigen::Matrix<double, kDim, kDim>;
using MatM2D = Eigen::Matrix<double, kHidden, 2 * kDim>;
using MatDM = Eigen::Matrix<double, kDim, kHidden>;
using RowsD = Eigen::Matrix<double, Eigen::Dynamic, kDim, Eigen::RowMajor>; ///< one row per choice / token

/// How the policy computes. Reference: plan by plan and node by node in double precision, the path the
/// finite-difference checks were first written for. Double and Float: every node of a batch (all the batch's
/// distinct prefixes, or all of one decision's while sampling) goes through each layer as one matrix
/// product, softmaxes and exps vectorised over the batch; Float halves memory traffic and doubles the SIMD
/// lanes, and is what the searcher runs (the parameters, Adam and the losses stay double). Tests hold the
/// three to the same outputs.
enum class Compute { Reference, Double, Float };

struct PolicyConfig {
    int heads = 2; ///< attention heads (divides kDim)
    double initScale = 0.1;
    Compute compute = Compute::Float;
};

/// All trainable parameters. forEach visits every block in a fixed order (Adam, the gradient check).
struct Params {
    std::vector<RowsD> emb; ///< per decision: choices x d
    std::vector<Vec> bias;  ///< per decision: choices
    RowsD pos;              ///< decisions x d
    VecD rewardVec, tokenBias;
    MatDD Wq, Wk, Wv, Wo;
    MatM2D W1;
    VecM b1;
    MatDM W2;
    VecD b2;

    void forEach(const std::function<void(double*, Eigen::Index)>& f);
    /// Same shapes, all zero.
    Params zerosLike() const;
    size_t size() const;
    /// this += other (same shapes).
    void add(const Params& other);
};

/// One elite plan as the policy sees it.
struct EliteToken {
    std::vector<int> choices; ///< index per decision
    double reward = 0;        ///< normalized reward feature
};

/// A sampled plan with what training needs from its forward pass.
struct Trace {
    std::vector<int> actions;
    std::vector<double> oldLogp; ///< per decision, at sampling time
    double entropy = 0;          ///< sum over decisions
    /// The batched sampler's: the sampling call, and per decision the row of its forward pass (-1: forced),
    /// so that update() reuses that pass while the policy is unchanged (0 / empty: none).
    uint64_t sampledBy = 0;
    std::vector<int> rows;
};

/// Per-decision valid-choice masks given the decisions before it: mask(i, prefix, out).
using MaskFn = std::function<void(int, const std::vector<int>&, std::vector<uint8_t>&)>;

class Adam;

class Policy {
public:
    Policy(std::vector<int> choiceCounts, PolicyConfig cfg, uint64_t seed);

    const PolicyConfig& config() const { return m_cfg; }
    int decisions() const { return int(m_counts.size()); }
    /// Mutable access: the parameters may change, so a sampled batch's forward pass is not reused.
    Params& params() {
        m_sampledId = 0;
        return m_p;
    }
    const Params& params() const { return m_p; }

    /// Sets the elite history for the following samples and updates (recomputes its tokens, keys and values).
    void setElite(std::vector<EliteToken> elite);

    /// Samples one plan following the masks. temperature > 1 flattens the distribution (exploration).
    Trace sample(const MaskFn& mask, Rng& rng, double temperature = 1.0) const;
    /// One plan per generator, the same traces as sample() with each generator in turn (to rounding on the
    /// batched paths), but decisions reached by the same prefix share one forward pass (a converged policy's
    /// samples share most of theirs).
    std::vector<Trace> sampleBatch(const MaskFn& mask, std::span<Rng> rngs, double temperature = 1.0) const;
    /// The trace of a given plan (its log-probabilities under the current policy), e.g. an elite plan to
    /// imitate.
    Trace trace(const std::vector<int>& actions, const MaskFn& mask) const;
    /// The traces of several plans, their shared prefixes scored once.
    std::vector<Trace> traces(std::span<const std::vector<int>> plans, const MaskFn& mask) const;

    /// The loss over a batch, and (when grad is not null) its gradient added to *grad:
    ///   L = -(1/B) sum_b sum_i min(rho_bi A_b, clip(rho_bi, 1-eps, 1+eps) A_b) - entropyWeight (1/B) sum_b
    ///   sum_i H_bi
    /// with rho_bi = exp(logp_bi - oldLogp_bi). With eps <= 0 there is no clipping (REINFORCE with baseline
    /// when oldLogp equals the current log-probabilities). Masks are recomputed from the traces' actions.
    /// `batchSize` > 0 normalizes by that many samples instead of batch.size(): the loss of a batch is then
    /// the sum of the losses of its parts (to split an update, e.g. over threads).
    double loss(std::span<const Trace> batch, std::span<const double> advantages, const MaskFn& mask,
                double clipEps, double entropyWeight, Params* grad, double* meanEntropy = nullptr,
                size_t batchSize = 0) const;

    /// One update: the `imitated` plans scored under the current policy (their oldLogp) join `sampled` with
    /// the advantage `imitationAdvantage`; then `epochs` times the loss over all of them (normalized by their
    /// number), its gradient into `grad`, and a step of `adam`. Returns the first epoch's mean entropy. The
    /// same as traces() and loss() in that order, but the batched paths build the prefix tree once (the
    /// masks, the imitated plans' scores and the first epoch's forward pass shared).
    double update(std::span<const Trace> sampled, std::span<const double> advantages,
                  std::span<const std::vector<int>> imitated, double imitationAdvantage, const MaskFn& mask,
                  double clipEps, double entropyWeight, int epochs, Params& grad, Adam& adam);

private:
    template <class S> friend struct Batched; // the Double and Float paths (batched.h)
    struct Step;                              // per-decision forward cache
    /// Samples (given == null) or scores (the given actions) a plan decision by decision.
    Trace walk(const MaskFn& mask, Rng* rng, const std::vector<int>* given, double temperature) const;
    void forwardStep(int i, const VecD& h, const std::vector<uint8_t>& mask, Step& s,
                     double temperature) const;
    /// The reference path of sampleBatch and loss (reference.cpp).
    std::vector<Trace> sampleReference(const MaskFn& mask, std::span<Rng> rngs, double temperature) const;
    double lossReference(std::span<const Trace> batch, std::span<const double> advantages, const MaskFn& mask,
                         double clipEps, double entropyWeight, Params* grad, double* meanEntropy,
                         size_t batchSize) const;

    /// A new id for a batched sampling call, noted as the latest under the current parameters and elite.
    uint64_t noteSampling() const;

    std::vector<int> m_counts;
    PolicyConfig m_cfg;
    mutable uint64_t m_sampledId = 0; ///< the latest sampling call since the parameters or the elite changed
    Params m_p;
    std::vector<EliteToken> m_elite;
    RowsD m_tokens, m_keys, m_values; ///< elite x d
};

/// Adam over Params.
class Adam {
public:
    explicit Adam(const Params& shape, double lr = 3e-3, double beta1 = 0.9, double beta2 = 0.999,
                  double eps = 1e-8);
    /// p -= lr * mhat / (sqrt(vhat) + eps); grad is consumed (zeroed).
    void step(Params& p, Params& grad);
    double& learningRate() { return m_lr; }

private:
    Params m_m, m_v;
    double m_lr, m_b1, m_b2, m_eps;
    int64_t m_t = 0;
};

} // namespace sp::rl
