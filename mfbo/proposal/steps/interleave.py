"""Random interleaving: some proposals are uniformly random points (SMAC's interleaving)."""

from __future__ import annotations

import numbers
from dataclasses import dataclass
from typing import ClassVar

from .base import Context, Point, Step

__all__ = ["RandomInterleave"]


@dataclass(frozen=True)
class RandomInterleave(Step):
    """With probability ``probability`` the proposal is a uniformly random point.

    The step draws its uniform number even at probability 0 or 1, so a proposal's random
    stream, and every step after this one, is the same whatever the probability.
    """

    origin: ClassVar[str] = "random"

    probability: float = 0.0

    def __post_init__(self):
        r = self.probability
        if isinstance(r, bool) or not isinstance(r, numbers.Real) or not 0 <= r <= 1:
            raise ValueError(f"RandomInterleave(probability=...) must be in [0, 1], got {r!r}.")

    def propose(self, ctx: Context) -> Point | None:
        return ctx.random_point() if ctx.rng.random() < self.probability else None
