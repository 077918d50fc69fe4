// The exported launches read back: the scripts parsed as sh splits them, checkLaunch and the rules every
// engine shares. Each rule names the parser code it comes from (the same files and commits as the exporters'
// version tables); each engine's own rules are in check_<engine>.cpp, beside its exporter.
#include "core/export/check_impl.h"

#include "core/export/common.h"
#include "core/io/formats.h"

namespace sp {

using namespace exporting;
using namespace checking;

namespace {

std::string trim(const std::string& s) {
    const size_t a = s.find_first_not_of(" \t");
    if (a == std::string::npos) return {};
    return s.substr(a, s.find_last_not_of(" \t") + 1 - a);
}

/// One logical line split into words the way sh does for the quoting exportScripts() writes: single
/// quotes literal, double quotes with `${NAME}` kept as text, `\` escaping outside quotes.
std::vector<std::string> words(const std::string& line) {
    std::vector<std::string> out;
    std::string w;
    bool inWord = false;
    for (size_t i = 0; i < line.size(); ++i) {
        const char ch = line[i];
        if (ch == '\'') {
            const size_t j = line.find('\'', i + 1);
            w += line.substr(i + 1, (j == std::string::npos ? line.size() : j) - i - 1);
            i = j == std::string::npos ? line.size() : j;
            inWord = true;
        } else if (ch == '"') {
            size_t j = i + 1;
            for (; j < line.size() && line[j] != '"'; ++j) {
                if (line[j] == '\\' && j + 1 < line.size()) ++j;
                w += line[j];
            }
            i = j;
            inWord = true;
        } else if (ch == '\\' && i + 1 < line.size()) {
            w += line[++i];
            inWord = true;
        } else if (ch == ' ' || ch == '\t') {
            if (inWord) out.push_back(w), w.clear(), inWord = false;
        } else {
            w += ch;
            inWord = true;
        }
    }
    if (inWord) out.push_back(w);
    return out;
}

bool startsWith(const std::string& s, std::string_view p) {
    return s.rfind(p, 0) == 0;
}

} // namespace

namespace checking {

/// The `${NAME}` placeholders in a word.
std::vector<std::string> placeholders(const std::string& w) {
    std::vector<std::string> out;
    for (size_t i = w.find("${"); i != std::string::npos; i = w.find("${", i + 2)) {
        const size_t j = w.find('}', i);
        if (j == std::string::npos) break;
        out.push_back(w.substr(i + 2, j - i - 2));
    }
    return out;
}

/// The speculative method names `v` runs for `architecture` (EngineVersion::specMethodName of every method).
std::set<std::string> specMethodNames(const EngineVersion& v, const std::string& architecture) {
    std::set<std::string> out;
    for (int m = 1; m < kSpecMethodCount; ++m)
        if (auto name = v.specMethodName(SpecMethod(m), architecture); !name.empty()) out.insert(name);
    return out;
}

/// The plan's method and K against what the command runs (`method` as the release spells it, empty for
/// none; `k` its draft tokens per step; `draft` the draft or head it loads, empty for none).
void Checker::specAgainstPlan(const std::string& who, const EngineVersion& ver, const std::string& method,
                              int64_t k, const std::string& draft, const std::string& flag) {
    if (!plan) return;
    if (!plan->on()) {
        if (!method.empty())
            fail(who + ": " + flag + " runs speculative decoding (" + method + "), and the plan has none");
        return;
    }
    const std::string want = ver.specMethodName(plan->method, s.model.architecture);
    const std::string text = specText(*plan);
    if (method.empty()) {
        fail(who + ": the plan runs speculative decoding " + text + ", and the command has no " + flag);
        return;
    }
    if (method != want)
        fail(who + ": " + flag + " runs " + method + ", the plan's " + text + " is " +
             (want.empty() ? std::string("not one this release runs") : want));
    if (k != plan->draftTokens)
        fail(who + ": " + flag + " drafts " + str(k) + " tokens per step, the plan " +
             str(plan->draftTokens));
    const std::string hub = plan->method == SpecMethod::Eagle3  ? s.model.spec.eagle3.hubId
                            : plan->method == SpecMethod::Draft ? s.model.spec.draft.hubId
                                                                : std::string();
    if (!hub.empty() && draft != hub)
        fail(who + ": " + flag + " loads the draft '" + draft + "', not the model's " + hub);
}

void Checker::allowedFlags(const ParsedCommand& c, const std::set<std::string>& allowed,
                           const std::string& who) {
    for (const auto& [flag, value] : c.options)
        if (!allowed.count(flag)) fail(who + " does not have " + flag);
}

void Checker::context(int64_t length, const char* flag) {
    const int64_t limit = s.model.maxPositionEmbeddings;
    if (limit > 0 && length > limit)
        fail(std::string(flag) + " " + str(length) + " exceeds the model's max_position_embeddings " +
             str(limit) + " (the engines refuse a longer context than the model's config allows)");
    if (length <= 0) fail(std::string(flag) + " is missing");
}

/// A layer-partition variable (VLLM_PP_LAYER_PARTITION, SGLANG_PP_LAYER_PARTITION) read as the engines'
/// get_pp_indices read it (vllm/distributed/utils.py at v0.10.2, commit e017120ed146; SGLang's
/// python/sglang/srt/distributed/utils.py at 0.4.9, commit ec5f9c6269c1): `[int(layer) for layer in
/// value.split(",")]`, else "Invalid partition string"; `len(partitions) != pp_size` and
/// `sum(partitions) != num_hidden_layers` refused. Neither refuses a stage of 0 layers; the cost model
/// does (checkStageLayers), so it is refused here too.
void Checker::layerPartition(const std::string& var, const std::string& value, int64_t pp,
                             const std::string& who) {
    std::vector<int64_t> parts;
    size_t from = 0;
    while (true) {
        const size_t comma = value.find(',', from);
        std::string item = value.substr(from, comma == std::string::npos ? std::string::npos : comma - from);
        // Python's int() takes surrounding whitespace and a sign.
        const size_t a = item.find_first_not_of(" \t"), b = item.find_last_not_of(" \t");
        item = a == std::string::npos ? std::string() : item.substr(a, b - a + 1);
        const size_t sign = !item.empty() && (item[0] == '-' || item[0] == '+') ? 1 : 0;
        if (item.size() <= sign || item.find_first_not_of("0123456789", sign) != std::string::npos) {
            fail(who + ": " + var + "=" + value + " is not a comma-separated list of integers");
            return;
        }
        parts.push_back(std::stoll(item));
        if (comma == std::string::npos) break;
        from = comma + 1;
    }
    if (int64_t(parts.size()) != pp)
        fail(who + ": " + var + " has " + str(int64_t(parts.size())) + " stages for a pipeline of " +
             str(pp));
    int64_t sum = 0;
    for (int64_t n : parts) {
        if (n < 1) fail(who + ": " + var + " gives a stage " + str(n) + " layers");
        sum += n;
    }
    if (sum != s.model.layers)
        fail(who + ": " + var + " adds up to " + str(sum) + " layers; the model has " + str(s.model.layers));
}

/// --kv-cache-dtype among the version's choices (vLLM: CacheDType; SGLang: the argparse choices).
void Checker::kvCacheDtype(const ParsedCommand& c, const EngineVersion& ver, const std::string& who) {
    if (!c.has("--kv-cache-dtype") || ver.kvCacheDtypes.empty()) return;
    const auto& d = c.options.at("--kv-cache-dtype");
    if (std::find(ver.kvCacheDtypes.begin(), ver.kvCacheDtypes.end(), d) == ver.kvCacheDtypes.end())
        fail(who + " " + ver.version + ": --kv-cache-dtype " + d + " is not among " +
             joined(ver.kvCacheDtypes, ", "));
}

void Checker::model(const ParsedCommand& c) {
    if (c.model.empty()) fail(c.program + ": no model path");
    if (!s.model.hubId.empty() && c.model != s.model.hubId)
        fail(c.program + " loads '" + c.model + "', not the model's Hub id " + s.model.hubId);
    if (c.model == "config" || c.model == s.model.name)
        if (s.model.hubId.empty() || c.model != s.model.hubId)
            fail(c.program + " loads '" + c.model + "', a file stem or display name");
}

/// The checks of one engine command of a node (its environment `nodeEnv`): the model, the program, the
/// release's model registry, the layer-partition variables, AMD GPUs, custom code, then the engine's own.
void checkCommand(Checker& k, const std::string& name, const ParsedCommand& c,
                  const std::vector<std::pair<std::string, std::string>>& nodeEnv,
                  const EngineVersion& version, ServingEngine worker) {
    k.model(c);
    const ServingEngine e = version.engine == ServingEngine::Dynamo ? worker : version.engine;
    const EngineVersion ver =
        version.engine == ServingEngine::Dynamo ? engineVersions(worker).back() : version;
    const bool dyn = version.engine == ServingEngine::Dynamo;
    const std::string expected = e == ServingEngine::Vllm ? (dyn ? "dynamo.vllm" : "vllm serve")
                                 : e == ServingEngine::Sglang
                                     ? (dyn ? "dynamo.sglang" : "sglang.launch_server")
                                     : (dyn ? "dynamo.trtllm" : "trtllm-serve");
    if (c.program != expected) k.fail(name + " runs " + c.program + ", not " + expected);
    // The model registry of the release (EngineVersion::architectures, read where the row's
    // architecturesSource says): an architecture shardplan imports that it lacks does not load.
    const auto& known = supportedHfArchitectures();
    const std::string& arch = k.s.model.architecture;
    if (!ver.architectures.empty() && std::find(known.begin(), known.end(), arch) != known.end() &&
        std::find(ver.architectures.begin(), ver.architectures.end(), arch) == ver.architectures.end())
        k.fail(name + ": " + std::string(nameOf(e)) + " " + ver.version + " has no " + arch +
               " in its model registry (" + ver.architecturesSource + ")");
    for (const auto& [var, value] : nodeEnv) {
        const bool vllmVar = var == "VLLM_PP_LAYER_PARTITION", sglangVar = var == "SGLANG_PP_LAYER_PARTITION";
        if (!vllmVar && !sglangVar) continue;
        if ((vllmVar && e != ServingEngine::Vllm) || (sglangVar && e != ServingEngine::Sglang))
            k.fail(name + " sets " + var + " for " + std::string(nameOf(e)) + ", which does not read it");
        else
            k.layerPartition(var, value, c.integer(vllmVar ? "--pipeline-parallel-size" : "--pp-size", 1),
                             name);
    }
    // AMD GPUs (amdGpu, core/export/common.h): no TensorRT-LLM (CUDA only: docs/source/installation/
    // linux.md at 004da3c27360), no DeepEP (Hopper only: deepseek-ai/DeepEP README at 0297fc801788),
    // and vLLM's AITER MLA takes KV blocks of one token only (vllm/platforms/rocm.py
    // get_attn_backend_cls at v0.10.2).
    if (amdGpu(k.s.cluster.gpu)) {
        if (e == ServingEngine::Trtllm)
            k.fail(name + ": TensorRT-LLM on " + k.s.cluster.gpu.name + ", which it cannot run on");
        if (c.has("--enable-deepep-moe") ||
            (c.has("--moe-a2a-backend") && c.options.at("--moe-a2a-backend") == "deepep"))
            k.fail(name + ": DeepEP on " + k.s.cluster.gpu.name + ", which it cannot run on");
        bool aiter = false;
        for (const auto& [var, value] : nodeEnv)
            if (var == "VLLM_ROCM_USE_AITER" && (value == "1" || lower(value) == "true")) aiter = true;
        if (e == ServingEngine::Vllm && aiter && k.s.model.attention.type == AttentionType::MLA &&
            c.integer("--block-size", 16) != 1)
            k.fail(name + ": vLLM's AITER MLA backend with a KV block size other than 1");
    }
    // A config that names custom code (auto_map) loads only with trust-remote-code (vLLM's
    // ModelConfig and SGLang's get_config pass trust_remote_code to transformers' AutoConfig).
    if (configNamesCustomCode(k.s.model) && e != ServingEngine::Trtllm && !c.has("--trust-remote-code"))
        k.fail(name + ": " + k.s.model.architecture +
               "'s config names custom code (auto_map), and --trust-remote-code is not given");
    if (e == ServingEngine::Vllm && dyn && c.has("--disaggregation-mode")) {
        // dynamo.vllm's own flag (components/src/dynamo/vllm/backend_args.py at d195d280e13e: agg,
        // prefill, decode); the rest go to vLLM's parser.
        static const std::set<std::string> modes = {"agg", "prefill", "decode"};
        if (!modes.count(c.options.at("--disaggregation-mode")))
            k.fail(name + ": dynamo.vllm --disaggregation-mode " + c.options.at("--disaggregation-mode"));
        ParsedCommand vllmArgs = c;
        vllmArgs.options.erase("--disaggregation-mode");
        k.vllm(vllmArgs, ver);
    } else if (e == ServingEngine::Vllm) {
        k.vllm(c, ver);
    }
    if (e == ServingEngine::Sglang) k.sglang(c, ver);
    if (e == ServingEngine::Trtllm) k.trtllm(c, ver, dyn);
}

} // namespace checking

std::vector<std::vector<std::string>> parseScript(const std::string& script) {
    std::vector<std::vector<std::string>> out;
    std::string logical;
    size_t pos = 0;
    while (pos <= script.size()) {
        size_t end = script.find('\n', pos);
        if (end == std::string::npos) end = script.size();
        std::string line = script.substr(pos, end - pos);
        pos = end + 1;
        if (!line.empty() && line.back() == '\\') {
            logical += line.substr(0, line.size() - 1);
            continue;
        }
        logical += line;
        const std::string l = trim(logical);
        logical.clear();
        if (l.empty() || l[0] == '#') continue;
        auto w = words(l);
        if (w.empty()) continue;
        const std::string& first = w[0];
        if (first == "set" || first == "cd" || first == "export" || first == ":" || first == "wait") continue;
        if (first == "exec") w.erase(w.begin());
        if (!w.empty() && w.back() == "&") w.pop_back();
        if (!w.empty()) out.push_back(std::move(w));
        if (end == script.size()) break;
    }
    return out;
}

int64_t ParsedCommand::integer(const std::string& flag, int64_t otherwise) const {
    auto it = options.find(flag);
    if (it == options.end() || it->second.empty()) return otherwise;
    try {
        return std::stoll(it->second);
    } catch (...) {
        return otherwise;
    }
}

std::optional<ParsedCommand> parseEngineCommand(const std::vector<std::string>& w) {
    ParsedCommand c;
    size_t i = 0;
    if (i < w.size() && w[i] == "env") {
        for (++i; i < w.size() && w[i].find('=') != std::string::npos && w[i][0] != '-'; ++i)
            if (startsWith(w[i], "CUDA_VISIBLE_DEVICES="))
                c.visibleGpus = int(std::count(w[i].begin(), w[i].end(), ',')) + 1;
    }
    // The launcher: everything up to trtllm-serve or trtllm-llmapi-launch's program.
    size_t prog = i;
    for (size_t k = i; k < w.size(); ++k)
        if (w[k] == "trtllm-serve" || w[k] == "vllm" || w[k] == "python3") {
            prog = k;
            break;
        }
    c.launcher.assign(w.begin() + long(i), w.begin() + long(prog));
    i = prog;
    if (i >= w.size()) return std::nullopt;
    size_t optionsFrom = 0;
    if (w[i] == "vllm" && i + 2 < w.size() && w[i + 1] == "serve") {
        c.program = "vllm serve", c.model = w[i + 2], optionsFrom = i + 3;
    } else if (w[i] == "trtllm-serve" && i + 1 < w.size()) {
        c.program = "trtllm-serve", c.model = w[i + 1], optionsFrom = i + 2;
    } else if (w[i] == "python3" && i + 2 < w.size() && w[i + 1] == "-m") {
        c.program = w[i + 2], optionsFrom = i + 3;
        if (c.program == "dynamo.frontend") return std::nullopt;
    } else {
        return std::nullopt;
    }
    for (size_t k = optionsFrom; k < w.size(); ++k) {
        if (!startsWith(w[k], "--")) continue;
        std::string value;
        if (k + 1 < w.size() && !startsWith(w[k + 1], "--")) value = w[++k];
        c.options[w[k - (value.empty() ? 0 : 1)]] = value;
    }
    for (const char* m : {"--model-path", "--model"})
        if (c.model.empty() && c.options.count(m)) c.model = c.options[m];
    return c;
}

std::vector<std::string> checkLaunch(const LaunchCommand& launch, const Scenario& scenario,
                                     const EngineVersion& version, ServingEngine worker) {
    Checker k{launch, scenario, {}, &launch.plan.spec};
    const auto scripts = launch.scripts();
    if (scripts.empty()) k.fail("no node scripts");
    if (int(scripts.size()) > scenario.cluster.hosts())
        k.fail(str(int64_t(scripts.size())) + " node scripts for a cluster of " +
               str(scenario.cluster.hosts()) + " hosts");
    bool frontend = false;
    for (size_t n = 0; n < scripts.size(); ++n) {
        const auto& [name, text] = scripts[n];
        const auto cmds = parseScript(text);
        // The script says what the node's commands say, word for word (quoting survives the shell).
        if (cmds != launch.nodes[n].commands) k.fail(name + " does not read back as its commands");
        std::set<std::string> env;
        for (const auto& [var, value] : launch.nodes[n].env) env.insert(var);
        for (const auto& words : cmds) {
            for (const auto& w : words)
                for (const auto& p : placeholders(w))
                    if (!env.count(p)) k.fail(name + " uses ${" + p + "} without setting or requiring it");
            if (words.size() >= 3 && words[2] == "dynamo.frontend") frontend = true;
            const auto c = parseEngineCommand(words);
            if (!c) continue;
            if (version.engine == ServingEngine::Dynamo &&
                !(env.count("ETCD_ENDPOINTS") && env.count("NATS_SERVER")))
                k.fail(name + ": a Dynamo worker without ETCD_ENDPOINTS and NATS_SERVER");
            checkCommand(k, name, *c, launch.nodes[n].env, version, worker);
        }
    }
    if (version.engine == ServingEngine::Dynamo && !frontend) k.fail("Dynamo without a frontend");
    return k.v;
}

} // namespace sp
