"""Surrogate models as the optimizer sees them, and the registry of named surrogates.

A model is told about observations incrementally (``observe``) and predicts the loss at unit-cube
points.  The optimizer keeps the data; a model decides how to use it: the Mondrian forest adds
each new point with ``partial_fit`` (O(log n), never a refit), SMAC's forest refits every
``retrain_after`` observations, random search ignores it, and any object with ``fit`` and
``predict(X, return_std=True)`` (plus, optionally, ``partial_fit``) is wrapped as it is.

Add a surrogate by writing a class with this interface and registering it in ``SURROGATES``.
"""

from __future__ import annotations

import copy
from typing import Callable

import numpy as np

from surrogates import MondrianForestRegressor, SMACRandomForestRegressor

__all__ = ["Model", "MondrianModel", "SMACForestModel", "RandomModel", "EstimatorModel",
           "SURROGATES", "make_model", "smac_log_transform"]


class Model:
    """Interface: ``observe``, ``predict``, optional ``predict_per_tree``, ``with_lies``."""

    #: acquisition used when the user does not name one
    default_acquisition = "ucb"
    #: a random suggestion with this probability (SMAC's interleaving); 0 = never
    random_interleave = 0.0
    #: True when predictions are meaningful (random search: never)
    is_informative = True

    @staticmethod
    def default_n_initial(n_dims: int) -> int:
        """Initial-design size when the user gives none: ``10 * D`` as SMAC3 (the papers leave
        it open, AMBIG-15); :func:`mfbo.minimize` caps it at a quarter of the budget.
        Measured on Branin, 50 evaluations, 10 seeds (Mondrian, UCB): 5 Sobol points give
        0.61 +/- 0.24, 10 give 0.47 +/- 0.08 (``python -m benchmarks.bo_quick``)."""
        return 10 * n_dims

    def observe(self, X: np.ndarray, y: np.ndarray, n_new: int) -> None:
        """All data so far (``X`` unit cube, ``y`` losses); the last ``n_new`` rows are new."""
        raise NotImplementedError

    @property
    def ready(self) -> bool:
        raise NotImplementedError

    def predict(self, X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        raise NotImplementedError

    def incumbent(self, y: np.ndarray) -> float:
        """The best observed loss on the model's scale (for EI/PI)."""
        return float(np.min(y))

    def with_lies(self, X: np.ndarray, y: np.ndarray, X_lie: np.ndarray,
                  y_lie: float) -> "Model":
        """A copy that has also seen ``X_lie`` with loss ``y_lie`` (constant liar); the
        original is untouched.  More lies are added to the copy with :meth:`add_lies`."""
        other = copy.deepcopy(self)
        other._aug = (np.asarray(X, dtype=float), np.asarray(y, dtype=float))
        other.add_lies(X_lie, y_lie)
        return other

    def add_lies(self, X_lie: np.ndarray, y_lie: float) -> None:
        """Add more constant-liar observations to a copy made by :meth:`with_lies`."""
        X, y = self._aug
        X_lie = np.atleast_2d(np.asarray(X_lie, dtype=float))
        Xa = np.vstack([X, X_lie])
        ya = np.concatenate([y, np.full(X_lie.shape[0], float(y_lie))])
        self._aug = (Xa, ya)
        self.observe(Xa, ya, X_lie.shape[0])


class MondrianModel(Model):
    """The online Mondrian regression forest (papers' BO setting).

    10 trees, ``min_samples_split=2``, lifetime inf, the fast empirical posterior (or ``"bp"``),
    noise ``Var(y)/min(2N, 500)`` (``K_cap=500``, the reference code) refreshed after every
    observation, inputs known to lie in the unit cube.  Every new observation is one
    ``partial_fit``; the forest is never re-grown.
    """

    def __init__(self, n_dims: int, random_state, n_estimators: int = 10,
                 posterior: str = "empirical", min_samples_split: int = 2, K_cap: float = 500.0,
                 **kwargs):
        self.forest = MondrianForestRegressor(
            n_estimators=n_estimators, min_samples_split=min_samples_split, posterior=posterior,
            K_cap=K_cap, feature_bounds=[[0.0, 1.0]] * n_dims, random_state=random_state,
            **kwargs)
        self._n = 0

    def observe(self, X, y, n_new):
        if n_new == 0:
            return
        if self._n == 0:
            self.forest.fit(X, y)
        else:
            self.forest.partial_fit(X[-n_new:], y[-n_new:])
        self._n = X.shape[0]

    @property
    def ready(self):
        return self._n > 0

    def predict(self, X):
        return self.forest.predict(X, return_std=True)

    def predict_per_tree(self, X):
        return self.forest.predict_per_tree(X)


def smac_log_transform(y: np.ndarray, values: np.ndarray | None = None) -> np.ndarray:
    """SMAC3's log scaling of losses: ``log((v - min') / (max - min'))``.

    ``min' = min(y) - (p5 - min(y)) - 1e-10`` with ``p5`` the 5th percentile of ``y``.
    """
    y = np.asarray(y, dtype=float)
    v = y if values is None else np.asarray(values, dtype=float)
    lo, hi = float(y.min()), float(y.max())
    p5 = float(np.percentile(y, 5))
    shifted_min = lo - (p5 - lo) - 1e-10
    denom = max(hi - shifted_min, 1e-10)
    return np.log(np.maximum(v - shifted_min, 1e-300) / denom)


class SMACForestModel(Model):
    """SMAC3 2.4's HPO-facade surrogate: random forest on log-scaled losses, refit every
    ``retrain_after`` observations (8 in SMAC3; 1 refits after every observation), log-EI,
    20 % random interleaving."""

    default_acquisition = "lognormal-ei"

    def __init__(self, n_dims: int, random_state, retrain_after: int = 8, log_y: bool = True,
                 random_interleave: float = 0.2, n_estimators: int = 10):
        if retrain_after < 1:
            raise ValueError(f"retrain_after must be >= 1, got {retrain_after}.")
        self.retrain_after = int(retrain_after)
        self.log_y = bool(log_y)
        self.random_interleave = float(random_interleave)
        self._rng = np.random.default_rng(random_state)
        self.n_estimators = n_estimators
        self.forest = None
        self._since = 0
        self._y = None

    def observe(self, X, y, n_new):
        self._since += n_new
        if self.forest is None or self._since >= self.retrain_after:
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

    def with_lies(self, X, y, X_lie, y_lie):
        other = copy.copy(self)
        other.retrain_after = 1  # every lie is seen at once
        other._rng = np.random.default_rng(self._rng.integers(0, 2**63 - 1))
        other._aug = (np.asarray(X, dtype=float), np.asarray(y, dtype=float))
        other.add_lies(X_lie, y_lie)
        return other


class RandomModel(Model):
    """Random search: every suggestion is uniformly random."""

    random_interleave = 1.0
    is_informative = False

    def __init__(self, n_dims: int, random_state):
        pass

    def observe(self, X, y, n_new):
        pass

    @property
    def ready(self):
        return False

    def predict(self, X):  # pragma: no cover - never asked
        raise RuntimeError("random search has no model")

    def with_lies(self, X, y, X_lie, y_lie):
        return self

    def add_lies(self, X_lie, y_lie):
        pass


class EstimatorModel(Model):
    """Any estimator with ``fit`` and ``predict(X, return_std=True)``.

    If it has ``partial_fit``, new observations are passed to it one batch at a time; otherwise
    it is refitted on all data after every observation.  ``predict_per_tree`` is used for
    Thompson sampling when the estimator has it.
    """

    def __init__(self, estimator):
        for attr in ("fit", "predict"):
            if not callable(getattr(estimator, attr, None)):
                raise TypeError(f"surrogate must be a name in {sorted(SURROGATES)} or an object "
                                f"with fit and predict(X, return_std=True); {estimator!r} has no "
                                f"{attr}.")
        self.estimator = estimator
        self._n = 0
        if hasattr(estimator, "predict_per_tree"):
            self.predict_per_tree = estimator.predict_per_tree

    def observe(self, X, y, n_new):
        if n_new == 0:
            return
        if self._n > 0 and callable(getattr(self.estimator, "partial_fit", None)):
            self.estimator.partial_fit(X[-n_new:], y[-n_new:])
        else:
            self.estimator.fit(X, y)
        self._n = X.shape[0]

    @property
    def ready(self):
        return self._n > 0

    def predict(self, X):
        mean, std = self.estimator.predict(X, return_std=True)
        return np.asarray(mean, dtype=float).ravel(), np.asarray(std, dtype=float).ravel()


SURROGATES: dict[str, Callable[..., Model]] = {
    "mondrian": MondrianModel,
    "rf-smac": SMACForestModel,
    "random": RandomModel,
}


def default_n_initial(surrogate, n_dims: int) -> int:
    """The surrogate's default initial-design size for a space of ``n_dims`` dimensions."""
    if isinstance(surrogate, str) and surrogate.lower() in SURROGATES:
        return SURROGATES[surrogate.lower()].default_n_initial(n_dims)
    return Model.default_n_initial(n_dims)


def make_model(surrogate, n_dims: int, random_state, options: dict | None = None) -> Model:
    """Build the model for ``surrogate`` (a registered name or an estimator object)."""
    options = dict(options or {})
    if isinstance(surrogate, str):
        key = surrogate.lower()
        if key not in SURROGATES:
            raise ValueError(f"surrogate must be one of {sorted(SURROGATES)} or an estimator "
                             f"object, got {surrogate!r}.")
        try:
            return SURROGATES[key](n_dims, random_state, **options)
        except TypeError as exc:
            raise TypeError(f"surrogate_options for {key!r}: {exc}") from None
    if options:
        raise ValueError("surrogate_options only apply to a named surrogate.")
    return EstimatorModel(copy.deepcopy(surrogate))
