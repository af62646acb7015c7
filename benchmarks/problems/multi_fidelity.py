"""Multi-fidelity problems: a configuration is trained step by step (epochs, boosting rounds)
and its loss can be read after every step, up to a full budget of ``max_budget`` steps.

* learning curves made with scikit-learn: stochastic gradient descent epochs
  (``SGDClassifier.partial_fit``), multi-layer perceptron epochs (``MLPClassifier.partial_fit``)
  and histogram gradient-boosting rounds (warm start, one round a step), the loss being the
  validation error (1 - accuracy) on a fixed stratified 30 % of the data, and for boosting
  the validation log-loss (its training loss: on the small wine data set many configurations
  classify every validation sample right);
* synthetic multi-fidelity functions from the literature with a known optimum at full
  budget: Branin and Hartmann-3 with the fidelity ``z = step / max_budget`` of Kandasamy et al.
  2017 ("Multi-fidelity Bayesian optimisation with continuous approximations", appendix),
  whose ``z = 1`` is the usual function.

The learning curves are tabulated: the curves of ``n_table`` configurations (a scrambled
Sobol sample of the space, seed 0) are computed once and kept in the cache directory
(:func:`benchmarks.problems.data.cache_dir`), and a configuration's curve is that of the
nearest tabulated one in the unit cube, so that a benchmark of many methods and seeds costs
look-ups (as tabular benchmarks such as HPOBench's do); the best full-budget loss of the table
is then the known optimum.  The synthetic functions are computed at each step.

The suite's split (:data:`DEV`, :data:`TEST`; registered as ``multi-fidelity`` in
:data:`benchmarks.problems.problems.SUITES`, whose problems these are not: ``mfbo bench`` does
not run them, :mod:`benchmarks.harness.multi_fidelity` does) follows ``sklearn-tune``'s split
of its data sets (dev: breast_cancer, and iris for boosting; test: digits, wine) and puts one
synthetic function on each side; :data:`FAMILIES` pairs them (the model, or synthetic).
Every curve is a deterministic function of the configuration.
"""

from __future__ import annotations

import math
import os
import warnings
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Callable, Iterator

import numpy as np

from benchmarks.problems.data import cache_dir
from mfbo import Integer, Real

__all__ = ["MultiFidelityProblem", "PROBLEMS", "DEV", "TEST", "DESCRIPTION", "FAMILIES",
           "MAX_BUDGET", "N_TABLE", "branin_mf", "hartmann3_mf"]

#: the full budget of every problem (3^3: the rungs of reduction factor 3 are 1, 3, 9, 27)
MAX_BUDGET = 27
#: configurations tabulated for each learning-curve problem
N_TABLE = 128


@dataclass
class MultiFidelityProblem:
    """A configuration space (mfbo dimensions) and a learning curve ``curve(params)`` yielding
    the loss after each of ``max_budget`` steps; ``n_table`` configurations tabulated (None:
    the curve is computed for each configuration) and the best full-budget loss (known for the
    synthetic functions, the table's best for the others, after :meth:`load`)."""

    name: str
    space: dict
    curve: Callable[[dict], Iterator[float]]
    n_table: int | None = None
    optimum: float | None = None
    max_budget: int = MAX_BUDGET

    def __post_init__(self):
        import mfbo

        self.unit_space = mfbo.Space(self.space)
        self._table: tuple[np.ndarray, np.ndarray] | None = None

    def load(self, cache: str | os.PathLike | None = None) -> "MultiFidelityProblem":
        """Compute (or read from ``cache``, default the benchmarks' cache directory) the
        tabulated curves, and set :attr:`optimum` to their best final loss."""
        if self.n_table is None or self._table is not None:
            return self
        path = Path(cache or cache_dir()) / "multi-fidelity" / f"{self.name}-{self.n_table}.npz"
        U = self.unit_space.sample(self.n_table, np.random.default_rng(0), kind="sobol")
        if path.is_file():
            stored = np.load(path)
            if np.array_equal(stored["U"], U):
                self._table = (U, stored["curves"])
        if self._table is None:
            curves = np.array([list(self.curve(p)) for p in self.unit_space.from_unit(U)])
            path.parent.mkdir(parents=True, exist_ok=True)
            np.savez(path, U=U, curves=curves)
            self._table = (U, curves)
        self.optimum = float(self._table[1][:, -1].min())
        return self

    def row_of(self, params: dict) -> int | None:
        """The tabulated configuration whose curve ``params`` gets (the nearest in the unit
        cube; None when the curve is computed): two configurations of one row are the same
        to the objective."""
        if self.n_table is None:
            return None
        U = self.load()._table[0]
        u = self.unit_space.to_unit([params])[0]
        return int(np.argmin(((U - u) ** 2).sum(axis=1)))

    def curve_of(self, params: dict) -> np.ndarray:
        """The loss after each step (``max_budget`` of them) of the configuration ``params``:
        the nearest tabulated one's, or computed."""
        row = self.row_of(params)
        if row is None:
            return np.array(list(self.curve(params)))
        return self._table[1][row]


# -- synthetic functions ---------------------------------------------------------------------

def branin_mf(x1: float, x2: float, z: float) -> float:
    """Branin at fidelity ``z`` in [0, 1] (Kandasamy et al. 2017): ``b``, ``c`` and ``t``
    shifted by ``1 - z``; at ``z = 1`` Branin, minimum 0.397887."""
    b = 5.1 / (4 * math.pi ** 2) - 0.01 * (1 - z)
    c = 5 / math.pi - 0.1 * (1 - z)
    t = 1 / (8 * math.pi) + 0.05 * (1 - z)
    return (x2 - b * x1 ** 2 + c * x1 - 6) ** 2 + 10 * (1 - t) * math.cos(x1) + 10


_H3_A = np.array([[3.0, 10, 30], [0.1, 10, 35], [3.0, 10, 30], [0.1, 10, 35]])
_H3_P = 1e-4 * np.array([[3689, 1170, 2673], [4699, 4387, 7470], [1091, 8732, 5547],
                         [381, 5743, 8828]])
_H3_ALPHA = np.array([1.0, 1.2, 3.0, 3.2])


def hartmann3_mf(x: np.ndarray, z: float) -> float:
    """Hartmann-3 at fidelity ``z`` in [0, 1] (Kandasamy et al. 2017): the weights
    ``alpha - 0.1 (1 - z)``; at ``z = 1`` Hartmann-3, minimum -3.86278."""
    alpha = _H3_ALPHA - 0.1 * (1 - z)
    return float(-np.sum(alpha * np.exp(-np.sum(_H3_A * (np.asarray(x) - _H3_P) ** 2,
                                                axis=1))))


def _branin_curve(params: dict) -> Iterator[float]:
    for s in range(1, MAX_BUDGET + 1):
        yield branin_mf(params["x1"], params["x2"], s / MAX_BUDGET)


def _hartmann3_curve(params: dict) -> Iterator[float]:
    x = np.array([params["x1"], params["x2"], params["x3"]])
    for s in range(1, MAX_BUDGET + 1):
        yield hartmann3_mf(x, s / MAX_BUDGET)


# -- learning curves -------------------------------------------------------------------------

@lru_cache(maxsize=None)
def _data(name: str):
    """Standardised training and validation parts of a scikit-learn data set (stratified,
    30 % validation, fixed split)."""
    from sklearn import datasets
    from sklearn.model_selection import train_test_split
    from sklearn.preprocessing import StandardScaler

    X, y = getattr(datasets, f"load_{name}")(return_X_y=True)
    X_tr, X_va, y_tr, y_va = train_test_split(X, y, test_size=0.3, stratify=y, random_state=0)
    scaler = StandardScaler().fit(X_tr)
    return scaler.transform(X_tr), scaler.transform(X_va), y_tr, y_va


def _sgd_curve(data: str):
    def curve(params: dict) -> Iterator[float]:
        from sklearn.linear_model import SGDClassifier

        X_tr, X_va, y_tr, y_va = _data(data)
        model = SGDClassifier(loss="log_loss", penalty="elasticnet", alpha=params["alpha"],
                              l1_ratio=params["l1_ratio"], learning_rate="invscaling",
                              eta0=params["eta0"], power_t=params["power_t"], random_state=0)
        classes = np.unique(y_tr)
        order = np.random.default_rng(0)
        for _ in range(MAX_BUDGET):
            pick = order.permutation(len(y_tr))
            model.partial_fit(X_tr[pick], y_tr[pick], classes=classes)
            yield 1.0 - model.score(X_va, y_va)
    return curve


def _mlp_curve(data: str):
    def curve(params: dict) -> Iterator[float]:
        from sklearn.exceptions import ConvergenceWarning
        from sklearn.neural_network import MLPClassifier

        X_tr, X_va, y_tr, y_va = _data(data)
        model = MLPClassifier(hidden_layer_sizes=(params["width"],), alpha=params["alpha"],
                              learning_rate_init=params["lr"], batch_size=params["batch"],
                              random_state=0)
        classes = np.unique(y_tr)
        for _ in range(MAX_BUDGET):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)
                model.partial_fit(X_tr, y_tr, classes=classes)
            yield 1.0 - model.score(X_va, y_va)
    return curve


def _boosting_curve(data: str):
    def curve(params: dict) -> Iterator[float]:
        from sklearn.ensemble import HistGradientBoostingClassifier
        from sklearn.metrics import log_loss

        X_tr, X_va, y_tr, y_va = _data(data)
        model = HistGradientBoostingClassifier(
            max_iter=1, warm_start=True, learning_rate=params["learning_rate"],
            max_leaf_nodes=params["max_leaf_nodes"],
            min_samples_leaf=params["min_samples_leaf"],
            l2_regularization=params["l2_regularization"], early_stopping=False,
            random_state=0)
        for s in range(1, MAX_BUDGET + 1):  # one round more per step (warm start)
            model.set_params(max_iter=s)
            model.fit(X_tr, y_tr)
            yield log_loss(y_va, model.predict_proba(X_va), labels=model.classes_)
    return curve


SGD = {"alpha": Real(1e-6, 1e-1, log=True), "l1_ratio": Real(0.0, 1.0),
       "eta0": Real(1e-4, 1.0, log=True), "power_t": Real(0.05, 0.9)}
MLP = {"width": Integer(4, 64, log=True), "alpha": Real(1e-6, 1e-1, log=True),
       "lr": Real(1e-4, 3e-1, log=True), "batch": Integer(8, 128, log=True)}
BOOSTING = {"learning_rate": Real(1e-3, 1.0, log=True), "max_leaf_nodes": Integer(2, 64,
                                                                                  log=True),
            "min_samples_leaf": Integer(1, 64, log=True),
            "l2_regularization": Real(1e-6, 10.0, log=True)}

_LIST = [
    MultiFidelityProblem("branin-mf", {"x1": Real(-5.0, 10.0), "x2": Real(0.0, 15.0)},
                         _branin_curve, optimum=0.397887),
    MultiFidelityProblem("hartmann3-mf", {f"x{i}": Real(0.0, 1.0) for i in (1, 2, 3)},
                         _hartmann3_curve, optimum=-3.86278),
    MultiFidelityProblem("sgd-breast_cancer", SGD, _sgd_curve("breast_cancer"), N_TABLE),
    MultiFidelityProblem("mlp-breast_cancer", MLP, _mlp_curve("breast_cancer"), N_TABLE),
    MultiFidelityProblem("boosting-breast_cancer", BOOSTING, _boosting_curve("breast_cancer"),
                         N_TABLE),
    MultiFidelityProblem("boosting-iris", BOOSTING, _boosting_curve("iris"), N_TABLE),
    MultiFidelityProblem("sgd-digits", SGD, _sgd_curve("digits"), N_TABLE),
    MultiFidelityProblem("mlp-digits", MLP, _mlp_curve("digits"), N_TABLE),
    MultiFidelityProblem("boosting-wine", BOOSTING, _boosting_curve("wine"), N_TABLE),
]
PROBLEMS: dict[str, MultiFidelityProblem] = {p.name: p for p in _LIST}

#: the suite's split
DEV = ("branin-mf", "sgd-breast_cancer", "mlp-breast_cancer", "boosting-breast_cancer",
       "boosting-iris")
TEST = ("hartmann3-mf", "sgd-digits", "mlp-digits", "boosting-wine")
DESCRIPTION = ("learning curves of scikit-learn models (SGD and MLP epochs, gradient-boosting "
               "rounds) and multi-fidelity Branin and Hartmann-3, "
               f"{MAX_BUDGET} steps at full budget")
#: problem -> its family: the model of a learning curve, or synthetic
FAMILIES = {p.name: "mf-synthetic" if p.n_table is None else f"mf-{p.name.split('-')[0]}"
            for p in _LIST}
