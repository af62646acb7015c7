"""The global step of a study of several objectives or with constraints: the best new point by
an acquisition over all the outcomes the models predict.

One model per outcome (:attr:`~mfbo.proposal.Proposer.models`: each objective's loss, then
each constraint's value), all built from the same seed: Mondrian partitions do not depend on
the values, so the forests share their partitions and differ only in their leaves' values,
and tree ``t`` of every forest together is one joint draw of all the outcomes.

- Several objectives, ``method="hvi"``: the expected hypervolume improvement over the front of
  the (feasible) observations, a Monte Carlo mean over the trees' joint draws (each tree's
  prediction of every objective is one sample), on each objective's model scale normalised
  by the observed range, reference point 1.1 (a tenth of the range beyond the worst).
- Several objectives, ``method="parego"``: ParEGO's augmented Chebyshev scalarisation, with
  weights drawn afresh for each proposal (uniformly on the simplex, from the proposal's own
  stream), of each objective's lower confidence bound ``mean - kappa * std`` (normalised as
  above): random scalarisations of UCB, which in expectation cover the whole front.
- One objective with constraints: expected improvement over the best feasible loss
  (log-EI), or nothing before a feasible trial.
- Constraints, in every case: the log of the probability that every constraint is met is
  added (the acquisition times the probability of feasibility; with the Chebyshev
  scalarisation, ``exp(-scalarised)`` times it); with ``min_feasibility`` a point whose
  probability is below it ranks after every point above it.  Before any feasible trial the
  probability of feasibility alone is maximised.  With ``feasibility="moments"`` it is
  ``sum_c log P(c <= 0)`` under a normal distribution of each constraint with its forest's
  mean and std; with ``"trees"`` it is the probability under the forests' own mixture: the
  mean over the trees (joint draws) of each tree's normal probability that every constraint
  is met.  The two differ where the trees disagree: one tree far from the others widens the
  matched normal distribution, which then gives a point that every tree finds violated a
  chance of being feasible.
- ``"parego"`` with ``scalarise="draws"``: the scalarisation of each tree's joint draw of the
  objectives, and its lower confidence bound over the trees (mean less ``kappa`` standard
  deviations): the draws' objectives come out well together only as far as the trees say
  they can, where the bound of each objective's own bound makes every one optimistic at once
  (which favours the corners of the space, where every forest is unsure).
- Several objectives, ``parzen_every``: every so many proposals, the acquisition's best of
  points drawn from the Parzen density of the observations of least Pareto rank (feasible
  ones first; :func:`~mfbo.proposal.steps.parzen.good_region_sample`) instead of the search,
  as :class:`~mfbo.proposal.steps.ParzenStep` does for one loss: TPE's candidates, in the
  region that the front's points share (a front's distance variables), which the forests'
  piecewise-constant predictions see no gain in approaching once a point is near.
- Several objectives, ``local_every`` (by default every second proposal): the step of a local
  model of a random Chebyshev scalarisation of the feasible observations' losses around the
  one it ranks first (:func:`~mfbo.proposal.steps.front_local.front_local_step`), where the
  search would otherwise run: a quadratic can fall below the observations it is fitted to,
  where no forest's leaf mean can, so it moves a front point towards the values the front
  shares (a front's distance variables), which the acquisition alone does not approach.
- Several objectives, ``dominating_every`` (by default every second proposal, the local
  step's, taken before it): the point that local quadratics of each objective predict
  dominates a front point by most (:func:`~mfbo.proposal.steps.front_local.dominating_step`),
  where it gives one: it takes a front point onto the front where it lies, which the
  scalarised step, moving along the front too, does less often.  The front point is drawn in
  proportion to its distance to the nearest other (``dominating_centre="gaps"``), so that the
  sparse stretches of the front fill first.  Where there are too few observations for full
  quadratics, quadratics without cross terms (``dominating_fallback="squares"``), so that
  the step runs from fewer observations.
- One objective, ``constrained_local_every`` (by default every second proposal): the point
  where local quadratics of the loss and of each constraint around the best feasible trial
  predict the least feasible loss (with ``constrained_local_plane``, planes where there are
  too few trials for quadratics;
  :func:`~mfbo.proposal.steps.constrained_local.constrained_local_step`), where it gives a
  new point: an optimum on a constraint's boundary, which a forest's blurred probability of
  feasibility approaches in ever smaller steps, is approached as sequential quadratic
  programming does.
- Several objectives, ``midpoint_every`` (0, never, by default; with 4 the first proposal
  after the initial design and every fourth after it, half the search's): the midpoint of
  the two front points farthest apart among neighbours
  (:func:`~mfbo.proposal.steps.front_local.midpoint_step`), where it is new: where the
  front's points share the values that put them on the front, it fills the front's largest
  gap on the front.
- Several objectives, ``mutation_every`` (by default the first proposal after the initial
  design and every fourth after it, half the search's): a front point with one coordinate
  drawn afresh (:func:`~mfbo.proposal.steps.front_local.mutation_step`), where it is new:
  where the front's points share the values that put them on the front, a point that keeps
  all but one of them lands on the front too.  Where the front is a single point at an end
  of the true front (which dominates every trade-off off the front), no model-based step
  sees a gain, and this is how the front's other points are reached.
- With ``on_failure="infeasible"`` the study's outcomes end with one more column, whether the
  trial failed (+1) or not (-1), modelled and weighed as one more constraint: the
  probability of not failing (left out while no trial has failed).
"""

from __future__ import annotations

import dataclasses
import numbers
from dataclasses import dataclass
from typing import ClassVar, Mapping

import numpy as np

from acquisitions import log_expected_improvement
from acquisitions.pareto import (HypervolumeImprovement, chebyshev, log_probability_feasible,
                                 non_dominated)

from ..._core.arguments import check_int
from ..models import MondrianModel
from .base import Context, Point
from .constrained_local import constrained_local_step
from .front_local import CENTRES, FALLBACKS, dominating_step, front_local_step, \
    midpoint_step, mutation_step
from .parzen import best_of_good_region
from .search import AcquisitionSearch

__all__ = ["OutcomeSearch", "OutcomeModels", "METHODS", "FEASIBILITY", "INFEASIBLE_LOSSES",
           "checked_outcome_options", "clipped_losses"]

METHODS = ("auto", "hvi", "parego")

#: how :class:`OutcomeSearch` computes the probability of feasibility
FEASIBILITY = ("moments", "trees")

#: what the model of the one objective of a study with constraints is told of an infeasible
#: trial's loss (the loss observed, or :func:`clipped_losses`)
INFEASIBLE_LOSSES = ("observed", "clipped")

#: what :class:`OutcomeSearch`'s Chebyshev scalarisation (``"parego"``) is taken of
SCALARISE = ("bounds", "draws")

#: the reference point of the hypervolume, in normalised units (1: the worst observed)
REFERENCE = 1.1


#: what a point below ``OutcomeSearch(min_feasibility=...)`` scores, plus its log-probability
#: of feasibility: below every point above the bound
_BELOW = -1e6


def _feasible(Y: np.ndarray, k: int) -> np.ndarray:
    """Which rows of a study's outcomes (``k`` objectives' losses, then the constraints'
    values) meet every constraint (all of them without constraints)."""
    return np.all(Y[:, k:] <= 0, axis=1)


def clipped_losses(y: np.ndarray, Y: np.ndarray) -> tuple[np.ndarray, float | None]:
    """``(losses, level)``: the losses ``y`` of a study of one objective whose outcomes ``Y``
    hold the loss and then the constraints' values, each infeasible one raised to the best
    feasible loss, ``level`` (an infeasible trial improves on nothing, however low its loss);
    ``y`` itself and None while no trial is feasible."""
    feasible = _feasible(Y, 1)
    if not feasible.any():
        return y, None
    level = float(y[feasible].min())
    return np.where(feasible, y, np.maximum(y, level)), level


def _pareto_rank(Y: np.ndarray, k: int) -> np.ndarray:
    """Each observation's Pareto rank on the ``k`` objectives' losses (lower is better): the
    number of feasible observations that dominate it, less a fraction for those it dominates
    (of equal rank, the one that dominates more comes first); an infeasible observation ranks
    after every feasible one, by its total violation."""
    L = Y[:, :k]
    dominated = (np.all(L[:, None, :] >= L[None, :, :], axis=2)
                 & np.any(L[:, None, :] > L[None, :, :], axis=2))  # [i, j]: j dominates i
    feasible = _feasible(Y, k)
    n = Y.shape[0]
    by = (dominated & feasible[None, :]).sum(axis=1)
    over = (dominated & feasible[:, None]).sum(axis=0)
    violation = np.clip(Y[:, k:], 0, None).sum(axis=1)
    return np.where(feasible, by - over / (n + 1), n + violation)


class OutcomeModels:
    """The models of a study's outcomes (:attr:`~mfbo.proposal.Proposer.models`) as one
    predictor, for one proposal: each model's :meth:`~mfbo.proposal.models.Model.predict` and
    :meth:`~mfbo.proposal.models.Model.predict_per_tree`, the same numbers whichever way they
    are computed.

    Mondrian forests built from one seed share their partitions, so where every model is a
    :class:`~mfbo.proposal.models.MondrianModel` whose forests do (checked), each tree is
    walked once for all of them (:class:`surrogates.forest.outcomes.SharedPartitions`) and
    each model's output transform and trend are applied as its own ``predict`` applies them;
    otherwise each model predicts on its own.  The models must not be told anything while
    this is in use.
    """

    #: whether the models may be predicted together (False: each on its own, as a check)
    joint = True

    def __init__(self, models):
        self.models = list(models)
        self._shared = None
        if not self.joint or len(self.models) < 2 or not all(
                type(m).predict is MondrianModel.predict
                and type(m).predict_per_tree is MondrianModel.predict_per_tree
                for m in self.models):
            return
        from surrogates.forest.outcomes import SharedPartitions

        chosen = [m.predicting_forest() for m in self.models]
        try:  # (it checks that the forests share their partitions, and refuses if not)
            self._shared = SharedPartitions([forest for forest, _ in chosen])
        except ValueError:
            return
        self._chosen = chosen
        self._noise = {}  # each forest's noise variance, read once (the models do not change)

    def predict(self, U) -> list:
        """``[(mean, std), ...]``: each model's ``predict(U)``."""
        if self._shared is None:
            return [m.predict(U) for m in self.models]
        means, stds = self._shared.predict(self.models[0].encode(U))
        designs = {}  # (the trends' regressors at U, built once for all the models)
        return [self._moments(j, U, means[j], stds[j], designs)
                for j in range(len(self.models))]

    def predict_both(self, U) -> tuple[list, list]:
        """Each model's ``predict(U)`` and ``predict_per_tree(U)``: two lists of pairs."""
        if self._shared is None:
            return ([m.predict(U) for m in self.models],
                    [m.predict_per_tree(U) for m in self.models])
        means, stds, tree_means, tree_vars = self._shared.predict_all(self.models[0].encode(U))
        moments, trees, designs = [], [], {}
        for j, model in enumerate(self.models):
            moments.append(self._moments(j, U, means[j], stds[j], designs))
            trees.append(model.from_forest_trees(U, self._chosen[j][1], tree_means[j],
                                                 tree_vars[j], designs))
        return moments, trees

    def _moments(self, j: int, U, m, s, designs: dict):
        """Model ``j``'s ``predict(U)`` from its forest's mean ``m`` and std ``s``."""
        forest, with_trend = self._chosen[j]
        model = self.models[j]
        noise_var = None
        if not model.noise_in_std:
            if j not in self._noise:
                self._noise[j] = forest.hyperparameters_["noise_var"]
            noise_var = self._noise[j]
        return model.from_forest(U, forest, with_trend, m, s, noise_var, designs)


def log_probability_feasible_trees(trees, threshold) -> np.ndarray:
    """``log P(every c <= threshold)`` per point under the mixture of the trees' normal
    predictions: ``trees`` holds each constraint's per-tree means and variances (each n ×
    trees, tree ``t`` of every constraint one joint draw), ``threshold`` one value per
    constraint; the log of the mean over the trees of each tree's probability that every
    constraint is met."""
    from scipy.special import logsumexp

    means = np.stack([np.asarray(m, dtype=float) for m, _ in trees], axis=-1)  # n, trees, c
    stds = np.sqrt(np.maximum(np.stack([np.asarray(v, dtype=float) for _, v in trees],
                                       axis=-1), 0.0))
    n, n_trees, c = means.shape
    per_tree = log_probability_feasible(means.reshape(-1, c), stds.reshape(-1, c),
                                        np.asarray(threshold, dtype=float))
    return logsumexp(per_tree.reshape(n, n_trees), axis=1) - np.log(n_trees)


@dataclass(frozen=True)
class OutcomeSearch(AcquisitionSearch):
    """:class:`~mfbo.proposal.steps.AcquisitionSearch` of the acquisition over several
    outcomes (this module's description); the search settings are the same, but for the
    share of the random points scored and the stop of all local searches (``random_share``,
    ``stop_after``).

    Parameters
    ----------
    method : {"auto", "hvi", "parego"}, default="auto"
        With several objectives: the expected hypervolume improvement or random Chebyshev
        scalarisations; ``"auto"``: ``"hvi"`` for two objectives, ``"parego"`` for more
        (whose exact hypervolume improvements cost more than a proposal should).
    random_share : float, default=0.5
        The share of ``n_random`` (at least one point) this search scores: every proposal
        of a study of several outcomes runs this search, where a single objective's policy
        runs its search one proposal in a few and takes cheap local steps in between.
    stop_after : int, default=2
        ``search_patience`` where it is 0: all local searches stop once the best point any
        of them has found has not risen for this many rounds (0: each stops by ``patience``
        alone).
    feasibility : {"moments", "trees"}, default="moments"
        How the probability that the constraints are met is computed (this module's
        description): a normal distribution per constraint matched to its forest's moments,
        or the mixture of the trees' normal distributions.
    parzen_every : int, default=0
        With several objectives, every ``parzen_every`` proposals after the initial design
        (0: never), the acquisition's best of ``parzen_candidates`` points drawn from the
        Parzen density of the observations of least Pareto rank instead of the search (this
        module's description).
    parzen_candidates : int, default=200
    scalarise : {"bounds", "draws"}, default="bounds"
        What ``"parego"`` scalarises: each objective's lower confidence bound, or each tree's
        joint draw of the objectives, whose mean over the trees less ``kappa`` times their
        standard deviation is then the bound (this module's description).
    local_every : int, default=2
        With several objectives, every ``local_every`` proposals after the initial design
        (0: never), the local step towards the front (this module's description) where it
        gives a new point, the search where it does not (before the Parzen slot where both
        are due).
    local_integers : bool, default=False
        Let the local step move the integer coordinates of at least five levels too (snapped
        back to their levels), as :class:`~mfbo.proposal.steps.LocalStep`'s ``integers``.
    dominating_every : int, default=2
        With several objectives, every ``dominating_every`` proposals (0: never) the step
        that local quadratics of the objectives predict dominates a front point (drawn as
        ``dominating_centre`` says) by most (this module's description), where it gives a new
        point.
    dominating_in : {"local", "search"}, default="local"
        Which proposals those are: ``"local"``, the ``dominating_every``-th after the initial
        design and its multiples (before the local step, whose proposals they are where
        ``local_every`` divides ``dominating_every``); ``"search"``, the first after the
        initial design and every ``dominating_every``-th after it (the search's, where
        ``local_every`` is 2).
    dominating_centre : {"uniform", "gaps"}, default="gaps"
        How the dominating step draws its front point: uniformly, or with a probability
        proportional to its distance to the nearest other front point (the objectives
        scaled to their observed ranges), so that sparse stretches of the front are
        centred on more often.
    dominating_fallback : {None, "squares", "plane"}, default="squares"
        What that step fits where there are too few observations for full quadratics of the
        objectives: nothing (no step), quadratics without cross terms, or planes.
    min_feasibility : float, default=0
        With constraints, once a trial was feasible: the points whose probability of
        feasibility is below this bound rank after every point above it (by that probability
        alone), so that the acquisition is maximised where the constraints are met with at
        least this probability (Gelbart, Snoek and Adams 2014's probabilistic constraint);
        0: the acquisition times the probability everywhere, which a low loss just past a
        constraint's boundary can hold there for much of a run.
    infeasible_losses : {"observed", "clipped"}, default="observed"
        With one objective and constraints: what the objective's model is told of an
        infeasible trial, the loss it returned or that loss raised to the best feasible loss
        (:func:`clipped_losses`: the expected improvement then comes from the feasible
        trials' losses, not from the low losses of an infeasible region that the
        probability of feasibility, blurred at a forest's block edges, does not rule out;
        but an optimum on a constraint's boundary is approached more slowly, without the
        losses beyond it).
    constrained_local_every : int, default=2
        With one objective, every ``constrained_local_every`` proposals after the initial
        design (0: never), the local step of quadratics of the loss and the constraints
        around the best feasible trial (this module's description), where it gives a new
        point.
    constrained_local_plane : bool, default=True
        That step with planes where there are too few trials for quadratics.
    midpoint_every : int, default=0
        With several objectives, the first proposal after the initial design and every
        ``midpoint_every``-th after it (0: never; the search's proposals where
        ``local_every`` is 2 and ``midpoint_every`` even), the midpoint of the two front
        points farthest apart among neighbours (:func:`~.front_local.midpoint_step`), where
        it is new.
    mutation_every : int, default=4
        With several objectives, the first proposal after the initial design and every
        ``mutation_every``-th after it (0: never; the search's proposals where ``local_every``
        is 2 and ``mutation_every`` even), a front point with one coordinate drawn afresh
        (:func:`~.front_local.mutation_step`), where it is new.
    """

    origin: ClassVar[str] = "outcomes"

    method: str = "auto"
    random_share: float = 0.5
    stop_after: int = 2
    feasibility: str = "moments"
    parzen_every: int = 0
    scalarise: str = "bounds"
    parzen_candidates: int = 200
    local_every: int = 2
    local_integers: bool = False
    dominating_every: int = 2
    dominating_in: str = "local"
    dominating_centre: str = "gaps"
    dominating_fallback: str | None = "squares"
    min_feasibility: float = 0.0
    infeasible_losses: str = "observed"
    constrained_local_every: int = 2
    constrained_local_plane: bool = True
    midpoint_every: int = 0
    mutation_every: int = 4

    def __post_init__(self):
        super().__post_init__()
        if self.method not in METHODS:
            raise ValueError(f"OutcomeSearch(method=...) must be one of {list(METHODS)}, got "
                             f"{self.method!r}.")
        if self.feasibility not in FEASIBILITY:
            raise ValueError(f"OutcomeSearch(feasibility=...) must be one of "
                             f"{list(FEASIBILITY)}, got {self.feasibility!r}.")
        r = self.random_share
        if isinstance(r, bool) or not isinstance(r, numbers.Real) or not 0 < r <= 1:
            raise ValueError(f"OutcomeSearch(random_share=...) must be a number in (0, 1], "
                             f"got {r!r}.")
        check_int(self.stop_after, "OutcomeSearch(stop_after=...)", minimum=0)
        check_int(self.parzen_every, "OutcomeSearch(parzen_every=...)", minimum=0)
        if self.scalarise not in SCALARISE:
            raise ValueError(f"OutcomeSearch(scalarise=...) must be one of {list(SCALARISE)}, "
                             f"got {self.scalarise!r}.")
        check_int(self.parzen_candidates, "OutcomeSearch(parzen_candidates=...)")
        check_int(self.local_every, "OutcomeSearch(local_every=...)", minimum=0)
        if not isinstance(self.local_integers, bool):
            raise TypeError(f"OutcomeSearch(local_integers=...) must be a bool, got "
                            f"{self.local_integers!r}.")
        check_int(self.dominating_every, "OutcomeSearch(dominating_every=...)", minimum=0)
        check_int(self.constrained_local_every, "OutcomeSearch(constrained_local_every=...)",
                  minimum=0)
        check_int(self.midpoint_every, "OutcomeSearch(midpoint_every=...)", minimum=0)
        check_int(self.mutation_every, "OutcomeSearch(mutation_every=...)", minimum=0)
        if not isinstance(self.constrained_local_plane, bool):
            raise TypeError(f"OutcomeSearch(constrained_local_plane=...) must be a bool, got "
                            f"{self.constrained_local_plane!r}.")
        if self.dominating_fallback not in (None, *FALLBACKS):
            raise ValueError(f"OutcomeSearch(dominating_fallback=...) must be None or one of "
                             f"{list(FALLBACKS)}, got {self.dominating_fallback!r}.")
        if self.dominating_in not in ("search", "local"):
            raise ValueError(f"OutcomeSearch(dominating_in=...) must be 'search' or 'local', "
                             f"got {self.dominating_in!r}.")
        f = self.min_feasibility
        if isinstance(f, bool) or not isinstance(f, numbers.Real) or not 0 <= f < 1:
            raise ValueError(f"OutcomeSearch(min_feasibility=...) must be a number in [0, 1), "
                             f"got {f!r}.")
        if self.infeasible_losses not in INFEASIBLE_LOSSES:
            raise ValueError(f"OutcomeSearch(infeasible_losses=...) must be one of "
                             f"{list(INFEASIBLE_LOSSES)}, got {self.infeasible_losses!r}.")
        if self.dominating_centre not in CENTRES:
            raise ValueError(f"OutcomeSearch(dominating_centre=...) must be one of "
                             f"{list(CENTRES)}, got {self.dominating_centre!r}.")

    def propose(self, ctx: Context) -> Point | None:
        """:meth:`AcquisitionSearch.propose` with ``random_share`` of the random points and
        ``stop_after`` for a ``search_patience`` of 0."""
        k = ctx.study.objectives.k
        if k == 1 and ctx.due(self.constrained_local_every):
            point = constrained_local_step(ctx, self.constrained_local_plane)
            if point is not None:
                return point
        point = self._dominating(ctx, k, "local")
        if point is not None:
            return point
        if self.local_every and k > 1 and ctx.due(self.local_every):
            point = front_local_step(ctx, k, self.local_integers)
            if point is not None:
                return point
        point = self._dominating(ctx, k, "search")
        if point is not None:
            return point
        if k > 1 and ctx.due_from_first(self.midpoint_every):
            point = midpoint_step(ctx, k)
            if point is not None:
                return point
        if k > 1 and ctx.due_from_first(self.mutation_every):
            point = mutation_step(ctx, k)
            if point is not None:
                return point
        if self.parzen_every and k > 1 and ctx.candidates is None \
                and ctx.due(self.parzen_every):
            # the Parzen step's: the best of points drawn from the front's Parzen density
            ranks = _pareto_rank(ctx.study.obs.Y, k)
            return best_of_good_region(ctx, self.scorer(ctx), ranks, self.parzen_candidates)
        search = dataclasses.replace(self, n_random=max(1, round(self.n_random *
                                                               self.random_share)),
                                     search_patience=self.search_patience or self.stop_after)
        return AcquisitionSearch.propose(search, ctx)

    def _dominating(self, ctx: Context, k: int, where: str) -> Point | None:
        """The dominating step's point where this proposal is one of its ``where``
        (``dominating_in``), else ``None``."""
        if not (self.dominating_every and k > 1 and self.dominating_in == where):
            return None
        every = self.dominating_every
        due = ctx.due(every) if where == "local" else ctx.due_from_first(every)
        return dominating_step(ctx, k, self.dominating_centre, self.dominating_fallback) \
            if due else None

    def chosen_method(self, k: int) -> str:
        if k == 1:
            return "ei"
        return ("hvi" if k == 2 else "parego") if self.method == "auto" else self.method

    # -- what the search maximises -------------------------------------------------------------
    def scorer(self, ctx: Context):
        study, proposer = ctx.study, ctx.proposer
        o = study.objectives
        models = proposer.models
        Y = study.obs.Y
        if study.n_outcomes > o.k + o.m and not (Y[:, -1] > 0).any():
            # no failure yet: the failures' model, which would weigh nothing, is left out
            models, Y = models[:-1], Y[:, :-1]
        feasible = _feasible(Y, o.k)
        # the observed losses on each objective's model scale, and their range
        T = np.column_stack([models[j].to_model_scale(Y[:, j]) for j in range(o.k)])
        lo, span = T.min(axis=0), np.ptp(T, axis=0)
        # (a range within rounding of the values is no range: normalised by 1)
        span = np.where(span > 1e-12 * np.maximum(1.0, np.abs(lo)), span, 1.0)
        # the constraints, and whether a trial failed (Study.n_outcomes)
        n_cons = Y.shape[1] - o.k
        zero = [float(np.asarray(models[o.k + c].to_model_scale([0.0]))[0])
                for c in range(n_cons)]
        method = self.chosen_method(o.k)
        kappa = proposer.recipe.acquisition.kappas[study.obs.n %
                                                    len(proposer.recipe.acquisition.kappas)]
        any_feasible = bool(feasible.any())
        if method == "hvi" and any_feasible:
            front = (T[feasible] - lo) / span
            # pending trials: the front as if they had returned their predicted means
            pending = [t.unit for t in study.pending]
            if pending:
                P = np.asarray(pending)
                means = np.column_stack([models[j].predict(P)[0] for j in range(o.k)])
                front = np.vstack([front, (means - lo) / span])
            front = front[non_dominated(front)]
            improvement = HypervolumeImprovement(front, np.full(o.k, REFERENCE))
        weights = ctx.stream("weights").dirichlet(np.ones(o.k)) if method == "parego" else None
        best = float(T[feasible, 0].min()) if o.k == 1 and any_feasible else None

        joint = OutcomeModels(models)
        objective_trees = any_feasible and (method == "hvi" or (
            method == "parego" and self.scalarise == "draws"))
        constraint_trees = bool(n_cons) and self.feasibility == "trees"

        def objective_score(U, moments, trees):
            if method == "ei":
                m, s = moments[0]
                return log_expected_improvement(m, s, best)
            if method == "parego" and self.scalarise == "draws":
                # each tree's joint draw scalarised; the lower confidence bound over the trees
                S = np.stack([chebyshev((np.column_stack([trees[j][0][:, t] for j in range(o.k)])
                                         - lo) / span, weights)
                              for t in range(trees[0][0].shape[1])], axis=1)
                return -(S.mean(axis=1) - kappa * S.std(axis=1))
            if method == "parego":  # each objective's lower confidence bound
                bounds = [m - kappa * s for m, s in moments[:o.k]]
                return -chebyshev((np.column_stack(bounds) - lo) / span, weights)
            # hvi: each tree's joint draw of the objectives, its improvement, averaged
            draws = [trees[j][0] for j in range(o.k)]
            n, n_trees = draws[0].shape
            # (trees by points) x objectives, normalised: every tree's draws at once
            Z = np.empty((n_trees, n, o.k))
            for j, d in enumerate(draws):
                Z[:, :, j] = (d.T - lo[j]) / span[j]
            gains = improvement(Z.reshape(-1, o.k)).reshape(n_trees, n)
            total = np.zeros(n)
            for t in range(n_trees):
                total += gains[t]
            return np.log(total / n_trees + 1e-12)

        def score(U):
            U = np.atleast_2d(U)
            if objective_trees or constraint_trees:
                moments, trees = joint.predict_both(U)
            else:
                moments, trees = joint.predict(U), None
            out = objective_score(U, moments, trees) if any_feasible else np.zeros(U.shape[0])
            if constraint_trees:
                log_p = log_probability_feasible_trees(trees[o.k:], zero)
            elif n_cons:
                preds = moments[o.k:]
                cm = np.column_stack([p[0] for p in preds])
                cs = np.column_stack([p[1] for p in preds])
                log_p = log_probability_feasible(cm, cs, np.asarray(zero))
            else:
                return out
            out = out + log_p
            if self.min_feasibility and any_feasible:
                # below the bound: after every point above it, by the probability alone
                below = log_p < np.log(self.min_feasibility)
                out = np.where(below, _BELOW + log_p, out)
            return out

        return ctx.wrap_score(score)

    def starts(self, ctx: Context) -> np.ndarray:
        """The (feasible) observations on the front of the objectives' losses, at most 10,
        then the best by the first objective."""
        study = ctx.study
        o = study.objectives
        Y = study.obs.Y
        idx = np.flatnonzero(_feasible(Y, o.k))
        if idx.size == 0:
            return ctx.best_observed(10)
        idx = idx[non_dominated(Y[idx, :o.k])]
        return study.obs.X[idx[:10]]


def checked_outcome_options(options, name: str = "outcome_options") -> dict:
    """``options`` as a dict of :class:`OutcomeSearch`'s settings (None: none), refused with an
    error naming ``name`` where it is not a mapping, holds a key that is no setting (or
    ``method``, which ``pareto_method`` gives) or a value the setting refuses."""
    if options is None:
        return {}
    if not isinstance(options, Mapping):
        raise TypeError(f"{name} must be a mapping of OutcomeSearch's settings or None, got "
                        f"{options!r}.")
    fields = {f.name for f in dataclasses.fields(OutcomeSearch)} - {"method"}
    unknown = sorted(str(k) for k in options if k not in fields)
    if unknown:
        raise ValueError(f"{name} has no setting {', '.join(map(repr, unknown))}; the settings "
                         f"are {sorted(fields)} (the method is pareto_method's).")
    try:
        OutcomeSearch(**options)
    except (TypeError, ValueError) as error:
        raise type(error)(f"{name}: {error}") from None
    return dict(options)
