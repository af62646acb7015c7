"""Compiled kernels of the top-down particle filter for Bayesian decision trees
(Lakshminarayanan, Roy & Teh 2013; Lakshminarayanan 2016, chapter 3, Algorithm 3.1).

The particles of one filter ("island") are rows of flat arrays, ``(C, M)`` for per-node fields
and ``(C, N)`` for the data index permutation: node ``j`` of particle ``c`` owns the training
points ``idx[c, start[c, j]:end[c, j]]``, and a split partitions that range in place (points
with ``x <= threshold`` first), as scikit-learn's tree builder does.

Nodes are numbered in the order they are created.  Because eligible nodes are expanded oldest
first (breadth first, Section 3.3) and children are appended at the end, the FIFO queue of
eligible nodes ``E`` of the thesis is simply the node range ``head[c]:n_nodes[c]``; a layer
(all eligible nodes of one depth) is a contiguous run of it.

``feat`` encodes a node's state: ``UNEXPANDED`` (still in ``E``), ``LEAF`` (stopped) or the
split dimension of an internal node, whose children are ``left`` and ``left + 1``.

A node's labels enter only through sufficient statistics ``stats[c, j]``: the class counts
for classification (Dirichlet-multinomial leaves, (3.2)), ``(n, sum y, sum y^2)`` for
regression (normal leaves with their own mean and variance under a normal-inverse-gamma prior,
the "mean-variance shift" model of Chipman, George & McCulloch 1998), so the likelihood
factorises over leaves as (3.1) requires.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from .._core._rng_kernels import next_u64, open_unit_double, uniform
from ._prior_kernels import extents, split_probability

UNEXPANDED = -2
LEAF = -1

PROPOSAL_PRIOR = 0
PROPOSAL_EMPIRICAL = 1
PROPOSAL_OPTIMAL = 2

TASK_CLASSIFICATION = 0
TASK_REGRESSION = 1


def lgamma_tables(n_samples: int, n_classes: int, alpha: float):
    """``(lg_class, lg_total, const)`` with ``lg_class[c] = lgamma(c + alpha / K)`` and
    ``lg_total[n] = lgamma(n + alpha)`` for ``0 <= c, n <= n_samples``, and
    ``const = lgamma(alpha) - K lgamma(alpha / K)``: the pieces of the Dirichlet-multinomial
    log likelihood (3.2) as table look-ups."""
    from scipy.special import gammaln

    c = np.arange(n_samples + 1, dtype=np.float64)
    a = alpha / n_classes
    return gammaln(c + a), gammaln(c + alpha), float(gammaln(alpha) - n_classes * gammaln(a))


@njit(cache=True)
def log_dirmult(counts, lg_class, lg_total, const):
    """Log Dirichlet-multinomial likelihood (3.2) of the label ``counts`` of one node."""
    s = const
    n = 0
    for k in range(counts.shape[0]):
        s += lg_class[counts[k]]
        n += counts[k]
    return s - lg_total[n]


@njit(cache=True)
def node_loglik(stats, task, lg_class, lg_total, params):
    """Log marginal likelihood of one node's labels from their sufficient statistics.

    Classification: (3.2), ``params = [lgamma(alpha) - K lgamma(alpha / K)]``, counts looked
    up in the tables of :func:`lgamma_tables`.  Regression: ``y ~ N(mu, sigma^2)``, ``mu ~
    N(mu0, sigma^2 / kappa)``, ``sigma^2 ~ IG(nu / 2, nu lambda / 2)``, ``params = [kappa,
    mu0, nu, lambda]`` (Chipman, George & McCulloch 1998, the mean-variance shift model).
    """
    if task == TASK_CLASSIFICATION:
        s = params[0]
        n = 0
        for k in range(stats.shape[0]):
            c = int(stats[k])
            s += lg_class[c]
            n += c
        return s - lg_total[n]
    n = stats[0]
    if n <= 0.0:
        return 0.0
    kappa = params[0]
    mu0 = params[1]
    nu = params[2]
    lam = params[3]
    mean = stats[1] / n
    ss = max(stats[2] - n * mean * mean, 0.0)
    t = n * kappa / (n + kappa) * (mean - mu0) ** 2
    return (-0.5 * n * math.log(math.pi) + 0.5 * nu * math.log(nu * lam)
            + 0.5 * math.log(kappa / (n + kappa)) + math.lgamma(0.5 * (n + nu))
            - math.lgamma(0.5 * nu) - 0.5 * (n + nu) * math.log(ss + t + nu * lam))


@njit(cache=True, inline="always")
def _add_point(stats, task, p, y_code, y_val, sign):
    if task == TASK_CLASSIFICATION:
        stats[y_code[p]] += sign
    else:
        v = y_val[p]
        stats[0] += sign
        stats[1] += sign * v
        stats[2] += sign * v * v


@njit(cache=True)
def _logaddexp(a, b):
    if a == -np.inf:
        return b
    if b == -np.inf:
        return a
    if a > b:
        return a + math.log1p(math.exp(b - a))
    return b + math.log1p(math.exp(a - b))


@njit(cache=True)
def _partition(X, idx_row, s, e, d, xi, task, y_code, y_val, left_stats):
    """Move the points of ``idx_row[s:e]`` with ``X[:, d] <= xi`` to the front; return how
    many there are and add their labels to ``left_stats``."""
    i = s
    j = e - 1
    while True:
        while i <= j and X[idx_row[i], d] <= xi:
            _add_point(left_stats, task, idx_row[i], y_code, y_val, 1.0)
            i += 1
        while i <= j and X[idx_row[j], d] > xi:
            j -= 1
        if i >= j:
            break
        tmp = idx_row[i]
        idx_row[i] = idx_row[j]
        idx_row[j] = tmp
    return i - s


@njit(cache=True)
def _sorted_values(X, idx_row, s, e, d, vals):
    n = e - s
    for i in range(n):
        vals[i] = X[idx_row[s + i], d]
    vals[:n].sort()


@njit(cache=True)
def _expand_node(c, j, X, task, y_code, y_val, idx, n_nodes, start, end, depth, feat, thr,
                 left, stats, loglik, logw, alpha_s, beta_s, proposal, lik_scale, lg_class,
                 lg_total, params, state, t, lo, hi, dims, vals, order, terms, term_dim,
                 term_pos, cl, cr):
    """Stop or split node ``j`` of particle ``c`` with the chosen proposal and multiply the
    particle's weight by the incremental weight (3.7); ``lik_scale`` multiplies every log
    likelihood (0 samples the prior, 1 the posterior)."""
    D = X.shape[1]
    S = stats.shape[2]
    s = start[c, j]
    e = end[c, j]
    row = idx[c]
    # dimensions where the node's inputs vary (V_j) and their extents
    extents(X, row, s, e, lo, hi)
    n_dims = 0
    for d in range(D):
        if hi[d] > lo[d]:
            dims[n_dims] = d
            n_dims += 1
    if n_dims == 0:  # identical inputs: stopped with probability one under prior and proposals
        feat[c, j] = LEAF
        return
    p_split = split_probability(depth[c, j], alpha_s, beta_s)
    ll_parent = lik_scale * loglik[c, j]
    d_split = -1
    xi = 0.0
    log_correction = 0.0
    if proposal == PROPOSAL_OPTIMAL:
        # the one-step optimal proposal (Section 3.3.1): stop, or one of the intervals
        # between adjacent distinct values of one dimension, each with its exact mass
        log_stop = (math.log1p(-p_split) if p_split < 1.0 else -np.inf) + ll_parent
        log_z = log_stop
        n_terms = 0
        log_dim = math.log(p_split) - math.log(n_dims)
        n = e - s
        for q in range(n_dims):
            d = dims[q]
            for i in range(n):
                vals[i] = X[row[s + i], d]
            srt = np.argsort(vals[:n], kind="mergesort")
            for i in range(n):
                order[i] = row[s + srt[i]]
            for k in range(S):
                cl[k] = 0.0
                cr[k] = stats[c, j, k]
            log_ext = math.log(hi[d] - lo[d])
            for i in range(n - 1):
                a = order[i]
                _add_point(cl, task, a, y_code, y_val, 1.0)
                _add_point(cr, task, a, y_code, y_val, -1.0)
                v0 = X[a, d]
                v1 = X[order[i + 1], d]
                if v1 > v0:
                    term = (log_dim + math.log(v1 - v0) - log_ext
                            + lik_scale * (node_loglik(cl, task, lg_class, lg_total, params)
                                           + node_loglik(cr, task, lg_class, lg_total,
                                                         params)))
                    terms[n_terms] = term
                    term_dim[n_terms] = d
                    term_pos[n_terms] = v0
                    n_terms += 1
                    log_z = _logaddexp(log_z, term)
        logw[c] += log_z - ll_parent
        u = open_unit_double(next_u64(state, t))
        acc = math.exp(log_stop - log_z)
        if u < acc:
            feat[c, j] = LEAF
            return
        chosen = n_terms - 1
        for m in range(n_terms):
            acc += math.exp(terms[m] - log_z)
            if u < acc:
                chosen = m
                break
        d_split = term_dim[chosen]
        v0 = term_pos[chosen]
        # the next distinct value above v0 along d_split
        v1 = np.inf
        for i in range(s, e):
            v = X[row[i], d_split]
            if v0 < v < v1:
                v1 = v
        xi = v0 + uniform(state, t) * (v1 - v0)
        if not (v0 <= xi < v1):
            xi = v0
    else:
        if uniform(state, t) >= p_split:
            feat[c, j] = LEAF
            return
        d_split = dims[min(int(uniform(state, t) * n_dims), n_dims - 1)]
        if proposal == PROPOSAL_PRIOR:
            xi = lo[d_split] + uniform(state, t) * (hi[d_split] - lo[d_split])
            if not (lo[d_split] <= xi < hi[d_split]):
                xi = lo[d_split]
        else:
            # the empirical proposal (Section 3.3): a uniformly chosen pair of adjacent
            # distinct values, then uniform between them; weight corrected by prior/proposal
            _sorted_values(X, row, s, e, d_split, vals)
            n_distinct = 1
            for i in range(1, e - s):
                if vals[i] > vals[i - 1]:
                    order[n_distinct - 1] = i
                    n_distinct += 1
            g = min(int(uniform(state, t) * (n_distinct - 1)), n_distinct - 2)
            v1 = vals[order[g]]
            v0 = vals[order[g] - 1]
            xi = v0 + uniform(state, t) * (v1 - v0)
            if not (v0 <= xi < v1):
                xi = v0
            log_correction = (math.log(v1 - v0) + math.log(n_distinct - 1)
                              - math.log(hi[d_split] - lo[d_split]))
    # split: partition the node's points and append its two children
    for k in range(S):
        cl[k] = 0.0
    n_left = _partition(X, row, s, e, d_split, xi, task, y_code, y_val, cl)
    m = n_nodes[c]
    n_nodes[c] = m + 2
    feat[c, j] = d_split
    thr[c, j] = xi
    left[c, j] = m
    for k in range(S):
        stats[c, m, k] = cl[k]
        stats[c, m + 1, k] = stats[c, j, k] - cl[k]
    start[c, m] = s
    end[c, m] = s + n_left
    start[c, m + 1] = s + n_left
    end[c, m + 1] = e
    for q in (m, m + 1):
        depth[c, q] = depth[c, j] + 1
        feat[c, q] = UNEXPANDED
        left[c, q] = -1
        thr[c, q] = 0.0
        loglik[c, q] = node_loglik(stats[c, q], task, lg_class, lg_total, params)
    if proposal != PROPOSAL_OPTIMAL:
        logw[c] += lik_scale * (loglik[c, m] + loglik[c, m + 1]) - ll_parent + log_correction


@njit(cache=True)
def expand_stage(X, task, y_code, y_val, idx, n_nodes, head, start, end, depth, feat, thr,
                 left, stats, loglik, logw, alpha_s, beta_s, proposal, layerwise, lik_scale,
                 lg_class, lg_total, params, state, t, vals, order, terms, term_dim,
                 term_pos):
    """One stage of Algorithm 3.1 for every particle: each unfinished particle expands its
    oldest eligible node (node-wise) or all eligible nodes of the oldest one's depth
    (layer-wise).  The caller guarantees room for the new nodes.  Returns the number of
    particles with eligible nodes left."""
    D = X.shape[1]
    S = stats.shape[2]
    lo = np.empty(D)
    hi = np.empty(D)
    dims = np.empty(D, np.int64)
    cl = np.zeros(S)
    cr = np.zeros(S)
    C = n_nodes.shape[0]
    active = 0
    for c in range(C):
        if head[c] >= n_nodes[c]:
            continue
        layer = depth[c, head[c]]
        while head[c] < n_nodes[c]:
            j = head[c]
            if layerwise and depth[c, j] != layer:
                break
            _expand_node(c, j, X, task, y_code, y_val, idx, n_nodes, start, end, depth, feat,
                         thr, left, stats, loglik, logw, alpha_s, beta_s, proposal, lik_scale,
                         lg_class, lg_total, params, state, t, lo, hi, dims, vals, order,
                         terms, term_dim, term_pos, cl, cr)
            head[c] = j + 1
            if not layerwise:
                break
        if head[c] < n_nodes[c]:
            active += 1
    return active


@njit(cache=True)
def multinomial_resample(weights, state, t):
    """Ancestor indices of multinomial resampling (Algorithm 3.1, line 14) from normalised
    ``weights``: ``C`` sorted uniforms (via normalised exponential spacings) matched against
    the cumulative weights, O(C)."""
    C = weights.shape[0]
    spacing = np.empty(C + 1)
    total = 0.0
    for i in range(C + 1):
        total += -math.log(open_unit_double(next_u64(state, t)))
        spacing[i] = total
    out = np.empty(C, np.int64)
    cum = weights[0]
    k = 0
    for i in range(C):
        u = spacing[i] / total
        while u >= cum and k < C - 1:
            k += 1
            cum += weights[k]
        out[i] = k
    return out


@njit(cache=True)
def predict_proba_trees(X, feat, thr, left, value, roots, weights, out):
    """``out[i] = sum_p weights[p] * value[leaf_p(X[i])]`` over the flat trees whose roots are
    ``roots`` (children of an internal node ``j`` are ``left[j]`` and ``left[j] + 1``)."""
    n, K = out.shape
    for i in range(n):
        for k in range(K):
            out[i, k] = 0.0
        for p in range(roots.shape[0]):
            j = roots[p]
            while feat[j] >= 0:
                if X[i, feat[j]] <= thr[j]:
                    j = left[j]
                else:
                    j = left[j] + 1
            w = weights[p]
            for k in range(K):
                out[i, k] += w * value[j, k]


@njit(cache=True)
def tree_shape(feat, depth, n):
    """``(number of leaves, maximum leaf depth)`` of one particle's first ``n`` nodes."""
    leaves = 0
    deepest = 0
    for j in range(n):
        if feat[j] < 0:
            leaves += 1
            if depth[j] > deepest:
                deepest = depth[j]
    return leaves, deepest
