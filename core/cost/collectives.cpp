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

} // namespace sp
