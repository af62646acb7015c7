"""Which proposal steps an mfbo method's runs spend their evaluations on, and which of those
evaluations improve the best loss.

    python -m benchmarks.harness.origins --problem cond-cash-breast_cancer,cond-cash-moons \
        --method mondrian,mondrian-bandit-cool2 --seeds 10 --budget 50

Each (problem, method, seed) is run again, as ``mfbo bench`` runs it (the same runs, value for
value), and every trial after the initial design is counted by its :attr:`Trial.origin` (the
step that proposed it): how many, how many improved the best loss before them by more than
0.1 % of its magnitude (the branch bandit's and the stall escapes' margin), and which step
proposed each run's final best.  One markdown table per problem, a row per method and origin,
summed over the seeds; where the space has categorical parameters, also the share of the trials
after the design that kept the categorical values of the best trial before them (how much a
method stays in its incumbent's cell).  ``--trials`` lists every trial of every run.
"""

from __future__ import annotations

import argparse
import collections
from collections.abc import Iterable

import numpy as np

from benchmarks.harness.methods import TimedObjective, get_method, optimizer_settings
from benchmarks.problems.problems import get_problem

__all__ = ["in_incumbent_cell", "origins_of", "tally", "trials_of", "main"]

#: an improvement: a loss below the best before it by more than this share of its magnitude
TOL = 1e-3


def trials_of(problem: str, method: str, seed: int, budget: int) -> list:
    """One run's complete trials, in order, as ``mfbo bench`` runs it."""
    import mfbo

    p = get_problem(problem)
    settings = optimizer_settings(get_method(method))
    candidates, _ = p.candidate_set(seed)
    r = mfbo.minimize(TimedObjective(p), p.space, n_calls=int(budget), random_state=int(seed),
                      candidates=candidates, progress_bar=False, **settings)
    return [t for t in r.trials if t.state == "complete"]


def origins_of(problem: str, method: str, seed: int, budget: int) -> tuple[list, list, int]:
    """The origins and losses of one run's trials, in order, and its initial design's size."""
    return _origins(trials_of(problem, method, seed, budget))


def _origins(trials) -> tuple[list, list, int]:
    """The origins and losses of ``trials``, in order, and the initial design's size."""
    return ([t.origin for t in trials], [float(t.value) for t in trials],
            sum(t.origin == "design" for t in trials))


def in_incumbent_cell(params: list[dict], y, n_initial: int, names: list[str]) -> list[bool]:
    """For each trial after the initial design, whether its values of the parameters
    ``names`` (a space's categorical ones) are those of the best trial before it."""
    y = np.asarray(y, dtype=float)
    out = []
    for i in range(max(n_initial, 1), len(y)):
        best = params[int(np.argmin(y[:i]))]
        out.append(all(params[i].get(n) == best.get(n) for n in names))
    return out


def tally(runs: Iterable[tuple[list, list, int]]) -> dict[str, list[int]]:
    """``{origin: [trials after the design, improvements, runs whose final best it made]}``
    summed over ``runs`` (each as :func:`origins_of` returns it)."""
    out: dict[str, list[int]] = collections.defaultdict(lambda: [0, 0, 0])
    for origins, y, n_initial in runs:
        y = np.asarray(y, dtype=float)
        out[origins[int(np.argmin(y))]][2] += 1
        best = np.minimum.accumulate(y)
        for i in range(max(n_initial, 1), len(y)):
            out[origins[i]][0] += 1
            out[origins[i]][1] += int(y[i] < best[i - 1] - TOL * abs(best[i - 1]))
    return dict(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.harness.origins",
                                 description=__doc__.split("\n\n")[0])
    ap.add_argument("--problem", required=True, help="comma-separated problem names")
    ap.add_argument("--method", required=True, help="comma-separated mfbo method names")
    ap.add_argument("--seeds", type=int, default=10, help="seeds 0..N-1 (default: 10)")
    ap.add_argument("--budget", type=int, default=50, help="evaluations per run (default: 50)")
    ap.add_argument("--trials", action="store_true",
                    help="also list every run's trials: number, origin, loss (* a new best), "
                         "parameters")
    args = ap.parse_args(argv)
    if args.seeds < 1 or args.budget < 1:
        ap.error("--seeds and --budget must be positive")
    from mfbo import Categorical, Space

    for problem in args.problem.split(","):
        space = get_problem(problem).space
        dims = space.dimensions if isinstance(space, Space) else space
        names = [n for n, d in dims.items() if isinstance(d, Categorical)]
        runs = {m: [trials_of(problem, m, s, args.budget) for s in range(args.seeds)]
                for m in args.method.split(",")}
        print(f"\n### {problem}, {args.budget} evaluations, seeds 0-{args.seeds - 1}\n")
        if names:
            print("Trials after the design with the categorical values of the best trial "
                  "before them:", ", ".join(
                      f"{m} {_share(r, names):.0%}" for m, r in runs.items()), "\n")
        print("| method | origin | trials after the design | improvements | final bests |")
        print("|---|---|---|---|---|")
        for method, r in runs.items():
            t = tally(_origins(trials) for trials in r)
            for origin in sorted(t, key=lambda o: -t[o][0]):
                n, hits, bests = t[origin]
                print(f"| {method} | {origin} | {n} | {hits} | {bests} |")
        if args.trials:
            for method, r in runs.items():
                for seed, trials in enumerate(r):
                    print(f"\n{method}, seed {seed}:\n")
                    _list(trials)
    return 0


def _share(runs, names) -> float:
    """The share of the runs' trials after the design in the incumbent's categorical cell."""
    flags = []
    for trials in runs:
        _, y, n_initial = _origins(trials)
        flags += in_incumbent_cell([t.params for t in trials], y, n_initial, names)
    return float(np.mean(flags)) if flags else float("nan")


def _list(trials) -> None:
    best = np.inf
    for i, t in enumerate(trials):
        v = float(t.value)
        mark = "*" if v < best else " "
        best = min(best, v)
        params = ", ".join(f"{k}={x:.4g}" if isinstance(x, float) else f"{k}={x}"
                           for k, x in t.params.items())
        print(f"    {i:4d} {t.origin:12s} {v:.6g}{mark} {params}")


if __name__ == "__main__":
    raise SystemExit(main())
