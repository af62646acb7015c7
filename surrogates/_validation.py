"""Input and parameter validation shared by the estimators.

Every check raises a ``ValueError``/``TypeError`` whose message names the offending argument,
and runs before any state is touched, so a rejected call leaves the model as it was.
"""

from __future__ import annotations

import numbers
import warnings

import numpy as np
from sklearn.exceptions import DataConversionWarning
from sklearn.utils.validation import check_array


def check_X(X, name: str = "X", n_features: int | None = None, estimator=None,
            check_finite: bool = True) -> np.ndarray:
    """A 2-D float64 array with ``n_features`` columns (when given), finite unless the caller
    checks that itself (``check_finite=False``, only honoured for float64 arrays)."""
    if isinstance(X, np.ndarray) and X.dtype == np.float64 and X.ndim == 2 and X.shape[0] > 0 \
            and X.shape[1] > 0:
        # fast path for the online loop: one point per call must stay cheap
        if check_finite and not np.isfinite(X).all():
            raise ValueError(f"Input {name} contains NaN or infinity.")
    else:
        try:
            X = check_array(X, dtype=np.float64, input_name=name, estimator=estimator)
        except (TypeError, ValueError) as exc:
            if name in str(exc):
                raise
            raise type(exc)(f"Input {name}: {exc}") from None
    if n_features is not None and X.shape[1] != n_features:
        est = type(estimator).__name__ if estimator is not None else "the model"
        raise ValueError(f"{name} has {X.shape[1]} features, but {est} is expecting "
                         f"{n_features} features as input.")
    return X


def check_target(y, n_samples: int, name: str = "y") -> np.ndarray:
    """A finite 1-D float64 target of length ``n_samples`` (a column vector is accepted)."""
    if y is None:
        raise ValueError(f"This estimator requires y to be passed, but the target {name} is None.")
    if not (isinstance(y, np.ndarray) and y.dtype == np.float64 and y.ndim == 1):
        if isinstance(y, (str, bytes)):
            raise ValueError(f"Input {name} must be numeric, got a string.")
        try:
            y = np.asarray(y, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"Input {name} must be numeric: {exc}") from None
        if y.ndim == 2 and y.shape[1] == 1:
            warnings.warn(f"A column-vector {name} was passed when a 1d array was expected. "
                          f"Please change the shape of {name} to (n_samples,).",
                          DataConversionWarning, stacklevel=3)
            y = y[:, 0]
        if y.ndim != 1:
            raise ValueError(f"Input {name} must be 1-D (one target per sample), "
                             f"got shape {y.shape}.")
    if y.shape[0] != n_samples:
        raise ValueError(f"Input {name} has {y.shape[0]} samples, but X has {n_samples}.")
    if not np.isfinite(y).all():
        raise ValueError(f"Input {name} contains NaN or infinity.")
    return y


def check_int(value, name: str, low: int, high=None) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {value!r}.")
    if value < low or (high is not None and value > high):
        rng = f">= {low}" if high is None else f"in [{low}, {high}]"
        raise ValueError(f"{name} must be {rng}, got {value}.")
    return int(value)


def check_positive(value, name: str, allow_inf: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {value!r}.")
    value = float(value)
    if not (value > 0) or (np.isinf(value) and not allow_inf):
        kind = "a positive number" + (" or inf" if allow_inf else "")
        raise ValueError(f"{name} must be {kind}, got {value}.")
    return value


def check_choice(value, name: str, choices) -> str:
    if value not in choices:
        raise ValueError(f"{name} must be one of {sorted(choices)}, got {value!r}.")
    return value


def check_bounds(bounds, n_features: int, name: str = "feature_bounds"):
    """``(lower, scale)`` arrays from user bounds given as ``(n_features, 2)`` pairs."""
    try:
        b = np.asarray(bounds, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be an array of (low, high) pairs.") from None
    if b.ndim != 2 or b.shape != (n_features, 2):
        raise ValueError(f"{name} must have shape ({n_features}, 2), one (low, high) pair per "
                         f"feature; got shape {b.shape}.")
    if not np.isfinite(b).all() or np.any(b[:, 1] <= b[:, 0]):
        raise ValueError(f"{name} must be finite with low < high for every feature.")
    return b[:, 0].copy(), (b[:, 1] - b[:, 0]).copy()


def seed_sequence(random_state) -> np.random.SeedSequence:
    """A ``SeedSequence`` from ``None``, an int, a ``SeedSequence``, ``RandomState`` or
    ``Generator`` (the latter two are advanced by one draw)."""
    if random_state is None:
        return np.random.SeedSequence()
    if isinstance(random_state, np.random.SeedSequence):
        return random_state
    if isinstance(random_state, numbers.Integral) and not isinstance(random_state, bool):
        if random_state < 0:
            raise ValueError(f"random_state must be a non-negative integer, got {random_state}.")
        return np.random.SeedSequence(int(random_state))
    if isinstance(random_state, np.random.RandomState):
        return np.random.SeedSequence(int(random_state.randint(0, 2**31 - 1)))
    if isinstance(random_state, np.random.Generator):
        return np.random.SeedSequence(int(random_state.integers(0, 2**63 - 1)))
    raise TypeError(f"random_state must be None, an int, a SeedSequence, a RandomState or a "
                    f"Generator; got {type(random_state).__name__}.")
