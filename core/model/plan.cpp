#include "core/model/plan.h"

#include "core/model/model.h"

#include <algorithm>

namespace sp {

const std::vector<std::string_view>& choiceNames(Op op) {
    static const std::array<std::vector<std::string_view>, kBaseOpCount> names{{
        {"vocab", "replicated"},
        {"replicated", "token"},
        {"column", "row", "token"},
        {"head", "sequence", "batch"},
        {"row", "column", "token"},
        {"column", "row", "token"},
        {"row", "column", "token"},
        {"replicated", "token"},
        {"expert", "tensor", "token"},
        {"column_row", "token"},
        {"vocab", "row", "token"},
    }};
    return names[static_cast<int>(baseOp(op))];
}

std::optional<int> choiceFromName(Op op, std::string_view name) {
    const auto& n = choiceNames(op);
    auto it = std::find(n.begin(), n.end(), name);
    if (it == n.end()) return std::nullopt;
    return int(it - n.begin());
}

Op baseOp(Op op) {
    switch (op) {
    case Op::MoeNorms: return Op::Norms;
    case Op::MoeQkv: return Op::Qkv;
    case Op::MoeAttention: return Op::Attention;
    case Op::MoeOutProj: return Op::OutProj;
    default: return op;
    }
}

int megatronChoice(Op op) {
    // Megatron-LM: vocab-parallel embedding and head, column-parallel QKV and FFN up, head-parallel attention,
    // row-parallel output and FFN down, sequence-parallel (token-sharded) norms, expert-parallel experts.
    switch (baseOp(op)) {
    case Op::Norms: return choice::NormToken;
    default: return 0;
    }
}

int engineChoice(Op op) {
    switch (baseOp(op)) {
    case Op::Norms: return choice::NormReplicated;
    case Op::Router: return choice::RouterReplicated;
    default: return megatronChoice(op); // vocab, column, head, row, column, row, column_row, vocab, expert
    }
}

int Degrees::get(Axis a) const {
    switch (a) {
    case Axis::PP: return pp;
    case Axis::DP: return dp;
    case Axis::TP: return tp;
    case Axis::EP: return ep;
    case Axis::ETP: return etp;
    case Axis::EDP: return edp;
    }
    return 1;
}

void Degrees::set(Axis a, int v) {
    switch (a) {
    case Axis::PP: pp = v; break;
    case Axis::DP: dp = v; break;
    case Axis::TP: tp = v; break;
    case Axis::EP: ep = v; break;
    case Axis::ETP: etp = v; break;
    case Axis::EDP: edp = v; break;
    }
}

std::string stageLayersText(const Plan& p) {
    std::string s;
    for (int n : p.stageLayers) s += (s.empty() ? "" : " + ") + std::to_string(n);
    return s;
}

bool isLayerOp(Op op) {
    return op != Op::Embedding && op != Op::LmHead && op != Op::Experts;
}

const std::array<int8_t, kOpCount>& Plan::choicesAt(int layer) const {
    int end = 0;
    for (const LayerGroup& g : layerGroups)
        if (layer < (end += g.layers)) return g.choices;
    return layerGroups.empty() ? choices : layerGroups.back().choices;
}

void normalizeLayerGroups(Plan& p) {
    std::vector<LayerGroup> merged;
    for (LayerGroup g : p.layerGroups) {
        for (int i = 0; i < kOpCount; ++i)
            if (!isLayerOp(Op(i))) g.choices[size_t(i)] = p.choices[size_t(i)];
        if (!merged.empty() && merged.back().choices == g.choices)
            merged.back().layers += g.layers;
        else
            merged.push_back(g);
    }
    if (merged.size() <= 1) {
        if (!merged.empty()) p.choices = merged.front().choices;
        merged.clear();
    } else {
        p.choices = merged.front().choices;
    }
    p.layerGroups = std::move(merged);
}

std::string layerGroupsText(const Plan& p, const std::vector<Op>& ops) {
    std::string s;
    int begin = 0;
    for (size_t g = 0; g < p.layerGroups.size(); ++g) {
        const LayerGroup& lg = p.layerGroups[g];
        const std::string span = std::to_string(begin) + "-" + std::to_string(begin + lg.layers - 1);
        begin += lg.layers;
        if (g == 0) {
            s = "layers " + span;
            continue;
        }
        s += " | " + span;
        std::string diff;
        for (int i = 0; i < kOpCount; ++i) {
            const Op op = Op(i);
            if (!isLayerOp(op) || lg.choices[size_t(i)] == p.layerGroups[0].choices[size_t(i)]) continue;
            if (!ops.empty() && std::find(ops.begin(), ops.end(), op) == ops.end()) continue;
            diff += (diff.empty() ? "" : ", ") + std::string(i >= kBaseOpCount ? "moe." : "") +
                    std::string(kOpNames[size_t(i)]) + " " +
                    std::string(choiceNames(op)[size_t(lg.choices[size_t(i)])]);
        }
        if (!diff.empty()) s += ": " + diff;
    }
    return s;
}

Plan Plan::megatronChoices(Degrees d) {
    Plan p;
    p.degrees = d;
    for (int i = 0; i < kOpCount; ++i) p.choices[i] = static_cast<int8_t>(megatronChoice(static_cast<Op>(i)));
    return p;
}

Plan Plan::engineChoices(Degrees d) {
    Plan p;
    p.degrees = d;
    for (int i = 0; i < kOpCount; ++i) p.choices[i] = static_cast<int8_t>(engineChoice(static_cast<Op>(i)));
    return p;
}

bool Constraints::allows(Axis a, int v) const {
    const auto& list = allowed[static_cast<int>(a)];
    return list.empty() || std::find(list.begin(), list.end(), v) != list.end();
}

std::string layoutFamily(const Plan& plan, const Model& model) {
    const Degrees& d = plan.degrees;
    const bool moe = model.moe.present();
    std::vector<std::string> parts;
    if (d.tp > 1) {
        const int attn = plan.choice(moe ? Op::MoeAttention : Op::Attention);
        parts.push_back(attn == choice::AttnBatch      ? "attention-DP"
                        : attn == choice::AttnSequence ? "CP"
                                                       : "TP");
    }
    if (d.pp > 1) parts.push_back("PP");
    if (moe && d.ep > 1)
        parts.push_back("EP");
    else if (moe && d.etp > 1 && d.tp == 1)
        parts.push_back("expert-TP");
    if (parts.empty()) parts.push_back("DP");
    std::string s;
    for (const auto& x : parts) s += (s.empty() ? "" : " + ") + x;
    return s;
}

} // namespace sp
