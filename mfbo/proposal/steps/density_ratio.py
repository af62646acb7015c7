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
from .parzen import _bandwidths, n_good, truncated_normal

__all__ = ["DensityRatioStep", "ParzenDensity"]


class ParzenDensity:
    """A product over the dimensions of one-dimensional mixtures made from observations.

    For dimension ``d`` the mixture has one component per observation active in ``d`` (its
    coordinate inside the unit interval) and a prior component, all of equal weight: for a
    categorical dimension of ``k`` values, the observation's value exactly or a uniform
    choice; otherwise a normal at the observation's coordinate (of :func:`parzen._bandwidths`'
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
        out = np.empty((n, self.levels.size))
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
            out[:, d] = truncated_normal(mu, sd, rng)
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
