#pragma once
// Internal: typed, position-aware reading of YAML (and JSON, which the YAML parser also reads) documents.
// Every failure throws InputError naming file, line, column and the dotted field path.

#include "core/common/error.h"

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

namespace sp::io {

/// Parses text (YAML, or JSON when the file name ends in .json) into a node; syntax errors become InputError.
YAML::Node parseDocument(const std::string& text, const std::string& file);
/// The same, JSON or YAML as told whatever the file is called (a JSON file named by the user, e.g. bench's
/// best-known file): the depth limit, the one-document rule and duplicate keys are checked either way.
YAML::Node parseDocument(const std::string& text, const std::string& file, bool json);
/// The largest input file read: the largest sample is tens of KiB, a Hugging Face config.json a few KiB.
inline constexpr int64_t kMaxFileBytes = int64_t(64) << 20;
/// Reads a whole regular file of at most kMaxFileBytes; a missing, unreadable, non-regular (device, FIFO,
/// folder) or larger file is an InputError.
std::string readFile(const std::string& path);

[[noreturn]] void fail(const std::string& file, const YAML::Node& at, const std::string& field,
                       const std::string& msg);
std::string didYouMean(std::string_view word, const std::vector<std::string_view>& options);

/// A mapping node being read: checks its keys, reads typed fields with bounds.
class MapReader {
public:
    MapReader(std::string file, YAML::Node node, std::string path);

    /// Rejects keys outside the list, suggesting the closest allowed one.
    void allowKeys(std::initializer_list<std::string_view> keys) const;
    bool has(std::string_view key) const;
    YAML::Node node(std::string_view key) const; ///< required
    MapReader map(std::string_view key) const;   ///< required mapping
    std::string field(std::string_view key) const {
        return m_path.empty() ? std::string(key) : m_path + "." + std::string(key);
    }
    const std::string& file() const { return m_file; }
    const YAML::Node& self() const { return m_node; }

    int64_t integer(std::string_view key, int64_t min, int64_t max) const;
    int64_t integerOr(std::string_view key, int64_t def, int64_t min, int64_t max) const;
    double number(std::string_view key, double min, double max) const;
    double numberOr(std::string_view key, double def, double min, double max) const;
    std::string string(std::string_view key) const;
    std::string stringOr(std::string_view key, std::string def) const;
    bool boolean(std::string_view key, bool def) const;
    /// A string that must be one of the options; returns its index.
    int oneOf(std::string_view key, const std::vector<std::string_view>& options) const;
    int oneOfOr(std::string_view key, const std::vector<std::string_view>& options, int def) const;
    std::vector<int64_t> integerList(std::string_view key, int64_t min, int64_t max) const;

    [[noreturn]] void failAt(std::string_view key, const std::string& msg) const;
    [[noreturn]] void failHere(const std::string& msg) const;

private:
    std::string m_file;
    YAML::Node m_node;
    std::string m_path;
};

// Value readers on a single node (used for list items and the like).
int64_t asInteger(const std::string& file, const YAML::Node& n, const std::string& field, int64_t min,
                  int64_t max);
double asNumber(const std::string& file, const YAML::Node& n, const std::string& field, double min,
                double max);
std::string asString(const std::string& file, const YAML::Node& n, const std::string& field);

} // namespace sp::io
