"""How every benchmark takes a wall-clock time: one policy, one clock.

* A call that can be repeated and measure the same thing (a fit of a fresh model, a
  prediction, a pickling) is timed with :func:`median_time`: one untimed warm-up call (numba
  compilation or cache loading, lazily computed state, cold CPU caches), then the median of
  ``repeats`` timed calls.  The median ignores the load spikes of other processes that a mean
  would absorb and a minimum would hide.
* A call that cannot be repeated without measuring something else is timed once with
  :func:`timed`: it changes state (an online update, one batch of a stream, a whole
  optimisation run) or its first call is what is measured (a cold start, the first prediction
  after new data).

Both read :func:`clock` (``time.perf_counter``), which loops that stamp several phases of one
step (ask, evaluate, tell) read directly.
"""

from __future__ import annotations

import time
from typing import Callable, TypeVar

import numpy as np

__all__ = ["REPEATS", "clock", "median_time", "timed"]

T = TypeVar("T")

#: timed calls of :func:`median_time` unless a benchmark says otherwise
REPEATS = 5

clock = time.perf_counter


def timed(fn: Callable[[], T]) -> tuple[T, float]:
    """``(result, seconds)`` of one call of ``fn``."""
    start = clock()
    out = fn()
    return out, clock() - start


def median_time(fn: Callable[[], T], repeats: int = REPEATS,
                warmup: int = 1) -> tuple[T, float]:
    """``(result of the last call, median seconds)`` of ``repeats`` calls of ``fn`` after
    ``warmup`` untimed calls.

    ``fn`` must give the same result every time (a fresh, seeded model; a pure prediction):
    the result returned is the last call's.
    """
    if repeats < 1:
        raise ValueError(f"repeats must be at least 1, got {repeats}.")
    for _ in range(warmup):
        fn()
    seconds = []
    for _ in range(repeats):
        out, s = timed(fn)
        seconds.append(s)
    return out, float(np.median(seconds))
