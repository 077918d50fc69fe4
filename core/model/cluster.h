#pragma once
// The GPU cluster: a two-level hierarchy of scale-up domains (NVLink / Infinity Fabric inside) joined by
// per-GPU NICs. A "node" is a scale-up domain, not a host: an 8-GPU HGX host is one domain of 8, while a
// GB200 NVL72 rack is one domain of 72 GPUs in 18 hosts (compute trays) of 4. The cost model prices every
// collective inside a node at the intra-node link and every one that spans nodes at the NIC; hosts only
// matter for exports and drawing.

#include "core/model/dtype.h"

#include <array>
#include <string>

namespace sp {

struct Gpu {
    std::string name;
    std::array<double, kDtypeCount> tflops{}; ///< dense tensor TFLOP/s per compute dtype; 0 = unsupported
    double hbmGB = 0;                         ///< 10^9 bytes
    double hbmTBs = 0;                        ///< 10^12 bytes/s
    bool operator==(const Gpu&) const = default;
};

struct Link {
    std::string name;
    double gbPerS = 0;    ///< GB/s per GPU, one direction (inter-node: NIC Gb/s / 8)
    double latencyUs = 0; ///< per message step
    bool operator==(const Link&) const = default;
};

/// Achieved fractions of the peaks. Defaults documented in the README with their sources.
struct Efficiency {
    double compute = 0.7;
    double memory = 0.8;
    double intraNode = 0.8;
    double interNode = 0.9;
    double launchUs = 4.0;
    /// Routed-expert grouped GEMMs relative to dense GEMMs of the same shape. DeepGEMM's README
    /// (deepseek-ai/DeepGEMM) measures grouped contiguous-layout GEMMs at 1,093-1,297 TFLOPS on H800 against
    /// 1,025-1,358 TFLOPS for normal GEMMs at M = 4096: no loss at large M; small-M experts are memory-bound
    /// in the roofline anyway. A fit parameter (shardplan calibrate --fit).
    double groupedGemm = 1.0;
    /// Fraction of the shorter side (compute or communication) of a half-batch that two-batch overlap hides
    /// under the other half. Overlap is partial in practice: DeepEP's normal kernels take SMs from the
    /// GEMMs while they run, and a layer's compute and communication come in segments that do not pair
    /// up evenly. 0.5 gives DeepSeek-V3 prefill on 4x8 H100 a 1.31x gain from two-batch overlap, inside the
    /// 27-35% that the SGLang team measured (lmsys.org/blog/2025-05-05-large-scale-ep). A fit parameter.
    double overlap = 0.5;
    bool operator==(const Efficiency&) const = default;
};

struct Cluster {
    std::string name;
    int nodes = 0;       ///< scale-up domains
    int gpusPerNode = 0; ///< GPUs per scale-up domain
    int gpusPerHost = 0; ///< GPUs per host (server, compute tray); divides gpusPerNode; 0: = gpusPerNode
    Gpu gpu;
    Link intraNode;
    Link interNode;
    Efficiency efficiency;
    int gpus() const { return nodes * gpusPerNode; }
    int hostGpus() const { return gpusPerHost > 0 ? gpusPerHost : gpusPerNode; }
    int hosts() const { return gpus() / hostGpus(); }
    bool operator==(const Cluster&) const = default;
};

} // namespace sp
