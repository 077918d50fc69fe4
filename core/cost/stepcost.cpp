// A step's time at any composition: the compiled plan with its attention terms rescaled per call.

#include "core/cost/stepcost.h"

#include "core/cost/impl.h"

#include <cmath>

namespace sp {

namespace {

/// Ratios within rounding of 1 are 1, so the steady composition reproduces the compiled terms bit for bit
/// (its prefill tokens per prompt, B E I / O over B E / O, may differ from I in the last place).
double snapToOne(double r) {
    return std::abs(r - 1.0) < 1e-12 ? 1.0 : r;
}

} // namespace

struct StepCost::Impl {
    const CostModel::Impl* m = nullptr;
    Compiled c;
    /// The attention core of each slot: its index among the slot's ops and its compiled sequence terms
    /// (decode step's and prefill pass's).
    struct Att {
        int slot = 0, op = 0;
        double fDec = 0, bDec = 0, fPre = 0, bPre = 0;
    };
    std::array<Att, kMaxSlots> att{};
    int nAtt = 0;
    double ctxDecode = 1, S = 1;
    double rd = 1, rf = 1, rb = 1; ///< the ratios the terms are set to now

    /// The pass at a composition: passTimes, with c.classTime holding each class of stages' seconds.
    PassTimes pass(const StepLoad& load);
    void apply(double d, double f, double b) {
        if (d == rd && f == rf && b == rb) return;
        rd = d, rf = f, rb = b;
        for (int i = 0; i < nAtt; ++i) {
            const Att& a = att[size_t(i)];
            OpTerm& dec = c.body[size_t(a.slot)][0].ops[a.op];
            OpTerm& pre = c.body[size_t(a.slot)][1].ops[a.op];
            dec.fSeq = a.fDec * d, dec.bSeq = a.bDec * d;
            pre.fSeq = a.fPre * f, pre.bSeq = a.bPre * b;
        }
    }
};

StepCost::StepCost(const CostModel& model, const Plan& plan) : d(std::make_unique<Impl>()) {
    d->m = model.d.get();
    const CostModel::Impl& m = *d->m;
    m.compile(plan, d->c);
    d->ctxDecode = std::max(1.0, m.ctxDecode);
    d->S = std::max(1.0, double(m.s.workload.inputTokens));
    for (int k = 0; k < d->c.nSlots; ++k) {
        const Block& b = d->c.body[size_t(k)][0];
        for (int i = 0; i < b.nOps; ++i) {
            if (!b.ops[i].attention) continue;
            const OpTerm& p = d->c.body[size_t(k)][1].ops[i];
            d->att[size_t(d->nAtt++)] = {k, i, b.ops[i].fSeq, b.ops[i].bSeq, p.fSeq, p.bSeq};
        }
    }
}
StepCost::~StepCost() = default;
StepCost::StepCost(StepCost&&) noexcept = default;
StepCost& StepCost::operator=(StepCost&&) noexcept = default;

double StepCost::seconds(const StepLoad& load) const {
    if (load.decodeSeqs <= 0 && load.prefillTokens <= 0) return 0.0;
    const PassTimes t = d->pass(load);
    return std::max(double(d->c.d.pp) * t.stageMax, t.stageSum);
}

int StepCost::stages() const {
    return std::max(1, d->c.d.pp);
}

void StepCost::stageSeconds(const StepLoad& load, double* out) const {
    const int pp = stages();
    if (load.decodeSeqs <= 0 && load.prefillTokens <= 0) {
        std::fill(out, out + pp, 0.0);
        return;
    }
    d->pass(load);
    const Compiled& c = d->c;
    for (int i = 0; i < pp; ++i) out[i] = c.classTime[size_t(c.classOf[size_t(i)])];
}

PassTimes StepCost::Impl::pass(const StepLoad& load) {
    Impl& x = *this;
    const Compiled& c = x.c;
    const double q = c.specQ;
    Step st;
    st.q = q;
    st.dec = std::max(0.0, load.decodeSeqs) * q;
    st.pre = std::max(0.0, load.prefillTokens);
    st.prompts = st.pre > 0 ? std::max(1e-9, load.prefillPrompts) : 0.0;
    st.preCrit = std::max(st.pre, load.busiestPrefill);
    const double rd = load.decodeContext > 0 ? snapToOne(load.decodeContext / x.ctxDecode) : 1.0;
    double rf = 1.0, rb = 1.0;
    if (st.pre > 0) {
        const double perPrompt = st.pre / st.prompts;
        const double ctx = load.prefillContext > 0 ? load.prefillContext : (perPrompt + 1.0) / 2.0;
        rf = snapToOne(perPrompt * ctx / (x.S * (x.S + 1.0) / 2.0));
        rb = snapToOne(perPrompt / x.S);
    }
    x.apply(rd, rf, rb);
    return x.m->passTimes(c, st);
}

StepLoad StepCost::steadyLoad(double batch) const {
    const Step st = d->m->stepAt(d->c, batch);
    StepLoad l;
    l.decodeSeqs = st.dec / st.q;
    l.decodeContext = d->ctxDecode;
    l.prefillTokens = st.pre;
    l.prefillPrompts = st.prompts;
    l.prefillContext = (d->S + 1.0) / 2.0;
    l.busiestPrefill = st.preCrit;
    return l;
}

int64_t StepCost::tokenBudget() const {
    return int64_t(d->c.budget);
}

int StepCost::tokensVerified() const {
    return int(std::lround(d->c.specQ));
}

int StepCost::lockstepReplicas() const {
    return std::max(1, int(std::lround(d->c.syncRanks)));
}

double StepCost::kvTokens(double batch) const {
    const CostModel::Impl& m = *d->m;
    const Compiled& c = d->c;
    const double held = m.kvContext() + double(c.spec.on() ? c.spec.draftTokens : 0);
    double best = -1;
    for (const int i : c.classStage) {
        double fixed, perSeq, wts, kv;
        m.stageMemory(c, i, fixed, perSeq, wts, kv);
        // kv = pp x held x (the stage's KV bytes per token per GPU), see stageMemory.
        const double perToken = kv / (double(c.d.pp) * std::max(1.0, held));
        if (perToken <= 0) continue;
        double capacity = 0, pool = 0;
        m.stageCapacity(c, fixed, perSeq, wts, kv, batch, capacity, pool);
        const double tokens = std::max(0.0, pool) / perToken;
        if (best < 0 || tokens < best) best = tokens;
    }
    return best < 0 ? 1e18 : best;
}

} // namespace sp
