#pragma once
// The rules that make a plan well formed for a scenario. Shared by CostModel::checkPlan and the search
// space's validity masks, so a searcher never proposes a plan the cost model rejects.

#include "core/model/scenario.h"

#include <optional>
#include <string>

namespace sp {

/// Degrees alone: pp*dp*tp equals the GPUs, pp <= layers, ep*etp*edp == dp*tp, experts and expert FFN divide,
/// allowed degrees kept. `expertsChoice` is the plan's experts choice (tensor and token fix ep/etp/edp).
std::optional<std::string> checkDegrees(const Scenario& s, const Degrees& d, int expertsChoice);

/// One operator's choice under the given degrees: divisibility (heads, FFN, hidden by tp) and pins.
std::optional<std::string> checkChoice(const Scenario& s, const Degrees& d, Op op, int choice);

/// checkChoice's verdict without its message: the same rules, no strings built (checkPlan runs it for every
/// operator of every evaluated plan). `tst_cost choiceAllowedAgrees` holds the two together.
bool choiceAllowed(const Scenario& s, const Degrees& d, Op op, int choice);

namespace detail {
/// checkChoice's rules as they build the message: what checkChoice returns when choiceAllowed is false.
std::optional<std::string> choiceProblem(const Scenario& s, const Degrees& d, Op op, int choice);
} // namespace detail

/// A plan's own layers per stage (Plan::stageLayers): empty, or pp entries of at least one layer summing to
/// the model's layers.
std::optional<std::string> checkStageLayers(const Scenario& s, const Plan& p);

/// A plan's layer groups (Plan::layerGroups): empty, or 2 to kMaxLayerGroups runs of at least one layer
/// summing to the model's layers, in the form normalizeLayerGroups gives (the first group's choices are the
/// plan's, the embedding's, the head's and the experts' the same in every group, no two neighbours alike), each
/// group's choices allowed (checkChoice).
std::optional<std::string> checkLayerGroups(const Scenario& s, const Plan& p);

/// Whether the operator matters for this model (MoE operators do not for a dense model; dense FFN operators
/// do not when every layer is MoE).
bool opRelevant(const Model& m, Op op);

} // namespace sp
