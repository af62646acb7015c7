"""SMAC's random forest as the optimizer's model, refitted every ``retrain_after``
observations."""

from __future__ import annotations

import copy

import numpy as np

from .base import Model
from .targets import smac_log_transform

__all__ = ["SMACForestModel"]


class SMACForestModel(Model):
    """SMAC3 2.4's HPO-facade surrogate: random forest on log-scaled losses
    (:func:`smac_log_transform`), refit every ``retrain_after`` observations (8 in SMAC3; 1
    refits after every observation).  Its log-normal EI and 20 % random interleaving are the
    ``"rf-smac"`` recipe's (:mod:`mfbo.proposal.recipes`)."""

    def __init__(self, n_dims: int, random_state, retrain_after: int = 8, log_y: bool = True,
                 n_estimators: int = 10):
        if retrain_after < 1:
            raise ValueError(f"retrain_after must be >= 1, got {retrain_after}.")
        self.retrain_after = int(retrain_after)
        self.log_y = bool(log_y)
        self._rng = np.random.default_rng(random_state)
        self.n_estimators = n_estimators
        self.forest = None
        self._since = 0
        self._y = None

    def observe(self, X, y, n_new):
        self._since += n_new
        if self.forest is None or self._since >= self.retrain_after:
            from surrogates import SMACRandomForestRegressor  # scikit-learn's trees: on use

            yt = smac_log_transform(y) if self.log_y else y
            self.forest = SMACRandomForestRegressor(
                n_estimators=self.n_estimators, log_y=self.log_y,
                random_state=int(self._rng.integers(0, 2**31 - 1))).fit(X, yt)
            self._y = np.array(y, dtype=float)
            self._since = 0

    @property
    def ready(self):
        return self.forest is not None

    def predict(self, X):
        return self.forest.predict(X, return_std=True)

    def predict_per_tree(self, X):
        return self.forest.predict_per_tree(X)

    def incumbent(self, y):
        if not self.log_y:
            return float(np.min(y))
        return float(smac_log_transform(self._y, [np.min(y)])[0])

    def to_model_scale(self, values):
        values = np.asarray(values, dtype=float)
        return smac_log_transform(self._y, values) if self.log_y else values

    def with_lies(self, X, y, X_lie, y_lie):
        other = copy.copy(self)
        other.retrain_after = 1  # every lie is seen at once
        other._rng = np.random.default_rng(self._rng.integers(0, 2**63 - 1))
        other._aug = (np.asarray(X, dtype=float), np.asarray(y, dtype=float))
        other.add_lies(X_lie, y_lie)
        return other
