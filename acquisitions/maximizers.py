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


def _min_distances(P: np.ndarray, data: np.ndarray, block: int = 4096) -> np.ndarray:
    """Euclidean distance of every row of ``P`` to its nearest row of ``data``."""
    out = np.empty(P.shape[0])
    sq = (data * data).sum(axis=1)
    for a in range(0, P.shape[0], block):
        B = P[a:a + block]
        d2 = (B * B).sum(axis=1)[:, None] + sq[None, :] - 2.0 * B @ data.T
        out[a:a + block] = np.sqrt(np.maximum(d2.min(axis=1), 0.0))
    return out


#: each local-search round tries continuous steps of these multiples of ``step``
STEP_SCALES = np.array([1.0, 0.1, 0.01])

#: scores within this relative distance of the best score form the plateau of tied best points
TIE_RTOL = 1e-9
#: at most this many plateau points are ranked by their distance to the data (a random subset)
MAX_PLATEAU = 20_000


def _top_unique(scores: np.ndarray, points: np.ndarray | None, exclude: set, n: int,
                rng: np.random.Generator, far_from: np.ndarray | None = None) -> np.ndarray:
    """Indices of the ``n`` best scores, skipping points whose :func:`row_keys` are excluded or
    already taken (keys are made only for the rows looked at).

    Ties are broken at random; with ``far_from`` (evaluated points), the points tied with the
    best score (within :data:`TIE_RTOL`) come farthest-from-``far_from`` first.  A forest's
    acquisition is piecewise constant: a whole region can share the best score, and the model
    then has no reason to prefer the spot next to an evaluated point over the rest of it.
    Only the best few scores are sorted (a partial selection), so 250,000 candidates cost
    little more than the scoring.
    """
    s = -np.nan_to_num(np.asarray(scores, dtype=float), nan=-np.inf)
    N = s.shape[0]
    if N == 0 or n <= 0:
        return np.empty(0, dtype=np.int64)
    tie_rank = None  # per row: distance rank on the plateau, nan elsewhere
    if far_from is not None and len(far_from) and points is not None:
        top = s.min()
        if np.isfinite(top):
            plateau = np.flatnonzero(s <= top + TIE_RTOL * (1.0 + abs(top)))
            if plateau.size > 1:
                s = s.copy()
                s[plateau] = top
                ranked = plateau if plateau.size <= MAX_PLATEAU else rng.choice(
                    plateau, MAX_PLATEAU, replace=False)
                dist = _min_distances(np.asarray(points, dtype=float)[ranked],
                                      np.asarray(far_from, dtype=float).reshape(
                                          -1, points.shape[1]))
                # plateau rows sort before every random tie (in [0, 1)), farthest first
                tie_rank = np.full(N, np.nan)
                tie_rank[ranked] = -dist - 1.0
    k = min(N, max(1024, 16 * n))
    while True:
        if k < N:
            thr = np.partition(s, k - 1)[k - 1]
            part = np.flatnonzero(s <= thr)  # every row tied with the k-th is kept
        else:
            part = np.arange(N)
        tie = rng.random(part.size)
        if tie_rank is not None:
            p = tie_rank[part]
            tie = np.where(np.isnan(p), tie, p)
        order = part[np.lexsort((tie, s[part]))]
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
        if len(out) == n or k >= N:
            return np.asarray(out, dtype=np.int64)
        k = min(N, 8 * k)


def maximize_over_candidates(score: ScoreFn, candidates: np.ndarray, available: np.ndarray,
                             n: int = 1, rng: np.random.Generator | None = None,
                             far_from: np.ndarray | None = None) -> np.ndarray:
    """Indices (into ``candidates``) of the ``n`` best available rows, by exact enumeration.

    ``available`` is a boolean mask (False for rows already evaluated or pending).  Ties are
    broken uniformly at random so that a flat acquisition does not always pick the first row;
    with ``far_from`` (the evaluated points) rows tied with the best score come
    farthest-from-the-data first.
    """
    rng = np.random.default_rng() if rng is None else rng
    idx = np.flatnonzero(available)
    if idx.size == 0:
        return np.empty(0, dtype=np.int64)
    C = candidates[idx]
    s = np.asarray(score(C), dtype=float)
    best = _top_unique(s, None if far_from is None else C, set(), min(n, idx.size), rng,
                       far_from)
    return idx[best]


def _neighbours(U: np.ndarray, levels: np.ndarray, rng: np.random.Generator, steps,
                n_cont: int, joint: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Neighbours of every row of ``U``; returns (points, owner row index).

    One-exchange (SMAC): each neighbour changes one coordinate.  ``joint``: the continuous
    coordinates instead move together, ``n_cont * (number of continuous coordinates)``
    Gaussian steps per row, so that a search can follow a valley that is not axis-aligned.
    Continuous moves are made at every step size in ``steps``; discrete neighbours (which
    do not depend on it) once.
    """
    m, D = U.shape
    steps = np.atleast_1d(np.asarray(steps, dtype=float))
    blocks, owners = [], []

    def gaussian_moves(cols, k):
        """``k`` Gaussian moves of the coordinates ``cols`` per row and step size; row ``i``
        belongs to owner ``i // (k S)`` and uses step ``(i // k) % S``."""
        V = np.repeat(U, k * steps.size, axis=0)
        scale = np.tile(np.repeat(steps, k), m)[:, None]
        V[:, cols] = np.clip(V[:, cols] + scale * rng.standard_normal((V.shape[0], cols.size)),
                             0.0, 1.0)
        blocks.append(V)
        owners.append(np.repeat(np.arange(m), k * steps.size))

    cont = np.flatnonzero(levels == 0)
    if joint and cont.size:
        gaussian_moves(cont, n_cont * cont.size)
    for d in range(D):
        if joint and levels[d] == 0:
            continue
        k = int(levels[d])
        if k == 0:
            gaussian_moves(np.array([d]), n_cont)
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
                          max_rounds: int = 100,
                          far_from: np.ndarray | None = None,
                          neighbourhood: str = "one-exchange",
                          min_improvement: float = 0.0) -> np.ndarray:
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
    neighbourhood : {"one-exchange", "joint"}, default="one-exchange"
        Local-search moves: SMAC's one coordinate at a time, or all continuous coordinates
        at once (see :func:`_neighbours`).
    far_from : array of shape (m, D) or None
        Evaluated points: among points tied with the best score, the farthest from these
        come first (see :func:`_top_unique`).
    min_improvement : float, default=0
        A local-search move must raise the score by more than this fraction of the spread
        of the random points' scores (max - median); smaller gains count as no improvement,
        so that a search on a smooth slope does not creep on in negligible steps.
    """
    rng = np.random.default_rng() if rng is None else rng
    if neighbourhood not in ("one-exchange", "joint"):
        raise ValueError(f"neighbourhood must be 'one-exchange' or 'joint', got "
                         f"{neighbourhood!r}.")
    joint = neighbourhood == "joint"
    levels = np.asarray(list(levels), dtype=np.int64)
    D = levels.size
    exclude = exclude if isinstance(exclude, (set, frozenset)) else set(exclude)
    if sampler == "sobol":
        m = int(2 ** np.ceil(np.log2(max(n_random, 2))))
        R = qmc.Sobol(D, scramble=True, seed=rng).random(m)[:n_random]
    elif sampler == "random":
        R = rng.random((n_random, D))
    else:
        raise ValueError(f"sampler must be 'sobol' or 'random', got {sampler!r}.")
    R = snap(R, levels)
    sR = np.asarray(score(R), dtype=float)
    finite = sR[np.isfinite(sR)]
    tol = float(min_improvement) * (finite.max() - np.median(finite)) if finite.size else 0.0
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
        V, own = _neighbours(cur[active], levels, rng, step * STEP_SCALES, n_cont_neighbours,
                             joint)
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
        improved = fV[bi] > fcur[active[owners]] + tol
        stall[active] += 1
        rows = active[owners[improved]]
        cur[rows] = V[bi[improved]]
        fcur[rows] = fV[bi[improved]]
        stall[rows] = 0
    P = np.concatenate(seen_pts)
    F = np.concatenate(seen_scores)
    pick = _top_unique(F, np.ascontiguousarray(P), exclude, n, rng, far_from)
    return P[pick]
