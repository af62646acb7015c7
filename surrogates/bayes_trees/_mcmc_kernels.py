"""The compiled Metropolis-Hastings moves of
:class:`~surrogates.bayes_trees.mcmc_classifier.MCMCDecisionTreeClassifier` (grow, prune,
change, swap on one tree stored as flat arrays), the statistics and posterior terms they
compare, and the compaction of a sampled tree for prediction.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from . import _smc_kernels as core
from .._core._rng_kernels import uniform
from ._prior_kernels import split_probability

FREE = -2
LEAF = -1
_MOVES = (0.25, 0.5, 0.9)  # cumulative probabilities of grow, prune, change (then swap)


@njit(cache=True)
def _add_point(X, y, i, j, feat, thr, left, right, lo, hi, counts, npts):
    """Route point ``i`` down from node ``j``, adding it to the label counts and data ranges
    of every node it passes."""
    D = X.shape[1]
    while True:
        npts[j] += 1
        counts[j, y[i]] += 1
        for d in range(D):
            v = X[i, d]
            if v < lo[j, d]:
                lo[j, d] = v
            if v > hi[j, d]:
                hi[j, d] = v
        if feat[j] < 0:
            break
        j = left[j] if X[i, feat[j]] <= thr[j] else right[j]


@njit(cache=True)
def _stats(X, y, feat, thr, left, right, n_slots, lo, hi, counts, npts):
    N = X.shape[0]
    for j in range(n_slots):
        npts[j] = 0
        counts[j, :] = 0
        lo[j, :] = np.inf
        hi[j, :] = -np.inf
    for i in range(N):
        _add_point(X, y, i, 0, feat, thr, left, right, lo, hi, counts, npts)


@njit(cache=True)
def _n_varying(lo, hi, j):
    n = 0
    for d in range(lo.shape[1]):
        if hi[j, d] > lo[j, d]:
            n += 1
    return n


@njit(cache=True)
def _node_term(j, feat, depth, left, right, lo, hi, counts, npts, alpha_s, beta_s, lik_scale,
               lg_class, lg_total, const):
    """Node ``j``'s factor of the log prior (3.4), plus ``lik_scale`` times its leaf's log
    likelihood (3.2); -inf when it has no data or splits outside its data's range."""
    f = feat[j]
    if npts[j] == 0:
        return -np.inf
    nv = _n_varying(lo, hi, j)
    p = split_probability(depth[j], alpha_s, beta_s)
    if f == LEAF:
        term = lik_scale * core.log_dirmult(counts[j], lg_class, lg_total, const)
        return term + math.log1p(-p) if nv > 0 else term
    if nv == 0 or not hi[j, f] > lo[j, f] or npts[left[j]] == 0 or npts[right[j]] == 0:
        return -np.inf
    return math.log(p) - math.log(nv) - math.log(hi[j, f] - lo[j, f])


@njit(cache=True)
def _log_posterior(feat, depth, left, right, n_slots, lo, hi, counts, npts, alpha_s, beta_s,
                   lik_scale, lg_class, lg_total, const):
    """Log prior (3.4) plus ``lik_scale`` times the log likelihood (3.1)-(3.2) of the tree."""
    lp = 0.0
    for j in range(n_slots):
        if feat[j] != FREE:
            lp += _node_term(j, feat, depth, left, right, lo, hi, counts, npts, alpha_s,
                             beta_s, lik_scale, lg_class, lg_total, const)
    return lp


@njit(cache=True)
def _subtree(top, feat, left, right, nodes):
    """The nodes of the subtree under ``top`` into ``nodes``; returns how many."""
    nodes[0] = top
    n = 1
    i = 0
    while i < n:
        j = nodes[i]
        i += 1
        if feat[j] >= 0:
            nodes[n] = left[j]
            nodes[n + 1] = right[j]
            n += 2
    return n


@njit(cache=True)
def _subtree_stats(X, y, pts, n_pts, top, feat, thr, left, right, nodes, n_nodes, lo, hi,
                   counts, npts):
    """Statistics of the subtree under ``top`` from its points ``pts[:n_pts]``."""
    for q in range(n_nodes):
        j = nodes[q]
        npts[j] = 0
        counts[j, :] = 0
        lo[j, :] = np.inf
        hi[j, :] = -np.inf
    for q in range(n_pts):
        _add_point(X, y, pts[q], top, feat, thr, left, right, lo, hi, counts, npts)


@njit(cache=True)
def _draw_rule(lo, hi, j, state):
    """A split of node ``j`` from the prior given its data: ``(dim, location, log density)``."""
    nv = _n_varying(lo, hi, j)
    k = min(int(uniform(state, 0) * nv), nv - 1)
    d = 0
    for dd in range(lo.shape[1]):
        if hi[j, dd] > lo[j, dd]:
            if k == 0:
                d = dd
                break
            k -= 1
    ext = hi[j, d] - lo[j, d]
    xi = lo[j, d] + uniform(state, 0) * ext
    if not (lo[j, d] <= xi < hi[j, d]):
        xi = lo[j, d]
    return d, xi, -math.log(nv) - math.log(ext)


@njit(cache=True)
def _free_slot(feat, n_slots, avoid):
    for j in range(1, n_slots[0]):
        if feat[j] == FREE and j != avoid:
            return j
    j = n_slots[0]
    n_slots[0] += 1
    feat[j] = FREE
    return j


@njit(cache=True)
def mcmc_step(X, y, cur, cur_stats, prop, prop_stats, cur_lp, alpha_s, beta_s, lik_scale,
              lg_class, lg_total, const, state, pts, new_nodes, old_nodes):
    """One Metropolis-Hastings step of Chipman et al. (1998); ``cur``/``prop`` are tuples
    ``(feat, thr, left, right, depth, n_slots)`` and ``*_stats`` ``(lo, hi, counts, npts)``;
    ``pts``, ``new_nodes`` and ``old_nodes`` are scratch arrays (N and tree capacity long).
    Returns 1 if the proposal was accepted (then ``cur`` and ``cur_stats`` hold it)."""
    feat, thr, left, right, depth, n_slots = cur
    lo, hi, counts, npts = cur_stats
    pfeat, pthr, pleft, pright, pdepth, pn = prop
    n = n_slots[0]
    pn[0] = n
    pfeat[:n] = feat[:n]
    pthr[:n] = thr[:n]
    pleft[:n] = left[:n]
    pright[:n] = right[:n]
    pdepth[:n] = depth[:n]
    u = uniform(state, 0)
    log_q = 0.0  # log q(T | T*) - log q(T* | T)
    if u < _MOVES[1]:
        # grow and prune, with the counts of each's candidates in both trees
        n_grow = 0
        n_prune = 0
        for j in range(n):
            if feat[j] == LEAF and _n_varying(lo, hi, j) > 0:
                n_grow += 1
            elif feat[j] >= 0 and feat[left[j]] == LEAF and feat[right[j]] == LEAF:
                n_prune += 1
        if u < _MOVES[0]:
            if n_grow == 0:
                return 0
            k = min(int(uniform(state, 0) * n_grow), n_grow - 1)
            j = 0
            for jj in range(n):
                if feat[jj] == LEAF and _n_varying(lo, hi, jj) > 0:
                    if k == 0:
                        j = jj
                        break
                    k -= 1
            top = j
            d, xi, log_rule = _draw_rule(lo, hi, j, state)
            a = _free_slot(pfeat, pn, -1)
            b = _free_slot(pfeat, pn, a)
            pfeat[j] = d
            pthr[j] = xi
            pleft[j] = a
            pright[j] = b
            for c in (a, b):
                pfeat[c] = LEAF
                pdepth[c] = depth[j] + 1
            # prune candidates after: j becomes one; its parent may stop being one
            n_prune_new = n_prune + 1
            if j != 0:
                par = -1
                for jj in range(n):
                    if feat[jj] >= 0 and (left[jj] == j or right[jj] == j):
                        par = jj
                if par >= 0 and feat[left[par]] == LEAF and feat[right[par]] == LEAF:
                    n_prune_new -= 1
            log_q = (-math.log(n_prune_new)) - (-math.log(n_grow) + log_rule)
        else:
            if n_prune == 0:
                return 0
            k = min(int(uniform(state, 0) * n_prune), n_prune - 1)
            j = 0
            for jj in range(n):
                if feat[jj] >= 0 and feat[left[jj]] == LEAF and feat[right[jj]] == LEAF:
                    if k == 0:
                        j = jj
                        break
                    k -= 1
            top = j
            a = left[j]
            b = right[j]
            n_grow_new = n_grow + 1
            for c in (a, b):
                if _n_varying(lo, hi, c) > 0:
                    n_grow_new -= 1
                pfeat[c] = FREE
            pfeat[j] = LEAF
            f = feat[j]
            log_rule = -math.log(_n_varying(lo, hi, j)) - math.log(hi[j, f] - lo[j, f])
            log_q = (-math.log(n_grow_new) + log_rule) - (-math.log(n_prune))
    elif u < _MOVES[2]:
        n_int = 0
        for j in range(n):
            if feat[j] >= 0:
                n_int += 1
        if n_int == 0:
            return 0
        k = min(int(uniform(state, 0) * n_int), n_int - 1)
        j = 0
        for jj in range(n):
            if feat[jj] >= 0:
                if k == 0:
                    j = jj
                    break
                k -= 1
        top = j
        d, xi, log_rule = _draw_rule(lo, hi, j, state)
        f = feat[j]
        pfeat[j] = d
        pthr[j] = xi
        log_q = -math.log(hi[j, f] - lo[j, f]) + math.log(hi[j, d] - lo[j, d])
    else:
        n_pairs = 0
        for j in range(n):
            if feat[j] >= 0:
                for c in (left[j], right[j]):
                    if feat[c] >= 0:
                        n_pairs += 1
        if n_pairs == 0:
            return 0
        k = min(int(uniform(state, 0) * n_pairs), n_pairs - 1)
        par = -1
        child = -1
        for j in range(n):
            if feat[j] >= 0:
                for c in (left[j], right[j]):
                    if feat[c] >= 0:
                        if k == 0 and par < 0:
                            par = j
                            child = c
                        k -= 1
        top = par
        other = right[par] if child == left[par] else left[par]
        pfeat[par] = feat[child]
        pthr[par] = thr[child]
        pfeat[child] = feat[par]
        pthr[child] = thr[par]
        if feat[other] == feat[child] and thr[other] == thr[child]:
            pfeat[other] = feat[par]
            pthr[other] = thr[par]
    # only the subtree under the changed node differs: recompute its statistics from its
    # points, O(N depth) to find them plus O(N_top depth D), and compare its terms
    N = X.shape[0]
    n_pts = 0
    for i in range(N):
        j = 0
        while j != top and feat[j] >= 0:
            j = left[j] if X[i, feat[j]] <= thr[j] else right[j]
        if j == top:
            pts[n_pts] = i
            n_pts += 1
    plo, phi, pcounts, pnpts = prop_stats
    n_new = _subtree(top, pfeat, pleft, pright, new_nodes)
    _subtree_stats(X, y, pts, n_pts, top, pfeat, pthr, pleft, pright, new_nodes, n_new, plo,
                   phi, pcounts, pnpts)
    delta = 0.0
    for q in range(n_new):
        delta += _node_term(new_nodes[q], pfeat, pdepth, pleft, pright, plo, phi, pcounts,
                            pnpts, alpha_s, beta_s, lik_scale, lg_class, lg_total, const)
    if delta == -np.inf:
        return 0
    n_old = _subtree(top, feat, left, right, old_nodes)
    for q in range(n_old):
        delta -= _node_term(old_nodes[q], feat, depth, left, right, lo, hi, counts, npts,
                            alpha_s, beta_s, lik_scale, lg_class, lg_total, const)
    if math.log(1.0 - uniform(state, 0)) < delta + log_q:
        m = pn[0]
        n_slots[0] = m
        feat[:m] = pfeat[:m]
        thr[:m] = pthr[:m]
        left[:m] = pleft[:m]
        right[:m] = pright[:m]
        depth[:m] = pdepth[:m]
        for q in range(n_new):
            j = new_nodes[q]
            lo[j] = plo[j]
            hi[j] = phi[j]
            counts[j] = pcounts[j]
            npts[j] = pnpts[j]
        cur_lp[0] += delta
        return 1
    return 0


@njit(cache=True)
def compact(feat, thr, left, right, counts, n_slots, alpha):
    """The current tree in the flat layout of the SMC predictor (children of ``j`` at
    ``left[j]`` and ``left[j] + 1``), with each node's leaf predictive probabilities."""
    K = counts.shape[1]
    queue = np.empty(n_slots, np.int64)
    queue[0] = 0
    n_out = 1
    ofeat = np.empty(n_slots, np.int64)
    othr = np.empty(n_slots)
    oleft = np.full(n_slots, -1, np.int64)
    value = np.empty((n_slots, K))
    head = 0
    while head < n_out:
        j = queue[head]
        ofeat[head] = feat[j]
        othr[head] = thr[j]
        tot = 0.0
        for k in range(K):
            tot += counts[j, k]
        for k in range(K):
            value[head, k] = (counts[j, k] + alpha / K) / (tot + alpha)
        if feat[j] >= 0:
            oleft[head] = n_out
            queue[n_out] = left[j]
            queue[n_out + 1] = right[j]
            n_out += 2
        head += 1
    return ofeat[:n_out], othr[:n_out], oleft[:n_out], value[:n_out]
