// Scenario files: a model, a cluster, a workload and constraints, each inline or a file named relative to
// the scenario (a model also by Hub id or by a checkpoint folder).

#include "core/io/formatsimpl.h"
#include "core/io/hfconfig.h"

#include <filesystem>
#include <system_error>
#include <type_traits>

namespace sp {

using namespace formats;

namespace {

std::string baseDir(const std::string& file) {
    const auto parent = std::filesystem::path(file).parent_path();
    return parent.empty() ? std::string(".") : parent.string();
}

template <class T> constexpr FileKind kindFor() {
    if constexpr (std::is_same_v<T, Model>)
        return FileKind::Model;
    else if constexpr (std::is_same_v<T, Cluster>)
        return FileKind::Cluster;
    else if constexpr (std::is_same_v<T, Workload>)
        return FileKind::Workload;
    else
        return FileKind::Constraints;
}

// A scenario part: a path relative to the scenario file, or the object inline. A referenced file that is not
// of the expected kind is reported by name and kind only: its text is never quoted, since a relative path
// may reach any file.
template <class T, class Fn> T readPart(const MapReader& r, std::string_view key, Fn read) {
    const YAML::Node n = r.node(key);
    if (n.IsScalar()) {
        constexpr FileKind expected = kindFor<T>();
        const std::string rel = n.Scalar();
        if constexpr (std::is_same_v<T, Model>) {
            std::error_code ec;
            const auto local = std::filesystem::path(baseDir(r.file())) / rel;
            if (!std::filesystem::exists(local, ec) && io::looksLikeHubId(rel)) {
                const std::string path = resolveHubId(rel, r.file(), n, r.field(key));
                Model m = read(MapReader(path, io::parseDocument(io::readFile(path), path), ""));
                nameFromHubId(m, rel, path);
                return m;
            }
            if (std::filesystem::is_directory(local, ec)) {
                const std::string path = (local / "config.json").lexically_normal().string();
                return read(MapReader(path, io::parseDocument(io::readFile(path), path), ""));
            }
        }
        const std::filesystem::path p = std::filesystem::path(rel).is_absolute()
                                            ? std::filesystem::path(rel)
                                            : std::filesystem::path(baseDir(r.file())) / rel;
        std::error_code ec;
        if (!std::filesystem::is_regular_file(p, ec))
            io::fail(r.file(), n, r.field(key), "no such file '" + p.lexically_normal().string() + "'");
        const std::string path = p.lexically_normal().string();
        const std::string text = io::readFile(path);
        const std::string notOfKind = "'" + path + "' is not a " + std::string(nameOf(expected)) + " file";
        YAML::Node doc;
        try {
            doc = io::parseDocument(text, path);
        } catch (const InputError& e) {
            // A file named as YAML or JSON with a syntax error gets that error, where it is (the parser's
            // messages name no content); anything else, e.g. a file that is plain text, is not quoted at all.
            const std::string ext = p.extension().string();
            const bool named = ext == ".yaml" || ext == ".yml" || ext == ".json";
            const std::string msg = e.error().message;
            if (named && msg.find("expected a mapping") == std::string::npos && e.error().line > 0)
                io::fail(r.file(), n, r.field(key),
                         notOfKind + ": " + path + ":" + std::to_string(e.error().line) + ":" +
                             std::to_string(e.error().column) + ": " + msg);
            io::fail(r.file(), n, r.field(key), notOfKind + " (it is not a YAML or JSON mapping)");
        }
        const auto kind = kindOfDocument(doc);
        if (kind && *kind != expected)
            io::fail(r.file(), n, r.field(key),
                     notOfKind + " (it is a " + std::string(nameOf(*kind)) + " file)");
        if (!kind)
            io::fail(r.file(), n, r.field(key),
                     notOfKind + " (it has no 'kind: " + std::string(nameOf(expected)) +
                         "' and does not look like one)");
        return read(MapReader(path, doc, ""));
    }
    return read(MapReader(r.file(), n, r.field(key)));
}

Scenario readScenario(const MapReader& r) {
    checkHeader(r, FileKind::Scenario);
    r.allowKeys({"version", "kind", "name", "model", "cluster", "decode_cluster", "workload", "constraints"});
    Scenario s;
    s.name = r.stringOr("name", "");
    s.model = readPart<Model>(r, "model", readAnyModel);
    s.cluster = readPart<Cluster>(r, "cluster", readCluster);
    if (r.has("decode_cluster")) {
        s.decodeCluster = readPart<Cluster>(r, "decode_cluster", readCluster);
        if (s.decodeCluster->gpu.tflops[int(s.model.activations)] <= 0)
            r.failAt("decode_cluster", "the GPU has no TFLOP/s figure for the model's activation dtype '" +
                                           std::string(nameOf(s.model.activations)) + "'");
    }
    s.workload = readPart<Workload>(r, "workload", readWorkload);
    if (r.has("constraints")) s.constraints = readPart<Constraints>(r, "constraints", readConstraints);
    if (s.cluster.gpu.tflops[int(s.model.activations)] <= 0)
        r.failAt("cluster", "the GPU has no TFLOP/s figure for the model's activation dtype '" +
                                std::string(nameOf(s.model.activations)) + "'");
    if (s.constraints.specPolicy == Constraints::SpecPolicy::Pinned)
        if (auto why = checkSpeculative(s, s.constraints.specPin)) r.failAt("constraints", *why);
    if (s.constraints.gpus > s.cluster.gpus())
        r.failAt("constraints", "gpus (" + std::to_string(s.constraints.gpus) + ") exceeds the cluster's " +
                                    std::to_string(s.cluster.gpus()));
    return s;
}

} // namespace

namespace formats {
Model readModelPart(const MapReader& r, std::string_view key) {
    return readPart<Model>(r, key, readAnyModel);
}
Workload readWorkloadPart(const MapReader& r, std::string_view key) {
    return readPart<Workload>(r, key, readWorkload);
}
Constraints readConstraintsPart(const MapReader& r, std::string_view key) {
    return readPart<Constraints>(r, key, readConstraints);
}
} // namespace formats

Result<Scenario> parseScenario(const std::string& t, const std::string& f) {
    return parseWith<Scenario>(t, f, readScenario);
}
Result<Scenario> loadScenario(const std::string& p) {
    return loadWith<Scenario>(p, readScenario);
}

std::string toYaml(const Scenario& s) {
    YAML::Emitter e;
    e << YAML::BeginMap;
    e << YAML::Key << "version" << YAML::Value << 1 << YAML::Key << "kind" << YAML::Value << "scenario";
    e << YAML::Key << "name" << YAML::Value << s.name;
    e << YAML::Key << "model" << YAML::Value;
    emitModel(e, s.model);
    e << YAML::Key << "cluster" << YAML::Value;
    emitCluster(e, s.cluster);
    if (s.decodeCluster) {
        e << YAML::Key << "decode_cluster" << YAML::Value;
        emitCluster(e, *s.decodeCluster);
    }
    e << YAML::Key << "workload" << YAML::Value;
    emitWorkload(e, s.workload);
    e << YAML::Key << "constraints" << YAML::Value;
    emitConstraints(e, s.constraints);
    e << YAML::EndMap;
    return emitted(e);
}

} // namespace sp
