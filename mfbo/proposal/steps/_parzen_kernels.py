"""The compiled draw of normals restricted to [0, 1] by redrawing: the same numbers, in the
same order from the same generator, as redrawing them pass after pass with numpy, without
numpy's cost per pass.

numba's ``numpy.random.Generator.standard_normal`` draws from the generator's own bit
generator, as numpy's does, and gives the same values, so a run is the same whichever draws
its points (tested against the numpy form).
"""

from __future__ import annotations

from surrogates._core import cache  # noqa: F401  (a writable cache place before any njit)
import numpy as np
from numba import njit, typeof, types

__all__ = ["truncated_normal_into", "signature"]


def signature() -> tuple:
    """The argument types the Parzen step calls :func:`truncated_normal_into` with."""
    f8 = types.Array(types.float64, 1, "C")
    return f8, f8, typeof(np.random.default_rng(0)), f8, types.int64


@njit(cache=True)
def truncated_normal_into(mu, sd, rng, out, redraws):
    """``out[i]``: a draw of the normal ``(mu[i], sd[i])`` restricted to [0, 1], redrawn up to
    ``redraws`` times while outside (all of the first draws, then those still outside in
    index order, pass after pass), then clipped."""
    n = mu.size
    for i in range(n):
        out[i] = mu[i] + sd[i] * rng.standard_normal()
    bad = np.empty(n, np.int64)
    m = 0
    for i in range(n):
        if out[i] < 0.0 or out[i] > 1.0:
            bad[m] = i
            m += 1
    for _ in range(redraws):
        if m == 0:
            break
        kept = 0
        for j in range(m):
            i = bad[j]
            w = mu[i] + sd[i] * rng.standard_normal()
            out[i] = w
            if w < 0.0 or w > 1.0:
                bad[kept] = i
                kept += 1
        m = kept
    for i in range(n):
        out[i] = min(max(out[i], 0.0), 1.0)
