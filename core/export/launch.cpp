// The exporters' entry point: engine names and version tables, the context, shell text and scripts, and
// the nearest runnable layout for a plan that an engine version cannot run.
#include "core/export/common.h"

#include "core/common/text.h"
#include "core/io/formats.h"
#include "core/io/reader.h"

#include <algorithm>
#include <array>
#include <filesystem>
#include <stdexcept>

#include <unistd.h>

namespace sp {

using namespace exporting;

namespace {

bool isSafeShellChar(char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
           std::string_view("@%+=:,./_-").find(c) != std::string_view::npos;
}

bool isNameChar(char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
}

/// An environment variable's name as the scripts write it. The names are the exporters' own constants
/// (NODE_RANK, SGLANG_PP_LAYER_PARTITION); one that is not a shell name is a defect, and stopping here keeps
/// it out of a script, where it would be shell syntax.
const std::string& shellName(const std::string& name) {
    if (name.empty() || (name[0] >= '0' && name[0] <= '9') ||
        !std::all_of(name.begin(), name.end(), isNameChar))
        throw std::logic_error("not a shell variable name: '" + printable(name) + "'");
    return name;
}

/// A here-document's end marker that no line of `content` equals (EOF, else EOF_1, EOF_2, ...): a file
/// whose text held a line "EOF" would otherwise end the here-document there and run the rest.
std::string hereDocEnd(const std::string& content) {
    const auto hasLine = [&content](const std::string& line) {
        for (size_t at = 0; at <= content.size();) {
            const size_t nl = std::min(content.find('\n', at), content.size());
            if (content.compare(at, nl - at, line) == 0 && nl - at == line.size()) return true;
            at = nl + 1;
        }
        return false;
    };
    std::string end = "EOF";
    for (int k = 1; hasLine(end); ++k) end = "EOF_" + std::to_string(k);
    return end;
}

} // namespace

bool amdGpu(const Gpu& gpu) {
    const std::string n = lower(gpu.name);
    if (n.find("instinct") != std::string::npos || n.find("amd") != std::string::npos) return true;
    for (size_t i = n.find("mi"); i != std::string::npos; i = n.find("mi", i + 1)) {
        const bool start = i == 0 || !(n[i - 1] >= 'a' && n[i - 1] <= 'z');
        const bool digits = i + 5 <= n.size() && std::all_of(n.begin() + long(i) + 2, n.begin() + long(i) + 5,
                                                             [](char ch) { return ch >= '0' && ch <= '9'; });
        if (start && digits) return true;
    }
    return false;
}

std::string shellQuote(const std::string& arg) {
    if (arg.empty()) return "''";
    if (std::all_of(arg.begin(), arg.end(), isSafeShellChar)) return arg;
    // Safe characters and ${NAME} placeholders only: double quotes, so the shell expands the placeholders.
    bool placeholders = false, plain = true;
    for (size_t i = 0; i < arg.size() && plain;) {
        if (isSafeShellChar(arg[i])) {
            ++i;
            continue;
        }
        size_t j = i + 2;
        if (arg.compare(i, 2, "${") == 0) {
            while (j < arg.size() && isNameChar(arg[j])) ++j;
            if (j < arg.size() && arg[j] == '}' && j > i + 2) {
                placeholders = true;
                i = j + 1;
                continue;
            }
        }
        plain = false;
    }
    if (plain && placeholders) return "\"" + arg + "\"";
    std::string out = "'";
    for (char ch : arg) out += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
    return out + "'";
}

namespace exporting {

std::string commandText(const std::vector<std::string>& argv) {
    std::string out;
    size_t i = 0;
    auto isOption = [&argv](size_t k) { return argv[k].rfind("--", 0) == 0; };
    // (appends rather than `"..." + std::string`, which GCC 12 misreports under -Wrestrict)
    for (; i < argv.size() && !isOption(i); ++i) out.append(i ? " " : "").append(shellQuote(argv[i]));
    while (i < argv.size()) {
        out.append(out.empty() ? "" : " \\\n    ").append(shellQuote(argv[i++]));
        for (; i < argv.size() && !isOption(i); ++i) out.append(" ").append(shellQuote(argv[i]));
    }
    return out + "\n";
}

std::string nodeScript(const std::string& header, const NodeLaunch& node) {
    std::string t = "#!/bin/sh\n" + commentLines(header) + "set -e\ncd \"$(dirname \"$0\")\"\n";
    for (const auto& [name, value] : node.env) {
        if (value.empty())
            t += ": \"${" + shellName(name) + ":?set " + shellName(name) + " (see NOTES.txt)}\"\n";
        else
            t += "export " + shellName(name) + "=" + shellQuote(value) + "\n";
    }
    if (!node.comment.empty())
        t += commentLines(node.comment);
    else if (node.commands.empty())
        t += "# nothing to start here: see NOTES.txt\n";
    for (size_t i = 0; i < node.commands.size(); ++i) {
        std::string cmd = commandText(node.commands[i]);
        cmd.pop_back();
        if (i < node.background)
            t += cmd + " &\n";
        else
            t += (i + 1 == node.commands.size() && node.background == 0 ? "exec " : "") + cmd + "\n";
    }
    if (node.background > 0) t += "wait\n";
    return t;
}

} // namespace exporting

std::string LaunchCommand::text() const {
    std::string out;
    // The files the commands read, as here-documents that write them.
    for (const auto& [name, content] : files) {
        const std::string end = hereDocEnd(content);
        out += "cat > " + shellQuote(name) + " <<'" + end + "'\n" + content +
               (content.empty() || content.back() == '\n' ? "" : "\n") + end + "\n\n";
    }
    // The environment every node sets alike (the layer partition), before the commands; per-node values
    // (NODE_RANK) and those the user sets (HEAD_NODE_IP) stay in the scripts and the notes.
    if (!nodes.empty())
        for (const auto& [name, value] : nodes[0].env) {
            if (value.empty()) continue;
            bool everywhere = true;
            for (const NodeLaunch& node : nodes)
                if (!node.commands.empty())
                    everywhere = everywhere && std::find(node.env.begin(), node.env.end(),
                                                         std::pair<std::string, std::string>(name, value)) !=
                                                   node.env.end();
            if (everywhere) out += "export " + shellName(name) + "=" + shellQuote(value) + "\n";
        }
    // Node 0's other commands (Ray's head, Dynamo's frontend) before the engine's.
    if (!nodes.empty())
        for (const auto& cmd : nodes[0].commands)
            if (cmd != argv) out += commandText(cmd) + "\n";
    out += commandText(argv);
    for (const auto& note : notes) out += commentLines(note);
    return out;
}

std::string LaunchCommand::notesText() const {
    std::string out;
    for (const auto& note : notes) out += note + "\n\n";
    return out;
}

std::vector<std::pair<std::string, std::string>> LaunchCommand::scripts() const {
    std::vector<std::pair<std::string, std::string>> out;
    for (size_t k = 0; k < nodes.size(); ++k)
        out.emplace_back("node" + str(int64_t(k)) + ".sh",
                         nodeScript(std::string(nameOf(engine)) + " " + version + ": node " +
                                        str(int64_t(k)) + " of " + str(int64_t(nodes.size())) +
                                        " (see NOTES.txt)",
                                    nodes[k]));
    return out;
}

std::string defaultModelPath(const Model& m) {
    if (!m.hubId.empty()) return m.hubId;
    std::string s = m.source;
    for (const char* prefix : {"https://", "http://"})
        if (s.rfind(prefix, 0) == 0) s = s.substr(std::string_view(prefix).size());
    if (s.rfind("www.", 0) == 0) s = s.substr(4);
    const std::string host = "huggingface.co/";
    if (s.rfind(host, 0) == 0) {
        s = s.substr(host.size());
        const size_t a = s.find('/');
        if (a != std::string::npos && a > 0) {
            const size_t b = s.find_first_of("/?#", a + 1);
            const std::string id = s.substr(0, b);
            // Only when the repository is the model's own (Llama-2-70B -> meta-llama/Llama-2-70b-hf), not
            // the config a synthetic model was derived from.
            if (id.size() > a + 1 && lower(id.substr(a + 1)).rfind(lower(m.name), 0) == 0) return id;
        }
    }
    return {};
}

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
    const fs::path target(dir);
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

std::string EngineVersion::specMethodName(SpecMethod method, const std::string& architecture) const {
    // Each engine's spelling is cited at its rows (vllm.cpp, sglang.cpp, trtllm.cpp).
    const int e = engine == ServingEngine::Vllm ? 0 : engine == ServingEngine::Sglang ? 1 : 2;
    switch (method) {
    case SpecMethod::Mtp:
        for (const auto& [arch, name] : mtpArchitectures)
            if (arch == architecture) return name;
        return {};
    case SpecMethod::Eagle3:
        return eagle3 ? std::array{"eagle3", "EAGLE3", "Eagle3"}[size_t(e)] : "";
    case SpecMethod::Draft:
        return draftModel ? std::array{"draft_model", "STANDALONE", "Draft_Target"}[size_t(e)] : "";
    case SpecMethod::Ngram:
        return ngram ? std::array{"ngram", "NGRAM", "NGram"}[size_t(e)] : "";
    default:
        return {};
    }
}

std::string_view nameOf(ServingEngine e) {
    switch (e) {
    case ServingEngine::Vllm:
        return "vllm";
    case ServingEngine::Sglang:
        return "sglang";
    case ServingEngine::Trtllm:
        return "trtllm";
    case ServingEngine::Dynamo:
        return "dynamo";
    }
    return "vllm";
}

std::optional<ServingEngine> servingEngineFromName(std::string_view s) {
    for (ServingEngine e : servingEngines())
        if (s == nameOf(e)) return e;
    return std::nullopt;
}

const std::vector<ServingEngine>& servingEngines() {
    static const std::vector<ServingEngine> all{ServingEngine::Vllm, ServingEngine::Sglang,
                                                ServingEngine::Trtllm, ServingEngine::Dynamo};
    return all;
}

const std::vector<EngineVersion>& engineVersions(ServingEngine e) {
    switch (e) {
    case ServingEngine::Sglang:
        return sglangVersions();
    case ServingEngine::Trtllm:
        return trtllmVersions();
    case ServingEngine::Dynamo:
        return dynamoVersions();
    default:
        return vllmVersions();
    }
}

std::string knownVersionsText(ServingEngine e) {
    std::vector<std::string> v;
    for (const auto& row : engineVersions(e)) v.push_back(row.version);
    return joined(v, ", ");
}

Result<EngineVersion> findEngineVersion(ServingEngine e, std::string_view version) {
    const auto& rows = engineVersions(e);
    if (version.empty()) return rows.back();
    for (const auto& row : rows)
        if (row.version == version) return row;
    return Error{"", 0, 0, "engine-version",
                 "unknown " + std::string(nameOf(e)) + " version '" + std::string(version) +
                     "' (known: " + knownVersionsText(e) + ")"};
}

namespace {

/// The longest context the command asks for: the workload's input + output, refused when the prompt alone
/// is longer than the model's max_position_embeddings, capped (with a note) when only the output is.
std::optional<std::string> setContext(Ctx& c) {
    const Workload& w = c.s.workload;
    const int64_t need = w.inputTokens + w.outputTokens, limit = c.m.maxPositionEmbeddings;
    c.contextLength = need;
    if (limit <= 0 || need <= limit) return std::nullopt;
    if (w.inputTokens >= limit)
        return "the workload's prompts (" + str(w.inputTokens) + " tokens) + outputs (" +
               str(w.outputTokens) + ") need a context of " + str(need) + " tokens, longer than " + c.m.name +
               "'s max_position_embeddings " + str(limit);
    c.contextLength = limit;
    c.contextNote = "Context: " + str(need) + " tokens (input + output) is longer than " + c.m.name +
                    "'s max_position_embeddings " + str(limit) + ", so the context length is capped at " +
                    str(limit) + ": outputs stop after " + str(limit - w.inputTokens) +
                    " tokens instead of " + str(w.outputTokens) + ".";
    return std::nullopt;
}

std::string tokensPerSecond(double x) {
    return str(int64_t(x + 0.5)) + " tokens/s";
}

/// No engine shards different layers differently: each takes one parallel layout and one kernel per operator
/// for every layer (vLLM's, SGLang's and TensorRT-LLM's model runners build each decoder layer alike from the
/// same config; Dynamo's workers are those engines). A plan with layer groups is refused, with the first
/// group's choices for every layer as the layout to adapt to. Checked here, before any engine's own checks,
/// so that every engine, Dynamo and the disaggregated pools refuse it in the same words.
Refusal layerGroupsRefusal(const Ctx& c, ServingEngine e) {
    const char* name = e == ServingEngine::Sglang   ? "SGLang"
                       : e == ServingEngine::Trtllm ? "TensorRT-LLM"
                       : e == ServingEngine::Dynamo ? "Dynamo"
                                                    : "vLLM";
    Refusal r;
    r.reason = std::string(name) + " shards every layer alike; the plan's layer groups choose " +
               layerGroupsText(c.p);
    Plan a = c.p;
    a.layerGroups.clear();
    r.candidates.push_back({"layer groups -> the first group's choices for every layer", a});
    return r;
}

/// The release that loads the model: the engine's, or for Dynamo its worker's newest.
const EngineVersion& loadingVersion(const EngineVersion& version, const ExportOptions& o) {
    return o.engine == ServingEngine::Dynamo ? engineVersions(o.dynamoWorker).back() : version;
}

/// Why `v` cannot load the model (its architecture is one shardplan imports, and not in the release's
/// registry as read, EngineVersion::architectures); nullopt when it can or when that is not known.
std::optional<std::string> architectureRefusal(const Model& m, const EngineVersion& v) {
    if (m.architecture.empty() || v.architectures.empty()) return std::nullopt;
    const auto& known = supportedHfArchitectures();
    const auto& has = v.architectures;
    if (std::find(known.begin(), known.end(), m.architecture) == known.end() ||
        std::find(has.begin(), has.end(), m.architecture) != has.end())
        return std::nullopt;
    std::vector<std::string> later;
    for (const EngineVersion& row : engineVersions(v.engine))
        if (std::find(row.architectures.begin(), row.architectures.end(), m.architecture) !=
            row.architectures.end())
            later.push_back(row.version);
    return std::string(nameOf(v.engine)) + " " + v.version + " cannot load " + m.name + ": " +
           m.architecture + " is not in its model registry (" + v.architecturesSource + ")" +
           (later.empty() ? std::string() : "; support came in " + joined(later, ", "));
}

/// A note when the model's architecture was not checked against the release's registry.
void architectureNote(const Model& m, const EngineVersion& v, LaunchCommand& lc) {
    if (m.architecture.empty()) return;
    const std::string who = std::string(nameOf(v.engine)) + " " + v.version;
    const auto& known = supportedHfArchitectures();
    if (v.architectures.empty())
        lc.notes.push_back("Model support: " + who + "'s model registry was not read, so whether it loads " +
                           m.architecture + " is not checked.");
    else if (std::find(known.begin(), known.end(), m.architecture) == known.end())
        lc.notes.push_back("Model support: " + m.architecture +
                           " is not among the architectures checked against " + who + "'s model registry (" +
                           v.architecturesSource + "); check that it loads it.");
}

/// Launches that need more hosts than the cluster has (servers that end mid-host start on a host of their
/// own): refused, with the plan at the nearest pipeline depths over the same GPUs (dp, and the expert
/// replicas, taking the rest), which the engine may pack; the cost model ranks them.
Refusal packingRefusal(const Ctx& c, int needed, int hosts) {
    Refusal r;
    r.reason = "its launches need " + str(needed) + " hosts of " + str(c.gpn) + " GPUs, the cluster has " +
               str(hosts);
    const Degrees& d = c.d;
    const int64_t total = int64_t(d.pp) * d.dp * d.tp;
    std::vector<int> depths;
    for (int pp = 1; pp <= std::min<int64_t>(c.m.layers, total); ++pp)
        if (pp != d.pp && total % pp == 0) depths.push_back(pp);
    // Nearest first (by ratio), at most four.
    std::stable_sort(depths.begin(), depths.end(), [&](int a, int b) {
        const auto far = [&](int x) { return std::max(double(x) / d.pp, double(d.pp) / x); };
        return far(a) < far(b);
    });
    for (int pp : depths) {
        const int64_t stage = total / pp;
        if (stage % d.tp != 0) continue;
        Plan a = c.p;
        a.degrees.pp = pp, a.degrees.dp = int(stage / d.tp);
        a.stageLayers.clear();
        std::string what =
            "pp " + str(d.pp) + " -> " + str(pp) + ", dp " + str(d.dp) + " -> " + str(a.degrees.dp);
        if (c.moe) {
            if (stage % (int64_t(d.ep) * d.etp) != 0) continue;
            a.degrees.edp = int(stage / (int64_t(d.ep) * d.etp));
            if (a.degrees.edp != d.edp) what += ", edp " + str(d.edp) + " -> " + str(a.degrees.edp);
        }
        if (c.cost.checkPlan(a)) continue;
        r.candidates.push_back({what, a});
        if (r.candidates.size() == 4) break;
    }
    return r;
}

/// What the scripts cannot know and the user must set, as notes: a gated repository's token, DeepEP's
/// network settings across nodes, the NICs NCCL and Gloo use.
void environmentNotes(const Ctx& c, LaunchCommand& lc) {
    // Gated repositories: meta-llama's on the Hugging Face Hub ask each user to accept the license; the
    // engines download through huggingface_hub, which reads HF_TOKEN (SGLang's docs/platforms/amd_gpu.md at
    // 7ae368efde14 passes --env HF_TOKEN; Dynamo's deploy examples at 416ff06e7feabb an hf-token-secret).
    if (c.model == c.m.hubId && c.model.rfind("meta-llama/", 0) == 0)
        lc.notes.push_back(
            "Access: " + c.model +
            " is a gated repository on the Hugging Face Hub: accept its license there and set "
            "HF_TOKEN (a token of that account) on every node before the download, or give --model "
            "a local copy.");
    bool spans = false, deepepAcross = false;
    for (const NodeLaunch& node : lc.nodes) {
        for (const auto& [name, value] : node.env)
            if (name == "NODE_RANK" || name == "HOSTFILE") spans = true;
        for (const auto& cmd : node.commands) {
            const auto has = [&cmd](const char* w) {
                return std::find(cmd.begin(), cmd.end(), w) != cmd.end();
            };
            if (has("ray") || has("--data-parallel-address") || has("--dist-init-addr") || has("mpirun"))
                spans = true;
            const auto a2a = flagValue(cmd, "--moe-a2a-backend");
            const auto nn = flagValue(cmd, "--nnodes");
            if ((has("--enable-deepep-moe") || (a2a && *a2a == "deepep")) && nn && *nn != "1")
                deepepAcross = true;
        }
    }
    // DeepEP's internode kernels: deep_ep/buffer.py (deepseek-ai/DeepEP at dcfd954851157) sets
    // NVSHMEM_IB_ENABLE_IBGDA=1 itself when its group spans nodes ("ranks with the same GPU index should be
    // visible via RDMA"); what it cannot know, SGLang's LWS example sets by hand
    // (docs/references/multi_node_deployment/lws_pd/lws_pd_deploy.md at 7ae368efde14).
    if (deepepAcross)
        lc.notes.push_back(
            "DeepEP across nodes: its all-to-all runs over NVSHMEM with IBGDA (GPU-initiated RDMA), "
            "which DeepEP turns on itself (NVSHMEM_IB_ENABLE_IBGDA=1) but which needs the NVIDIA "
            "driver set up for it (DeepEP's NVSHMEM install guide) and the same GPU index on every "
            "node reachable over RDMA. On RoCE set NVSHMEM_IB_GID_INDEX (SGLang's LWS example: 3); "
            "with one NIC per GPU, NVSHMEM_ENABLE_NIC_PE_MAPPING=1 or an explicit "
            "NVSHMEM_HCA_PE_MAPPING. These depend on the cluster's network and are not set here.");
    // NCCL and Gloo pick a network interface themselves; SGLang's docs/references/multi_node_deployment/
    // deploy_on_k8s.md ("Keys to success", at 7ae368efde14) names NCCL_SOCKET_IFNAME and GLOO_SOCKET_IFNAME;
    // Dynamo's sglang disagg-multinode.yaml (416ff06e7feabb) sets GLOO_SOCKET_IFNAME.
    if (spans)
        lc.notes.push_back(
            "Network interfaces: across nodes NCCL and Gloo choose an interface themselves; on "
            "hosts with several, set NCCL_SOCKET_IFNAME and GLOO_SOCKET_IFNAME on every node to the "
            "one that reaches the other nodes (its name is the host's, not known here).");
}

EngineResult run(const Ctx& c, const ExportOptions& o) {
    switch (o.engine) {
    case ServingEngine::Sglang:
        return sglangCommand(c);
    case ServingEngine::Trtllm:
        return trtllmCommand(c);
    case ServingEngine::Dynamo:
        return dynamoCommand(c, o.dynamoWorker);
    default:
        return vllmCommand(c);
    }
}

Result<LaunchCommand> exportPlan(const Scenario& scenario, const Plan& plan, const ExportOptions& o,
                                 const CostModel& cost, const EngineVersion& version, int depth) {
    Ctx c(scenario, plan, cost);
    c.version = version;
    c.moe = c.m.moe.present();
    c.gpus = scenario.gpus();
    c.gpn = std::max(1, scenario.cluster.hostGpus()); // launches are per host (an NVL72 tray: 4 GPUs)
    c.metrics = cost.evaluate(plan);
    c.model = o.modelPath.empty() ? defaultModelPath(c.m) : o.modelPath;
    if (c.model.empty())
        return Error{"", 0, 0, "model",
                     "the model '" + c.m.name +
                         "' has no Hugging Face id (hub_id) and no huggingface.co source: give the path or "
                         "repository id the engine should load with --model"};
    if (auto why = setContext(c)) return Error{"", 0, 0, "", "cannot export: " + *why};
    if (plan.batch > 0) {
        c.batch = plan.batch, c.batchSource = "fixed by the plan";
    } else if (scenario.workload.fixedBatch && scenario.workload.batch > 0) {
        c.batch = scenario.workload.batch, c.batchSource = "fixed by the workload";
    } else if (c.metrics.feasible && c.metrics.batch > 0) {
        c.batch = c.metrics.batch, c.batchSource = "the cost model's choice";
    }
    c.attnOp = c.moe && opApplies(c.m, Op::MoeAttention) ? Op::MoeAttention : Op::Attention;
    c.attnBatch = plan.choice(c.attnOp) == choice::AttnBatch;
    c.tpIsData = plan.degrees.tp > 1;
    for (Op op : {Op::Embedding, Op::Qkv, Op::Attention, Op::OutProj, Op::FfnUp, Op::FfnDown,
                  Op::SharedExperts, Op::LmHead, Op::MoeQkv, Op::MoeAttention, Op::MoeOutProj})
        if (opApplies(c.m, op) && splitsOverTp(op, plan.choice(op))) c.tpIsData = false;

    // TensorRT-LLM (and Dynamo's TensorRT-LLM worker) on AMD GPUs: it is built on the CUDA toolkit only
    // (NVIDIA/TensorRT-LLM docs/source/installation/linux.md at 004da3c27360: install the CUDA Toolkit; the
    // wheels and NGC images are CUDA 12.9/13.0 builds) and has no ROCm build. No layout helps.
    const ServingEngine loader = o.engine == ServingEngine::Dynamo ? o.dynamoWorker : o.engine;
    if (loader == ServingEngine::Trtllm && amdGpu(scenario.cluster.gpu))
        return Error{"", 0, 0, "",
                     "cannot export: " +
                         std::string(o.engine == ServingEngine::Dynamo ? "Dynamo's TensorRT-LLM worker"
                                                                       : "TensorRT-LLM") +
                         " runs on NVIDIA GPUs only (it is built on CUDA and has no ROCm build), and the "
                         "cluster's GPU is " +
                         scenario.cluster.gpu.name + ": export to vllm or sglang, which have ROCm builds"};
    // A model the release cannot load: no layout helps, so it is refused whatever `adapt` says.
    if (auto why = architectureRefusal(c.m, loadingVersion(version, o)))
        return Error{"", 0, 0, "", "cannot export: " + *why};
    EngineResult r = plan.layerGroups.empty() ? run(c, o) : layerGroupsRefusal(c, o.engine);
    // Launches that do not pack into the cluster's hosts (a disaggregated prefill pool's pp9 servers of 18
    // GPUs on 8-GPU hosts need 3 hosts each): the nearest pipeline depths, whose servers may pack.
    if (auto* lc = std::get_if<LaunchCommand>(&r); lc && int(lc->nodes.size()) > scenario.cluster.hosts())
        r = packingRefusal(c, int(lc->nodes.size()), scenario.cluster.hosts());
    if (auto* lc = std::get_if<LaunchCommand>(&r)) {
        lc->engine = o.engine;
        lc->version = version.version;
        lc->plan = plan;
        architectureNote(c.m, loadingVersion(version, o), *lc);
        environmentNotes(c, *lc);
        if (configNamesCustomCode(c.m))
            lc->notes.push_back(
                "Custom code: " + c.m.architecture +
                "'s config.json names code of its repository (auto_map), so the engine is given "
                "trust-remote-code, which runs that code: review it, or pin a revision.");
        return std::move(*lc);
    }
    const Refusal& refusal = std::get<Refusal>(r);
    const std::string engineName = std::string(nameOf(o.engine)) + " " + version.version;
    // Up to two steps away from the plan (e.g. tp down to the head count, then the expert replicas folded).
    if (!o.adapt || depth > 1 || refusal.candidates.empty())
        return Error{"", 0, 0, "", "cannot export to " + engineName + ": " + refusal.reason};
    // The nearest runnable layouts, best first by the cost model (feasible before infeasible); the first
    // that the engine runs is exported.
    struct Ranked {
        const std::pair<std::string, Plan>* cand;
        Metrics m;
    };
    std::vector<Ranked> ranked;
    for (const auto& cand : refusal.candidates)
        if (!cost.checkPlan(cand.second)) ranked.push_back({&cand, cost.evaluate(cand.second)});
    std::stable_sort(ranked.begin(), ranked.end(), [](const Ranked& x, const Ranked& y) {
        if (x.m.feasible != y.m.feasible) return x.m.feasible;
        return x.m.throughput > y.m.throughput;
    });
    const std::pair<std::string, Plan>* best = nullptr;
    Metrics bestMetrics;
    std::optional<Result<LaunchCommand>> adapted;
    for (const auto& r : ranked) {
        auto e = exportPlan(scenario, r.cand->second, o, cost, version, depth + 1);
        if (!e) continue;
        best = r.cand, bestMetrics = r.m, adapted.emplace(std::move(e));
        break;
    }
    if (!best)
        return Error{"", 0, 0, "",
                     "cannot export to " + engineName + ": " + refusal.reason +
                         ", and no nearby layout fits that it runs"};
    const Metrics& was = c.metrics;
    std::string costs = "the cost model gives " + tokensPerSecond(was.throughput) + " for the plan and " +
                        tokensPerSecond(bestMetrics.throughput) + " for this layout";
    if (was.throughput > 0) {
        const double pct = 100.0 * (bestMetrics.throughput - was.throughput) / was.throughput;
        costs += " (" + std::string(pct >= 0 ? "+" : "") + fraction(pct) + "%)";
    }
    if (was.feasible && !bestMetrics.feasible)
        costs += "; this layout is infeasible: " + bestMetrics.violation;
    LaunchCommand lc = std::move(*adapted).value();
    lc.notes.insert(lc.notes.begin(), "Layout changed: " + refusal.reason + ", so this exports " +
                                          best->first + " instead; " + costs + ".");
    lc.adapted = true;
    return lc;
}

} // namespace

Result<LaunchCommand> launchCommand(const Scenario& scenario, const Plan& plan,
                                    const ExportOptions& options) {
    try {
        auto version = findEngineVersion(options.engine, options.version);
        if (!version) return version.error();
        // The readers refuse such text; a scenario built in code or in the GUI may still hold it. The names
        // reach the engines inside JSON (vLLM's --speculative-config) and YAML, which must be UTF-8.
        const Model& m = scenario.model;
        for (const auto& [field, text] :
             {std::pair<const char*, const std::string*>{"model", &options.modelPath},
              {"model.hub_id", &m.hubId},
              {"model.name", &m.name},
              {"model.speculative.draft.hub_id", &m.spec.draft.hubId},
              {"model.speculative.eagle3.hub_id", &m.spec.eagle3.hubId},
              {"cluster.gpu.name", &scenario.cluster.gpu.name}})
            if (!isUtf8(*text))
                return Error{"", 0, 0, field,
                             "cannot export: the text '" + printable(*text) +
                                 "' is not UTF-8, which the engines' JSON and YAML arguments must be"};
        if (options.engine == ServingEngine::Dynamo && (options.dynamoWorker == ServingEngine::Dynamo))
            return Error{"", 0, 0, "", "Dynamo's workers run vllm, sglang or trtllm"};
        // The plan is evaluated under the memory rule of the engine that serves it, so that the batch caps
        // and the memory flag written are what the cost model assumed; a memory fraction the scenario gives
        // for another engine's rule does not carry over (that engine's default applies).
        const ServingEngine serving =
            options.engine == ServingEngine::Dynamo ? options.dynamoWorker : options.engine;
        const MemoryRule rule = serving == ServingEngine::Sglang   ? MemoryRule::Sglang
                                : serving == ServingEngine::Trtllm ? MemoryRule::Trtllm
                                                                   : MemoryRule::Vllm;
        Scenario forEngine = scenario;
        if (forEngine.constraints.memoryRule != rule)
            forEngine.constraints.memoryRule = rule, forEngine.constraints.memoryFraction = 0;
        const CostModel cost(forEngine);
        if (auto why = cost.checkPlan(plan))
            return Error{"", 0, 0, "", "plan does not fit the scenario: " + *why};
        return exportPlan(forEngine, plan, options, cost, version.value(), 0);
    } catch (const InputError& e) {
        return e.error();
    }
}

Result<LaunchCommand> launchCommand(const Scenario& scenario, const Plan& plan, ServingEngine engine,
                                    const std::string& modelPath) {
    ExportOptions o;
    o.engine = engine;
    o.modelPath = modelPath;
    return launchCommand(scenario, plan, o);
}

} // namespace sp
