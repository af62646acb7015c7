"""New rows for a tree store, checked and scaled: the inputs ``(Xraw - lower) / scale``, the
targets ``yraw * y_mult``.

NumPy, not a compiled kernel: a few array operations on a mini-batch cost microseconds, and
a fresh install has one kernel fewer to compile.  The arithmetic is elementwise, so the
scaled values are the same, bit for bit, as a loop over the rows computes.
"""

from __future__ import annotations

import numpy as np

__all__ = ["BAD_X", "BAD_Y", "BIG_Y", "FAR_X", "scaled_rows"]

#: what :func:`scaled_rows` found besides all well: a non-finite input or target, an input
#: too far out of the scaled range, a target too large for its scaling (to be rescaled, not
#: an error)
BAD_X, BAD_Y, FAR_X, BIG_Y = 0, 1, 2, 3


def scaled_rows(Xraw, yraw, lower, scale, x_limit, y_mult, y_limit):
    """``(X, y, row, kind)``: the rows scaled, and ``row = -1`` when all is well; otherwise
    the first problem's row and kind (the scaled rows are then not to be used).

    A row's problems are looked at in this order: a non-finite ``Xraw`` (``BAD_X``) or
    ``yraw`` (``BAD_Y``), a scaled input beyond ``x_limit`` (``FAR_X``); only when all rows
    are otherwise valid, a scaled target beyond ``y_limit`` (``BIG_Y``).
    """
    with np.errstate(all="ignore"):  # (non-finite or huge rows are refused just below)
        X = (Xraw - lower) / scale
        y = yraw * y_mult
        far = ~(np.abs(X) <= x_limit).all(axis=1)
        big = ~(np.abs(y) <= y_limit)
    if far.any():  # a non-finite input makes its row far too; which comes first is sorted out
        bad_x = ~np.isfinite(Xraw).all(axis=1)
        bad_y = ~np.isfinite(yraw)
        row = int(np.argmax(bad_x | bad_y | far))
        kind = BAD_X if bad_x[row] else BAD_Y if bad_y[row] else FAR_X
        return X, y, row, kind
    if big.any():
        bad_y = ~np.isfinite(yraw)
        if bad_y.any():
            return X, y, int(np.argmax(bad_y)), BAD_Y
        return X, y, int(np.argmax(big)), BIG_Y
    return X, y, -1, -1
