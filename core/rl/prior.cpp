#include "core/rl/prior.h"

#include "core/common/error.h"
#include "core/model/model.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <mutex>

namespace sp {
extern const char* const kRlPriorJson; // resources/rl-prior.json, compiled in (core/CMakeLists.txt)
}

namespace sp::rl {

namespace {

using json = nlohmann::json;

[[noreturn]] void fail(const std::string& file, const std::string& field, const std::string& message) {
    Error e;
    e.file = file;
    e.field = field;
    e.message = message;
    throw InputError(e);
}

VecD readVec(const json& j, const std::string& file, const std::string& field) {
    if (!j.is_array() || j.size() != size_t(kDim))
        fail(file, field, "expected a list of " + std::to_string(kDim) + " numbers");
    VecD v;
    for (int i = 0; i < kDim; ++i) {
        if (!j[size_t(i)].is_number()) fail(file, field, "expected numbers");
        v(i) = j[size_t(i)].get<double>();
    }
    return v;
}

template <class M> void readMatrix(const json& j, M& m, const std::string& file, const std::string& field) {
    if (!j.is_array() || j.size() != size_t(m.size()))
        fail(file, field, "expected " + std::to_string(m.size()) + " numbers (row by row)");
    for (Eigen::Index r = 0; r < m.rows(); ++r)
        for (Eigen::Index c = 0; c < m.cols(); ++c) {
            const json& x = j[size_t(r * m.cols() + c)];
            if (!x.is_number()) fail(file, field, "expected numbers");
            m(r, c) = x.get<double>();
        }
}

/// Four significant digits: the weights' precision matters far less than the file's size.
double rounded(double x) {
    if (x == 0 || !std::isfinite(x)) return 0;
    const double scale = std::pow(10.0, 3 - std::floor(std::log10(std::abs(x))));
    return std::round(x * scale) / scale;
}

/// A choice's row, the bias and then its embedding: written as one string of numbers separated by spaces
/// ("0.1676 -1.821 ..."), read from that or from a list of numbers (the form before 2026-12-05, which saved
/// sessions hold). The string is the prior's speed: the JSON reader takes a string whole, where it parses a
/// list number by number through strtod and a node each; std::from_chars gives the same doubles (both round
/// correctly). The shipped prior's first parse went from 28 ms to 20 (medians of ten processes), later ones
/// from 15 to 6.
constexpr int kRow = kDim + 1;

std::string rowText(const std::array<double, kRow>& row) {
    std::string out;
    char buf[32];
    for (int i = 0; i < kRow; ++i) {
        const auto r = std::to_chars(buf, buf + sizeof buf, row[size_t(i)]);
        if (i > 0) out += ' ';
        out.append(buf, r.ptr);
    }
    return out;
}

/// The row in `v` (either form); false when it is not kRow numbers.
bool readRow(const json& v, std::array<double, kRow>& row) {
    if (v.is_string()) {
        const std::string& t = v.get_ref<const std::string&>();
        const char* p = t.data();
        const char* const end = p + t.size();
        for (int i = 0; i < kRow; ++i) {
            while (p < end && *p == ' ') ++p;
            const auto r = std::from_chars(p, end, row[size_t(i)]);
            if (r.ec != std::errc() || !std::isfinite(row[size_t(i)])) return false;
            p = r.ptr;
        }
        while (p < end && *p == ' ') ++p;
        return p == end;
    }
    if (!v.is_array() || v.size() != size_t(kRow)) return false;
    for (int i = 0; i < kRow; ++i) {
        if (!v[size_t(i)].is_number()) return false;
        row[size_t(i)] = v[size_t(i)].get<double>();
    }
    return true;
}

template <class M> json writeMatrix(const M& m) {
    json out = json::array();
    for (Eigen::Index r = 0; r < m.rows(); ++r)
        for (Eigen::Index c = 0; c < m.cols(); ++c) out.push_back(rounded(m(r, c)));
    return out;
}

/// The shared blocks by name, in one place for reading and writing.
template <class F> void forShared(Params& p, F f) {
    f("reward", p.rewardVec), f("token_bias", p.tokenBias), f("wq", p.Wq), f("wk", p.Wk), f("wv", p.Wv);
    f("wo", p.Wo), f("w1", p.W1), f("b1", p.b1), f("w2", p.W2), f("b2", p.b2);
}

} // namespace

ScenarioFeatures scenarioFeatures(const Scenario& s) {
    const ParamCounts pc = countParams(s.model);
    const auto lg = [](double x) { return std::log2(std::max(x, 1e-9)); };
    const Workload& w = s.workload;
    return {
        lg(pc.total / 1e9) / 4.0,
        lg(pc.active / 1e9) / 4.0,
        s.model.moe.experts > 0 ? 1.0 : 0.0,
        lg(double(s.gpus())) / 4.0,
        lg(double(std::max(1, s.cluster.gpusPerNode))) / 2.0,
        (lg(double(std::max<int64_t>(1, w.inputTokens))) + lg(double(std::max<int64_t>(1, w.outputTokens)))) /
            8.0,
        w.tpotMs > 0 ? lg(w.tpotMs) / 2.0 : 4.0};
}

namespace {

/// The JSON object in `text`, or an InputError naming the file.
json readObject(std::string_view text, const std::string& file) {
    json root;
    try {
        root = json::parse(text);
    } catch (const json::parse_error& e) {
        fail(file, "", e.what());
    }
    if (!root.is_object()) fail(file, "", "expected an object");
    return root;
}

Prior priorFrom(const json& root, const std::string& file) {
    Prior p;
    if (root.contains("command") && root["command"].is_string())
        p.command = root["command"].get<std::string>();
    if (root.contains("held_out") && root["held_out"].is_array())
        for (const auto& h : root["held_out"])
            if (h.is_string()) p.heldOut.push_back(h.get<std::string>());
    if (root.contains("shared")) {
        const json& sh = root["shared"];
        if (!sh.is_object()) fail(file, "shared", "expected an object");
        forShared(p.shared, [&](const char* name, auto& m) {
            if (!sh.contains(name)) fail(file, std::string("shared.") + name, "missing");
            readMatrix(sh[name], m, file, std::string("shared.") + name);
        });
        p.hasShared = true;
    }
    if (root.contains("position")) {
        if (!root["position"].is_object()) fail(file, "position", "expected an object");
        for (const auto& [k, v] : root["position"].items()) p.position[k] = readVec(v, file, "position." + k);
    }
    if (root.contains("entries")) {
        const json& es = root["entries"];
        if (!es.is_array()) fail(file, "entries", "expected a list");
        for (size_t i = 0; i < es.size(); ++i) {
            const std::string at = "entries[" + std::to_string(i) + "]";
            const json& e = es[i];
            if (!e.is_object()) fail(file, at, "expected an object");
            PriorEntry entry;
            if (e.contains("scenario") && e["scenario"].is_string())
                entry.scenario = e["scenario"].get<std::string>();
            if (!e.contains("features") || !e["features"].is_array() ||
                e["features"].size() != size_t(kScenarioFeatures))
                fail(file, at + ".features", "expected " + std::to_string(kScenarioFeatures) + " numbers");
            for (int f = 0; f < kScenarioFeatures; ++f) {
                if (!e["features"][size_t(f)].is_number()) fail(file, at + ".features", "expected numbers");
                entry.features[size_t(f)] = e["features"][size_t(f)].get<double>();
            }
            if (!e.contains("choices") || !e["choices"].is_object())
                fail(file, at + ".choices",
                     "expected an object of \"decision=value\": \"bias embedding...\" (numbers)");
            std::array<double, kRow> row{};
            for (const auto& [k, v] : e["choices"].items()) {
                if (!readRow(v, row))
                    fail(file, at + ".choices." + k,
                         "expected the bias and " + std::to_string(kDim) +
                             " numbers, as one string or a list");
                // The object's keys come sorted, so each goes in at the maps' end.
                entry.bias.emplace_hint(entry.bias.end(), k, row[0]);
                entry.choice.emplace_hint(entry.choice.end(), k, Eigen::Map<const VecD>(row.data() + 1));
            }
            p.entries.push_back(std::move(entry));
        }
    }
    return p;
}

/// The prior as a JSON tree (priorJson lays it out, knowledgeJson reuses it).
json priorTree(const Prior& prior) {
    json root = json::object();
    root["format"] = "shardplanner-rl-prior";
    root["version"] = 1;
    root["command"] = prior.command;
    root["held_out"] = prior.heldOut;
    if (prior.hasShared) {
        json sh = json::object();
        forShared(const_cast<Params&>(prior.shared),
                  [&](const char* name, auto& m) { sh[name] = writeMatrix(m); });
        root["shared"] = sh;
    }
    json pos = json::object();
    for (const auto& [k, v] : prior.position) pos[k] = writeMatrix(v);
    root["position"] = pos;
    json es = json::array();
    for (const auto& e : prior.entries) {
        json je = json::object();
        je["scenario"] = e.scenario;
        json f = json::array();
        for (double x : e.features) f.push_back(rounded(x));
        je["features"] = f;
        json cs = json::object();
        for (const auto& [k, v] : e.choice) {
            std::array<double, kRow> row{};
            const auto b = e.bias.find(k);
            row[0] = rounded(b != e.bias.end() ? b->second : 0.0);
            for (int d = 0; d < kDim; ++d) row[size_t(d + 1)] = rounded(v(d));
            cs[k] = rowText(row);
        }
        je["choices"] = cs;
        es.push_back(je);
    }
    root["entries"] = es;
    return root;
}

} // namespace

Prior parsePrior(std::string_view text, const std::string& file) {
    return priorFrom(readObject(text, file), file);
}

std::string priorJson(const Prior& prior) {
    const json root = priorTree(prior);
    // One entry per line keeps the file diffable without making it long.
    std::string out = "{\n";
    bool first = true;
    for (const auto& [k, v] : root.items()) {
        out += first ? "" : ",\n";
        first = false;
        out += "  " + json(k).dump() + ": ";
        if (k == "entries") {
            out += "[\n";
            for (size_t i = 0; i < v.size(); ++i)
                out += "    " + v[i].dump() + (i + 1 < v.size() ? ",\n" : "\n");
            out += "  ]";
        } else {
            out += v.dump();
        }
    }
    return out + "\n}\n";
}

std::string knowledgeJson(const Knowledge& k) {
    Prior p;
    p.shared = k.shared;
    p.hasShared = k.hasShared;
    p.position = k.position;
    PriorEntry e;
    e.scenario = "carried";
    e.choice = k.choice;
    e.bias = k.bias;
    p.entries.push_back(std::move(e));
    json root = priorTree(p);
    root.erase("command"), root.erase("held_out");
    root["format"] = "shardplanner-rl-policy";
    root["searches"] = k.searches;
    return root.dump();
}

Knowledge parseKnowledge(std::string_view text, const std::string& file) {
    const json root = readObject(text, file);
    if (!root.contains("format") || root["format"] != "shardplanner-rl-policy")
        fail(file, "format", "expected \"shardplanner-rl-policy\"");
    if (!root.contains("searches") || !root["searches"].is_number_integer() ||
        root["searches"].get<int>() < 0)
        fail(file, "searches", "expected a whole number of searches, 0 or more");
    const Prior p = priorFrom(root, file);
    if (p.entries.size() != 1) fail(file, "entries", "expected one entry, the carried policy's choices");
    Knowledge k;
    k.choice = p.entries[0].choice;
    k.bias = p.entries[0].bias;
    k.position = p.position;
    k.shared = p.shared;
    k.hasShared = p.hasShared;
    k.searches = root["searches"].get<int>();
    return k;
}

namespace {
double g_parseMs = 0;
}

const Prior& shippedPrior() {
    static const Prior prior = [] {
        const auto t0 = std::chrono::steady_clock::now();
        Prior p;
        try {
            p = parsePrior(kRlPriorJson, "resources/rl-prior.json");
        } catch (const InputError&) {
            p = Prior{}; // a broken build's prior: none (tst_rl checks the shipped one parses)
        }
        g_parseMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
        return p;
    }();
    return prior;
}

double shippedPriorParseMs() {
    return g_parseMs;
}

std::shared_ptr<const Knowledge> priorFor(const Prior& prior, const Scenario& s, int nearest) {
    if (prior.empty()) return nullptr;
    const ScenarioFeatures f = scenarioFeatures(s);
    std::vector<std::pair<double, const PriorEntry*>> byDistance;
    for (const auto& e : prior.entries) {
        double d2 = 0;
        for (int i = 0; i < kScenarioFeatures; ++i)
            d2 += (e.features[size_t(i)] - f[size_t(i)]) * (e.features[size_t(i)] - f[size_t(i)]);
        byDistance.emplace_back(std::sqrt(d2), &e);
    }
    std::stable_sort(byDistance.begin(), byDistance.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    byDistance.resize(std::min(byDistance.size(), size_t(std::max(1, nearest))));
    auto k = std::make_shared<Knowledge>();
    k->distance = byDistance.front().first;
    std::map<std::string, double, std::less<>> weightOf;
    for (const auto& [dist, e] : byDistance) {
        const double w = 1.0 / (dist + 0.25);
        for (const auto& [key, v] : e->choice) {
            auto [it, added] = k->choice.try_emplace(key, VecD::Zero());
            it->second += w * v;
            const auto b = e->bias.find(key);
            k->bias[key] += w * (b != e->bias.end() ? b->second : 0.0);
            weightOf[key] += w;
        }
    }
    for (auto& [key, v] : k->choice) {
        v /= weightOf[key];
        k->bias[key] /= weightOf[key];
    }
    k->position = prior.position;
    k->shared = prior.shared;
    k->hasShared = prior.hasShared;
    return k;
}

} // namespace sp::rl
