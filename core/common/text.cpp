#include "core/common/text.h"

#include <charconv>

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

namespace {

// One UTF-8 sequence at s[i]: its code point and length, or length 0 where the bytes are not UTF-8 (RFC 3629,
// section 4's grammar: no overlong forms, no surrogates U+D800-U+DFFF, nothing past U+10FFFF).
struct Decoded {
    char32_t cp = 0;
    size_t length = 0;
};

Decoded decodeUtf8(std::string_view s, size_t i) {
    const auto b = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
    const unsigned char c = b(i);
    if (c < 0x80) return {c, 1};
    size_t n = 0;
    char32_t cp = 0;
    unsigned char lo = 0x80, hi = 0xbf; // the second byte's range (RFC 3629's UTF8-3 and UTF8-4 rules)
    if (c >= 0xc2 && c <= 0xdf) {
        n = 2, cp = c & 0x1f;
    } else if (c >= 0xe0 && c <= 0xef) {
        n = 3, cp = c & 0x0f;
        if (c == 0xe0) lo = 0xa0;
        if (c == 0xed) hi = 0x9f;
    } else if (c >= 0xf0 && c <= 0xf4) {
        n = 4, cp = c & 0x07;
        if (c == 0xf0) lo = 0x90;
        if (c == 0xf4) hi = 0x8f;
    } else {
        return {};
    }
    if (i + n > s.size()) return {};
    for (size_t k = 1; k < n; ++k) {
        const unsigned char t = b(i + k);
        if (t < (k == 1 ? lo : 0x80) || t > (k == 1 ? hi : 0xbf)) return {};
        cp = (cp << 6) | (t & 0x3f);
    }
    return {cp, n};
}

// Non-ASCII code points a one-line text field refuses, with their names for the message.
const char* unsafeCodePoint(char32_t cp) {
    if (cp == 0x85) return "the next-line control NEL U+0085";
    if (cp >= 0x80 && cp <= 0x9f) return "a C1 control character";
    if (cp == 0x2028) return "the line separator U+2028";
    if (cp == 0x2029) return "the paragraph separator U+2029";
    if ((cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069)) return "a bidirectional override";
    return nullptr;
}

std::string hexCodePoint(char32_t cp) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "\\u%04x", unsigned(cp));
    return buf;
}

} // namespace

std::optional<TextFault> firstUnsafeText(std::string_view s) {
    for (size_t i = 0; i < s.size();) {
        if (isControl(s[i])) return TextFault{i, 1, describeControlChar(s[i])};
        const Decoded d = decodeUtf8(s, i);
        if (d.length == 0) return TextFault{i, 1, "a byte that is not UTF-8 (" + escape(s[i]) + ")"};
        if (const char* what = unsafeCodePoint(d.cp)) {
            std::string w = what;
            if (w.find("U+") == std::string::npos) w += " (" + hexCodePoint(d.cp) + ")";
            return TextFault{i, d.length, w};
        }
        i += d.length;
    }
    return std::nullopt;
}

bool isUtf8(std::string_view s) {
    for (size_t i = 0; i < s.size();) {
        const size_t n = decodeUtf8(s, i).length;
        if (n == 0) return false;
        i += n;
    }
    return true;
}

std::string printable(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    for (size_t i = 0; i < s.size();) {
        if (isControl(s[i])) {
            out += escape(s[i++]);
            continue;
        }
        const Decoded d = decodeUtf8(s, i);
        if (d.length == 0) {
            out += escape(s[i++]);
        } else if (unsafeCodePoint(d.cp)) {
            out += hexCodePoint(d.cp);
            i += d.length;
        } else {
            out.append(s.substr(i, d.length));
            i += d.length;
        }
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

Sentence& Sentence::operator<<(Fixed f) {
    char buf[400]; // %.1f of the largest double is 310 characters
    const auto r = std::to_chars(buf, buf + sizeof buf, f.v, std::chars_format::fixed, f.precision);
    out_.append(buf, r.ec == std::errc() ? r.ptr : buf);
    return *this;
}

Sentence& Sentence::operator<<(General g) {
    char buf[64];
    const auto r = std::to_chars(buf, buf + sizeof buf, g.v, std::chars_format::general, g.precision);
    out_.append(buf, r.ec == std::errc() ? r.ptr : buf);
    return *this;
}

Sentence& Sentence::operator<<(long long n) {
    char buf[24];
    const auto r = std::to_chars(buf, buf + sizeof buf, n);
    out_.append(buf, r.ptr);
    return *this;
}

std::string formatDouble(const char* format, double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, format, v);
    return buf;
}

} // namespace sp
