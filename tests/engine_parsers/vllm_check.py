"""The vLLM checks of check_exports.py, run in the --worker process: the `vllm serve` parser as
vLLM builds it, then the engine's own configuration checks. See tests/engine_parsers/README.md.
"""

from __future__ import annotations

import contextlib
import importlib
import inspect
import os
import re
import sys
import types

import stubs
from facts import FakeHFConfig
from outcomes import Refused, _Skip, _Stop, classify, environ, patched, run_argparse
from stubs import _make_stub_class

# ----------------------------------------------------------------------------------------------------
# Worker (vLLM): imports the engine with its stubs and checks the commands of one scenario
# ----------------------------------------------------------------------------------------------------

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
        (lambda: "vllm.platforms.rocm.RocmPlatform") if stubs.GPU["rocm"] else
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
