#pragma once
// Internal: the Hugging Face config.json import and the local Hugging Face cache lookup of a Hub id.

#include "core/io/reader.h"
#include "core/model/model.h"

#include <optional>
#include <string>
#include <vector>

namespace sp::io {

/// A config.json: it names its architectures or its model_type.
bool isHfConfig(const YAML::Node& n);

/// Reads a config.json (and a ModelOpt hf_quant_config.json beside it, when there is one). The caller checks
/// the result (the same cross-field checks as a model file).
Model readHfModel(const MapReader& r);

/// The architectures a config.json may name.
const std::vector<std::string_view>& hfArchitectures();

/// "ORG/NAME" with one slash and no path-like parts: a Hugging Face Hub repository id.
bool looksLikeHubId(const std::string& s);

/// The Hugging Face cache folders searched for a Hub id, in order: $HF_HUB_CACHE, $HF_HOME/hub,
/// $XDG_CACHE_HOME/huggingface/hub, ~/.cache/huggingface/hub (huggingface_hub's constants.py, v0.34).
std::vector<std::string> hfCacheDirs();

/// The config.json of a Hub id in the local cache (models--ORG--NAME/snapshots/<rev>/config.json; the
/// snapshot that refs/main names when there is one, else the newest). Never the network. nullopt: not cached;
/// `searched` gets the folders looked in.
std::optional<std::string> findCachedConfig(const std::string& hubId,
                                            std::vector<std::string>* searched = nullptr);

} // namespace sp::io
