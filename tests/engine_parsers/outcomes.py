"""Outcomes of the checks of check_exports.py: a refusal, what counts as one, and the helpers
that run the engine's code (patching, the environment, argparse). See tests/engine_parsers/README.md.
"""

from __future__ import annotations

import contextlib
import io
import os
import re


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
