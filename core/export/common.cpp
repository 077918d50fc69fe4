// What the engine exporters share. The engines' fixed sharding scheme (vLLM, SGLang and TensorRT-LLM alike,
// after Megatron-LM) is sp::engineChoice() (core/model/plan.h); the flags each engine takes are cited in its
// own file.
#include "core/export/common.h"

#include "core/common/text.h"
#include "core/cost/validity.h"

#include <algorithm>
#include <cstdio>
#include <numeric>

namespace sp::exporting {

namespace {

std::string opName(Op op) {
    return std::string(op >= Op::MoeNorms ? "moe." : "") + std::string(kOpNames[int(op)]);
}

std::string choiceName(Op op, int c) {
    return std::string(choiceNames(op)[size_t(c)]);
}

/// The operators whose sharding the engines fix (the experts are mapped through their own flags).
constexpr Op kMappedOps[] = {Op::Embedding, Op::Norms,   Op::Qkv,          Op::Attention,     Op::OutProj,
                             Op::FfnUp,     Op::FfnDown, Op::Router,       Op::SharedExperts, Op::LmHead,
                             Op::MoeNorms,  Op::MoeQkv,  Op::MoeAttention, Op::MoeOutProj};

/// The DP/TP/PP axes with more than one GPU, innermost first; with `tpIsData` the plan's tp axis counts as
/// data parallelism (it is folded into dp).
std::vector<std::string> meshAxes(const std::vector<Axis>& order, const Degrees& d, bool tpIsData) {
    std::vector<std::string> out;
    for (Axis a : order) {
        if (tpIsData && a == Axis::TP) continue;
        const int n = a == Axis::DP && tpIsData ? d.dp * d.tp : d.get(a);
        if (n > 1) out.emplace_back(kAxisNames[int(a)]);
    }
    return out;
}

std::string joinedInts(const std::vector<int>& v, const char* sep) {
    std::string s;
    for (int x : v) s += (s.empty() ? "" : sep) + std::to_string(x);
    return s;
}

} // namespace

std::vector<int> engineDefaultStages(const EngineVersion& v, int layers, int pp) {
    pp = std::max(1, pp);
    std::vector<int> out(size_t(pp), layers / pp);
    const int extra = layers % pp;
    switch (v.engine) {
    case ServingEngine::Vllm:
        // vLLM 0.10.2, vllm/distributed/utils.py get_pp_indices (tag v0.10.2, commit e017120ed146): with
        // VLLM_PP_LAYER_PARTITION unset, `for i in range(2, remaining_layers + 2): partitions[-i] += 1`:
        // the extra layers go on the stages just before the last (the last stage holds the final norm).
        for (int i = 2; i < extra + 2; ++i) out[size_t(pp - i)] += 1;
        break;
    case ServingEngine::Sglang:
        // python/sglang/srt/distributed/utils.py get_pp_indices, SGLANG_PP_LAYER_PARTITION unset. SGLang
        // 0.4.9 (commit ec5f9c6269c1): every stage takes layers // pp and `if pp_rank == pp_size - 1:
        // end_layer = num_hidden_layers`, the last stage holds all the extra layers. From commit
        // b704b0a922dd (#13977, before 0.5.6's 7ae368efde14): "Distribute the extra layers to the last
        // 'remainder' partitions", one each.
        if (v.ppExtraOnLastStages)
            for (int i = 0; i < extra; ++i) out[size_t(pp - 1 - i)] += 1;
        else
            out.back() += extra;
        break;
    default:
        // TensorRT-LLM, tensorrt_llm/mapping.py Mapping.pp_layers (NVIDIA/TensorRT-LLM, read at commit
        // b35ac1b64368): torch.tensor_split(torch.arange(num_layers), pp_size), "first n ranks get one
        // extra layer". Dynamo's workers are the engines above.
        for (int i = 0; i < extra; ++i) out[size_t(i)] += 1;
        break;
    }
    return out;
}

std::vector<int> planStages(const Ctx& c) {
    std::vector<int> out;
    for (const auto& [begin, n] : pipelineStages(int(c.m.layers), c.p)) out.push_back(n);
    return out;
}

std::string layerPartition(const Ctx& c) {
    if (c.d.pp <= 1) return {};
    const std::vector<int> plan = planStages(c);
    if (c.p.stageLayers.empty() && plan == engineDefaultStages(c.version, int(c.m.layers), c.d.pp)) return {};
    // The engines' parsers (get_pp_indices, cited at engineDefaultStages) read the variable as
    // `[int(layer) for layer in partition_list_str.split(",")]` and refuse it unless it has pp_size entries
    // summing to num_hidden_layers: comma separated, no spaces, first stage first.
    return joinedInts(plan, ",");
}

void setLayerPartition(const Ctx& c, const char* layerEnv, LaunchCommand& lc) {
    const std::string value = layerPartition(c);
    if (value.empty() || !layerEnv) return;
    for (auto& node : lc.nodes)
        if (!node.commands.empty()) node.env.emplace_back(layerEnv, value);
}

std::string commentLines(const std::string& text, size_t width) {
    const std::string note = printable(text);
    std::string out, line = "#";
    size_t i = 0;
    while (i < note.size()) {
        while (i < note.size() && note[i] == ' ') ++i;
        size_t j = note.find(' ', i);
        if (j == std::string::npos) j = note.size();
        if (j == i) break;
        const std::string word = note.substr(i, j - i);
        if (line.size() > 3 && line.size() + 1 + word.size() > width) {
            out += line + "\n";
            line = "#  ";
        }
        line += " " + word;
        i = j;
    }
    return out + line + "\n";
}

std::string lower(std::string s) {
    for (char& c : s)
        if (c >= 'A' && c <= 'Z') c = char(c - 'A' + 'a');
    return s;
}

std::string str(int64_t v) {
    return std::to_string(v);
}

/// 0.95, 0.9, 0.925: a fraction with at most three decimals and no trailing zeros.
std::string fraction(double x) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3f", x);
    std::string s = buf;
    while (s.size() > 1 && s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
    return s;
}

std::string gib(double x) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f", x);
    return buf;
}

std::string joined(const std::vector<std::string>& v, const char* sep) {
    std::string s;
    for (const auto& x : v) s += (s.empty() ? "" : sep) + x;
    return s;
}

/// Whether the model has layers the operator runs in.
bool opApplies(const Model& m, Op op) {
    return opRelevant(m, op); // the cost model's rule (core/cost/validity.h)
}

/// Whether a choice divides the operator's weights, heads or sequences among the tp group, as opposed to
/// running it whole on each GPU's own tokens (token, replicated, batch). Norms and the router hold no split
/// weights either way; the experts have their own group (ep x etp x edp).
bool splitsOverTp(Op op, int c) {
    switch (baseOp(op)) {
    case Op::Embedding:
        return c == choice::EmbVocab;
    case Op::Qkv:
        return c != choice::QkvToken;
    case Op::Attention:
        return c != choice::AttnBatch;
    case Op::OutProj:
        return c != choice::OutToken;
    case Op::FfnUp:
        return c != choice::UpToken;
    case Op::FfnDown:
        return c != choice::DownToken;
    case Op::SharedExperts:
        return c != choice::SharedToken;
    case Op::LmHead:
        return c != choice::HeadToken;
    default:
        return false;
    }
}

/// The per-operator choices that differ from the engine's fixed scheme. `group(op)` is the number of GPUs
/// the engine shards that operator over; ops for which it returns 0 are left out (placed by the engine in a
/// way the flags do not set).
std::vector<std::string> operatorDifferences(const Ctx& c, const char* engine,
                                             const std::function<int(Op)>& group) {
    std::vector<std::string> diffs;
    for (Op op : kMappedOps) {
        if (!opApplies(c.m, op)) continue;
        const int g = group(op);
        if (g == 0) continue;
        const int ch = c.p.choice(op);
        if (c.d.tp == 1 && g == 1) continue; // both run it whole on one GPU: every choice is the same
        const std::string planSide =
            opName(op) + " " + choiceName(op, ch) +
            (splitsOverTp(op, ch) || baseOp(op) == Op::Norms || baseOp(op) == Op::Router
                 ? " over tp " + str(c.d.tp)
                 : "");
        if (g == 1) {
            if (splitsOverTp(op, ch))
                diffs.push_back(planSide + " (" + engine + ": whole on each GPU, its own tokens)");
        } else if (g != c.d.tp) {
            diffs.push_back(planSide + " (" + engine + ": " + choiceName(op, engineChoice(op)) + " over " +
                            str(g) + " GPUs)");
        } else if (ch != engineChoice(op)) {
            diffs.push_back(planSide + " (" + engine + ": " + choiceName(op, engineChoice(op)) + ")");
        }
    }
    return diffs;
}

void addCommonNotes(const Ctx& c, const char* engine, LaunchCommand& lc, const char* batchFlag,
                    const char* layerEnv) {
    auto& n = lc.notes;
    const Degrees& d = c.d;
    if (c.p.choice(c.attnOp) == choice::AttnSequence && d.tp > 1)
        n.push_back(std::string("Attention by sequence (context parallelism over tp ") + str(d.tp) +
                    ") is not mapped: " + engine +
                    " shards attention by head across its tensor-parallel group.");
    if (d.pp > 1) {
        const std::vector<int> plan = planStages(c);
        const std::vector<int> own = engineDefaultStages(c.version, int(c.m.layers), d.pp);
        const std::string sizes = joinedInts(plan, ", "), ownSizes = joinedInts(own, ", ");
        const std::string whose = c.p.stageLayers.empty() ? "the balanced split" : "the plan's own split";
        const std::string value = layerPartition(c);
        if (!value.empty() && layerEnv)
            n.push_back("Pipeline: the plan's " + str(d.pp) + " stages hold " + sizes + " layers (" + whose +
                        "); " + engine + " would load " + ownSizes + ", so every node exports " + layerEnv +
                        "=" + value + " before the command.");
        else if (!value.empty() && plan != own)
            n.push_back("Pipeline: the plan's " + str(d.pp) + " stages hold " + sizes + " layers (" + whose +
                        "); " + engine + " loads " + ownSizes + " (no flag sets the split).");
    }
    if (c.m.weights == Dtype::INT8 || c.m.weights == Dtype::FP4 || c.m.weights == Dtype::INT4)
        n.push_back(std::string("Weights ") + std::string(nameOf(c.m.weights)) +
                    ": not mapped; pick the quantization method of your checkpoint (" + engine +
                    " reads it from the checkpoint's quantization_config).");
    if (c.m.activations == Dtype::FP8 || c.m.activations == Dtype::INT8 || c.m.activations == Dtype::FP4)
        n.push_back(std::string("Activations ") + std::string(nameOf(c.m.activations)) +
                    ": not an engine flag; the quantization method of the weights decides the precision of "
                    "the GEMMs' inputs.");
    if (c.m.kvCache == Dtype::INT8 || c.m.kvCache == Dtype::FP4)
        n.push_back(std::string("KV cache ") + std::string(nameOf(c.m.kvCache)) + ": not mapped; " + engine +
                    " keeps the KV cache in the model's dtype unless told otherwise.");
    if (!c.metrics.feasible && c.metrics.valid)
        n.push_back("The cost model finds this plan infeasible: " + c.metrics.violation + ".");
    const Workload& w = c.s.workload;
    if (w.ttftMs > 0 || w.tpotMs > 0) {
        std::vector<std::string> slos;
        if (w.ttftMs > 0) slos.push_back("TTFT " + fraction(w.ttftMs) + " ms");
        if (w.tpotMs > 0) slos.push_back("TPOT " + fraction(w.tpotMs) + " ms");
        n.push_back("The SLOs (" + joined(slos, ", ") + ") are not engine flags" +
                    (c.batch > 0
                         ? std::string(": the ") + batchFlag + " cap is what meets them in the cost model."
                         : std::string(".")));
    }
    if (w.phase != Phase::Serving)
        n.push_back(std::string("The workload is ") + (w.phase == Phase::Decode ? "decode" : "prefill") +
                    " only: in a prefill-decode disaggregated deployment this is the " +
                    (w.phase == Phase::Decode ? "decode" : "prefill") +
                    " instances' command (the disaggregation flags are not mapped).");
    // Which efficiency factors the figures above come from (a GPU family's fit, or none).
    if (!c.s.cluster.efficiencySource.empty())
        n.push_back("Cost model: the batch caps and figures here use " + c.s.cluster.efficiencySource + ".");
}

/// The plan's mesh order against the engine's rank layout, when one launch (`launchGpus`) spans nodes.
void meshNote(const Ctx& c, const char* engine, const std::vector<Axis>& engineOrder, bool tpIsData,
              int launchGpus, LaunchCommand& lc) {
    if (launchGpus <= c.gpn) return; // one node: every group is on NVLink whatever the order
    const std::vector<Axis> planOrder(c.p.meshOrder.begin(), c.p.meshOrder.end());
    const auto plan = meshAxes(planOrder, c.d, tpIsData), eng = meshAxes(engineOrder, c.d, tpIsData);
    if (plan == eng) return;
    lc.notes.push_back("Mesh order: the plan packs " + joined(plan, ", then ") +
                       " from the innermost (inside a node) outwards; " + engine + " lays ranks out " +
                       joined(eng, ", then ") +
                       ", so its groups span other GPUs and links than the plan's cost assumes.");
}

Refusal specOff(const Ctx& c, const std::string& reason, bool pipeline) {
    Refusal r;
    r.reason = reason;
    Plan a = c.p;
    a.spec = {};
    r.candidates.push_back({"speculative decoding " + specText(c.p.spec) + " -> none", a});
    if (pipeline) {
        Plan b = c.p;
        const Degrees& d = c.d;
        b.degrees.pp = 1, b.degrees.dp = d.dp * d.pp, b.stageLayers.clear();
        if (c.moe) b.degrees.edp = d.edp * d.pp;
        r.candidates.push_back(
            {"pp " + str(d.pp) + " -> 1, dp " + str(d.dp) + " -> " + str(b.degrees.dp), b});
    }
    return r;
}

std::string specDraftModel(const Ctx& c) {
    switch (c.p.spec.method) {
    case SpecMethod::Eagle3:
        return c.m.spec.eagle3.hubId;
    case SpecMethod::Draft:
        return c.m.spec.draft.hubId;
    default:
        return {};
    }
}

std::optional<Refusal> specRefusal(const Ctx& c, const char* engine) {
    const Speculative& s = c.p.spec;
    if (!s.on()) return std::nullopt;
    const EngineVersion& v = c.version;
    const std::string who = std::string(engine) + " " + v.version;
    if (v.specMethodName(s.method, c.m.architecture).empty()) {
        std::string lacks;
        switch (s.method) {
        case SpecMethod::Mtp:
            lacks = "has no MTP draft module for " +
                    (c.m.architecture.empty() ? c.m.name + " (its model file names no architecture)"
                                              : c.m.architecture);
            break;
        case SpecMethod::Eagle3:
            lacks = "runs no EAGLE-3 heads";
            break;
        case SpecMethod::Draft:
            lacks = "runs no separate draft model";
            break;
        default:
            lacks = "has no n-gram (prompt lookup) drafting";
        }
        return specOff(c, who + " " + lacks + " (" + v.specSource + ")", false);
    }
    const bool needsModel = s.method == SpecMethod::Eagle3 || s.method == SpecMethod::Draft;
    if (needsModel && specDraftModel(c).empty())
        return specOff(c,
                       std::string("the model's ") +
                           (s.method == SpecMethod::Eagle3 ? "EAGLE-3 head" : "draft model") +
                           " names no hub_id, the repository " + engine + " would load it from",
                       false);
    if (v.specNoPipeline && c.d.pp > 1)
        return specOff(c,
                       who + " runs no speculative decoding with pipeline parallelism (pp " + str(c.d.pp) +
                           "; " + v.specPipelineSource + ")",
                       true);
    return std::nullopt;
}

void specNote(const Ctx& c, const char* engine, const std::string& flags, LaunchCommand& lc) {
    const Speculative& s = c.p.spec;
    if (!s.on()) return;
    const size_t m = size_t(s.method);
    const std::vector<double>& all = acceptanceRates(c.s, s.method);
    const std::vector<double> rates(all.begin(),
                                    all.begin() + std::min<long>(long(all.size()), s.draftTokens));
    std::vector<std::string> shown;
    for (double a : rates) shown.push_back(fraction(a));
    const std::string source = !c.s.workload.acceptance[m].empty()
                                   ? std::string("the workload's acceptance_rates")
                                   : "the model's default: " + c.m.spec.acceptanceSource[m];
    // E as the cost model evaluated this plan (Metrics::tokensPerStep), else from the same rates.
    const double e = c.metrics.valid && c.metrics.spec == s ? c.metrics.tokensPerStep
                                                            : tokensPerStep(rates, s.draftTokens);
    const std::string draft = specDraftModel(c);
    const std::string what = s.method == SpecMethod::Mtp
                                 ? "MTP (the model's own multi-token-prediction module)"
                             : s.method == SpecMethod::Eagle3 ? "EAGLE-3 with the head " + draft
                             : s.method == SpecMethod::Draft  ? "the draft model " + draft
                                                              : "n-gram prompt lookup";
    lc.notes.push_back(
        "Speculative decoding: " + what + ", K = " + count(s.draftTokens, "draft token") + " per step (" +
        std::string(engine) + ": " + flags + "). The plan assumes acceptance rates " + joined(shown, ", ") +
        " (" + source + "), so a step yields E = " + fraction(e) +
        " tokens per sequence (the cost model's tokens per step). Real acceptance depends on "
        "the text served (its domain, prompts and sampling temperature), and the speed-up with "
        "it: read the engine's acceptance metrics and give the workload those acceptance_rates "
        "to re-plan.");
}

/// Weights and activations dtypes: --quantization and --dtype (same spelling in both engines).
std::optional<Refusal> headsRefusal(const Ctx& c, int attnTp, const char* engine, bool batchAttention) {
    const int64_t heads = c.m.attention.heads;
    if (attnTp <= 1 || heads <= 0 || heads % attnTp == 0) return std::nullopt;
    Refusal r;
    r.reason = std::string(engine) + " shards attention by head, and " + str(heads) +
               " heads do not divide among " + str(attnTp) + " GPUs";
    const int g = int(std::gcd(int64_t(c.d.tp), heads));
    Plan a = c.p;
    a.degrees.tp = g, a.degrees.dp = c.d.dp * (c.d.tp / g);
    r.candidates.push_back(
        {"tp " + str(c.d.tp) + " -> " + str(g) + ", dp " + str(c.d.dp) + " -> " + str(a.degrees.dp), a});
    if (batchAttention) {
        Plan b = c.p;
        for (Op op : {Op::Qkv, Op::MoeQkv}) b.setChoice(op, choice::QkvToken);
        for (Op op : {Op::Attention, Op::MoeAttention}) b.setChoice(op, choice::AttnBatch);
        for (Op op : {Op::OutProj, Op::MoeOutProj}) b.setChoice(op, choice::OutToken);
        r.candidates.push_back(
            {"attention by batch over tp " + str(c.d.tp) + " (data-parallel attention)", b});
    }
    return r;
}

bool fp8Checkpoint(const Ctx& c) {
    // DeepSeek publishes V3 and R1 in FP8 (128x128 block scales, quantization_config in config.json); a
    // Hugging Face import reads weights fp8 from that quantization_config; checkpoints named FP8 are FP8.
    // (The source is left out: it may name the config a synthetic model was derived from.)
    const std::string all = lower(c.m.name + " " + c.model);
    return all.find("fp8") != std::string::npos || c.m.source.rfind("Hugging Face config.json", 0) == 0 ||
           all.find("deepseek-v3") != std::string::npos || all.find("deepseek-r1") != std::string::npos;
}

bool configNamesCustomCode(const Model& m) {
    // deepseek-ai/DeepSeek-V3's config.json (tests/data/hf/deepseek-v3.config.json, a copy of the Hub file):
    // "auto_map": {"AutoConfig": "configuration_deepseek.DeepseekV3Config", "AutoModelForCausalLM":
    // "modeling_deepseek.DeepseekV3ForCausalLM", ...}. The other configs there (Llama, Mixtral, Qwen,
    // gpt-oss, Qwen3-Next, GLM-4.5, MiniMax-M2, DeepSeek-V3.2-Exp as copied) name none.
    return m.architecture == "DeepseekV3ForCausalLM";
}

bool hopperGpu(const Gpu& gpu) {
    const std::string n = lower(gpu.name);
    for (const char* part : {"h100", "h200", "h800", "gh200"})
        if (n.find(part) != std::string::npos) return true;
    // H20 alone (not H200): "h20" followed by no digit.
    for (size_t i = n.find("h20"); i != std::string::npos; i = n.find("h20", i + 1)) {
        const bool start = i == 0 || !(n[i - 1] >= 'a' && n[i - 1] <= 'z');
        const bool end = i + 3 == n.size() || !(n[i + 3] >= '0' && n[i + 3] <= '9');
        if (start && end) return true;
    }
    return false;
}

bool sm100Gpu(const Gpu& gpu) {
    const std::string n = lower(gpu.name);
    for (const char* part : {"b200", "b300"})
        if (n.find(part) != std::string::npos) return true;
    return false;
}

int64_t sglangDefaultChunk(const EngineVersion& v, const Gpu& gpu) {
    const double mib = gpu.hbmGB * 1e9 / double(1 << 20);
    for (const auto& [belowGiB, tokens] : v.chunkedPrefill)
        if (belowGiB == 0 || mib < belowGiB * 1024.0) return tokens;
    return 0;
}

void rocmSetup(const Ctx& c, const char* engine, const std::string& attention, LaunchCommand& lc) {
    if (!amdGpu(c.s.cluster.gpu)) return;
    for (auto& node : lc.nodes)
        if (!node.commands.empty())
            for (const auto& kv : c.version.rocmEnv) node.env.push_back(kv);
    std::vector<std::string> env;
    for (const auto& [name, value] : c.version.rocmEnv) env.push_back(name + "=" + value);
    lc.notes.push_back(std::string("ROCm: ") + c.s.cluster.gpu.name + " is an AMD GPU, so run " + engine +
                       " " + c.version.version + "'s ROCm build, the image " + c.version.rocmImage +
                       (env.empty() ? std::string() : "; every node sets " + joined(env, ", ")) + ". " +
                       attention + " (" + c.version.rocmSource + ").");
}

void dtypeFlags(const Ctx& c, const char* engine, LaunchCommand& lc) {
    auto& a = lc.argv;
    const Model& m = c.m;
    if (m.activations == Dtype::FP16) a.insert(a.end(), {"--dtype", "float16"});
    if (m.activations == Dtype::FP32) a.insert(a.end(), {"--dtype", "float32"});
    if (m.activations == Dtype::BF16 && (m.weights == Dtype::FP16 || m.weights == Dtype::FP32))
        a.insert(a.end(), {"--dtype", "bfloat16"});
    if (m.weights != Dtype::FP8) return;
    if (fp8Checkpoint(c)) {
        lc.notes.push_back(std::string("Weights fp8: the checkpoint is taken to be FP8 already, so no "
                                       "--quantization flag: ") +
                           engine +
                           " reads its quantization_config. For a BF16 checkpoint add --quantization fp8.");
    } else {
        a.insert(a.end(), {"--quantization", "fp8"});
        lc.notes.push_back(std::string("Weights fp8: --quantization fp8 has ") + engine +
                           " quantize the BF16/FP16 checkpoint to FP8 as it loads; drop it for a checkpoint "
                           "that is FP8 already.");
    }
}

void add(std::vector<std::string>& argv, const char* name, const std::string& value) {
    argv.insert(argv.end(), {name, value});
}

void add(std::vector<std::string>& argv, const char* name, int64_t value) {
    add(argv, name, str(value));
}

std::optional<std::string> flagValue(const std::vector<std::string>& argv, std::string_view flag) {
    for (size_t i = 0; i + 1 < argv.size(); ++i)
        if (argv[i] == flag) return argv[i + 1];
    return std::nullopt;
}

std::string count(int64_t n, const char* what) {
    return str(n) + " " + what + (n == 1 ? "" : "s");
}

int64_t ceilDiv(int64_t a, int64_t b) {
    return (a + b - 1) / b;
}

void placeNodes(LaunchCommand& lc, int deployments, int deploymentGpus, int gpn,
                const std::function<std::vector<std::vector<std::string>>(int rank)>& commandFor,
                const char* portFlag) {
    lc.nodes.clear();
    if (deploymentGpus <= gpn) {
        // Whole launches per node, each on its own GPUs and port.
        const int perNode = std::max(1, gpn / deploymentGpus);
        const int nodes = int(ceilDiv(deployments, perNode));
        for (int n = 0; n < nodes; ++n) {
            NodeLaunch node;
            const int here = std::min(perNode, deployments - n * perNode);
            for (int k = 0; k < here; ++k) {
                auto cmds = commandFor(0);
                if (here > 1 || perNode > 1) {
                    std::vector<std::string> gpus;
                    for (int g = 0; g < deploymentGpus; ++g) gpus.push_back(str(k * deploymentGpus + g));
                    // CUDA_VISIBLE_DEVICES applies to the engine's command, the last one.
                    cmds.back().insert(cmds.back().begin(),
                                       {"env", "CUDA_VISIBLE_DEVICES=" + joined(gpus, ",")});
                    if (here > 1 && portFlag) add(cmds.back(), portFlag, 8000 + k);
                }
                for (auto& cmd : cmds) node.commands.push_back(std::move(cmd));
            }
            lc.nodes.push_back(std::move(node));
        }
        return;
    }
    // Launches over several nodes: NODE_RANK per node, HEAD_NODE_IP (that deployment's node 0) from the user.
    const int nodesPer = int(ceilDiv(deploymentGpus, gpn));
    for (int dep = 0; dep < deployments; ++dep)
        for (int r = 0; r < nodesPer; ++r) {
            NodeLaunch node;
            node.env = {{"NODE_RANK", str(r)}, {"HEAD_NODE_IP", ""}};
            node.commands = commandFor(r);
            lc.nodes.push_back(std::move(node));
        }
}

} // namespace sp::exporting
