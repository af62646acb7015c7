"""Exact Laplace kernel ridge regression, the baseline the Mondrian kernel approximates:
``k(x, x') = exp(-lifetime * |x - x'|_1)`` (one lifetime, or one per feature)."""

from __future__ import annotations

import math

import numpy as np
import scipy.linalg
from scipy.spatial.distance import cdist
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.utils.validation import check_is_fitted

from .._core.validation import (check_positive, check_target, check_X, feature_names, set_feature_names)
from ..kernel._common import _resolve_delta2

__all__ = ["laplace_kernel", "LaplaceKernelRidge"]


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
    """Exact kernel ridge regression (GP regression) with the Laplace kernel, the kernel that
    the Mondrian kernel approximates (Balog et al., 2016, Section 3.2).

    ``y_hat = mean(y) + K_*(K + delta2 I)^-1 (y - mean(y))``, Theta(N^3) time and N^2 memory;
    ``predict(X, return_std=True)`` gives the GP predictive std with signal variance
    ``prior_variance`` and noise variance ``prior_variance * delta2`` (the limit of the Mondrian
    kernel ridge model as the number of trees grows).

    Parameters
    ----------
    lifetime : float or array-like of shape (n_features,), default=1.0
    delta2 : float or None, default=None
        Sum-form ridge constant (``None``: 1e-4, as in Balog et al., 2016, Section 8).
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
