"""The ``multi-fidelity`` suite (``SUITES["multi-fidelity"]`` of
:mod:`benchmarks.problems.problems`, problems of :mod:`benchmarks.problems.multi_fidelity`):
methods that stop bad trials early against full-fidelity search, by the cost they spend.

A run of a method on a problem trains configurations step by step (each step costs 1; a full
budget costs ``max_budget``) until it has spent ``LEVELS[-1]`` full budgets.  Its score at a
cost level is the full-budget loss of the best configuration it trained to full budget within
that cost (a pruned trial never counts; no such configuration yet: missing, ranked last).

The report gives, on each cost level, each method's mean rank over problems x seeds (ties
share their mean rank; a missing score ranks last), the paired Wilcoxon test of mfbo's
multi-fidelity method of the best mean rank against each other method
(:mod:`benchmarks.harness.paired`; each pair's difference scaled by
the spread of the problem's scores at that level), and the cost each method needs to reach the
final quality of full-fidelity ``mondrian`` (the first cost at which its best is at most
``mondrian``'s final best), as a ratio to the cost ``mondrian`` needed (median over seeds,
then over problems; a run that never reaches it counts as infinite).

Methods (:data:`METHODS`), every one seeded, with the settings its authors recommend:
``mondrian`` (mfbo at full fidelity), ``mondrian-hyperband`` and ``mondrian-sh`` (mfbo with
:class:`mfbo.pruners.HyperbandPruner` / ``SuccessiveHalvingPruner``, reduction factor 3 from
one step; ``mondrian-sh`` with an initial design of 20 configurations per dimension, which
the pruner makes cheap, its pruned trials fed to the forest with their last loss shifted to
full budget (``on_pruned="shift"`` of :class:`mfbo.Optimizer`) and a trial stopped once its first
three steps repeat a complete trial's (``stop_repeats=3``); ``mondrian-sh-worst`` without
these two (pruned trials fed as the worst loss so far), ``mondrian-sh-shift``,
``-rank`` (the ``"rank"`` rule), ``-rep3`` (repeats only), ``-rep``, ``-shift-rep``,
``-rank-rep`` (repeats stopped after one step), ``-shift-rep-init5`` and ``-init10`` (with an
initial design of 5 and 10 per dimension) the variants screened against it;
``mondrian-sh-init5``, ``-init10`` and ``-init40`` with 5 (mfbo's own), 10 and 40
configurations per dimension and pruned trials fed as the worst, ``mondrian-sh-boot2`` with
20 and no trial kept at a rung that fewer than three trials reached; ``mondrian-sh2`` and
``-sh4`` with reduction factor 2 and 4,
``mondrian-sh-from3`` with the first rung at step 3, these three with mfbo's own initial design;
``mondrian-sh-k10``, ``-batch``, ``-sync``, ``-lead``, ``-front`` and the others listed with
them in :data:`METHODS`, ``mondrian-sh`` with other initial designs: smaller, trained a step in
a batch before any configuration goes further (its first rung then judged on the whole batch's
values, ``SuccessiveHalvingPruner(competitors="reported")``, in ``-sync`` and ``-lead``), or
after the best of 27 configurations at step 1 is trained to full budget (``-front``)),
``mondrian-median``, ``-median-shift`` and ``mondrian-sh-init5-shift`` (the library's default
design with Optuna's ``MedianPruner`` or ``SuccessiveHalvingPruner`` settings, pruned trials
fed as the worst loss so far or shifted),
``mondrian-model`` (mfbo with :class:`mfbo.pruners.MondrianPruner`),
``mondrian-bohb`` (Hyperband's brackets whose new configurations an online Mondrian forest over
(configuration, budget) proposes, BOHB's model-based sampling:
:mod:`benchmarks.harness.multi_fidelity_bohb`) and ``mondrian-sh-forest`` (successive halving
with that forest's configurations instead of mfbo's proposals),
``tpe-hyperband`` and ``tpe-median`` (Optuna's TPESampler with its HyperbandPruner /
MedianPruner), ``random-hyperband`` (Optuna's RandomSampler with its HyperbandPruner),
SMAC3's ``smac-hyperband`` (HyperbandFacade: random configurations, Hyperband) and
``smac-mf`` (MultiFidelityFacade: random forest and Hyperband, BOHB-like), and ``dehb``
(DEHB: differential evolution in Hyperband's brackets), these three on budgets
1..``max_budget`` (a run at budget ``b`` trains ``b`` steps from scratch, as their runs do;
:mod:`benchmarks.harness.multi_fidelity_peers`).

Run: ``python -m benchmarks.harness.multi_fidelity --split test --seeds 10 --out F.jsonl``
(then ``--report F.jsonl``).  ``--trace METHOD`` (one of mfbo's) shows instead where its runs
spend their cost: the initial design, the trials after it, and of these the copies, trials
of a tabulated configuration already trained to full budget in the run (:func:`spend`).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import time
import warnings

import numpy as np

from benchmarks.harness import multi_fidelity_peers as peers
from benchmarks.harness.multi_fidelity_bohb import ForestSampler, bohb
from benchmarks.harness.paired import compare
from benchmarks.harness.tables import markdown_table
from benchmarks.problems.multi_fidelity import PROBLEMS
from benchmarks.problems.problems import SUITES

__all__ = ["LEVELS", "METHODS", "run_one", "spend", "trace", "score_at", "cost_to_reach",
           "summarise", "main"]

#: the cost levels, in full budgets
LEVELS = (5, 10, 20)


# -- the runs --------------------------------------------------------------------------------

def _train(problem, params, cost: int, report, prune, start: int = 0
           ) -> tuple[int, float | None]:
    """Train ``params`` step by step from step ``start`` (the steps up to it trained and
    reported already: they are judged first): ``report(step, loss)`` after each, stopping
    when ``prune()`` says so (never at full budget).  The cost after, and the full-budget
    loss (None if pruned)."""
    curve = problem.curve_of(params)
    if 0 < start < len(curve) and prune():
        return cost, None
    for step, loss in enumerate(curve[start:], start=start + 1):
        cost += 1
        report(step, float(loss))
        if step < len(curve) and prune():
            return cost, None
    return cost, float(curve[-1])


def _front(opt, problem, n: int, rest: str) -> tuple[int, list, list]:
    """Ask ``n`` configurations of the initial design at once, train each one step, and the
    best at that step on to full budget (not judged by the pruner); the others are told pruned
    (``rest="pruned"``) or left to go on (``"continue"``).  The cost, the events and the
    ``(trial, values)`` left to go on, in the order asked."""
    trials = opt.ask(min(n, opt.n_initial))
    curves = [problem.curve_of(t.params) for t in trials]
    lead = int(np.argmin([c[0] for c in curves]))
    for step, loss in enumerate(curves[lead], start=1):
        opt.report(trials[lead], step, float(loss))
    for t, curve in zip(trials, curves):
        if t is not trials[lead]:
            opt.report(t, 1, float(curve[0]))
    cost = len(curves[lead]) + len(trials) - 1
    opt.tell(trials[lead], float(curves[lead][-1]))  # told first: it shifts the others
    others = [(t, {1: float(c[0])}) for t, c in zip(trials, curves) if t is not trials[lead]]
    if rest == "pruned":
        for t, _ in others:
            opt.tell(t, state="pruned")
        others = []
    return cost, [(cost, float(curves[lead][-1]))], others


def _batch(opt, problem, n: int, steps: int, lead: int | None) -> tuple[int, list]:
    """Ask ``n`` configurations of the initial design at once and train each ``steps`` steps.
    The cost and the ``(trial, values)``, the ``lead`` best at that step first (None: all, best
    first), the others in the order asked."""
    batch = []
    for t in opt.ask(min(n, opt.n_initial)):
        curve = problem.curve_of(t.params)[:steps]
        for step, loss in enumerate(curve, start=1):
            opt.report(t, step, float(loss))
        batch.append((t, {s: float(v) for s, v in enumerate(curve, start=1)}))
    order = sorted(range(len(batch)), key=lambda i: batch[i][1][steps])
    first = order if lead is None else order[:lead]
    return sum(len(v) for _, v in batch), \
        [batch[i] for i in first] + [b for i, b in enumerate(batch) if i not in first]


def _mfbo(pruner, sampler=None, initial_per_dim: int | None = None, on_pruned: str = "worst",
          initial_steps: int = 0, lead: int | None = None, batch_per_dim: int | None = None,
          front: int = 0, front_rest: str = "pruned", surrogate_options: dict | None = None):
    """mfbo with ``pruner(problem)`` (None: at full fidelity); with ``sampler(problem, seed)``
    (a :class:`~benchmarks.harness.multi_fidelity_bohb.ForestSampler`), each trial's
    configuration is the sampler's, enqueued, and the sampler is told every value reported;
    ``initial_per_dim``: an initial design of that many configurations per dimension (None:
    mfbo's); ``on_pruned``: what a pruned trial feeds the surrogate (:attr:`mfbo.Study.obs`,
    :mod:`mfbo.study.pruned`).  A run ``run(problem, seed, max_cost, trace=None)`` calls
    ``trace(optimizer)`` at its end (:func:`trace`).

    How a pruned run starts (the initial design otherwise trains one configuration at a
    time, as the later trials): ``initial_steps``: the initial design (its first
    ``batch_per_dim`` per dimension; None: all of it) is asked at once and each of its
    configurations trained that many steps before any goes further, then each goes on as the
    pruner says, the ``lead`` best at that step first (None: all, best first) and the others
    in the order asked; ``front``: the first ``front`` configurations of the initial design
    are trained one step each and the best of them on to full budget, not judged by the
    pruner (the most aggressive bracket of Hyperband, of one survivor), before anything else,
    and the others are then told pruned (``front_rest="pruned"``) or go on from their first
    step in the order asked (``"continue"``).  ``surrogate_options``: the optimizer's."""
    if sampler is not None and (initial_steps or front):
        raise ValueError("a sampler's configurations are asked one at a time: initial_steps "
                         "and front are not for it.")
    if front_rest not in ("pruned", "continue"):
        raise ValueError(f"front_rest must be 'pruned' or 'continue', got {front_rest!r}.")

    def run(problem, seed: int, max_cost: int, trace=None) -> list:
        import mfbo

        n_initial = None if initial_per_dim is None else initial_per_dim * len(problem.space)
        opt = mfbo.Optimizer(problem.space, random_state=seed, n_initial=n_initial,
                             pruner=pruner(problem) if pruner else None, on_pruned=on_pruned,
                             surrogate_options=surrogate_options)
        forest = sampler(problem, seed) if sampler else None
        cost, events, started = 0, [], []  # started: (trial, values) trained in part
        if front and pruner is not None:
            cost, events, started = _front(opt, problem, front, front_rest)
        if initial_steps and pruner is not None:
            n = opt.n_initial if batch_per_dim is None else batch_per_dim * len(problem.space)
            spent, started = _batch(opt, problem, n, initial_steps, lead)
            cost += spent
        while cost < max_cost:
            if started:
                t, values = started.pop(0)
            else:
                if forest is not None:
                    opt.enqueue(forest.ask())
                t, values = opt.ask(), {}

            def report(step, value):
                opt.report(t, step, value)
                values[step] = value
            cost, full = _train(problem, t.params, cost, report,
                                lambda: pruner is not None and opt.should_prune(t),
                                start=len(values))
            if forest is not None:
                forest.tell(t.params, values)
            if full is None:
                opt.tell(t, state="pruned")
            else:
                opt.tell(t, full)
                events.append((cost, full))
        if trace is not None:
            trace(opt)
        return events
    run.traceable = True  # run(..., trace=f) calls f(optimizer) at the end (see spend)
    return run


def _optuna(sampler, pruner):
    def run(problem, seed: int, max_cost: int) -> list:
        import optuna

        from benchmarks.harness.peers import _optuna_suggest

        optuna.logging.set_verbosity(optuna.logging.WARNING)
        # a fixed name: Optuna's HyperbandPruner puts a trial in a bracket by a hash of the
        # study's name, which is random when none is given (and the run with it)
        study = optuna.create_study(study_name=f"{problem.name}-{seed}",
                                    sampler=sampler(optuna, seed),
                                    pruner=pruner(optuna, problem))
        cost, events = 0, []
        while cost < max_cost:
            t = study.ask()
            params = {n: _optuna_suggest(t, n, d) for n, d in problem.space.items()}
            cost, full = _train(problem, params, cost, lambda s, v: t.report(v, s),
                                t.should_prune)
            if full is None:
                study.tell(t, state=optuna.trial.TrialState.PRUNED)
            else:
                study.tell(t, full)
                events.append((cost, full))
        return events
    return run


def _hyperband(problem):
    import mfbo
    return mfbo.pruners.HyperbandPruner(1, max_resource=problem.max_budget, reduction_factor=3)


def _successive_halving(problem, min_resource: int = 1, reduction_factor: int = 3,
                        bootstrap_count: int = 0, stop_repeats: int = 0,
                        competitors: str = "judged"):
    import mfbo
    return mfbo.pruners.SuccessiveHalvingPruner(min_resource, reduction_factor,
                                                bootstrap_count=bootstrap_count,
                                                stop_repeats=stop_repeats,
                                                competitors=competitors)


def _sh_repeats(problem, steps: int = 1, competitors: str = "judged"):
    return _successive_halving(problem, stop_repeats=steps, competitors=competitors)


def _sh_reported(problem):
    return _sh_repeats(problem, 3, "reported")


def _sh_variant(per_dim: int | None, pruner=lambda p: _sh_repeats(p, 3), **options):
    """``mondrian-sh`` (pruned trials shifted, repeats stopped after three steps) with an
    initial design of ``per_dim`` configurations per dimension (None: mfbo's), ``pruner`` and
    :func:`_mfbo`'s ``options``."""
    return _mfbo(pruner, initial_per_dim=per_dim, on_pruned="shift", **options)


METHODS = {
    "mondrian": _mfbo(None),
    "mondrian-hyperband": _mfbo(_hyperband),
    # an initial design of 20 configurations per dimension (screened on dev with 10 and 40),
    # pruned trials fed their last loss shifted to full budget (mfbo.study.pruned), repeats of
    # a complete trial's first three steps stopped (screened on dev against the variants below)
    "mondrian-sh": _sh_variant(20),
    "mondrian-sh-worst": _mfbo(_successive_halving, initial_per_dim=20),  # as pruned: the worst
    "mondrian-sh-shift": _mfbo(_successive_halving, initial_per_dim=20, on_pruned="shift"),
    "mondrian-sh-rank": _mfbo(_successive_halving, initial_per_dim=20, on_pruned="rank"),
    "mondrian-sh-rep": _mfbo(_sh_repeats, initial_per_dim=20),  # a repeat stopped at step 1
    "mondrian-sh-shift-rep": _mfbo(_sh_repeats, initial_per_dim=20, on_pruned="shift"),
    "mondrian-sh-rank-rep": _mfbo(_sh_repeats, initial_per_dim=20, on_pruned="rank"),
    "mondrian-sh-rep3": _mfbo(lambda p: _sh_repeats(p, 3), initial_per_dim=20),
    "mondrian-sh-shift-rep-init5": _mfbo(_sh_repeats, on_pruned="shift"),
    "mondrian-sh-shift-rep-init10": _mfbo(_sh_repeats, initial_per_dim=10, on_pruned="shift"),
    # the former default's log shift, floored by the range (robust_shift=False)
    "mondrian-sh-rangeshift": _sh_variant(20, surrogate_options={"robust_shift": False}),
    # variants of mondrian-sh's initial design screened on dev (benchmarks/DEFAULTS.md):
    # -k<k>: k configurations per dimension; -batch: the design trained a step in a batch,
    # then on best first; -batch-reported, -sync, -lead, -lead3: the same with the first
    # rung judged on the whole batch's values, then on in the order asked (-sync), after the
    # best one (-lead) or three (-lead3); -lead-b10: a batch of 10 per dimension only;
    # -front: the best of 27 at step 1 trained first, to full budget, the others stopped;
    # -front27c, -first: the others (or all the design) then go on in the order asked
    "mondrian-sh-k10": _sh_variant(10),
    "mondrian-sh-k15": _sh_variant(15),
    "mondrian-sh-k10-rep2": _sh_variant(10, lambda p: _sh_repeats(p, 2)),
    "mondrian-sh-batch": _sh_variant(20, initial_steps=1),
    "mondrian-sh-batch-k10": _sh_variant(10, initial_steps=1),
    "mondrian-sh-batch-k5": _sh_variant(None, initial_steps=1),
    "mondrian-sh-batch-reported": _sh_variant(20, _sh_reported, initial_steps=1),
    "mondrian-sh-batch-reported-k10": _sh_variant(10, _sh_reported, initial_steps=1),
    "mondrian-sh-batch-reported-k5": _sh_variant(None, _sh_reported, initial_steps=1),
    "mondrian-sh-sync": _sh_variant(20, _sh_reported, initial_steps=1, lead=0),
    "mondrian-sh-sync-k10": _sh_variant(10, _sh_reported, initial_steps=1, lead=0),
    "mondrian-sh-sync-k15": _sh_variant(15, _sh_reported, initial_steps=1, lead=0),
    "mondrian-sh-lead": _sh_variant(20, _sh_reported, initial_steps=1, lead=1),
    "mondrian-sh-lead-k10": _sh_variant(10, _sh_reported, initial_steps=1, lead=1),
    "mondrian-sh-lead-k15": _sh_variant(15, _sh_reported, initial_steps=1, lead=1),
    "mondrian-sh-lead3-k10": _sh_variant(10, _sh_reported, initial_steps=1, lead=3),
    "mondrian-sh-lead-b10": _sh_variant(20, _sh_reported, initial_steps=1, lead=1,
                                        batch_per_dim=10),
    "mondrian-sh-front": _sh_variant(20, front=27),
    "mondrian-sh-front-k10": _sh_variant(10, front=27),
    "mondrian-sh-front27c": _sh_variant(20, front=27, front_rest="continue"),
    "mondrian-sh-front27c-k10": _sh_variant(10, front=27, front_rest="continue"),
    "mondrian-sh-first": _sh_variant(20, front=10 ** 6, front_rest="continue"),
    "mondrian-sh-first-k10": _sh_variant(10, front=10 ** 6, front_rest="continue"),
    "mondrian-sh-init5": _mfbo(_successive_halving),  # mfbo's own initial design (5 D)
    "mondrian-sh-init10": _mfbo(_successive_halving, initial_per_dim=10),
    "mondrian-sh-init40": _mfbo(_successive_halving, initial_per_dim=40),
    "mondrian-sh-boot2": _mfbo(lambda p: _successive_halving(p, bootstrap_count=2),
                               initial_per_dim=20),
    # the reduction factor and the first rung screened on dev (benchmarks/DEFAULTS.md)
    "mondrian-sh2": _mfbo(lambda p: _successive_halving(p, 1, 2)),
    "mondrian-sh4": _mfbo(lambda p: _successive_halving(p, 1, 4)),
    "mondrian-sh-from3": _mfbo(lambda p: _successive_halving(p, 3, 3)),
    # the library's defaults (mfbo's initial design, Optuna's settings of the pruner) with
    # pruned trials fed as the worst loss so far or shifted (mfbo.study.pruned)
    "mondrian-median": _mfbo(lambda p: __import__("mfbo").pruners.MedianPruner()),
    "mondrian-median-shift": _mfbo(lambda p: __import__("mfbo").pruners.MedianPruner(),
                                   on_pruned="shift"),
    "mondrian-sh-init5-shift": _mfbo(_successive_halving, on_pruned="shift"),
    "mondrian-model": _mfbo(lambda p: __import__("mfbo").pruners.MondrianPruner(
        max_resource=p.max_budget)),
    "mondrian-bohb": bohb,
    "mondrian-sh-forest": _mfbo(_successive_halving,
                                lambda p, s: ForestSampler(p.unit_space, p.max_budget, s)),
    "tpe-hyperband": _optuna(lambda o, s: o.samplers.TPESampler(seed=s),
                             lambda o, p: o.pruners.HyperbandPruner(
                                 1, p.max_budget, reduction_factor=3)),
    "tpe-median": _optuna(lambda o, s: o.samplers.TPESampler(seed=s),
                          lambda o, p: o.pruners.MedianPruner()),
    "random-hyperband": _optuna(lambda o, s: o.samplers.RandomSampler(seed=s),
                                lambda o, p: o.pruners.HyperbandPruner(
                                    1, p.max_budget, reduction_factor=3)),
    "smac-hyperband": peers.smac("HyperbandFacade"),
    "smac-mf": peers.smac("MultiFidelityFacade"),
    "dehb": peers.dehb,
}


def run_one(problem: str, method: str, seed: int) -> dict:
    """One run: the cost and full-budget loss of each configuration trained to full budget."""
    p = PROBLEMS[problem].load()
    start = time.time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        events = METHODS[method](p, seed, LEVELS[-1] * p.max_budget)
    return {"problem": problem, "method": method, "seed": seed, "events": events,
            "optimum": p.optimum, "max_budget": p.max_budget, "wall_s": time.time() - start}


def spend(problem, trials) -> dict:
    """Where an mfbo run's steps went (``trials``: its study's, in the order asked): for the
    initial design (origin ``"design"``) and for the trials after it (``"model"``), how many
    trials and the steps they trained, and of those the copies: trials of the tabulated
    configuration (:meth:`~benchmarks.problems.multi_fidelity.MultiFidelityProblem.row_of`) of
    a trial asked before them that ran to full budget, which learn nothing new (none where
    the curves are computed); ``"by_origin"``: the copies after the design by the proposal
    step that made them (:attr:`mfbo.Trial.origin`)."""
    out = {phase: {"trials": 0, "steps": 0, "copies": 0, "copy_steps": 0}
           for phase in ("design", "model")}
    by_origin, complete = {}, set()
    for t in trials:
        phase = "design" if t.origin == "design" else "model"
        row, steps = problem.row_of(t.params), len(t.intermediate_values)
        out[phase]["trials"] += 1
        out[phase]["steps"] += steps
        if row is not None and row in complete:
            out[phase]["copies"] += 1
            out[phase]["copy_steps"] += steps
            if phase == "model":
                by_origin[t.origin] = by_origin.get(t.origin, 0) + 1
        if t.state == "complete" and row is not None:
            complete.add(row)
    out["by_origin"] = by_origin
    return out


def trace(method: str, problems, seeds: int) -> str:
    """The markdown table of where ``method``'s runs (one of mfbo's) spend their cost on each
    of ``problems``, means over seeds ``0 .. seeds - 1`` (:func:`spend`; costs in full
    budgets)."""
    run = METHODS.get(method)
    if not getattr(run, "traceable", False):
        raise ValueError(f"only mfbo's methods can be traced, got method={method!r}.")
    if isinstance(seeds, bool) or not isinstance(seeds, int) or seeds < 1:
        raise ValueError(f"seeds must be a positive integer, got {seeds!r}.")
    rows = []
    for name in problems:
        problem = PROBLEMS[name].load()
        runs = []
        for seed in range(seeds):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                run(problem, seed, LEVELS[-1] * problem.max_budget,
                    trace=lambda opt: runs.append(spend(problem, opt.study.trials)))

        def mean(phase, key):
            return float(np.mean([r[phase][key] for r in runs]))
        full = problem.max_budget
        model = mean("model", "steps")
        origins = {}
        for r in runs:
            for o, n in r["by_origin"].items():
                origins[o] = origins.get(o, 0) + n / len(runs)
        rows.append([name, f"{mean('design', 'steps') / full:.1f}",
                     f"{mean('model', 'steps') / full:.1f}",
                     f"{mean('model', 'copy_steps') / full:.1f}"
                     + (f" ({mean('model', 'copy_steps') / model:.0%})" if model else ""),
                     f"{mean('model', 'copies'):.1f} of {mean('model', 'trials'):.1f}",
                     ", ".join(f"{o} {n:.1f}" for o, n in sorted(origins.items())) or "-"])
    return markdown_table(["problem", "design cost", "cost after it", "of it on copies",
                           "copies (trials after the design)", "copies by origin"], rows)


# -- the report ------------------------------------------------------------------------------

def score_at(record: dict, level: int) -> float | None:
    """The best full-budget loss within ``level`` full budgets of cost (None: none yet)."""
    limit = level * record["max_budget"]
    values = [v for c, v in record["events"] if c <= limit]
    return min(values) if values else None


def cost_to_reach(record: dict, target: float) -> float:
    """The first cost at which the run's best full-budget loss is at most ``target``
    (inf if never)."""
    for c, v in record["events"]:
        if v <= target + 1e-12:
            return float(c)
    return math.inf


def _ranks(values: list) -> np.ndarray:
    from scipy.stats import rankdata

    filled = [math.inf if v is None else v for v in values]
    return rankdata(filled, method="average")


def summarise(records: list[dict], reference: str | None = None) -> str:
    """The report of ``records`` (see the module docstring) as markdown; the paired tests are
    of ``reference`` (None: mfbo's multi-fidelity method of the best mean rank over the cost
    levels)."""
    by = {}
    for r in records:
        by.setdefault((r["problem"], r["seed"]), {})[r["method"]] = r
    methods = sorted({r["method"] for r in records}, key=list(METHODS).index)
    out = []
    rows = []
    for level in LEVELS:
        ranks = {m: [] for m in methods}
        for runs in by.values():
            if set(runs) != set(methods):
                continue
            for m, rank in zip(methods, _ranks([score_at(runs[m], level) for m in methods])):
                ranks[m].append(rank)
        rows.append([f"{level} x max budget"] + [f"{np.mean(ranks[m]):.2f}" for m in methods])
    if reference is None:
        mine = [m for m in methods if m.startswith("mondrian-")]
        mean = {m: np.mean([float(row[1 + methods.index(m)]) for row in rows]) for m in mine}
        reference = min(mine, key=mean.get) if mine else None
    n = sum(1 for runs in by.values() if set(runs) == set(methods))
    out.append(f"Mean rank ({n} problem x seed pairs; 1 is best):\n")
    out.append(markdown_table(["cost"] + methods, rows))
    if reference in methods:
        out.append(f"\nPaired Wilcoxon, {reference} against each (difference < 0: "
                   f"{reference} better):\n")
        rows = []
        for level in LEVELS:
            groups = {}
            for (problem, seed), runs in by.items():
                for m, r in runs.items():
                    groups.setdefault((problem, level), {}).setdefault(m, []).append(
                        {"seed": seed, "best": score_at(r, level)})
            for other, res in compare(groups, reference).items():
                rows.append([f"{level}", other, f"{res['wins']}/{res['ties']}/{res['losses']}",
                             "-" if res["p"] is None else f"{res['p']:.3g}", res["verdict"]])
        out.append(markdown_table(["cost", "other", "wins/ties/losses", "p", "verdict"], rows))
    if "mondrian" in methods:
        out.append("\nCost to reach full-fidelity mondrian's final quality, as a ratio to "
                   "mondrian's own (median over seeds; worst seed in brackets):\n")
        problems = sorted({p for p, _ in by})
        rows = []
        for m in methods:
            cells, medians = [], []
            for problem in problems:
                ratios = []
                for (p, seed), runs in by.items():
                    if p != problem or m not in runs or "mondrian" not in runs:
                        continue
                    base = runs["mondrian"]
                    target = score_at(base, LEVELS[-1])
                    if target is None:
                        continue
                    ratios.append(cost_to_reach(runs[m], target) / cost_to_reach(base, target))
                med = float(np.median(ratios)) if ratios else math.nan
                medians.append(med)
                cells.append(f"{med:.2f} ({max(ratios):.2f})" if ratios else "-")
            rows.append([m] + cells + [f"{np.median(medians):.2f}"])
        out.append(markdown_table(["method"] + problems + ["median over problems"], rows))
    return "\n".join(out)


def _read(path) -> list[dict]:
    if not os.path.exists(path):
        return []
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def _job(args):
    return run_one(*args)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", choices=("dev", "test"), default="dev")
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--methods", default=",".join(METHODS))
    parser.add_argument("--problems", default=None, help="default: the split's")
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--out", default=None, help="JSON lines; runs in it are skipped")
    parser.add_argument("--report", default=None, help="summarise this file and stop")
    parser.add_argument("--trace", default=None, metavar="METHOD",
                        help="where this mfbo method's runs spend their cost (copies of a "
                             "configuration trained to full budget), then stop")
    args = parser.parse_args(argv)
    if args.report:
        print(summarise(_read(args.report)))
        return
    problems = args.problems.split(",") if args.problems \
        else SUITES["multi-fidelity"].problems(args.split)
    if args.trace:
        print(trace(args.trace, problems, args.seeds))
        return
    methods = args.methods.split(",")
    unknown = [m for m in methods if m not in METHODS] + [p for p in problems
                                                           if p not in PROBLEMS]
    if unknown:
        raise SystemExit(f"unknown method or problem: {unknown}; methods: {list(METHODS)}, "
                         f"problems: {list(PROBLEMS)}")
    for p in problems:  # tabulate once, before the workers read the tables
        PROBLEMS[p].load()
    done = {(r["problem"], r["method"], r["seed"]) for r in _read(args.out)} \
        if args.out else set()
    jobs = [(p, m, s) for s in range(args.seeds) for p in problems for m in methods
            if (p, m, s) not in done]
    records = _read(args.out) if args.out else []
    if args.jobs > 1:
        from multiprocessing import Pool
        pool = Pool(args.jobs)
        results = pool.imap_unordered(_job, jobs)
    else:
        pool, results = None, map(_job, jobs)
    for record in results:
        records.append(record)
        print(f"{record['problem']} {record['method']} seed {record['seed']}: "
              f"{record['wall_s']:.1f} s, best {score_at(record, LEVELS[-1])}", flush=True)
        if args.out:
            with open(args.out, "a", encoding="utf-8") as f:
                f.write(json.dumps(record) + "\n")
    if pool is not None:
        pool.close()
    print(summarise(records))


if __name__ == "__main__":
    main()
