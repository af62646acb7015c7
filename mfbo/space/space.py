"""Search spaces: named dimensions mapped to and from the unit cube.

A space is built from a dict ``name -> dimension``; ``(low, high)`` tuples are shorthand for
:class:`~mfbo.space.dimensions.Real`.  Internally every configuration is a point of
``[0, 1]^D`` (see :mod:`mfbo.space.dimensions`).  :func:`mfbo.from_configspace` builds a space
from a ConfigSpace ``ConfigurationSpace``.
"""

from __future__ import annotations

import math
from typing import Any, Mapping

import numpy as np

from acquisitions import snap

from .dimensions import Categorical, Dimension, Integer, Ordinal, Real, as_dimension, check_name

__all__ = ["Space", "as_space"]


class Space:
    """An ordered mapping ``name -> Dimension`` with the unit-cube encoding.

    ``(low, high)`` is a :class:`Real` (an :class:`Integer` when both are ints); a list is a
    :class:`Categorical`; :class:`Ordinal` is an ordered list of values.
    """

    def __init__(self, dimensions: Mapping[str, Any]):
        if isinstance(dimensions, Space):
            dimensions = dimensions.dimensions
        if not isinstance(dimensions, Mapping):
            raise TypeError(f"space must be a dict name -> dimension, got {type(dimensions).__name__}.")
        if len(dimensions) == 0:
            raise ValueError("space must have at least one dimension.")
        dims = {}
        for name, spec in dimensions.items():
            check_name(name)
            dims[name] = as_dimension(name, spec)
        self.dimensions: dict[str, Dimension] = dims
        self.names = list(dims)
        self.levels = np.array([d.levels for d in dims.values()], dtype=np.int64)

    def __len__(self):
        return len(self.names)

    def __repr__(self):
        return "Space({" + ", ".join(f"{n!r}: {d!r}" for n, d in self.dimensions.items()) + "})"

    def __eq__(self, other):
        return isinstance(other, Space) and self.to_json() == other.to_json()

    def to_json(self) -> dict:
        return {n: d.to_json() for n, d in self.dimensions.items()}

    @classmethod
    def from_json(cls, data: dict) -> "Space":
        dims = {}
        for n, d in data.items():
            t = d["type"]
            if t == "real":
                dims[n] = Real(d["low"], d["high"], d["log"])
            elif t == "integer":
                dims[n] = Integer(d["low"], d["high"], d["log"])
            elif t == "ordinal":
                dims[n] = Ordinal(d["choices"])
            else:
                dims[n] = Categorical(d["choices"])
        return cls(dims)

    def validate(self, params: Mapping[str, Any]) -> dict:
        """Check names, types and bounds of one configuration; returns a normalised copy."""
        if not isinstance(params, Mapping):
            raise TypeError(f"params must be a dict, got {type(params).__name__}.")
        unknown = [k for k in params if k not in self.dimensions]
        if unknown:
            raise ValueError(f"unknown parameter(s) {unknown}; the space has {self.names}.")
        missing = [k for k in self.names if k not in params]
        if missing:
            raise ValueError(f"missing parameter(s) {missing}.")
        return {n: d.validate(n, params[n]) for n, d in self.dimensions.items()}

    def to_unit(self, rows) -> np.ndarray:
        """Unit-cube matrix of a list of configuration dicts or a DataFrame (validated)."""
        if hasattr(rows, "to_dict") and hasattr(rows, "columns"):
            missing = [n for n in self.names if n not in rows.columns]
            if missing:
                raise ValueError(f"candidates lack column(s) {missing}.")
            rows = rows[self.names].to_dict("records")
        if isinstance(rows, Mapping):
            rows = [rows]
        rows = [self.validate(r) for r in rows]
        U = np.empty((len(rows), len(self)))
        for d, (n, dim) in enumerate(self.dimensions.items()):
            U[:, d] = dim.to_unit([r[n] for r in rows]) if rows else 0
        return U

    def from_unit(self, U: np.ndarray) -> list[dict]:
        """Configuration dicts of unit-cube rows (values clipped and rounded to the space)."""
        U = np.atleast_2d(np.asarray(U, dtype=float))
        cols = [dim.from_unit(U[:, d]) for d, dim in enumerate(self.dimensions.values())]
        return [{n: cols[d][i] for d, n in enumerate(self.names)} for i in range(U.shape[0])]

    def array_to_unit(self, X) -> np.ndarray:
        """Unit-cube matrix of a numeric array whose columns follow ``names`` (fast path)."""
        X = np.asarray(X)
        if X.ndim != 2 or X.shape[1] != len(self):
            raise ValueError(f"candidates must have shape (n, {len(self)}), got {X.shape}.")
        # floats hold every integer only up to 2**53: integers beyond go the exact way too
        if X.dtype == object or any(
                isinstance(d, Categorical) or
                isinstance(d, Integer) and max(-d.low, d.high) > 2 ** 53
                for d in self.dimensions.values()):
            return self.to_unit([dict(zip(self.names, r)) for r in X.tolist()])
        if X.dtype.kind == "b":
            raise TypeError("candidates must hold numbers, got booleans.")
        X = X.astype(float)
        for d, (n, dim) in enumerate(self.dimensions.items()):
            lo, hi = dim.low, dim.high
            bad = ~((X[:, d] >= lo) & (X[:, d] <= hi))
            if bad.any():
                raise ValueError(f"candidates column {n!r} has values outside [{lo}, {hi}] "
                                 f"(e.g. {X[bad, d][0]}).")
            if isinstance(dim, Integer) and not np.all(X[:, d] == np.round(X[:, d])):
                raise ValueError(f"candidates column {n!r} must hold integers.")
        return np.column_stack([dim.to_unit(X[:, d]) for d, dim in enumerate(self.dimensions.values())])

    def sample(self, n: int, rng: np.random.Generator, kind: str = "random") -> np.ndarray:
        """``n`` unit-cube points: ``"random"``, ``"sobol"`` (scrambled) or ``"lhs"``."""
        D = len(self)
        if kind == "random":
            U = rng.random((n, D))
        elif kind == "sobol":
            from scipy.stats import qmc  # slow to import: on use

            m = max(1, int(2 ** math.ceil(math.log2(max(n, 1)))))
            U = qmc.Sobol(D, scramble=True, seed=rng).random(m)[:n]
        elif kind == "lhs":
            from scipy.stats import qmc

            U = qmc.LatinHypercube(D, seed=rng).random(n)
        else:
            raise ValueError(f"initial_design must be 'sobol', 'random' or 'lhs', got {kind!r}.")
        return snap(U, self.levels)


def as_space(space) -> Space:
    return space if isinstance(space, Space) else Space(space)
