"""Search spaces: named dimensions mapped to and from the unit cube.

A space is built from a dict ``name -> dimension``; ``(low, high)`` tuples are shorthand for
:class:`~mfbo.space.dimensions.Real`.  Internally every configuration is a point of
``[0, 1]^D`` (see :mod:`mfbo.space.dimensions`).  :func:`mfbo.from_configspace` builds a space
from a ConfigSpace ``ConfigurationSpace``.

A space may be conditional: a dimension's ``when=`` condition says where it is active
(elsewhere it is absent from the configuration), and the space's ``forbidden`` conditions
name configurations never proposed (:mod:`mfbo.space.conditions`).  An inactive dimension's
coordinate is :attr:`Space.inactive_unit`, one constant outside ``[0, 1]``: every point has one
canonical form (:meth:`Space.canonical`), and a tree surrogate separates active from
inactive with one cut while its statistics stay shared across the branches.
"""

from __future__ import annotations

import copy
import math
from typing import Any, Mapping

import numpy as np

from acquisitions import snap

from .conditions import Column, as_condition, condition_from_json
from .dimensions import Categorical, Dimension, Integer, Ordinal, Real, as_dimension, check_name

__all__ = ["Space", "as_space"]


class Space:
    """An ordered mapping ``name -> Dimension`` with the unit-cube encoding.

    ``(low, high)`` is a :class:`Real` (an :class:`Integer` when both are ints); a list is a
    :class:`Categorical`; :class:`Ordinal` is an ordered list of values.

    Parameters
    ----------
    dimensions : dict
        ``name -> dimension``.  A dimension's ``when=`` condition may read only dimensions
        listed before it.
    forbidden : list of conditions, optional
        Configurations where any of them holds are never proposed and are refused as input
        (a condition on an inactive parameter does not hold).
    """

    #: the unit coordinate of an inactive dimension
    inactive_unit = -0.5

    def __init__(self, dimensions: Mapping[str, Any], forbidden=None):
        if isinstance(dimensions, Space):
            if forbidden is None:
                forbidden = dimensions.forbidden
            dimensions = dimensions.dimensions
        if not isinstance(dimensions, Mapping):
            raise TypeError(f"space must be a dict name -> dimension, got {type(dimensions).__name__}.")
        if len(dimensions) == 0:
            raise ValueError("space must have at least one dimension.")
        dims = {}
        for name, spec in dimensions.items():
            check_name(name)
            dim = as_dimension(name, spec)
            if dim.when is not None:  # its constants checked against its parents
                checked = dim.when.checked(dims, f"the condition of {name!r}")
                dim = copy.copy(dim)
                dim.when = checked
            dims[name] = dim
        self.dimensions: dict[str, Dimension] = dims
        self.names = list(dims)
        self._index = {name: d for d, name in enumerate(self.names)}
        self.levels = np.array([d.levels for d in dims.values()], dtype=np.int64)
        if forbidden is None:
            forbidden = ()
        if isinstance(forbidden, Mapping) or not isinstance(forbidden, (list, tuple)):
            raise TypeError(f"forbidden must be a list of conditions, got {forbidden!r}.")
        self.forbidden = tuple(as_condition(f).checked(dims, f"forbidden[{i}]")
                               for i, f in enumerate(forbidden))
        #: the positions of the dimensions with a condition
        self._conditional = [d for d, dim in enumerate(dims.values()) if dim.when is not None]
        # the dimensions sharing one condition (a branch's), evaluated once for all of them
        groups: dict[str, tuple] = {}
        for d in self._conditional:
            cond = self.dimensions[self.names[d]].when
            groups.setdefault(repr(cond.to_json()), (cond, []))[1].append(d)
        self._condition_groups = list(groups.values())
        #: whether some configurations of the cube are inactive in part or forbidden
        self.constrained = bool(self._conditional or self.forbidden)
        if self.forbidden:
            self._check_some_allowed()

    @property
    def conditional(self) -> bool:
        """Whether some parameter has a condition (is inactive in some configurations);
        forbidden configurations alone do not count."""
        return bool(self._conditional)

    def __len__(self):
        return len(self.names)

    def __repr__(self):
        dims = "{" + ", ".join(f"{n!r}: {d!r}" for n, d in self.dimensions.items()) + "}"
        return f"Space({dims}{f', forbidden={list(self.forbidden)!r}' if self.forbidden else ''})"

    def __eq__(self, other):
        return isinstance(other, Space) and self.to_json() == other.to_json()

    #: the key of :meth:`to_json` holding the forbidden conditions (never a parameter name)
    FORBIDDEN_KEY = "!forbidden"

    def to_json(self) -> dict:
        data = {n: d.to_json() for n, d in self.dimensions.items()}
        if self.forbidden:
            data[self.FORBIDDEN_KEY] = [f.to_json() for f in self.forbidden]
        return data

    @classmethod
    def from_json(cls, data: dict) -> "Space":
        dims = {}
        for n, d in data.items():
            if n == cls.FORBIDDEN_KEY:
                continue
            t = d["type"]
            when = condition_from_json(d["when"]) if "when" in d else None
            if t == "real":
                dims[n] = Real(d["low"], d["high"], d["log"], step=d.get("step"), when=when)
            elif t == "integer":
                dims[n] = Integer(d["low"], d["high"], d["log"], step=d.get("step", 1),
                                  when=when)
            elif t == "ordinal":
                dims[n] = Ordinal(d["choices"], when=when)
            else:
                dims[n] = Categorical(d["choices"], when=when)
        forbidden = [condition_from_json(f) for f in data.get(cls.FORBIDDEN_KEY, ())]
        return cls(dims, forbidden=forbidden)

    def validate(self, params: Mapping[str, Any]) -> dict:
        """Check names, types and bounds of one configuration; returns a normalised copy.

        In a conditional space the configuration holds exactly its active parameters: an
        inactive one may be left out (or be NaN or None, as a DataFrame row has it) and is
        left out of the copy; a value for it is refused, as is a forbidden configuration."""
        if not isinstance(params, Mapping):
            raise TypeError(f"params must be a dict, got {type(params).__name__}.")
        unknown = [k for k in params if k not in self.dimensions]
        if unknown:
            raise ValueError(f"unknown parameter(s) {unknown}; the space has {self.names}.")
        if not self.constrained:
            missing = [k for k in self.names if k not in params]
            if missing:
                raise ValueError(f"missing parameter(s) {missing}.")
            return {n: d.validate(n, params[n]) for n, d in self.dimensions.items()}
        out, missing = {}, []
        for n, d in self.dimensions.items():
            if d.when is None or d.when.holds(out):
                if n not in params:
                    missing.append(n)
                elif not missing:
                    out[n] = d.validate(n, params[n])
            elif n in params and not _absent(params[n]):
                raise ValueError(f"parameter {n!r} = {params[n]!r} is given but inactive: its "
                                 f"condition {d.when!r} does not hold; leave it out.")
        if missing:
            raise ValueError(f"missing parameter(s) {missing}.")
        for f in self.forbidden:
            if f.holds(out):
                raise ValueError(f"the configuration {out!r} is forbidden by {f!r}.")
        return out

    # -- conditional spaces --------------------------------------------------------------------
    def active(self, U: np.ndarray) -> np.ndarray:
        """Which dimensions are active in each row of the unit matrix ``U`` (n, D)."""
        return self._decode(np.atleast_2d(np.asarray(U, dtype=float)))[0]

    def canonical(self, U: np.ndarray) -> np.ndarray:
        """A copy of the unit matrix ``U`` with every inactive coordinate set to
        :attr:`inactive_unit`, the one form of each configuration."""
        U = np.array(np.atleast_2d(U), dtype=float)
        if self._conditional:
            U[~self._decode(U)[0]] = self.inactive_unit
        return U

    def allowed(self, U: np.ndarray) -> np.ndarray:
        """Which rows of the unit matrix ``U`` no forbidden condition holds for."""
        U = np.atleast_2d(np.asarray(U, dtype=float))
        if not self.forbidden:
            return np.ones(U.shape[0], dtype=bool)
        return self._allowed(U.shape[0], self._decode(U)[1])

    def active_and_allowed(self, U: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(active(U), allowed(U))``, the unit matrix decoded once."""
        U = np.atleast_2d(np.asarray(U, dtype=float))
        active, column = self._decode(U)
        return active, self._allowed(U.shape[0], column)

    def _allowed(self, n: int, column) -> np.ndarray:
        """Which of ``n`` rows no forbidden condition holds for (``column``: their reader)."""
        ok = np.ones(n, dtype=bool)
        for f in self.forbidden:
            ok &= ~f.mask(column)
        return ok

    def _decode(self, U: np.ndarray):
        """``(active, column)`` of a unit matrix: the active matrix, and the reader
        ``column(name) -> Column`` the conditions' masks take (each column made once)."""
        n, D = U.shape
        active = np.ones((n, D), dtype=bool)
        columns: dict[int, Column] = {}
        index = self._index
        dims = list(self.dimensions.values())

        def column(name):
            d = index[name]
            if d not in columns:
                columns[d] = Column(dims[d], U[:, d], active[:, d])
            return columns[d]

        for cond, group in self._condition_groups:
            active[:, group] = cond.mask(column)[:, None]
        return active, column

    def _check_some_allowed(self) -> None:
        """Refuse forbidden conditions that leave no configuration: every point of a small
        discrete space looked at, else up to 10,000 random ones (1,000 first)."""
        from acquisitions import enumerate_grid, finite_size

        if np.all(self.levels != 0) and finite_size(self.levels) <= 100_000:
            if self.allowed(self.canonical(enumerate_grid(self.levels))).any():
                return
            how = "none of its"
        else:
            rng = np.random.default_rng(0)
            for n in (1_000, 9_000):
                U = self.canonical(snap(rng.random((n, len(self))), self.levels))
                if self.allowed(U).any():
                    return
            how = "none of 10,000 random"
        raise ValueError(f"forbidden={list(self.forbidden)!r} leaves no configuration of the "
                         f"space ({how} configurations is allowed).")

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
            if dim.when is None:
                U[:, d] = dim.to_unit([r[n] for r in rows]) if rows else 0
                continue
            U[:, d] = self.inactive_unit
            on = [i for i, r in enumerate(rows) if n in r]
            if on:
                U[on, d] = dim.to_unit([rows[i][n] for i in on])
        return U

    def from_unit(self, U: np.ndarray) -> list[dict]:
        """Configuration dicts of unit-cube rows (values clipped and rounded to the space;
        the active parameters only)."""
        U = np.atleast_2d(np.asarray(U, dtype=float))
        dims = self.dimensions.values()
        if not self._conditional:
            cols = [dim.from_unit(U[:, d]) for d, dim in enumerate(dims)]
            return [{n: cols[d][i] for d, n in enumerate(self.names)}
                    for i in range(U.shape[0])]
        active = self.active(U)
        used = active.any(axis=0)  # (a column no row has active is not decoded)
        cols = [dim.from_unit(U[:, d]) if used[d] else None for d, dim in enumerate(dims)]
        return [{n: cols[d][i] for d, n in enumerate(self.names) if active[i, d]}
                for i in range(U.shape[0])]

    def array_to_unit(self, X) -> np.ndarray:
        """Unit-cube matrix of a numeric array whose columns follow ``names`` (fast path)."""
        X = np.asarray(X)
        if X.ndim != 2 or X.shape[1] != len(self):
            raise ValueError(f"candidates must have shape (n, {len(self)}), got {X.shape}.")
        # floats hold every integer only up to 2**53: integers beyond go the exact way too
        # (as do stepped and conditional dimensions, which validation checks row by row)
        if X.dtype == object or self.constrained or any(
                isinstance(d, Categorical) or getattr(d, "step", 1) not in (None, 1) or
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
        """``n`` unit-cube points: ``"random"``, ``"sobol"`` (scrambled) or ``"lhs"``; in a
        conditional space canonical (:meth:`canonical`), forbidden points replaced by random
        allowed ones."""
        U = self._sample(n, rng, kind)
        if not self.constrained:
            return U
        U = self.canonical(U)
        bad = np.flatnonzero(~self.allowed(U))
        for _ in range(1000):
            if bad.size == 0:
                return U
            U[bad] = self.canonical(snap(rng.random((bad.size, len(self))), self.levels))
            bad = bad[~self.allowed(U[bad])]
        raise RuntimeError(f"no allowed configuration found for {bad.size} of {n} points in "
                           f"1000 tries (forbidden={list(self.forbidden)!r}).")

    def _sample(self, n: int, rng: np.random.Generator, kind: str) -> np.ndarray:
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


def _absent(value) -> bool:
    """Whether ``value`` stands for no value (None, or NaN as a DataFrame's empty cell)."""
    return value is None or (isinstance(value, float) and value != value)
