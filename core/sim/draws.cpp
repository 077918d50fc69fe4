#include "core/sim/draws.h"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace sp {

double drawNormal(Rng& rng) {
    const double u1 = std::max(rng.uniform(), 0x1.0p-53), u2 = rng.uniform();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
}

double drawGamma(Rng& rng, double k) {
    if (k < 1.0) return drawGamma(rng, k + 1.0) * std::pow(std::max(rng.uniform(), 0x1.0p-53), 1.0 / k);
    const double d = k - 1.0 / 3.0, c = 1.0 / std::sqrt(9.0 * d);
    while (true) {
        double x, v;
        do {
            x = drawNormal(rng);
            v = 1.0 + c * x;
        } while (v <= 0.0);
        v = v * v * v;
        const double u = rng.uniform();
        if (u < 1.0 - 0.0331 * x * x * x * x) return d * v;
        if (std::log(std::max(u, 0x1.0p-53)) < 0.5 * x * x + d * (1.0 - v + std::log(v))) return d * v;
    }
}

int64_t drawLength(Rng& rng, const LengthDist& d, int64_t fixed) {
    switch (d.kind) {
    case LengthDist::Kind::Fixed:
        return std::max<int64_t>(1, fixed);
    case LengthDist::Kind::Uniform:
        return d.min + int64_t(rng.below(uint64_t(d.max - d.min + 1)));
    case LengthDist::Kind::Lognormal: {
        double x = d.mean;
        if (d.cv > 0) {
            const double s = std::sqrt(std::log1p(d.cv * d.cv)), mu = std::log(d.mean) - s * s / 2.0;
            x = std::exp(mu + s * drawNormal(rng));
        }
        int64_t n = std::llround(x);
        n = std::max(n, std::max<int64_t>(1, d.min));
        if (d.max > 0) n = std::min(n, d.max);
        return n;
    }
    case LengthDist::Kind::Histogram:
        return LengthSampler(d, fixed).draw(rng);
    }
    return std::max<int64_t>(1, fixed);
}

LengthSampler::LengthSampler(const LengthDist& d, int64_t fixed) : m_d(&d), m_fixed(fixed) {
    if (d.kind != LengthDist::Kind::Histogram) return;
    m_cumulative.reserve(d.bins.size());
    double total = 0;
    for (const auto& b : d.bins) m_cumulative.push_back(total += std::max(0.0, b.weight));
}

int64_t LengthSampler::draw(Rng& rng) const {
    if (m_d->kind != LengthDist::Kind::Histogram || m_cumulative.empty())
        return drawLength(rng, *m_d, m_fixed);
    // As Rng::weighted: one uniform draw scaled by the total, the first bin whose running sum passes it, the
    // last bin of positive weight where rounding leaves it past them all.
    const double x = rng.uniform() * m_cumulative.back();
    size_t i = size_t(std::upper_bound(m_cumulative.begin(), m_cumulative.end(), x) - m_cumulative.begin());
    if (i >= m_cumulative.size()) {
        i = m_cumulative.size() - 1;
        while (i > 0 && m_d->bins[i].weight <= 0) --i;
    }
    const auto& b = m_d->bins[i];
    return b.lo + int64_t(rng.below(uint64_t(b.hi - b.lo + 1)));
}

} // namespace sp
