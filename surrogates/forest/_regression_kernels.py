"""Compiled regression kernels of the Mondrian forest of Lakshminarayanan, Roy & Teh (2016):
exact Gaussian belief propagation under the hierarchical Gaussian prior (Section 3.1), the
closed-form hyper-parameter heuristic (Section 3.2, supplement B) and the predictive mixture
over where a query branches off a tree (Section 3.3, supplement Alg. 5).

The papers give the moments of a branch-off component only in words ("the posterior of the
parent of the new node"; also Lakshminarayanan, 2016, PhD thesis, Section 6.3.4), so the
``mode`` argument of :func:`predict_regression` chooses among:

``MODE_EMPIRICAL``  the fast approximation (supplement C): every node, branch-off components
                    included, summarised by the empirical mean and variance of its labels
``MODE_BP_E``       exact BP posterior in the leaf; a branch-off component is the exact
                    posterior of a node inserted above the branch-off node at the expected
                    cut time.  The default with BP: it is the one that reverts to the prior
                    far from the data
``MODE_BP_R``       exact BP posterior; a branch-off component as in the authors' reference
                    code: the node's posterior, its variance widened by the prior variance of
                    the edge from its parent down to the expected cut time.  That edge
                    vanishes far from the data, where the variance tends to the noise variance
``MODE_BP_F``       exact BP posterior in the leaf; branch-off components from empirical moments
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from .._core.compile_ahead import ready
from .._core.threads import run_split
from .._core._tree_kernels import (FEAT, LEFT, PARENT, RIGHT, ROOT, TAU, THRESH, box_distance,
                                   box_distance_over, branch_off,
                                   branch_off_probability_outside, child_containing, preorder)

MODE_EMPIRICAL, MODE_BP_E, MODE_BP_R, MODE_BP_F = 0, 1, 2, 3
# columns of the per-node BP array
AL, PIL, CAV_M, CAV_V, POST_M, POST_V, VTAU = 0, 1, 2, 3, 4, 5, 6
N_BP = 7
_LOG_2PI = math.log(2.0 * math.pi)


def heuristic_hyperparameters(n, mean, var, n_features, K_cap, gamma2_factor, noise_var=None):
    """``(mu_H, gamma1, gamma2, sigma_y^2)`` from the data summary: the heuristic of
    Lakshminarayanan, Roy & Teh (2016), Section 3.2 and supplement B.

    ``gamma1 (1/2 + 1/K) = Var(y)`` with ``K = min(K_cap, 2N)``, ``sigma_y^2 = gamma1 / K``,
    ``gamma2 = D / (gamma2_factor * log2 N)``.  With an explicit ``noise_var`` the same
    label-marginal argument gives ``gamma1 = 2 (Var(y) - noise_var)``.
    """
    var = max(float(var), 1e-300 + 1e-24 * mean * mean)
    K = min(float(K_cap), 2.0 * n)
    if noise_var is None:
        gamma1 = 2.0 * K / (K + 2.0) * var
        sigma2 = gamma1 / K
    else:
        sigma2 = float(noise_var)
        gamma1 = 2.0 * max(var - sigma2, 1e-6 * var)
    gamma2 = n_features / (gamma2_factor * max(math.log2(max(n, 1)), 1.0))
    return float(mean), gamma1, gamma2, sigma2


@njit(cache=True, nogil=True, no_cfunc_wrapper=True)
def _V(tau, g1, g2):
    if tau == np.inf:
        return g1
    return g1 / (1.0 + math.exp(-g2 * tau))


@njit(cache=True, nogil=True, no_cfunc_wrapper=True)
def bp_tree_range(t0, t1, inode, fnode, stats, meta, bp, mu_h, g1, g2, s2, logml):
    """:func:`bp_messages` on trees ``t0..t1-1``."""
    for t in range(t0, t1):
        log2pi_s2 = math.log(2.0 * math.pi * s2)
        V0 = _V(0.0, g1, g2)
        order = preorder(inode, meta, t)
        for k in range(order.shape[0]):  # one sigmoid per node, looked up below
            bp[t, order[k], VTAU] = _V(fnode[t, order[k], TAU], g1, g2)
        lml = 0.0
        for k in range(order.shape[0] - 1, -1, -1):
            j = order[k]
            if inode[t, j, LEFT] < 0:
                n = stats[t, j, 0]
                bp[t, j, PIL] = n / s2
                bp[t, j, AL] = stats[t, j, 1]
                # prod_n N(y_n | mu, s2) = Z * N(mu | ybar, s2 / n)
                lml += -0.5 * (n - 1.0) * log2pi_s2 - 0.5 * math.log(n) - 0.5 * stats[t, j, 2] / s2
            else:
                Vj = bp[t, j, VTAU]
                l = inode[t, j, LEFT]
                r = inode[t, j, RIGHT]
                bl = 1.0 / bp[t, l, PIL] + (bp[t, l, VTAU] - Vj)
                br = 1.0 / bp[t, r, PIL] + (bp[t, r, VTAU] - Vj)
                prec = 1.0 / bl + 1.0 / br
                bp[t, j, PIL] = prec
                bp[t, j, AL] = (bp[t, l, AL] / bl + bp[t, r, AL] / br) / prec
                # N(x | a_l, b_l) N(x | a_r, b_r) = N(a_l | a_r, b_l + b_r) N(x | ...)
                dv = bp[t, l, AL] - bp[t, r, AL]
                lml += -0.5 * (_LOG_2PI + math.log(bl + br)) - 0.5 * dv * dv / (bl + br)
        root = meta[t, ROOT]
        vr = 1.0 / bp[t, root, PIL] + (bp[t, root, VTAU] - V0)
        dv = bp[t, root, AL] - mu_h
        logml[t] = lml - 0.5 * (_LOG_2PI + math.log(vr)) - 0.5 * dv * dv / vr
        bp[t, root, CAV_M] = mu_h
        bp[t, root, CAV_V] = 0.0
        for k in range(order.shape[0]):
            j = order[k]
            par = inode[t, j, PARENT]
            Vj = bp[t, j, VTAU]
            vd = bp[t, j, CAV_V] + (Vj - (bp[t, par, VTAU] if par >= 0 else V0))
            md = bp[t, j, CAV_M]
            if vd <= 0.0:  # the edge prior collapsed (sigmoid saturation): mean is pinned
                bp[t, j, POST_M] = md
                bp[t, j, POST_V] = 0.0
            else:
                P = 1.0 / vd + bp[t, j, PIL]
                bp[t, j, POST_M] = (md / vd + bp[t, j, AL] * bp[t, j, PIL]) / P
                bp[t, j, POST_V] = 1.0 / P
            if inode[t, j, LEFT] >= 0:
                l = inode[t, j, LEFT]
                r = inode[t, j, RIGHT]
                for c, s in ((l, r), (r, l)):
                    bs = 1.0 / bp[t, s, PIL] + (bp[t, s, VTAU] - Vj)
                    if vd <= 0.0:
                        bp[t, c, CAV_M] = md
                        bp[t, c, CAV_V] = 0.0
                    else:
                        Pc = 1.0 / vd + 1.0 / bs
                        bp[t, c, CAV_M] = (md / vd + bp[t, s, AL] / bs) / Pc
                        bp[t, c, CAV_V] = 1.0 / Pc


def bp_messages(inode, fnode, stats, meta, bp, mu_h, g1, g2, s2, logml):
    """Exact Gaussian belief propagation on every tree, written into ``bp``; the trees
    split over the thread pool.

    The papers cite Murphy (2012, ch. 20) for the messages; they are written out here.  (The
    authors' reference code differs in two places that look like slips: the root's message
    is seeded with a variance where a precision is expected, and the downward messages leave
    out the child's edge variance.  Numbers from it can therefore differ slightly.)

    For each node: ``AL, PIL`` = mean / precision of the likelihood of the data below it;
    ``CAV_M, CAV_V`` = distribution of the parent's mean given all data outside the node's
    subtree (for the root: ``(mu_H, 0)``); ``POST_M, POST_V`` = posterior of the node's mean.
    ``logml[t]`` receives the log marginal likelihood of all labels under tree ``t``: the
    normalising constants collected by the upward pass.
    """
    ready(bp_tree_range)
    run_split(bp_tree_range, inode.shape[0], inode, fnode, stats, meta, bp, mu_h, g1, g2, s2,
              logml)


def bp_messages_serial(inode, fnode, stats, meta, bp, mu_h, g1, g2, s2, logml):
    """:func:`bp_messages` on the calling thread (small forests)."""
    ready(bp_tree_range)
    bp_tree_range(0, inode.shape[0], inode, fnode, stats, meta, bp, mu_h, g1, g2, s2, logml)


@njit(cache=True, inline="always")
def truncated_exp_mean(eta, delta):
    """E[E | E < delta] for E ~ Exp(eta): the expected cut time of a branch-off."""
    if delta == np.inf:
        return 1.0 / eta
    x = eta * delta
    if x < 1e-6:
        return delta * (0.5 - x / 12.0)
    return 1.0 / eta - delta / math.expm1(x)


@njit(cache=True, inline="always")
def _branch_moments(mode, t, j, tp, tau, eta, delta, stats, bp, s2, g1, g2):
    """Mean and variance of the component of a query at distance ``eta`` branching off above
    node ``j`` (``mode``: see the module docstring)."""
    if mode == MODE_EMPIRICAL or mode == MODE_BP_F:
        n = stats[t, j, 0]
        return stats[t, j, 1], stats[t, j, 2] / n + s2
    tbar = tp + truncated_exp_mean(eta, delta)
    Vb = _V(tbar, g1, g2)
    Vp = _V(tp, g1, g2)
    if mode == MODE_BP_R:
        return bp[t, j, POST_M], bp[t, j, POST_V] + s2 + (Vb - Vp)
    # MODE_BP_E: prior of the inserted node from the cavity of j's parent, likelihood of
    # j's subtree
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
def _leaf_moments(mode, t, j, stats, bp, s2):
    if mode == MODE_EMPIRICAL:
        n = stats[t, j, 0]
        return stats[t, j, 1], stats[t, j, 2] / n + s2
    return bp[t, j, POST_M], bp[t, j, POST_V] + s2


#: a path walk stops once the weight left below the current node is under this (the dropped
#: components change the moments by less than ~1e-13 of the label spread)
_MIN_PATH_WEIGHT = 1e-14


@njit(cache=True, inline="always")
def _logsumexp_add(lmax, lsum, w, m, v, yi, log_T):
    """Add the component ``w N(m, v)`` (of one tree among ``exp(log_T)``) evaluated at ``yi``
    to the streaming log-sum-exp state ``(lmax, lsum)``."""
    r = yi - m
    q = 0.5 * r * r / v
    if q == math.inf:
        # r^2 overflowed (a target beyond about 1e154 from the mean): the standardised distance
        # squares without overflow when the component is wide enough for its density to be
        # held at all
        z = r / math.sqrt(v)
        q = 0.5 * z * z
    lp = math.log(w) - log_T - 0.5 * (_LOG_2PI + math.log(v)) - q
    if lp == -math.inf:
        # a density below float64's range contributes nothing (and -inf - -inf would be NaN)
        return lmax, lsum
    if lp > lmax:
        return lp, lsum * math.exp(lmax - lp) + 1.0
    return lmax, lsum + math.exp(lp - lmax)


@njit(cache=True, nogil=True, no_cfunc_wrapper=True)
def _add_moments(s1, s2acc, w, m, v, shift):
    """``(s1, s2acc)`` with the component ``w N(m, v)`` added: the sums of the mixture's first
    and second moments about ``shift`` (about a nearby value, so no cancellation)."""
    dm = m - shift
    return s1 + w * dm, s2acc + w * (v + dm * dm)


@njit(cache=True, inline="always")
def _mixture_moments(shift, s1, s2acc):
    """Mean and variance of a mixture from its moment sums about ``shift``."""
    return shift + s1, max(s2acc - s1 * s1, 0.0)


@njit(cache=True, inline="always")
def _add_component(s1, s2acc, lmax, lsum, w, m, v, shift, want_logpdf, yi, log_T):
    """Accumulate the component ``w N(m, v)``: first and second moments about ``shift`` and,
    with ``want_logpdf``, the log-sum-exp state at ``yi``."""
    s1, s2acc = _add_moments(s1, s2acc, w, m, v, shift)
    if want_logpdf:
        lmax, lsum = _logsumexp_add(lmax, lsum, w, m, v, yi, log_T)
    return s1, s2acc, lmax, lsum


@njit(cache=True, inline="always")
def _tree_mixture(i, t, Xq, yi, want_logpdf, lmax, lsum, log_T, inode, fnode, box, stats, bp,
                  meta, mode, s2, g1, g2):
    """Walk tree ``t`` for query ``Xq[i]``: the mixture's mean and variance, and with
    ``want_logpdf`` the streaming log-sum-exp state ``(lmax, lsum)`` updated by the tree's
    components evaluated at ``yi``.

    A leaf gives two components, the query branching off above it (weight ``p_ns * p``) and
    the query staying in it (``p_ns * (1 - p)``).  The printed algorithm (supplement Alg. 5)
    overwrites the first weight with the second; only both make the weights sum to one, and
    the authors' reference code has both.
    """
    j = meta[t, ROOT]
    shift = stats[t, j, 1]
    tp = 0.0
    p_ns = 1.0
    s1 = 0.0
    s2acc = 0.0
    while True:
        tau, delta, eta, p = branch_off(fnode, box, t, j, tp, Xq, i)
        is_leaf = inode[t, j, LEFT] < 0
        if p > 0.0:  # the component of a cut inserted above node j
            m, v = _branch_moments(mode, t, j, tp, tau, eta, delta, stats, bp, s2, g1, g2)
            s1, s2acc, lmax, lsum = _add_component(s1, s2acc, lmax, lsum, p_ns * p, m, v,
                                                   shift, want_logpdf, yi, log_T)
        if is_leaf:  # the leaf's own component
            w = p_ns * (1.0 - p)
            if w > 0.0:
                m, v = _leaf_moments(mode, t, j, stats, bp, s2)
                s1, s2acc, lmax, lsum = _add_component(s1, s2acc, lmax, lsum, w, m, v, shift,
                                                       want_logpdf, yi, log_T)
            break
        p_ns *= 1.0 - p
        if p_ns <= _MIN_PATH_WEIGHT:
            break
        j = child_containing(inode, fnode, t, j, Xq, i)
        tp = tau
    m, v = _mixture_moments(shift, s1, s2acc)
    return m, v, lmax, lsum


@njit(cache=True, nogil=True, no_cfunc_wrapper=True)
def _predict_point(i, Xq, yq, want_logpdf, inode, fnode, box, stats, bp, meta, mode, s2, g1,
                   g2, out_mean, out_var, out_logpdf):
    T = inode.shape[0]
    log_T = math.log(T)
    lmax = -np.inf
    lsum = 0.0
    yi = yq[i] if want_logpdf else 0.0
    for t in range(T):
        m, v, lmax, lsum = _tree_mixture(i, t, Xq, yi, want_logpdf, lmax, lsum, log_T, inode,
                                         fnode, box, stats, bp, meta, mode, s2, g1, g2)
        out_mean[i, t] = m
        out_var[i, t] = v
    if want_logpdf:
        # lsum is 0 only when every component's density is below float64's range
        out_logpdf[i] = lmax + math.log(lsum) if lsum > 0.0 else -math.inf


@njit(cache=True, inline="always")
def _add_tree_moments(q, m, v, c, out_mean, out_var):
    """Add one tree's mixture moments ``(m, v)``, about ``c``, to query ``q``'s sums."""
    dm = m - c
    out_mean[q] += dm
    out_var[q] += v + dm * dm


@njit(cache=True, inline="always")
def _finish_forest_moments(lo, hi, T, c, out_mean, out_var):
    """Turn the sums over ``T`` trees of queries ``lo:hi`` into the forest's mean and variance:
    ``E = mean_t E_t``, ``Var = mean_t (Var_t + E_t^2) - E^2`` (moments about ``c``)."""
    for i in range(lo, hi):
        e = out_mean[i] / T
        out_mean[i] = c + e
        out_var[i] = max(out_var[i] / T - e * e, 0.0)


#: queries per block of the node-batched kernel (large batches: a node meets all of the
#: block's queries that reach it at once)
NODE_BLOCK = 4096


@njit(cache=True, inline="always")
def _branch_off_query(z, p, m, v, shift, p_ns, s1, s2acc):
    """Query slot ``z`` of the node-batched kernel branches off with probability ``p``: add the
    component ``N(m, v)`` with weight ``p_ns[z] * p``; ``1 - p`` of the weight goes on below."""
    s1[z], s2acc[z] = _add_moments(s1[z], s2acc[z], p_ns[z] * p, m, v, shift)
    p_ns[z] *= 1.0 - p


@njit(cache=True, nogil=True, no_cfunc_wrapper=True)
def _finish_query(q, z, shift, s1, s2acc, c, out_mean, out_var):
    """Add query ``q``'s finished walk of one tree (its sums in slot ``z``) to the forest's."""
    m, v = _mixture_moments(shift, s1[z], s2acc[z])
    _add_tree_moments(q, m, v, c, out_mean, out_var)


@njit(cache=True, nogil=True, no_cfunc_wrapper=True)
def forest_moments_range(b0, b1, Xq, inode, fnode, box, stats, bp, meta, mode, s2, g1, g2,
                         out_mean, out_var, block, xbits, nbits):
    """:func:`predict_forest_moments` on blocks ``b0..b1-1`` of the batch's blocks of
    ``block`` queries.

    With ``xbits`` (one per query) and ``nbits`` (one per node, :func:`box_floor_bits`) the
    L1 distance to a box sums only the dimensions set in either: those where the query is off
    the floor and those where the box leaves the floor out (where most of a query's
    coordinates sit on the floor, the inactive coordinates of a conditional space, that is
    most of the work).  The other terms are exactly zero, so the numbers are the same; an
    empty ``xbits`` sums every dimension.

    Each block visits each tree's nodes once (depth first) with all the block's queries that
    reach the node, instead of walking each query down each tree: the same numbers, in the
    same order per query, as :func:`_tree_mixture`.  At a node: the L1 distances of its
    queries to the box, the branch-off components of the queries outside it (compacted
    first, so no unpredictable branch per query), then a branch-free split of the node's
    segment of ``perm`` into the children's.  Per-query walk state (``p_ns``, ``s1``,
    ``s2acc``) stays in the query's slot; only ``perm`` moves.
    """
    n = Xq.shape[0]
    B = max(1, min(block, n))
    T = inode.shape[0]
    depth_cap = inode.shape[1] + 1
    perm = np.empty(B, np.int64)
    spill = np.empty(B, np.int64)
    p_ns = np.empty(B, np.float64)
    s1 = np.empty(B, np.float64)
    s2acc = np.empty(B, np.float64)
    eta = np.empty(B, np.float64)
    outside = np.empty(B, np.int64)
    stack = np.empty((depth_cap, 3), np.int64)
    stack_tp = np.empty(depth_cap, np.float64)
    over_bits = xbits.shape[0] > 0
    for b in range(b0, b1):
        lo_q = b * B
        hi_q = min(n, lo_q + B)
        nb = hi_q - lo_q
        c = stats[0, meta[0, ROOT], 1]
        for q in range(lo_q, hi_q):
            out_mean[q] = 0.0
            out_var[q] = 0.0
        node_moments = mode == MODE_EMPIRICAL or mode == MODE_BP_F  # the same for every query
        for t in range(T):
            root = meta[t, ROOT]
            shift = stats[t, root, 1]
            for k in range(nb):
                perm[k] = lo_q + k
                p_ns[k] = 1.0
                s1[k] = 0.0
                s2acc[k] = 0.0
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
                if over_bits:
                    node_bits = nbits[t, j]
                    for k in range(lo, hi):
                        q = perm[k]
                        eta[k] = box_distance_over(box, t, j, Xq, q, xbits[q] | node_bits)
                else:
                    for k in range(lo, hi):
                        eta[k] = box_distance(box, t, j, Xq, perm[k])
                n_out = 0
                for k in range(lo, hi):
                    outside[n_out] = k
                    n_out += eta[k] > 0.0
                # with node moments one component serves all queries (those of
                # _branch_moments' empirical branch; zero weights add nothing), otherwise each
                # query has its own (p = 0 would leave the query's weight p_ns as it is)
                m = v = 0.0
                if node_moments:
                    m = stats[t, j, 1]
                    v = stats[t, j, 2] / stats[t, j, 0] + s2
                for o in range(n_out):
                    k = outside[o]
                    p = branch_off_probability_outside(delta, eta[k])
                    if node_moments or p > 0.0:
                        if not node_moments:
                            m, v = _branch_moments(mode, t, j, tp, tau, eta[k], delta, stats, bp,
                                                   s2, g1, g2)
                        _branch_off_query(perm[k] - lo_q, p, m, v, shift, p_ns, s1, s2acc)
                if inode[t, j, LEFT] < 0:  # the leaf's own component, then the tree is done
                    m, v = _leaf_moments(mode, t, j, stats, bp, s2)
                    for k in range(lo, hi):
                        q = perm[k]
                        z = q - lo_q
                        w = p_ns[z]
                        if w > 0.0:
                            s1[z], s2acc[z] = _add_moments(s1[z], s2acc[z], w, m, v, shift)
                        _finish_query(q, z, shift, s1, s2acc, c, out_mean, out_var)
                    continue
                feat = inode[t, j, FEAT]
                thresh = fnode[t, j, THRESH]
                n_left = 0
                n_right = 0
                for k in range(lo, hi):
                    q = perm[k]
                    z = q - lo_q
                    if p_ns[z] <= _MIN_PATH_WEIGHT:  # nothing left below: the walk stops here
                        _finish_query(q, z, shift, s1, s2acc, c, out_mean, out_var)
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
        _finish_forest_moments(lo_q, hi_q, T, c, out_mean, out_var)


def _n_blocks(n, block):
    B = max(1, min(block, n))
    return (n + B - 1) // B


def predict_forest_moments(Xq, inode, fnode, box, stats, bp, meta, mode, s2, g1, g2, out_mean,
                           out_var, block, xbits, nbits):
    """The forest predictive's mean and variance (the equal-weight mixture of the trees'
    mixtures: ``E = mean_t E_t``, ``Var = mean_t (Var_t + E_t^2) - E^2``) without per-tree
    output arrays: blocks of ``block`` queries split over the thread pool, each block meeting
    every node of a tree once (:func:`forest_moments_range`).  The numbers do not depend on
    ``block``; ``xbits``, ``nbits``: see :func:`forest_moments_range`."""
    ready(forest_moments_range)
    run_split(forest_moments_range, _n_blocks(Xq.shape[0], block), Xq, inode, fnode, box,
              stats, bp, meta, mode, s2, g1, g2, out_mean, out_var, block, xbits, nbits)


def predict_forest_moments_serial(Xq, inode, fnode, box, stats, bp, meta, mode, s2, g1, g2,
                                  out_mean, out_var, block, xbits, nbits):
    """:func:`predict_forest_moments` on the calling thread (small batches: no thread-pool
    wait)."""
    ready(forest_moments_range)
    forest_moments_range(0, _n_blocks(Xq.shape[0], block), Xq, inode, fnode, box, stats, bp,
                         meta, mode, s2, g1, g2, out_mean, out_var, block, xbits, nbits)


@njit(cache=True, nogil=True, no_cfunc_wrapper=True)
def predict_point_range(i0, i1, Xq, yq, want_logpdf, inode, fnode, box, stats, bp, meta, mode,
                        s2, g1, g2, out_mean, out_var, out_logpdf):
    """:func:`predict_regression` on queries ``i0..i1-1``."""
    for i in range(i0, i1):
        _predict_point(i, Xq, yq, want_logpdf, inode, fnode, box, stats, bp, meta, mode, s2,
                       g1, g2, out_mean, out_var, out_logpdf)


def predict_regression(Xq, yq, want_logpdf, inode, fnode, box, stats, bp, meta, mode, s2, g1,
                       g2, out_mean, out_var, out_logpdf):
    """Per-tree predictive mean / variance of the branch-off mixture (Section 3.3), the
    queries split over the thread pool.

    ``out_mean[i, t]``, ``out_var[i, t]``: moments of tree t's mixture at ``Xq[i]``.
    If ``want_logpdf``: ``out_logpdf[i]`` = log density of ``yq[i]`` under the forest mixture
    (the average of the trees' mixtures), accumulated with a streaming log-sum-exp; -inf
    where it is below float64's range (a target very many standard deviations away).
    """
    run_split(predict_point_range, Xq.shape[0], Xq, yq, want_logpdf, inode, fnode, box, stats,
              bp, meta, mode, s2, g1, g2, out_mean, out_var, out_logpdf)


def predict_regression_serial(Xq, yq, want_logpdf, inode, fnode, box, stats, bp, meta, mode,
                              s2, g1, g2, out_mean, out_var, out_logpdf):
    """:func:`predict_regression` on the calling thread: small batches (the local search of an
    acquisition maximiser) do not pay for starting, and waiting on, the thread pool."""
    predict_point_range(0, Xq.shape[0], Xq, yq, want_logpdf, inode, fnode, box, stats, bp, meta,
                        mode, s2, g1, g2, out_mean, out_var, out_logpdf)
