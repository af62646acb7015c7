"""The proposal policy at work: where the next trial goes, given a study's state.

A :class:`Proposer` follows one :class:`~mfbo.proposal.recipes.Recipe`: its initial design
first, then random points while the model is not ready, then the recipe's steps in order
(:mod:`mfbo.proposal.steps`), the first that proposes a point deciding the trial.  Pending
trials are accounted for by a constant liar or by Thompson draws.  It reads a
:class:`~mfbo.study.study.Study` (observations, asked points, pending trials, candidate rows
still available) and never writes to it.
"""

from __future__ import annotations

import numbers

import numpy as np

from acquisitions import snap

from ..space import Space
from ..space.candidates import CandidateSet
from ..study.study import Study
from .models import Model
from .recipes import Recipe
from .steps import EXHAUSTED, AcquisitionSearch, Context, OutcomeSearch, PlateauEscape, \
    RandomInterleave, run_steps
from .steps.outcomes import clipped_losses
from .steps.plateau import in_plateaus, plateau_boxes
from .steps.slices import SliceIndex, Slices, in_slices, plateau_slices

__all__ = ["Proposer"]

#: random points tried for a random proposal before the study counts as exhausted
RANDOM_TRIES = 1000


def _load_proposal_modules() -> None:
    """Import the slow modules that proposals use (quasi-random designs, normal
    distribution functions), which ``import mfbo`` leaves out: here, when a proposer is made,
    and not on their first use, which falls inside the study's write transaction, where an
    import of a second would keep every other worker, and this process's heartbeat, waiting."""
    import scipy.special  # noqa: F401
    from scipy.stats import qmc  # noqa: F401


def outcome_steps(recipe: Recipe, method: str = "auto", options=None) -> tuple:
    """The policy of a study of several objectives or with constraints: the recipe's random
    interleaving, then :class:`~mfbo.proposal.steps.OutcomeSearch` with the settings of the
    recipe's acquisition search, of whose random points it scores half (the other steps read
    one loss), and then ``options``, a mapping of OutcomeSearch's settings that replace
    those (its ``method`` is ``method``)."""
    steps = [s for s in recipe.steps if isinstance(s, RandomInterleave)]
    search = recipe.step(AcquisitionSearch)
    settings = {} if search is None else {
        f: getattr(search, f) for f in ("n_random", "local_search", "patience",
                                        "min_improvement", "search_patience",
                                        "neighbourhood", "joint_move_dims")}
    settings.update(options or {})
    return (*steps, OutcomeSearch(method=method, **settings))


class Proposer:
    """Proposals of one study under one recipe.

    Parameters
    ----------
    space : Space
    recipe : Recipe
    model : Model
        Built from ``recipe``; fed the study's observations by :meth:`observe`.
    entropy : int or sequence of int
        The study's seed: proposal ``i`` draws from its own stream ``(entropy, i)``, so a study
        is reproducible and parallel processes do not collide.
    candidates : CandidateSet or None
        The finite set proposals are taken from (exact enumeration), if any.
    batch_strategy : {"constant_liar", "thompson"}, default="constant_liar"
    liar : {"min", "mean", "max"}, default="min"
    min_distance : float, default=0
        See :class:`~mfbo.Optimizer`.
    outputs : list of Model, optional
        In a study of several objectives or with constraints, the models of the outcomes
        after the first objective (the other objectives' losses, then the constraints'
        values: the columns of the study's :attr:`~mfbo.study.Rows.Y`), built like ``model``
        and from the same seed; the policy after the initial design is then the recipe's
        random interleaving followed by :class:`~mfbo.proposal.steps.OutcomeSearch`.
    pareto_method : {"auto", "hvi", "parego"}, default="auto"
        :class:`~mfbo.proposal.steps.OutcomeSearch`'s method with several objectives.
    outcome_options : mapping or None, default=None
        Further settings of that :class:`~mfbo.proposal.steps.OutcomeSearch`
        (:func:`outcome_steps`).
    """

    def __init__(self, space: Space, recipe: Recipe, model: Model, entropy,
                 candidates: CandidateSet | None = None, batch_strategy: str = "constant_liar",
                 liar: str = "min", min_distance: float = 0.0, outputs=None,
                 pareto_method: str = "auto", outcome_options=None):
        _load_proposal_modules()
        if batch_strategy not in ("constant_liar", "thompson"):
            raise ValueError(f"batch_strategy must be 'constant_liar' or 'thompson', got "
                             f"{batch_strategy!r}.")
        if liar not in ("min", "mean", "max"):
            raise ValueError(f"liar must be 'min', 'mean' or 'max', got {liar!r}.")
        if not (isinstance(min_distance, numbers.Real) and 0 <= min_distance < 1):
            raise ValueError(f"min_distance must be in [0, 1), got {min_distance!r}.")
        self.space = space
        self.recipe = recipe
        self.model = model
        #: every outcome's model: ``model`` first (the study's first objective), then ``outputs``
        self.models = [model, *(outputs or [])]
        self.n_initial = recipe.initial_size(len(space))
        for m in self.models:  # (a factory's model need not have these hooks)
            set_levels = getattr(m, "set_levels", None)
            if set_levels is not None:
                set_levels(space.levels)
            set_initial_size = getattr(m, "set_initial_size", None)
            if set_initial_size is not None:
                set_initial_size(self.n_initial)
        #: the policy after the initial design
        self.steps = recipe.steps if not outputs else outcome_steps(recipe, pareto_method,
                                                                    outcome_options)
        #: whether an infeasible trial's loss is told raised to the best feasible loss
        #: (``OutcomeSearch(infeasible_losses="clipped")``, with one objective)
        self._clips = bool(outputs) and self.steps[-1].infeasible_losses == "clipped"
        escape = recipe.step(PlateauEscape)
        #: whether no point inside a plateau already bracketed is proposed (one objective)
        self.excludes_plateaus = not outputs and escape is not None and escape.exclude
        #: whether slices of a space without a continuous coordinate are plateaus too
        self._plateau_slices = self.excludes_plateaus and escape.slices
        #: how far a slice reaches in the integer coordinates its two observations differ in
        #: (None: all their values)
        self._reach = escape.reach if self._plateau_slices else None
        self._plateaus = (-1, [])  # (observations they were made from, boxes)
        #: (observations they were made from, slices, those observations' points and losses)
        self._slice_ranges = (-1, [], None)
        self._slice_index = (None, None)  # (the slices, their SliceIndex)
        self._clip_level: float | None = None  # the best feasible loss the model was told
        # one acquisition per weight of the recipe's kappa cycle; they differ only in kappa
        self._acquisitions, self._plateau_acquisition = recipe.acquisition.functions()
        self.acquisition = self._acquisitions[0]
        if (self.acquisition.thompson or batch_strategy == "thompson") and \
                model.is_informative and not hasattr(model, "predict_per_tree"):
            raise ValueError("Thompson sampling needs a surrogate with predict_per_tree.")
        self.candidates = candidates
        self.batch_strategy = batch_strategy
        self.liar = liar
        self.min_distance = float(min_distance)
        self._entropy = entropy
        self._init_U: np.ndarray | None = None  # the initial design's sequence so far
        #: why the last :meth:`propose` had nothing to propose (None after a proposal)
        self.last_exhaustion_reason: str | None = None
        self._fed = 0  # observations the models have seen
        self._told_repeat = False  # whether the model knows that a loss has repeated

    #: the state a proposer pickled by an earlier version may lack, with the values that
    #: reproduce its behaviour then
    _PICKLE_DEFAULTS = {"_clips": False, "_clip_level": None, "_told_repeat": True,
                        "excludes_plateaus": False, "_plateaus": (-1, []),
                        "_plateau_slices": False, "_reach": None,
                        "_slice_ranges": (-1, [], None), "_slice_index": (None, None)}

    def __setstate__(self, state: dict) -> None:
        for name, value in self._PICKLE_DEFAULTS.items():
            state.setdefault(name, value)
        state.pop("_slices", None)  # an earlier cache of slices in another form; remade
        self.__dict__.update(state)

    def observe(self, study: Study) -> None:
        """Tell the model the study's observations it has not seen yet (and, once, before
        the one that first repeated a loss, that a loss has repeated).  A model whose state
        depends on how they are grouped (``one_at_a_time``) gets them one at a time, so that
        its state is that of the observations in their order alone: a study reopened from its
        journal, or one whose other workers' trials were read in a batch, proposes as the
        uninterrupted run of one process does."""
        n = study.obs.n
        X = study.obs.X
        # (a registered model factory need not subclass Model)
        one = getattr(self.model, "one_at_a_time", False)
        repeat = study.first_repeat
        while self._fed < n:
            end = self._fed + 1 if one else n
            if repeat is not None and repeat < end and not self._told_repeat:
                tell = getattr(self.model, "on_repeated_loss", None)
                if tell is not None:
                    tell()
                self._told_repeat = True
            y, level = self.losses(study, end)
            if level != self._clip_level:
                if self._fed:  # the losses told before are raised to another level
                    getattr(self.model, "on_targets_changed", lambda: None)()
                self._clip_level = level
            self.model.observe(X[:end], y, end - self._fed)
            for j, m in enumerate(self.models[1:], start=1):
                m.observe(X[:end], study.obs.Y[:end, j], end - self._fed)
            self._fed = end

    def losses(self, study: Study, end: int | None = None) -> tuple[np.ndarray, float | None]:
        """``(losses, level)``: what the model is told of the first ``end`` observations
        (all: None), the study's losses, but for an infeasible trial of a study of one
        objective with constraints, whose loss is raised to ``level``, the best feasible
        loss (:func:`~mfbo.proposal.steps.outcomes.clipped_losses`; None where nothing is
        raised)."""
        y = study.obs.y[:end]
        if not self._clips or study.objectives.k != 1:
            return y, None
        return clipped_losses(y, study.obs.Y[:end])

    def _rng(self, number: int) -> np.random.Generator:
        return np.random.default_rng([*np.atleast_1d(self._entropy).tolist(), number])

    def propose(self, study: Study, lied: Model | None = None):
        """``((params, unit, candidate, origin) or None, lied)``: the next trial of ``study``
        (None when there is nothing left to propose); ``origin`` names the step that proposed
        it (:attr:`~mfbo.Trial.origin`).  ``lied`` is the constant liar's model copy of the
        previous proposal of the same ask, handed back to be extended by one lie."""
        number = study.n_trials
        cands = self.candidates
        if cands is not None and not study.available.any():
            self.last_exhaustion_reason = self._exhaustion_reason()
            return None, lied
        ctx = Context(self, study, number, self._rng(number), lied)
        if number < self.n_initial:
            unit, cand = self.recipe.initial_design.propose(ctx)
            origin = self.recipe.initial_design.origin
        elif not self.model.ready:
            (unit, cand), origin = ctx.random_point(), "random"
        else:
            (unit, cand), origin = run_steps(self.steps, ctx)
        lied = ctx.lied
        if unit is None:
            self.last_exhaustion_reason = self._exhaustion_reason()
            return None, lied
        self.last_exhaustion_reason = None
        params = cands.params(cand) if cand is not None else self.space.from_unit(unit)[0]
        # the unit point of record is that of the params (rounded / snapped)
        unit = cands.U[cand] if cand is not None else self.space.to_unit([params])[0]
        return (params, unit, cand, origin), lied

    def _exhaustion_reason(self) -> str:
        """Why nothing is left to propose (the study is exhausted)."""
        if self.candidates is not None:
            return "every candidate has been evaluated or is pending."
        if self.min_distance > 0:
            return (f"no point at least min_distance={self.min_distance:g} (max-norm in the "
                    f"unit cube) from every evaluated or pending point was found.")
        return (f"no configuration that is neither evaluated nor pending was found among "
                f"{RANDOM_TRIES} random points.")

    def design_points(self, count: int) -> np.ndarray:
        """At least the first ``count`` points of the initial design's sequence (the design
        is its first ``n_initial``), continued beyond ``n_initial`` points where
        ``min_distance`` skips some; drawn once from the study's design stream and kept."""
        if self._init_U is None or self._init_U.shape[0] < count:
            # the same stream every time: a longer sequence begins with the shorter one
            init_rng = np.random.default_rng([*np.atleast_1d(self._entropy).tolist(), 2**32 - 1])
            self._init_U = self.recipe.initial_design.points(self.space, count, self.n_initial,
                                                              init_rng)
        return self._init_U

    def random_point(self, study: Study, rng):
        """A uniformly random point neither asked nor too near an asked one (a random
        available candidate in a finite space), or ``(None, None)``."""
        if self.candidates is not None:
            idx = np.flatnonzero(study.available)
            i = int(idx[rng.integers(idx.size)])
            return self.candidates.U[i], i
        known = study.asked.X
        for _ in range(RANDOM_TRIES):
            # (in a conditional space is_new compares the canonical form, and the point of
            # record is that of its params)
            u = snap(rng.random(len(self.space)), self.space.levels)
            # (a random point may land on a plateau: a study whose observations bracket the
            # whole space is not exhausted)
            if self.is_new(study, u, known, plateaus=False):
                return u, None
        return EXHAUSTED

    def is_new(self, study: Study, u: np.ndarray, known: np.ndarray,
               plateaus: bool = True) -> bool:
        """Whether ``u`` is neither an asked configuration nor within ``min_distance`` of an
        asked point (``known``: their unit-cube rows); in a conditional space, also whether
        it is allowed (its canonical form is the one compared); with ``plateaus``, where the
        recipe's plateau escape excludes them, also whether it lies outside the plateaus the
        observations bracket."""
        if self.space.constrained:
            u = self.space.canonical(u)[0]
            if not self.space.allowed(u)[0]:
                return False
        if self.min_distance > 0 and len(known) and \
                np.abs(known - u).max(axis=1).min() < self.min_distance:
            return False
        if plateaus and self.excludes_plateaus and self.in_plateaus(u, study)[0]:
            return False
        return not study.seen(self.space.from_unit(u)[0])

    def outside_plateaus(self, score, study: Study):
        """``score`` (a function of unit points) with ``-inf`` inside the plateaus the
        study's observations bracket.  In a conditional space it is to be called with
        canonical points, as :meth:`~mfbo.proposal.steps.Context.wrap_score` calls it."""
        if not self.plateaus(study) and not self.slices(study):
            return score

        def wrapped(U):
            inside = self.in_plateaus(U, study)
            if not inside.any():
                return np.asarray(score(U), dtype=float).copy()
            # only the points outside are scored (the acquisition is a function of each
            # point alone): where most candidates lie in plateaus, most of the model's cost
            out = np.full(inside.shape[0], -np.inf)
            if not inside.all():
                out[~inside] = score(np.atleast_2d(U)[~inside])
            return out
        return wrapped

    def in_plateaus(self, U, study: Study) -> np.ndarray:
        """Whether each unit row of ``U`` lies in a plateau the study's observations
        bracket: a box (:func:`in_plateaus`) or, with the plateau escape's ``slices``, a
        slice (:func:`in_slices`)."""
        levels = self.space.levels
        inside = in_plateaus(U, self.plateaus(study), levels)
        slices = self.slices(study)
        if not slices:
            return inside
        indexed, index = self._slice_index
        if indexed is not slices:  # (an index pickled by an earlier version is made afresh)
            index = index.updated(slices) if isinstance(index, SliceIndex) else \
                SliceIndex(slices, levels)
            self._slice_index = (slices, index)
        return inside | in_slices(U, slices, levels, index)

    def slices(self, study: Study) -> Slices | list:
        """The slices the study's observations make plateaus (:func:`plateau_slices`;
        none, an empty list, without the plateau escape's ``slices``), made once per number of
        observations."""
        if not self._plateau_slices:
            return []
        X, y = study.obs.X, study.obs.y
        m, slices, seen = self._slice_ranges
        if m != y.shape[0]:
            # observations are appended: only the pairs with a new one are made, unless an
            # earlier observation has changed (then all of them)
            earlier = (m, slices) if 0 < m < y.shape[0] and \
                np.array_equal(y[:m], seen[1], equal_nan=True) and \
                np.array_equal(X[:m], seen[0]) else None
            slices = plateau_slices(X, y, self.space.levels, self._reach, earlier)
            self._slice_ranges = (y.shape[0], slices, (X.copy(), y.copy()))
        return slices

    def plateaus(self, study: Study) -> list:
        """The plateaus the study's observations bracket (:func:`plateau_boxes`), made
        once per number of observations."""
        n = study.obs.n
        if self._plateaus[0] != n:
            self._plateaus = (n, plateau_boxes(study.obs.X, study.obs.y, self.space.levels))
        return self._plateaus[1]

    def acquisition_for(self, n_observations: int, on_plateau: bool = False):
        """The acquisition of a proposal made from ``n_observations`` observations: the
        recipe's plateau weight if ``on_plateau`` (a loss has repeated) and it has one, else
        its kappa cycle's weight."""
        if on_plateau and self._plateau_acquisition is not None:
            return self._plateau_acquisition
        return self._acquisitions[n_observations % len(self._acquisitions)]

    def scoring_model(self, study: Study, lied):
        """``(model, lied)``: the model to score with; with trials pending under the constant
        liar, a copy told the lies (``lied``, extended by one lie from the previous proposal
        of the same ask where it can be)."""
        pending = study.pending
        if not (pending and self.batch_strategy == "constant_liar"):
            return self.model, lied
        X, (y, _) = study.obs.X, self.losses(study)
        lie = {"min": y.min(), "mean": y.mean(), "max": y.max()}[self.liar]
        if lied is not None and lied._lies == len(pending) - 1:
            lied.add_lies(pending[-1].unit, lie)  # the trial proposed just before
        elif lied is None or lied._lies != len(pending):
            lied = self.model.with_lies(X, y, np.array([t.unit for t in pending]), lie)
        lied._lies = len(pending)
        return lied, lied

    def score_fn(self, study: Study, model: Model, rng):
        """The acquisition of this proposal as a function of unit points (higher is better):
        one tree's prediction under Thompson sampling."""
        acq = self.acquisition_for(study.obs.n, study.loss_repeated)
        thompson = acq.thompson or self.batch_strategy == "thompson" and bool(study.pending)
        if thompson:
            mean_t, _ = model.predict_per_tree(np.zeros((1, len(self.space))))
            tree = int(rng.integers(mean_t.shape[1]))

            def score(U):
                return -model.predict_per_tree(U)[0][:, tree]
            return score
        best = model.incumbent(study.obs.y) if acq.needs_best else None

        def score(U):
            m, s = model.predict(U)
            return acq(m, s, best)
        return score
