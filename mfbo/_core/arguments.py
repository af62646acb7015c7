"""Checks of integer and number arguments, shared by the package's entry points.

Each raises a ``ValueError`` that names the argument and shows the value it got, before any
state is touched.  A bool is not accepted as an integer.
"""

from __future__ import annotations

import math
import numbers

__all__ = ["is_int", "check_int", "check_nonnegative"]


def is_int(value, minimum: int = 1) -> bool:
    """Whether ``value`` is an integer (not a bool) of at least ``minimum``."""
    return isinstance(value, numbers.Integral) and not isinstance(value, bool) and \
        value >= minimum


def check_int(value, name: str, minimum: int = 1, or_none: bool = False) -> int | None:
    """``int(value)``, or ``ValueError`` naming ``name`` unless ``value`` is an integer of at
    least ``minimum`` (or, with ``or_none``, None, which is returned as it is)."""
    if or_none and value is None:
        return None
    if not is_int(value, minimum):
        what = "a positive integer" if minimum == 1 else f"an integer >= {minimum}"
        raise ValueError(f"{name} must be {what}{' or None' if or_none else ''}, "
                         f"got {value!r}.")
    return int(value)


def check_nonnegative(value, name: str, or_none: bool = False) -> float | None:
    """``float(value)``, or ``ValueError`` naming ``name`` unless ``value`` is a finite number
    (not a bool) of at least 0 (or, with ``or_none``, None, which is returned as it is)."""
    if or_none and value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or \
            not 0 <= value < math.inf:
        raise ValueError(f"{name} must be a finite number >= 0{' or None' if or_none else ''}, "
                         f"got {value!r}.")
    return float(value)
