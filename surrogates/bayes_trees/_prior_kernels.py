"""The tree prior shared by the Bayesian decision trees and BART.

A node at depth ``d`` (the root has depth 0) is split with probability
``alpha * (1 + d) ** -beta`` (Chipman, George & McCulloch 1998); the split dimension is
uniform over the dimensions where the node's data is not constant, the split location uniform
over the range of the node's data along it (Lakshminarayanan 2016, sections 3.2 and 4.2).
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def split_probability(depth: int, alpha: float, beta: float) -> float:
    """Prior probability that a node at ``depth`` is split: ``alpha * (1 + depth) ** -beta``."""
    return alpha * (1.0 + depth) ** (-beta)


@njit(cache=True)
def extents(X, perm, start, end, lo, hi):
    """Fill ``lo``/``hi`` with the range along every dimension of the rows ``perm[start:end]``
    of ``X`` (a node's data); return how many dimensions vary, the dimensions a split may
    take."""
    D = X.shape[1]
    for d in range(D):
        lo[d] = np.inf
        hi[d] = -np.inf
    for k in range(start, end):
        i = perm[k]
        for d in range(D):
            v = X[i, d]
            if v < lo[d]:
                lo[d] = v
            if v > hi[d]:
                hi[d] = v
    nvar = 0
    for d in range(D):
        if hi[d] > lo[d]:
            nvar += 1
    return nvar
