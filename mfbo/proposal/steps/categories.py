"""The categorical choices of unit rows: the index of each categorical coordinate's value,
which the steps that compare categorical cells (branch escapes, local models per cell, the
exchange escape's unseen combinations) all read the same way."""

from __future__ import annotations

import numpy as np

from acquisitions import level_index

__all__ = ["branch_codes"]


def branch_codes(U: np.ndarray, levels: np.ndarray, cat: np.ndarray) -> np.ndarray:
    """The categorical choices of unit rows ``U``: for each categorical column in ``cat``, the
    index of its value, or -1 where the coordinate lies outside the unit interval (an
    inactive parameter)."""
    C = np.asarray(U, dtype=float)[..., cat]
    idx = level_index(C, np.abs(levels[cat]).astype(float))
    return np.where((C < 0.0) | (C > 1.0), -1.0, idx)
