#!/usr/bin/env python3
"""Run every launch command `shardplan export` writes through the engine's own argument parser.

The engine (vLLM or SGLang) is imported from a source checkout at the release a version row of
core/export/vllm.cpp or core/export/sglang.cpp names; its heavy dependencies (torch, transformers,
triton, CUDA libraries, ...) cannot be installed here, so an import hook serves them as permissive stub
modules. See tests/engine_parsers/README.md.

  python3 tests/engine_parsers/check_exports.py --shardplan build/app/shardplan --engine vllm \
      --source /tmp/vllm-0.12.0 --engine-version 0.12.0

Standard library only (the engine's own pure-Python dependencies that are installed, e.g. pydantic,
yaml, regex, are used as they are; missing ones are stubbed where listed).
"""

from __future__ import annotations

import abc
import argparse
import contextlib
import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import inspect
import io
import logging
import os
import re
import shlex
import subprocess
import sys
import tempfile
import traceback
import types
import warnings

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# ----------------------------------------------------------------------------------------------------
# Stub modules
# ----------------------------------------------------------------------------------------------------

# Top-level modules served as stubs when they are not installed. The engines import them at module
# level, but none is needed to build or run the argument parser.
DEFAULT_STUBS = [
    # the ML stack
    "torch", "torchvision", "torchaudio", "transformers", "tokenizers", "triton", "numpy",
    "safetensors", "huggingface_hub", "hf_transfer", "hf_xet", "accelerate", "einops", "sentencepiece",
    "tiktoken", "gguf", "compressed_tensors", "datasets", "scipy", "PIL", "cv2", "av", "soundfile",
    "librosa", "timm", "peft", "blake3", "cbor2", "pybase64", "xxhash", "numba", "setproctitle",
    "pandas", "matplotlib", "sympy", "pyarrow", "modelscope", "decord", "torchao", "bitsandbytes",
    # CUDA / kernel / accelerator libraries
    "pynvml", "amdsmi", "cuda", "cupy", "flashinfer", "flash_attn", "vllm_flash_attn", "xformers",
    "deep_gemm", "deep_ep", "pplx_kernels", "sgl_kernel", "flash_mla", "aiter", "nixl", "mooncake",
    "nvidia", "tilelang", "quack", "cutlass", "kernels", "torch_memory_saver", "mori", "tvm_ffi",
    "modelopt", "liger_kernel", "lmcache", "nvtx",
    # serving, IPC, tokenizer and structured-output libraries
    "msgspec", "zmq", "uvloop", "fastapi", "starlette", "uvicorn", "aiohttp", "openai", "anthropic",
    "prometheus_client", "prometheus_fastapi_instrumentator", "psutil", "cachetools", "tqdm",
    "filelock", "partial_json_parser", "mistral_common", "openai_harmony", "llguidance", "xgrammar",
    "outlines", "outlines_core", "lm_format_enforcer", "lmformatenforcer", "lark", "interegular",
    "diskcache", "watchfiles", "python_multipart", "multipart", "cpuinfo", "depyf", "opentelemetry",
    "grpc", "google", "sse_starlette", "ijson", "msgpack", "dill", "fsspec", "boto3", "botocore",
    "runai_model_streamer", "tensorizer", "IPython", "nest_asyncio", "aiofiles", "httpx", "websockets",
    "sglang_router", "pybind11", "gunicorn", "model_hosting_container_standards", "einx", "pyjson5",
    "json5", "tabulate", "rich", "pycountry", "setuptools_scm", "dynamo", "ray",
    # pure-Python dependencies: used as they are where installed, stubbed where not
    "orjson", "pydantic", "pydantic_core", "annotated_types", "typing_extensions", "regex", "yaml",
    "requests", "packaging", "jinja2", "cloudpickle", "jsonschema", "networkx",
]
# ray is stubbed on purpose: the engines' images ship it, and vLLM 0.10.2 picks its Ray executor when
# `import ray` succeeds; a stub behaves as Ray installed but not initialised (no placement group).

# Modules that stay absent even with --auto-stub (the engines probe for them and change behaviour).
NEVER_STUB = {"torch_npu", "intel_extension_for_pytorch", "habana_frameworks", "torch_xla", "libtpu",
              "tpu_info", "tpu_inference", "vllm_ascend"}

STUB_VERSIONS = {
    "torch": "2.9.0",
    "transformers": "4.57.1",
    "triton": "3.5.0",
    "tokenizers": "0.22.0",
    "huggingface_hub": "0.35.0",
    "numpy": "2.2.0",
    "flashinfer": "0.5.3",
    "xgrammar": "0.1.27",
    "sgl_kernel": "0.3.18",
    "msgspec": "0.19.0",
}


def _stub_version(modname):
    return STUB_VERSIONS.get(modname.split(".")[0], "1.0.0")


class _StubMeta(abc.ABCMeta):
    """Metaclass of stub classes: any attribute is another stub, calls make instances or pass a
    decorated function through, and the class works as a base class, a type hint and a number."""

    def __new__(mcs, name, bases, ns, **kwargs):
        return super().__new__(mcs, name, bases, ns)

    def __init__(cls, name, bases, ns, **kwargs):
        super().__init__(name, bases, ns)

    def __getattr__(cls, name):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        root = next((b for b in cls.__mro__ if b.__dict__.get("_stub_root")), None)
        if root is None:
            raise AttributeError(name)
        if root is not cls:
            return getattr(root, name)
        if name == "name":  # torch.library.Library(...).m.name and the like: used as a string
            return cls.__qualname__
        val = _make_stub_class(name, cls.__module__, f"{cls.__qualname__}.{name}")
        type.__setattr__(cls, name, val)
        return val

    def register(cls, *args, **kwargs):
        # AutoConfig.register(name, cls), AutoProcessor.register(a, b): a stub's own method, not
        # ABCMeta.register (the metaclass derives from ABCMeta so that stub bases mix with ABCs)
        if any(b.__dict__.get("_stub_root") for b in cls.__mro__):
            return args[-1] if args else None
        return super().register(*args, **kwargs)

    def __call__(cls, *args, **kwargs):
        if cls.__dict__.get("_stub_root"):
            # @stub / @stub(...)(fn): a decorator hands the function back
            if len(args) == 1 and not kwargs and (
                inspect.isfunction(args[0]) or inspect.isclass(args[0]) or inspect.ismethod(args[0])
            ):
                return args[0]
            return type.__call__(cls)
        return type.__call__(cls, *args, **kwargs)

    def __getitem__(cls, item):
        return cls

    def __setitem__(cls, key, value):
        pass

    def __delitem__(cls, key):
        pass

    def __contains__(cls, item):
        return False

    def __iter__(cls):
        return iter(())

    def __len__(cls):
        return 0

    def __int__(cls):
        return 0

    def __index__(cls):
        return 0

    def __float__(cls):
        return 0.0

    def __enter__(cls):
        return cls

    def __exit__(cls, *a):
        return False

    def __repr__(cls):
        return f"<stub {cls.__module__}.{cls.__qualname__}>"

    def _arith(cls, *a):
        return cls

    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = _arith
    __truediv__ = __rtruediv__ = __floordiv__ = __rfloordiv__ = __mod__ = __pow__ = _arith
    __neg__ = __pos__ = __abs__ = __and__ = __rand__ = __xor__ = __lshift__ = __rshift__ = _arith


class _StubBase(metaclass=_StubMeta):
    """Instances of stub classes."""

    def __init__(self, *args, **kwargs):
        pass

    def __getattr__(self, name):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return getattr(type(self), name)

    def __call__(self, *args, **kwargs):
        if len(args) == 1 and not kwargs and (
            inspect.isfunction(args[0]) or inspect.isclass(args[0]) or inspect.ismethod(args[0])
        ):
            return args[0]
        root = next((b for b in type(self).__mro__ if b.__dict__.get("_stub_root")), _StubBase)
        return type.__call__(root) if root is not _StubBase else self

    def __bool__(self):
        return False

    def __iter__(self):
        return iter(())

    def __len__(self):
        return 0

    def __int__(self):
        return 0

    def __index__(self):
        return 0

    def __float__(self):
        return 0.0

    def __enter__(self):
        return self

    def __exit__(self, *a):
        return False

    def __getitem__(self, item):
        return self

    def __setitem__(self, key, value):
        pass

    def __contains__(self, item):
        return False

    def __hash__(self):
        return id(self)

    def __eq__(self, other):
        return self is other

    def __lt__(self, other):
        return False

    __le__ = __gt__ = __ge__ = __lt__

    def _arith(self, *a):
        return self

    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = _arith
    __truediv__ = __rtruediv__ = __floordiv__ = __rfloordiv__ = __mod__ = __pow__ = _arith
    __neg__ = __pos__ = __abs__ = __and__ = __rand__ = __or__ = __ror__ = __xor__ = _arith
    __matmul__ = __lshift__ = __rshift__ = _arith

    @classmethod
    def __get_pydantic_core_schema__(cls, source, handler):
        # a field typed with a stub class (torch.dtype, an openai type) accepts anything
        from pydantic_core import core_schema
        return core_schema.any_schema()

    def __repr__(self):
        return f"<stub instance {type(self).__module__}.{type(self).__qualname__}>"


def _make_stub_class(name, module, qualname):
    return _StubMeta(name, (_StubBase,), {"_stub_root": True, "__module__": module,
                                          "__qualname__": qualname})


class StubModule(types.ModuleType):
    """A module any attribute of which is a stub class (made on first use). It can be called too, as
    a stub (triton.jit read as a submodule is still a decorator)."""

    def __call__(self, *args, **kwargs):
        if len(args) == 1 and not kwargs and (inspect.isfunction(args[0]) or inspect.isclass(args[0])):
            return args[0]
        return _make_stub_class(self.__name__.rsplit(".", 1)[-1], self.__name__, "call")()

    def __getattr__(self, name):
        if name == "__version__":
            return _stub_version(self.__name__)
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        # a submodule imported as an attribute (torch.cuda, torch.distributed, ...)
        full = f"{self.__name__}.{name}"
        if full in sys.modules:
            return sys.modules[full]
        if name in _SUBMODULE_NAMES:
            mod = importlib.import_module(full)
            setattr(self, name, mod)
            return mod
        val = _make_stub_class(name, self.__name__, name)
        setattr(self, name, val)
        return val


# Attribute names served as submodules rather than classes when read off a stub module (any other
# attribute, _C and _dynamo included, is a stub class).
_SUBMODULE_NAMES = {
    "cuda", "distributed", "nn", "functional", "utils", "library", "fx", "compiler", "backends", "cpu",
    "mps", "xpu", "hip", "version", "ops", "multiprocessing", "autograd", "jit", "testing", "hub",
    "models", "configuration_utils", "modeling_utils", "tokenization_utils", "tokenization_utils_base",
    "image_processing_utils", "generation", "language", "runtime", "amp", "profiler", "overrides",
    "types", "quantization", "export", "onnx", "random", "sparse", "special", "linalg", "fft",
    "storage", "serialization", "func", "constants", "file_download", "errors", "nccl", "c10d",
    "device_mesh", "tensor", "graphs", "streams", "memory", "attention", "parallel", "init",
    "parameter", "modules", "data", "checkpoint", "cpp_extension", "dlpack", "numpy", "np", "dtypes",
    "core", "typing", "ma", "lib", "api", "server", "client", "routing", "responses", "requests",
    "middleware", "cors", "exceptions", "background", "datastructures", "status", "encoders",
    "security", "params",
}


# ---- shims: stub modules with a few working parts where a bare stub is not enough ----------------

class _NoDefault:
    def __repr__(self):
        return "NODEFAULT"


def _shim_msgspec(mod):
    """msgspec: Struct must be a usable base class (vLLM's SamplingParams and friends), and
    msgspec.structs.fields() must list its fields (vLLM builds pydantic schemas from them)."""
    nodefault = _NoDefault()

    class _Field:
        def __init__(self, default=nodefault, default_factory=nodefault, name=None):
            self.default, self.default_factory, self.name = default, default_factory, name

    def field(default=nodefault, *, default_factory=nodefault, name=None):
        return _Field(default, default_factory, name)

    class StructMeta(type):
        def __new__(mcs, name, bases, ns, **kwargs):
            return super().__new__(mcs, name, bases, ns)

        def __init__(cls, name, bases, ns, **kwargs):
            super().__init__(name, bases, ns)

    class Struct(metaclass=StructMeta):
        def __init__(self, *args, **kwargs):
            for f in _fields(type(self)):
                if f.default is not nodefault:
                    setattr(self, f.name, f.default)
                elif f.default_factory is not nodefault:
                    setattr(self, f.name, f.default_factory())
            names = [f.name for f in _fields(type(self))]
            for n, v in zip(names, args):
                setattr(self, n, v)
            for k, v in kwargs.items():
                setattr(self, k, v)

    def _fields(cls):
        out = {}
        for klass in reversed(cls.__mro__):
            for name in klass.__dict__.get("__annotations__", {}):
                raw = klass.__dict__.get(name, nodefault)
                if isinstance(raw, _Field):
                    out[name] = types.SimpleNamespace(name=name, default=raw.default,
                                                      default_factory=raw.default_factory)
                else:
                    out[name] = types.SimpleNamespace(name=name, default=raw,
                                                      default_factory=nodefault)
        return tuple(out.values())

    structs = StubModule("msgspec.structs")
    structs.fields = _fields
    sys.modules["msgspec.structs"] = structs
    mod.Struct, mod.field, mod.NODEFAULT, mod.UNSET, mod.structs = Struct, field, nodefault, nodefault, structs


def _shim_packaging(mod):
    """packaging: the copy pip vendors, when packaging itself is not installed."""
    try:
        import pip._vendor.packaging as real
        import pip._vendor.packaging.version as real_version
        import pip._vendor.packaging.specifiers as real_spec
        import pip._vendor.packaging.requirements as real_req
    except ImportError:
        return
    mod.__path__ = real.__path__
    for sub in (real_version, real_spec, real_req):
        sys.modules["packaging." + sub.__name__.rsplit(".", 1)[-1]] = sub
    mod.version, mod.specifiers, mod.requirements = real_version, real_spec, real_req


def _shim_dill(mod):
    """dill: dumps must give bytes (SGLang serialises its default logit processors at import)."""
    import pickle

    def dumps(obj, *a, **k):
        try:
            return pickle.dumps(obj)
        except Exception:  # noqa: BLE001
            return b"dill-stub"
    mod.dumps = dumps
    mod.loads = lambda data, *a, **k: pickle.loads(data)


def _shim_regex(mod):
    """regex: the standard library's re serves what the argument parsers use of it."""
    for name in dir(re):
        if not name.startswith("__"):
            setattr(mod, name, getattr(re, name))


SHIMS = {"msgspec": _shim_msgspec, "packaging": _shim_packaging, "dill": _shim_dill, "regex": _shim_regex}

# The GPU the stubs report (torch.cuda.*): set from the scenario's cluster before the engine is imported.
GPU = {"count": 8, "capability": (9, 0), "memory_mib": 81559, "name": "NVIDIA H100 80GB HBM3", "rocm": False}


class _DeviceProps:
    def __init__(self):
        self.name = GPU["name"]
        self.total_memory = GPU["memory_mib"] << 20
        self.major, self.minor = GPU["capability"]
        self.multi_processor_count = 132
        self.gcnArchName = "gfx942" if GPU["rocm"] else ""


def _visible_gpus():
    """The GPUs a process sees: the node's, narrowed by CUDA_VISIBLE_DEVICES (HIP_VISIBLE_DEVICES)
    as torch.cuda's NVML / amdsmi count narrows them."""
    for var in ("CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES") if GPU["rocm"] else ("CUDA_VISIBLE_DEVICES",):
        val = os.environ.get(var)
        if val is not None:
            ids = [x for x in val.split(",") if x.strip()]
            return len([x for x in ids if not x.strip().isdigit() or int(x) < GPU["count"]])
    return GPU["count"]


def _torch_cuda(mod):
    mod.is_available = lambda: True
    mod.device_count = _visible_gpus
    mod.get_device_capability = lambda *a, **k: GPU["capability"]
    mod.get_device_name = lambda *a, **k: GPU["name"]
    mod.get_device_properties = lambda *a, **k: _DeviceProps()
    mod.mem_get_info = lambda *a, **k: (GPU["memory_mib"] << 20, GPU["memory_mib"] << 20)
    mod.current_device = lambda: 0
    mod.is_initialized = lambda: False
    mod._is_compiled = lambda: True
    mod._device_count_nvml = lambda: -1 if GPU["rocm"] else _visible_gpus()
    mod._device_count_amdsmi = lambda: _visible_gpus() if GPU["rocm"] else -1


def _torch_version(mod):
    mod.cuda = None if GPU["rocm"] else "12.8"
    mod.hip = "6.4" if GPU["rocm"] else None
    mod.__version__ = STUB_VERSIONS["torch"]
    mod.git_version = "stub"


def _torch(mod):
    mod.__version__ = STUB_VERSIONS["torch"]
    import torch.cuda  # noqa: F401  (the stub, with the GPU above)
    import torch.version  # noqa: F401


# Attributes with working values, set when the stub module is made.
STUB_MODULE_SETUP = {"torch": _torch, "torch.cuda": _torch_cuda, "torch.version": _torch_version}


class StubFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Serves stub modules for the listed top-level names when they are not installed (placed last on
    sys.meta_path, so a real module wins), and for the engine's compiled extensions (vllm._C, ...)."""

    def __init__(self, names, engine_pkg, auto=False):
        self.names = set(names)
        self.engine_pkg = engine_pkg
        self.auto = auto
        self.served = set()

    def _wanted(self, fullname):
        top = fullname.split(".")[0]
        if top in NEVER_STUB:
            return False
        if top in sys.modules and not isinstance(sys.modules[top], StubModule) and top != fullname:
            # a submodule of a real package: stub only the engine's compiled or generated modules
            last = fullname.rsplit(".", 1)[-1]
            return top == self.engine_pkg and (last.startswith("_") or last.endswith("_C"))
        if top in self.names:
            return True
        if self.auto and top not in sys.stdlib_module_names and top != self.engine_pkg:
            return True
        return False

    def find_spec(self, fullname, path=None, target=None):
        if not self._wanted(fullname):
            return None
        spec = importlib.machinery.ModuleSpec(fullname, self, is_package=True)
        spec.submodule_search_locations = []
        return spec

    def create_module(self, spec):
        mod = StubModule(spec.name)
        mod.__path__ = []
        mod.__file__ = f"<stub {spec.name}>"
        return mod

    def exec_module(self, module):
        shim = SHIMS.get(module.__name__) or STUB_MODULE_SETUP.get(module.__name__)
        if shim:
            shim(module)
        self.served.add(module.__name__.split(".")[0] if module.__name__.split(".")[0] != self.engine_pkg
                        else module.__name__)


def install_stubs(names, engine_pkg, auto=False):
    finder = StubFinder(names, engine_pkg, auto)
    sys.meta_path.append(finder)
    return finder


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


# ----------------------------------------------------------------------------------------------------
# Outcomes
# ----------------------------------------------------------------------------------------------------

class Refused(Exception):
    """The engine's own code refused the command."""


class _Stop(Exception):
    """Raised from a patched engine function to stop once the checks of interest have run."""


class _Skip(Exception):
    """A check that does not apply to this command (no --speculative-config, say)."""


# The engine files whose assert / raise statements are argument checks. An error raised anywhere else
# (a stub's value reaching code that needs the real library) means the check could not run.
CHECK_FILES = [
    r"(vllm/)?config/", r"(vllm/)?engine/arg_utils\.py", r"(vllm/)?entrypoints/", r"(vllm/)?utils/argparse_utils\.py",
    r"(vllm/)?utils/__init__\.py", r"(vllm/)?executor/", r"(vllm/)?v1/executor/", r"(vllm/)?distributed/utils\.py",
    r"(sglang/)?srt/server_args\.py", r"(sglang/)?srt/configs/model_config\.py",
    r"(sglang/)?srt/configs/load_config\.py", r"(sglang/)?srt/server_args_config_parser\.py",
]

REFUSING_TYPES = (AssertionError, ValueError, NotImplementedError, TypeError, KeyError, RuntimeError)


def one_line(msg):
    lines = [l.strip() for l in str(msg).splitlines()
             if l.strip() and not l.strip().startswith("For further information")]
    return " | ".join(lines)


def classify(exc, source_dir):
    """('refused', message) when the engine's own code raised it as a check, else ('unchecked', what)
    when the error comes from a stub or a patched part (the check could not run)."""
    tb = exc.__traceback__
    last = None
    while tb is not None:
        last = tb
        tb = tb.tb_next
    where = last.tb_frame.f_code.co_filename if last else ""
    msg = one_line(f"{type(exc).__name__}: {exc}")
    try:
        from pydantic import ValidationError
        if isinstance(exc, ValidationError):
            return "refused", msg
    except ImportError:
        pass
    in_engine = os.path.abspath(where).startswith(os.path.abspath(source_dir) + os.sep)
    rel = os.path.relpath(where, source_dir).replace(os.sep, "/") if in_engine else ""
    if in_engine and isinstance(exc, REFUSING_TYPES) and any(re.match(p, rel) for p in CHECK_FILES):
        # a check statement (assert / raise) of the engine, not a stub misbehaving inside it
        code = _frame_line(last)
        if isinstance(exc, AssertionError) or code.lstrip().startswith("raise") or "raise" in code:
            return "refused", msg
    return "unchecked", f"{msg} (at {os.path.relpath(where, source_dir) if in_engine else where}:" \
                        f"{last.tb_lineno if last else '?'})"


def _frame_line(tb):
    import linecache
    return linecache.getline(tb.tb_frame.f_code.co_filename, tb.tb_lineno) if tb else ""


@contextlib.contextmanager
def patched(obj, name, value):
    had = name in getattr(obj, "__dict__", {})
    old = getattr(obj, name, None)
    setattr(obj, name, value)
    try:
        yield
    finally:
        if had:
            setattr(obj, name, old)
        else:
            try:
                delattr(obj, name)
            except AttributeError:
                pass


@contextlib.contextmanager
def environ(env):
    old = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        yield
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def run_argparse(parser, argv):
    """parse_args; an argparse refusal (SystemExit) becomes Refused with argparse's message."""
    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err):
            return parser.parse_args(argv)
    except SystemExit as e:
        text = err.getvalue().strip().splitlines()
        msg = next((l for l in reversed(text) if "error:" in l), text[-1] if text else f"exit {e.code}")
        raise Refused(msg) from None


# ----------------------------------------------------------------------------------------------------
# Workers: one process per scenario imports the engine with its stubs and checks the commands
# ----------------------------------------------------------------------------------------------------

def _set_gpu(facts):
    name = facts["gpu_name"]
    GPU["count"] = facts["gpus_per_node"]
    GPU["memory_mib"] = facts["memory_mib"]
    GPU["rocm"] = bool(re.search(r"\bMI\d|AMD|Instinct", name, re.I))
    GPU["name"] = name
    if GPU["rocm"]:
        GPU["capability"] = (9, 4)
    elif re.search(r"B200|GB200|B300|GB300", name):
        GPU["capability"] = (10, 0)
    elif re.search(r"H100|H200|H800|GH200", name):
        GPU["capability"] = (9, 0)
    elif re.search(r"A100|A800", name):
        GPU["capability"] = (8, 0)
    else:
        GPU["capability"] = (9, 0)


def _quiet_logging():
    logging.disable(logging.CRITICAL)
    warnings.simplefilter("ignore")


def _engine_version_module(pkg, version):
    mod = types.ModuleType(f"{pkg}._version")
    v = version or "0.0.0"
    parts = tuple(int(p) if p.isdigit() else p for p in re.split(r"[.+]", v))
    mod.__version__ = mod.version = v
    mod.__version_tuple__ = mod.version_tuple = parts
    sys.modules[mod.__name__] = mod


class FakeModelConfig:
    """What vLLM's EngineArgs.create_model_config would return, for the fields create_engine_config
    reads before the parallel configuration (the real one downloads the model's config)."""

    def __init__(self, engine_args, hf):
        self.model = engine_args.model
        self.tokenizer = engine_args.tokenizer or engine_args.model
        self.hf_config = self.hf_text_config = FakeHFConfig(hf or {})
        self.max_model_len = engine_args.max_model_len or (hf or {}).get("max_position_embeddings", 4096)
        self.is_attention_free = False
        self.skip_tokenizer_init = bool(getattr(engine_args, "skip_tokenizer_init", False))
        self.runner_type = "generate"
        self.is_multimodal_model = False
        self.use_mla = bool((hf or {}).get("kv_lora_rank"))
        self.dtype = "bfloat16"
        self.quantization = engine_args.quantization

    def get_sliding_window(self):
        return None

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _make_stub_class(name, "fake_model_config", name)()


def vllm_worker(job, finder):
    src = job["source"]
    _engine_version_module("vllm", job.get("version"))
    os.environ.setdefault("VLLM_CONFIGURE_LOGGING", "0")
    sys.path.insert(0, src)
    import vllm.platforms as platforms
    platforms.resolve_current_platform_cls_qualname = (
        (lambda: "vllm.platforms.rocm.RocmPlatform") if GPU["rocm"] else
        (lambda: "vllm.platforms.cuda.CudaPlatform"))
    try:
        from vllm.utils.argparse_utils import FlexibleArgumentParser
    except ImportError:
        from vllm.utils import FlexibleArgumentParser
    notes = []
    serve_mod = None
    try:
        import vllm.entrypoints.cli.serve as serve_mod
        top = FlexibleArgumentParser(prog="vllm", description="vLLM CLI")
        subs = top.add_subparsers(required=False, dest="subparser")
        serve_mod.ServeSubcommand().subparser_init(subs)
        how = "vllm.entrypoints.cli.serve.ServeSubcommand.subparser_init (the `vllm serve` parser)"
    except ImportError as e:
        from vllm.entrypoints.openai.cli_args import make_arg_parser
        top = FlexibleArgumentParser(prog="vllm", description="vLLM CLI")
        subs = top.add_subparsers(required=False, dest="subparser")
        make_arg_parser(subs.add_parser("serve"))
        how = f"make_arg_parser on a `serve` subparser (cli/serve.py did not import: {e})"
    import vllm.engine.arg_utils as au
    yield {"parser": how}
    for item in job["commands"]:
        with environ(item["env"]):
            yield _check_vllm(item, top, serve_mod, au, job)


def _check_vllm(item, top, serve_mod, au, job):
    res = {"id": item["id"], "stages": []}
    try:
        ns = run_argparse(top, ["serve"] + item["args"])
        res["stages"].append("parse")
    except Refused as e:
        return {**res, "status": "refused", "message": str(e)}
    steps = []
    if serve_mod is not None and hasattr(serve_mod.ServeSubcommand, "validate"):
        steps.append(("validate", lambda: serve_mod.ServeSubcommand().validate(ns)))

    state = {}

    def engine_args():
        if getattr(ns, "model_tag", None):
            ns.model = ns.model_tag
        state["ea"] = au.AsyncEngineArgs.from_cli_args(ns)
    steps.append(("EngineArgs.from_cli_args", engine_args))

    def engine_config():
        pc = _vllm_parallel_config(state["ea"], au, job, headless=bool(getattr(ns, "headless", False)))
        state["pc"] = pc
    steps.append(("create_engine_config up to ParallelConfig", engine_config))

    def max_len():
        ea = state["ea"]
        if not getattr(ea, "max_model_len", None) or not job["facts"]["hf_config"]:
            raise _Skip()
        fn = None
        for modname in ("vllm.config.model", "vllm.config"):
            try:
                fn = getattr(importlib.import_module(modname), "_get_and_verify_max_len", None)
            except ImportError:
                continue
            if fn:
                break
        if fn is None:
            raise _Skip()
        hf = job["facts"]["hf_config"]
        window = hf.get("sliding_window") if isinstance(hf.get("sliding_window"), int) else None
        cfg = FakeHFConfig(hf)
        kwargs = dict(hf_config=cfg, tokenizer_config=None, max_model_len=ea.max_model_len,
                      disable_sliding_window=bool(getattr(ea, "disable_sliding_window", False)),
                      sliding_window=window)
        if "model_arch_config" in inspect.signature(fn).parameters:
            # main after 0.15: the limit is derived by a ModelArchitectureConfig convertor first
            conv = importlib.import_module("vllm.transformers_utils.model_arch_config_convertor")
            cls = conv.MODEL_ARCH_CONFIG_CONVERTORS.get(hf.get("model_type"), conv.ModelArchConfigConvertorBase)
            kwargs["model_arch_config"] = cls(cfg, cfg).convert()
        fn(**kwargs)
    steps.append(("_get_and_verify_max_len (--max-model-len against the config.json)", max_len))

    def speculative():
        spec = getattr(state["ea"], "speculative_config", None)
        if not isinstance(spec, dict) or not spec:
            raise _Skip()
        _vllm_speculative_fields(spec, au, state.get("pc"), job)
    steps.append(("SpeculativeConfig fields", speculative))

    if serve_mod is not None and hasattr(serve_mod.ServeSubcommand, "cmd"):
        steps.append(("ServeSubcommand.cmd up to the server / engine launch",
                      lambda: _vllm_cmd(ns, serve_mod, au, state)))

    for name, fn in steps:
        try:
            fn()
            res["stages"].append(name)
        except _Stop:
            res["stages"].append(name)
        except _Skip:
            pass
        except Refused as e:
            return {**res, "status": "refused", "message": f"{name}: {e}"}
        except BaseException as e:  # noqa: BLE001 - anything the engine or a stub raises
            if isinstance(e, KeyboardInterrupt):
                raise
            kind, msg = classify(e, job["source"])
            if kind == "refused":
                return {**res, "status": "refused", "message": f"{name}: {msg}"}
            res["unchecked"] = f"{name}: {msg}"
            break
    pc = state.get("pc")
    if pc is not None:
        res["parallel"] = {k: getattr(pc, k, None) for k in (
            "world_size", "tensor_parallel_size", "pipeline_parallel_size", "data_parallel_size",
            "data_parallel_size_local", "distributed_executor_backend", "nnodes", "node_rank")}
        res["parallel"] = {k: (v if isinstance(v, (int, str)) else repr(v))
                           for k, v in res["parallel"].items() if v is not None}
    return {**res, "status": "ok"}


def _vllm_parallel_config(ea, au, job, headless):
    """Run EngineArgs.create_engine_config with the model config faked, and stop as soon as
    ParallelConfig (whose __post_init__ and validators are the checks wanted) has been built."""
    real_pc = au.ParallelConfig
    hf = job["facts"]["hf_config"]

    class _PCMeta(type):
        def __getattr__(cls, name):
            return getattr(real_pc, name)

        def __call__(cls, *a, **k):
            raise _Stop(real_pc(*a, **k))

    proxy = _PCMeta("ParallelConfig", (), {})
    E = au.EngineArgs
    noop = lambda self, *a, **k: None  # noqa: E731
    patches = [(au, "ParallelConfig", proxy),
               (E, "create_model_config", lambda self: FakeModelConfig(self, hf))]
    if hasattr(au, "maybe_override_with_speculators"):
        patches.append((au, "maybe_override_with_speculators",
                        lambda model, tokenizer, *a, vllm_speculative_config=None, **k:
                        (model, tokenizer, vllm_speculative_config)))
    if hasattr(au, "maybe_override_with_speculators_target_model"):
        patches.append((au, "maybe_override_with_speculators_target_model",
                        lambda model, tokenizer, *a, **k: (model, tokenizer)))
    for name in ("_check_feature_supported",):
        if hasattr(E, name):
            patches.append((E, name, noop))
    if hasattr(E, "_is_v1_supported_oracle"):
        patches.append((E, "_is_v1_supported_oracle", lambda self, mc: True))
    with contextlib.ExitStack() as stack:
        for obj, name, val in patches:
            stack.enter_context(patched(obj, name, val))
        try:
            from vllm.usage.usage_lib import UsageContext
            ctx = UsageContext.OPENAI_API_SERVER
        except Exception:  # noqa: BLE001
            ctx = None
        try:
            if headless:
                ea.create_engine_config(usage_context=ctx, headless=True)
            else:
                ea.create_engine_config(usage_context=ctx)
        except _Stop as s:
            return s.args[0]
        except TypeError as e:
            if "headless" not in str(e):
                raise
            try:
                ea.create_engine_config(usage_context=ctx)
            except _Stop as s:
                return s.args[0]
    raise RuntimeError("create_engine_config returned without building a ParallelConfig")


def _vllm_speculative_fields(spec, au, pc, job):
    """SpeculativeConfig(**the --speculative-config JSON): pydantic validates the fields (the method
    against its Literal, the types) before __post_init__, which needs the real target model (it loads
    the draft's config) and so cannot run here: only field errors count."""
    from pydantic import ValidationError
    SC = getattr(au, "SpeculativeConfig", None)
    if SC is None:
        raise _Skip()
    try:
        SC(**spec, target_model_config=FakeModelConfig(types.SimpleNamespace(
            model="target", tokenizer=None, max_model_len=None, quantization=None), job["facts"]["hf_config"]),
           target_parallel_config=pc)
    except ValidationError as e:
        # errors of the JSON's own fields; not those of __post_init__ (value_error) or of the draft
        # ModelConfig it builds from the fake target model
        field_errors = [err for err in e.errors(include_url=False)
                        if err.get("type") not in ("value_error", "assertion_error")
                        and err.get("loc") and err["loc"][0] in spec]
        if field_errors:
            text = "; ".join(f"{'.'.join(map(str, err['loc']))}: {err['msg']} [type={err['type']}, "
                             f"input_value={err.get('input')!r}]" for err in field_errors)
            raise Refused(f"ValidationError for SpeculativeConfig: {text}") from None
        raise _Stop() from None
    except Exception:  # noqa: BLE001 - __post_init__ reached the model: the fields passed
        raise _Stop() from None


def _vllm_cmd(ns, serve_mod, au, state):
    """`vllm serve`'s own command function (ServeSubcommand.cmd: api-server count, load-balancing
    mode, then run_headless or the API server) with the engine configuration replaced by the one built
    above and the server and engine launches stubbed out: what it checks before launching runs as it
    is."""
    import signal
    pc = state["pc"]
    fake_cfg = types.SimpleNamespace(parallel_config=pc)

    def launch(*a, **k):
        raise _Stop()

    class _LauncherMeta(type):
        def __getattr__(cls, name):  # EngineCoreProc.run_engine_core and the like
            return launch

    class _Launcher(metaclass=_LauncherMeta):
        def __init__(self, *a, **k):
            raise _Stop()

    patches = [(au.EngineArgs, "create_engine_config", lambda self, *a, **k: fake_cfg)]
    for name in ("CoreEngineProcManager", "MultiprocExecutor", "EngineCoreProc",
                 "CoreEngineActorManager"):
        if hasattr(serve_mod, name):
            patches.append((serve_mod, name, _Launcher))
    for name in ("launch_core_engines", "run_multi_api_server", "wait_for_completion_or_failure",
                 "run_server", "run_api_server_worker_proc"):
        if hasattr(serve_mod, name):
            patches.append((serve_mod, name, launch))
    old_handlers = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGINT)}
    try:
        with contextlib.ExitStack() as stack:
            for obj, name, val in patches:
                stack.enter_context(patched(obj, name, val))
            serve_mod.ServeSubcommand.cmd(ns)
    finally:
        for s, h in old_handlers.items():
            signal.signal(s, h)


def sglang_worker(job, finder):
    src = job["source"]
    root = os.path.join(src, "python") if os.path.isdir(os.path.join(src, "python", "sglang")) else src
    sys.path.insert(0, root)
    job["source"] = os.path.join(root, "sglang")
    import sglang.srt.server_args as sa
    hf = job["facts"]["hf_config"]
    fake_get_config = lambda *a, **k: FakeHFConfig(hf or {})  # noqa: E731
    mem = GPU["memory_mib"]
    for modname in ("sglang.srt.server_args", "sglang.srt.hf_transformers_utils",
                    "sglang.srt.utils.hf_transformers_utils", "sglang.srt.configs.model_config"):
        mod = sys.modules.get(modname)
        if mod is None:
            try:
                mod = importlib.import_module(modname)
            except Exception:  # noqa: BLE001
                continue
        if hasattr(mod, "get_config"):
            mod.get_config = fake_get_config
    for modname in ("sglang.srt.server_args", "sglang.srt.utils", "sglang.srt.utils.common"):
        mod = sys.modules.get(modname)
        if mod is not None and hasattr(mod, "get_device_memory_capacity"):
            mod.get_device_memory_capacity = lambda *a, **k: mem
    parser = argparse.ArgumentParser(prog="python3 -m sglang.launch_server")
    sa.ServerArgs.add_cli_args(parser)
    yield {"parser": "sglang.srt.server_args.ServerArgs.add_cli_args on argparse.ArgumentParser "
                     "(as prepare_server_args does)"}
    for item in job["commands"]:
        with environ(item["env"]):
            yield _check_sglang(item, parser, sa, job)


def _check_sglang(item, parser, sa, job):
    res = {"id": item["id"], "stages": []}
    try:
        ns = run_argparse(parser, item["args"])
        res["stages"].append("parse")
    except Refused as e:
        return {**res, "status": "refused", "message": str(e)}
    state = {}

    def from_cli():
        state["sa"] = sa.ServerArgs.from_cli_args(ns)
        if os.environ.get("CHECK_EXPORTS_DEBUG"):  # what __post_init__ resolved, for a refusal's reasons
            a = state["sa"]
            print("# resolved:", {k: getattr(a, k, None) for k in (
                "attention_backend", "page_size", "chunked_prefill_size", "dp_size", "enable_dp_attention")},
                file=sys.stderr)

    steps = [("ServerArgs.from_cli_args (__post_init__)", from_cli),
             ("check_server_args", lambda: state["sa"].check_server_args())]
    for name, fn in steps:
        try:
            fn()
            res["stages"].append(name)
        except BaseException as e:  # noqa: BLE001
            if isinstance(e, KeyboardInterrupt):
                raise
            kind, msg = classify(e, job["source"])
            if kind == "refused":
                return {**res, "status": "refused", "message": f"{name}: {msg}"}
            res["unchecked"] = f"{name}: {msg}"
            break
    return {**res, "status": "ok"}


def worker_main():
    import json
    job = json.load(sys.stdin)
    _set_gpu(job["facts"])
    if not job.get("verbose"):
        _quiet_logging()
    engine_pkg = "vllm" if job["engine"] == "vllm" else "sglang"
    finder = install_stubs(DEFAULT_STUBS + job.get("extra_stubs", []), engine_pkg, job.get("auto_stub"))
    out = sys.stdout
    real_stdout = os.dup(1)
    # the engine may print; keep our protocol on the original stdout
    sys.stdout = sys.stderr
    gen = vllm_worker(job, finder) if job["engine"] == "vllm" else sglang_worker(job, finder)
    try:
        for rec in gen:
            os.write(real_stdout, (json.dumps(rec, default=repr) + "\n").encode())
    except BaseException as e:  # noqa: BLE001
        os.write(real_stdout, (json.dumps({"fatal": "".join(traceback.format_exception(e))[-4000:]})
                               + "\n").encode())
    os.write(real_stdout, (json.dumps({"stubbed": sorted(finder.served)}) + "\n").encode())
    out.flush()


# ----------------------------------------------------------------------------------------------------
# Driver
# ----------------------------------------------------------------------------------------------------

def _source_ok(engine, source):
    if engine == "vllm":
        return os.path.isfile(os.path.join(source, "vllm", "__init__.py"))
    return (os.path.isfile(os.path.join(source, "python", "sglang", "__init__.py"))
            or os.path.isfile(os.path.join(source, "sglang", "__init__.py")))


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


def run_worker(args, facts, commands):
    import json
    job = {"engine": args.engine, "source": os.path.abspath(args.source), "version": args.engine_version,
           "facts": facts, "commands": commands, "extra_stubs": args.stub, "auto_stub": args.auto_stub,
           "verbose": args.verbose}
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    try:
        r = subprocess.run([sys.executable, os.path.abspath(__file__), "--worker"], input=json.dumps(job),
                           capture_output=True, text=True, timeout=args.timeout, env=env)
    except subprocess.TimeoutExpired:
        return None, [], [], f"worker timed out after {args.timeout} s"
    header, results, stubbed, fatal = None, [], [], None
    for line in r.stdout.splitlines():
        try:
            rec = json.loads(line)
        except ValueError:
            continue
        if "parser" in rec:
            header = rec["parser"]
        elif "fatal" in rec:
            fatal = rec["fatal"]
        elif "stubbed" in rec:
            stubbed = rec["stubbed"]
        elif "id" in rec:
            results.append(rec)
    if args.verbose and r.stderr.strip():
        sys.stderr.write(r.stderr[-6000:])
    if fatal is None and r.returncode != 0:
        fatal = f"worker exited {r.returncode}: {r.stderr.strip()[-3000:]}"
    return header, results, stubbed, fatal


def main(argv=None):
    ap = argparse.ArgumentParser(
        description="Run the launch commands `shardplan export` writes through the engine's own argument "
                    "parser, imported from the engine's source with its heavy dependencies stubbed.")
    ap.add_argument("--shardplan", required=True, help="the shardplan binary")
    ap.add_argument("--engine", required=True, choices=["vllm", "sglang"])
    ap.add_argument("--source", required=True,
                    help="the engine's source tree: the directory holding vllm/ or python/sglang/")
    ap.add_argument("--engine-version", help="the version row to export with (default: shardplan's newest)")
    ap.add_argument("--scenarios", default=os.path.join(REPO, "samples", "scenarios"),
                    help="a directory of scenario files, or one file (default: samples/scenarios)")
    ap.add_argument("--seeds", default="1,2,3", help="search seeds, comma-separated (default 1,2,3)")
    ap.add_argument("--searcher", default="sa")
    ap.add_argument("--budget", type=int, default=200)
    ap.add_argument("--node-scripts", action="store_true",
                    help="also check the per-node scripts of --out-dir (headless ranks, node ranks)")
    ap.add_argument("--stub", action="append", default=[], metavar="MODULE",
                    help="one more top-level module to stub when it is not installed")
    ap.add_argument("--auto-stub", action="store_true",
                    help="stub every missing third-party module (to find what a new release imports)")
    ap.add_argument("--timeout", type=int, default=600, help="seconds per scenario's worker")
    ap.add_argument("--command", action="append", default=[], metavar="TEXT",
                    help="check this command line instead of the exports (repeatable), under the "
                         "cluster and model of the first scenario")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args(argv)
    args.seeds = [int(s) for s in args.seeds.split(",") if s.strip()]
    if not os.access(args.shardplan, os.X_OK):
        ap.error(f"{args.shardplan}: not an executable")
    if not _source_ok(args.engine, args.source):
        ap.error(f"{args.source}: no {args.engine} package there")
    if os.path.isdir(args.scenarios):
        scenarios = sorted(os.path.join(args.scenarios, f) for f in os.listdir(args.scenarios)
                           if f.endswith((".yaml", ".yml")))
    else:
        scenarios = [args.scenarios]
    if args.command:
        scenarios = scenarios[:1]

    passed = failed = 0
    parser_how, stubbed_all, refusals = None, set(), {}
    label = f"{args.engine} {args.engine_version or '(newest row)'}"
    for scenario in scenarios:
        facts = scenario_facts(scenario)
        if args.command:
            found, problems = [], []
            for text in args.command:
                for env, eargs, t in extract_commands(text, args.engine):
                    found.append(("given", env, eargs, t))
                if not extract_commands(text, args.engine):
                    problems.append(f"not a {args.engine} command: {text}")
        else:
            found, problems = collect(args, scenario)
        name = facts["scenario"]
        for p in problems:
            print(f"NOTE     {name}: {p}")
        # one check per distinct command (environment and arguments)
        distinct, order = {}, []
        for run, env, eargs, text in found:
            key = (tuple(sorted(env.items())), tuple(eargs))
            if key not in distinct:
                distinct[key] = {"runs": [], "env": env, "args": eargs, "text": text}
                order.append(key)
            distinct[key]["runs"].append(run)
        if not order:
            continue
        commands = [{"id": i, "env": distinct[k]["env"], "args": distinct[k]["args"]}
                    for i, k in enumerate(order)]
        header, results, stubbed, fatal = run_worker(args, facts, commands)
        parser_how = parser_how or header
        stubbed_all.update(stubbed)
        by_id = {r["id"]: r for r in results}
        for i, k in enumerate(order):
            d = distinct[k]
            envtxt = " ".join(f"{a}={shlex.quote(b)}" for a, b in sorted(d["env"].items()))
            cmdtxt = (envtxt + " " if envtxt else "") + d["text"]
            runs = ", ".join(d["runs"])
            r = by_id.get(i)
            if r is None:
                failed += 1
                why = (fatal or "no result").strip().splitlines()[-1]
                print(f"ERROR    {name} [{runs}]: {cmdtxt}\n         not checked: {why}")
                continue
            if r["status"] == "ok":
                passed += 1
                extra = f" (parsed; {r['unchecked']})" if r.get("unchecked") else ""
                if args.verbose:
                    extra += f"\n         ran: {', '.join(r.get('stages', []))}"
                    if r.get("parallel"):
                        extra += f"\n         ParallelConfig: {r['parallel']}"
                print(f"OK       {name} [{runs}]: {cmdtxt}{extra}")
            else:
                failed += 1
                refusals.setdefault(r["message"], []).append(name)
                print(f"REFUSED  {name} [{runs}]: {cmdtxt}\n         {r['message']}")
        if fatal:
            print(f"NOTE     {name}: the worker failed:\n" + "\n".join(
                "         " + l for l in fatal.strip().splitlines()[-(40 if args.verbose else 6):]))
    print(f"# {label} from {os.path.abspath(args.source)}")
    if parser_how:
        print(f"# parser: {parser_how}")
    if stubbed_all:
        print(f"# stubbed modules: {', '.join(sorted(stubbed_all))}")
    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 and passed > 0 else 1


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        worker_main()
    else:
        sys.exit(main())
