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

int occurrences(const Breakdown& b, LayerKind k) {
    switch (k) {
    case LayerKind::Dense:
        return b.denseLayers;
    case LayerKind::Moe:
        return b.moeLayers;
    case LayerKind::Embedding:
    case LayerKind::Head:
        return 1; // listed only when the slowest stage holds them
    }
    return 0;
}

StepSplit stepSplit(const Breakdown& b) {
    StepSplit s;
    for (const OpCost& o : b.ops)
        (o.memoryBound ? s.memoryMs : s.computeMs) += o.timeMs * occurrences(b, o.layer);
    for (const CommCost& c : b.comms) {
        const double t = c.timeMs * occurrences(b, c.layer);
        switch (c.link) {
        case LinkClass::Local:
            s.localMs += t;
            break;
        case LinkClass::NvLink:
            s.nvlinkMs += t;
            break;
        case LinkClass::Network:
            s.networkMs += t;
            break;
        }
    }
    s.pipelineMs = b.pipelineTransferMs;
    s.bubbleMs = b.bubbleMs;
    return s;
}

} // namespace sp::views
