// Export folders: the files of a launch, and writing them into a folder that holds nothing else, or a
// previous export, which the manifest lists and the new export replaces.
#include "core/export/common.h"

#include "core/common/text.h"
#include "core/io/formats.h"
#include "core/io/reader.h"

#include <algorithm>
#include <filesystem>
#include <stdexcept>

#include <unistd.h>

namespace sp {

using namespace exporting;

std::vector<ExportFile> launchFiles(const LaunchCommand& launch, const std::string& planYaml,
                                    const std::string& prefix) {
    std::vector<ExportFile> files;
    const auto scripts = launch.scripts();
    for (const auto& [name, text] : scripts) files.push_back({prefix + name, text, true});
    for (const auto& [name, text] : launch.files) files.push_back({prefix + name, text, false});
    for (const auto& [name, text] : launch.deployFiles) files.push_back({prefix + name, text, false});
    files.push_back({prefix + "plan.yaml", planYaml, false});
    const size_t n = scripts.size();
    files.push_back(
        {prefix + "NOTES.txt",
         std::string(nameOf(launch.engine)) + " " + launch.version + ": " + str(int64_t(n)) + " node script" +
             (n == 1 ? "" : "s") + " (run nodeK.sh on node K), plan.yaml the plan they serve" +
             (launch.adapted ? " (the nearest layout the engine runs, see below)" : "") +
             ".\n\nWhat the engine's flags do not express, and what to set by hand:\n\n" + launch.notesText(),
         false});
    return files;
}

namespace {

namespace fs = std::filesystem;

/// A name an export may own: relative, at most one folder down, no "." or ".." parts, no control characters.
bool ownableName(const std::string& name) {
    if (name.empty() || name.front() == '/' || firstControlChar(name)) return false;
    const fs::path p(name);
    int parts = 0;
    for (const auto& part : p) {
        if (part == "." || part == ".." || part.empty()) return false;
        ++parts;
    }
    return parts >= 1 && parts <= 2;
}

/// What the previous export in `dir` wrote (its manifest's names), or an error when `dir` holds something
/// and is no previous export. Empty for a missing or empty folder.
Result<std::vector<std::string>> previousExport(const std::string& dir) {
    std::error_code ec;
    const fs::file_status st = fs::symlink_status(dir, ec);
    if (ec || !fs::exists(st)) return std::vector<std::string>{};
    // A link to nowhere, said plainly (create_directories would say only "File exists").
    if (fs::is_symlink(st) && !fs::exists(fs::status(dir, ec)))
        return Error{dir, 0, 0, "",
                     "a link to '" + printable(fs::read_symlink(dir, ec).string()) +
                         "', which does not exist: remove the link, or give a new or empty folder"};
    if (!fs::is_directory(fs::status(dir, ec)))
        return Error{dir, 0, 0, "", "not a folder: give a new or empty folder, or a previous export's"};
    const fs::path manifest = fs::path(dir) / kExportManifest;
    if (fs::is_regular_file(manifest, ec)) {
        std::string t;
        try {
            t = io::readFile(manifest.string());
        } catch (const InputError& e) {
            return e.error();
        }
        std::vector<std::string> owned;
        size_t at = 0;
        while (at < t.size()) {
            const size_t nl = std::min(t.find('\n', at), t.size());
            std::string line = t.substr(at, nl - at);
            at = nl + 1;
            if (line.empty() || line[0] == '#') continue;
            if (!ownableName(line))
                return Error{manifest.string(), 0, 0, "",
                             "lists '" + printable(line) +
                                 "', which is not a file an export writes; remove "
                                 "the folder's export by hand or export elsewhere"};
            owned.push_back(line);
        }
        return owned;
    }
    std::vector<std::string> owned;
    bool any = false;
    for (const auto& e : fs::directory_iterator(dir, ec)) {
        any = true;
        const std::string name = e.path().filename().string();
        const bool script =
            name.size() > 7 && name.starts_with("node") && name.ends_with(".sh") &&
            std::all_of(name.begin() + 4, name.end() - 3, [](char c) { return c >= '0' && c <= '9'; });
        if (script || name == "NOTES.txt" || name == "plan.yaml") owned.push_back(name);
    }
    if (ec) return Error{dir, 0, 0, "", "cannot list the folder: " + ec.message()};
    if (!any) return owned;
    // An export written before the manifest: its NOTES.txt and plan.yaml, with its node scripts.
    const bool earlier = fs::is_regular_file(fs::path(dir) / "NOTES.txt", ec) &&
                         fs::is_regular_file(fs::path(dir) / "plan.yaml", ec);
    if (!earlier)
        return Error{dir, 0, 0, "",
                     "the folder is not empty and holds no previous export (no " +
                         std::string(kExportManifest) +
                         "): export into a new or empty folder, so that nothing of yours is overwritten"};
    return owned;
}

} // namespace

namespace {

/// Writes `files` under `root`, each atomically, executable where marked; their paths under `shownRoot` (the
/// folder the user named, where a staging folder is renamed to it afterwards).
Result<std::vector<std::string>> writeFilesUnder(const fs::path& root, const fs::path& shownRoot,
                                                 const std::vector<ExportFile>& files) {
    std::error_code ec;
    std::vector<std::string> written;
    for (const ExportFile& f : files) {
        const fs::path path = root / f.name;
        if (path.has_parent_path()) {
            fs::create_directories(path.parent_path(), ec);
            if (ec)
                return Error{path.parent_path().string(), 0, 0, "",
                             "cannot create the directory: " + ec.message()};
        }
        if (auto w = writeFileAtomic(path.string(), f.content); !w) return w.error();
        if (f.executable) {
            fs::permissions(path, fs::perms::owner_exec | fs::perms::group_exec | fs::perms::others_exec,
                            fs::perm_options::add, ec);
            if (ec)
                return Error{path.string(), 0, 0, "", "cannot make the script executable: " + ec.message()};
        }
        written.push_back((shownRoot / f.name).string());
    }
    return written;
}

std::string manifestText(const std::vector<ExportFile>& files) {
    std::string manifest =
        "# written by shardplan export: the files of this export, removed by the next one here\n";
    for (const ExportFile& f : files) manifest += f.name + "\n";
    return manifest;
}

} // namespace

Result<std::vector<std::string>> writeExportFiles(const std::string& dir,
                                                  const std::vector<ExportFile>& files) {
    for (const ExportFile& f : files)
        if (!ownableName(f.name)) throw std::logic_error("not a name an export writes: " + printable(f.name));
    // One script a node: a cluster of 100,000 nodes once wrote 45,000 files a minute until killed.
    const auto scripts = std::count_if(files.begin(), files.end(), [](const ExportFile& f) {
        const std::string name = fs::path(f.name).filename().string();
        return name.starts_with("node") && name.ends_with(".sh");
    });
    if (scripts > kMaxNodeScripts)
        return Error{dir, 0, 0, "",
                     "the launch has " + std::to_string(scripts) + " node scripts; a folder holds at most " +
                         std::to_string(kMaxNodeScripts) +
                         ": export without --out-dir for the commands as text, or plan fewer, larger nodes"};
    auto previous = previousExport(dir);
    if (!previous) return previous.error();
    std::error_code ec;
    // The folder itself: "out/" names "out" (its parent is the staging folder's place), and a link to a
    // folder names the folder it links to (rename(2) would not replace the link with a folder).
    fs::path target(dir);
    while (!target.has_filename() && target.has_parent_path() && target != target.root_path())
        target = target.parent_path();
    if (fs::is_symlink(fs::symlink_status(target, ec)) && fs::is_directory(target, ec))
        target = fs::canonical(target, ec);
    // A new or empty folder: everything is written into a hidden staging folder beside it, then renamed to it
    // at once, so an export interrupted or killed part way leaves no half-written folder under the name
    // given.
    const bool fresh = !fs::exists(target, ec) || (fs::is_directory(target, ec) && fs::is_empty(target, ec));
    if (fresh) {
        const fs::path parent = target.has_parent_path() ? target.parent_path() : fs::path(".");
        fs::create_directories(parent, ec);
        if (ec) return Error{parent.string(), 0, 0, "", "cannot create the directory: " + ec.message()};
        const fs::path staging =
            parent / ("." + target.filename().string() + ".partial-" + std::to_string(::getpid()));
        fs::remove_all(staging, ec);
        fs::create_directory(staging, ec);
        if (ec) return Error{staging.string(), 0, 0, "", "cannot create the directory: " + ec.message()};
        auto written = writeFilesUnder(staging, target, files);
        if (written) {
            if (auto w = writeFileAtomic((staging / kExportManifest).string(), manifestText(files)); !w)
                written = w.error();
        }
        if (written) {
            // rename(2) replaces an empty folder; a folder made meanwhile with something in it is refused.
            fs::rename(staging, target, ec);
            if (ec) written = Error{dir, 0, 0, "", "cannot move the export into place: " + ec.message()};
        }
        if (!written) fs::remove_all(staging, ec);
        return written;
    }
    auto written = writeFilesUnder(target, target, files);
    if (!written) return written;
    std::vector<std::string> names;
    for (const ExportFile& f : files) names.push_back(f.name);
    // What the previous export wrote and this one did not: removed (plain files and links only), then the
    // folders it leaves empty.
    std::vector<fs::path> folders;
    for (const std::string& name : previous.value()) {
        if (std::find(names.begin(), names.end(), name) != names.end()) continue;
        const fs::path path = target / name;
        const fs::file_status st = fs::symlink_status(path, ec);
        if (fs::is_regular_file(st) || fs::is_symlink(st)) fs::remove(path, ec);
        if (ec)
            return Error{path.string(), 0, 0, "",
                         "cannot remove the previous export's file: " + ec.message()};
        if (fs::path(name).has_parent_path()) folders.push_back(path.parent_path());
    }
    for (const fs::path& f : folders)
        if (fs::is_directory(f, ec) && fs::is_empty(f, ec)) fs::remove(f, ec);
    if (auto w = writeFileAtomic((target / kExportManifest).string(), manifestText(files)); !w)
        return w.error();
    return written;
}

Result<std::vector<std::string>> writeLaunchDirectory(const std::string& dir, const LaunchCommand& launch,
                                                      const std::string& planYaml) {
    return writeExportFiles(dir, launchFiles(launch, planYaml));
}

} // namespace sp
