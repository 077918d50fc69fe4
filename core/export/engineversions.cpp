// The engine registry: the serving engines by name, and each engine's version table (the rows are in
// vllm.cpp, sglang.cpp, trtllm.cpp and dynamo.cpp), looked up by version.
#include "core/export/common.h"

#include <array>

namespace sp {

using namespace exporting;

std::string EngineVersion::specMethodName(SpecMethod method, const std::string& architecture) const {
    // Each engine's spelling is cited at its rows (vllm.cpp, sglang.cpp, trtllm.cpp).
    const int e = engine == ServingEngine::Vllm ? 0 : engine == ServingEngine::Sglang ? 1 : 2;
    switch (method) {
    case SpecMethod::Mtp:
        for (const auto& [arch, name] : mtpArchitectures)
            if (arch == architecture) return name;
        return {};
    case SpecMethod::Eagle3:
        return eagle3 ? std::array{"eagle3", "EAGLE3", "Eagle3"}[size_t(e)] : "";
    case SpecMethod::Draft:
        return draftModel ? std::array{"draft_model", "STANDALONE", "Draft_Target"}[size_t(e)] : "";
    case SpecMethod::Ngram:
        return ngram ? std::array{"ngram", "NGRAM", "NGram"}[size_t(e)] : "";
    default:
        return {};
    }
}

std::string_view nameOf(ServingEngine e) {
    switch (e) {
    case ServingEngine::Vllm:
        return "vllm";
    case ServingEngine::Sglang:
        return "sglang";
    case ServingEngine::Trtllm:
        return "trtllm";
    case ServingEngine::Dynamo:
        return "dynamo";
    }
    return "vllm";
}

std::optional<ServingEngine> servingEngineFromName(std::string_view s) {
    for (ServingEngine e : servingEngines())
        if (s == nameOf(e)) return e;
    return std::nullopt;
}

const std::vector<ServingEngine>& servingEngines() {
    static const std::vector<ServingEngine> all{ServingEngine::Vllm, ServingEngine::Sglang,
                                                ServingEngine::Trtllm, ServingEngine::Dynamo};
    return all;
}

const std::vector<EngineVersion>& engineVersions(ServingEngine e) {
    switch (e) {
    case ServingEngine::Sglang:
        return sglangVersions();
    case ServingEngine::Trtllm:
        return trtllmVersions();
    case ServingEngine::Dynamo:
        return dynamoVersions();
    default:
        return vllmVersions();
    }
}

std::string knownVersionsText(ServingEngine e) {
    std::vector<std::string> v;
    for (const auto& row : engineVersions(e)) v.push_back(row.version);
    return joined(v, ", ");
}

Result<EngineVersion> findEngineVersion(ServingEngine e, std::string_view version) {
    const auto& rows = engineVersions(e);
    if (version.empty()) return rows.back();
    for (const auto& row : rows)
        if (row.version == version) return row;
    return Error{"", 0, 0, "engine-version",
                 "unknown " + std::string(nameOf(e)) + " version '" + std::string(version) +
                     "' (known: " + knownVersionsText(e) + ")"};
}

} // namespace sp
