"""The cost of one ask+tell of mfbo's default optimizer against Optuna's TPE, in the same run.

For each dimension (``--dims``, default 6 and 20) and each method, a fresh process tells the
optimizer ``--n`` evaluations of random points of a quadratic (the same points for both
methods), asks and tells ``--warmup`` proposals untimed (the first builds the model and loads
the numba cache), then times ``--asks`` proposals, each asked, evaluated and told, and
reports the median seconds per ask+tell and mfbo's ratio to TPE's.  The machine's load moves
both columns; the ratio, taken within one run, much less.

Run::

    python -m benchmarks.harness.ask_tell_cost                 # n = 1,000 at D = 6 and 20
    python -m benchmarks.harness.ask_tell_cost --n 300 --dims 6 --asks 10
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

__all__ = ["METHODS", "main", "measure"]

#: the compared methods: mfbo's ``Optimizer`` with its defaults, Optuna's ``TPESampler``
#: with its defaults (seeded)
METHODS = ("mfbo", "optuna-tpe")

_ROOT = Path(__file__).resolve().parents[2]

# One measurement in a fresh process: prints the per-step seconds as JSON.
_CHILD = r"""
import json, sys, time
import numpy as np
method, n, dims, warmup, asks, seed = sys.argv[1], *map(int, sys.argv[2:7])
rng = np.random.default_rng(seed)
X = rng.random((n, dims))
f = lambda x: float(((np.asarray(x) - 0.3) ** 2).sum())
names = [f"x{i}" for i in range(dims)]
if method == "mfbo":
    from mfbo import Optimizer, Real
    opt = Optimizer({k: Real(0.0, 1.0) for k in names}, random_state=seed, n_initial=1)
    for x in X:
        opt.tell(dict(zip(names, map(float, x))), f(x))
    def step():
        t = opt.ask()
        opt.tell(t, f([t.params[k] for k in names]))
else:
    import optuna
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    dist = {k: optuna.distributions.FloatDistribution(0.0, 1.0) for k in names}
    study = optuna.create_study(sampler=optuna.samplers.TPESampler(seed=seed))
    study.add_trials([optuna.trial.create_trial(params=dict(zip(names, map(float, x))),
                                                distributions=dist, value=f(x)) for x in X])
    def step():
        t = study.ask(dist)
        study.tell(t, f([t.params[k] for k in names]))
for _ in range(warmup):
    step()
seconds = []
for _ in range(asks):
    t0 = time.perf_counter()
    step()
    seconds.append(time.perf_counter() - t0)
print("RESULT" + json.dumps(seconds))
"""


def measure(method: str, n: int, dims: int, warmup: int = 2, asks: int = 20,
            seed: int = 0) -> list[float]:
    """Seconds of each timed ask+tell of ``method`` after ``n`` told random points in
    ``dims`` dimensions, in a fresh process."""
    done = subprocess.run([sys.executable, "-c", _CHILD, method, str(n), str(dims), str(warmup),
                           str(asks), str(seed)], cwd=_ROOT, capture_output=True, text=True,
                          timeout=3600)
    if done.returncode:
        raise RuntimeError(f"{method} at D = {dims} failed:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout[done.stdout.rindex("RESULT") + len("RESULT"):])


def _median(values: list[float]) -> float:
    ordered = sorted(values)
    k = len(ordered) // 2
    return ordered[k] if len(ordered) % 2 else 0.5 * (ordered[k - 1] + ordered[k])


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.harness.ask_tell_cost",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=1000, help="told points before timing")
    parser.add_argument("--dims", type=int, nargs="+", default=[6, 20])
    parser.add_argument("--warmup", type=int, default=2, help="untimed ask+tell steps")
    parser.add_argument("--asks", type=int, default=20, help="timed ask+tell steps")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", metavar="PATH", help="also write the seconds as JSON")
    args = parser.parse_args(argv)
    results = {}
    print(f"| D | mfbo ms per ask+tell | Optuna TPE ms per ask+tell | ratio (n = {args.n}) |")
    print("|---|---|---|---|")
    for dims in args.dims:
        row = {m: measure(m, args.n, dims, args.warmup, args.asks, args.seed) for m in METHODS}
        results[str(dims)] = row
        a, b = (_median(row[m]) for m in METHODS)
        print(f"| {dims} | {1e3 * a:.1f} | {1e3 * b:.1f} | {a / b:.2f} |", flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps({"n": args.n, "seconds": results}, indent=2))
    return results


if __name__ == "__main__":
    main()
