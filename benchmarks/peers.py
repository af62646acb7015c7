"""Adapters for the external peers of :mod:`benchmarks.methods` (the ``peers`` extra).

Each ``run_*(objective, problem, budget, seed)`` minimises ``objective(**params)`` with
``budget`` evaluations and returns ``(grid index, continuous)`` like mfbo's runners.  The peers
take no candidate set, so:

* a table problem (``lda-grid``, ``svm-grid``) is given to them as one ordinal choice per axis,
  its ``k`` distinct table values (ConfigSpace ``OrdinalHyperparameter``; an integer index
  ``0..k-1`` for Optuna and scikit-optimize, HPOlib's encoding of these grids), so every
  proposal is a grid cell;
* every other problem, a random-grid one included, is searched on its continuous box, with
  ``log=True`` dimensions log-scaled (``continuous`` is then True).

This module imports SMAC3, Optuna or scikit-optimize only inside the function that uses it.
"""

from __future__ import annotations

import logging
import tempfile
import warnings
from pathlib import Path

__all__ = ["run_optuna", "run_skopt_forest", "run_skopt_gp", "run_smac", "peer_space"]


def peer_space(problem):
    """``("ordinal", {name: sorted values})`` for a table problem, else
    ``("box", {name: (low, high, log)})`` of the problem's continuous box."""
    if getattr(problem, "kind", None) == "table":
        return "ordinal", problem.axes()
    box = {}
    for name, dim in problem.continuous.space.items():
        if hasattr(dim, "low"):
            box[name] = (float(dim.low), float(dim.high), bool(getattr(dim, "log", False)))
        else:
            box[name] = (float(dim[0]), float(dim[1]), False)
    return "box", box


def _result(kind):
    return None, kind == "box"


def run_smac(objective, problem, budget, seed):
    """SMAC3's HyperparameterOptimizationFacade (random forest, log-EI, 2.4 defaults),
    deterministic objective, output in a temporary directory."""
    from ConfigSpace import ConfigurationSpace, Float, OrdinalHyperparameter
    from smac import HyperparameterOptimizationFacade, Scenario

    kind, axes = peer_space(problem)
    cs = ConfigurationSpace(seed=seed)
    for name, spec in axes.items():
        if kind == "ordinal":
            cs.add(OrdinalHyperparameter(name, list(spec)))
        else:
            cs.add(Float(name, (spec[0], spec[1]), log=spec[2]))

    def target(config, seed: int = 0) -> float:
        return objective(**{n: float(config[n]) for n in axes})

    with tempfile.TemporaryDirectory(prefix="mfbo-smac-") as tmp:
        scenario = Scenario(cs, deterministic=True, n_trials=budget, seed=seed,
                            output_directory=Path(tmp) / "smac3_output")
        smac = HyperparameterOptimizationFacade(scenario, target, overwrite=True,
                                                logging_level=logging.ERROR)
        smac.optimize()
    return _result(kind)


def run_optuna(objective, problem, budget, seed):
    """Optuna's default TPESampler (multivariate in Optuna 5), seeded."""
    import optuna

    kind, axes = peer_space(problem)
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.create_study(direction="minimize",
                                sampler=optuna.samplers.TPESampler(seed=seed))

    def f(trial):
        if kind == "ordinal":
            params = {n: v[trial.suggest_int(n, 0, len(v) - 1)] for n, v in axes.items()}
        else:
            params = {n: trial.suggest_float(n, lo, hi, log=log)
                      for n, (lo, hi, log) in axes.items()}
        return objective(**params)

    study.optimize(f, n_trials=budget)
    return _result(kind)


def _skopt(minimizer_name, objective, problem, budget, seed):
    import skopt
    from skopt.space import Integer, Real

    kind, axes = peer_space(problem)
    if kind == "ordinal":
        dims = [Integer(0, len(v) - 1, name=n) for n, v in axes.items()]
    else:
        dims = [Real(lo, hi, prior="log-uniform" if log else "uniform", name=n)
                for n, (lo, hi, log) in axes.items()]

    def f(x):
        if kind == "ordinal":
            params = {n: v[int(i)] for (n, v), i in zip(axes.items(), x)}
        else:
            params = {n: float(xi) for n, xi in zip(axes, x)}
        return objective(**params)

    with warnings.catch_warnings():
        # "The objective has been evaluated at point ... before": repeats are part of the run
        warnings.simplefilter("ignore", UserWarning)
        getattr(skopt, minimizer_name)(f, dims, n_calls=budget, random_state=seed,
                                       n_initial_points=min(10, budget))
    return _result(kind)


def run_skopt_forest(objective, problem, budget, seed):
    """scikit-optimize's ``forest_minimize`` (defaults: 100 extra trees, EI)."""
    return _skopt("forest_minimize", objective, problem, budget, seed)


def run_skopt_gp(objective, problem, budget, seed):
    """scikit-optimize's ``gp_minimize`` (defaults: Matern GP, gp_hedge acquisition)."""
    return _skopt("gp_minimize", objective, problem, budget, seed)
