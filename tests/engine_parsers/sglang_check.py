"""The SGLang checks of check_exports.py, run in the --worker process: ServerArgs' parser as
prepare_server_args builds it, then __post_init__ and check_server_args. See
tests/engine_parsers/README.md.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys

import stubs
from facts import FakeHFConfig
from outcomes import Refused, classify, environ, run_argparse

# ----------------------------------------------------------------------------------------------------
# Worker (SGLang): imports the engine with its stubs and checks the commands of one scenario
# ----------------------------------------------------------------------------------------------------

def sglang_worker(job, finder):
    src = job["source"]
    root = os.path.join(src, "python") if os.path.isdir(os.path.join(src, "python", "sglang")) else src
    sys.path.insert(0, root)
    job["source"] = os.path.join(root, "sglang")
    import sglang.srt.server_args as sa
    hf = job["facts"]["hf_config"]
    fake_get_config = lambda *a, **k: FakeHFConfig(hf or {})  # noqa: E731
    mem = stubs.GPU["memory_mib"]
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
