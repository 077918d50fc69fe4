#include "core/search/benchmark.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace sp {

BenchRun BenchRun::of(const SearchResult& r) {
    BenchRun b;
    b.best = r.feasible() ? r.best.metrics.throughput : 0;
    b.evaluations = r.evaluations;
    b.cpuSeconds = r.cpuSeconds;
    b.curve = r.curve;
    b.curveCpuSeconds = r.curveCpuSeconds;
    return b;
}

double BenchRun::bestWithin(double cpu) const {
    double best = 0;
    for (size_t i = 0; i < curve.size() && i < curveCpuSeconds.size(); ++i)
        if (curveCpuSeconds[i] <= cpu) best = std::max(best, curve[i].second);
    return best;
}

double medianOf(std::vector<double> v) {
    if (v.empty()) return std::nan("");
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

BenchSummary summarize(const std::vector<BenchRun>& runs, double reference, double equalCpu) {
    BenchSummary s;
    s.runs = int(runs.size());
    const double nan = std::nan(""), inf = std::numeric_limits<double>::infinity();
    s.timeWithin01 = s.timeWithin1 = s.timeMedianFraction = nan;
    if (runs.empty() || !(reference > 0)) {
        s.medianBest = s.minBest = s.maxBest = s.within01 = s.within1 = s.medianFraction = nan;
        s.evalsTo1 = s.cpuTo1 = s.medianCpuSeconds = nan;
        return s;
    }
    const double n = double(runs.size());
    std::vector<double> bests, fractions, evals, cpu, cpuRun, timeFractions;
    int w01 = 0, w1 = 0, t01 = 0, t1 = 0;
    for (const BenchRun& r : runs) {
        bests.push_back(r.best);
        fractions.push_back(r.best / reference);
        w01 += r.best >= (1 - 1e-3) * reference;
        w1 += r.best >= 0.99 * reference;
        double e = inf, c = inf;
        for (size_t i = 0; i < r.curve.size(); ++i)
            if (r.curve[i].second >= 0.99 * reference) {
                e = double(r.curve[i].first);
                c = i < r.curveCpuSeconds.size() ? r.curveCpuSeconds[i] : inf;
                break;
            }
        evals.push_back(e);
        cpu.push_back(c);
        cpuRun.push_back(r.cpuSeconds);
        if (equalCpu > 0) {
            const double b = r.bestWithin(equalCpu);
            timeFractions.push_back(b / reference);
            t01 += b >= (1 - 1e-3) * reference;
            t1 += b >= 0.99 * reference;
        }
    }
    s.medianBest = medianOf(bests);
    s.minBest = *std::min_element(bests.begin(), bests.end());
    s.maxBest = *std::max_element(bests.begin(), bests.end());
    s.within01 = w01 / n;
    s.within1 = w1 / n;
    s.medianFraction = medianOf(fractions);
    s.evalsTo1 = medianOf(evals);
    s.cpuTo1 = medianOf(cpu);
    s.medianCpuSeconds = medianOf(cpuRun);
    if (equalCpu > 0) {
        s.timeWithin01 = t01 / n;
        s.timeWithin1 = t1 / n;
        s.timeMedianFraction = medianOf(timeFractions);
    }
    return s;
}

} // namespace sp
