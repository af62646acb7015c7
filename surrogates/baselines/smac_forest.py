"""The random-forest surrogate of SMAC3 2.4, with the settings of its
``HyperparameterOptimizationFacade``.

10 trees on bootstrap samples, all features at every split, random split thresholds
(``splitter="random"``), ``min_samples_split=2``, ``min_samples_leaf=1``; the predictive mean is
the average of the trees and the variance is the **variance between the trees** (ddof 0,
floored at 1e-10), as SMAC3 computes it.  With ``log_y=True`` the targets are taken to be
log-scaled losses and each leaf predicts ``log(mean(exp(y)))`` of its bootstrap labels, as
SMAC's ``log_y`` option does.
"""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.tree import DecisionTreeRegressor
from sklearn.utils.validation import check_is_fitted

from .._core.validation import (check_int, check_target, check_X, feature_names, seed_sequence,
                          set_feature_names)

__all__ = ["SMACRandomForestRegressor"]


class SMACRandomForestRegressor(RegressorMixin, BaseEstimator):
    """SMAC3's random-forest surrogate.

    Parameters
    ----------
    n_estimators : int, default=10
    bootstrap : bool, default=True
    min_samples_split : int, default=2
    min_samples_leaf : int, default=1
    log_y : bool, default=False
        Leaves predict ``log(mean(exp(y)))`` (for log-scaled losses, SMAC's ``log_y``).
    random_state : int, Generator, RandomState, SeedSequence or None, default=None
    """

    def __init__(self, n_estimators=10, bootstrap=True, min_samples_split=2,
                 min_samples_leaf=1, log_y=False, random_state=None):
        self.n_estimators = n_estimators
        self.bootstrap = bootstrap
        self.min_samples_split = min_samples_split
        self.min_samples_leaf = min_samples_leaf
        self.log_y = log_y
        self.random_state = random_state

    def fit(self, X, y):
        check_int(self.n_estimators, "n_estimators", 1)
        check_int(self.min_samples_split, "min_samples_split", 2)
        check_int(self.min_samples_leaf, "min_samples_leaf", 1)
        names = feature_names(X)
        X = check_X(X, "X", estimator=self)
        y = check_target(y, X.shape[0], "y")
        if not np.isfinite(y).all():
            raise ValueError("Input y contains NaN or infinity.")
        ss = seed_sequence(self.random_state)
        rng = np.random.default_rng(ss)
        n = X.shape[0]
        trees, leaf_values = [], []
        for _ in range(self.n_estimators):
            idx = rng.integers(0, n, n) if self.bootstrap else np.arange(n)
            tree = DecisionTreeRegressor(splitter="random", max_features=None,
                                         min_samples_split=self.min_samples_split,
                                         min_samples_leaf=self.min_samples_leaf,
                                         random_state=int(rng.integers(0, 2**31 - 1)))
            tree.fit(X[idx], y[idx])
            if self.log_y:
                leaves = tree.apply(X[idx])
                m = tree.tree_.node_count
                cnt = np.bincount(leaves, minlength=m).astype(float)
                shift = y[idx].max()
                s = np.bincount(leaves, weights=np.exp(y[idx] - shift), minlength=m)
                with np.errstate(divide="ignore", invalid="ignore"):
                    vals = np.where(cnt > 0, np.log(s / np.maximum(cnt, 1)) + shift, 0.0)
            else:
                vals = tree.tree_.value[:, 0, 0].copy()
            trees.append(tree)
            leaf_values.append(vals)
        self.estimators_ = trees
        self._leaf_values = leaf_values
        self.n_features_in_ = X.shape[1]
        set_feature_names(self, names)
        return self

    def predict_per_tree(self, X):
        """Per-tree predictions ``(n_samples, n_estimators)`` and zero within-tree variance."""
        check_is_fitted(self, "estimators_")
        X = check_X(X, "X", self.n_features_in_, estimator=self)
        # the fitted trees' own apply: scikit-learn's tree.apply would re-validate X per tree
        X32 = np.ascontiguousarray(X, dtype=np.float32)
        P = np.column_stack([v[t.tree_.apply(X32)]
                             for t, v in zip(self.estimators_, self._leaf_values)])
        return P, np.zeros_like(P)

    def predict(self, X, return_std: bool = False):
        P, _ = self.predict_per_tree(X)
        mean = P.mean(axis=1)
        if not return_std:
            return mean
        var = np.maximum(P.var(axis=1), 1e-10)
        return mean, np.sqrt(var)
