"""The kernel-width search of Balog et al. (2016, Section 8.2) for methods that must be
refitted per width: in ``log2(lifetime)``, widen the bracket while the best error sits at one
end, then bisect towards the best width."""

from __future__ import annotations

import math
import time
from typing import Callable

import numpy as np

from .._core.validation import (check_int, check_positive)

__all__ = ["select_width"]


def select_width(evaluate: Callable[[float], float], n_steps: int, start: float = 1.0,
                 max_error: float = 20.0):
    """The width search of Balog et al. (2016), Section 8.2, for methods that must be refitted
    per width, with the rules of the authors' reference code.

    Works on ``l = log2(lifetime)`` from ``log2(start)``: while the best error so far sits at
    the smallest (largest) ``l`` tried, try one below (above); while the best error exceeds
    ``max_error``, alternate between the two; otherwise bisect between the best ``l`` and its
    better neighbour.

    Parameters
    ----------
    evaluate : callable
        ``evaluate(lifetime) -> validation error``.
    n_steps : int
        Evaluations after the first.
    start : float, default=1.0
        First lifetime tried (the paper starts its baselines at 1).
    max_error : float, default=20.0
        Validation error (in percent) above which the search alternates between the two ends
        of the bracket; 20 in the authors' reference code.

    Returns
    -------
    lifetimes, errors, runtimes : ndarray
        In evaluation order; ``runtimes`` are seconds since the start of the search.
    """
    check_int(n_steps, "n_steps", 0)
    t0 = time.perf_counter()
    lg = math.log2(check_positive(start, "start"))
    err = float(evaluate(2.0 ** lg))
    lams, errs, times = [2.0 ** lg], [err], [time.perf_counter() - t0]
    tried = [(lg, err)]
    for i in range(n_steps):
        am = int(np.argmin([e for _, e in tried]))
        worst = tried[am][1] > max_error
        if am == 0 or (worst and i % 2 == 0):
            lg = tried[0][0] - 1.0
        elif am + 1 == len(tried) or (worst and i % 2 == 1):
            lg = tried[-1][0] + 1.0
        elif tried[am + 1][1] < tried[am - 1][1]:
            lg = 0.5 * (tried[am + 1][0] + tried[am][0])
        else:
            lg = 0.5 * (tried[am - 1][0] + tried[am][0])
        err = float(evaluate(2.0 ** lg))
        lams.append(2.0 ** lg)
        errs.append(err)
        times.append(time.perf_counter() - t0)
        tried.append((lg, err))
        tried.sort()
    return np.asarray(lams), np.asarray(errs), np.asarray(times)
