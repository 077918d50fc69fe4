// What the file formats share: file kinds and headers, telling a file's kind, atomic writes, and the
// per-file validation behind `shardplan validate`. The formats themselves: inputfiles.cpp (with one file per
// input kind: modelfiles.cpp, clusterfiles.cpp, workloadfiles.cpp, constraintfiles.cpp), planfiles.cpp,
// scenariofiles.cpp.

#include "core/io/formats.h"
#include "core/io/fleetfiles.h"
#include "core/io/formatsimpl.h"
#include "core/io/gpudb.h"
#include "core/io/hfconfig.h"

#include <charconv>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>

namespace sp {

using namespace formats;

namespace formats {

std::vector<std::string_view> dtypeOptions() {
    return {kDtypeNames.begin(), kDtypeNames.end()};
}
std::vector<std::string_view> kindOptions() {
    return {kFileKindNames.begin(), kFileKindNames.end()};
}

void checkHeader(const MapReader& r, FileKind expected) {
    if (r.has("version")) {
        const int64_t v = r.integer("version", 0, 1000000);
        if (v != 1) r.failAt("version", "unsupported version " + std::to_string(v) + ", expected 1");
    }
    if (r.has("kind")) {
        const int k = r.oneOf("kind", kindOptions());
        if (k != static_cast<int>(expected))
            r.failAt("kind", "expected a " + std::string(nameOf(expected)) + " file, found kind '" +
                                 std::string(kFileKindNames[k]) + "'");
    }
}

/// The kind a document declares (kind:) or, without one, looks like from its keys; nullopt when it cannot
/// tell.
std::optional<FileKind> kindOfDocument(const YAML::Node& n) {
    if (!n.IsMap()) return std::nullopt;
    if (const YAML::Node k = n["kind"]; k && k.IsScalar()) {
        const auto options = kindOptions();
        const auto it = std::find(options.begin(), options.end(), k.Scalar());
        if (it == options.end()) return std::nullopt;
        return FileKind(it - options.begin());
    }
    if (io::isHfConfig(n)) return FileKind::Model;
    if (n["inventory"] && n["models"]) return FileKind::Fleet;
    if (n["usd_per_gpu_hour"]) return FileKind::Prices;
    if (n["degrees"] && (n["operators"] || n["mesh_order"] || !n["gpus"])) return FileKind::Plan;
    if (n["layers"] || n["hidden"]) return FileKind::Model;
    if (n["disaggregated"]) return FileKind::Plan;
    if (n["nodes"] || n["gpu"]) return FileKind::Cluster;
    if (n["phase"]) return FileKind::Workload;
    if (n["model"] && n["cluster"]) return FileKind::Scenario;
    if (n["pinned"] || n["degrees"] || n["memory_headroom"] || n["memory_fraction"] || n["engine"])
        return FileKind::Constraints;
    return std::nullopt;
}

std::string emitted(const YAML::Emitter& e) {
    return std::string(e.c_str()) + "\n";
}

YAML::Emitter& operator<<(YAML::Emitter& e, Num n) {
    char buf[32];
    const auto r = std::to_chars(buf, buf + sizeof buf, n.v); // the shortest text that reads back exactly
    return e << std::string(buf, r.ptr);
}

} // namespace formats

const std::vector<std::string_view>& supportedHfArchitectures() {
    return io::hfArchitectures();
}

std::optional<FileKind> fileKindFromName(std::string_view s) {
    for (int i = 0; i < int(kFileKindNames.size()); ++i)
        if (kFileKindNames[i] == s) return FileKind(i);
    return std::nullopt;
}

Result<FileKind> detectKind(const std::string& path) {
    return loadWith<FileKind>(path, [](const MapReader& r) -> FileKind {
        if (r.has("kind")) return FileKind(r.oneOf("kind", kindOptions()));
        if (const auto k = kindOfDocument(r.self())) return *k;
        r.failHere(
            "cannot tell what kind of file this is: add 'kind:' (model, cluster, workload, constraints, "
            "scenario, plan, fleet or prices)");
    });
}

Result<std::string> readTextFile(const std::string& path) {
    try {
        return io::readFile(path);
    } catch (const InputError& e) {
        return e.error();
    }
}

Result<std::string> readJsonFile(const std::string& path) {
    try {
        std::string text = io::readFile(path);
        // Only for its checks (depth, syntax with line and column, one document, duplicate keys); the caller
        // parses the checked text with the JSON library it needs.
        (void)io::parseDocument(text, path, true);
        return text;
    } catch (const InputError& e) {
        return e.error();
    }
}

Result<bool> writeFileAtomic(const std::string& path, const std::string& content) {
    namespace fs = std::filesystem;
    const fs::path target(path);
    const fs::path folder = target.parent_path().empty() ? fs::path(".") : target.parent_path();
    // A unique temporary in the target's folder (so the rename stays on one file system), created by mkstemp
    // with O_EXCL: two writers never share one, and a symlink planted at a guessable name is never followed.
    std::string tmpl = (folder / ("." + target.filename().string() + ".XXXXXX")).string();
    const int fd = ::mkstemp(tmpl.data());
    if (fd < 0) {
        const int err = errno; // read before anything else can overwrite it
        return Error{path, 0, 0, {}, "cannot write the file: " + std::string(std::strerror(err))};
    }
    auto failWith = [&](const std::string& what, int err) -> Result<bool> {
        ::close(fd);
        ::unlink(tmpl.c_str());
        return Error{path, 0, 0, {}, what + ": " + std::string(std::strerror(err))};
    };
    // mkstemp makes the file 0600; a plan or launch script is for the user's other tools as well.
    const mode_t mask = ::umask(0);
    ::umask(mask);
    if (::fchmod(fd, 0666 & ~mask) != 0) return failWith("cannot write the file", errno);
    size_t done = 0;
    while (done < content.size()) {
        const ssize_t n = ::write(fd, content.data() + done, content.size() - done);
        if (n < 0) {
            if (errno == EINTR) continue;
            return failWith("writing failed", errno);
        }
        done += size_t(n);
    }
    if (::fsync(fd) != 0) return failWith("writing failed", errno);
    if (::close(fd) != 0) {
        const int err = errno;
        ::unlink(tmpl.c_str());
        return Error{path, 0, 0, {}, "writing failed: " + std::string(std::strerror(err))};
    }
    if (::rename(tmpl.c_str(), path.c_str()) != 0) {
        const int err = errno; // read before unlink can overwrite it
        ::unlink(tmpl.c_str());
        return Error{path, 0, 0, {}, "cannot replace the file: " + std::string(std::strerror(err))};
    }
    return true;
}

std::string formatCount(double n) {
    char buf[32];
    if (n >= 1e12)
        std::snprintf(buf, sizeof buf, "%.2fT", n / 1e12);
    else if (n >= 1e9)
        std::snprintf(buf, sizeof buf, "%.2fB", n / 1e9);
    else if (n >= 1e6)
        std::snprintf(buf, sizeof buf, "%.1fM", n / 1e6);
    else
        std::snprintf(buf, sizeof buf, "%.0f", n);
    return buf;
}

namespace {
std::string modelSummary(const Model& m, FileReport& rep) {
    const ParamCounts p = countParams(m);
    rep.paramsTotal = p.total;
    rep.paramsActive = p.active;
    std::string s =
        m.name + ": " + formatCount(p.total) + " parameters, " + formatCount(p.active) + " active";
    if (m.moe.present())
        s += ", " + std::to_string(m.moe.experts) + " experts top-" + std::to_string(m.moe.topK);
    if (m.mtpLayers > 0) s += ", MTP " + formatCount(p.mtp);
    return s;
}
} // namespace

FileReport validateFile(const std::string& path, std::optional<FileKind> kind) {
    FileReport rep;
    rep.file = path;
    std::error_code ec;
    if (!kind && !std::filesystem::exists(path, ec) && io::looksLikeHubId(path)) kind = FileKind::Model;
    if (!kind) {
        auto k = detectKind(path);
        if (!k) {
            rep.error = k.error();
            return rep;
        }
        kind = *k;
    }
    rep.kind = kind;
    auto finish = [&](const auto& res, auto summarize) {
        if (!res) {
            rep.error = res.error();
            return;
        }
        rep.ok = true;
        rep.summary = summarize(res.value());
    };
    static const char* phases[] = {"prefill", "decode", "serving"};
    switch (*kind) {
    case FileKind::Model:
        finish(loadModel(path), [&](const Model& m) { return modelSummary(m, rep); });
        break;
    case FileKind::Cluster:
        finish(loadCluster(path), [](const Cluster& c) {
            std::string hosts;
            if (c.gpusPerHost > 0)
                hosts = ", " + std::to_string(c.hosts()) + " hosts of " + std::to_string(c.gpusPerHost);
            return c.name + ": " + std::to_string(c.gpus()) + " GPUs (" + std::to_string(c.nodes) + "x" +
                   std::to_string(c.gpusPerNode) + " " + c.gpu.name + hosts + ")";
        });
        break;
    case FileKind::Workload:
        finish(loadWorkload(path), [](const Workload& w) {
            return w.name + ": " + phases[int(w.phase)] + ", " + std::to_string(w.inputTokens) + " in / " +
                   std::to_string(w.outputTokens) + " out";
        });
        break;
    case FileKind::Constraints:
        finish(loadConstraints(path), [](const Constraints& c) {
            int pins = 0;
            for (int i = 0; i < kBaseOpCount; ++i) pins += c.pinned[i] >= 0;
            char fraction[32];
            std::snprintf(fraction, sizeof fraction, " %.3g", c.memoryFraction);
            return std::to_string(pins) + " pinned operators, memory by " +
                   std::string(kMemoryRuleNames[int(c.memoryRule)]) + "'s rule" +
                   (c.memoryFraction > 0 ? std::string(" at") + fraction : std::string(" at its default")) +
                   ", layers per stage " + std::string(kStageSplitNames[int(c.stageSplit)]) +
                   ", operator choices " +
                   (c.granularity == Granularity::Type ? std::string("per type")
                    : c.granularity == Granularity::Stage
                        ? std::string("per stage")
                        : "per layer group (" + std::to_string(c.layerGroups) + " groups)") +
                   (c.searchPrefillBudget ? ", prefill budget searched" : "");
        });
        break;
    case FileKind::Scenario:
        finish(loadScenario(path), [&](const Scenario& s) {
            return s.name + ": " + modelSummary(s.model, rep) + "; " + std::to_string(s.gpus()) + " GPUs" +
                   (s.decodeCluster ? " (" + s.cluster.gpu.name + ") for prefill, " +
                                          std::to_string(s.decodeCluster->gpus()) + " (" +
                                          s.decodeCluster->gpu.name + ") for decode"
                                    : std::string()) +
                   "; " + phases[int(s.workload.phase)];
        });
        break;
    case FileKind::Plan:
        if (auto dis = isDisaggregatedPlan(path); dis && dis.value()) {
            finish(loadDisaggPlan(path), [](const DisaggPlan& p) {
                const auto pool = [](const char* name, const DisaggPool& q) {
                    const auto& d = q.plan.degrees;
                    return std::string(name) + " " + std::to_string(q.nodes) + " nodes (pp" +
                           std::to_string(d.pp) + " x dp" + std::to_string(d.dp) + " x tp" +
                           std::to_string(d.tp) + " = " + std::to_string(int64_t(d.pp) * d.dp * d.tp) +
                           " GPUs" +
                           (q.plan.stageLayers.empty() ? ""
                                                       : "; layers per stage " + stageLayersText(q.plan)) +
                           (q.plan.layerGroups.empty() ? "" : "; layer groups: " + layerGroupsText(q.plan)) +
                           ")";
                };
                return "disaggregated: " + pool("prefill", p.prefill) + ", " + pool("decode", p.decode);
            });
            break;
        }
        finish(loadPlan(path), [](const Plan& p) {
            const auto& d = p.degrees;
            return "pp" + std::to_string(d.pp) + " x dp" + std::to_string(d.dp) + " x tp" +
                   std::to_string(d.tp) + " (ep" + std::to_string(d.ep) + " etp" + std::to_string(d.etp) +
                   " edp" + std::to_string(d.edp) + ") = " + std::to_string(int64_t(d.pp) * d.dp * d.tp) +
                   " GPUs" + (p.stageLayers.empty() ? "" : ", layers per stage " + stageLayersText(p)) +
                   (p.layerGroups.empty() ? "" : ", layer groups: " + layerGroupsText(p));
        });
        break;
    case FileKind::Fleet:
        finish(loadFleet(path), [](const Fleet& f) {
            int64_t gpus = 0;
            for (const FleetGpuType& t : f.inventory) gpus += int64_t(t.nodes) * t.gpusPerNode;
            return (f.name.empty() ? std::string("fleet") : f.name) + ": " + std::to_string(f.models.size()) +
                   " models on " + std::to_string(f.inventory.size()) + " GPU types (" +
                   std::to_string(gpus) + " GPUs)" + (f.nMinus1 ? ", n-1 headroom" : "");
        });
        break;
    case FileKind::Prices: {
        Result<PriceList> list = [&]() -> Result<PriceList> {
            try {
                return loadPriceList(path);
            } catch (const InputError& e) {
                return e.error();
            }
        }();
        finish(list, [](const PriceList& l) {
            return std::to_string(l.prices.size()) + " GPUs priced (" + l.basis + ")";
        });
        break;
    }
    }
    return rep;
}

} // namespace sp
