// Disaggregated prefill/decode: two cost models, one per pool, and the rate matching between them (the
// formulas are in disagg.h).

#include "core/cost/disagg.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <mutex>

namespace sp {

int instancesOf(const Plan& p, int gpus, const Model& m) {
    const int wide = m.moe.present() ? std::max(p.degrees.tp, p.degrees.ep * p.degrees.etp) : p.degrees.tp;
    const int per = std::max(1, p.degrees.pp * wide);
    return std::max(1, gpus / per);
}

ServingCost poolsCost(const Scenario& s, const DisaggMetrics& m, double tokensPerS) {
    return servingCost(s.cluster, m.prefillGpus, s.decodeCluster ? *s.decodeCluster : s.cluster, m.decodeGpus,
                       tokensPerS);
}

Scenario poolScenario(const Scenario& s, Phase phase, int nodes) {
    Scenario out = s;
    if (phase == Phase::Decode && s.decodeCluster) out.cluster = *s.decodeCluster;
    out.decodeCluster.reset();
    out.cluster.nodes = nodes;
    out.constraints.gpus = 0;
    out.workload.phase = phase;
    if (phase == Phase::Prefill) {
        // The TTFT SLO is checked by the layer, with the KV transfer added; a prefill scenario has no TPOT.
        out.workload.ttftMs = 0;
        out.workload.tpotMs = 0;
        // A fixed batch is the serving batch (sequences in flight); a prefill pass's prompts are the layer's
        // choice under the TTFT SLO.
        out.workload.fixedBatch = false;
        out.name = s.name + " (prefill pool)";
    } else {
        out.workload.ttftMs = 0;
        out.name = s.name + " (decode pool)";
    }
    return out;
}

struct DisaggModel::Impl {
    Scenario s;
    DisaggOptions o;
    double kvBytes = 0;
    mutable std::mutex mutex;
    mutable std::map<int, std::unique_ptr<CostModel>> prefill, decode;

    const CostModel& pool(std::map<int, std::unique_ptr<CostModel>>& m, Phase ph, int nodes) const {
        std::lock_guard lock(mutex);
        auto& slot = m[nodes];
        if (!slot) slot = std::make_unique<CostModel>(poolScenario(s, ph, nodes));
        return *slot;
    }
};

DisaggModel::DisaggModel(Scenario s, DisaggOptions o) : d(std::make_unique<Impl>()) {
    d->s = std::move(s);
    d->o = o;
    d->kvBytes = kvBytesPerSequence(d->s.model, d->s.workload.inputTokens);
}
DisaggModel::~DisaggModel() = default;
DisaggModel::DisaggModel(DisaggModel&&) noexcept = default;
DisaggModel& DisaggModel::operator=(DisaggModel&&) noexcept = default;

const Scenario& DisaggModel::scenario() const {
    return d->s;
}
const DisaggOptions& DisaggModel::options() const {
    return d->o;
}
double DisaggModel::kvBytesPerPrompt() const {
    return d->kvBytes;
}
bool DisaggModel::twoClusters() const {
    return d->s.decodeCluster.has_value();
}
const Cluster& DisaggModel::poolCluster(Phase phase) const {
    return phase == Phase::Decode && d->s.decodeCluster ? *d->s.decodeCluster : d->s.cluster;
}
double DisaggModel::nicBytesPerS() const {
    const double gb = std::min(d->s.cluster.interNode.gbPerS, poolCluster(Phase::Decode).interNode.gbPerS);
    return gb * 1e9 * d->o.transferEfficiency;
}
double DisaggModel::linkLatencyS() const {
    return std::max(d->s.cluster.interNode.latencyUs, poolCluster(Phase::Decode).interNode.latencyUs) * 1e-6;
}

std::optional<std::string> DisaggModel::checkScenario() const {
    const Scenario& s = d->s;
    if (s.decodeCluster && (s.cluster.nodes < 1 || s.decodeCluster->nodes < 1))
        return "disaggregated serving over two clusters needs a node in each; the prefill cluster has " +
               std::to_string(s.cluster.nodes) + ", the decode cluster " +
               std::to_string(s.decodeCluster->nodes);
    if (!s.decodeCluster && s.cluster.nodes < 2)
        return "disaggregated serving needs at least 2 nodes (one per pool); the cluster has " +
               std::to_string(s.cluster.nodes);
    if (s.constraints.gpus > 0 && s.constraints.gpus != s.cluster.gpus())
        return "disaggregated serving splits whole nodes: the constraint of " +
               std::to_string(s.constraints.gpus) + " GPUs is not the cluster's " +
               std::to_string(s.cluster.gpus());
    if (s.workload.phase != Phase::Serving)
        return std::string(
                   "disaggregated serving runs both phases: the workload's phase must be serving, not ") +
               (s.workload.phase == Phase::Prefill ? "prefill" : "decode");
    if (s.workload.inputTokens < 1 || s.workload.outputTokens < 1)
        return "disaggregated serving needs input and output tokens of at least 1";
    if (!(d->o.transferEfficiency > 0 && d->o.transferEfficiency <= 1))
        return "the KV transfer efficiency must lie in (0, 1]";
    if (!(d->o.load >= 0 && d->o.load < 1)) return "the load must lie in [0, 1)";
    return std::nullopt;
}

std::optional<std::string> DisaggModel::checkSplit(int prefillNodes, int decodeNodes) const {
    if (auto e = checkScenario()) return e;
    if (prefillNodes < 1 || decodeNodes < 1)
        return "each pool needs at least one node (prefill " + std::to_string(prefillNodes) + ", decode " +
               std::to_string(decodeNodes) + ")";
    if (d->s.decodeCluster) {
        if (prefillNodes > d->s.cluster.nodes)
            return "the prefill pool's " + std::to_string(prefillNodes) + " nodes exceed its cluster's " +
                   std::to_string(d->s.cluster.nodes);
        if (decodeNodes > d->s.decodeCluster->nodes)
            return "the decode pool's " + std::to_string(decodeNodes) + " nodes exceed its cluster's " +
                   std::to_string(d->s.decodeCluster->nodes);
        return std::nullopt;
    }
    if (d->o.spareNodes && prefillNodes + decodeNodes <= d->s.cluster.nodes) return std::nullopt;
    if (prefillNodes + decodeNodes != d->s.cluster.nodes)
        return "prefill " + std::to_string(prefillNodes) + " + decode " + std::to_string(decodeNodes) +
               " nodes do not add up to the cluster's " + std::to_string(d->s.cluster.nodes);
    return std::nullopt;
}

const CostModel& DisaggModel::prefillModel(int nodes) const {
    return d->pool(d->prefill, Phase::Prefill, nodes);
}
const CostModel& DisaggModel::decodeModel(int nodes) const {
    return d->pool(d->decode, Phase::Decode, nodes);
}

double DisaggModel::transferMs(const Plan& p, int64_t batch) const {
    const double nics = double(std::max(1, p.degrees.pp * p.degrees.tp));
    return (d->kvBytes * double(batch) / (nics * nicBytesPerS()) + linkLatencyS()) * 1e3;
}

Metrics DisaggModel::evaluatePrefill(const Plan& p, int nodes, double* transferOut) const {
    const CostModel& cm = prefillModel(nodes);
    const Workload& w = d->s.workload;
    Metrics m = cm.evaluate(p);
    if (!m.valid) return m;
    const auto total = [&](const Metrics& x) { return x.ttftMs + transferMs(p, x.batch); };
    // The cost model picked the largest batch that fits memory and the token budget; the TTFT SLO now
    // includes the transfer, and both grow with the batch: binary search for the largest that meets it.
    if (w.ttftMs > 0 && p.batch == 0 && m.batch > 1 && total(m) > w.ttftMs) {
        Plan q = p;
        q.batch = 1;
        Metrics lo = cm.evaluate(q);
        if (total(lo) <= w.ttftMs) {
            int64_t a = 1, b = m.batch; // a meets the SLO, b does not
            while (b - a > 1) {
                q.batch = a + (b - a) / 2;
                Metrics mid = cm.evaluate(q);
                if (total(mid) <= w.ttftMs)
                    a = q.batch, lo = std::move(mid);
                else
                    b = q.batch;
            }
        }
        m = std::move(lo);
    }
    const double t = transferMs(p, m.batch);
    if (transferOut) *transferOut = t;
    m.ttftMs += t;
    if (w.ttftMs > 0 && m.ttftMs > w.ttftMs) {
        char buf[200];
        std::snprintf(
            buf, sizeof buf,
            "TTFT %.1f ms (prefill %.1f + KV transfer %.1f) at batch %lld exceeds the SLO of %.3g ms",
            m.ttftMs, m.ttftMs - t, t, (long long)m.batch, w.ttftMs);
        m.violations.emplace_back(buf);
        m.shortfall = std::max({m.shortfall, 1.0, m.ttftMs / w.ttftMs});
        m.feasible = false;
        m.violation = m.violations.front();
    }
    return m;
}

DisaggMetrics DisaggModel::evaluate(const DisaggPlan& p) const {
    DisaggMetrics r;
    const auto fail = [&](std::string why) {
        r.violation = why;
        r.violations.push_back(std::move(why));
        r.shortfall = 1e9;
        return r;
    };
    if (auto e = checkSplit(p.prefill.nodes, p.decode.nodes)) return fail(*e);
    const Scenario& s = d->s;
    const Workload& w = s.workload;
    const Cluster& dc = poolCluster(Phase::Decode);
    r.prefillGpus = p.prefill.nodes * s.cluster.gpusPerNode;
    r.decodeGpus = p.decode.nodes * dc.gpusPerNode;
    r.kvBytesPerPrompt = d->kvBytes;
    r.prefill = evaluatePrefill(p.prefill.plan, p.prefill.nodes, &r.transferMs);
    r.decode = decodeModel(p.decode.nodes).evaluate(p.decode.plan);
    if (!r.prefill.valid) return fail("prefill pool: " + r.prefill.violation);
    if (!r.decode.valid) return fail("decode pool: " + r.decode.violation);
    // A TP re-layout: max(tp_p, tp_d) / min(tp_p, tp_d) messages where one would do, each a latency more.
    const int tpP = std::max(1, p.prefill.plan.degrees.tp), tpD = std::max(1, p.decode.plan.degrees.tp);
    const int fan = std::max(tpP, tpD) / std::min(tpP, tpD);
    if (fan > 1) {
        r.relayoutMs = double(fan - 1) * linkLatencyS() * 1e3;
        r.transferMs += r.relayoutMs;
        r.prefill.ttftMs += r.relayoutMs;
        if (w.ttftMs > 0 && r.prefill.feasible && r.prefill.ttftMs > w.ttftMs) {
            char buf[200];
            std::snprintf(
                buf, sizeof buf,
                "TTFT %.1f ms (with a TP re-layout of %.3f ms) at batch %lld exceeds the SLO of %.3g ms",
                r.prefill.ttftMs, r.relayoutMs, (long long)r.prefill.batch, w.ttftMs);
            r.prefill.violations.emplace_back(buf);
            r.prefill.shortfall = std::max({r.prefill.shortfall, 1.0, r.prefill.ttftMs / w.ttftMs});
            r.prefill.feasible = false;
            r.prefill.violation = r.prefill.violations.front();
        }
    }
    r.valid = true;
    r.prefillInstances = instancesOf(p.prefill.plan, r.prefillGpus, s.model);
    r.decodeInstances = instancesOf(p.decode.plan, r.decodeGpus, s.model);

    const double I = double(w.inputTokens), O = double(w.outputTokens);
    r.prefillRequestsPerS = r.prefill.throughput / I;
    r.decodeRequestsPerS = r.decode.throughput / O;
    const double eta = d->o.transferEfficiency;
    r.networkRequestsPerS = std::min(double(r.prefillGpus) * s.cluster.interNode.gbPerS,
                                     double(r.decodeGpus) * dc.interNode.gbPerS) *
                            1e9 * eta / d->kvBytes;
    r.requestsPerS = std::min({r.prefillRequestsPerS, r.decodeRequestsPerS, r.networkRequestsPerS});
    r.bound = r.requestsPerS == r.prefillRequestsPerS  ? "prefill"
              : r.requestsPerS == r.decodeRequestsPerS ? "decode"
                                                       : "network";
    r.prefillIdle = r.prefillRequestsPerS > 0 ? 1.0 - r.requestsPerS / r.prefillRequestsPerS : 0.0;
    r.decodeIdle = r.decodeRequestsPerS > 0 ? 1.0 - r.requestsPerS / r.decodeRequestsPerS : 0.0;
    r.throughput = r.requestsPerS * O;
    r.throughputPerGpu = r.throughput / double(r.prefillGpus + r.decodeGpus);
    r.tpotMs = r.decode.tpotMs;
    if (s.cluster.pricePerGpuHour > 0 && dc.pricePerGpuHour > 0) {
        r.usdPerHour =
            double(r.prefillGpus) * s.cluster.pricePerGpuHour + double(r.decodeGpus) * dc.pricePerGpuHour;
        if (r.throughput > 0) r.usdPerMTokens = r.usdPerHour / (3600.0 * r.throughput) * 1e6;
    }

    if (d->o.load > 0 && r.prefillRequestsPerS > 0) {
        const double u = d->o.load * r.requestsPerS / r.prefillRequestsPerS;
        const double pass = r.prefill.ttftMs - r.transferMs;
        r.queueMs = u < 1 ? u * pass / (2.0 * (1.0 - u)) : std::numeric_limits<double>::infinity();
    }
    r.ttftMs = r.prefill.ttftMs + r.queueMs;

    for (const auto& v : r.prefill.violations) r.violations.push_back("prefill pool: " + v);
    for (const auto& v : r.decode.violations) r.violations.push_back("decode pool: " + v);
    r.shortfall = std::max(r.prefill.shortfall, r.decode.shortfall);
    if (r.queueMs > 0 && w.ttftMs > 0 && r.prefill.ttftMs <= w.ttftMs && r.ttftMs > w.ttftMs) {
        char buf[200];
        std::snprintf(buf, sizeof buf,
                      "TTFT %.1f ms with %.1f ms of queueing at load %.2f exceeds the SLO of %.3g ms",
                      r.ttftMs, r.queueMs, d->o.load, w.ttftMs);
        r.violations.emplace_back(buf);
        r.shortfall = std::max({r.shortfall, 1.0, std::isfinite(r.ttftMs) ? r.ttftMs / w.ttftMs : 1e9});
    }
    r.feasible = r.violations.empty();
    if (!r.feasible)
        r.violation = r.violations.front();
    else
        r.shortfall = 0;
    return r;
}

} // namespace sp
