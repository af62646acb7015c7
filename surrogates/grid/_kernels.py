"""Compiled kernels of the Mondrian grid (Balog & Teh, 2015, Section 5): one 1-D Mondrian
process per (grid, dimension), cell look-up, and the in-place row/column swaps of the ridge
model's inverse.

The 1-D process on the whole real line is realised *lazily and exactly* from a counter-based
random stream: the line is tiled into independent blocks (the training range ``[u0, u0 + W)``
and, on either side, blocks of widths ``W, 2W, 4W, ...``); each block carries a 1-D Mondrian
tree (the generative process of Balog et al., 2016, Section 2.2, in one dimension) whose
node ``(birth, cut time, cut position)`` is a hash of
``(seed, grid, dim, block, path)``.  A superposition of independent Poisson processes on
disjoint intervals is the Poisson process on their union, so the cuts with birth time
``<= lambda`` form a Poisson process of rate ``lambda`` on the line, nested in ``lambda``.

Only two questions are ever asked of a realisation, and both are answered by one descent:

* the first-cut time ``t_i`` of each gap between consecutive distinct training coordinates
  (the partition of the training rows depends on these alone; ``t_i ~ Exp(gap)``,
  independent: Balog & Teh, 2015, Section 5.1) -- a depth-first pass;
* the time of the first cut separating a new coordinate from its neighbours, which the report
  leaves open (it samples the gaps of the known coordinates only); realising the whole line
  answers it exactly and the same way every time: O(log(W / distance)) expected.

A point exactly on a cut has probability 0, so the side only has to be fixed: a point goes
left of a cut at ``a`` iff ``x <= a`` (as in the trees), so a cut ``p`` separates ``a < b``
iff ``a <= p < b``.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from .._core._rng_kernels import GOLDEN_GAMMA, mix64, open_unit_double
from .._core._sparse_kernels import quad_form

_ONE = np.uint64(1)
_TAG_TIME = np.uint64(1)
_TAG_POS = np.uint64(2)
_TAG_LEFT = np.uint64(3)
_TAG_RIGHT = np.uint64(4)

# A descent that has not met its target interval after this many levels is treated as "never
# cut": the remaining interval is then below ~e^-200 of the block (far below float spacing).
MAX_DEPTH = 4000
# Outer blocks double in width: 2100 of them cover every finite double.
MAX_BLOCKS = 2100


@njit(cache=True, inline="always")
def absorb(h, v):
    """Hash of the sequence (h, v); ``v`` a non-negative integer."""
    return mix64(h + GOLDEN_GAMMA * (np.uint64(v) + _ONE))


@njit(cache=True)
def block_root(seed, grid, dim, block):
    """Key of the root node of block ``block`` (0: training range; 1 + 2k: k-th block to the
    right; 2 + 2k: k-th block to the left) of the 1-D Mondrian of ``(grid, dim)``."""
    return absorb(absorb(absorb(seed, grid), dim), block)


@njit(cache=True, inline="always")
def node_cut(node, lo, hi, t0):
    """Birth time and position of the first cut of the node ``[lo, hi)`` born at ``t0``."""
    w = hi - lo
    if not w > 0.0:
        return np.inf, lo
    t = t0 - np.log(open_unit_double(absorb(node, _TAG_TIME))) / w
    p = lo + w * open_unit_double(absorb(node, _TAG_POS))
    return t, p


@njit(cache=True, inline="always")
def left_child(node):
    return absorb(node, _TAG_LEFT)


@njit(cache=True, inline="always")
def right_child(node):
    return absorb(node, _TAG_RIGHT)


@njit(cache=True)
def first_cut_in(node, lo, hi, a, b):
    """Smallest birth time of a cut ``p`` with ``a <= p < b`` in the block tree rooted at
    ``node`` on ``[lo, hi)`` (``[a, b)`` inside it); ``inf`` if there is none."""
    t0 = 0.0
    for _ in range(MAX_DEPTH):
        t, p = node_cut(node, lo, hi, t0)
        if not t < np.inf:
            return np.inf
        if a <= p < b:
            return t
        if p < a:
            node = right_child(node)
            lo = p
        else:
            node = left_child(node)
            hi = p
        t0 = t
    return np.inf


@njit(cache=True)
def _block_bounds(block, u0, W):
    if block == 0:
        return u0, u0 + W
    k = (block - 1) // 2
    if block % 2 == 1:  # right of the training range
        return u0 + W * 2.0 ** k, u0 + W * 2.0 ** (k + 1)
    return u0 - W * (2.0 ** (k + 1) - 1.0), u0 - W * (2.0 ** k - 1.0)


@njit(cache=True)
def first_cut_on_line(seed, grid, dim, u0, W, a, b):
    """Smallest birth time of a cut ``p`` with ``a <= p < b`` anywhere on the line."""
    best = np.inf
    if a >= b:
        return best
    lo, hi = _block_bounds(0, u0, W)
    if a < hi and b > lo:
        best = min(best, first_cut_in(block_root(seed, grid, dim, 0), lo, hi,
                                      max(a, lo), min(b, hi)))
    if b > u0 + W:
        for k in range(MAX_BLOCKS):
            blk = 1 + 2 * k
            lo, hi = _block_bounds(blk, u0, W)
            if lo >= b:
                break
            if hi > a:
                best = min(best, first_cut_in(block_root(seed, grid, dim, blk), lo, hi,
                                              max(a, lo), min(b, hi)))
    if a < u0:
        for k in range(MAX_BLOCKS):
            blk = 2 + 2 * k
            lo, hi = _block_bounds(blk, u0, W)
            if hi <= a:
                break
            if lo < b:
                best = min(best, first_cut_in(block_root(seed, grid, dim, blk), lo, hi,
                                              max(a, lo), min(b, hi)))
    return best


# The depth-first pass below keeps its pending block-tree nodes on a stack of parallel arrays:
# the node's key, its interval ``[lo, hi)`` and birth time, and the range ``u[first..last]`` of
# the coordinates inside it.
_Pending = namedtuple("_Pending", "node lo hi born first last")


@njit(cache=True)
def _grow(x, cap):
    y = np.empty(cap, x.dtype)
    y[:x.shape[0]] = x
    return y


@njit(cache=True)
def _pending_stack(cap):
    return _Pending(np.empty(cap, np.uint64), np.empty(cap), np.empty(cap), np.empty(cap),
                    np.empty(cap, np.int64), np.empty(cap, np.int64))


@njit(cache=True)
def _grown(stack, cap):
    """The stack with room for ``cap`` entries, its entries kept."""
    return _Pending(_grow(stack.node, cap), _grow(stack.lo, cap), _grow(stack.hi, cap),
                    _grow(stack.born, cap), _grow(stack.first, cap), _grow(stack.last, cap))


@njit(cache=True, inline="always")
def _push(stack, top, node, lo, hi, born, first, last):
    """Put a pending node on the stack (which has room); returns the new top."""
    stack.node[top] = node
    stack.lo[top] = lo
    stack.hi[top] = hi
    stack.born[top] = born
    stack.first[top] = first
    stack.last[top] = last
    return top + 1


@njit(cache=True)
def gap_first_cuts(seed, n_grids, dim, u, W, out):
    """First-cut time of every gap ``[u[i-1], u[i])`` of the sorted distinct coordinates ``u``
    for each grid: ``out[m, i]`` (``out[:, 0]`` unused).  One depth-first pass over the block-0
    tree per grid, splitting the coordinate range as the cuts arrive, O(N log N) expected."""
    n = u.shape[0]
    u0 = u[0]
    stack = _pending_stack(64)
    for m in range(n_grids):
        out[m, 0] = np.nan
        for i in range(1, n):
            out[m, i] = np.inf
        if n < 2:
            continue
        top = _push(stack, 0, block_root(seed, m, dim, 0), u0, u0 + W, 0.0, 0, n - 1)
        budget = MAX_DEPTH * 4 + 64 * n
        while top > 0 and budget > 0:
            budget -= 1
            top -= 1
            node = stack.node[top]
            lo = stack.lo[top]
            hi = stack.hi[top]
            a = stack.first[top]
            b = stack.last[top]
            t, p = node_cut(node, lo, hi, stack.born[top])
            if not t < np.inf:
                continue
            # j = first index in [a, b] with u[j] > p
            j = np.searchsorted(u[a:b + 1], p, side="right") + a
            if top + 2 > stack.node.shape[0]:
                stack = _grown(stack, 2 * stack.node.shape[0])
            if j == a:  # every point right of the cut
                top = _push(stack, top, right_child(node), p, hi, t, a, b)
            elif j > b:  # every point left of the cut
                top = _push(stack, top, left_child(node), lo, p, t, a, b)
            else:
                out[m, j] = t
                if j - 1 > a:
                    top = _push(stack, top, left_child(node), lo, p, t, a, j - 1)
                if b > j:
                    top = _push(stack, top, right_child(node), p, hi, t, j, b)


@njit(cache=True)
def block_cuts(seed, grid, dim, lo, hi, lifetime):
    """All cuts of the block-0 tree on ``[lo, hi)`` born at or before ``lifetime``:
    ``(positions, times)`` in depth-first order."""
    pos = []
    tim = []
    st_node = [block_root(seed, grid, dim, 0)]
    st_lo = [lo]
    st_hi = [hi]
    st_t = [0.0]
    while len(st_node) > 0:
        node = st_node.pop()
        a = st_lo.pop()
        b = st_hi.pop()
        t0 = st_t.pop()
        t, p = node_cut(node, a, b, t0)
        if t > lifetime:
            continue
        pos.append(p)
        tim.append(t)
        st_node.append(left_child(node))
        st_lo.append(a)
        st_hi.append(p)
        st_t.append(t)
        st_node.append(right_child(node))
        st_lo.append(p)
        st_hi.append(b)
        st_t.append(t)
    return np.array(pos, dtype=np.float64), np.array(tim, dtype=np.float64)


@njit(cache=True)
def locate(X, seed, n_grids, u_flat, u_off, u0, W, rl, rr, tl, tr):
    """Where each row of ``X`` sits relative to the training coordinates, per dimension:
    ``rl[n, d]``/``rr[n, d]`` the ranks of the left/right neighbours (-1: none; equal for an
    exact match) and ``tl[n, m, d]``/``tr[n, m, d]`` the birth time of the first cut of grid
    ``m`` separating the row from that neighbour (``inf`` for an exact match).  At lifetime
    ``lambda_d`` the row shares the neighbour's interval iff ``lambda_d < t``."""
    n, D = X.shape
    for i in range(n):
        for d in range(D):
            u = u_flat[u_off[d]:u_off[d + 1]]
            nd = u.shape[0]
            x = X[i, d]
            r = np.searchsorted(u, x)
            if r < nd and u[r] == x:
                rl[i, d] = r
                rr[i, d] = r
                for m in range(n_grids):
                    tl[i, m, d] = np.inf
                    tr[i, m, d] = np.inf
                continue
            rl[i, d] = r - 1 if r > 0 else -1
            rr[i, d] = r if r < nd else -1
            for m in range(n_grids):
                if r > 0:
                    tl[i, m, d] = first_cut_on_line(seed, m, d, u0[d], W[d], u[r - 1], x)
                else:
                    tl[i, m, d] = -np.inf
                if r < nd:
                    tr[i, m, d] = first_cut_on_line(seed, m, d, u0[d], W[d], x, u[r])
                else:
                    tr[i, m, d] = -np.inf


@njit(cache=True, inline="always")
def _key_hash(m, key_row):
    h = absorb(GOLDEN_GAMMA, m)
    for d in range(key_row.shape[0]):
        h = absorb(h, key_row[d] + 1)
    return h


@njit(cache=True)
def build_table(f_grid, f_key, pos_id, C, size):
    """Open-addressing hash table (linear probing) from a cell's ``(grid, interval ids)`` to
    its feature id; ``size`` a power of two > C."""
    slots = np.full(size, -1, np.int64)
    mask = np.uint64(size - 1)
    for p in range(C):
        fid = pos_id[p]
        h = _key_hash(f_grid[fid], f_key[fid])
        s = np.int64(h & mask)
        while slots[s] >= 0:
            s = (s + 1) & (size - 1)
        slots[s] = fid
    return slots


@njit(cache=True, inline="always")
def _lookup(slots, f_grid, f_key, m, ids):
    size = slots.shape[0]
    s = np.int64(_key_hash(m, ids) & np.uint64(size - 1))
    D = ids.shape[0]
    while True:
        fid = slots[s]
        if fid < 0:
            return -1
        if f_grid[fid] == m:
            same = True
            for d in range(D):
                if f_key[fid, d] != ids[d]:
                    same = False
                    break
            if same:
                return fid
        s = (s + 1) & (size - 1)


@njit(cache=True, inline="always")
def _position(slots, f_grid, f_key, f_pos, m, ids):
    """Column of the cell of grid ``m`` with the interval ids ``ids``; -1 if it holds no
    training row."""
    fid = _lookup(slots, f_grid, f_key, m, ids)
    return f_pos[fid] if fid >= 0 else -1


@njit(cache=True)
def query_positions(rl, rr, tl, tr, lams, lb, lb_off, nd, slots, f_grid, f_key, f_pos, out):
    """Column (position in the model) of the cell of each located row in each grid, -1 when
    the row is in a cell without training rows (a fresh cell, or an empty one)."""
    n, D = rl.shape
    M = out.shape[1]
    ids = np.empty(D, np.int64)
    for i in range(n):
        for m in range(M):
            fresh = False
            for d in range(D):
                base = lb_off[d] + m * nd[d]
                lam = lams[d]
                if rl[i, d] >= 0 and lam < tl[i, m, d]:
                    ids[d] = lb[base + rl[i, d]]
                elif rr[i, d] >= 0 and lam < tr[i, m, d]:
                    ids[d] = lb[base + rr[i, d]]
                else:
                    fresh = True
                    break
            out[i, m] = -1 if fresh else _position(slots, f_grid, f_key, f_pos, m, ids)


@njit(cache=True)
def predictive(pos, w, Ainv, y_mean, delta2, prior_var, want_var, mean, var):
    """Bayesian linear regression predictive for rows whose cells are ``pos`` (Balog et al.,
    2016, Section 4.2.1): mean ``ybar + phi' w``; variance
    ``s (delta2 + delta2 phi' A^-1 phi + u / M)`` where ``u`` counts the grids in which the row
    has no training cell (its weight keeps the prior)."""
    n, M = pos.shape
    scale = 1.0 / np.sqrt(M)
    ones = np.ones(M)  # every feature value is M^-1/2: the quadratic form counts, scaled below
    for i in range(n):
        acc = 0.0
        unknown = 0
        for m in range(M):
            p = pos[i, m]
            if p >= 0:
                acc += w[p]
            else:
                unknown += 1
        mean[i] = y_mean + acc * scale
        if want_var:
            q = quad_form(pos[i], ones, Ainv)
            var[i] = prior_var * (delta2 + delta2 * q / M + unknown / M)


@njit(cache=True)
def swap_positions(Ainv, C, a, b):
    """Swap rows and columns ``a[k]`` and ``b[k]`` of the symmetric ``Ainv[:C, :C]``, in
    place: features to be deleted are swapped with the last ones, so that deleting them
    leaves the kept block contiguous."""
    for j in range(a.shape[0]):
        p = a[j]
        q = b[j]
        for k in range(C):
            tmp = Ainv[p, k]
            Ainv[p, k] = Ainv[q, k]
            Ainv[q, k] = tmp
        for k in range(C):
            tmp = Ainv[k, p]
            Ainv[k, p] = Ainv[k, q]
            Ainv[k, q] = tmp


@njit(cache=True)
def positions_at(X, seed, lams, u_flat, u_off, u0, W, t1, lb, lb_off, nd, slots, f_grid,
                 f_key, f_pos, out):
    """``locate`` + ``query_positions`` in one pass at fixed lifetimes, for prediction: a row
    strictly inside a gap whose first cut is born after ``lambda_d`` joins both neighbours
    without a descent; otherwise at most two descents decide its side."""
    n, D = X.shape
    M = out.shape[1]
    ids = np.empty(D, np.int64)
    ranks = np.empty(D, np.int64)
    for i in range(n):
        for d in range(D):
            u = u_flat[u_off[d]:u_off[d + 1]]
            ranks[d] = np.searchsorted(u, X[i, d])
        for m in range(M):
            fresh = False
            for d in range(D):
                u = u_flat[u_off[d]:u_off[d + 1]]
                r = ranks[d]
                x = X[i, d]
                base = lb_off[d] + m * nd[d]
                lam = lams[d]
                if r < nd[d] and u[r] == x:
                    ids[d] = lb[base + r]
                elif r == 0:
                    if lam < first_cut_on_line(seed, m, d, u0[d], W[d], x, u[0]):
                        ids[d] = lb[base]
                    else:
                        fresh = True
                elif r == nd[d]:
                    if lam < first_cut_on_line(seed, m, d, u0[d], W[d], u[r - 1], x):
                        ids[d] = lb[base + r - 1]
                    else:
                        fresh = True
                elif lam < t1[base + r]:  # no cut in the gap yet: same interval both sides
                    ids[d] = lb[base + r - 1]
                elif lam < first_cut_on_line(seed, m, d, u0[d], W[d], u[r - 1], x):
                    ids[d] = lb[base + r - 1]
                elif lam < first_cut_on_line(seed, m, d, u0[d], W[d], x, u[r]):
                    ids[d] = lb[base + r]
                else:
                    fresh = True
                if fresh:
                    break
            out[i, m] = -1 if fresh else _position(slots, f_grid, f_key, f_pos, m, ids)
