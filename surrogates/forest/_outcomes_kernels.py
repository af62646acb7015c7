"""Compiled prediction of several regression forests that share their partitions: forests
grown from the same random stream on the same inputs (Mondrian partitions do not depend on
the targets), which differ only in their nodes' label statistics (and, with belief
propagation, their messages and hyper-parameters).

One walk of each tree's nodes serves every forest: the distances of the queries to a node's
box, the probabilities of branching off above it and the split of the queries between its
children depend on the partition alone; only the mixture components differ.  Each forest's
numbers are those of :func:`~surrogates.forest._regression_kernels.predict_forest_moments`
(and, per tree, of :func:`~surrogates.forest._regression_kernels.predict_regression`), bit
for bit: the same operations in the same order per query and forest.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from .._core._tree_kernels import (FEAT, LEFT, RIGHT, ROOT, TAU, THRESH, box_distance,
                                   branch_off_probability_outside)
from ._regression_kernels import (_MIN_PATH_WEIGHT, AL, CAV_M, CAV_V, MODE_BP_E, MODE_BP_F,
                                  MODE_EMPIRICAL, PIL, VTAU, _add_moments, _branch_moments,
                                  _leaf_moments, _mixture_moments, truncated_exp_mean)


@njit(cache=True, nogil=True)
def same_nodes(a, b, nodes):
    """Whether the first ``nodes[t]`` rows of tree ``t`` of ``a`` and ``b`` (``(trees,
    capacity, width)`` arrays of integers: float arrays viewed as their bits) are equal for
    every tree: equal bits are equal values (and NaN where NaN)."""
    for t in range(nodes.shape[0]):
        for j in range(nodes[t]):
            for c in range(a.shape[2]):
                if a[t, j, c] != b[t, j, c]:
                    return False
    return True


@njit(cache=True, inline="always")
def _sigmoid_denominator(tau, g2):
    """``1 + exp(-g2 tau)``, the denominator of the prior variance ``V(tau)`` of
    :func:`~surrogates.forest._regression_kernels._V` (0: ``tau`` is inf, ``V = gamma1``),
    which forests of the same ``gamma2`` share."""
    if tau == np.inf:
        return 0.0
    return 1.0 + math.exp(-g2 * tau)


@njit(cache=True, inline="always")
def _over(g1, den):
    """``V(tau) = gamma1 / den`` from :func:`_sigmoid_denominator`'s ``den``."""
    if den == 0.0:
        return g1
    return g1 / den


@njit(cache=True, inline="always")
def _bp_e_moments(t, j, bp, Vb, Vp, g1, s2):
    """:func:`~surrogates.forest._regression_kernels._branch_moments`' ``MODE_BP_E`` component
    given the prior variances ``Vb`` (at the expected cut time) and ``Vp`` (at the parent's
    split time): the same operations."""
    prior_m = bp[t, j, CAV_M]
    prior_v = bp[t, j, CAV_V] + (Vb - Vp)
    lik_m = bp[t, j, AL]
    lik_v = 1.0 / bp[t, j, PIL] + (bp[t, j, VTAU] - Vb)
    if prior_v <= 0.0:
        m = prior_m
        v = 0.0
    else:
        P = 1.0 / prior_v + 1.0 / lik_v
        m = (prior_m / prior_v + lik_m / lik_v) / P
        v = 1.0 / P
    return m, v + (g1 - Vb) + s2


@njit(cache=True, inline="always")
def _finish(q, z, t, shift, s1, s2acc, c, out_mean, out_var, per_tree, tree_mean, tree_var):
    """Add query ``q``'s finished walk of tree ``t`` (its sums in slot ``z``, one row per
    forest) to every forest's sums (about ``c``) and, with ``per_tree``, store the tree's
    moments."""
    for f in range(s1.shape[1]):
        m, v = _mixture_moments(shift[f], s1[z, f], s2acc[z, f])
        if per_tree:
            tree_mean[f, q, t] = m
            tree_var[f, q, t] = v
        dm = m - c[f]
        out_mean[f, q] += dm
        out_var[f, q] += v + dm * dm


@njit(cache=True)
def _shared_nodes_block(lo_q, hi_q, Xq, inode, fnode, box, meta, stats, bp, modes, s2, g1, g2,
                        hoist, out_mean, out_var, per_tree, tree_mean, tree_var, perm, spill, p_ns,
                        s1, s2acc, eta, prob, outside, stack, stack_tp, shift, c, node_m,
                        node_v):
    """Queries ``lo_q:hi_q`` of every forest: each tree's nodes visited once (depth first)
    with the block's queries that reach them, as
    :func:`~surrogates.forest._regression_kernels.forest_moments_range` visits one forest's.
    ``stats[f]``, ``bp[f]``, ``modes[f]``, ``s2[f]``, ``g1[f]``, ``g2[f]``: forest ``f``'s;
    ``hoist``: every forest has the same ``gamma2``, so the exponentials of the prior
    variances of belief propagation's branch-off components are computed once for all."""
    T = inode.shape[0]
    F = stats.shape[0]
    nb = hi_q - lo_q
    for f in range(F):
        c[f] = stats[f, 0, meta[0, ROOT], 1]
        for q in range(lo_q, hi_q):
            out_mean[f, q] = 0.0
            out_var[f, q] = 0.0
    for t in range(T):
        root = meta[t, ROOT]
        for f in range(F):
            shift[f] = stats[f, t, root, 1]
        for k in range(nb):
            perm[k] = lo_q + k
            p_ns[k] = 1.0
            for f in range(F):
                s1[k, f] = 0.0
                s2acc[k, f] = 0.0
        stack[0, 0] = root
        stack[0, 1] = 0
        stack[0, 2] = nb
        stack_tp[0] = 0.0
        sp = 1
        while sp > 0:
            sp -= 1
            j = stack[sp, 0]
            lo = stack[sp, 1]
            hi = stack[sp, 2]
            tp = stack_tp[sp]
            tau = fnode[t, j, TAU]
            delta = tau - tp
            for k in range(lo, hi):
                eta[k] = box_distance(box, t, j, Xq, perm[k])
            n_out = 0
            for k in range(lo, hi):
                outside[n_out] = k
                n_out += eta[k] > 0.0
            for o in range(n_out):
                prob[o] = branch_off_probability_outside(delta, eta[outside[o]])
            for f in range(F):  # each forest's component where it is the same for all queries
                mode = modes[f]
                if mode == MODE_EMPIRICAL or mode == MODE_BP_F:
                    node_m[f], node_v[f] = _branch_moments(mode, t, j, tp, tau, 1.0, delta,
                                                           stats[f], bp[f], s2[f], g1[f], g2[f])
            if hoist:  # V at the parent's split time, the same for all queries
                den_p = _sigmoid_denominator(tp, g2[0])
            for o in range(n_out):
                k = outside[o]
                z = perm[k] - lo_q
                p = prob[o]
                w = p_ns[z] * p
                den_b = 0.0
                if hoist and p > 0.0:  # V at the expected cut time, the same for all forests
                    den_b = _sigmoid_denominator(tp + truncated_exp_mean(eta[k], delta), g2[0])
                for f in range(F):
                    mode = modes[f]
                    if mode == MODE_EMPIRICAL or mode == MODE_BP_F:
                        s1[z, f], s2acc[z, f] = _add_moments(s1[z, f], s2acc[z, f], w,
                                                             node_m[f], node_v[f], shift[f])
                    elif p > 0.0:
                        if hoist and mode == MODE_BP_E:
                            m, v = _bp_e_moments(t, j, bp[f], _over(g1[f], den_b),
                                                 _over(g1[f], den_p), g1[f], s2[f])
                        else:
                            m, v = _branch_moments(mode, t, j, tp, tau, eta[k], delta, stats[f],
                                                   bp[f], s2[f], g1[f], g2[f])
                        s1[z, f], s2acc[z, f] = _add_moments(s1[z, f], s2acc[z, f], w, m, v,
                                                             shift[f])
                p_ns[z] *= 1.0 - p  # (p = 0 leaves the weight as it is)
            if inode[t, j, LEFT] < 0:  # the leaf's own components, then the tree is done
                for f in range(F):
                    node_m[f], node_v[f] = _leaf_moments(modes[f], t, j, stats[f], bp[f], s2[f])
                for k in range(lo, hi):
                    z = perm[k] - lo_q
                    w = p_ns[z]
                    if w > 0.0:
                        for f in range(F):
                            s1[z, f], s2acc[z, f] = _add_moments(s1[z, f], s2acc[z, f], w,
                                                                 node_m[f], node_v[f], shift[f])
                for k in range(lo, hi):
                    q = perm[k]
                    _finish(q, q - lo_q, t, shift, s1, s2acc, c, out_mean, out_var, per_tree,
                            tree_mean, tree_var)
                continue
            feat = inode[t, j, FEAT]
            thresh = fnode[t, j, THRESH]
            n_left = 0
            n_right = 0
            for k in range(lo, hi):
                q = perm[k]
                z = q - lo_q
                if p_ns[z] <= _MIN_PATH_WEIGHT:  # nothing left below: the walk stops here
                    _finish(q, z, t, shift, s1, s2acc, c, out_mean, out_var, per_tree,
                            tree_mean, tree_var)
                    continue
                go_left = Xq[q, feat] <= thresh
                perm[lo + n_left] = q  # branch-free: written to both sides, one advances
                spill[n_right] = q
                n_left += go_left
                n_right += 1 - go_left
            for r in range(n_right):
                perm[lo + n_left + r] = spill[r]
            if n_right > 0:
                stack[sp, 0] = inode[t, j, RIGHT]
                stack[sp, 1] = lo + n_left
                stack[sp, 2] = lo + n_left + n_right
                stack_tp[sp] = tau
                sp += 1
            if n_left > 0:
                stack[sp, 0] = inode[t, j, LEFT]
                stack[sp, 1] = lo
                stack[sp, 2] = lo + n_left
                stack_tp[sp] = tau
                sp += 1
    for f in range(F):  # the forests' mean and variance from the sums over the trees
        for i in range(lo_q, hi_q):
            e = out_mean[f, i] / T
            out_mean[f, i] = c[f] + e
            out_var[f, i] = max(out_var[f, i] / T - e * e, 0.0)


@njit(cache=True, nogil=True)
def predict_shared_range(b0, b1, Xq, inode, fnode, box, meta, stats, bp, modes, s2, g1, g2, hoist,
                         out_mean, out_var, per_tree, tree_mean, tree_var, block):
    """Every forest's predictive mean and variance at ``Xq`` (``out_mean[f]``,
    ``out_var[f]``) and, with ``per_tree``, each tree's (``tree_mean[f, i, t]``,
    ``tree_var[f, i, t]``), for the blocks ``b0..b1-1`` of ``block`` queries (the numbers do
    not depend on the blocks; a nogil kernel, so ranges of blocks may run on several
    threads at once).  The partition (``inode``, ``fnode``, ``box``, ``meta``) is every
    forest's; ``stats``, ``bp``: ``(forests, trees, nodes, ...)``."""
    n = Xq.shape[0]
    B = max(1, min(block, n))
    F = stats.shape[0]
    depth_cap = inode.shape[1] + 1
    perm = np.empty(B, np.int64)
    spill = np.empty(B, np.int64)
    p_ns = np.empty(B)
    s1 = np.empty((B, F))
    s2acc = np.empty((B, F))
    eta = np.empty(B)
    prob = np.empty(B)
    outside = np.empty(B, np.int64)
    stack = np.empty((depth_cap, 3), np.int64)
    stack_tp = np.empty(depth_cap)
    work = np.empty((4, F))
    for b in range(b0, b1):
        _shared_nodes_block(b * B, min(n, b * B + B), Xq, inode, fnode, box, meta, stats, bp,
                            modes, s2, g1, g2, hoist, out_mean, out_var, per_tree, tree_mean,
                            tree_var, perm, spill, p_ns, s1, s2acc, eta, prob, outside, stack,
                            stack_tp, work[0], work[1], work[2], work[3])
