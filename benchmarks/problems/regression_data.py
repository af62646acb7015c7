"""The regression experiments' data: Friedman-1 and cpu_act train/test splits at full and
quick sizes, and the problem sizes of one run."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from benchmarks.problems.data import load_cpu_act

__all__ = ["SEED", "Sizes", "FULL", "QUICK", "Split", "friedman_split", "cpu_act_split",
           "permuted_split"]

#: seed of the data sets, their splits and every model of the regression experiments
SEED = 0


@dataclass(frozen=True)
class Sizes:
    """Problem sizes of one run of the regression experiments.

    ``n_train``/``n_test``: Friedman-1 rows; ``n_online``: rows fed one at a time to
    ``partial_fit``; ``n_river``: rows river's AMF learns (it is slow); ``cpu_train``/
    ``cpu_test``: cpu_act rows (the full sizes are those of Rahimi & Recht's split, 6,554 /
    819); ``n_toy``: points of the 1-D gap toy.
    """

    n_train: int = 20_000
    n_test: int = 5_000
    n_online: int = 5_000
    n_river: int = 5_000
    cpu_train: int = 6_554
    cpu_test: int = 819
    n_toy: int = 200


FULL = Sizes()
QUICK = Sizes(n_train=2_000, n_test=500, n_online=500, n_river=500, cpu_train=2_000,
              cpu_test=500)


class Split(NamedTuple):
    """A train/test split."""

    X_train: np.ndarray
    y_train: np.ndarray
    X_test: np.ndarray
    y_test: np.ndarray


def friedman_split(sizes: Sizes) -> Split:
    """``make_friedman1`` (noise 1, seed :data:`SEED`): the first ``n_train`` rows train, the
    last ``n_test`` test."""
    from sklearn.datasets import make_friedman1

    X, y = make_friedman1(n_samples=sizes.n_train + sizes.n_test, noise=1.0, random_state=SEED)
    return Split(X[:sizes.n_train], y[:sizes.n_train], X[sizes.n_train:], y[sizes.n_train:])


def permuted_split(X: np.ndarray, y: np.ndarray, n_train: int, n_test: int,
                   seed: int = SEED) -> Split:
    """The rows randomly permuted (``default_rng(seed)``), then ``n_train`` train and the next
    ``n_test`` test."""
    order = np.random.default_rng(seed).permutation(X.shape[0])
    train, test = order[:n_train], order[n_train:n_train + n_test]
    return Split(X[train], y[train], X[test], y[test])


def cpu_act_split(sizes: Sizes, data_home: str | os.PathLike | None = None) -> Split:
    """cpu_act randomly permuted (seed :data:`SEED`), then ``cpu_train`` train / ``cpu_test``
    test.  A random split because Rahimi & Recht's is not public."""
    X, y = load_cpu_act(data_home)
    return permuted_split(X, y, sizes.cpu_train, sizes.cpu_test)
