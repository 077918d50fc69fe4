// Shell text: arguments quoted for a POSIX shell, commands one option a line, the node scripts, and a
// launch's commands with its files as here-documents.
#include "core/export/common.h"

#include "core/common/text.h"

#include <algorithm>
#include <stdexcept>

namespace sp {

using namespace exporting;

namespace {

bool isSafeShellChar(char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
           std::string_view("@%+=:,./_-").find(c) != std::string_view::npos;
}

bool isNameChar(char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
}

/// An environment variable's name as the scripts write it. The names are the exporters' own constants
/// (NODE_RANK, SGLANG_PP_LAYER_PARTITION); one that is not a shell name is a defect, and stopping here keeps
/// it out of a script, where it would be shell syntax.
const std::string& shellName(const std::string& name) {
    if (name.empty() || (name[0] >= '0' && name[0] <= '9') ||
        !std::all_of(name.begin(), name.end(), isNameChar))
        throw std::logic_error("not a shell variable name: '" + printable(name) + "'");
    return name;
}

/// A here-document's end marker that no line of `content` equals (EOF, else EOF_1, EOF_2, ...): a file
/// whose text held a line "EOF" would otherwise end the here-document there and run the rest.
std::string hereDocEnd(const std::string& content) {
    const auto hasLine = [&content](const std::string& line) {
        for (size_t at = 0; at <= content.size();) {
            const size_t nl = std::min(content.find('\n', at), content.size());
            if (content.compare(at, nl - at, line) == 0 && nl - at == line.size()) return true;
            at = nl + 1;
        }
        return false;
    };
    std::string end = "EOF";
    for (int k = 1; hasLine(end); ++k) end = "EOF_" + std::to_string(k);
    return end;
}

} // namespace

std::string shellQuote(const std::string& arg) {
    if (arg.empty()) return "''";
    if (std::all_of(arg.begin(), arg.end(), isSafeShellChar)) return arg;
    // Safe characters and ${NAME} placeholders only: double quotes, so the shell expands the placeholders.
    bool placeholders = false, plain = true;
    for (size_t i = 0; i < arg.size() && plain;) {
        if (isSafeShellChar(arg[i])) {
            ++i;
            continue;
        }
        size_t j = i + 2;
        if (arg.compare(i, 2, "${") == 0) {
            while (j < arg.size() && isNameChar(arg[j])) ++j;
            if (j < arg.size() && arg[j] == '}' && j > i + 2) {
                placeholders = true;
                i = j + 1;
                continue;
            }
        }
        plain = false;
    }
    if (plain && placeholders) return "\"" + arg + "\"";
    std::string out = "'";
    for (char ch : arg) out += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
    return out + "'";
}

namespace exporting {

std::string commandText(const std::vector<std::string>& argv) {
    std::string out;
    size_t i = 0;
    auto isOption = [&argv](size_t k) { return argv[k].rfind("--", 0) == 0; };
    // (appends rather than `"..." + std::string`, which GCC 12 misreports under -Wrestrict)
    for (; i < argv.size() && !isOption(i); ++i) out.append(i ? " " : "").append(shellQuote(argv[i]));
    while (i < argv.size()) {
        out.append(out.empty() ? "" : " \\\n    ").append(shellQuote(argv[i++]));
        for (; i < argv.size() && !isOption(i); ++i) out.append(" ").append(shellQuote(argv[i]));
    }
    return out + "\n";
}

std::string nodeScript(const std::string& header, const NodeLaunch& node) {
    std::string t = "#!/bin/sh\n" + commentLines(header) + "set -e\ncd \"$(dirname \"$0\")\"\n";
    for (const auto& [name, value] : node.env) {
        if (value.empty())
            t += ": \"${" + shellName(name) + ":?set " + shellName(name) + " (see NOTES.txt)}\"\n";
        else
            t += "export " + shellName(name) + "=" + shellQuote(value) + "\n";
    }
    if (!node.comment.empty())
        t += commentLines(node.comment);
    else if (node.commands.empty())
        t += "# nothing to start here: see NOTES.txt\n";
    for (size_t i = 0; i < node.commands.size(); ++i) {
        std::string cmd = commandText(node.commands[i]);
        cmd.pop_back();
        if (i < node.background)
            t += cmd + " &\n";
        else
            t += (i + 1 == node.commands.size() && node.background == 0 ? "exec " : "") + cmd + "\n";
    }
    if (node.background > 0) t += "wait\n";
    return t;
}

} // namespace exporting

std::string LaunchCommand::text() const {
    std::string out;
    // The files the commands read, as here-documents that write them.
    for (const auto& [name, content] : files) {
        const std::string end = hereDocEnd(content);
        out += "cat > " + shellQuote(name) + " <<'" + end + "'\n" + content +
               (content.empty() || content.back() == '\n' ? "" : "\n") + end + "\n\n";
    }
    // The environment every node sets alike (the layer partition), before the commands; per-node values
    // (NODE_RANK) and those the user sets (HEAD_NODE_IP) stay in the scripts and the notes.
    if (!nodes.empty())
        for (const auto& [name, value] : nodes[0].env) {
            if (value.empty()) continue;
            bool everywhere = true;
            for (const NodeLaunch& node : nodes)
                if (!node.commands.empty())
                    everywhere = everywhere && std::find(node.env.begin(), node.env.end(),
                                                         std::pair<std::string, std::string>(name, value)) !=
                                                   node.env.end();
            if (everywhere) out += "export " + shellName(name) + "=" + shellQuote(value) + "\n";
        }
    // Node 0's other commands (Ray's head, Dynamo's frontend) before the engine's.
    if (!nodes.empty())
        for (const auto& cmd : nodes[0].commands)
            if (cmd != argv) out += commandText(cmd) + "\n";
    out += commandText(argv);
    for (const auto& note : notes) out += commentLines(note);
    return out;
}

std::string LaunchCommand::notesText() const {
    std::string out;
    for (const auto& note : notes) out += note + "\n\n";
    return out;
}

std::vector<std::pair<std::string, std::string>> LaunchCommand::scripts() const {
    std::vector<std::pair<std::string, std::string>> out;
    for (size_t k = 0; k < nodes.size(); ++k)
        out.emplace_back("node" + str(int64_t(k)) + ".sh",
                         nodeScript(std::string(nameOf(engine)) + " " + version + ": node " +
                                        str(int64_t(k)) + " of " + str(int64_t(nodes.size())) +
                                        " (see NOTES.txt)",
                                    nodes[k]));
    return out;
}

} // namespace sp
