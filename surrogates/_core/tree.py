"""The Mondrian tree store and its compiled structure kernels (grow, extend online, route).

One :class:`TreeStore` holds all trees of a forest as flat arrays indexed ``[tree, node, ...]``
so that one compiled call grows, extends or routes through every tree.  The kernels grow a
tree as SampleMondrianBlock does (Lakshminarayanan, 2016, PhD thesis, Alg. 5.2, 5.9 and 6.2;
with an explicit stack instead of recursion, whose depth the data would set), pause blocks
(ibid., Sections 5.5.1 and 6.2) and add points one at a time as ExtendMondrianBlock does
(ibid., Alg. 5.6, 5.10 and 6.4), a paused leaf un-pausing by re-sampling its block from its
stored points.  They are shared by the regressor, the classifier and the kernel features: the
only label-dependent parts are the per-node label statistics and the pause rule, selected by
``task``.

Layout (``T`` trees, node capacity ``C``, point capacity ``P``, ``D`` features, ``S`` stats):

``inode[T, C, 6]``  int64: left, right, parent, split feature, head of the leaf's point list,
                    paused flag.  ``left == -1`` marks a leaf.
``fnode[T, C, 2]``  float64: split threshold, absolute split time tau (``lifetime`` at leaves).
``box[T, C, 2, D]`` float64: lower / upper corner of the bounding box of the node's data.
``stats[T, C, S]``  float64: label statistics.  Regression ``(n, mean, M2)`` (Welford, so no
                    cancellation); classification ``(n, count_0, ..., count_{K-1})``.
``pnext[T, P]``     int64: next point in the same leaf (singly linked list, -1 ends it).
``meta[T, 2]``      int64: root node, number of nodes in use.
``rng[T, 4]``       uint64: the tree's own xoshiro256** stream.

A tree with ``N`` points never has more than ``2N - 1`` nodes (every node holds data), so the
store only needs ``C >= 2N`` and grows by doubling outside the kernels.
"""

from __future__ import annotations

import math
import mmap
import time

import numpy as np
from numba import njit, prange

from .prefetch import prefetch
from .rng import exponential, seed_states, uniform
from .threads import parallel_kernel

LEFT, RIGHT, PARENT, FEAT, HEAD, PAUSED = 0, 1, 2, 3, 4, 5
THRESH, TAU = 0, 1
ROOT, NNODES = 0, 1

TASK_REGRESSION = 0
TASK_CLASSIFICATION = 1
TASK_STRUCTURE = 2  # label-free partitions (kernel features): pause only on zero-size boxes


# --------------------------------------------------------------------------------------
# label statistics and the pause predicate (the only label-aware pieces)
# --------------------------------------------------------------------------------------


@njit(cache=True, inline="always")
def _stats_add(stats, t, j, yv, task):
    if task == TASK_REGRESSION:
        n = stats[t, j, 0] + 1.0
        delta = yv - stats[t, j, 1]
        stats[t, j, 1] += delta / n
        stats[t, j, 2] += delta * (yv - stats[t, j, 1])
        stats[t, j, 0] = n
    elif task == TASK_CLASSIFICATION:
        stats[t, j, 0] += 1.0
        stats[t, j, 1 + np.int64(yv)] += 1.0
    else:
        stats[t, j, 0] += 1.0


@njit(cache=True, inline="always")
def _linear_dimension(box, t, j):
    s = 0.0
    for d in range(box.shape[3]):
        s += box[t, j, 1, d] - box[t, j, 0, d]
    return s


@njit(cache=True, inline="always")
def box_distance(box, t, j, X, i):
    """L1 distance from row ``X[i]`` to node ``j``'s box, eta_j(x) (Lakshminarayanan, 2016,
    Section 5.5.3): the rate of a cut above ``j`` that separates the row from the box."""
    eta = 0.0
    for d in range(box.shape[3]):
        # branch-free (which side a query falls on is unpredictable); at most one term is
        # non-zero, so the sum is the same as adding only that one
        v = X[i, d]
        eta += max(box[t, j, 0, d] - v, 0.0) + max(v - box[t, j, 1, d], 0.0)
    return eta


@njit(cache=True, inline="always")
def branch_off_probability_outside(delta, eta):
    """``1 - exp(-delta * eta)`` for a row at distance ``eta > 0`` from the box: kernels that
    have already set aside the rows inside the box (``eta = 0``, where ``delta = inf`` would
    give ``0 * inf = NaN``) call this and save the test."""
    return -math.expm1(-delta * eta)


@njit(cache=True, inline="always")
def branch_off_probability(delta, eta):
    """p^s = 1 - exp(-delta * eta), the probability that a row at distance ``eta`` from the box
    branches off within the gap ``delta`` (Lakshminarayanan, 2016, Section 5.5.3); 0 inside the
    box even when ``delta = inf``, where the formula would give ``0 * inf = NaN``."""
    if eta > 0.0:
        return branch_off_probability_outside(delta, eta)
    return 0.0


@njit(cache=True, inline="always")
def branch_off(fnode, box, t, j, tp, X, i):
    """Where the path of row ``X[i]`` meets node ``j``, whose parent splits at time ``tp``:
    ``(tau, delta, eta, p)``, the node's split time, its gap ``tau - tp`` to the parent's, the
    row's distance to the node's box and the probability that the row branches off above it."""
    tau = fnode[t, j, TAU]
    delta = tau - tp
    eta = box_distance(box, t, j, X, i)
    return tau, delta, eta, branch_off_probability(delta, eta)


@njit(cache=True, inline="always")
def child_containing(inode, fnode, t, j, X, i):
    """The child of internal node ``j`` on row ``X[i]``'s side of the split (left: ``<=``)."""
    if X[i, inode[t, j, FEAT]] <= fnode[t, j, THRESH]:
        return inode[t, j, LEFT]
    return inode[t, j, RIGHT]


@njit(cache=True)
def _is_paused(box, stats, t, j, min_samples_split, task):
    """Whether block ``j`` is paused: a leaf that keeps its points and is re-sampled once this
    turns false (Lakshminarayanan, 2016, Sections 5.5.1 and 6.2).

    Pure blocks (classification) and blocks of fewer than ``min_samples_split`` points pause,
    as in the papers; so does a block whose points all coincide, although the thesis' Alg. 6.2
    would split it: its box has no extent, so no cut can be drawn (the authors' reference code
    pauses it too).  Classification applies ``min_samples_split`` as well (Section 5.5.1 sets
    it to 2, Alg. 5.9 leaves it out).
    """
    if _linear_dimension(box, t, j) <= 0.0:
        return True
    n = stats[t, j, 0]
    if n < min_samples_split:
        return True
    if task == TASK_CLASSIFICATION:
        for k in range(1, stats.shape[2]):
            if stats[t, j, k] == n:
                return True
    return False


# --------------------------------------------------------------------------------------
# batch growth: SampleMondrianBlock with an explicit stack
# --------------------------------------------------------------------------------------


@njit(cache=True)
def _link_points(inode, pnext, t, j, idx, start, end):
    inode[t, j, HEAD] = idx[start]
    for q in range(start, end - 1):
        pnext[t, idx[q]] = idx[q + 1]
    pnext[t, idx[end - 1]] = -1


@njit(cache=True, inline="always")
def _partition(X, idx, s, e, d, loc):
    """Reorder ``idx[s:e]`` so points with ``x_d <= loc`` come first; return where they end."""
    mid = s
    for q in range(s, e):
        if X[idx[q], d] <= loc:
            tmp = idx[mid]
            idx[mid] = idx[q]
            idx[q] = tmp
            mid += 1
    return mid


@njit(cache=True)
def _grow_block(t, j, idx, start, end, tau_parent, X, y, inode, fnode, box, stats, pnext, meta,
                rng, lifetime, min_samples_split, task):
    """SampleMondrianBlock(j, points idx[start:end]) starting at time ``tau_parent``.

    Node ``j`` must already be allocated and have its parent set; its children are allocated
    here.  ``idx[start:end]`` is permuted in place.
    """
    m = end - start
    D = X.shape[1]
    cap = 2 * m + 2
    st_node = np.empty(cap, np.int64)
    st_start = np.empty(cap, np.int64)
    st_end = np.empty(cap, np.int64)
    st_tau = np.empty(cap, np.float64)
    top = 0
    st_node[0] = j
    st_start[0] = start
    st_end[0] = end
    st_tau[0] = tau_parent
    top = 1
    while top > 0:
        top -= 1
        k = st_node[top]
        s = st_start[top]
        e = st_end[top]
        tp = st_tau[top]
        for d in range(D):
            lo = np.inf
            hi = -np.inf
            for q in range(s, e):
                v = X[idx[q], d]
                if v < lo:
                    lo = v
                if v > hi:
                    hi = v
            box[t, k, 0, d] = lo
            box[t, k, 1, d] = hi
        for c in range(stats.shape[2]):
            stats[t, k, c] = 0.0
        for q in range(s, e):
            _stats_add(stats, t, k, y[idx[q]], task)
        inode[t, k, LEFT] = -1
        inode[t, k, RIGHT] = -1
        inode[t, k, FEAT] = -1
        fnode[t, k, THRESH] = np.nan
        if _is_paused(box, stats, t, k, min_samples_split, task):
            fnode[t, k, TAU] = lifetime
            inode[t, k, PAUSED] = 1
            _link_points(inode, pnext, t, k, idx, s, e)
            continue
        lin = _linear_dimension(box, t, k)
        E = exponential(rng, t, lin)
        if tp + E < lifetime:
            tau = tp + E
            # split dimension proportional to side length, location uniform on the side
            target = uniform(rng, t) * lin
            d = 0
            acc = box[t, k, 1, 0] - box[t, k, 0, 0]
            while acc <= target and d < D - 1:
                d += 1
                acc += box[t, k, 1, d] - box[t, k, 0, d]
            while box[t, k, 1, d] - box[t, k, 0, d] <= 0.0:  # guard against rounding in the sum
                d = (d + D - 1) % D
            lo = box[t, k, 0, d]
            hi = box[t, k, 1, d]
            mid = s
            for _ in range(64):
                loc = lo + uniform(rng, t) * (hi - lo)
                mid = _partition(X, idx, s, e, d, loc)
                if mid > s and mid < e:
                    break
            if mid == s or mid == e:  # rounding made every draw fall on the data's edge
                loc = 0.5 * (lo + hi)
                mid = _partition(X, idx, s, e, d, loc)
            fnode[t, k, TAU] = tau
            fnode[t, k, THRESH] = loc
            inode[t, k, FEAT] = d
            inode[t, k, PAUSED] = 0
            inode[t, k, HEAD] = -1
            left = meta[t, NNODES]
            right = left + 1
            meta[t, NNODES] = left + 2
            inode[t, k, LEFT] = left
            inode[t, k, RIGHT] = right
            inode[t, left, PARENT] = k
            inode[t, right, PARENT] = k
            st_node[top] = right
            st_start[top] = mid
            st_end[top] = e
            st_tau[top] = tau
            top += 1
            st_node[top] = left
            st_start[top] = s
            st_end[top] = mid
            st_tau[top] = tau
            top += 1
        else:  # lifetime exhausted: a leaf that is not paused
            fnode[t, k, TAU] = lifetime
            inode[t, k, PAUSED] = 0
            _link_points(inode, pnext, t, k, idx, s, e)


@njit(cache=True)
def _singleton_leaf(t, k, p, X, y, inode, fnode, box, stats, pnext, lifetime, task):
    """SampleMondrianBlock on one point, without the general machinery: a one-point block has
    a zero-size box, so it is always a paused leaf."""
    for d in range(X.shape[1]):
        box[t, k, 0, d] = X[p, d]
        box[t, k, 1, d] = X[p, d]
    for c in range(stats.shape[2]):
        stats[t, k, c] = 0.0
    _stats_add(stats, t, k, y[p], task)
    inode[t, k, LEFT] = -1
    inode[t, k, RIGHT] = -1
    inode[t, k, FEAT] = -1
    inode[t, k, PAUSED] = 1
    inode[t, k, HEAD] = p
    pnext[t, p] = -1
    fnode[t, k, THRESH] = np.nan
    fnode[t, k, TAU] = lifetime


@njit(cache=True)
def _fit_tree(t, n, X, y, inode, fnode, box, stats, pnext, meta, rng, lifetime,
              min_samples_split, task):
    meta[t, ROOT] = 0
    meta[t, NNODES] = 1
    inode[t, 0, PARENT] = -1
    idx = np.arange(n)
    _grow_block(t, 0, idx, 0, n, 0.0, X, y, inode, fnode, box, stats, pnext, meta, rng,
                lifetime, min_samples_split, task)


@parallel_kernel
@njit(cache=True, parallel=True)
def fit_trees(n, X, y, inode, fnode, box, stats, pnext, meta, rng, lifetime,
              min_samples_split, task):
    """Grow every tree from scratch on points ``0..n-1`` (SampleMondrianTree), one thread
    per tree."""
    for t in prange(inode.shape[0]):
        _fit_tree(t, n, X, y, inode, fnode, box, stats, pnext, meta, rng, lifetime,
                  min_samples_split, task)


# --------------------------------------------------------------------------------------
# online growth: ExtendMondrianBlock, one point at a time (the conditional Mondrian); paused
# leaves un-pause by re-sampling
# --------------------------------------------------------------------------------------


@njit(cache=True, inline="always")
def _prefetch_node(t, j, inode, fnode, box, stats, yv, task):
    """Prefetch the rows of node ``j`` that inserting a point of label ``yv`` reads."""
    prefetch(inode, t, j, 0)
    prefetch(fnode, t, j, 0)
    for o in range(0, box.shape[2] * box.shape[3] * 8, 64):
        prefetch(box, t, j, o)
    prefetch(stats, t, j, 0)
    if task == TASK_CLASSIFICATION:
        prefetch(stats, t, j, 8 + 8 * np.int64(yv))


@njit(cache=True, inline="always")
def _widen_box(box, t, j, X, i):
    """Widen node ``j``'s box to hold row ``X[i]``."""
    for d in range(box.shape[3]):
        v = X[i, d]
        if v < box[t, j, 0, d]:
            box[t, j, 0, d] = v
        elif v > box[t, j, 1, d]:
            box[t, j, 1, d] = v


@njit(cache=True)
def _extend_one(t, p, X, y, inode, fnode, box, stats, pnext, meta, rng, lifetime,
                min_samples_split, task):
    D = X.shape[1]
    if meta[t, NNODES] == 0:
        meta[t, ROOT] = 0
        meta[t, NNODES] = 1
        inode[t, 0, PARENT] = -1
        _singleton_leaf(t, 0, p, X, y, inode, fnode, box, stats, pnext, lifetime, task)
        return
    yv = y[p]
    j = meta[t, ROOT]
    while True:
        par = inode[t, j, PARENT]
        tp = fnode[t, par, TAU] if par >= 0 else 0.0
        is_leaf = inode[t, j, LEFT] < 0
        # a paused leaf takes the point (regression too: the thesis' Alg. 6.4 has no pausing,
        # so every point outside a leaf's box would get a leaf of its own, and online trees
        # would no longer be distributed as batch trees grown with min_samples_split)
        if is_leaf and inode[t, j, PAUSED] == 1:
            _widen_box(box, t, j, X, p)
            _stats_add(stats, t, j, yv, task)
            pnext[t, p] = inode[t, j, HEAD]
            inode[t, j, HEAD] = p
            if not _is_paused(box, stats, t, j, min_samples_split, task):
                m = np.int64(stats[t, j, 0])
                idx = np.empty(m, np.int64)
                q = inode[t, j, HEAD]
                c = 0
                while q >= 0:
                    idx[c] = q
                    c += 1
                    q = pnext[t, q]
                _grow_block(t, j, idx, 0, c, tp, X, y, inode, fnode, box, stats, pnext, meta,
                            rng, lifetime, min_samples_split, task)
            return
        if not is_leaf:  # fetch the next node on x's path while this one is processed
            _prefetch_node(t, child_containing(inode, fnode, t, j, X, p), inode, fnode, box,
                           stats, yv, task)
        eta = box_distance(box, t, j, X, p)
        E = exponential(rng, t, eta)
        if tp + E < fnode[t, j, TAU]:
            # a new parent h above j, cutting x off from j's box; x goes to a new leaf k
            target = uniform(rng, t) * eta
            acc = 0.0
            d = -1
            for dd in range(D):
                v = X[p, dd]
                ext = 0.0
                if v < box[t, j, 0, dd]:
                    ext = box[t, j, 0, dd] - v
                elif v > box[t, j, 1, dd]:
                    ext = v - box[t, j, 1, dd]
                if ext > 0.0:
                    d = dd
                    acc += ext
                    if acc > target:
                        break
            xv = X[p, d]
            u = uniform(rng, t)
            if xv > box[t, j, 1, d]:  # hi <= loc < x: x to the right, j's data to the left
                loc = box[t, j, 1, d] + u * (xv - box[t, j, 1, d])
                if loc >= xv:
                    loc = np.nextafter(xv, -np.inf)
            else:  # x <= loc < lo: x to the left, j's data to the right
                loc = xv + u * (box[t, j, 0, d] - xv)
                if loc >= box[t, j, 0, d]:
                    loc = np.nextafter(box[t, j, 0, d], -np.inf)
            h = meta[t, NNODES]
            k = h + 1
            meta[t, NNODES] = h + 2
            fnode[t, h, TAU] = tp + E
            fnode[t, h, THRESH] = loc
            inode[t, h, FEAT] = d
            inode[t, h, PAUSED] = 0
            inode[t, h, HEAD] = -1
            for dd in range(D):
                v = X[p, dd]
                box[t, h, 0, dd] = min(box[t, j, 0, dd], v)
                box[t, h, 1, dd] = max(box[t, j, 1, dd], v)
            for c in range(stats.shape[2]):
                stats[t, h, c] = stats[t, j, c]
            _stats_add(stats, t, h, yv, task)
            inode[t, h, PARENT] = par
            if par < 0:
                meta[t, ROOT] = h
            elif inode[t, par, LEFT] == j:
                inode[t, par, LEFT] = h
            else:
                inode[t, par, RIGHT] = h
            inode[t, j, PARENT] = h
            inode[t, k, PARENT] = h
            if xv <= loc:
                inode[t, h, LEFT] = k
                inode[t, h, RIGHT] = j
            else:
                inode[t, h, LEFT] = j
                inode[t, h, RIGHT] = k
            _singleton_leaf(t, k, p, X, y, inode, fnode, box, stats, pnext, lifetime, task)
            return
        if eta > 0.0:
            _widen_box(box, t, j, X, p)
        _stats_add(stats, t, j, yv, task)
        if is_leaf:  # a leaf whose lifetime is exhausted (finite lifetime only)
            pnext[t, p] = inode[t, j, HEAD]
            inode[t, j, HEAD] = p
            return
        j = child_containing(inode, fnode, t, j, X, p)


#: largest magnitude of a scaled coordinate the trees work with.  Box widths, L1 distances
#: summed over features and the branch-off rates derived from them stay finite below it; a
#: query further out is moved to this distance (it is already certain to branch off at the
#: root, so its prediction is the same), a training point further out is refused.
X_LIMIT = 2.0 ** 512


@njit(cache=True)
def scale_rows(Xraw, lower, scale, out, limit):
    """``out = (Xraw - lower) / scale`` in one pass, clipped to ``[-limit, limit]``; returns
    the first row that is not finite (``out`` is then incomplete) or -1."""
    n, D = Xraw.shape
    for i in range(n):
        for d in range(D):
            v = Xraw[i, d]
            if not np.isfinite(v):
                return i
            s = (v - lower[d]) / scale[d]
            if s > limit:  # (also catches a difference that overflowed to inf)
                s = limit
            elif s < -limit:
                s = -limit
            out[i, d] = s
    return -1


# what :func:`ingest` found besides all well (-1): a non-finite input or target, an input too
# far out of the scaled range, a target too large for its scaling (to be rescaled, not an
# error); returned as ``4 * row + kind``, one integer being cheaper to return than a pair
INGEST_BAD_X, INGEST_BAD_Y, INGEST_FAR_X, INGEST_BIG_Y = 0, 1, 2, 3


@njit(cache=True)
def ingest(Xraw, yraw, lower, scale, x_limit, y_mult, y_limit, start, X, y, write):
    """Check new rows, then (if ``write``) write them scaled into the buffers at ``start``:
    ``(Xraw - lower) / scale`` and ``yraw * y_mult``.

    Returns -1 when all is well; otherwise ``4 * row + kind`` for the first problem, and
    nothing is written: a non-finite ``Xraw`` (``INGEST_BAD_X``) or ``yraw``
    (``INGEST_BAD_Y``), a scaled input beyond ``x_limit`` (``INGEST_FAR_X``), or, only when all
    rows are otherwise valid, a scaled target beyond ``y_limit`` (``INGEST_BIG_Y``).
    """
    n, D = Xraw.shape
    big = -1
    for i in range(n):
        for d in range(D):
            if not np.isfinite(Xraw[i, d]):
                return 4 * i + INGEST_BAD_X
        if not np.isfinite(yraw[i]):
            return 4 * i + INGEST_BAD_Y
        for d in range(D):
            if not abs((Xraw[i, d] - lower[d]) / scale[d]) <= x_limit:
                return 4 * i + INGEST_FAR_X
        if big < 0 and not abs(yraw[i] * y_mult) <= y_limit:
            big = i
    if big >= 0:
        return 4 * big + INGEST_BIG_Y
    if write:
        for i in range(n):
            for d in range(D):
                X[start + i, d] = (Xraw[i, d] - lower[d]) / scale[d]
            y[start + i] = yraw[i] * y_mult
    return -1


@njit(cache=True)
def extend_trees(start, end, X, y, inode, fnode, box, stats, pnext, meta, rng, lifetime,
                 min_samples_split, task):
    """Insert points ``start..end-1`` one at a time into every tree (serial; small batches)."""
    for t in range(inode.shape[0]):
        for p in range(start, end):
            _extend_one(t, p, X, y, inode, fnode, box, stats, pnext, meta, rng, lifetime,
                        min_samples_split, task)


@parallel_kernel
@njit(cache=True, parallel=True)
def extend_trees_parallel(start, end, X, y, inode, fnode, box, stats, pnext, meta, rng,
                          lifetime, min_samples_split, task):
    """Same as :func:`extend_trees` with one thread per tree (large batches)."""
    for t in prange(inode.shape[0]):
        for p in range(start, end):
            _extend_one(t, p, X, y, inode, fnode, box, stats, pnext, meta, rng, lifetime,
                        min_samples_split, task)


# --------------------------------------------------------------------------------------
# routing and introspection
# --------------------------------------------------------------------------------------


@parallel_kernel
@njit(cache=True, parallel=True)
def apply_trees(Xq, inode, fnode, meta):
    """Leaf reached by each query point in each tree (routing by the splits), ``(n, T)``."""
    n = Xq.shape[0]
    T = inode.shape[0]
    out = np.empty((n, T), np.int64)
    for i in prange(n):
        for t in range(T):
            j = meta[t, ROOT]
            while inode[t, j, LEFT] >= 0:
                j = child_containing(inode, fnode, t, j, Xq, i)
            out[i, t] = j
    return out


@njit(cache=True)
def node_depths(inode, meta, t):
    """Depth (root = 0) of every node of tree ``t``; -1 for unused slots."""
    nn = meta[t, NNODES]
    depth = np.full(nn, -1, np.int64)
    if nn == 0:
        return depth
    stack = np.empty(nn, np.int64)
    stack[0] = meta[t, ROOT]
    depth[meta[t, ROOT]] = 0
    top = 1
    while top > 0:
        top -= 1
        j = stack[top]
        if inode[t, j, LEFT] >= 0:
            for c in (inode[t, j, LEFT], inode[t, j, RIGHT]):
                depth[c] = depth[j] + 1
                stack[top] = c
                top += 1
    return depth


@njit(cache=True)
def preorder(inode, meta, t):
    """Node ids of tree ``t`` in depth-first pre-order (parents before children)."""
    nn = meta[t, NNODES]
    order = np.empty(nn, np.int64)
    if nn == 0:
        return order
    stack = np.empty(nn, np.int64)
    stack[0] = meta[t, ROOT]
    top = 1
    c = 0
    while top > 0:
        top -= 1
        j = stack[top]
        order[c] = j
        c += 1
        if inode[t, j, LEFT] >= 0:
            stack[top] = inode[t, j, RIGHT]
            top += 1
            stack[top] = inode[t, j, LEFT]
            top += 1
    return order[:c]


@parallel_kernel
@njit(cache=True, parallel=True)
def restat_regression(y, inode, pnext, stats, meta):
    """Recompute every node's regression statistics ``(n, mean, M2)`` from targets ``y``.

    Leaves accumulate their points (Welford); internal nodes merge their children (Chan et
    al.'s pairwise update), children before parents.  The partition is untouched.
    """
    for t in prange(inode.shape[0]):
        order = preorder(inode, meta, t)
        for k in range(order.shape[0] - 1, -1, -1):
            j = order[k]
            a = inode[t, j, LEFT]
            if a < 0:
                n = 0.0
                mean = 0.0
                m2 = 0.0
                q = inode[t, j, HEAD]
                while q >= 0:
                    n += 1.0
                    delta = y[q] - mean
                    mean += delta / n
                    m2 += delta * (y[q] - mean)
                    q = pnext[t, q]
            else:
                b = inode[t, j, RIGHT]
                na = stats[t, a, 0]
                nb = stats[t, b, 0]
                n = na + nb
                delta = stats[t, b, 1] - stats[t, a, 1]
                mean = stats[t, a, 1] + delta * nb / n
                m2 = stats[t, a, 2] + stats[t, b, 2] + delta * delta * na * nb / n
            stats[t, j, 0] = n
            stats[t, j, 1] = mean
            stats[t, j, 2] = m2


# --------------------------------------------------------------------------------------
# the store (Python side: allocation, growth, pickling)
# --------------------------------------------------------------------------------------


def fresh_array(shape, dtype=np.float64) -> np.ndarray:
    """``np.empty(shape, dtype)``; a large one is backed by its own anonymous memory map.

    For large arrays numpy asks the kernel for transparent huge pages, and where the kernel
    then compacts memory synchronously (THP ``defrag = madvise``), first touching a fresh
    array can stall: growing the store of a 100-tree letter forest online took 5.4 s of its
    9.9 s that way, against about 1 s with ordinary pages, and the kernels' random accesses
    measured no slower with ordinary pages.  (A map is zero-filled on demand like
    ``np.empty``'s memory; pickles and copies of the array are ordinary arrays.)
    """
    dtype = np.dtype(dtype)
    nbytes = int(np.prod(shape)) * dtype.itemsize
    if nbytes < 1 << 22:  # below 4 MiB numpy does not ask for huge pages
        return np.empty(shape, dtype)
    return np.frombuffer(mmap.mmap(-1, nbytes), dtype=dtype).reshape(shape)


class _SmallBatchKernel:
    """Chooses between the serial and the threaded extend kernel for small batches.

    Updating the trees on parallel threads can halve the time of a one-point update, but a
    parallel region can stall for milliseconds when other processes hold the cores.
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
        fit_trees(n, *self._args())

    def extend(self, Xraw, y, lower, scale, x_limit=np.inf, y_mult=1.0, y_limit=np.inf):
        """Insert points one at a time into every tree (online = batch in distribution).

        ``Xraw`` is in the user's units and is scaled by ``(Xraw - lower) / scale`` on the
        way in, ``y`` is multiplied by ``y_mult``.  Non-finite input, or a scaled input beyond
        ``x_limit``, raises ``ValueError``; a scaled target beyond ``y_limit`` (all else valid)
        raises :class:`TargetsTooLarge`; either leaves the store untouched.
        """
        b = Xraw.shape[0]
        start = self.n_points
        room = start + b <= self.X.shape[0] and 2 * (start + b) <= self.inode.shape[1]
        bad = ingest(Xraw, y, lower, scale, x_limit, y_mult, y_limit, start, self.X, self.y,
                     room)
        if bad < 0 and not room:  # validated: now grow, then write
            self.reserve(start + b)
            bad = ingest(Xraw, y, lower, scale, x_limit, y_mult, y_limit, start, self.X, self.y,
                         True)
        if bad >= 0:
            row, kind = divmod(bad, 4)
            if kind == INGEST_BIG_Y:
                raise TargetsTooLarge(row)
            if kind == INGEST_FAR_X:
                raise ValueError(f"Input X: sample {row} lies too far outside the feature range "
                                 f"the model was fitted on (more than {x_limit:.3g} times that "
                                 f"range away); pass feature_bounds covering it, or refit.")
            name = "X" if kind == INGEST_BAD_X else "y"
            raise ValueError(f"Input {name} contains NaN or infinity (sample {row}).")
        self._check_room(start + b)
        self.n_points = start + b
        if b >= 16 or self.n_trees < 2:
            kernel = extend_trees_parallel if self.n_trees >= 2 else extend_trees
            kernel(start, start + b, *self._args())
            return
        _SmallBatchKernel.run(self, "_small_batches", extend_trees, extend_trees_parallel, b,
                              start, start + b, *self._args())

    def set_targets(self, y):
        """Replace the targets of all stored points (regression) and recompute the node
        statistics; the trees' partitions do not depend on the targets and are kept."""
        n = self.n_points
        self.y[:n] = y
        restat_regression(self.y, self.inode, self.pnext, self.stats, self.meta)

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
