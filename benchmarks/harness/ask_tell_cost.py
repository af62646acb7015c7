"""The cost of one ask+tell of mfbo's default optimizer against Optuna's TPE, in the same run.

For each dimension (``--dims``, default 6 and 20) and each method, a fresh process tells the
optimizer ``--n`` evaluations of random points of a quadratic (the same points for both
methods), asks and tells ``--warmup`` proposals untimed (the first builds the model and loads
the numba cache), then times ``--asks`` proposals, each asked, evaluated and told, and
reports the median seconds per ask+tell and mfbo's ratio to TPE's.  The machine's load moves
both columns; the ratio, taken within one run, much less.

``--space tied``: a space of integers (1 to 100) and categorical values (three) in turn, whose
loss depends on the first of each only and in steps, so that it ties again and again (as
nearest neighbours' ``leaf_size`` and ``algorithm`` change no loss), where the default's
plateaus are slices of tied losses; ``--with-noslices`` adds mfbo's default without them.

Run::

    python -m benchmarks.harness.ask_tell_cost                 # n = 1,000 at D = 6 and 20
    python -m benchmarks.harness.ask_tell_cost --n 300 --dims 6 --asks 10
    python -m benchmarks.harness.ask_tell_cost --space tied --dims 4 8 --with-noslices
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

__all__ = ["METHODS", "SPACES", "main", "measure"]

#: the compared methods: mfbo's ``Optimizer`` with its defaults, Optuna's ``TPESampler``
#: with its defaults (seeded)
METHODS = ("mfbo", "optuna-tpe")

#: the spaces: the unit cube, or integers and categorical values whose losses tie
SPACES = ("real", "tied")

_ROOT = Path(__file__).resolve().parents[2]

# One measurement in a fresh process: prints the per-step seconds as JSON.
_CHILD = r"""
import json, sys, time
import numpy as np
method, space = sys.argv[1], sys.argv[7]
n, dims, warmup, asks, seed = map(int, sys.argv[2:7])
rng = np.random.default_rng(seed)
names = [f"x{i}" for i in range(dims)]
CHOICES = ["a", "b", "c"]
if space == "real":
    X = [dict(zip(names, map(float, x))) for x in rng.random((n, dims))]
    f = lambda p: float(sum((p[k] - 0.3) ** 2 for k in names))
else:  # integers and categorical values in turn; the loss ties (only x0, x1 matter)
    X = [{k: (int(rng.integers(1, 101)) if i % 2 == 0 else str(rng.choice(CHOICES)))
          for i, k in enumerate(names)} for _ in range(n)]
    f = lambda p: float(min(abs(p["x0"] - 30) // 5, 12) + (p.get("x1", "a") != "a"))
if method.startswith("mfbo"):
    from mfbo import Categorical, Integer, Optimizer, Real, get_recipe
    from mfbo.proposal import PlateauEscape
    dims_ = {k: (Real(0.0, 1.0) if space == "real" else
                 Integer(1, 100) if i % 2 == 0 else Categorical(CHOICES))
             for i, k in enumerate(names)}
    recipe = get_recipe("mondrian")
    if method == "mfbo-noslices":
        recipe = recipe.with_settings(PlateauEscape, slices=False)
    opt = Optimizer(dims_, surrogate=recipe, random_state=seed, n_initial=1)
    for x in X:
        opt.tell(x, f(x))
    def step():
        t = opt.ask()
        opt.tell(t, f(t.params))
else:
    import optuna
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    D = optuna.distributions
    dist = {k: (D.FloatDistribution(0.0, 1.0) if space == "real" else
                D.IntDistribution(1, 100) if i % 2 == 0 else D.CategoricalDistribution(CHOICES))
            for i, k in enumerate(names)}
    study = optuna.create_study(sampler=optuna.samplers.TPESampler(seed=seed))
    study.add_trials([optuna.trial.create_trial(params=x, distributions=dist, value=f(x))
                      for x in X])
    def step():
        t = study.ask(dist)
        study.tell(t, f(t.params))
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
            seed: int = 0, space: str = "real") -> list[float]:
    """Seconds of each timed ask+tell of ``method`` (one of :data:`METHODS`, or
    ``"mfbo-noslices"``) after ``n`` told random points in ``dims`` dimensions of ``space``
    (one of :data:`SPACES`), in a fresh process."""
    done = subprocess.run([sys.executable, "-c", _CHILD, method, str(n), str(dims), str(warmup),
                           str(asks), str(seed), space], cwd=_ROOT, capture_output=True,
                          text=True, timeout=3600)
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
    parser.add_argument("--space", choices=SPACES, default="real",
                        help="the unit cube, or integers and categorical values whose losses tie")
    parser.add_argument("--with-noslices", action="store_true",
                        help="add mfbo's default without plateaus of tied slices")
    parser.add_argument("--json", metavar="PATH", help="also write the seconds as JSON")
    args = parser.parse_args(argv)
    methods = METHODS + (("mfbo-noslices",) if args.with_noslices else ())
    results = {}
    header = ["D", "mfbo ms per ask+tell", "Optuna TPE ms per ask+tell", f"ratio (n = {args.n})"]
    header += ["without slices ms", "its ratio"] if args.with_noslices else []
    print("| " + " | ".join(header) + " |")
    print("|---" * len(header) + "|")
    for dims in args.dims:
        row = {m: measure(m, args.n, dims, args.warmup, args.asks, args.seed, args.space)
               for m in methods}
        results[str(dims)] = row
        a, b = (_median(row[m]) for m in METHODS)
        cells = f"| {dims} | {1e3 * a:.1f} | {1e3 * b:.1f} | {a / b:.2f} |"
        if args.with_noslices:
            c = _median(row["mfbo-noslices"])
            cells += f" {1e3 * c:.1f} | {c / b:.2f} |"
        print(cells, flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps({"n": args.n, "space": args.space,
                                               "seconds": results}, indent=2))
    return results


if __name__ == "__main__":
    main()
