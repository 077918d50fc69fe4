#pragma once
// Disaggregated prefill/decode serving, as a layer over the cost model: the cluster's nodes split into a
// prefill pool and a decode pool, each with its own plan. The prefill pool runs the workload as a prefill
// scenario on its GPUs, the decode pool as a decode scenario on its GPUs (CostModel::evaluate for both); the
// KV cache of every prompt moves from one to the other over the NICs.
// With a scenario's decode_cluster the pools run on two clusters, e.g. prefill on H100 and decode on B200:
// the prefill pool takes 1..N of `cluster`'s nodes, the decode pool 1..M of `decode_cluster`'s, each priced
// by its own cost model, and the transfer crosses the slower of the two clusters' NICs.
//
// The formulas (I input tokens, O output tokens, G_p and G_d the pools' GPUs):
//  - KV bytes per prompt K = kvBytesPerSequence(model, I) (core/model/model.h: MLA keeps the latent plus the
//    rope key per layer, GQA a K and a V per KV head per layer, each in the KV-cache dtype).
//  - A prefill pass of one replica carries B prompts; their K B bytes leave over the replica's pp x tp NICs:
//    transfer = K B / (pp tp nic eta_kv) + one network latency (not overlapped with the pass: SGLang sends a
//    request's KV once its prefill is done). TTFT = prefill pass + transfer (+ queueing, below). nic is the
//    slower cluster's NIC rate per GPU and the latency the larger of the two clusters'.
//  - Re-layout: when the pools' TP differ, a decode rank's KV heads come from tp_p / tp_d prefill ranks (or a
//    prefill rank's go to tp_d / tp_p decode ranks), as vLLM's NIXL connector reads them for heterogeneous
//    TP: the bytes are the same, the messages max(tp_p, tp_d) / min(tp_p, tp_d) times as many, each paying
//    the network latency once more.
//  - Requests/s: prefill R_p = prompt tokens/s / I; decode R_d = output tokens/s / O; network
//    R_n = min(G_p nic_p, G_d nic_d) eta_kv / K (every prompt's KV crosses both pools' NICs). R = min(R_p,
//    R_d, R_n) binds; the others idle for the share 1 - R / R_x of their time.
//  - Throughput = R O output tokens/s over G_p + G_d GPUs (the unit of an aggregated serving plan).
//  - Cost: G_p price_p + G_d price_d USD an hour (each cluster's price per GPU-hour); USD per million output
//    tokens = that / (3600 R O) x 10^6. Pools of different GPUs are compared by it.
//  - TPOT: the decode pool's step at its batch.
//  - Queueing (optional, at a load rho of R): the prefill pool serves passes of mean length S = its TTFT;
//    an M/D/1 queue at utilisation u = rho R / R_p waits u S / (2 (1 - u)) on average.
// The prefill pool's batch is the largest that fits its memory and keeps prefill + transfer within the
// TTFT SLO (binary search, as the cost model does for its own latency); the decode pool's is the cost
// model's own choice under the TPOT SLO.

#include "core/cost/costmodel.h"
#include "core/cost/economics.h"
#include "core/model/disaggplan.h"

#include <optional>
#include <string>
#include <vector>

namespace sp {

/// Achieved share of the NIC line rate for a KV-cache transfer between a prefill and a decode node.
/// Mooncake's Transfer Engine moves 40 GB (the KV cache of a 128K-token Llama-3-70B prompt) at 190 GB/s
/// over 8 x 400 Gb/s RoCE NICs (400 GB/s line rate: 0.475) and at 87 GB/s over 4 x 200 Gb/s (100 GB/s:
/// 0.87) (kvcache-ai/Mooncake README.md, "Superior performance at scale", commit 01b91d9). The sample
/// clusters have 8 x 400 Gb/s per node, hence 0.475.
inline constexpr double kKvTransferEfficiency = 0.475;

struct DisaggOptions {
    double transferEfficiency = kKvTransferEfficiency;
    /// Arrival rate as a share of the rate-matched capacity, for the prefill queue; 0: no queueing (as the
    /// aggregated cost model, which prices a saturated steady state). Below 1.
    double load = 0;
    /// One cluster: the pools may leave nodes off (k_p + k_d <= N), as capacity sizing does; else they split
    /// every node.
    bool spareNodes = false;
};

/// The rate-matched result.
struct DisaggMetrics {
    bool valid = false;    ///< both plans well formed for their pools, the nodes add up
    bool feasible = false; ///< valid, both pools fit memory, TTFT and TPOT met
    std::string violation; ///< the first reason it is not feasible (prefixed by the pool)
    std::vector<std::string> violations;
    double shortfall = 0; ///< >= 1 when infeasible (as Metrics::shortfall)
    Metrics prefill;      ///< the prefill pool's own metrics at its batch (its scenario has no TTFT SLO)
    Metrics decode;       ///< the decode pool's
    int prefillGpus = 0, decodeGpus = 0;
    int prefillInstances = 0, decodeInstances = 0; ///< engine instances per pool (instancesOf)
    double kvBytesPerPrompt = 0;
    double transferMs = 0; ///< one prefill pass's KV, prefill node to decode node
    double relayoutMs = 0; ///< of which the extra messages of a TP re-layout
    /// Both pools' GPUs at their clusters' prices, USD an hour, and per million output tokens at
    /// `throughput`; 0 when a cluster has no price.
    double usdPerHour = 0, usdPerMTokens = 0;
    double queueMs = 0; ///< mean wait for the prefill pool at options.load
    double prefillRequestsPerS = 0, decodeRequestsPerS = 0, networkRequestsPerS = 0;
    double requestsPerS = 0;                ///< the smallest of the three
    std::string bound;                      ///< which one: "prefill", "decode" or "network"
    double prefillIdle = 0, decodeIdle = 0; ///< share of time the pool waits on the bound
    double throughput = 0;                  ///< output tokens/s, whole cluster
    double throughputPerGpu = 0;
    double ttftMs = 0; ///< prefill pass + transfer + queue
    double tpotMs = 0; ///< the decode pool's
};

/// Engine instances a pool's plan makes: its GPUs over those of one instance, pp x tp, or for a MoE model
/// pp x max(tp, ep x etp) (an instance whose experts span the data-parallel ranks is one engine, as SGLang's
/// DP attention is).
int instancesOf(const Plan& p, int gpus, const Model& m);

/// The workload as one pool runs it: phase prefill (no TTFT SLO: the layer adds the transfer; no fixed batch)
/// or decode (the TPOT SLO, the workload's batch policy), on `nodes` nodes of its cluster (the decode pool's:
/// the scenario's decode_cluster when it has one).
Scenario poolScenario(const Scenario& s, Phase phase, int nodes);

/// The pools' GPUs of a disaggregated plan serving `tokensPerS` output tokens a second, each pool's GPUs at
/// its own cluster's price (servingCost of two clusters).
ServingCost poolsCost(const Scenario& s, const DisaggMetrics& m, double tokensPerS);

/// Prefill and decode pools of one split of a scenario's nodes.
class DisaggModel {
public:
    explicit DisaggModel(Scenario s, DisaggOptions o = {});
    ~DisaggModel();
    DisaggModel(DisaggModel&&) noexcept;
    DisaggModel& operator=(DisaggModel&&) noexcept;

    const Scenario& scenario() const;
    const DisaggOptions& options() const;
    /// Why the scenario cannot be split (one node, a GPU constraint on part of the cluster), or nullopt.
    std::optional<std::string> checkScenario() const;
    /// Why a split does not fit the cluster, or nullopt.
    std::optional<std::string> checkSplit(int prefillNodes, int decodeNodes) const;
    /// The pools' cost models for a split (kept: later calls with the same split reuse them). Thread-safe.
    const CostModel& prefillModel(int nodes) const;
    const CostModel& decodeModel(int nodes) const;
    /// The rate-matched metrics of a disaggregated plan. Thread-safe.
    DisaggMetrics evaluate(const DisaggPlan& p) const;
    /// The prefill pool's metrics for a plan on `nodes` nodes, with the batch chosen under the TTFT SLO less
    /// the KV transfer; sets transferMs. The search's prefill objective.
    Metrics evaluatePrefill(const Plan& p, int nodes, double* transferMs = nullptr) const;
    /// The transfer of a prefill pass of `batch` prompts from a replica of plan p (ms).
    double transferMs(const Plan& p, int64_t batch) const;
    double kvBytesPerPrompt() const;
    /// NIC bytes/s per GPU a KV transfer achieves (the slower cluster's).
    double nicBytesPerS() const;
    /// The network latency of one transfer message between the pools, seconds (the larger cluster's).
    double linkLatencyS() const;
    /// Whether the pools run on two clusters (the scenario's decode_cluster).
    bool twoClusters() const;
    /// The cluster a pool runs on.
    const Cluster& poolCluster(Phase phase) const;

private:
    struct Impl;
    std::unique_ptr<Impl> d;
};

} // namespace sp
