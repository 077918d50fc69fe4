#pragma once
// Request traces for the simulation: one request a row, its arrival time, prompt tokens and output tokens.
//
//  - CSV with a header row naming the columns (any order, other columns ignored, names case-insensitive):
//    arrival as `arrival_s`, `arrival`, `time` or `timestamp`; prompt as `input_tokens`, `prompt_tokens` or
//    `ContextTokens`; output as `output_tokens`, `completion_tokens` or `GeneratedTokens`. That is the layout
//    of the public Azure LLM inference traces (github.com/Azure/AzurePublicDataset, AzureLLMInferenceTrace_
//    {code,conv}.csv: `TIMESTAMP,ContextTokens,GeneratedTokens`).
//  - JSON Lines: one object a line with the same names as keys (blank lines skipped).
// An arrival is seconds (a number) or a date and time `YYYY-MM-DD HH:MM:SS[.fraction]` (the Azure traces');
// either way the trace starts at its earliest arrival. Rows may come in any order; they are sorted by arrival
// (ties keep their order). Errors say file:line:column and the field.

#include "core/common/error.h"
#include "core/sim/simulator.h"

#include <string>
#include <vector>

namespace sp {

Result<std::vector<TraceRequest>> parseTrace(const std::string& text, const std::string& file);
/// A trace file (at most 64 MiB, as every input).
Result<std::vector<TraceRequest>> loadTrace(const std::string& path);

} // namespace sp
