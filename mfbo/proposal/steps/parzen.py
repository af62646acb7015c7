"""Points drawn from a Parzen density of the best observations: where a global step looks.

The acquisition's maximiser starts its local searches from the best evaluated points and the
best of many uniform points.  On a loss whose good region is a corner of a few dimensions (a
decision tree's leaf sizes and impurity threshold all small) the uniform points rarely fall in
it, and the searches from the incumbent creep around it.  :func:`good_region_sample` draws
instead from the density of the tree-structured Parzen estimator (TPE; Bergstra et al. 2011)
of the best quarter of the observations: a product, over the dimensions, of one-dimensional
mixtures with a component at each good observation's coordinate and a broad prior component.
A product of marginals combines one good point's value in one dimension with another's in
the next, which is how such a corner is found; the forest then decides among these points.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from acquisitions import maximize_random_local

from ..._core.arguments import check_int
from .base import Context, Point, Step

__all__ = ["ParzenStep", "good_region_sample", "best_of_good_region", "truncated_normal",
           "n_good", "GOOD_FRACTION", "MAX_GOOD"]

#: share of the observations (the lowest losses) that make the density (hyperopt's gamma)
GOOD_FRACTION = 0.25
#: at most this many observations make it (Optuna's cap)
MAX_GOOD = 25
#: redraws of a continuous coordinate that fell outside [0, 1] before it is clipped
_REDRAWS = 50


def n_good(n_observations: int) -> int:
    """The number of best observations the density is made of (2 at least)."""
    return min(max(2, math.ceil(GOOD_FRACTION * n_observations)), MAX_GOOD, n_observations)


def _bandwidths(g: np.ndarray) -> np.ndarray:
    """Each good coordinate's kernel width: the larger gap to its neighbours (the interval's
    ends included), at least ``1 / min(100, m + 1)`` of it (TPE's rule)."""
    order = np.argsort(g, kind="stable")
    ext = np.concatenate([[0.0], g[order], [1.0]])
    gaps = np.maximum(ext[1:-1] - ext[:-2], ext[2:] - ext[1:-1])
    out = np.empty(g.size)
    out[order] = np.clip(gaps, 1.0 / min(100, g.size + 1), 1.0)
    return out


def good_region_sample(X: np.ndarray, y: np.ndarray, levels, n: int,
                       rng: np.random.Generator) -> np.ndarray:
    """``n`` unit-cube points from the Parzen density of the best observations.

    Parameters
    ----------
    X : array of shape (m, D)
        Observations in the unit cube (the search space's encoding).
    y : array of shape (m,)
        Their losses (lower is better); :func:`n_good` of the lowest make the density.
    levels : sequence of int
        Per-coordinate kind (0 continuous, ``k > 0`` ordinal, ``-k`` categorical; see
        :mod:`acquisitions.maximizers`).
    n : int
    rng : numpy Generator

    Returns
    -------
    array of shape (n, D)
        Each coordinate drawn independently: with probability ``1 / (m + 1)`` from the prior
        (uniform for a categorical coordinate, a normal of mean 0.5 and standard deviation 1
        truncated to [0, 1] otherwise), else at one of the ``m`` good observations' values,
        taken exactly for a categorical coordinate and with a truncated normal kernel
        (:func:`_bandwidths`) otherwise.  ``m`` counts the good observations whose coordinate
        is in [0, 1]: in a conditional space a parameter's density is made of the good
        observations where it is active (as TPE's), and is the prior where none is.  Ordinal
        coordinates are left between their level centres, for the caller to snap.
    """
    X = np.asarray(X, dtype=float)
    y = np.asarray(y, dtype=float)
    levels = np.asarray(list(levels), dtype=np.int64)
    if X.ndim != 2 or X.shape[0] == 0 or X.shape[0] != y.shape[0] or X.shape[1] != levels.size:
        raise ValueError(f"X must be a non-empty (m, {levels.size}) matrix with one loss per "
                         f"row, got X of shape {X.shape} and {y.shape[0]} losses.")
    good = X[np.argsort(y, kind="stable")[:n_good(y.shape[0])]]
    out = np.empty((n, levels.size))
    for d in range(levels.size):
        g = good[:, d]
        inside = (g >= 0.0) & (g <= 1.0)
        if not inside.all():  # a conditional space's inactive coordinates lie outside
            g = g[inside]
        m = g.size
        comp = rng.integers(0, m + 1, size=n)  # component m: the prior
        prior = comp == m
        k = np.minimum(comp, m - 1)  # the good point of each draw (any, for the prior's)
        if levels[d] < 0:
            out[:, d] = np.where(prior, rng.random(n), g[k]) if m else rng.random(n)
            continue
        mu = np.where(prior, 0.5, g[k]) if m else np.full(n, 0.5)
        sd = np.where(prior, 1.0, _bandwidths(g)[k]) if m else np.ones(n)
        out[:, d] = truncated_normal(mu, sd, rng)
    return out


def truncated_normal(mu: np.ndarray, sd: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One draw of each normal of means ``mu`` and standard deviations ``sd`` restricted to
    [0, 1]: redrawn up to :data:`_REDRAWS` times while outside, then clipped."""
    v = mu + sd * rng.standard_normal(mu.size)
    bad = np.flatnonzero((v < 0.0) | (v > 1.0))
    for _ in range(_REDRAWS):
        if bad.size == 0:
            break
        w = mu[bad] + sd[bad] * rng.standard_normal(bad.size)
        v[bad] = w
        bad = bad[(w < 0.0) | (w > 1.0)]  # those still outside, in the same order
    return np.clip(v, 0.0, 1.0)


@dataclass(frozen=True)
class ParzenStep(Step):
    """Every ``every`` model-based proposals (0: never), the acquisition's best of
    ``n_candidates`` points drawn from a Parzen density of the best quarter of the
    observations (:func:`good_region_sample`, TPE's density of good points) instead of the
    full search: a global step into the region the best points share, which the forest then
    chooses within.  Continuous or mixed spaces only (a candidate set is always enumerated).

    Parameters
    ----------
    every : int, default=2
    n_candidates : int, default=200
        Few make the step close to a draw from the density; many make it the acquisition's
        maximum over the good region.
    when_converged : bool, default=False
        Also when a local step was due but its minimiser is a point already asked (the local
        model has converged on it): a run that has converged otherwise pays for a search of
        the whole space in every such slot, the most expensive ask there is.
    """

    origin: ClassVar[str] = "parzen"

    every: int = 2
    n_candidates: int = 200
    when_converged: bool = False

    def __post_init__(self):
        check_int(self.every, "ParzenStep(every=...)", minimum=0)
        check_int(self.n_candidates, "ParzenStep(n_candidates=...)")
        if not isinstance(self.when_converged, bool):
            raise TypeError(f"ParzenStep(when_converged=...) must be a bool, got "
                            f"{self.when_converged!r}.")

    def propose(self, ctx: Context) -> Point | None:
        if ctx.candidates is not None or not (
                (ctx.converged and self.when_converged) or ctx.due(self.every)):
            return None
        return best_of_good_region(ctx, ctx.score(), ctx.study.obs.y, self.n_candidates)


def best_of_good_region(ctx: Context, score, y: np.ndarray, n_candidates: int) -> Point:
    """The acquisition ``score``'s best new point of ``n_candidates`` drawn from the Parzen
    density of the observations that ``y`` ranks best (lower is better; one value per
    observation): :func:`good_region_sample`'s points scored, with no local search."""
    study = ctx.study
    good = good_region_sample(study.obs.X, y, ctx.space.levels, n_candidates, ctx.rng)
    pts = maximize_random_local(score, ctx.space.levels, n=10, rng=ctx.rng, n_random=0,
                                extra=good, patience=0, exclude=study.asked_keys,
                                far_from=study.asked.X)
    return ctx.first_new(pts)
