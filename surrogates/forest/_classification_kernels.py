"""Compiled classification kernel: hierarchical normalized stable process prior with the
interpolated Kneser-Ney (IKN) approximation, averaged analytically over branch-off points
(Lakshminarayanan, Roy & Teh, 2014; Lakshminarayanan, 2016, PhD thesis, Sections 5.4-5.5).

Only raw class counts are stored per node (column 0 of the stats holds the total).  The IKN
customers and tables (thesis Section 5.4.1) follow from them: a node has one table for class
``k`` iff one of its points has class ``k``; a leaf's customers are its points, an internal
node's are its children's tables.  So no count needs updating up the tree (as printed, the
thesis' Alg. 5.3 would not climb from a leaf anyway).

The prediction is the thesis' Alg. 5.8 with two printing errors corrected: the branch-off
node's mean is normalised by its numbers of customers and tables summed over the classes, as
in eq. (5.5) (per class, the result would not be a distribution), and the leaf test is made
at every node, not only where the query can branch off (else a query inside a leaf's box
would never finish).

Two ways to predict, with the same arithmetic (the tests check they agree to 1e-12):

* :func:`predict_proba_trees` derives the posterior means ``G_j`` (eq 5.5) along each query's
  path (O(depth * K) per query and tree, nothing to prepare): for a few queries after an update.
* :func:`build_cache` computes ``G_j`` of every node once (O(nodes * K) per tree; they do
  not depend on the query) and :func:`predict_proba_cached` then only walks the path, doing
  O(K) work at the leaf and where a query can branch off (the branch-off node's mean uses the
  expected discount and the parent's cached ``G``).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from .._core._prefetch_kernels import prefetch
from .._core.threads import parallel_kernel
from .._core._tree_kernels import (FEAT, LEFT, NNODES, PARENT, RIGHT, ROOT, TAU, THRESH,
                                   box_distance, branch_off, branch_off_probability,
                                   child_containing, preorder)


@njit(cache=True, inline="always")
def expected_discount(eta, gamma, delta):
    """E[exp(-gamma * D)] for D ~ Exp(eta) truncated to [0, delta]: the expected discount of
    a node inserted by a branch-off (thesis Alg. 5.8 line 9), in closed form."""
    if delta == np.inf:
        return eta / (eta + gamma)
    return eta / (eta + gamma) * math.expm1(-(eta + gamma) * delta) / math.expm1(-eta * delta)


@njit(cache=True, inline="always")
def _discount(gamma, delta):
    """A node's discount ``exp(-gamma * delta)`` (0 for a leaf at an infinite lifetime)."""
    return math.exp(-gamma * delta) if delta != np.inf else 0.0


@njit(cache=True, inline="always")
def _n_tables(stats, t, j, K):
    """Node ``j``'s number of IKN tables: the number of classes among its points."""
    n = 0.0
    for k in range(K):
        if stats[t, j, 1 + k] > 0:
            n += 1.0
    return n


@njit(cache=True, inline="always")
def _add_branch_off_mean(acc, w, t, j, stats, dbar, n_tab, gpar, ref_variant):
    """``acc += w * G``, ``G`` the posterior mean (eq. 5.5) of a node inserted between node
    ``j`` and its parent (mean ``gpar``) with the expected discount ``dbar``.

    Its customers are j's tables (one per class present, ``n_tab`` of them), as the thesis'
    Alg. 5.8 line 10 has it, or with ``ref_variant`` j's class counts, as the authors'
    reference code has it.  The tables are the default because they are what IKN gives a node
    whose children are j and the query (which has no label), and because only they make the
    prediction tend to the uniform distribution far from the data; the counts reproduce the
    reference code, with which the published results were most likely computed.
    """
    K = acc.shape[0]
    if ref_variant:
        for k in range(K):
            tab = np.float64(stats[t, j, 1 + k] > 0)
            acc[k] += w * ((stats[t, j, 1 + k] - dbar * tab + dbar * n_tab * gpar[k])
                           / stats[t, j, 0])
    else:
        for k in range(K):
            tab = np.float64(stats[t, j, 1 + k] > 0)
            acc[k] += w * (((1.0 - dbar) * tab + dbar * n_tab * gpar[k]) / n_tab)


@njit(cache=True)
def _node_mean(t, j, inode, stats, d, gpar, out):
    """Eq. (5.5): posterior mean of node j's label distribution given its parent's ``gpar``.

    IKN customers: raw counts at a leaf, tables of the children (0/1 each) at an internal node;
    a node has a table for class k iff any of its points has class k.
    """
    K = out.shape[0]
    leaf = inode[t, j, LEFT] < 0
    l = inode[t, j, LEFT]
    r = inode[t, j, RIGHT]
    c_tot = 0.0
    tab_tot = 0.0
    for k in range(K):
        if leaf:
            c = stats[t, j, 1 + k]
        else:
            c = (1.0 if stats[t, l, 1 + k] > 0 else 0.0) + (1.0 if stats[t, r, 1 + k] > 0 else 0.0)
        out[k] = c
        c_tot += c
        if stats[t, j, 1 + k] > 0:
            tab_tot += 1.0
    for k in range(K):
        tab = 1.0 if stats[t, j, 1 + k] > 0 else 0.0
        out[k] = (out[k] - d * tab + d * tab_tot * gpar[k]) / c_tot


@parallel_kernel
@njit(cache=True, parallel=True)
def predict_proba_trees(Xq, inode, fnode, box, stats, meta, gamma, ref_variant, out):
    """Forest class probabilities ``out[i, k]``: the average of the trees' predictives, each
    averaged over where the query branches off (thesis eqs. 5.6-5.7).

    ``ref_variant``: a branch-off node's customers are the counts of the node below it (the
    authors' reference code) instead of its tables (see :func:`_add_branch_off_mean`).
    """
    n = Xq.shape[0]
    T = inode.shape[0]
    K = out.shape[1]
    for i in prange(n):
        gpar = np.empty(K)
        gj = np.empty(K)
        acc = np.zeros(K)
        for t in range(T):
            for k in range(K):
                gpar[k] = 1.0 / K
            j = meta[t, ROOT]
            tp = 0.0
            p_ns = 1.0
            while True:
                tau, delta, eta, p = branch_off(fnode, box, t, j, tp, Xq, i)
                if p > 0.0:
                    _add_branch_off_mean(acc, p_ns * p, t, j, stats,
                                         expected_discount(eta, gamma, delta),
                                         _n_tables(stats, t, j, K), gpar, ref_variant)
                _node_mean(t, j, inode, stats, _discount(gamma, delta), gpar, gj)
                if inode[t, j, LEFT] < 0:
                    w = p_ns * (1.0 - p)
                    for k in range(K):
                        acc[k] += w * gj[k]
                    break
                p_ns *= 1.0 - p
                if p_ns <= 0.0:
                    break
                for k in range(K):
                    gpar[k] = gj[k]
                j = child_containing(inode, fnode, t, j, Xq, i)
                tp = tau
        for k in range(K):
            out[i, k] = acc[k] / T


# --------------------------------------------------------------------------------------
# prediction from a per-forest cache (the node means do not depend on the query)
# --------------------------------------------------------------------------------------

# the cache renumbers every tree's nodes in depth-first pre-order (a node's left child is the
# next position), so the walk down reads one small record per node, mostly from the same or
# the next cache line
WALK_DTYPE = np.dtype([("thresh", np.float64), ("right", np.int32), ("feat", np.int32)])


@parallel_kernel
@njit(cache=True, parallel=True)
def build_cache(inode, fnode, stats, meta, gamma, walk, orig, tau, ntab, G):
    """Fill the prediction cache of every tree, nodes in pre-order position ``c``.

    ``walk[t, c]``: split threshold, position of the right child and split feature (-1 at a
    leaf); ``orig[t, c]``: the node's id in the store; ``tau[t, c]``: its split time;
    ``ntab[t, c]``: its number of IKN tables (classes present); ``G[t, c]``: its posterior
    mean, eq (5.5) top-down from the uniform base measure, with the same arithmetic as the
    path walk of :func:`predict_proba_trees`.
    """
    T = inode.shape[0]
    K = G.shape[2]
    for t in prange(T):
        if meta[t, NNODES] == 0:
            continue
        order = preorder(inode, meta, t)
        nn = order.shape[0]
        pos = np.empty(inode.shape[1], np.int64)
        for c in range(nn):
            pos[order[c]] = c
        h = np.empty(K)
        for k in range(K):
            h[k] = 1.0 / K
        for c in range(nn):
            j = order[c]
            orig[t, c] = j
            tau[t, c] = fnode[t, j, TAU]
            if inode[t, j, LEFT] >= 0:
                walk[t, c].thresh = fnode[t, j, THRESH]
                walk[t, c].right = pos[inode[t, j, RIGHT]]
                walk[t, c].feat = inode[t, j, FEAT]
            else:
                walk[t, c].thresh = 0.0
                walk[t, c].right = -1
                walk[t, c].feat = -1
            ntab[t, c] = _n_tables(stats, t, j, K)
            par = inode[t, j, PARENT]
            tp = fnode[t, par, TAU] if par >= 0 else 0.0
            d = _discount(gamma, fnode[t, j, TAU] - tp)
            if par >= 0:
                _node_mean(t, j, inode, stats, d, G[t, pos[par]], G[t, c])
            else:
                _node_mean(t, j, inode, stats, d, h, G[t, c])


@njit(cache=True, inline="always")
def _tree_proba_cached(t, Xq, i, walk, orig, tau, ntab, G, box, stats, gamma, ref_variant, h,
                       acc, path, etas):
    """Add tree ``t``'s predictive for query ``Xq[i]`` to ``acc`` (eqs. 5.6-5.7 from the cache).

    Boxes nest, so the nodes whose box holds the query (eta = 0, no branch-off) are a prefix
    of its path: walk down by the splits alone, then test boxes upwards from the leaf until
    one holds the query.  Only the nodes below it (usually a few) contribute branch-off
    terms; along the prefix ``p_ns`` stays exactly 1.
    """
    K = acc.shape[0]
    c = 0
    L = 0
    while True:
        path[L] = c
        L += 1
        f = walk[t, c].feat
        if f < 0:
            break
        if Xq[i, f] <= walk[t, c].thresh:
            c += 1
        else:
            c = walk[t, c].right
    # the boxes tested next, requested together (the query usually leaves within a few)
    nb = box.shape[2] * box.shape[3] * 8
    for q in range(L - 1, max(L - 4, 0) - 1, -1):
        j = orig[t, path[q]]
        for o in range(0, nb, 64):
            prefetch(box, t, j, o)
    m = L
    while m > 0:
        e = box_distance(box, t, orig[t, path[m - 1]], Xq, i)
        if e == 0.0:
            break
        m -= 1
        etas[m] = e
    if m == L:  # inside the leaf's box
        for k in range(K):
            acc[k] += G[t, c, k]
        return
    p_ns = 1.0
    for q in range(m, L):
        c = path[q]
        cp = path[q - 1] if q > 0 else -1
        tp = tau[t, cp] if cp >= 0 else 0.0
        delta = tau[t, c] - tp
        eta = etas[q]
        p = branch_off_probability(delta, eta)
        if p > 0.0:
            gpar = G[t, cp] if cp >= 0 else h
            # expected_discount, reusing expm1(-eta * delta) = -p
            if delta == np.inf:
                dbar = eta / (eta + gamma)
            else:
                dbar = eta / (eta + gamma) * math.expm1(-(eta + gamma) * delta) / (-p)
            _add_branch_off_mean(acc, p_ns * p, t, orig[t, c], stats, dbar, ntab[t, c], gpar,
                                 ref_variant)
        if q == L - 1:
            w = p_ns * (1.0 - p)
            for k in range(K):
                acc[k] += w * G[t, c, k]
            return
        p_ns *= 1.0 - p
        if p_ns <= 0.0:
            return


@parallel_kernel
@njit(cache=True, parallel=True)
def predict_proba_cached(Xq, walk, orig, tau, ntab, G, box, stats, meta, gamma, ref_variant,
                         out, block):
    """:func:`predict_proba_trees` from the cache of :func:`build_cache`.

    Queries are taken in blocks of ``block``, each block running through one tree after the
    other so that the tree's top stays in cache.  Each query still sums its trees in order:
    the result does not depend on ``block`` or on the number of threads.
    """
    n = Xq.shape[0]
    T = walk.shape[0]
    K = out.shape[1]
    maxn = 1
    for t in range(T):
        maxn = max(maxn, meta[t, NNODES])
    nb = (n + block - 1) // block
    for b in prange(nb):
        lo = b * block
        hi = min(n, lo + block)
        h = np.empty(K)
        for k in range(K):
            h[k] = 1.0 / K
        path = np.empty(maxn, np.int64)
        etas = np.empty(maxn)
        out[lo:hi] = 0.0
        for t in range(T):
            for i in range(lo, hi):
                _tree_proba_cached(t, Xq, i, walk, orig, tau, ntab, G, box, stats, gamma,
                                   ref_variant, h, out[i], path, etas)
        for i in range(lo, hi):
            for k in range(K):
                out[i, k] /= T
