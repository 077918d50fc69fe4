#include "core/common/paths.h"

#include <filesystem>
#include <system_error>

#ifndef SHARDPLAN_SOURCE_DIR
#error "SHARDPLAN_SOURCE_DIR must name the source tree"
#endif

namespace sp {

namespace {

namespace fs = std::filesystem;

/// <exe>/../share/shardplan, or an empty path when the executable's path cannot be read (no /proc).
fs::path installedDataDir() {
    std::error_code ec;
    const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
    if (ec || exe.empty()) return {};
    return exe.parent_path().parent_path() / "share" / "shardplan";
}

std::string firstExisting(const fs::path& installed, const fs::path& source) {
    std::error_code ec;
    if (!installed.empty() && fs::exists(installed, ec)) return installed.string();
    return source.string();
}

} // namespace

std::string samplesDir() {
    const fs::path share = installedDataDir();
    return firstExisting(share.empty() ? share : share / "samples",
                         fs::path(SHARDPLAN_SOURCE_DIR) / "samples");
}

std::string calibrationFile() {
    const fs::path share = installedDataDir();
    return firstExisting(share.empty() ? share : share / "calibration" / "measurements.yaml",
                         fs::path(SHARDPLAN_SOURCE_DIR) / "tests" / "data" / "calibration" /
                             "measurements.yaml");
}

} // namespace sp
