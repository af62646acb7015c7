"""One evaluation of the objective (:class:`Trial`) and what an objective's return value means
(:func:`parse_outcome`)."""

from __future__ import annotations

import copy
import dataclasses
import math
import numbers
from dataclasses import dataclass, field
from typing import Mapping

import numpy as np

__all__ = ["Trial", "parse_outcome"]


@dataclass
class Trial:
    """One evaluation of the objective.

    ``id`` numbers the trials of a study from 0 in the order they were asked; ``params`` is the
    configuration as a dict; ``state`` is ``"pending"``, ``"complete"`` or ``"failed"``;
    ``value`` is the objective's value as told, a loss or, in a study that maximises, a score
(None unless complete); ``extra`` holds the other fields of a dict
    returned by the objective; ``error`` the text of a failure.
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

    @property
    def duration(self) -> float | None:
        if self.start is None or self.end is None:
            return None
        return self.end - self.start


def public(t: Trial) -> Trial:
    """A copy of a trial for the caller: editing it cannot change the study."""
    return dataclasses.replace(t, params=dict(t.params), extra=copy.deepcopy(t.extra),
                               unit=None if t.unit is None else t.unit.copy())


def is_number(v) -> bool:
    return isinstance(v, numbers.Real) and not isinstance(v, bool)


def finite(v, what: str) -> float:
    """``v`` as a float; ``TypeError``/``ValueError`` naming ``what`` unless a finite number."""
    if not is_number(v):
        raise TypeError(f"{what} must be a number, got {v!r}.")
    if not math.isfinite(float(v)):
        raise ValueError(f"{what} must be finite, got {v!r}.")
    return float(v)


def parse_outcome(value) -> tuple[str, float | None, dict, str | None]:
    """``(state, loss, extra, error)`` from what an objective returned.

    A float (or numpy scalar) is the loss; a dict needs a ``"loss"`` key, the other keys are
    kept as extra fields; an exception, ``None``, a non-finite loss or anything else is a
    failed trial with the reason as error text."""
    extra: dict = {}
    if isinstance(value, BaseException):
        return "failed", None, extra, f"{type(value).__name__}: {value}"
    if isinstance(value, Mapping):
        extra = {k: v for k, v in value.items() if k != "loss"}
        if "loss" not in value:
            return "failed", None, extra, "objective returned a dict without a 'loss' key"
        value = value["loss"]
    if isinstance(value, np.ndarray) and value.size == 1:
        value = value.reshape(()).item()
    if not is_number(value):
        return "failed", None, extra, f"objective returned {value!r}, not a number"
    v = float(value)
    if not math.isfinite(v):
        return "failed", None, extra, f"objective returned a non-finite loss ({v})"
    return "complete", v, extra, None
