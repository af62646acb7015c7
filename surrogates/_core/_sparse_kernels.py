"""Compiled helpers for the sparse features of the Mondrian kernel and grid (rows given as the
column of each nonzero and its value)."""

from numba import njit

from . import cache  # noqa: F401  (a writable cache place for numba before any njit)


@njit(cache=True, inline="always")
def quad_form(feat, val, Ainv):
    """``phi' A^-1 phi`` for the sparse row ``phi`` with values ``val`` at the columns ``feat``:
    ``sum_{a,b} val[a] val[b] Ainv[feat[a], feat[b]]`` (entries with ``feat < 0`` are
    skipped)."""
    acc = 0.0
    for a in range(feat.shape[0]):
        fa = feat[a]
        if fa < 0:
            continue
        for b in range(feat.shape[0]):
            fb = feat[b]
            if fb >= 0:
                acc += val[a] * val[b] * Ainv[fa, fb]
    return acc
