#include "core/rl/policy.h"

#include "core/rl/batched.h"
#include "core/search/rng.h"

#include <atomic>
#include <cmath>

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

uint64_t Policy::noteSampling() const {
    static std::atomic<uint64_t> next{0};
    m_sampledId = ++next;
    return m_sampledId;
}

void Policy::setElite(std::vector<EliteToken> elite) {
    m_sampledId = 0;
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

// ---------------------------------------------------------------- dispatch to the compute paths

Trace Policy::sample(const MaskFn& mask, Rng& rng, double temperature) const {
    if (m_cfg.compute != Compute::Reference)
        return sampleBatch(mask, std::span<Rng>(&rng, 1), temperature)[0];
    return walk(mask, &rng, nullptr, temperature);
}

std::vector<Trace> Policy::sampleBatch(const MaskFn& mask, std::span<Rng> rngs, double temperature) const {
    if (m_cfg.compute == Compute::Float) return Batched<float>::sample(*this, mask, rngs, temperature);
    if (m_cfg.compute == Compute::Double) return Batched<double>::sample(*this, mask, rngs, temperature);
    return sampleReference(mask, rngs, temperature);
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
    return lossReference(batch, adv, mask, clipEps, entropyWeight, grad, meanEntropy, batchSize);
}

double Policy::update(std::span<const Trace> sampled, std::span<const double> adv,
                      std::span<const std::vector<int>> imitated, double imitationAdvantage,
                      const MaskFn& mask, double clipEps, double entropyWeight, int epochs, Params& grad,
                      Adam& adam) {
    if (m_cfg.compute == Compute::Float)
        return Batched<float>::update(*this, sampled, adv, imitated, imitationAdvantage, mask, clipEps,
                                      entropyWeight, epochs, grad, adam);
    if (m_cfg.compute == Compute::Double)
        return Batched<double>::update(*this, sampled, adv, imitated, imitationAdvantage, mask, clipEps,
                                       entropyWeight, epochs, grad, adam);
    std::vector<Trace> batch(sampled.begin(), sampled.end());
    std::vector<double> a(adv.begin(), adv.end());
    m_sampledId = 0;
    for (auto& t : traces(imitated, mask)) batch.push_back(std::move(t)), a.push_back(imitationAdvantage);
    double entropy = 0;
    for (int e = 0; e < epochs; ++e) {
        double epochEntropy = 0;
        loss(batch, a, mask, clipEps, entropyWeight, &grad, &epochEntropy);
        if (e == 0) entropy = epochEntropy;
        adam.step(m_p, grad);
    }
    return entropy;
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