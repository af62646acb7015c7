"""Compiled kernels of the Mondrian kernel: truncation of stored trees at a lifetime, feature
routing with the expected / sampled extension, relabelling after an online extension, and the
three lifetime sweeps (exact ridge, warm-started SGD, per-tree ridge "forest").

The trees themselves live in a :class:`surrogates._core.tree.TreeStore` grown with
``TASK_STRUCTURE`` up to the terminal lifetime; nothing here grows trees.  A Mondrian process
at a smaller lifetime is the same sample with the later cuts ignored (Balog et al., 2016,
Section 4.1), so the model at a lifetime ``lam <= store.lifetime`` contains exactly the cuts
with split time ``tau <= lam``: node ``j`` is a *cell at lam* when its parent is split by
``lam`` and it is not (a store leaf, or ``tau_j > lam``).

Feature ids are global over the trees (``feat_of_node[t, j]``); the rows of a feature matrix
hold one id per tree, so ``F[n, t]`` (an ``(N, T)`` int array) is the whole sparse matrix: its
CSR form is ``indices = F.ravel()``, ``indptr = arange(0, N*T+1, T)``.
"""

from __future__ import annotations

import math
from collections import namedtuple

import numpy as np
from numba import njit, prange

from .._core._rng_kernels import splitmix64, uniform, unit_double
from .._core._sparse_kernels import quad_form
from .._core.threads import parallel_kernel
from .._core._tree_kernels import (FEAT, HEAD, LEFT, NNODES, PARENT, RIGHT, ROOT, TAU, THRESH,
                                   box_distance, preorder)

# --------------------------------------------------------------------------------------------
# truncation and routing
# --------------------------------------------------------------------------------------------


@njit(cache=True, inline="always")
def is_split_at(inode, fnode, t, j, lifetime):
    """Node ``j`` of tree ``t`` is cut in the model at ``lifetime``."""
    return inode[t, j, LEFT] >= 0 and fnode[t, j, TAU] <= lifetime


@njit(cache=True)
def cells_at(inode, fnode, meta, t, lifetime):
    """Tree ``t``'s nodes in pre-order, and for each node the cell at ``lifetime`` that holds
    it: ``cell[j] == j`` for a cell, -1 for the nodes above the cells."""
    nodes = preorder(inode, meta, t)
    cell = np.full(meta[t, NNODES], -1, np.int64)
    root = meta[t, ROOT]
    for j in nodes:  # parents come before their children
        above = -1 if j == root else cell[inode[t, j, PARENT]]
        if above >= 0:
            cell[j] = above
        elif not is_split_at(inode, fnode, t, j, lifetime):
            cell[j] = j
    return nodes, cell


@njit(cache=True)
def number_cells(inode, fnode, meta, lifetime, feat_of_node, tree_of):
    """Give the cells at ``lifetime`` of all trees consecutive ids (tree by tree, pre-order).

    ``feat_of_node[t, j]`` is set to the id or -1 (nodes below a cell, or not a node);
    ``tree_of[c]`` receives the tree of cell ``c`` (must have room).  Returns the cell count.
    """
    T = inode.shape[0]
    c = 0
    for t in range(T):
        for j in range(meta[t, NNODES]):
            feat_of_node[t, j] = -1
        nodes, cell = cells_at(inode, fnode, meta, t, lifetime)
        for j in nodes:
            if cell[j] == j:
                feat_of_node[t, j] = c
                tree_of[c] = t
                c += 1
    return c


@njit(cache=True, inline="always")
def _route_one(Xq, i, inode, fnode, box, meta, t, lifetime):
    """Cell at ``lifetime`` that row ``i`` is routed to, and sum_j Delta_j eta_j(x) along the
    path: the rate at which an extension of the tree would have split ``x`` off, so that
    ``exp(-s)`` is the probability that ``x`` joins the cell (the expected extension of
    :class:`MondrianKernel`)."""
    j = meta[t, ROOT]
    tp = 0.0
    s = 0.0
    while True:
        tau = fnode[t, j, TAU]
        eta = box_distance(box, t, j, Xq, i)
        if eta > 0.0:
            s += (min(tau, lifetime) - tp) * eta
        if not is_split_at(inode, fnode, t, j, lifetime):
            return j, s
        tp = tau
        if Xq[i, inode[t, j, FEAT]] <= fnode[t, j, THRESH]:
            j = inode[t, j, LEFT]
        else:
            j = inode[t, j, RIGHT]


@parallel_kernel
@njit(cache=True, parallel=True)
def route_expected(Xq, inode, fnode, box, meta, lifetime, feat_of_node, feat_out, p_out):
    """Cell id and probability ``p_join`` (that no extension splits the row off) per row and
    tree.  Rows inside every box on their path (all fitted rows) get ``p_join = 1``."""
    n = Xq.shape[0]
    T = inode.shape[0]
    for i in prange(n):
        for t in range(T):
            j, s = _route_one(Xq, i, inode, fnode, box, meta, t, lifetime)
            feat_out[i, t] = feat_of_node[t, j]
            p_out[i, t] = math.exp(-s)


@parallel_kernel
@njit(cache=True, parallel=True)
def route_sampled(Xq, inode, fnode, box, meta, lifetime, feat_of_node, seed, fresh_offset,
                  feat_out):
    """Sample whether the conditional-Mondrian extension of each tree (Balog et al., 2016,
    Section 2.4) splits each row off (probability ``1 - p_join``; the random number of row
    ``i``, tree ``t`` is a hash of ``seed``, ``i`` and ``t``).  A row split off gets the
    column ``fresh_offset + t`` (tree ``t``'s training-empty cell)."""
    n = Xq.shape[0]
    T = inode.shape[0]
    for i in prange(n):
        for t in range(T):
            j, s = _route_one(Xq, i, inode, fnode, box, meta, t, lifetime)
            u = unit_double(splitmix64(seed ^ splitmix64(np.uint64(i) * np.uint64(T)
                                                         + np.uint64(t))))
            if s > 0.0 and u >= math.exp(-s):
                feat_out[i, t] = fresh_offset + t
            else:
                feat_out[i, t] = feat_of_node[t, j]


@njit(cache=True)
def relabel_tree(inode, fnode, meta, pnext, t, lifetime, F, n_old, n_new, feat_of_node,
                 tree_of, next_id):
    """After rows ``n_old..n_new-1`` were inserted into tree ``t`` (conditional Mondrian), find
    the cells at ``lifetime`` again and keep the ids of the old cells.

    The extension never re-partitions old rows (Balog et al., 2016, Section 5), but it can
    move an old cell to another node (a new parent above it whose cut is later than
    ``lifetime``, or a paused leaf that is re-grown).  So a cell's id is read off any old row
    inside it, ``F[row, t]``; a cell with new rows only gets the next free id.
    ``F[n_old:n_new, t]`` is filled in.  Returns the next free id.
    """
    for j in range(meta[t, NNODES]):
        feat_of_node[t, j] = -1
    nodes, cell = cells_at(inode, fnode, meta, t, lifetime)
    for j in nodes:  # a cell takes the id of the first old row found in it
        c = cell[j]
        if inode[t, j, LEFT] < 0 and feat_of_node[t, c] < 0:
            q = inode[t, j, HEAD]
            while q >= 0:
                if q < n_old:
                    feat_of_node[t, c] = F[q, t]
                    break
                q = pnext[t, q]
    for j in nodes:  # a cell with new rows only takes the next free id
        if cell[j] == j and feat_of_node[t, j] < 0:
            feat_of_node[t, j] = next_id
            tree_of[next_id] = t
            next_id += 1
    for j in nodes:
        if inode[t, j, LEFT] < 0:
            cid = feat_of_node[t, cell[j]]
            q = inode[t, j, HEAD]
            while q >= 0:
                if q >= n_old and q < n_new:
                    F[q, t] = cid
                q = pnext[t, q]
    return next_id


# --------------------------------------------------------------------------------------------
# exact ridge: dense blocks from the leaf matrix; Cholesky factor updates
#
# Inverse updates (Sherman-Morrison, bordering) are unstable here: the cells of every tree sum
# to the all-ones column, so Phi^T Phi has an (M-1)-dimensional null space, A^-1 has entries of
# order 1/delta2, and each new cell's Schur complement (of order delta2) would be computed by
# cancellation against them (measured error: surrogates/README.md, section 'Implementation
# choices measured during development').  Updates of the upper Cholesky factor R
# (A = R^T R) are backward stable, as Balog et al. (2016, Section 4.2.1) advise, and a Schur
# complement is then ``dg - |R^-T a|^2``, accurate to eps * dg.  R is stored row-major, so
# every loop below runs along rows.
# --------------------------------------------------------------------------------------------


@njit(cache=True)
def chol_update(R, n, x):
    """``R^T R <- R^T R + x x^T`` on ``R[:n, :n]`` (upper); ``x`` (length ``n``) is destroyed."""
    for k in range(n):
        xk = x[k]
        if xk == 0.0:
            continue
        rkk = R[k, k]
        r = math.hypot(rkk, xk)
        c = r / rkk
        s = xk / rkk
        R[k, k] = r
        for i in range(k + 1, n):
            v = (R[k, i] + s * x[i]) / c
            x[i] = c * x[i] - s * v
            R[k, i] = v


@njit(cache=True)
def solve_upper_t(R, n, a):
    """Solve ``R^T c = a`` in place (``a`` becomes ``c``), forward substitution by rows."""
    for k in range(n):
        if a[k] == 0.0:  # nothing to eliminate below row k
            continue
        ck = a[k] / R[k, k]
        a[k] = ck
        row = R[k]
        for i in range(k + 1, n):
            a[i] -= row[i] * ck


@njit(cache=True)
def solve_upper(R, n, beta, out):
    """Solve ``R out = beta`` (back substitution by rows)."""
    for i in range(n - 1, -1, -1):
        acc = beta[i]
        row = R[i]
        for k in range(i + 1, n):
            acc -= row[k] * out[k]
        out[i] = acc / R[i, i]


@njit(cache=True)
def chol_append(R, n, a, dg, floor):
    """Border ``R[:n, :n]`` with the column ``a`` (destroyed: becomes ``R^-T a``) and
    diagonal ``dg``.  The new pivot's square is clamped at ``floor`` (its exact value is at
    least ``delta2``).  Returns the pivot."""
    solve_upper_t(R, n, a)
    return chol_border(R, n, a, dg, floor)


@njit(cache=True)
def chol_border(R, n, z, dg, floor):
    """Border ``R[:n, :n]`` with the solved column ``z = R^-T a`` and diagonal ``dg`` (the
    second half of :func:`chol_append`).  Returns the pivot."""
    d2 = dg
    for k in range(n):
        R[k, n] = z[k]
        d2 -= z[k] * z[k]
    d = math.sqrt(max(d2, floor))
    R[n, n] = d
    return d


@njit(cache=True)
def chol_delete(R, n, p, beta):
    """Remove row and column ``p`` of ``A = R^T R`` (size ``n``): the rows below ``p`` take a
    rank-one update with ``R[p, p+1:]`` and move up-left by one; ``beta = R^-T b`` follows
    the same rotations (``b`` loses entry ``p``)."""
    m = n - p - 1
    x = np.empty(m)
    for i in range(m):
        x[i] = R[p, p + 1 + i]
    bx = beta[p]
    for k in range(p):
        row = R[k]
        for i in range(p, n - 1):
            row[i] = row[i + 1]
    q = 0
    while q < m:  # Givens rotations, two rows per pass over x
        k = p + 1 + q
        src = R[k]
        dst = R[k - 1]
        rkk = src[k]
        r = math.hypot(rkk, x[q])
        cs = rkk / r
        sn = x[q] / r
        dst[k - 1] = r
        bk = beta[k]
        beta[k - 1] = cs * bk + sn * bx
        bx = cs * bx - sn * bk
        if q + 1 == m:
            break
        si = src[k + 1]
        xi = x[q + 1]
        dst[k] = cs * si + sn * xi
        xq1 = cs * xi - sn * si
        src1 = R[k + 1]
        dst1 = R[k]
        rk1 = src1[k + 1]
        r1 = math.hypot(rk1, xq1)
        cs1 = rk1 / r1
        sn1 = xq1 / r1
        dst1[k] = r1
        for i in range(q + 2, m):
            si = src[p + 1 + i]
            xi = x[i]
            dst[p + i] = cs * si + sn * xi
            xi = cs * xi - sn * si
            s1 = src1[p + 1 + i]
            dst1[p + i] = cs1 * s1 + sn1 * xi
            x[i] = cs1 * xi - sn1 * s1
        bk = beta[k + 1]
        beta[k] = cs1 * bk + sn1 * bx
        bx = cs1 * bx - sn1 * bk
        q += 2


@njit(cache=True)
def gram_primal(F, w, C, out):
    """``out[:C, :C] += Phi^T Phi`` for the rows ``F`` with per-row weights ``w`` (the feature
    value is ``w[n] * M^-1/2``, so entries are ``w^2 / M``)."""
    N, T = F.shape
    for n in range(N):
        v = w[n] * w[n] / T
        for a in range(T):
            fa = F[n, a]
            for b in range(T):
                out[fa, F[n, b]] += v


@parallel_kernel
@njit(cache=True, parallel=True)
def shared_cells(Fa, Fb, out):
    """``out[i, k] = (1/M) #{t : Fa[i, t] == Fb[k, t]}`` (the Mondrian kernel; dense)."""
    na, T = Fa.shape
    nb = Fb.shape[0]
    for i in prange(na):
        for k in range(nb):
            c = 0
            for t in range(T):
                if Fa[i, t] == Fb[k, t]:
                    c += 1
            out[i, k] = c / T


@parallel_kernel
@njit(cache=True, parallel=True)
def quad_forms(feat, val, Ainv, out):
    """:func:`quad_form` of every row of ``feat`` / ``val``."""
    for i in prange(feat.shape[0]):
        out[i] = quad_form(feat[i], val[i], Ainv)


# --------------------------------------------------------------------------------------------
# SGD on the sparse features (scikit-learn's SGDRegressor update: squared loss, L2, invscaling)
# --------------------------------------------------------------------------------------------


@njit(cache=True)
def sgd_epochs(F, rows, y, w, alpha, eta0, power_t, epochs, t0, rng, shuffle):
    """``epochs`` passes of plain SGD over the rows ``rows`` of the leaf matrix ``F`` (feature
    values M^-1/2) on ``1/N sum 1/2 (y_r - phi_r^T w)^2 + alpha/2 |w|^2``: per sample
    ``w <- (1 - eta alpha) w - eta (phi^T w - y) phi`` with ``eta = eta0 / t^power_t`` and ``t``
    counted from ``t0`` (scikit-learn's ``invscaling``).  ``y`` is indexed by row.  The
    shrinkage uses a weight scale so that a step costs O(M).  Returns the next ``t``."""
    n = rows.shape[0]
    T = F.shape[1]
    inv = 1.0 / math.sqrt(T)
    order = rows.copy()
    wscale = 1.0
    t = t0
    for _ in range(epochs):
        if shuffle:
            for i in range(n - 1, 0, -1):
                k = min(np.int64(uniform(rng, 0) * (i + 1)), i)
                tmp = order[i]
                order[i] = order[k]
                order[k] = tmp
        for q in range(n):
            r = order[q]
            p = 0.0
            for a in range(T):
                p += w[F[r, a]]
            p *= wscale * inv
            eta = eta0 / t ** power_t
            upd = -eta * (p - y[r])
            wscale *= max(0.0, 1.0 - eta * alpha)
            if wscale < 1e-9:  # fold the scale into the weights before it underflows
                for a in range(w.shape[0]):
                    w[a] *= wscale
                wscale = 1.0
            step = upd * inv / wscale
            for a in range(T):
                w[F[r, a]] += step
            t += 1.0
    for a in range(w.shape[0]):
        w[a] *= wscale
    return t


@njit(cache=True)
def predict_rows(F, rows, w, ybar, out):
    """``out[k] = ybar + M^-1/2 sum_t w[F[rows[k], t]]``."""
    T = F.shape[1]
    inv = 1.0 / math.sqrt(T)
    for k in range(rows.shape[0]):
        r = rows[k]
        acc = 0.0
        for a in range(T):
            acc += w[F[r, a]]
        out[k] = ybar + acc * inv


# --------------------------------------------------------------------------------------------
# the lifetime sweep: events in time order, each cell a contiguous range of a DFS row order
# --------------------------------------------------------------------------------------------

#: What every sweep walks.  ``ev_tree[k]``, ``ev_node[k]``: the ``k``-th cut in time order (an
#: internal node of the stored trees ``inode``, ``stats``); ``order``, ``start``: the rows of
#: every node as a range of a depth-first row order (:func:`dfs_ranges`); ``F``: the leaf
#: matrix, relabelled in place as cells split; ``y``: the centred targets of the
#: ``n_train`` training, then ``n_val`` validation and ``n_test`` test rows.
Sweep = namedtuple("Sweep", "ev_tree ev_node inode stats order start F y n_train n_val n_test")

#: The exact path's ridge model, by *position* ``0..C-1`` of a feature in the factor
#: (``pos[feature]``, ``posf[position]``): the upper Cholesky factor ``R`` of
#: ``A = Phi_tr^T Phi_tr + delta2 I``, ``b = Phi_tr^T y``, ``beta = R^-T b``,
#: ``what = A^-1 b``; by *slot* (``slot[feature]``): the co-occurrence counts ``G``
#: (``M Phi_tr^T Phi_tr``, exact integers); two column buffers ``acol``, ``acol2``; and the
#: integer ``counters`` indexed by ``N_CELLS``, ``NEXT_ID``, ``NEXT_SLOT``, ``N_REFRESH``,
#: ``SINCE_CHECK``.
ExactModel = namedtuple("ExactModel", "R pos posf slot G b beta what acol acol2 counters")
N_CELLS, NEXT_ID, NEXT_SLOT, N_REFRESH, SINCE_CHECK = 0, 1, 2, 3, 4

#: Per cut of one chunk (row ``k - k0``): the solution ``what`` by position, the feature at
#: each position ``posf`` and their number ``n_cells``, and ``cut = (parent, left, right)``
#: feature ids; ``W`` is scratch space ``(features, chunk)`` for the chunk's errors.
ChunkSnapshots = namedtuple("ChunkSnapshots", "what posf n_cells cut W")

#: What a path records, one entry per cut: the number of cells, ``y^T (y - Phi w) / delta2``
#: and ``log det A`` (exact path only) and the training, validation and test sums of squared
#: errors.
PathRecord = namedtuple("PathRecord", "n_cells quad logdet train_sse val_sse test_sse")


@njit(cache=True, inline="always")
def _rows_of(sweep, t, j):
    """The range ``order[t, s:e]`` of the rows of node ``j`` of tree ``t``."""
    s = sweep.start[t, j]
    return s, s + np.int64(sweep.stats[t, j, 0])


@njit(cache=True)
def dfs_ranges(inode, meta, pnext, order, start):
    """Order the store rows of every tree depth-first so that each node's rows are the range
    ``order[t, start[t, j]:]`` of its row count (the left child's rows first)."""
    for t in range(inode.shape[0]):
        cur = 0
        for j in preorder(inode, meta, t):
            start[t, j] = cur
            if inode[t, j, LEFT] < 0:
                q = inode[t, j, HEAD]
                while q >= 0:
                    order[t, cur] = q
                    cur += 1
                    q = pnext[t, q]


@njit(cache=True)
def _child_counts(F, order, t, s, e, n_tr, pos, acol, T):
    """``acol[q] +=`` the number of training rows among ``order[t, s:e]`` (a child's rows)
    that lie in the cell at position ``q`` of each other tree (``Phi_tr^T z_child`` times
    ``M``, exact integers)."""
    for q in range(s, e):
        r = order[t, q]
        if r >= n_tr:
            continue
        for a in range(T):
            if a != t:
                acol[pos[F[r, a]]] += 1.0


@njit(cache=True)
def exact_refresh(F, n_tr, pos, C, b, delta2, R, beta, what):
    """Rebuild the Cholesky factor ``R[:C, :C]`` (by position) from the leaf matrix, then
    ``beta = R^-T b`` and ``what = A^-1 b``; returns ``log det A``."""
    T = F.shape[1]
    A = np.zeros((C, C))
    for n in range(n_tr):
        for a in range(T):
            pa = pos[F[n, a]]
            for c in range(T):
                A[pa, pos[F[n, c]]] += 1.0 / T
    for i in range(C):
        A[i, i] += delta2
    L = np.linalg.cholesky(A)
    logdet = 0.0
    for i in range(C):
        logdet += 2.0 * math.log(L[i, i])
        for k in range(C):
            R[i, k] = L[k, i]
        beta[i] = b[i]
    solve_upper_t(R, C, beta)
    solve_upper(R, C, beta, what)
    return logdet


@njit(cache=True)
def exact_residual(F, n_tr, pos, C, b, delta2, what):
    """``|A w - b| / |b|`` computed sparsely as ``Phi^T (Phi w) + delta^2 w - b``."""
    T = F.shape[1]
    inv = 1.0 / math.sqrt(T)
    r = np.zeros(C)
    for n in range(n_tr):
        acc = 0.0
        for a in range(T):
            acc += what[pos[F[n, a]]]
        acc *= inv
        for a in range(T):
            r[pos[F[n, a]]] += acc * inv
    num = 0.0
    den = 0.0
    for i in range(C):
        v = r[i] + delta2 * what[i] - b[i]
        num += v * v
        den += b[i] * b[i]
    return math.sqrt(num) / max(math.sqrt(den), 1e-300)


@njit(cache=True)
def solve_upper_t2(R, n, a1, a2):
    """:func:`solve_upper_t` for two right-hand sides, two rows of ``R`` per pass over them."""
    k = 0
    while k < n:
        rkk = R[k, k]
        c1 = a1[k] / rkk
        c2 = a2[k] / rkk
        a1[k] = c1
        a2[k] = c2
        if k + 1 == n:
            break
        r0 = R[k]
        r1 = R[k + 1]
        a1[k + 1] -= r0[k + 1] * c1
        a2[k + 1] -= r0[k + 1] * c2
        rk1 = r1[k + 1]
        d1 = a1[k + 1] / rk1
        d2 = a2[k + 1] / rk1
        a1[k + 1] = d1
        a2[k + 1] = d2
        for i in range(k + 2, n):
            x = r0[i]
            y = r1[i]
            a1[i] -= x * c1 + y * d1
            a2[i] -= x * c2 + y * d2
        k += 2


@njit(cache=True)
def solve_upper_dot(R, n, beta, out):
    """:func:`solve_upper` with the row sums as BLAS dot products."""
    for i in range(n - 1, -1, -1):
        acc = np.dot(R[i, i + 1:n], out[i + 1:n]) if i + 1 < n else 0.0
        out[i] = (beta[i] - acc) / R[i, i]


@njit(cache=True)
def _scan_child(F, order, t, s, e, n_tr, y, cid):
    """Relabel the rows ``order[t, s:e]`` to cell ``cid``; their training count and target sum."""
    cnt = 0
    ys = 0.0
    for q in range(s, e):
        rr = order[t, q]
        F[rr, t] = cid
        if rr < n_tr:
            cnt += 1
            ys += y[rr]
    return cnt, ys


@njit(cache=True, inline="always")
def _join_cell(R, C, z, dg, bn, delta2, beta, b, pos, posf, cid):
    """Append cell ``cid`` at position ``C`` of the factor: its solved column ``z``, diagonal
    ``dg`` and right-hand side ``bn``; ``beta = R^-T b`` gains its entry.  Returns ``C + 1``."""
    d = chol_border(R, C, z, dg, delta2)
    acc = bn
    for i in range(C):
        acc -= z[i] * beta[i]
    beta[C] = acc / d
    b[C] = bn
    pos[cid] = C
    posf[C] = cid
    return C + 1


@njit(cache=True)
def exact_path_chunk(k0, k1, sweep, model, snaps, rec, delta2, yty, check_every, tol):
    """Process the cuts ``k0..k1-1`` of the exact forward path, one record each: the
    delete-and-append-two update of Balog et al. (2016), Section 4.2.1, on the Cholesky factor.

    ``model`` (an :data:`ExactModel`) holds the features in positions ``0..C-1`` of the upper
    Cholesky factor ``R`` of ``A = Phi_tr^T Phi_tr + delta2 I``.  A cut deletes the parent's
    position (rank-one update of the rows below it, O((C-p)^2)) and appends the two children
    at the end (one forward substitution for both, O(C^2)); ``beta = R^-T b`` is carried
    along, ``what = A^-1 b`` costs one back substitution.  Every ``check_every`` cuts the
    residual ``|A w - b| / |b|`` is computed and the factor rebuilt above ``tol``.

    The children's columns of ``Phi_tr^T Phi_tr`` come from the co-occurrence counts ``G`` of
    the current cells, kept by slot (the larger child inherits its parent's slot, the smaller
    one takes a new slot): only the smaller child's rows are scanned (one entry per row and
    other tree), the larger child's column is the parent's minus it.  ``yty`` is ``y^T y``
    over the (centred) training targets; ``rec`` (a :data:`PathRecord` of arrays indexed by
    cut) receives the records.

    The validation and test errors of all the chunk's cuts (at most ``snaps.what.shape[0]``)
    are computed together at its end: each cut's solution is kept in ``snaps``, spread over
    the cells current at the end (a cell created later takes its ancestor's weight), and every
    row then sums its cells' weights for all the cuts in one pass.
    """
    ev_tree, ev_node, inode, stats, order, start, F, y, n_tr, _, _ = sweep
    R, pos, posf, slot, G, b, beta, what, acol, acol2, counters = model
    T = F.shape[1]
    inv = 1.0 / math.sqrt(T)
    invT = 1.0 / T
    C = counters[N_CELLS]
    for k in range(k0, k1):
        t = ev_tree[k]
        j = ev_node[k]
        c = F[order[t, start[t, j]], t]
        p = pos[c]
        sp = slot[c]
        # delete the parent
        chol_delete(R, C, p, beta)
        for q in range(p, C - 1):
            f = posf[q + 1]
            posf[q] = f
            pos[f] = q
            b[q] = b[q + 1]
        C -= 1
        # the children: the smaller (by rows) is scanned against the other trees
        left = inode[t, j, LEFT]
        right = inode[t, j, RIGHT]
        small_left = stats[t, left, 0] <= stats[t, right, 0]
        ch_s = left if small_left else right
        ch_b = right if small_left else left
        cid_l = counters[NEXT_ID]
        cid_r = cid_l + 1
        counters[NEXT_ID] += 2
        cid_s = cid_l if small_left else cid_r
        cid_b = cid_r if small_left else cid_l
        s_s, e_s = _rows_of(sweep, t, ch_s)
        s_b, e_b = _rows_of(sweep, t, ch_b)
        for i in range(C):
            acol[i] = 0.0
        _child_counts(F, order, t, s_s, e_s, n_tr, pos, acol, T)
        cnt_s, ys_s = _scan_child(F, order, t, s_s, e_s, n_tr, y, cid_s)
        cnt_b, ys_b = _scan_child(F, order, t, s_b, e_b, n_tr, y, cid_b)
        # Gram rows of the children by slot: the larger takes the parent's slot
        ss = counters[NEXT_SLOT]
        counters[NEXT_SLOT] += 1
        for q in range(C):  # G holds exact counts: the difference is exact
            sq = slot[posf[q]]
            n_s = acol[q]
            n_b = G[sp, sq] - n_s
            G[sp, sq] = n_b
            G[sq, sp] = n_b
            G[ss, sq] = n_s
            G[sq, ss] = n_s
            acol[q] = n_s * invT
            acol2[q] = n_b * invT
        G[ss, sp] = 0.0
        G[sp, ss] = 0.0
        G[sp, sp] = cnt_b
        G[ss, ss] = cnt_s
        slot[cid_b] = sp
        slot[cid_s] = ss
        # append both children (left first): one forward substitution for the two columns
        if small_left:
            a_l, a_r, cnt_l, cnt_r, ys_l, ys_r = acol, acol2, cnt_s, cnt_b, ys_s, ys_b
        else:
            a_l, a_r, cnt_l, cnt_r, ys_l, ys_r = acol2, acol, cnt_b, cnt_s, ys_b, ys_s
        solve_upper_t2(R, C, a_l, a_r)
        zz = 0.0
        for i in range(C):
            zz += a_l[i] * a_r[i]
        C = _join_cell(R, C, a_l, cnt_l * invT + delta2, ys_l * inv, delta2, beta, b, pos,
                       posf, cid_l)
        a_r[C - 1] = -zz / R[C - 1, C - 1]  # against the left child (the cells are disjoint)
        C = _join_cell(R, C, a_r, cnt_r * invT + delta2, ys_r * inv, delta2, beta, b, pos,
                       posf, cid_r)
        solve_upper_dot(R, C, beta, what)
        # periodic residual check (O(N M)); rebuild the factor if it drifted
        counters[SINCE_CHECK] += 1
        if counters[SINCE_CHECK] >= check_every:
            counters[SINCE_CHECK] = 0
            if exact_residual(F, n_tr, pos, C, b, delta2, what) > tol:
                exact_refresh(F, n_tr, pos, C, b, delta2, R, beta, what)
                counters[N_REFRESH] += 1
        logdet = 0.0
        for i in range(C):
            logdet += 2.0 * math.log(R[i, i])
        # record
        bb = 0.0
        ww = 0.0
        for i in range(C):
            bb += beta[i] * beta[i]
            ww += what[i] * what[i]
        rec.n_cells[k] = C
        rec.quad[k] = (yty - bb) / delta2
        rec.logdet[k] = logdet
        rec.train_sse[k] = max(yty - bb - delta2 * ww, 0.0)
        kk = k - k0
        for i in range(C):
            snaps.what[kk, i] = what[i]
            snaps.posf[kk, i] = posf[i]
        snaps.n_cells[kk] = C
        snaps.cut[kk, 0] = c
        snaps.cut[kk, 1] = cid_l
        snaps.cut[kk, 2] = cid_r
    counters[N_CELLS] = C
    _chunk_errors(k0, k1, sweep, inv, snaps, rec)


@njit(cache=True)
def _chunk_errors(k0, k1, sweep, inv, snaps, rec):
    """Validation and test sums of squared errors after each cut ``k0..k1-1`` (see
    :func:`exact_path_chunk`)."""
    F, y, n_tr, n_val, n_te = sweep.F, sweep.y, sweep.n_train, sweep.n_val, sweep.n_test
    W = snaps.W
    T = F.shape[1]
    nk = k1 - k0
    for kk in range(nk):
        for i in range(snaps.n_cells[kk]):
            W[snaps.posf[kk, i], kk] = snaps.what[kk, i]
    for kk2 in range(nk):  # cells made by cut kk2 carry their parent's weight before it
        c = snaps.cut[kk2, 0]
        for side in range(1, 3):
            cid = snaps.cut[kk2, side]
            for kk in range(kk2):
                W[cid, kk] = W[c, kk]
    for kk in range(nk):
        rec.val_sse[k0 + kk] = 0.0
        rec.test_sse[k0 + kk] = 0.0
    acc = np.empty(nk)
    for q in range(n_val + n_te):
        rr = n_tr + q
        for kk in range(nk):
            acc[kk] = 0.0
        for a in range(T):
            wrow = W[F[rr, a]]
            for kk in range(nk):
                acc[kk] += wrow[kk]
        for kk in range(nk):
            e2 = acc[kk] * inv - y[rr]
            if q < n_val:
                rec.val_sse[k0 + kk] += e2 * e2
            else:
                rec.test_sse[k0 + kk] += e2 * e2


@njit(cache=True)
def split_cells(k0, k1, sweep, w, cnt, ssum, next_id, inherit):
    """Apply cuts ``k0..k1-1`` to the leaf matrix with weight duplication (Balog et al., 2016,
    Section 4.2.2): both children start with the parent's weight, which keeps every
    prediction.  With ``inherit=False`` a child without training rows starts at 0 instead,
    the weight exact ridge gives it.  Counts and target sums of the training rows are kept per
    feature.  Returns the next free id."""
    for k in range(k0, k1):
        t = sweep.ev_tree[k]
        j = sweep.ev_node[k]
        c = sweep.F[sweep.order[t, sweep.start[t, j]], t]
        for side in range(2):
            s, e = _rows_of(sweep, t, sweep.inode[t, j, LEFT + side])
            cid = next_id
            next_id += 1
            n, sm = _scan_child(sweep.F, sweep.order, t, s, e, sweep.n_train, sweep.y, cid)
            cnt[cid] = n
            ssum[cid] = sm
            w[cid] = w[c] if (inherit or n > 0) else 0.0
    return next_id


@njit(cache=True)
def forest_path_chunk(k0, k1, sweep, gamma2, pred, mu, cnt, ssum, next_id, sse, out):
    """The per-tree ridge "forest" of Balog et al. (2016), Section 6, on the same cuts: leaf
    value ``S/(n + gamma2)``, prediction ``mean_t`` of the leaf values; each cut updates the
    predictions of the rows of the split cell and the running squared errors
    ``sse = [train, validation, test]`` in O(|cell|); ``out[k]`` records them after cut
    ``k``."""
    order, y, n_tr = sweep.order, sweep.y, sweep.n_train
    n_val, n_te = sweep.n_val, sweep.n_test
    T = sweep.F.shape[1]
    for k in range(k0, k1):
        t = sweep.ev_tree[k]
        j = sweep.ev_node[k]
        c = sweep.F[order[t, sweep.start[t, j]], t]
        for side in range(2):
            s, e = _rows_of(sweep, t, sweep.inode[t, j, LEFT + side])
            cid = next_id
            next_id += 1
            n, sm = _scan_child(sweep.F, order, t, s, e, n_tr, y, cid)
            cnt[cid] = n
            ssum[cid] = sm
            mu[cid] = sm / (n + gamma2)
            dm = (mu[cid] - mu[c]) / T
            for q in range(s, e):
                rr = order[t, q]
                if rr < n_tr + n_val + n_te:
                    old = pred[rr] - y[rr]
                    pred[rr] += dm
                    new = pred[rr] - y[rr]
                    g = 0 if rr < n_tr else (1 if rr < n_tr + n_val else 2)
                    sse[g] += new * new - old * old
        for g in range(3):
            out[k, g] = sse[g]
    return next_id
