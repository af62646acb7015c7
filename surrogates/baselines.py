"""Baselines for the Mondrian kernel (spec mondrian_kernel.md §1.15): exact Laplace kernel ridge
regression, random Fourier features and random binning for the Laplace kernel
``k(x, x') = exp(-lifetime * |x - x'|_1)``, and the width-search protocol of [P] §8.2.
"""

from __future__ import annotations

import math
import time
from typing import Callable

import numpy as np
import scipy.linalg
import scipy.sparse as sp
from scipy.spatial.distance import cdist
from sklearn.base import BaseEstimator, RegressorMixin, TransformerMixin
from sklearn.utils.validation import check_is_fitted

from ._validation import (check_int, check_positive, check_target, check_X, feature_names,
                          seed_sequence, set_feature_names)
from .kernel import _check_seed, _resolve_delta2

__all__ = ["laplace_kernel", "LaplaceKernelRidge", "RandomFourierFeatures",
           "RandomBinningFeatures", "select_width"]


def _lifetimes(lifetime, n_features: int) -> np.ndarray | float:
    """A positive scalar, or one positive lifetime per feature (general Laplace kernel)."""
    lam = np.asarray(lifetime, dtype=np.float64)
    if lam.ndim == 0:
        return check_positive(float(lam), "lifetime")
    if lam.shape != (n_features,) or not np.all(np.isfinite(lam)) or np.any(lam < 0):
        raise ValueError(f"lifetime must be a positive number or {n_features} non-negative "
                         f"finite numbers, got shape {lam.shape}.")
    return lam


def laplace_kernel(X, Y=None, lifetime=1.0) -> np.ndarray:
    """``exp(-lifetime * |x - y|_1)``; ``lifetime`` may be a vector (one per feature), giving
    ``exp(-sum_d lifetime_d |x_d - y_d|)``."""
    X = check_X(X, "X")
    Y = X if Y is None else check_X(Y, "Y", X.shape[1])
    lam = _lifetimes(lifetime, X.shape[1])
    if np.ndim(lam):
        return np.exp(-cdist(X * lam, Y * lam, "cityblock"))
    return np.exp(-lam * cdist(X, Y, "cityblock"))


class LaplaceKernelRidge(RegressorMixin, BaseEstimator):
    """Exact kernel ridge regression (GP regression) with the Laplace kernel (spec §1.15).

    ``y_hat = mean(y) + K_*(K + delta2 I)^-1 (y - mean(y))``, Theta(N^3) time and N^2 memory;
    ``predict(X, return_std=True)`` gives the GP predictive std with signal variance
    ``prior_variance`` and noise variance ``prior_variance * delta2`` (the limit of the Mondrian
    kernel ridge model as the number of trees grows).

    Parameters
    ----------
    lifetime : float or array-like of shape (n_features,), default=1.0
    delta2 : float or None, default=None
        Sum-form ridge constant (``None``: 1e-4, [P]).
    alpha : float or None, default=None
        Mean form, ``delta2 = n_samples * alpha``.
    prior_variance : float, default=1.0
    """

    def __init__(self, lifetime=1.0, delta2=None, alpha=None, prior_variance=1.0):
        self.lifetime = lifetime
        self.delta2 = delta2
        self.alpha = alpha
        self.prior_variance = prior_variance

    def fit(self, X, y):
        names = feature_names(X)
        X = check_X(X, "X", estimator=self)
        yy = check_target(y, X.shape[0], "y")
        _lifetimes(self.lifetime, X.shape[1])
        check_positive(self.prior_variance, "prior_variance")
        d2 = _resolve_delta2(self.delta2, self.alpha, X.shape[0])
        K = laplace_kernel(X, lifetime=self.lifetime)
        K[np.diag_indices_from(K)] += d2
        self._chol = scipy.linalg.cho_factor(K, lower=True, overwrite_a=True)
        self.intercept_ = float(yy.mean())
        self.dual_coef_ = scipy.linalg.cho_solve(self._chol, yy - self.intercept_)
        self.X_fit_ = X
        self.delta2_ = d2
        self.n_features_in_ = X.shape[1]
        set_feature_names(self, names)
        n = X.shape[0]
        quad = float((yy - self.intercept_) @ self.dual_coef_)
        logdet = 2.0 * float(np.log(np.diag(self._chol[0])).sum())
        s2 = float(self.prior_variance)
        self.log_marginal_likelihood_ = -0.5 * quad / s2 - 0.5 * logdet \
            - 0.5 * n * math.log(2 * math.pi * s2)
        return self

    def predict(self, X, return_std: bool = False):
        check_is_fitted(self, "dual_coef_")
        X = check_X(X, "X", self.n_features_in_, estimator=self)
        out = np.empty(X.shape[0])
        std = np.empty(X.shape[0]) if return_std else None
        for s in range(0, X.shape[0], 2048):  # bounded memory for the cross kernel
            Ks = laplace_kernel(X[s:s + 2048], self.X_fit_, self.lifetime)
            out[s:s + 2048] = self.intercept_ + Ks @ self.dual_coef_
            if return_std:
                V = scipy.linalg.solve_triangular(self._chol[0], Ks.T, lower=True)
                var = 1.0 + self.delta2_ - (V * V).sum(axis=0)
                std[s:s + 2048] = np.sqrt(np.maximum(var, self.delta2_) * self.prior_variance)
        return (out, std) if return_std else out


class RandomFourierFeatures(TransformerMixin, BaseEstimator):
    """Random Fourier features of the Laplace kernel (Rahimi & Recht 2007; spec §1.15).

    Frequencies ``omega_{r,d} = lifetime * Cauchy(0, 1)`` i.i.d.; features
    ``R^-1/2 [cos(omega_r^T x), sin(omega_r^T x)]_{r=1..R}`` (dense, ``2R`` columns, all
    non-zero), so ``z(x)^T z(x') = mean_r cos(omega_r^T (x - x'))``.

    Parameters
    ----------
    n_components : int, default=100
        Number of frequencies ``R`` (``2R`` output columns).
    lifetime : float, default=1.0
    random_state : int, SeedSequence, RandomState, Generator or None, default=None
    """

    def __init__(self, n_components=100, lifetime=1.0, random_state=None):
        self.n_components = n_components
        self.lifetime = lifetime
        self.random_state = random_state

    def fit(self, X, y=None):
        R = check_int(self.n_components, "n_components", 1)
        lam = check_positive(self.lifetime, "lifetime")
        _check_seed(self.random_state)
        names = feature_names(X)
        X = check_X(X, "X", estimator=self)
        rng = np.random.default_rng(seed_sequence(self.random_state))
        self.omega_ = lam * rng.standard_cauchy((X.shape[1], R))
        self.n_features_in_ = X.shape[1]
        set_feature_names(self, names)
        return self

    def transform(self, X) -> np.ndarray:
        check_is_fitted(self, "omega_")
        X = check_X(X, "X", self.n_features_in_, estimator=self)
        P = X @ self.omega_
        return np.hstack([np.cos(P), np.sin(P)]) / math.sqrt(self.omega_.shape[1])

    def kernel(self, X, Y=None) -> np.ndarray:
        ZX = self.transform(X)
        ZY = ZX if Y is None else self.transform(Y)
        return ZX @ ZY.T


class RandomBinningFeatures(TransformerMixin, BaseEstimator):
    """Random binning features of the Laplace kernel (Rahimi & Recht 2007; spec §1.15).

    Grid ``p`` has width ``delta_pd ~ Gamma(shape 2, scale 1/lifetime)`` and shift
    ``u_pd ~ U[0, delta_pd]`` in dimension ``d``; a row's bin is the tuple of
    ``ceil((x_d - u_pd) / delta_pd)``, hashed to 64 bits.  The bins seen by ``fit`` become the
    columns (value ``P^-1/2``); a new row in a bin not seen by ``fit`` gets no entry for that
    grid (spec §1.15), so it has at most ``P`` non-zeros.  Sparse CSR output.

    Parameters
    ----------
    n_grids : int, default=50
        Number of grids ``P`` (= non-zeros per fitted row).
    lifetime : float, default=1.0
    random_state : int, SeedSequence, RandomState, Generator or None, default=None
    """

    def __init__(self, n_grids=50, lifetime=1.0, random_state=None):
        self.n_grids = n_grids
        self.lifetime = lifetime
        self.random_state = random_state

    def _keys(self, X):
        """64-bit bin key of each row in each grid, shape ``(n, P)``."""
        n, D = X.shape
        keys = np.zeros((n, self.widths_.shape[0]), np.uint64)
        with np.errstate(over="ignore"):
            for d in range(D):
                coord = np.ceil((X[:, d, None] - self.shifts_[None, :, d]) / self.widths_[None, :, d])
                c = coord.astype(np.int64).view(np.uint64)
                keys = (keys ^ (c * self._mult[d])) * np.uint64(0x9E3779B97F4A7C15)
                keys ^= keys >> np.uint64(29)
        return keys

    def fit(self, X, y=None):
        P = check_int(self.n_grids, "n_grids", 1)
        lam = check_positive(self.lifetime, "lifetime")
        _check_seed(self.random_state)
        names = feature_names(X)
        X = check_X(X, "X", estimator=self)
        rng = np.random.default_rng(seed_sequence(self.random_state))
        D = X.shape[1]
        self.widths_ = rng.gamma(2.0, 1.0 / lam, size=(P, D))
        self.shifts_ = rng.uniform(0.0, 1.0, size=(P, D)) * self.widths_
        self._mult = rng.integers(1, 2**63 - 1, size=D, dtype=np.int64).view(np.uint64) \
            | np.uint64(1)
        keys = self._keys(X)
        self._bins = []
        offsets = [0]
        for p in range(P):
            u = np.unique(keys[:, p])
            self._bins.append(u)
            offsets.append(offsets[-1] + u.shape[0])
        self.bin_offsets_ = np.asarray(offsets, np.int64)
        self.n_features_in_ = D
        set_feature_names(self, names)
        return self

    @property
    def n_bins_(self) -> int:
        check_is_fitted(self, "widths_")
        return int(self.bin_offsets_[-1])

    def transform(self, X) -> sp.csr_matrix:
        check_is_fitted(self, "widths_")
        X = check_X(X, "X", self.n_features_in_, estimator=self)
        n = X.shape[0]
        P = self.widths_.shape[0]
        keys = self._keys(X)
        cols = np.empty((n, P), np.int64)
        ok = np.empty((n, P), bool)
        for p in range(P):
            u = self._bins[p]
            i = np.minimum(np.searchsorted(u, keys[:, p]), u.shape[0] - 1)
            ok[:, p] = u[i] == keys[:, p]
            cols[:, p] = self.bin_offsets_[p] + i
        counts = ok.sum(axis=1)
        indptr = np.concatenate([[0], np.cumsum(counts)])
        data = np.full(int(indptr[-1]), 1.0 / math.sqrt(P))
        return sp.csr_matrix((data, cols[ok], indptr), shape=(n, self.n_bins_))

    def kernel(self, X, Y=None) -> np.ndarray:
        ZX = self.transform(X)
        ZY = ZX if Y is None else self.transform(Y)
        return (ZX @ ZY.T).toarray()


def select_width(evaluate: Callable[[float], float], n_steps: int, start: float = 1.0,
                 max_error: float = 20.0):
    """The width search of [P] §8.2 for methods that must be refitted per width ([code]).

    Works on ``l = log2(lifetime)`` from ``log2(start)``: while the best error so far sits at
    the smallest (largest) ``l`` tried, try one below (above); while the best error exceeds
    ``max_error``, alternate between the two; otherwise bisect between the best ``l`` and its
    better neighbour.

    Parameters
    ----------
    evaluate : callable
        ``evaluate(lifetime) -> validation error``.
    n_steps : int
        Evaluations after the first.
    start : float, default=1.0
    max_error : float, default=20.0

    Returns
    -------
    lifetimes, errors, runtimes : ndarray
        In evaluation order; ``runtimes`` are seconds since the start of the search.
    """
    check_int(n_steps, "n_steps", 0)
    t0 = time.perf_counter()
    lg = math.log2(check_positive(start, "start"))
    err = float(evaluate(2.0 ** lg))
    lams, errs, times = [2.0 ** lg], [err], [time.perf_counter() - t0]
    tried = [(lg, err)]
    for i in range(n_steps):
        am = int(np.argmin([e for _, e in tried]))
        worst = tried[am][1] > max_error
        if am == 0 or (worst and i % 2 == 0):
            lg = tried[0][0] - 1.0
        elif am + 1 == len(tried) or (worst and i % 2 == 1):
            lg = tried[-1][0] + 1.0
        elif tried[am + 1][1] < tried[am - 1][1]:
            lg = 0.5 * (tried[am + 1][0] + tried[am][0])
        else:
            lg = 0.5 * (tried[am - 1][0] + tried[am][0])
        err = float(evaluate(2.0 ** lg))
        lams.append(2.0 ** lg)
        errs.append(err)
        times.append(time.perf_counter() - t0)
        tried.append((lg, err))
        tried.sort()
    return np.asarray(lams), np.asarray(errs), np.asarray(times)
