#pragma once
// What why.cpp and why_model.cpp share: formatting and the step by kind (core/analysis/why.h).

#include "core/analysis/why.h"
#include "core/common/text.h"

#include <string>
#include <vector>

namespace sp::why {

/// "92.36 ms": four significant figures.
std::string ms(double v);
/// A factor of 1 to the four figures ratioText prints: the why does not name it.
bool unit(double factor);
/// The breakdown of the phase whose step sets the throughput: prefill's in a prefill workload, else decode's.
const Breakdown& settingBreakdown(const Scenario& s, const Evaluation& e);
/// Each plan's step by kind (Why::step): pp turns of the slowest stage's rows, "pipeline" the rest of stepMs.
std::vector<WhyStepPart> stepKinds(const Breakdown& a, int ppA, double stepA, const Breakdown& b, int ppB,
                                   double stepB);
/// "network collectives 13.3 ms less, memory 11.1 ms more": the `most` parts that moved most (by more than
/// 1% of stepMs), the largest first.
std::string partsMoved(const std::vector<WhyStepPart>& parts, double stepMs, size_t most);

} // namespace sp::why
