"""Maximisers of an acquisition score over the unit cube.

Two ways, both batched (one surrogate call per round, never one per point):

* :func:`maximize_over_candidates` enumerates a finite candidate matrix exactly (the papers'
  250,000-point grids and the LDA/SVM tables), skipping rows already evaluated or pending.
* :func:`maximize_random_local` scores random or Sobol points, then runs a local search (SMAC's
  one-exchange neighbourhood: Gaussian steps for continuous coordinates, neighbouring levels for
  ordinal ones, any other level for categorical ones) from the best few random points and the
  best evaluated points, stopping after ``patience`` rounds without improvement.

Coordinates follow one convention, shared with the search spaces that produce them: column
``d`` is continuous when ``levels[d] == 0``; an ordinal dimension with ``k`` levels has
``levels[d] == k`` and level ``i`` sits at ``(i + 0.5) / k``; a categorical dimension with ``k``
choices has ``levels[d] == -k`` and the same encoding.
"""

from __future__ import annotations

from typing import Callable, Iterable

import numpy as np
from scipy.stats import qmc

ScoreFn = Callable[[np.ndarray], np.ndarray]

__all__ = ["snap", "row_keys", "maximize_over_candidates", "maximize_random_local",
           "enumerate_grid", "finite_size"]


def snap(U: np.ndarray, levels: np.ndarray) -> np.ndarray:
    """Clip to the unit cube and move discrete coordinates to their level centres."""
    U = np.clip(np.asarray(U, dtype=float), 0.0, 1.0)
    for d in np.flatnonzero(levels):
        k = abs(int(levels[d]))
        idx = np.minimum(np.floor(U[..., d] * k), k - 1)
        U[..., d] = (idx + 0.5) / k
    return U


def row_keys(U: np.ndarray) -> list[bytes]:
    """Hashable keys for rows (after :func:`snap`), used to avoid duplicate proposals."""
    U = np.ascontiguousarray(np.round(np.asarray(U, dtype=float), 12))
    return [r.tobytes() for r in U]


def finite_size(levels: np.ndarray) -> float:
    """Number of distinct points of a space (``inf`` if any coordinate is continuous)."""
    if np.any(levels == 0):
        return float("inf")
    return float(np.prod(np.abs(levels).astype(float)))


def enumerate_grid(levels: np.ndarray) -> np.ndarray:
    """All points of a fully discrete space, one row each."""
    axes = [(np.arange(abs(int(k))) + 0.5) / abs(int(k)) for k in levels]
    mesh = np.meshgrid(*axes, indexing="ij")
    return np.stack([m.ravel() for m in mesh], axis=1)


def _top_unique(scores: np.ndarray, points: np.ndarray | None, exclude: set, n: int,
                rng: np.random.Generator) -> np.ndarray:
    """Indices of the ``n`` best scores, ties broken at random, skipping points whose
    :func:`row_keys` are excluded or already taken (keys are made only for the rows looked at)."""
    tie = rng.random(scores.shape[0])
    order = np.lexsort((tie, -np.nan_to_num(scores, nan=-np.inf)))
    out, seen = [], set()
    for i in order:
        if points is not None:
            key = np.round(points[i], 12).tobytes()
            if key in exclude or key in seen:
                continue
            seen.add(key)
        out.append(i)
        if len(out) == n:
            break
    return np.asarray(out, dtype=np.int64)


def maximize_over_candidates(score: ScoreFn, candidates: np.ndarray, available: np.ndarray,
                             n: int = 1, rng: np.random.Generator | None = None) -> np.ndarray:
    """Indices (into ``candidates``) of the ``n`` best available rows, by exact enumeration.

    ``available`` is a boolean mask (False for rows already evaluated or pending).  Ties are
    broken uniformly at random so that a flat acquisition does not always pick the first row.
    """
    rng = np.random.default_rng() if rng is None else rng
    idx = np.flatnonzero(available)
    if idx.size == 0:
        return np.empty(0, dtype=np.int64)
    s = np.asarray(score(candidates[idx]), dtype=float)
    best = _top_unique(s, None, set(), min(n, idx.size), rng)
    return idx[best]


def _neighbours(U: np.ndarray, levels: np.ndarray, rng: np.random.Generator, step: float,
                n_cont: int) -> tuple[np.ndarray, np.ndarray]:
    """One-exchange neighbours of every row of ``U``; returns (points, owner row index)."""
    m, D = U.shape
    blocks, owners = [], []
    for d in range(D):
        k = int(levels[d])
        if k == 0:
            V = np.repeat(U, n_cont, axis=0)
            V[:, d] = np.clip(V[:, d] + step * rng.standard_normal(V.shape[0]), 0.0, 1.0)
            blocks.append(V)
            owners.append(np.repeat(np.arange(m), n_cont))
            continue
        kk = abs(k)
        if kk < 2:
            continue
        cur = np.minimum(np.floor(U[:, d] * kk), kk - 1).astype(np.int64)
        if k > 0:  # ordinal: the two adjacent levels
            for delta in (-1, 1):
                lev = cur + delta
                ok = (lev >= 0) & (lev < kk)
                V = U[ok].copy()
                V[:, d] = (lev[ok] + 0.5) / kk
                blocks.append(V)
                owners.append(np.flatnonzero(ok))
        else:  # categorical: every other choice
            for lev in range(kk):
                ok = cur != lev
                V = U[ok].copy()
                V[:, d] = (lev + 0.5) / kk
                blocks.append(V)
                owners.append(np.flatnonzero(ok))
    if not blocks:
        return np.empty((0, D)), np.empty(0, dtype=np.int64)
    return np.concatenate(blocks), np.concatenate(owners)


def maximize_random_local(score: ScoreFn, levels: Iterable[int], n: int = 1,
                          rng: np.random.Generator | None = None, n_random: int = 10_000,
                          sampler: str = "sobol", starts: np.ndarray | None = None,
                          n_local: int = 10, patience: int = 10, step: float = 0.2,
                          n_cont_neighbours: int = 4, exclude: Iterable[bytes] = (),
                          max_rounds: int = 100) -> np.ndarray:
    """The ``n`` best distinct points found by random/Sobol sampling plus local search.

    Parameters
    ----------
    score : callable
        Maps an ``(m, D)`` matrix of unit-cube points to ``m`` scores (higher is better).
    levels : sequence of int
        Per-coordinate kind, see the module docstring.
    n : int, default=1
        Number of distinct points to return (best first).
    n_random : int, default=10000
        Random (``sampler="random"``) or scrambled Sobol (``"sobol"``) points scored first
        (SMAC3 uses 10,000 random points).
    starts : array of shape (m, D) or None
        Extra local-search starting points (the best evaluated configurations).
    n_local : int, default=10
        Local searches start from the ``n_local`` best random points plus ``starts``.
    patience : int, default=10
        A local search stops after this many rounds without improvement.
    step : float, default=0.2
        Standard deviation of the Gaussian steps in continuous coordinates (SMAC: 0.2);
        each round also tries steps ten and a hundred times smaller, so that a search can
        settle into a narrow optimum.
    exclude : iterable of bytes
        :func:`row_keys` of points that must not be returned (evaluated or pending points of
        a discrete space).
    """
    rng = np.random.default_rng() if rng is None else rng
    levels = np.asarray(list(levels), dtype=np.int64)
    D = levels.size
    exclude = set(exclude)
    if sampler == "sobol":
        m = int(2 ** np.ceil(np.log2(max(n_random, 2))))
        R = qmc.Sobol(D, scramble=True, seed=rng).random(m)[:n_random]
    elif sampler == "random":
        R = rng.random((n_random, D))
    else:
        raise ValueError(f"sampler must be 'sobol' or 'random', got {sampler!r}.")
    R = snap(R, levels)
    sR = np.asarray(score(R), dtype=float)
    best_random = R[np.argsort(-np.nan_to_num(sR, nan=-np.inf), kind="stable")[:n_local]]
    S = best_random if starts is None or len(starts) == 0 else np.vstack(
        [best_random, snap(np.asarray(starts, dtype=float).reshape(-1, D), levels)])
    cur = S.copy()
    fcur = np.asarray(score(cur), dtype=float) if len(cur) else np.empty(0)
    stall = np.zeros(cur.shape[0], dtype=np.int64)
    seen_pts, seen_scores = [R, cur], [sR, fcur]
    for _ in range(max_rounds if patience > 0 else 0):
        active = np.flatnonzero(stall < patience)
        if active.size == 0:
            break
        V, own = [], []
        for scale in (1.0, 0.1, 0.01):
            Vi, oi = _neighbours(cur[active], levels, rng, step * scale, n_cont_neighbours)
            V.append(Vi)
            own.append(oi)
        V = np.concatenate(V)
        own = np.concatenate(own)
        if V.shape[0] == 0:
            break
        fV = np.asarray(score(V), dtype=float)
        seen_pts.append(V)
        seen_scores.append(fV)
        # best neighbour of each active point
        order = np.lexsort((-fV, own))
        first = np.ones(order.size, dtype=bool)
        first[1:] = own[order][1:] != own[order][:-1]
        bi = order[first]
        owners = own[bi]
        improved = fV[bi] > fcur[active[owners]]
        stall[active] += 1
        rows = active[owners[improved]]
        cur[rows] = V[bi[improved]]
        fcur[rows] = fV[bi[improved]]
        stall[rows] = 0
    P = np.concatenate(seen_pts)
    F = np.concatenate(seen_scores)
    pick = _top_unique(F, np.ascontiguousarray(P), exclude, n, rng)
    return P[pick]
