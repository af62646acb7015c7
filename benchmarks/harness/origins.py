"""Which proposal steps an mfbo method's runs spend their evaluations on, and which of those
evaluations improve the best loss.

    python -m benchmarks.harness.origins --problem cond-cash-breast_cancer,cond-cash-moons \
        --method mondrian,mondrian-bandit-cool2 --seeds 10 --budget 50

Each (problem, method, seed) is run again, as ``mfbo bench`` runs it (the same runs, value for
value), and every trial after the initial design is counted by its :attr:`Trial.origin` (the
step that proposed it): how many, how many improved the best loss before them by more than
0.1 % of its magnitude (the branch bandit's and the stall escapes' margin), and which step
proposed each run's final best.  One markdown table per problem, a row per method and origin,
summed over the seeds.
"""

from __future__ import annotations

import argparse
import collections
from collections.abc import Iterable

import numpy as np

from benchmarks.harness.methods import TimedObjective, get_method, optimizer_settings
from benchmarks.problems.problems import get_problem

__all__ = ["origins_of", "tally", "main"]

#: an improvement: a loss below the best before it by more than this share of its magnitude
TOL = 1e-3


def origins_of(problem: str, method: str, seed: int, budget: int) -> tuple[list, list, int]:
    """The origins and losses of one run's trials, in order, and its initial design's size."""
    import mfbo

    p = get_problem(problem)
    settings = optimizer_settings(get_method(method))
    candidates, _ = p.candidate_set(seed)
    r = mfbo.minimize(TimedObjective(p), p.space, n_calls=int(budget), random_state=int(seed),
                      candidates=candidates, progress_bar=False, **settings)
    trials = [t for t in r.trials if t.state == "complete"]
    n_initial = sum(t.origin == "design" for t in trials)
    return [t.origin for t in trials], [float(t.value) for t in trials], n_initial


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
    args = ap.parse_args(argv)
    if args.seeds < 1 or args.budget < 1:
        ap.error("--seeds and --budget must be positive")
    for problem in args.problem.split(","):
        print(f"\n### {problem}, {args.budget} evaluations, seeds 0-{args.seeds - 1}\n")
        print("| method | origin | trials after the design | improvements | final bests |")
        print("|---|---|---|---|---|")
        for method in args.method.split(","):
            t = tally(origins_of(problem, method, s, args.budget) for s in range(args.seeds))
            for origin in sorted(t, key=lambda o: -t[o][0]):
                n, hits, bests = t[origin]
                print(f"| {method} | {origin} | {n} | {hits} | {bests} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
