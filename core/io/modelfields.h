#pragma once
// Internal: the model-file fields of the newer architectures (attention variants, quantization), read and
// written apart from formats.cpp.

#include "core/io/reader.h"
#include "core/model/cluster.h"
#include "core/model/model.h"
#include "core/model/workload.h"

#include <yaml-cpp/yaml.h>

namespace sp::io {

/// The optional attention keys: qk_norm, output_gate, sinks, rotary_fraction, sliding_window, chunk_size,
/// indexer, linear.
void readAttentionExtras(const MapReader& at, Attention& a);
/// MLA's ranks and head dimensions (q_lora_rank, kv_lora_rank, qk_nope_head_dim, qk_rope_head_dim,
/// v_head_dim), spelled alike in model files and Hugging Face configs.
void readMlaDims(const MapReader& r, MlaDims& mla);
void emitAttentionExtras(YAML::Emitter& e, const Attention& a);

/// A model file's `quantization:` mapping.
Quantization readQuantization(const MapReader& q);
void emitQuantization(YAML::Emitter& e, const Quantization& q);

/// An `efficiency:` mapping (cluster files, the GPU database's families): each factor given replaces the
/// one in `base`.
Efficiency readEfficiency(const MapReader& e, const Efficiency& base);

/// A model file's `speculative:` mapping: per method (mtp, eagle3, draft, ngram) its cited default
/// acceptance_rates, and for eagle3 and draft the module's dimensions.
SpecSupport readSpecSupport(const MapReader& r);
void emitSpecSupport(YAML::Emitter& e, const SpecSupport& s);
/// A plan's or constraints' `speculative: {method: mtp, draft_tokens: 3}`.
Speculative readSpeculative(const MapReader& r);
/// Acceptance rates: a list of probabilities in (0, 1], at most kMaxDraftTokens of them.
std::vector<double> readAcceptanceRates(const MapReader& r, std::string_view key);

/// A request length (a workload's input_tokens or output_tokens): a whole number of tokens (every request
/// alike), or how the simulation draws it, {distribution: uniform, min, max}, {distribution: lognormal, mean,
/// cv[, min][, max]} or {distribution: histogram, bins: [[lo, hi, weight], ...]}. `tokens` receives the
/// number, or the distribution's mean rounded (what the analytical model prices).
LengthDist readLength(const MapReader& r, std::string_view key, int64_t& tokens);
/// The length as readLength reads it: the number for LengthDist::Kind::Fixed, else the distribution.
void emitLength(YAML::Emitter& e, const LengthDist& d, int64_t tokens);

} // namespace sp::io
