#include "core/search/searcher.h"

#include "core/search/rng.h"

#include <cmath>
#include <utility>

namespace sp {

namespace {

/// 2000000 -> "2,000,000"; beyond 1e15, scientific notation.
std::string formatCount(double n) {
    if (n >= 1e15) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%.3g", n);
        return buf;
    }
    // Thousands separators, built front to back (GCC 12's -Wrestrict misfires on std::string::insert here).
    const std::string digits = std::to_string(int64_t(std::llround(n)));
    std::string s;
    for (size_t i = 0; i < digits.size(); ++i) {
        if (i > 0 && digits[i] != '-' && (digits.size() - i) % 3 == 0 && digits[i - 1] != '-')
            s.push_back(',');
        s.push_back(digits[i]);
    }
    return s;
}

} // namespace

SearchResult MegatronSearcher::run(const SearchSpace& space, Engine& engine, const SearchOptions& options,
                                   Observer* observer, std::stop_token stop) {
    SearchRun run(engine, space, options, observer, std::move(stop), name());
    if (auto plan = engine.objective().megatronPlan()) {
        run.evaluatePlan(*plan);
    } else {
        const auto a = space.megatronLike();
        if (!a) return run.refuse("no valid plan: " + space.emptyReason());
        run.evaluate(*a);
    }
    return run.finish();
}

SearchResult ExhaustiveSearcher::run(const SearchSpace& space, Engine& engine, const SearchOptions& options,
                                     Observer* observer, std::stop_token stop) {
    SearchOptions o = options;
    o.budget.evaluations = 0; // the space is the budget
    SearchRun run(engine, space, o, observer, std::move(stop), name());
    if (space.empty()) return run.refuse("no valid plan: " + space.emptyReason());
    const SpaceSize size = space.size();
    if (!size.exact || size.count > m_limit)
        return run.refuse("exhaustive: the space has " + formatCount(size.count) +
                          " valid plans, above the limit of " + formatCount(m_limit) +
                          "; use random, sa or ga");
    run.assumeDistinct();
    constexpr size_t kBatch = 256;
    std::vector<std::vector<int>> batch;
    batch.reserve(kBatch);
    space.forEach([&](std::span<const int> a) {
        batch.emplace_back(a.begin(), a.end());
        if (batch.size() < kBatch) return true;
        run.evaluate(batch);
        batch.clear();
        return !run.done();
    });
    if (!batch.empty() && !run.done()) run.evaluate(batch);
    const int64_t evaluated = run.evaluations();
    SearchResult r = run.finish();
    if (double(evaluated) < size.count) {
        const std::string cut = "exhaustive: stopped after " + formatCount(double(evaluated)) + " of " +
                                formatCount(size.count) + " plans, so the best is not a proven optimum";
        r.message = r.message.empty() ? cut : cut + "; " + r.message;
    }
    return r;
}

SearchResult RandomSearcher::run(const SearchSpace& space, Engine& engine, const SearchOptions& options,
                                 Observer* observer, std::stop_token stop) {
    SearchRun run(engine, space, options, observer, std::move(stop), name());
    if (space.empty()) return run.refuse("no valid plan: " + space.emptyReason());
    if (options.budget.unlimited()) return run.refuse("random: needs a budget (evaluations or seconds)");
    Rng rng(options.seed);
    warmStart(run, engine, rng);
    constexpr int kBatch = 64;
    std::vector<std::vector<int>> batch(kBatch);
    while (!run.done()) {
        for (auto& a : batch) a = space.sample(rng);
        run.evaluate(batch);
    }
    return run.finish();
}

} // namespace sp
