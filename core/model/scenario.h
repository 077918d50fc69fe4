#pragma once
#include "core/model/cluster.h"
#include "core/model/model.h"
#include "core/model/plan.h"
#include "core/model/workload.h"

namespace sp {

/// The problem: a model on a cluster under a workload and constraints.
struct Scenario {
    std::string name;
    Model model;
    Cluster cluster;
    Workload workload;
    Constraints constraints;
    bool operator==(const Scenario&) const = default;
    /// GPUs the plan must use: the constraint's count, or the whole cluster.
    int gpus() const { return constraints.gpus > 0 ? constraints.gpus : cluster.gpus(); }
};

} // namespace sp
