"""The categorical choices of unit rows (branch_codes)."""

import numpy as np

from mfbo.proposal.steps.categories import branch_codes


def test_branch_codes_mark_inactive_coordinates():
    levels = np.array([-3, 0, -2])
    cat = np.flatnonzero(levels < 0)
    U = np.array([[0.1, 0.5, 0.9], [0.9, 0.5, -0.5], [0.5, 0.2, 0.3]])
    assert branch_codes(U, levels, cat).tolist() == [[0, 1], [2, -1], [1, 0]]
