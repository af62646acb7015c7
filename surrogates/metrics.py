"""Error measures used across the library and its experiments."""

from __future__ import annotations

import numpy as np

__all__ = ["relative_error", "rmse"]


def relative_error(y_true, y_pred) -> float:
    """The "test set error" of Balog, Lakshminarayanan, Ghahramani, Roy & Teh, 2016 (Section
    8.1, Figure 6): ``100 * |y_pred - y_true|_2 / |y_true|_2`` in percent, on the targets as
    given (not centred), as the authors' reference code computes it."""
    y_true = np.asarray(y_true, dtype=np.float64)
    y_pred = np.asarray(y_pred, dtype=np.float64)
    return float(100.0 * np.linalg.norm(y_pred - y_true) / np.linalg.norm(y_true))


def rmse(y_true, y_pred) -> float:
    """Root mean squared error."""
    d = np.asarray(y_pred, dtype=np.float64) - np.asarray(y_true, dtype=np.float64)
    return float(np.sqrt(np.mean(d * d)))
