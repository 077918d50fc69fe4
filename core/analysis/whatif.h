#pragma once
// Two plans setting by setting: what differs, what stops each plan's batch, and what the second plan gives
// with one of its settings taken back to the first's. The why (core/analysis/why.h) builds its words on
// these.

#include "core/cost/costmodel.h"
#include "core/model/scenario.h"

#include <optional>
#include <string>
#include <vector>

namespace sp {

/// A ratio as the why writes it: four significant figures and an x ("13.13x", "1.848x", "0.5641x"), the
/// precision `shardplan compare` prints, so the factors the why names multiply to its total on the page.
std::string ratioText(double ratio);

/// What stops a plan's batch from growing (the largest batch that fits memory, the token budget and the SLOs
/// is the one the cost model takes): found by evaluating the plan one sequence past its batch.
enum class BatchLimit { None, Fixed, Tpot, Ttft, Memory, TokenBudget, Infeasible };
struct Binding {
    BatchLimit kind = BatchLimit::None;
    /// "the TPOT SLO of 30 ms", "memory (the KV pool of 52.1 GiB per GPU)", "the batch fixed at 64"
    std::string name;
    /// What one more sequence a micro-batch would do: "at batch 1089, TPOT 30.02 ms exceeds the SLO of 30 ms"
    std::string detail;
};
Binding bindingLimit(const CostModel& model, const Plan& p, const Metrics& m);

/// A setting in which two plans differ: a degree, the mesh order, the layers per stage or layer groups, the
/// batch, the overlap, the prefill budget, speculative decoding, or an operator's choice.
struct PlanDiff {
    std::string field; ///< "tp", "mesh order", "qkv", "moe.attention", "speculative decoding", ...
    std::string a, b;  ///< the two values in words
    /// B can take A's value alone (an operator's choice, speculative decoding, the mesh order, the overlap,
    /// the batch, the prefill budget); a degree cannot, as other degrees must change with it.
    bool flippable = false;
    /// The plan file's key for it ("mesh_order", "stage_layers", "layer_groups", "moe.qkv", ...): what
    /// compare --json names it by.
    std::string key;
};
/// An operator as PlanDiff::field names it: "qkv", "moe.qkv" (the MoE layers' own).
std::string opField(Op op);
std::vector<PlanDiff> planDifferences(const Model& m, const Plan& a, const Plan& b);
/// `b` with `a`'s value of a flippable setting (PlanDiff::field); nullopt for another field.
std::optional<Plan> withSettingOf(const Plan& b, const Plan& a, const std::string& field);

/// What B would give with one of its settings taken back to A's.
struct WhatIf {
    PlanDiff diff;
    Plan plan;           ///< B with A's value of diff.field
    bool valid = false;  ///< the plan is well formed for the scenario; else `violation` says why
    Metrics metrics;     ///< its evaluation (feasible or not)
    double ratio = 0;    ///< its throughput over B's (0 when infeasible)
    std::string summary; ///< "qkv column (as A): 0.61x B's throughput (TPOT limit, batch 612)"
};
/// One WhatIf per flippable difference, the costliest (lowest ratio) first.
std::vector<WhatIf> whatIfs(const CostModel& model, const Plan& a, const Plan& b, const Metrics& mb);

} // namespace sp
