#include "views/meshgroups.h"

#include "core/cost/costmodel.h"

#include <algorithm>

namespace sp::views {

int axisStride(const Plan& p, Axis a) {
    int stride = 1;
    for (Axis o : p.meshOrder) {
        if (o == a) return stride;
        stride *= p.degrees.get(o);
    }
    return stride;
}

int gpuOf(const Plan& p, int pp, int dp, int tp) {
    return pp * axisStride(p, Axis::PP) + dp * axisStride(p, Axis::DP) + tp * axisStride(p, Axis::TP);
}

MeshCoords meshCoords(const Plan& p, int gpu) {
    const Degrees& d = p.degrees;
    MeshCoords c;
    c.pp = (gpu / axisStride(p, Axis::PP)) % std::max(1, d.pp);
    c.dp = (gpu / axisStride(p, Axis::DP)) % std::max(1, d.dp);
    c.tp = (gpu / axisStride(p, Axis::TP)) % std::max(1, d.tp);
    const int local = c.tp + d.tp * c.dp;
    const int etp = std::max(1, d.etp), ep = std::max(1, d.ep);
    c.etp = local % etp;
    c.ep = (local / etp) % ep;
    c.edp = local / (etp * ep);
    return c;
}

namespace {
int localToGpu(const Plan& p, int pp, int local) {
    const int tp = std::max(1, p.degrees.tp);
    return gpuOf(p, pp, local / tp, local % tp);
}
} // namespace

std::vector<int> groupOf(const Plan& p, int gpu, Axis axis) {
    const Degrees& d = p.degrees;
    const MeshCoords c = meshCoords(p, gpu);
    std::vector<int> out;
    switch (axis) {
    case Axis::PP:
        for (int i = 0; i < d.pp; ++i) out.push_back(gpuOf(p, i, c.dp, c.tp));
        break;
    case Axis::DP:
        for (int i = 0; i < d.dp; ++i) out.push_back(gpuOf(p, c.pp, i, c.tp));
        break;
    case Axis::TP:
        for (int i = 0; i < d.tp; ++i) out.push_back(gpuOf(p, c.pp, c.dp, i));
        break;
    case Axis::EP:
    case Axis::ETP:
    case Axis::EDP: {
        const int etp = std::max(1, d.etp), ep = std::max(1, d.ep), edp = std::max(1, d.edp);
        auto local = [&](int iEtp, int iEp, int iEdp) { return iEtp + etp * (iEp + ep * iEdp); };
        if (axis == Axis::EP)
            for (int i = 0; i < ep; ++i) out.push_back(localToGpu(p, c.pp, local(c.etp, i, c.edp)));
        else if (axis == Axis::ETP)
            for (int i = 0; i < etp; ++i) out.push_back(localToGpu(p, c.pp, local(i, c.ep, c.edp)));
        else
            for (int i = 0; i < edp; ++i) out.push_back(localToGpu(p, c.pp, local(c.etp, c.ep, i)));
        break;
    }
    }
    std::sort(out.begin(), out.end());
    return out;
}

std::vector<StageSpan> stageSpans(int layers, int pp) {
    std::vector<StageSpan> out;
    for (const auto& [begin, count] : pipelineStages(layers, pp)) out.push_back({begin, count});
    return out;
}

std::vector<StageSpan> stageSpans(int layers, const Plan& p) {
    // A split that does not fit the model (one CostModel::checkPlan refuses) is drawn as the balanced one
    // rather than past the model's last layer.
    int sum = 0;
    bool fits = int(p.stageLayers.size()) == std::max(1, p.degrees.pp);
    for (int n : p.stageLayers) fits = fits && n >= 1, sum += n;
    if (p.stageLayers.empty() || !fits || sum != layers) return stageSpans(layers, p.degrees.pp);
    std::vector<StageSpan> out;
    for (const auto& [begin, count] : pipelineStages(layers, p)) out.push_back({begin, count});
    return out;
}

std::string stageCountsText(int layers, const Plan& p) {
    std::string s;
    for (const StageSpan& st : stageSpans(layers, p))
        s += (s.empty() ? "" : " + ") + std::to_string(st.count);
    return s;
}

} // namespace sp::views
