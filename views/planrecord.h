#pragma once
// A plan with everything the views show about it: its metrics and the cost model's breakdown, computed once
// and shared read-only between the views (and threads) as std::shared_ptr<const PlanRecord>.

#include "core/analysis/why.h"
#include "core/cost/costmodel.h"

#include <memory>
#include <string>

namespace sp::views {

struct PlanRecord {
    std::string label;    ///< what the user sees: "Megatron", "sa #1", "tp8.yaml"
    std::string searcher; ///< who found it ("megatron", "sa", "file"), empty when unknown
    Plan plan;
    Evaluation eval; ///< metrics and breakdowns (CostModel::explain)
    const Metrics& metrics() const { return eval.metrics; }
    /// The breakdown to show: decode unless the workload is prefill only, or `prefill` is asked for and
    /// exists.
    const Breakdown& breakdown(bool prefill) const;
    bool hasPrefill() const { return !eval.prefill.ops.empty(); }
    bool hasDecode() const { return !eval.decode.ops.empty(); }
};
using PlanRecordPtr = std::shared_ptr<const PlanRecord>;

/// Explains a plan (fast: one cost-model call) and packs it into a record.
PlanRecordPtr makePlanRecord(const CostModel& model, const Plan& plan, std::string label,
                             std::string searcher);

/// Total time (ms, one step of the slowest stage) split into the categories the comparison stacks.
using StepSplit = StepParts;
/// How often a breakdown entry of this layer kind occurs in the slowest stage.
inline int occurrences(const Breakdown& b, LayerKind k) {
    return layerOccurrences(b, k);
}
inline StepSplit stepSplit(const Breakdown& b) {
    return stepParts(b);
}

} // namespace sp::views
