"""Partial dependence of a response surface on one or two dimensions.

The partial dependence of ``f`` on coordinates ``S`` at ``u_S`` is the average of
``f(u_S, U_rest)`` over the search measure of the other coordinates (Friedman, 2001,
Section 8.2), estimated with ``n_samples`` scrambled-Sobol points of the rest, the same points
at every grid value (so differences along the grid carry no sampling noise).  Everything is
computed in unit-cube coordinates; the grid is also given in the space's values.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from surrogates._core.scaling import target_exponent, unscale

from .._core.arguments import check_int
from ..space import Dimension, Space
from .surface import CHUNK, MeanFunction, evaluate, search_sample

__all__ = ["PartialDependence", "partial_dependence", "dimension_grid"]


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
        The average of the surface over the other dimensions at each grid point.
    n_samples : int
        Points of the other dimensions averaged over.
    """

    names: tuple
    unit: tuple
    values: tuple
    mean: np.ndarray
    n_samples: int


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
        The points to average over instead of fresh ones (to share them between calls).
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
    n_samples = sample.shape[0]
    cols = [space.names.index(n) for n in names]
    grids = [dimension_grid(space.dimensions[n], space.levels[c], n_points)
             for n, c in zip(names, cols)]
    mesh = np.meshgrid(*[u for u, _ in grids], indexing="ij")
    G = np.stack([m.ravel() for m in mesh], axis=1)  # (n_grid, len(names))
    means = np.empty(G.shape[0])
    step = max(1, CHUNK // n_samples)  # grid points per block: bounded memory
    for a in range(0, G.shape[0], step):
        U = np.repeat(sample[None, :, :], G[a:a + step].shape[0], axis=0)
        U[:, :, cols] = G[a:a + step, None, :]
        v = evaluate(f, U.reshape(-1, len(space))).reshape(-1, n_samples)
        # averaged divided by 2^k (exactly) where the sum of the values would overflow
        k = target_exponent(v)
        means[a:a + step] = unscale((np.ldexp(v, -k) if k else v).mean(axis=1), k)
    return PartialDependence(names, tuple(u for u, _ in grids), tuple(v for _, v in grids),
                             means.reshape(mesh[0].shape), n_samples)
