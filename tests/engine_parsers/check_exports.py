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

import argparse
import logging
import os
import shlex
import subprocess
import sys
import traceback
import warnings

# The sibling modules: stubs.py (the import hook, the fake torch.cuda and its GPU), facts.py (scenario
# facts, the exported commands), outcomes.py (what a refusal is), vllm_check.py and sglang_check.py (each
# engine's parser and checks). Put this file's folder first on sys.path, for the --worker process too.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

_dont_write_bytecode = sys.dont_write_bytecode
sys.dont_write_bytecode = True  # no __pycache__ in the repository's tests/engine_parsers/
from facts import REPO, collect, extract_commands, scenario_facts  # noqa: E402
from sglang_check import sglang_worker  # noqa: E402
from stubs import DEFAULT_STUBS, _set_gpu, install_stubs  # noqa: E402
from vllm_check import vllm_worker  # noqa: E402
sys.dont_write_bytecode = _dont_write_bytecode  # the engine's own modules are cached as before

# ----------------------------------------------------------------------------------------------------
# Workers: one process per scenario imports the engine with its stubs and checks the commands
# ----------------------------------------------------------------------------------------------------

def _quiet_logging():
    logging.disable(logging.CRITICAL)
    warnings.simplefilter("ignore")


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
