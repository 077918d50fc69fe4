#pragma once
// Checks the cost model against public measurements (tests/data/calibration/measurements.yaml): each entry
// becomes a scenario and a plan, and the model's prediction of the measured metric is compared with the
// measured value.

#include "core/common/error.h"

#include <string>
#include <vector>

namespace sp {

struct CalibrationRow {
    std::string id;
    std::string metric;
    double measured = 0;
    double predicted = 0;
    double error = 0;      ///< predicted / measured - 1
    bool feasible = false; ///< whether the model thinks the configuration fits (memory, SLOs)
};

struct CalibrationReport {
    std::vector<CalibrationRow> rows;
    std::vector<std::string> skipped; ///< "id: why"
    double medianAbsError = 0;
};

/// samplesDir holds models/ and clusters/; H800 comes from clusters/ beside the measurements file.
Result<CalibrationReport> runCalibration(const std::string& measurementsPath, const std::string& samplesDir);

} // namespace sp
