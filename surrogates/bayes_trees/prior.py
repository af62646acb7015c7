"""The tree prior shared by the Bayesian decision trees and BART.

A node at depth ``d`` (the root has depth 0) is split with probability
``alpha * (1 + d) ** -beta`` (Chipman, George & McCulloch 1998); the split dimension is
uniform over the dimensions where the node's data is not constant, the split location uniform
over the range of the node's data along it (Lakshminarayanan 2016, sections 3.2 and 4.2).
"""

from __future__ import annotations

from numba import njit


@njit(cache=True)
def split_probability(depth: int, alpha: float, beta: float) -> float:
    """Prior probability that a node at ``depth`` is split: ``alpha * (1 + depth) ** -beta``."""
    return alpha * (1.0 + depth) ** (-beta)
