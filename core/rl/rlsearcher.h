#pragma once
// `rl`: Learn to Shard. Each iteration conditions the policy (core/rl/policy.h) on the elite history (the
// top-K distinct plans so far), samples a batch of plans through the space's validity masks, evaluates them
// through the engine (worker threads, shared cache), and updates the policy with PPO on normalized
// log-throughput rewards. Half of each batch refines the elite locally instead (RlOptions::localShare): the
// best plan's neighbourhood in the policy's order, then the neighbourhoods of the best plans of the starts'
// other layout families (familyShare), then neighbours of elite plans (rankedShare), or from 4,000
// evaluations annealing chains started at them (localChains) beside a few ranked neighbours.

#include "core/rl/policy.h"
#include "core/rl/prior.h"
#include "core/search/searcher.h"

namespace sp {

struct RlOptions {
    std::string name = "rl"; ///< the registered name (the ablations register variants, searcher.cpp)
    /// Plans per iteration; 0: the evaluation budget / 25, clamped to 8..32 (32 on a time-only budget). A
    /// small budget gets more, smaller updates, as ga's population shrinks with it. On the hard suite from
    /// cold starts (60 seeds), batches of 8 against 32 raised the median fraction of the best known on all
    /// six scenarios at 100 evaluations and on five of six at 200 (the sixth 0.001 lower); at 500,
    /// batches of 20 raised the share within 1% on five of six (docs/search.md, "Learn to Shard (`rl`)").
    int batch = 0;
    /// PPO epochs per batch (the first is REINFORCE with the batch-mean baseline); 0: 2, or 1 where the
    /// policy learns on one iteration in several (policyEvery): at 20,000 evaluations that cut rl's
    /// processor time by a further 15-30%, and no hard-suite scenario lost runs within 1% (3 seeds).
    int epochs = 0;
    double learningRate = 1e-2;  ///< Adam
    double clip = 0.2;           ///< PPO clipping; 0: plain REINFORCE with baseline
    double entropyWeight = 0.01; ///< per decision
    int eliteK = 32;             ///< elite tokens the policy attends over (SearchOptions::eliteK caps it)
    int imitate = 8; ///< top elite plans added to each update with a positive advantage (self-imitation)
    double imitationAdvantage = 1.0;
    bool rankAdvantages = true; ///< advantages from centered ranks (robust to the large infeasible penalties)
    double freshTarget = 0.5;   ///< share of new plans per batch the sampling temperature steers towards
    double maxTemperature = 8.0;
    /// The share of each batch that is neighbours of elite plans (one decision changed and the rest
    /// repaired, as sa moves) instead of samples of the policy: they refine the best plans locally, where a
    /// policy that has converged spends its samples on plans it has seen. They spend budget, may enter the
    /// elite (which the policy attends to and imitates), and are not in the policy's update (they are not its
    /// samples). 0: every plan from the policy (`rl:no-local`).
    double localShare = 0.5;
    double localSecondMove = 0.4; ///< chance that a neighbour changes a second decision (as sa's moves)
    /// Without chains, this share of the local places goes to the best plan's own neighbourhood (every plan
    /// one decision away, detail::allNeighbours) in the order the policy ranks them (their log-probability
    /// under it), the rest (and what the neighbourhood, once all seen, leaves) to random neighbours of the
    /// elite. A policy that knows something (the prior, a carried one, or what this run taught it) then
    /// picks which moves to try first, as a coordinate descent would try them all; a random policy's order
    /// is a random one. 0: `rl:no-rank`; `rl:rank=F`. On the hard suite (30 seeds) 1 against 0.5 gave 89 /
    /// 150 / 154 / 165 runs within 1% of the best known against 68 / 132 / 152 / 163 at 100 / 500 / 2,000 /
    /// 20,000 evaluations, and the 32K rerun of the chains in docs/benchmarks.md ("Chains of searches") 15 of
    /// 15 within 1% at 100 against 6; it costs the Llama-3.1-70B Pareto sweep (1 chain of 8 within 1% at 500
    /// evaluations a search against 6), where one target's best plan is several decisions from any plan the
    /// sweep had, which the elite's random neighbours (a second decision changed 4 times in 10) find more
    /// often.
    double rankedShare = 1.0;
    /// The best plan's neighbourhood is ranked when the best plan changes, and again after every N policy
    /// updates (`rl:rerank=N`; 0: only on a new best plan). Ranking scores every neighbour under the policy,
    /// a round's samples several times over, so 0 cuts rl's processor time at 100 evaluations by 15-35%; on
    /// the hard suite (30 seeds) it changed the runs within 1% of the best known by noise (76 / 129 / 154 /
    /// 160 against 68 / 132 / 152 / 163 at 100 / 500 / 2,000 / 20,000), but a carried policy learns the new
    /// objective as it goes, and its first order goes stale: on the Llama-3.1-70B Pareto sweep (8 seeds)
    /// 2 chains of 8 within 1% at 500 evaluations a search against 6 with 1.
    int rerankEvery = 1;
    /// Where the search has starts (SearchOptions::starts: a Pareto sweep's previous elite and loose-end
    /// plans, a rerun's old elite), each of their layout families (layoutFamily: TP, attention-DP, PP, ...)
    /// is a basin the edit may have moved the best plan to: the ranked places the best plan's neighbourhood
    /// leaves (once it is spent) go to the neighbourhoods of those families' best plans in the elite (in
    /// the elite's order, each in the policy's order, until spent); with familyShare F > 0 they get that
    /// share of the places before it is spent. On the Llama-3.1-70B sweep the plan at one target leaves TP
    /// for attention data parallelism (qkv, attention and out_proj changed together), which no single move
    /// from the TP best reaches but one move (pp) from the loose end's attention-DP plans does; the best
    /// plan's neighbourhood, improving a step at a time, had kept every place. A search without starts (a
    /// cold one) is unchanged. On the chains of docs/benchmarks.md ("Chains of searches") 0 against 0.5: the
    /// same on the Pareto sweeps, and on the 405B rerun 30 of 30 within 1% at 50 evaluations against 22 (the
    /// best plan's neighbourhood needs its places there). -1: `rl:no-families`; `rl:families=F`.
    double familyShare = 0;
    /// With chains, rankedShare x this many of the best plan's neighbours in the policy's order join each
    /// iteration beside the chains' steps (the chains keep all the local places).
    int rankedBesideChains = 8;
    /// Under layer groups (Constraints::granularity): probability that the group move follows a neighbour's
    /// first change (detail::copyGroup; measured as AnnealingParams::groupMove: on the layer-group scenario,
    /// 85-90% of 20 runs within 1% of the best known at 20,000 evaluations, on two machines, against 75% at
    /// 0.5 and 65% without).
    double localGroupMove = 1.0;
    /// Annealing chains in the local half, where the budget gives several: the local places go to `chains`
    /// chains (each a plan that steps to the best of its fresh neighbours by the Metropolis rule, cooled over
    /// the budget as sa's, restarting at an elite plan when it stalls) instead of neighbours of the elite. A
    /// chain can cross worse plans that the elite's neighbours, which only ever start from the best plans,
    /// never leave. 0: budget / 2000 clamped to 8, and none below 2 (budgets under 4,000, where one chain
    /// fell behind the elite's neighbours on three hard-suite scenarios at 2,000); -1: none.
    int localChains = 0;
    /// With chains, the policy samples and learns on one iteration in `policyEvery` (and on any where the
    /// chains propose nothing); the chains step on every one. The policy's work per sample is several
    /// evaluations', and at large budgets the chains finish what it finds. 0: budget / 1,000 (chains run
    /// from 4,000: 4 there, 20 at 20,000). On the hard suite (10 seeds, with the prior) budget / 1,000
    /// against 2 kept the runs within 1% of the best known at 5,000 and 20,000 evaluations to one either way
    /// per scenario and cut rl's processor time per run by a quarter to a half.
    int policyEvery = 0;
    /// With chains, a round the policy samples off its schedule (the chains and the ranked neighbourhood
    /// proposed nothing) learns from its samples only when this is set (`rl:fallback-updates`). Such rounds
    /// come late in a small or pinned space, where the chains have seen their neighbourhoods: at 20,000
    /// evaluations on the hard suite's memory-bound 405B space (44,000 plans) they were 2,053 of 2,191
    /// updates (seed 1), and skipping their updates took rl's processor time from 1.74x sa's to 0.88x, with
    /// the same runs within 1% of the best known on all six scenarios (30 seeds).
    bool learnOffSchedule = false;
    /// false: no policy at all, uniform plans in its places beside the elite's neighbours (`rl:no-policy`,
    /// the ablation that measures what the policy adds to the local refinement).
    bool usePolicy = true;
    /// Evaluate the Megatron plan first (when SearchOptions::warmStart names no start of its own), so it
    /// heads the elite: the elite's neighbours then walk from it, as cd does, and the policy attends to it
    /// and imitates it. On the hard suite (10 seeds, within 1% of the best known) it took rl at 100
    /// evaluations from 4 runs to 11 (cd-restarts 10, ga 8, sa 4), at 500 from 22 to 34 (ga 26, sa 25), and
    /// left 2,000 at 45 of 60. false: from nothing (`rl:no-megatron`).
    bool warmStart = true;
    /// Start from what an earlier search learned when the options carry it (SearchOptions::learned: the
    /// chains of the Pareto sweep, the disaggregated search, the window's Rerun). false: `rl:no-carry`.
    bool carry = true;
    /// A carried policy's choice embeddings and biases are scaled by this: a policy that converged on the
    /// last search of a chain is sharper than the next search warrants. On the eight chains of
    /// docs/benchmarks.md ("Chains of searches") (3-5 seeds), 0.5 against 1 took the Llama-3.1-70B sweep from
    /// 9,400 evaluations to within 1% to 4,900 and the 32K rerun from 200 to 100, and changed no other chain;
    /// 0.25 gave back the rerun. `rl:carry=F`.
    double carryStrength = 0.5;
    /// Otherwise start from the shipped prior (core/rl/prior.h) blended for the scenario. false:
    /// `rl:no-prior`, a random policy (what the pretraining itself starts from).
    bool prior = true;
    /// The prior's choice embeddings and biases are scaled by priorStrength x exp(-(d / priorReach)^2) when
    /// a search starts from it (not from a carried policy), d the feature distance from the scenario to
    /// its nearest pretraining scenario (prior.h): the prior speaks for scenarios like the ones it learned
    /// on, and a scenario unlike all of them (the hard suite's 128K-token layer-group one, d = 0.86) starts
    /// nearly from a random policy. `rl:prior=F` sets the strength.
    double priorStrength = 1.0;
    double priorReach = 0.5;
    /// A plan that misses memory or an SLO gets the reward of the worst feasible plan so far, minus 1, minus
    /// log(shortfall): worse than anything feasible, and the nearer it comes the better.
    rl::PolicyConfig network;
};

class RlSearcher final : public Searcher {
public:
    explicit RlSearcher(RlOptions o = {}) : m_o(o) {}
    std::string name() const override { return m_o.name; }
    SearchResult run(const SearchSpace& space, Engine& engine, const SearchOptions& options,
                     Observer* observer, std::stop_token stop) override;

private:
    RlOptions m_o;
};

} // namespace sp
