#include "args.h"

#include <cstdlib>

namespace sp::cli {

Args::Args(std::vector<std::string> argv, std::set<std::string> flags, std::set<std::string> options) {
    for (size_t i = 0; i < argv.size(); ++i) {
        const std::string& a = argv[i];
        if (a.rfind("--", 0) != 0 || a == "--") {
            m_positionals.push_back(a);
            continue;
        }
        std::string name = a.substr(2), value;
        const auto eq = name.find('=');
        const bool inlineValue = eq != std::string::npos;
        if (inlineValue) value = name.substr(eq + 1), name = name.substr(0, eq);
        if (flags.count(name)) {
            if (inlineValue) m_error = "--" + name + " takes no value";
            m_flags.insert(name);
        } else if (options.count(name)) {
            if (!inlineValue) {
                if (i + 1 >= argv.size()) {
                    m_error = "--" + name + " needs a value";
                    return;
                }
                value = argv[++i];
            }
            m_options.emplace(name, value);
        } else {
            m_error = "unknown option --" + name;
            return;
        }
    }
}

std::optional<std::string> Args::option(const std::string& name) const {
    auto it = m_options.find(name);
    if (it == m_options.end()) return std::nullopt;
    return it->second;
}

std::vector<std::string> Args::all(const std::string& name) const {
    std::vector<std::string> out;
    auto [b, e] = m_options.equal_range(name);
    for (auto it = b; it != e; ++it) out.push_back(it->second);
    return out;
}

std::optional<long long> Args::integer(const std::string& name) {
    auto v = option(name);
    if (!v) return std::nullopt;
    char* end = nullptr;
    const long long x = std::strtoll(v->c_str(), &end, 10);
    if (v->empty() || *end != '\0') {
        m_error = "--" + name + " expects an integer, got '" + *v + "'";
        return std::nullopt;
    }
    return x;
}

std::optional<double> Args::number(const std::string& name) {
    auto v = option(name);
    if (!v) return std::nullopt;
    char* end = nullptr;
    const double x = std::strtod(v->c_str(), &end);
    if (v->empty() || *end != '\0') {
        m_error = "--" + name + " expects a number, got '" + *v + "'";
        return std::nullopt;
    }
    return x;
}

} // namespace sp::cli
