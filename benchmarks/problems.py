"""Benchmark objectives for Bayesian optimization (minimisation), spec bayesopt.md §2.

A problem is a :class:`Problem`: a search space, a vectorised function on the problem's own
coordinates, the known optimum and HPOlib's budget.  Register a new one in ``PROBLEMS``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

__all__ = ["Problem", "PROBLEMS", "branin", "hartmann6", "hartmann3", "rosenbrock", "ackley",
           "levy", "get_problem"]


@dataclass
class Problem:
    """``f(X)`` on an ``(n, D)`` array in the order of ``space``'s names."""

    name: str
    space: dict
    f: Callable[[np.ndarray], np.ndarray]
    optimum: float
    budget: int

    @property
    def names(self) -> list[str]:
        return list(self.space)

    def __call__(self, **params) -> float:
        """The objective as ``mfbo.minimize`` calls it: keyword arguments, one float."""
        x = np.array([[params[n] for n in self.names]], dtype=float)
        return float(self.f(x)[0])

    def bounds(self) -> np.ndarray:
        return np.array([[lo, hi] for lo, hi in self.space.values()], dtype=float)

    def random_grid(self, n: int, seed: int) -> np.ndarray:
        """``n`` uniform random points of the box (the papers' 250,000-point candidate grids)."""
        b = self.bounds()
        return b[:, 0] + np.random.default_rng(seed).random((n, len(b))) * (b[:, 1] - b[:, 0])


def branin(X):
    X = np.atleast_2d(X)
    x1, x2 = X[:, 0], X[:, 1]
    a, b, c, r, s, t = 1.0, 5.1 / (4 * np.pi**2), 5 / np.pi, 6.0, 10.0, 1 / (8 * np.pi)
    return a * (x2 - b * x1**2 + c * x1 - r) ** 2 + s * (1 - t) * np.cos(x1) + s


_H6_A = np.array([[10, 3, 17, 3.5, 1.7, 8], [0.05, 10, 17, 0.1, 8, 14],
                  [3, 3.5, 1.7, 10, 17, 8], [17, 8, 0.05, 10, 0.1, 14]])
_H6_P = 1e-4 * np.array([[1312, 1696, 5569, 124, 8283, 5886], [2329, 4135, 8307, 3736, 1004, 9991],
                         [2348, 1451, 3522, 2883, 3047, 6650], [4047, 8828, 8732, 5743, 1091, 381]])
_H_ALPHA = np.array([1.0, 1.2, 3.0, 3.2])
_H3_A = np.array([[3.0, 10, 30], [0.1, 10, 35], [3.0, 10, 30], [0.1, 10, 35]])
_H3_P = 1e-4 * np.array([[3689, 1170, 2673], [4699, 4387, 7470], [1091, 8732, 5547],
                         [381, 5743, 8828]])


def _hartmann(X, A, P):
    X = np.atleast_2d(X)
    inner = ((X[:, None, :] - P[None]) ** 2 * A[None]).sum(axis=2)
    return -(np.exp(-inner) * _H_ALPHA).sum(axis=1)


def hartmann6(X):
    return _hartmann(X, _H6_A, _H6_P)


def hartmann3(X):
    return _hartmann(X, _H3_A, _H3_P)


def rosenbrock(X):
    X = np.atleast_2d(X)
    return (100 * (X[:, 1:] - X[:, :-1] ** 2) ** 2 + (1 - X[:, :-1]) ** 2).sum(axis=1)


def ackley(X):
    X = np.atleast_2d(X)
    d = X.shape[1]
    return (-20 * np.exp(-0.2 * np.sqrt((X**2).sum(axis=1) / d))
            - np.exp(np.cos(2 * np.pi * X).sum(axis=1) / d) + 20 + np.e)


def levy(X):
    X = np.atleast_2d(X)
    w = 1 + (X - 1) / 4
    term = (w[:, :-1] - 1) ** 2 * (1 + 10 * np.sin(np.pi * w[:, :-1] + 1) ** 2)
    return (np.sin(np.pi * w[:, 0]) ** 2 + term.sum(axis=1)
            + (w[:, -1] - 1) ** 2 * (1 + np.sin(2 * np.pi * w[:, -1]) ** 2))


PROBLEMS: dict[str, Problem] = {
    "branin": Problem("branin", {"x1": (-5.0, 10.0), "x2": (0.0, 15.0)}, branin, 0.397887, 200),
    "hartmann6": Problem("hartmann6", {f"x{i}": (0.0, 1.0) for i in range(1, 7)}, hartmann6,
                         -3.32237, 200),
    "hartmann3": Problem("hartmann3", {f"x{i}": (0.0, 1.0) for i in range(1, 4)}, hartmann3,
                         -3.86278, 200),
    "rosenbrock2": Problem("rosenbrock2", {"x1": (-5.0, 10.0), "x2": (-5.0, 10.0)}, rosenbrock,
                           0.0, 200),
    "ackley5": Problem("ackley5", {f"x{i}": (-32.768, 32.768) for i in range(1, 6)}, ackley,
                       0.0, 200),
    "levy4": Problem("levy4", {f"x{i}": (-10.0, 10.0) for i in range(1, 5)}, levy, 0.0, 200),
}


def get_problem(name: str) -> Problem:
    if name not in PROBLEMS:
        raise ValueError(f"problem must be one of {sorted(PROBLEMS)}, got {name!r}.")
    return PROBLEMS[name]
