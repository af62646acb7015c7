"""The proposal policy: where the next trial goes, given a study's state.

A :class:`Proposer` follows one :class:`~mfbo.proposal.recipes.Recipe`: the initial design first, then
random points (while the model is not ready, and with the recipe's interleaving probability),
otherwise the maximiser of the acquisition over a candidate set, over random points refined
by local search, or (the recipe's Parzen steps) over points drawn from a density of the best
observations; some proposals are a local quadratic model's step instead.  Pending trials are
accounted for by a constant liar or by Thompson draws.  It reads a
:class:`~mfbo.study.Study` (observations, asked points, pending trials, candidate rows still
available) and never writes to it.
"""

from __future__ import annotations

import numbers

import numpy as np

from acquisitions import make_acquisition, maximize_over_candidates, maximize_random_local, snap

from ..space.candidates import CandidateSet
from .local_models import isotropic_step, linear_step, ordinal_as_continuous, quadratic_step
from .models import Model
from .parzen import good_region_sample
from .recipes import Recipe
from ..space import Space
from ..study.study import Study

__all__ = ["Proposer"]

#: random points tried for a random proposal before the study counts as exhausted
RANDOM_TRIES = 1000
#: with ``min_distance``, the initial design looks at most this many times ``n_initial``
#: points of its sequence for one far enough from the asked points
DESIGN_SKIPS = 64


def _load_proposal_modules() -> None:
    """Import the slow modules that proposals use (quasi-random designs, normal
    distribution functions), which ``import mfbo`` leaves out: here, when a proposer is made,
    and not on their first use, which falls inside the study's write transaction, where an
    import of a second would keep every other worker, and this process's heartbeat, waiting."""
    import scipy.special  # noqa: F401
    from scipy.stats import qmc  # noqa: F401


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
    """

    def __init__(self, space: Space, recipe: Recipe, model: Model, entropy,
                 candidates: CandidateSet | None = None, batch_strategy: str = "constant_liar",
                 liar: str = "min", min_distance: float = 0.0):
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
        set_levels = getattr(model, "set_levels", None)  # (a factory's model need not have it)
        if set_levels is not None:
            set_levels(space.levels)
        # one acquisition per weight of the recipe's kappa cycle; they differ only in kappa
        self._acquisitions = [make_acquisition(recipe.acquisition, kappa=k, xi=recipe.xi)
                              for k in recipe.kappas]
        self.acquisition = self._acquisitions[0]
        self._plateau_acquisition = None if recipe.plateau_kappa is None else \
            make_acquisition(recipe.acquisition, kappa=recipe.plateau_kappa, xi=recipe.xi)
        if (self.acquisition.thompson or batch_strategy == "thompson") and \
                model.is_informative and not hasattr(model, "predict_per_tree"):
            raise ValueError("Thompson sampling needs a surrogate with predict_per_tree.")
        self.n_initial = recipe.initial_size(len(space))
        self.candidates = candidates
        self.batch_strategy = batch_strategy
        self.liar = liar
        self.min_distance = float(min_distance)
        self._entropy = entropy
        self._init_U: np.ndarray | None = None  # the initial design's sequence so far
        #: why the last :meth:`propose` had nothing to propose (None after a proposal)
        self.last_exhaustion_reason: str | None = None
        self._fed = 0  # observations the model has seen
        self._told_repeat = False  # whether the model knows that a loss has repeated

    def observe(self, study: Study) -> None:
        """Tell the model the study's observations it has not seen yet (and, once, before
        them, that a loss has repeated)."""
        n = study.obs.n
        if n > self._fed:
            if study.loss_repeated and not getattr(self, "_told_repeat", True):
                # (a registered model factory need not subclass Model)
                tell = getattr(self.model, "on_repeated_loss", None)
                if tell is not None:
                    tell()
                self._told_repeat = True
            self.model.observe(study.obs.X, study.obs.y, n - self._fed)
            self._fed = n

    def _rng(self, number: int) -> np.random.Generator:
        return np.random.default_rng([*np.atleast_1d(self._entropy).tolist(), number])

    def propose(self, study: Study, lied: Model | None = None):
        """``((params, unit, candidate) or None, lied)``: the next trial of ``study`` (None when
        there is nothing left to propose).  ``lied`` is the constant liar's model copy of the
        previous proposal of the same ask, handed back to be extended by one lie."""
        number = study.n_trials
        rng = self._rng(number)
        cands = self.candidates
        if cands is not None and not study.available.any():
            self.last_exhaustion_reason = self._exhaustion_reason()
            return None, lied
        if number < self.n_initial:
            unit, cand = self._initial_point(study, number, rng)
        elif not self.model.ready or rng.random() < self.recipe.random_interleave or \
                self._on_plateau(study):
            unit, cand = self._random_point(study, rng)
        else:
            unit, converged = self._local_step(study, number, rng)
            cand = None
            if unit is None:
                unit, cand, lied = self._acquire(
                    study, rng, lied, parzen=converged and self.recipe.parzen_when_converged)
        if unit is None:
            self.last_exhaustion_reason = self._exhaustion_reason()
            return None, lied
        self.last_exhaustion_reason = None
        params = cands.params(cand) if cand is not None else self.space.from_unit(unit)[0]
        # the unit point of record is that of the params (rounded / snapped)
        unit = cands.U[cand] if cand is not None else self.space.to_unit([params])[0]
        return (params, unit, cand), lied

    def _exhaustion_reason(self) -> str:
        """Why nothing is left to propose (the study is exhausted)."""
        if self.candidates is not None:
            return "every candidate has been evaluated or is pending."
        if self.min_distance > 0:
            return (f"no point at least min_distance={self.min_distance:g} (max-norm in the "
                    f"unit cube) from every evaluated or pending point was found.")
        return (f"no configuration that is neither evaluated nor pending was found among "
                f"{RANDOM_TRIES} random points.")

    def _design_points(self, count: int) -> np.ndarray:
        """At least the first ``count`` points of the initial design's sequence (the design
        is its first ``n_initial``): the recipe's kind of design, continued beyond
        ``n_initial`` points where ``min_distance`` skips some (Sobol and random points by
        their own sequence, Latin hypercubes by further ones of ``n_initial`` points)."""
        if self._init_U is None or self._init_U.shape[0] < count:
            # the same stream every time: a longer sequence begins with the shorter one
            init_rng = np.random.default_rng([*np.atleast_1d(self._entropy).tolist(), 2**32 - 1])
            kind = self.recipe.initial_design
            if kind == "lhs":
                blocks = -(-max(count, self.n_initial) // self.n_initial)
                self._init_U = np.vstack([self.space.sample(self.n_initial, init_rng, kind)
                                          for _ in range(blocks)])
            else:
                self._init_U = self.space.sample(max(count, self.n_initial), init_rng, kind)
        return self._init_U

    def _initial_point(self, study: Study, number: int, rng):
        if self.min_distance > 0 and self.candidates is None:
            return self._far_design_point(study, number, rng)
        target = self._design_points(self.n_initial)[number]
        if self.candidates is not None:
            idx = np.flatnonzero(study.available)
            d = ((self.candidates.U[idx] - target) ** 2).sum(axis=1)
            return self.candidates.U[idx[np.argmin(d)]], int(idx[np.argmin(d)])
        if study.seen(self.space.from_unit(target)[0]):
            return self._random_point(study, rng)
        return target, None

    def _far_design_point(self, study: Study, number: int, rng):
        """Design point ``number``, or when it is within ``min_distance`` of an asked point
        (or is one), the next point of the design's sequence that is not; a random point
        that is not once :data:`DESIGN_SKIPS` ``* n_initial`` points have been looked at.
        A point skipped by an earlier trial stays too close (asked points only accumulate),
        and one taken by it is asked, so each trial looks from its own number on."""
        known = study.asked.X
        limit = DESIGN_SKIPS * self.n_initial
        start = number
        while start < limit:
            U = self._design_points(min(limit, 2 * start + self.n_initial))
            for u in U[start:]:
                if self._is_new(study, u, known):
                    return u, None
            start = U.shape[0]
        return self._random_point(study, rng)

    def _random_point(self, study: Study, rng):
        if self.candidates is not None:
            idx = np.flatnonzero(study.available)
            i = int(idx[rng.integers(idx.size)])
            return self.candidates.U[i], i
        known = study.asked.X
        for _ in range(RANDOM_TRIES):
            u = snap(rng.random(len(self.space)), self.space.levels)
            if self._is_new(study, u, known):
                return u, None
        return None, None

    def _on_plateau(self, study: Study) -> bool:
        """Whether the recipe's plateau escape is due: the observations since the initial
        design end in a run of ``k * plateau_escape`` (k >= 1) losses each equal to a loss
        observed before it, and no proposal has been made from these observations yet (in a
        batch, or with several workers asking before the next tell, one escape, not all).
        A failed trial's row (the worst loss so far) is such a repeat."""
        m = self.recipe.plateau_escape
        y = study.obs.y
        # the cheap tests first: the latest loss must itself be a repeat
        if not m or y.shape[0] - self.n_initial < m or study.n_asked_since_observed or \
                not np.any(y[:-1] == y[-1]):
            return False
        _, first, inverse = np.unique(y, return_index=True, return_inverse=True)
        repeat = (np.arange(y.shape[0]) > first[inverse.ravel()])[self.n_initial:]
        r = repeat.size if repeat.all() else int(np.argmin(repeat[::-1]))
        return r >= m and r % m == 0

    def _due(self, every: int, number: int) -> bool:
        """Whether proposal ``number`` is the ``every``-th since the initial design, or a
        multiple of it (``every`` = 0: never): the rule of the recipe's periodic steps."""
        return bool(every) and (number - self.n_initial) % every == every - 1

    def _local_step(self, study: Study, number: int, rng):
        """``(unit, converged)``: the local quadratic model's proposal (or, where the
        quadratic gives none, the recipe's isotropic or linear one) when the recipe asks for
        one at proposal ``number`` (sequential proposals in a continuous or mixed space
        only), else ``(None, converged)`` where ``converged`` says whether one was due but its
        minimiser is a point already asked."""
        if self.candidates is not None or study.pending or \
                not self._due(self.recipe.local_model_every, number):
            return None, False
        u = None
        levels = self.space.levels
        wider = ordinal_as_continuous(levels)  # integers of five levels or more freed
        has_ordinal = not np.array_equal(wider, levels)
        if self.recipe.local_integers and has_ordinal:
            u = quadratic_step(study.obs.X, study.obs.y, wider, rng)
        if u is None:
            u = quadratic_step(study.obs.X, study.obs.y, levels, rng)
        isotropic = self.recipe.local_isotropic
        if u is None and (isotropic is True or (isotropic and has_ordinal)):
            u = isotropic_step(study.obs.X, study.obs.y, wider,
                               if_curved=isotropic == "if-curved")
        if u is None and self.recipe.local_linear:
            u = linear_step(study.obs.X, study.obs.y, levels)
        if u is None:
            return None, False
        u = snap(u, levels)
        return (u, False) if self._is_new(study, u, study.asked.X) else (None, True)

    def _is_new(self, study: Study, u: np.ndarray, known: np.ndarray) -> bool:
        """Whether ``u`` is neither an asked configuration nor within ``min_distance`` of an
        asked point (``known``: their unit-cube rows)."""
        if self.min_distance > 0 and len(known) and \
                np.abs(known - u).max(axis=1).min() < self.min_distance:
            return False
        return not study.seen(self.space.from_unit(u)[0])

    def acquisition_for(self, n_observations: int, on_plateau: bool = False):
        """The acquisition of a proposal made from ``n_observations`` observations: the
        recipe's plateau weight if ``on_plateau`` (a loss has repeated) and it has one, else
        its kappa cycle's weight."""
        if on_plateau and self._plateau_acquisition is not None:
            return self._plateau_acquisition
        return self._acquisitions[n_observations % len(self._acquisitions)]

    def _score_fn(self, study: Study, model: Model, rng):
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

    def _acquire(self, study: Study, rng, lied, parzen: bool = False):
        """``(unit, candidate, lied)``: the acquisition's best new point (a Parzen step when
        ``parzen`` or when the recipe's period makes one due)."""
        model = self.model
        pending = study.pending
        if pending and self.batch_strategy == "constant_liar":
            X, y = study.obs.X, study.obs.y
            lie = {"min": y.min(), "mean": y.mean(), "max": y.max()}[self.liar]
            if lied is not None and lied._lies == len(pending) - 1:
                lied.add_lies(pending[-1].unit, lie)  # the trial proposed just before
            elif lied is None or lied._lies != len(pending):
                lied = model.with_lies(X, y, np.array([t.unit for t in pending]), lie)
            lied._lies = len(pending)
            model = lied
        score = self._score_fn(study, model, rng)
        # asked points (evaluated and pending): never proposed again, and ties of the
        # acquisition are broken away from them
        known = study.asked.X
        if self.candidates is not None:
            idx = maximize_over_candidates(score, self.candidates.U, study.available, 1, rng,
                                           far_from=known)
            if idx.size == 0:
                return None, None, lied
            i = int(idx[0])
            return self.candidates.U[i], i, lied
        recipe = self.recipe
        if parzen or self._due(recipe.parzen_every, study.n_trials):
            # a global step: the acquisition's best among points of the good region
            good = good_region_sample(study.obs.X, study.obs.y, self.space.levels,
                                      recipe.parzen_candidates, rng)
            pts = maximize_random_local(score, self.space.levels, n=10, rng=rng, n_random=0,
                                        extra=good, patience=0, exclude=study.asked_keys,
                                        far_from=known)
        else:
            pts = self._random_local(study, score, rng, known)
        for u in pts:
            if self._is_new(study, u, known):
                return u, None, lied
        unit, cand = self._random_point(study, rng)
        return unit, cand, lied

    def _random_local(self, study: Study, score, rng, known: np.ndarray) -> np.ndarray:
        """The acquisition's best points among random points refined by local searches from
        the best of them and the best observations (the recipe's settings)."""
        recipe = self.recipe
        starts = None
        if recipe.local_search:
            y = study.obs.y
            best = np.argpartition(y, 10)[:10] if y.size > 10 else np.arange(y.size)
            starts = study.obs.X[best[np.argsort(y[best], kind="stable")]]
        pts = maximize_random_local(
            score, self.space.levels, n=10, rng=rng,
            n_random=recipe.n_random_candidates, starts=starts,
            n_local=10 if recipe.local_search else 0,
            patience=recipe.patience if recipe.local_search else 0,
            min_improvement=recipe.min_improvement,
            search_patience=recipe.search_patience if recipe.local_search else 0,
            exclude=study.asked_keys, far_from=known, neighbourhood=recipe.neighbourhood,
            joint_dims=recipe.joint_move_dims)
        return pts
