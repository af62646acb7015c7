"""Points chosen by the ratio of two Parzen densities, the good observations' over the others'.

The forest's acquisition judges a point by the model's mean and spread where it lies.  In a
space of several branches (a model family, a loss, a kernel) the forest's partitions do not
depend on the losses, so after a few dozen evaluations a branch that has seen only poor points
looks poor for good, and what the branches share (a good learning rate in one family is often
good in the next) is not carried across.  The tree-structured Parzen estimator (TPE; Bergstra
et al. 2011) judges a point otherwise: per parameter, by how much more often its value occurs
among the best observations than among the others, so a parameter's good values travel to
every branch where it is active, and a branch with few observations keeps a ratio near one.
A :class:`DensityRatioStep` makes some proposals that way, a second opinion beside the
forest's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from acquisitions import snap

from ..._core.arguments import check_int
from .base import Context, Point, Step
from .parzen import ParzenDensity, n_good

__all__ = ["DensityRatioStep"]


@dataclass(frozen=True)
class DensityRatioStep(Step):
    """Every ``every`` model-based proposals (0: never), TPE's choice: of ``n_candidates``
    points drawn from the Parzen density of the best observations (:func:`parzen.n_good` of
    them), the new allowed one whose density there is largest relative to the density of
    the other observations (:class:`ParzenDensity` of each; the forest is not consulted).
    Continuous, mixed and conditional spaces; passes in a finite candidate set.

    Parameters
    ----------
    every : int, default=4
    n_candidates : int, default=24
        Optuna's number of candidates per TPE proposal.
    only_conditional : bool, default=False
        Whether the step passes in a space no parameter of which has a condition (where every
        parameter is always active), so that there the recipe proposes as without it.
    """

    origin: ClassVar[str] = "density-ratio"

    every: int = 4
    n_candidates: int = 24
    only_conditional: bool = False

    def __post_init__(self):
        check_int(self.every, "DensityRatioStep(every=...)", minimum=0)
        check_int(self.n_candidates, "DensityRatioStep(n_candidates=...)")
        if not isinstance(self.only_conditional, bool):
            raise TypeError(f"DensityRatioStep(only_conditional=...) must be a bool, got "
                            f"{self.only_conditional!r}.")

    def propose(self, ctx: Context) -> Point | None:
        if ctx.candidates is not None or not ctx.due(self.every):
            return None
        if self.only_conditional and not ctx.space.conditional:
            return None
        X, y = ctx.study.obs.X, ctx.study.obs.y
        if y.size < 2:
            return None
        space = ctx.space
        order = np.argsort(y, kind="stable")
        m = n_good(y.size)
        good = ParzenDensity(X[order[:m]], space.levels)
        rest = ParzenDensity(X[order[m:]], space.levels)
        U = space.canonical(snap(good.sample(self.n_candidates, ctx.rng), space.levels))
        ratio = good.log_pdf(U) - rest.log_pdf(U)
        ratio[~space.allowed(U)] = -np.inf
        pick = np.argsort(-ratio, kind="stable")
        return ctx.first_new(U[pick[np.isfinite(ratio[pick])]])
