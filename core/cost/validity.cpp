#include "core/cost/validity.h"

namespace sp {

namespace {
std::string str(int64_t v) {
    return std::to_string(v);
}
} // namespace

bool opRelevant(const Model& m, Op op) {
    switch (op) {
    case Op::FfnUp:
    case Op::FfnDown:
        return m.denseLayers() > 0;
    case Op::Norms:
    case Op::Qkv:
    case Op::Attention:
    case Op::OutProj:
        return m.denseLayers() > 0;
    case Op::Router:
    case Op::Experts:
    case Op::MoeNorms:
    case Op::MoeQkv:
    case Op::MoeAttention:
    case Op::MoeOutProj:
        return m.moeLayers() > 0;
    case Op::SharedExperts:
        return m.moeLayers() > 0 && m.moe.sharedExperts > 0;
    default:
        return true;
    }
}

std::optional<std::string> checkDegrees(const Scenario& s, const Degrees& d, int expertsChoice) {
    const int gpus = s.gpus();
    for (int a = 0; a < kAxisCount; ++a)
        if (d.get(Axis(a)) < 1) return std::string(kAxisNames[a]) + " must be at least 1";
    if (int64_t(d.pp) * d.dp * d.tp != gpus)
        return "pp*dp*tp = " + str(int64_t(d.pp) * d.dp * d.tp) + " does not match the " + str(gpus) +
               " GPUs";
    if (d.pp > s.model.layers)
        return "pp (" + str(d.pp) + ") exceeds the model's " + str(s.model.layers) + " layers";
    for (Axis a : {Axis::PP, Axis::DP, Axis::TP})
        if (!s.constraints.allows(a, d.get(a)))
            return std::string(kAxisNames[int(a)]) + " = " + str(d.get(a)) +
                   " is not among the allowed degrees";
    if (!s.model.moe.present()) return std::nullopt;
    if (int64_t(d.ep) * d.etp * d.edp != int64_t(d.dp) * d.tp)
        return "ep*etp*edp = " + str(int64_t(d.ep) * d.etp * d.edp) +
               " must equal dp*tp = " + str(int64_t(d.dp) * d.tp);
    // ep need not divide the experts: the busiest GPUs then hold ceil(E/ep) of them (serving engines fill the
    // gap with redundant experts, e.g. SGLang's 288 = 256 + 32 slots on 96 GPUs for DeepSeek-V3).
    if (d.ep > s.model.moe.experts)
        return "ep (" + str(d.ep) + ") exceeds the " + str(s.model.moe.experts) + " experts";
    if (s.model.moe.expertFfn % d.etp != 0)
        return "etp (" + str(d.etp) + ") must divide the expert FFN size " + str(s.model.moe.expertFfn);
    if (expertsChoice == choice::ExpTensor && (d.ep != 1 || d.edp != 1))
        return "experts: tensor shards every expert over the stage's GPUs: needs ep 1, etp = dp*tp, edp 1";
    if (expertsChoice == choice::ExpToken && (d.ep != 1 || d.etp != 1))
        return "experts: token replicates the experts on every GPU of the stage: needs ep 1, etp 1, edp = "
               "dp*tp";
    for (Axis a : {Axis::EP, Axis::ETP, Axis::EDP})
        if (!s.constraints.allows(a, d.get(a)))
            return std::string(kAxisNames[int(a)]) + " = " + str(d.get(a)) +
                   " is not among the allowed degrees";
    return std::nullopt;
}

std::optional<std::string> checkStageLayers(const Scenario& s, const Plan& p) {
    const auto& n = p.stageLayers;
    if (n.empty()) return std::nullopt;
    if (int(n.size()) != p.degrees.pp)
        return "stage_layers has " + str(int64_t(n.size())) + " entries for pp " + str(p.degrees.pp);
    int64_t sum = 0;
    for (size_t i = 0; i < n.size(); ++i) {
        if (n[i] < 1) return "stage_layers: stage " + str(int64_t(i)) + " has " + str(n[i]) + " layers";
        sum += n[i];
    }
    if (sum != s.model.layers)
        return "stage_layers add up to " + str(sum) + " layers; the model has " + str(s.model.layers);
    return std::nullopt;
}

std::optional<std::string> checkLayerGroups(const Scenario& s, const Plan& p) {
    const auto& gs = p.layerGroups;
    if (gs.empty()) return std::nullopt;
    const int n = int(gs.size());
    if (n < 2 || n > kMaxLayerGroups)
        return "layer_groups has " + str(int64_t(n)) + " groups; a plan has 2 to " + str(kMaxLayerGroups) +
               " (or none)";
    int64_t sum = 0;
    for (int g = 0; g < n; ++g) {
        const LayerGroup& lg = gs[size_t(g)];
        // Built only on failure, as checkChoice's messages.
        const auto at = [g, n] { return "layer group " + str(int64_t(g + 1)) + " of " + str(int64_t(n)); };
        if (lg.layers < 1) return at() + " has " + str(lg.layers) + " layers";
        sum += lg.layers;
        for (int i = 0; i < kOpCount; ++i) {
            const Op op = Op(i);
            if (!isLayerOp(op) && lg.choices[size_t(i)] != p.choices[size_t(i)])
                return at() + ": " + std::string(kOpNames[size_t(i)]) + " is chosen once for the whole model";
            if (g == 0 && lg.choices[size_t(i)] != p.choices[size_t(i)] && opRelevant(s.model, op))
                return at() + ": its choices must be the plan's own (operators)";
            if (!isLayerOp(op) || !opRelevant(s.model, op)) continue;
            if (auto e = checkChoice(s, p.degrees, op, lg.choices[size_t(i)])) return at() + ": " + *e;
        }
        if (g > 0 && lg.choices == gs[size_t(g - 1)].choices)
            return at() + " chooses as the group before it does (merge them)";
    }
    if (sum != s.model.layers)
        return "layer_groups add up to " + str(sum) + " layers; the model has " + str(s.model.layers);
    return std::nullopt;
}

bool choiceAllowed(const Scenario& s, const Degrees& d, Op op, int c) {
    if (c < 0 || c >= int(choiceNames(op).size())) return false;
    const int8_t pin = s.constraints.pinned[int(op)];
    if (pin >= 0 && pin != c) return false;
    const Model& m = s.model;
    const int64_t tp = d.tp;
    const int64_t heads = m.attention.heads, kv = m.attention.kvHeads;
    switch (baseOp(op)) {
    case Op::Qkv:
        if (c == choice::QkvColumn)
            return heads % tp == 0 && (m.attention.type != AttentionType::GQA || kv % tp == 0 || tp % kv == 0);
        if (c == choice::QkvRow) return m.hidden % tp == 0;
        return true;
    case Op::Attention:
        return c != choice::AttnHead || heads % tp == 0;
    case Op::OutProj:
        if (c == choice::OutRow) return heads % tp == 0;
        if (c == choice::OutColumn) return m.hidden % tp == 0;
        return true;
    case Op::FfnUp:
        if (c == choice::UpColumn) return m.ffn % tp == 0;
        if (c == choice::UpRow) return m.hidden % tp == 0;
        return true;
    case Op::FfnDown:
        if (c == choice::DownRow) return m.ffn % tp == 0;
        if (c == choice::DownColumn) return m.hidden % tp == 0;
        return true;
    case Op::SharedExperts:
        return c != choice::SharedColumnRow || (m.moe.sharedExpertFfn * m.moe.sharedExperts) % tp == 0;
    default:
        return true;
    }
}

std::optional<std::string> checkChoice(const Scenario& s, const Degrees& d, Op op, int c) {
    if (choiceAllowed(s, d, op, c)) return std::nullopt;
    return detail::choiceProblem(s, d, op, c);
}

std::optional<std::string> detail::choiceProblem(const Scenario& s, const Degrees& d, Op op, int c) {
    const auto& names = choiceNames(op);
    if (c < 0 || c >= int(names.size())) return std::string(kOpNames[int(op)]) + ": no such choice";
    auto what = [&] {
        return std::string(op >= Op::MoeNorms ? "moe layers' " : "") + std::string(kOpNames[int(op)]) + ": " +
               std::string(names[c]);
    };
    const int8_t pin = s.constraints.pinned[int(op)];
    if (pin >= 0 && pin != c)
        return what() + " breaks the pin " + std::string(kOpNames[int(op)]) + ": " + std::string(names[pin]);
    const Model& m = s.model;
    const int64_t tp = d.tp;
    const int64_t heads = m.attention.heads, kv = m.attention.kvHeads;
    auto divides = [&](int64_t n, const char* of) -> std::optional<std::string> {
        if (n % tp == 0) return std::nullopt;
        return what() + " needs tp (" + str(tp) + ") to divide " + of + " (" + str(n) + ")";
    };
    switch (baseOp(op)) {
    case Op::Qkv:
        if (c == choice::QkvColumn) {
            if (auto e = divides(heads, "the attention heads")) return e;
            if (m.attention.type == AttentionType::GQA && kv % tp != 0 && tp % kv != 0)
                return what() + " needs tp (" + str(tp) + ") and the KV heads (" + str(kv) +
                       ") to divide one another";
        }
        if (c == choice::QkvRow) return divides(m.hidden, "the hidden size");
        break;
    case Op::Attention:
        if (c == choice::AttnHead) return divides(heads, "the attention heads");
        break;
    case Op::OutProj:
        if (c == choice::OutRow) return divides(heads, "the attention heads");
        if (c == choice::OutColumn) return divides(m.hidden, "the hidden size");
        break;
    case Op::FfnUp:
        if (c == choice::UpColumn) return divides(m.ffn, "the FFN size");
        if (c == choice::UpRow) return divides(m.hidden, "the hidden size");
        break;
    case Op::FfnDown:
        if (c == choice::DownRow) return divides(m.ffn, "the FFN size");
        if (c == choice::DownColumn) return divides(m.hidden, "the hidden size");
        break;
    case Op::SharedExperts:
        if (c == choice::SharedColumnRow)
            return divides(m.moe.sharedExpertFfn * m.moe.sharedExperts, "the shared FFN size");
        break;
    default:
        break;
    }
    return std::nullopt;
}

} // namespace sp
