#include "core/sim/trace.h"

#include "core/io/reader.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <optional>

namespace sp {

namespace {

constexpr int64_t kMaxTokens = 100'000'000;
/// Cells a CSV row may have: a trace has a handful of columns (Azure's LLM inference traces have three or
/// four), and a row of millions of commas must not become millions of strings.
constexpr size_t kMaxCells = 1000;
/// An arrival time's largest magnitude, in seconds: 1e11 s is about 3,200 years, past any date since 1970 a
/// trace holds (a timestamp column is ~1.7e9), so the shift to the first arrival and every sum after it stay
/// exact to microseconds, and never overflow.
constexpr double kMaxArrivalS = 1e11;

enum Column { Arrival, Input, Output, kColumns };
constexpr const char* kColumnNames[] = {"arrival_s", "input_tokens", "output_tokens"};

std::optional<Column> columnOf(std::string name) {
    std::transform(name.begin(), name.end(), name.begin(),
                   [](unsigned char c) { return char(std::tolower(c)); });
    if (name == "arrival_s" || name == "arrival" || name == "time" || name == "timestamp") return Arrival;
    if (name == "input_tokens" || name == "prompt_tokens" || name == "contexttokens") return Input;
    if (name == "output_tokens" || name == "completion_tokens" || name == "generatedtokens") return Output;
    return std::nullopt;
}

std::string trim(std::string_view s) {
    size_t a = 0, b = s.size();
    while (a < b && std::isspace((unsigned char)s[a])) ++a;
    while (b > a && std::isspace((unsigned char)s[b - 1])) --b;
    std::string out(s.substr(a, b - a));
    if (out.size() >= 2 && out.front() == '"' && out.back() == '"') out = out.substr(1, out.size() - 2);
    return out;
}

/// Days from 1970-01-01 of a civil date (H. Hinnant, "chrono-Compatible Low-Level Date Algorithms").
int64_t daysFromCivil(int64_t y, unsigned m, unsigned d) {
    y -= m <= 2;
    const int64_t era = (y >= 0 ? y : y - 399) / 400;
    const unsigned yoe = unsigned(y - era * 400);
    const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + int64_t(doe) - 719468;
}

/// Seconds: a plain number, or `YYYY-MM-DD HH:MM:SS[.fraction]` (also with a T) as seconds since 1970.
std::optional<double> parseTime(const std::string& v) {
    char* end = nullptr;
    const double x = std::strtod(v.c_str(), &end);
    if (end && *end == '\0' && !v.empty() && std::isfinite(x)) return x;
    int Y, M, D, h, m;
    double sec;
    char sep;
    int used = 0;
    if (std::sscanf(v.c_str(), "%4d-%2d-%2d%c%2d:%2d:%lf%n", &Y, &M, &D, &sep, &h, &m, &sec, &used) == 7 &&
        size_t(used) == v.size() && (sep == ' ' || sep == 'T') && M >= 1 && M <= 12 && D >= 1 && D <= 31 &&
        h >= 0 && h < 24 && m >= 0 && m < 60 && sec >= 0 && sec < 61)
        return double(daysFromCivil(Y, unsigned(M), unsigned(D))) * 86400.0 + h * 3600.0 + m * 60.0 + sec;
    return std::nullopt;
}

std::optional<int64_t> parseTokens(const std::string& v) {
    int64_t n = 0;
    const auto r = std::from_chars(v.data(), v.data() + v.size(), n);
    if (r.ec != std::errc() || r.ptr != v.data() + v.size()) {
        // 123.0 as written by some tools
        char* end = nullptr;
        const double x = std::strtod(v.c_str(), &end);
        if (v.empty() || !end || *end != '\0' || !(x == std::floor(x)) || !std::isfinite(x))
            return std::nullopt;
        n = int64_t(x);
    }
    return n;
}

[[noreturn]] void fail(const std::string& file, int line, int col, const std::string& field,
                       const std::string& msg) {
    throw InputError(Error{file, line, col, field, msg});
}

void check(const std::string& file, int line, int col, Column c, const TraceRequest& r) {
    if (c == Input && (r.inputTokens < 1 || r.inputTokens > kMaxTokens))
        fail(file, line, col, kColumnNames[c], "expected a whole number of tokens from 1 to 100,000,000");
    if (c == Output && (r.outputTokens < 1 || r.outputTokens > kMaxTokens))
        fail(file, line, col, kColumnNames[c], "expected a whole number of tokens from 1 to 100,000,000");
}

void setField(const std::string& file, int line, int col, Column c, const std::string& v, TraceRequest& r) {
    if (c == Arrival) {
        const auto t = parseTime(v);
        if (!t)
            fail(file, line, col, kColumnNames[c],
                 "expected seconds or a date and time (YYYY-MM-DD HH:MM:SS), not '" + v + "'");
        if (std::fabs(*t) > kMaxArrivalS)
            fail(file, line, col, kColumnNames[c],
                 "'" + v + "' is out of range: arrival times are seconds within +/-1e11 (about 3,200 years)");
        r.arrivalS = *t;
        return;
    }
    const auto n = parseTokens(v);
    if (!n) fail(file, line, col, kColumnNames[c], "expected a whole number of tokens, not '" + v + "'");
    (c == Input ? r.inputTokens : r.outputTokens) = *n;
    check(file, line, col, c, r);
}

std::vector<TraceRequest> parseCsv(const std::string& text, const std::string& file) {
    std::vector<TraceRequest> out;
    std::array<int, kColumns> at{-1, -1, -1};
    int line = 0;
    size_t pos = 0;
    bool header = true;
    while (pos < text.size()) {
        size_t end = text.find('\n', pos);
        if (end == std::string::npos) end = text.size();
        std::string_view row(text.data() + pos, end - pos);
        if (!row.empty() && row.back() == '\r') row.remove_suffix(1);
        const size_t rowStart = pos;
        pos = end + 1;
        ++line;
        if (trim(row).empty()) continue;
        // The cells and where each starts (column, 1-based).
        std::vector<std::pair<std::string, int>> cells;
        size_t a = 0;
        while (true) {
            if (cells.size() == kMaxCells)
                fail(file, line, int(a) + 1, "",
                     "the row has more than " + std::to_string(kMaxCells) +
                         " cells: a trace row holds an arrival time and two token counts");
            const size_t b = row.find(',', a);
            cells.emplace_back(trim(row.substr(a, b == std::string::npos ? std::string::npos : b - a)),
                               int(a) + 1);
            if (b == std::string::npos) break;
            a = b + 1;
        }
        (void)rowStart;
        if (header) {
            header = false;
            for (size_t i = 0; i < cells.size(); ++i)
                if (auto c = columnOf(cells[i].first)) {
                    if (at[size_t(*c)] >= 0)
                        fail(file, line, cells[i].second, cells[i].first,
                             "a second column for " + std::string(kColumnNames[*c]));
                    at[size_t(*c)] = int(i);
                }
            for (int c = 0; c < kColumns; ++c)
                if (at[size_t(c)] < 0)
                    fail(file, line, 1, "",
                         "the header row names no " + std::string(kColumnNames[c]) +
                             " column (arrival: arrival_s, time or TIMESTAMP; input: input_tokens or "
                             "ContextTokens; "
                             "output: output_tokens or GeneratedTokens)");
            continue;
        }
        TraceRequest r;
        for (int c = 0; c < kColumns; ++c) {
            const size_t i = size_t(at[size_t(c)]);
            if (i >= cells.size())
                fail(file, line, int(row.size()) + 1, kColumnNames[c], "the row has no cell for this column");
            setField(file, line, cells[i].second, Column(c), cells[i].first, r);
        }
        out.push_back(r);
    }
    if (header) fail(file, 0, 0, "", "the file is empty: expected a header row and one request a row");
    return out;
}

std::vector<TraceRequest> parseJsonl(const std::string& text, const std::string& file) {
    std::vector<TraceRequest> out;
    int line = 0;
    size_t pos = 0;
    while (pos < text.size()) {
        size_t end = text.find('\n', pos);
        if (end == std::string::npos) end = text.size();
        const std::string row = text.substr(pos, end - pos);
        pos = end + 1;
        ++line;
        if (trim(row).empty()) continue;
        nlohmann::json j;
        // Duplicate keys: RFC 8259 leaves them to the reader and nlohmann keeps the last; the project's
        // readers refuse them (docs/inputs.md, "Reading and writing files"), so the parser's callback sees
        // each key of each object once.
        std::vector<std::vector<std::string>> keys;
        std::string duplicate;
        const auto callback = [&](int, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
            using E = nlohmann::json::parse_event_t;
            if (event == E::object_start) keys.emplace_back();
            if (event == E::object_end && !keys.empty()) keys.pop_back();
            if (event == E::key && !keys.empty() && duplicate.empty()) {
                const std::string k = parsed.get<std::string>();
                auto& seen = keys.back();
                if (std::find(seen.begin(), seen.end(), k) != seen.end())
                    duplicate = k;
                else
                    seen.push_back(k);
            }
            return true;
        };
        try {
            j = nlohmann::json::parse(row, callback);
        } catch (const nlohmann::json::parse_error& e) {
            fail(file, line, int(e.byte), "", "not a JSON object: " + std::string(e.what()));
        } catch (const nlohmann::json::exception& e) {
            // out_of_range.406: a number past a double's range (1e400)
            fail(file, line, 1, "", "not a JSON object this reader takes: " + std::string(e.what()));
        }
        if (!duplicate.empty()) {
            const size_t k = row.find("\"" + duplicate + "\"", row.find("\"" + duplicate + "\"") + 1);
            fail(file, line, k == std::string::npos ? 1 : int(k) + 1, duplicate,
                 "a duplicate key: each key appears once in an object");
        }
        if (!j.is_object()) fail(file, line, 1, "", "expected a JSON object a line");
        std::array<bool, kColumns> seen{};
        TraceRequest r;
        for (auto it = j.begin(); it != j.end(); ++it) {
            const auto c = columnOf(it.key());
            if (!c) continue;
            const size_t k = row.find("\"" + it.key() + "\"");
            const int col = k == std::string::npos ? 1 : int(k) + 1;
            if (seen[size_t(*c)])
                fail(file, line, col, it.key(), "a second key for " + std::string(kColumnNames[*c]));
            seen[size_t(*c)] = true;
            const auto& v = it.value();
            std::string text;
            if (v.is_number())
                text = v.is_number_integer() ? std::to_string(v.get<int64_t>()) : nlohmann::json(v).dump();
            else if (v.is_string())
                text = v.get<std::string>();
            else
                fail(file, line, col, it.key(), "expected a number or a string");
            setField(file, line, col, *c, text, r);
        }
        for (int c = 0; c < kColumns; ++c)
            if (!seen[size_t(c)]) fail(file, line, 1, kColumnNames[c], "missing (the row names no such key)");
        out.push_back(r);
    }
    if (out.empty()) fail(file, 0, 0, "", "the file holds no requests");
    return out;
}

} // namespace

Result<std::vector<TraceRequest>> parseTrace(const std::string& text, const std::string& file) {
    try {
        // A UTF-8 byte-order mark, as spreadsheet programs write one before a CSV header, is not text.
        std::string unmarked;
        const bool bom = text.rfind("\xef\xbb\xbf", 0) == 0;
        if (bom) unmarked = text.substr(3);
        const std::string& body = bom ? unmarked : text;
        const size_t first = body.find_first_not_of(" \t\r\n");
        const bool jsonl = first != std::string::npos && body[first] == '{';
        std::vector<TraceRequest> rows = jsonl ? parseJsonl(body, file) : parseCsv(body, file);
        if (rows.empty()) return Error{file, 0, 0, "", "the trace holds no requests"};
        std::stable_sort(rows.begin(), rows.end(), [](const TraceRequest& a, const TraceRequest& b) {
            return a.arrivalS < b.arrivalS;
        });
        const double t0 = rows.front().arrivalS;
        for (auto& r : rows) r.arrivalS -= t0;
        return rows;
    } catch (const InputError& e) {
        return e.error();
    }
}

Result<std::vector<TraceRequest>> loadTrace(const std::string& path) {
    try {
        return parseTrace(io::readFile(path), path);
    } catch (const InputError& e) {
        return e.error();
    }
}

} // namespace sp
