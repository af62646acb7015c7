"""The interface a surrogate model offers the optimizer, and the models that need no forest.

A model is told about observations incrementally (``observe``) and predicts the loss at unit-cube
points.  The optimizer keeps the data; a model decides how to use it.  How a model is used to
propose points (acquisition, initial design, the proposal's steps) is not the model's
business: that is its :class:`~mfbo.proposal.recipes.Recipe`.  Add a surrogate by subclassing
:class:`Model` and naming it with :func:`mfbo.register_surrogate`; any object with ``fit`` and
``predict(X, return_std=True)`` (plus, optionally, ``partial_fit``) is wrapped as it is
(:class:`EstimatorModel`).
"""

from __future__ import annotations

import copy

import numpy as np


__all__ = ["Model", "RandomModel", "EstimatorModel", "missing_method"]


class Model:
    """Interface: ``observe``, ``predict``, optional ``predict_per_tree``, ``with_lies``."""

    #: True when predictions are meaningful (random search: never)
    is_informative = True
    #: the probability of a random proposal in the recipe the model was built from (set by
    #: :meth:`mfbo.proposal.recipes.Recipe.build_model`; the proposal policy reads the recipe)
    random_interleave = 0.0
    #: whether the model's state depends on how its observations were grouped in calls of
    #: :meth:`observe` (an online model); the proposer then feeds them one at a time, so the
    #: state is that of the observations in the order told alone: the same after a study is
    #: reopened, or whenever other workers' trials were read
    one_at_a_time = False
    #: in a constant liar's copy (:meth:`with_lies`), the observations it was made from plus
    #: its lies; None in a model told only real observations
    _aug = None

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

    def to_model_scale(self, values) -> np.ndarray:
        """``values`` (losses) on the scale the model predicts (its output transform's;
        monotone increasing), as the last observations set it."""
        return np.asarray(values, dtype=float)

    def set_levels(self, levels) -> None:
        """Told the search space's per-coordinate kinds once, before any observation (0:
        continuous, k > 0: an ordered coordinate of k levels, -k: a categorical one of k
        choices).  Does nothing unless a model has a use for them."""

    def on_repeated_loss(self) -> None:
        """Called once, before the observations that include it are passed to
        :meth:`observe`, when two complete trials of the study have returned exactly the same
        loss (a plateau problem).  Does nothing unless a model has a use for it."""

    def on_targets_changed(self) -> None:
        """Called before :meth:`observe` when the losses of observations told before have
        changed (an infeasible trial's loss raised to another best feasible loss): the next
        :meth:`observe` must not keep what they were.  Does nothing unless a model keeps them
        between calls."""

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


class RandomModel(Model):
    """Random search: no model, every suggestion is uniformly random."""

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
        missing = missing_method(estimator)
        if missing:
            raise TypeError(f"estimator must have fit and predict(X, return_std=True); "
                            f"{estimator!r} has no {missing}.")
        self.estimator = estimator
        self._n = 0
        # (an estimator refitted on every observation has one state whatever the grouping)
        self.one_at_a_time = callable(getattr(estimator, "partial_fit", None))
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

    def on_targets_changed(self) -> None:
        self._n = 0  # fitted afresh at the next observation, not updated

    @property
    def ready(self):
        return self._n > 0

    def predict(self, X):
        mean, std = self.estimator.predict(X, return_std=True)
        return np.asarray(mean, dtype=float).ravel(), np.asarray(std, dtype=float).ravel()


def missing_method(estimator) -> str | None:
    """The first of ``fit`` and ``predict`` that ``estimator`` lacks, or None."""
    for attr in ("fit", "predict"):
        if not callable(getattr(estimator, attr, None)):
            return attr
    return None
