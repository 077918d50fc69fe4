#pragma once
// Fleet files (`kind: fleet`): an inventory of GPU types by their database id (resources/gpus.yaml), and the
// models to serve on it, each with its workload, SLOs and request rate. `shardplan capacity --fleet` assigns
// the models to the GPUs at least cost (core/sim/fleet.h); samples/README.md shows the format.

#include "core/common/error.h"
#include "core/model/scenario.h"

#include <string>
#include <vector>

namespace sp {

/// One GPU type of the inventory.
struct FleetGpuType {
    std::string id; ///< a GPU database id
    int nodes = 0;
    int gpusPerNode = 0; ///< a node's GPUs (a scale-up domain): the database's domain unless the file says
    double pricePerGpuHour = 0; ///< USD: the file's, else the database's (always known: the loader checks)
    std::string priceSource;
    int line = 0; ///< where the file lists it (1-based), for messages
};

/// One model to serve: what it is, how it is asked (a serving workload with SLOs) and how often.
struct FleetModel {
    std::string name; ///< the file's `name`, else the model's; unique in the fleet
    Model model;
    Workload workload;       ///< phase serving, with a TTFT or TPOT SLO
    Constraints constraints; ///< what every plan of the model keeps (no GPU count: the fleet sizes replicas)
    double rate = 0;         ///< requests/s to sustain under the SLOs
    int line = 0;
};

struct Fleet {
    std::string name;
    std::vector<FleetGpuType> inventory;
    std::vector<FleetModel> models;
    /// `headroom: n-1`: the answer still meets every rate with any one node gone.
    bool nMinus1 = false;
};

/// The most models and GPU types a fleet file may list: the integer program stays small (core/sim/fleet.h).
inline constexpr int kMaxFleetModels = 32;
inline constexpr int kMaxFleetGpuTypes = 32;

/// Reads a fleet file; models and workloads named by path are relative to it. Errors name the file, line and
/// field: a missing field, an unknown GPU id, a count out of bounds, a value that is not a number.
Result<Fleet> loadFleet(const std::string& path);
/// A fleet as a file loadFleet reads back to the same fleet: the models, workloads and constraints inline, a
/// GPU's price written only where it is not the price list's (so the file follows a later --prices).
std::string toYaml(const Fleet& f);
Result<Fleet> parseFleet(const std::string& text, const std::string& file);

} // namespace sp
