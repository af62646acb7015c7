"""What every Mondrian forest estimator shares: parameter checks, feature scaling, the tree
store, batch and online fitting, and introspection.  Subclasses supply the label model."""

from __future__ import annotations

import numpy as np

from .._core._tree_kernels import NNODES, ROOT, X_LIMIT, node_depths, scale_rows
from .._core.compile_ahead import start as start_compiling_ahead
from .._core.estimator import BaseEstimator, not_fitted_error
from .._core.tree import TreeStore
from .._core.validation import (check_bounds, check_choice, check_int, check_positive,
                          check_unchanged, check_X, feature_names, seed_sequence,
                          set_feature_names, unchanged_since)

_MIN_WEIGHT = 1e-3  # keeps every feature's range positive

#: parameters that shape the trees or the feature scaling: they take effect at ``fit`` only
STRUCTURE_PARAMS = ("n_estimators", "lifetime", "min_samples_split", "feature_bounds",
                    "feature_weights", "random_state")


def check_fitted(estimator) -> None:
    """scikit-learn's ``check_is_fitted(estimator, "_store")`` without its per-call tag
    machinery (called on every prediction)."""
    if "_store" not in estimator.__dict__:
        raise not_fitted_error(f"This {type(estimator).__name__} instance is not fitted yet. "
                               f"Call 'fit' with appropriate arguments before using this "
                               f"estimator.")

class BaseMondrianForest(BaseEstimator):
    """Base class; not for direct use.

    The parameters in ``STRUCTURE_PARAMS`` are applied by ``fit`` (and by the first
    ``partial_fit``): a fitted forest keeps its trees, scaling and random streams, predicts
    with them whatever ``set_params`` says later, and ``partial_fit`` refuses to continue after
    one of them was changed.  The other parameters act at prediction time and may be changed
    freely.
    """

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
            check_bounds(self.feature_bounds, X.shape[1])
            bounds = np.asarray(self.feature_bounds, dtype=np.float64)
            lower, upper = bounds[:, 0].copy(), bounds[:, 1].copy()
        else:
            lower, upper = X.min(axis=0), X.max(axis=0)
        weights = self._feature_weights(X, y)
        # a feature of weight w spans [0, w]: splits and distances favour relevant features
        mult = np.ones(X.shape[1])
        with np.errstate(over="ignore"):
            for _ in range(64):
                scale = upper * mult - lower * mult
                scale[scale <= 0] = 1.0
                scale = scale / weights
                wide = ~np.isfinite(scale)
                if not wide.any():
                    break
                # the range (or range / weight) overflows float64: such a feature is taken
                # as x / 2^k, an exact rescaling (features of ordinary range keep k = 0 and
                # their arithmetic bit for bit)
                mult[wide] *= 0.5
        self.feature_weights_ = weights
        self.feature_lower_ = lower * mult
        self.feature_scale_ = scale
        self._x_mult = mult if np.any(mult != 1.0) else None

    def _premultiply(self, X: np.ndarray) -> np.ndarray:
        """``X`` with each feature whose range overflows float64 divided by its power of two
        (see ``_init_scaling``)."""
        mult = self.__dict__.get("_x_mult")
        return X if mult is None else X * mult

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

    def _kernels_needed_later(self) -> tuple:
        """``(kernel, signature)`` pairs this model calls after its first fit, in the order it
        first calls them, to be compiled in a second process on a fresh install, and short
        ones to be compiled here while waiting for it
        (:mod:`surrogates._core.compile_ahead`)."""
        return [], []

    def _scale(self, X: np.ndarray) -> np.ndarray:
        return (self._premultiply(X) - self.feature_lower_) / self.feature_scale_

    # -- fitting ----------------------------------------------------------------------------
    def fit(self, X, y):
        """Grow ``n_estimators`` Mondrian trees on ``(X, y)`` from scratch.

        Features are scaled to ``[0, 1]`` with the range of this ``X`` (or with
        ``feature_bounds``) and that scaling is kept for all later ``partial_fit`` calls.
        """
        return self._fit_batch(X, y)

    def partial_fit(self, X, y, **kwargs):
        """Add one point or a mini-batch online (the conditional Mondrian extension of
        Lakshminarayanan, 2016, PhD thesis, Alg. 5.6 and 6.4).

        The trees keep the same distribution as trees grown by :meth:`fit` on all data seen
        so far, whatever the order or batch sizes.  A first call on an unfitted model fixes the
        feature scaling from this batch (or ``feature_bounds``); pass ``feature_bounds`` when
        the first batch does not span the input range.
        """
        if not hasattr(self, "_store"):
            # the first batch is grown as a batch tree: identical in distribution, and faster
            return self._fit_batch(X, y, **kwargs)
        checked = unchanged_since(self, self.__dict__.get("_checked_params"))
        if not checked:
            # (skipped while the parameters are the very objects checked last time: one point
            # per call must stay cheap)
            self._check_params()
            check_unchanged(self, self.__dict__.get("_fit_params"))
        # finiteness is checked by the compiled ingest step, before anything is changed
        X = check_X(X, "X", self.n_features_in_, estimator=self, check_finite=False)
        yy = self._encode_target(y, X.shape[0], first=False, **kwargs)
        self._extend_store(self._premultiply(X), yy)
        if not checked:
            self._checked_params = self._param_snapshot()
        self._after_update()
        return self

    def _extend_store(self, X: np.ndarray, y: np.ndarray) -> None:
        self._store.extend(X, y, self.feature_lower_, self.feature_scale_, x_limit=X_LIMIT)

    def _fit_targets(self, y: np.ndarray) -> np.ndarray:
        """The encoded targets of a fit as the trees store them (hook for the regressor)."""
        return y

    def _param_snapshot(self) -> tuple:
        return tuple((k, getattr(self, k)) for k in self._get_param_names())

    def _fit_batch(self, X, y, **kwargs):
        # a rejected fit leaves the estimator as it was: every attribute set below is put back
        saved = dict(self.__dict__)
        try:
            return self._fit_batch_unguarded(X, y, **kwargs)
        except BaseException:
            self.__dict__.clear()
            self.__dict__.update(saved)
            raise

    def _fit_batch_unguarded(self, X, y, **kwargs):
        self._check_params()
        names = feature_names(X)
        X = check_X(X, "X", estimator=self)
        if self.feature_bounds is not None:
            check_bounds(self.feature_bounds, X.shape[1])
        yy = self._fit_targets(self._encode_target(y, X.shape[0], first=True, **kwargs))
        self._init_scaling(X, yy)
        self.n_features_in_ = X.shape[1]
        set_feature_names(self, names)
        with np.errstate(over="ignore"):  # (refused just below)
            Xs = self._scale(X)
        far = ~(np.abs(Xs) <= X_LIMIT).all(axis=1)  # only possible outside feature_bounds
        if far.any():
            raise ValueError(f"Input X: sample {int(np.argmax(far))} lies too far outside "
                             f"feature_bounds (more than {X_LIMIT:.3g} times their range away).")
        store = TreeStore(self.n_estimators, X.shape[1], self._n_stats(), self.lifetime,
                          self.min_samples_split, self._task, seed_sequence(self.random_state),
                          capacity=max(16, X.shape[0]))
        start_compiling_ahead(*self._kernels_needed_later())
        store.fit(Xs, yy)
        self._store = store
        self._fit_params = {k: getattr(self, k) for k in STRUCTURE_PARAMS}
        self._checked_params = self._param_snapshot()
        self._after_update()
        return self

    def _checked_query(self, X, name="X") -> np.ndarray:
        check_fitted(self)
        X = self._premultiply(check_X(X, name, self.n_features_in_, estimator=self,
                                      check_finite=False))
        out = np.empty(X.shape)
        if scale_rows(X, self.feature_lower_, self.feature_scale_, out, X_LIMIT) >= 0:
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
        """Data-weighted average leaf depth of each tree (the statistic of Lakshminarayanan,
        2016, Table 5.1)."""
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
