#pragma once
// Every verb's options in one table: the parser of each verb is built from it (parseArgs) and its help is
// generated from it (`help VERB`, `VERB --help`, the usage shown after a usage error, the command list), so
// the help cannot drift from what a verb accepts.

#include "args.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sp::cli {

/// One option of a verb: its name without the dashes, the placeholder of its value (empty: a flag without
/// one) and a line of help.
struct OptionSpec {
    const char* name;
    const char* value;
    const char* help;
};

struct VerbSpec {
    /// The verb as typed: "search", or "bench --eval-speed" for a mode parsed on its own.
    const char* name;
    /// The forms of the command line after "shardplan ", one a line (continuation lines start with spaces).
    std::vector<const char*> synopsis;
    /// What it does, a few lines of at most 60 characters.
    const char* summary;
    std::vector<OptionSpec> options;
    /// Lines after the options (defaults, what a FILE may be); empty: none.
    const char* notes = "";
};

const std::vector<VerbSpec>& verbs();
/// The verb of that name (see VerbSpec::name); throws std::logic_error for an unknown one.
const VerbSpec& verb(std::string_view name);

/// The parser of a verb: exactly the options of its table.
Args parseArgs(const std::vector<std::string>& argv, const VerbSpec& v);
/// How most verbs start: their options parsed against their table, no positional argument, --scenario given.
/// `exit` is set, with the usage error printed, when one of those fails.
struct ScenarioVerb {
    Args args;
    std::string usage;
    std::optional<std::string> scenario;
    std::optional<int> exit;
};
ScenarioVerb startScenarioVerb(const std::vector<std::string>& argv, std::string_view name);
/// "shardplan search --scenario S ...\n       shardplan search ...": the synopsis, its second and later lines
/// indented to follow "usage: " (indent 7) or another prefix.
std::string synopsisText(const VerbSpec& v, int indent = 7);
/// `help VERB`: the synopsis of every form of the verb ("bench" has several), what it does, and each option
/// with its help. Empty when no verb has that name.
std::string verbHelp(std::string_view name);
/// `shardplan --help`: every verb's synopsis and summary.
std::string programUsage();

} // namespace sp::cli
