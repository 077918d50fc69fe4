#pragma once
// Internal to the file formats, shared by their sources: formats.cpp (file kinds, headers, validation,
// atomic writes), inputfiles.cpp (the parse and load entry points) with modelfiles.cpp, clusterfiles.cpp,
// workloadfiles.cpp and constraintfiles.cpp (each kind's reader and writer), planfiles.cpp (plans and
// disaggregated plans) and scenariofiles.cpp (scenarios and their parts). Not part of the library's
// interface.

#include "core/io/formats.h"
#include "core/io/reader.h"

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <exception>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sp::formats {

using io::MapReader;

inline constexpr int64_t kMaxDim =
    10'000'000; // generous upper bound on any size; keeps arithmetic far from overflow
inline constexpr int64_t kMaxLayers = 10'000;
inline constexpr int64_t kMaxTokens = 100'000'000;

std::vector<std::string_view> dtypeOptions();
std::vector<std::string_view> kindOptions();
/// Checks the optional `version:` (1) and `kind:` (the expected one) keys.
void checkHeader(const MapReader& r, FileKind expected);
/// The kind a document declares (kind:) or, without one, looks like from its keys; nullopt when it cannot
/// tell.
std::optional<FileKind> kindOfDocument(const YAML::Node& n);
std::string emitted(const YAML::Emitter& e);
/// A number written in the fewest digits that read back to it ("4.8", where yaml-cpp's 17 significant digits
/// write "4.7999999999999998").
struct Num {
    double v;
};
YAML::Emitter& operator<<(YAML::Emitter& e, Num n);

// modelfiles.cpp, clusterfiles.cpp, workloadfiles.cpp, constraintfiles.cpp
Model readAnyModel(const MapReader& r); ///< a model file or a Hugging Face config.json
Cluster readCluster(const MapReader& r);
Workload readWorkload(const MapReader& r);
Constraints readConstraints(const MapReader& r);
void emitModel(YAML::Emitter& e, const Model& m);
void emitCluster(YAML::Emitter& e, const Cluster& c);
void emitWorkload(YAML::Emitter& e, const Workload& w);
void emitConstraints(YAML::Emitter& e, const Constraints& c);
/// A model read from the cache is named by its Hub id, not by its snapshot folder.
void nameFromHubId(Model& m, const std::string& id, const std::string& path);
/// The config.json of a Hub id in the local Hugging Face cache, or an error at `at` saying where it looked.
std::string resolveHubId(const std::string& id, const std::string& file, const YAML::Node& at,
                         const std::string& field);

// scenariofiles.cpp: a part as a scenario names it, under `key` of r: a path relative to r's file or the
// object inline (a model also by Hub id or checkpoint folder). Fleet files (fleetfiles.cpp) read theirs so.
Model readModelPart(const MapReader& r, std::string_view key);
Workload readWorkloadPart(const MapReader& r, std::string_view key);
Constraints readConstraintsPart(const MapReader& r, std::string_view key);

template <class T, class Fn> Result<T> parseWith(const std::string& text, const std::string& file, Fn read) {
    try {
        return read(MapReader(file, io::parseDocument(text, file), ""));
    } catch (const InputError& e) {
        return e.error();
    } catch (const YAML::Exception& e) {
        return Error{file, e.mark.line + 1, e.mark.column + 1, {}, e.msg};
    } catch (const std::exception& e) {
        return Error{file, 0, 0, {}, e.what()};
    }
}

template <class T, class Fn> Result<T> loadWith(const std::string& path, Fn read) {
    std::string text;
    try {
        text = io::readFile(path);
    } catch (const InputError& e) {
        return e.error();
    }
    return parseWith<T>(text, path, read);
}

} // namespace sp::formats
