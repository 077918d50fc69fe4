#include "core/io/reader.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

namespace sp::io {

namespace {

int lineOf(const YAML::Node& n) { return n.IsDefined() && n.Mark().line >= 0 ? n.Mark().line + 1 : 0; }
int columnOf(const YAML::Node& n) { return n.IsDefined() && n.Mark().column >= 0 ? n.Mark().column + 1 : 0; }

std::string typeName(const YAML::Node& n) {
    switch (n.Type()) {
    case YAML::NodeType::Null: return "nothing";
    case YAML::NodeType::Scalar: return "'" + n.Scalar() + "'";
    case YAML::NodeType::Sequence: return "a list";
    case YAML::NodeType::Map: return "a mapping";
    default: return "nothing";
    }
}

size_t editDistance(std::string_view a, std::string_view b) {
    std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
    for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
    for (size_t i = 1; i <= a.size(); ++i) {
        cur[0] = i;
        for (size_t j = 1; j <= b.size(); ++j)
            cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
        std::swap(prev, cur);
    }
    return prev[b.size()];
}

std::string fmtNum(double v) {
    std::ostringstream s;
    s << v;
    return s.str();
}

std::string joinOptions(const std::vector<std::string_view>& options) {
    std::string s;
    for (size_t i = 0; i < options.size(); ++i) {
        if (i) s += i + 1 == options.size() ? " or " : ", ";
        s += std::string(options[i]);
    }
    return s;
}

} // namespace

void fail(const std::string& file, const YAML::Node& at, const std::string& field, const std::string& msg) {
    throw InputError(Error{file, lineOf(at), columnOf(at), field, msg});
}

std::string didYouMean(std::string_view word, const std::vector<std::string_view>& options) {
    std::string_view best;
    size_t bestD = std::max<size_t>(2, word.size() / 3) + 1;
    for (auto o : options) {
        const size_t d = editDistance(word, o);
        if (d < bestD) bestD = d, best = o;
    }
    return best.empty() ? std::string() : " (did you mean '" + std::string(best) + "'?)";
}

std::string readFile(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw InputError(Error{path, 0, 0, {}, "cannot open the file"});
    std::ostringstream ss;
    ss << in.rdbuf();
    if (in.bad()) throw InputError(Error{path, 0, 0, {}, "cannot read the file"});
    return ss.str();
}

YAML::Node parseDocument(const std::string& text, const std::string& file) {
    const bool json = file.size() >= 5 && file.compare(file.size() - 5, 5, ".json") == 0;
    if (json) {
        // nlohmann gives precise JSON syntax errors; yaml-cpp then gives every node its position.
        try {
            const auto checked = nlohmann::json::parse(text);
            (void)checked;
        } catch (const nlohmann::json::parse_error& e) {
            int line = 1, col = 1;
            const size_t end = std::min<size_t>(e.byte > 0 ? e.byte - 1 : 0, text.size());
            for (size_t i = 0; i < end; ++i) {
                if (text[i] == '\n') ++line, col = 1;
                else ++col;
            }
            std::string what = e.what();
            const auto p = what.find("parse error");
            if (p != std::string::npos) what = what.substr(p);
            throw InputError(Error{file, line, col, {}, "malformed JSON: " + what});
        }
    }
    try {
        YAML::Node n = YAML::Load(text);
        if (!n.IsMap()) {
            throw InputError(Error{file, lineOf(n), columnOf(n), {},
                                   std::string(json ? "malformed JSON" : "malformed YAML") +
                                       ": expected a mapping of keys to values at the top, found " + typeName(n)});
        }
        return n;
    } catch (const YAML::Exception& e) {
        throw InputError(Error{file, e.mark.line >= 0 ? e.mark.line + 1 : 0, e.mark.column >= 0 ? e.mark.column + 1 : 0,
                               {}, std::string(json ? "malformed JSON: " : "malformed YAML: ") + e.msg});
    }
}

MapReader::MapReader(std::string file, YAML::Node node, std::string path)
    : m_file(std::move(file)), m_node(std::move(node)), m_path(std::move(path)) {
    if (!m_node.IsMap())
        fail(m_file, m_node, m_path.empty() ? "document" : m_path, "expected a mapping, found " + typeName(m_node));
}

void MapReader::allowKeys(std::initializer_list<std::string_view> keys) const {
    std::vector<std::string_view> options(keys);
    for (auto it = m_node.begin(); it != m_node.end(); ++it) {
        if (!it->first.IsScalar()) fail(m_file, it->first, m_path, "keys must be plain names");
        const std::string k = it->first.Scalar();
        if (std::find(options.begin(), options.end(), k) == options.end())
            fail(m_file, it->first, field(k), "unknown key" + didYouMean(k, options));
    }
}

bool MapReader::has(std::string_view key) const {
    const YAML::Node n = m_node[std::string(key)];
    return n.IsDefined() && !n.IsNull();
}

YAML::Node MapReader::node(std::string_view key) const {
    YAML::Node n = m_node[std::string(key)];
    if (!n.IsDefined() || n.IsNull()) fail(m_file, m_node, field(key), "missing required field");
    return n;
}

MapReader MapReader::map(std::string_view key) const { return MapReader(m_file, node(key), field(key)); }

void MapReader::failAt(std::string_view key, const std::string& msg) const {
    YAML::Node n = m_node[std::string(key)];
    fail(m_file, n.IsDefined() ? n : m_node, field(key), msg);
}

void MapReader::failHere(const std::string& msg) const { fail(m_file, m_node, m_path, msg); }

int64_t asInteger(const std::string& file, const YAML::Node& n, const std::string& field, int64_t min, int64_t max) {
    if (!n.IsScalar()) fail(file, n, field, "expected an integer, found " + typeName(n));
    int64_t v = 0;
    if (!YAML::convert<int64_t>::decode(n, v)) {
        // Accept integral floats such as 8192.0, which some JSON writers emit.
        double d = 0;
        if (!YAML::convert<double>::decode(n, d) || !std::isfinite(d) || d != std::floor(d) || std::fabs(d) > 9e15)
            fail(file, n, field, "expected an integer, found " + typeName(n));
        v = static_cast<int64_t>(d);
    }
    if (v < min || v > max)
        fail(file, n, field,
             "expected an integer from " + std::to_string(min) + " to " + std::to_string(max) + ", found " + std::to_string(v));
    return v;
}

double asNumber(const std::string& file, const YAML::Node& n, const std::string& field, double min, double max) {
    if (!n.IsScalar()) fail(file, n, field, "expected a number, found " + typeName(n));
    double v = 0;
    if (!YAML::convert<double>::decode(n, v) || !std::isfinite(v))
        fail(file, n, field, "expected a number, found " + typeName(n));
    if (v < min || v > max)
        fail(file, n, field, "expected a number from " + fmtNum(min) + " to " + fmtNum(max) + ", found " + fmtNum(v));
    return v;
}

std::string asString(const std::string& file, const YAML::Node& n, const std::string& field) {
    if (!n.IsScalar()) fail(file, n, field, "expected a string, found " + typeName(n));
    return n.Scalar();
}

int64_t MapReader::integer(std::string_view key, int64_t min, int64_t max) const {
    return asInteger(m_file, node(key), field(key), min, max);
}
int64_t MapReader::integerOr(std::string_view key, int64_t def, int64_t min, int64_t max) const {
    return has(key) ? integer(key, min, max) : def;
}
double MapReader::number(std::string_view key, double min, double max) const {
    return asNumber(m_file, node(key), field(key), min, max);
}
double MapReader::numberOr(std::string_view key, double def, double min, double max) const {
    return has(key) ? number(key, min, max) : def;
}
std::string MapReader::string(std::string_view key) const { return asString(m_file, node(key), field(key)); }
std::string MapReader::stringOr(std::string_view key, std::string def) const {
    return has(key) ? string(key) : std::move(def);
}
bool MapReader::boolean(std::string_view key, bool def) const {
    if (!has(key)) return def;
    const YAML::Node n = node(key);
    bool b = false;
    if (!n.IsScalar() || !YAML::convert<bool>::decode(n, b))
        fail(m_file, n, field(key), "expected true or false, found " + typeName(n));
    return b;
}
int MapReader::oneOf(std::string_view key, const std::vector<std::string_view>& options) const {
    const YAML::Node n = node(key);
    const std::string s = asString(m_file, n, field(key));
    auto it = std::find(options.begin(), options.end(), s);
    if (it == options.end())
        fail(m_file, n, field(key), "expected one of " + joinOptions(options) + ", found '" + s + "'" + didYouMean(s, options));
    return int(it - options.begin());
}
int MapReader::oneOfOr(std::string_view key, const std::vector<std::string_view>& options, int def) const {
    return has(key) ? oneOf(key, options) : def;
}
std::vector<int64_t> MapReader::integerList(std::string_view key, int64_t min, int64_t max) const {
    const YAML::Node n = node(key);
    if (n.IsScalar()) return {asInteger(m_file, n, field(key), min, max)};
    if (!n.IsSequence()) fail(m_file, n, field(key), "expected a list of integers, found " + typeName(n));
    std::vector<int64_t> out;
    for (size_t i = 0; i < n.size(); ++i)
        out.push_back(asInteger(m_file, n[i], field(key) + "[" + std::to_string(i) + "]", min, max));
    if (out.empty()) fail(m_file, n, field(key), "expected at least one value");
    return out;
}

} // namespace sp::io
