"""Conditions on the values of dimensions: when a dimension is active, and which
combinations a space forbids.

A condition reads the values of other dimensions (its *parents*).  As a dimension's
``when=`` it makes that dimension active only where it holds, so ``degree`` can exist only
for ``kernel == "poly"``; in a space's ``forbidden=`` list it names configurations the
optimizer never proposes.  A condition on a parameter that is not active does not hold.

Leaves compare one parent with constants (:class:`Equals`, :class:`NotEquals`, :class:`In`,
:class:`Less`, :class:`Greater`, :class:`Between`) or two parents with each other
(:class:`Relation`); :class:`AllOf` and :class:`AnyOf` combine them, as do ``&`` and ``|``.  A
dict is the shorthand a user writes in one expression: ``{"kernel": "poly"}`` is
``Equals("kernel", "poly")``, ``{"model": ["svm", "knn"]}`` is ``In("model", ["svm",
"knn"])``, and several keys are their conjunction.

Every condition is checked against the dimensions it reads when its space is built, and is
evaluated in two ways: on one configuration (:meth:`Condition.holds`) and on a matrix of
unit-cube points, column by column (:meth:`Condition.mask`), which is how proposals filter
thousands of candidates at once.
"""

from __future__ import annotations

import numbers
import operator
from typing import Any, Mapping

import numpy as np

from .values import json_key

__all__ = ["Condition", "Equals", "NotEquals", "In", "Less", "Greater", "Between", "Relation",
           "AllOf", "AnyOf", "as_condition", "condition_from_json"]


class Condition:
    """Base class of conditions (see the module's docstring)."""

    def parents(self) -> tuple[str, ...]:  # pragma: no cover - interface
        """The names of the dimensions this condition reads, in order, without repeats."""
        raise NotImplementedError

    def holds(self, params: Mapping[str, Any]) -> bool:  # pragma: no cover - interface
        """Whether the condition holds for one configuration (its active parameters)."""
        raise NotImplementedError

    def mask(self, column) -> np.ndarray:  # pragma: no cover - interface
        """Whether it holds for each row of a unit-cube matrix; ``column(name)`` gives one
        parent's :class:`Column` of that matrix."""
        raise NotImplementedError

    def checked(self, dimensions: Mapping, what: str) -> "Condition":  # pragma: no cover
        """This condition with its constants validated against ``dimensions`` (the ones it
        may read), or a ``ValueError``/``TypeError`` naming ``what`` and the fault."""
        raise NotImplementedError

    def to_json(self) -> dict:  # pragma: no cover - interface
        raise NotImplementedError

    def map_leaves(self, fn) -> "Condition":
        """This condition with each leaf (a condition that is no :class:`AllOf` or
        :class:`AnyOf`) replaced by ``fn(leaf)``, the combinations kept."""
        return fn(self)

    def __and__(self, other) -> "AllOf":
        return AllOf(self, as_condition(other))

    def __or__(self, other) -> "AnyOf":
        return AnyOf(self, as_condition(other))

    def __eq__(self, other):
        return isinstance(other, Condition) and self.to_json() == other.to_json()

    def __hash__(self):
        return hash(repr(self))


def _check_parent(name, dimensions, what):
    if name not in dimensions:
        known = list(dimensions)
        raise ValueError(f"{what} reads {name!r}, which is not a dimension defined before it "
                         f"(a condition may read only dimensions listed earlier in the space, "
                         f"so a cycle is impossible; defined before it: {known}).")
    return dimensions[name]


def _numeric(dim) -> bool:
    """Whether ``dim``'s values are ordered numbers: a Real, an Integer, or an Ordinal of
    numbers."""
    return bool(getattr(dim, "numeric", False))


def _value(dim, name, value, what):
    """``value`` as a value of ``dim`` (the parent ``name``), or an error naming ``what``."""
    try:
        return dim.validate(name, value)
    except (TypeError, ValueError) as exc:
        raise type(exc)(f"{what}: {exc}") from None


def _number(v, what) -> float:
    if isinstance(v, bool) or not isinstance(v, numbers.Real) or v != v:
        raise TypeError(f"{what} must be a number, got {v!r}.")
    return v


class Column:
    """One dimension's column of a unit-cube matrix, as conditions read it: where it is
    active, and its values decoded on first use (``values``: an array of floats where they are
    numbers, else of objects; ``index``: a choice's position, for a categorical one)."""

    def __init__(self, dim, unit: np.ndarray, active: np.ndarray):
        self.dim, self.unit, self.active = dim, unit, active
        self._values = self._index = None

    @property
    def index(self) -> np.ndarray:
        if self._index is None:
            k = len(self.dim.choices)
            self._index = np.minimum((np.clip(self.unit, 0.0, 1.0) * k).astype(np.int64), k - 1)
        return self._index

    @property
    def values(self) -> np.ndarray:
        if self._values is None:
            self._values = as_array(self.dim.from_unit(self.unit))
        return self._values


def as_array(values: list) -> np.ndarray:
    """Decoded values as an array (floats where they are numbers, else objects)."""
    if all(isinstance(v, (int, float)) and not isinstance(v, bool) and abs(v) < 2 ** 53
           for v in values):
        return np.asarray(values, dtype=float)
    out = np.empty(len(values), dtype=object)
    out[:] = values
    return out


class _Leaf(Condition):
    """A condition on one parent's value."""

    name: str

    def parents(self):
        return (self.name,)

    def holds(self, params):
        if self.name not in params:
            return False
        v = params[self.name]
        if isinstance(v, _SCALARS) or v is None:
            quick = self._holds_scalar(v)
            if quick is not None:
                return quick
        return bool(self._test_values(np.array([v], dtype=object))[0])

    def _holds_scalar(self, v) -> bool | None:
        """Whether the condition holds for the single value ``v`` (a number, string, bool or
        None), as ``_test_values`` would say, where that is quicker to tell; None: ask it."""
        return None

    def mask(self, column):
        col = column(self.name)
        return col.active & self._test(col)

    def _test(self, col: Column) -> np.ndarray:
        return self._test_values(col.values)

    def _test_values(self, values) -> np.ndarray:  # pragma: no cover - interface
        raise NotImplementedError


#: the values :meth:`_Leaf.holds` may test without an array (None too)
_SCALARS = (str, bool, int, float, np.generic)


def _equal(values, value) -> np.ndarray:
    key = json_key(value)
    return np.array([json_key(v) == key for v in values.tolist()], dtype=bool)


def _in_choices(col: Column, values) -> np.ndarray | None:
    """Whether each row's choice is one of ``values`` (by the choices' positions), or None
    when ``col`` is not categorical."""
    if not hasattr(col.dim, "choices"):  # (a Categorical or an Ordinal)
        return None
    index = col.index
    out = np.zeros(index.shape, dtype=bool)
    for v in values:
        out |= index == col.dim.index(v)
    return out


class Equals(_Leaf):
    """``name == value``."""

    kind = "equals"

    def __init__(self, name: str, value):
        self.name, self.value = name, value

    def _test(self, col):
        out = _in_choices(col, [self.value])
        return self._test_values(col.values) if out is None else out

    def _test_values(self, values):
        return _equal(values, self.value)

    def _holds_scalar(self, v):
        return json_key(v) == json_key(self.value)

    def checked(self, dimensions, what):
        dim = _check_parent(self.name, dimensions, what)
        return type(self)(self.name, _value(dim, self.name, self.value, what))

    def to_json(self):
        return {self.kind: [self.name, self.value]}

    def __repr__(self):
        return f"{type(self).__name__}({self.name!r}, {self.value!r})"


class NotEquals(Equals):
    """``name != value`` (and ``name`` active)."""

    kind = "not_equals"

    def _test(self, col):
        out = _in_choices(col, [self.value])
        return self._test_values(col.values) if out is None else ~out

    def _test_values(self, values):
        return ~_equal(values, self.value)

    def _holds_scalar(self, v):
        return json_key(v) != json_key(self.value)


class In(_Leaf):
    """``name`` is one of ``values``."""

    def __init__(self, name: str, values):
        if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
            raise TypeError(f"In({name!r}, values): values must be a list of values, got "
                            f"{values!r}.")
        self.name, self.values = name, list(values)

    def _test(self, col):
        out = _in_choices(col, self.values)
        return self._test_values(col.values) if out is None else out

    def _test_values(self, values):
        out = np.zeros(len(values), dtype=bool)
        for v in self.values:
            out |= _equal(values, v)
        return out

    def _holds_scalar(self, v):
        key = json_key(v)
        return any(json_key(w) == key for w in self.values)

    def checked(self, dimensions, what):
        dim = _check_parent(self.name, dimensions, what)
        if not self.values:
            raise ValueError(f"{what}: In({self.name!r}, []) never holds (no values).")
        return In(self.name, [_value(dim, self.name, v, what) for v in self.values])

    def to_json(self):
        return {"in": [self.name, list(self.values)]}

    def __repr__(self):
        return f"In({self.name!r}, {self.values!r})"


class _Compare(_Leaf):
    op: str

    def __init__(self, name: str, value):
        self.name, self.value = name, value

    def _test_values(self, values):
        v = np.asarray(values.tolist(), dtype=float) if values.dtype == object else values
        return _OPS[self.op](v, self.value)

    def checked(self, dimensions, what):
        dim = _check_parent(self.name, dimensions, what)
        if not _numeric(dim):
            raise TypeError(f"{what}: {type(self).__name__} needs a numeric parent (Real, "
                            f"Integer or an Ordinal of numbers), but {self.name!r} is {dim!r}.")
        return type(self)(self.name, _number(self.value, f"{what}: the bound"))

    def to_json(self):
        return {self.op_name: [self.name, self.value]}

    def __repr__(self):
        return f"{type(self).__name__}({self.name!r}, {self.value!r})"


class Less(_Compare):
    """``name < value`` (a Real or Integer parent)."""

    op, op_name = "<", "less"


class Greater(_Compare):
    """``name > value`` (a Real or Integer parent)."""

    op, op_name = ">", "greater"


class Between(_Leaf):
    """``low <= name <= high`` (a Real or Integer parent; either bound may be None)."""

    def __init__(self, name: str, low=None, high=None):
        self.name, self.low, self.high = name, low, high

    def _test_values(self, values):
        v = np.asarray(values.tolist(), dtype=float) if values.dtype == object else values
        out = np.ones(len(v), dtype=bool)
        if self.low is not None:
            out &= v >= self.low
        if self.high is not None:
            out &= v <= self.high
        return out

    def checked(self, dimensions, what):
        dim = _check_parent(self.name, dimensions, what)
        if not _numeric(dim):
            raise TypeError(f"{what}: Between needs a numeric parent (Real, Integer or an "
                            f"Ordinal of numbers), but {self.name!r} is {dim!r}.")
        if self.low is None and self.high is None:
            raise ValueError(f"{what}: Between({self.name!r}) needs a low or a high bound.")
        lo = None if self.low is None else _number(self.low, f"{what}: the low bound")
        hi = None if self.high is None else _number(self.high, f"{what}: the high bound")
        if lo is not None and hi is not None and lo > hi:
            raise ValueError(f"{what}: Between({self.name!r}, {lo}, {hi}) never holds "
                             f"(low > high).")
        return Between(self.name, lo, hi)

    def to_json(self):
        return {"between": [self.name, self.low, self.high]}

    def __repr__(self):
        return f"Between({self.name!r}, {self.low!r}, {self.high!r})"


_OPS = {"==": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le,
        ">": operator.gt, ">=": operator.ge}


class Relation(Condition):
    """``left op right`` between the values of two dimensions (``op`` one of ``==``, ``!=``,
    ``<``, ``<=``, ``>``, ``>=``; ordering needs two numeric dimensions)."""

    def __init__(self, left: str, op: str, right: str):
        if op not in _OPS:
            raise ValueError(f"Relation op must be one of {list(_OPS)}, got {op!r}.")
        self.left, self.op, self.right = left, op, right

    def parents(self):
        return tuple(dict.fromkeys((self.left, self.right)))

    def holds(self, params):
        if self.left not in params or self.right not in params:
            return False
        a, b = params[self.left], params[self.right]
        if self.op in ("==", "!="):
            same = json_key(a) == json_key(b) or (
                isinstance(a, numbers.Real) and isinstance(b, numbers.Real) and a == b
                and not isinstance(a, bool) and not isinstance(b, bool))
            return same if self.op == "==" else not same
        return bool(_OPS[self.op](a, b))

    def mask(self, column):
        ca, cb = column(self.left), column(self.right)
        a, b, act_a, act_b = ca.values, cb.values, ca.active, cb.active
        if a.dtype == object or b.dtype == object:
            out = np.array([self.holds({self.left: x, self.right: y})
                            for x, y in zip(a.tolist(), b.tolist())], dtype=bool)
        else:
            out = _OPS[self.op](a, b)
        return act_a & act_b & out

    def checked(self, dimensions, what):
        da = _check_parent(self.left, dimensions, what)
        db = _check_parent(self.right, dimensions, what)
        if self.left == self.right:
            raise ValueError(f"{what}: Relation({self.left!r}, {self.op!r}, {self.right!r}) "
                             f"compares a dimension with itself.")
        if self.op not in ("==", "!=") and not (_numeric(da) and _numeric(db)):
            raise TypeError(f"{what}: Relation {self.op!r} needs two numeric "
                            f"dimensions (Real, Integer or Ordinal of numbers), got "
                            f"{self.left!r}: {da!r} and {self.right!r}: {db!r}.")
        return self

    def to_json(self):
        return {"relation": [self.left, self.op, self.right]}

    def __repr__(self):
        return f"Relation({self.left!r}, {self.op!r}, {self.right!r})"


class _Conjunction(Condition):
    kind: str

    def __init__(self, *conditions):
        if len(conditions) < 1:
            raise ValueError(f"{type(self).__name__} needs at least one condition.")
        self.conditions = tuple(as_condition(c) for c in conditions)

    def parents(self):
        return tuple(dict.fromkeys(p for c in self.conditions for p in c.parents()))

    def checked(self, dimensions, what):
        return self.map_leaves(lambda leaf: leaf.checked(dimensions, what))

    def map_leaves(self, fn):
        return type(self)(*(c.map_leaves(fn) for c in self.conditions))

    def to_json(self):
        return {self.kind: [c.to_json() for c in self.conditions]}

    def __repr__(self):
        return f"{type(self).__name__}({', '.join(map(repr, self.conditions))})"


class AllOf(_Conjunction):
    """Every one of the conditions holds."""

    kind = "all"

    def holds(self, params):
        return all(c.holds(params) for c in self.conditions)

    def mask(self, column):
        out = self.conditions[0].mask(column)
        for c in self.conditions[1:]:
            out = out & c.mask(column)
        return out


class AnyOf(_Conjunction):
    """At least one of the conditions holds."""

    kind = "any"

    def holds(self, params):
        return any(c.holds(params) for c in self.conditions)

    def mask(self, column):
        out = self.conditions[0].mask(column)
        for c in self.conditions[1:]:
            out = out | c.mask(column)
        return out


def as_condition(spec) -> Condition:
    """``spec`` as a condition: a :class:`Condition`, or a dict ``{parent: value}`` (a list
    value: one of those values) whose keys must all hold."""
    if isinstance(spec, Condition):
        return spec
    if isinstance(spec, Mapping):
        if not spec:
            raise ValueError("a condition dict needs at least one parent: value.")
        leaves = [In(k, v) if isinstance(v, (list, tuple, set, frozenset)) else Equals(k, v)
                  for k, v in spec.items()]
        return leaves[0] if len(leaves) == 1 else AllOf(*leaves)
    raise TypeError(f"a condition must be a Condition (Equals, In, Between, ...) or a dict "
                    f"{{parent: value}}, got {spec!r}.")


_LEAVES = {"equals": Equals, "not_equals": NotEquals, "in": In, "less": Less,
           "greater": Greater}


def condition_from_json(data: dict) -> Condition:
    """The condition that :meth:`Condition.to_json` gave ``data``."""
    (kind, args), = data.items()
    if kind in _LEAVES:
        return _LEAVES[kind](*args)
    if kind == "between":
        return Between(*args)
    if kind == "relation":
        return Relation(*args)
    if kind in ("all", "any"):
        return (AllOf if kind == "all" else AnyOf)(*(condition_from_json(c) for c in args))
    raise ValueError(f"unknown condition kind {kind!r}.")
