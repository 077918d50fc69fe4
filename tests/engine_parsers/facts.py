"""Scenario facts and exported commands for check_exports.py.

The cluster's GPU and the model's config.json for a scenario file, the transformers config stand-in
over a config.json, and the engine commands of the shell scripts `shardplan export` prints (the export
runs, and the collection of one scenario's commands). See tests/engine_parsers/README.md.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


# ----------------------------------------------------------------------------------------------------
# Scenario facts (read with regular expressions: the files are the planner's own small YAML)
# ----------------------------------------------------------------------------------------------------

def _yaml_scalar(text, key):
    m = re.search(rf"^{re.escape(key)}:\s*([^#\n]+?)\s*(?:#.*)?$", text, re.M)
    return m.group(1).strip().strip("'\"") if m else None


def _yaml_nested(text, parent, key):
    m = re.search(rf"^{re.escape(parent)}:\s*\n((?:[ \t]+.*\n?|\s*\n)*)", text, re.M)
    if not m:
        return None
    block = "\n".join(line.strip() for line in m.group(1).splitlines())
    return _yaml_scalar(block, key)


def scenario_facts(path):
    """The cluster's GPU and the model's Hugging Face config for one scenario file."""
    text = open(path).read()
    here = os.path.dirname(os.path.abspath(path))
    facts = {"scenario": os.path.basename(path), "gpus_per_node": 8, "nodes": 1,
             "gpu_name": "H100", "memory_mib": 81559, "hf_config": None, "model_file": None}
    cluster = _yaml_scalar(text, "cluster")
    if cluster:
        cpath = os.path.normpath(os.path.join(here, cluster))
        ctext = open(cpath).read()
        # The GPUs one host (one process's torch.cuda) sees: gpus_per_host where a scale-up domain spans
        # hosts (an NVL72 rack of 4-GPU trays), else gpus_per_node.
        facts["gpus_per_node"] = int(_yaml_scalar(ctext, "gpus_per_host") or _yaml_scalar(ctext, "gpus_per_node")
                                     or 8)
        facts["nodes"] = int(_yaml_scalar(ctext, "nodes") or 1)
        gpu_id = _yaml_scalar(ctext, "gpu")
        if gpu_id:
            # `gpu: b200` names a GPU of the database (resources/gpus.yaml): its name and driver-reported memory.
            db = open(os.path.join(REPO, "resources", "gpus.yaml")).read()
            m = re.search(rf"^  - id: {re.escape(gpu_id)}\n((?:    .*\n|\s*\n)*)", db, re.M)
            block = "\n".join(line.strip() for line in (m.group(1) if m else "").splitlines())
            facts["gpu_name"] = _yaml_scalar(block, "name") or gpu_id
            mib = _yaml_scalar(block, "memory_mib")
            gb = _yaml_scalar(block, "hbm_gb")
            if not _yaml_scalar(ctext, "gpus_per_node") and not _yaml_scalar(ctext, "gpus_per_host"):
                dom = re.search(r"domain:\s*(\d+)", block)
                facts["gpus_per_node"] = min(8, int(dom.group(1))) if dom else 8
        else:
            facts["gpu_name"] = _yaml_nested(ctext, "gpu", "name") or "GPU"
            mib = _yaml_nested(ctext, "gpu", "memory_mib")
            gb = _yaml_nested(ctext, "gpu", "hbm_gb")
        facts["memory_mib"] = int(float(mib)) if mib else int(float(gb or 80) * 1000 * 1000 / 1024)
    model = _yaml_scalar(text, "model")
    if model:
        mpath = os.path.normpath(os.path.join(here, model))
        facts["model_file"] = mpath
        facts["hf_config"] = hf_config_for(mpath)
    return facts


def hf_config_for(model_path):
    """The model's config.json: the copy under tests/data/hf/ when there is one, else the fields the
    engines' argument checks read, made from the planner's model file."""
    base = os.path.splitext(os.path.basename(model_path))[0]
    copy = os.path.join(REPO, "tests", "data", "hf", base + ".config.json")
    import json
    if os.path.exists(copy):
        cfg = json.load(open(copy))
        cfg["_source"] = os.path.relpath(copy, REPO)
        return cfg
    text = open(model_path).read()
    cfg = {"_source": os.path.relpath(model_path, REPO) + " (synthesised)"}
    arch = _yaml_scalar(text, "architecture")
    if arch:
        cfg["architectures"] = [arch]
        cfg["model_type"] = {"LlamaForCausalLM": "llama", "MixtralForCausalLM": "mixtral",
                             "DeepseekV3ForCausalLM": "deepseek_v3", "Qwen3MoeForCausalLM": "qwen3_moe",
                             "Qwen3NextForCausalLM": "qwen3_next", "GptOssForCausalLM": "gpt_oss"
                             }.get(arch, arch.lower())
    else:
        cfg["architectures"] = ["LlamaForCausalLM"]
        cfg["model_type"] = "llama"
    for ours, theirs in (("layers", "num_hidden_layers"), ("hidden", "hidden_size"),
                         ("vocab", "vocab_size"), ("max_position_embeddings", "max_position_embeddings"),
                         ("ffn", "intermediate_size")):
        v = _yaml_scalar(text, ours)
        if v and re.fullmatch(r"\d+", v):
            cfg[theirs] = int(v)
    heads = _yaml_nested(text, "attention", "heads")
    kv = _yaml_nested(text, "attention", "kv_heads")
    if heads:
        cfg["num_attention_heads"] = int(heads)
        cfg["num_key_value_heads"] = int(kv or heads)
    return cfg


# transformers.PretrainedConfig's own attributes and their defaults (a config.json need not list them)
PRETRAINED_DEFAULTS = {
    "return_dict": True, "output_hidden_states": False, "output_attentions": False, "torchscript": False,
    "torch_dtype": None, "dtype": None, "pruned_heads": {}, "tie_word_embeddings": True,
    "chunk_size_feed_forward": 0, "is_encoder_decoder": False, "is_decoder": False,
    "cross_attention_hidden_size": None, "add_cross_attention": False, "tie_encoder_decoder": False,
    "finetuning_task": None, "id2label": {0: "LABEL_0", 1: "LABEL_1"}, "tokenizer_class": None,
    "prefix": None, "bos_token_id": None, "pad_token_id": None, "eos_token_id": None,
    "sep_token_id": None, "decoder_start_token_id": None, "task_specific_params": None,
    "problem_type": None, "name_or_path": "", "_name_or_path": "", "transformers_version": None,
    "rope_scaling": None, "num_labels": 2, "use_return_dict": True,
}


class FakeHFConfig:
    """A transformers PretrainedConfig stand-in over a config.json: its keys are attributes, and
    PretrainedConfig's own attributes have their defaults; anything else is missing (AttributeError),
    as on a real config, so getattr(config, name, default) and hasattr behave."""

    def __init__(self, d):
        d = {k: v for k, v in d.items() if not k.startswith("_source")}
        # what the engines' config loaders do to a config.json before anything reads it: the legacy
        # rope_scaling "type" key also as "rope_type" (vLLM patch_rope_scaling_dict), and the RoPE
        # settings as rope_parameters (vLLM patch_rope_parameters, transformers v4 path)
        rs = d.get("rope_scaling")
        if isinstance(rs, dict):
            rs = dict(rs)
            if "type" in rs and "rope_type" not in rs:
                rs["rope_type"] = rs["type"]
            d["rope_scaling"] = rs
        if "rope_parameters" not in d and (isinstance(rs, dict) or "rope_theta" in d):
            rp = dict(rs) if isinstance(rs, dict) else {"rope_type": "default"}
            if "rope_theta" in d:
                rp["rope_theta"] = d["rope_theta"]
            d["rope_parameters"] = rp
        for k, v in PRETRAINED_DEFAULTS.items():
            setattr(self, k, v)
        for k, v in d.items():
            setattr(self, k, FakeHFConfig(v) if isinstance(v, dict) and k.endswith("_config") and
                    k != "quantization_config" else v)
        self._dict = d

    def to_dict(self):
        return dict(self._dict)

    def get_text_config(self, *a, **k):
        return self

    def __contains__(self, key):
        return key in self._dict

    def __iter__(self):
        return iter(self._dict)

    def get(self, key, default=None):
        return self._dict.get(key, default)


# ----------------------------------------------------------------------------------------------------
# Exported commands
# ----------------------------------------------------------------------------------------------------

PLACEHOLDERS = {"HEAD_NODE_IP": "10.0.0.1", "NODE_RANK": "0", "MASTER_ADDR": "10.0.0.1"}


def _expand(word, env):
    def sub(m):
        name = m.group(1) or m.group(2)
        return env.get(name, PLACEHOLDERS.get(name, m.group(0)))
    return re.sub(r"\$\{(\w+)(?::[^}]*)?\}|\$(\w+)", sub, word)


def engine_command(words, engine):
    """The engine's own arguments when `words` starts the engine, else None."""
    if engine == "vllm":
        if len(words) >= 2 and os.path.basename(words[0]) == "vllm" and words[1] == "serve":
            return words[2:]
        return None
    if engine == "sglang":
        for i, w in enumerate(words[:-1]):
            if w == "-m" and words[i + 1] == "sglang.launch_server":
                return words[i + 2:]
        if len(words) >= 2 and os.path.basename(words[0]) == "sglang" and words[1] == "serve":
            return words[2:]
        return None
    raise ValueError(engine)


def extract_commands(script, engine):
    """The engine commands of a shell script as shardplan writes it: (env, engine args, text)."""
    # join backslash-continued lines
    lines, cur = [], ""
    for raw in script.splitlines():
        if cur == "" and raw.lstrip().startswith("#"):
            continue
        if raw.endswith("\\"):
            cur += raw[:-1] + " "
            continue
        lines.append(cur + raw)
        cur = ""
    if cur:
        lines.append(cur)
    env, out = {}, []
    for line in lines:
        if not line.strip():
            continue
        lex = shlex.shlex(line, posix=True, punctuation_chars=";&|")
        lex.whitespace_split = True
        lex.commenters = "#"
        words = list(lex)
        # split on the shell's control operators
        pieces, piece = [], []
        for w in words:
            if w in (";", "&", "&&", "||", "|"):
                pieces.append(piece)
                piece = []
            else:
                piece.append(w)
        pieces.append(piece)
        for words in pieces:
            if not words:
                continue
            if words[0] == "export":
                for w in words[1:]:
                    if "=" in w:
                        k, v = w.split("=", 1)
                        env[k] = _expand(v, env)
                continue
            local = {}
            while words and words[0] in ("exec", "env", "nohup"):
                words = words[1:]
                while words and re.fullmatch(r"\w+=.*", words[0]):
                    k, v = words[0].split("=", 1)
                    local[k] = _expand(v, {**env, **local})
                    words = words[1:]
            while words and re.fullmatch(r"\w+=.*", words[0]):
                k, v = words[0].split("=", 1)
                local[k] = _expand(v, {**env, **local})
                words = words[1:]
            args = engine_command(words, engine)
            if args is None:
                continue
            full_env = {**env, **local}
            out.append((full_env, [_expand(a, full_env) for a in args], " ".join(shlex.quote(w) for w in words)))
    return out


def run_export(shardplan, scenario, engine, version, searcher, seed, budget, out_dir=None, model=None):
    cmd = [shardplan, "export", "--scenario", scenario, "--engine", engine]
    if model:
        cmd += ["--model", model]
    if version:
        cmd += ["--engine-version", version]
    if searcher:
        cmd += ["--searcher", searcher, "--budget", str(budget), "--seed", str(seed)]
    if out_dir:
        cmd += ["--out-dir", out_dir]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    return r.returncode, r.stdout, r.stderr, cmd


def collect(args, scenario):
    """Every engine command the exports of one scenario print: [(run label, env, args, text)]."""
    runs = [("megatron", None, None)] + [(f"{args.searcher} seed {k}", args.searcher, k) for k in args.seeds]
    found, problems = [], []
    for label, searcher, seed in runs:
        rc, out, err, cmd = run_export(args.shardplan, scenario, args.engine, args.engine_version,
                                       searcher, seed, args.budget)
        model_flag = None
        if rc != 0 and "--model" in err and "no Hugging Face id" in err:
            # a synthetic model: the engine is told a local path instead
            model_flag = "/models/" + os.path.splitext(os.path.basename(scenario))[0]
            rc, out, err, cmd = run_export(args.shardplan, scenario, args.engine, args.engine_version,
                                           searcher, seed, args.budget, model=model_flag)
            label += f" --model {model_flag}"
        if rc != 0:
            problems.append(f"{label}: export exited {rc}: {err.strip().splitlines()[-1] if err.strip() else ''}")
            continue
        cmds = extract_commands(out, args.engine)
        if not cmds:
            problems.append(f"{label}: no {args.engine} command in the export")
        for env, eargs, text in cmds:
            found.append((label, env, eargs, text))
        if args.node_scripts:
            with tempfile.TemporaryDirectory() as d:
                rc, out, err, cmd = run_export(args.shardplan, scenario, args.engine, args.engine_version,
                                               searcher, seed, args.budget, out_dir=d, model=model_flag)
                if rc != 0:
                    problems.append(f"{label} --out-dir: export exited {rc}")
                    continue
                for name in sorted(os.listdir(d)):
                    if name.endswith(".sh"):
                        for env, eargs, text in extract_commands(open(os.path.join(d, name)).read(),
                                                                 args.engine):
                            found.append((f"{label} {name}", env, eargs, text))
    return found, problems
