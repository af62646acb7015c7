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
  ``log=True`` dimensions log-scaled (``continuous`` is then True);
* a problem whose space is conditional (``when=`` conditions, ``forbidden=`` clauses; the
  ``conditional`` suite) is given its conditions in each peer's own terms: Optuna suggests
  the parameters in the space's order, each only where its condition holds on those before
  it (define-by-run); Hyperopt gets a tree of ``hp.choice`` (:func:`hyperopt_space`); SMAC3
  a ConfigSpace with conditions and forbidden clauses (:func:`configspace_of`).  What a peer's
  terms cannot say is sampled flat and read back through the conditions: a parameter whose
  condition is not a tree for Hyperopt (a ``Relation``, a condition on a numeric parent) or
  holds a ``Relation`` for ConfigSpace is proposed where it may be active and left out where
  its condition does not hold.  Optuna and Hyperopt cannot be told forbidden clauses
  (ConfigSpace can, but for a ``!=`` between non-numbers): when a peer proposes a forbidden
  configuration, the problem refuses it unevaluated and the run counts a failed evaluation
  (the peer is told the trial failed).  scikit-optimize takes no conditions: it refuses these
  problems.

The peer ``hyperopt`` (:func:`run_hyperopt`) searches every kind of problem through one mfbo
space: its box, its table's axes as ordinal choices, or its own space.

This module imports SMAC3, Optuna, Hyperopt, ConfigSpace or scikit-optimize only inside the
function that uses it.
"""

from __future__ import annotations

import logging
import math
import tempfile
import warnings
from pathlib import Path

import numpy as np

__all__ = ["run_optuna", "run_optuna_multivariate", "run_optuna_independent",
           "run_optuna_group", "run_hyperopt", "run_skopt_forest", "run_skopt_gp", "run_smac",
           "peer_space", "configspace_of", "hyperopt_space"]


def peer_space(problem):
    """``("ordinal", {name: sorted values})`` for a table problem, ``("conditional", space)``
    (the :class:`mfbo.Space`) for a mixed problem whose space has conditions or forbidden
    clauses, ``("mixed", {name: ("real" or "int", low, high, log) or ("cat", choices)})`` for
    another mixed problem, else ``("box", {name: (low, high, log)})`` of the problem's
    continuous box."""
    if getattr(problem, "kind", None) == "table":
        return "ordinal", problem.axes()
    if getattr(problem, "kind", None) == "mixed":
        from mfbo import Categorical, Integer
        from mfbo.space import as_space

        space = as_space(problem.space)
        if space.constrained:
            return "conditional", space
        dims = {}
        for name, dim in space.dimensions.items():
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
    return None, kind in ("box", "mixed", "conditional")


def _level(spec, value):
    """The categorical level whose string a peer proposed."""
    return spec[1][[str(c) for c in spec[1]].index(str(value))]


# -- conditional spaces ------------------------------------------------------------------------
def _configuration(space, value_of) -> dict:
    """The configuration a peer proposes in the conditional ``space``: its active parameters,
    in the space's order, ``value_of(name, dim)`` giving each one whose condition holds on
    those before it (a parameter whose condition does not hold is not asked for)."""
    out = {}
    for name, dim in space.dimensions.items():
        if dim.when is None or dim.when.holds(out):
            out[name] = value_of(name, dim)
    return out


def _value(dim, value):
    """A peer's ``value`` of an mfbo dimension as the dimension's own: the level whose string
    it is, an int, or a float within the bounds."""
    from mfbo import Categorical, Integer

    if isinstance(dim, Categorical):
        return _level(("cat", dim.choices), value)
    if isinstance(dim, Integer):
        return int(round(float(value)))
    return min(max(float(value), dim.low), dim.high)


def _read(space, values: dict, peer: str) -> dict:
    """The configuration of ``space`` that a peer's flat ``values`` (name -> value; inactive
    parameters may be among them) stand for; ``ValueError`` names a parameter that is active
    but that the peer left out (its space and ``space`` disagree)."""
    def value_of(name, dim):
        if name not in values:
            raise ValueError(f"{peer} proposed no value for {name!r}, which is active in "
                             f"{values!r}.")
        return _value(dim, values[name])
    return _configuration(space, value_of)


def _evaluate(objective, params: dict):
    """``objective(**params)``, or ``None`` for a failed evaluation (``ValueError``: a fit that
    failed, or a configuration the problem refused unevaluated, forbidden)."""
    try:
        return objective(**params)
    except ValueError:
        return None


def _decided(condition, fixed: dict, absent=frozenset()):
    """Whether ``condition`` holds given only the values in ``fixed`` and the parameters
    known to be inactive, ``absent``: True, False, or None when it depends on a value not
    known.  (A condition on an inactive parameter does not hold.)"""
    from mfbo import AllOf, AnyOf

    if isinstance(condition, (AllOf, AnyOf)):
        states = [_decided(c, fixed, absent) for c in condition.conditions]
        decisive = isinstance(condition, AnyOf)  # the value one part decides the whole by
        if decisive in states:
            return decisive
        return None if None in states else not decisive
    if any(p in absent for p in condition.parents()):
        return False
    if all(p in fixed for p in condition.parents()):
        return condition.holds(fixed)
    return None


def hyperopt_space(space):
    """``(expression, read)``: Hyperopt's search space for the mfbo ``space`` and the function
    reading one of its samples back as a configuration of ``space``.

    A categorical dimension that a later condition reads is an ``hp.choice`` among one
    sub-space per level, holding the dimensions that depend on it (through their conditions,
    directly or through another dimension); a dimension is in a level's sub-space only where
    its condition may hold with the levels chosen above it, so a tree of choices (Hyperopt's
    conditional spaces) holds exactly the parameters its branches may activate.  A condition
    that the choices above do not decide (a ``Relation``, a condition on a numeric parent,
    on two sibling choices) is read back after sampling: the parameter is left out where it
    does not hold.  Labels are the dimension's name, followed by the choices above it
    (``svm_gamma[model=1,svm_kernel=0]``) inside a branch, so each branch has its own
    distribution.  Reals are uniform (log-uniform where ``log=True``), integers and stepped
    reals uniform over their values, categoricals uniform choices.
    """
    from hyperopt import hp

    from mfbo import Categorical

    dims = space.dimensions
    parents = {n: set(d.when.parents()) if d.when is not None else set()
               for n, d in dims.items()}
    ancestors: dict[str, set] = {}
    for n in dims:  # parents come first in a space
        ancestors[n] = set().union(*({p} | ancestors[p] for p in parents[n]))
    branching = {n for n, d in dims.items()
                 if isinstance(d, Categorical) and any(n in parents[m] for m in dims)}
    names_of: dict[str, tuple] = {}  # label -> (name, how to read its sample)

    def build(names, fixed, absent, path):
        out, below_one = {}, set()
        for i, name in enumerate(names):
            dim = dims[name]
            if name in below_one:
                continue
            if dim.when is not None and _decided(dim.when, fixed, absent) is False:
                absent = absent | {name}
                continue
            label = name + (f"[{','.join(f'{p}={k}' for p, k in path)}]" if path else "")
            if name in branching:
                below = [m for m in names[i + 1:]
                         if m not in below_one and name in ancestors[m]]
                below_one.update(below)
                names_of[label] = (name, lambda k, d=dim: d.choices[int(k)])
                out[label] = hp.choice(label, [
                    {label: k, **build(below, {**fixed, name: c}, absent, (*path, (name, k)))}
                    for k, c in enumerate(dim.choices)])
            else:
                out[label], read = _hyperopt_dimension(hp, label, dim)
                names_of[label] = (name, read)
        return out

    expression = build(list(dims), {}, frozenset(), ())

    def read(sample: dict) -> dict:
        values = {}

        def flatten(node):
            for label, v in node.items():
                if isinstance(v, dict):
                    flatten(v)
                else:
                    name, how = names_of[label]
                    values[name] = how(v)
        flatten(sample)
        return _read(space, values, "Hyperopt")
    return expression, read


def _hyperopt_dimension(hp, label, dim):
    """``(expression, read)`` of one non-branching dimension."""
    from mfbo import Categorical, Integer

    if isinstance(dim, Categorical):
        return hp.choice(label, list(range(len(dim.choices)))), lambda k: dim.choices[int(k)]
    if dim.levels:  # an integer of few values, or a stepped real: one of its values
        return (hp.quniform(label, 0, dim.levels - 1, 1),
                lambda k: dim.from_unit([(int(k) + 0.5) / dim.levels])[0])
    if isinstance(dim, Integer):
        expr = (hp.qloguniform(label, math.log(dim.low), math.log(dim.high), 1) if dim.log
                else hp.quniform(label, dim.low, dim.high, 1))
        return expr, lambda v: min(max(int(round(v)), dim.low), dim.high)
    expr = (hp.loguniform(label, math.log(dim.low), math.log(dim.high)) if dim.log
            else hp.uniform(label, dim.low, dim.high))
    return expr, lambda v: min(max(float(v), dim.low), dim.high)


def _mfbo_space(kind, axes):
    """The mfbo space a peer searching ``peer_space``'s ``(kind, axes)`` proposes in."""
    from mfbo import Categorical, Integer, Ordinal, Real, Space

    if kind == "conditional":
        return axes
    if kind == "ordinal":
        return Space({n: Ordinal(list(v)) for n, v in axes.items()})
    if kind == "box":
        return Space({n: Real(lo, hi, log=log) for n, (lo, hi, log) in axes.items()})
    return Space({n: Categorical(spec[1]) if spec[0] == "cat" else
                  (Integer if spec[0] == "int" else Real)(spec[1], spec[2], log=spec[3])
                  for n, spec in axes.items()})


def run_hyperopt(objective, problem, budget, seed):
    """Hyperopt's TPE (``tpe.suggest``, its defaults: 20 random trials first), seeded, on the
    problem's space as a tree of choices (:func:`hyperopt_space`); a failed evaluation, a
    forbidden proposal among them, is a failed trial (``STATUS_FAIL``)."""
    from hyperopt import STATUS_FAIL, STATUS_OK, Trials, fmin, tpe
    from hyperopt.exceptions import AllTrialsFailed

    kind, axes = peer_space(problem)
    expression, read = hyperopt_space(_mfbo_space(kind, axes))

    def f(sample):
        value = _evaluate(objective, read(sample))
        return ({"status": STATUS_FAIL} if value is None
                else {"loss": value, "status": STATUS_OK})

    logging.getLogger("hyperopt").setLevel(logging.WARNING)
    try:
        fmin(f, expression, algo=tpe.suggest, max_evals=budget, trials=Trials(),
             rstate=np.random.default_rng(seed), show_progressbar=False, return_argmin=False)
    except AllTrialsFailed:  # raised after the run, looking for its best point: there is none
        pass
    return _result(kind)


def configspace_of(space, seed=None):
    """SMAC3's ConfigSpace ``ConfigurationSpace`` of the mfbo ``space``: the one
    :func:`mfbo.to_configspace` writes (conditions and forbidden clauses as ConfigSpace's),
    except that a dimension whose condition holds a ``Relation``, which a ConfigSpace condition
    cannot express (it compares a parent with constants), is unconditioned there; the
    configuration read back (:func:`_read`) leaves it out where its condition does not hold."""
    import mfbo

    data = space.to_json()
    for name, dim in space.dimensions.items():
        if dim.when is not None and _has_relation(dim.when):
            del data[name]["when"]
    return mfbo.to_configspace(type(space).from_json(data), seed=seed)


def _has_relation(condition) -> bool:
    from mfbo import AllOf, AnyOf, Relation

    if isinstance(condition, (AllOf, AnyOf)):
        return any(_has_relation(c) for c in condition.conditions)
    return isinstance(condition, Relation)


def run_smac(objective, problem, budget, seed):
    """SMAC3's HyperparameterOptimizationFacade (random forest, log-EI, 2.4 defaults),
    deterministic objective, output in a temporary directory.  In a discrete space with
    fewer configurations than the budget the run ends when SMAC has none left to propose
    (as mfbo's does on a candidate set), with the evaluations made so far.  A conditional
    space is given as :func:`configspace_of` builds it; a forbidden configuration SMAC3
    proposes (only one ConfigSpace could not be told of) is refused by the problem, which
    SMAC3 records as a crashed trial (a failed evaluation)."""
    from ConfigSpace import (Categorical, ConfigurationSpace, Float, Integer,
                             OrdinalHyperparameter)
    from smac import HyperparameterOptimizationFacade, Scenario
    from smac.main.exceptions import ConfigurationSpaceExhaustedException

    kind, axes = peer_space(problem)
    if kind == "conditional":
        cs = configspace_of(axes, seed)
    else:
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
        if kind == "conditional":
            return objective(**_read(axes, dict(config), "SMAC3"))
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


def run_optuna_group(objective, problem, budget, seed):
    """Optuna's TPESampler with ``multivariate=True`` and ``group=True``, seeded: the
    multivariate TPE with one joint density per group of parameters that occur together (the
    grouping Optuna offers for conditional, define-by-run spaces); in a space without
    conditions the same sampler as ``multivariate=True``."""
    return _optuna({"multivariate": True, "group": True}, objective, problem, budget, seed)


def run_optuna_independent(objective, problem, budget, seed):
    """Optuna's TPESampler with ``multivariate=False``: one density per parameter (the default
    before Optuna 5), seeded."""
    return _optuna({"multivariate": False}, objective, problem, budget, seed)


def _optuna_suggest(trial, name, dim):
    """Optuna's suggestion for the mfbo dimension ``dim`` (a categorical's levels as their
    strings, mapped back)."""
    from mfbo import Categorical, Integer

    if isinstance(dim, Categorical):
        return _value(dim, trial.suggest_categorical(name, [str(c) for c in dim.choices]))
    if isinstance(dim, Integer):
        return trial.suggest_int(name, dim.low, dim.high, step=dim.step, log=dim.log)
    if dim.step is not None:
        return trial.suggest_float(name, dim.low, dim.high, step=dim.step)
    return trial.suggest_float(name, dim.low, dim.high, log=dim.log)


def _optuna(options, objective, problem, budget, seed):
    import optuna

    kind, axes = peer_space(problem)
    # in a conditional space Optuna warns of every failed trial (forbidden proposals are) and
    # of every parameter it samples independently: the results count the first
    optuna.logging.set_verbosity(optuna.logging.ERROR if kind == "conditional"
                                 else optuna.logging.WARNING)
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
        if kind == "conditional":
            # define-by-run: a parameter is suggested only where its condition holds
            value = _evaluate(objective, _configuration(
                axes, lambda n, dim: _optuna_suggest(trial, n, dim)))
            return float("nan") if value is None else value  # nan: a failed trial
        if kind == "ordinal":
            params = {n: v[trial.suggest_int(n, 0, len(v) - 1)] for n, v in axes.items()}
        elif kind == "mixed":
            params = {n: suggest(trial, n, spec) for n, spec in axes.items()}
        else:
            params = {n: trial.suggest_float(n, lo, hi, log=log)
                      for n, (lo, hi, log) in axes.items()}
        value = _evaluate(objective, params)
        return float("nan") if value is None else value  # nan: a failed trial, not an abort

    study.optimize(f, n_trials=budget)
    return _result(kind)


def _skopt(minimizer_name, objective, problem, budget, seed):
    import skopt
    from skopt.space import Categorical, Integer, Real

    kind, axes = peer_space(problem)
    if kind == "conditional":
        raise ValueError(f"scikit-optimize takes no conditions: {problem.name!r} has a "
                         f"conditional space (smac, optuna, optuna-group and hyperopt run "
                         f"on it).")

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
