#pragma once
// A small command-line parser: --flag, --option VALUE (or --option=VALUE), positionals.

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace sp::cli {

class Args {
public:
    /// flags: options without a value; options: options with one value; repeatable options collect every
    /// value.
    Args(std::vector<std::string> argv, std::set<std::string> flags, std::set<std::string> options);
    bool ok() const { return m_error.empty(); }
    const std::string& error() const { return m_error; }
    bool flag(const std::string& name) const { return m_flags.count(name) > 0; }
    std::optional<std::string> option(const std::string& name) const;
    std::vector<std::string> all(const std::string& name) const;
    const std::vector<std::string>& positionals() const { return m_positionals; }
    /// An integer option; sets error() when it is not one or lies outside the option's range (args.cpp).
    std::optional<long long> integer(const std::string& name);
    /// A finite number within the option's range; sets error() otherwise.
    std::optional<double> number(const std::string& name);

private:
    std::set<std::string> m_flags;
    std::multimap<std::string, std::string> m_options;
    std::vector<std::string> m_positionals;
    std::string m_error;
};

} // namespace sp::cli
