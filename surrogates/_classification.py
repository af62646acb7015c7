"""Compiled classification kernel: hierarchical normalized stable process prior with the
interpolated Kneser-Ney approximation, averaged analytically over branch-off points
(spec ``mondrian_forest.md`` A5-A7, with the printing errors of Alg 5.3/5.8 corrected).

Only raw class counts are stored per node (column 0 of the stats holds the total); the IKN
customer and table counts are derived on the fly along a query's path (A5).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from ._tree import (LEFT, RIGHT, ROOT, TAU, box_distance, branch_off_probability,
                    child_containing)


@njit(cache=True, inline="always")
def expected_discount(eta, gamma, delta):
    """E[exp(-gamma * D)] for D ~ Exp(eta) truncated to [0, delta] (A7, closed form)."""
    if delta == np.inf:
        return eta / (eta + gamma)
    return eta / (eta + gamma) * math.expm1(-(eta + gamma) * delta) / math.expm1(-eta * delta)


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


@njit(cache=True, parallel=True)
def predict_proba_trees(Xq, inode, fnode, box, stats, meta, gamma, ref_variant, out):
    """Forest class probabilities ``out[i, k]`` (average of the trees' predictives, A7).

    ``ref_variant``: branch-off customers as in the reference code (j's counts) instead of the
    thesis' IKN tables (AMBIG-7).
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
                tau = fnode[t, j, TAU]
                delta = tau - tp
                eta = box_distance(box, t, j, Xq, i)
                p = branch_off_probability(delta, eta)
                if p > 0.0:
                    dbar = expected_discount(eta, gamma, delta)
                    n_tab = 0.0
                    for k in range(K):
                        if stats[t, j, 1 + k] > 0:
                            n_tab += 1.0
                    w = p_ns * p
                    for k in range(K):
                        tab = 1.0 if stats[t, j, 1 + k] > 0 else 0.0
                        if ref_variant:
                            g = (stats[t, j, 1 + k] - dbar * tab + dbar * n_tab * gpar[k]) / stats[t, j, 0]
                        else:
                            g = ((1.0 - dbar) * tab + dbar * n_tab * gpar[k]) / n_tab
                        acc[k] += w * g
                d = math.exp(-gamma * delta) if delta != np.inf else 0.0
                _node_mean(t, j, inode, stats, d, gpar, gj)
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
