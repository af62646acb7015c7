"""Whether MondrianSampler's joint modelling of define-by-run conditional parameters pays: the
sampler as it is (a conditional space inferred from the trials) against the same sampler on
optuna's intersection search space, the handling it had before (every parameter some trials
lack drawn by optuna's RandomSampler), on a small conditional objective, seed by seed; optuna's
``TPESampler(multivariate=True, group=True)`` for reference.

The objective (:func:`objective`) chooses a model and a ``dropout`` that every model has, then
the model's parameters: a linear model's ``alpha``; an svm's ``C`` and ``kernel``, and
``gamma`` for its rbf kernel; a net's ``n_layers``, one ``width_j`` per layer and ``lr``.  Its
minimum, 0, is the svm's with the rbf kernel, ``C = 10``, ``gamma = 0.01`` and ``dropout =
0.2``; the other models reach 0.1 (net) and 0.3 (linear).

``python -m benchmarks.harness.optuna_conditional [--trials 40] [--seeds 10] [--startup 10]``
prints each method's mean, median and standard deviation of the best value over the seeds,
the number of seeds the conditional sampler beats the intersection one on (a tie counts half),
and the mean seconds per run.
"""

from __future__ import annotations

import argparse
import math

import numpy as np

from .timing import timed

__all__ = ["objective", "samplers", "run", "main"]


def objective(trial) -> float:
    """The conditional objective (see the module's docstring)."""
    model = trial.suggest_categorical("model", ["linear", "svm", "net"])
    value = 0.5 * (trial.suggest_float("dropout", 0.0, 0.5) - 0.2) ** 2
    if model == "linear":
        alpha = trial.suggest_float("alpha", 1e-4, 1e2, log=True)
        return value + 0.3 + 0.05 * (math.log10(alpha) + 1) ** 2
    if model == "svm":
        value += 0.02 * (math.log10(trial.suggest_float("C", 1e-3, 1e3, log=True)) - 1) ** 2
        if trial.suggest_categorical("kernel", ["linear", "rbf"]) == "linear":
            return value + 0.2
        gamma = trial.suggest_float("gamma", 1e-4, 1e1, log=True)
        return value + 0.05 * (math.log10(gamma) + 2) ** 2
    n = trial.suggest_int("n_layers", 1, 3)
    value += 0.1 + 0.1 * abs(n - 2)
    for j in range(n):
        value += (trial.suggest_float(f"width_{j}", 0.0, 1.0) - 0.6) ** 2
    return value + 0.02 * (math.log10(trial.suggest_float("lr", 1e-4, 1e-1, log=True)) + 2.5) ** 2


def samplers(seed: int, startup: int) -> dict:
    """The methods compared, each a fresh sampler seeded ``seed``."""
    import optuna
    from optuna.search_space import IntersectionSearchSpace

    from mfbo.integrations.optuna import MondrianSampler

    class IntersectionMondrianSampler(MondrianSampler):
        """MondrianSampler on optuna's intersection search space (its handling before)."""

        def infer_relative_search_space(self, study, trial):
            space = IntersectionSearchSpace().calculate(study)
            return {name: d for name, d in space.items() if not d.single()}

    return {"conditional": MondrianSampler(seed=seed, n_startup_trials=startup),
            "intersection": IntersectionMondrianSampler(seed=seed, n_startup_trials=startup,
                                                        warn_independent_sampling=False),
            "tpe": optuna.samplers.TPESampler(seed=seed, n_startup_trials=startup,
                                              multivariate=True, group=True)}


def run(sampler, trials: int) -> float:
    """The best value of one study of ``trials`` trials."""
    import optuna

    study = optuna.create_study(sampler=sampler)
    study.optimize(objective, n_trials=trials)
    return float(study.best_value)


def main(argv: list[str] | None = None) -> int:
    import warnings

    import optuna

    parser = argparse.ArgumentParser(prog="python -m benchmarks.harness.optuna_conditional",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=40)
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--startup", type=int, default=10)
    args = parser.parse_args(argv)
    optuna.logging.set_verbosity(optuna.logging.ERROR)
    warnings.filterwarnings("ignore", category=optuna.exceptions.ExperimentalWarning)
    best: dict[str, list[float]] = {}
    secs: dict[str, list[float]] = {}
    for seed in range(args.seeds):
        for name, sampler in samplers(seed, args.startup).items():
            value, s = timed(lambda: run(sampler, args.trials))
            best.setdefault(name, []).append(value)
            secs.setdefault(name, []).append(s)
        print(f"seed {seed}: " + ", ".join(f"{n} {v[-1]:.4f}" for n, v in best.items()),
              flush=True)
    print(f"\nbest value after {args.trials} trials ({args.startup} startup), "
          f"{args.seeds} seeds (minimum 0):")
    for name, values in best.items():
        v = np.array(values)
        print(f"  {name:13s} mean {v.mean():.4f}  median {np.median(v):.4f}  sd {v.std():.4f}"
              f"  ({np.mean(secs[name]):.1f} s per run)")
    c, i = np.array(best["conditional"]), np.array(best["intersection"])
    wins = float(np.sum(c < i) + 0.5 * np.sum(c == i))
    print(f"conditional beats intersection on {wins:g} of {args.seeds} seeds")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
