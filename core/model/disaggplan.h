#pragma once
// A disaggregated plan: the cluster's nodes split into a prefill pool and a decode pool, each running its own
// plan (core/cost/disagg.h evaluates it).

#include "core/model/plan.h"

namespace sp {

/// One pool: whole nodes and the plan its GPUs run (pp x dp x tp = nodes x GPUs per node).
struct DisaggPool {
    int nodes = 0;
    Plan plan;
    bool operator==(const DisaggPool&) const = default;
};

struct DisaggPlan {
    DisaggPool prefill, decode;
    bool operator==(const DisaggPlan&) const = default;
};

} // namespace sp
