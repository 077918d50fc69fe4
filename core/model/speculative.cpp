#include "core/model/speculative.h"

#include <algorithm>

namespace sp {

std::optional<SpecMethod> specMethodFromName(std::string_view s) {
    const auto it = std::find(kSpecMethodNames.begin(), kSpecMethodNames.end(), s);
    if (it == kSpecMethodNames.end()) return std::nullopt;
    return SpecMethod(it - kSpecMethodNames.begin());
}

std::string specText(const Speculative& s) {
    if (!s.on()) return "none";
    return std::string(nameOf(s.method)) + " x" + std::to_string(s.draftTokens);
}

double tokensPerStep(const std::vector<double>& rates, int k) {
    double e = 1.0, run = 1.0;
    for (int i = 0; i < k && i < int(rates.size()); ++i) {
        run *= rates[size_t(i)];
        e += run;
    }
    return e;
}

} // namespace sp

#include "core/model/scenario.h"

namespace sp {

bool specMethodAvailable(const Model& m, SpecMethod method) {
    switch (method) {
    case SpecMethod::Mtp:
        return m.mtpLayers > 0;
    case SpecMethod::Eagle3:
        return m.spec.eagle3.present();
    case SpecMethod::Draft:
        return m.spec.draft.present();
    case SpecMethod::Ngram:
        return true;
    default:
        return false;
    }
}

const std::vector<double>& acceptanceRates(const Scenario& s, SpecMethod method) {
    const auto& w = s.workload.acceptance[size_t(method)];
    return w.empty() ? s.model.spec.acceptance[size_t(method)] : w;
}

std::optional<std::string> checkSpeculative(const Scenario& s, const Speculative& spec) {
    if (!spec.on()) return std::nullopt;
    const std::string name(nameOf(spec.method));
    if (spec.draftTokens > kMaxDraftTokens)
        return "speculative decoding: " + std::to_string(spec.draftTokens) + " draft tokens, at most " +
               std::to_string(kMaxDraftTokens);
    if (s.workload.phase == Phase::Prefill)
        return "speculative decoding applies to decode and serving workloads, not to a prefill-only one";
    if (!specMethodAvailable(s.model, spec.method)) {
        const char* what = spec.method == SpecMethod::Mtp      ? "no MTP modules (mtp_layers)"
                           : spec.method == SpecMethod::Eagle3 ? "no EAGLE-3 head (speculative.eagle3)"
                                                               : "no draft model (speculative.draft)";
        return "speculative decoding " + name + ": the model " + s.model.name + " has " + what;
    }
    const auto& rates = acceptanceRates(s, spec.method);
    if (rates.empty())
        return "speculative decoding " + name +
               ": no acceptance rates (give the workload acceptance_rates, or the model a cited default)";
    if (int(rates.size()) < spec.draftTokens)
        return "speculative decoding " + name + " with " + std::to_string(spec.draftTokens) +
               " draft tokens needs " + std::to_string(spec.draftTokens) + " acceptance rates, " +
               std::to_string(rates.size()) + " given";
    return std::nullopt;
}

std::vector<Speculative> speculativeOptions(const Scenario& s) {
    std::vector<Speculative> out;
    const Constraints& c = s.constraints;
    if (s.workload.phase == Phase::Prefill || c.specPolicy == Constraints::SpecPolicy::Off) return out;
    if (c.specPolicy == Constraints::SpecPolicy::Pinned) {
        if (c.specPin.on() && !checkSpeculative(s, c.specPin)) out.push_back(c.specPin);
        return out;
    }
    for (int m = 1; m < kSpecMethodCount; ++m) {
        const SpecMethod method = SpecMethod(m);
        if (!specMethodAvailable(s.model, method)) continue;
        const int n = std::min(int(acceptanceRates(s, method).size()), kMaxDraftTokens);
        for (int k = 1; k <= n; ++k) out.push_back({method, k});
    }
    return out;
}

} // namespace sp
