"""What every Mondrian forest estimator shares: parameter checks, feature scaling, the tree
store, batch and online fitting, and introspection.  Subclasses supply the label model."""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.exceptions import NotFittedError

from ._tree import NNODES, ROOT, TreeStore, node_depths, scale_rows
from ._validation import (check_bounds, check_choice, check_int, check_positive, check_X,
                          seed_sequence)

_MIN_WEIGHT = 1e-3  # keeps every feature's range positive



def check_fitted(estimator) -> None:
    """scikit-learn's ``check_is_fitted(estimator, "_store")`` without its per-call tag
    machinery (called on every prediction)."""
    if "_store" not in estimator.__dict__:
        raise NotFittedError(f"This {type(estimator).__name__} instance is not fitted yet. Call "
                             f"'fit' with appropriate arguments before using this estimator.")

class BaseMondrianForest(BaseEstimator):
    """Base class; not for direct use."""

    _task: int = -1

    # -- hooks for subclasses -----------------------------------------------------------
    def _n_stats(self) -> int:
        raise NotImplementedError

    def _check_params(self) -> None:
        check_int(self.n_estimators, "n_estimators", 1)
        check_positive(self.lifetime, "lifetime", allow_inf=True)
        check_int(self.min_samples_split, "min_samples_split", 1)
        rs = self.random_state
        if not (rs is None or isinstance(rs, (int, np.integer, np.random.SeedSequence,
                                               np.random.RandomState, np.random.Generator))):
            seed_sequence(rs)  # raises the TypeError naming random_state
        if isinstance(rs, (int, np.integer)):
            seed_sequence(rs)  # rejects negative seeds

    def _encode_target(self, y, n_samples, first: bool):
        raise NotImplementedError

    def _after_update(self) -> None:
        """Invalidate caches derived from the data (called after every fit/partial_fit)."""

    # -- scaling --------------------------------------------------------------------------
    def _init_scaling(self, X: np.ndarray, y: np.ndarray) -> None:
        if self.feature_bounds is not None:
            lower, scale = check_bounds(self.feature_bounds, X.shape[1])
        else:
            lower = X.min(axis=0)
            scale = X.max(axis=0) - lower
            scale[scale <= 0] = 1.0
        weights = self._feature_weights(X, y)
        self.feature_weights_ = weights
        self.feature_lower_ = lower
        # a feature of weight w spans [0, w]: splits and distances favour relevant features
        self.feature_scale_ = scale / weights

    def _feature_weights(self, X: np.ndarray, y: np.ndarray) -> np.ndarray:
        """Per-feature weights in (0, 1] (max 1) from ``feature_weights``."""
        fw = self.feature_weights
        D = X.shape[1]
        if fw is None:
            return np.ones(D)
        if isinstance(fw, str):
            check_choice(fw, "feature_weights", {"mutual_info", "f_score"})
            if X.shape[0] < 5:
                raise ValueError(f"feature_weights={fw!r} needs at least 5 samples in the first "
                                 f"fit; got {X.shape[0]}. Pass explicit weights instead.")
            if X.shape[0] > 5000:  # the k-NN mutual-information estimate is O(n log n)
                pick = np.random.default_rng(0).choice(X.shape[0], 5000, replace=False)
                X, y = X[pick], y[pick]
            raw = self._relevance(X, y, fw)
        else:
            raw = np.asarray(fw, dtype=np.float64)
            if raw.shape != (D,) or not np.isfinite(raw).all() or np.any(raw < 0) \
                    or not np.any(raw > 0):
                raise ValueError(f"feature_weights must be None, 'mutual_info', 'f_score' or "
                                 f"{D} non-negative finite numbers, not all zero.")
        raw = np.nan_to_num(np.asarray(raw, dtype=np.float64), nan=0.0)
        top = raw.max()
        if not top > 0:
            return np.ones(D)
        return np.maximum(raw / top, _MIN_WEIGHT)

    def _relevance(self, X, y, kind):
        raise NotImplementedError

    def _scale(self, X: np.ndarray) -> np.ndarray:
        return (X - self.feature_lower_) / self.feature_scale_

    # -- fitting ----------------------------------------------------------------------------
    def fit(self, X, y):
        """Grow ``n_estimators`` Mondrian trees on ``(X, y)`` from scratch.

        Features are scaled to ``[0, 1]`` with the range of this ``X`` (or with
        ``feature_bounds``) and that scaling is kept for all later ``partial_fit`` calls.
        """
        return self._fit_batch(X, y)

    def partial_fit(self, X, y, **kwargs):
        """Add one point or a mini-batch online (conditional Mondrian extension, spec A3).

        The trees keep the same distribution as trees grown by :meth:`fit` on all data seen
        so far, whatever the order or batch sizes.  A first call on an unfitted model fixes the
        feature scaling from this batch (or ``feature_bounds``); pass ``feature_bounds`` when
        the first batch does not span the input range.
        """
        if not hasattr(self, "_store"):
            # the first batch is grown as a batch tree: identical in distribution, and faster
            return self._fit_batch(X, y, **kwargs)
        # finiteness is checked by the compiled ingest step, before anything is changed
        X = check_X(X, "X", self.n_features_in_, estimator=self, check_finite=False)
        yy = self._encode_target(y, X.shape[0], first=False, **kwargs)
        self._store.extend(X, yy, self.feature_lower_, self.feature_scale_)
        self._after_update()
        return self

    def _fit_batch(self, X, y, **kwargs):
        self._check_params()
        X = check_X(X, "X", estimator=self)
        if self.feature_bounds is not None:
            check_bounds(self.feature_bounds, X.shape[1])
        yy = self._encode_target(y, X.shape[0], first=True, **kwargs)
        self._init_scaling(X, yy)
        self.n_features_in_ = X.shape[1]
        store = TreeStore(self.n_estimators, X.shape[1], self._n_stats(), self.lifetime,
                          self.min_samples_split, self._task, seed_sequence(self.random_state),
                          capacity=max(16, X.shape[0]))
        store.fit(self._scale(X), yy)
        self._store = store
        self._after_update()
        return self

    def _checked_query(self, X, name="X") -> np.ndarray:
        check_fitted(self)
        X = check_X(X, name, self.n_features_in_, estimator=self, check_finite=False)
        out = np.empty(X.shape)
        if scale_rows(X, self.feature_lower_, self.feature_scale_, out) >= 0:
            raise ValueError(f"Input {name} contains NaN or infinity.")
        return out

    # -- introspection ----------------------------------------------------------------------
    @property
    def n_samples_seen_(self) -> int:
        """Number of training points the forest holds."""
        check_fitted(self)
        return self._store.n_points

    def apply(self, X) -> np.ndarray:
        """Leaf index reached by each sample in each tree, shape ``(n_samples, n_estimators)``."""
        return self._store.apply(self._checked_query(X))

    def get_n_leaves(self) -> np.ndarray:
        """Number of leaves of each tree."""
        check_fitted(self)
        s = self._store
        return np.array([int(s.is_leaf(t).sum()) for t in range(s.n_trees)])

    def get_depth(self) -> np.ndarray:
        """Maximum leaf depth (root = 0) of each tree."""
        check_fitted(self)
        s = self._store
        return np.array([int(node_depths(s.inode, s.meta, t).max()) for t in range(s.n_trees)])

    def get_weighted_depth(self) -> np.ndarray:
        """Data-weighted average leaf depth of each tree (thesis Table 5.1 statistic)."""
        check_fitted(self)
        s = self._store
        out = np.empty(s.n_trees)
        for t in range(s.n_trees):
            nn = s.meta[t, NNODES]
            depth = node_depths(s.inode, s.meta, t)
            leaf = s.is_leaf(t)
            counts = s.stats[t, :nn, 0]
            out[t] = float((depth[leaf] * counts[leaf]).sum() / counts[leaf].sum())
        return out

    def get_root_split_times(self) -> np.ndarray:
        """Absolute split time of each tree's root (``lifetime`` for a root that is a leaf)."""
        check_fitted(self)
        s = self._store
        return np.array([s.fnode[t, s.meta[t, ROOT], 1] for t in range(s.n_trees)])
