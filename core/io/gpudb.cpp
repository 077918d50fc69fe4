#include "core/io/gpudb.h"

#include "core/io/formatsimpl.h"
#include "core/io/modelfields.h"
#include "core/io/reader.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

namespace sp {

extern const char* const kGpuDatabaseYaml;

namespace {

struct Database {
    std::vector<GpuSpec> gpus;
    std::vector<GpuFamily> families;
    std::string basis; ///< of the prices in force
    PriceList builtin; ///< the file's own
};

/// A price list's fields (`basis`, `usd_per_gpu_hour`), each GPU id checked against the database.
PriceList readPrices(const io::MapReader& r, const Database& db) {
    r.allowKeys({"version", "kind", "basis", "usd_per_gpu_hour"});
    PriceList out;
    out.basis = r.string("basis");
    if (out.basis.find_first_not_of(" \t") == std::string::npos)
        r.failAt("basis", "say where the prices come from and when (it is named in every cost answer)");
    const io::MapReader m = r.map("usd_per_gpu_hour");
    std::vector<std::string_view> ids; // the database's, for the check and its message
    for (const auto& g : db.gpus) ids.push_back(g.id);
    for (const auto& kv : m.self()) {
        const std::string id = io::asString(r.file(), kv.first, m.field("<gpu id>"));
        if (std::find(ids.begin(), ids.end(), id) == ids.end()) {
            std::string known;
            for (std::string_view k : ids) known += (known.empty() ? "" : ", ") + std::string(k);
            io::fail(r.file(), kv.first, m.field(id),
                     "unknown GPU '" + id + "'" + io::didYouMean(id, ids) + "; the database's: " + known);
        }
        for (const auto& seen : out.prices)
            if (seen.gpu == id) io::fail(r.file(), kv.first, m.field(id), "'" + id + "' is priced twice");
        // A number, or {usd: N, note: "..."}: the note (how many listings, say) follows the basis in answers.
        if (kv.second.IsMap()) {
            const io::MapReader e(r.file(), kv.second, m.field(id));
            e.allowKeys({"usd", "note"});
            out.prices.push_back({id, e.number("usd", 0.001, 1e4), e.stringOr("note", "")});
        } else {
            out.prices.push_back({id, io::asNumber(r.file(), kv.second, m.field(id), 0.001, 1e4), ""});
        }
    }
    return out;
}

void applyPrices(Database& db, const PriceList& list) {
    db.basis = list.basis;
    for (GpuSpec& g : db.gpus) {
        g.pricePerHourUsd = 0, g.priceSource.clear();
        for (const auto& p : list.prices)
            if (p.gpu == g.id)
                g.pricePerHourUsd = p.usd, g.priceSource = list.basis + (p.note.empty() ? "" : "; " + p.note);
    }
}

Database parseDatabase() {
    const std::string file = "resources/gpus.yaml (built in)";
    Database db;
    std::vector<GpuSpec>& out = db.gpus;
    try {
        const io::MapReader root(file, io::parseDocument(kGpuDatabaseYaml, file), "");
        root.allowKeys({"families", "gpus", "prices"});
        const YAML::Node fams = root.node("families");
        for (size_t i = 0; i < fams.size(); ++i) {
            const io::MapReader f(file, fams[i], "families[" + std::to_string(i) + "]");
            f.allowKeys({"id", "name", "efficiency", "fitted"});
            GpuFamily fam;
            fam.id = f.string("id");
            fam.name = f.string("name");
            if (f.has("fitted")) {
                const io::MapReader fit = f.map("fitted");
                fit.allowKeys({"measurements", "median_error_pct", "loo_error_pct", "on"});
                fam.fitted = true;
                fam.measurements = int(fit.integer("measurements", 1, 100000));
                fam.medianError = fit.number("median_error_pct", 0, 1000);
                fam.looError = fit.number("loo_error_pct", 0, 1000);
                fam.fittedOn = fit.string("on");
                fam.efficiency = io::readEfficiency(f.map("efficiency"), Efficiency{});
            } else if (f.has("efficiency")) {
                f.failAt("efficiency", "factors without `fitted:` (what they were fitted on) are not used");
            }
            db.families.push_back(std::move(fam));
        }
        const YAML::Node list = root.node("gpus");
        for (size_t i = 0; i < list.size(); ++i) {
            const io::MapReader g(file, list[i], "gpus[" + std::to_string(i) + "]");
            g.allowKeys({"id", "name", "family", "tflops", "hbm_gb", "memory_mib", "hbm_tb_s", "scale_up",
                         "nic_gbit_s_per_gpu", "source", "tdp_w"});
            GpuSpec s;
            s.id = g.string("id");
            s.family = g.string("family");
            bool known = false;
            for (const auto& f : db.families) known = known || f.id == s.family;
            if (!known) g.failAt("family", "unknown family '" + s.family + "'");
            s.gpu.name = g.string("name");
            const io::MapReader t = g.map("tflops");
            for (int d = 0; d < kDtypeCount; ++d) s.gpu.tflops[d] = t.numberOr(kDtypeNames[d], 0.0, 0.0, 1e7);
            s.gpu.hbmGB = g.number("hbm_gb", 1, 1e6);
            s.gpu.memoryMiB = g.numberOr("memory_mib", 0.0, 1, 1e9);
            s.gpu.hbmTBs = g.number("hbm_tb_s", 0.01, 1e3);
            const io::MapReader u = g.map("scale_up");
            u.allowKeys({"name", "gb_s_per_gpu", "domain", "mesh_link_gb_s"});
            s.scaleUp.name = u.string("name");
            s.scaleUp.gbPerS = u.number("gb_s_per_gpu", 1, 1e6);
            s.scaleUp.latencyUs = 3.0;
            s.scaleUpDomain = int(u.integer("domain", 1, 100000));
            s.scaleUp.meshLinkGbPerS = u.numberOr("mesh_link_gb_s", 0.0, 1, 1e6);
            s.nicGbitPerGpu = g.number("nic_gbit_s_per_gpu", 1, 1e6);
            s.source = g.string("source");
            s.gpu.tdpW = g.numberOr("tdp_w", 0.0, 1, 1e5);
            out.push_back(std::move(s));
        }
        // Every GPU's price on one basis (a price is a claim about a market on a date: it says which).
        db.builtin = readPrices(root.map("prices"), db);
        applyPrices(db, db.builtin);
    } catch (const InputError& e) {
        std::fprintf(stderr, "broken GPU database: %s\n", e.what());
        std::abort();
    }
    return db;
}

Database& database() {
    static Database db = parseDatabase();
    return db;
}

} // namespace

PriceList loadPriceList(const std::string& path) {
    return parsePriceList(io::readFile(path), path);
}

PriceList parsePriceList(const std::string& text, const std::string& file) {
    const io::MapReader root(file, io::parseDocument(text, file), "");
    formats::checkHeader(root, FileKind::Prices);
    return readPrices(root, database());
}

void usePriceList(const PriceList& list) {
    applyPrices(database(), list);
}

const std::string& priceBasis() {
    return database().basis;
}

const PriceList& builtinPriceList() {
    return database().builtin;
}

const std::vector<GpuSpec>& gpuDatabase() {
    return database().gpus;
}

const std::vector<GpuFamily>& gpuFamilies() {
    return database().families;
}

const GpuFamily* findGpuFamily(std::string_view id) {
    for (const auto& f : gpuFamilies())
        if (f.id == id) return &f;
    return nullptr;
}

std::string familySource(const GpuFamily* family, const std::string& gpuName) {
    if (!family || !family->fitted)
        return "no measurements for " + (gpuName.empty() ? std::string("this GPU") : gpuName) +
               ": Hopper's factors (the defaults)";
    char buf[160];
    std::snprintf(buf, sizeof buf,
                  "%s's factors, fitted on %d measurements: median |error| %.1f%%, leave-one-out %.1f%%",
                  family->name.c_str(), family->measurements, family->medianError, family->looError);
    return buf;
}

const GpuSpec* findGpu(std::string_view id) {
    for (const auto& g : gpuDatabase())
        if (g.id == id) return &g;
    return nullptr;
}

const GpuSpec* findGpuByName(std::string_view name) {
    for (const auto& g : gpuDatabase())
        if (g.gpu.name == name) return &g;
    return nullptr;
}

Cluster clusterOf(const GpuSpec& g, int nodes) {
    Cluster c;
    c.name = std::to_string(nodes) + "x" + std::to_string(g.scaleUpDomain) + " " + g.gpu.name;
    c.nodes = nodes;
    c.gpusPerNode = g.scaleUpDomain;
    c.gpu = g.gpu;
    c.intraNode = g.scaleUp;
    if (nodes > 1) c.interNode = Link{"NIC", g.nicGbitPerGpu / 8.0, 6.0};
    const GpuFamily* family = findGpuFamily(g.family);
    if (family && family->fitted) c.efficiency = family->efficiency;
    c.efficiencySource = familySource(family, g.gpu.name);
    c.pricePerGpuHour = g.pricePerHourUsd;
    c.priceSource = g.priceSource;
    return c;
}

std::string knownGpuIds() {
    std::string s;
    for (const auto& g : gpuDatabase()) s += (s.empty() ? "" : ", ") + g.id;
    return s;
}

} // namespace sp
