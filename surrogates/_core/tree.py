"""The Mondrian tree store: all trees of a forest as flat arrays (allocation, growth,
pickling, invariants).

One :class:`TreeStore` holds all trees of a forest as flat arrays indexed ``[tree, node, ...]``
so that one compiled call grows, extends or routes through every tree.  The compiled kernels
that do so, and the layout of the arrays, are in :mod:`surrogates._core._tree_kernels`.
"""

from __future__ import annotations

import mmap
import time

import numpy as np

from .ingest import BAD_X, BIG_Y, FAR_X, scaled_rows
from ._rng_kernels import seed_states
from ._tree_kernels import (HEAD, LEFT, NNODES, PARENT, PAUSED, RIGHT, ROOT, TASK_CLASSIFICATION,
                            TASK_REGRESSION, TAU, _is_paused, apply_trees, extend_trees,
                            extend_trees_parallel, fit_trees, fit_trees_serial, preorder,
                            restat_regression, restat_regression_serial)

#: the tree kernels run on the thread pool only from this many points times trees.  Below it
#: a fit or an update is a fraction of a millisecond on one thread, where the pool saves a
#: few microseconds when the cores are free and stalls for milliseconds when other processes
#: hold them (10 trees on the 2-core machine under load: a fit of 30 points 0.13 ms serial
#: against 16 ms threaded, a one-point update 14 us against 11 us; from 100 points a fit was
#: twice as fast threaded), and a fresh install running a small forest compiles no threaded
#: kernel (a first ``minimize`` of 30 calls saves seconds)
THREADS_FROM = 512


def fresh_array(shape, dtype=np.float64) -> np.ndarray:
    """``np.empty(shape, dtype)``; a large one is backed by its own anonymous memory map.

    For large arrays numpy asks the kernel for transparent huge pages, and where the kernel
    then compacts memory synchronously (THP ``defrag = madvise``), first touching a fresh
    array can stall; the kernels are no slower on ordinary pages.  Measured stall:
    surrogates/README.md, section 'Implementation choices measured during development'.  (A
    map is zero-filled on demand like ``np.empty``'s memory; pickles and copies of the array
    are ordinary arrays.)
    """
    dtype = np.dtype(dtype)
    nbytes = int(np.prod(shape)) * dtype.itemsize
    if nbytes < 1 << 22:  # below 4 MiB numpy does not ask for huge pages
        return np.empty(shape, dtype)
    return np.frombuffer(mmap.mmap(-1, nbytes), dtype=dtype).reshape(shape)


class _SmallBatchKernel:
    """Chooses between the serial and the threaded extend kernel for small batches.

    Updating the trees on parallel threads can make a one-point update faster, but a parallel
    region can stall when other processes hold the cores (measured: surrogates/README.md,
    section 'Implementation choices measured during development').
    Both kernels grow identical trees, so the choice is only about speed: the one with the
    lower moving average of seconds per point, the other being re-timed every ``EXPLORE``
    calls.  (The first call of each kernel in a process, which may load or compile it, is
    not timed.)
    """

    EXPLORE = 32
    _warm = [False, False]  # per kernel pair (a subclass for another pair has its own)

    def __init__(self):
        self.cost = [0.0, 0.0]
        self.calls = 0

    def pick(self) -> int:
        self.calls += 1
        if self.cost[0] == 0.0 or self.cost[1] == 0.0:
            return self.calls % 2
        k = int(self.cost[1] < self.cost[0])
        return 1 - k if self.calls % self.EXPLORE == 0 else k

    def record(self, k: int, seconds_per_point: float) -> None:
        if not type(self)._warm[k]:
            type(self)._warm[k] = True
            return
        c = self.cost[k]
        self.cost[k] = seconds_per_point if c == 0.0 else 0.75 * c + 0.25 * seconds_per_point

    @classmethod
    def run(cls, owner, attr, serial, threaded, n_points, *args):
        """Call ``serial(*args)`` or ``threaded(*args)`` on ``n_points`` points, as chosen by
        the chooser stored as ``owner.<attr>`` (created on first use), and time the call."""
        chooser = owner.__dict__.get(attr)
        if chooser is None:
            chooser = cls()
            setattr(owner, attr, chooser)
        k = chooser.pick()
        t0 = time.perf_counter()
        (threaded if k else serial)(*args)
        chooser.record(k, (time.perf_counter() - t0) / n_points)


class TargetsTooLarge(ValueError):
    """Raised by :meth:`TreeStore.extend` when a scaled target exceeds ``y_limit``; the inputs
    are otherwise valid and nothing was changed, so the caller can rescale and retry."""

    def __init__(self, row):
        super().__init__(f"Input y: target {row} is too large for the current target scaling.")
        self.row = row


class TreeStore:
    """All trees of one forest as flat arrays, plus the (scaled) training points they index.

    Parameters
    ----------
    n_trees, n_features, n_stats : int
        Number of trees, of input features, and of label statistics per node.
    lifetime : float
        Mondrian lifetime (budget) lambda; ``inf`` by default in the papers.
    min_samples_split : int
        Blocks with fewer points are paused (see ``_is_paused``).
    task : int
        ``TASK_REGRESSION``, ``TASK_CLASSIFICATION`` or ``TASK_STRUCTURE``.
    seed_sequence : numpy.random.SeedSequence
        Source of the trees' independent random streams.
    """

    def __init__(self, n_trees, n_features, n_stats, lifetime, min_samples_split, task,
                 seed_sequence, capacity=16):
        self.n_trees = int(n_trees)
        self.n_features = int(n_features)
        self.n_stats = int(n_stats)
        self.lifetime = float(lifetime)
        self.min_samples_split = float(min_samples_split)
        self.task = int(task)
        self.n_points = 0
        self.rng = seed_states(seed_sequence, self.n_trees)
        self.meta = np.zeros((self.n_trees, 2), np.int64)
        self._allocate_points(capacity)
        self._allocate_nodes(2 * capacity)

    # -- allocation -------------------------------------------------------------------
    def _allocate_points(self, cap):
        T, D = self.n_trees, self.n_features
        X = fresh_array((cap, D), np.float64)
        y = fresh_array(cap, np.float64)
        pnext = fresh_array((T, cap), np.int64)
        n = self.n_points
        if n:
            X[:n] = self.X[:n]
            y[:n] = self.y[:n]
            pnext[:, :n] = self.pnext[:, :n]
        self.X, self.y, self.pnext = X, y, pnext

    def _allocate_nodes(self, cap):
        T, D, S = self.n_trees, self.n_features, self.n_stats
        # every field of a node is written when the kernels create it: no initialisation
        inode = fresh_array((T, cap, 6), np.int64)
        fnode = fresh_array((T, cap, 2), np.float64)
        box = fresh_array((T, cap, 2, D), np.float64)
        stats = fresh_array((T, cap, S), np.float64)
        if hasattr(self, "inode"):
            used = int(self.meta[:, NNODES].max())
            inode[:, :used] = self.inode[:, :used]
            fnode[:, :used] = self.fnode[:, :used]
            box[:, :used] = self.box[:, :used]
            stats[:, :used] = self.stats[:, :used]
        self.inode, self.fnode, self.box, self.stats = inode, fnode, box, stats

    def __getstate__(self):
        """Pickle only what is in use: points ``0..n_points-1`` and, per tree, its nodes (the
        tail of a tree with fewer nodes than the largest is zeroed, so equal forests give equal
        bytes).  Unpickled arrays grow again on the next update; timing state is dropped."""
        state = {k: v for k, v in self.__dict__.items()
                 if k not in ("_small_batches", "_predict_batches")}
        n = self.n_points
        state["X"] = self.X[:n].copy()
        state["y"] = self.y[:n].copy()
        state["pnext"] = self.pnext[:, :n].copy()
        counts = self.meta[:, NNODES]
        used = int(counts.max()) if counts.size else 0
        for name in ("inode", "fnode", "box", "stats"):
            a = getattr(self, name)[:, :used].copy()
            for t in range(self.n_trees):
                a[t, counts[t]:] = 0
            state[name] = a
        return state

    def reserve(self, n_points):
        """Make room for ``n_points`` points in total.

        A tree of ``n`` points has at most ``2 n - 1`` nodes (every leaf holds a point), so
        the node arrays are kept at twice the point capacity: then the kernels, which add
        nodes without checking, can never write past them while the points fit.  (Unpickled
        stores hold exactly what is in use and regain that margin here.)
        """
        if n_points > self.X.shape[0]:
            self._allocate_points(max(n_points, 2 * self.X.shape[0]))
        if 2 * self.X.shape[0] > self.inode.shape[1]:
            self._allocate_nodes(max(2 * self.X.shape[0], 2 * self.inode.shape[1]))

    def _check_room(self, n_points):
        """Refuse to run a node-writing kernel on ``n_points`` points unless the arrays are
        large enough for any tree those points can make (the compiled kernels do not check
        their writes)."""
        if n_points > self.X.shape[0] or 2 * n_points > self.inode.shape[1] \
                or self.pnext.shape[1] < n_points:
            raise RuntimeError(f"tree store too small for {n_points} points: point capacity "
                               f"{self.X.shape[0]}, node capacity {self.inode.shape[1]}")

    def use_threads(self, n_points=None) -> bool:
        """Whether a kernel working on ``n_points`` points (default: those stored) of every
        tree should run on the thread pool (see :data:`THREADS_FROM`)."""
        n = self.n_points if n_points is None else n_points
        return self.n_trees >= 2 and n * self.n_trees >= THREADS_FROM

    def _args(self):
        return (self.X, self.y, self.inode, self.fnode, self.box, self.stats, self.pnext,
                self.meta, self.rng, self.lifetime, self.min_samples_split, self.task)

    # -- growth -----------------------------------------------------------------------
    def fit(self, X, y):
        """Replace all trees by batch trees grown on ``(X, y)`` (already scaled)."""
        n = X.shape[0]
        self.n_points = 0
        self.meta[:] = 0
        self.reserve(n)
        self.X[:n] = X
        self.y[:n] = y
        self.n_points = n
        self._check_room(n)
        (fit_trees if self.use_threads() else fit_trees_serial)(n, *self._args())

    def extend(self, Xraw, y, lower, scale, x_limit=np.inf, y_mult=1.0, y_limit=np.inf):
        """Insert points one at a time into every tree (online = batch in distribution).

        ``Xraw`` is in the user's units and is scaled by ``(Xraw - lower) / scale`` on the
        way in, ``y`` is multiplied by ``y_mult``.  Non-finite input, or a scaled input beyond
        ``x_limit``, raises ``ValueError``; a scaled target beyond ``y_limit`` (all else valid)
        raises :class:`TargetsTooLarge`; either leaves the store untouched.
        """
        b = Xraw.shape[0]
        start = self.n_points
        Xs, ys, row, kind = scaled_rows(Xraw, y, lower, scale, x_limit, y_mult, y_limit)
        if row >= 0:
            if kind == BIG_Y:
                raise TargetsTooLarge(row)
            if kind == FAR_X:
                raise ValueError(f"Input X: sample {row} lies too far outside the feature range "
                                 f"the model was fitted on (more than {x_limit:.3g} times that "
                                 f"range away); pass feature_bounds covering it, or refit.")
            name = "X" if kind == BAD_X else "y"
            raise ValueError(f"Input {name} contains NaN or infinity (sample {row}).")
        self.reserve(start + b)
        self.X[start:start + b] = Xs
        self.y[start:start + b] = ys
        self._check_room(start + b)
        self.n_points = start + b
        if b >= 16 or not self.use_threads():
            kernel = extend_trees_parallel if self.use_threads() else extend_trees
            kernel(start, start + b, *self._args())
            return
        _SmallBatchKernel.run(self, "_small_batches", extend_trees, extend_trees_parallel, b,
                              start, start + b, *self._args())

    def set_targets(self, y):
        """Replace the targets of all stored points (regression) and recompute the node
        statistics; the trees' partitions do not depend on the targets and are kept."""
        n = self.n_points
        self.y[:n] = y
        kernel = restat_regression if self.use_threads() else restat_regression_serial
        kernel(self.y, self.inode, self.pnext, self.stats, self.meta)

    # -- introspection ----------------------------------------------------------------
    def apply(self, Xq):
        return apply_trees(Xq, self.inode, self.fnode, self.meta)

    def is_leaf(self, t):
        nn = self.meta[t, NNODES]
        return self.inode[t, :nn, LEFT] < 0

    def leaf_points(self, t, j):
        """Indices of the training points stored at leaf ``j`` of tree ``t``."""
        out = []
        q = self.inode[t, j, HEAD]
        while q >= 0:
            out.append(q)
            q = self.pnext[t, q]
        return np.asarray(out, dtype=np.int64)


def check_invariants(store: TreeStore, atol: float = 1e-9) -> None:
    """Raise ``AssertionError`` unless every tree of ``store`` is a valid Mondrian tree.

    Checks: each internal node has two children whose boxes nest in it; split times strictly
    increase from parent to child; label statistics of a node equal the sum over its children
    (counts) and, for leaves, the statistics of the points stored there; every point sits in
    exactly one leaf per tree, inside its box and on the right side of every split above it;
    every leaf is paused when the lifetime is infinite; a paused leaf satisfies the pause rule
    and an internal node does not.
    """
    X, y = store.X[: store.n_points], store.y[: store.n_points]
    for t in range(store.n_trees):
        nn = store.meta[t, NNODES]
        if store.n_points == 0:
            assert nn == 0
            continue
        order = preorder(store.inode, store.meta, t)
        assert len(order) == nn, "unreachable nodes"
        root = store.meta[t, ROOT]
        assert store.inode[t, root, PARENT] == -1
        seen = np.zeros(store.n_points, np.int64)
        for j in order:
            lo, hi = store.box[t, j, 0], store.box[t, j, 1]
            tau = store.fnode[t, j, TAU]
            par = store.inode[t, j, PARENT]
            tp = store.fnode[t, par, TAU] if par >= 0 else 0.0
            assert tau > tp, f"tree {t} node {j}: split time {tau} not after parent's {tp}"
            n = store.stats[t, j, 0]
            if store.inode[t, j, LEFT] >= 0:
                l, r = store.inode[t, j, LEFT], store.inode[t, j, RIGHT]
                assert store.inode[t, l, PARENT] == j and store.inode[t, r, PARENT] == j
                assert store.inode[t, j, PAUSED] == 0
                assert tau < store.lifetime
                for c in (l, r):
                    assert np.all(store.box[t, c, 0] >= lo - atol)
                    assert np.all(store.box[t, c, 1] <= hi + atol)
                    assert store.stats[t, c, 0] >= 1
                assert store.stats[t, l, 0] + store.stats[t, r, 0] == n
                if store.task == TASK_CLASSIFICATION:
                    np.testing.assert_array_equal(store.stats[t, l, 1:] + store.stats[t, r, 1:],
                                                  store.stats[t, j, 1:])
                elif store.task == TASK_REGRESSION:
                    nl, nr = store.stats[t, l, 0], store.stats[t, r, 0]
                    ml, mr = store.stats[t, l, 1], store.stats[t, r, 1]
                    mean = (nl * ml + nr * mr) / n
                    m2 = (store.stats[t, l, 2] + store.stats[t, r, 2]
                          + nl * (ml - mean) ** 2 + nr * (mr - mean) ** 2)
                    scale = 1.0 + abs(mean)
                    assert abs(mean - store.stats[t, j, 1]) <= 1e-8 * scale
                    assert abs(m2 - store.stats[t, j, 2]) <= 1e-7 * (1.0 + m2) * scale
                assert not _is_paused(store.box, store.stats, t, j, store.min_samples_split,
                                      store.task)
            else:
                assert tau == store.lifetime
                pts = store.leaf_points(t, j)
                assert len(pts) == n, f"tree {t} leaf {j}: {len(pts)} points, count {n}"
                seen[pts] += 1
                np.testing.assert_allclose(X[pts].min(axis=0), lo, atol=atol)
                np.testing.assert_allclose(X[pts].max(axis=0), hi, atol=atol)
                if store.task == TASK_REGRESSION:
                    assert abs(y[pts].mean() - store.stats[t, j, 1]) <= 1e-8 * (1 + abs(y[pts].mean()))
                elif store.task == TASK_CLASSIFICATION:
                    counts = np.bincount(y[pts].astype(np.int64), minlength=store.n_stats - 1)
                    np.testing.assert_array_equal(counts, store.stats[t, j, 1:])
                if store.inode[t, j, PAUSED] == 1:
                    assert _is_paused(store.box, store.stats, t, j, store.min_samples_split,
                                      store.task)
                if np.isinf(store.lifetime):
                    assert store.inode[t, j, PAUSED] == 1, "leaf not paused with infinite lifetime"
                # every stored point is routed to this leaf by the splits above it
                leaf_of = apply_trees(X[pts], store.inode, store.fnode, store.meta)[:, t]
                assert np.all(leaf_of == j), f"tree {t} leaf {j}: a point is routed elsewhere"
        assert np.all(seen == 1), f"tree {t}: points not in exactly one leaf"
