"""The ``sklearn-tune`` suite: tuning scikit-learn models by cross-validation, as in bayesmark.

bayesmark (Uber's benchmark of the NeurIPS 2020 black-box optimisation challenge, Turner et al.
2021) tunes scikit-learn models on small data sets by 5-fold cross-validation.  This module
writes those problems again, without depending on the ``bayesmark`` package.

Problems are named ``sklearn-<model>-<dataset>-<metric>``, e.g. ``sklearn-DT-breast_cancer-acc``
or ``sklearn-kNN-diabetes-mse``: every model of :data:`MODELS` on every data set of
:data:`DATASETS` with both metrics of its task, 8 x 8 x 2 = 128 problems, each with bayesmark's
default budget of 100 evaluations.

Search spaces
    bayesmark's published configurations (``bayesmark/sklearn_funcs.py`` of the
    uber/bayesmark repository): the same parameters, ranges and types ("int" ->
    :class:`~mfbo.Integer`, "real" with "log" space -> ``Real(log=True)``, "bool" ->
    ``Categorical([False, True])``).  Three deviations, each forced by the library or by a
    deterministic objective:

    * bayesmark's "logit"-warped reals (``min_samples_split``, ``max_features``, ``power_t``,
      ``momentum``, ``validation_fraction``, ...) are linear reals here: mfbo's spaces have no
      logit warping.  The ranges are bayesmark's.
    * Regression ``lasso`` (:class:`~sklearn.linear_model.Lasso`) and ``linear``
      (:class:`~sklearn.linear_model.Ridge`) lose bayesmark's ``normalize`` flag, which
      scikit-learn removed in version 1.2; their other parameters (``alpha`` log,
      ``fit_intercept`` and ``positive`` as booleans, ``max_iter`` log-integer, ``tol`` log)
      are kept.  The classifiers ``lasso``/``linear`` are liblinear logistic regressions with an
      L1 / L2 penalty over ``C`` and ``intercept_scaling`` (both log), one-versus-rest as in
      bayesmark (through :class:`~sklearn.multiclass.OneVsRestClassifier` now that
      ``multi_class`` is gone).
    * Every randomised model is seeded (``random_state=0``) and single-threaded, so one
      configuration always has the same loss; bayesmark leaves them unseeded.  The SVM
      classifier fits Platt probabilities (``probability=True``, bayesmark's setting) only for
      the "nll" metric, which is the only one that reads them; its accuracy is that of the
      decision function either way.

    RF is a random forest of 10 trees (bayesmark's fixed ``n_estimators``); MLP-sgd is
    scikit-learn's MLP with ``solver="sgd"``, inverse-scaling learning rate, Nesterov momentum
    and early stopping (tanh units for regression), as in bayesmark.  bayesmark's MLP-adam is
    not included.

Loss (minimised)
    The mean over 5 cross-validation folds (scikit-learn's ``cv=5``: stratified folds for a
    classifier, contiguous ones for a regressor, as bayesmark) on a fixed 80 % of the rows, the
    other 20 % held out (:meth:`SklearnTuneObjective.holdout_loss`, bayesmark's
    "generalization" loss); rows are shuffled by ``train_test_split(test_size=0.2,
    random_state=0)``, bayesmark's ``shuffle_seed``.  "acc": 1 - accuracy (bayesmark minimises
    -accuracy; the shift by 1 changes no comparison); "nll": the log-loss; "mse", "mae": the
    mean squared / absolute error.  The minimum is unknown: the record's ``optimum`` is null
    and the report compares methods with the best value any run found.

Data sets
    scikit-learn's bundled ``breast_cancer``, ``digits``, ``iris``, ``wine`` (classification)
    and ``diabetes`` (regression), as bayesmark (its ``boston`` is gone from scikit-learn), raw
    as bayesmark uses them; and ``california``, the California housing data (``cal_housing.data``
    from :mod:`benchmarks.problems.data`, SHA-256 checked), a fixed random 2,000 of its 20,640 rows,
    features and target robust-standardised as bayesmark treats a data set it does not bundle
    (median removed, divided by the 7 %-93 % quantile range over its normal-distribution value,
    features clipped to +-100); likewise ``magic04`` (UCI MAGIC gamma telescope, binary
    classification, features only) and ``cpu_act`` (Delve computer activity, regression),
    2,000 random rows each.  Subsampled to keep one evaluation cheap: ``digits`` to a
    fixed random 1,000 of its 1,797 rows.

Dev / test split
    By data set: **dev** = ``breast_cancer``, ``iris``, ``diabetes``, ``magic04``,
    ``cpu_act``; **test** = ``digits``, ``wine``, ``california``.  Defaults are tuned on dev
    and reported on test (the benchmark protocol), so a test number says how a setting holds
    on data sets it was never tuned on, for every model; each split holds binary and
    multi-class classification and regression, small data sets (150 to 569 rows) and larger
    ones (1,000 and 2,000).  ``magic04`` and ``cpu_act`` joined dev later, because the three
    first ones are all small: a decision tree fits them best shallow and with large leaves,
    while on the larger data sets it wants deep trees and the smallest leaves, a corner of
    the space that dev could not reward.
"""

from __future__ import annotations

import inspect
import os
import warnings
from dataclasses import dataclass
from typing import Callable

import numpy as np

from mfbo import Categorical, Integer, Real

__all__ = ["BUDGET", "DATASETS", "DEV_DATASETS", "METRICS", "MODELS", "TEST_DATASETS",
           "CV_FOLDS", "SPLIT_SEED", "SklearnTuneObjective", "load_dataset", "problem_name",
           "specs"]

#: evaluations per run: bayesmark's default ``n_calls``
BUDGET = 100
#: cross-validation folds (bayesmark's ``CV_SPLITS``)
CV_FOLDS = 5
#: seed of the shuffled 80 / 20 split (bayesmark's ``shuffle_seed``) and of every subsample
SPLIT_SEED = 0
#: data sets whose problems defaults are tuned on
DEV_DATASETS = ("breast_cancer", "iris", "diabetes", "magic04", "cpu_act")
#: data sets whose problems are reported, never tuned on
TEST_DATASETS = ("digits", "wine", "california")
#: metrics of each task (bayesmark's SCORERS_CLF / SCORERS_REG)
METRICS = {"classification": ("acc", "nll"), "regression": ("mse", "mae")}


@dataclass(frozen=True)
class Dataset:
    """A data set: its task, where it comes from and how many rows are kept."""

    task: str
    source: str  # "sklearn:<load_* function>" or "mfbo:<benchmarks.problems.data loader>"
    max_rows: int | None = None
    robust_standardize: bool = False


DATASETS: dict[str, Dataset] = {
    "breast_cancer": Dataset("classification", "sklearn:load_breast_cancer"),
    "digits": Dataset("classification", "sklearn:load_digits", max_rows=1000),
    "iris": Dataset("classification", "sklearn:load_iris"),
    "wine": Dataset("classification", "sklearn:load_wine"),
    "diabetes": Dataset("regression", "sklearn:load_diabetes"),
    "california": Dataset("regression", "mfbo:load_cal_housing", max_rows=2000,
                          robust_standardize=True),
    "magic04": Dataset("classification", "mfbo:load_magic04", max_rows=2000,
                       robust_standardize=True),
    "cpu_act": Dataset("regression", "mfbo:load_cpu_act", max_rows=2000,
                       robust_standardize=True),
}

_DT = {"max_depth": Integer(1, 15), "min_samples_split": Real(0.01, 0.99),
       "min_samples_leaf": Real(0.01, 0.49), "min_weight_fraction_leaf": Real(0.01, 0.49),
       "max_features": Real(0.01, 0.99), "min_impurity_decrease": Real(0.0, 0.5)}
_MLP_SGD = {"hidden_layer_sizes": Integer(50, 200), "alpha": Real(1e-5, 1e1, log=True),
            "batch_size": Integer(10, 250), "learning_rate_init": Real(1e-5, 1e-1, log=True),
            "power_t": Real(0.1, 0.9), "tol": Real(1e-5, 1e-1, log=True),
            "momentum": Real(0.001, 0.999), "validation_fraction": Real(0.1, 0.9)}
_LOGISTIC = {"C": Real(1e-2, 1e2, log=True), "intercept_scaling": Real(1e-2, 1e2, log=True)}
_BOOL = Categorical([False, True])


@dataclass(frozen=True)
class Model:
    """A tuned model: its space per task and a factory ``build(task, params, metric)``."""

    spaces: dict  # task -> {name: dimension}
    build: Callable


def _build_knn(task, p, metric):
    from sklearn.neighbors import KNeighborsClassifier, KNeighborsRegressor

    cls = KNeighborsClassifier if task == "classification" else KNeighborsRegressor
    return cls(n_neighbors=p["n_neighbors"], p=p["p"], n_jobs=1)


def _build_svm(task, p, metric):
    from sklearn.svm import SVC, SVR

    if task == "classification":
        return SVC(kernel="rbf", probability=metric == "nll", random_state=0, **p)
    return SVR(kernel="rbf", **p)


def _build_dt(task, p, metric):
    from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

    cls = DecisionTreeClassifier if task == "classification" else DecisionTreeRegressor
    return cls(max_leaf_nodes=None, random_state=0, **p)


def _build_rf(task, p, metric):
    from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor

    cls = RandomForestClassifier if task == "classification" else RandomForestRegressor
    return cls(n_estimators=10, max_leaf_nodes=None, random_state=0, n_jobs=1, **p)


def _build_mlp_sgd(task, p, metric):
    from sklearn.neural_network import MLPClassifier, MLPRegressor

    p = dict(p, hidden_layer_sizes=(p["hidden_layer_sizes"],))
    fixed = dict(solver="sgd", early_stopping=True, learning_rate="invscaling",
                 nesterovs_momentum=True, random_state=0)
    if task == "classification":
        return MLPClassifier(**fixed, **p)
    return MLPRegressor(activation="tanh", **fixed, **p)  # bayesmark: relu diverges often


def _build_ada(task, p, metric):
    from sklearn.ensemble import AdaBoostClassifier, AdaBoostRegressor

    cls = AdaBoostClassifier if task == "classification" else AdaBoostRegressor
    return cls(random_state=0, **p)


def _liblinear_logistic(penalty: str, p: dict):
    from sklearn.linear_model import LogisticRegression
    from sklearn.multiclass import OneVsRestClassifier

    # scikit-learn 1.8 deprecates ``penalty`` for ``l1_ratio`` (1 = L1, 0 = L2)
    if inspect.signature(LogisticRegression).parameters["penalty"].default == "deprecated":
        how = {"l1_ratio": 1.0 if penalty == "l1" else 0.0}
    else:
        how = {"penalty": penalty}
    # liblinear shuffles the data in its coordinate descent: seeded for a deterministic loss
    return OneVsRestClassifier(LogisticRegression(solver="liblinear", fit_intercept=True,
                                                  random_state=0, **how, **p), n_jobs=1)


def _build_lasso(task, p, metric):
    if task == "classification":
        return _liblinear_logistic("l1", p)
    from sklearn.linear_model import Lasso

    return Lasso(**p)


def _build_linear(task, p, metric):
    if task == "classification":
        return _liblinear_logistic("l2", p)
    from sklearn.linear_model import Ridge

    return Ridge(solver="auto", **p)


def _same(space: dict) -> dict:
    return {"classification": space, "regression": space}


MODELS: dict[str, Model] = {
    "DT": Model(_same(_DT), _build_dt),
    "kNN": Model(_same({"n_neighbors": Integer(1, 25), "p": Integer(1, 4)}), _build_knn),
    "RF": Model(_same(_DT), _build_rf),
    "ada": Model(_same({"n_estimators": Integer(10, 100),
                        "learning_rate": Real(1e-4, 1e1, log=True)}), _build_ada),
    "SVM": Model(_same({"C": Real(1.0, 1e3, log=True), "gamma": Real(1e-4, 1e-3, log=True),
                        "tol": Real(1e-5, 1e-1, log=True)}), _build_svm),
    "MLP-sgd": Model(_same(_MLP_SGD), _build_mlp_sgd),
    "lasso": Model({"classification": _LOGISTIC,
                    "regression": {"alpha": Real(1e-2, 1e2, log=True), "fit_intercept": _BOOL,
                                   "max_iter": Integer(10, 5000, log=True),
                                   "tol": Real(1e-5, 1e-1, log=True), "positive": _BOOL}},
                   _build_lasso),
    "linear": Model({"classification": _LOGISTIC,
                     "regression": {"alpha": Real(1e-2, 1e2, log=True),
                                    "fit_intercept": _BOOL,
                                    "max_iter": Integer(10, 5000, log=True),
                                    "tol": Real(1e-4, 1e-1, log=True)}},
                    _build_linear),
}


def _robust_standardize(X: np.ndarray, q_level: float = 0.86) -> np.ndarray:
    """bayesmark's ``robust_standardize``: the median removed, divided by the ``q_level``
    central quantile range over what that range is for a standard normal (so a normal column
    ends with unit scale); a constant column is only centred."""
    from scipy.stats import norm

    lo, hi = 0.5 * (1 - q_level), 0.5 * (1 + q_level)
    scale = (np.quantile(X, hi, axis=0) - np.quantile(X, lo, axis=0)) / (norm.ppf(hi)
                                                                          - norm.ppf(lo))
    scale = np.where(scale > 0, scale, 1.0)
    return (X - np.median(X, axis=0)) / scale


def load_dataset(name: str, data_home: str | os.PathLike | None = None
                 ) -> tuple[np.ndarray, np.ndarray]:
    """``(X, y)`` of data set ``name`` as the problems use it (subsampled, standardised).

    ``FileNotFoundError``/:class:`benchmarks.problems.data.ChecksumError` for a missing or damaged
    data file (``california``)."""
    ds = DATASETS[name]
    origin, loader = ds.source.split(":")
    if origin == "sklearn":
        import sklearn.datasets

        X, y = getattr(sklearn.datasets, loader)(return_X_y=True)
    else:
        from benchmarks.problems import data

        X, y = getattr(data, loader)(data_home)
    X = np.asarray(X, dtype=np.float64)
    if ds.task == "classification":
        y = np.unique(np.asarray(y), return_inverse=True)[1].astype(np.int64)  # labels 0..k-1
    else:
        y = np.asarray(y, dtype=np.float64)
    if ds.max_rows is not None and len(X) > ds.max_rows:
        keep = np.sort(np.random.default_rng(SPLIT_SEED).choice(len(X), ds.max_rows,
                                                                replace=False))
        X, y = X[keep], y[keep]
    if ds.robust_standardize:
        X = np.clip(_robust_standardize(X), -100.0, 100.0)
        if ds.task == "regression":
            y = _robust_standardize(y[:, None])[:, 0]
    return X, y


_SCORING = {"acc": "accuracy", "nll": "neg_log_loss", "mse": "neg_mean_squared_error",
            "mae": "neg_mean_absolute_error"}


class SklearnTuneObjective:
    """The cross-validated loss of one (model, data set, metric), called with a configuration.

    The data are read (and split) on the first call, from ``data_home`` for a data set of
    :mod:`benchmarks.problems.data`.  A configuration whose fit fails, or whose loss is not finite,
    raises ``ValueError`` (the run records a failed evaluation).
    """

    def __init__(self, model: str, dataset: str, metric: str,
                 data_home: str | os.PathLike | None = None):
        task = DATASETS[dataset].task
        if metric not in METRICS[task]:
            raise ValueError(f"metric {metric!r} does not fit the {task} data set {dataset!r}; "
                             f"use one of {METRICS[task]}.")
        self.model, self.dataset, self.metric, self.task = model, dataset, metric, task
        self.data_home = data_home
        self._split = None

    @property
    def space(self) -> dict:
        return dict(MODELS[self.model].spaces[self.task])

    def load(self, data_home: str | os.PathLike | None = None) -> "SklearnTuneObjective":
        """Read and split the data now (once); the errors of :func:`load_dataset`."""
        if self._split is None:
            from sklearn.model_selection import train_test_split

            X, y = load_dataset(self.dataset, data_home if data_home is not None
                                else self.data_home)
            self._split = train_test_split(X, y, test_size=0.2, random_state=SPLIT_SEED,
                                           shuffle=True)
        return self

    def estimator(self, params: dict):
        """The unfitted scikit-learn estimator of configuration ``params``."""
        return MODELS[self.model].build(self.task, dict(params), self.metric)

    def _finite(self, loss: float, params: dict) -> float:
        if not np.isfinite(loss):
            raise ValueError(f"{self.model} on {self.dataset}: the {self.metric} loss of "
                             f"{params} is {loss}.")
        return float(loss)

    def __call__(self, params: dict) -> float:
        from sklearn.model_selection import cross_val_score
        from threadpoolctl import threadpool_limits

        X, _, y, _ = self.load()._split
        with warnings.catch_warnings(), threadpool_limits(1):
            # convergence and degenerate-fold warnings are expected of bad configurations
            warnings.simplefilter("ignore")
            scores = cross_val_score(self.estimator(params), X, y, cv=CV_FOLDS,
                                     scoring=_SCORING[self.metric], n_jobs=1,
                                     error_score="raise")
        score = float(np.mean(scores))
        return self._finite(1.0 - score if self.metric == "acc" else -score, params)

    def holdout_loss(self, params: dict) -> float:
        """The loss on the held-out 20 % of a model fitted to the other 80 % (bayesmark's
        "generalization" loss)."""
        from sklearn.metrics import get_scorer
        from threadpoolctl import threadpool_limits

        X, Xt, y, yt = self.load()._split
        with warnings.catch_warnings(), threadpool_limits(1):
            warnings.simplefilter("ignore")
            score = float(get_scorer(_SCORING[self.metric])(
                self.estimator(params).fit(X, y), Xt, yt))
        return self._finite(1.0 - score if self.metric == "acc" else -score, params)

    def __repr__(self):
        return f"SklearnTuneObjective({self.model!r}, {self.dataset!r}, {self.metric!r})"


def problem_name(model: str, dataset: str, metric: str) -> str:
    return f"sklearn-{model}-{dataset}-{metric}"


def specs() -> list[dict]:
    """Every problem of the suite: ``name``, ``space``, ``objective`` (a
    :class:`SklearnTuneObjective`), ``optimum`` (None: unknown), ``budget``, ``split``
    ("dev" or "test") and ``family`` (``sklearn-<model>-<metric>``: the problem without its
    data set), models x data sets x metrics in that order."""
    out = []
    for model, spec in MODELS.items():
        for dataset, ds in DATASETS.items():
            for metric in METRICS[ds.task]:
                split = "dev" if dataset in DEV_DATASETS else "test"
                objective = SklearnTuneObjective(model, dataset, metric)
                out.append(dict(name=problem_name(model, dataset, metric),
                                space=objective.space, objective=objective, optimum=None,
                                budget=BUDGET, split=split,
                                family=f"sklearn-{model}-{metric}"))
    return out
