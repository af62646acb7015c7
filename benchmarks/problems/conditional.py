"""The ``conditional`` suite: problems whose search spaces are conditional, some with forbidden
configurations.

Every problem's space is an :class:`mfbo.Space` whose dimensions carry ``when=`` conditions
(a parameter exists only where its condition holds) and, for two problems, ``forbidden=``
clauses (configurations never to be evaluated).  Two kinds:

**CASH** (``cond-cash-<data set>``, :class:`CashObjective`): the combined algorithm selection
and hyper-parameter choice of Thornton et al. (2013), on scikit-learn data sets.  A
preprocessing choice ``preprocessing`` in {none, standard, pca} (pca: standard scaling, then a
PCA keeping ``pca_share`` of the features, rounded, at least one; ``pca_share`` exists only
for pca), then a model family ``model`` in {linear, svm, knn, rf, et, hgb}, each with its own
hyper-parameters, active only for it:

* ``linear``: logistic regression's ``logreg_C`` (log, 1e-4..1e4; classification) or ridge's
  ``ridge_alpha`` (log, 1e-4..1e4; regression);
* ``svm``: ``svm_C`` (log, 1e-3..1e3), ``svm_kernel`` in {rbf, poly, linear}, ``svm_gamma``
  (log, 1e-4..10) for rbf and poly only, ``svm_degree`` (2..4) for poly only (a condition on
  a conditional parent), ``svm_epsilon`` (log, 1e-3..1; regression); at most 20,000 solver
  iterations, so a fit that would not converge still ends;
* ``knn``: ``knn_k`` (log, 1..50) and ``knn_weights`` in {uniform, distance};
* ``rf`` and ``et`` (random forest, extra trees) share ``trees_n`` (5..30), ``trees_depth``
  (1..20), ``trees_features`` (a share of the features, 0.1..1) and ``trees_min_leaf``
  (1..20): one parameter active under two models (an ``In`` condition); ``rf_bootstrap`` in
  {False, True} for the random forest only;
* ``hgb``: histogram gradient boosting's ``hgb_lr`` (log, 0.01..1), ``hgb_iter`` (10..50),
  ``hgb_leaves`` (log, 4..32) and ``hgb_min_leaf`` (1..40).

The data sets are ``tune-world``'s (:mod:`benchmarks.problems.tune_world`), except that
``digits-3v8`` holds only the digits 3 and 8 of scikit-learn's digits (357 rows, two classes:
gradient boosting of all ten classes fits ten trees an iteration, seconds an evaluation), and
``linear-reg`` (dev) is scikit-learn's ``make_regression`` (300 rows, 25 features of which 8
informative, noise 5): a linear truth, where the linear model is far better than every other
family unless a PCA of few components drops informative features, so that a run whose first
linear configurations had such a PCA can take the family for a poor one.  The
features are the data set's own, not standardised (so the preprocessing choice matters:
breast_cancer's features span five orders of magnitude, digits' are pixel counts); the rows
are shuffled once; regression targets are divided by their standard deviation.  Loss
(minimised): 1 - accuracy (classification) or the mean squared error of the scaled target
(regression), mean over 3 stratified / contiguous folds (``tune-world``'s protocol).  A fit
that fails or a loss that is not finite raises ``ValueError``: a failed evaluation.  Models
are seeded and single-threaded; one evaluation takes well under a second.  The minimum is
unknown.  19 dimensions (classification) or 20 (regression), of which 3 to 8 are active at
once.  Budget 50.

**Synthetic tree-structured functions** with a known minimum:

``cond-jenatton`` (:func:`jenatton`): the synthetic tree-structured function of Jenatton
    et al. (2017), on the domain Ax's benchmark suite gives it.  Binary choices ``x1``,
    ``x2`` (only for x1 = 0) and ``x3`` (only for x1 = 1); reals ``x4`` (x2 = 0), ``x5``
    (x2 = 1), ``x6`` (x3 = 0), ``x7`` (x3 = 1) and the variables shared by a subtree, ``r8``
    (x1 = 0) and ``r9`` (x1 = 1), all in [0, 1]::

        f = x4^2 + 0.1 + r8   if x1 = 0, x2 = 0
            x5^2 + 0.2 + r8   if x1 = 0, x2 = 1
            x6^2 + 0.3 + r9   if x1 = 1, x3 = 0
            x7^2 + 0.4 + r9   if x1 = 1, x3 = 1

    Minimum 0.1 at x1 = 0, x2 = 0, x4 = 0, r8 = 0 (a corner of its branch).
``cond-tree-depth3`` (:class:`DeepTree`): the same construction one level deeper, with its
    minima inside the box.  Binary choices on the paths of a complete binary tree of depth 3
    (``b``; ``b0`` for b = 0, ``b1`` for b = 1; ``b00``, ``b01``, ``b10``, ``b11`` below them),
    a real ``x<path>`` in [-1, 1] at each of the 8 leaves (``x000`` for b00 = 0, ``x001`` for
    b00 = 1, ...), and a real shared by each half of the tree, ``r0`` (b = 0) and ``r1``
    (b = 1), in [-1, 1]: 17 dimensions, 5 active at once.  With ``l`` the leaf's index
    (its path read in binary, 0..7)::

        f = OFFSETS[l] + (x_l - (l - 3.5) / 7)^2 + (r_b - (0.3 if b = 1 else -0.3))^2

    ``OFFSETS = (0.5, 0.3, 0.7, 0.2, 0.8, 0.1, 0.6, 0.4)``; minimum 0.1 at leaf 5 (b = 1,
    b1 = 0, b10 = 1), x101 = 1.5 / 7, r1 = 0.3.
``cond-forbidden-1``, ``cond-forbidden-2`` (:class:`ForbiddenRegions`): a choice ``mode`` in
    {a, b} and two shared reals ``x``, ``y`` in [0, 1]; ``w`` in [0, 1] for mode a, ``u``,
    ``v`` in [0, 1] for mode b::

        f = A + (x - cx)^2 + (y - cy)^2 + (w - 0.5)^2                  (mode a)
            (x - cx)^2 + (y - cy)^2 + (u - cu)^2 + (v - cv)^2          (mode b)

    In mode b two regions are forbidden: the open box ``ax < x < bx, ay < y < by`` around
    ``(cx, cy)`` (``Greater`` and ``Less`` conditions under ``mode = b``), and the half of the
    ``(u, v)`` square where ``u op v`` holds, ``op`` such that ``(cu, cv)`` is in it (a
    ``Relation``).  So mode b's minimum lies on both boundaries: the nearest edge of the box
    (distance ``d``) and the projection of ``(cu, cv)`` on the line u = v; mode a's offset
    ``A`` is larger than that minimum, so the best configuration is a forbidden region's
    neighbour.  Instance 1: ``(cx, cy) = (0.45, 0.5)``, box ``(0.2, 0.6) x (0.2, 0.6)``
    (d = 0.1, at y = 0.6), ``(cu, cv) = (0.8, 0.3)``, ``u > v`` forbidden, ``A = 0.3``;
    minimum 0.01 + 2 * 0.25^2 = 0.135 at mode b, (x, y) = (0.45, 0.6), u = v = 0.55.
    Instance 2: ``(cx, cy) = (0.3, 0.7)``, box ``(0.15, 0.4) x (0.55, 0.9)`` (d = 0.1, at
    x = 0.4), ``(cu, cv) = (0.2, 0.9)``, ``u < v`` forbidden, ``A = 0.35``; minimum 0.01 + 2 *
    0.35^2 = 0.255 at mode b, (x, y) = (0.4, 0.7), u = v = 0.55.

Budget 50 for every problem (Ax runs the Jenatton function for 50 trials).

Dev / test split, fixed here: CASH by data set as in ``tune-world`` (**dev** = breast_cancer,
moons, diabetes, friedman1, linear-reg; **test** = wine, digits-3v8, informative, sparse-reg;
linear-reg was added to dev after the test split showed a run trapped so on sparse-reg), the
synthetic functions by function (**dev** = ``cond-tree-depth3``, ``cond-forbidden-1``; **test** =
``cond-jenatton``, ``cond-forbidden-2``).  The published Jenatton function is a test problem,
never tuned on; every family (``cash-classification``, ``cash-regression``, ``cond-tree``,
``cond-forbidden``) is in both splits.
"""

from __future__ import annotations

import operator

import numpy as np

from benchmarks.problems.tune_world import DATASETS as WORLD_DATASETS
from benchmarks.problems.tune_world import Dataset, TuneWorldObjective
from mfbo import Categorical, Greater, Integer, Less, Real, Relation, Space

__all__ = ["BUDGET", "CASH_DEV", "CASH_TEST", "DATASETS", "CashObjective", "DeepTree",
           "ForbiddenRegions", "JENATTON_SPACE", "cash_space", "jenatton", "specs"]

BUDGET = 50
CASH_DEV = ("breast_cancer", "moons", "diabetes", "friedman1", "linear-reg")
CASH_TEST = ("wine", "digits-3v8", "informative", "sparse-reg")
#: the solver iterations an SVM may take (libsvm's default is unlimited)
SVM_MAX_ITER = 20_000


# -- CASH ---------------------------------------------------------------------------------------
def _digits_3v8():
    from sklearn.datasets import load_digits

    X, y = load_digits(return_X_y=True)
    keep = np.isin(y, (3, 8))
    return X[keep], y[keep]


def _linear_reg():
    from sklearn.datasets import make_regression

    return make_regression(n_samples=300, n_features=25, n_informative=8, noise=5.0,
                           random_state=7)


#: the CASH data sets: tune-world's, with two digits of scikit-learn's digits, 3 and 8 (357
#: rows), instead of all ten (a boosting of ten classes fits ten trees an iteration: seconds),
#: and a linear regression of the dev split's own (``linear-reg``)
DATASETS = {**{name: WORLD_DATASETS[name] for name in (*CASH_DEV, *CASH_TEST)
               if name in WORLD_DATASETS},
            "digits-3v8": Dataset("classification", _digits_3v8),
            "linear-reg": Dataset("regression", _linear_reg)}


def cash_space(task: str) -> Space:
    """The CASH space of ``task`` ("classification" or "regression"; see the module
    docstring)."""
    if task not in ("classification", "regression"):
        raise ValueError(f"task must be 'classification' or 'regression', got {task!r}.")
    svm, trees = {"model": "svm"}, {"model": ["rf", "et"]}
    linear = ({"logreg_C": Real(1e-4, 1e4, log=True, when={"model": "linear"})}
              if task == "classification" else
              {"ridge_alpha": Real(1e-4, 1e4, log=True, when={"model": "linear"})})
    epsilon = ({} if task == "classification" else
               {"svm_epsilon": Real(1e-3, 1.0, log=True, when=svm)})
    return Space({
        "preprocessing": Categorical(["none", "standard", "pca"]),
        "pca_share": Real(0.1, 1.0, when={"preprocessing": "pca"}),
        "model": Categorical(["linear", "svm", "knn", "rf", "et", "hgb"]),
        **linear,
        "svm_C": Real(1e-3, 1e3, log=True, when=svm),
        "svm_kernel": Categorical(["rbf", "poly", "linear"], when=svm),
        "svm_gamma": Real(1e-4, 10.0, log=True, when={"svm_kernel": ["rbf", "poly"]}),
        "svm_degree": Integer(2, 4, when={"svm_kernel": "poly"}),
        **epsilon,
        "knn_k": Integer(1, 50, log=True, when={"model": "knn"}),
        "knn_weights": Categorical(["uniform", "distance"], when={"model": "knn"}),
        "trees_n": Integer(5, 30, when=trees),
        "trees_depth": Integer(1, 20, when=trees),
        "trees_features": Real(0.1, 1.0, when=trees),
        "trees_min_leaf": Integer(1, 20, when=trees),
        "rf_bootstrap": Categorical([False, True], when={"model": "rf"}),
        "hgb_lr": Real(0.01, 1.0, log=True, when={"model": "hgb"}),
        "hgb_iter": Integer(10, 50, when={"model": "hgb"}),
        "hgb_leaves": Integer(4, 32, log=True, when={"model": "hgb"}),
        "hgb_min_leaf": Integer(1, 40, when={"model": "hgb"}),
    })


def _model(task: str, p: dict):
    from sklearn import ensemble, linear_model, neighbors, svm

    classify = task == "classification"
    model = p["model"]
    if model == "linear":
        return (linear_model.LogisticRegression(C=p["logreg_C"], max_iter=200)
                if classify else linear_model.Ridge(alpha=p["ridge_alpha"]))
    if model == "svm":
        kernel = dict(C=p["svm_C"], kernel=p["svm_kernel"], gamma=p.get("svm_gamma", "scale"),
                      degree=p.get("svm_degree", 3), max_iter=SVM_MAX_ITER)
        return (svm.SVC(**kernel, random_state=0) if classify
                else svm.SVR(**kernel, epsilon=p["svm_epsilon"]))
    if model == "knn":
        cls = neighbors.KNeighborsClassifier if classify else neighbors.KNeighborsRegressor
        return cls(n_neighbors=p["knn_k"], weights=p["knn_weights"], n_jobs=1)
    if model in ("rf", "et"):
        name = {"rf": "RandomForest", "et": "ExtraTrees"}[model]
        cls = getattr(ensemble, name + ("Classifier" if classify else "Regressor"))
        return cls(n_estimators=p["trees_n"], max_depth=p["trees_depth"],
                   max_features=p["trees_features"], min_samples_leaf=p["trees_min_leaf"],
                   bootstrap=p.get("rf_bootstrap", False), random_state=0, n_jobs=1)
    cls = (ensemble.HistGradientBoostingClassifier if classify
           else ensemble.HistGradientBoostingRegressor)
    return cls(learning_rate=p["hgb_lr"], max_iter=p["hgb_iter"], max_leaf_nodes=p["hgb_leaves"],
               min_samples_leaf=p["hgb_min_leaf"], early_stopping=False, random_state=0)


class CashObjective(TuneWorldObjective):
    """The cross-validated loss of a CASH configuration (preprocessing, model family and its
    hyper-parameters; see the module docstring) on one of ``tune-world``'s data sets, called
    with the configuration's active parameters.  Its data keep their own feature scales."""

    def __init__(self, dataset: str):
        if dataset not in DATASETS:
            raise ValueError(f"dataset must be one of {sorted(DATASETS)}, got {dataset!r}.")
        self.family, self.dataset, self.task = "cash", dataset, DATASETS[dataset].task
        self._data = None

    @property
    def space(self) -> Space:
        return cash_space(self.task)

    def load(self, data_home=None) -> "CashObjective":
        """Make the data now (once): features as they are, targets scaled, rows shuffled;
        ``data_home`` is not used (nothing is downloaded)."""
        if self._data is None:
            X, y = DATASETS[self.dataset].load()
            X, y = np.asarray(X, dtype=float), np.asarray(y)
            if self.task == "regression":
                y = (y - y.mean()) / y.std()
            rows = np.random.default_rng(0).permutation(X.shape[0])
            self._data = X[rows], y[rows]
        return self

    def estimator(self, params: dict):
        """The pipeline of a configuration (its active parameters)."""
        from sklearn.decomposition import PCA
        from sklearn.pipeline import make_pipeline
        from sklearn.preprocessing import StandardScaler

        steps = []
        if params["preprocessing"] != "none":
            steps.append(StandardScaler())
        if params["preprocessing"] == "pca":
            n_features = self.load()._data[0].shape[1]
            steps.append(PCA(n_components=max(1, round(params["pca_share"] * n_features)),
                             random_state=0))
        return make_pipeline(*steps, _model(self.task, params))

    def __repr__(self):
        return f"CashObjective({self.dataset!r})"


# -- synthetic tree-structured functions ----------------------------------------------------------
_BIT = Categorical([0, 1])

JENATTON_SPACE = Space({
    "x1": _BIT,
    "x2": Categorical([0, 1], when={"x1": 0}),
    "x3": Categorical([0, 1], when={"x1": 1}),
    "x4": Real(0.0, 1.0, when={"x2": 0}),
    "x5": Real(0.0, 1.0, when={"x2": 1}),
    "x6": Real(0.0, 1.0, when={"x3": 0}),
    "x7": Real(0.0, 1.0, when={"x3": 1}),
    "r8": Real(0.0, 1.0, when={"x1": 0}),
    "r9": Real(0.0, 1.0, when={"x1": 1}),
})
JENATTON_OPTIMUM = 0.1


def jenatton(params: dict) -> float:
    """Jenatton et al.'s (2017) tree-structured function of a configuration of
    :data:`JENATTON_SPACE` (its active parameters; see the module docstring)."""
    if params["x1"] == 0:
        leaf = "x4" if params["x2"] == 0 else "x5"
        return params[leaf] ** 2 + (0.1 if leaf == "x4" else 0.2) + params["r8"]
    leaf = "x6" if params["x3"] == 0 else "x7"
    return params[leaf] ** 2 + (0.3 if leaf == "x6" else 0.4) + params["r9"]


class DeepTree:
    """The depth-3 tree-structured function of the module docstring, called with a
    configuration of :attr:`space` (its active parameters)."""

    OFFSETS = (0.5, 0.3, 0.7, 0.2, 0.8, 0.1, 0.6, 0.4)
    #: the shared variable's best value in each half of the tree
    SHARED_CENTRES = (-0.3, 0.3)
    optimum = 0.1

    @staticmethod
    def centre(leaf: int) -> float:
        """The best value of leaf ``leaf``'s real."""
        return (leaf - 3.5) / 7

    @property
    def space(self) -> Space:
        dims = {"b": _BIT}
        for path in ("0", "1"):
            dims["b" + path] = Categorical([0, 1], when={"b": int(path)})
        for path in ("00", "01", "10", "11"):
            dims["b" + path] = Categorical([0, 1], when={"b" + path[0]: int(path[1])})
        for leaf in range(8):
            path = format(leaf, "03b")
            dims["x" + path] = Real(-1.0, 1.0, when={"b" + path[:2]: int(path[2])})
        for half in (0, 1):
            dims[f"r{half}"] = Real(-1.0, 1.0, when={"b": half})
        return Space(dims)

    def __call__(self, params: dict) -> float:
        b = params["b"]
        path = f"{b}{params[f'b{b}']}"
        path += str(params["b" + path])
        leaf = int(path, 2)
        return (self.OFFSETS[leaf] + (params["x" + path] - self.centre(leaf)) ** 2
                + (params[f"r{b}"] - self.SHARED_CENTRES[b]) ** 2)

    def __repr__(self):
        return "DeepTree()"


class ForbiddenRegions:
    """The function with two forbidden regions of the module docstring, one instance,
    called with a configuration of :attr:`space` (its active parameters).

    ``centre_xy``, ``centre_uv``: the unconstrained minimisers; ``box``: ``((ax, bx), (ay,
    by))``, the open box forbidden in mode b; ``op``: the relation ``u op v`` forbidden in
    mode b ("<" or ">"); ``offset_a``: mode a's offset ``A``; ``optimum``: the constrained
    minimum (checked by the tests)."""

    def __init__(self, centre_xy, box, centre_uv, op: str, offset_a: float, optimum: float):
        if op not in ("<", ">"):
            raise ValueError(f"op must be '<' or '>', got {op!r}.")
        cu, cv = centre_uv
        if not {"<": operator.lt, ">": operator.gt}[op](cu, cv):
            raise ValueError(f"centre_uv={centre_uv!r} must be forbidden by u {op} v.")
        self.centre_xy, self.box, self.centre_uv = tuple(centre_xy), tuple(box), tuple(centre_uv)
        self.op, self.offset_a, self.optimum = op, float(offset_a), float(optimum)

    @property
    def space(self) -> Space:
        (ax, bx), (ay, by) = self.box
        mode_b = {"mode": "b"}
        return Space({
            "mode": Categorical(["a", "b"]),
            "x": Real(0.0, 1.0),
            "y": Real(0.0, 1.0),
            "w": Real(0.0, 1.0, when={"mode": "a"}),
            "u": Real(0.0, 1.0, when=mode_b),
            "v": Real(0.0, 1.0, when=mode_b),
        }, forbidden=[Greater("x", ax) & Less("x", bx) & Greater("y", ay) & Less("y", by)
                      & mode_b,
                      Relation("u", self.op, "v")])

    def __call__(self, params: dict) -> float:
        (cx, cy), (cu, cv) = self.centre_xy, self.centre_uv
        value = (params["x"] - cx) ** 2 + (params["y"] - cy) ** 2
        if params["mode"] == "a":
            return self.offset_a + value + (params["w"] - 0.5) ** 2
        return value + (params["u"] - cu) ** 2 + (params["v"] - cv) ** 2

    def __repr__(self):
        return (f"ForbiddenRegions({self.centre_xy!r}, {self.box!r}, {self.centre_uv!r}, "
                f"{self.op!r}, {self.offset_a!r}, {self.optimum!r})")


FORBIDDEN_1 = ForbiddenRegions((0.45, 0.5), ((0.2, 0.6), (0.2, 0.6)), (0.8, 0.3), ">", 0.3,
                               optimum=0.135)
FORBIDDEN_2 = ForbiddenRegions((0.3, 0.7), ((0.15, 0.4), (0.55, 0.9)), (0.2, 0.9), "<", 0.35,
                               optimum=0.255)


def specs() -> list[dict]:
    """Every problem of the suite: ``name``, ``space`` (an :class:`mfbo.Space`),
    ``objective`` (called with a configuration's active parameters), ``optimum`` (None:
    unknown), ``budget``, ``split`` and ``family`` (``cash-<task>``, ``cond-tree``,
    ``cond-forbidden``)."""
    out = []
    for dataset in (*CASH_DEV, *CASH_TEST):
        objective = CashObjective(dataset)
        out.append(dict(name=f"cond-cash-{dataset}", space=objective.space, objective=objective,
                        optimum=None, budget=BUDGET,
                        split="dev" if dataset in CASH_DEV else "test",
                        family=f"cash-{objective.task}"))
    tree = DeepTree()
    out += [
        dict(name="cond-tree-depth3", space=tree.space, objective=tree, optimum=tree.optimum,
             budget=BUDGET, split="dev", family="cond-tree"),
        dict(name="cond-forbidden-1", space=FORBIDDEN_1.space, objective=FORBIDDEN_1,
             optimum=FORBIDDEN_1.optimum, budget=BUDGET, split="dev", family="cond-forbidden"),
        dict(name="cond-jenatton", space=JENATTON_SPACE, objective=jenatton,
             optimum=JENATTON_OPTIMUM, budget=BUDGET, split="test", family="cond-tree"),
        dict(name="cond-forbidden-2", space=FORBIDDEN_2.space, objective=FORBIDDEN_2,
             optimum=FORBIDDEN_2.optimum, budget=BUDGET, split="test", family="cond-forbidden"),
    ]
    return out
