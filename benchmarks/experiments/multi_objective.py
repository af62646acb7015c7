"""mfbo against Optuna's NSGA-II, TPE and GPSampler, SMAC3's ParEGO and random search on
problems of several objectives and with black-box constraints
(:mod:`benchmarks.problems.multi_objective`).

Every method runs every problem of a split it takes (``smac-parego`` skips those with one
objective or with constraints, :data:`RUNS_ONLY`) for ``--seeds`` seeds, seed by seed, up to
the largest budget; the score at each budget is that of the run's first ``budget`` evaluations
(a crashed evaluation counts, and is infeasible): the hypervolume the feasible values dominate
below the problem's reference point (several objectives; higher is better), or the best
feasible value (one objective with constraints; lower is better, none feasible ranks last).
Each (problem, budget, seed) ranks the methods (ties share the mean rank); the report gives
each method's mean rank, its mean score, its worst run, the share of feasible evaluations, and
Wilcoxon's signed-rank test of mfbo against each other method over the paired runs (scores
scaled by each problem's spread of scores, so that problems weigh alike).

Methods, each with its recommended settings: ``mfbo`` (``pareto_method="auto"``),
``mfbo-parego``, ``mfbo-hvi``, ``mfbo-flat-constraints`` (an ablation: constraint forests
without the linear trend), ``mfbo-tree-feasibility`` (the probability of feasibility
under the mixture of the constraint forests' trees, ``OutcomeSearch(feasibility="trees")``),
``mfbo-front-parzen`` (every second proposal the best of 200 points drawn from the Parzen
density of the observations of least Pareto rank, ``OutcomeSearch(parzen_every=2)``),
``mfbo-parego-draws`` (ParEGO's scalarisation of each tree's joint draw, then its lower
confidence bound over the trees, ``OutcomeSearch(scalarise="draws")``),
``mfbo-front-local1``, ``-local2`` and ``-local3`` (every proposal, or every second or third,
the step of a local quadratic of a random Chebyshev scalarisation of the observed losses where
it gives a new point, ``OutcomeSearch(local_every=1)``, ``2`` or ``3``; ``2`` is ``mfbo``'s
since, and ``mfbo-no-front-local``, ``local_every=0``, the former ``mfbo``;
``mfbo-front-parzen`` and ``mfbo-parego-draws`` were screened against the former ``mfbo`` and
run with ``local_every=0`` still, so that they run as they were screened),
``mfbo-front-local-integers`` (that step moving the integers of five levels or more too,
``OutcomeSearch(local_integers=True)``; these five and the two above run without the
dominating step, as they were screened),
``mfbo-dominating-local4`` and ``-local2`` (every fourth or every second proposal the step
that local quadratics of the objectives predict dominates a random front point by most,
before the local step, ``OutcomeSearch(dominating_every=4)`` or ``2``; ``4`` is ``mfbo``'s
since, and ``mfbo-no-dominating``, ``dominating_every=0``, the former ``mfbo``),
``mfbo-dominating2`` and ``-dominating4`` (that step in the search's proposals instead, the
first after the initial design and every second or fourth after it,
``dominating_in="search"``),
``mfbo-uniform-centre`` (the dominating step's front point drawn uniformly,
``OutcomeSearch(dominating_centre="uniform")``, the former ``mfbo``; ``mfbo`` draws it in
proportion to its gap to the nearest other front point),
``mfbo-pof0``, ``-pof50`` and ``-pof80`` (the points less likely feasible than 0, 0.5 or 0.8
ranked after every other, ``OutcomeSearch(min_feasibility=...)``; ``mfbo``'s is 0, so
``mfbo-pof0`` is ``mfbo``),
``mfbo-clipped-losses`` (with one objective, an infeasible trial's loss told to the
objective's model raised to the best feasible loss,
``OutcomeSearch(infeasible_losses="clipped")``; ``mfbo`` tells it as returned),
``mfbo-constrained-local1``, ``-local2`` and ``-local3`` (with one objective, every proposal,
or every second or third, the step of local quadratics of the loss and the constraints around
the best feasible trial, ``OutcomeSearch(constrained_local_every=...)``, without planes),
``mfbo-constrained-plane2`` and ``-plane3`` (that step every second or third proposal, with
planes where there are too few trials for quadratics, ``constrained_local_plane=True``;
``mfbo-constrained-plane2`` is ``mfbo`` since) and ``mfbo-no-constrained-local`` (without
the step, ``constrained_local_every=0``, the former ``mfbo``),
``mfbo-symlog-constraints`` (the constraints' forests modelling ``sign(c) log(1 + |c|)``
of each constraint's value, ``y_transform="symlog"``; ``mfbo``'s model the raw value),
``mfbo-midpoint2`` and ``-midpoint4`` (with several objectives, every second or fourth
proposal, in the search's slots, the midpoint of the two front points farthest apart among
neighbours, ``OutcomeSearch(midpoint_every=...)``; ``mfbo``'s is 0),
and, each from the outcome search of commit 7f3389a (the dominating step every fourth
proposal without a fallback, no mutation step; ``mfbo-no-mutation``):
``mfbo-objective-trend``, ``-trend-window30`` and ``-trend-always`` (every objective's forest
with the linear trend, chosen online over the last 10 or 30 observations, or always:
``surrogate_options={"trend": True, ...}``; ``mfbo``'s objectives have none in a continuous
space), ``mfbo-dominating-plane2``, ``-plane4``, ``-squares2``, ``-squares4`` and
``-every2`` (the dominating step every second or fourth proposal, with planes, quadratics
without cross terms or nothing where there are too few observations for full quadratics,
``OutcomeSearch(dominating_fallback=...)``), ``mfbo-mutation4`` and ``-mutation8`` (with
several objectives, in the search's slots every fourth or eighth proposal, a front point with
one coordinate drawn afresh, ``OutcomeSearch(mutation_every=...)``).  ``mfbo`` is the
mutation step every fourth proposal with the dominating step every second and quadratics
without cross terms as its fallback,
``mfbo-quick-search`` (the ablation that measured the cheaper
outcome search, half the random points and all local searches stopped after two rounds without
gain; that search is ``mfbo``'s since, so it is ``mfbo`` now, kept so that the lab notebook's
commands still run; the former search is commit a4d3fd5's ``mfbo``), ``mfbo-infeasible``,
``mfbo-worst`` and
``mfbo-ignore`` (a failed trial modelled as infeasible, as the worst outcomes so far, or not
fed: ``on_failure``; ``mfbo``'s is ``"auto"``), ``mfbo-kernel`` (with several objectives,
each objective's model the Mondrian kernel's Gaussian process,
:class:`mfbo.proposal.models.MondrianKernelModel`, in place of its Mondrian forest:
``Recipe(objectives_model=...)``), ``mfbo-kernel-all`` (every outcome's model that process,
the constraints' too: ``surrogate="mondrian-kernel"``), ``mfbo-kernel-constraints`` (that
process for the constraints' raw values only, the objective's model the forest), ``random``
(mfbo's random search), ``optuna-nsga2``
(``NSGAIISampler(seed, constraints_func)``), ``optuna-tpe`` (``TPESampler(seed,
constraints_func)``, Optuna 5's multivariate default), ``optuna-gp`` (``GPSampler(seed,
constraints_func)``: log expected hypervolume improvement for several objectives, log
constrained expected improvement for one; it needs PyTorch, ``pip install torch==2.13.0``, and
fails naming it without), ``smac-parego`` (SMAC3's ParEGO, several objectives without
constraints only).

Run::

    python -m benchmarks.experiments.multi_objective --split test --seeds 10 \\
        --budgets 50 100 --out results/multi_objective

A run appends to ``OUT/runs.jsonl`` and writes ``OUT/report.md``; ``--report`` (with the same
``--split`` or ``--problem``, ``--method`` and ``--budgets``) runs nothing and reports the
runs of that file, by kind of problem as well.
"""

from __future__ import annotations

import argparse
import json
import math
import time
import warnings
from pathlib import Path

import numpy as np

from acquisitions.pareto import hypervolume, non_dominated
from benchmarks.harness.peers import _mfbo_space, _optuna_suggest, configspace_of
from benchmarks.problems.multi_objective import FAILED, OUTCOME_PROBLEMS, SPLITS, Crash, \
    OutcomeProblem

__all__ = ["METHODS", "run_method", "score", "summarise", "load", "report", "main"]


def _space(problem: OutcomeProblem):
    """The problem's :class:`mfbo.Space` (its space is written as the harness's peers write a
    mixed space, :func:`benchmarks.harness.peers.peer_space`)."""
    return _mfbo_space("mixed", problem.space)


def _mfbo(problem: OutcomeProblem, budget: int, seed: int, **options) -> list[dict]:
    import mfbo

    directions = {n: "minimize" for n in problem.objectives}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (a problem that crashes may crash every time)
        res = mfbo.minimize(lambda **p: problem.run(p), _space(problem), n_calls=budget,
                            random_state=seed, progress_bar=False, directions=directions,
                            constraints=list(problem.constraints) or None, **options)
    return [FAILED if t.state == "failed" else
            {**t.extra, **dict(zip(problem.objectives, t.values)),
             **dict(zip(problem.constraints, t.constraints or ()))}
            for t in res.trials if t.state in ("complete", "failed")]


def _optuna(problem: OutcomeProblem, budget: int, seed: int, kind: str) -> list[dict]:
    """Optuna's sampler ``kind`` (``"nsga2"``, ``"tpe"`` or ``"gp"``) with its defaults, seeded,
    given the constraints by ``constraints_func``."""
    if kind == "gp":
        try:
            import torch  # noqa: F401
        except ImportError as e:
            raise ModuleNotFoundError(
                "optuna-gp (Optuna's GPSampler) needs PyTorch, which is not installed: "
                "pip install torch==2.13.0 (a CPU build)", name="torch") from e
    import optuna

    optuna.logging.set_verbosity(optuna.logging.ERROR)  # (a crash is logged as a warning)
    outcomes: list[dict] = []

    def constraints(trial):
        return trial.user_attrs["constraints"]
    cf = constraints if problem.constraints else None
    samplers = {"nsga2": optuna.samplers.NSGAIISampler, "tpe": optuna.samplers.TPESampler,
                "gp": optuna.samplers.GPSampler}
    with warnings.catch_warnings():
        # constraints_func is flagged experimental, and deprecated in GPSampler
        warnings.simplefilter("ignore")
        sampler = samplers[kind](seed=seed, constraints_func=cf)
    study = optuna.create_study(directions=["minimize"] * problem.k, sampler=sampler)

    dims = _space(problem).dimensions

    def objective(trial):
        try:
            out = problem.run({n: _optuna_suggest(trial, n, d) for n, d in dims.items()})
        except Crash:
            outcomes.append(FAILED)
            raise
        outcomes.append(out)
        trial.set_user_attr("constraints", [out[c] for c in problem.constraints])
        values = [out[o] for o in problem.objectives]
        return values[0] if problem.k == 1 else values

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        study.optimize(objective, n_trials=budget, catch=(Crash,))
    return outcomes


def _smac_parego(problem: OutcomeProblem, budget: int, seed: int) -> list[dict]:
    """SMAC3 2.4's HPO facade with ParEGO (its multi-objective algorithm), deterministic;
    problems of several objectives without constraints only (SMAC3 has no constraints, and
    a crashed run's infinite cost breaks its model's log scaling)."""
    import logging
    import tempfile

    from smac import HyperparameterOptimizationFacade, Scenario
    from smac.multi_objective.parego import ParEGO

    if not _several_unconstrained(problem):
        raise ValueError(f"smac-parego runs problems of several objectives without "
                         f"constraints; {problem.name!r} is not one.")
    cs = configspace_of(_space(problem), seed)
    outcomes: list[dict] = []

    def target(config, seed: int = 0):
        out = problem.run(dict(config))
        outcomes.append(out)
        return {o: out[o] for o in problem.objectives}

    with tempfile.TemporaryDirectory(prefix="mfbo-smac-") as tmp:
        scenario = Scenario(cs, deterministic=True, n_trials=budget, seed=seed,
                            objectives=list(problem.objectives),
                            output_directory=Path(tmp) / "smac3_output")
        smac = HyperparameterOptimizationFacade(
            scenario, target, overwrite=True, logging_level=logging.ERROR,
            multi_objective_algorithm=ParEGO(scenario, seed=seed))
        smac.optimize()
    return outcomes


def _several_unconstrained(problem: OutcomeProblem) -> bool:
    """Whether a problem has several objectives and no constraints (the only ones SMAC3's
    ParEGO runs)."""
    return problem.k > 1 and not problem.constraints


def _with_constraint_models(problem: OutcomeProblem, budget: int, seed: int,
                            change) -> list[dict]:
    """mfbo with each constraint's model (and the failures') ``change(model, n_dims, seed)``
    as the optimizer builds them (the model changed, or another one); the objectives' models
    as in ``mfbo``."""
    from mfbo.optimize import optimizer

    built = optimizer._outcome_models

    def changed(recipe, n_dims, seed_, options, objectives, failures=False):
        models = built(recipe, n_dims, seed_, options, objectives, failures)
        return [m if j < objectives.k - 1 else change(m, n_dims, seed_)
                for j, m in enumerate(models)]
    optimizer._outcome_models = changed
    try:
        return _mfbo(problem, budget, seed)
    finally:
        optimizer._outcome_models = built


def _setting(name: str, value):
    """A ``change`` of :func:`_with_constraint_models` that sets the model's ``name``."""
    def change(model, n_dims, seed):
        setattr(model, name, value)
        return model
    return change


def _kernel(model, n_dims: int, seed):
    """The Mondrian kernel's Gaussian process of a constraint's raw value, from the seed the
    forest it replaces was built from."""
    import copy

    from mfbo.proposal.models import MondrianKernelModel

    return MondrianKernelModel(n_dims, copy.deepcopy(seed), y_transform="raw")


def _kernel_constraints(problem: OutcomeProblem, budget: int, seed: int) -> list[dict]:
    """mfbo with each constraint's model (and the failures') the Mondrian kernel's Gaussian
    process of its raw value, built from the same seed; the objectives' models as in
    ``mfbo``."""
    return _with_constraint_models(problem, budget, seed, _kernel)


def _flat_constraints(problem: OutcomeProblem, budget: int, seed: int) -> list[dict]:
    """mfbo with its constraint forests built without the linear trend (an ablation of that
    choice; the objectives' models as in ``mfbo``)."""
    return _with_constraint_models(problem, budget, seed, _setting("_trend_on", False))


def _symlog_constraints(problem: OutcomeProblem, budget: int, seed: int) -> list[dict]:
    """mfbo with the constraints' forests modelling ``sign(c) log(1 + |c|)`` of each
    constraint's value (``y_transform="symlog"``) instead of the raw value."""
    return _with_constraint_models(problem, budget, seed, _setting("y_transform", "symlog"))


def _with_search(problem: OutcomeProblem, budget: int, seed: int, **changes) -> list[dict]:
    """mfbo with these settings of its :class:`~mfbo.proposal.steps.OutcomeSearch` changed
    (the optimizer's ``outcome_options``)."""
    return _mfbo(problem, budget, seed, outcome_options=changes)


#: the outcome search's settings of the default before the mutation step and the dominating
#: step's quadratics without cross terms (commit 7f3389a), which the variants measured against
#: it keep, so that their notebook commands repeat their runs
_BEFORE_MUTATION = {"dominating_every": 4, "dominating_fallback": None, "mutation_every": 0}


def _before_mutation(problem: OutcomeProblem, budget: int, seed: int, **changes) -> list[dict]:
    """:func:`_with_search` from :data:`_BEFORE_MUTATION`, with ``changes``."""
    return _with_search(problem, budget, seed, **{**_BEFORE_MUTATION, **changes})


def _tree_feasibility(problem: OutcomeProblem, budget: int, seed: int) -> list[dict]:
    """mfbo with the probability of feasibility under the mixture of the constraint forests'
    trees (``OutcomeSearch(feasibility="trees")``) instead of a normal distribution matched
    to each forest's moments."""
    return _with_search(problem, budget, seed, feasibility="trees")


def _front_parzen(problem: OutcomeProblem, budget: int, seed: int) -> list[dict]:
    """mfbo with every second proposal the acquisition's best of 200 points drawn from the
    Parzen density of the observations of least Pareto rank (``OutcomeSearch(parzen_every=2)``,
    the single-objective recipe's Parzen step), without the local step towards the front."""
    return _with_search(problem, budget, seed, parzen_every=2, local_every=0,
                        dominating_every=0)


def _parego_draws(problem: OutcomeProblem, budget: int, seed: int) -> list[dict]:
    """mfbo with ParEGO's scalarisation taken of each tree's joint draw of the objectives, its
    lower confidence bound over the trees (``OutcomeSearch(scalarise="draws")``; three or more
    objectives, where ``"auto"`` is ``"parego"``), without the local step towards the front."""
    return _with_search(problem, budget, seed, scalarise="draws", local_every=0,
                        dominating_every=0)


def _front_local(every: int, integers: bool = False):
    """mfbo with every ``every``-th proposal the local models' step on a random Chebyshev
    scalarisation of the observed losses (``OutcomeSearch(local_every=every)``; 0: never),
    moving the integers of five levels or more too with ``integers``."""
    def run(problem: OutcomeProblem, budget: int, seed: int) -> list[dict]:
        return _with_search(problem, budget, seed, local_every=every, local_integers=integers,
                            dominating_every=0)
    return run


def _dominating(every: int, where: str = "local"):
    """mfbo with every ``every``-th proposal the step that local quadratics of the objectives
    predict dominates a random front point by most (``OutcomeSearch(dominating_every=every,
    dominating_in=where)``; 0: never)."""
    def run(problem: OutcomeProblem, budget: int, seed: int) -> list[dict]:
        return _with_search(problem, budget, seed, dominating_every=every, dominating_in=where)
    return run


def _quick_search(problem: OutcomeProblem, budget: int, seed: int) -> list[dict]:
    """The cheaper outcome search this ablation measured, now ``mfbo``'s own."""
    return _mfbo(problem, budget, seed)


def _kernel_objectives():
    import dataclasses

    from mfbo.proposal.models import MondrianKernelModel
    from mfbo.proposal.recipes import get_recipe

    return dataclasses.replace(get_recipe("mondrian"), objectives_model=MondrianKernelModel)


#: the default recipe with the Mondrian kernel as each objective's model
_KERNEL_OBJECTIVES = _kernel_objectives()

METHODS = {
    "mfbo": lambda p, b, s: _mfbo(p, b, s),
    "mfbo-quick-search": _quick_search,
    "mfbo-hvi": lambda p, b, s: _mfbo(p, b, s, pareto_method="hvi"),
    "mfbo-parego": lambda p, b, s: _mfbo(p, b, s, pareto_method="parego"),
    "mfbo-flat-constraints": _flat_constraints,
    "mfbo-symlog-constraints": _symlog_constraints,
    "mfbo-tree-feasibility": _tree_feasibility,
    "mfbo-front-parzen": _front_parzen,
    "mfbo-parego-draws": _parego_draws,
    "mfbo-front-local1": _front_local(1),
    "mfbo-front-local2": _front_local(2),
    "mfbo-front-local3": _front_local(3),
    "mfbo-no-front-local": _front_local(0),
    "mfbo-front-local-integers": _front_local(2, integers=True),
    "mfbo-no-dominating": _dominating(0),
    "mfbo-dominating2": _dominating(2, "search"),
    "mfbo-dominating4": _dominating(4, "search"),
    "mfbo-dominating-local2": _dominating(2),
    "mfbo-dominating-local4": _dominating(4),
    "mfbo-uniform-centre": lambda p, b, s: _with_search(p, b, s, dominating_centre="uniform"),
    **{f"mfbo-pof{round(t * 100)}": (lambda t: lambda p, b, s: _with_search(
        p, b, s, min_feasibility=t))(t) for t in (0.0, 0.5, 0.8)},
    "mfbo-clipped-losses": lambda p, b, s: _with_search(p, b, s, infeasible_losses="clipped"),
    **{f"mfbo-constrained-local{every}": (lambda every: lambda p, b, s: _with_search(
        p, b, s, constrained_local_every=every, constrained_local_plane=False))(every)
       for every in (1, 2, 3)},
    "mfbo-no-constrained-local": lambda p, b, s: _with_search(p, b, s,
                                                              constrained_local_every=0),
    **{f"mfbo-midpoint{every}": (lambda every: lambda p, b, s: _with_search(
        p, b, s, midpoint_every=every))(every) for every in (2, 4)},
    **{f"mfbo-constrained-plane{every}": (lambda every: lambda p, b, s: _with_search(
        p, b, s, constrained_local_every=every, constrained_local_plane=True))(every)
       for every in (2, 3)},
    **{f"mfbo-objective-trend{tail}": (lambda options: lambda p, b, s: _mfbo(
        p, b, s, surrogate_options={"trend": True, **options},
        outcome_options=_BEFORE_MUTATION))(options)
       for tail, options in (("", {}), ("-window30", {"trend_window": 30}),
                             ("-always", {"trend_window": None}))},
    **{f"mfbo-dominating-{form}{every}": (lambda every, form: lambda p, b, s: _before_mutation(
        p, b, s, dominating_every=every, dominating_fallback=form))(every, form)
       for every in (2, 4) for form in ("plane", "squares")},
    "mfbo-dominating-every2": lambda p, b, s: _before_mutation(p, b, s, dominating_every=2),
    **{f"mfbo-mutation{every}": (lambda every: lambda p, b, s: _before_mutation(
        p, b, s, mutation_every=every))(every) for every in (4, 8)},
    "mfbo-no-mutation": _before_mutation,
    "mfbo-robustshift": lambda p, b, s: _mfbo(p, b, s, surrogate_options={"robust_shift": True}),
    "mfbo-infeasible": lambda p, b, s: _mfbo(p, b, s, on_failure="infeasible"),
    "mfbo-worst": lambda p, b, s: _mfbo(p, b, s, on_failure="worst"),
    "mfbo-ignore": lambda p, b, s: _mfbo(p, b, s, on_failure="ignore"),
    "mfbo-kernel": lambda p, b, s: _mfbo(p, b, s, surrogate=_KERNEL_OBJECTIVES),
    "mfbo-kernel-all": lambda p, b, s: _mfbo(p, b, s, surrogate="mondrian-kernel"),
    "mfbo-kernel-constraints": _kernel_constraints,
    "random": lambda p, b, s: _mfbo(p, b, s, surrogate="random"),
    "optuna-nsga2": lambda p, b, s: _optuna(p, b, s, "nsga2"),
    "optuna-tpe": lambda p, b, s: _optuna(p, b, s, "tpe"),
    "optuna-gp": lambda p, b, s: _optuna(p, b, s, "gp"),
    "smac-parego": _smac_parego,
}


#: the problems a method runs, where it does not run them all (a run of the split skips the
#: others)
RUNS_ONLY = {"smac-parego": _several_unconstrained}


def run_method(method: str, problem: OutcomeProblem, budget: int, seed: int) -> list[dict]:
    """The outcomes of every evaluation of one run, in order."""
    return METHODS[method](problem, budget, seed)


def score(problem: OutcomeProblem, outcomes: list[dict]) -> float:
    """The hypervolume of the feasible outcomes (several objectives), or the best feasible
    value (one objective; inf when none is feasible)."""
    ok = [o for o in outcomes if problem.feasible(o)]
    if problem.k == 1:
        return min((o[problem.objectives[0]] for o in ok), default=math.inf)
    if not ok:
        return 0.0
    Y = np.array([[o[n] for n in problem.objectives] for o in ok])
    return hypervolume(Y[non_dominated(Y)], problem.reference)


def _ranks(values: dict[str, float], higher: bool) -> dict[str, float]:
    from scipy.stats import rankdata

    names = list(values)
    v = np.array([values[n] for n in names], dtype=float)
    r = rankdata(-v if higher else v, method="average")
    return dict(zip(names, r))


def summarise(records: list[dict], methods: list[str], reference: str = "mfbo") -> str:
    """The report (markdown) of run records ``{method, problem, seed, budget, score,
    feasible}``."""
    from scipy.stats import wilcoxon

    lines = []
    budgets = sorted({r["budget"] for r in records})
    problems = sorted({r["problem"] for r in records})
    for budget in budgets:
        rows = [r for r in records if r["budget"] == budget]
        ranks = {m: [] for m in methods}
        for problem in problems:
            higher = OUTCOME_PROBLEMS[problem].k > 1
            for seed in sorted({r["seed"] for r in rows if r["problem"] == problem}):
                cell = {r["method"]: r["score"] for r in rows
                        if r["problem"] == problem and r["seed"] == seed}
                if set(cell) >= set(methods):
                    for m, rank in _ranks({m: cell[m] for m in methods}, higher).items():
                        ranks[m].append(rank)
        lines += [f"### {budget} evaluations", "",
                  "| method | mean rank | " + " | ".join(problems) + " | feasible share |",
                  "|---|---|" + "---|" * len(problems) + "---|"]
        for m in methods:
            cells = []
            for problem in problems:
                s = [r["score"] for r in rows if r["method"] == m and r["problem"] == problem]
                higher = OUTCOME_PROBLEMS[problem].k > 1
                worst = (min(s) if higher else max(s)) if s else None
                cells.append(f"{np.mean(s):.4g} (worst {worst:.4g})" if s else "")
            share = np.mean([r["feasible"] for r in rows if r["method"] == m])
            lines.append(f"| {m} | {np.mean(ranks[m]):.2f} | " + " | ".join(cells)
                         + f" | {share:.2f} |")
        lines.append("")
        if reference in methods:
            lines.append(f"Paired Wilcoxon signed-rank tests of {reference} against each "
                         f"method (scores scaled by each problem's spread; + means {reference} "
                         f"better):")
            lines.append("")
            for m in methods:
                if m == reference:
                    continue
                diffs = []
                for problem in problems:
                    higher = OUTCOME_PROBLEMS[problem].k > 1
                    cell = [r for r in rows if r["problem"] == problem]
                    finite = [r["score"] for r in cell if math.isfinite(r["score"])]
                    spread = (max(finite) - min(finite)) if finite else 0.0
                    mine = {r["seed"]: r["score"] for r in cell if r["method"] == reference}
                    for r in cell:
                        if r["method"] == m and r["seed"] in mine:
                            a, b = mine[r["seed"]], r["score"]
                            if a == b:
                                d = 0.0
                            elif not (math.isfinite(a) and math.isfinite(b)):
                                d = 1.0 if math.isfinite(a) else -1.0
                            else:
                                d = (a - b) / spread if spread > 0 else 0.0
                                d = d if higher else -d
                            diffs.append(d)
                nz = [d for d in diffs if d != 0]
                p = wilcoxon(nz).pvalue if len(nz) >= 2 else 1.0
                wins = sum(d > 0 for d in diffs)
                losses = sum(d < 0 for d in diffs)
                lines.append(f"- vs {m}: {wins} better, {losses} worse, "
                             f"{len(diffs) - wins - losses} tied of {len(diffs)}; p = {p:.3g}")
            lines.append("")
    return "\n".join(lines)


def load(path: Path) -> list[dict]:
    """The run records of a ``runs.jsonl``; of a (method, problem, seed, budget) run more
    than once, the last."""
    records = {}
    for line in Path(path).read_text().splitlines():
        if line.strip():
            r = json.loads(line)
            records[r["method"], r["problem"], r["seed"], r["budget"]] = r
    return list(records.values())


def report(records: list[dict], problems: list[str], methods: list[str],
           budgets: list[int], reference: str = "mfbo") -> str:
    """:func:`summarise` of the records of these problems, methods and budgets: over all the
    problems, then over those of several objectives (hypervolume) and those of one objective
    with constraints (best feasible value), where both kinds are among them; the paired tests
    are of ``reference`` against each other method."""
    chosen = [r for r in records if r["problem"] in problems and r["method"] in methods
              and r["budget"] in budgets]
    several = [p for p in problems if OUTCOME_PROBLEMS[p].k > 1]
    groups = [("all problems", problems)]
    if several and len(several) < len(problems):
        groups += [("several objectives (hypervolume)", several),
                   ("one objective with constraints (best feasible value)",
                    [p for p in problems if p not in several])]
    parts = []
    for title, group in groups:
        parts += [f"## {title}: {', '.join(group)}", "",
                  summarise([r for r in chosen if r["problem"] in group], methods,
                            reference)]
    return "\n".join(parts)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--split", choices=sorted(SPLITS), default="test")
    ap.add_argument("--problem", action="append", help="a problem (default: the split's)")
    ap.add_argument("--method", action="append", choices=sorted(METHODS),
                    help="a method (default: mfbo, random, optuna-nsga2, optuna-tpe)")
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--budgets", type=int, nargs="+", default=[50, 100])
    ap.add_argument("--out", type=Path, default=Path("results/multi_objective"))
    ap.add_argument("--report", action="store_true",
                    help="run nothing: the report of the runs already in OUT/runs.jsonl (the "
                         "split's or --problem's problems, the methods, the budgets), over all "
                         "the problems, then over those of several objectives and those of one "
                         "objective with constraints")
    ap.add_argument("--reference", default="mfbo", choices=sorted(METHODS),
                    help="the method the report's paired tests compare with each other "
                         "(default: mfbo)")
    args = ap.parse_args(argv)
    problems = args.problem or SPLITS[args.split]
    methods = args.method or ["mfbo", "random", "optuna-nsga2", "optuna-tpe"]
    raw = args.out / "runs.jsonl"
    if args.report:
        print(report(load(raw), problems, methods, args.budgets, args.reference))
        return 0
    args.out.mkdir(parents=True, exist_ok=True)
    records = []
    budget = max(args.budgets)
    with raw.open("a") as fh:
        # seed by seed, so that a run stopped early has whole seeds of every problem
        for seed in range(args.seeds):
            for name in problems:
                problem = OUTCOME_PROBLEMS[name]
                for m in methods:
                    if not RUNS_ONLY.get(m, lambda p: True)(problem):
                        continue
                    start = time.process_time()
                    outcomes = run_method(m, problem, budget, seed)
                    cpu = time.process_time() - start
                    for b in args.budgets:
                        first = outcomes[:b]
                        rec = {"method": m, "problem": name, "seed": seed, "budget": b,
                               "score": score(problem, first),
                               "feasible": float(np.mean([problem.feasible(o)
                                                          for o in first])),
                               "cpu": cpu}
                        records.append(rec)
                        fh.write(json.dumps(rec) + "\n")
                    fh.flush()
                    print(f"{name} seed {seed} {m}: {records[-1]['score']:.4g} "
                          f"({cpu:.1f} s)", flush=True)
    text = summarise(records, methods)
    (args.out / "report.md").write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
