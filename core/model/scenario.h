#pragma once
#include "core/model/cluster.h"
#include "core/model/model.h"
#include "core/model/plan.h"
#include "core/model/workload.h"

#include <optional>
#include <string>
#include <vector>

namespace sp {

/// The problem: a model on a cluster under a workload and constraints.
struct Scenario {
    std::string name;
    Model model;
    Cluster cluster;
    Workload workload;
    Constraints constraints;
    /// Disaggregated serving over two clusters: the decode pool's, when it runs on other GPUs than the
    /// prefill pool (which takes `cluster`); absent, both pools split `cluster`'s nodes. Aggregated plans
    /// ignore it.
    std::optional<Cluster> decodeCluster;
    bool operator==(const Scenario&) const = default;
    /// GPUs the plan must use: the constraint's count, or the whole cluster.
    int gpus() const { return constraints.gpus > 0 ? constraints.gpus : cluster.gpus(); }
};

/// Whether the model has what `method` drafts with: MTP modules, an EAGLE-3 head, a draft model; n-gram
/// needs nothing.
bool specMethodAvailable(const Model& m, SpecMethod method);
/// The acceptance rates `method` runs with: the workload's, else the model's default; empty: none known.
const std::vector<double>& acceptanceRates(const Scenario& s, SpecMethod method);
/// Why `spec` cannot run on the scenario (a method the model lacks, no acceptance rates, more draft tokens
/// than rates, a prefill workload), or nullopt; off is always fine.
std::optional<std::string> checkSpeculative(const Scenario& s, const Speculative& spec);
/// The (method, draft tokens) a search weighs: every available method with known rates, K from 1 to the
/// rates given (at most kMaxDraftTokens), after the constraints' policy; empty when there is none or the
/// workload is prefill only.
std::vector<Speculative> speculativeOptions(const Scenario& s);

} // namespace sp
