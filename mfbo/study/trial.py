"""One evaluation of the objective (:class:`Trial`) and what an objective's return value means
(:func:`parse_outcome`)."""

from __future__ import annotations

import copy
import dataclasses
import json
import math
import numbers
from dataclasses import dataclass, field
from typing import Mapping

import numpy as np

from ..storage.base import to_json

__all__ = ["Trial", "TrialPruned", "parse_outcome", "extra_fields", "shorten", "finite"]


class TrialPruned(Exception):
    """Raised by an objective to stop its trial early (as Optuna's ``TrialPruned``): the trial
    is recorded ``"pruned"``, with the values it reported.  :func:`mfbo.minimize` catches it;
    an ask/tell loop catches it and tells the trial ``state="pruned"`` (or tells the
    exception itself)."""


@dataclass
class Trial:
    """One evaluation of the objective.

    ``id`` numbers the trials of a study from 0 in the order they were asked; ``params`` is the
    configuration as a dict; ``state`` is ``"pending"``, ``"complete"``, ``"failed"`` or
    ``"pruned"`` (stopped early, by a pruner's advice or the user's choice);
    ``value`` is the objective's value as told, a loss or, in a study that maximises, a score
    (None unless complete: a pruned trial's last measurement is in ``intermediate_values``);
    ``intermediate_values`` maps each step the trial reported (an epoch, a boosting round, a
    fold...) to the value measured there; ``rungs`` holds the value a trial had when it
    reached each rung of successive halving (recorded by
    :class:`~mfbo.pruners.SuccessiveHalvingPruner` and :class:`~mfbo.pruners.HyperbandPruner`
    when asked whether to stop it); ``extra`` holds the other fields of a dict
    returned by the objective; ``error`` the text of a failure.  ``origin`` names what
    proposed the configuration: a step of the proposal policy (``"design"``, ``"random"``,
    ``"plateau"``, ``"local"``, ``"parzen"``, ``"acquisition"``), ``"enqueued"`` for a
    configuration given by :meth:`~mfbo.Optimizer.enqueue`, or None where not recorded
    (a trial told by :meth:`~mfbo.Optimizer.tell` with params, or a journal of mfbo 0.1).
    ``values`` holds a complete trial's value of each objective, as told (in a study of
    one objective ``(value,)``; in a study of several ``value`` is None); ``constraints``
    the values of a study's constraints (None in a study without), each ``<= 0`` when met.
    """

    id: int
    params: dict
    state: str = "pending"
    value: float | None = None
    extra: dict = field(default_factory=dict)
    error: str | None = None
    asked_at: float = 0.0
    start: float | None = None
    end: float | None = None
    worker: str | None = None
    owner: str | None = None
    candidate: int | None = None
    unit: np.ndarray | None = field(default=None, repr=False)
    origin: str | None = None
    intermediate_values: dict = field(default_factory=dict)
    rungs: dict = field(default_factory=dict)
    values: tuple | None = None
    constraints: tuple | None = None

    def __post_init__(self):
        if self.values is None and self.value is not None:
            self.values = (self.value,)  # one objective's value

    @property
    def feasible(self) -> bool:
        """Whether the trial is complete and meets every constraint (every complete trial of
        a study without constraints does)."""
        return self.state == "complete" and (self.constraints is None or
                                             all(c <= 0 for c in self.constraints))

    @property
    def last_step(self) -> int | None:
        """The largest step reported (None before the first report)."""
        return max(self.intermediate_values) if self.intermediate_values else None

    @property
    def duration(self) -> float | None:
        if self.start is None or self.end is None:
            return None
        return self.end - self.start


def public(t: Trial) -> Trial:
    """A copy of a trial for the caller: editing it cannot change the study."""
    return dataclasses.replace(t, params=dict(t.params), extra=copy.deepcopy(t.extra),
                               unit=None if t.unit is None else t.unit.copy(),
                               intermediate_values=dict(t.intermediate_values),
                               rungs=dict(t.rungs))


def is_number(v) -> bool:
    return isinstance(v, numbers.Real) and not isinstance(v, bool)


def finite(v, what: str) -> float:
    """``v`` as a float; ``TypeError``/``ValueError`` naming ``what`` unless a finite number."""
    if not is_number(v):
        raise TypeError(f"{what} must be a number, got {v!r}.")
    if not math.isfinite(float(v)):
        raise ValueError(f"{what} must be finite, got {v!r}.")
    return float(v)


def shorten(v, limit: int = 300) -> str:
    """``str(v)`` cut to ``limit`` characters, ending in ``...`` when cut (for messages that
    quote a value which may be huge)."""
    text = str(v)
    return text if len(text) <= limit else f"{text[:limit - 3]}..."


def _describe(value) -> str:
    """A short description of a returned value for an error message (never its whole repr:
    it may be huge)."""
    if isinstance(value, Mapping):
        keys = sorted(map(repr, value))
        return f"a dict with keys {', '.join(keys[:8])}{', ...' if len(keys) > 8 else ''}"
    if isinstance(value, (tuple, list)):
        return f"a {type(value).__name__} of {len(value)} values"
    if isinstance(value, np.ndarray):
        return f"an array of shape {value.shape}"
    return shorten(repr(value), 80)


def _json_safe(obj, seen: tuple = ()):
    """A copy of ``obj`` that JSON can encode: keys that are not strings become their
    ``repr`` (unless JSON takes them: int, float, bool, None), a container met again inside
    itself becomes ``"<circular reference>"``, anything else is left for the journal's encoder
    (numpy values become numbers, other objects their ``repr``)."""
    if isinstance(obj, (dict, list, tuple, set, frozenset)):
        if any(obj is s for s in seen):
            return "<circular reference>"
        seen = seen + (obj,)
    if isinstance(obj, Mapping):
        out = {}
        for k, v in obj.items():
            key = k if isinstance(k, (str, int, float, bool)) or k is None else repr(k)
            out[key] = _json_safe(v, seen)
        return out
    if isinstance(obj, (list, tuple, set, frozenset)):
        return [_json_safe(v, seen) for v in obj]
    return obj


def extra_fields(extra: Mapping) -> dict:
    """The extra fields of an outcome as the journal records them: JSON's view of them (keys
    strings, tuples lists, numpy values numbers, other objects their ``repr``), so the trial
    told is the trial replayed; keys or references JSON cannot encode are replaced, never a
    crash (see :func:`_json_safe`)."""
    try:
        text = to_json(dict(extra))
    except (TypeError, ValueError, RecursionError):
        text = to_json(_json_safe(dict(extra)))
    return json.loads(text)


def parse_outcome(value) -> tuple[str, float | None, dict, str | None]:
    """``(state, loss, extra, error)`` from what an objective returned.

    A float (an int, a numpy scalar or one-element array) is the value; a dict needs a
    ``"loss"`` key holding it, the other keys are kept as extra fields.  An exception,
    ``None``, or a non-finite value (NaN, inf, an int too large for a float) is a failed
    trial with the reason as error text.  Anything else cannot be understood, and raises
    (a ``ValueError`` for a dict without ``"loss"``, a ``TypeError`` for a tuple, a list, a
    string or another object) before anything is recorded: a study of one objective takes
    one number per trial."""
    expected = "a number, or a dict whose 'loss' key holds one"
    extra: dict = {}
    if isinstance(value, BaseException):
        return "failed", None, extra, f"{type(value).__name__}: {value}"
    if value is None:
        return "failed", None, extra, "objective returned None"
    if isinstance(value, Mapping):
        if "loss" not in value:
            raise ValueError(f"value is {_describe(value)} but no 'loss' key; expected "
                             f"{expected} (the other keys are kept as extra fields).")
        extra = extra_fields({k: v for k, v in value.items() if k != "loss"})
        if value["loss"] is None:
            return "failed", None, extra, "objective returned None as its 'loss'"
        value = value["loss"]
    if isinstance(value, np.ndarray) and value.size == 1:
        value = value.reshape(()).item()
    if not is_number(value):
        hint = (" (this study has one objective: pass directions=[...] to optimise several)"
                if isinstance(value, (tuple, list, np.ndarray)) else "")
        raise TypeError(f"value is {_describe(value)}; expected {expected}{hint}.")
    try:
        v = float(value)
    except OverflowError:
        return "failed", None, extra, (f"objective returned an integer too large for a float "
                                       f"({value.bit_length()} bits)")
    if not math.isfinite(v):
        return "failed", None, extra, f"objective returned a non-finite loss ({v})"
    return "complete", v, extra, None
