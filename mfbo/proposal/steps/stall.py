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
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ..._core.arguments import check_int
from .base import Context, Point, Step

__all__ = ["StallEscape", "failures_in_a_row", "MOVES"]

#: where a :class:`StallEscape` puts its point
MOVES = ("search", "random")


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
    move : {"search", "random"}, default="search"
        ``"search"``: the acquisition's best point away (random points and local searches
        from the best observations away); ``"random"``: a uniformly random point away (the
        first of 64 draws that is, else a random point).
    cells : bool, default=False
    """

    origin: ClassVar[str] = "stall"

    window: int = 8
    tol: float = 1e-3
    radius: float = 0.25
    n_random: int = 2_000
    move: str = "search"
    cells: bool = False

    def __post_init__(self):
        if self.move not in MOVES:
            raise ValueError(f"StallEscape(move=...) must be one of {MOVES}, got "
                             f"{self.move!r}.")
        if not isinstance(self.cells, bool):
            raise TypeError(f"StallEscape(cells=...) must be a bool, got {self.cells!r}.")
        check_int(self.window, "StallEscape(window=...)")
        check_int(self.n_random, "StallEscape(n_random=...)")
        for name in ("tol", "radius"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not (
                    0.0 <= value < 1.0):
                raise ValueError(f"StallEscape({name}=...) must be a number in [0, 1), got "
                                 f"{value!r}.")

    def due(self, ctx: Context) -> bool:
        """Whether the observations end in a positive multiple of ``window`` failures and no
        proposal has been made from them yet (one escape per batch)."""
        study = ctx.study
        if study.n_asked_since_observed:
            return False
        r = failures_in_a_row(study.obs.y, ctx.proposer.n_initial, self.tol)
        return r >= self.window and r % self.window == 0

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
        if ctx.candidates is not None or study.obs.n == 0 or not self.due(ctx):
            return None
        X, y = study.obs.X, study.obs.y
        levels = space.levels
        inc = X[int(np.argmin(y))]
        if self.move == "random":
            C = space.canonical(space.sample(64, ctx.rng))
            keep = self.away(C, inc, levels) & space.allowed(C)
            return ctx.first_new(C[keep]) if keep.any() else ctx.random_point()
        out = np.flatnonzero(self.away(X, inc, levels))
        starts = X[out[np.argsort(y[out], kind="stable")][:10]] if out.size else None
        if starts is not None:
            starts = np.clip(starts, 0.0, 1.0)
        return ctx.best_where(lambda U: self.away(U, inc, levels), self.n_random, starts)
