"""The observation-noise variance of the BP posterior chosen by the marginal likelihood
(type-II maximum likelihood, an empirical-Bayes alternative to the papers' heuristic)."""

from __future__ import annotations

import math

import numpy as np

from ._regression_kernels import (N_BP, bp_messages, bp_messages_serial,
                                  heuristic_hyperparameters)

#: the search runs over ``noise_var / Var(y)`` in ``[FRACTION_MIN, FRACTION_MAX]``, on a log
#: scale: a coarse grid of GRID_POINTS values, then Brent's bounded search between the best
#: grid point's neighbours (to ``XATOL`` in the log of the fraction)
FRACTION_MIN = 1e-4
FRACTION_MAX = 0.99
GRID_POINTS = 12
XATOL = 1e-3


def marginal_likelihood_hyperparameters(store, bp, n, mean, var, n_features, K_cap,
                                        gamma2_factor):
    """``(mu_H, gamma1, gamma2, sigma_y^2)`` of :func:`heuristic_hyperparameters` with the
    noise variance that maximises the trees' summed log marginal likelihood of the training
    targets (``gamma1 = 2 (Var(y) - sigma_y^2)`` follows it, as for a given ``noise_var``).
    ``bp``: a message array of the store's shape (see :func:`bp_buffer`), overwritten."""
    s = store
    logml = np.empty(s.n_trees)

    def hyper(log_fraction):
        return heuristic_hyperparameters(n, mean, var, n_features, K_cap, gamma2_factor,
                                         math.exp(log_fraction) * var)

    def negative_log_ml(log_fraction):
        mu, g1, g2, s2 = hyper(log_fraction)
        run_bp(s, bp, mu, g1, g2, s2, logml)
        return -float(logml.sum())

    lo, hi = math.log(FRACTION_MIN), math.log(FRACTION_MAX)
    grid = np.linspace(lo, hi, GRID_POINTS)
    values = [negative_log_ml(u) for u in grid]
    k = int(np.argmin(values))
    a, b = grid[max(k - 1, 0)], grid[min(k + 1, GRID_POINTS - 1)]
    from scipy.optimize import minimize_scalar

    found = minimize_scalar(negative_log_ml, bounds=(a, b), method="bounded",
                            options={"xatol": XATOL})
    best = found.x if found.fun <= values[k] else grid[k]
    return hyper(best)


def run_bp(store, bp, mu, g1, g2, s2, logml):
    """Exact BP (:func:`bp_messages`) on every tree of ``store`` with hyper-parameters
    ``(mu, g1, g2, s2)``, into ``bp`` and ``logml``; on the thread pool only for a large
    forest (:meth:`~surrogates._core.tree.TreeStore.use_threads`)."""
    kernel = bp_messages if store.use_threads() else bp_messages_serial
    kernel(store.inode, store.fnode, store.stats, store.meta, bp, mu, g1, g2, s2, logml)


def bp_buffer(store, bp=None):
    """``bp`` if it has the message array shape of ``store``'s trees, else a new zero array."""
    if bp is None or bp.shape[:2] != store.inode.shape[:2]:
        bp = np.zeros((store.n_trees, store.inode.shape[1], N_BP))
    return bp
