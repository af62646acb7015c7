"""The first minute of a new user: import times, the first optimisation and the first forest
fit with an empty and with a filled numba cache, and what each compiled function costs.

Every measurement runs in a fresh Python process, so nothing imported or compiled by one
measurement helps the next.  The cold runs get an empty temporary ``NUMBA_CACHE_DIR`` (as on
a fresh install); the warm runs are second processes on that same, now filled, cache.  The
compile time of each function comes from numba's ``numba:compile`` events: the seconds
between a compilation's start and end, less the compilations nested in it (a kernel compiles
the kernels it calls), so the per-function times add up to the total.  Each first call also
reports the CPU seconds of its process (all threads): compilation runs on one thread, so on a
machine whose cores other processes share this moves far less with the load than the wall
clock does.

On an empty cache a forest hands its prediction and update kernels to a second process
(:mod:`surrogates._core.compile_ahead`); what that process compiles is not in the measured
process's compile seconds or CPU seconds, and shows as the loads from the cache of a cold run.

    python -m benchmarks.harness.first_minute          # the full tables (about two minutes)
    python -m benchmarks.harness.first_minute --quick  # imports once, runs on the usual cache
    python -m benchmarks.harness.first_minute --json out.json
    python -m benchmarks.harness.first_minute --fresh-clone   # each run in a new clone
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from benchmarks.harness.tables import markdown_table

__all__ = ["HEAVY", "RUNS", "main", "measure_import", "measure_run"]

#: modules whose import is timed on its own: the project's two entry points, then the
#: dependencies they may pull in
HEAVY = ("mfbo", "surrogates", "numpy", "scipy", "scipy.stats", "numba", "pandas",
         "matplotlib", "sklearn", "tqdm")

_ROOT = Path(__file__).resolve().parents[2]

# The child of one run: the import and the first call are timed apart; numba's compile events
# are recorded from just after the import (importing numba.core.event is part of the call's
# time, as the call would import numba anyway).
_RUN = r"""
import json, resource, sys, time

def cpu():
    u = resource.getrusage(resource.RUSAGE_SELF)
    return u.ru_utime + u.ru_stime

t0 = time.perf_counter()
{imports}
t1 = time.perf_counter()
c1 = cpu()
import numba.core.event as ev
from numba.core.registry import CPUDispatcher
with ev.install_recorder("numba:compile") as rec:
{call}
t2 = time.perf_counter()
c2 = cpu()

def name(d):
    f = d.py_func
    return f"{{f.__module__}}.{{f.__qualname__}}"

self_s, stack = {{}}, []  # compile seconds less nested compilations; open (start, dispatcher)
for stamp, e in rec.buffer:
    if e.is_start:
        stack.append([stamp, e.data["dispatcher"], 0.0])
    else:
        start, d, nested = stack.pop()
        k = name(d)
        self_s[k] = self_s.get(k, 0.0) + (stamp - start) - nested
        if stack:
            stack[-1][2] += stamp - start
functions = {{}}
for mod_name, mod in list(sys.modules.items()):
    if mod_name.split(".")[0] not in ("surrogates", "acquisitions", "mfbo"):
        continue
    for obj in list(vars(mod).values()):
        obj = getattr(obj, "dispatcher", obj)  # a parallel kernel's launcher holds its kernel
        if isinstance(obj, CPUDispatcher) and obj.py_func.__module__ == mod_name:
            sigs = len(obj.signatures)
            if sigs or name(obj) in self_s:
                functions[name(obj)] = {{"signatures": sigs,
                                        "cache_loads": sum(obj.stats.cache_hits.values()),
                                        "compile_s": self_s.get(name(obj), 0.0)}}
for k, s in self_s.items():  # compiled, but not a module-level name (a closure, a factory's)
    functions.setdefault(k, {{"signatures": None, "cache_loads": None, "compile_s": s}})
print("RESULT" + json.dumps({{"import_s": t1 - t0, "call_s": t2 - t1, "call_cpu_s": c2 - c1,
                             "compile_s": sum(self_s.values()), "functions": functions}}))
"""

#: the objective of the first ``minimize`` calls
_BRANIN = """\
    import math
    def branin(x, y):
        return ((y - 5.1 / (4 * math.pi ** 2) * x ** 2 + 5 / math.pi * x - 6) ** 2
                + 10 * (1 - 1 / (8 * math.pi)) * math.cos(x) + 10)
"""

#: the timed first calls: (label, imports, call)
RUNS = {
    "minimize": (
        "mfbo.minimize(branin, 30 calls)",
        "import mfbo",
        _BRANIN + """\
    mfbo.minimize(branin, {"x": (-5, 10), "y": (0, 15)}, n_calls=30, random_state=0,
                  progress_bar=False)"""),
    # (integer bounds make the one above a grid of integers; here the same over two reals,
    # whose search and Parzen steps run as in a continuous space)
    "minimize-real": (
        "mfbo.minimize(branin over two reals, 30 calls)",
        "import mfbo",
        _BRANIN + """\
    mfbo.minimize(branin, {"x": mfbo.Real(-5, 10), "y": mfbo.Real(0, 15)}, n_calls=30,
                  random_state=0, progress_bar=False)"""),
    "forest": (
        "MondrianForestRegressor fit + predict, 1,000 rows",
        "from surrogates import MondrianForestRegressor",
        """\
    import numpy as np
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(1000, 5))
    y = np.sin(3 * X).sum(axis=1) + 0.1 * rng.normal(size=1000)
    MondrianForestRegressor(random_state=0).fit(X, y).predict(X, return_std=True)"""),
}


def _child(code: str, env: dict | None = None, root: Path = _ROOT) -> str:
    """The standard output of ``python -c code`` in a fresh process at the project's root
    (``root``: another checkout, whose packages it then imports)."""
    done = subprocess.run([sys.executable, "-c", code], cwd=root, env=env, text=True,
                          capture_output=True, timeout=900)
    if done.returncode:
        raise RuntimeError(f"the measuring process failed:\n{done.stderr[-2000:]}")
    return done.stdout


def measure_import(module: str, repeats: int = 5) -> list[float]:
    """Seconds of ``import module`` in each of ``repeats`` fresh processes."""
    code = (f"import time; t = time.perf_counter(); import {module}; "
            "print(time.perf_counter() - t)")
    return [float(_child(code).split()[-1]) for _ in range(repeats)]


def measure_run(run: str, cache_dir: str | None, root: Path = _ROOT) -> dict:
    """One fresh process of ``RUNS[run]`` with ``NUMBA_CACHE_DIR=cache_dir`` (None: numba's
    usual cache beside the sources), in the checkout at ``root``: import and call seconds, the
    call's CPU seconds, total compile seconds, and per compiled function its type
    specialisations, loads from the cache and compile seconds."""
    _, imports, call = RUNS[run]
    env = dict(os.environ)
    env.pop("NUMBA_DISABLE_JIT", None)
    if cache_dir is None:
        env.pop("NUMBA_CACHE_DIR", None)
    else:
        env["NUMBA_CACHE_DIR"] = cache_dir
    out = _child(_RUN.format(imports=imports, call=call), env, root)
    return json.loads(out[out.rindex("RESULT") + len("RESULT"):])


def _stats(seconds: list[float]) -> tuple[float, float]:
    ordered = sorted(seconds)
    return ordered[0], ordered[len(ordered) // 2]


def tables(results: dict) -> str:
    """The report: import times, first runs, and the compiled functions of the cold runs."""
    imports = [(m, *(f"{s:.3f}" for s in _stats(results["imports"][m]))) for m in HEAVY]
    runs, functions = [], {}
    for key, by_cache in results["runs"].items():
        for cache, r in by_cache.items():
            runs.append((RUNS[key][0], cache, f"{r['import_s']:.2f}", f"{r['call_s']:.2f}",
                         f"{r['call_cpu_s']:.2f}", f"{r['compile_s']:.2f}",
                         sum(1 for f in r["functions"].values() if f["compile_s"] > 0),
                         sum(f["cache_loads"] or 0 for f in r["functions"].values())))
            first = by_cache[next(iter(by_cache))]  # the cold run, or the only one (--quick)
            if r is first:
                for fname, f in r["functions"].items():
                    row = functions.setdefault(fname, {})
                    row[key] = f
    compiled = []
    for fname, row in functions.items():
        cells = [fname]
        for key in RUNS:
            f = row.get(key)
            cells += ["" if f is None or f["signatures"] is None else f["signatures"],
                      "" if f is None else f"{f['compile_s']:.2f}"]
        compiled.append((sum(f["compile_s"] for f in row.values()), cells))
    compiled.sort(key=lambda c: (-c[0], c[1][0]))
    repeats = len(results["imports"][HEAVY[0]])
    parts = [f"## Import, fresh process each (seconds, min and median of {repeats})", "",
             markdown_table(("module", "min s", "median s"), imports), "",
             "## First call, fresh process each (seconds)", "",
             markdown_table(("run", "numba cache", "import s", "call s", "call CPU s",
                             "compile s", "functions compiled", "loads from cache"), runs), "",
             f"## Compiled functions ({results['cache']} runs): type specialisations and "
             "compile seconds (less nested compilations)", "",
             markdown_table(("function",) + tuple(h for key in RUNS for h in (
                 f"{key}: signatures", f"{key}: compile s")),
                 [cells for _, cells in compiled])]
    return "\n".join(parts)


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.harness.first_minute",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true",
                        help="import each module once and run each first call once on "
                             "numba's usual cache (no cold runs)")
    parser.add_argument("--repeats", type=int, default=None,
                        help="fresh processes per import (default 5, 1 with --quick)")
    parser.add_argument("--fresh-clone", action="store_true",
                        help="run each first call in a new clone of this checkout's last "
                             "commit (no compiled Python files, numba's cache beside the "
                             "clone's sources, as after a fresh clone and install), then "
                             "again there (warm)")
    parser.add_argument("--json", metavar="PATH", help="also write the results as JSON")
    args = parser.parse_args(argv)
    repeats = args.repeats or (1 if args.quick else 5)
    results = {"python": sys.version.split()[0], "repeats": repeats,
               "imports": {m: measure_import(m, repeats) for m in HEAVY}, "runs": {}}
    for key in RUNS:
        if args.quick:
            results["runs"][key] = {"usual": measure_run(key, None)}
            continue
        if args.fresh_clone:
            with tempfile.TemporaryDirectory(prefix="first-minute-") as tmp:
                clone = Path(tmp) / "clone"
                subprocess.run(["git", "clone", "-q", str(_ROOT), str(clone)], check=True,
                               capture_output=True, timeout=600)
                results["runs"][key] = {"fresh clone": measure_run(key, None, clone),
                                        "warm": measure_run(key, None, clone)}
            continue
        with tempfile.TemporaryDirectory(prefix="numba-cache-") as cache:
            results["runs"][key] = {"cold": measure_run(key, cache),
                                    "warm": measure_run(key, cache)}
    results["cache"] = ("usual-cache" if args.quick else
                        "fresh-clone" if args.fresh_clone else "cold")
    report = tables(results)
    print(report)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))
    return results


if __name__ == "__main__":
    main()
