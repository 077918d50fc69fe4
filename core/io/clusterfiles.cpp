// Cluster files: reading (a GPU of the database by id, or one given inline) and writing.

#include "core/io/formatsimpl.h"
#include "core/io/gpudb.h"
#include "core/io/modelfields.h"

namespace sp::formats {

Cluster readCluster(const MapReader& r) {
    checkHeader(r, FileKind::Cluster);
    r.allowKeys({"version", "kind", "name", "nodes", "gpus_per_node", "gpus_per_host", "gpu", "intra_node",
                 "inter_node", "efficiency", "price_per_gpu_hour"});
    Cluster c;
    c.name = r.stringOr("name", "");
    // `gpu: b200` names a GPU of the database: its figures, and defaults for the domain size and the links.
    const GpuSpec* spec = nullptr;
    if (r.node("gpu").IsScalar()) {
        const std::string id = r.string("gpu");
        spec = findGpu(id);
        if (!spec) {
            std::vector<std::string_view> ids;
            for (const auto& g : gpuDatabase()) ids.push_back(g.id);
            r.failAt("gpu", "unknown GPU '" + id + "'" + io::didYouMean(id, ids) + "; known: " +
                                knownGpuIds() + " (or give the GPU inline: name, tflops, hbm_gb, hbm_tb_s)");
        }
    }
    c.nodes = int(r.integer("nodes", 1, 100000));
    c.gpusPerNode = spec ? int(r.integerOr("gpus_per_node", spec->scaleUpDomain, 1, 100000))
                         : int(r.integer("gpus_per_node", 1, 1024));
    if (int64_t(c.nodes) * c.gpusPerNode > kMaxClusterGpus)
        r.failAt(r.has("gpus_per_node") ? "gpus_per_node" : "nodes",
                 std::to_string(c.nodes) + " nodes of " + std::to_string(c.gpusPerNode) + " GPUs are " +
                     std::to_string(int64_t(c.nodes) * c.gpusPerNode) + " GPUs; a cluster has at most " +
                     std::to_string(kMaxClusterGpus) + " (2^20)");
    c.gpusPerHost = int(r.integerOr("gpus_per_host", 0, 0, 100000));
    if (c.gpusPerHost > 0 && (c.gpusPerHost > c.gpusPerNode || c.gpusPerNode % c.gpusPerHost != 0))
        r.failAt("gpus_per_host", "must divide gpus_per_node (" + std::to_string(c.gpusPerNode) +
                                      "): a host's GPUs sit in one scale-up domain");
    if (c.gpusPerHost == c.gpusPerNode) c.gpusPerHost = 0;
    if (spec) {
        c.gpu = spec->gpu;
        c.pricePerGpuHour = spec->pricePerHourUsd, c.priceSource = spec->priceSource;
    } else {
        const MapReader g = r.map("gpu");
        g.allowKeys({"name", "tflops", "hbm_gb", "memory_mib", "hbm_tb_s", "tdp_w"});
        c.gpu.name = g.stringOr("name", "");
        const MapReader t = g.map("tflops");
        t.allowKeys({"fp32", "bf16", "fp16", "fp8", "int8", "fp4", "int4"});
        bool any = false;
        for (int i = 0; i < kDtypeCount; ++i) {
            c.gpu.tflops[i] = t.numberOr(kDtypeNames[i], 0.0, 0.0, 1e7);
            any = any || c.gpu.tflops[i] > 0;
        }
        if (!any) g.failAt("tflops", "give the dense TFLOP/s of at least one dtype");
        c.gpu.hbmGB = g.number("hbm_gb", 1e-3, 1e7);
        // What the driver reports, MiB (nvidia-smi, rocm-smi); without it the datasheet's 10^9 bytes.
        c.gpu.memoryMiB = g.numberOr("memory_mib", 0.0, 1e-3, 1e10);
        c.gpu.hbmTBs = g.number("hbm_tb_s", 1e-3, 1e4);
        // Board power and price: the file's, else those of the database's GPU of the same name.
        const GpuSpec* named = findGpuByName(c.gpu.name);
        c.gpu.tdpW = g.numberOr("tdp_w", named ? named->gpu.tdpW : 0.0, 1, 1e5);
        if (named) c.pricePerGpuHour = named->pricePerHourUsd, c.priceSource = named->priceSource;
    }
    if (r.has("price_per_gpu_hour")) {
        c.pricePerGpuHour = r.number("price_per_gpu_hour", 0.0, 1e4);
        c.priceSource = "the cluster file's price_per_gpu_hour";
    }
    if (c.pricePerGpuHour <= 0) c.priceSource.clear();
    if (spec && !r.has("intra_node")) {
        c.intraNode = spec->scaleUp;
    } else {
        const MapReader in = r.map("intra_node");
        in.allowKeys({"name", "gb_s_per_gpu", "latency_us", "mesh_link_gb_s"});
        c.intraNode.name = in.stringOr("name", spec ? spec->scaleUp.name : "");
        c.intraNode.gbPerS = spec ? in.numberOr("gb_s_per_gpu", spec->scaleUp.gbPerS, 1e-3, 1e6)
                                  : in.number("gb_s_per_gpu", 1e-3, 1e6);
        c.intraNode.latencyUs = in.numberOr("latency_us", 3.0, 0.0, 1e6);
        // A point-to-point domain (AMD Infinity Fabric): one link's GB/s, one way (Link::meshLinkGbPerS).
        c.intraNode.meshLinkGbPerS =
            in.numberOr("mesh_link_gb_s", spec ? spec->scaleUp.meshLinkGbPerS : 0.0, 0.0, 1e6);
    }
    if (spec && c.nodes > 1 && !r.has("inter_node")) {
        c.interNode = Link{"NIC", spec->nicGbitPerGpu / 8.0, 6.0};
    } else if (c.nodes > 1 || r.has("inter_node")) {
        const MapReader out = r.map("inter_node");
        out.allowKeys({"name", "nic_gbit_s_per_gpu", "latency_us"});
        c.interNode.name = out.stringOr("name", "");
        c.interNode.gbPerS = (spec ? out.numberOr("nic_gbit_s_per_gpu", spec->nicGbitPerGpu, 1e-3, 1e7)
                                   : out.number("nic_gbit_s_per_gpu", 1e-3, 1e7)) /
                             8.0;
        c.interNode.latencyUs = out.numberOr("latency_us", 6.0, 0.0, 1e6);
    }
    // Efficiency: the cluster file's own factors where it gives them (each one it names replaces the GPU
    // family's), else the factors the database fitted for the GPU's family, else Hopper's with a warning.
    const GpuFamily* family = spec ? findGpuFamily(spec->family) : nullptr;
    if (family && family->fitted) c.efficiency = family->efficiency;
    c.efficiencySource = familySource(family, spec ? spec->gpu.name : c.gpu.name);
    if (r.has("efficiency")) {
        c.efficiency = io::readEfficiency(r.map("efficiency"), c.efficiency);
        c.efficiencySource =
            "the cluster file's own factors" +
            (family && family->fitted ? " (over " + c.efficiencySource + ")" : std::string());
    }
    return c;
}

void emitCluster(YAML::Emitter& e, const Cluster& c) {
    e << YAML::BeginMap;
    e << YAML::Key << "version" << YAML::Value << 1 << YAML::Key << "kind" << YAML::Value << "cluster";
    e << YAML::Key << "name" << YAML::Value << c.name;
    e << YAML::Key << "nodes" << YAML::Value << c.nodes << YAML::Key << "gpus_per_node" << YAML::Value
      << c.gpusPerNode;
    if (c.gpusPerHost > 0) e << YAML::Key << "gpus_per_host" << YAML::Value << c.gpusPerHost;
    // A GPU with a database entry's figures is that entry: `gpu: <id>`, so the file reads back to it (its
    // price and fitted factors keep their sources); any other is written inline.
    const GpuSpec* spec = nullptr;
    for (const GpuSpec& g : gpuDatabase())
        if (g.gpu == c.gpu) spec = &g;
    if (spec) {
        e << YAML::Key << "gpu" << YAML::Value << spec->id;
    } else {
        e << YAML::Key << "gpu" << YAML::Value << YAML::BeginMap << YAML::Key << "name" << YAML::Value
          << c.gpu.name;
        e << YAML::Key << "tflops" << YAML::Value << YAML::Flow << YAML::BeginMap;
        for (int i = 0; i < kDtypeCount; ++i)
            if (c.gpu.tflops[i] > 0)
                e << YAML::Key << std::string(kDtypeNames[i]) << YAML::Value << Num{c.gpu.tflops[i]};
        e << YAML::EndMap;
        e << YAML::Key << "hbm_gb" << YAML::Value << Num{c.gpu.hbmGB};
        if (c.gpu.memoryMiB > 0) e << YAML::Key << "memory_mib" << YAML::Value << Num{c.gpu.memoryMiB};
        e << YAML::Key << "hbm_tb_s" << YAML::Value << Num{c.gpu.hbmTBs};
        if (c.gpu.tdpW > 0) e << YAML::Key << "tdp_w" << YAML::Value << Num{c.gpu.tdpW};
        e << YAML::EndMap;
    }
    // The database's price is what `gpu: <id>` reads; another one (0 included: none) is the file's own.
    if (spec ? c.pricePerGpuHour != spec->pricePerHourUsd : c.pricePerGpuHour > 0)
        e << YAML::Key << "price_per_gpu_hour" << YAML::Value << Num{c.pricePerGpuHour};
    e << YAML::Key << "intra_node" << YAML::Value << YAML::BeginMap << YAML::Key << "name" << YAML::Value
      << c.intraNode.name;
    e << YAML::Key << "gb_s_per_gpu" << YAML::Value << Num{c.intraNode.gbPerS};
    e << YAML::Key << "latency_us" << YAML::Value << Num{c.intraNode.latencyUs};
    if (c.intraNode.meshLinkGbPerS > 0 || (spec && spec->scaleUp.meshLinkGbPerS > 0)) // 0: switched
        e << YAML::Key << "mesh_link_gb_s" << YAML::Value << Num{c.intraNode.meshLinkGbPerS};
    e << YAML::EndMap;
    if (c.interNode.gbPerS > 0) {
        e << YAML::Key << "inter_node" << YAML::Value << YAML::BeginMap << YAML::Key << "name" << YAML::Value
          << c.interNode.name;
        e << YAML::Key << "nic_gbit_s_per_gpu" << YAML::Value << Num{c.interNode.gbPerS * 8.0};
        e << YAML::Key << "latency_us" << YAML::Value << Num{c.interNode.latencyUs} << YAML::EndMap;
    }
    const auto& f = c.efficiency;
    // The family's fitted factors are what `gpu: <id>` reads: written only where they differ, each of them
    // then (zeros too), since the reader starts from the family's.
    const GpuFamily* family = spec ? findGpuFamily(spec->family) : nullptr;
    const Efficiency base = family && family->fitted ? family->efficiency : Efficiency{};
    if (spec && f == base) {
        e << YAML::EndMap;
        return;
    }
    e << YAML::Key << "efficiency" << YAML::Value << YAML::BeginMap;
    e << YAML::Key << "compute" << YAML::Value << Num{f.compute} << YAML::Key << "memory" << YAML::Value
      << f.memory;
    e << YAML::Key << "intra_node" << YAML::Value << Num{f.intraNode} << YAML::Key << "inter_node" << YAML::Value
      << f.interNode;
    e << YAML::Key << "launch_us" << YAML::Value << Num{f.launchUs};
    e << YAML::Key << "grouped_gemm" << YAML::Value << Num{f.groupedGemm} << YAML::Key << "overlap" << YAML::Value
      << f.overlap << YAML::Key << "kv_read" << YAML::Value << Num{f.kvRead};
    e << YAML::Key << "op_overlap" << YAML::Value << Num{f.opOverlap};
    if (f.fusedMoeMemory > 0 || base.fusedMoeMemory > 0)
        e << YAML::Key << "fused_moe_memory" << YAML::Value << Num{f.fusedMoeMemory};
    if (f.computeFp4 > 0 || base.computeFp4 > 0)
        e << YAML::Key << "compute_fp4" << YAML::Value << Num{f.computeFp4};
    e << YAML::EndMap;
    e << YAML::EndMap;
}

} // namespace sp::formats
