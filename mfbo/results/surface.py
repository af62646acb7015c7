"""The response surface that partial dependence and importance describe.

A surface is the mean prediction of a surrogate as a function of unit-cube points (the space's
encoding, :mod:`mfbo.space`), and it is averaged over the *search measure*: the distribution
the optimizer samples the space from (uniform in each continuous coordinate, hence in
``log(x)`` for a log dimension; every integer, choice or ordinal value equally likely; a log
integer uniform in ``log(x)`` then rounded).

In a conditional space (``space.constrained``) the search measure is that of
:meth:`Space.sample`: a point of the cube drawn as above, made canonical (its inactive
coordinates set to :attr:`Space.inactive_unit`) and kept only when allowed (no forbidden
condition holds).  The cube point before it is made canonical holds a value for every
dimension, active or not; :func:`search_sample` draws such points, so that setting one
coordinate (a parent's value, in a partial dependence) can activate a child, which then has
its own value.  A surface is only ever evaluated at canonical, allowed points, the
configurations a model was fitted to and asked about.
"""

from __future__ import annotations

import math
from typing import Callable

import numpy as np

from acquisitions import snap

from .._core.arguments import check_int
from ..proposal.models import Model
from ..space import Real, Space

__all__ = ["MeanFunction", "fit_forest", "mean_function", "response_surface", "search_sample",
           "to_search_points", "evaluate"]

#: ``f(U) -> mean`` for unit-cube rows ``U`` of shape ``(n, D)``
MeanFunction = Callable[[np.ndarray], np.ndarray]

#: rows per call of a mean function (bounds the memory of large partial-dependence grids)
CHUNK = 1 << 16


def fit_forest(result, random_state=0, n_estimators: int = 10, min_samples_split: int = 2):
    """A Mondrian forest fitted to the complete trials of ``result``.

    The forest is the one the ``"mondrian"`` surrogate uses (``n_estimators`` trees,
    ``min_samples_split=2``, empirical posterior, inputs the unit-cube encoding of the
    parameters), fitted to the losses as they are, so that a figure of its mean is in the
    objective's units (the optimizer's own model sees transformed losses).  Failed trials are
    left out.  With a larger ``min_samples_split`` a node of fewer trials is not split, so
    that a leaf's mean pools neighbours instead of repeating one trial's value.
    """
    from surrogates import MondrianForestRegressor

    objectives = getattr(result, "objectives", None)
    if objectives is not None and objectives.multi:
        raise ValueError("result has several objectives; fit one of them: "
                         "result.for_objective(name).")
    done = [t for t in result.trials if t.state == "complete"]
    if not done:
        raise ValueError("result has no complete trial to fit a surrogate to.")
    space = result.space
    X = space.to_unit([t.params for t in done])
    y = np.array([t.value for t in done], dtype=float)
    forest = MondrianForestRegressor(
        n_estimators=check_int(n_estimators, "n_estimators"),
        min_samples_split=check_int(min_samples_split, "min_samples_split", minimum=2),
        feature_bounds=[[0.0, 1.0]] * len(space), random_state=random_state)
    return forest.fit(X, y)


def mean_function(model) -> MeanFunction:
    """``f(U) -> mean`` of ``model``: an mfbo :class:`~mfbo.proposal.models.Model` (e.g.
    ``Optimizer.model``; its mean is on the model's own output scale), any fitted estimator
    whose ``predict(U)`` takes unit-cube rows, or a callable ``f(U)``."""
    if isinstance(model, Model):
        if not model.is_informative:
            raise ValueError(f"model {type(model).__name__} makes no predictions (random "
                             f"search); pass a fitted surrogate or None.")
        if not model.ready:
            raise ValueError(f"model {type(model).__name__} has seen no observation yet.")
        return lambda U: np.asarray(model.predict(U)[0], dtype=float).ravel()
    predict = getattr(model, "predict", None)
    if callable(predict):
        return lambda U: np.asarray(predict(U), dtype=float).ravel()
    if callable(model):
        return lambda U: np.asarray(model(U), dtype=float).ravel()
    raise TypeError(f"model must be None, an mfbo Model, an estimator with predict(U) or a "
                    f"callable f(U), got {type(model).__name__}.")


def response_surface(result, model=None, random_state=0) -> MeanFunction:
    """The mean function of ``model``, or of a forest fitted to ``result``
    (:func:`fit_forest`) when ``model`` is None."""
    if model is None:
        model = fit_forest(result, random_state=random_state)
    return mean_function(model)


def evaluate(f: MeanFunction, U: np.ndarray) -> np.ndarray:
    """``f`` at the rows of ``U``, ``CHUNK`` rows per call; a non-finite mean is an error."""
    out = np.empty(U.shape[0])
    for a in range(0, U.shape[0], CHUNK):
        v = f(U[a:a + CHUNK])
        if v.shape != (min(CHUNK, U.shape[0] - a),):
            raise ValueError(f"model returned {v.shape[0]} means for {U[a:a + CHUNK].shape[0]} "
                             f"points.")
        out[a:a + CHUNK] = v
    if not np.all(np.isfinite(out)):
        raise ValueError("model predicts non-finite means.")
    return out


def to_search_points(space: Space, U: np.ndarray) -> np.ndarray:
    """Unit-cube rows moved to points the space can hold: discrete coordinates to their level
    centres, log-integer coordinates to the nearest integer's coordinate."""
    U = snap(U, space.levels)
    for d, dim in enumerate(space.dimensions.values()):
        if space.levels[d] == 0 and not isinstance(dim, Real):
            U[:, d] = dim.to_unit(dim.from_unit(U[:, d]))
    return U


def search_sample(space: Space, n: int, rng: np.random.Generator, copies: int = 1) -> np.ndarray:
    """``n`` scrambled-Sobol points of the search measure, as an ``(n, copies * D)`` matrix
    (``copies`` independent blocks of the space's coordinates, from one Sobol sequence).  In
    a conditional space they are the cube points before they are made canonical: every
    coordinate in ``[0, 1]`` (see the module docstring; :meth:`Space.active_and_allowed`
    says which are active and allowed)."""
    from scipy.stats import qmc  # slow to import: on use

    D = len(space)
    m = 1 << max(0, math.ceil(math.log2(n)))  # Sobol points are balanced in powers of two
    Z = qmc.Sobol(copies * D, scramble=True, seed=rng).random(m)[:n]
    return np.hstack([to_search_points(space, Z[:, c * D:(c + 1) * D]) for c in range(copies)])
