"""Branch escape: after a run of proposals that all kept the best observation's categorical
choices, the acquisition's best point with other choices.

In a space with categorical parameters (a model family, a kernel, the parents of a
conditional space) the forest's mean in a choice that has seen only a few poor points is the
average of those points, its spread small, and the acquisition, whose local searches start
from the best observations, refines the incumbent's choice for the rest of the budget: a
run that found a good point of a poor branch early never looks at the others again.  A
:class:`BranchEscape` gives the model's best alternative one evaluation whenever the
proposals have kept to the incumbent's branch for a while: the acquisition is maximised over
the points whose categorical values (a parameter's inactivity counting as a value) differ
from the incumbent's.  It changes nothing in a space without categorical parameters.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ..._core.arguments import check_int
from .base import Context, Point, Step
from .categories import branch_codes
from .parzen import good_region_sample
from .stall import exchanges

__all__ = ["BranchEscape", "random_draws", "first_allowed_new", "MOVES"]

#: how a :class:`BranchEscape` chooses its point in the other branches
MOVES = ("search", "neighbour", "random", "parzen")


def random_draws(ctx: Context, parzen: bool, n: int = 64,
                 per_parameter: bool = False) -> np.ndarray:
    """``n`` uniformly random unit rows of the space (from ``ctx.rng``); with ``parzen`` their
    non-categorical coordinates drawn instead from the Parzen density of the best observations
    (:func:`~mfbo.proposal.steps.parzen.good_region_sample`), so that the good values of the
    parameters that branches share go with them; with ``per_parameter`` too, every coordinate,
    the categorical ones included, drawn from the density made for each parameter of the best
    observations where it is active (``good_region_sample``'s ``per_parameter``)."""
    space = ctx.space
    U = space.sample(n, ctx.rng)
    if parzen:
        G = good_region_sample(ctx.study.obs.X, ctx.study.obs.y, space.levels, n, ctx.rng,
                               per_parameter)
        U = G if per_parameter else np.where(space.levels < 0, U, G)
    return U


def first_allowed_new(ctx: Context, C: np.ndarray, keep=True) -> Point:
    """The first new row of the canonical rows ``C`` that ``keep`` (a mask) accepts and no
    forbidden condition holds for; a random point if there is none."""
    keep = keep & ctx.space.allowed(C)
    return ctx.first_new(C[keep]) if np.any(keep) else ctx.random_point()


@dataclass(frozen=True)
class BranchEscape(Step):
    """After ``window`` consecutive proposals since the initial design whose categorical
    values all equal those of the best observation, the acquisition's best new point whose
    categorical values differ from them (``n_random`` random points and local searches from
    them and from the best observation of each other branch).  Passes in a space without a
    categorical parameter and in a finite candidate set.

    Parameters
    ----------
    window : int, default=8
        How many proposals in a row must have kept the incumbent's categorical values.
    burst : int, default=1
        How many proposals in a row an escape makes in the branch it chose, unless that
        branch holds the best observation before it is over.
    n_random : int, default=2000
        Random points scored per escape before local search.
    move : {"search", "neighbour", "random"}, default="search"
        Where an escape's first point goes: ``"search"``, the acquisition's best point in the
        other branches (as above); ``"neighbour"``, the acquisition's best categorical
        one-exchange neighbour of the best observation (:meth:`neighbour`); ``"random"``, a
        uniformly random point of the other branches; ``"parzen"``, a point of the other
        branches, drawn uniformly, with its other parameters drawn from the Parzen density of
        the best observations (:meth:`random_elsewhere`).  The rest of a burst searches the
        branch chosen.
    """

    origin: ClassVar[str] = "branch"

    window: int = 8
    burst: int = 1
    n_random: int = 2_000
    move: str = "search"

    def __post_init__(self):
        check_int(self.window, "BranchEscape(window=...)")
        check_int(self.burst, "BranchEscape(burst=...)")
        if self.move not in MOVES:
            raise ValueError(f"BranchEscape(move=...) must be one of {MOVES}, got "
                             f"{self.move!r}.")
        check_int(self.n_random, "BranchEscape(n_random=...)")

    def due(self, ctx: Context, cat: np.ndarray, best: np.ndarray) -> bool:
        """Whether the last ``window`` asked points (all proposed after the initial design)
        share the best observation's categorical values ``best`` (its :func:`branch_codes`)."""
        w = self.window
        if ctx.number - ctx.proposer.n_initial < w:
            return False
        recent = branch_codes(ctx.study.asked.X[-w:], ctx.space.levels, cat)
        return recent.shape[0] == w and bool(np.all(recent == best))

    def continuing(self, ctx: Context, cat: np.ndarray, best: np.ndarray):
        """The categorical values of an escape still under way (fewer than ``burst`` escapes
        in a row at the end of the observations, and their branch not the incumbent's,
        ``best``), or None."""
        origins = ctx.study.obs_origins
        run = 0
        while run < len(origins) and origins[-1 - run] == self.origin:
            run += 1
        if run == 0 or run >= self.burst:
            return None
        last = branch_codes(ctx.study.obs.X[-1], ctx.space.levels, cat)
        return None if np.all(last == best) else last

    def propose(self, ctx: Context) -> Point | None:
        levels = ctx.space.levels
        cat = np.flatnonzero(levels < 0)
        study = ctx.study
        if ctx.candidates is not None or cat.size == 0 or study.obs.n == 0:
            return None
        X, y = study.obs.X, study.obs.y
        incumbent = X[int(np.argmin(y))]
        best = branch_codes(incumbent, levels, cat)
        target = self.continuing(ctx, cat, best)
        if target is None and not self.due(ctx, cat, best):
            return None
        score = ctx.score()
        if self.move in ("random", "parzen") and target is None:
            return self.random_elsewhere(ctx, cat, best, parzen=self.move == "parzen")
        if self.move == "neighbour" and target is None:
            point = self.neighbour(ctx, cat, score, incumbent)
            if point is not None:
                return point

        def inside(U):
            codes = branch_codes(U, levels, cat)
            if target is not None:
                return np.all(codes == target, axis=-1)
            return ~np.all(codes == best, axis=-1)

        # local searches start from the best observation of every branch searched, and from
        # the incumbent with those branches' categorical values (the parameters active in
        # both keep the incumbent's values)
        codes = branch_codes(X, levels, cat)
        ok = np.flatnonzero(inside(X))
        starts = None
        if ok.size:
            order = ok[np.argsort(y[ok], kind="stable")]
            _, first = np.unique(codes[order], axis=0, return_index=True)
            heads = X[order[np.sort(first)]][:10]
            moved = np.repeat(incumbent[None, :], heads.shape[0], axis=0)
            moved[:, cat] = heads[:, cat]
            outside = (moved < 0.0) | (moved > 1.0)
            moved[outside] = heads[outside]
            starts = np.clip(np.vstack([heads, moved]), 0.0, 1.0)
        return ctx.best_where(inside, self.n_random, starts)

    def neighbour(self, ctx: Context, cat: np.ndarray, score, inc: np.ndarray) -> Point | None:
        """The acquisition's best categorical one-exchange neighbour of the best observation
        ``inc`` (its unit row): its configuration with one active categorical parameter set
        to another value, every other parameter kept (a parameter this activates takes its
        value in the best observation where it is active, else the middle of its range); None
        when every neighbour is forbidden or asked."""
        space, X, y = ctx.space, ctx.study.obs.X, ctx.study.obs.y
        order = np.argsort(y, kind="stable")
        active = np.zeros_like(space.levels)  # the active categorical columns' levels
        on = cat[(inc[cat] >= 0.0) & (inc[cat] <= 1.0)]
        active[on] = space.levels[on]
        U = exchanges(inc, active)
        if U.shape[0] == 0:
            return None
        C = space.canonical(U)
        fill = (C >= 0.0) & (C <= 1.0) & ((U < 0.0) | (U > 1.0))
        for j in np.flatnonzero(fill.any(axis=0)):
            seen = order[(X[order, j] >= 0.0) & (X[order, j] <= 1.0)]
            U[fill[:, j], j] = X[seen[0], j] if seen.size else 0.5
        s = np.asarray(score(U), dtype=float)
        if not np.isfinite(s).any():
            return None
        i = int(np.argmax(s))
        return (U[i], None) if ctx.is_new(space.canonical(U[i:i + 1])[0]) else None

    def random_elsewhere(self, ctx: Context, cat: np.ndarray, best: np.ndarray,
                         parzen: bool = False) -> Point:
        """A random allowed new point whose categorical values differ from ``best`` (the
        first of up to 64 draws that does; else a random point): uniformly random, or with
        ``parzen`` its other coordinates drawn from the Parzen density of the best
        observations (:func:`~mfbo.proposal.steps.parzen.good_region_sample`), so that the
        good values of the parameters the branches share go with it."""
        C = ctx.space.canonical(random_draws(ctx, parzen))
        other = ~np.all(branch_codes(C, ctx.space.levels, cat) == best, axis=-1)
        return first_allowed_new(ctx, C, other)
