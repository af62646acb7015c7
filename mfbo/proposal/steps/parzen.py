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

__all__ = ["ParzenStep", "ParzenDensity", "good_region_sample", "best_of_good_region",
           "truncated_normal", "n_good", "GOOD_FRACTION", "MAX_GOOD"]

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


class ParzenDensity:
    """A product over the dimensions of one-dimensional mixtures made from observations.

    For dimension ``d`` the mixture has one component per observation active in ``d`` (its
    coordinate inside the unit interval) and a prior component, all of equal weight: for a
    categorical dimension of ``k`` values, the observation's value exactly or a uniform
    choice; otherwise a normal at the observation's coordinate (of :func:`_bandwidths`'
    width) or of mean 0.5 and standard deviation 1, each truncated to [0, 1].

    Parameters
    ----------
    X : array of shape (m, D)
        Unit rows of the observations (a coordinate outside [0, 1] is an inactive parameter).
    levels : array of int of shape (D,)
        Per-coordinate kind (0 continuous, ``k > 0`` ordinal, ``-k`` categorical).
    """

    def __init__(self, X: np.ndarray, levels: np.ndarray):
        X = np.atleast_2d(np.asarray(X, dtype=float))
        self.levels = np.asarray(levels, dtype=np.int64)
        self.values = []
        self.widths = []
        for d in range(self.levels.size):
            v = X[(X[:, d] >= 0.0) & (X[:, d] <= 1.0), d]
            self.values.append(v)
            self.widths.append(_bandwidths(v) if v.size else v)

    def sample(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """``n`` unit rows, each coordinate drawn from its dimension's mixture."""
        draw = _truncated_normal_draw()
        out = np.empty((n, self.levels.size))
        col = np.empty(n)
        for d, k in enumerate(self.levels):
            v, w = self.values[d], self.widths[d]
            comp = rng.integers(0, v.size + 1, size=n)  # component v.size: the prior
            prior = comp == v.size
            j = np.minimum(comp, max(v.size - 1, 0))
            if k < 0:
                out[:, d] = rng.random(n) if v.size == 0 else np.where(prior, rng.random(n), v[j])
                continue
            mu = np.full(n, 0.5) if v.size == 0 else np.where(prior, 0.5, v[j])
            sd = np.ones(n) if v.size == 0 else np.where(prior, 1.0, w[j])
            draw(mu, sd, rng, col, _REDRAWS)
            out[:, d] = col
        return out

    def log_pdf(self, U: np.ndarray) -> np.ndarray:
        """The log density of each unit row of ``U`` (n, D), summed over the dimensions
        active in that row (an inactive coordinate adds nothing)."""
        U = np.atleast_2d(np.asarray(U, dtype=float))
        total = np.zeros(U.shape[0])
        for d, k in enumerate(self.levels):
            u = U[:, d]
            on = (u >= 0.0) & (u <= 1.0)
            if not on.any():
                continue
            total[on] += self._log_pdf_1d(d, int(k), u[on])
        return total

    def _log_pdf_1d(self, d: int, k: int, u: np.ndarray) -> np.ndarray:
        v, w = self.values[d], self.widths[d]
        if k < 0:
            k = -k
            counts = np.bincount(np.minimum(np.floor(v * k), k - 1).astype(np.int64),
                                 minlength=k)
            level = np.minimum(np.floor(u * k), k - 1).astype(np.int64)
            return np.log((counts[level] + 1.0 / k) / (v.size + 1.0))
        mu = np.append(v, 0.5)
        sd = np.append(w, 1.0)
        z = (u[:, None] - mu[None, :]) / sd[None, :]
        from scipy.special import ndtr  # (not at import: ``import mfbo`` stays light)

        mass = ndtr((1.0 - mu) / sd) - ndtr(-mu / sd)
        log_c = -0.5 * z * z - 0.5 * np.log(2 * np.pi) - np.log(sd) - np.log(mass)
        top = log_c.max(axis=1)
        return top + np.log(np.exp(log_c - top[:, None]).sum(axis=1)) - np.log(mu.size)


def good_region_sample(X: np.ndarray, y: np.ndarray, levels, n: int,
                       rng: np.random.Generator, per_parameter: bool = False) -> np.ndarray:
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
    per_parameter : bool, default=False
        Whether each parameter's density is made instead of the :func:`n_good` best of the
        observations where it is active (TPE's split made per parameter, as Optuna's
        independent sampler makes it): a parameter of a branch that none of the best
        observations took is drawn near its own best values rather than from the prior.  The
        same draws in a space without conditions.
    """
    if not isinstance(per_parameter, bool):
        raise TypeError(f"per_parameter must be True or False, got {per_parameter!r}.")
    X = np.asarray(X, dtype=float)
    y = np.asarray(y, dtype=float)
    levels = np.asarray(list(levels), dtype=np.int64)
    if X.ndim != 2 or X.shape[0] == 0 or X.shape[0] != y.shape[0] or X.shape[1] != levels.size:
        raise ValueError(f"X must be a non-empty (m, {levels.size}) matrix with one loss per "
                         f"row, got X of shape {X.shape} and {y.shape[0]} losses.")
    order = np.argsort(y, kind="stable")
    if not per_parameter:
        return ParzenDensity(X[order[:n_good(y.shape[0])]], levels).sample(n, rng)
    density = ParzenDensity(X[order[:0]], levels)
    for d in range(levels.size):
        v = X[order, d]
        v = v[(v >= 0.0) & (v <= 1.0)]
        v = v[:n_good(v.size)] if v.size else v
        density.values[d] = v
        density.widths[d] = _bandwidths(v) if v.size else v
    return density.sample(n, rng)


def truncated_normal(mu: np.ndarray, sd: np.ndarray, rng: np.random.Generator,
                     redraws: int = _REDRAWS) -> np.ndarray:
    """One draw of each normal of means ``mu`` and standard deviations ``sd`` restricted to
    [0, 1]: all drawn, then those outside redrawn in index order, pass after pass, up to
    ``redraws`` times, then clipped (numpy's form of the compiled draw, the same numbers)."""
    v = mu + sd * rng.standard_normal(mu.size)
    bad = np.flatnonzero((v < 0.0) | (v > 1.0))
    for _ in range(redraws):
        if bad.size == 0:
            break
        w = mu[bad] + sd[bad] * rng.standard_normal(bad.size)
        v[bad] = w
        bad = bad[(w < 0.0) | (w > 1.0)]  # those still outside, in the same order
    return np.clip(v, 0.0, 1.0)


def _numpy_draw(mu, sd, rng, out, redraws):
    """:func:`truncated_normal` called as the compiled draw is."""
    out[:] = truncated_normal(mu, sd, rng, redraws)


#: whether this process has started compiling the compiled draw ahead (where numba would
#: compile it)
_started = [False]


def _truncated_normal_draw():
    """The compiled truncated-normal draw (:mod:`._parzen_kernels`), or numpy's form of it
    while a second process compiles it on a fresh install (the first call here starts that,
    :mod:`surrogates._core.compile_ahead`, so that a first run never waits for it); the same
    numbers from the same generator either way."""
    from surrogates._core.compile_ahead import compiling, start

    from ._parzen_kernels import signature, truncated_normal_into  # (numba: on first use)

    if not _started[0]:
        _started[0] = True
        start([(truncated_normal_into, signature())])
    return _numpy_draw if compiling(truncated_normal_into) else truncated_normal_into


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
    per_parameter : bool, default=False
        Whether each parameter's density is made of the best of the observations where it is
        active (:func:`good_region_sample`'s ``per_parameter``), so that the candidates in a
        branch the best observations did not take sit near that branch's own best values.
        The same proposals in a space without conditions.
    """

    origin: ClassVar[str] = "parzen"

    every: int = 2
    n_candidates: int = 200
    when_converged: bool = False
    per_parameter: bool = False

    def __post_init__(self):
        check_int(self.every, "ParzenStep(every=...)", minimum=0)
        check_int(self.n_candidates, "ParzenStep(n_candidates=...)")
        for name in ("when_converged", "per_parameter"):
            if not isinstance(getattr(self, name), bool):
                raise TypeError(f"ParzenStep({name}=...) must be a bool, got "
                                f"{getattr(self, name)!r}.")

    def propose(self, ctx: Context) -> Point | None:
        if ctx.candidates is not None or not (
                (ctx.converged and self.when_converged) or ctx.due(self.every)):
            return None
        return best_of_good_region(ctx, ctx.score(), ctx.study.obs.y, self.n_candidates,
                                   self.per_parameter)


def best_of_good_region(ctx: Context, score, y: np.ndarray, n_candidates: int,
                        per_parameter: bool = False) -> Point:
    """The acquisition ``score``'s best new point of ``n_candidates`` drawn from the Parzen
    density of the observations that ``y`` ranks best (lower is better; one value per
    observation; ``per_parameter`` as :func:`good_region_sample`'s): those points scored,
    with no local search."""
    study = ctx.study
    good = good_region_sample(study.obs.X, y, ctx.space.levels, n_candidates, ctx.rng,
                              per_parameter)
    pts = maximize_random_local(score, ctx.space.levels, n=10, rng=ctx.rng, n_random=0,
                                extra=good, patience=0, exclude=study.asked_keys,
                                far_from=study.asked.X)
    return ctx.first_new(pts)
