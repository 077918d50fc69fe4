#pragma once
// Error values for bad input: where (file, line, column, field) and what was expected.

#include <optional>
#include <stdexcept>
#include <string>
#include <utility>

namespace sp {

/// Where and what went wrong in an input. line/column are 1-based; 0 means unknown.
struct Error {
    std::string file;
    int line = 0;
    int column = 0;
    std::string field;   ///< dotted path of the field, e.g. "attention.heads"; empty for syntax errors
    std::string message; ///< what was expected

    /// "file:line:column: field: message", leaving out the parts that are unknown.
    std::string str() const;
};

/// Thrown inside the readers and the cost model; caught at every public entry point.
class InputError : public std::runtime_error {
public:
    explicit InputError(Error e) : std::runtime_error(e.str()), m_error(std::move(e)) {}
    const Error& error() const { return m_error; }

private:
    Error m_error;
};

/// A value or an Error.
template <class T> class Result {
public:
    Result(T v) : m_value(std::move(v)) {}
    Result(Error e) : m_error(std::move(e)) {}
    bool ok() const { return m_value.has_value(); }
    explicit operator bool() const { return ok(); }
    const T& value() const& { return *m_value; }
    T& value() & { return *m_value; }
    T&& value() && { return std::move(*m_value); }
    const T* operator->() const { return &*m_value; }
    const T& operator*() const { return *m_value; }
    const Error& error() const { return m_error; }

private:
    std::optional<T> m_value;
    Error m_error;
};

} // namespace sp
