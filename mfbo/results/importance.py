"""Functional ANOVA of a response surface: the share of its variance each dimension, and each
pair of dimensions, explains.

Under the search measure (:mod:`mfbo.results.surface`; the coordinates are independent) a surface
``f`` splits uniquely into a constant, main effects ``f_i(u_i)``, pair effects
``f_ij(u_i, u_j)`` and higher ones, each averaging to zero over any one of its coordinates,
whose variances add up to ``Var f`` (Sobol', 1993).  The importance of dimension ``i`` is
``V_i / V``, the fraction of the variance its main effect explains; that of a pair is
``V_ij / V``, what the two explain together beyond their main effects (the quantities of
Hutter, Hoos & Leyton-Brown, 2014, "An efficient approach for assessing hyperparameter
importance").  Main effects of an additive surface sum to one; the shortfall is interactions.

Two methods, both seeing the model only through its mean prediction:

``"exact"``
    Spaces whose every coordinate is discrete (at most :data:`MAX_EXACT` points): the mean at
    every point, and the effects by averaging that table over axes.  Exact for any model.
``"sobol"``
    Any space: the pick-freeze estimators of Saltelli et al. (2010), Table 2 (b), on two
    ``n_samples``-row matrices ``A`` and ``B`` of one scrambled Sobol sequence of the search
    measure; ``A_B^S`` is ``A`` with the columns ``S`` taken from ``B``.  With ``f``
    centred, ``V = Var(f(A), f(B))``, ``V_i = mean(f(B) (f(A_B^i) - f(A)))`` and, for a pair,
    ``V_ij = mean(f(B) (f(A_B^ij) - f(A))) - V_i - V_j``.  ``n_samples (D + 2)`` evaluations,
    plus ``n_samples`` per pair.  The estimates are unbiased, so an effect near zero can come
    out slightly negative.

Hutter et al.'s algorithm is exact for trees whose prediction is constant on each leaf's cell,
by summing over the leaf boxes.  A Mondrian tree's prediction is not: it mixes the means of the
nodes on the query's path, weighted by the probability that the query branches off each node's
data box (Lakshminarayanan, Roy & Teh, 2016, Section 3.3), a weight that changes continuously
inside a cell.  The leaf-box algorithm would decompose a different, piecewise-constant surface,
so the forest's own mean is decomposed here instead (for any surrogate).  This is the variance
of the forest's mean prediction; Hutter et al. average the fractions of the single trees.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import combinations

import numpy as np

from acquisitions import enumerate_grid, finite_size
from surrogates._core.scaling import target_exponent, unscale

from .._core.arguments import check_int
from ..space import Space
from .surface import MeanFunction, evaluate, search_sample

__all__ = ["Importance", "functional_anova", "MAX_EXACT", "METHODS"]

#: ``method="auto"`` enumerates finite spaces with at most this many points
MAX_EXACT = 1 << 17
METHODS = ("auto", "exact", "sobol")


@dataclass(frozen=True)
class Importance:
    """A functional ANOVA of a surface.

    Attributes
    ----------
    main : dict
        ``name -> V_i / V`` for every dimension, in the space's order.
    pairs : dict
        ``(name_i, name_j) -> V_ij / V`` for every pair (empty unless asked for).
    variance : float
        ``V``, the variance of the surface under the search measure (inf where it exceeds
        float64, for surfaces beyond about 1e154; the fractions are computed without
        overflow, on the surface divided by a power of two).
    method : {"exact", "sobol"}
    n_evaluations : int
        Points at which the surface was evaluated.
    """

    main: dict
    pairs: dict = field(default_factory=dict)
    variance: float = 0.0
    method: str = "exact"
    n_evaluations: int = 0

    def ranked(self, pairs: bool = False) -> list:
        """``(name, fraction)`` from the largest fraction down (pairs too with ``pairs``)."""
        items = list(self.main.items()) + (list(self.pairs.items()) if pairs else [])
        return sorted(items, key=lambda kv: -kv[1])


def functional_anova(f: MeanFunction, space: Space, pairs: bool = False, method: str = "auto",
                     n_samples: int = 4096, random_state=0) -> Importance:
    """The variance decomposition of ``f`` over ``space``'s search measure.

    Parameters
    ----------
    f : callable
        ``f(U) -> mean`` on unit-cube rows (:func:`mfbo.results.surface.mean_function`).
    space : Space
    pairs : bool, default=False
        Also the pair effects (``D (D - 1) / 2`` of them).
    method : {"auto", "exact", "sobol"}, default="auto"
        ``"auto"``: ``"exact"`` when every coordinate is discrete and the space has at most
        :data:`MAX_EXACT` points, else ``"sobol"`` (see the module docstring).
    n_samples : int, default=4096
        Rows of each of the Sobol estimator's two matrices (unused by ``"exact"``); the
        standard error falls like ``1 / n_samples`` for smooth surfaces, like
        ``1 / sqrt(n_samples)`` at worst.
    random_state : int, Generator or None, default=0
        Seeds the Sobol scrambling.
    """
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}.")
    n_samples = check_int(n_samples, "n_samples", 2)
    size = finite_size(space.levels)
    if method == "auto":
        method = "exact" if size <= MAX_EXACT else "sobol"
    if method == "exact":
        if size > MAX_EXACT:
            what = ("a continuous (or log-integer) dimension" if np.isinf(size)
                    else f"{size:.0f} points")
            raise ValueError(f"method='exact' needs a finite space of at most {MAX_EXACT} "
                             f"points; this one has {what}.  Use method='sobol'.")
        return _exact(f, space, pairs)
    return _sobol(f, space, pairs, n_samples, np.random.default_rng(random_state))


def _fractions(space, V, main, pair, method, n_eval, k=0) -> Importance:
    """The decomposition from the variances of a surface divided by ``2^k``."""
    scale = 1.0 / V if V > 0 else 0.0
    return Importance(main={n: float(v * scale) for n, v in zip(space.names, main)},
                      pairs={(space.names[i], space.names[j]): float(v * scale)
                             for (i, j), v in pair.items()},
                      variance=float(unscale(float(V), 2 * k)), method=method,
                      n_evaluations=int(n_eval))


def _exact(f, space, pairs) -> Importance:
    shape = tuple(abs(int(k)) for k in space.levels)
    F = evaluate(f, enumerate_grid(space.levels)).reshape(shape)
    # a surface too large to square is decomposed divided by 2^k (exactly): the fractions are
    # the same, its variance V 4^k
    k = target_exponent(F)
    if k:
        F = np.ldexp(F, -k)
    D = len(shape)
    mu = F.mean()
    marg = [F.mean(axis=tuple(a for a in range(D) if a != i)) - mu for i in range(D)]
    main = [float(np.mean(m * m)) for m in marg]
    pair = {}
    if pairs:
        for i, j in combinations(range(D), 2):
            m = F.mean(axis=tuple(a for a in range(D) if a not in (i, j))) - mu
            m = m - marg[i][:, None] - marg[j][None, :]
            pair[(i, j)] = float(np.mean(m * m))
    return _fractions(space, float(F.var()), main, pair, "exact", F.size, k)


def _sobol(f, space, pairs, n, rng) -> Importance:
    D = len(space)
    AB = search_sample(space, n, rng, copies=2)
    A, B = AB[:, :D], AB[:, D:]
    fA, fB = evaluate(f, A), evaluate(f, B)
    # a surface too large to square is decomposed divided by 2^k (exactly), as in _exact
    k = max(target_exponent(fA), target_exponent(fB))
    if k:
        fA, fB = np.ldexp(fA, -k), np.ldexp(fB, -k)
    c = 0.5 * (fA.mean() + fB.mean())  # centring leaves the estimators unbiased, less noisy
    fA, fB = fA - c, fB - c
    V = float(np.var(np.concatenate([fA, fB])))
    n_eval = 2 * n
    varying = [d for d in range(D) if abs(int(space.levels[d])) != 1]  # constants: no effect

    def closed(cols):
        nonlocal n_eval
        M = A.copy()
        M[:, cols] = B[:, cols]
        n_eval += n
        fM = evaluate(f, M)
        if k:
            fM = np.ldexp(fM, -k)
        return float(np.mean(fB * (fM - c - fA)))

    main = np.zeros(D)
    for d in varying:
        main[d] = closed([d])
    pair = {}
    if pairs:
        for i, j in combinations(range(D), 2):
            both = i in varying and j in varying
            pair[(i, j)] = closed([i, j]) - main[i] - main[j] if both else 0.0
    return _fractions(space, V, main, pair, "sobol", n_eval, k)
