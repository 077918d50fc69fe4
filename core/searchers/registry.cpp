#include "core/searchers/registry.h"

#include "core/rl/knowledge.h"
#include "core/rl/prior.h"
#include "core/rl/rlsearcher.h"

#include <charconv>
#include <mutex>
#include <utility>

namespace sp {

namespace {

struct Registry {
    std::mutex mutex;
    std::vector<std::pair<std::string, std::function<std::unique_ptr<Searcher>()>>> entries;
    Registry() {
        // The built-in searchers. A new one adds a line here or calls registerSearcher().
        entries.emplace_back("megatron", [] { return std::make_unique<MegatronSearcher>(); });
        entries.emplace_back("exhaustive", [] { return std::make_unique<ExhaustiveSearcher>(); });
        entries.emplace_back("random", [] { return std::make_unique<RandomSearcher>(); });
        entries.emplace_back("random-seq", [] { return std::make_unique<RandomSequentialSearcher>(); });
        entries.emplace_back("cd", [] { return std::make_unique<CoordinateDescentSearcher>(false); });
        entries.emplace_back("cd-restarts", [] { return std::make_unique<CoordinateDescentSearcher>(true); });
        entries.emplace_back("sa", [] { return std::make_unique<AnnealingSearcher>(); });
        entries.emplace_back("ga", [] { return std::make_unique<GeneticSearcher>(); });
        entries.emplace_back("rl", [] { return std::make_unique<RlSearcher>(); });
    }
};

Registry& registry() {
    static Registry r;
    return r;
}

} // namespace

/// The number after "name=" in an rl flag, when it is all of the rest and within [lo, hi]:
/// written to `out` (an int or a double). NaN is out of range.
template <class T> static bool number(std::string_view flag, double lo, double hi, T& out) {
    T v{};
    const char* end = flag.data() + flag.size();
    const size_t eq = flag.find('=');
    if (eq == std::string_view::npos) return false;
    const auto [p, ec] = std::from_chars(flag.data() + eq + 1, end, v);
    if (ec != std::errc() || p != end || !(double(v) >= lo && double(v) <= hi)) return false;
    out = v;
    return true;
}

/// "rl:no-elite+reinforce": rl with mechanisms switched off (the ablations in docs/search.md ("Learn to Shard
/// (`rl`)")): no-elite (no elite history to attend over), no-imitation (no self-imitation of the best plans),
/// no-temperature (a fixed sampling temperature), reinforce (one REINFORCE epoch without clipping instead of
/// two PPO epochs), one-epoch (one clipped PPO epoch instead of two), no-local (no neighbours of elite plans
/// in the batch: every plan from the policy), no-policy (neighbours of the elite and uniform plans, no
/// policy), no-chains (the local places go to the elite's neighbours at every budget,
/// RlOptions::localChains), no-megatron (no Megatron plan first: the elite starts empty,
/// RlOptions::warmStart), no-rank (no policy-ranked neighbourhood of the best plan, RlOptions::rankedShare;
/// rank=F: that share of the local places), no-families (no ranked neighbourhoods of the start families' best
/// plans, RlOptions::familyShare; families=F: that share of the ranked places to them before the best plan's
/// neighbourhood is spent), carry=F (a carried policy at strength F, RlOptions::carryStrength), no-carry (not
/// from an earlier search's policy, RlOptions::carry), no-prior (not from the shipped prior: a random policy,
/// RlOptions::prior); batch=N (N plans per iteration, 4..4096, instead of the budget's default,
/// RlOptions::batch); every=N (with chains, the policy on one iteration in N, 1..1000,
/// RlOptions::policyEvery); rerank=N (the best plan's neighbourhood also ranked again after N policy updates,
/// 0: only on a new best plan, RlOptions::rerankEvery); fallback-updates (with chains, the policy also learns
/// on the rounds it samples off its schedule, RlOptions::learnOffSchedule); local=F (the share of each batch
/// that is the elite's neighbours, 0..1, RlOptions::localShare). Reads the flags into `o`; returns "" or what
/// is wrong with the first bad flag.
static std::string parseRlVariant(std::string_view name, RlOptions& o) {
    o.name = std::string(name);
    std::string_view rest = name.substr(3);
    if (rest.empty()) return "'" + std::string(name) + "' names no flag after 'rl:'";
    while (true) {
        const size_t plus = rest.find('+');
        const std::string_view flag = rest.substr(0, plus);
        const std::string quoted = "'" + std::string(flag) + "' in '" + std::string(name) + "'";
        if (flag == "no-elite")
            o.eliteK = 0;
        else if (flag == "no-imitation")
            o.imitate = 0;
        else if (flag == "no-temperature")
            o.freshTarget = 0;
        else if (flag == "reinforce")
            o.clip = 0, o.epochs = 1;
        else if (flag == "one-epoch")
            o.epochs = 1;
        else if (flag == "no-local")
            o.localShare = 0;
        else if (flag == "no-policy")
            o.usePolicy = false;
        else if (flag == "no-chains")
            o.localChains = -1;
        else if (flag == "no-megatron")
            o.warmStart = false;
        else if (flag == "no-rank")
            o.rankedShare = 0;
        else if (flag == "no-families")
            o.familyShare = -1;
        else if (flag == "no-carry")
            o.carry = false;
        else if (flag == "no-prior")
            o.prior = false;
        else if (flag == "fallback-updates")
            o.learnOffSchedule = true;
        else if (flag.substr(0, 6) == "carry=") {
            if (!number(flag, 0, 4, o.carryStrength)) return quoted + ": carry= takes a number from 0 to 4";
        } else if (flag.substr(0, 6) == "prior=") {
            if (!number(flag, 0, 4, o.priorStrength)) return quoted + ": prior= takes a number from 0 to 4";
        } else if (flag.substr(0, 6) == "batch=") {
            if (!number(flag, 4, 4096, o.batch))
                return quoted + ": batch=N takes a whole number from 4 to 4096";
        } else if (flag.substr(0, 6) == "every=") {
            if (!number(flag, 1, 1000, o.policyEvery))
                return quoted + ": every=N takes a whole number from 1 to 1000";
        } else if (flag.substr(0, 5) == "rank=") {
            if (!number(flag, 0, 1, o.rankedShare)) return quoted + ": rank=F takes a share from 0 to 1";
        } else if (flag.substr(0, 9) == "families=") {
            if (!number(flag, 0, 1, o.familyShare)) return quoted + ": families=F takes a share from 0 to 1";
        } else if (flag.substr(0, 7) == "rerank=") {
            if (!number(flag, 0, 1000, o.rerankEvery))
                return quoted + ": rerank=N takes a whole number from 0 to 1000";
        } else if (flag.substr(0, 6) == "local=") {
            if (!number(flag, 0, 1, o.localShare)) return quoted + ": local=F takes a share from 0 to 1";
        } else
            return quoted +
                   " is not an rl flag (no-elite, no-imitation, no-temperature, reinforce, one-epoch, "
                   "no-local, no-policy, no-chains, no-megatron, no-rank, no-families, no-carry, no-prior, "
                   "fallback-updates, rank=F, families=F, batch=N, every=N, rerank=N, local=F, carry=F, "
                   "prior=F; joined with '+')";
        if (plus == std::string_view::npos) return {};
        rest = rest.substr(plus + 1);
    }
}

std::unique_ptr<Searcher> makeSearcher(std::string_view name) {
    if (name.substr(0, 3) == "rl:") {
        RlOptions o;
        if (!parseRlVariant(name, o).empty()) return nullptr;
        return std::make_unique<RlSearcher>(o);
    }
    Registry& r = registry();
    std::lock_guard lk(r.mutex);
    for (auto& [n, make] : r.entries)
        if (n == name) return make();
    return nullptr;
}

std::string searcherError(std::string_view name) {
    if (name.substr(0, 3) == "rl:") {
        RlOptions o;
        return parseRlVariant(name, o);
    }
    if (makeSearcher(name)) return {};
    std::string known;
    for (const auto& n : searcherNames()) known += (known.empty() ? "" : ", ") + n;
    return "unknown searcher '" + std::string(name) + "' (" + known + ", or rl:FLAG+FLAG)";
}

std::vector<std::string> searcherNames() {
    Registry& r = registry();
    std::lock_guard lk(r.mutex);
    std::vector<std::string> out;
    for (auto& e : r.entries) out.push_back(e.first);
    return out;
}

void registerSearcher(std::string name, std::function<std::unique_ptr<Searcher>()> factory) {
    Registry& r = registry();
    std::lock_guard lk(r.mutex);
    for (auto& e : r.entries)
        if (e.first == name) {
            e.second = std::move(factory);
            return;
        }
    r.entries.emplace_back(std::move(name), std::move(factory));
}

std::string learnedStateJson(const LearnedState& state) {
    if (const auto* k = dynamic_cast<const rl::Knowledge*>(&state)) return rl::knowledgeJson(*k);
    return {};
}

std::shared_ptr<const LearnedState> parseLearnedState(std::string_view json, const std::string& file) {
    return std::make_shared<const rl::Knowledge>(rl::parseKnowledge(json, file));
}

} // namespace sp
