#pragma once
// The serving simulation's statistics: the inter-token latency histogram, and the result summary
// (simstats.cpp). Internal to core/sim.

#include "core/sim/simulator.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace sp::simimpl {

/// Inter-token latencies: one per output token, 10^8 of them in a long run, so they go into a histogram of
/// logarithmic bins 0.2% wide (percentiles to within that), from 1 us to 10^5 s.
class LogHistogram {
public:
    LogHistogram() : m_bins(size_t(std::ceil(std::log(1e11) / kStep)) + 2, 0.0) {}
    void add(double seconds, double weight) {
        if (weight <= 0) return;
        m_sum += seconds * weight, m_weight += weight;
        m_max = std::max(m_max, seconds);
        m_bins[index(seconds)] += weight;
    }
    double weight() const { return m_weight; }
    double mean() const { return m_weight > 0 ? m_sum / m_weight : 0.0; }
    double max() const { return m_max; }
    /// The bin holding the p-th percentile (nearest rank), at its geometric middle.
    double quantile(double p) const {
        if (m_weight <= 0) return 0.0;
        const double rank = std::ceil(p / 100.0 * m_weight);
        double seen = 0;
        for (size_t i = 0; i < m_bins.size(); ++i) {
            seen += m_bins[i];
            if (seen >= rank && m_bins[i] > 0)
                return std::min(m_max, i == 0 ? kMin : kMin * std::exp((double(i) - 0.5) * kStep));
        }
        return m_max;
    }

private:
    static constexpr double kMin = 1e-6, kStep = 0.002;
    size_t index(double s) const {
        if (s <= kMin) return 0;
        return std::min(m_bins.size() - 1, size_t(1 + std::floor(std::log(s / kMin) / kStep)));
    }
    std::vector<double> m_bins;
    double m_sum = 0, m_weight = 0, m_max = 0;
};

struct Sim;
/// The run's requests, latencies and rates into `r` (it takes the sorted latencies from `sim`).
void fillResult(Sim& sim, SimResult& r, bool finished);

} // namespace sp::simimpl
