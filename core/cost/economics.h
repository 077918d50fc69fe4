#pragma once
// What serving costs: dollars per million tokens from the cluster's price per GPU-hour, and tokens per second
// per megawatt from the GPUs' board power (TDP: the most the boards draw, not a measurement, and without the
// hosts, network and cooling).

#include "core/model/cluster.h"

#include <string>

namespace sp {

struct ServingCost {
    bool priced = false;  ///< the cluster has a price per GPU-hour
    bool powered = false; ///< the GPU has a TDP
    double usdPerGpuHour = 0;
    double usdPerHour = 0; ///< all the GPUs
    double usdPerMillionTokens = 0;
    double tdpW = 0;
    double megawatts = 0; ///< the GPUs' TDP together
    double tokensPerSPerMegawatt = 0;
    std::string priceSource;
    /// GPUs of two types (a disaggregated plan over two clusters): each type's count and price, e.g.
    /// "168 H100 SXM5 80GB at $2.73 and 56 B200 at $6.22"; usdPerGpuHour and tdpW are then the means.
    std::string mix;
};

/// `gpus` GPUs of the cluster serving `tokensPerS` tokens a second (output tokens for serving and decode).
ServingCost servingCost(const Cluster& c, int gpus, double tokensPerS);
/// `ga` GPUs of cluster a and `gb` of cluster b together serving `tokensPerS` tokens a second (the pools of a
/// disaggregated plan); priced when both are. One cluster (a == b's GPU and price): as servingCost.
ServingCost servingCost(const Cluster& a, int ga, const Cluster& b, int gb, double tokensPerS);

} // namespace sp
