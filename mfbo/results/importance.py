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

Conditional spaces
    A dimension with a condition has no value, hence no effect, where it is inactive, and
    the coordinates are no longer independent (a parent decides whether a child is active;
    forbidden conditions exclude combinations), so effects are measured where they exist.
    With ``A_S`` the configurations (of the search measure, :mod:`mfbo.results.surface`)
    where every dimension of ``S`` is active, ``p_S`` their share, and
    ``m_S(u_S) = E[f | A_S, u_S]`` the mean of the surface over them at ``u_S`` (the partial
    dependence of :mod:`mfbo.results.dependence`), the importance of dimension ``i`` is
    ``p_i Var(m_i | A_i) / V``: the share of the whole variance ``V`` that ``i`` explains
    inside its branch, which holds the share ``p_i Var(f | A_i) / V`` of ``V`` (law of total
    variance).  That of a pair is ``p_ij (Var(m_ij) - Var(m_i) - Var(m_j)) / V``, the three
    variances taken in ``A_ij`` (zero for a pair never active together).  A dimension
    without condition has ``p = 1`` and the fractions above; ``Importance.active`` holds
    ``p_i``.  So a child is not diluted by the branches where it does not exist, and
    fractions stay comparable: for a surface with one term per dimension, counted where
    the dimension is active (``c + sum_i [i active] f_i(u_i)``), in a space whose
    conditions each test one parent's value and without forbidden conditions, the main
    effects sum to one.  ``"exact"`` computes these on the enumerated space.  ``"sobol"``
    cannot use the pick-freeze estimators (they need independent coordinates): it
    estimates ``V`` and ``p_i`` from ``n_samples`` scrambled-Sobol points of the search
    measure and each ``m_S`` on a grid (every value of a discrete dimension with at most
    :data:`GRID` of them, else :data:`GRID` midpoints of equal cells), averaging over the
    first ``n_samples / GRID`` of those points, the same ones at every grid value; each
    grid value weighs as many of them as qualify there.  About ``n_samples`` evaluations
    per dimension, ``GRID`` times as many per pair.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import combinations

import numpy as np

from acquisitions import enumerate_grid, finite_size
from surrogates._core.scaling import target_exponent, unscale

from .._core.arguments import check_int
from ..space import Space
from .dependence import grid_means
from .surface import MeanFunction, evaluate, search_sample, to_search_points

__all__ = ["Importance", "functional_anova", "MAX_EXACT", "METHODS", "GRID"]

#: ``method="auto"`` enumerates finite spaces with at most this many points
MAX_EXACT = 1 << 17
METHODS = ("auto", "exact", "sobol")
#: grid points per dimension of the ``"sobol"`` estimate in a conditional space
GRID = 16


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
    active : dict
        ``name -> p_i``, the share of the search measure where the dimension is active: 1.0
        for a dimension without condition (see "Conditional spaces" in the module
        docstring).
    """

    main: dict
    pairs: dict = field(default_factory=dict)
    variance: float = 0.0
    method: str = "exact"
    n_evaluations: int = 0
    active: dict = field(default_factory=dict)

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
        ``1 / sqrt(n_samples)`` at worst.  In a conditional space: the points ``V`` and the
        shares ``p_i`` are estimated from, ``n_samples / GRID`` of them averaged over at each
        grid point (see the module docstring).
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
    rng = np.random.default_rng(random_state)
    if space.constrained:
        return _conditional(f, space, pairs, n_samples, rng)
    return _sobol(f, space, pairs, n_samples, rng)


def _fractions(space, V, main, pair, method, n_eval, k=0, active=None) -> Importance:
    """The decomposition from the variances of a surface divided by ``2^k`` (``main`` and
    ``pair`` already weighted by the shares ``active`` of their dimensions)."""
    scale = 1.0 / V if V > 0 else 0.0
    active = np.ones(len(space)) if active is None else active
    return Importance(main={n: float(v * scale) for n, v in zip(space.names, main)},
                      pairs={(space.names[i], space.names[j]): float(v * scale)
                             for (i, j), v in pair.items()},
                      variance=float(unscale(float(V), 2 * k)), method=method,
                      n_evaluations=int(n_eval),
                      active={n: float(p) for n, p in zip(space.names, active)})


def _closed(F: np.ndarray, W: np.ndarray, keep: tuple) -> tuple[float, float]:
    """``(Var(m), weight)``: the variance, under the weights ``W`` (an array the shape of
    ``F``, zero where a cell does not count), of ``m``, the weighted mean of ``F`` over every
    axis but ``keep`` as a function of those; and the total weight (variance 0 when it is
    zero)."""
    other = tuple(a for a in range(F.ndim) if a not in keep)
    w = W.sum(axis=other)
    s = np.where(W > 0, F * W, 0.0).sum(axis=other)
    total = float(w.sum())
    if total <= 0:
        return 0.0, 0.0
    m = np.divide(s, w, out=np.zeros_like(s), where=w > 0)
    return float(np.sum(w * (m - s.sum() / total) ** 2) / total), total


def _interaction(F: np.ndarray, W: np.ndarray, axes: tuple) -> tuple[float, float]:
    """``(V_ij, weight)``: what the two coordinates ``axes`` of ``F`` explain together beyond
    their main effects, under the weights ``W`` (:func:`_closed`)."""
    v, w = _closed(F, W, axes)
    return v - _closed(F, W, axes[:1])[0] - _closed(F, W, axes[1:])[0], w


def _effects(F, W, act, pairs, varying) -> tuple[np.ndarray, dict]:
    """Main effects and pair interactions of the table ``F`` whose axes are the space's
    dimensions, under the weights ``W`` (the allowed cells), each weighted by its share
    (``act[d]``: the cells where dimension ``d`` is active; see the module docstring)."""
    D = len(varying)
    total = W.sum()
    main = np.zeros(D)
    for d in np.flatnonzero(varying):
        v, w = _closed(F, W & act[d], (d,))
        main[d] = v * w / total
    pair = {}
    if pairs:
        for i, j in combinations(range(D), 2):
            pair[(i, j)] = 0.0
            if varying[i] and varying[j]:
                v, w = _interaction(F, W & act[i] & act[j], (i, j))
                pair[(i, j)] = v * w / total
    return main, pair


def _exact(f, space, pairs) -> Importance:
    shape = tuple(abs(int(k)) for k in space.levels)
    U = enumerate_grid(space.levels)
    active, allowed = space.active_and_allowed(U)
    U[~active] = space.inactive_unit
    # each distinct configuration once (a conditional space has many points per one)
    distinct, inverse = np.unique(U[allowed], axis=0, return_inverse=True)
    F = np.zeros(U.shape[0])
    F[allowed] = evaluate(f, distinct)[inverse.reshape(-1)]
    # a surface too large to square is decomposed divided by 2^k (exactly): the fractions are
    # the same, its variance V 4^k
    k = target_exponent(F)
    if k:
        F = np.ldexp(F, -k)
    F, W = F.reshape(shape), allowed.reshape(shape)
    act = [(active[:, d] & allowed).reshape(shape) for d in range(len(shape))]
    main, pair = _effects(F, W, act, pairs, np.array(shape) != 1)
    shares = [a.sum() / W.sum() for a in act]
    V, _ = _closed(F, W, tuple(range(len(shape))))
    return _fractions(space, V, main, pair, "exact", distinct.shape[0], k, shares)


def _quadrature(space, d: int) -> np.ndarray:
    """The unit coordinates of dimension ``d`` its conditional means are taken at: every
    value of a discrete dimension with at most :data:`GRID` of them, else the centres of
    :data:`GRID` equal cells (moved to values the dimension can hold); equally weighted."""
    k = abs(int(space.levels[d]))
    if 0 < k <= GRID:
        return (np.arange(k) + 0.5) / k
    Z = np.full((GRID, len(space)), 0.5)
    Z[:, d] = (np.arange(GRID) + 0.5) / GRID
    return to_search_points(space, Z)[:, d]


def _conditional(f, space, pairs, n, rng) -> Importance:
    """The ``"sobol"`` estimate in a conditional space (see the module docstring)."""
    D = len(space)
    sample = search_sample(space, n, rng)
    active, allowed = space.active_and_allowed(sample)
    if not allowed.any():
        raise ValueError(f"none of n_samples={n} points of the space is allowed; raise "
                         f"n_samples.")
    U, act = sample[allowed], active[allowed]
    U[~act] = space.inactive_unit
    fU = evaluate(f, U)
    shares = act.mean(axis=0)
    background = sample[:max(1, n // GRID)]
    varying = space.levels != 1
    effects = [(d,) for d in np.flatnonzero(varying)]
    if pairs:
        effects += [(i, j) for i, j in combinations(range(D), 2) if varying[i] and varying[j]]
    tables, weights = {}, {}
    n_eval = U.shape[0]
    for S in effects:
        axes = [_quadrature(space, d) for d in S]
        mesh = np.meshgrid(*axes, indexing="ij")
        means, counts = grid_means(f, space, list(S), np.stack([m.ravel() for m in mesh], 1),
                                   background)
        tables[S] = np.where(counts > 0, means, 0.0).reshape(mesh[0].shape)
        weights[S] = counts.reshape(mesh[0].shape).astype(float)
        n_eval += int(counts.sum())
    # divided by 2^k (exactly) where squares would overflow, as in _exact
    k = max([target_exponent(fU), *(target_exponent(t) for t in tables.values())])
    if k:
        fU = np.ldexp(fU, -k)
        tables = {S: np.ldexp(t, -k) for S, t in tables.items()}
    main, pair = np.zeros(D), {}
    for S, t in tables.items():
        if len(S) == 1:
            main[S[0]] = shares[S[0]] * _closed(t, weights[S], (0,))[0]
        else:
            both = (act[:, S[0]] & act[:, S[1]]).mean()
            pair[S] = both * _interaction(t, weights[S], (0, 1))[0]
    if pairs:
        pair = {(i, j): pair.get((i, j), 0.0) for i, j in combinations(range(D), 2)}
    return _fractions(space, float(np.var(fU)), main, pair, "sobol", n_eval, k, shares)


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
