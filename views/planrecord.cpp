#include "views/planrecord.h"

namespace sp::views {

const Breakdown& PlanRecord::breakdown(bool prefill) const {
    if (prefill && hasPrefill()) return eval.prefill;
    if (!prefill && hasDecode()) return eval.decode;
    return hasDecode() ? eval.decode : eval.prefill;
}

PlanRecordPtr makePlanRecord(const CostModel& model, const Plan& plan, std::string label,
                             std::string searcher) {
    auto r = std::make_shared<PlanRecord>();
    r->label = std::move(label);
    r->searcher = std::move(searcher);
    r->plan = plan;
    r->eval = model.explain(plan);
    return r;
}

} // namespace sp::views
