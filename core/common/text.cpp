#include "core/common/text.h"

#include <cstdio>

namespace sp {

namespace {

bool isControl(char c) {
    const auto u = static_cast<unsigned char>(c);
    return u < 0x20 || u == 0x7f;
}

std::string escape(char c) {
    switch (c) {
    case '\n':
        return "\\n";
    case '\r':
        return "\\r";
    case '\t':
        return "\\t";
    default: {
        char buf[8];
        std::snprintf(buf, sizeof buf, "\\x%02x", unsigned(static_cast<unsigned char>(c)));
        return buf;
    }
    }
}

} // namespace

std::optional<size_t> firstControlChar(std::string_view s) {
    for (size_t i = 0; i < s.size(); ++i)
        if (isControl(s[i])) return i;
    return std::nullopt;
}

std::string printable(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    for (char c : s) {
        if (isControl(c))
            out += escape(c);
        else
            out.push_back(c);
    }
    return out;
}

std::string describeControlChar(char c) {
    switch (c) {
    case '\n':
    case '\r':
        return "a line break (" + escape(c) + ")";
    case '\t':
        return "a tab (\\t)";
    default:
        return "the control character " + escape(c);
    }
}

std::string csvField(std::string_view s) {
    std::string text = printable(s);
    if (!text.empty() && (text[0] == '=' || text[0] == '+' || text[0] == '-' || text[0] == '@'))
        text.insert(text.begin(), '\'');
    if (text.find_first_of(",\"'") == std::string::npos) return text; // a plain name stays as it is
    std::string out = "\"";
    for (char c : text) {
        if (c == '"') out += '"';
        out += c;
    }
    return out + "\"";
}

} // namespace sp
