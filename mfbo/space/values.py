"""The identity of a value of a dimension: when two choices are the same choice."""

from __future__ import annotations

import numpy as np

__all__ = ["json_key"]


def json_key(v):
    """A key under which equal choices coincide (1 and 1.0 and True are distinct)."""
    if isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, float) and v != v:  # every NaN is the same choice
        return ("nan", None)
    return (type(v).__name__ if isinstance(v, (bool, str)) or v is None else "num", v)
