"""The cost of one report and pruning decision (``Optimizer.report`` then
``Optimizer.should_prune``) in a study of ``--trials`` trials that each reported ``--steps``
steps, for the median pruner and the model-based pruner.

The study's first ``trials - measured`` trials are recorded with their learning curves first
(each pruner then reads them all at its first decision, which is not timed); the last
``measured`` trials report their steps one by one, each followed by a decision, and each such
pair is timed.  The curves are random (a level, a decay and noise per trial); no trial is
stopped, so every measured report sees the full study.

Run: ``python -m benchmarks.experiments.report_cost --trials 1000 --steps 50``.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import mfbo
from mfbo.pruners import MedianPruner, MondrianPruner, NopPruner


def curve(rng, steps: int) -> np.ndarray:
    level, rate = rng.uniform(0, 1), rng.uniform(0.05, 0.5)
    return level + np.exp(-rate * np.arange(steps)) + rng.normal(0, 0.02, steps)


def measure(pruner, trials: int, steps: int, measured: int, seed: int = 0) -> np.ndarray:
    """The seconds of each timed report and decision."""
    rng = np.random.default_rng(seed)
    opt = mfbo.Optimizer({"x": (0.0, 1.0), "y": (0.0, 1.0)}, surrogate="random",
                         random_state=seed, pruner=pruner)
    for _ in range(trials - measured):
        t = opt.ask()
        values = curve(rng, steps)
        for s, v in enumerate(values):
            opt.report(t, s, float(v))
        opt.tell(t, float(values[-1]))
    times = []
    for i in range(measured):
        t = opt.ask()
        values = curve(rng, steps)
        if i == 0:
            opt.report(t, 0, float(values[0]))
            opt.should_prune(t)  # the first decision reads the whole study (not timed)
            values = values[1:]
            first = 1
        else:
            first = 0
        for s, v in enumerate(values, start=first):
            start = time.perf_counter()
            opt.report(t, s, float(v))
            opt.should_prune(t)
            times.append(time.perf_counter() - start)
        opt.tell(t, float(values[-1]))
    return np.array(times)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=1000)
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--measured", type=int, default=20)
    args = parser.parse_args(argv)
    print(f"{args.trials} trials x {args.steps} steps; the last {args.measured} trials timed")
    print("| pruner | reports timed | median ms | mean ms | 95th percentile ms | max ms |")
    print("|---|---|---|---|---|---|")
    for name, pruner in [("none (report only)", NopPruner()), ("MedianPruner", MedianPruner()),
                         ("MondrianPruner", MondrianPruner(max_resource=args.steps - 1))]:
        t = measure(pruner, args.trials, args.steps, args.measured) * 1e3
        print(f"| {name} | {t.size} | {np.median(t):.3f} | {t.mean():.3f} | "
              f"{np.percentile(t, 95):.3f} | {t.max():.3f} |", flush=True)


if __name__ == "__main__":
    main()
