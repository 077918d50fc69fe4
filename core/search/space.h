#pragma once
// The search space of a scenario: its plans as an ordered list of categorical decisions with validity masks.
//
// Decisions, in order: pp, tp (dp is derived: G / (pp*tp)), the mesh order; for MoE models the experts
// choice, ep and etp (edp is derived: dp*tp / (ep*etp)); then one decision per relevant operator
// (core/cost/validity.h, opRelevant); under a finer granularity (Constraints::granularity), the per-layer
// operators again for each further layer group (stage: the middle stages, then the last stage; layer-group:
// groups 2..G); under a tuned stage split, the first and last stages' layers; under a searched prefill
// budget, the budget; where the scenario offers speculative decoding, its method and draft tokens. Irrelevant
// operators get the Megatron choice (or their pin). An assignment is one index per decision into that
// decision's `values`.
//
// The masks use the same rules as CostModel::checkPlan (checkDegrees, checkChoice) and look ahead: a value is
// allowed only if the prefix it extends has at least one valid completion, so a searcher that follows the
// masks never reaches a dead end and every complete assignment is a valid plan.
//
// Equivalent plans appear once, so no budget is spent twice on one plan (toPlan(fromPlan(p)) is then
// equivalent to p, not always equal):
//  - mesh orders that differ only in where axes of degree 1 sit place the GPUs identically: only the first of
//    each such group (in kMeshOrders order) is allowed;
//  - at tp 1 every operator sharding is over a group of one GPU: each operator has one choice (its pin, else
//  the
//    Megatron choice);
//  - experts tensor (ep 1, edp 1) and token (ep 1, etp 1) are expert parallelism with those degrees: they are
//    offered only where the expert form is not allowed (a pin);
//  - under the stage granularity, a group the plan's pipeline does not have (the middle stages at pp 2, the
//    middle and last at pp 1) takes the first group's choice: its decisions have one value.
// The tests check these equivalences against the cost model (exhaustive search vs an independent brute
// force).

#include "core/model/scenario.h"

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace sp {

class Rng;

/// What a decision sets.
/// FirstStage, LastStage (only under Constraints::stageSplit Tuned): layers the first and the last pipeline
/// stage hold beyond the balanced split (values are deltas, -3 to 3; the middle stages share the rest
/// evenly).
/// PrefillBudget (only under Constraints::searchPrefillBudget, serving and prefill workloads): the plan's
/// prefill token budget per pass, among kSearchedPrefillBudgets. Speculative (only where the scenario offers
/// speculative decoding, speculativeOptions): none, or a method and its draft tokens, each value
/// specValue(method, K); the last decision.
enum class DecisionKind : uint8_t {
    PP,
    TP,
    MeshOrder,
    Experts,
    EP,
    ETP,
    Operator,
    FirstStage,
    LastStage,
    PrefillBudget,
    Speculative
};

/// A Speculative decision's value: method x 16 + draft tokens (0: none).
inline int specValue(const Speculative& s) {
    return s.on() ? int(s.method) * 16 + s.draftTokens : 0;
}
inline Speculative specOfValue(int v) {
    return v <= 0 ? Speculative{} : Speculative{SpecMethod(v / 16), v % 16};
}

struct Decision {
    DecisionKind kind = DecisionKind::Operator;
    Op op = Op::Embedding; ///< Operator: which one (Experts: Op::Experts)
    std::string name;      ///< "pp", "tp", "mesh_order", "experts", "ep", "etp", "qkv", "moe.qkv", ...
    std::vector<std::string> labels; ///< one per choice, for display
    std::vector<int> values; ///< one per choice: a degree, an index into kMeshOrders, or a choice index
    /// Operator: the layer group it chooses for (0: the first group, and the operators chosen once for the
    /// model; see Plan::layerGroups).
    int group = 0;
};

/// The six mesh orders (innermost axis first), indexed by the MeshOrder decision's values.
inline constexpr std::array<std::array<Axis, 3>, 6> kMeshOrders{{{Axis::TP, Axis::DP, Axis::PP},
                                                                 {Axis::TP, Axis::PP, Axis::DP},
                                                                 {Axis::DP, Axis::TP, Axis::PP},
                                                                 {Axis::DP, Axis::PP, Axis::TP},
                                                                 {Axis::PP, Axis::TP, Axis::DP},
                                                                 {Axis::PP, Axis::DP, Axis::TP}}};

/// The number of valid plans. Computed in closed form (the operator decisions are independent given the
/// degrees), so it is exact whenever it fits a double's 53-bit mantissa; `exact` is false above that
/// (rounded).
struct SpaceSize {
    double count = 0;
    bool exact = true;
};

class SearchSpace {
public:
    /// Builds the decisions and the look-ahead tables. Cheap (milliseconds even for thousands of GPUs).
    explicit SearchSpace(const Scenario& scenario);
    ~SearchSpace();
    SearchSpace(const SearchSpace&);
    SearchSpace& operator=(const SearchSpace&);
    SearchSpace(SearchSpace&&) noexcept;
    SearchSpace& operator=(SearchSpace&&) noexcept;

    const Scenario& scenario() const;
    const std::vector<Decision>& decisions() const;
    int decisionCount() const;
    const Decision& decision(int i) const;

    /// Which choices of decision `i` are valid given prefix[0..i) (out[k] = 1: values[k] allowed). `prefix`
    /// may be longer than i (only its first i entries are read) and must itself follow the masks (its degrees
    /// are checked: all zeros when they do not; the rest is not).
    void mask(int i, std::span<const int> prefix, std::vector<uint8_t>& out) const;
    /// Whether a complete assignment follows every mask.
    bool valid(std::span<const int> assignment) const;

    /// The plan of a complete, valid assignment (batch 0: chosen by the cost model).
    Plan toPlan(std::span<const int> assignment) const;
    /// The assignment of a plan, or nullopt when the plan is not in the space (degrees or choices not
    /// allowed). Irrelevant operators and the batch are ignored; an equivalent mesh order maps to its allowed
    /// one.
    std::optional<std::vector<int>> fromPlan(const Plan& plan) const;

    SpaceSize size() const;
    /// No valid plan at all; emptyReason() says why (the rule that removed the last candidates).
    bool empty() const;
    const std::string& emptyReason() const;

    /// A uniformly random valid assignment (every valid plan equally likely). The space must not be empty.
    std::vector<int> sample(Rng& rng) const;
    /// A random valid assignment drawn decision by decision, each value uniform among the allowed ones: not
    /// uniform over plans, but even over degrees (uniform over plans rarely visits tp 1, which has few
    /// plans).
    std::vector<int> sampleByDecision(Rng& rng) const;
    /// Redraws decisions [from, n) uniformly among the valid completions of the prefix [0, from), which must
    /// follow the masks (std::logic_error otherwise).
    void complete(std::vector<int>& assignment, int from, Rng& rng) const;
    /// Keeps each decision from `from` on when still valid under the (possibly changed) decisions before it;
    /// otherwise replaces it: degrees by the nearest valid degree (ties drawn at random), others at random.
    /// The prefix [0, from) must follow the masks.
    void repair(std::vector<int>& assignment, int from, Rng& rng) const;
    /// Calls visit on every valid assignment in lexicographic order of indices; stops early when it returns
    /// false. Returns false when stopped early.
    bool forEach(const std::function<bool(std::span<const int>)>& visit) const;

    /// The assignment of the standard recipe's plan when no cost model is at hand: the smallest pp, the
    /// largest tp inside a node that the Megatron operator choices allow, expert parallelism as wide as
    /// allowed; Megatron choices wherever valid. nullopt when the space is empty.
    std::optional<std::vector<int>> megatronLike() const;

    /// A hash of the decisions and the scenario's rules; equal spaces have equal fingerprints.
    uint64_t fingerprint() const;

private:
    struct Impl;
    std::unique_ptr<Impl> d;
};

} // namespace sp
