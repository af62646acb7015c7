"""Stall escape: after a run of evaluations that did not improve the best loss, the
acquisition's best point away from the incumbent.

The forest's steps refine around the best observation; when that observation sits in a poor
basin (a polynomial degree, a loss function, a kernel whose design points happened to be
good) they keep refining it, each evaluation a little better or no better, for the rest of
the budget.  TuRBO (Eriksson et al. 2019) counts consecutive evaluations that fail to improve
the best by a relative margin and restarts elsewhere after a run of them; a
:class:`StallEscape` does the same within one model: after ``window`` failures in a row it
proposes the acquisition's best point outside a box around the incumbent (another value of a
categorical parameter, or a coordinate at least ``radius`` of its range away), so that the
model's own view of the rest of the space is tried once before refining resumes.

The move ``"exchange"`` asks the objective instead of the model where the model cannot know:
a forest predicts a combination of categorical values it has never observed from the leaves
of others, so the escape tries the incumbent itself with one discrete value changed (SMAC's
one-exchange neighbourhood, Hutter et al. 2011, section 4.3, in the discrete coordinates
only), the neighbour the acquisition scores best.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from acquisitions import level_index

from ..._core.arguments import check_int
from .base import Context, Point, Step
from .categories import branch_codes

__all__ = ["StallEscape", "failures_in_a_row", "exchanges", "seen_categories", "MOVES"]

#: where a :class:`StallEscape` puts its point
MOVES = ("search", "random", "exchange")


def failures_in_a_row(y: np.ndarray, n_initial: int, tol: float) -> int:
    """How many of the last losses ``y`` after the first ``n_initial`` failed in a row to
    improve the best loss before them by more than ``tol`` times its magnitude."""
    y = np.asarray(y, dtype=float)
    if y.shape[0] <= n_initial:
        return 0
    start = max(n_initial, 1)
    best = np.minimum.accumulate(y)[start - 1:-1]  # the best before each later loss
    success = y[start:] < best - tol * np.abs(best)
    hits = np.flatnonzero(success)
    return int(success.size - (hits[-1] + 1 if hits.size else 0))


def exchanges(u: np.ndarray, levels: np.ndarray, integers: bool = True) -> np.ndarray:
    """The one-exchange neighbours of the unit point ``u`` in its discrete coordinates: ``u``
    with one categorical coordinate at another of its values, or (with ``integers``) one
    integer coordinate one level up or down (level centres; the other coordinates kept), as
    rows, in the order of the coordinates; an empty ``(0, D)`` array where the space has no
    such coordinate."""
    u = np.asarray(u, dtype=float)
    levels = np.asarray(levels)
    rows = []
    for d in np.flatnonzero(levels if integers else levels < 0):
        k = abs(int(levels[d]))
        own = int(level_index(u[d], k))
        others = [i for i in range(k) if i != own] if levels[d] < 0 else \
            [i for i in (own - 1, own + 1) if 0 <= i < k]
        for i in others:
            row = u.copy()
            row[d] = (i + 0.5) / k
            rows.append(row)
    return np.array(rows).reshape(len(rows), u.shape[0])


def seen_categories(U: np.ndarray, X: np.ndarray, levels) -> np.ndarray:
    """Whether each unit row of ``U`` has the categorical values, all together, of a row of
    ``X`` (True for every row in a space without a categorical coordinate)."""
    levels = np.asarray(levels)
    cat = np.flatnonzero(levels < 0)
    U = np.atleast_2d(U)
    if cat.size == 0 or X.shape[0] == 0:
        return np.full(U.shape[0], cat.size == 0)
    a, b = branch_codes(U, levels, cat), branch_codes(X, levels, cat)
    return (a[:, None, :] == b[None, :, :]).all(axis=2).any(axis=1)


@dataclass(frozen=True)
class StallEscape(Step):
    """After ``k * window`` (k >= 1) evaluations in a row since the initial design that did
    not improve the best loss by more than ``tol`` of its magnitude, the acquisition's best
    new point outside the box around the best observation: a categorical value other than
    its own, or a coordinate more than ``radius`` (of the unit interval) from its own (with
    ``cells``, in a space with a categorical or integer parameter, only those parameters
    count: a continuous coordinate's distance does not make a point away).

    Parameters
    ----------
    window : int, default=8
    tol : float, default=1e-3
        TuRBO's margin of a success.
    radius : float, default=0.25
    n_random : int, default=2000
        Random points scored per escape before local search.
    move : {"search", "random", "exchange"}, default="search"
        ``"search"``: the acquisition's best point away (random points and local searches
        from the best observations away); ``"random"``: a uniformly random point away (the
        first of 64 draws that is, else a random point); ``"exchange"``: of the incumbent's
        one-exchange neighbours in the discrete coordinates (:func:`exchanges`) not yet
        asked, the one the acquisition scores best (the step passes where there is none, as
        in a space without categorical or integer coordinates); ``radius`` and ``cells`` do
        not apply to it.
    cells : bool, default=False
    integers : bool, default=True
        Whether an ``"exchange"`` also moves an integer coordinate one level (else only the
        categorical ones: the combinations of values a forest predicts from other
        combinations' leaves, while neighbouring integer levels share its leaves).
    novel : bool, default=False
        Whether an ``"exchange"`` only goes to a neighbour whose categorical values, all
        together, no observation has (a combination the forest can only predict from
        others'); the step passes where every such neighbour has been observed.
    conditional : bool, default=True
        Whether the step acts in a conditional space (one with a parameter that has a
        condition); False: it passes there, where a
        :class:`~mfbo.proposal.steps.BranchBandit` is the policy's answer to a stall.
    """

    origin: ClassVar[str] = "stall"

    window: int = 8
    tol: float = 1e-3
    radius: float = 0.25
    n_random: int = 2_000
    move: str = "search"
    cells: bool = False
    conditional: bool = True
    integers: bool = True
    novel: bool = False
    max_escapes: int = 0

    def __post_init__(self):
        if self.move not in MOVES:
            raise ValueError(f"StallEscape(move=...) must be one of {MOVES}, got "
                             f"{self.move!r}.")
        for name in ("cells", "conditional", "integers", "novel"):
            if not isinstance(getattr(self, name), bool):
                raise TypeError(f"StallEscape({name}=...) must be a bool, got "
                                f"{getattr(self, name)!r}.")
        check_int(self.window, "StallEscape(window=...)")
        check_int(self.n_random, "StallEscape(n_random=...)")
        check_int(self.max_escapes, "StallEscape(max_escapes=...)", minimum=0)
        for name in ("tol", "radius"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not (
                    0.0 <= value < 1.0):
                raise ValueError(f"StallEscape({name}=...) must be a number in [0, 1), got "
                                 f"{value!r}.")

    def due(self, ctx: Context) -> bool:
        """Whether the observations end in a positive multiple of ``window`` failures (at
        most ``max_escapes`` times it, where that is set) and no proposal has been made from
        them yet (one escape per batch)."""
        study = ctx.study
        if study.n_asked_since_observed:
            return False
        r = failures_in_a_row(study.obs.y, ctx.proposer.n_initial, self.tol)
        cap = self.max_escapes * self.window if self.max_escapes else r
        return self.window <= r <= cap and r % self.window == 0

    def away(self, U: np.ndarray, inc: np.ndarray, levels: np.ndarray) -> np.ndarray:
        """Which unit rows of ``U`` lie outside the box around ``inc``."""
        U = np.atleast_2d(U)
        cat = levels < 0
        far = np.abs(U - inc) > self.radius
        if cat.any():
            far[:, cat] = np.abs(U[:, cat] - inc[cat]) > 1e-12
        if self.cells and np.any(levels != 0):
            far = far[:, levels != 0]
        return far.any(axis=1)

    def propose(self, ctx: Context) -> Point | None:
        study, space = ctx.study, ctx.space
        if ctx.candidates is not None or study.obs.n == 0 or (
                space.conditional and not self.conditional) or not self.due(ctx):
            return None
        X, y = study.obs.X, study.obs.y
        levels = space.levels
        inc = X[int(np.argmin(y))]
        if self.move == "exchange":
            return self.exchange(ctx, inc)
        if self.move == "random":
            C = space.canonical(space.sample(64, ctx.rng))
            keep = self.away(C, inc, levels) & space.allowed(C)
            return ctx.first_new(C[keep]) if keep.any() else ctx.random_point()
        out = np.flatnonzero(self.away(X, inc, levels))
        starts = X[out[np.argsort(y[out], kind="stable")][:10]] if out.size else None
        if starts is not None:
            starts = np.clip(starts, 0.0, 1.0)
        return ctx.best_where(lambda U: self.away(U, inc, levels), self.n_random, starts)

    def exchange(self, ctx: Context, inc: np.ndarray) -> Point | None:
        """The acquisition's best new one-exchange neighbour of ``inc``, or None."""
        space = ctx.space
        N = exchanges(inc, space.levels, self.integers)
        if space.constrained and N.shape[0]:
            N = space.canonical(N)
        known = ctx.study.asked.X
        N = N[[ctx.is_new(u, known) for u in N]] if N.shape[0] else N
        if self.novel and N.shape[0]:
            N = N[~seen_categories(N, ctx.study.obs.X, space.levels)]
        if N.shape[0] == 0:
            return None
        scores = np.asarray(ctx.score()(N), dtype=float)
        return N[int(np.argmax(scores))], None
