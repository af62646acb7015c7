"""The dimensions of a search space, each mapped to and from ``[0, 1]``.

Every configuration is a point of ``[0, 1]^D`` following the convention of
:mod:`acquisitions.maximizers` (continuous coordinates, or level ``i`` of ``k`` at
``(i + 0.5) / k``); a dimension maps its values to its coordinate and back.
"""

from __future__ import annotations

import math
import numbers
import unicodedata
from typing import Any, Sequence

import numpy as np

from acquisitions import level_index

from .conditions import as_condition
from .values import json_key

__all__ = ["Dimension", "Real", "Integer", "Categorical", "Ordinal", "as_dimension", "check_name", "json_key"]


def _finite_number(v, what: str) -> float:
    if isinstance(v, bool) or not isinstance(v, numbers.Real):
        raise TypeError(f"{what} must be a real number, got {v!r}.")
    v = float(v)
    if not math.isfinite(v):
        raise ValueError(f"{what} must be finite, got {v}.")
    return v


class Dimension:
    """Base class of the kinds of dimension.

    Every kind takes ``when=``: a condition (:mod:`mfbo.space.conditions`, or a dict
    ``{parent: value}``) under which the dimension is active; elsewhere it is absent from the
    configuration.  ``None`` (the default): always active.
    """

    levels: int = 0
    when = None
    #: whether the values are ordered numbers (conditions may compare them with bounds)
    numeric = True

    def _set_when(self, when) -> None:
        if when is not None:
            when = as_condition(when)
        self.when = when

    def _json(self, data: dict) -> dict:
        """``data`` with this dimension's condition, if it has one."""
        if self.when is not None:
            data["when"] = self.when.to_json()
        return data

    def _when_repr(self) -> str:
        return "" if self.when is None else f", when={self.when!r}"

    def to_unit(self, values: np.ndarray) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def from_unit(self, u: np.ndarray) -> list:  # pragma: no cover - abstract
        raise NotImplementedError

    def validate(self, name: str, value) -> Any:  # pragma: no cover - abstract
        raise NotImplementedError

    def to_json(self) -> dict:  # pragma: no cover - abstract
        raise NotImplementedError


class Real(Dimension):
    """A real number in ``[low, high]``; ``log=True`` searches ``log(x)`` uniformly (low > 0).

    ``step``: only the values ``low + k * step`` (an ordered dimension of
    ``(high - low) / step + 1`` levels; ``step`` must divide the range).
    """

    levels = 0

    def __init__(self, low: float, high: float, log: bool = False, step: float | None = None,
                 when=None):
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
        self.step = None
        if step is not None:
            step = _finite_number(step, "step")
            if step <= 0:
                raise ValueError(f"Real step must be > 0, got step={step}.")
            if self.log:
                raise ValueError("Real takes log=True or a step, not both (a log scale has no "
                                 "even steps).")
            n = (self.high - self.low) / step
            if abs(n - round(n)) > 1e-9 * max(1.0, n):
                raise ValueError(f"Real step={step} does not divide the range high - low = "
                                 f"{self.high - self.low} (low={self.low}, high={self.high}).")
            if round(n) + 1 > MAX_LEVELS:
                raise ValueError(f"Real step={step} makes {round(n) + 1} values, more than "
                                 f"{MAX_LEVELS}.")
            self.step = step
            self.levels = int(round(n)) + 1
            # decimals the grid's values are rounded to (0.1 * 3 is 0.30000000000000004)
            self._decimals = max(0, 12 - int(math.floor(math.log10(step))))
        self._set_when(when)

    def _grid_value(self, i: int) -> float:
        v = round(self.low + i * self.step, self._decimals)
        return float(min(max(v, self.low), self.high))

    def _t(self, x):
        return np.log(x) if self.log else x

    def to_unit(self, values):
        if self.step is not None:
            idx = np.round((np.asarray(values, dtype=float) - self.low) / self.step)
            return (np.clip(idx, 0, self.levels - 1) + 0.5) / self.levels
        v = self._t(np.asarray(values, dtype=float))
        lo, hi = self._t(self.low), self._t(self.high)
        return (v - lo) / (hi - lo)

    def from_unit(self, u):
        if self.step is not None:
            u = np.clip(np.asarray(u, dtype=float), 0.0, 1.0)
            return [self._grid_value(int(i)) for i in np.atleast_1d(level_index(u, self.levels))]
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
        if self.step is not None:
            k = (v - self.low) / self.step
            if abs(k - round(k)) > 1e-6:
                raise ValueError(f"parameter {name!r} = {v} is not one of the values "
                                 f"{self.low} + k * {self.step}.")
            v = self._grid_value(int(round(k)))
        return v

    def to_json(self):
        data = {"type": "real", "low": self.low, "high": self.high, "log": self.log}
        if self.step is not None:
            data["step"] = self.step
        return self._json(data)

    def __repr__(self):
        return (f"Real({self.low}, {self.high}{', log=True' if self.log else ''}"
                f"{'' if self.step is None else f', step={self.step}'}{self._when_repr()})")

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

    def __init__(self, low: int, high: int, log: bool = False, step: int = 1, when=None):
        for v, w in ((low, "low"), (high, "high"), (step, "step")):
            if isinstance(v, bool) or not isinstance(v, numbers.Integral):
                raise TypeError(f"Integer {w} must be an int, got {v!r}.")
        self.low, self.high = int(low), int(high)
        if not self.low < self.high:
            raise ValueError(f"Integer needs low < high, got low={low}, high={high}.")
        if log and self.low <= 0:
            raise ValueError(f"Integer(log=True) needs low > 0, got low={low}.")
        self.log = bool(log)
        self.step = int(step)
        if self.step < 1:
            raise ValueError(f"Integer step must be >= 1, got step={step}.")
        if self.step > 1:
            if self.log:
                raise ValueError("Integer takes log=True or a step > 1, not both (a log scale "
                                 "has no even steps).")
            if (self.high - self.low) % self.step:
                raise ValueError(f"Integer step={self.step} does not divide the range high - "
                                 f"low = {self.high - self.low} (low={self.low}, "
                                 f"high={self.high}).")
        n_values = (self.high - self.low) // self.step + 1
        self.levels = n_values if not self.log and n_values <= MAX_LEVELS else 0
        self._set_when(when)

    def to_unit(self, values):
        # Python ints throughout: the values and bounds need not be floats exactly
        ints = [int(v) for v in np.atleast_1d(np.asarray(values, dtype=object)).tolist()]
        if self.levels:  # the centre (i + 0.5) / k of level i, correctly rounded
            k, s = self.levels, self.step
            return np.array([(2 * ((v - self.low) // s) + 1) / (2 * k) for v in ints],
                            dtype=float)
        if self.log:
            lo, hi = math.log(self.low), math.log(self.high)
            u = (np.log(np.array([float(v) for v in ints], dtype=float)) - lo) / (hi - lo)
            return np.clip(u, 0.0, 1.0)  # (log's last bit must not leave the unit interval)
        width = self.high - self.low
        return np.array([(v - self.low) / width for v in ints], dtype=float)

    def from_unit(self, u):
        u = np.clip(np.asarray(u, dtype=float), 0.0, 1.0)
        if self.levels:
            return [self.low + int(i) * self.step
                    for i in np.atleast_1d(level_index(u, self.levels))]
        if self.log:
            v = np.exp(math.log(self.low) + u * (math.log(self.high) - math.log(self.low)))
            # (exp is off by many integers near a high of 2**63: the top is exactly high)
            return [self.high if t == 1.0 else min(max(int(round(x)), self.low), self.high)
                    for t, x in zip(np.atleast_1d(u).tolist(), np.atleast_1d(v))]
        width = (self.high - self.low) // self.step
        return [self.low + self.step * _nearest_multiple(x, width)
                for x in np.atleast_1d(u).tolist()]

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
        if (v - self.low) % self.step:
            raise ValueError(f"parameter {name!r} = {v} is not one of the values {self.low} + "
                             f"k * {self.step}.")
        return v

    def to_json(self):
        data = {"type": "integer", "low": self.low, "high": self.high, "log": self.log}
        if self.step != 1:
            data["step"] = self.step
        return self._json(data)

    def __repr__(self):
        return (f"Integer({self.low}, {self.high}{', log=True' if self.log else ''}"
                f"{'' if self.step == 1 else f', step={self.step}'}{self._when_repr()})")

    def __eq__(self, other):
        return isinstance(other, Integer) and self.to_json() == other.to_json()


class Categorical(Dimension):
    """One of a finite list of choices (strings, numbers, booleans or None; JSON-storable)."""

    def __init__(self, choices: Sequence, when=None):
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
        self.numeric = False
        self._index = {json_key(c): i for i, c in enumerate(choices)}
        self._set_when(when)

    def to_unit(self, values):
        idx = np.array([self._index[json_key(v)] for v in np.atleast_1d(np.asarray(values, dtype=object))],
                       dtype=float)
        return (idx + 0.5) / len(self.choices)

    def from_unit(self, u):
        k = len(self.choices)
        idx = level_index(np.clip(np.asarray(u, dtype=float), 0, 1), k)
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
        return self._json({"type": "categorical", "choices": list(self.choices)})

    def __repr__(self):
        return f"Categorical({self.choices!r}{self._when_repr()})"

    def __eq__(self, other):
        return isinstance(other, Categorical) and self.to_json() == other.to_json()


class Ordinal(Categorical):
    """One of a finite list of values whose order matters (``["low", "mid", "high"]``).

    Encoded like a :class:`Categorical` (value ``i`` of ``k`` at ``(i + 0.5) / k``) but
    searched as an ordered dimension: a local search step moves to an adjacent value, where a
    categorical one jumps to any other choice.  Parameters hold the values themselves.
    """

    def __init__(self, choices: Sequence, when=None):
        super().__init__(choices, when)
        self.levels = len(self.choices)
        self.numeric = all(isinstance(c, numbers.Real) and not isinstance(c, bool)
                           for c in self.choices)

    def to_json(self):
        return self._json({"type": "ordinal", "choices": list(self.choices)})

    def __repr__(self):
        return f"Ordinal({self.choices!r}{self._when_repr()})"


def as_dimension(name, spec) -> Dimension:
    """``spec`` as the dimension ``name``: a Dimension, a ``(low, high)`` tuple or a list."""
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
