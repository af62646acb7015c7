"""Plateau escape: a random proposal after a run of losses that repeat ones already seen."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ..._core.arguments import check_int
from .base import Context, Point, Step

__all__ = ["PlateauEscape"]


@dataclass(frozen=True)
class PlateauEscape(Step):
    """After every ``every`` consecutive evaluations since the initial design whose loss
    repeats, exactly, a loss already observed, the next proposal is uniformly random.

    On a plateau (a cross-validated accuracy, a tree depth that no longer matters) the
    forest's mean is flat and the acquisition can keep proposing points of the same plateau;
    exact repeats do not happen on a continuous loss, so there this changes nothing.  A failed
    trial counts as a repeat when the study records it as the worst loss so far
    (``on_failure="worst"``): a run of failures is a stall too.
    """

    origin: ClassVar[str] = "plateau"

    every: int = 3

    def __post_init__(self):
        check_int(self.every, "PlateauEscape(every=...)")

    def propose(self, ctx: Context) -> Point | None:
        return ctx.random_point() if self.due(ctx.study, ctx.proposer.n_initial) else None

    def due(self, study, n_initial: int) -> bool:
        """Whether the observations since the initial design end in a run of ``k * every``
        (k >= 1) repeated losses, and no proposal has been made from these observations yet
        (in a batch, or with several workers asking before the next tell, one escape, not
        all)."""
        m = self.every
        y = study.obs.y
        # the cheap tests first: the latest loss must itself be a repeat
        if y.shape[0] - n_initial < m or study.n_asked_since_observed or \
                not np.any(y[:-1] == y[-1]):
            return False
        _, first, inverse = np.unique(y, return_index=True, return_inverse=True)
        repeat = (np.arange(y.shape[0]) > first[inverse.ravel()])[n_initial:]
        r = repeat.size if repeat.all() else int(np.argmin(repeat[::-1]))
        return r >= m and r % m == 0
