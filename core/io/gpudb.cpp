#include "core/io/gpudb.h"

#include "core/io/reader.h"

#include <cstdio>
#include <cstdlib>

namespace sp {

extern const char* const kGpuDatabaseYaml;

namespace {

std::vector<GpuSpec> parseDatabase() {
    const std::string file = "resources/gpus.yaml (built in)";
    std::vector<GpuSpec> out;
    try {
        const io::MapReader root(file, io::parseDocument(kGpuDatabaseYaml, file), "");
        root.allowKeys({"gpus"});
        const YAML::Node list = root.node("gpus");
        for (size_t i = 0; i < list.size(); ++i) {
            const io::MapReader g(file, list[i], "gpus[" + std::to_string(i) + "]");
            g.allowKeys({"id", "name", "tflops", "hbm_gb", "memory_mib", "hbm_tb_s", "scale_up",
                         "nic_gbit_s_per_gpu", "source"});
            GpuSpec s;
            s.id = g.string("id");
            s.gpu.name = g.string("name");
            const io::MapReader t = g.map("tflops");
            for (int d = 0; d < kDtypeCount; ++d) s.gpu.tflops[d] = t.numberOr(kDtypeNames[d], 0.0, 0.0, 1e7);
            s.gpu.hbmGB = g.number("hbm_gb", 1, 1e6);
            s.gpu.memoryMiB = g.numberOr("memory_mib", 0.0, 1, 1e9);
            s.gpu.hbmTBs = g.number("hbm_tb_s", 0.01, 1e3);
            const io::MapReader u = g.map("scale_up");
            u.allowKeys({"name", "gb_s_per_gpu", "domain"});
            s.scaleUp.name = u.string("name");
            s.scaleUp.gbPerS = u.number("gb_s_per_gpu", 1, 1e6);
            s.scaleUp.latencyUs = 3.0;
            s.scaleUpDomain = int(u.integer("domain", 1, 100000));
            s.nicGbitPerGpu = g.number("nic_gbit_s_per_gpu", 1, 1e6);
            s.source = g.string("source");
            out.push_back(std::move(s));
        }
    } catch (const InputError& e) {
        std::fprintf(stderr, "broken GPU database: %s\n", e.what());
        std::abort();
    }
    return out;
}

} // namespace

const std::vector<GpuSpec>& gpuDatabase() {
    static const std::vector<GpuSpec> db = parseDatabase();
    return db;
}

const GpuSpec* findGpu(std::string_view id) {
    for (const auto& g : gpuDatabase())
        if (g.id == id) return &g;
    return nullptr;
}

std::string knownGpuIds() {
    std::string s;
    for (const auto& g : gpuDatabase()) s += (s.empty() ? "" : ", ") + g.id;
    return s;
}

} // namespace sp
