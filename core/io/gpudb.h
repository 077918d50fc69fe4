#pragma once
// The GPU database shipped with the program (resources/gpus.yaml, compiled in): what `gpu: <id>` names in a
// cluster file.

#include "core/model/cluster.h"

#include <string>
#include <string_view>
#include <vector>

namespace sp {

struct GpuSpec {
    std::string id;        ///< e.g. "b200"
    Gpu gpu;               ///< name, dense TFLOP/s per dtype, HBM
    Link scaleUp;          ///< NVLink / Infinity Fabric: GB/s per GPU one way (latency: the cluster default)
    int scaleUpDomain = 0; ///< GPUs in one scale-up domain (NVL72: 72)
    double nicGbitPerGpu = 0;
    std::string source; ///< the datasheets
};

/// Every GPU of the database, in file order. The file is checked when first read; a broken entry aborts with
/// the entry's id and field (a build-time data error, never user input).
const std::vector<GpuSpec>& gpuDatabase();
/// nullptr when unknown.
const GpuSpec* findGpu(std::string_view id);
/// "a100-sxm-80gb, h100-sxm, ..." for error messages.
std::string knownGpuIds();

} // namespace sp
