"""scikit-learn's estimator protocol, without importing scikit-learn.

The forests take their parameters, printed form, pickling and estimator tags from these
classes instead of scikit-learn's ``BaseEstimator`` and mixins, so that importing a forest
and fitting it does not import scikit-learn (about two seconds on a fresh process: it imports
``scipy.stats`` and pandas).  scikit-learn's tools (``clone``, pipelines, searches,
cross-validation, ``is_regressor``, its estimator checks) use only these methods, and work as
with its own base classes; the methods only scikit-learn calls (the tags, ``score``) import
it then.  What differs: ``isinstance(forest, sklearn.base.BaseEstimator)`` is false, and a
notebook shows the printed form rather than scikit-learn's HTML diagram.
"""

from __future__ import annotations

import inspect
import math

__all__ = ["BaseEstimator", "ClassifierMixin", "RegressorMixin", "not_fitted_error"]


def not_fitted_error(message: str) -> Exception:
    """scikit-learn's ``NotFittedError`` (a ``ValueError`` and ``AttributeError``) with
    ``message``, so that code catching it keeps working."""
    from sklearn.exceptions import NotFittedError

    return NotFittedError(message)


def _is_nan(value) -> bool:
    return isinstance(value, float) and math.isnan(value)


class BaseEstimator:
    """Parameters are the constructor's arguments, stored unchanged as attributes of the same
    names (scikit-learn's convention)."""

    @classmethod
    def _get_param_names(cls) -> list:
        """The constructor's parameter names, sorted."""
        init = cls.__init__
        if init is object.__init__:
            return []
        params = [p for p in inspect.signature(init).parameters.values()
                  if p.name != "self" and p.kind != p.VAR_KEYWORD]
        for p in params:
            if p.kind == p.VAR_POSITIONAL:
                raise RuntimeError(f"{cls.__name__} should not take *args in its constructor "
                                   f"(scikit-learn's convention: parameters are named).")
        return sorted(p.name for p in params)

    def get_params(self, deep: bool = True) -> dict:
        """The parameters, by name; with ``deep``, also those of parameters that are
        estimators themselves, as ``name__parameter``."""
        out = {}
        for key in self._get_param_names():
            value = getattr(self, key)
            if deep and hasattr(value, "get_params") and not isinstance(value, type):
                out.update((f"{key}__{k}", v) for k, v in value.get_params().items())
            out[key] = value
        return out

    def set_params(self, **params):
        """Set parameters by name (``name__parameter`` for a nested estimator's); an unknown
        name raises ``ValueError`` and sets nothing."""
        if not params:
            return self
        valid = self.get_params(deep=True)
        own, nested = {}, {}
        for key, value in params.items():
            name, delim, sub = key.partition("__")
            if name not in valid:
                raise ValueError(f"Invalid parameter {name!r} for estimator {self}. Valid "
                                 f"parameters are: {self._get_param_names()!r}.")
            if delim:
                nested.setdefault(name, {})[sub] = value
            else:
                own[name] = value
        for name, value in own.items():
            setattr(self, name, value)
        for name, sub in nested.items():
            getattr(self, name).set_params(**sub)
        return self

    def __repr__(self) -> str:
        """``Name(param=value, ...)`` with the parameters that differ from their defaults."""
        init = type(self).__init__
        defaults = ({} if init is object.__init__ else
                    {p.name: p.default for p in inspect.signature(init).parameters.values()
                     if p.default is not p.empty})
        shown = []
        for key, value in self.get_params(deep=False).items():
            if key in defaults:
                default = defaults[key]
                if repr(value) == repr(default) or (_is_nan(value) and _is_nan(default)):
                    continue
            shown.append(f"{key}={value!r}")
        return f"{type(self).__name__}({', '.join(shown)})"

    def __getstate__(self) -> dict:
        return self.__dict__.copy()

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)

    def __sklearn_tags__(self):
        from sklearn.base import BaseEstimator as SklearnEstimator

        # (scikit-learn's base tags, built by its own method: they follow its version)
        return SklearnEstimator.__sklearn_tags__(self)


class _KindMixin:
    """An estimator of one kind: its scikit-learn tags and its ``score``."""

    _kind = _kind_tags = _metric = ""  # "regressor", "RegressorTags", "r2_score"

    def __sklearn_tags__(self):
        import sklearn.utils

        tags = super().__sklearn_tags__()
        tags.estimator_type = self._kind
        setattr(tags, f"{self._kind}_tags", getattr(sklearn.utils, self._kind_tags)())
        tags.target_tags.required = True
        return tags

    def score(self, X, y, sample_weight=None) -> float:
        """The score of ``self.predict(X)`` against ``y``: R^2 for a regressor, the mean
        accuracy for a classifier."""
        import sklearn.metrics

        metric = getattr(sklearn.metrics, self._metric)
        return metric(y, self.predict(X), sample_weight=sample_weight)


class RegressorMixin(_KindMixin):
    """A regressor: scikit-learn's regressor tags, ``score`` the R^2 of ``predict``."""

    _kind, _kind_tags, _metric = "regressor", "RegressorTags", "r2_score"


class ClassifierMixin(_KindMixin):
    """A classifier: scikit-learn's classifier tags, ``score`` the accuracy of ``predict``."""

    _kind, _kind_tags, _metric = "classifier", "ClassifierTags", "accuracy_score"
