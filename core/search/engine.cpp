#include "core/search/engine.h"
#include "core/search/flatmap.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <condition_variable>
#include <cstring>
#include <ctime>
#include <limits>
#include <mutex>
#include <stdexcept>
#include <thread>

namespace sp {

double planScore(const Metrics& m) {
    if (!m.valid) return -std::numeric_limits<double>::infinity();
    if (m.feasible) return std::max(0.0, m.throughput);
    return -std::max(1.0, std::isfinite(m.shortfall) ? m.shortfall : 1e300);
}

namespace {

/// An assignment as a fixed-size hash key (no allocation): one byte per decision (its index + 1), at most
/// kKeyDecisions of them. The largest space has a MoE model's 6 degree decisions, 14 operators, 3 further
/// layer groups of 12 per-layer operators (Constraints::granularity), 2 stage-split decisions and the prefill
/// budget: 59. No decision
/// has 255 values (pp's are the divisors of the GPUs: 13 for 4,096).
constexpr size_t kKeyDecisions = 64;
static_assert(6 + (kOpCount - 1) + (kMaxLayerGroups - 1) * (kOpCount - 3) + 2 + 1 <= int(kKeyDecisions),
              "more decisions than a Key holds");
struct Key {
    std::array<uint64_t, kKeyDecisions / 8> w{};
    bool operator==(const Key&) const = default;
};
Key keyOf(std::span<const int> a) {
    Key k;
    std::array<uint8_t, kKeyDecisions> b{};
    for (size_t i = 0; i < a.size() && i < b.size(); ++i) b[i] = uint8_t(a[i] + 1);
    std::memcpy(k.w.data(), b.data(), b.size());
    return k;
}
struct KeyHash {
    size_t operator()(const Key& k) const {
        uint64_t h = 0x9e3779b97f4a7c15ull;
        for (uint64_t x : k.w) h = (h ^ x) * 0x100000001b3ull, h ^= h >> 29;
        return size_t(h);
    }
};

/// A space whose assignments a Key cannot hold (see kKeyDecisions): refused before the first lookup.
void checkKeyFits(const SearchSpace& space) {
    bool fits = space.decisionCount() <= int(kKeyDecisions);
    for (const Decision& d : space.decisions()) fits = fits && d.values.size() < 255;
    if (!fits)
        throw std::invalid_argument("the search space has " + std::to_string(space.decisionCount()) +
                                    " decisions or a decision with 255 values or more; the search holds at most " +
                                    std::to_string(kKeyDecisions) + " decisions of under 255 values");
}

int resolveThreads(int threads) {
    if (threads > 0) return threads;
    return std::max(1, int(std::thread::hardware_concurrency()));
}

/// A fixed set of workers that run the items of one job at a time; the caller works too.
class Pool {
public:
    ~Pool() {
        {
            std::lock_guard lk(m_mutex);
            m_quit = true;
        }
        m_wake.notify_all();
        for (auto& t : m_workers) t.join();
    }

    void run(size_t count, int threads, const std::function<void(size_t)>& fn) {
        std::lock_guard job(m_jobMutex); // one job at a time
        const int helpers = int(std::min<size_t>(size_t(std::max(0, threads - 1)), count - 1));
        if (helpers <= 0) {
            for (size_t i = 0; i < count; ++i) fn(i);
            return;
        }
        {
            std::lock_guard lk(m_mutex);
            while (int(m_workers.size()) < helpers) {
                const int id = int(m_workers.size());
                m_workers.emplace_back([this, id] { loop(id); });
            }
            m_fn = &fn;
            m_count = count;
            m_next = 0;
            m_finished = 0;
            m_active = helpers;
            ++m_generation;
        }
        m_wake.notify_all();
        for (size_t i; (i = m_next.fetch_add(1)) < count;) fn(i);
        std::unique_lock lk(m_mutex);
        m_done.wait(lk, [&] { return m_finished == m_active; });
        m_fn = nullptr;
    }

private:
    void loop(int id) {
        uint64_t seen = 0;
        std::unique_lock lk(m_mutex);
        for (;;) {
            m_wake.wait(lk, [&] { return m_quit || m_generation != seen; });
            if (m_quit) return;
            seen = m_generation;
            if (id >= m_active) continue;
            const auto* fn = m_fn;
            const size_t count = m_count;
            lk.unlock();
            for (size_t i; (i = m_next.fetch_add(1)) < count;) (*fn)(i);
            lk.lock();
            if (++m_finished == m_active) m_done.notify_one();
        }
    }

    std::mutex m_jobMutex, m_mutex;
    std::condition_variable m_wake, m_done;
    std::vector<std::thread> m_workers;
    const std::function<void(size_t)>* m_fn = nullptr;
    size_t m_count = 0;
    std::atomic<size_t> m_next{0};
    int m_finished = 0, m_active = 0;
    uint64_t m_generation = 0;
    bool m_quit = false;
};

} // namespace

// ---------------------------------------------------------------------------------------------------------------
// Engine

struct Engine::Impl {
    const Objective& objective;
    size_t capacity;
    mutable std::mutex cacheMutex;
    // Two generations: when the current one is full it becomes the previous one (dropping the older), and a
    // hit in the previous one moves back. An approximate LRU at the cost of two lookups.
    using Map = detail::FlatMap<Key, std::shared_ptr<const Metrics>, KeyHash>;
    Map current, previous;
    uint64_t fingerprint = 0;
    std::atomic<int64_t> calls{0};
    std::atomic<double> secondsPerEval{0}; ///< running mean, to run tiny batches inline
    Pool pool;

    Impl(const Objective& o, size_t cap) : objective(o), capacity(std::max<size_t>(cap, 16)) {}

    std::shared_ptr<const Metrics> call(const Plan& p) {
        Metrics m;
        try {
            m = objective.evaluate(p);
        } catch (const std::exception& e) {
            m = Metrics{};
            m.violation = std::string("the objective failed: ") + e.what();
            m.violations = {m.violation};
        }
        calls.fetch_add(1, std::memory_order_relaxed);
        return std::make_shared<const Metrics>(std::move(m));
    }

    std::shared_ptr<const Metrics> lookup(const Key& k) {
        if (const auto* v = current.find(k)) return *v;
        if (const auto* v = previous.find(k)) {
            auto m = *v;
            insert(k, m);
            return m;
        }
        return nullptr;
    }
    void insert(const Key& k, std::shared_ptr<const Metrics> m) {
        if (current.size() >= capacity / 2) {
            previous = std::move(current);
            current = Map();
        }
        current.emplace(k, std::move(m));
    }
};

Engine::Engine(const Objective& objective, size_t cacheCapacity)
    : d(std::make_unique<Impl>(objective, cacheCapacity)) {}
Engine::~Engine() = default;
const Objective& Engine::objective() const {
    return d->objective;
}
int64_t Engine::objectiveCalls() const {
    return d->calls.load();
}

size_t Engine::cacheSize() const {
    std::lock_guard lk(d->cacheMutex);
    return d->current.size() + d->previous.size();
}

void Engine::clearCache() {
    std::lock_guard lk(d->cacheMutex);
    d->current.clear();
    d->previous.clear();
}

void Engine::parallelFor(size_t count, int threads, const std::function<void(size_t)>& fn) {
    if (count == 0) return;
    d->pool.run(count, resolveThreads(threads), fn);
}

std::shared_ptr<const Metrics> Engine::evaluatePlan(const Plan& plan) {
    return d->call(plan);
}

std::vector<std::shared_ptr<const Metrics>> Engine::evaluate(const SearchSpace& space,
                                                             std::span<const std::vector<int>> batch,
                                                             int threads, std::stop_token stop,
                                                             Clock::time_point deadline) {
    std::vector<std::shared_ptr<const Metrics>> out(batch.size());
    std::vector<Key> keys(batch.size());
    std::vector<size_t> todo;                      // batch indices to evaluate (first occurrences)
    detail::FlatMap<Key, size_t, KeyHash> firstOf; // key -> batch index of its first miss
    {
        std::lock_guard lk(d->cacheMutex);
        if (space.fingerprint() != d->fingerprint) {
            checkKeyFits(space);
            d->current.clear();
            d->previous.clear();
            d->fingerprint = space.fingerprint();
        }
        for (size_t i = 0; i < batch.size(); ++i) {
            keys[i] = keyOf(batch[i]);
            if ((out[i] = d->lookup(keys[i]))) continue;
            if (firstOf.emplace(keys[i], i).second) todo.push_back(i);
        }
    }
    if (!todo.empty()) {
        std::vector<std::shared_ptr<const Metrics>> results(todo.size());
        auto work = [&](size_t j) {
            if (stop.stop_requested() || Clock::now() >= deadline) return;
            results[j] = d->call(space.toPlan(batch[todo[j]]));
        };
        // Threads only pay off when the batch is long enough to cover waking them (a few tens of
        // microseconds).
        const double expected = double(todo.size()) * d->secondsPerEval.load(std::memory_order_relaxed);
        const int t = todo.size() > 1 && (expected > 50e-6 || expected == 0) ? resolveThreads(threads) : 1;
        const auto start = Clock::now();
        d->pool.run(todo.size(), t, work);
        const double per =
            std::chrono::duration<double>(Clock::now() - start).count() * t / double(todo.size());
        const double old = d->secondsPerEval.load(std::memory_order_relaxed);
        d->secondsPerEval.store(old == 0 ? per : 0.8 * old + 0.2 * per, std::memory_order_relaxed);

        std::lock_guard lk(d->cacheMutex);
        for (size_t j = 0; j < todo.size(); ++j) {
            if (!results[j]) continue;
            out[todo[j]] = results[j];
            if (space.fingerprint() == d->fingerprint) d->insert(keys[todo[j]], results[j]);
        }
        for (size_t i = 0; i < batch.size(); ++i)
            if (!out[i]) out[i] = out[*firstOf.find(keys[i])];
    }
    return out;
}

// ---------------------------------------------------------------------------------------------------------------
// SearchRun

namespace {
constexpr auto kProgressInterval = std::chrono::milliseconds(40);
/// A run that keeps asking for plans it has seen is stopped after this many lookups per budgeted evaluation
/// (a converged searcher in a small space would otherwise loop without spending budget).
constexpr int64_t kLookupsPerEvaluation = 20;
constexpr int64_t kLookupsSlack = 10000;

/// start + seconds, saturated: a budget beyond what the clock can represent (1e308, infinity) never ends
/// the run, instead of overflowing the conversion to the clock's integer ticks. seconds <= 0 or NaN: none.
Engine::Clock::time_point deadlineAfter(Engine::Clock::time_point start, double seconds) {
    using Clock = Engine::Clock;
    if (!(seconds > 0)) return Clock::time_point::max();
    const double room = std::chrono::duration<double>(Clock::time_point::max() - start).count();
    // Compared in double with a margin: `room` is rounded, and a cast of a value at the limit would overflow.
    if (!(seconds < room * 0.5)) return Clock::time_point::max();
    return start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

/// kLookupsPerEvaluation x evaluations + kLookupsSlack, saturated at INT64_MAX (a budget of 2^63 - 1
/// evaluations would otherwise overflow into a negative limit and end the run at once); 0 when unlimited.
int64_t lookupLimitOf(int64_t evaluations) {
    constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
    if (evaluations <= 0) return 0;
    if (evaluations > (kMax - kLookupsSlack) / kLookupsPerEvaluation) return kMax;
    return kLookupsPerEvaluation * evaluations + kLookupsSlack;
}
} // namespace

struct SearchRun::Impl {
    Engine& engine;
    const SearchSpace& space;
    SearchOptions options;
    Observer* observer;
    std::stop_token stop;
    std::string searcher;
    Engine::Clock::time_point start, deadline, lastEmit;
    SpaceSize size;
    detail::FlatMap<Key, double, KeyHash> seen;
    int64_t evaluations = 0, lookups = 0;
    int64_t lookupLimit = 0; ///< 0: none (no evaluation budget)
    std::vector<Candidate> elite;
    double bestFeasible = 0;
    std::vector<std::pair<int64_t, double>> curve;
    std::vector<double> curveCpu;
    std::clock_t cpuStart = std::clock();
    size_t curveEmitted = 0;
    std::vector<LearningPoint> learning;
    size_t learningEmitted = 0;
    bool distinct = false;

    Impl(Engine& e, const SearchSpace& s, const SearchOptions& o, Observer* obs, std::stop_token st,
         std::string name)
        : engine(e), space(s), options(o), observer(obs), stop(std::move(st)), searcher(std::move(name)) {
        start = lastEmit = Engine::Clock::now();
        deadline = deadlineAfter(start, options.budget.seconds);
        lookupLimit = lookupLimitOf(options.budget.evaluations);
        size = space.size();
        options.eliteK = std::max(1, options.eliteK);
        checkKeyFits(space);
    }

    double elapsed() const { return std::chrono::duration<double>(Engine::Clock::now() - start).count(); }
    double cpuElapsed() const { return double(std::clock() - cpuStart) / CLOCKS_PER_SEC; }

    void record(const std::shared_ptr<const Metrics>& m, double score, std::span<const int> choices,
                const Plan* outside) {
        ++evaluations;
        if (m->feasible && m->throughput > bestFeasible) {
            bestFeasible = m->throughput;
            curve.emplace_back(evaluations, bestFeasible);
            curveCpu.push_back(cpuElapsed());
        }
        const int k = options.eliteK;
        if (int(elite.size()) >= k && score <= planScore(elite.back().metrics)) return;
        // After the last candidate scoring at least as well: ties keep their order of evaluation.
        auto pos = std::find_if(elite.begin(), elite.end(),
                                [&](const Candidate& c) { return planScore(c.metrics) < score; });
        Candidate c;
        c.plan = outside ? *outside : space.toPlan(choices);
        c.metrics = *m;
        c.choices.assign(choices.begin(), choices.end());
        elite.insert(pos, std::move(c));
        if (int(elite.size()) > k) elite.pop_back();
    }

    void emit(bool final) {
        if (!observer) return;
        const auto now = Engine::Clock::now();
        if (!final && now - lastEmit < kProgressInterval) return;
        lastEmit = now;
        Progress p;
        p.evaluations = evaluations;
        p.seconds = elapsed();
        p.bestThroughput = bestFeasible;
        p.elite = elite;
        p.curveDelta.assign(curve.begin() + long(curveEmitted), curve.end());
        curveEmitted = curve.size();
        p.learningDelta.assign(learning.begin() + long(learningEmitted), learning.end());
        learningEmitted = learning.size();
        p.final = final;
        observer->progress(p);
    }
};

SearchRun::SearchRun(Engine& engine, const SearchSpace& space, const SearchOptions& options,
                     Observer* observer, std::stop_token stop, std::string searcher)
    : d(std::make_unique<Impl>(engine, space, options, observer, std::move(stop), std::move(searcher))) {}
SearchRun::~SearchRun() = default;

const SearchSpace& SearchRun::space() const {
    return d->space;
}
const SearchOptions& SearchRun::options() const {
    return d->options;
}
const std::vector<Candidate>& SearchRun::elite() const {
    return d->elite;
}
const Candidate* SearchRun::best() const {
    return d->elite.empty() ? nullptr : &d->elite.front();
}
int64_t SearchRun::evaluations() const {
    return d->evaluations;
}
double SearchRun::seconds() const {
    return d->elapsed();
}
bool SearchRun::stopRequested() const {
    return d->stop.stop_requested();
}
bool SearchRun::seen(std::span<const int> a) const {
    return d->seen.contains(keyOf(a));
}

std::optional<double> SearchRun::scoreOf(std::span<const int> a) const {
    const double* score = d->seen.find(keyOf(a));
    if (!score) return std::nullopt;
    return *score;
}

void SearchRun::assumeDistinct() {
    d->distinct = true;
}

bool SearchRun::done() const {
    const Budget& b = d->options.budget;
    if (d->stop.stop_requested()) return true;
    if (b.evaluations > 0 && d->evaluations >= b.evaluations) return true;
    if (b.seconds > 0 && Engine::Clock::now() >= d->deadline) return true;
    if (d->lookupLimit > 0 && d->lookups >= d->lookupLimit) return true;
    const double known = d->distinct ? double(d->evaluations) : double(d->seen.size());
    if (d->size.exact && known >= d->size.count) return true;
    return false;
}

double SearchRun::fraction() const {
    const Budget& b = d->options.budget;
    double f = 0;
    if (b.evaluations > 0) f = std::max(f, double(d->evaluations) / double(b.evaluations));
    if (b.seconds > 0) f = std::max(f, d->elapsed() / b.seconds);
    if (b.unlimited() && d->size.count > 0) f = double(d->evaluations) / d->size.count;
    return std::clamp(f, 0.0, 1.0);
}

std::vector<SearchRun::Outcome> SearchRun::evaluate(std::span<const std::vector<int>> batch) {
    Impl& m = *d;
    std::vector<Outcome> out(batch.size());
    for (auto& o : out) o.score = -std::numeric_limits<double>::infinity();
    // Decide in batch order what is new and what fits the budget: this, not thread timing, fixes the result.
    std::vector<std::vector<int>> send;
    std::vector<size_t> sendIndex;
    std::vector<char> fresh(batch.size(), 0);
    detail::FlatMap<Key, size_t, KeyHash> newInBatch;
    int64_t planned = m.evaluations;
    const int64_t limit = m.options.budget.evaluations;
    for (size_t i = 0; i < batch.size(); ++i) {
        ++m.lookups;
        const Key k = keyOf(batch[i]);
        const bool repeat = !m.distinct && (m.seen.contains(k) || newInBatch.contains(k));
        if (!repeat) {
            if (limit > 0 && planned >= limit) continue;
            ++planned;
            if (!m.distinct) newInBatch.emplace(k, i);
            fresh[i] = 1;
        }
        send.push_back(batch[i]);
        sendIndex.push_back(i);
    }
    if (send.empty()) return out;
    const auto metrics = m.engine.evaluate(m.space, send, m.options.threads, m.stop, m.deadline);
    for (size_t j = 0; j < send.size(); ++j) {
        const size_t i = sendIndex[j];
        if (!metrics[j]) continue; // stopped or out of time before it was evaluated
        Outcome& o = out[i];
        o.metrics = metrics[j];
        o.score = planScore(*metrics[j]);
        if (fresh[i]) {
            o.fresh = true;
            if (!m.distinct) m.seen.emplace(keyOf(batch[i]), o.score);
            m.record(o.metrics, o.score, batch[i], nullptr);
        }
    }
    m.emit(false);
    return out;
}

SearchRun::Outcome SearchRun::evaluate(const std::vector<int>& assignment) {
    return evaluate(std::span<const std::vector<int>>(&assignment, 1)).front();
}

SearchRun::Outcome SearchRun::evaluatePlan(const Plan& plan) {
    if (auto a = d->space.fromPlan(plan); a && d->space.toPlan(*a) == plan) return evaluate(*a);
    Outcome o;
    o.score = -std::numeric_limits<double>::infinity();
    if (done()) return o;
    o.metrics = d->engine.evaluatePlan(plan);
    o.score = planScore(*o.metrics);
    o.fresh = true;
    d->record(o.metrics, o.score, {}, &plan);
    d->emit(false);
    return o;
}

void SearchRun::recordLearning(const LearningPoint& point) {
    d->learning.push_back(point);
}

SearchResult SearchRun::finish() {
    Impl& m = *d;
    SearchResult r;
    r.searcher = m.searcher;
    r.elite = m.elite;
    if (!m.elite.empty()) r.best = m.elite.front();
    r.evaluations = m.evaluations;
    r.seconds = m.elapsed();
    r.curve = m.curve;
    r.curveCpuSeconds = m.curveCpu;
    r.cpuSeconds = m.cpuElapsed();
    r.learning = m.learning;
    r.stopped = m.stop.stop_requested();
    if (m.elite.empty()) {
        r.message = m.space.empty() ? "no valid plan: " + m.space.emptyReason()
                    : r.stopped     ? "stopped before any plan was evaluated"
                                    : "no plan was evaluated";
    } else if (!r.best.metrics.feasible) {
        // The closest plan's violations name the binding constraint (the first is the cost model's main one).
        const Metrics& b = r.best.metrics;
        std::string why = b.violation;
        for (const auto& v : b.violations)
            if (v != b.violation) why += "; also " + v;
        r.message =
            "no feasible plan among " + std::to_string(m.evaluations) +
            " evaluated; the closest fails: " + (why.empty() ? std::string("(no reason given)") : why);
    }
    m.emit(true);
    return r;
}

SearchResult SearchRun::refuse(std::string message) {
    SearchResult r;
    r.searcher = d->searcher;
    r.refused = true;
    r.message = std::move(message);
    r.seconds = d->elapsed();
    d->emit(true);
    return r;
}

} // namespace sp
