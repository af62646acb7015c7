"""Partial dependence of a response surface on one or two dimensions.

The partial dependence of ``f`` on coordinates ``S`` at ``u_S`` is the average of
``f(u_S, U_rest)`` over the search measure of the other coordinates (Friedman, 2001,
Section 8.2), estimated with ``n_samples`` scrambled-Sobol points of the rest, the same points
at every grid value (so differences along the grid carry no sampling noise).  Everything is
computed in unit-cube coordinates; the grid is also given in the space's values.

In a conditional space the average is over the configurations where the dimensions ``S`` are
active: each background point gets the grid value, is made canonical (which activates the
children the grid value selects, with the point's own values for them) and counts only if
every dimension of ``S`` is active in it and it is allowed.  So the partial dependence of a
conditional dimension at ``u`` is the mean of the surface over the configurations of its
branch with that value (``E[f | S active, allowed, u_S = u]``), not diluted by the branches
where it plays no part, and a forbidden value is left out rather than averaged in.  Where no
background point qualifies (a value every allowed configuration forbids, or a pair whose
members are never active together) the partial dependence is nan.  In a space without
conditions every background point counts and this is Friedman's partial dependence.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from surrogates._core.scaling import target_exponent, unscale

from .._core.arguments import check_int
from ..space import Dimension, Space
from .surface import CHUNK, MeanFunction, evaluate, search_sample

__all__ = ["PartialDependence", "partial_dependence", "dimension_grid", "grid_means"]


@dataclass(frozen=True)
class PartialDependence:
    """The partial dependence of a surface on one or two dimensions.

    Attributes
    ----------
    names : tuple of str
        The dimensions, in the order of ``mean``'s axes.
    unit : tuple of ndarray
        Each dimension's grid in unit-cube coordinates.
    values : tuple of list
        The same grids in the space's values (numbers, choices or ordinal values).
    mean : ndarray of shape ``(len(unit[0]),)`` or ``(len(unit[0]), len(unit[1]))``
        The average of the surface over the other dimensions at each grid point (in a
        conditional space over the configurations where the dimensions are active; nan where
        there is none, see the module docstring).
    n_samples : int
        Points of the other dimensions (the background sample).
    counts : ndarray of int, the shape of ``mean``
        The background points averaged at each grid point: ``n_samples`` everywhere in a space
        without conditions, else those where the dimensions are active and that are allowed.
    """

    names: tuple
    unit: tuple
    values: tuple
    mean: np.ndarray
    n_samples: int
    counts: np.ndarray


def dimension_grid(dim: Dimension, levels: int, n_points: int) -> tuple[np.ndarray, list]:
    """At most ``n_points`` unit-cube coordinates spanning ``dim``, and their values: every
    level of a discrete dimension with at most ``n_points`` of them (else evenly spaced ones),
    an even grid in the coordinate of a continuous one (log-integers rounded, repeats
    dropped)."""
    k = abs(int(levels))
    if k:
        idx = np.arange(k) if k <= n_points else np.unique(
            np.round(np.linspace(0, k - 1, n_points)).astype(int))
        u = (idx + 0.5) / k
    else:
        u = np.unique(dim.to_unit(dim.from_unit(np.linspace(0.0, 1.0, n_points))))
    return u, dim.from_unit(u)


def partial_dependence(f: MeanFunction, space: Space, names, n_points: int = 40,
                       n_samples: int = 256, random_state=0, sample=None) -> PartialDependence:
    """Partial dependence of ``f`` on one dimension or a pair of dimensions.

    Parameters
    ----------
    f : callable
        ``f(U) -> mean`` on unit-cube rows (:func:`mfbo.results.surface.mean_function`).
    space : Space
    names : str or pair of str
        The dimension(s).
    n_points : int, default=40
        Grid points per dimension (fewer for a discrete dimension with fewer values).
    n_samples : int, default=256
        Search-measure points of the other dimensions each grid value is averaged over
        (scikit-optimize's ``plot_objective`` uses 250 random ones).
    random_state : int, Generator or None, default=0
        Seeds the Sobol scrambling.
    sample : ndarray of shape (n, D), optional
        The points to average over instead of fresh ones (to share them between calls), in
        the unit cube: every coordinate in ``[0, 1]``, the inactive ones too (as
        :func:`~mfbo.results.surface.search_sample` draws them).
    """
    names = (names,) if isinstance(names, str) else tuple(names)
    if not 1 <= len(names) <= 2 or len(set(names)) != len(names):
        raise ValueError(f"names must be one dimension or two distinct ones, got {names!r}.")
    for n in names:
        if n not in space.dimensions:
            raise ValueError(f"names: {n!r} is not a dimension of the space {space.names}.")
    n_points = check_int(n_points, "n_points", 2)
    if sample is None:
        n_samples = check_int(n_samples, "n_samples")
        sample = search_sample(space, n_samples, np.random.default_rng(random_state))
    else:
        sample = np.asarray(sample, dtype=float)
        if sample.ndim != 2 or sample.shape[1] != len(space) or sample.shape[0] < 1:
            raise ValueError(f"sample must have shape (n, {len(space)}) with n >= 1, got "
                             f"{sample.shape}.")
        if not np.all((sample >= 0.0) & (sample <= 1.0)):
            raise ValueError("sample must lie in the unit cube [0, 1] (inactive coordinates "
                             "too: the background points are made canonical here).")
    n_samples = sample.shape[0]
    cols = [space.names.index(n) for n in names]
    grids = [dimension_grid(space.dimensions[n], space.levels[c], n_points)
             for n, c in zip(names, cols)]
    mesh = np.meshgrid(*[u for u, _ in grids], indexing="ij")
    G = np.stack([m.ravel() for m in mesh], axis=1)  # (n_grid, len(names))
    means, counts = grid_means(f, space, cols, G, sample)
    return PartialDependence(names, tuple(u for u, _ in grids), tuple(v for _, v in grids),
                             means.reshape(mesh[0].shape), n_samples,
                             counts.reshape(mesh[0].shape))


def grid_means(f: MeanFunction, space: Space, cols, G: np.ndarray,
               sample: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(means, counts)``: at each row ``g`` of ``G`` (n_grid, len(cols)), the mean of ``f``
    over the rows of ``sample`` with the coordinates ``cols`` set to ``g``, made canonical,
    among those where every one of ``cols`` is active and that are allowed, and the number
    of those rows (every row in a space without conditions; mean nan where there is none).
    ``f`` is evaluated at those rows only, ``CHUNK`` at a time."""
    n, D = sample.shape
    means = np.full(G.shape[0], np.nan)
    counts = np.zeros(G.shape[0], dtype=np.int64)
    step = max(1, CHUNK // n)  # grid points per block: bounded memory
    for a in range(0, G.shape[0], step):
        g = G[a:a + step]
        U = np.repeat(sample[None, :, :], g.shape[0], axis=0)
        U[:, :, cols] = g[:, None, :]
        U = U.reshape(-1, D)
        ok = np.ones(U.shape[0], dtype=bool)
        if space.constrained:
            active, allowed = space.active_and_allowed(U)
            U[~active] = space.inactive_unit
            ok = active[:, cols].all(axis=1) & allowed
        v = np.zeros(U.shape[0])
        if ok.any():
            v[ok] = evaluate(f, U[ok])
        v, c = v.reshape(-1, n), ok.reshape(-1, n).sum(axis=1)
        # averaged divided by 2^k (exactly) where the sum of the values would overflow
        k = target_exponent(v)
        total = (np.ldexp(v, -k) if k else v).sum(axis=1)
        means[a:a + step] = unscale(np.where(c > 0, total / np.maximum(c, 1), np.nan), k)
        counts[a:a + step] = c
    return means, counts
