"""Category draws: the acquisition's best point for categorical choices drawn at random.

A forest that has seen a few poor points of one categorical choice (a model family, a kernel,
a loss) predicts that choice poorly everywhere, and the acquisition's search, which starts
from the best observations and from random points it then scores, keeps to the choices that
did well.  Where the poor points were poor for their other parameters, that choice is never
given a fair trial.  CoCaBO (Ru et al. 2020) separates the two decisions: a bandit over the
categorical values, and the Bayesian optimisation of the continuous parameters given them.
A :class:`CategoryStep` is that second half: it draws a value of every categorical parameter
(uniformly, or by Thompson sampling over each value's record of good losses) and proposes the
acquisition's best point with those choices fixed; a
:class:`~mfbo.proposal.steps.portfolio.Portfolio` decides how often it is worth doing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from acquisitions import level_index, maximize_random_local, snap

from ..._core.arguments import check_int
from .base import Context, Point, Step

__all__ = ["CategoryStep", "DRAWS"]

#: how a :class:`CategoryStep` draws the categorical values
DRAWS = ("uniform", "thompson")


@dataclass(frozen=True)
class CategoryStep(Step):
    """The acquisition's best new point with every categorical (unordered) parameter fixed to
    a value drawn for this proposal (uniformly, or by Thompson sampling: :meth:`choices`):
    ``n_random`` random points and local searches from them and from the best observations,
    all with those values.  Passes in a space
    without a categorical parameter and in a finite candidate set.

    In a conditional space a parameter made inactive by the drawn values is inactive in the
    point proposed (the point is scored as its canonical form).
    """

    origin: ClassVar[str] = "category"

    n_random: int = 2_000
    draw: str = "uniform"

    def __post_init__(self):
        check_int(self.n_random, "CategoryStep(n_random=...)")
        if self.draw not in DRAWS:
            raise ValueError(f"CategoryStep(draw=...) must be one of {DRAWS}, got "
                             f"{self.draw!r}.")

    def choices(self, ctx: Context, cat: np.ndarray) -> np.ndarray:
        """The unit coordinates of the categorical values of this proposal: drawn uniformly,
        or (``draw="thompson"``) for each categorical parameter the value with the largest
        draw from its Beta posterior of a good loss, ``Beta(1 + good, 1 + other)`` over the
        observations where the parameter is active and has that value, a good loss being one
        in the best quarter of all observations (TPE's split): a value seldom tried keeps a
        wide posterior and is drawn now and then, one tried often and found poor seldom."""
        levels = ctx.space.levels
        if self.draw == "uniform":
            return snap(ctx.rng.random(len(levels)), levels)[cat]
        X, y = ctx.study.obs.X, ctx.study.obs.y
        good = y <= np.quantile(y, 0.25) if y.size else np.zeros(0, dtype=bool)
        out = np.empty(cat.size)
        for i, d in enumerate(cat):
            k = abs(int(levels[d]))
            col = X[:, d]
            seen = col != ctx.space.inactive_unit
            idx = level_index(col[seen], k).astype(int)
            g = np.bincount(idx[good[seen]], minlength=k)
            n = np.bincount(idx, minlength=k)
            choice = int(np.argmax(ctx.rng.beta(1.0 + g, 1.0 + n - g)))
            out[i] = (choice + 0.5) / k
        return out

    def propose(self, ctx: Context) -> Point | None:
        levels = ctx.space.levels
        cat = np.flatnonzero(levels < 0)
        if ctx.candidates is not None or cat.size == 0:
            return None
        rng, study = ctx.rng, ctx.study
        fixed = self.choices(ctx, cat)
        score = ctx.score()

        def with_choices(U):
            U = np.array(U, dtype=float, copy=True)
            U[..., cat] = fixed
            return U

        def fixed_score(U):
            return score(with_choices(U))

        # (an inactive coordinate of an observation sits outside the cube: start inside it)
        starts = np.clip(with_choices(ctx.best_observed(10)), 0.0, 1.0)
        pts = maximize_random_local(
            fixed_score, levels, n=10, rng=rng, n_random=self.n_random, starts=starts,
            n_local=10, patience=3, min_improvement=1e-3, exclude=study.asked_keys,
            far_from=study.asked.X, neighbourhood="joint", joint_dims=6)
        return ctx.first_new(with_choices(pts))
