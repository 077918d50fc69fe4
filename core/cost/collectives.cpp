#include "core/cost/collectives.h"

#include "core/cost/costmodel.h"

#include <algorithm>

namespace sp {

double collectiveSecondsPerByte(Collective k, GroupShape g, const Net& n) {
    if (g.size <= 1) return 0.0;
    const double p = g.size, in = g.perNode, nodes = g.nodes;
    switch (k) {
    case Collective::AllReduce:
    case Collective::ReduceScatter:
    case Collective::AllGather:
    case Collective::Gather: {
        // one pass (reduce-scatter or all-gather): (in-1)/in of the data over NVLink, then the inter-node
        // ring on 1/in of it per NIC; an all-reduce is two passes.
        const double pass = (in - 1.0) / in / n.intra(in) + (nodes - 1.0) / nodes / in / n.bwInter;
        return k == Collective::AllReduce ? 2.0 * pass : pass;
    }
    case Collective::AllToAll:
        // (p-1)/p of the local data leaves the GPU: (in-1)/p to peers in the node, (p-in)/p across the NICs;
        // the two proceed at once.
        return std::max((in - 1.0) / p / n.intra(in), (p - in) / p / n.bwInter);
    case Collective::SendRecv:
        return 1.0 / (nodes > 1 ? n.bwInter : n.intra(2)); // one peer: one link of a mesh
    }
    return 0.0;
}

double collectiveAlpha(Collective k, GroupShape g, const Net& n) {
    if (g.size <= 1) return 0.0;
    const double steps = log2ceil(g.perNode) * n.alphaIntra + log2ceil(g.nodes) * n.alphaInter;
    switch (k) {
    case Collective::AllReduce:
        return 2.0 * steps;
    case Collective::AllToAll:
        return n.alphaIntra + (g.nodes > 1 ? n.alphaInter : 0.0);
    case Collective::SendRecv:
        return g.nodes > 1 ? n.alphaInter : n.alphaIntra;
    default:
        return steps;
    }
}

CommLines collectiveLines(Collective k, GroupShape g, const Net& n) {
    CommLines c;
    const bool ring = k == Collective::AllReduce || k == Collective::ReduceScatter || k == Collective::AllGather;
    if (!ring || g.size <= 1 || g.nodes > 1) {
        c.alpha[0] = collectiveAlpha(k, g, n);
        c.secPerByte[0] = collectiveSecondsPerByte(k, g, n);
        return c;
    }
    // NCCL's tuning model (see the header): per protocol, latency = base + steps x hardware latency, over
    // 2 (n - 1) steps for an all-reduce and n - 1 for a reduce-scatter or an all-gather; algorithm
    // bandwidth = bus bandwidth x n / steps. LL keeps a quarter of the bus for an all-reduce, a third for
    // the others.
    const bool ar = k == Collective::AllReduce;
    const double steps = (ar ? 2.0 : 1.0) * (g.perNode - 1.0);
    const double bus = n.intra(g.perNode);
    const double perByte = steps / double(g.perNode); // bytes on the bus per payload byte
    struct Proto {
        double baseUs, stepUs, busBw;
    };
    const Proto ll{6.6, n.pcie ? 1.0 : 0.6, std::min(87.7e9, bus / (ar ? 4.0 : 3.0))};
    const Proto ll128{14.0, 1.9, bus * 0.92};
    const Proto simple{8.4, n.pcie ? 5.7 : 3.4, bus};
    const Proto all[3] = {ll, simple, ll128};
    c.lines = n.pcie ? 2 : 3;
    for (int i = 0; i < c.lines; ++i) {
        c.alpha[i] = (all[i].baseUs + steps * all[i].stepUs) * 1e-6;
        c.secPerByte[i] = perByte / all[i].busBw;
    }
    // The engines' custom all-reduce (see the header): one stage reads n - 1 peers' buffers between two
    // barriers; two stages move (n - 1) / n of the message twice between three.
    const int p = g.perNode;
    const bool custom = ar && !n.pcie && p == g.size && (p == 2 || p == 4 || p == 6 || p == 8);
    if (custom) {
        const double kMiB = 1024.0 * 1024.0;
        c.alpha[c.lines] = 2.0 * n.alphaIntra;
        c.secPerByte[c.lines] = (p - 1.0) / bus;
        c.maxBytes[c.lines++] = (p <= 4 ? 0.5 : 0.25) * kMiB;
        c.alpha[c.lines] = 3.0 * n.alphaIntra;
        c.secPerByte[c.lines] = perByte / bus;
        c.maxBytes[c.lines++] = 8.0 * kMiB;
    }
    return c;
}

void CommLines::envelope() {
    std::vector<double> cuts;
    for (int i = 0; i < lines; ++i) {
        if (std::isfinite(maxBytes[i])) cuts.push_back(maxBytes[i]);
        for (int j = i + 1; j < lines; ++j) {
            const double ds = secPerByte[i] - secPerByte[j];
            if (ds == 0) continue;
            const double x = (alpha[j] - alpha[i]) / ds;
            if (x > 0 && std::isfinite(x)) cuts.push_back(x);
        }
    }
    std::sort(cuts.begin(), cuts.end());
    cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
    cuts.push_back(HUGE_VAL);
    // The least valid line (the first valid one where every line is infinite: a link of no bandwidth). NCCL's
    // lines hold for every size, so one is always valid.
    auto least = [&](double b) {
        int best = 0;
        double t = HUGE_VAL;
        bool any = false;
        for (int i = 0; i < lines; ++i) {
            if (b > maxBytes[i]) continue;
            const double v = alpha[i] + secPerByte[i] * b;
            if (!any || v < t) t = v, best = i, any = true;
        }
        return best;
    };
    segs = 0;
    double lo = 0;
    for (double hi : cuts) {
        const double mid = std::isfinite(hi) ? (lo + hi) / 2 : lo * 2 + 1;
        const int i = least(mid);
        if (segs > 0 && segAlpha[segs - 1] == alpha[i] && segSlope[segs - 1] == secPerByte[i])
            segEnd[segs - 1] = hi; // the same line goes on
        else if (segs < kSegs)
            segEnd[segs] = hi, segAlpha[segs] = alpha[i], segSlope[segs] = secPerByte[i], ++segs;
        lo = hi;
    }
    segEnd[segs - 1] = HUGE_VAL;
}

int CommLineTable::slotOf(Collective k) {
    switch (k) {
    case Collective::AllReduce: return 0;
    case Collective::ReduceScatter: return 1;
    case Collective::AllGather: return 2;
    default: return -1;
    }
}

CommLineTable::CommLineTable(const Net& n, int gpusPerNode) : perKind_(std::max(2, gpusPerNode + 1)) {
    lines_.resize(size_t(3 * perKind_));
    const Collective kinds[3] = {Collective::AllReduce, Collective::ReduceScatter, Collective::AllGather};
    for (int s = 0; s < 3; ++s)
        for (int p = 2; p < perKind_; ++p) {
            CommLines& c = lines_[size_t(s * perKind_ + p)];
            c = collectiveLines(kinds[s], {p, p, 1}, n);
            c.envelope();
        }
}

} // namespace sp
