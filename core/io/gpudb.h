#pragma once
// The GPU database shipped with the program (resources/gpus.yaml, compiled in): what `gpu: <id>` names in a
// cluster file.

#include "core/model/cluster.h"

#include <string>
#include <string_view>
#include <vector>

namespace sp {

/// GPUs whose kernels and links behave alike (Hopper, Blackwell, AMD CDNA 3), with the efficiency factors
/// fitted to published measurements of them, and where those came from.
struct GpuFamily {
    std::string id;   ///< "blackwell"
    std::string name; ///< "NVIDIA Blackwell"
    bool fitted = false;
    Efficiency efficiency;                ///< fitted factors (Hopper's defaults when not fitted)
    int measurements = 0;                 ///< runs the fit used
    double medianError = 0, looError = 0; ///< median |error| fitted and leave-one-out, percent
    std::string fittedOn;                 ///< the measurement files and the command
};

struct GpuSpec {
    std::string id;        ///< e.g. "b200"
    std::string family;    ///< a GpuFamily id
    Gpu gpu;               ///< name, dense TFLOP/s per dtype, HBM
    Link scaleUp;          ///< NVLink / Infinity Fabric: GB/s per GPU one way (latency: the cluster default)
    int scaleUpDomain = 0; ///< GPUs in one scale-up domain (NVL72: 72)
    double nicGbitPerGpu = 0;
    std::string source; ///< the datasheets
    /// The price of one GPU for an hour, USD, from the price list in force (the database's own, or a user's
    /// that replaced it: usePriceList), and that list's basis; 0: the list has none. (Gpu::tdpW holds the
    /// board power.)
    double pricePerHourUsd = 0;
    std::string priceSource;
};

/// Prices of GPUs on one basis, so that a $/M tokens on one GPU compares with one on another: the database's
/// (resources/gpus.yaml `prices:`), or a user's file of the same form replacing it whole:
///   basis: "our 2027 contract rates"        # named in every cost answer
///   usd_per_gpu_hour: {h100-sxm: 2.10, b200: {usd: 4.20, note: "reserved, 1 year"}}
/// A GPU the list does not name has no price.
struct PriceList {
    struct Entry {
        std::string gpu;  ///< a GPU id of the database
        double usd = 0;   ///< per GPU-hour
        std::string note; ///< said after the basis ("19 clouds"); may be empty
    };
    std::string basis;
    std::vector<Entry> prices;
};
/// Reads a price list file; an InputError names the file, the line and the field (an unknown GPU id among
/// them, with the known ids).
PriceList loadPriceList(const std::string& path);
/// The same from text; `file` names it in errors.
PriceList parsePriceList(const std::string& text, const std::string& file);
/// Replaces every GPU's price in the database by the list's (GPUs it does not name lose theirs). Call before
/// other threads read the database: the programs do at start-up (`--prices FILE`).
void usePriceList(const PriceList& list);
/// The basis of the prices in force.
const std::string& priceBasis();
/// The database's own price list (what usePriceList replaces; using it again restores it).
const PriceList& builtinPriceList();

/// Every GPU of the database, in file order. The file is checked when first read; a broken entry aborts with
/// the entry's id and field (a build-time data error, never user input).
const std::vector<GpuSpec>& gpuDatabase();
/// nullptr when unknown.
const GpuSpec* findGpu(std::string_view id);
/// The GPU of the database whose name is `name` (a cluster file that gives its GPU inline under the
/// database's name), or nullptr.
const GpuSpec* findGpuByName(std::string_view name);
/// A cluster of `nodes` scale-up domains of the GPU, as a cluster file naming only `gpu: <id>` and `nodes`
/// reads: the database's links (NVLink / Infinity Fabric 3 us, NIC 6 us), its family's fitted factors, its
/// power and price.
Cluster clusterOf(const GpuSpec& g, int nodes);
/// "a100-sxm-80gb, h100-sxm, ..." for error messages.
std::string knownGpuIds();
/// The families of the database; nullptr when unknown.
const std::vector<GpuFamily>& gpuFamilies();
const GpuFamily* findGpuFamily(std::string_view id);
/// What a cluster of this family's GPU runs with, in words: "AMD CDNA 3 (MI300X, MI325X)'s factors, fitted on
/// 13 measurements: median |error| 8.3%, leave-one-out 8.6%", or, without a fit (or a family), "no
/// measurements for <gpu>: Hopper's factors (the defaults)".
std::string familySource(const GpuFamily* family, const std::string& gpuName);

} // namespace sp
