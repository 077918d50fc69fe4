// Model, cluster, workload and constraints files: parsing, loading (a model may also be a Hub id in the local
// cache or a checkpoint folder) and writing. Each kind's reader and writer is in its own file
// (modelfiles.cpp, clusterfiles.cpp, workloadfiles.cpp, constraintfiles.cpp).

#include "core/io/formatsimpl.h"
#include "core/io/hfconfig.h"

#include <filesystem>
#include <system_error>

namespace sp {

using namespace formats;

Result<Model> parseModel(const std::string& t, const std::string& f) {
    return parseWith<Model>(t, f, readAnyModel);
}
Result<Cluster> parseCluster(const std::string& t, const std::string& f) {
    return parseWith<Cluster>(t, f, readCluster);
}
Result<Workload> parseWorkload(const std::string& t, const std::string& f) {
    return parseWith<Workload>(t, f, readWorkload);
}
Result<Constraints> parseConstraints(const std::string& t, const std::string& f) {
    return parseWith<Constraints>(t, f, readConstraints);
}

Result<Model> loadModel(const std::string& p) {
    std::error_code ec;
    if (!std::filesystem::exists(p, ec) && io::looksLikeHubId(p)) {
        std::string path;
        try {
            path = resolveHubId(p, p, YAML::Node(), "");
        } catch (const InputError& e) {
            return e.error();
        }
        auto m = loadWith<Model>(path, readAnyModel);
        if (m) nameFromHubId(m.value(), p, path);
        return m;
    }
    if (std::filesystem::is_directory(p, ec))
        return loadWith<Model>((std::filesystem::path(p) / "config.json").string(), readAnyModel);
    return loadWith<Model>(p, readAnyModel);
}
Result<Cluster> loadCluster(const std::string& p) {
    return loadWith<Cluster>(p, readCluster);
}
Result<Workload> loadWorkload(const std::string& p) {
    return loadWith<Workload>(p, readWorkload);
}
Result<Constraints> loadConstraints(const std::string& p) {
    return loadWith<Constraints>(p, readConstraints);
}

std::string toYaml(const Model& m) {
    YAML::Emitter e;
    emitModel(e, m);
    return emitted(e);
}
std::string toYaml(const Cluster& c) {
    YAML::Emitter e;
    emitCluster(e, c);
    return emitted(e);
}
std::string toYaml(const Workload& w) {
    YAML::Emitter e;
    emitWorkload(e, w);
    return emitted(e);
}
std::string toYaml(const Constraints& c) {
    YAML::Emitter e;
    emitConstraints(e, c);
    return emitted(e);
}

} // namespace sp
