"""What a study optimises: one value or several (each minimised or maximised, optionally
named), and the constraints a trial must meet to count (:class:`Objectives`); and what an
objective's return means for a study of several values or with constraints
(:meth:`Objectives.parse`).

A constraint is a value that must be ``<= 0`` for the trial to be *feasible*; only feasible
trials can be the best (or on the Pareto front).  It is a key of the dict the objective
returns (``constraints=["mem"]``), or a named function of what the objective returned
(``constraints={"mem_limit": lambda r: r["mem"] - 16}``, called once when the trial is told:
the study records its value, never the function).
"""

from __future__ import annotations

import math
import pickle
from dataclasses import dataclass, field
from typing import Mapping, Sequence

import numpy as np

from .trial import extra_fields, is_number, parse_outcome, shorten

__all__ = ["Objectives", "DIRECTIONS", "check_direction"]

DIRECTIONS = ("minimize", "maximize")


def check_direction(direction) -> str:
    if direction not in DIRECTIONS:
        raise ValueError(f"direction must be 'minimize' or 'maximize', got {direction!r}.")
    return direction


def _names(names, what: str) -> tuple[str, ...]:
    if isinstance(names, (str, bytes)) or not isinstance(names, Sequence):
        raise TypeError(f"{what} must be a list of names (strings), got "
                        f"{shorten(repr(names), 80)}.")
    names = tuple(names)
    for n in names:
        if not isinstance(n, str) or not n:
            raise TypeError(f"{what} must hold non-empty strings, got {shorten(repr(n), 40)}.")
    if len(set(names)) != len(names):
        raise ValueError(f"{what} holds a name twice: {list(names)!r}.")
    return names


def _constraints(constraints) -> tuple[tuple[str, ...], tuple | None]:
    """The constraints' names and functions (None: keys of the returned dict) from the
    argument ``constraints``: None, a list of names or a dict ``{name: function}``."""
    if constraints is None:
        return (), None
    if isinstance(constraints, Mapping):
        names = _names(list(constraints), "constraints' keys")
        for name, fn in constraints.items():
            if not callable(fn):
                raise TypeError(f"constraints[{name!r}] must be a function of what the "
                                f"objective returns, got {shorten(repr(fn), 60)}.")
        return names, (tuple(constraints.values()) if names else None)
    if callable(constraints):
        raise TypeError("constraints is one function, whose number of values is not known "
                        "before it is called; name each value: constraints={'name': "
                        "function, ...} (each function takes what the objective returned "
                        "and gives one number, <= 0 when met), or list keys of the returned "
                        "dict: constraints=['name', ...].")
    return _names(constraints, "constraints"), None


@dataclass(frozen=True)
class Objectives:
    """The values a study optimises and the constraints its trials must meet.

    Parameters
    ----------
    directions : tuple of str
        ``"minimize"`` or ``"maximize"`` per objective (one: a study of one value).
    names : tuple of str or None
        The objectives' names: the keys of the dict an objective returns (None: the values
        come as a tuple, or with one objective as a number or the ``"loss"`` of a dict).
    constraints : tuple of str
        The constraints' names: keys of the returned dict whose values must be ``<= 0`` for
        a trial to be feasible (or, with ``functions``, the names of those functions' values).
    functions : tuple of callables or None
        One function per constraint, each called with what the objective returned and giving
        the constraint's value (None: the constraints are keys of the returned dict).  They
        are not recorded with a study and do not take part in comparisons: a study reopened
        reads the values its trials were told.
    """

    directions: tuple = ("minimize",)
    names: tuple | None = None
    constraints: tuple = ()
    functions: tuple | None = field(default=None, compare=False, repr=False)

    @classmethod
    def make(cls, direction="minimize", directions=None, constraints=None) -> "Objectives":
        """From an optimizer's arguments: ``direction`` (one value), or ``directions`` (a
        list of directions, or a dict ``{name: direction}`` naming the objectives), and
        ``constraints`` (a list of names, or a dict ``{name: function}`` of functions of the
        objective's return); a ``TypeError``/``ValueError`` names the argument."""
        check_direction(direction)
        names = None
        if directions is None:
            dirs = (direction,)
        else:
            if direction != "minimize":
                raise ValueError("give direction or directions, not both.")
            if isinstance(directions, Mapping):
                names = _names(list(directions), "directions' keys")
                dirs = tuple(directions.values())
            elif isinstance(directions, (str, bytes)) or not isinstance(directions, Sequence):
                raise TypeError(f"directions must be a list of 'minimize'/'maximize' or a dict "
                                f"{{name: direction}}, got {shorten(repr(directions), 80)}.")
            else:
                dirs = tuple(directions)
            if not dirs:
                raise ValueError("directions must name at least one objective.")
            for d in dirs:
                if d not in DIRECTIONS:
                    raise ValueError(f"directions must hold 'minimize' or 'maximize', got "
                                     f"{d!r}.")
        cons, functions = _constraints(constraints)
        if names is not None and set(names) & set(cons):
            raise ValueError(f"a name is both an objective and a constraint: "
                             f"{sorted(set(names) & set(cons))!r}.")
        if "loss" in cons:
            raise ValueError("constraints cannot name 'loss': it holds the objective's value.")
        return cls(dirs, names, cons, functions)

    # -- what it is -----------------------------------------------------------------------------
    @property
    def k(self) -> int:
        """The number of objectives."""
        return len(self.directions)

    @property
    def m(self) -> int:
        """The number of constraints."""
        return len(self.constraints)

    @property
    def multi(self) -> bool:
        return self.k > 1

    @property
    def plain(self) -> bool:
        """One unnamed objective and no constraint: a study as mfbo has always kept."""
        return self.k == 1 and self.names is None and not self.m

    @property
    def signs(self) -> np.ndarray:
        """+1 per minimised objective, -1 per maximised one: loss = sign * value."""
        return np.array([1.0 if d == "minimize" else -1.0 for d in self.directions])

    @property
    def labels(self) -> tuple[str, ...]:
        """The objectives' names (``value_0``, ``value_1``... when unnamed; ``value`` for one)."""
        if self.names is not None:
            return self.names
        return ("value",) if self.k == 1 else tuple(f"value_{i}" for i in range(self.k))

    def to_config(self) -> dict:
        """What a study records of them (nothing for a plain study, whose journal stays as
        it was)."""
        if self.plain:
            return {}
        return {"directions": list(self.directions), "objectives": self.names and
                list(self.names), "constraints": list(self.constraints)}

    @classmethod
    def from_config(cls, config: Mapping) -> "Objectives":
        """Those a study recorded (a study recorded before them: its one direction), checked
        as :meth:`make` checks its arguments (a ``TypeError``/``ValueError`` for damaged
        settings)."""
        if "directions" not in config:
            return cls.make(config.get("direction", "minimize"))
        directions, names = config["directions"], config.get("objectives")
        if names is not None:
            names = _names(names, "objectives")
            if not isinstance(directions, list) or len(directions) != len(names):
                raise ValueError(f"directions {shorten(repr(directions), 60)} do not fit the "
                                 f"objectives {list(names)!r}")
            directions = dict(zip(names, directions))
        return cls.make(directions=directions, constraints=config.get("constraints") or None)

    def describe(self) -> str:
        parts = [", ".join(f"{n}: {d}" for n, d in zip(self.labels, self.directions))]
        if self.m:
            parts.append(f"constraints {', '.join(self.constraints)} <= 0")
        return "; ".join(parts)

    # -- an objective's return --------------------------------------------------------------------
    def parse(self, value):
        """``(state, values, constraints, extra, error)`` from what an objective returned:
        ``values`` a tuple of the objectives' values, ``constraints`` a tuple of the
        constraints' values (None for a study without).  An exception, ``None`` or a
        non-finite objective or constraint value is a failed trial, its error saying which;
        a return that cannot be understood raises (a ``TypeError``/``ValueError`` naming
        what was expected) before anything is recorded: a tuple of the wrong length, a tuple
        told to a study of one value, a dict without an objective's or a constraint's key, a
        constraint's function that raises or gives no number (called with the return once
        the objectives' values are finite)."""
        if self.plain:
            state, v, extra, error = parse_outcome(value)
            return state, None if v is None else (v,), None, extra, error
        if isinstance(value, BaseException):
            return "failed", None, None, {}, f"{type(value).__name__}: {value}"
        if value is None:
            return "failed", None, None, {}, "objective returned None"
        extra: dict = {}
        raw_constraints = None
        returned = value
        keyed = () if self.functions is not None else self.constraints
        if isinstance(value, Mapping):
            raw_constraints = self._constraints_of(value)
            if self.names is not None:
                missing = [n for n in self.names if n not in value]
                if missing:
                    raise ValueError(f"value is a dict without the objective(s) "
                                     f"{missing!r}; a study of objectives {list(self.names)!r} "
                                     f"takes a dict with a key for each.")
                taken = set(self.names) | set(keyed)
                extra = extra_fields({k: v for k, v in value.items() if k not in taken})
                value = tuple(value[n] for n in self.names)
            else:
                if "loss" not in value:
                    raise ValueError(f"value is a dict without a 'loss' key; expected "
                                     f"{self._expected()}.")
                taken = {"loss", *keyed}
                extra = extra_fields({k: v for k, v in value.items() if k not in taken})
                value = value["loss"]
                if value is None:
                    return "failed", None, None, extra, "objective returned None as its 'loss'"
        elif keyed:
            raise TypeError(f"value is {type(value).__name__}; a study with constraints "
                            f"{list(self.constraints)!r} takes a dict holding them (and "
                            f"{self._expected()}).")
        values = self._values_of(value)
        for i, v in enumerate(values):
            if v is None or not math.isfinite(v):
                return "failed", None, None, extra, (
                    f"objective {self.labels[i]!r} is {'None' if v is None else v}")
        if self.functions is not None:
            raw_constraints = self._constraints_called(returned)
        cons = None
        if raw_constraints is not None:
            cons = raw_constraints
            for name, c in zip(self.constraints, cons):
                if c is None or not math.isfinite(c):
                    return "failed", None, None, extra, (
                        f"constraint {name!r} is {'None' if c is None else c}")
        return "complete", values, cons, extra, None

    def _expected(self) -> str:
        if self.names is not None:
            return f"a dict with keys {list(self.names)!r}"
        if self.k == 1:
            return "a number, or a dict whose 'loss' key holds one"
        return f"a tuple of {self.k} numbers (or a dict whose 'loss' key holds one)"

    def _number(self, v, what: str) -> float | None:
        if v is None:
            return None
        if isinstance(v, np.ndarray) and v.size == 1:
            v = v.reshape(()).item()
        if not is_number(v):
            raise TypeError(f"{what} is {shorten(repr(v), 60)}; expected a number.")
        try:
            return float(v)
        except OverflowError:
            return math.inf

    def _values_of(self, value) -> tuple:
        if self.k == 1 and self.names is None:
            if isinstance(value, (tuple, list, np.ndarray)) and np.size(value) != 1:
                raise TypeError(f"value is a {type(value).__name__} of {np.size(value)} values; "
                                f"this study has one objective (pass directions=[...] to "
                                f"optimise several).")
            return (self._number(value, "value"),)
        if isinstance(value, np.ndarray):
            value = value.ravel().tolist()
        if not isinstance(value, (tuple, list)):
            raise TypeError(f"value is {shorten(repr(value), 60)}; expected "
                            f"{self._expected()}.")
        if len(value) != self.k:
            raise ValueError(f"value holds {len(value)} values; this study has {self.k} "
                             f"objectives ({', '.join(self.labels)}).")
        return tuple(self._number(v, f"objective {n!r}") for n, v in zip(self.labels, value))

    def _constraints_of(self, value: Mapping) -> tuple | None:
        if not self.m or self.functions is not None:
            return None
        missing = [c for c in self.constraints if c not in value]
        if missing:
            raise ValueError(f"value is a dict without the constraint(s) {missing!r}; this "
                             f"study's constraints are {list(self.constraints)!r} (each "
                             f"returned, <= 0 when met).")
        return tuple(self._number(value[c], f"constraint {c!r}") for c in self.constraints)

    def _constraints_called(self, returned) -> tuple:
        """Each constraint's function called with the objective's return ``returned``; a
        ``ValueError`` naming the constraint when one raises, a ``TypeError`` when one gives
        no number."""
        out = []
        for name, fn in zip(self.constraints, self.functions):
            try:
                v = fn(returned)
            except Exception as exc:
                raise ValueError(f"constraint {name!r}: its function raised "
                                 f"{type(exc).__name__}: {shorten(str(exc), 80)}, called with "
                                 f"the objective's return {shorten(repr(returned), 60)}.") \
                    from exc
            out.append(self._number(v, f"constraint {name!r} (its function's value)"))
        return tuple(out)

    def check_picklable(self) -> None:
        """A ``TypeError`` naming the first constraint whose function cannot be pickled (a
        lambda or a local function), saying what to do instead."""
        for name, fn in zip(self.constraints, self.functions or ()):
            try:
                pickle.dumps(fn)
            except Exception as exc:
                raise TypeError(
                    f"constraint {name!r}: its function {shorten(repr(fn), 60)} cannot be "
                    f"pickled ({type(exc).__name__}), so neither can the study.  Define it "
                    f"with def at a module's top level, or keep the study in a storage and "
                    f"open it again where it is needed.") from None

    def check_told(self, values, constraints) -> tuple[tuple | None, tuple | None]:
        """A ``tell`` event's ``values`` and ``constraints`` checked against these objectives
        (a ``ValueError``/``TypeError`` for a damaged journal)."""
        def numbers(seq, n, what):
            if not isinstance(seq, list) or len(seq) != n:
                raise ValueError(f"{what} must be a list of {n} numbers, got "
                                 f"{shorten(repr(seq), 60)}")
            out = []
            for v in seq:
                if not is_number(v) or not math.isfinite(float(v)):
                    raise ValueError(f"{what} must be finite numbers, got {shorten(repr(v), 40)}")
                out.append(float(v))
            return tuple(out)
        vals = numbers(values, self.k, "values")
        cons = numbers(constraints, self.m, "constraints") if self.m else None
        if not self.m and constraints is not None:
            raise ValueError("a study without constraints records none")
        return vals, cons
