#pragma once
// Several models on one inventory of GPUs, at least cost (DESIGN.md section 8, "Fleets"): what `shardplan
// capacity --fleet` answers. Two steps.
//
// 1. Candidates. For each model, GPU type and replica size (a whole number of nodes, 1, 2, 4, ... up to the
//    type's count and maxReplicaNodes; or half a node, a quarter, ... down to one GPU), the plan that
//    capacity uses (choosePlan: Megatron's, or a searcher's best) and the highest rate one replica sustains
//    under the model's SLOs: maxRate's bisection on the simulation, or the analytical steady state's
//    requests/s (faster, and blind to percentiles). A size with no feasible plan is no candidate, nor is a
//    dense model's plan of dp > 1 plain copies of a smaller size's replica (that size is the candidate).
// 2. An integer program over the replica counts x_j of the candidates:
//        minimize    sum_j x_j gpus_j price_j                                  ($/hour)
//        subject to  sum_{j of m} x_j rate_j >= rate_m                         for every model m
//                    sum_{j on g} x_j gpus_j <= nodes_g gpusPerNode_g          for every GPU type g
//        with N-1:   sum_{j of m} x_j rate_j - loss_m(x) >= rate_m             for every model m
//    Counting GPUs counts nodes exactly: a replica is gpusPerNode / 2^i GPUs or whole nodes, each size
//    divides the next, and pieces whose sizes divide one another fill nodes largest first without a gap, so
//    the replicas fit nodes_g nodes exactly when their GPUs add up to at most nodes_g gpusPerNode_g.
//    loss_m(x) is the most of m's rate one node can carry: one of its whole-node replicas, or as many of its
//    smaller replicas as fit one node (the best such bounded knapsack). Holding that back, every model meets
//    its rate with any one node gone, however the replicas are packed onto nodes.
//
// Solved exactly by depth-first branch and bound. The cost and the GPU rows depend only on the GPUs each
// model takes of each type, so per model and type only the configurations (count vectors) that no other beats
// (no more GPUs, no higher cost, no less rate, no more loss) are tried, and none of which one replica fewer
// would still meet any rate. Under N-1 each model's worst node is fixed first, as a level L among the losses
// of its configurations; the model must then give rate_m + L from configurations losing at most L (without
// N-1, L = 0). Models go one after another (the dearest first), each model's types cheapest per request/s
// first. A branch is cut when its cost plus a floor for the rest (the unmet rate at the cheapest $ per
// request/s left, and each later model's least cost alone, itself solved exactly) reaches the best answer
// found, or when the GPUs left cannot give a model its rate at its best rate per GPU. docs/serving.md
// ("Fleets") has the argument and an example; tests/tst_fleet.cpp checks the answers against exhaustive
// enumeration.

#include "core/io/fleetfiles.h"
#include "core/sim/capacity.h"

#include <cstdint>
#include <stop_token>
#include <string>
#include <vector>

namespace sp {

// ------------------------------------------------------------------------------------------ the program

/// One candidate of the integer program: a replica of a model on a GPU type.
struct FleetCandidate {
    int model = 0;         ///< index into FleetProblem::rates
    int type = 0;          ///< index into FleetProblem::types
    int gpus = 0;          ///< GPUs of one replica: gpusPerNode / 2^i, or whole nodes
    double rate = 0;       ///< requests/s one replica sustains under the model's SLOs (> 0)
    double usdPerHour = 0; ///< one replica
};

struct FleetTypeCapacity {
    int nodes = 0;
    int gpusPerNode = 0;
};

struct FleetProblem {
    std::vector<double> rates; ///< requests/s each model must sustain
    std::vector<FleetTypeCapacity> types;
    std::vector<FleetCandidate> candidates;
    bool nMinus1 = false;
    /// Branch-and-bound nodes before the solver gives up proving optimality (the best found is returned,
    /// marked not exact): about 10^7 a second. samples/fleet-three-models.yaml needs 10^4 to 10^5, 1.4 x 10^7
    /// with N-1.
    int64_t nodeLimit = 50'000'000;
};

struct FleetSolution {
    bool feasible = false;
    bool exact = false;      ///< proven optimal (false: the node limit or a stop cut the search short)
    std::vector<int> counts; ///< replicas of each candidate
    double usdPerHour = 0;
    int64_t nodes = 0; ///< branch-and-bound nodes visited
};

/// The least-cost counts, exactly (see the header comment).
FleetSolution solveFleet(const FleetProblem& p, std::stop_token stop = {});
/// The most of model m's rate one node can carry under these counts (loss_m above).
double worstNodeLoss(const FleetProblem& p, const std::vector<int>& counts, int model);
/// Whether the counts meet every rate (and, with N-1, after the worst node of each model) within the GPUs.
bool fleetFeasible(const FleetProblem& p, const std::vector<int>& counts);

// ------------------------------------------------------------------------------------------ the answer

struct FleetOptions {
    std::string searcher; ///< each candidate's plan from this searcher; empty: Megatron's
    int64_t budget = 500;
    /// Rates from the analytical steady state (requests/s = throughput / output tokens at the plan's batch,
    /// the SLOs checked on means) instead of maxRate's simulations.
    bool analytical = false;
    RateSearchOptions search; ///< the simulations' (search.sim.seed also seeds the searcher)
    int maxReplicaNodes = 4;  ///< the most nodes one replica takes
    bool nMinus1 = false;     ///< on top of the file's headroom
    int threads = 0;          ///< candidates rated at once; 0: every core
};

/// One rated candidate: a replica size of a model on a GPU type, with its plan and rate.
struct FleetReplica {
    int model = 0, type = 0;
    int nodes = 0; ///< whole nodes; 0: a part of one node
    int gpus = 0;
    bool ok = false;
    std::string why; ///< no candidate: why (no plan fits, no rate meets the SLOs, the GPU lacks the dtype)
    /// No candidate because the plan is dp plain copies (a dense model) of a smaller size's replica, which
    /// is a candidate of its own: rated there, not twice.
    bool copies = false;
    Plan plan;
    std::string planName; ///< "megatron" or "<searcher> (seed N)"
    Metrics metrics;      ///< the plan's analytical metrics on the replica
    double rate = 0;      ///< requests/s under the SLOs
    /// What holds the replica's rate down: maxRate's binding ("ttft", "tpot", "memory") and why; with
    /// analytical rates, the limit the plan's batch met ("tpot", "ttft" or "memory").
    std::string binding, bindingWhy;
    int simulations = 0;
    double usdPerHour = 0;       ///< the replica's GPUs
    double outputTokensPerS = 0; ///< at the rate
};

/// What binds the answer, in words, with the saving where relaxing it saves money.
struct FleetBind {
    std::string what; ///< "inventory h200", "model llama-70b", "n-1"
    std::string why;
    double savingUsdPerHour = 0; ///< one more node of the type: the cost this much lower (0: none)
};

struct FleetAnswer {
    bool ok = false;
    std::string error; ///< no answer: which model cannot be served, and why
    bool stopped = false;
    bool nMinus1 = false;
    std::vector<FleetReplica> replicas; ///< every candidate tried, rated or not
    FleetProblem problem;               ///< the program over the rated ones
    std::vector<int> replicaOf;         ///< problem candidate -> index into replicas
    FleetSolution solution;
    std::vector<FleetBind> binds;
};

/// GPUs the answer takes of inventory type `type` for model `model` (-1: every type, every model).
int64_t fleetGpus(const FleetAnswer& a, int type = -1, int model = -1);
/// Dollars an hour the answer spends on model `model` (-1: every model), from its replica counts.
double fleetUsdPerHour(const FleetAnswer& a, int model = -1);
/// A replica's size as a table cell: "8 (1 node)", "16 (2 nodes)", "1 (1/8 node)".
std::string fleetSizeText(const FleetReplica& r, int gpusPerNode);

/// Rates every candidate (in parallel), solves the program, and says what binds; an error names the model
/// that cannot be served and why.
FleetAnswer planFleet(const Fleet& f, const FleetOptions& o, std::stop_token stop = {});

/// The scenario of one candidate: the model on `nodes` nodes of the inventory's type (0 nodes: `gpus` GPUs of
/// one node), at the inventory's GPUs per node and price.
Scenario fleetScenario(const FleetModel& m, const FleetGpuType& t, int nodes, int gpus);

} // namespace sp
