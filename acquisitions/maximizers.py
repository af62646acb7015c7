"""Maximisers of an acquisition score over the unit cube.

Two ways, both batched (one surrogate call per round -- or per batch of bounded size when a
round is large -- never one per point):

* :func:`maximize_over_candidates` enumerates a finite candidate matrix exactly (the papers'
  250,000-point grids and the LDA/SVM tables), skipping rows already evaluated or pending.
* :func:`maximize_random_local` scores random or Sobol points, then runs a local search (SMAC's
  one-exchange neighbourhood: Gaussian steps for continuous coordinates, neighbouring levels for
  ordinal ones, any other level for categorical ones -- a random sample of
  :data:`MAX_CHOICE_NEIGHBOURS` of them for one of many choices) from the best few random
  points and the best evaluated points, stopping after ``patience`` rounds without improvement
  (and, with ``search_patience``, all at once when the best of them stops improving).  A round
  has about ``12 D`` neighbours per search, of ``D`` coordinates each: they are made and
  scored in batches of bounded size, and only the best points seen are kept, so that memory
  grows linearly, not quadratically, with the dimension.

Coordinates follow one convention, shared with the search spaces that produce them: column
``d`` is continuous when ``levels[d] == 0``; an ordinal dimension with ``k`` levels has
``levels[d] == k`` and level ``i`` sits at ``(i + 0.5) / k``; a categorical dimension with ``k``
choices has ``levels[d] == -k`` and the same encoding.
"""

from __future__ import annotations

from typing import Callable, Iterable

import numpy as np

ScoreFn = Callable[[np.ndarray], np.ndarray]

__all__ = ["level_index", "snap", "row_keys", "maximize_over_candidates", "maximize_random_local",
           "enumerate_grid", "finite_size"]


def level_index(u, k: int):
    """The index of the level, of ``k`` equal parts of [0, 1], that unit coordinate(s) ``u``
    fall in (a float array, or a float for a scalar; 1 falls in the last)."""
    return np.minimum(np.floor(np.asarray(u, dtype=float) * k), k - 1)


def snap(U: np.ndarray, levels: np.ndarray) -> np.ndarray:
    """Clip to the unit cube and move discrete coordinates to their level centres."""
    U = np.clip(np.asarray(U, dtype=float), 0.0, 1.0)
    for d in np.flatnonzero(levels):
        k = abs(int(levels[d]))
        U[..., d] = (level_index(U[..., d], k) + 0.5) / k
    return U


def row_keys(U: np.ndarray) -> list[bytes]:
    """Hashable keys for rows (after :func:`snap`), used to avoid duplicate proposals."""
    U = np.ascontiguousarray(np.round(np.asarray(U, dtype=float), 12))
    if U.ndim != 2 or U.shape[1] == 0:
        return [r.tobytes() for r in U]
    # each row's bytes as one void item: the same keys as ``r.tobytes()``, made at once
    return U.view(np.dtype((np.void, U.shape[1] * U.itemsize))).ravel().tolist()


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

#: a categorical coordinate of more other choices than this contributes a random sample of
#: this many of them as neighbours per round (a new sample each round), so that a round's cost
#: does not grow with the number of choices (all 50,000 of a large one cost seconds a round)
MAX_CHOICE_NEIGHBOURS = 64

#: scores within this relative distance of the best score form the plateau of tied best points
TIE_RTOL = 1e-9
#: at most this many plateau points are ranked by their distance to the data (a random subset)
MAX_PLATEAU = 20_000

#: a local search makes and scores its points in batches of at most this many coordinates
#: (rows times D; 4 MB of points), but at least :data:`MIN_BATCH_ROWS` rows: a round of the
#: joint neighbourhood has about ``12 D`` points per start, so ``D^2`` coordinates in all
#: (19 MB at D = 100, and the arithmetic that makes them several times that)
BATCH_FLOATS = 2 ** 19
MIN_BATCH_ROWS = 256
#: the points a search has scored are pruned to the best few once they hold more than this
#: many coordinates (8 MB of points) and more rows than twice what is kept
KEEP_FLOATS = 2 ** 20


def _top_unique(scores: np.ndarray, points: np.ndarray | None, exclude: set, n: int,
                rng: np.random.Generator, far_from: np.ndarray | None = None,
                n_total: int | None = None) -> np.ndarray:
    """Indices of the ``n`` best scores, skipping points whose :func:`row_keys` are excluded or
    already taken (keys are made only for the rows looked at).

    Ties are broken at random; with ``far_from`` (evaluated points), the points tied with the
    best score (within :data:`TIE_RTOL`) come farthest-from-``far_from`` first.  A forest's
    acquisition is piecewise constant: a whole region can share the best score, and the model
    then has no reason to prefer the spot next to an evaluated point over the rest of it.
    Only the best few scores are sorted (a partial selection), so 250,000 candidates cost
    little more than the scoring.

    ``n_total`` (default: the number of rows) says that the rows are what was kept, in their
    original order, of ``n_total`` rows, and that no dropped row is among the best
    ``len(scores)`` or on the plateau (see :class:`_BestPoints`).  The answer and the random
    numbers drawn are then those of the call on all ``n_total`` rows, as long as the search
    for ``n`` distinct allowed rows stays within the kept ones.
    """
    s = -np.nan_to_num(np.asarray(scores, dtype=float), nan=-np.inf, posinf=np.inf,
                       neginf=-np.inf)
    N = s.shape[0]
    N_all = N if n_total is None else max(int(n_total), N)
    if N == 0 or n <= 0:
        return np.empty(0, dtype=np.int64)
    tie_rank = None  # per row: distance rank on the plateau, nan elsewhere
    if far_from is not None and len(far_from) and points is not None:
        top = s.min()
        if np.isfinite(top):
            # (the bound stays finite near the largest float, so that an unscored row, at
            # +inf here, is never taken for a tie of the best)
            with np.errstate(over="ignore"):
                bound = min(top + TIE_RTOL * (1.0 + abs(top)), np.finfo(float).max)
            plateau = np.flatnonzero(s <= bound)
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
    k = min(N_all, max(1024, 16 * n))
    while True:
        if k < N_all and k <= N:
            thr = np.partition(s, k - 1)[k - 1]
            part = np.flatnonzero(s <= thr)  # every row tied with the k-th is kept
        else:  # every row (or, past the kept rows, every kept row)
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
        if len(out) == n or k >= N_all or k >= N:
            return np.asarray(out, dtype=np.int64)
        k = min(N_all, 8 * k)


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


def _neighbour_blocks(U: np.ndarray, levels: np.ndarray, rng: np.random.Generator, steps,
                      n_cont: int, joint: bool = False, max_rows: int | None = None,
                      joint_dims: int | None = None):
    """Neighbours of every row of ``U`` in pieces of at most ``max_rows`` rows (``None``: no
    limit); yields (points, owner row index) in the order, and drawing the random numbers in
    the order, of the whole neighbourhood (see :func:`_neighbours`)."""
    m, D = U.shape
    steps = np.atleast_1d(np.asarray(steps, dtype=float))
    S = steps.size

    def gaussian_moves(cols, k):
        """``k`` Gaussian moves of the coordinates ``cols`` per row and step size; row ``i``
        belongs to owner ``i // (k S)`` and uses step ``(i // k) % S``.  The normal deviates
        of consecutive pieces are consecutive draws, so pieces equal one whole draw."""
        total = m * k * S
        every = cols.size == D  # all coordinates move (cols is sorted)
        size = max(1, total if max_rows is None else int(max_rows))
        for a in range(0, total, size):
            r = np.arange(a, min(a + size, total))
            owner = r // (k * S)
            V = U[owner]
            # clip(V[:, cols] + scale * z, 0, 1), in place (the same floating-point operations)
            z = rng.standard_normal((r.size, cols.size))
            z *= steps[(r // k) % S][:, None]
            z += V if every else V[:, cols]
            np.clip(z, 0.0, 1.0, out=z)
            if every:
                V = z
            else:
                V[:, cols] = z
            yield V, owner

    def pieces(V, owner):
        size = max(1, V.shape[0] if max_rows is None else int(max_rows))
        for a in range(0, V.shape[0], size):
            yield V[a:a + size], owner[a:a + size]

    cont = np.flatnonzero(levels == 0)
    if joint and cont.size:
        dims = cont.size if joint_dims is None else min(cont.size, joint_dims)
        yield from gaussian_moves(cont, n_cont * dims)
    for d in range(D):
        if joint and levels[d] == 0:
            continue
        k = int(levels[d])
        if k == 0:
            yield from gaussian_moves(np.array([d]), n_cont)
            continue
        kk = abs(k)
        if kk < 2:
            continue
        cur = level_index(U[:, d], kk).astype(np.int64)
        if k > 0:  # ordinal: the two adjacent levels
            for delta in (-1, 1):
                lev = cur + delta
                ok = (lev >= 0) & (lev < kk)
                V = U[ok].copy()
                V[:, d] = (lev[ok] + 0.5) / kk
                yield from pieces(V, np.flatnonzero(ok))
        elif kk - 1 > MAX_CHOICE_NEIGHBOURS:  # categorical of many choices: a sample of them
            # the same random offsets for every row make distinct other choices for each
            shifts = 1 + rng.choice(kk - 1, MAX_CHOICE_NEIGHBOURS, replace=False)
            rows = np.arange(m)
            for shift in shifts:
                V = U.copy()
                V[:, d] = ((cur + shift) % kk + 0.5) / kk
                yield from pieces(V, rows)
        else:  # categorical: every other choice
            for lev in range(kk):
                ok = cur != lev
                V = U[ok].copy()
                V[:, d] = (lev + 0.5) / kk
                yield from pieces(V, np.flatnonzero(ok))


def _neighbours(U: np.ndarray, levels: np.ndarray, rng: np.random.Generator, steps,
                n_cont: int, joint: bool = False,
                joint_dims: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Neighbours of every row of ``U``; returns (points, owner row index).

    One-exchange (SMAC): each neighbour changes one coordinate.  ``joint``: the continuous
    coordinates instead move together, ``n_cont * (number of continuous coordinates, at most
    joint_dims)`` Gaussian steps per row, so that a search can follow a valley that is not
    axis-aligned.
    Continuous moves are made at every step size in ``steps``; discrete neighbours (which
    do not depend on it) once: the adjacent levels of an ordinal coordinate, every other
    choice of a categorical one, or for one of more than ``MAX_CHOICE_NEIGHBOURS + 1``
    choices, that many of the others drawn from ``rng`` (the same offsets from each row's
    choice, so the draw does not depend on the rows).  :func:`_neighbour_blocks` makes the
    same points piecewise.
    """
    blocks, owners = [], []
    for V, own in _neighbour_blocks(U, levels, rng, steps, n_cont, joint,
                                    joint_dims=joint_dims):
        blocks.append(V)
        owners.append(own)
    if not blocks:
        return np.empty((0, U.shape[1])), np.empty(0, dtype=np.int64)
    return np.concatenate(blocks), np.concatenate(owners)


def _batches(pieces, max_rows: int):
    """Consecutive non-empty pieces ``(V, owner)`` joined into batches of at most ``max_rows``
    rows (a piece is never split; one piece of more rows is a batch of its own)."""
    Vs, owns, rows = [], [], 0
    for V, own in pieces:
        if V.shape[0] == 0:
            continue
        if Vs and rows + V.shape[0] > max_rows:
            yield (Vs[0], owns[0]) if len(Vs) == 1 else (np.concatenate(Vs), np.concatenate(owns))
            Vs, owns, rows = [], [], 0
        Vs.append(V)
        owns.append(own)
        rows += V.shape[0]
    if Vs:
        yield (Vs[0], owns[0]) if len(Vs) == 1 else (np.concatenate(Vs), np.concatenate(owns))


class _BestPoints:
    """The points scored by a search, pruned to the best ones when they grow large.

    Rows are kept in the order they were added, as the blocks they came in.  Once they hold
    more than ``limit_floats`` coordinates (and more than twice the rows the last pruning
    kept) they are cut to those scoring at least the ``keep``-th best score, together with
    (``plateau``) every row within :data:`TIE_RTOL` of the best score: these are all the rows
    :func:`_top_unique` can look at when it needs at most ``keep`` rows, since later points
    only narrow the plateau and raise the ``keep``-th score.  Ties could keep unboundedly
    many rows, so at most ``keep + MAX_PLATEAU`` are kept (the best, then the earliest), and
    ``exact`` turns False.

    The block added with ``slot=True`` (the searches' current points, updated in place as
    their scores rise) is held by reference and never cut.
    """

    def __init__(self, D: int, keep: int, plateau: bool, limit_floats: int | None = None):
        self.D, self.keep, self.plateau = D, int(keep), plateau
        self.cap = self.keep + MAX_PLATEAU
        limit_floats = KEEP_FLOATS if limit_floats is None else int(limit_floats)
        self.base_limit = max(2 * self.keep, limit_floats // max(D, 1))
        self.limit = self.base_limit
        self.blocks: list[tuple[np.ndarray, np.ndarray]] = []
        self.slot = None   # index in ``blocks`` of the slot block
        self.rows = 0      # rows held
        self.n_seen = 0    # rows ever added
        self.exact = True

    def add(self, P: np.ndarray, F: np.ndarray, slot: bool = False) -> None:
        if slot:
            self.slot = len(self.blocks)
        self.blocks.append((P, F))
        self.rows += P.shape[0]
        self.n_seen += P.shape[0]
        if self.rows > self.limit:
            self.prune()

    def prune(self) -> None:
        sizes = [b[0].shape[0] for b in self.blocks]
        s = -np.nan_to_num(np.concatenate([b[1] for b in self.blocks]), nan=-np.inf)
        k = min(self.keep, s.size)
        thr = np.partition(s, k - 1)[k - 1]
        if self.plateau:
            top = s.min()
            if np.isfinite(top):
                thr = max(thr, top + TIE_RTOL * (1.0 + abs(top)))
        keep = s <= thr
        if self.slot is not None:
            a = sum(sizes[:self.slot])
            keep[a:a + sizes[self.slot]] = False
        if np.count_nonzero(keep) > self.cap:
            self.exact = False
            idx = np.flatnonzero(keep)
            keep[:] = False
            keep[idx[np.argsort(s[idx], kind="stable")[:self.cap]]] = True
        del s

        def gather(lo: int, hi: int) -> list:
            """The kept rows of blocks ``lo, ..., hi - 1`` as one block (or none)."""
            a, b = sum(sizes[:lo]), sum(sizes[:hi])
            mask = keep[a:b]
            c = int(np.count_nonzero(mask))
            if c == 0:
                return []
            P, F = np.empty((c, self.D)), np.empty(c)
            w, o = 0, a
            for (Pb, Fb), n in zip(self.blocks[lo:hi], sizes[lo:hi]):
                mb = keep[o:o + n]
                cb = int(np.count_nonzero(mb))
                np.compress(mb, Pb, axis=0, out=P[w:w + cb])
                F[w:w + cb] = Fb[mb]
                w, o = w + cb, o + n
            return [(P, F)]

        if self.slot is None:
            self.blocks = gather(0, len(self.blocks))
        else:
            before = gather(0, self.slot)
            after = gather(self.slot + 1, len(self.blocks))
            slot = self.blocks[self.slot]
            self.blocks = before + [slot] + after
            self.slot = len(before)
        self.rows = sum(b[0].shape[0] for b in self.blocks)
        self.limit = max(self.base_limit, 2 * self.rows)

    def points(self) -> tuple[np.ndarray, np.ndarray]:
        """All rows held (after a last pruning, if pruning has begun), in order."""
        if self.n_seen > self.rows:
            self.prune()
        if not self.blocks:
            return np.empty((0, self.D)), np.empty(0)
        return (np.concatenate([b[0] for b in self.blocks]),
                np.concatenate([b[1] for b in self.blocks]))


def _best_score(f: np.ndarray) -> float:
    """The highest non-NaN score of ``f``; -inf if there is none."""
    return float(np.nanmax(f)) if f.size and not np.all(np.isnan(f)) else -np.inf


def _score_batches(score: ScoreFn, U: np.ndarray, max_rows: int) -> np.ndarray:
    """``score`` of the rows of ``U``, called on at most ``max_rows`` rows at a time."""
    if U.shape[0] <= max_rows:
        return np.asarray(score(U), dtype=float)
    return np.concatenate([np.asarray(score(U[a:a + max_rows]), dtype=float)
                           for a in range(0, U.shape[0], max_rows)])


def maximize_random_local(score: ScoreFn, levels: Iterable[int], n: int = 1,
                          rng: np.random.Generator | None = None, n_random: int = 10_000,
                          sampler: str = "sobol", starts: np.ndarray | None = None,
                          n_local: int = 10, patience: int = 10, step: float = 0.2,
                          n_cont_neighbours: int = 4, exclude: Iterable[bytes] = (),
                          max_rounds: int = 100,
                          far_from: np.ndarray | None = None,
                          neighbourhood: str = "one-exchange",
                          min_improvement: float = 0.0,
                          joint_dims: int | None = None,
                          search_patience: int = 0,
                          extra: np.ndarray | None = None) -> np.ndarray:
    """The ``n`` best distinct points found by random/Sobol sampling plus local search.

    Parameters
    ----------
    score : callable
        Maps an ``(m, D)`` matrix of unit-cube points to ``m`` scores (higher is better), each
        row's score independent of the other rows: it is called on batches of at most
        ``max(256, 2**19 // D)`` rows (:data:`BATCH_FLOATS`), so that memory stays linear in D.
    levels : sequence of int
        Per-coordinate kind, see the module docstring.
    n : int, default=1
        Number of distinct points to return (best first).
    n_random : int, default=10000
        Random (``sampler="random"``) or scrambled Sobol (``"sobol"``) points scored first
        (SMAC3 uses 10,000 random points); 0 with ``extra``: only those are scored.
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
    joint_dims : int or None, default=None
        With the joint neighbourhood, make as many moves per point as one-exchange would in
        at most this many continuous dimensions (None: in all of them): a round's cost then
        stops growing with the dimension.
    search_patience : int, default=0
        Stop all searches once the best score found by any of them has risen by no more than
        ``min_improvement`` (as above) in this many rounds in a row (0: never; each search
        stops by ``patience`` alone).  Searches from starts well below the best can climb by
        small gains for many rounds without ever reaching it, and the point returned is the
        best one found, so their rounds cost time and change nothing.
    extra : array of shape (m, D) or None
        Further points scored with the random ones (and so candidates for the local searches'
        starts), e.g. drawn from a density of the best observations.

    Notes
    -----
    The points scored are kept only while they are few (:data:`KEEP_FLOATS`); beyond that, only
    the best ``8 max(1024, 16 n)`` of them and those tied with the best score
    (:class:`_BestPoints`).  The answer is the same as if every point had been kept unless more
    than ``8 max(1024, 16 n) + MAX_PLATEAU`` points tie, or the best ``8 max(1024, 16 n)``
    hold fewer than ``n`` distinct points that are not excluded.
    """
    rng = np.random.default_rng() if rng is None else rng
    if neighbourhood not in ("one-exchange", "joint"):
        raise ValueError(f"neighbourhood must be 'one-exchange' or 'joint', got "
                         f"{neighbourhood!r}.")
    joint = neighbourhood == "joint"
    if isinstance(search_patience, bool) or not isinstance(search_patience, (int, np.integer)) \
            or search_patience < 0:
        raise ValueError(f"search_patience must be an integer >= 0, got {search_patience!r}.")
    levels = np.asarray(list(levels), dtype=np.int64)
    D = levels.size
    max_rows = max(MIN_BATCH_ROWS, BATCH_FLOATS // max(D, 1))
    exclude = exclude if isinstance(exclude, (set, frozenset)) else set(exclude)
    if sampler not in ("sobol", "random"):
        raise ValueError(f"sampler must be 'sobol' or 'random', got {sampler!r}.")
    if n_random == 0:  # the extra points only
        R = np.empty((0, D))
    elif sampler == "sobol":
        from scipy.stats import qmc  # slow to import: on use

        m = int(2 ** np.ceil(np.log2(max(n_random, 2))))
        R = qmc.Sobol(D, scramble=True, seed=rng).random(m)[:n_random]
    else:
        R = rng.random((n_random, D))
    if extra is not None and len(extra):
        R = np.vstack([R, np.asarray(extra, dtype=float).reshape(-1, D)])
    R = snap(R, levels)
    sR = _score_batches(score, R, max_rows)
    finite = sR[np.isfinite(sR)]
    tol = float(min_improvement) * (finite.max() - np.median(finite)) if finite.size else 0.0
    best_random = R[np.argsort(-np.nan_to_num(sR, nan=-np.inf), kind="stable")[:n_local]]
    S = best_random if starts is None or len(starts) == 0 else np.vstack(
        [best_random, snap(np.asarray(starts, dtype=float).reshape(-1, D), levels)])
    cur = S.copy()
    fcur = _score_batches(score, cur, max_rows) if len(cur) else np.empty(0)
    kept = _BestPoints(D, 8 * max(1024, 16 * n),
                       plateau=far_from is not None and len(far_from) > 0)
    # the random points, the searches' points (held by reference: their final ones count,
    # in this place), and all their moves
    kept.add(R, sR)
    kept.add(cur, fcur, slot=True)
    del R
    stall = np.zeros(cur.shape[0], dtype=np.int64)
    top = _best_score(fcur)
    top_stall = 0
    for _ in range(max_rounds if patience > 0 else 0):
        if search_patience and top_stall >= search_patience:
            break
        active = np.flatnonzero(stall < patience)
        if active.size == 0:
            break
        # best neighbour of each active point, batch by batch: the highest score, NaN only
        # if all are NaN, the earliest among equals (as a stable sort of all of them gives)
        fbest = np.full(active.size, np.nan)
        Vbest = np.empty((active.size, D))
        found = np.zeros(active.size, dtype=bool)
        n_moves = 0
        for V, own in _batches(_neighbour_blocks(cur[active], levels, rng, step * STEP_SCALES,
                                                 n_cont_neighbours, joint, max_rows,
                                                 joint_dims), max_rows):
            fV = np.asarray(score(V), dtype=float)
            kept.add(V, fV)
            n_moves += V.shape[0]
            order = np.lexsort((-fV, own))
            first = np.ones(order.size, dtype=bool)
            first[1:] = own[order][1:] != own[order][:-1]
            bi = order[first]
            owners = own[bi]
            f_new, f_old = fV[bi], fbest[owners]
            better = ~found[owners] | (f_new > f_old) | (np.isnan(f_old) & ~np.isnan(f_new))
            upd = owners[better]
            fbest[upd] = f_new[better]
            Vbest[upd] = V[bi[better]]
            found[upd] = True
        if n_moves == 0:
            break
        improved = found & (fbest > fcur[active] + tol)
        stall[active] += 1
        rows = active[improved]
        cur[rows] = Vbest[improved]
        fcur[rows] = fbest[improved]
        stall[rows] = 0
        if search_patience:
            new_top = _best_score(fcur)
            top_stall = 0 if new_top > top + tol else top_stall + 1
            top = max(top, new_top)
    P, F = kept.points()
    pick = _top_unique(F, P, exclude, n, rng, far_from,
                       n_total=None if kept.n_seen == kept.rows else kept.n_seen)
    return P[pick]
