"""Adapters for the external peers of :mod:`benchmarks.harness.methods` (the ``peers`` extra).

Each ``run_*(objective, problem, budget, seed)`` minimises ``objective(**params)`` with
``budget`` evaluations and returns ``(grid index, continuous)`` like mfbo's runners.  The peers
take no candidate set, so:

* a table problem (``lda-grid``, ``svm-grid``) is given to them as one ordinal choice per axis,
  its ``k`` distinct table values (ConfigSpace ``OrdinalHyperparameter``; an integer index
  ``0..k-1`` for Optuna and scikit-optimize, HPOlib's encoding of these grids), so every
  proposal is a grid cell;
* a mixed problem (:class:`~benchmarks.problems.problems.ConfigProblem`) is given its own space:
  reals and integers as such (log-scaled where ``log=True``), each categorical as a choice among its
  levels (passed to the peer as the strings of the levels and mapped back);
* every other problem, a random-grid one included, is searched on its continuous box, with
  ``log=True`` dimensions log-scaled (``continuous`` is then True).

This module imports SMAC3, Optuna or scikit-optimize only inside the function that uses it.
"""

from __future__ import annotations

import logging
import tempfile
import warnings
from pathlib import Path

__all__ = ["run_optuna", "run_optuna_multivariate", "run_optuna_independent",
           "run_skopt_forest", "run_skopt_gp", "run_smac", "peer_space"]


def peer_space(problem):
    """``("ordinal", {name: sorted values})`` for a table problem, ``("mixed", {name:
    ("real" or "int", low, high, log) or ("cat", choices)})`` for a mixed problem, else
    ``("box", {name: (low, high, log)})`` of the problem's continuous box."""
    if getattr(problem, "kind", None) == "table":
        return "ordinal", problem.axes()
    if getattr(problem, "kind", None) == "mixed":
        from mfbo import Categorical, Integer

        dims = {}
        for name, dim in problem.space.items():
            if isinstance(dim, Categorical):
                dims[name] = ("cat", list(dim.choices))
            else:
                dims[name] = ("int" if isinstance(dim, Integer) else "real", dim.low, dim.high,
                              bool(dim.log))
        return "mixed", dims
    box = {}
    for name, dim in problem.continuous.space.items():
        if hasattr(dim, "low"):
            box[name] = (float(dim.low), float(dim.high), bool(getattr(dim, "log", False)))
        else:
            box[name] = (float(dim[0]), float(dim[1]), False)
    return "box", box


def _result(kind):
    return None, kind in ("box", "mixed")


def _level(spec, value):
    """The categorical level whose string a peer proposed."""
    return spec[1][[str(c) for c in spec[1]].index(str(value))]


def run_smac(objective, problem, budget, seed):
    """SMAC3's HyperparameterOptimizationFacade (random forest, log-EI, 2.4 defaults),
    deterministic objective, output in a temporary directory.  In a discrete space with
    fewer configurations than the budget the run ends when SMAC has none left to propose
    (as mfbo's does on a candidate set), with the evaluations made so far."""
    from ConfigSpace import (Categorical, ConfigurationSpace, Float, Integer,
                             OrdinalHyperparameter)
    from smac import HyperparameterOptimizationFacade, Scenario
    from smac.main.exceptions import ConfigurationSpaceExhaustedException

    kind, axes = peer_space(problem)
    cs = ConfigurationSpace(seed=seed)
    for name, spec in axes.items():
        if kind == "ordinal":
            cs.add(OrdinalHyperparameter(name, list(spec)))
        elif kind == "box":
            cs.add(Float(name, (spec[0], spec[1]), log=spec[2]))
        elif spec[0] == "cat":
            cs.add(Categorical(name, [str(c) for c in spec[1]]))
        else:
            cls = Integer if spec[0] == "int" else Float
            cs.add(cls(name, (spec[1], spec[2]), log=spec[3]))

    def value(name, v):
        if kind != "mixed":
            return float(v)
        spec = axes[name]
        return (_level(spec, v) if spec[0] == "cat" else int(v) if spec[0] == "int"
                else float(v))

    def target(config, seed: int = 0) -> float:
        return objective(**{n: value(n, config[n]) for n in axes})

    with tempfile.TemporaryDirectory(prefix="mfbo-smac-") as tmp:
        scenario = Scenario(cs, deterministic=True, n_trials=budget, seed=seed,
                            output_directory=Path(tmp) / "smac3_output")
        smac = HyperparameterOptimizationFacade(scenario, target, overwrite=True,
                                                logging_level=logging.ERROR)
        try:
            smac.optimize()
        except ConfigurationSpaceExhaustedException:
            pass
    return _result(kind)


def run_optuna(objective, problem, budget, seed):
    """Optuna's default TPESampler, seeded (its defaults change between versions: Optuna 5's
    default is the multivariate TPE, earlier versions' the independent one)."""
    return _optuna({}, objective, problem, budget, seed)


def run_optuna_multivariate(objective, problem, budget, seed):
    """Optuna's TPESampler with ``multivariate=True`` and ``group=False`` set explicitly
    (Falkner et al. 2018's joint density over all parameters), seeded; the same sampler as
    the default in Optuna 5, the multivariate variant in every version."""
    return _optuna({"multivariate": True, "group": False}, objective, problem, budget, seed)


def run_optuna_independent(objective, problem, budget, seed):
    """Optuna's TPESampler with ``multivariate=False``: one density per parameter (the default
    before Optuna 5), seeded."""
    return _optuna({"multivariate": False}, objective, problem, budget, seed)


def _optuna(options, objective, problem, budget, seed):
    import optuna

    kind, axes = peer_space(problem)
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    with warnings.catch_warnings():
        # older Optuna versions flag multivariate=True as experimental: the setting is meant
        warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
        sampler = optuna.samplers.TPESampler(seed=seed, **options)
    study = optuna.create_study(direction="minimize", sampler=sampler)

    def suggest(trial, n, spec):
        if spec[0] == "cat":
            return _level(spec, trial.suggest_categorical(n, [str(c) for c in spec[1]]))
        if spec[0] == "int":
            return trial.suggest_int(n, spec[1], spec[2], log=spec[3])
        return trial.suggest_float(n, spec[1], spec[2], log=spec[3])

    def f(trial):
        if kind == "ordinal":
            params = {n: v[trial.suggest_int(n, 0, len(v) - 1)] for n, v in axes.items()}
        elif kind == "mixed":
            params = {n: suggest(trial, n, spec) for n, spec in axes.items()}
        else:
            params = {n: trial.suggest_float(n, lo, hi, log=log)
                      for n, (lo, hi, log) in axes.items()}
        return objective(**params)

    study.optimize(f, n_trials=budget)
    return _result(kind)


def _skopt(minimizer_name, objective, problem, budget, seed):
    import skopt
    from skopt.space import Categorical, Integer, Real

    kind, axes = peer_space(problem)

    def mixed_dim(n, spec):
        if spec[0] == "cat":
            return Categorical([str(c) for c in spec[1]], name=n)
        prior = "log-uniform" if spec[3] else "uniform"
        cls = Integer if spec[0] == "int" else Real
        return cls(spec[1], spec[2], prior=prior, name=n)

    def mixed_value(spec, v):
        return (_level(spec, v) if spec[0] == "cat" else int(v) if spec[0] == "int"
                else float(v))

    if kind == "ordinal":
        dims = [Integer(0, len(v) - 1, name=n) for n, v in axes.items()]
    elif kind == "mixed":
        dims = [mixed_dim(n, spec) for n, spec in axes.items()]
    else:
        dims = [Real(lo, hi, prior="log-uniform" if log else "uniform", name=n)
                for n, (lo, hi, log) in axes.items()]

    def f(x):
        if kind == "ordinal":
            params = {n: v[int(i)] for (n, v), i in zip(axes.items(), x)}
        elif kind == "mixed":
            params = {n: mixed_value(spec, xi) for (n, spec), xi in zip(axes.items(), x)}
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
