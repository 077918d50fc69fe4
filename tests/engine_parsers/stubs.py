"""The import hook of check_exports.py: stub modules for the engines' heavy dependencies.

StubFinder serves permissive stub modules (their attributes are stub classes) for the listed top-level
modules when they are not installed, and for the engine's compiled extensions; a few stub modules have
working parts (the shims: msgspec, packaging, dill, regex; torch, torch.cuda and torch.version report
the GPU of `GPU`, which _set_gpu sets from the scenario's cluster before the engine is imported).
See tests/engine_parsers/README.md.
"""

from __future__ import annotations

import abc
import importlib
import importlib.abc
import importlib.machinery
import importlib.util  # noqa: F401  (as the single-file script had: importlib.util loaded for the engine)
import inspect
import os
import re
import sys
import types


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


# The worker (check_exports.py --worker) sets GPU from the scenario's cluster before the engine is imported.
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
