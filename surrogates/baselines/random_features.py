"""Random features for the Laplace kernel ``exp(-lifetime * |x - x'|_1)``: random Fourier
features (Rahimi & Recht, 2007, Section 3) and random binning (Section 4), the Mondrian
kernel's baselines in Balog et al. (2016)."""

from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_is_fitted

from .._core.validation import (check_int, check_positive, check_X, feature_names, seed_sequence,
                          set_feature_names)
from ..kernel._common import _check_seed

__all__ = ["RandomFourierFeatures", "RandomBinningFeatures"]


class RandomFourierFeatures(TransformerMixin, BaseEstimator):
    """Random Fourier features of the Laplace kernel (Rahimi & Recht, 2007, Section 3).

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
    """Random binning features of the Laplace kernel (Rahimi & Recht, 2007, Section 4).

    Grid ``p`` has width ``delta_pd ~ Gamma(shape 2, scale 1/lifetime)`` and shift
    ``u_pd ~ U[0, delta_pd]`` in dimension ``d``; a row's bin is the tuple of
    ``ceil((x_d - u_pd) / delta_pd)``, hashed to 64 bits.  The bins seen by ``fit`` become the
    columns (value ``P^-1/2``); a new row in a bin not seen by ``fit`` gets no entry for that
    grid (a model fitted on the seen bins gives an unseen bin weight 0, so its column would
    change no prediction), so it has at most ``P`` non-zeros.  Sparse CSR output.

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
