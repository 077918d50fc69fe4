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

/// `s` on one line with its control characters written as C escapes (`\n`, `\t`, `\x1b`), so that what
/// is shown is what the text holds and nothing it holds ends a line.
std::string printable(std::string_view s);

/// "a line break (\n)", "a tab (\t)", "the control character \x1b": for error messages.
std::string describeControlChar(char c);

/// `s` as one CSV field (RFC 4180): control characters escaped, quoted (inner quotes doubled) when it holds a
/// comma, quote or apostrophe; a field that a spreadsheet would run as a formula (it starts with =, +, -, @)
/// gets a leading apostrophe, as OWASP's "CSV Injection" page advises, so a file named "=1+2" is shown,
/// never computed. A plain name is written as it is.
std::string csvField(std::string_view s);

} // namespace sp
