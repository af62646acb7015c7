"""The ``mixed`` suite: problems with integer and categorical dimensions.

Three families, each with one problem in the test split and one (mixed Ackley: two) in the dev
split:

``mixed-ackley-7d``, ``mixed-ackley-10d`` (dev), ``mixed-ackley-12d`` (test): :class:`MixedAckley`
    Ackley's function (Ackley 1987; the standard constants a = 20, b = 0.2, c = 2 pi) of real
    dimensions ``x1..`` in [-10, 10] and integer dimensions ``z1..`` in {-10, ..., 10}, plus
    categorical dimensions ``c1..`` that move the optimum: level ``k`` of a categorical shifts
    the centre of the function by a fixed vector (reals by up to 5, integers by whole units up
    to 5) and adds a fixed level offset (0 for exactly one level of each categorical, else
    0.5, 1, 1.5, ...), so every categorical has one right level and the wrong ones send the
    search to the wrong place.  The minimum is 0, at the right levels and the centre they
    give.  The 7-d problem has 3 reals, 3 integers and one categorical of 4 levels; the 10-d
    one 4 reals, 4 integers and two categoricals of 3 levels; the 12-d one 5 reals,
    5 integers and categoricals of 3 and 4 levels.  Shifts and offsets are drawn once from
    ``numpy.random.default_rng`` (seeds 7, 10 and 12).  Budget 200.  (The 10-d problem
    joined the dev split later, when the 7-d one had not shown what the 12-d one did at 200
    evaluations: a gap to scikit-optimize's GP.)

``pressure-vessel`` (dev), ``speed-reducer`` (test): constrained engineering designs
    Two classic mixed-integer designs of the constrained-optimisation literature, Sandgren's
    (1990) pressure vessel in the bounds of Kannan & Kramer (1994) and Golinski's (1970) speed
    reducer, minimised with a static penalty: cost + 1e5 * the sum of the violations of the
    constraints, each written as ``g(x) <= 0`` divided by its own scale so that a violation is
    relative.  The weight 1e5 exceeds the Lagrange multipliers, so the penalised minimum is
    the constrained one (checked by multistart local search of the penalised function at every
    integer level; 1e4 is too small for the speed reducer).  Budget 200.

    * pressure vessel: shell and head thickness ``Ts``, ``Th`` as integer multiples of 1/16
      inch (``Ts_16ths``, ``Th_16ths`` in 1..99, i.e. 0.0625..6.1875 in), inner radius ``R``
      and length ``L`` in [10, 200]; minimum 6059.714335 at 13/16, 7/16, R = 42.098446,
      L = 176.636596.
    * speed reducer: seven design variables, the number of pinion teeth ``x3`` an integer in
      17..28; minimum 2994.471066 at (3.5, 0.7, 17, 7.3, 7.715320, 3.350215, 5.286654).

``mixed-pipeline-breast_cancer`` (dev), ``mixed-pipeline-digits`` (test): :class:`PipelineChoice`
    A scikit-learn pipeline chosen and tuned at once, the conditional space flattened (a
    parameter of a model not chosen is ignored): ``scaler`` in {none, standard, minmax};
    ``model`` in {logistic, svm, knn}; logistic regression's ``logistic_C`` (log, 1e-3..1e3) and
    ``logistic_penalty`` (l1, l2); the RBF SVM's ``svm_C`` (log, 1e-2..1e3) and ``svm_gamma``
    (log, 1e-4..10); k-nearest neighbours' ``knn_n_neighbors`` (1..30), ``knn_weights``
    (uniform, distance) and ``knn_metric`` (euclidean, manhattan, chebyshev).  Five
    categoricals, one integer, four reals.  The loss is 1 - accuracy by 5-fold cross-validation,
    on the rows and folds of :mod:`benchmarks.problems.sklearn_tune` (its 80 % split; ``digits``
    subsampled to 1,000 rows).  The minimum is unknown.  Budget 100.

Dev / test split: one problem of each family on each side (two mixed Ackleys on dev), so a
default tuned on dev meets the same kinds of dimension on test, in other sizes (Ackley),
another design (engineering) or another data set (pipeline).
"""

from __future__ import annotations

import os
import warnings

import numpy as np

from mfbo import Categorical, Integer, Real

__all__ = ["MixedAckley", "PipelineChoice", "PENALTY", "pressure_vessel", "speed_reducer",
           "speed_reducer_design", "specs"]

#: weight of the summed relative constraint violations of the engineering problems
PENALTY = 1e5


# -- mixed Ackley ---------------------------------------------------------------------------------
class MixedAckley:
    """Ackley's function on reals, integers and optimum-moving categoricals (see the module
    docstring); called with a configuration dict."""

    def __init__(self, n_real: int, n_int: int, levels: tuple[int, ...], seed: int):
        self.n_real, self.n_int, self.levels = n_real, n_int, tuple(levels)
        rng = np.random.default_rng(seed)
        d = n_real + n_int
        self.shifts, self.offsets = [], []
        for k in levels:
            # a categorical's levels share the move between them: the sum stays within 5
            s = rng.uniform(-5.0, 5.0, size=(k, d)) / len(levels)
            s[:, n_real:] = np.round(s[:, n_real:])
            self.shifts.append(s)
            self.offsets.append(rng.permutation(np.arange(k) * 0.5))
        self.space = {**{f"x{i + 1}": Real(-10.0, 10.0) for i in range(n_real)},
                      **{f"z{i + 1}": Integer(-10, 10) for i in range(n_int)},
                      **{f"c{j + 1}": Categorical([f"L{i}" for i in range(k)])
                         for j, k in enumerate(levels)}}

    def centre(self, params: dict) -> np.ndarray:
        """The point where the function is lowest for the categorical levels of ``params``."""
        idx = [int(params[f"c{j + 1}"][1:]) for j in range(len(self.levels))]
        return sum(s[i] for s, i in zip(self.shifts, idx))

    def optimum_params(self) -> dict:
        """A configuration at the minimum 0."""
        best = {f"c{j + 1}": f"L{int(np.argmin(o))}" for j, o in enumerate(self.offsets)}
        c = self.centre(best)
        return {**{f"x{i + 1}": float(c[i]) for i in range(self.n_real)},
                **{f"z{i + 1}": int(c[self.n_real + i]) for i in range(self.n_int)}, **best}

    def __call__(self, params: dict) -> float:
        x = np.array([params[f"x{i + 1}"] for i in range(self.n_real)]
                     + [params[f"z{i + 1}"] for i in range(self.n_int)], dtype=float)
        idx = [int(params[f"c{j + 1}"][1:]) for j in range(len(self.levels))]
        y = x - self.centre(params)
        d = y.size
        value = (-20.0 * np.exp(-0.2 * np.sqrt((y ** 2).sum() / d))
                 - np.exp(np.cos(2 * np.pi * y).sum() / d) + 20.0 + np.e)
        # Ackley's constant terms cancel to within rounding at its centre; 0 is its minimum
        return float(max(value, 0.0) + sum(o[i] for o, i in zip(self.offsets, idx)))

    def __repr__(self):
        return f"MixedAckley({self.n_real}, {self.n_int}, {self.levels})"


# -- engineering designs ---------------------------------------------------------------------------
def _penalised(cost: float, g: np.ndarray) -> float:
    return float(cost + PENALTY * np.maximum(g, 0.0).sum())


def pressure_vessel(params: dict) -> float:
    """Cost (material, forming, welding) of a cylindrical pressure vessel with hemispherical
    heads, plus the penalty (Sandgren 1990; Kannan & Kramer 1994)."""
    ts, th = params["Ts_16ths"] / 16.0, params["Th_16ths"] / 16.0
    r, length = params["R"], params["L"]
    cost = (0.6224 * ts * r * length + 1.7781 * th * r ** 2 + 3.1661 * ts ** 2 * length
            + 19.84 * ts ** 2 * r)
    g = np.array([0.0193 * r / ts - 1.0,    # shell thick enough for the pressure
                  0.00954 * r / th - 1.0,   # head thick enough
                  # a volume of at least 1,296,000 cubic inches (750 cubic feet)
                  1.0 - (np.pi * r ** 2 * length + 4.0 / 3.0 * np.pi * r ** 3) / 1296000.0,
                  length / 240.0 - 1.0])    # at most 240 inches long
    return _penalised(cost, g)


PRESSURE_VESSEL_SPACE = {"Ts_16ths": Integer(1, 99), "Th_16ths": Integer(1, 99),
                         "R": Real(10.0, 200.0), "L": Real(10.0, 200.0)}
PRESSURE_VESSEL_OPTIMUM = 6059.714335


def speed_reducer(params: dict) -> float:
    """Weight of Golinski's (1970) speed reducer plus the penalty."""
    return _penalised(*speed_reducer_design(params))


def speed_reducer_design(params: dict) -> tuple[float, np.ndarray]:
    """``(weight, g)``: the weight of Golinski's (1970) speed reducer and its eleven
    constraints, each met where ``g <= 0``."""
    x1, x2, x3, x4, x5, x6, x7 = (params[f"x{i}"] for i in range(1, 8))
    cost = (0.7854 * x1 * x2 ** 2 * (3.3333 * x3 ** 2 + 14.9334 * x3 - 43.0934)
            - 1.508 * x1 * (x6 ** 2 + x7 ** 2) + 7.4777 * (x6 ** 3 + x7 ** 3)
            + 0.7854 * (x4 * x6 ** 2 + x5 * x7 ** 2))
    g = np.array([
        27.0 / (x1 * x2 ** 2 * x3) - 1.0,                      # bending stress of the teeth
        397.5 / (x1 * x2 ** 2 * x3 ** 2) - 1.0,                # surface stress
        1.93 * x4 ** 3 / (x2 * x3 * x6 ** 4) - 1.0,            # transverse deflections
        1.93 * x5 ** 3 / (x2 * x3 * x7 ** 4) - 1.0,
        np.sqrt((745.0 * x4 / (x2 * x3)) ** 2 + 16.9e6) / (110.0 * x6 ** 3) - 1.0,  # shafts
        np.sqrt((745.0 * x5 / (x2 * x3)) ** 2 + 157.5e6) / (85.0 * x7 ** 3) - 1.0,
        x2 * x3 / 40.0 - 1.0,                                  # space limits
        5.0 * x2 / x1 - 1.0,
        x1 / (12.0 * x2) - 1.0,
        (1.5 * x6 + 1.9) / x4 - 1.0,                           # shaft design
        (1.1 * x7 + 1.9) / x5 - 1.0])
    return cost, g


SPEED_REDUCER_SPACE = {"x1": Real(2.6, 3.6), "x2": Real(0.7, 0.8), "x3": Integer(17, 28),
                       "x4": Real(7.3, 8.3), "x5": Real(7.3, 8.3), "x6": Real(2.9, 3.9),
                       "x7": Real(5.0, 5.5)}
SPEED_REDUCER_OPTIMUM = 2994.471066


# -- pipeline choice -------------------------------------------------------------------------------
PIPELINE_SPACE = {
    "scaler": Categorical(["none", "standard", "minmax"]),
    "model": Categorical(["logistic", "svm", "knn"]),
    "logistic_C": Real(1e-3, 1e3, log=True),
    "logistic_penalty": Categorical(["l1", "l2"]),
    "svm_C": Real(1e-2, 1e3, log=True),
    "svm_gamma": Real(1e-4, 10.0, log=True),
    "knn_n_neighbors": Integer(1, 30),
    "knn_weights": Categorical(["uniform", "distance"]),
    "knn_metric": Categorical(["euclidean", "manhattan", "chebyshev"]),
}


class PipelineChoice:
    """1 - cross-validated accuracy of the scaler + model a configuration picks (the module
    docstring); the data of :class:`benchmarks.problems.sklearn_tune.SklearnTuneObjective`."""

    def __init__(self, dataset: str, data_home: str | os.PathLike | None = None):
        from benchmarks.problems.sklearn_tune import SklearnTuneObjective

        # the same rows and folds as the sklearn-tune problems of this data set
        self.dataset = dataset
        self._data = SklearnTuneObjective("kNN", dataset, "acc", data_home)

    def load(self, data_home: str | os.PathLike | None = None) -> "PipelineChoice":
        self._data.load(data_home)
        return self

    @staticmethod
    def estimator(params: dict):
        """The unfitted pipeline of configuration ``params``."""
        from sklearn.neighbors import KNeighborsClassifier
        from sklearn.pipeline import Pipeline
        from sklearn.preprocessing import MinMaxScaler, StandardScaler
        from sklearn.svm import SVC

        from benchmarks.problems.sklearn_tune import _liblinear_logistic

        scaler = {"none": "passthrough", "standard": StandardScaler(),
                  "minmax": MinMaxScaler()}[params["scaler"]]
        if params["model"] == "logistic":
            model = _liblinear_logistic(params["logistic_penalty"],
                                        {"C": params["logistic_C"]})
        elif params["model"] == "svm":
            model = SVC(kernel="rbf", C=params["svm_C"], gamma=params["svm_gamma"])
        else:
            model = KNeighborsClassifier(n_neighbors=params["knn_n_neighbors"],
                                         weights=params["knn_weights"],
                                         metric=params["knn_metric"], n_jobs=1)
        return Pipeline([("scale", scaler), ("model", model)])

    def __call__(self, params: dict) -> float:
        from sklearn.model_selection import cross_val_score
        from threadpoolctl import threadpool_limits

        from benchmarks.problems.sklearn_tune import CV_FOLDS

        X, _, y, _ = self._data.load()._split
        with warnings.catch_warnings(), threadpool_limits(1):
            warnings.simplefilter("ignore")
            scores = cross_val_score(self.estimator(params), X, y, cv=CV_FOLDS,
                                     scoring="accuracy", n_jobs=1, error_score="raise")
        return float(1.0 - np.mean(scores))

    def __repr__(self):
        return f"PipelineChoice({self.dataset!r})"


def specs() -> list[dict]:
    """Every problem of the suite: ``name``, ``space``, ``objective`` (called with a
    configuration dict), ``optimum`` (None: unknown), ``budget``, ``split`` and ``family``
    (``mixed-ackley``, ``engineering-design``, ``mixed-pipeline``: the three kinds of
    problem of the module docstring)."""
    ackley7, ackley12 = MixedAckley(3, 3, (4,), seed=7), MixedAckley(5, 5, (3, 4), seed=12)
    ackley10 = MixedAckley(4, 4, (3, 3), seed=10)
    pipe_dev, pipe_test = PipelineChoice("breast_cancer"), PipelineChoice("digits")
    return [
        dict(name="mixed-ackley-7d", space=ackley7.space, objective=ackley7, optimum=0.0,
             budget=200, split="dev", family="mixed-ackley"),
        dict(name="mixed-ackley-10d", space=ackley10.space, objective=ackley10, optimum=0.0,
             budget=200, split="dev", family="mixed-ackley"),
        dict(name="mixed-ackley-12d", space=ackley12.space, objective=ackley12, optimum=0.0,
             budget=200, split="test", family="mixed-ackley"),
        dict(name="pressure-vessel", space=PRESSURE_VESSEL_SPACE, objective=pressure_vessel,
             optimum=PRESSURE_VESSEL_OPTIMUM, budget=200, split="dev",
             family="engineering-design"),
        dict(name="speed-reducer", space=SPEED_REDUCER_SPACE, objective=speed_reducer,
             optimum=SPEED_REDUCER_OPTIMUM, budget=200, split="test",
             family="engineering-design"),
        dict(name="mixed-pipeline-breast_cancer", space=PIPELINE_SPACE, objective=pipe_dev,
             optimum=None, budget=100, split="dev", family="mixed-pipeline"),
        dict(name="mixed-pipeline-digits", space=PIPELINE_SPACE, objective=pipe_test,
             optimum=None, budget=100, split="test", family="mixed-pipeline"),
    ]
