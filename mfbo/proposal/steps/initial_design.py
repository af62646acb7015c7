"""The initial design: the first trials of a study, spread over the space before any model."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, ClassVar

import numpy as np

from ..._core.arguments import check_int, is_int
from .base import Context, Point, Step

__all__ = ["InitialDesign", "PerDimension", "DESIGN_SKIPS"]

#: with ``min_distance``, the initial design looks at most this many times ``n_initial``
#: points of its sequence for one far enough from the asked points
DESIGN_SKIPS = 64
KINDS = ("sobol", "random", "lhs")


@dataclass(frozen=True)
class PerDimension:
    """Initial-design size rule: ``factor`` points per dimension of the space."""

    factor: int

    def __post_init__(self):
        check_int(self.factor, "factor")

    def __call__(self, n_dims: int) -> int:
        return self.factor * n_dims


def check_kind(kind) -> None:
    if kind not in KINDS:
        raise ValueError(f"initial_design must be 'sobol', 'random' or 'lhs', got {kind!r}.")


@dataclass(frozen=True)
class InitialDesign(Step):
    """The first ``size`` trials: points of a Sobol sequence, uniform points or a Latin
    hypercube (``kind``), nearest available candidates in a finite space.

    Parameters
    ----------
    kind : {"sobol", "random", "lhs"}, default="sobol"
    size : int or callable, default=PerDimension(10)
        A number, or a rule mapping the number of dimensions to one (``10 * D``: SMAC3's).
    """

    origin: ClassVar[str] = "design"

    kind: str = "sobol"
    size: int | Callable[[int], int] = PerDimension(10)

    def __post_init__(self):
        check_kind(self.kind)
        if not (is_int(self.size) or callable(self.size)):
            raise ValueError(f"n_initial must be a positive integer or a rule n_dims -> size, "
                             f"got {self.size!r}.")

    def size_for(self, n_dims: int) -> int:
        """The design's size for a space of ``n_dims`` dimensions."""
        n = self.size(n_dims) if callable(self.size) else self.size
        if not is_int(n):
            raise ValueError(f"n_initial rule {self.size!r} gave {n!r} for {n_dims} "
                             f"dimensions, not a positive integer.")
        return int(n)

    def size_within(self, n_dims: int, budget: int) -> int:
        """The size for ``n_dims`` dimensions, at most a quarter of a ``budget`` of trials (as
        SMAC3 does), at least 1: the default of :func:`mfbo.minimize` and the search CV."""
        return max(1, min(self.size_for(n_dims), budget // 4 or 1))

    def points(self, space, count: int, size: int, rng: np.random.Generator) -> np.ndarray:
        """At least ``count`` points of this design's sequence for ``space`` (its first
        ``size`` are the design; Sobol and random points continue their sequence, a Latin
        hypercube by further ones of ``size`` points)."""
        if self.kind == "lhs":
            blocks = -(-max(count, size) // size)
            return np.vstack([space.sample(size, rng, self.kind) for _ in range(blocks)])
        return space.sample(max(count, size), rng, self.kind)

    def propose(self, ctx: Context) -> Point | None:
        """Design point ``ctx.number`` (the nearest available candidate in a finite space; a
        random point if it is a configuration already asked)."""
        proposer, study, number = ctx.proposer, ctx.study, ctx.number
        if proposer.min_distance > 0 and ctx.candidates is None:
            return self._far_point(ctx)
        target = proposer.design_points(proposer.n_initial)[number]
        if ctx.candidates is not None:
            idx = np.flatnonzero(study.available)
            d = ((ctx.candidates.U[idx] - target) ** 2).sum(axis=1)
            return ctx.candidates.U[idx[np.argmin(d)]], int(idx[np.argmin(d)])
        if study.seen(ctx.space.from_unit(target)[0]):
            return ctx.random_point()
        return target, None

    def _far_point(self, ctx: Context) -> Point:
        """Design point ``ctx.number``, or when it is within ``min_distance`` of an asked
        point (or is one), the next point of the design's sequence that is not; a random
        point once :data:`DESIGN_SKIPS` ``* n_initial`` points have been looked at.  A point
        skipped by an earlier trial stays too close (asked points only accumulate), and one
        taken by it is asked, so each trial looks from its own number on."""
        proposer = ctx.proposer
        known = ctx.study.asked.X
        limit = DESIGN_SKIPS * proposer.n_initial
        start = ctx.number
        while start < limit:
            U = proposer.design_points(min(limit, 2 * start + proposer.n_initial))
            for u in U[start:]:
                if ctx.is_new(u, known, plateaus=False):  # (the design is the design)
                    return u, None
            start = U.shape[0]
        return ctx.random_point()
