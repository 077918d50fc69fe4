#pragma once
// Where the programs find their data files: installed (<prefix>/share/shardplan, found from the executable's
// own path) or, when run from a build folder, the source tree.

#include <string>

namespace sp {

/// The folder of the sample files: <exe>/../share/shardplan/samples when that exists, else the source tree's.
std::string samplesDir();
/// The default calibration measurements: <exe>/../share/shardplan/calibration/measurements.yaml when that
/// exists, else the source tree's tests/data/calibration/measurements.yaml.
std::string calibrationFile();

} // namespace sp
