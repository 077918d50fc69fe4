#include "core/io/reader.h"

#include "core/common/text.h"

#include <nlohmann/json.hpp>
#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/parser.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <optional>
#include <sstream>

namespace sp::io {

namespace {

int lineOf(const YAML::Node& n) {
    return n.IsDefined() && n.Mark().line >= 0 ? n.Mark().line + 1 : 0;
}
int columnOf(const YAML::Node& n) {
    return n.IsDefined() && n.Mark().column >= 0 ? n.Mark().column + 1 : 0;
}

std::string typeName(const YAML::Node& n) {
    switch (n.Type()) {
    case YAML::NodeType::Null:
        return "nothing";
    case YAML::NodeType::Scalar: // quoted, but never more than a short value's worth of the file
        return n.Scalar().size() <= 60 ? "'" + n.Scalar() + "'" : "'" + n.Scalar().substr(0, 57) + "...'";
    case YAML::NodeType::Sequence:
        return "a list";
    case YAML::NodeType::Map:
        return "a mapping";
    default:
        return "nothing";
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
    auto failWith = [&](const std::string& msg) { throw InputError(Error{path, 0, 0, {}, msg}); };
    // O_NONBLOCK: opening a FIFO must not wait for a writer; fstat then refuses anything but a regular file.
    const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        const int err = errno;
        failWith(err == ENOENT ? "no such file" : "cannot open the file: " + std::string(std::strerror(err)));
    }
    struct Closer {
        int fd;
        ~Closer() { ::close(fd); }
    } closer{fd};
    struct stat st {};
    if (::fstat(fd, &st) != 0) failWith("cannot read the file: " + std::string(std::strerror(errno)));
    if (S_ISDIR(st.st_mode)) failWith("is a folder, not a file");
    if (!S_ISREG(st.st_mode)) failWith("not a regular file (a device, FIFO or socket cannot be read)");
    if (st.st_size > kMaxFileBytes)
        failWith("the file is too large (" + std::to_string(st.st_size / (1024 * 1024)) + " MiB; at most " +
                 std::to_string(kMaxFileBytes / (1024 * 1024)) + " MiB)");
    // Read at most one byte past the limit, so a file that grows while it is read is still bounded.
    std::string text;
    text.resize(size_t(st.st_size) + 1);
    size_t got = 0;
    while (got < text.size()) {
        const ssize_t n = ::read(fd, text.data() + got, text.size() - got);
        if (n < 0) {
            if (errno == EINTR) continue;
            failWith("cannot read the file: " + std::string(std::strerror(errno)));
        }
        if (n == 0) break;
        got += size_t(n);
        if (got == text.size() && text.size() <= size_t(kMaxFileBytes)) text.resize(text.size() * 2);
        if (got > size_t(kMaxFileBytes)) failWith("the file is too large (more than 64 MiB)");
    }
    text.resize(got);
    return text;
}

namespace {

/// yaml-cpp's parser refuses documents nested deeper than this (yaml-cpp 0.7, include/yaml-cpp/depthguard.h:
/// DepthGuard<2000>); the same limit is applied to JSON before it reaches nlohmann.
constexpr int kMaxDepth = 2000;

struct TextPos {
    int line = 0, column = 0;
};

TextPos positionOf(const std::string& text, size_t offset) {
    TextPos p{1, 1};
    for (size_t i = 0; i < std::min(offset, text.size()); ++i) {
        if (text[i] == '\n')
            ++p.line, p.column = 1;
        else
            ++p.column;
    }
    return p;
}

/// Where flow nesting ([ and { outside quoted strings and comments) first goes past kMaxDepth, if it does.
std::optional<TextPos> tooDeep(const std::string& text, bool json) {
    int depth = 0;
    char quote = 0;
    bool comment = false;
    for (size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (comment) {
            comment = c != '\n';
        } else if (quote) {
            if (c == '\\' && quote == '"')
                ++i;
            else if (c == quote)
                quote = 0;
        } else if (c == '"' || (c == '\'' && !json)) {
            quote = c;
        } else if (c == '#' && !json && (i == 0 || std::isspace(static_cast<unsigned char>(text[i - 1])))) {
            comment = true;
        } else if (c == '[' || c == '{') {
            if (++depth > kMaxDepth) return positionOf(text, i);
        } else if ((c == ']' || c == '}') && depth > 0) {
            --depth;
        }
    }
    return std::nullopt;
}

std::string tooDeepMessage() {
    return "nested too deeply (more than " + std::to_string(kMaxDepth) + " levels of lists and mappings)";
}

/// A key that appears twice in one mapping is an error naming both places (YAML tools keep the first, JSON
/// tools the last: neither guess is safe). Aliases may make the tree a graph, even a cycle (&a [*a]), so the
/// walk is bounded in depth and in the number of values it visits.
/// Listens to the parser's events: the first value of a document, if it has one.
class FirstValue : public YAML::EventHandler {
public:
    std::optional<YAML::Mark> at;
    void OnDocumentStart(const YAML::Mark&) override {}
    void OnDocumentEnd() override {}
    void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
    void OnAlias(const YAML::Mark& m, YAML::anchor_t) override { note(m); }
    void OnScalar(const YAML::Mark& m, const std::string&, YAML::anchor_t, const std::string&) override {
        note(m);
    }
    void OnSequenceStart(const YAML::Mark& m, const std::string&, YAML::anchor_t,
                         YAML::EmitterStyle::value) override {
        note(m);
    }
    void OnSequenceEnd() override {}
    void OnMapStart(const YAML::Mark& m, const std::string&, YAML::anchor_t,
                    YAML::EmitterStyle::value) override {
        note(m);
    }
    void OnMapEnd() override {}

private:
    void note(const YAML::Mark& m) {
        if (!at) at = m;
    }
};

/// Where a second, non-empty document starts, if there is one. Only two documents are ever parsed (LoadAll
/// would read on through any number of them).
std::optional<YAML::Mark> secondDocument(const std::string& text) {
    std::istringstream in(text);
    YAML::Parser parser(in);
    FirstValue first, second;
    if (!parser.HandleNextDocument(first)) return std::nullopt;
    if (!parser.HandleNextDocument(second)) return std::nullopt;
    return second.at;
}

struct KeyWalk {
    const std::string& file;
    int64_t budget = 1000000;
    std::vector<std::string> parts{}; ///< the path to the current value, joined only for an error

    std::string path() const {
        std::string s;
        for (const auto& p : parts) s += (s.empty() || p[0] == '[' ? "" : ".") + p;
        return s;
    }

    void walk(const YAML::Node& n) {
        if (int(parts.size()) > kMaxDepth)
            fail(file, n, path(),
                 "nested too deeply (more than " + std::to_string(kMaxDepth) +
                     " levels, or an alias that refers to itself)");
        if (--budget < 0) fail(file, n, path(), "too many values (aliases expand to more than a million)");
        if (n.IsMap()) {
            std::vector<std::pair<std::string, YAML::Mark>> seen;
            for (auto it = n.begin(); it != n.end(); ++it) {
                const bool named = it->first.IsScalar();
                parts.push_back(named ? it->first.Scalar() : std::string("?"));
                if (named) {
                    for (const auto& [k, mark] : seen)
                        if (k == parts.back())
                            fail(file, it->first, path(),
                                 "duplicate key '" + k + "' (first at line " + std::to_string(mark.line + 1) +
                                     ", column " + std::to_string(mark.column + 1) + ")");
                    seen.emplace_back(parts.back(), it->first.Mark());
                }
                walk(it->second);
                parts.pop_back();
            }
        } else if (n.IsSequence()) {
            for (size_t i = 0; i < n.size(); ++i) {
                parts.push_back("[" + std::to_string(i) + "]");
                walk(n[i]);
                parts.pop_back();
            }
        }
    }
};

} // namespace

YAML::Node parseDocument(const std::string& text, const std::string& file) {
    return parseDocument(text, file, file.size() >= 5 && file.compare(file.size() - 5, 5, ".json") == 0);
}

YAML::Node parseDocument(const std::string& text, const std::string& file, bool json) {
    const char* syntax = json ? "malformed JSON" : "malformed YAML";
    // yaml-cpp builds a node of some hundred bytes for every value before any check here runs: a 60 MB flow
    // list took 47 s and 4 GB before bad_alloc. Every value but the first follows one of these marks, so
    // their count bounds the values; the largest file the project reads (a calibration table of 98 KB) has
    // ~10,000.
    constexpr size_t kMaxMarks = 1'000'000;
    size_t marks = 0;
    for (size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        marks += c == ',' || c == '\n' || c == ':' || c == '[' || c == '{' || c == '-';
        if (marks > kMaxMarks) {
            const TextPos at = positionOf(text, i);
            throw InputError(Error{file,
                                   at.line,
                                   at.column,
                                   {},
                                   std::string(syntax) +
                                       ": too many values (more than a million commas, colons, dashes, "
                                       "brackets and lines): no input of this kind is that large"});
        }
    }
    if (const auto deep = tooDeep(text, json))
        throw InputError(
            Error{file, deep->line, deep->column, {}, std::string(syntax) + ": " + tooDeepMessage()});
    if (json) {
        // nlohmann gives precise JSON syntax errors; yaml-cpp then gives every node its position.
        try {
            const auto checked = nlohmann::json::parse(text);
            (void)checked;
        } catch (const nlohmann::json::parse_error& e) {
            const TextPos at = positionOf(text, e.byte > 0 ? e.byte - 1 : 0);
            std::string what = e.what();
            const auto p = what.find("parse error");
            if (p != std::string::npos) what = what.substr(p);
            throw InputError(Error{file, at.line, at.column, {}, "malformed JSON: " + what});
        } catch (const nlohmann::json::out_of_range& e) {
            // "number overflow parsing '1e400'": nlohmann gives no position, so find the number in the text.
            std::string what = e.what();
            TextPos at;
            const auto q = what.find('\'');
            const auto q2 = q == std::string::npos ? q : what.find('\'', q + 1);
            if (q2 != std::string::npos) {
                const auto off = text.find(what.substr(q + 1, q2 - q - 1));
                if (off != std::string::npos) at = positionOf(text, off);
                what = "number out of range: " + what.substr(q + 1, q2 - q - 1);
            }
            throw InputError(Error{file, at.line, at.column, {}, what + " (expected a finite number)"});
        } catch (const nlohmann::json::exception& e) {
            throw InputError(Error{file, 0, 0, {}, std::string("malformed JSON: ") + e.what()});
        }
    }
    try {
        YAML::Node n = YAML::Load(text);
        if (const auto second = secondDocument(text))
            throw InputError(
                Error{file,
                      second->line + 1,
                      second->column + 1,
                      {},
                      std::string(syntax) + ": a second document (after '---'); a file holds one document"});
        if (!n.IsMap()) {
            throw InputError(Error{file,
                                   lineOf(n),
                                   columnOf(n),
                                   {},
                                   std::string(syntax) +
                                       ": expected a mapping of keys to values at the top, found " +
                                       (n.IsScalar() ? std::string("plain text") : typeName(n))});
        }
        KeyWalk{file}.walk(n);
        return n;
    } catch (const YAML::DeepRecursion& e) {
        throw InputError(Error{file,
                               e.mark.line >= 0 ? e.mark.line + 1 : 0,
                               e.mark.column >= 0 ? e.mark.column + 1 : 0,
                               {},
                               std::string(syntax) + ": nested too deeply (the parser stops at " +
                                   std::to_string(kMaxDepth) + " levels of recursion)"});
    } catch (const YAML::Exception& e) {
        throw InputError(Error{file,
                               e.mark.line >= 0 ? e.mark.line + 1 : 0,
                               e.mark.column >= 0 ? e.mark.column + 1 : 0,
                               {},
                               std::string(syntax) + ": " + e.msg});
    }
}

MapReader::MapReader(std::string file, YAML::Node node, std::string path)
    : m_file(std::move(file)), m_node(std::move(node)), m_path(std::move(path)) {
    if (!m_node.IsMap())
        fail(m_file, m_node, m_path.empty() ? "document" : m_path,
             "expected a mapping, found " + typeName(m_node));
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

MapReader MapReader::map(std::string_view key) const {
    return MapReader(m_file, node(key), field(key));
}

void MapReader::failAt(std::string_view key, const std::string& msg) const {
    YAML::Node n = m_node[std::string(key)];
    fail(m_file, n.IsDefined() ? n : m_node, field(key), msg);
}

void MapReader::failHere(const std::string& msg) const {
    fail(m_file, m_node, m_path, msg);
}

int64_t asInteger(const std::string& file, const YAML::Node& n, const std::string& field, int64_t min,
                  int64_t max) {
    if (!n.IsScalar()) fail(file, n, field, "expected an integer, found " + typeName(n));
    int64_t v = 0;
    if (!YAML::convert<int64_t>::decode(n, v)) {
        // Accept integral floats such as 8192.0, which some JSON writers emit.
        double d = 0;
        if (!YAML::convert<double>::decode(n, d) || !std::isfinite(d) || d != std::floor(d) ||
            std::fabs(d) > 9e15)
            fail(file, n, field, "expected an integer, found " + typeName(n));
        v = static_cast<int64_t>(d);
    }
    if (v < min || v > max)
        fail(file, n, field,
             "expected an integer from " + std::to_string(min) + " to " + std::to_string(max) + ", found " +
                 std::to_string(v));
    return v;
}

double asNumber(const std::string& file, const YAML::Node& n, const std::string& field, double min,
                double max) {
    if (!n.IsScalar()) fail(file, n, field, "expected a number, found " + typeName(n));
    double v = 0;
    if (!YAML::convert<double>::decode(n, v) || !std::isfinite(v))
        fail(file, n, field, "expected a number, found " + typeName(n));
    if (v < min || v > max)
        fail(file, n, field,
             "expected a number from " + fmtNum(min) + " to " + fmtNum(max) + ", found " + fmtNum(v));
    return v;
}

std::string asString(const std::string& file, const YAML::Node& n, const std::string& field) {
    if (!n.IsScalar()) fail(file, n, field, "expected a string, found " + typeName(n));
    // Names and text fields end up in exported shell scripts' comments, in Kubernetes manifests, in JSON
    // arguments, in window titles and on the terminal: a line break there would end a comment or a YAML block
    // and start a live command or a new key (YAML 1.1 parsers break lines at NEL, U+2028 and U+2029 too), an
    // escape sequence would rewrite the screen, bytes that are not UTF-8 cannot be written as JSON. None of
    // the formats needs one, so refuse them here, once for every reader.
    if (const auto f = firstUnsafeText(n.Scalar()))
        fail(file, n, field,
             "the text has " + f->what + " at byte " + std::to_string(f->offset + 1) + " (found '" +
                 printable(n.Scalar()) +
                 "'): names and text fields are one line of UTF-8 without control characters or line "
                 "separators");
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
std::string MapReader::string(std::string_view key) const {
    return asString(m_file, node(key), field(key));
}
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
        fail(m_file, n, field(key),
             "expected one of " + joinOptions(options) + ", found '" + s + "'" + didYouMean(s, options));
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
