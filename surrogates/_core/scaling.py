"""Exact rescaling of targets too large to square in float64.

The regressors hold sums of squared targets (variances, residual sums of squares, squared
weights), which overflow float64 for targets beyond about 1e154.  Targets larger than
:data:`Y_LIMIT` are therefore stored divided by a power of two ``2^k`` and the results mapped
back.  Multiplying by a power of two is exact (short of underflow or overflow), so every sum,
product, quotient and square root computed on the divided targets is exactly ``2^-k`` (or
``4^-k``) times the one on the targets themselves: the rescaled arithmetic gives the same
numbers, only without overflow, and ordinary targets (``k = 0``) are never touched.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["Y_LIMIT", "target_exponent", "unscale"]

#: targets are divided by a power of two when their magnitude exceeds Y_LIMIT.  Below 2^400
#: (about 2.6e120) sums of squares stay finite for any number of points (up to 2^200).
Y_LIMIT = 2.0 ** 400


def target_exponent(y) -> int:
    """``k`` such that ``y / 2^k`` is safe to square and sum: 0 when ``max |y| <= Y_LIMIT``,
    otherwise the exponent that brings ``max |y|`` into ``[0.5, 1)`` (dividing by ``2^k`` is
    exact)."""
    y = np.asarray(y)
    top = float(np.max(np.abs(y))) if y.size else 0.0
    return math.frexp(top)[1] if top > Y_LIMIT else 0


def unscale(values, k: int):
    """``values`` computed from targets held divided by ``2^k`` (``k`` doubled for squares),
    in the targets' units: ``values`` themselves when ``k`` is 0, inf beyond float64."""
    if not k:
        return values
    with np.errstate(over="ignore"):
        out = np.ldexp(values, k)
    return float(out) if isinstance(values, float) else out
