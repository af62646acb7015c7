"""Error measures used across the library and its experiments."""

from __future__ import annotations

import numpy as np

from ._core.scaling import target_exponent

__all__ = ["relative_error", "rmse"]


def relative_error(y_true, y_pred) -> float:
    """The "test set error" of Balog, Lakshminarayanan, Ghahramani, Roy & Teh, 2016 (Section
    8.1, Figure 6): ``100 * |y_pred - y_true|_2 / |y_true|_2`` in percent, on the targets as
    given (not centred), as the authors' reference code computes it."""
    y_true = np.asarray(y_true, dtype=np.float64)
    y_pred = np.asarray(y_pred, dtype=np.float64)
    k = max(target_exponent(y_true), target_exponent(y_pred))
    if k:  # a ratio: the same for both divided by 2^k (exactly), whose squares do not overflow
        y_true, y_pred = np.ldexp(y_true, -k), np.ldexp(y_pred, -k)
    return float(100.0 * np.linalg.norm(y_pred - y_true) / np.linalg.norm(y_true))


def rmse(y_true, y_pred) -> float:
    """Root mean squared error (also of errors whose squares overflow float64: inf only when
    the root mean square itself is beyond float64)."""
    y_true = np.asarray(y_true, dtype=np.float64)
    y_pred = np.asarray(y_pred, dtype=np.float64)
    k = max(target_exponent(y_true), target_exponent(y_pred))
    if k:
        # divided by 2^(k + 1) (exactly) so that neither the differences nor their squares
        # overflow, and multiplied back
        d = np.ldexp(y_pred, -k - 1) - np.ldexp(y_true, -k - 1)
        with np.errstate(over="ignore"):
            return float(np.ldexp(np.sqrt(np.mean(d * d)), k + 1))
    d = y_pred - y_true
    return float(np.sqrt(np.mean(d * d)))
