// The analytical cost model. How it works, in order:
//  1. compile(): a plan becomes, per layer kind (dense, MoE, embedding, head) and per pass (a decode step, a
//     prefill pass), a short list of operator terms and collective terms, each affine in the local tokens and
//     sequences. A resharding collective is inserted wherever an operator needs a layout other than the one
//     the previous operator produced (R replicated, T token-sharded, H feature-sharded, P partial sums).
//  2. stage times at a batch: those terms times the layer counts of each pipeline stage.
//  3. the batch: the largest that fits memory (closed form: memory is affine in the batch) and meets the SLOs
//     (binary search: latency grows with the batch).
// The evaluate() path works on fixed-size arrays and allocates nothing but the returned Metrics' strings.

#include "core/cost/impl.h"

#include "core/common/text.h"

#include <algorithm>
#include <array>
#include <cmath>

namespace sp {

std::string_view nameOf(LinkClass l) {
    switch (l) {
    case LinkClass::Local:
        return "local";
    case LinkClass::NvLink:
        return "nvlink";
    case LinkClass::Network:
        return "network";
    }
    return "";
}
std::string_view nameOf(Collective c) {
    switch (c) {
    case Collective::AllReduce:
        return "all-reduce";
    case Collective::ReduceScatter:
        return "reduce-scatter";
    case Collective::AllGather:
        return "all-gather";
    case Collective::AllToAll:
        return "all-to-all";
    case Collective::SendRecv:
        return "send/recv";
    case Collective::Gather:
        return "gather";
    }
    return "";
}
std::string_view nameOf(LayerKind k) {
    switch (k) {
    case LayerKind::Dense:
        return "dense layer";
    case LayerKind::Moe:
        return "moe layer";
    case LayerKind::Embedding:
        return "embedding";
    case LayerKind::Head:
        return "lm head";
    case LayerKind::Draft:
        return "draft";
    }
    return "";
}

/// Dense TFLOP/s of the GEMMs: FP8 weights run FP8 GEMMs (activations quantized on the fly, as
/// DeepSeek-V3's "activation_scheme: dynamic" and TensorRT-LLM's FP8 do); otherwise the activation
/// dtype's rate.
double CostModel::Impl::computePeak() const {
    const Gpu& g = s.cluster.gpu;
    if (s.model.weights == Dtype::FP8 && g.tflops[int(Dtype::FP8)] > 0) return g.tflops[int(Dtype::FP8)];
    return g.tflops[int(s.model.activations)];
}

/// A group the checkpoint leaves unquantized runs at the activation precision; without a quantization
/// block, the model's weight dtype decides as in computePeak(). Quantized groups:
///  - FP8 and INT8 (w8a8) weights run FP8/INT8 GEMMs with activations quantized on the fly;
///  - NVFP4 is W4A4: FP4 tensor cores where the GPU has them (Blackwell), else weight-only at the
///    activation precision;
///  - MXFP4 runs FP4 weights against FP8 activations where FP4 MMA exists and against BF16 on Hopper
///    (vllm-project/vllm vllm/model_executor/layers/quantization/mxfp4.py at afdb4a4: the backends
///    SM100_FI_MXFP4_MXFP8_TRTLLM and SM90_FI_MXFP4_BF16);
///  - INT4 (w4a16) is weight-only: dequantized to the activation dtype in the kernel.
double CostModel::Impl::groupPeak(ParamGroup grp) const {
    const Gpu& g = s.cluster.gpu;
    const Quantization& q = s.model.quant;
    const double act = g.tflops[int(s.model.activations)];
    if (!q.present()) return computePeak();
    if (!q.quantized[int(grp)]) return act;
    const auto rate = [&](Dtype d) { return g.tflops[int(d)] > 0 ? g.tflops[int(d)] : act; };
    switch (q.storage) {
    case Dtype::FP8:
    case Dtype::INT8:
        return rate(q.storage);
    case Dtype::FP4:
        if (g.tflops[int(Dtype::FP4)] <= 0) return act;
        return q.method == QuantMethod::Mxfp4 ? rate(Dtype::FP8) : g.tflops[int(Dtype::FP4)];
    default:
        return act;
    }
}

bool CostModel::Impl::groupRunsFp4(ParamGroup grp) const {
    const Quantization& q = s.model.quant;
    return q.present() && q.quantized[int(grp)] && q.storage == Dtype::FP4 &&
           q.method != QuantMethod::Mxfp4 && s.cluster.gpu.tflops[int(Dtype::FP4)] > 0;
}

/// Attention FLOPs per (query token, context token) pair over all heads (QK^T and PV; 2 FLOPs per MAC).
double CostModel::Impl::attnPairFlops(bool decode) const {
    const Attention& a = s.model.attention;
    if (a.type == AttentionType::MLA) {
        // Decode runs MLA absorbed: scores over latent + rope key, values over the latent, per head.
        if (decode) return double(a.heads) * 2.0 * double(2 * a.mla.kvLoraRank + a.mla.qkRopeHeadDim);
        return double(a.heads) * 2.0 * double(a.mla.qkNopeHeadDim + a.mla.qkRopeHeadDim + a.mla.vHeadDim);
    }
    return double(a.heads) * 2.0 * 2.0 * double(a.headDim);
}

double CostModel::Impl::kvBytesPerToken() const {
    return kvElementsPerTokenPerLayer(s.model) * kb;
}

/// The physical bound: peak FLOP/s and HBM bandwidth of every GPU, no efficiency factors, no
/// communication, weights read once for an unbounded batch; only the FLOPs and the KV reads remain.
double CostModel::Impl::computeRoofline() const {
    // Speculative decoding changes the bound: a step verifies q tokens a sequence (their FLOPs) and reads
    // the cache once for the E it yields. The bound is the best over the options the scenario allows.
    double best = rooflineAt(1.0, 1.0);
    for (const Speculative& o : speculativeOptions(s))
        best = std::max(best, rooflineAt(double(o.draftTokens + 1),
                                         tokensPerStep(acceptanceRates(s, o.method), o.draftTokens)));
    return best;
}

double CostModel::Impl::rooflineAt(double q, double E) const {
    const Cluster& c = s.cluster;
    const double g = double(s.gpus());
    const double flopsAll = g * computePeak() * 1e12, bwAll = g * c.gpu.hbmTBs * 1e12;
    const ParamCounts pc = countParams(s.model);
    // Layers' worth of full attention: each layer type's layers times the share of the context its layers
    // attend to (sliding windows, a linear layer's constant state, the sparse indexer's top-k; 1 for full
    // attention, so models of full-attention layers count L).
    double Ldec = 0, Lpre = 0;
    for (int k = 0; k < nTypes; ++k) {
        const double n = double(mix.total(types[k]));
        Ldec += n * attnScale[k].decodeRead, Lpre += n * attnScale[k].prefillPairs;
    }
    const Workload& w = s.workload;
    const double I = double(w.inputTokens), O = double(w.outputTokens);
    const double decFlops = (2.0 * pc.active + Ldec * attnPairFlops(true) * ctxDecode) * (q / E);
    const double decBytes = Ldec * kvBytesPerToken() * ctxDecode / E;
    const double preFlops = 2.0 * pc.active + Lpre * attnPairFlops(false) * (I + 1.0) / 2.0;
    switch (w.phase) {
    case Phase::Decode:
        return std::min(flopsAll / decFlops, bwAll / decBytes);
    case Phase::Prefill:
        return flopsAll / preFlops;
    case Phase::Serving:
        return O / std::max((I * preFlops + O * decFlops) / flopsAll, O * decBytes / bwAll);
    }
    return 0;
}

// The largest batch in [1, limit] that meets the SLOs. Latency grows with the batch, so "meets the SLOs"
// holds up to one batch and fails above it, and any search that keeps "lo meets, hi does not" ends on the
// same batch (up to dips of a few parts in 10^5 where a long prompt's chunk shrinks as the decode tokens take
// more of the budget, far above the boundary on the samples' plans; a share an ulp above a whole number once
// made a sawtooth of several percent: busiestShare). Bisection needs about log2(limit) probes (12 on the
// samples' plans). The SLO ratio is smooth in the batch near the boundary (a step's time is its weights plus
// per-token work), so interpolating between the probes closes it in 5-6 probes, the cap included (bench
// --eval-speed prints both side by side); after kSecantRounds rounds it bisects, so the worst case stays
// logarithmic. BatchSearch::Bisection keeps the plain search as the reference (tst_cost batchSearchesAgree).
static constexpr int kSecantRounds = 8;

int64_t CostModel::Impl::largestBatch(const Compiled& c, int64_t limit, Probe* known, bool exact) const {
    auto probe = [&](int64_t b, double& f) {
        const AtBatch r = atBatch(c, double(b), exact);
        f = sloRatio(r);
        if (f <= 1.0 && b > known->b) *known = {b, r};
        return f <= 1.0;
    };
    int64_t lo = 1, hi = limit;
    double fLo = 0, fHi = 0;
    if (probe(hi, fHi)) return hi;
    if (batchSearch == BatchSearch::Bisection) {
        if (!probe(1, fLo)) return 1;
        double f = 0;
        while (hi - lo > 1) { // invariant: lo meets the SLOs, hi does not
            const int64_t mid = lo + (hi - lo) / 2;
            (probe(mid, f) ? lo : hi) = mid;
        }
        return lo;
    }
    if (limit <= 1) return 1;
    // The probes so far, g = ratio - 1 at x, x2 the latest.
    double x0 = 0, g0 = 0, x1 = 0, g1 = 0, x2 = double(hi), g2 = fHi - 1.0;
    int points = 1;
    auto record = [&](int64_t b, double f) {
        x0 = x1, g0 = g1, x1 = x2, g1 = g2, x2 = double(b), g2 = f - 1.0, ++points;
    };
    double gLo = 0, gHi = fHi - 1.0;
    // The first probe inside: where a ratio growing as the square root of the batch would reach 1 from its value
    // at the cap, cap / f(cap)^2. The ratio bends that way (a step's weights are read whatever the batch, and a
    // MoE step reads more of its experts as the batch grows, all of them long before the cap), so the guess
    // lands near the boundary, mostly below it, and then batch 1 need not be probed at all. Over bench
    // --eval-speed's pools of the sample scenarios: 4-18% fewer probes on ten of twelve (DeepSeek-V3 6.14 ->
    // 5.49 a plan on 32x8 H100); plans whose batch 1 misses the SLOs pay the guess as a third probe (Llama-3.1-
    // 405B on 16x8 H200 2.45 -> 3.01, Mixtral 8x22B 2.35 -> 3.06). Batch 1 is probed where the guess misses, so
    // the bracket always holds.
    const int64_t guess = std::clamp(int64_t(double(limit) / (fHi * fHi)), int64_t(1), limit - 1);
    if (guess > 1) {
        double f = 0;
        const bool meets = probe(guess, f);
        record(guess, f);
        (meets ? lo : hi) = guess;
        (meets ? gLo : gHi) = f - 1.0;
    }
    if (lo == 1) {
        if (!probe(1, fLo)) return 1;
        record(1, fLo);
        gLo = fLo - 1.0;
    }
    // Inverse quadratic interpolation through the last three probes of g (as Brent's method; the ratio bends
    // near its boundary, where a step's per-token work overtakes its weight reads and the busiest data-parallel
    // rank's share grows as a square root), else the secant through the last two, kept inside the bracket; a
    // guess outside it falls back to regula falsi between the bracket's ends.
    for (int round = 0; hi - lo > 1; ++round) {
        int64_t mid;
        if (round < kSecantRounds && gHi > gLo) {
            double est = -1.0;
            if (points >= 3 && g0 != g1 && g1 != g2 && g0 != g2)
                est = x0 * g1 * g2 / ((g0 - g1) * (g0 - g2)) + x1 * g0 * g2 / ((g1 - g0) * (g1 - g2)) +
                      x2 * g0 * g1 / ((g2 - g0) * (g2 - g1));
            if (!(est > double(lo) && est < double(hi)) && g2 != g1 && (g2 - g1) / (x2 - x1) > 0)
                est = x2 - g2 * (x2 - x1) / (g2 - g1);
            if (!(est > double(lo) && est < double(hi)))
                est = double(lo) + (-gLo) / (gHi - gLo) * double(hi - lo);
            mid = std::clamp(int64_t(std::floor(est)), lo + 1, hi - 1);
        } else {
            mid = lo + (hi - lo) / 2;
        }
        double f = 0;
        if (probe(mid, f))
            lo = mid, gLo = f - 1.0;
        else
            hi = mid, gHi = f - 1.0;
        record(mid, f);
    }
    return lo;
}

Metrics CostModel::Impl::evaluate(const Plan& p, Compiled& c) const {
    Metrics m;
    m.rooflineThroughput = roofline;
    if (auto why = checkPlan(p)) {
        m.violation = *why;
        m.violations.push_back(*why);
        m.shortfall = 1e9;
        return m;
    }
    m.valid = true;
    compile(p, c);
    const Workload& w = s.workload;
    const int64_t fixedB = p.batch > 0 ? p.batch : w.fixedBatch ? w.batch : 0;
    const int64_t memLimit = memoryBatchLimit(c);
    const int64_t limit = std::min(memLimit, budgetBatchLimit(c));
    int64_t B;
    bool memOk = true;
    Probe known; // the search's last probe that met the SLOs, so the chosen batch is not evaluated twice
    if (fixedB > 0) {
        B = fixedB;
        memOk = B <= memLimit;
    } else if (limit < 1) {
        B = 1;
        memOk = false;
    } else {
        // Serving: the probes take TTFT's lower bound (no chunk-step pass); where the exact TTFT at the
        // batch found misses the SLO, a second search below it takes the exact TTFT.
        B = largestBatch(c, limit, &known, false);
        if (w.phase == Phase::Serving && w.ttftMs > 0) {
            AtBatch at = known.b == B ? known.r : atBatch(c, double(B), false);
            finishTtft(c, at);
            if (sloRatio(at) <= 1.0 || B <= 1) {
                known = {B, at};
            } else {
                Probe exact;
                B = largestBatch(c, B - 1, &exact, true);
                known = exact;
            }
        }
    }
    AtBatch r = known.b == B ? known.r : atBatch(c, double(B));
    finishTtft(c, r);
    m.batch = B;
    m.throughput = r.throughput;
    m.throughputPerGpu = r.throughput / double(s.gpus());
    m.ttftMs = r.ttft * 1e3;
    m.tpotMs = r.tpot * 1e3;
    if (w.phase == Phase::Serving) m.ttftChunks = int(r.chunks), m.chunkMs = r.chunkPeriod * 1e3;
    m.prefillBudget = int64_t(c.budget);
    m.twoBatchOverlap = r.twoBatch;
    m.spec = c.spec;
    m.tokensPerStep = c.specE;
    m.stepMs = r.cycle * 1e3;
    fillMemory(c, double(B), m);
    m.rooflineFraction = roofline > 0 ? m.throughput / roofline : 0.0;
    const double slo = sloRatio(r);
    double shortfall = 1.0;
    if (!memOk) {
        // Said in the terms of the engine's rule: the KV pool it leaves, or (SGLang) the room outside its
        // static fraction for the activations.
        static const char* const kFlag[] = {"gpu_memory_utilization", "mem_fraction_static",
                                            "free_gpu_memory_fraction"};
        const std::string rule =
            std::string(kMemoryRuleNames[size_t(m.memoryRule)]) + " " + kFlag[size_t(m.memoryRule)];
        const double outside = (1.0 - m.memoryFraction) * m.gpuMemoryGiB,
                     dynamic = m.activationsGiB + m.reserveGiB;
        Sentence say;
        if (m.memoryRule == MemoryRule::Sglang && m.kvCacheGiB <= m.kvPoolGiB && dynamic > outside) {
            say << "memory: activations and reserve " << Fixed{dynamic, 1} << " GiB per GPU at batch "
                << (long long)B << ", more than the " << Fixed{outside, 1} << " GiB of "
                << Fixed{m.gpuMemoryGiB, 1} << " that " << rule << " " << General{m.memoryFraction, 3}
                << " leaves for them";
            shortfall = std::max(shortfall, dynamic / std::max(1e-9, outside));
        } else {
            say << "memory: " << Fixed{m.memoryPerGpuGiB, 1} << " GiB per GPU needed at batch "
                << (long long)B << ", " << Fixed{m.capacityGiB, 1} << " GiB usable (KV cache "
                << Fixed{m.kvCacheGiB, 1} << " GiB, pool " << Fixed{m.kvPoolGiB, 1} << " GiB by " << rule
                << " " << General{m.memoryFraction, 3} << " of " << Fixed{m.gpuMemoryGiB, 1} << ")";
            shortfall = std::max(shortfall, std::max(m.memoryPerGpuGiB / m.capacityGiB,
                                                     m.kvCacheGiB / std::max(1e-9, m.kvPoolGiB)));
        }
        m.violations.push_back(say.take());
    }
    if (r.overTokenBudget && w.phase != Phase::Prefill) {
        const double need = stepAt(c, double(B)).tokens();
        m.violations.push_back((Sentence()
                                << "prefill budget: a step at batch " << (long long)B << " needs "
                                << Fixed{need, 0} << " tokens, the budget is " << Fixed{c.budget, 0})
                                   .take());
        shortfall = std::max(shortfall, need / c.budget);
    }
    if (slo > 1.0) {
        describeSlo(r, B, m);
        shortfall = std::max(shortfall, slo);
    }
    m.feasible = m.violations.empty();
    m.shortfall = m.feasible ? 0.0 : shortfall;
    if (!m.feasible) m.violation = m.violations.front();
    return m;
}

// ------------------------------------------------------------------ validity

std::optional<std::string> CostModel::Impl::checkPlan(const Plan& p) const {
    if (auto e = checkDegrees(s, p.degrees, p.choice(Op::Experts))) return e;
    const uint64_t allowed =
        p.degrees.tp >= 1 && p.degrees.tp <= kAllowedTp ? allowedMask(p.degrees.tp) : uint64_t(0);
    for (int i = 0; i < kOpCount; ++i) {
        const Op op = Op(i);
        if (!relevant[size_t(i)]) continue;
        const int c = p.choices[i];
        if (c >= 0 && c < 3 && (allowed >> (3 * i + c) & 1u)) continue;
        if (auto e = checkChoice(s, p.degrees, op, c)) return e;
    }
    if (auto e = checkSpeculative(s, p.spec)) return e;
    if (!p.stageLayers.empty())
        if (auto e = checkStageLayers(s, p)) return e;
    if (!p.layerGroups.empty()) return checkLayerGroups(s, p);
    return std::nullopt;
}

// ---------------------------------------------------------------------- public

std::vector<std::pair<int, int>> pipelineStages(int layers, int pp) {
    pp = std::max(1, pp);
    std::vector<std::pair<int, int>> out;
    for (int i = 0; i < pp; ++i) out.push_back(stageSpan(layers, pp, i));
    return out;
}

std::vector<std::pair<int, int>> pipelineStages(int layers, const Plan& p) {
    if (p.stageLayers.empty()) return pipelineStages(layers, p.degrees.pp);
    std::vector<std::pair<int, int>> out;
    int begin = 0;
    for (int n : p.stageLayers) out.emplace_back(begin, n), begin += n;
    return out;
}

CostModel::CostModel(Scenario s) : d(std::make_unique<Impl>(std::move(s))) {}
CostModel::~CostModel() = default;
CostModel::CostModel(CostModel&&) noexcept = default;
CostModel& CostModel::operator=(CostModel&&) noexcept = default;

const Scenario& CostModel::scenario() const {
    return d->s;
}
std::optional<std::string> CostModel::checkPlan(const Plan& p) const {
    return d->checkPlan(p);
}

Metrics CostModel::evaluate(const Plan& p) const {
    // One per thread, reused: compile() sets every field it reads, and the stage vectors keep their room, so
    // an evaluation allocates nothing for them.
    thread_local Compiled c;
    return d->evaluate(p, c);
}

Evaluation CostModel::explain(const Plan& p) const {
    Compiled c;
    Evaluation e;
    e.metrics = d->evaluate(p, c);
    if (!e.metrics.valid) return e;
    const Workload& w = d->s.workload;
    const double B = double(e.metrics.batch);
    const double I = double(w.inputTokens);
    if (w.phase == Phase::Decode)
        e.decode = d->breakdown(c, d->stepAt(c, B),
                                c.spec.on() ? "decode step (" + specText(c.spec) + ")" : "decode step");
    if (w.phase == Phase::Prefill) e.prefill = d->breakdown(c, {0.0, B * I, B, B * I}, "prefill pass");
    if (w.phase == Phase::Serving) {
        // The serving step as it runs (decode tokens and the new prompts' prefill tokens in one pass), and
        // one prompt's prefill alone for reference.
        char name[96];
        const Step st = d->stepAt(c, B);
        std::snprintf(name, sizeof name, "serving step (%.0f decode + %.0f prefill tokens)", st.dec, st.pre);
        e.decode = d->breakdown(c, st, name);
        e.prefill = d->breakdown(c, {0.0, I, 1.0, I}, "prefill pass (one prompt)");
    }
    return e;
}

void CostModel::setBatchSearch(BatchSearch b) {
    d->batchSearch = b;
}

double CostModel::rooflineThroughput() const {
    return d->roofline;
}
Plan CostModel::megatronPlan() const {
    return d->megatronPlan();
}

} // namespace sp
