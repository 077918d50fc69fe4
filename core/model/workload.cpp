#include "core/model/workload.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace sp {

namespace {

double normalCdf(double x) {
    return 0.5 * std::erfc(-x / std::sqrt(2.0));
}

} // namespace

double LengthDist::expected() const {
    switch (kind) {
    case Kind::Fixed:
        return double(min);
    case Kind::Uniform:
        return (double(min) + double(max)) / 2.0;
    case Kind::Histogram: {
        double sum = 0, weights = 0;
        for (const Bin& b : bins) sum += b.weight * (double(b.lo) + double(b.hi)) / 2.0, weights += b.weight;
        return weights > 0 ? sum / weights : 0.0;
    }
    case Kind::Lognormal: {
        if (cv <= 0) return std::clamp(mean, double(min), max > 0 ? double(max) : mean);
        // X = exp(N(mu, s^2)) with E[X] = mean and CV cv: s^2 = ln(1 + cv^2), mu = ln(mean) - s^2 / 2. The
        // clamped mean is a P(X < a) + E[X; a <= X <= b] + b P(X > b), with E[X; X <= x] = mean Phi(z(x) -
        // s).
        const double s = std::sqrt(std::log1p(cv * cv)), mu = std::log(mean) - s * s / 2.0;
        const double inf = std::numeric_limits<double>::infinity();
        const double za = min > 0 ? (std::log(double(min)) - mu) / s : -inf;
        const double zb = max > 0 ? (std::log(double(max)) - mu) / s : inf;
        double e = mean * (normalCdf(zb - s) - normalCdf(za - s));
        if (min > 0) e += double(min) * normalCdf(za);
        if (max > 0) e += double(max) * (1.0 - normalCdf(zb));
        return e;
    }
    }
    return 0.0;
}

} // namespace sp
