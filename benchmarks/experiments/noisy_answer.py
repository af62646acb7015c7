"""Which answer a run of a noisy objective should give: the observed best trial, or the
evaluated configuration the forest predicts best (:meth:`mfbo.OptimizeResult.estimated_best`).

Each problem is a function whose noise-free value is known, observed with Gaussian noise of a
fixed standard deviation (``sd``).  ``mfbo.minimize`` (the default recipe) runs on the noisy
values; each of the two answers of its result is then scored by its noise-free value (lower is
better), and the two are compared run by run (Wilcoxon signed-rank test, two-sided, ties
dropped).

Split, fixed here: **dev** = Branin (sd 1 and 5) and Hartmann-3 (sd 0.1 and 0.5); **test** =
Hartmann-6 (sd 0.1 and 0.5) and Rosenbrock in 3 dimensions on [-2, 2]^3 (sd 1 and 5).

Run: ``python -m benchmarks.experiments.noisy_answer --split dev --seeds 20 --budgets 50 100``.
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np

__all__ = ["CASES", "run_case", "main"]

#: ``(split, problem, sd)``: the problems of each split and their noise
CASES = (("dev", "branin", 1.0), ("dev", "branin", 5.0),
         ("dev", "hartmann3", 0.1), ("dev", "hartmann3", 0.5),
         ("test", "hartmann6", 0.1), ("test", "hartmann6", 0.5),
         ("test", "rosenbrock3", 1.0), ("test", "rosenbrock3", 5.0))


def _problem(name: str):
    """``(space, f)``: the problem's space and noise-free function of a parameter dict."""
    from benchmarks.problems.problems import get_problem, rosenbrock

    if name == "rosenbrock3":
        space = {f"x{i}": (-2.0, 2.0) for i in range(3)}
        return space, lambda p: float(rosenbrock(np.array([[p[f"x{i}"] for i in range(3)]]))[0])
    problem = get_problem(name)
    return problem.space, lambda p: float(problem(**p))


def run_case(name: str, sd: float, budget: int, seed: int) -> tuple[float, float]:
    """The noise-free values of the observed best's and the estimated best's configurations
    after one run of ``budget`` noisy evaluations."""
    import mfbo

    space, f = _problem(name)
    rng = np.random.default_rng([seed, 7919])

    def noisy(**params):
        return f(params) + float(rng.normal(0.0, sd))

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = mfbo.minimize(noisy, space, n_calls=budget, random_state=seed, progress_bar=False)
    return f(res.best_params), f(res.estimated_best()["params"])


def main(argv=None) -> int:
    from scipy.stats import wilcoxon

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--split", choices=("dev", "test"), default="dev")
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--budgets", type=int, nargs="+", default=[50, 100])
    args = ap.parse_args(argv)
    print("| problem | sd | evaluations | observed best's true value (mean) | estimated best's "
          "| estimated better / tied / worse | p |")
    print("|---|---|---|---|---|---|---|")
    every = {b: [] for b in args.budgets}
    for split, name, sd in CASES:
        if split != args.split:
            continue
        for budget in args.budgets:
            pairs = np.array([run_case(name, sd, budget, s) for s in range(args.seeds)])
            every[budget].append(pairs)
            d = pairs[:, 1] - pairs[:, 0]
            p = wilcoxon(d).pvalue if np.any(d != 0) else 1.0
            print(f"| {name} | {sd:g} | {budget} | {pairs[:, 0].mean():.4g} | "
                  f"{pairs[:, 1].mean():.4g} | {(d < 0).sum()} / {(d == 0).sum()} / "
                  f"{(d > 0).sum()} | {p:.2g} |", flush=True)
    for budget, parts in every.items():
        # each case's differences scaled by its spread of true values, then pooled
        scaled = np.concatenate([(q[:, 1] - q[:, 0]) / max(np.ptp(q), 1e-12) for q in parts])
        p = wilcoxon(scaled).pvalue if np.any(scaled != 0) else 1.0
        print(f"\n{budget} evaluations, all cases: estimated best better / tied / worse "
              f"{(scaled < 0).sum()} / {(scaled == 0).sum()} / {(scaled > 0).sum()}, "
              f"p = {p:.2g}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
