"""The compiled structure kernels of the Mondrian tree store (grow, extend online, route).

The kernels grow a tree as SampleMondrianBlock does (Lakshminarayanan, 2016, PhD thesis,
Alg. 5.2, 5.9 and 6.2; with an explicit stack instead of recursion, whose depth the data
would set), pause blocks (ibid., Sections 5.5.1 and 6.2) and add points one at a time as
ExtendMondrianBlock does (ibid., Alg. 5.6, 5.10 and 6.4), a paused leaf un-pausing by
re-sampling its block from its stored points.  They are shared by the regressor, the
classifier and the kernel features: the only label-dependent parts are the per-node label
statistics and the pause rule, selected by ``task``.  They work on the arrays of a
:class:`surrogates._core.tree.TreeStore`, one compiled call for every tree of a forest.

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

Helpers that several kernels call at several places are compiled once and called (LLVM still
inlines the small ones); numba's ``inline="always"`` types a helper again at every call site.
The kernels here, in the RNG and in the regression forest are compiled without numba's
C-callable wrapper (``no_cfunc_wrapper``): nothing calls them through a C function pointer, so
a fresh install saves compiling one per function.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange
from numba.cpython.unsafe.numbers import trailing_zeros

from ._prefetch_kernels import prefetch
from ._rng_kernels import exponential, uniform
from .compile_ahead import ready
from .threads import parallel_kernel, run_split

LEFT, RIGHT, PARENT, FEAT, HEAD, PAUSED = 0, 1, 2, 3, 4, 5
THRESH, TAU = 0, 1
ROOT, NNODES = 0, 1

TASK_REGRESSION = 0
TASK_CLASSIFICATION = 1
TASK_STRUCTURE = 2  # label-free partitions (kernel features): pause only on zero-size boxes


# --------------------------------------------------------------------------------------
# label statistics and the pause predicate (the only label-aware pieces)
# --------------------------------------------------------------------------------------


@njit(cache=True, nogil=True, no_cfunc_wrapper=True)
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
def box_distance_over(box, t, j, X, i, bits):
    """:func:`box_distance` summed over the dimensions whose bits are set in ``bits`` only, in
    the same (ascending) order: the same number where every other dimension's term is zero."""
    eta = 0.0
    one = np.uint64(1)
    while bits:
        d = trailing_zeros(bits)
        v = X[i, d]
        eta += max(box[t, j, 0, d] - v, 0.0) + max(v - box[t, j, 1, d], 0.0)
        bits &= bits - one
    return eta


@njit(cache=True, nogil=True, no_cfunc_wrapper=True)
def box_floor_bits(box, meta, floor, out):
    """``out[t, j]``: the dimensions (bit ``d`` for dimension ``d`` < 64) in which a row at
    ``floor`` is outside node ``j``'s box, for every node in use.  A row whose other
    coordinates sit at ``floor`` is at the distance :func:`box_distance_over` sums over these
    dimensions and its own off-floor ones."""
    D = box.shape[3]
    for t in range(box.shape[0]):
        for j in range(meta[t, NNODES]):
            bits = np.uint64(0)
            for d in range(D):
                c = floor[d]
                if not (box[t, j, 0, d] <= c <= box[t, j, 1, d]):
                    bits |= np.uint64(1) << np.uint64(d)
            out[t, j] = bits


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


@njit(cache=True, nogil=True, no_cfunc_wrapper=True)
def child_containing(inode, fnode, t, j, X, i):
    """The child of internal node ``j`` on row ``X[i]``'s side of the split (left: ``<=``)."""
    if X[i, inode[t, j, FEAT]] <= fnode[t, j, THRESH]:
        return inode[t, j, LEFT]
    return inode[t, j, RIGHT]


@njit(cache=True, nogil=True, no_cfunc_wrapper=True)
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


@njit(cache=True, nogil=True, no_cfunc_wrapper=True)
def _link_points(inode, pnext, t, j, idx, start, end):
    inode[t, j, HEAD] = idx[start]
    for q in range(start, end - 1):
        pnext[t, idx[q]] = idx[q + 1]
    pnext[t, idx[end - 1]] = -1


@njit(cache=True, nogil=True, no_cfunc_wrapper=True)
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


@njit(cache=True, nogil=True, no_cfunc_wrapper=True)
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


@njit(cache=True, inline="always")
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


def _fit_tree_range(t0, t1, n, X, y, inode, fnode, box, stats, pnext, meta, rng, lifetime,
                    min_samples_split, task):
    """Grow trees ``t0..t1-1`` from scratch on points ``0..n-1`` (SampleMondrianTree): for each
    tree, :func:`_grow_block` on its root.  One compiled call per tree of the kernel that
    online growth re-samples blocks with, so a fit compiles no kernel of its own; the kernel
    releases the GIL, so the thread pool runs trees at once."""
    for t in range(t0, t1):
        meta[t, ROOT] = 0
        meta[t, NNODES] = 1
        inode[t, 0, PARENT] = -1
        idx = np.arange(n, dtype=np.int64)  # permuted in place by the tree's growth
        _grow_block(t, 0, idx, 0, n, 0.0, X, y, inode, fnode, box, stats, pnext, meta, rng,
                    lifetime, min_samples_split, task)


def fit_trees(n, X, y, inode, fnode, box, stats, pnext, meta, rng, lifetime, min_samples_split,
              task):
    """Grow every tree from scratch on points ``0..n-1`` (SampleMondrianTree), the trees split
    over the thread pool (:func:`~surrogates._core.threads.run_split`)."""
    run_split(_fit_tree_range, inode.shape[0], n, X, y, inode, fnode, box, stats, pnext, meta,
              rng, lifetime, min_samples_split, task)


def fit_trees_serial(n, X, y, inode, fnode, box, stats, pnext, meta, rng, lifetime,
                     min_samples_split, task):
    """:func:`fit_trees` on the calling thread (small forests: no thread pool to wait on)."""
    _fit_tree_range(0, inode.shape[0], n, X, y, inode, fnode, box, stats, pnext, meta, rng,
                    lifetime, min_samples_split, task)


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


@njit(cache=True, nogil=True, no_cfunc_wrapper=True)
def _widen_box(box, t, j, X, i):
    """Widen node ``j``'s box to hold row ``X[i]``."""
    for d in range(box.shape[3]):
        v = X[i, d]
        if v < box[t, j, 0, d]:
            box[t, j, 0, d] = v
        elif v > box[t, j, 1, d]:
            box[t, j, 1, d] = v


#: largest magnitude of a scaled coordinate the trees work with.  Box widths, L1 distances
#: summed over features and the branch-off rates derived from them stay finite below it; a
#: query further out is moved to this distance (it is already certain to branch off at the
#: root, so its prediction is the same), a training point further out is refused.
X_LIMIT = 2.0 ** 512


@njit(cache=True, nogil=True, no_cfunc_wrapper=True)
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


@njit(cache=True, nogil=True, no_cfunc_wrapper=True)
def extend_tree_range(t0, t1, start, end, X, y, inode, fnode, box, stats, pnext, meta, rng,
                      lifetime, min_samples_split, task):
    """Insert points ``start..end-1`` one at a time into trees ``t0..t1-1``."""
    D = X.shape[1]
    for t in range(t0, t1):
        for p in range(start, end):
            leaf = np.int64(-1)  # a one-point leaf to make for x (one copy of its code)
            if meta[t, NNODES] == 0:
                meta[t, ROOT] = 0
                meta[t, NNODES] = 1
                inode[t, 0, PARENT] = -1
                leaf = np.int64(0)
            else:
                yv = y[p]
                j = meta[t, ROOT]
                while True:
                    par = inode[t, j, PARENT]
                    tp = fnode[t, par, TAU] if par >= 0 else 0.0
                    is_leaf = inode[t, j, LEFT] < 0
                    # a paused leaf takes the point (regression too: the thesis' Alg. 6.4 has no
                    # pausing, so every point outside a leaf's box would get a leaf of its own, and
                    # online trees would no longer be distributed as batch trees grown with
                    # min_samples_split)
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
                            _grow_block(t, j, idx, np.int64(0), c, tp, X, y, inode, fnode, box,
                                        stats, pnext, meta, rng, lifetime, min_samples_split, task)
                        break
                    if not is_leaf:  # fetch the next node on x's path while this one is processed
                        _prefetch_node(t, child_containing(inode, fnode, t, j, X, p), inode, fnode,
                                       box, stats, yv, task)
                    eta = box_distance(box, t, j, X, p)
                    E = exponential(rng, t, eta)
                    if tp + E < fnode[t, j, TAU]:
                        # a new parent h above j, cutting x off from j's box; x to a new leaf k
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
                        if xv > box[t, j, 1, d]:  # hi <= loc < x: x right, j's data left
                            loc = box[t, j, 1, d] + u * (xv - box[t, j, 1, d])
                            if loc >= xv:
                                loc = np.nextafter(xv, -np.inf)
                        else:  # x <= loc < lo: x left, j's data right
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
                        leaf = k  # x's new leaf, made below
                        break
                    if eta > 0.0:
                        _widen_box(box, t, j, X, p)
                    _stats_add(stats, t, j, yv, task)
                    if is_leaf:  # a leaf whose lifetime is exhausted (finite lifetime only)
                        pnext[t, p] = inode[t, j, HEAD]
                        inode[t, j, HEAD] = p
                        break
                    j = child_containing(inode, fnode, t, j, X, p)
            if leaf >= 0:
                _singleton_leaf(t, leaf, p, X, y, inode, fnode, box, stats, pnext, lifetime,
                                task)


def extend_trees(start, end, X, y, inode, fnode, box, stats, pnext, meta, rng, lifetime,
                 min_samples_split, task):
    """Insert points ``start..end-1`` one at a time into every tree, on the calling thread
    (small batches)."""
    ready(extend_tree_range)
    extend_tree_range(0, inode.shape[0], start, end, X, y, inode, fnode, box, stats, pnext,
                      meta, rng, lifetime, min_samples_split, task)


def extend_trees_parallel(start, end, X, y, inode, fnode, box, stats, pnext, meta, rng,
                          lifetime, min_samples_split, task):
    """Same as :func:`extend_trees` with the trees split over the thread pool (large
    batches)."""
    ready(extend_tree_range)
    run_split(extend_tree_range, inode.shape[0], start, end, X, y, inode, fnode, box, stats,
              pnext, meta, rng, lifetime, min_samples_split, task)


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


@njit(cache=True, nogil=True, no_cfunc_wrapper=True)
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


@njit(cache=True, nogil=True, no_cfunc_wrapper=True)
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


@njit(cache=True, nogil=True, no_cfunc_wrapper=True)
def restat_tree_range(t0, t1, y, inode, pnext, stats, meta):
    """:func:`restat_regression` on trees ``t0..t1-1``."""
    for t in range(t0, t1):
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


def restat_regression(y, inode, pnext, stats, meta):
    """Recompute every node's regression statistics ``(n, mean, M2)`` from targets ``y``, the
    trees split over the thread pool.

    Leaves accumulate their points (Welford); internal nodes merge their children (Chan et
    al.'s pairwise update), children before parents.  The partition is untouched.
    """
    ready(restat_tree_range)
    run_split(restat_tree_range, inode.shape[0], y, inode, pnext, stats, meta)


def restat_regression_serial(y, inode, pnext, stats, meta):
    """:func:`restat_regression` on the calling thread (small forests)."""
    ready(restat_tree_range)
    restat_tree_range(0, inode.shape[0], y, inode, pnext, stats, meta)
