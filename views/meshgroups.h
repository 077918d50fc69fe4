#pragma once
// Which GPUs form each parallel group of a plan, for the topology view. Pure functions, no Qt.
//
// Placement: Plan::meshOrder lists tp, dp, pp innermost first; a GPU's rank is the sum of index_axis *
// stride_axis, where an axis' stride is the product of the degrees inside it (the cost model's strideOf). MoE
// layers regroup the dp*tp GPUs of a stage, taken tp-first (local = tp index + tp * dp index), as etp
// innermost, then ep, then edp (as in the cost model's a2a placement).

#include "core/model/plan.h"

#include <string>
#include <vector>

namespace sp::views {

struct MeshCoords {
    int pp = 0, dp = 0, tp = 0;   ///< indices along the dense axes
    int ep = 0, etp = 0, edp = 0; ///< indices along the MoE axes within the stage
};

int axisStride(const Plan& p, Axis a); ///< Axis::PP, DP or TP
MeshCoords meshCoords(const Plan& p, int gpu);
int gpuOf(const Plan& p, int pp, int dp, int tp);
/// The GPUs sharing every index with `gpu` except along `axis` (any of the six), sorted, including `gpu`.
std::vector<int> groupOf(const Plan& p, int gpu, Axis axis);

/// Contiguous layer ranges of the pipeline stages: balanced, the layers % pp extra layers on the middle
/// stages (the cost model's rule, so the ends that also hold the embedding and the head stay lighter).
struct StageSpan {
    int begin = 0, count = 0;
};
std::vector<StageSpan> stageSpans(int layers, int pp);
/// A plan's stages: its own layers per stage (Plan::stageLayers) when it has them and they fit the model,
/// else the balanced split.
std::vector<StageSpan> stageSpans(int layers, const Plan& p);
/// "16 + 15 + 15 + 15": the layers of each of stageSpans(layers, p), first stage first.
std::string stageCountsText(int layers, const Plan& p);

} // namespace sp::views
