"""Branch bandit: the choice that a conditional space branches on (a model family, say) as the
arms of a max-armed bandit, so that a branch seen only at poor settings is looked at again.

In a conditional space the forest's mean in a branch that has seen two poor points is their
average, its spread small, and a run can refine another branch for the rest of its budget
although the poor points were poor for a reason the branch does not share (a preprocessing
that dropped the informative features, a regularisation far too strong).  Balef, Vernade
and Eggensperger (2025, "Put CASH on Bandits: a max K-armed problem for automated machine
learning") choose the model family of each evaluation by MaxUCB: with the losses min-max
scaled to rewards in [0.01, 0.99], arm ``k``'s index is its best reward plus
``(alpha * ln t / n_k) ** 2`` (``t``: evaluations so far, ``n_k``: arm ``k``'s), a bonus made
for the short-tailed rewards of tuning.  A :class:`BranchBandit` computes that index before
every proposal after the initial design; when its largest is not the incumbent's arm it
proposes a point of that arm, otherwise it passes to the next step (the forest's own
proposal).  It passes in a space whose categorical parameters are no condition's parents.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from acquisitions import level_index

from ..._core.arguments import check_int
from .base import Context, Point, Step
from .branch import first_allowed_new, random_draws
from .stall import failures_in_a_row

__all__ = ["BranchBandit", "branch_dimension", "max_ucb"]

#: how a :class:`BranchBandit` chooses its point in the arm it pulls
MOVES = ("search", "random", "parzen")


def branch_dimension(space) -> int | None:
    """The column of the unconditional categorical parameter on which the most conditions
    depend, directly or through a conditional parent (the first of equals), or None."""
    index = {n: d for d, n in enumerate(space.names)}
    dims = list(space.dimensions.values())

    def roots(d, seen=()):
        cond = dims[d].when
        if cond is None or d in seen:
            return set()
        out = set()
        for name in cond.parents():
            p = index[name]
            out |= {p} | roots(p, (*seen, d))
        return out

    counts = np.zeros(len(dims), dtype=int)
    for d in range(len(dims)):
        for p in roots(d):
            counts[p] += 1
    top = [d for d in range(len(dims)) if dims[d].when is None and space.levels[d] < 0
           and counts[d] > 0]
    return max(top, key=lambda d: (counts[d], -d)) if top else None


def max_ucb(arms: np.ndarray, y: np.ndarray, n_arms: int, alpha: float) -> np.ndarray:
    """MaxUCB's index of each of ``n_arms`` arms from the losses ``y`` of the pulls of arms
    ``arms`` (rewards ``-y`` min-max scaled to [0.01, 0.99]; ``inf`` for an arm never pulled)."""
    r = -np.asarray(y, dtype=float)
    lo, hi = r.min(), r.max()
    r = 0.01 + 0.98 * ((r - lo) / (hi - lo) if hi > lo else np.ones_like(r))
    log_t = np.log(r.size)
    out = np.full(n_arms, np.inf)
    for k in range(n_arms):
        mine = r[arms == k]
        if mine.size:
            out[k] = mine.max() + (alpha * log_t / mine.size) ** 2
    return out


@dataclass(frozen=True)
class BranchBandit(Step):
    """Before each proposal after the initial design, MaxUCB's choice among the values of
    the space's branching parameter (:func:`branch_dimension`) from the observations; a point
    of that arm when it is not the best observation's, else pass.  A failed evaluation counts
    with the loss the study holds for it (:class:`~mfbo.study.Study`'s ``on_failure``).
    Passes in a space without a branching parameter and in a finite candidate set.

    Parameters
    ----------
    alpha : float, default=0.5
        MaxUCB's exploration weight (the authors' default).
    move : {"search", "random", "parzen"}, default="parzen"
        The point in the arm pulled: the acquisition's best point of the arm (``n_random``
        random points and local searches from the arm's best observations); a uniformly
        random point of the arm; or one whose other parameters are drawn from the Parzen
        density of the best observations, so that the good values of the parameters the
        arms share (a preprocessing) go with it.
    n_random : int, default=2000
        Random points scored per ``"search"`` proposal before local search.
    patience : int, default=6
        With ``patience > 0`` the bandit is asked only while the run stalls: after at least
        ``patience`` evaluations in a row that did not improve the best loss by more than
        ``tol`` of its magnitude (:func:`~mfbo.proposal.steps.stall.failures_in_a_row`,
        TuRBO's count); 0: before every proposal, as MaxUCB itself.
    tol : float, default=1e-3
        The margin of an improvement that ends a stall.
    """

    origin: ClassVar[str] = "bandit"

    alpha: float = 0.5
    move: str = "parzen"
    n_random: int = 2_000
    patience: int = 6
    tol: float = 1e-3

    def __post_init__(self):
        if isinstance(self.alpha, bool) or not isinstance(self.alpha, (int, float)) or not (
                0 < self.alpha < float("inf")):
            raise ValueError(f"BranchBandit(alpha=...) must be a positive number, got "
                             f"{self.alpha!r}.")
        if self.move not in MOVES:
            raise ValueError(f"BranchBandit(move=...) must be one of {MOVES}, got "
                             f"{self.move!r}.")
        check_int(self.n_random, "BranchBandit(n_random=...)")
        check_int(self.patience, "BranchBandit(patience=...)", minimum=0)
        if isinstance(self.tol, bool) or not isinstance(self.tol, (int, float)) or not (
                0.0 <= self.tol < 1.0):
            raise ValueError(f"BranchBandit(tol=...) must be a number in [0, 1), got "
                             f"{self.tol!r}.")

    def choice(self, ctx: Context) -> tuple[int, int, int] | None:
        """``(column, arm pulled, incumbent's arm)``, or None where the step passes."""
        space, study = ctx.space, ctx.study
        if ctx.candidates is not None or study.obs.n == 0:
            return None
        if ctx.number < ctx.proposer.n_initial:
            return None
        d = branch_dimension(space)
        if d is None:
            return None
        if self.patience and failures_in_a_row(study.obs.y, ctx.proposer.n_initial,
                                               self.tol) < self.patience:
            return None
        k = abs(int(space.levels[d]))
        arms = level_index(study.obs.X[:, d], k).astype(np.int64)
        y = study.obs.y
        index = max_ucb(arms, y, k, self.alpha)
        return d, int(np.argmax(index)), int(arms[int(np.argmin(y))])

    def propose(self, ctx: Context) -> Point | None:
        chosen = self.choice(ctx)
        if chosen is None:
            return None
        d, arm, incumbent = chosen
        if arm == incumbent:
            return None
        space = ctx.space
        k = abs(int(space.levels[d]))
        if self.move == "search":
            X, y = ctx.study.obs.X, ctx.study.obs.y

            def inside(U):
                return level_index(U[..., d], k) == arm

            mine = np.flatnonzero(inside(X))
            starts = X[mine[np.argsort(y[mine], kind="stable")][:10]] if mine.size else None
            return ctx.best_where(inside, self.n_random, starts)
        U = random_draws(ctx, parzen=self.move == "parzen")
        U[:, d] = (arm + 0.5) / k
        return first_allowed_new(ctx, space.canonical(U))
