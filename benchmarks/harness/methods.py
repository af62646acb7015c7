"""The methods the benchmark harness compares, by name (register a new one in ``METHODS``).

mfbo's own methods (always available).  An ablation is the default recipe with one step
dropped (``get_recipe("mondrian").without(LocalStep)``) or one setting of a step or of the
acquisition changed (``LocalStep(isotropic=False)``: the recipe's ``LocalStep`` with that
setting, the others kept); the ``mondrian-*trend*`` and ``mondrian-window*`` methods change
the forest's ``surrogate_options`` instead (see ``METHODS``):

* ``mondrian``: online Mondrian forest, UCB with kappa = 1 (the papers' setting);
* ``mondrian-ei``: the same forest with expected improvement;
* ``mondrian-nolocal``: ``mondrian`` without its local quadratic steps (``without(LocalStep)``;
  an ablation: the default before they were added);
* ``mondrian-allmoves``: ``mondrian`` with joint local-search moves growing with the dimension
  (``AcquisitionSearch(joint_move_dims=None)``; an ablation: the default before they were
  capped at six dimensions' worth);
* ``mondrian-noescape``: ``mondrian`` without its plateau escape (``without(PlateauEscape)``;
  an ablation: the default before it was added);
* ``mondrian-noslices``: ``mondrian`` without plateaus made of slices in a space without a
  continuous coordinate (``PlateauEscape(slices=False)``; the default before they were
  adopted): identical to ``mondrian`` in a space with a continuous coordinate;
* ``mondrian-slices``: ``mondrian`` whose slices leave every integer coordinate the two
  observations differ in free (``PlateauEscape(slices=True, reach=None)``);
* ``mondrian-slices-reach``, ``-slices-reach0``: the slices ``mondrian`` makes, whose integer
  coordinates the two observations differ in span their values widened by their distance
  (not widened) on either side (``PlateauEscape(slices=True, reach=1)``, ``reach=0``);
* ``mondrian-relevance-mi``, ``-relevance-mi25``: ``mondrian`` whose forest is grown afresh
  once the initial design is told, each coordinate stretched by its mutual information with
  the design's transformed losses, at least 0.001 (0.25) of the largest
  (``surrogate_options={"relevance": "mutual_info", "relevance_floor": 0.25}``);
* ``mondrian-bp`` / ``mondrian-empirical``: ``mondrian`` with one posterior only, the exact
  Gaussian BP one or the empirical one (the default before the two alternated);
* ``mondrian-searchstop``: ``mondrian`` whose acquisition local searches all stop once the best
  score found has not risen for 3 rounds (``AcquisitionSearch(search_patience=3)``; cheaper
  asks; measured and not made the default);
* ``mondrian-kappa21``: ``mondrian`` whose UCB weight cycles with the number of observations,
  ``Acquisition("ucb", kappa=(2, 1))``: 2 for the empirical posterior's proposals, 1 for BP's
  (measured and not made the default);
* ``mondrian-plateaukappa2``: ``mondrian`` with UCB weight 2 once any loss has repeated
  exactly (``Acquisition("ucb", kappa=1, plateau_kappa=2)``), kappa 1 otherwise: identical to
  ``mondrian`` wherever no loss repeats;
* ``mondrian-repeatraw``: ``mondrian`` whose forest models the raw losses instead of their
  logs once any loss has repeated exactly (``repeat_y_transform="raw"``): identical to
  ``mondrian`` wherever no loss repeats;
* ``mondrian-noparzen``: ``mondrian`` without its Parzen-density proposals
  (``without(ParzenStep)``; the default before they were added);
* ``mondrian-noconvparzen``: ``mondrian`` with no Parzen step where the local quadratic has
  converged (``ParzenStep(when_converged=False)``; the default before it was added);
* ``mondrian-nolinear``: ``mondrian`` without the local linear steps
  (``LocalStep(linear=False)``; the default before they were added);
* ``mondrian-localint``: ``mondrian`` whose local quadratic step also moves integer
  coordinates of five levels or more (``LocalStep(integers=True)``): identical to ``mondrian`` in
  a space without such an integer, and wherever there are too few observations for that
  larger quadratic;
* ``mondrian-iso``: ``mondrian`` whose local step, where there are too few observations for
  the quadratic, first fits an isotropic quadratic over the continuous coordinates and the
  integers of five levels or more, in a space with such an integer
  (``LocalStep(isotropic="if-integers")``; the default takes it only where it is curved and
  beats a plane): identical to ``mondrian`` in a space without one;
* ``mondrian-localcell``: ``mondrian`` whose local models fit only the observations with the
  incumbent's categorical values (``LocalStep(cell=True)``): identical to ``mondrian`` in a
  space without a categorical parameter;
* ``mondrian-localpat3``, ``-localpat2``: ``mondrian`` whose local step passes once 3 (2) of
  its proposals since the best observation have failed, until a new best
  (``LocalStep(patience=3)``);
* ``mondrian-noexchange``: ``mondrian`` without its stall escape to a new combination of
  categorical values (the default before it); the exchange escapes below are added to that;
* ``mondrian-catexchange4``, ``-catexchange8``: ``mondrian-noexchange`` with, after its plateau
  escape, a stall escape to the incumbent with one categorical value changed after 4 (8)
  failures to improve, passing in a conditional space (``StallEscape(move="exchange",
  integers=False, conditional=False)``); ``-catexchange4-novel``: only to a combination of
  categorical values no observation has (``novel=True``); ``-catexchange4-novel-max1``
  (``-max2``): that, at most once (twice) in one run of failures (``max_escapes=1``; ``-max1``
  is today's ``mondrian``);
* ``mondrian-noiso``: ``mondrian`` without the isotropic quadratic step
  (``LocalStep(isotropic=False)``, the default before it); ``mondrian`` takes it only where its
  curvature is positive and it predicts the observations it was fitted to better than a
  plane (``"if-curved"``), ``mondrian-iso`` wherever it can be fitted;
* ``mondrian-bandit-pp``, ``-parzen-pp``, ``-pp`` (and each with ``-nested`` after
  ``mondrian``): ``mondrian`` whose branch bandit's pulls, Parzen step, or both draw each
  parameter from the best of the observations where it is active (``per_parameter=True``),
  the bandit going on down nested choices with ``-nested``: identical to ``mondrian`` in a space
  without conditions;
* ``mondrian-bandit-ppe`` (and ``-nested-bandit-ppe``): ``mondrian`` whose branch bandit's pulls
  draw per parameter only once the arm pulled has a loss below the median
  (``per_parameter="earned"``); ``-ppe25``, ``-ppe1``: below the 0.25 or 0.1 quantile of the
  losses (``earn_quantile``);
* ``mondrian-bandit-burstK`` (``-nested-``, and ``-burstKp``): ``mondrian`` whose branch
  bandit follows each pull with ``K - 1`` proposals in the arm pulled, the acquisition's best
  point there (``burst=K``; ``p``: drawn from the per-parameter densities, ``refine="parzen"``);
  ``-ppe-burstK`` both: each identical to ``mondrian`` in a space without conditions;
* ``mondrian-nested-bandit-leaf``: ``mondrian`` whose branch bandit goes on down a nested
  choice only under an arm with at most two parameters of its own besides it
  (``nested="leaf"``: the tree's splits, not the SVM's kernel) and draws a pull per parameter
  only in an arm with at most two parameters of its own (``per_parameter="leaf"``: a leaf, not
  a model family); ``-leafnest`` the first alone, ``-leafpp`` the second with
  ``nested=True``, ``mondrian-bandit-leafpp`` the second without nesting: each identical to
  ``mondrian`` in a space without conditions;
* ``mondrian-bandit-coolK`` (K in 1, 2, 5): ``mondrian`` whose branch bandit, after a pull,
  is not asked for the next K proposals (``cooldown=K``), so that a stall's proposals are at
  most one in K + 1 pulls: identical to ``mondrian`` in a space without conditions;
* ``mondrian-bandit-gG`` and ``mondrian-bandit-nested-gG`` (G in 50, 100): ``mondrian`` whose
  branch bandit's exploration weight grows in proportion to the evaluations past G
  (``grow_after=G``: alpha 0.5 up to G evaluations, 2 at 4 G), the second choosing on down the
  tree of choices (``nested=True``): each identical to ``mondrian`` up to G evaluations and in a
  space without conditions;
* ``mondrian-bandit-paG``, ``mondrian-bandit-nested-paG`` and ``mondrian-bandit-grown-paG``
  (G = 25): the same, the weight at a choice of k values made from m observations growing past
  m = k G (``grow_per_arm=G``); the third goes on down to a nested choice only once its weight
  grows (``nested="grown"``), so it is identical to ``mondrian`` while every choice has at most
  G observations for each of its values;
* ``rf-smac``: SMAC3 2.4's HPO-facade random forest with log-normal EI, as re-implemented in mfbo;
* ``bart``: BART (particle Gibbs, 50 trees) refitted on every tell, under UCB (the ``"bart"``
  surrogate);
* ``random``: random search.

On a problem with a candidate set (random grids, measured tables) they enumerate its rows
exactly (``candidates=``).

Peers (the ``peers`` extra: ``pip install "mfbo[peers]"``), adapters in
:mod:`benchmarks.harness.peers`, imported only when used: ``smac`` (SMAC3
HyperparameterOptimizationFacade), ``optuna`` (TPE, the installed Optuna's default settings,
seeded), ``optuna-mv`` (TPE with ``multivariate=True``
and ``group=False`` set explicitly, seeded: the multivariate TPE whatever Optuna's default;
Optuna 5's default is this very sampler, so there the two give identical runs),
``optuna-indep`` (TPE with ``multivariate=False``, one density per parameter: Optuna 4's default),
``optuna-group`` (TPE with ``multivariate=True`` and ``group=True``: one joint density per group
of parameters that occur together, the grouping Optuna offers for conditional spaces), ``hyperopt``
(Hyperopt's TPE, its defaults, seeded, on the space as a tree of ``hp.choice``),
``skopt-forest`` and ``skopt-gp`` (scikit-optimize ``forest_minimize`` / ``gp_minimize``).
Peers cannot take a candidate set: on a random-grid problem they search the continuous box (the
run is marked ``continuous``); on a table problem each axis is an ordinal choice among the
table's values, so every proposal is a grid cell; on a mixed problem they search its own space
of reals, integers and categoricals; on a conditional problem (the ``conditional`` suite) each
peer but scikit-optimize, which refuses it, is given the conditions in its own terms (see
:mod:`benchmarks.harness.peers`), and a forbidden configuration a peer proposes is refused
by the problem unevaluated and counted as a failed evaluation.  mfbo's own methods search a
conditional space as it is and never propose a forbidden configuration.

A run returns the objective value of every evaluation in order (``None`` for a failed one) and
times: ``wall_s`` of the whole run, ``objective_time_s`` spent inside the objective, and
``optimizer_time_s``, the difference.
"""

from __future__ import annotations

import dataclasses
import importlib
from dataclasses import dataclass, field
from typing import Callable

from benchmarks.harness.environment import versions
from mfbo.proposal import (AcquisitionSearch, Arm, BranchBandit, BranchEscape, CategoryStep,
                           DensityRatioStep, LocalStep, ParzenStep, PlateauEscape, Portfolio,
                           RandomInterleave, Recipe, StallEscape, get_recipe)
from benchmarks.harness.timing import clock, timed

__all__ = ["METHODS", "Method", "MethodRun", "PeerUnavailable", "TimedObjective",
           "get_method", "optimizer_settings", "run_method"]


class PeerUnavailable(ImportError):
    """A peer method's package is not installed."""


class TimedObjective:
    """Wraps a problem: records every value (``None`` if the call raised) and the time spent
    inside it."""

    def __init__(self, problem):
        self.problem = problem
        self.values: list[float | None] = []
        self.time = 0.0

    def __call__(self, **params) -> float:
        t0 = clock()
        try:
            value = float(self.problem(**params))
        except Exception:
            self.values.append(None)
            raise
        finally:
            self.time += clock() - t0
        self.values.append(value)
        return value


@dataclass
class MethodRun:
    """What one run of a method on a problem produced."""

    values: list
    wall_s: float
    objective_time_s: float
    grid: int | None
    continuous: bool

    @property
    def optimizer_time_s(self) -> float:
        return max(0.0, self.wall_s - self.objective_time_s)


@dataclass(frozen=True)
class Method:
    """A named method.

    ``runner(objective, problem, budget, seed)`` minimises ``objective`` (a
    :class:`TimedObjective` of ``problem``) with ``budget`` evaluations and returns
    ``(grid index or None, continuous)``, where ``continuous`` says whether the box was
    searched instead of a finite candidate set.  ``packages`` are the distributions it needs
    besides mfbo (their versions go into the results).
    """

    name: str
    description: str
    runner: Callable
    packages: tuple = field(default=())

    def check_available(self) -> None:
        """Raise :class:`PeerUnavailable` (naming the ``peers`` extra) if a package is missing."""
        for dist in self.packages:
            module = _MODULE_OF.get(dist, dist)
            try:
                importlib.import_module(module)
            except ImportError as err:
                raise PeerUnavailable(
                    f"method {self.name!r} needs the package {dist!r}, which cannot be imported "
                    f"({err}). Install the peers extra: pip install \"mfbo[peers]\" (or pip "
                    f"install {' '.join(self.packages)}).") from err

    def versions(self) -> dict:
        """``{package: version or None}`` of :attr:`packages`."""
        return versions(*self.packages)


_MODULE_OF = {"scikit-optimize": "skopt", "ConfigSpace": "ConfigSpace"}


def _mfbo(surrogate: str, acquisition: str | None = None, **options) -> Callable:
    settings = dict(surrogate=surrogate, acquisition=acquisition, **options)

    def runner(objective, problem, budget, seed):
        import mfbo

        candidates, grid = problem.candidate_set(seed)
        mfbo.minimize(objective, problem.space, n_calls=budget, random_state=seed,
                      candidates=candidates, progress_bar=False, **settings)
        return grid, candidates is None
    runner.optimizer_settings = settings
    return runner


#: the default recipe, which the ablations change one step or setting of
_DEFAULT = get_recipe("mondrian")
#: the branch bandit's nesting in the methods that try it both ways: (``nested``, the name's
#: tag, the description's words)
_NESTINGS = ((False, "", ""), (True, "-nested", " choosing on down the tree of choices"))
#: the default recipe before its categorical exchange escape, which the exchange escapes below
#: were added to
_NO_EXCHANGE = _DEFAULT.without(StallEscape)
#: the default recipe before its branch bandit and its exchange escape, which the steps
#: screened against it were added to (the same proposals as the default in a space without
#: conditions or categorical parameters)
_FORMER = _NO_EXCHANGE.without(BranchBandit)


def _acquisition_changed(**settings) -> Recipe:
    """The default Mondrian recipe with its acquisition given ``settings``."""
    recipe = get_recipe("mondrian")
    return dataclasses.replace(recipe, acquisition=dataclasses.replace(recipe.acquisition,
                                                                       **settings))


def _mondrian_with(recipe: Recipe) -> Callable:
    """``recipe`` (the default Mondrian recipe with something changed) under UCB kappa=1 (an
    ablation)."""
    return _mfbo(recipe, "ucb", kappa=1.0)


def _portfolio(without: tuple = (), discount: float = 0.9, random_prior=(1.0, 1.0),
               category: bool | str = False, random: bool = True) -> Recipe:
    """The default Mondrian recipe with its steps (less those of the types ``without``) as
    one arm of a :class:`Portfolio` whose other arms are a uniformly random point (prior
    ``random_prior``) if ``random`` and, if ``category``, a :class:`CategoryStep` (``category``
    a string: its ``draw``)."""
    model = tuple(s for s in _DEFAULT.steps
                  if not isinstance(s, (RandomInterleave, *without)))
    arms = [Arm("model", model)]
    if category:
        step = CategoryStep(draw=category) if isinstance(category, str) else CategoryStep()
        arms.append(Arm("category", (step,)))
    if random:
        arms.append(Arm("random", (RandomInterleave(1.0),), random_prior))
    return dataclasses.replace(_DEFAULT, steps=(Portfolio(arms=tuple(arms),
                                                          discount=discount),))


def _after_plateau(step, recipe: Recipe = _FORMER) -> Recipe:
    """``recipe`` (by default the default Mondrian recipe before its branch bandit,
    :data:`_FORMER`, the one the branch escapes were screened against) with ``step`` right
    after its plateau escape (before the local and Parzen steps, so that those never pre-empt
    it)."""
    steps = list(recipe.steps)
    at = next(i for i, s in enumerate(steps) if isinstance(s, PlateauEscape)) + 1
    steps.insert(at, step)
    return dataclasses.replace(recipe, steps=tuple(steps))


def _per_parameter(bandit: bool, parzen: bool, nested: bool = False) -> Recipe:
    """The default Mondrian recipe whose branch bandit (``bandit``) and Parzen step (``parzen``)
    draw from Parzen densities made per parameter (``per_parameter=True``), the bandit going
    on down the tree of choices with ``nested``."""
    recipe = _DEFAULT.with_settings(BranchBandit, per_parameter=bandit, nested=nested)
    return recipe.with_settings(ParzenStep, per_parameter=parzen)


def _with_branch_escape(window: int, burst: int = 1, move: str = "search") -> Recipe:
    """The default Mondrian recipe with a :class:`BranchEscape` of ``window``."""
    return _after_plateau(BranchEscape(window=window, burst=burst, move=move))


def _peer(function: str) -> Callable:
    def runner(objective, problem, budget, seed):
        from benchmarks.harness import peers

        return getattr(peers, function)(objective, problem, budget, seed)
    return runner


METHODS: dict[str, Method] = {m.name: m for m in [
    Method("mondrian", "mfbo: online Mondrian forest, UCB kappa=1 (the papers')",
           _mfbo("mondrian", "ucb", kappa=1.0)),
    Method("mondrian-nobandit", "mfbo: online Mondrian forest, UCB kappa=1, without the branch "
           "bandit of a conditional space (the default before it was added)",
           _mondrian_with(_FORMER)),
    Method("mondrian-ei", "mfbo: online Mondrian forest, expected improvement",
           _mfbo("mondrian", "ei")),
    Method("mondrian-nolocal", "mfbo: online Mondrian forest, UCB kappa=1, without the local "
           "quadratic steps (the default before they were added)",
           _mondrian_with(get_recipe("mondrian").without(LocalStep))),
    Method("mondrian-allmoves", "mfbo: online Mondrian forest, UCB kappa=1, joint local-search "
           "moves growing with the dimension (the default before they were capped)",
           _mondrian_with(_DEFAULT.with_settings(AcquisitionSearch, joint_move_dims=None))),
    Method("mondrian-noescape", "mfbo: online Mondrian forest, UCB kappa=1, without the random "
           "proposal after runs of repeated losses (the default before it was added)",
           _mondrian_with(get_recipe("mondrian").without(PlateauEscape))),
    Method("mondrian-plateaux", "mfbo: online Mondrian forest, UCB kappa=1, no proposal "
           "inside a plateau that observations of one loss bracket "
           "(PlateauEscape(every=3, exclude=True); the default since it was measured)",
           _mondrian_with(_DEFAULT.with_settings(PlateauEscape, exclude=True))),
    Method("mondrian-inplateaux", "mfbo: online Mondrian forest, UCB kappa=1, proposals "
           "allowed inside a plateau already bracketed (PlateauEscape(every=3, exclude=False); "
           "the default before the exclusion was adopted)",
           _mondrian_with(_DEFAULT.with_settings(PlateauEscape, exclude=False))),
    Method("mondrian-noslices", "mfbo: online Mondrian forest, UCB kappa=1, no slices as "
           "plateaus in a space without a continuous coordinate (PlateauEscape(slices=False); "
           "the default before the slices were adopted)",
           _mondrian_with(_DEFAULT.with_settings(PlateauEscape, slices=False, reach=None))),
    Method("mondrian-slices", "mfbo: online Mondrian forest, UCB kappa=1, in a space without "
           "a continuous coordinate no proposal in the slice that two observations of one loss "
           "share (PlateauEscape(slices=True))",
           _mondrian_with(_DEFAULT.with_settings(PlateauEscape, slices=True, reach=None))),
    *(Method(f"mondrian-slices-reach{tag}", f"mfbo: online Mondrian forest, UCB kappa=1, in a "
             f"space without a continuous coordinate no proposal in the slice that two "
             f"observations of one loss share, their integer coordinates the range between "
             f"the two's values widened by {reach:g} times their distance "
             f"(PlateauEscape(slices=True, reach={reach:g}))",
             _mondrian_with(_DEFAULT.with_settings(PlateauEscape, slices=True, reach=reach)))
      for tag, reach in (("0", 0.0), ("", 1.0))),
    *(Method(f"mondrian-relevance-mi{tag}", f"mfbo: online Mondrian forest, UCB kappa=1, the "
             f"forest grown afresh once the initial design is told, each coordinate stretched by "
             f"its mutual information with the design's transformed losses, at least {floor:g} "
             f"of the largest (surrogate_options={{'relevance': 'mutual_info', "
             f"'relevance_floor': {floor:g}}})",
             _mfbo("mondrian", "ucb", kappa=1.0, surrogate_options={
                 "relevance": "mutual_info", "relevance_floor": floor}))
      for floor, tag in ((1e-3, ""), (0.25, "25"))),
    Method("mondrian-kernel", "mfbo: the Mondrian kernel's Gaussian process (Laplace kernel, "
           "lifetime and noise by marginal likelihood) under the default's policy, UCB "
           "kappa=1 (surrogate='mondrian-kernel')", _mfbo("mondrian-kernel", "ucb", kappa=1.0)),
    Method("mondrian-bp", "mfbo: online Mondrian forest with the exact Gaussian BP posterior "
           "(surrogate_options={'posterior': 'bp'}), UCB kappa=1",
           _mfbo("mondrian", "ucb", kappa=1.0, surrogate_options={"posterior": "bp"})),
    Method("mondrian-empirical", "mfbo: online Mondrian forest with the empirical posterior "
           "only (surrogate_options={'posterior': 'empirical'}; the default before the "
           "posteriors alternated), UCB kappa=1",
           _mfbo("mondrian", "ucb", kappa=1.0, surrogate_options={"posterior": "empirical"})),
    Method("mondrian-searchstop", "mfbo: online Mondrian forest, UCB kappa=1, the acquisition's "
           "local searches all stopped once the best score found has not risen for 3 rounds "
           "(AcquisitionSearch(search_patience=3))",
           _mondrian_with(_DEFAULT.with_settings(AcquisitionSearch, search_patience=3))),
    Method("mondrian-kappa21", "mfbo: online Mondrian forest, UCB with kappa 2 for the "
           "proposals from an even number of observations (those of the empirical posterior) "
           "and 1 for those from an odd number (the BP posterior's): kappa=(2, 1)",
           _mfbo(_acquisition_changed(kappa=(2.0, 1.0)))),
    Method("mondrian-notrend", "mfbo: online Mondrian forest, UCB kappa=1, without the linear "
           "trend's forest in spaces with an integer coordinate (surrogate_options="
           "{'trend': False}; the default before the trend was chosen online)",
           _mfbo("mondrian", "ucb", kappa=1.0, surrogate_options={"trend": False})),
    Method("mondrian-trend", "mfbo: online Mondrian forest, UCB kappa=1, the forest on the "
           "residuals of a linear trend in a space with an integer coordinate, always "
           "(surrogate_options={'trend': 'if-integers', 'trend_window': None})",
           _mfbo("mondrian", "ucb", kappa=1.0,
                 surrogate_options={"trend": "if-integers", "trend_window": None})),
    Method("mondrian-trendall", "mfbo: online Mondrian forest, UCB kappa=1, the forest on the "
           "residuals of a linear trend in every space, always (surrogate_options="
           "{'trend': True, 'trend_window': None})",
           _mfbo("mondrian", "ucb", kappa=1.0,
                 surrogate_options={"trend": True, "trend_window": None})),
    Method("mondrian-designshift", "mfbo: online Mondrian forest, UCB kappa=1, the log "
           "transform's shift from the median of the initial design's losses instead of all "
           "losses' (surrogate_options={'shift_from': 'design'})",
           _mfbo("mondrian", "ucb", kappa=1.0, surrogate_options={"shift_from": "design"})),
    Method("mondrian-interleave10", "mfbo: online Mondrian forest, UCB kappa=1, one proposal in "
           "ten a uniformly random point (RandomInterleave(0.1); the default has none)",
           _mondrian_with(_DEFAULT.with_settings(RandomInterleave, probability=0.1))),
    Method("mondrian-interleave20", "mfbo: online Mondrian forest, UCB kappa=1, one proposal in "
           "five a uniformly random point (RandomInterleave(0.2); the default has none)",
           _mondrian_with(_DEFAULT.with_settings(RandomInterleave, probability=0.2))),
    *(Method(f"mondrian-branch{w}", f"mfbo: online Mondrian forest, UCB kappa=1, after {w} "
             f"proposals in a row with the incumbent's categorical values, the acquisition's best "
             f"point with other values (BranchEscape(window={w}))",
             _mondrian_with(_with_branch_escape(w))) for w in (5, 8, 12)),
    *(Method(f"mondrian-branch{w}x{b}", f"mfbo: as mondrian-branch{w}, each escape {b} "
             f"proposals in the branch it chose (BranchEscape(window={w}, burst={b}))",
             _mondrian_with(_with_branch_escape(w, b))) for w, b in ((6, 3), (8, 3), (5, 2))),
    *(Method(f"mondrian-neighbour{w}", f"mfbo: online Mondrian forest, UCB kappa=1, after {w} "
             f"proposals in a row with the incumbent's categorical values, the acquisition's best "
             f"categorical one-exchange neighbour of the incumbent (BranchEscape(window={w}, "
             f"move='neighbour'))", _mondrian_with(_with_branch_escape(w, move="neighbour")))
      for w in (4, 8)),
    *(Method(f"mondrian-ratio{k}", f"mfbo: online Mondrian forest, UCB kappa=1, one proposal in "
             f"{k} after the initial design TPE's choice, the largest ratio of the Parzen "
             f"densities of the best observations and of the others (DensityRatioStep(every={k}))",
             _mondrian_with(_after_plateau(DensityRatioStep(every=k)))) for k in (2, 3, 4, 6)),
    *(Method(f"mondrian-condratio{k}", f"mfbo: as mondrian-ratio{k} in a space with conditional "
             f"parameters, the default elsewhere (DensityRatioStep(every={k}, "
             f"only_conditional=True))",
             _mondrian_with(_after_plateau(DensityRatioStep(every=k, only_conditional=True))))
      for k in (2, 3, 4, 6)),
    *(Method(f"mondrian-bandit-{move}{tag}", f"mfbo: online Mondrian forest, UCB kappa=1, in a "
             f"conditional space a point of the branch MaxUCB pulls (alpha {alpha}) when it is not "
             f"the incumbent's, by move {move!r} (BranchBandit(alpha={alpha}, move={move!r}))",
             _mondrian_with(_after_plateau(BranchBandit(alpha=alpha, move=move, patience=0))))
      for move in ("search", "random", "parzen") for alpha, tag in ((0.5, ""), (0.25, "-a25"))),
    *(Method(f"mondrian-bandit-{move}-p{k}", f"mfbo: as mondrian-bandit-{move}, the bandit asked "
             f"only after {k} evaluations in a row that did not improve the best loss by 0.1 % "
             f"(BranchBandit(move={move!r}, patience={k}))",
             _mondrian_with(_after_plateau(BranchBandit(move=move, patience=k))))
      for move in ("search", "parzen") for k in (4, 6, 10)),
    *(Method(f"mondrian-bandit-nested{atag}{ttag}{ptag}", f"mfbo: online Mondrian forest, UCB "
             f"kappa=1, the branch bandit choosing on down the tree of choices, alpha {alpha}, "
             f"an improvement of {tol * 100:g} % ending a stall, patience {patience} "
             f"(BranchBandit(nested=True, alpha={alpha}, tol={tol}, patience={patience}))",
             _mondrian_with(_DEFAULT.with_settings(BranchBandit, nested=True, alpha=alpha,
                                                   tol=tol, patience=patience)))
      for alpha, atag in ((0.5, ""), (1.0, "-a1"), (2.0, "-a2"))
      for tol, ttag in ((1e-3, ""), (0.01, "-t01"), (0.02, "-t02"), (0.05, "-t05"))
      for patience, ptag in ((6, ""), (0, "-p0"))
      if patience or not ttag),  # without patience the stall's margin plays no part
    *(Method(f"mondrian-bandit-nested-na{a:g}", f"mfbo: as mondrian-bandit-nested, alpha {a:g} "
             f"at the nested choices (0.5 at the outermost) (BranchBandit(nested=True, "
             f"nested_alpha={a}))",
             _mondrian_with(_DEFAULT.with_settings(BranchBandit, nested=True, nested_alpha=a)))
      for a in (1.0, 2.0)),
    *(Method(f"mondrian{ntag}{tag}", f"mfbo: online Mondrian forest, UCB kappa=1, in a "
             f"conditional space each parameter's Parzen density made of the best of the "
             f"observations where it is active, in {where}{nwhere} (per_parameter=True)",
             _mondrian_with(_per_parameter(bandit, parzen, nested)))
      for tag, bandit, parzen, where in (
          ("-bandit-pp", True, False, "the branch bandit's pulls"),
          ("-parzen-pp", False, True, "the Parzen step"),
          ("-pp", True, True, "the branch bandit's pulls and the Parzen step"))
      for nested, ntag, nwhere in ((False, "", ""),
                                   (True, "-nested", ", the bandit choosing on down the tree "
                                                     "of choices (nested=True)"))),
    *(Method(f"mondrian{ntag}-bandit{etag}{btag}", f"mfbo: online Mondrian forest, UCB kappa=1, "
             f"the branch bandit{nwhere}{ewhere}{bwhere} (BranchBandit(nested={nested}, "
             f"per_parameter={pp!r}, burst={burst}, refine={refine!r}))",
             _mondrian_with(_DEFAULT.with_settings(BranchBandit, nested=nested, per_parameter=pp,
                                                   burst=burst, refine=refine)))
      for nested, ntag, nwhere in _NESTINGS
      for pp, etag, ewhere in ((False, "", ""),
                               ("earned", "-ppe", ", its pulls drawn per parameter once the "
                                                  "arm's best is below the median loss"))
      for burst, refine, btag, bwhere in (
          (1, "search", "", ""),
          *((k, "search", f"-burst{k}", f", each pull followed by {k - 1} acquisition "
                                          f"searches in the arm") for k in (2, 3, 5)),
          *((k, "parzen", f"-burst{k}p", f", each pull followed by {k - 1} per-parameter "
                                           f"draws in the arm") for k in (3,)))
      if pp or burst > 1),
    *(Method(f"mondrian{ntag}-bandit-ppe{q:g}".replace("0.", ""), f"mfbo: online Mondrian "
             f"forest, UCB kappa=1, the branch bandit{nwhere}, its pulls drawn per parameter once "
             f"the arm's best is below the {q:g} quantile of the losses (BranchBandit(nested="
             f"{nested}, per_parameter='earned', earn_quantile={q}))",
             _mondrian_with(_DEFAULT.with_settings(BranchBandit, nested=nested,
                                                   per_parameter="earned", earn_quantile=q)))
      for nested, ntag, nwhere in _NESTINGS
      for q in (0.1, 0.25)),
    *(Method(f"mondrian-bandit-flat{atag}{ptag}", f"mfbo: online Mondrian forest, UCB kappa=1, "
             f"in a space without conditions each categorical parameter's value chosen by "
             f"MaxUCB (alpha {alpha}, patience {patience}) when some differs from the "
             f"incumbent's (BranchBandit(flat=True, alpha={alpha}, patience={patience}))",
             _mondrian_with(_DEFAULT.with_settings(BranchBandit, flat=True, alpha=alpha,
                                                   patience=patience)))
      for alpha, atag in ((0.5, ""), (1.0, "-a1"))
      for patience, ptag in ((6, ""), (3, "-p3"), (10, "-p10"), (15, "-p15"))),
    *(Method(f"mondrian-stall{w}", f"mfbo: online Mondrian forest, UCB kappa=1, after {w} "
             f"evaluations in a row that did not improve the best loss by 0.1 %, the "
             f"acquisition's best point away from the incumbent (StallEscape(window={w}))",
             _mondrian_with(_after_plateau(StallEscape(window=w)))) for w in (6, 10)),
    *(Method(f"mondrian-stallcell{w}", f"mfbo: as mondrian-stall{w}, away meaning another "
             f"categorical value or an integer a quarter of its range away where the space has "
             f"either (StallEscape(window={w}, cells=True))",
             _mondrian_with(_after_plateau(StallEscape(window=w, cells=True)))) for w in (6, 8)),
    *(Method(f"mondrian-stallrandom{w}", f"mfbo: as mondrian-stall{w}, the escape a uniformly "
             f"random point away from the incumbent (StallEscape(window={w}, move='random'))",
             _mondrian_with(_after_plateau(StallEscape(window=w, move="random"))))
      for w in (6, 8)),
    *(Method(f"mondrian-branchrandom{w}", f"mfbo: online Mondrian forest, UCB kappa=1, after {w} "
             f"proposals in a row with the incumbent's categorical values, a random point with "
             f"other values (BranchEscape(window={w}, move='random'))",
             _mondrian_with(_with_branch_escape(w, move="random"))) for w in (4, 8)),
    *(Method(f"mondrian-branchparzen{w}", f"mfbo: online Mondrian forest, UCB kappa=1, after {w} "
             f"proposals in a row with the incumbent's categorical values, a point with other "
             f"values drawn uniformly and its other parameters from the Parzen density of the "
             f"best observations (BranchEscape(window={w}, move='parzen'))",
             _mondrian_with(_with_branch_escape(w, move="parzen"))) for w in (4, 8)),
    Method("mondrian-portfolio", "mfbo: online Mondrian forest, UCB kappa=1, each proposal "
           "by the default's steps or a uniformly random point, drawn by discounted Thompson "
           "sampling over the new best losses each produced (Portfolio, discount 0.9)",
           _mondrian_with(_portfolio())),
    Method("mondrian-portfolio-noplateau", "mfbo: as mondrian-portfolio, without the plateau "
           "escape among the default's steps (the random arm stands in for it)",
           _mondrian_with(_portfolio(without=(PlateauEscape,)))),
    Method("mondrian-portfolio9", "mfbo: as mondrian-portfolio, the random arm's prior chance "
           "of a new best one in ten (Beta(1, 9)) instead of one in two",
           _mondrian_with(_portfolio(random_prior=(1.0, 9.0)))),
    Method("mondrian-portfolio9-noplateau", "mfbo: as mondrian-portfolio9, without the plateau "
           "escape among the default's steps",
           _mondrian_with(_portfolio(without=(PlateauEscape,), random_prior=(1.0, 9.0)))),
    Method("mondrian-category", "mfbo: online Mondrian forest, UCB kappa=1, each proposal by "
           "the default's steps or the acquisition's best point for categorical values drawn "
           "uniformly (CategoryStep), drawn by discounted Thompson sampling over the new best "
           "losses each produced (Portfolio, discount 0.9); the default's steps alone in a "
           "space without a categorical parameter",
           _mondrian_with(_portfolio(category=True, random=False))),
    Method("mondrian-category-random", "mfbo: as mondrian-category with a third arm, a "
           "uniformly random point (prior Beta(1, 9))",
           _mondrian_with(_portfolio(category=True, random_prior=(1.0, 9.0)))),
    Method("mondrian-category-ts", "mfbo: as mondrian-category, the categorical values drawn "
           "by Thompson sampling over each value's chance of a loss in the best quarter "
           "(CategoryStep(draw='thompson'))",
           _mondrian_with(_portfolio(category="thompson", random=False))),
    Method("mondrian-window5", "mfbo: online Mondrian forest, UCB kappa=1, the forests with "
           "and without a linear trend in a space with an integer coordinate, the one that "
           "predicted the last 5 observations better proposing (surrogate_options="
           "{'trend_window': 5}; the default compares the last 10)",
           _mfbo("mondrian", "ucb", kappa=1.0, surrogate_options={"trend_window": 5})),
    Method("mondrian-window20", "mfbo: online Mondrian forest, UCB kappa=1, the forests with "
           "and without a linear trend in a space with an integer coordinate, the one that "
           "predicted the last 20 observations better proposing (surrogate_options="
           "{'trend_window': 20}; the default compares the last 10)",
           _mfbo("mondrian", "ucb", kappa=1.0, surrogate_options={"trend_window": 20})),
    Method("mondrian-trendchoiceall", "mfbo: online Mondrian forest, UCB kappa=1, the forests "
           "with and without a linear trend in every space, the one that predicted the last 10 "
           "observations better proposing (surrogate_options={'trend': True})",
           _mfbo("mondrian", "ucb", kappa=1.0, surrogate_options={"trend": True})),
    Method("mondrian-onehot", "mfbo: online Mondrian forest, UCB kappa=1, each categorical "
           "coordinate of three or more choices one coordinate per choice in the forest "
           "(surrogate_options={'categorical': 'one-hot'})",
           _mfbo("mondrian", "ucb", kappa=1.0, surrogate_options={"categorical": "one-hot"})),
    Method("mondrian-onehot-narrow", "mfbo: online Mondrian forest, UCB kappa=1, each "
           "categorical coordinate of k >= 3 choices k coordinates of width 1/k in the forest "
           "(surrogate_options={'categorical': 'one-hot-narrow'})",
           _mfbo("mondrian", "ucb", kappa=1.0,
                 surrogate_options={"categorical": "one-hot-narrow"})),
    *(Method(f"mondrian-cap{c}", f"mfbo: online Mondrian forest, UCB kappa=1, the forest told "
             f"no transformed loss above the median's plus {c} times the median's distance "
             f"from the best (surrogate_options={{'y_cap': {c}}})",
             _mfbo("mondrian", "ucb", kappa=1.0, surrogate_options={"y_cap": c}))
      for c in (1, 2, 4)),
    Method("mondrian-robustshift", "mfbo: online Mondrian forest, UCB kappa=1, the log "
           "transform's shift floored robustly, not by the range, which one diverging loss "
           "sets (surrogate_options={'robust_shift': True}; the default's since it was "
           "adopted)",
           _mfbo("mondrian", "ucb", kappa=1.0, surrogate_options={"robust_shift": True})),
    Method("mondrian-rangeshift", "mfbo: online Mondrian forest, UCB kappa=1, the log "
           "transform's shift floored by a thousandth of the losses' range "
           "(surrogate_options={'robust_shift': False}; the default before the robust floor)",
           _mfbo("mondrian", "ucb", kappa=1.0, surrogate_options={"robust_shift": False})),
    Method("mondrian-robustshift-cap2", "mfbo: online Mondrian forest, UCB kappa=1, the log "
           "transform's shift floored robustly and the forest told no transformed loss above "
           "the median's plus twice its distance from the best "
           "(surrogate_options={'robust_shift': True, 'y_cap': 2})",
           _mfbo("mondrian", "ucb", kappa=1.0,
                 surrogate_options={"robust_shift": True, "y_cap": 2})),
    Method("mondrian-noparzen", "mfbo: online Mondrian forest, UCB kappa=1, without the "
           "acquisition's choice among points of a Parzen density of the best observations on "
           "every second model-based proposal (the default before it was added)",
           _mondrian_with(get_recipe("mondrian").without(ParzenStep))),
    Method("mondrian-plateaukappa2", "mfbo: online Mondrian forest, UCB kappa=1 until a loss "
           "repeats exactly, then kappa=2 (Acquisition(plateau_kappa=2))",
           _mfbo(_acquisition_changed(plateau_kappa=2.0))),
    Method("mondrian-repeatraw", "mfbo: online Mondrian forest, UCB kappa=1, log-scaled losses "
           "until a loss repeats exactly, raw losses from then on (repeat_y_transform='raw')",
           _mfbo("mondrian", "ucb", kappa=1.0,
                 surrogate_options={"repeat_y_transform": "raw"})),
    Method("mondrian-noconvparzen", "mfbo: online Mondrian forest, UCB kappa=1, the full "
           "maximiser (not a Parzen step) when the local quadratic's minimiser is a point "
           "already asked (ParzenStep(when_converged=False); the default before it was added)",
           _mondrian_with(_DEFAULT.with_settings(ParzenStep, when_converged=False))),
    Method("mondrian-nolinear", "mfbo: online Mondrian forest, UCB kappa=1, no local linear "
           "step where there are too few observations for the local quadratic "
           "(LocalStep(linear=False); the default before it was added)",
           _mondrian_with(_DEFAULT.with_settings(LocalStep, linear=False))),
    Method("mondrian-localint", "mfbo: online Mondrian forest, UCB kappa=1, the local "
           "quadratic step moving the integer coordinates of five levels or more too, where "
           "there are enough observations for it (LocalStep(integers=True))",
           _mondrian_with(_DEFAULT.with_settings(LocalStep, integers=True))),
    Method("mondrian-localcell", "mfbo: online Mondrian forest, UCB kappa=1, local models "
           "fitted only to the observations with the incumbent's categorical values "
           "(LocalStep(cell=True))",
           _mondrian_with(_DEFAULT.with_settings(LocalStep, cell=True))),
    *[Method(f"mondrian-localpat{k}", "mfbo: online Mondrian forest, UCB kappa=1, the local "
             f"step passing once {k} of its proposals since the best observation have failed, "
             f"until a new best (LocalStep(patience={k}))",
             _mondrian_with(_DEFAULT.with_settings(LocalStep, patience=k))) for k in (2, 3)],
    Method("mondrian-iso", "mfbo: online Mondrian forest, UCB kappa=1, an isotropic "
           "quadratic step (one curvature, continuous and five-level-or-more integer "
           "coordinates) where there are too few observations for the local quadratic, in a "
           "space with such an integer (LocalStep(isotropic='if-integers'))",
           _mondrian_with(_DEFAULT.with_settings(LocalStep, isotropic="if-integers"))),
    Method("mondrian-noiso", "mfbo: online Mondrian forest, UCB kappa=1, without the "
           "isotropic quadratic step (LocalStep(isotropic=False); the default before it)",
           _mondrian_with(_DEFAULT.with_settings(LocalStep, isotropic=False))),
    Method("rf-smac", "mfbo: SMAC3-style random forest, log-normal EI", _mfbo("rf-smac")),
    Method("bart", "mfbo: BART (particle Gibbs, 50 trees) refitted on every tell, UCB",
           _mfbo("bart")),
    Method("random", "mfbo: random search", _mfbo("random")),
    Method("smac", "SMAC3 HyperparameterOptimizationFacade (random forest)", _peer("run_smac"),
           ("smac", "ConfigSpace")),
    Method("optuna", "Optuna TPESampler (defaults, seeded)", _peer("run_optuna"), ("optuna",)),
    Method("optuna-mv", "Optuna TPESampler (multivariate=True, group=False, seeded)",
           _peer("run_optuna_multivariate"), ("optuna",)),
    Method("optuna-indep", "Optuna TPESampler (multivariate=False, seeded)",
           _peer("run_optuna_independent"), ("optuna",)),
    Method("optuna-group", "Optuna TPESampler (multivariate=True, group=True, seeded)",
           _peer("run_optuna_group"), ("optuna",)),
    Method("hyperopt", "Hyperopt TPE (tpe.suggest, defaults, seeded; conditions as a tree of "
           "hp.choice)", _peer("run_hyperopt"), ("hyperopt",)),
    Method("skopt-forest", "scikit-optimize forest_minimize", _peer("run_skopt_forest"),
           ("scikit-optimize",)),
    Method("skopt-gp", "scikit-optimize gp_minimize", _peer("run_skopt_gp"),
           ("scikit-optimize",)),
    # the default recipe with a stall escape to the incumbent's one-exchange neighbours in its
    # discrete coordinates, right after its plateau escape (before the local and Parzen steps)
    *(Method(f"mondrian-exchange{w}", "mfbo: online Mondrian forest, UCB kappa=1, after "
             f"every {w} evaluations in a row without a gain of 0.1 %, the acquisition's best "
             f"incumbent with one categorical or integer value changed "
             f"(StallEscape(window={w}, move='exchange') after the plateau escape)",
             _mondrian_with(_after_plateau(StallEscape(window=w, move="exchange"),
                                           _NO_EXCHANGE)))
      for w in (4, 6)),
    # the same escape passing in a conditional space (where the branch bandit answers stalls)
    Method("mondrian-exchange4-flat", "mfbo: online Mondrian forest, UCB kappa=1, as "
           "mondrian-exchange4 in a space without conditions, the default in one with them "
           "(StallEscape(window=4, move='exchange', conditional=False))",
           _mondrian_with(_after_plateau(
               StallEscape(window=4, move="exchange", conditional=False), _NO_EXCHANGE))),
    *(Method(f"mondrian-catexchange{w}", "mfbo: online Mondrian forest, UCB kappa=1, as "
             f"mondrian-exchange4-flat with exchanges of categorical values only after {w} "
             f"failures (StallEscape(window={w}, move='exchange', conditional=False, "
             f"integers=False))",
             _mondrian_with(_after_plateau(
                 StallEscape(window=w, move="exchange", conditional=False, integers=False),
                 _NO_EXCHANGE)))
      for w in (4, 8)),
    Method("mondrian-catexchange4-novel", "mfbo: online Mondrian forest, UCB kappa=1, as "
           "mondrian-catexchange4 with exchanges only to combinations of categorical values "
           "no observation has (StallEscape(window=4, move='exchange', conditional=False, "
           "integers=False, novel=True))",
           _mondrian_with(_after_plateau(
               StallEscape(window=4, move="exchange", conditional=False, integers=False,
                           novel=True), _NO_EXCHANGE))),
    *(Method(f"mondrian-catexchange4-novel-max{k}", "mfbo: online Mondrian forest, UCB "
             f"kappa=1, as mondrian-catexchange4-novel with at most {k} escapes in one run of "
             f"failures (StallEscape(window=4, move='exchange', conditional=False, "
             f"integers=False, novel=True, max_escapes={k}))",
             _mondrian_with(_after_plateau(
                 StallEscape(window=4, move="exchange", conditional=False, integers=False,
                             novel=True, max_escapes=k), _NO_EXCHANGE)))
      for k in (1, 2)),
    # the same escape in place of the plateau escape (the recipe's number of steps kept)
    Method("mondrian-exchange4-noplateau", "mfbo: online Mondrian forest, UCB kappa=1, the "
           "stall escape to the incumbent's best one-exchange neighbour "
           "(StallEscape(window=4, move='exchange')) in place of the plateau escape",
           _mondrian_with(dataclasses.replace(_NO_EXCHANGE, steps=tuple(
               StallEscape(window=4, move="exchange") if isinstance(s, PlateauEscape) else s
               for s in _NO_EXCHANGE.steps)))),
    # the default without its categorical exchange escape (the default before it)
    Method("mondrian-noexchange", "mfbo: online Mondrian forest, UCB kappa=1, without the "
           "stall escape to a new combination of categorical values (the default before it)",
           _mondrian_with(_NO_EXCHANGE)),
    # the branch bandit's nesting and per-parameter pulls by the arm's own dimension
    *(Method(name, f"mfbo: online Mondrian forest, UCB kappa=1, the branch bandit{where} "
             f"(BranchBandit(nested={nested!r}, per_parameter={pp!r}))",
             _mondrian_with(_DEFAULT.with_settings(BranchBandit, nested=nested,
                                                   per_parameter=pp)))
      for name, nested, pp, where in (
          ("mondrian-nested-bandit-leaf", "leaf", "leaf", " choosing on down a nested choice "
           "only under an arm with at most two parameters of its own besides it, its pulls "
           "drawn per parameter only in an arm with at most two"),
          ("mondrian-nested-bandit-leafnest", "leaf", False, " choosing on down a nested "
           "choice only under an arm with at most two parameters of its own besides it"),
          ("mondrian-nested-bandit-leafpp", True, "leaf", " choosing on down the tree of "
           "choices, its pulls drawn per parameter only in an arm with at most two parameters "
           "of its own"),
          ("mondrian-bandit-leafpp", False, "leaf", ", its pulls drawn per parameter only in "
           "an arm with at most two parameters of its own"))),
    # the branch bandit not asked for a few proposals after each of its pulls
    *(Method(f"mondrian-bandit-cool{k}", "mfbo: online Mondrian forest, UCB kappa=1, the "
             f"branch bandit not asked for the {k} proposals after each of its pulls "
             f"(BranchBandit(cooldown={k}))",
             _mondrian_with(_DEFAULT.with_settings(BranchBandit, cooldown=k)))
      for k in (1, 2, 5)),
    # the branch bandit's exploration weight growing with the evaluations spent
    *(Method(f"mondrian-bandit{ntag}-g{g}", f"mfbo: online Mondrian forest, UCB kappa=1, the "
             f"branch bandit{nwhere}, its exploration weight growing in proportion to the "
             f"evaluations past {g} (BranchBandit(nested={nested}, grow_after={g}))",
             _mondrian_with(_DEFAULT.with_settings(BranchBandit, nested=nested, grow_after=g)))
      for nested, ntag, nwhere in _NESTINGS
      for g in (50, 100)),
    # the same, past an average of G observations an arm at each choice
    *(Method(f"mondrian-bandit{ntag}-pa{g}", f"mfbo: online Mondrian forest, UCB kappa=1, the "
             f"branch bandit{nwhere}, its exploration weight at each choice growing in "
             f"proportion to the observations an arm has on average past {g} "
             f"(BranchBandit(nested={nested}, grow_per_arm={g}))",
             _mondrian_with(_DEFAULT.with_settings(BranchBandit, nested=nested,
                                                   grow_per_arm=g)))
      for nested, ntag, nwhere in (*_NESTINGS, ("grown", "-grown", " choosing on down to a "
                                                "nested choice once its weight grows"))
      for g in (25,)),
]}


def get_method(name: str) -> Method:
    """The registered method ``name``; ``ValueError`` lists the known names otherwise."""
    if name not in METHODS:
        raise ValueError(f"unknown method {name!r}; method must be one of {sorted(METHODS)}.")
    return METHODS[name]


def optimizer_settings(method: str | Method) -> dict:
    """The :class:`mfbo.Optimizer` keyword arguments (``surrogate``, ``acquisition``, options) of
    one of mfbo's own methods; ``ValueError`` for a peer."""
    m = method if isinstance(method, Method) else get_method(method)
    settings = getattr(m.runner, "optimizer_settings", None)
    if settings is None:
        raise ValueError(f"method {m.name!r} is not one of mfbo's own methods.")
    return dict(settings)


def run_method(method: str | Method, problem, budget: int, seed: int) -> MethodRun:
    """Run ``method`` on ``problem`` once with ``budget`` evaluations and seed ``seed``."""
    m = method if isinstance(method, Method) else get_method(method)
    m.check_available()
    objective = TimedObjective(problem)
    (grid, continuous), wall = timed(lambda: m.runner(objective, problem, int(budget),
                                                      int(seed)))
    return MethodRun(values=list(objective.values), wall_s=wall,
                     objective_time_s=objective.time, grid=grid, continuous=bool(continuous))
