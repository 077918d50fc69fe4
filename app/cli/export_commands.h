#pragma once
#include <string>
#include <vector>

namespace sp::cli {

/// One option of a verb: its name without the dashes, the placeholder of its value (empty: a flag without
/// one) and a line of help.
struct OptionSpec {
    const char* name;
    const char* value;
    const char* help;
};

/// The option lines of a verb's usage entry, one per option of the table: "         --name VALUE   help".
std::string optionLines(const std::vector<OptionSpec>& table);

/// export's options: the table the parser is built from and the help is generated from, so they cannot
/// drift apart.
const std::vector<OptionSpec>& exportOptions();
/// export's entry in shardplan's usage text (`help export`, `export --help`), from exportOptions().
std::string exportUsage();

/// shardplan export --scenario S (--plan P | --searcher NAME [--budget N] [--seed K])
///                  (--format json|yaml | --engine E [...]) [--out F | --out-dir DIR]
int cmdExport(const std::vector<std::string>& argv);

} // namespace sp::cli
