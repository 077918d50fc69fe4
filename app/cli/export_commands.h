#pragma once
#include <string>
#include <vector>

namespace sp::cli {

/// shardplan export --scenario S (--plan P | --searcher NAME [--budget N] [--seed K])
///                  (--format json|yaml | --engine E [...]) [--out F | --out-dir DIR]
int cmdExport(const std::vector<std::string>& argv);

} // namespace sp::cli
