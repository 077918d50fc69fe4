#pragma once
// Text from input files on its way to places where a control character would change what is shown or run:
// a shell script's comments, a terminal, a one-line label.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace sp {

/// The offset of the first ASCII control character (0x00-0x1f, 0x7f) in `s`, if any.
std::optional<size_t> firstControlChar(std::string_view s);

/// What must not be in a one-line text field, found at `offset` (bytes) and `length` bytes long.
struct TextFault {
    size_t offset = 0;
    size_t length = 1;
    std::string what; ///< "a line break (\n)", "the line separator U+2028", "a byte that is not UTF-8 (\xff)"
};

/// The first thing in `s` that a one-line text field must not hold: an ASCII control character, bytes that
/// are not UTF-8 (RFC 3629: no overlong forms, no surrogates, nothing past U+10FFFF), a C1 control
/// (U+0080-U+009F, NEL U+0085 among them), a line or paragraph separator (U+2028, U+2029: Unicode's
/// categories Zl and Zp), or a bidirectional override (U+202A-U+202E, U+2066-U+2069, "Trojan Source",
/// CVE-2021-42574). YAML 1.1 parsers (libyaml and its ports: PyYAML, and go-yaml, which kubectl uses) take
/// NEL, U+2028 and U+2029 as line breaks (YAML 1.1 spec, 5.4 "Line Break Characters"), so any of them in an
/// exported manifest's block would end it.
std::optional<TextFault> firstUnsafeText(std::string_view s);

/// Whether `s` is UTF-8 (RFC 3629), as JSON text must be (RFC 8259, section 8.1).
bool isUtf8(std::string_view s);

/// `s` on one line with its control characters written as C escapes (`\n`, `\t`, `\x1b`), the other faults
/// firstUnsafeText finds as `\u2028` or `\xff`, so that what is shown is what the text holds and nothing it
/// holds ends a line.
std::string printable(std::string_view s);

/// `v` formatted by printf's `format` (one double conversion: "%.1f", "%.3g"), for figures in sentences.
std::string formatDouble(const char* format, double v);

/// A sentence with figures built by std::to_chars, a fraction of snprintf's cost (the cost model words the
/// reason of every infeasible plan it evaluates, thousands a second): Fixed{v, 1} writes as printf's "%.1f",
/// General{v, 3} as "%.3g", an integer as "%lld" (to_chars is specified as printf in the "C" locale).
struct Fixed {
    double v;
    int precision;
};
struct General {
    double v;
    int precision;
};
class Sentence {
public:
    Sentence() { out_.reserve(160); }
    Sentence& operator<<(std::string_view s) {
        out_.append(s);
        return *this;
    }
    Sentence& operator<<(Fixed f);
    Sentence& operator<<(General g);
    Sentence& operator<<(long long n);
    std::string take() { return std::move(out_); } ///< the sentence (the builder is left empty)

private:
    std::string out_;
};

/// "a line break (\n)", "a tab (\t)", "the control character \x1b": for error messages.
std::string describeControlChar(char c);

/// `s` as one CSV field (RFC 4180): control characters escaped, quoted (inner quotes doubled) when it holds a
/// comma, quote or apostrophe; a field that a spreadsheet would run as a formula (it starts with =, +, -, @)
/// gets a leading apostrophe, as OWASP's "CSV Injection" page advises, so a file named "=1+2" is shown,
/// never computed. A plain name is written as it is.
std::string csvField(std::string_view s);

} // namespace sp
