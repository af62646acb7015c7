"""The cost of a proposal with several objectives and constraints, as a ratio to the cost of a
proposal with one objective, in the same run.

Each setting builds an optimizer over ``--dims`` continuous dimensions, tells it ``--n``
evaluations of random points (the same points in every setting), then times ``--asks``
proposals (each asked and told, so the models' updates count too) and reports the median and
the mean seconds per ask+tell and their ratios to the single objective's (a single objective's
policy takes cheap local steps between its acquisition searches, so its median is a local
step's cost and its mean the average over the policy's cycle).

Run::

    python -m benchmarks.harness.outcome_cost --n 1000 --dims 6 --asks 12
"""

from __future__ import annotations

import argparse
import time

import numpy as np

__all__ = ["SETTINGS", "timings", "measure", "main"]

#: (label, number of objectives, number of constraints, pareto_method)
SETTINGS = [("1 objective", 1, 0, "auto"), ("1 objective, 2 constraints", 1, 2, "auto"),
            ("2 objectives (hvi)", 2, 0, "auto"), ("3 objectives, 2 constraints (parego)", 3, 2,
                                                   "auto"),
            ("3 objectives, 2 constraints (hvi)", 3, 2, "hvi")]


def _outcome(x: np.ndarray, k: int, m: int):
    values = [float(((x - 0.2 * (j + 1)) ** 2).sum()) for j in range(k)]
    cons = {f"c{i}": float(x[i] - 0.8) for i in range(m)}
    if not m:
        return values[0] if k == 1 else tuple(values)
    return {"loss": values[0] if k == 1 else tuple(values), **cons}


def timings(n: int, dims: int, asks: int, k: int, m: int, method: str,
            seed: int = 0) -> list[float]:
    """The seconds of each of ``asks`` asks and tells after ``n`` told random points and one
    ask and tell more, untimed."""
    from mfbo import Optimizer, Real

    space = {f"x{i}": Real(0.0, 1.0) for i in range(dims)}
    kwargs = {} if k == 1 else {"directions": ["minimize"] * k}
    opt = Optimizer(space, random_state=seed, n_initial=1, pareto_method=method,
                    constraints=[f"c{i}" for i in range(m)] or None, **kwargs)
    rng = np.random.default_rng(seed)
    for _ in range(n):
        x = rng.random(dims)
        opt.tell({f"x{i}": float(v) for i, v in enumerate(x)}, _outcome(x, k, m))
    times = []
    for i in range(asks + 1):
        start = time.perf_counter()
        t = opt.ask()
        opt.tell(t, _outcome(np.array(list(t.params.values())), k, m))
        if i:  # (the first ask loads and compiles what the proposals use: not timed)
            times.append(time.perf_counter() - start)
    return times


def measure(n: int, dims: int, asks: int, k: int, m: int, method: str, seed: int = 0):
    """Median seconds of one ask and tell after ``n`` told random points."""
    return float(np.median(timings(n, dims, asks, k, m, method, seed)))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--dims", type=int, default=6)
    ap.add_argument("--asks", type=int, default=12)
    args = ap.parse_args(argv)
    base = None
    print(f"| setting | median seconds per ask+tell at n = {args.n}, D = {args.dims} | ratio "
          f"to 1 objective | mean seconds | ratio |")
    print("|---|---|---|---|---|")
    for label, k, m, method in SETTINGS:
        times = timings(args.n, args.dims, args.asks, k, m, method)
        median, mean = float(np.median(times)), float(np.mean(times))
        base = (median, mean) if base is None else base
        print(f"| {label} | {median:.3f} | {median / base[0]:.2f} | {mean:.3f} | "
              f"{mean / base[1]:.2f} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
