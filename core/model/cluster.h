#pragma once
// The GPU cluster: a two-level hierarchy of scale-up domains (NVLink / Infinity Fabric inside) joined by
// per-GPU NICs. A "node" is a scale-up domain, not a host: an 8-GPU HGX host is one domain of 8, while a
// GB200 NVL72 rack is one domain of 72 GPUs in 18 hosts (compute trays) of 4. The cost model prices every
// collective inside a node at the intra-node link and every one that spans nodes at the NIC; hosts only
// matter for exports and drawing.

#include "core/model/dtype.h"

#include <array>
#include <cstdint>
#include <string>

namespace sp {

struct Gpu {
    std::string name;
    std::array<double, kDtypeCount> tflops{}; ///< dense tensor TFLOP/s per compute dtype; 0 = unsupported
    double hbmGB = 0;                         ///< 10^9 bytes (the datasheet's figure)
    double hbmTBs = 0;                        ///< 10^12 bytes/s
    /// The memory the driver reports (nvidia-smi's or rocm-smi's total), MiB; 0: unknown (the datasheet's
    /// hbmGB x 10^9 bytes then stand for it). An H100 SXM has 81,559 MiB (79.6 GiB), not 80 x 10^9 bytes
    /// (74.5 GiB): memoryBytes().
    double memoryMiB = 0;
    double memoryBytes() const { return memoryMiB > 0 ? memoryMiB * 1048576.0 : hbmGB * 1e9; }
    /// Board power (the datasheet's maximum TDP), W; 0: unknown. Energy figures are TDP-based: the most the
    /// boards draw, not a measurement of what they draw.
    double tdpW = 0;
    bool operator==(const Gpu&) const = default;
};

struct Link {
    std::string name;
    double gbPerS = 0;    ///< GB/s per GPU, one direction (inter-node: NIC Gb/s / 8)
    double latencyUs = 0; ///< per message step
    /// A scale-up domain wired point to point rather than through a switch (AMD Instinct's Infinity Fabric:
    /// each of the 8 GPUs has 7 links, one to each peer): GB/s of one link, one direction; 0 for a switch. A
    /// collective among g GPUs of such a domain uses g - 1 of a GPU's links, min(gbPerS, (g - 1) x this).
    double meshLinkGbPerS = 0;
    bool operator==(const Link&) const = default;
};

/// Achieved fractions of the datasheet figures, and fixed costs. The defaults are the Hopper fit that the
/// H100 and H200 sample clusters carry (samples/clusters/h100-4x8.yaml says what they were fitted to: 166
/// TensorRT-LLM runs, median |error| 4.6%, leave-one-out 4.8%); no public fit exists yet for other GPUs,
/// whose clusters take the same kernel-level factors unless their file says otherwise.
struct Efficiency {
    double compute = 0.690;
    double memory = 0.9;
    double intraNode = 0.626;
    double interNode = 0.9;
    double launchUs = 12.6;
    /// Routed-expert grouped GEMMs relative to dense GEMMs of the same shape. DeepGEMM's README
    /// (deepseek-ai/DeepGEMM) measures grouped contiguous-layout GEMMs at 1,093-1,297 TFLOPS on H800 against
    /// 1,025-1,358 TFLOPS for normal GEMMs at M = 4096: no loss at large M; small-M experts are memory-bound
    /// in the roofline anyway; TensorRT-LLM's CUTLASS MoE kernels on Mixtral (many small per-expert GEMMs)
    /// fit at 0.62. A fit parameter (shardplan calibrate --fit).
    double groupedGemm = 0.623;
    /// Fraction of the shorter side (compute or communication) of a half-batch that two-batch overlap hides
    /// under the other half. Overlap is partial in practice: DeepEP's normal kernels take SMs from the
    /// GEMMs while they run, and a layer's compute and communication come in segments that do not pair
    /// up evenly. 0.5 gives DeepSeek-V3 prefill on 4x8 H100 a 1.31x gain from two-batch overlap, inside the
    /// 27-35% that the SGLang team measured (lmsys.org/blog/2025-05-05-large-scale-ep). A fit parameter.
    double overlap = 0.5;
    /// The attention core's KV-cache reads and writes, as a fraction of the datasheet HBM bandwidth (as
    /// `memory` is for weights and activations). Paged caches are read block by block through a block
    /// table, per sequence and head, and reach less of the bandwidth than a weight stream: a kernel-level
    /// profile of 70B decode on H100 measured 1.4-1.9 TB/s (42-57%) for KV reads against 2.6-2.8 TB/s
    /// (78-84%) for weight loads (mikamirai.com/blog/gpu-memory-bandwidth). A fit parameter.
    double kvRead = 0.791;
    /// Share of the shorter of an operator's compute and memory time that its kernel hides under the
    /// longer: time = max(c, m) + (1 - opOverlap) min(c, m). 1 is the pure roofline; kernels near the
    /// ridge point reach neither roof, as loads and tensor-core work overlap only in part (the gap the
    /// roofline leaves at intermediate arithmetic intensity: Williams et al., "Roofline", CACM 2009, and
    /// DeepGEMM's README, whose grouped GEMMs at small M per group reach well under the peak that large
    /// M reaches). A fit parameter.
    double opOverlap = 0.363;
    /// The routed experts' weight stream where no DeepEP dispatch feeds them (tensor-parallel experts on
    /// gathered tokens, expert parallelism inside a tensor-parallel group, replicated experts): the engine's
    /// fused-MoE kernel, as a fraction of the datasheet HBM bandwidth; 0 (the default) streams them at
    /// `memory`, as the Hopper fit does (TensorRT-LLM's CUTLASS MoE kernels on Mixtral and Qwen3 TP8 runs).
    /// Kernels differ here: vLLM's benchmark of its Triton fused-MoE kernel for DeepSeek-V3's block-FP8
    /// experts on H100 (vllm-project/vllm pull request #13932, benchmark_moe.py, E 256, K 7,168, top-8)
    /// streams the TP8 shards (1.41 GB) in 1,732-1,893 us at 128-1,024 tokens, 0.22-0.24 of 3.35 TB/s,
    /// and whole experts (TP1) at 0.27. Set it from a kernel benchmark of your engine.
    double fusedMoeMemory = 0;
    /// The fused-MoE stream in force: fusedMoeMemory where set, else `memory`.
    double fusedMoeStream() const { return fusedMoeMemory > 0 ? fusedMoeMemory : memory; }
    /// GEMMs on FP4 tensor cores (NVFP4, MXFP4 weights x FP4 activations) as a fraction of the FP4 peak;
    /// 0 (the default) runs them at `compute`. FP4 GEMMs at serving shapes reach a smaller share of their
    /// doubled peak than FP8 ones (scale handling, the same memory feeding twice the math). A fit factor.
    double computeFp4 = 0;
    double fp4Compute() const { return computeFp4 > 0 ? computeFp4 : compute; }
    bool operator==(const Efficiency&) const = default;
};

/// The most GPUs a cluster may have: 2^20, five times the largest GPU clusters built (about 200,000), so
/// that GPU counts and their products with per-GPU counts stay far inside int (a file of 100,000 nodes of
/// 100,000 GPUs once wrapped to negative GPU totals).
inline constexpr int64_t kMaxClusterGpus = int64_t(1) << 20;

struct Cluster {
    std::string name;
    /// Where `efficiency` comes from, in words the user reads (GpuFamily's familySource, or "the cluster
    /// file's own factors").
    std::string efficiencySource;
    int nodes = 0;       ///< scale-up domains
    int gpusPerNode = 0; ///< GPUs per scale-up domain
    int gpusPerHost = 0; ///< GPUs per host (server, compute tray); divides gpusPerNode; 0: = gpusPerNode
    Gpu gpu;
    Link intraNode;
    Link interNode;
    Efficiency efficiency;
    /// What one GPU costs an hour, USD (the cluster file's price_per_gpu_hour, else the GPU database's cloud
    /// list price); 0: unknown. priceSource says where it comes from, with its date.
    double pricePerGpuHour = 0;
    std::string priceSource;
    int gpus() const { return nodes * gpusPerNode; }
    int hostGpus() const { return gpusPerHost > 0 ? gpusPerHost : gpusPerNode; }
    int hosts() const { return gpus() / hostGpus(); }
    /// Alike clusters are equal whatever their efficiencySource and priceSource say (they describe the
    /// factors and the price, which are compared).
    bool operator==(const Cluster& o) const {
        return name == o.name && nodes == o.nodes && gpusPerNode == o.gpusPerNode &&
               gpusPerHost == o.gpusPerHost && gpu == o.gpu && intraNode == o.intraNode &&
               interNode == o.interNode && efficiency == o.efficiency && pricePerGpuHour == o.pricePerGpuHour;
    }
};

} // namespace sp
