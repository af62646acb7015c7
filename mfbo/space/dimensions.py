"""Search spaces: named dimensions mapped to and from the unit cube.

A space is built from a dict ``name -> dimension``; ``(low, high)`` tuples are shorthand for
:class:`Real`.  Internally every configuration is a point of ``[0, 1]^D`` following the
convention of :mod:`acquisitions.maximizers` (continuous coordinates, or level ``i`` of ``k``
at ``(i + 0.5) / k``).  :meth:`Space.from_configspace` builds a space from a ConfigSpace
``ConfigurationSpace``.
"""

from __future__ import annotations

import math
import numbers
import unicodedata
from typing import Any, Mapping, Sequence

import numpy as np

from acquisitions import snap

__all__ = ["Real", "Integer", "Categorical", "Ordinal", "Space", "as_space"]


def _finite_number(v, what: str) -> float:
    if isinstance(v, bool) or not isinstance(v, numbers.Real):
        raise TypeError(f"{what} must be a real number, got {v!r}.")
    v = float(v)
    if not math.isfinite(v):
        raise ValueError(f"{what} must be finite, got {v}.")
    return v


class Dimension:
    """Base class of the kinds of dimension."""

    levels: int = 0

    def to_unit(self, values: np.ndarray) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def from_unit(self, u: np.ndarray) -> list:  # pragma: no cover - abstract
        raise NotImplementedError

    def validate(self, name: str, value) -> Any:  # pragma: no cover - abstract
        raise NotImplementedError

    def to_json(self) -> dict:  # pragma: no cover - abstract
        raise NotImplementedError


class Real(Dimension):
    """A real number in ``[low, high]``; ``log=True`` searches ``log(x)`` uniformly (low > 0)."""

    levels = 0

    def __init__(self, low: float, high: float, log: bool = False):
        self.low = _finite_number(low, "low")
        self.high = _finite_number(high, "high")
        if not self.low < self.high:
            raise ValueError(f"Real needs low < high, got low={low}, high={high}.")
        if log and self.low <= 0:
            raise ValueError(f"Real(log=True) needs low > 0, got low={low}.")
        if not math.isfinite(self.high - self.low):
            raise ValueError(f"Real needs a finite width high - low, got low={low}, "
                             f"high={high} (the width overflows).")
        self.log = bool(log)

    def _t(self, x):
        return np.log(x) if self.log else x

    def to_unit(self, values):
        v = self._t(np.asarray(values, dtype=float))
        lo, hi = self._t(self.low), self._t(self.high)
        return (v - lo) / (hi - lo)

    def from_unit(self, u):
        lo, hi = self._t(self.low), self._t(self.high)
        v = lo + np.clip(np.asarray(u, dtype=float), 0.0, 1.0) * (hi - lo)
        v = np.exp(v) if self.log else v
        return [float(min(max(x, self.low), self.high)) for x in np.atleast_1d(v)]

    def validate(self, name, value):
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise TypeError(f"parameter {name!r} must be a real number, got {value!r}.")
        v = float(value)
        if not (self.low <= v <= self.high):
            raise ValueError(f"parameter {name!r} = {v} is outside [{self.low}, {self.high}].")
        return v

    def to_json(self):
        return {"type": "real", "low": self.low, "high": self.high, "log": self.log}

    def __repr__(self):
        return f"Real({self.low}, {self.high}{', log=True' if self.log else ''})"

    def __eq__(self, other):
        return isinstance(other, Real) and self.to_json() == other.to_json()


#: an Integer of at most this many values is an ordinal coordinate of that many levels, whose
#: level arithmetic in floats (:func:`acquisitions.snap`, the local search's neighbours) is
#: exact up to this size; a wider one is a continuous coordinate rounded to an integer
MAX_LEVELS = 2 ** 50


def _nearest_multiple(u: float, width: int) -> int:
    """``round(u * width)`` computed exactly (``u`` a float, ``width`` an int of any size;
    halves round up): a float product would be rounded to 53 bits first."""
    num, den = u.as_integer_ratio()
    return (2 * num * width + den) // (2 * den)


class Integer(Dimension):
    """An integer in ``[low, high]`` (both included).

    Up to :data:`MAX_LEVELS` values, each integer is one level of an ordinal coordinate, so a
    finite space is enumerated exactly and never proposed twice.  A wider range is a
    continuous coordinate ``u`` decoded as ``low + round(u * (high - low))``; with ``log=True``
    the coordinate is continuous in ``log(x)`` and rounded to the nearest integer (small
    values are resolved finer).  For these, repeats are excluded by comparing parameters.
    Values are Python ints computed exactly, whatever the size of the bounds; a unit
    coordinate tells apart about 2**53 values, so only then does every integer of a wider
    range round-trip through it exactly.
    """

    def __init__(self, low: int, high: int, log: bool = False):
        for v, w in ((low, "low"), (high, "high")):
            if isinstance(v, bool) or not isinstance(v, numbers.Integral):
                raise TypeError(f"Integer {w} must be an int, got {v!r}.")
        self.low, self.high = int(low), int(high)
        if not self.low < self.high:
            raise ValueError(f"Integer needs low < high, got low={low}, high={high}.")
        if log and self.low <= 0:
            raise ValueError(f"Integer(log=True) needs low > 0, got low={low}.")
        self.log = bool(log)
        n_values = self.high - self.low + 1
        self.levels = n_values if not self.log and n_values <= MAX_LEVELS else 0

    def to_unit(self, values):
        # Python ints throughout: the values and bounds need not be floats exactly
        ints = [int(v) for v in np.atleast_1d(np.asarray(values, dtype=object)).tolist()]
        if self.levels:  # the centre (i + 0.5) / k of level i, correctly rounded
            k = self.levels
            return np.array([(2 * (v - self.low) + 1) / (2 * k) for v in ints], dtype=float)
        if self.log:
            lo, hi = math.log(self.low), math.log(self.high)
            u = (np.log(np.array([float(v) for v in ints], dtype=float)) - lo) / (hi - lo)
            return np.clip(u, 0.0, 1.0)  # (log's last bit must not leave the unit interval)
        width = self.high - self.low
        return np.array([(v - self.low) / width for v in ints], dtype=float)

    def from_unit(self, u):
        u = np.clip(np.asarray(u, dtype=float), 0.0, 1.0)
        if self.levels:
            idx = np.minimum(np.floor(u * self.levels), self.levels - 1)
            return [self.low + int(i) for i in np.atleast_1d(idx)]
        if self.log:
            v = np.exp(math.log(self.low) + u * (math.log(self.high) - math.log(self.low)))
            # (exp is off by many integers near a high of 2**63: the top is exactly high)
            return [self.high if t == 1.0 else min(max(int(round(x)), self.low), self.high)
                    for t, x in zip(np.atleast_1d(u).tolist(), np.atleast_1d(v))]
        width = self.high - self.low
        return [self.low + _nearest_multiple(x, width) for x in np.atleast_1d(u).tolist()]

    def validate(self, name, value):
        if isinstance(value, (bool, np.bool_)):
            raise TypeError(f"parameter {name!r} must be an integer, got {value!r}.")
        if not isinstance(value, numbers.Integral):
            if isinstance(value, numbers.Real) and float(value).is_integer():
                value = int(value)
            else:
                raise TypeError(f"parameter {name!r} must be an integer, got {value!r}.")
        v = int(value)
        if not (self.low <= v <= self.high):
            raise ValueError(f"parameter {name!r} = {v} is outside [{self.low}, {self.high}].")
        return v

    def to_json(self):
        return {"type": "integer", "low": self.low, "high": self.high, "log": self.log}

    def __repr__(self):
        return f"Integer({self.low}, {self.high}{', log=True' if self.log else ''})"

    def __eq__(self, other):
        return isinstance(other, Integer) and self.to_json() == other.to_json()


class Categorical(Dimension):
    """One of a finite list of choices (strings, numbers, booleans or None; JSON-storable)."""

    def __init__(self, choices: Sequence):
        if isinstance(choices, (str, bytes)) or not isinstance(choices, Sequence):
            raise TypeError(f"Categorical choices must be a list or tuple, got {choices!r}.")
        choices = list(choices)
        if len(choices) < 1:
            raise ValueError("Categorical needs at least one choice.")
        for c in choices:
            if not (c is None or isinstance(c, (str, bool, numbers.Real))):
                raise TypeError(f"Categorical choices must be str, number, bool or None, got {c!r}.")
        if len({json_key(c) for c in choices}) != len(choices):
            raise ValueError(f"Categorical choices must be distinct, got {choices!r}.")
        self.choices = choices
        self.levels = -len(choices)
        self._index = {json_key(c): i for i, c in enumerate(choices)}

    def to_unit(self, values):
        idx = np.array([self._index[json_key(v)] for v in np.atleast_1d(np.asarray(values, dtype=object))],
                       dtype=float)
        return (idx + 0.5) / len(self.choices)

    def from_unit(self, u):
        k = len(self.choices)
        idx = np.minimum(np.floor(np.clip(np.asarray(u, dtype=float), 0, 1) * k), k - 1)
        return [self.choices[int(i)] for i in np.atleast_1d(idx)]

    def index(self, value) -> int:
        """Position of ``value`` in ``choices`` (equal choices as :func:`json_key` says)."""
        return self._index[json_key(value)]

    def validate(self, name, value):
        try:
            key = json_key(value)
            known = key in self._index
        except TypeError:  # unhashable (a list, a dict): never a choice
            known = False
        if not known:
            raise ValueError(f"parameter {name!r} = {value!r} is not one of {self.choices!r}.")
        return self.choices[self._index[key]]

    def to_json(self):
        return {"type": "categorical", "choices": list(self.choices)}

    def __repr__(self):
        return f"Categorical({self.choices!r})"

    def __eq__(self, other):
        return isinstance(other, Categorical) and self.to_json() == other.to_json()


class Ordinal(Categorical):
    """One of a finite list of values whose order matters (``["low", "mid", "high"]``).

    Encoded like a :class:`Categorical` (value ``i`` of ``k`` at ``(i + 0.5) / k``) but
    searched as an ordered dimension: a local search step moves to an adjacent value, where a
    categorical one jumps to any other choice.  Parameters hold the values themselves.
    """

    def __init__(self, choices: Sequence):
        super().__init__(choices)
        self.levels = len(self.choices)

    def to_json(self):
        return {"type": "ordinal", "choices": list(self.choices)}

    def __repr__(self):
        return f"Ordinal({self.choices!r})"


def json_key(v):
    """A key under which equal choices coincide (1 and 1.0 and True are distinct)."""
    if isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, float) and v != v:  # every NaN is the same choice
        return ("nan", None)
    return (type(v).__name__ if isinstance(v, (bool, str)) or v is None else "num", v)


def _dimension(name, spec) -> Dimension:
    if isinstance(spec, Dimension):
        return spec
    if isinstance(spec, tuple) and len(spec) == 2:
        a, b = spec
        if all(isinstance(v, numbers.Integral) and not isinstance(v, bool) for v in spec):
            return Integer(a, b)
        return Real(a, b)
    if isinstance(spec, list):
        return Categorical(spec)
    raise TypeError(f"dimension {name!r} must be Real, Integer, Categorical, Ordinal, a (low, "
                    f"high) tuple or a list of choices, got {spec!r}.")


def check_name(name) -> str:
    """``name`` if it can name a parameter, else a ``TypeError``/``ValueError`` naming it.

    The objective is called as ``f(**params)``, so a name must be a Python identifier as
    Python reads it in source: identifiers there are NFKC-normalised (``def f(file)`` is what
    ``"\ufb01le"``, with the ligature, becomes), so a name that normalisation changes could
    never be one of the objective's parameters.
    """
    if not isinstance(name, str):
        raise TypeError(f"space names must be strings (Python identifiers), got {name!r}.")
    if not name.isidentifier():
        raise ValueError(f"space names must be valid Python identifiers, got {name!r}.")
    normal = unicodedata.normalize("NFKC", name)
    if normal != name:
        raise ValueError(f"space name {name!r} is not as Python reads it in source: there it "
                         f"is {normal!r} (NFKC-normalised), so f(**params) could not pass it to "
                         f"a parameter of the objective; name it {normal!r}.")
    return name


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
            dims[name] = _dimension(name, spec)
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

    @classmethod
    def from_configspace(cls, cs) -> "Space":
        """The space of a ConfigSpace ``ConfigurationSpace`` (ConfigSpace >= 1.0, optional).

        Each hyperparameter becomes the dimension of the same name, and the parameters the
        optimizer proposes are valid values of ``cs`` (``Configuration(cs, values=params)``
        accepts them):

        - ``Float`` -> :class:`Real`, ``Integer`` -> :class:`Integer` (``log`` kept);
        - ``Categorical`` -> :class:`Categorical`, ``Ordinal`` -> :class:`Ordinal` (the
          sequence's order kept);
        - ``Constant`` -> a :class:`Categorical` with its one value, so that every parameter
          dict holds it (the coordinate never varies, so the surrogate never splits on it).

        What is not carried over: defaults, the normal and beta distributions of ``Float`` and
        ``Integer`` (the range is searched uniformly, in log space with ``log=True``) and the
        weights of a ``Categorical``.  A space with conditions or forbidden clauses is refused
        with a ``ValueError`` naming them, since every parameter here is always active and every
        combination allowed.  Hyperparameter names must be Python identifiers (``f(**params)``
        is called with them).

        Raises ``ImportError`` when ConfigSpace is not installed
        (``pip install "mfbo[configspace]"``).
        """
        from ..integrations.configspace import space_from_configspace

        return space_from_configspace(cs, cls)

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
