"""Input and parameter validation shared by the estimators.

Every check raises a ``ValueError``/``TypeError`` whose message names the offending argument,
and runs before any state is touched, so a rejected call leaves the model as it was.
"""

from __future__ import annotations

import math
import numbers
import warnings

import numpy as np

# scikit-learn is imported only for input that is not already a float64 array (its conversion
# of other input, and its reading of data frames' column names) and for its warning class:
# fitting and predicting on arrays imports none of it (about two seconds)

_FITTED = object()  # check_X default: compare with the estimator's ``feature_names_in_``
_MISSING = object()


def feature_names(X) -> np.ndarray | None:
    """The column names of a data frame ``X`` as scikit-learn reads them (an object array of
    strings), or ``None`` for arrays and frames without string names.  Mixed string and
    non-string names raise ``TypeError``."""
    if isinstance(X, np.ndarray):
        return None
    # scikit-learn's own reading of column names (pandas and other data frames), so that names
    # are accepted and compared exactly as its estimators do; its public API offers it only
    # bundled with setting attributes on the estimator, which a rejected call must not do
    from sklearn.utils.validation import _get_feature_names

    return _get_feature_names(X)


def set_feature_names(estimator, names) -> None:
    """Record the column names of the data ``estimator`` was fitted on (``feature_names_in_``),
    or forget those of an earlier fit when the new data has none, as scikit-learn does."""
    if names is not None:
        estimator.feature_names_in_ = names
    else:
        estimator.__dict__.pop("feature_names_in_", None)


def _list_names(names, limit: int = 10) -> str:
    shown = ", ".join(repr(str(n)) for n in names[:limit])
    return f"[{shown}{', ...' if len(names) > limit else ''}]"


def check_feature_names(X, name: str, fitted, estimator) -> None:
    """scikit-learn's feature-name check of a fitted estimator, without changing it.

    Data with other names than the fit, or the same names in another order, is refused:
    its columns would be read as the wrong features.  Names on one side only give a
    ``UserWarning`` (the columns are then taken by position), as in scikit-learn.
    """
    given = feature_names(X)
    if given is None and fitted is None:
        return
    est = type(estimator).__name__
    if fitted is None:
        warnings.warn(f"{name} has feature names, but {est} was fitted without feature names",
                      UserWarning, stacklevel=4)
        return
    if given is None:
        warnings.warn(f"{name} does not have valid feature names, but {est} was fitted with "
                      f"feature names", UserWarning, stacklevel=4)
        return
    if len(given) == len(fitted) and np.all(given == fitted):
        return
    # the message starts as scikit-learn's, so that code matching on it keeps working
    msg = "The feature names should match those that were passed during fit.\n"
    unexpected = sorted(set(given) - set(fitted))
    missing = sorted(set(fitted) - set(given))
    for title, names in (("Feature names unseen at fit time:\n", unexpected),
                         ("Feature names seen at fit time, yet now missing:\n", missing)):
        if names:
            msg += title + "".join(f"- {n}\n" for n in names[:5]) + ("- ...\n" if len(names) > 5
                                                                    else "")
    if not unexpected and not missing:
        msg += "Feature names must be in the same order as they were in fit.\n"
    msg += (f"Input {name} has columns {_list_names(given)}, but {est} was fitted on "
            f"{_list_names(fitted)}.")
    raise ValueError(msg)


def check_X(X, name: str = "X", n_features: int | None = None, estimator=None,
            check_finite: bool = True, names=_FITTED) -> np.ndarray:
    """A 2-D float64 array with ``n_features`` columns (when given), finite unless the caller
    checks that itself (``check_finite=False``, only honoured for float64 arrays).

    With ``n_features`` and ``estimator`` given (data for a fitted estimator) the column
    names of a data frame are checked first against ``names``, by default the estimator's
    ``feature_names_in_`` (see :func:`check_feature_names`).
    """
    if n_features is not None and estimator is not None:
        fitted = estimator.__dict__.get("feature_names_in_") if names is _FITTED else names
        if fitted is not None or not isinstance(X, np.ndarray):
            check_feature_names(X, name, fitted, estimator)
    if isinstance(X, np.ndarray) and X.dtype == np.float64 and X.ndim == 2 and X.shape[0] > 0 \
            and X.shape[1] > 0:
        # fast path for the online loop: one point per call must stay cheap
        if check_finite and not np.isfinite(X).all():
            raise ValueError(f"Input {name} contains NaN or infinity.")
    else:
        from sklearn.utils.validation import check_array

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
            from sklearn.exceptions import DataConversionWarning

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


def unchanged_since(estimator, snapshot) -> bool:
    """Whether every parameter is still the very object recorded in ``snapshot``, a tuple of
    ``(name, value)`` pairs (``None``: nothing recorded).  Identity, not equality: cheap enough
    for every online update, and a parameter set again to an equal value is merely checked
    again."""
    if snapshot is None:
        return False
    params = estimator.__dict__
    for name, value in snapshot:
        if params.get(name, _MISSING) is not value:
            return False
    return True


def _same_value(a, b) -> bool:
    if a is b:
        return True
    if a is None or b is None or isinstance(a, (str, bytes)) or isinstance(b, (str, bytes)):
        return type(a) is type(b) and a == b
    if isinstance(a, numbers.Number) and isinstance(b, numbers.Number):
        return bool(a == b)
    try:  # array-likes (bounds, weights) compare by value
        aa, bb = np.asarray(a), np.asarray(b)
    except (TypeError, ValueError):
        return False
    if aa.dtype == object or bb.dtype == object:
        return False  # random states and other objects: the same object only
    return aa.shape == bb.shape and bool(np.array_equal(aa, bb))


def check_unchanged(estimator, fitted: dict | None) -> None:
    """Refuse to update a fitted model online after a parameter that ``fit`` applied (one of
    ``fitted``, a dict of the values at the last fit) was changed with ``set_params``.

    Such a parameter shapes what was fitted (the trees, their random streams, the feature
    scaling); continuing would silently ignore it or mix two models.
    """
    if not fitted:
        return
    for name, old in fitted.items():
        new = getattr(estimator, name)
        if not _same_value(old, new):
            raise ValueError(
                f"{name} was changed from {old!r} to {new!r} since the last fit; it shapes the "
                f"fitted {type(estimator).__name__}, so partial_fit cannot apply it. Call fit "
                f"to refit with the new value (or set it back); until then predictions use "
                f"the fitted model.")


def check_int(value, name: str, low: int, high=None) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {value!r}.")
    if value < low or (high is not None and value > high):
        rng = f">= {low}" if high is None else f"in [{low}, {high}]"
        raise ValueError(f"{name} must be {rng}, got {value}.")
    return int(value)


def check_positive(value, name: str, allow_inf: bool = False) -> float:
    if type(value) is float and 0.0 < value and (allow_inf or value != math.inf):
        return value  # the common case first: checked on every prediction
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
    with np.errstate(over="ignore"):  # a range beyond float64 is inf (the forests halve it)
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
