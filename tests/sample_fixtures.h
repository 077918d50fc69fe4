#pragma once
// Scenarios assembled from the sample files, shared by the export suites.
#include "core/io/formats.h"

#include <QTest>

#include <string>

namespace sp::test {

inline const std::string kSampleDir = SHARDPLAN_SAMPLES_DIR;

/// The sample model, cluster and workload files named, as one scenario (gpus: the constraint's GPU count).
inline Scenario compose(const char* model, const char* cluster, const char* workload, int gpus = 0) {
    auto m = loadModel(kSampleDir + "/models/" + model);
    auto c = loadCluster(kSampleDir + "/clusters/" + cluster);
    auto w = loadWorkload(kSampleDir + "/workloads/" + workload);
    if (!m || !c || !w) qFatal("cannot load the sample files");
    Scenario s;
    s.name = model;
    s.model = m.value(), s.cluster = c.value(), s.workload = w.value();
    s.constraints.gpus = gpus;
    return s;
}

/// A sample scenario file by name (samples/scenarios/<file>); the test stops with the error otherwise.
inline Scenario sampleScenario(const std::string& file) {
    auto s = loadScenario(kSampleDir + "/scenarios/" + file);
    if (!s) qFatal("%s", s.error().str().c_str());
    return s.value();
}

} // namespace sp::test
