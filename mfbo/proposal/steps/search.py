"""The global step: the acquisition's maximiser over the space (or over the candidate set)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from acquisitions import maximize_over_candidates, maximize_random_local

from ..._core.arguments import check_int, check_nonnegative
from .base import EXHAUSTED, Context, Point, Step

__all__ = ["AcquisitionSearch", "check_stopping_rule", "NEIGHBOURHOODS"]

NEIGHBOURHOODS = ("one-exchange", "joint")


def check_stopping_rule(patience, min_improvement, search_patience, prefix: str = "") -> None:
    """``prefix``: how the caller names the three settings (``"local_search"``: the
    optimizer's dict, ``local_search['patience']``; ``"AcquisitionSearch"``: the step's
    fields, ``AcquisitionSearch(patience=...)``; nothing: the bare names)."""
    def name(key):
        if prefix == "AcquisitionSearch":
            return f"{prefix}({key}=...)"
        return f"{prefix}[{key!r}]" if prefix else key
    check_int(patience, name("patience"))
    check_nonnegative(min_improvement, name("min_improvement"))
    check_int(search_patience, name("search_patience"), minimum=0)


@dataclass(frozen=True)
class AcquisitionSearch(Step):
    """The acquisition's best new point: in a finite space, the best available candidate;
    otherwise the best of ``n_random`` random points refined by local searches from the best
    of them and the best observations (SMAC3's maximiser).

    Parameters
    ----------
    n_random : int, default=10000
        Random/Sobol points scored per proposal before local search (SMAC3's 10,000).
    local_search : bool, default=True
        Refine the best random points (and the best observations) by local search.
    patience, min_improvement : int, float, default=10, 0
        A local search stops after ``patience`` rounds whose gain is at most
        ``min_improvement`` times the random points' score spread (SMAC3: 10 rounds, any gain).
    search_patience : int, default=0
        All local searches stop once the best score any of them has found has risen by at
        most ``min_improvement`` times the score spread in this many rounds in a row (0: each
        search stops by ``patience`` alone, as in SMAC3).
    neighbourhood : {"one-exchange", "joint"}, default="one-exchange"
        Local-search moves in continuous coordinates: SMAC's one coordinate at a time, or all
        continuous coordinates together (Gaussian steps).
    joint_move_dims : int or None, default=None
        With the joint neighbourhood, a round makes as many Gaussian moves per point as
        one-exchange would in at most this many continuous dimensions (None: in all of them).
    """

    origin: ClassVar[str] = "acquisition"

    n_random: int = 10_000
    local_search: bool = True
    patience: int = 10
    min_improvement: float = 0.0
    search_patience: int = 0
    neighbourhood: str = "one-exchange"
    joint_move_dims: int | None = None

    def __post_init__(self):
        check_int(self.n_random, "AcquisitionSearch(n_random=...)")
        if not isinstance(self.local_search, bool):
            raise TypeError(f"AcquisitionSearch(local_search=...) must be a bool, got "
                            f"{self.local_search!r}.")
        check_stopping_rule(self.patience, self.min_improvement, self.search_patience,
                            "AcquisitionSearch")
        if self.neighbourhood not in NEIGHBOURHOODS:
            raise ValueError(f"AcquisitionSearch(neighbourhood=...) must be 'one-exchange' or "
                             f"'joint', got "
                             f"{self.neighbourhood!r}.")
        check_int(self.joint_move_dims, "AcquisitionSearch(joint_move_dims=...)", or_none=True)

    def scorer(self, ctx: Context):
        """The function of unit points this search maximises: the proposal's acquisition."""
        return ctx.score()

    def starts(self, ctx: Context) -> np.ndarray:
        """Where the local searches start besides the best random points."""
        return ctx.best_observed(10)

    def propose(self, ctx: Context) -> Point | None:
        score = self.scorer(ctx)
        study, rng = ctx.study, ctx.rng
        # asked points (evaluated and pending): never proposed again, and ties of the
        # acquisition are broken away from them
        known = study.asked.X
        cands = ctx.candidates
        if cands is not None:
            idx = maximize_over_candidates(score, cands.U, study.available, 1, rng,
                                           far_from=known)
            if idx.size == 0:
                return EXHAUSTED
            i = int(idx[0])
            return cands.U[i], i
        starts = self.starts(ctx) if self.local_search else None
        pts = maximize_random_local(
            score, ctx.space.levels, n=10, rng=rng, n_random=self.n_random, starts=starts,
            n_local=10 if self.local_search else 0,
            patience=self.patience if self.local_search else 0,
            min_improvement=self.min_improvement,
            search_patience=self.search_patience if self.local_search else 0,
            exclude=study.asked_keys, far_from=known, neighbourhood=self.neighbourhood,
            joint_dims=self.joint_move_dims)
        return ctx.first_new(pts)
