"""Compiled kernels of BART's Bayesian backfitting (Chipman, George & McCulloch 2010;
Lakshminarayanan, Roy & Teh 2015; Lakshminarayanan 2016, chapter 4).

Storage.  The ensemble's current trees are rows of flat ``(n_trees, capacity)`` arrays: ``left``
(the left child's index, ``-1`` at a leaf; the right child is always ``left + 1``, since
children are created and removed in pairs), ``feat``, ``thr`` (a point goes left when
``x[feat] <= thr``), ``parent``, ``depth``, ``mu`` (leaf value), and the node's training points
as a range ``[start, end)`` of the tree's permutation ``perm`` of the training rows: a split
partitions its node's range in place, so every node owns a contiguous range.  A tree over
``N`` points has at most ``2N - 1`` nodes, because every split must leave training points on
both sides.  Particles of the conditional SMC have the same layout, one row per particle.

Targets are on the scale where the training targets span ``[-0.5, 0.5]`` and the leaf prior is
``N(0, tau)``, ``tau = (0.5 / (k sqrt(M)))^2`` (Chipman et al. 2010, section 2.2).  The node
marginal likelihood (Lakshminarayanan 2016, eq. 4.9) is kept without the terms
``-n/2 log(2 pi sigma^2) - sum r^2 / (2 sigma^2)``, which are the same for every partition of
the data and cancel in every ratio the samplers use; with ``tau = 0`` it is identically 0, so
the samplers then draw trees from the prior.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from .._core._rng_kernels import next_u64, open_unit_double, unit_double
from ._prior_kernels import extents, split_probability

SAMPLER_PG = 0
SAMPLER_CGM = 1
SAMPLER_GROWPRUNE = 2

#: move probabilities of the Chipman, George & McCulloch sampler: grow, prune, change, swap
#: (Chipman, George & McCulloch 2010, section 3.1; 1998, section 3.1)
P_GROW, P_PRUNE, P_CHANGE = 0.25, 0.25, 0.40


# ------------------------------------------------------------------------------------------
# random numbers (one xoshiro256** stream, row 0 of ``state``)
# ------------------------------------------------------------------------------------------

@njit(cache=True)
def uniform01(state):
    return unit_double(next_u64(state, 0))


@njit(cache=True)
def open_uniform01(state):
    return open_unit_double(next_u64(state, 0))


@njit(cache=True)
def randint(state, n):
    """Uniform on ``0, ..., n - 1``."""
    k = int(uniform01(state) * n)
    return k if k < n else n - 1


@njit(cache=True)
def standard_normal(state):
    """Marsaglia's polar method (one of the pair is used, so draws stay a function of the
    stream position alone)."""
    while True:
        u = 2.0 * uniform01(state) - 1.0
        v = 2.0 * uniform01(state) - 1.0
        s = u * u + v * v
        if 0.0 < s < 1.0:
            return u * math.sqrt(-2.0 * math.log(s) / s)


@njit(cache=True)
def standard_gamma(state, shape):
    """Gamma(shape, 1) by Marsaglia & Tsang (2000); shapes below 1 by their boost
    ``G(a) = G(a + 1) U^(1/a)``."""
    boost = 1.0
    if shape < 1.0:
        boost = open_uniform01(state) ** (1.0 / shape)
        shape += 1.0
    d = shape - 1.0 / 3.0
    c = 1.0 / math.sqrt(9.0 * d)
    while True:
        x = standard_normal(state)
        v = 1.0 + c * x
        if v <= 0.0:
            continue
        v = v * v * v
        if math.log(open_uniform01(state)) < 0.5 * x * x + d - d * v + d * math.log(v):
            return d * v * boost


@njit(cache=True)
def categorical_log(state, logw, n):
    """An index in ``0..n-1`` drawn with probabilities proportional to ``exp(logw)``."""
    top = -np.inf
    for c in range(n):
        if logw[c] > top:
            top = logw[c]
    total = 0.0
    for c in range(n):
        total += math.exp(logw[c] - top)
    u = uniform01(state) * total
    acc = 0.0
    for c in range(n):
        acc += math.exp(logw[c] - top)
        if u < acc:
            return c
    return n - 1


# ------------------------------------------------------------------------------------------
# node statistics
# ------------------------------------------------------------------------------------------

@njit(cache=True)
def node_log_ml(n, s, sigma2, tau):
    """log p(R_node | sigma^2, 0, tau) up to partition-independent terms (eq. 4.9)."""
    return -0.5 * math.log1p(n * tau / sigma2) + 0.5 * s * s * tau / (sigma2 * (sigma2 + n * tau))


@njit(cache=True)
def range_sum(R, perm, start, end):
    s = 0.0
    for k in range(start, end):
        s += R[perm[k]]
    return s


@njit(cache=True)
def sample_rule(state, lo, hi, nvar):
    """A split drawn from the prior: a dimension uniform over the ``nvar`` varying ones, a
    location uniform on ``[lo, hi)`` of the node's data along it (both children non-empty)."""
    r = randint(state, nvar)
    feat = 0
    for d in range(lo.shape[0]):
        if hi[d] > lo[d]:
            if r == 0:
                feat = d
                break
            r -= 1
    thr = lo[feat] + uniform01(state) * (hi[feat] - lo[feat])
    if thr >= hi[feat]:  # rounding of u close to 1
        thr = lo[feat]
    return feat, thr


@njit(cache=True)
def random_varying_dim(X, perm, start, end, state, dims, lo, hi):
    """A dimension uniform over those along which the node's data varies, or -1 if there is
    none; its data range goes to ``lo[0]``, ``hi[0]``.  The dimensions are tried in a random
    order (a lazy Fisher-Yates shuffle): the first varying one is uniform over the varying
    ones, and a node with many points costs one pass over one dimension, not over all."""
    D = X.shape[1]
    for d in range(D):
        dims[d] = d
    for k in range(D):
        r = k + randint(state, D - k)
        d = dims[r]
        dims[r] = dims[k]
        dims[k] = d
        mn = np.inf
        mx = -np.inf
        for t in range(start, end):
            v = X[perm[t], d]
            if v < mn:
                mn = v
            if v > mx:
                mx = v
        if mx > mn:
            lo[0] = mn
            hi[0] = mx
            return d
    return -1


@njit(cache=True)
def log_rule_density(lo, hi, nvar, feat):
    return -math.log(nvar) - math.log(hi[feat] - lo[feat])


@njit(cache=True)
def partition(X, perm, start, end, feat, thr):
    """Reorder ``perm[start:end]`` so that the points with ``x[feat] <= thr`` come first;
    return the first index of the right part."""
    i = start
    j = end - 1
    while i <= j:
        if X[perm[i], feat] <= thr:
            i += 1
        else:
            t = perm[i]
            perm[i] = perm[j]
            perm[j] = t
            j -= 1
    return i


@njit(cache=True)
def leaf_can_split(X, perm, start, end, lo, hi):
    return end - start >= 2 and extents(X, perm, start, end, lo, hi) > 0


# ------------------------------------------------------------------------------------------
# particle Gibbs: conditional SMC (Lakshminarayanan 2016, algorithm 4.2)
# ------------------------------------------------------------------------------------------

@njit(cache=True)
def _copy_particle(src, dst, p_left, p_feat, p_thr, p_depth, p_start, p_end, p_ml, p_perm,
                   p_n, p_pop):
    n = p_n[src]
    for j in range(n):
        p_left[dst, j] = p_left[src, j]
        p_feat[dst, j] = p_feat[src, j]
        p_thr[dst, j] = p_thr[src, j]
        p_depth[dst, j] = p_depth[src, j]
        p_start[dst, j] = p_start[src, j]
        p_end[dst, j] = p_end[src, j]
        p_ml[dst, j] = p_ml[src, j]
    p_perm[dst, :] = p_perm[src, :]
    p_n[dst] = n
    p_pop[dst] = p_pop[src]


@njit(cache=True)
def pg_tree(m, X, R, sigma2, tau, alpha, beta, C, max_stages, state,
            t_left, t_feat, t_thr, t_parent, t_depth, t_start, t_end, t_n, perm,
            p_left, p_feat, p_thr, p_depth, p_start, p_end, p_ml, p_perm, p_n, p_pop, logw,
            bfs, offspring, lo, hi):
    """Replace tree ``m`` by a draw of the conditional SMC with ``C`` particles, particle 0
    clamped to the current tree.

    Each particle grows its tree from the root, expanding one node per stage in breadth-first
    (oldest first) order, with the prior as the proposal; a split multiplies the weight by the
    marginal-likelihood ratio of the children to the node (eq. 4.10).  After every stage the
    C - 1 free particles are resampled multinomially from all C (particle 0 keeps its path);
    when no particle has a node left to expand, the returned tree is drawn with probability
    proportional to the final weights, which is what returning particle C after a last
    resampling (algorithm 4.2) amounts to.
    """
    N = X.shape[0]
    dims = np.empty(X.shape[1], np.int64)
    # the current tree's nodes in breadth-first order: a particle creates its nodes in this
    # order, so node j of the clamped particle is node bfs[j] of the current tree
    bfs[0] = 0
    head = 0
    tail = 1
    while head < tail:
        j = bfs[head]
        head += 1
        if t_left[m, j] >= 0:
            bfs[tail] = t_left[m, j]
            bfs[tail + 1] = t_left[m, j] + 1
            tail += 2
    root_ml = node_log_ml(N, range_sum(R, perm[m], 0, N), sigma2, tau)
    for c in range(C):
        p_n[c] = 1
        p_pop[c] = 0
        p_left[c, 0] = -1
        p_depth[c, 0] = 0
        p_start[c, 0] = 0
        p_end[c, 0] = N
        p_ml[c, 0] = root_ml
        p_perm[c, :] = perm[m, :]
        logw[c] = 0.0
    for _stage in range(max_stages):
        for c in range(C):
            if p_pop[c] >= p_n[c]:
                continue
            j = p_pop[c]
            p_pop[c] += 1
            a = p_start[c, j]
            b = p_end[c, j]
            if c == 0:
                old = bfs[j]
                if t_left[m, old] < 0:
                    continue
                f = t_feat[m, old]
                th = t_thr[m, old]
            else:
                # split with probability p if the node has a valid split (else stop): the coin
                # comes first, so that a stopped node costs nothing
                if b - a < 2 or uniform01(state) >= split_probability(p_depth[c, j], alpha,
                                                                      beta):
                    continue
                f = random_varying_dim(X, p_perm[c], a, b, state, dims, lo, hi)
                if f < 0:
                    continue
                th = lo[0] + uniform01(state) * (hi[0] - lo[0])
                if th >= hi[0]:  # rounding of u close to 1
                    th = lo[0]
            mid = partition(X, p_perm[c], a, b, f, th)
            k = p_n[c]
            p_left[c, j] = k
            p_feat[c, j] = f
            p_thr[c, j] = th
            d = p_depth[c, j] + 1
            ml_l = node_log_ml(mid - a, range_sum(R, p_perm[c], a, mid), sigma2, tau)
            ml_r = node_log_ml(b - mid, range_sum(R, p_perm[c], mid, b), sigma2, tau)
            p_left[c, k] = -1
            p_depth[c, k] = d
            p_start[c, k] = a
            p_end[c, k] = mid
            p_ml[c, k] = ml_l
            p_left[c, k + 1] = -1
            p_depth[c, k + 1] = d
            p_start[c, k + 1] = mid
            p_end[c, k + 1] = b
            p_ml[c, k + 1] = ml_r
            p_n[c] = k + 2
            logw[c] += ml_l + ml_r - p_ml[c, j]
        active = False
        for c in range(C):
            if p_pop[c] < p_n[c]:
                active = True
        if not active:
            break
        # multinomial resampling of particles 1..C-1 from all C; the population is rebuilt in
        # place: a particle drawn at least once keeps its slot, the further copies go to the
        # slots of the particles drawn never (particles other than 0 are exchangeable)
        for c in range(C):
            offspring[c] = 0
        offspring[0] = 1
        for c in range(1, C):
            offspring[categorical_log(state, logw, C)] += 1
        free = 1
        for c in range(C):
            extra = offspring[c] - 1
            while extra > 0:
                while offspring[free] != 0:
                    free += 1
                _copy_particle(c, free, p_left, p_feat, p_thr, p_depth, p_start, p_end, p_ml,
                               p_perm, p_n, p_pop)
                offspring[free] = -1  # taken
                extra -= 1
        for c in range(C):
            logw[c] = 0.0
    k = categorical_log(state, logw, C)
    n = p_n[k]
    t_n[m] = n
    t_parent[m, 0] = -1
    for j in range(n):
        t_left[m, j] = p_left[k, j]
        t_feat[m, j] = p_feat[k, j]
        t_thr[m, j] = p_thr[k, j]
        t_depth[m, j] = p_depth[k, j]
        t_start[m, j] = p_start[k, j]
        t_end[m, j] = p_end[k, j]
    for j in range(n):
        if t_left[m, j] >= 0:
            t_parent[m, t_left[m, j]] = j
            t_parent[m, t_left[m, j] + 1] = j
    perm[m, :] = p_perm[k, :]
    return k != 0


# ------------------------------------------------------------------------------------------
# Metropolis-Hastings moves: grow, prune (GrowPrune; Pratola et al. 2013) and change, swap
# (CGM; Chipman, George & McCulloch 1998)
# ------------------------------------------------------------------------------------------

@njit(cache=True)
def eval_subtree(j, m, X, R, perm, st, en, t_left, t_feat, t_thr, t_depth, sigma2, tau,
                 alpha, beta, stack, lo, hi):
    """Route the points of node ``j`` (``perm[st[j]:en[j]]``) down its subtree with the
    subtree's rules, writing the descendants' ranges into ``st``/``en``.  Returns whether every
    split leaves points on both sides and inside its node's data range (else the tree has prior
    density 0), the log prior density of the subtree's nodes (eq. 4.4) and the sum of its
    leaves' log marginal likelihoods."""
    lp = 0.0
    lml = 0.0
    top = 0
    stack[0] = j
    top = 1
    while top > 0:
        top -= 1
        k = stack[top]
        a = st[k]
        b = en[k]
        nvar = extents(X, perm, a, b, lo, hi) if b - a >= 2 else 0
        p = split_probability(t_depth[m, k], alpha, beta)
        l = t_left[m, k]
        if l >= 0:
            f = t_feat[m, k]
            th = t_thr[m, k]
            if nvar == 0 or th < lo[f] or th >= hi[f]:
                return False, 0.0, 0.0
            lp += math.log(p) + log_rule_density(lo, hi, nvar, f)
            mid = partition(X, perm, a, b, f, th)
            st[l] = a
            en[l] = mid
            st[l + 1] = mid
            en[l + 1] = b
            stack[top] = l
            stack[top + 1] = l + 1
            top += 2
        else:
            if nvar > 0:
                lp += math.log1p(-p)
            lml += node_log_ml(b - a, range_sum(R, perm, a, b), sigma2, tau)
    return True, lp, lml


@njit(cache=True)
def _count_nodes(m, t_left, t_n):
    """(leaves, internal nodes, internal nodes whose children are both leaves)."""
    n_leaf = 0
    n_nog = 0
    for j in range(t_n[m]):
        l = t_left[m, j]
        if l < 0:
            n_leaf += 1
        elif t_left[m, l] < 0 and t_left[m, l + 1] < 0:
            n_nog += 1
    return n_leaf, t_n[m] - n_leaf, n_nog


@njit(cache=True)
def _grow_prune_log_prior(X, perm, d, a, mid, b, alpha, beta, lo, hi):
    """log of p(split at the node) / p(node is a leaf) with the rule density left out (it
    cancels against the grow proposal's), for a splittable node at depth ``d`` whose children
    hold ``[a, mid)`` and ``[mid, b)``."""
    p = split_probability(d, alpha, beta)
    pc = split_probability(d + 1, alpha, beta)
    lp = math.log(p) - math.log1p(-p)
    if leaf_can_split(X, perm, a, mid, lo, hi):
        lp += math.log1p(-pc)
    if leaf_can_split(X, perm, mid, b, lo, hi):
        lp += math.log1p(-pc)
    return lp


@njit(cache=True)
def _grow(m, X, R, sigma2, tau, alpha, beta, state, p_grow, p_prune,
          t_left, t_feat, t_thr, t_parent, t_depth, t_start, t_end, t_n, perm, lo, hi):
    n_leaf, _n_int, n_nog = _count_nodes(m, t_left, t_n)
    r = randint(state, n_leaf)
    j = 0
    for k in range(t_n[m]):
        if t_left[m, k] < 0:
            if r == 0:
                j = k
                break
            r -= 1
    a = t_start[m, j]
    b = t_end[m, j]
    if b - a < 2:
        return False
    nvar = extents(X, perm[m], a, b, lo, hi)
    if nvar == 0:
        return False
    f, th = sample_rule(state, lo, hi, nvar)
    # reordering a leaf's own range is harmless if the move is rejected
    mid = partition(X, perm[m], a, b, f, th)
    d = t_depth[m, j]
    log_acc = _grow_prune_log_prior(X, perm[m], d, a, mid, b, alpha, beta, lo, hi)
    log_acc += (node_log_ml(mid - a, range_sum(R, perm[m], a, mid), sigma2, tau)
                + node_log_ml(b - mid, range_sum(R, perm[m], mid, b), sigma2, tau)
                - node_log_ml(b - a, range_sum(R, perm[m], a, b), sigma2, tau))
    pa = t_parent[m, j]
    nog_new = n_nog + 1
    if pa >= 0:
        sib = t_left[m, pa] if t_left[m, pa] != j else t_left[m, pa] + 1
        if t_left[m, sib] < 0:
            nog_new -= 1  # the parent had two leaf children and now has not
    log_acc += math.log(p_prune / nog_new) - math.log(p_grow / n_leaf)
    if math.log(open_uniform01(state)) >= log_acc:
        return False
    k = t_n[m]
    t_left[m, j] = k
    t_feat[m, j] = f
    t_thr[m, j] = th
    t_left[m, k] = -1
    t_parent[m, k] = j
    t_depth[m, k] = d + 1
    t_start[m, k] = a
    t_end[m, k] = mid
    t_left[m, k + 1] = -1
    t_parent[m, k + 1] = j
    t_depth[m, k + 1] = d + 1
    t_start[m, k + 1] = mid
    t_end[m, k + 1] = b
    t_n[m] = k + 2
    return True


@njit(cache=True)
def _move_node(m, src, dst, t_left, t_feat, t_thr, t_parent, t_depth, t_start, t_end):
    t_left[m, dst] = t_left[m, src]
    t_feat[m, dst] = t_feat[m, src]
    t_thr[m, dst] = t_thr[m, src]
    t_parent[m, dst] = t_parent[m, src]
    t_depth[m, dst] = t_depth[m, src]
    t_start[m, dst] = t_start[m, src]
    t_end[m, dst] = t_end[m, src]
    l = t_left[m, dst]
    if l >= 0:
        t_parent[m, l] = dst
        t_parent[m, l + 1] = dst


@njit(cache=True)
def _prune(m, X, R, sigma2, tau, alpha, beta, state, p_grow, p_prune,
           t_left, t_feat, t_thr, t_parent, t_depth, t_start, t_end, t_n, perm, lo, hi):
    n_leaf, _n_int, n_nog = _count_nodes(m, t_left, t_n)
    if n_nog == 0:
        return False
    r = randint(state, n_nog)
    j = 0
    for k in range(t_n[m]):
        l = t_left[m, k]
        if l >= 0 and t_left[m, l] < 0 and t_left[m, l + 1] < 0:
            if r == 0:
                j = k
                break
            r -= 1
    l = t_left[m, j]
    a = t_start[m, j]
    mid = t_end[m, l]
    b = t_end[m, j]
    d = t_depth[m, j]
    log_acc = -_grow_prune_log_prior(X, perm[m], d, a, mid, b, alpha, beta, lo, hi)
    log_acc -= (node_log_ml(mid - a, range_sum(R, perm[m], a, mid), sigma2, tau)
                + node_log_ml(b - mid, range_sum(R, perm[m], mid, b), sigma2, tau)
                - node_log_ml(b - a, range_sum(R, perm[m], a, b), sigma2, tau))
    log_acc += math.log(p_grow / (n_leaf - 1)) - math.log(p_prune / n_nog)
    if math.log(open_uniform01(state)) >= log_acc:
        return False
    t_left[m, j] = -1
    last = t_n[m] - 2
    if l != last:  # keep the nodes packed: the last pair (two siblings) fills the hole
        pa = t_parent[m, last]
        t_left[m, pa] = l
        _move_node(m, last, l, t_left, t_feat, t_thr, t_parent, t_depth, t_start, t_end)
        _move_node(m, last + 1, l + 1, t_left, t_feat, t_thr, t_parent, t_depth, t_start,
                   t_end)
    t_n[m] = last
    return True


@njit(cache=True)
def _pick_internal(m, t_left, t_parent, t_n, state, need_internal_parent):
    """A uniformly chosen internal node (with ``need_internal_parent``: a non-root one, whose
    parent is then internal too), or -1 if there is none."""
    count = 0
    for k in range(t_n[m]):
        if t_left[m, k] >= 0 and (not need_internal_parent or k != 0):
            count += 1
    if count == 0:
        return -1
    r = randint(state, count)
    for k in range(t_n[m]):
        if t_left[m, k] >= 0 and (not need_internal_parent or k != 0):
            if r == 0:
                return k
            r -= 1
    return -1


@njit(cache=True)
def _rewire(j, m, X, R, sigma2, tau, alpha, beta, state, log_q, t_left, t_feat, t_thr,
            t_depth, t_start, t_end, perm, s_perm, s_start, s_end, stack, lo, hi,
            old_lp, old_lml):
    """Accept or reject new rules already written into the subtree of ``j``: routes the
    points on scratch copies, and on acceptance copies the new ranges back."""
    a = t_start[m, j]
    b = t_end[m, j]
    for k in range(a, b):
        s_perm[k] = perm[m, k]
    s_start[j] = a
    s_end[j] = b
    ok, lp, lml = eval_subtree(j, m, X, R, s_perm, s_start, s_end, t_left, t_feat, t_thr,
                               t_depth, sigma2, tau, alpha, beta, stack, lo, hi)
    if not ok:
        return False
    log_acc = lp - old_lp + lml - old_lml + log_q
    if math.log(open_uniform01(state)) >= log_acc:
        return False
    for k in range(a, b):
        perm[m, k] = s_perm[k]
    # copy the new ranges of the subtree's nodes
    stack[0] = j
    top = 1
    while top > 0:
        top -= 1
        k = stack[top]
        t_start[m, k] = s_start[k]
        t_end[m, k] = s_end[k]
        l = t_left[m, k]
        if l >= 0:
            stack[top] = l
            stack[top + 1] = l + 1
            top += 2
    return True


@njit(cache=True)
def _change(m, X, R, sigma2, tau, alpha, beta, state,
            t_left, t_feat, t_thr, t_parent, t_depth, t_start, t_end, t_n, perm,
            s_perm, s_start, s_end, stack, lo, hi):
    """Draw a new rule for a uniformly chosen internal node from the prior at that node."""
    j = _pick_internal(m, t_left, t_parent, t_n, state, False)
    if j < 0:
        return False
    ok, old_lp, old_lml = eval_subtree(j, m, X, R, perm[m], t_start[m], t_end[m], t_left,
                                       t_feat, t_thr, t_depth, sigma2, tau, alpha, beta,
                                       stack, lo, hi)
    nvar = extents(X, perm[m], t_start[m, j], t_end[m, j], lo, hi)
    f0 = t_feat[m, j]
    th0 = t_thr[m, j]
    log_q = log_rule_density(lo, hi, nvar, f0)
    f1, th1 = sample_rule(state, lo, hi, nvar)
    log_q -= log_rule_density(lo, hi, nvar, f1)
    t_feat[m, j] = f1
    t_thr[m, j] = th1
    if _rewire(j, m, X, R, sigma2, tau, alpha, beta, state, log_q, t_left, t_feat, t_thr,
               t_depth, t_start, t_end, perm, s_perm, s_start, s_end, stack, lo, hi,
               old_lp, old_lml):
        return True
    t_feat[m, j] = f0
    t_thr[m, j] = th0
    return False


@njit(cache=True)
def _swap(m, X, R, sigma2, tau, alpha, beta, state,
          t_left, t_feat, t_thr, t_parent, t_depth, t_start, t_end, t_n, perm,
          s_perm, s_start, s_end, stack, lo, hi):
    """Swap the rules of a uniformly chosen parent-child pair of internal nodes.  The number
    of such pairs is the same before and after, so the proposal is symmetric."""
    c = _pick_internal(m, t_left, t_parent, t_n, state, True)
    if c < 0:
        return False
    j = t_parent[m, c]
    ok, old_lp, old_lml = eval_subtree(j, m, X, R, perm[m], t_start[m], t_end[m], t_left,
                                       t_feat, t_thr, t_depth, sigma2, tau, alpha, beta,
                                       stack, lo, hi)
    fj = t_feat[m, j]
    tj = t_thr[m, j]
    t_feat[m, j] = t_feat[m, c]
    t_thr[m, j] = t_thr[m, c]
    t_feat[m, c] = fj
    t_thr[m, c] = tj
    if _rewire(j, m, X, R, sigma2, tau, alpha, beta, state, 0.0, t_left, t_feat, t_thr,
               t_depth, t_start, t_end, perm, s_perm, s_start, s_end, stack, lo, hi,
               old_lp, old_lml):
        return True
    t_feat[m, c] = t_feat[m, j]
    t_thr[m, c] = t_thr[m, j]
    t_feat[m, j] = fj
    t_thr[m, j] = tj
    return False


@njit(cache=True)
def mh_tree(m, kind, X, R, sigma2, tau, alpha, beta, state,
            t_left, t_feat, t_thr, t_parent, t_depth, t_start, t_end, t_n, perm,
            s_perm, s_start, s_end, stack, lo, hi):
    """One Metropolis-Hastings move on tree ``m``: grow or prune with probability 1/2 each
    (GrowPrune), or grow, prune, change, swap with probabilities 0.25, 0.25, 0.4, 0.1 (CGM).
    A move that is impossible in the current tree (pruning the root, growing a leaf without a
    valid split) leaves the tree as it is."""
    if kind == SAMPLER_GROWPRUNE:
        p_grow = 0.5
        p_prune = 0.5
        p_change = 0.0
    else:
        p_grow = P_GROW
        p_prune = P_PRUNE
        p_change = P_CHANGE
    u = uniform01(state)
    if u < p_grow:
        return _grow(m, X, R, sigma2, tau, alpha, beta, state, p_grow, p_prune,
                     t_left, t_feat, t_thr, t_parent, t_depth, t_start, t_end, t_n, perm,
                     lo, hi)
    if u < p_grow + p_prune:
        return _prune(m, X, R, sigma2, tau, alpha, beta, state, p_grow, p_prune,
                      t_left, t_feat, t_thr, t_parent, t_depth, t_start, t_end, t_n, perm,
                      lo, hi)
    if u < p_grow + p_prune + p_change:
        return _change(m, X, R, sigma2, tau, alpha, beta, state,
                       t_left, t_feat, t_thr, t_parent, t_depth, t_start, t_end, t_n, perm,
                       s_perm, s_start, s_end, stack, lo, hi)
    return _swap(m, X, R, sigma2, tau, alpha, beta, state,
                 t_left, t_feat, t_thr, t_parent, t_depth, t_start, t_end, t_n, perm,
                 s_perm, s_start, s_end, stack, lo, hi)


# ------------------------------------------------------------------------------------------
# conjugate updates and the backfitting sweep (algorithm 4.1)
# ------------------------------------------------------------------------------------------

@njit(cache=True)
def sample_leaves(m, R, sigma2, tau, state, t_left, t_start, t_end, t_n, t_mu, perm, F):
    """Draw every leaf value of tree ``m`` from its Gaussian conditional given the residual
    (prior N(0, tau), likelihood N(r | mu, sigma^2)) and write the tree's fit ``F[m]``."""
    for j in range(t_n[m]):
        if t_left[m, j] >= 0:
            continue
        a = t_start[m, j]
        b = t_end[m, j]
        if tau > 0.0:
            prec = (b - a) / sigma2 + 1.0 / tau
            mean = range_sum(R, perm[m], a, b) / sigma2 / prec
            mu = mean + standard_normal(state) / math.sqrt(prec)
        else:
            mu = 0.0
        t_mu[m, j] = mu
        for k in range(a, b):
            F[m, perm[m, k]] = mu


@njit(cache=True)
def sample_sigma2(y, Fsum, nu, lam, state):
    """sigma^2 from its inverse-gamma conditional ``IG((nu + N)/2, (nu lam + SSE)/2)`` (the
    prior ``nu lam / chi^2_nu`` of Chipman et al. 2010)."""
    sse = 0.0
    for i in range(y.shape[0]):
        e = y[i] - Fsum[i]
        sse += e * e
    return 0.5 * (nu * lam + sse) / standard_gamma(state, 0.5 * (nu + y.shape[0]))


@njit(cache=True)
def gaussian_loglik(y, Fsum, sigma2):
    sse = 0.0
    for i in range(y.shape[0]):
        e = y[i] - Fsum[i]
        sse += e * e
    return -0.5 * y.shape[0] * math.log(2.0 * math.pi * sigma2) - 0.5 * sse / sigma2


@njit(cache=True)
def run_sweeps(n_sweeps, kind, X, y, sigma2, update_sigma2, nu, lam, tau, alpha, beta, C,
               max_stages, state,
               t_left, t_feat, t_thr, t_parent, t_depth, t_start, t_end, t_n, t_mu, perm, F,
               Fsum, R, p_left, p_feat, p_thr, p_depth, p_start, p_end, p_ml, p_perm, p_n,
               p_pop, logw, bfs, offspring, s_perm, s_start, s_end, stack, lo, hi,
               tr_loglik, tr_sigma2, tr_leaves, tr_accept, tr_pos):
    """``n_sweeps`` sweeps of Bayesian backfitting: sigma^2 given all trees, then for every
    tree its residual, a new tree structure (PG, CGM or GrowPrune, leaf values integrated
    out) and its leaf values.  Writes the log-likelihood, sigma^2, mean leaves per tree and
    the fraction of tree updates that changed the tree at ``tr_pos, tr_pos + 1, ...``;
    returns sigma^2."""
    M = t_n.shape[0]
    N = y.shape[0]
    for it in range(n_sweeps):
        for i in range(N):
            s = 0.0
            for m in range(M):
                s += F[m, i]
            Fsum[i] = s
        if update_sigma2:
            sigma2 = sample_sigma2(y, Fsum, nu, lam, state)
        accepted = 0
        for m in range(M):
            for i in range(N):
                R[i] = y[i] - Fsum[i] + F[m, i]
            if kind == SAMPLER_PG:
                changed = pg_tree(m, X, R, sigma2, tau, alpha, beta, C, max_stages, state,
                                  t_left, t_feat, t_thr, t_parent, t_depth, t_start, t_end,
                                  t_n, perm, p_left, p_feat, p_thr, p_depth, p_start, p_end,
                                  p_ml, p_perm, p_n, p_pop, logw, bfs, offspring, lo, hi)
            else:
                changed = mh_tree(m, kind, X, R, sigma2, tau, alpha, beta, state,
                                  t_left, t_feat, t_thr, t_parent, t_depth, t_start, t_end,
                                  t_n, perm, s_perm, s_start, s_end, stack, lo, hi)
            if changed:
                accepted += 1
            sample_leaves(m, R, sigma2, tau, state, t_left, t_start, t_end, t_n, t_mu, perm, F)
            for i in range(N):
                Fsum[i] = y[i] - R[i] + F[m, i]
        leaves = 0
        for m in range(M):
            leaves += (t_n[m] + 1) // 2
        p = tr_pos + it
        tr_loglik[p] = gaussian_loglik(y, Fsum, sigma2)
        tr_sigma2[p] = sigma2
        tr_leaves[p] = leaves / M
        tr_accept[p] = accepted / M
    return sigma2


@njit(cache=True)
def init_trees(state, tau, N, t_left, t_parent, t_depth, t_start, t_end, t_n, t_mu, perm, F):
    """Every tree a root over all points with its value drawn from the leaf prior."""
    M = t_n.shape[0]
    for m in range(M):
        t_n[m] = 1
        t_left[m, 0] = -1
        t_parent[m, 0] = -1
        t_depth[m, 0] = 0
        t_start[m, 0] = 0
        t_end[m, 0] = N
        mu = math.sqrt(tau) * standard_normal(state)
        t_mu[m, 0] = mu
        for i in range(N):
            perm[m, i] = i
            F[m, i] = mu


# ------------------------------------------------------------------------------------------
# stored posterior draws and prediction
# ------------------------------------------------------------------------------------------

@njit(cache=True)
def pack_trees(t_left, t_feat, t_thr, t_mu, t_n, o_left, o_feat, o_thr, o_mu, offsets, pos,
               first):
    """Append all trees (children relative to the tree's first node) at ``pos``; the start
    of tree ``m`` goes to ``offsets[first + m]``.  Returns the new end."""
    M = t_n.shape[0]
    for m in range(M):
        offsets[first + m] = pos
        for j in range(t_n[m]):
            o_left[pos + j] = t_left[m, j]
            o_feat[pos + j] = t_feat[m, j] if t_left[m, j] >= 0 else 0
            o_thr[pos + j] = t_thr[m, j] if t_left[m, j] >= 0 else 0.0
            o_mu[pos + j] = t_mu[m, j] if t_left[m, j] < 0 else 0.0
        pos += t_n[m]
    return pos


@njit(cache=True)
def predict_draws(X, o_left, o_feat, o_thr, o_mu, offsets, n_draws, M, out):
    """``out[s, i]``: the sum of draw ``s``'s trees at ``X[i]``."""
    n = X.shape[0]
    for s in range(n_draws):
        for i in range(n):
            out[s, i] = 0.0
        for m in range(M):
            off = offsets[s * M + m]
            for i in range(n):
                j = 0
                while o_left[off + j] >= 0:
                    j = o_left[off + j] + (1 if X[i, o_feat[off + j]] > o_thr[off + j] else 0)
                out[s, i] += o_mu[off + j]


# ------------------------------------------------------------------------------------------
# the state of one chain (plain arrays, so that it pickles and copies exactly)
# ------------------------------------------------------------------------------------------

class Chain:
    """The trees, fits, workspaces and random stream of one backfitting chain over ``X``,
    ``y`` (targets already on the model's scale).

    Parameters are those of :func:`run_sweeps`; ``sigma2`` is the starting (or, with
    ``update_sigma2=False``, fixed) noise variance.
    """

    def __init__(self, X, y, n_trees, kind, tau, alpha, beta, nu, lam, sigma2, n_particles,
                 max_stages, state, update_sigma2=True):
        X = np.ascontiguousarray(X, dtype=np.float64)
        y = np.ascontiguousarray(y, dtype=np.float64)
        N, D = X.shape
        M = int(n_trees)
        cap = 2 * N - 1
        C = int(n_particles) if kind == SAMPLER_PG else 1
        self.X, self.y = X, y
        self.kind, self.tau, self.alpha, self.beta = int(kind), float(tau), float(alpha), \
            float(beta)
        self.nu, self.lam, self.sigma2 = float(nu), float(lam), float(sigma2)
        self.update_sigma2 = bool(update_sigma2)
        self.C, self.max_stages, self.state = C, int(max_stages), state
        i8 = np.int64
        self.trees = [np.zeros((M, cap), i8), np.zeros((M, cap), i8), np.zeros((M, cap)),
                      np.zeros((M, cap), i8), np.zeros((M, cap), i8), np.zeros((M, cap), i8),
                      np.zeros((M, cap), i8), np.zeros(M, i8), np.zeros((M, cap)),
                      np.zeros((M, N), i8)]
        self.F = np.zeros((M, N))
        self.Fsum = np.zeros(N)
        self.R = np.zeros(N)
        pc = C if kind == SAMPLER_PG else 1
        pcap = cap if kind == SAMPLER_PG else 1
        pn = N if kind == SAMPLER_PG else 1
        self.particles = [np.zeros((pc, pcap), i8), np.zeros((pc, pcap), i8),
                          np.zeros((pc, pcap)), np.zeros((pc, pcap), i8),
                          np.zeros((pc, pcap), i8), np.zeros((pc, pcap), i8),
                          np.zeros((pc, pcap)), np.zeros((pc, pn), i8), np.zeros(pc, i8),
                          np.zeros(pc, i8), np.zeros(pc), np.zeros(cap, i8), np.zeros(pc, i8)]
        mh = kind != SAMPLER_PG
        self.scratch = [np.zeros(N if mh else 1, i8), np.zeros(cap if mh else 1, i8),
                        np.zeros(cap if mh else 1, i8), np.zeros(cap + 2, i8),
                        np.zeros(D), np.zeros(D)]
        left, feat, thr, parent, depth, start, end, n, mu, perm = self.trees
        init_trees(state, self.tau, N, left, parent, depth, start, end, n, mu, perm, self.F)

    @property
    def n_trees(self):
        return self.F.shape[0]

    def run(self, n_sweeps, loglik, sigma2, leaves, accept, pos):
        """Run ``n_sweeps`` sweeps, writing their traces from index ``pos``."""
        left, feat, thr, parent, depth, start, end, n, mu, perm = self.trees
        self.sigma2 = run_sweeps(
            int(n_sweeps), self.kind, self.X, self.y, self.sigma2, self.update_sigma2, self.nu,
            self.lam, self.tau, self.alpha, self.beta, self.C, self.max_stages, self.state,
            left, feat, thr, parent, depth, start, end, n, mu, perm, self.F, self.Fsum, self.R,
            *self.particles[:11], self.particles[11], self.particles[12], *self.scratch,
            loglik, sigma2, leaves, accept, int(pos))
        return self.sigma2

    def n_leaves(self):
        return (self.trees[7] + 1) // 2

    def pack(self, o_left, o_feat, o_thr, o_mu, offsets, pos, first):
        left, feat, thr, parent, depth, start, end, n, mu, perm = self.trees
        return pack_trees(left, feat, thr, mu, n, o_left, o_feat, o_thr, o_mu, offsets, pos,
                          first)
