#pragma once
// A small, fast, portable random generator (xoshiro256**, seeded through splitmix64). The standard library's
// distributions differ between implementations; these do not, so a seed gives the same search everywhere.

#include <cstddef>
#include <cstdint>

namespace sp {

class Rng {
public:
    explicit Rng(uint64_t seed = 1) {
        for (auto& s : m_s) s = splitmix(seed);
    }

    uint64_t next() {
        const uint64_t result = rotl(m_s[1] * 5, 7) * 9;
        const uint64_t t = m_s[1] << 17;
        m_s[2] ^= m_s[0];
        m_s[3] ^= m_s[1];
        m_s[1] ^= m_s[2];
        m_s[0] ^= m_s[3];
        m_s[2] ^= t;
        m_s[3] = rotl(m_s[3], 45);
        return result;
    }

    /// Uniform in [0, n), unbiased (Lemire's multiply-and-reject). n must be > 0.
    uint64_t below(uint64_t n) {
        __extension__ using U128 = unsigned __int128;
        U128 m = U128(next()) * n;
        uint64_t low = uint64_t(m);
        if (low < n) {
            const uint64_t threshold = (0 - n) % n;
            while (low < threshold) {
                m = U128(next()) * n;
                low = uint64_t(m);
            }
        }
        return uint64_t(m >> 64);
    }
    int below(int n) { return int(below(uint64_t(n))); }

    /// Uniform in [0, 1), 53 random bits.
    double uniform() { return double(next() >> 11) * 0x1.0p-53; }
    bool chance(double p) { return uniform() < p; }

    /// An index drawn with probability proportional to weights[i] (non-negative, not all zero).
    template <class W> size_t weighted(const W& weights) {
        double total = 0;
        for (double w : weights) total += w;
        double x = uniform() * total;
        size_t last = 0;
        for (size_t i = 0; i < size_t(weights.size()); ++i) {
            if (weights[i] <= 0) continue;
            last = i;
            if (x < weights[i]) return i;
            x -= weights[i];
        }
        return last; // rounding: the last positive weight
    }

    /// A generator for a sub-task, independent of this one's later draws.
    Rng split() { return Rng(next()); }

private:
    static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
    static uint64_t splitmix(uint64_t& x) {
        uint64_t z = (x += 0x9e3779b97f4a7c15ull);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        return z ^ (z >> 31);
    }
    uint64_t m_s[4];
};

} // namespace sp
