"""The loop index of a ``prange`` loop, as the compiled functions it is passed to expect.

numba counts a ``prange`` loop in ``uint64`` but types the same loop as an ``int64`` ``range``
when it compiles the serial form first, so a function called with the loop index gets two
specialisations, each compiled at full cost on a cold cache.  Passing :func:`as_index` of the
index gives every callee one signature.
"""

from __future__ import annotations

from . import cache  # noqa: F401  (a writable cache place for numba before any njit)
import numba
import numpy as np

__all__ = ["as_index"]


@numba.njit(cache=True, inline="always")
def as_index(i):
    """A ``prange`` loop index as an ``int64``."""
    return np.int64(i)
