#include "core/rl/knowledge.h"

#include "core/search/space.h"

#include <charconv>
#include <cmath>
#include <optional>

namespace sp::rl {

namespace {

constexpr const char* kGroupPrefixes[] = {"middle.", "last."};

/// The numeric value of a label ("8"), or nullopt ("column", "tp,dp,pp", "+1" is numeric too).
std::optional<double> numericLabel(std::string_view label) {
    if (!label.empty() && label.front() == '+') label.remove_prefix(1);
    int v = 0;
    const auto [end, ec] = std::from_chars(label.data(), label.data() + label.size(), v);
    if (ec != std::errc() || end != label.data() + label.size()) return std::nullopt;
    return double(v);
}

/// The keys a choice key may be read from, best first: itself, then the base decision's.
std::vector<std::string> lookupKeys(const std::string& key) {
    std::vector<std::string> out{key};
    const size_t eq = key.find('=');
    const std::string name = key.substr(0, eq), base = baseDecisionName(name);
    if (base != name) out.push_back(base + key.substr(eq));
    return out;
}

/// Degrees of decision `name` in `k`, with their keys: "tp=4", "tp=8" -> {4, "tp=4"}, {8, "tp=8"}.
std::vector<std::pair<double, std::string>> numericSiblings(const Knowledge& k, const std::string& name) {
    std::vector<std::pair<double, std::string>> out;
    const std::string prefix = name + "=";
    for (auto it = k.choice.lower_bound(prefix); it != k.choice.end() && it->first.starts_with(prefix); ++it)
        if (auto v = numericLabel(std::string_view(it->first).substr(prefix.size())))
            out.emplace_back(*v, it->first);
    return out;
}

} // namespace

std::string baseDecisionName(const std::string& name) {
    for (const char* p : kGroupPrefixes)
        if (name.starts_with(p)) return name.substr(std::string_view(p).size());
    // "g2.", "g13.": a layer group
    if (name.size() > 2 && name[0] == 'g' && std::isdigit(static_cast<unsigned char>(name[1]))) {
        const size_t dot = name.find('.');
        if (dot != std::string::npos) {
            bool digits = true;
            for (size_t i = 1; i < dot; ++i)
                digits = digits && std::isdigit(static_cast<unsigned char>(name[i]));
            if (digits) return name.substr(dot + 1);
        }
    }
    return name;
}

SpaceKeys keysOf(const SearchSpace& space) {
    SpaceKeys keys;
    for (const Decision& d : space.decisions()) {
        keys.position.push_back(d.name);
        auto& c = keys.choice.emplace_back();
        for (const auto& label : d.labels) c.push_back(d.name + "=" + label);
    }
    return keys;
}

int load(const Knowledge& k, const SpaceKeys& keys, Params& p) {
    int taken = 0;
    for (size_t i = 0; i < keys.choice.size() && i < p.emb.size(); ++i) {
        for (size_t c = 0; c < keys.choice[i].size() && Eigen::Index(c) < p.emb[i].rows(); ++c) {
            const std::string& key = keys.choice[i][c];
            bool found = false;
            for (const auto& from : lookupKeys(key)) {
                const auto e = k.choice.find(from);
                if (e == k.choice.end()) continue;
                p.emb[i].row(Eigen::Index(c)) = e->second.transpose();
                if (const auto b = k.bias.find(from); b != k.bias.end())
                    p.bias[i](Eigen::Index(c)) = b->second;
                found = true;
                break;
            }
            if (!found) {
                // A degree not seen: from the nearest seen degrees of the same decision (or its base).
                const size_t eq = key.find('=');
                const auto value = numericLabel(std::string_view(key).substr(eq + 1));
                if (!value || *value <= 0) continue;
                const std::string name = key.substr(0, eq);
                auto siblings = numericSiblings(k, name);
                if (siblings.empty()) siblings = numericSiblings(k, baseDecisionName(name));
                double bestDist = 1e300;
                std::vector<const std::string*> nearest;
                for (const auto& [v, sk] : siblings) {
                    if (v <= 0) continue;
                    const double dist = std::abs(std::log2(v) - std::log2(*value));
                    if (dist < bestDist - 1e-9)
                        bestDist = dist, nearest = {&sk};
                    else if (dist < bestDist + 1e-9)
                        nearest.push_back(&sk);
                }
                if (nearest.empty()) continue;
                VecD e = VecD::Zero();
                double b = 0;
                for (const std::string* sk : nearest) {
                    e += k.choice.find(*sk)->second;
                    if (const auto bi = k.bias.find(*sk); bi != k.bias.end()) b += bi->second;
                }
                p.emb[i].row(Eigen::Index(c)) = (e / double(nearest.size())).transpose();
                p.bias[i](Eigen::Index(c)) = b / double(nearest.size());
                found = true;
            }
            taken += found;
        }
        if (Eigen::Index(i) < p.pos.rows()) {
            for (const auto& name : {keys.position[i], baseDecisionName(keys.position[i])}) {
                const auto e = k.position.find(name);
                if (e == k.position.end()) continue;
                p.pos.row(Eigen::Index(i)) = e->second.transpose();
                break;
            }
        }
    }
    if (k.hasShared) {
        p.rewardVec = k.shared.rewardVec, p.tokenBias = k.shared.tokenBias;
        p.Wq = k.shared.Wq, p.Wk = k.shared.Wk, p.Wv = k.shared.Wv, p.Wo = k.shared.Wo;
        p.W1 = k.shared.W1, p.b1 = k.shared.b1, p.W2 = k.shared.W2, p.b2 = k.shared.b2;
    }
    return taken;
}

Knowledge save(const Params& p, const SpaceKeys& keys, const Knowledge* base) {
    Knowledge k;
    if (base) k.choice = base->choice, k.bias = base->bias, k.position = base->position;
    k.searches = (base ? base->searches : 0) + 1;
    for (size_t i = 0; i < keys.choice.size() && i < p.emb.size(); ++i) {
        for (size_t c = 0; c < keys.choice[i].size() && Eigen::Index(c) < p.emb[i].rows(); ++c) {
            k.choice[keys.choice[i][c]] = p.emb[i].row(Eigen::Index(c)).transpose();
            k.bias[keys.choice[i][c]] = p.bias[i](Eigen::Index(c));
        }
        if (Eigen::Index(i) < p.pos.rows())
            k.position[keys.position[i]] = p.pos.row(Eigen::Index(i)).transpose();
    }
    k.shared = p;
    k.shared.emb.clear(), k.shared.bias.clear(), k.shared.pos.resize(0, kDim);
    k.hasShared = true;
    return k;
}

} // namespace sp::rl
