#pragma once
// Random draws for the simulation, on the project's portable generator (core/search/rng.h): the standard
// library's distributions differ between implementations, these do not, so a seed replays the same run
// everywhere.

#include "core/model/workload.h"
#include "core/search/rng.h"

#include <vector>

namespace sp {

/// A standard normal draw (Box-Muller, one of the pair).
double drawNormal(Rng& rng);
/// A gamma draw of shape k and scale 1 (Marsaglia and Tsang, ACM TOMS 26(3), 2000; k < 1 by
/// Gamma(k) = Gamma(k + 1) U^(1/k)).
double drawGamma(Rng& rng, double k);
/// A request's length: `fixed` for LengthDist::Kind::Fixed, else a draw of the distribution, at least 1.
int64_t drawLength(Rng& rng, const LengthDist& d, int64_t fixed);

/// Draws from one distribution many times, as drawLength does with the same generator calls: a histogram's
/// cumulative weights are summed once, and each draw is a binary search over them (a per-draw walk over the
/// bins once made capacity runs on a 200,000-bin histogram take minutes).
class LengthSampler {
public:
    LengthSampler(const LengthDist& d, int64_t fixed);
    int64_t draw(Rng& rng) const;

private:
    const LengthDist* m_d;
    int64_t m_fixed;
    std::vector<double> m_cumulative; ///< the histogram's weights summed up to and including each bin
};

} // namespace sp
