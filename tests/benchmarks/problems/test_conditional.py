"""The conditional suite: its split, its spaces, the CASH objectives and the synthetic
functions' known minima."""

import dataclasses

import numpy as np
import pytest

from benchmarks.problems import conditional
from benchmarks.problems.conditional import (FORBIDDEN_1, FORBIDDEN_2, JENATTON_SPACE,
                                             CashObjective, DeepTree, ForbiddenRegions,
                                             cash_space, jenatton)
from benchmarks.problems.problems import SUITES, family_of, get_problem
from mfbo import Space

SPECS = conditional.specs()
SYNTHETIC = {"cond-jenatton": (JENATTON_SPACE, jenatton, 0.1),
             "cond-tree-depth3": (DeepTree().space, DeepTree(), 0.1),
             "cond-forbidden-1": (FORBIDDEN_1.space, FORBIDDEN_1, 0.135),
             "cond-forbidden-2": (FORBIDDEN_2.space, FORBIDDEN_2, 0.255)}


def _active_names(space, params):
    """The parameters active in ``params`` by the definition: each one whose condition holds
    on the active ones before it."""
    out = {}
    for name, dim in space.dimensions.items():
        if name in params and (dim.when is None or dim.when.holds(out)):
            out[name] = params[name]
    return list(out)


def _forbidden(space, params):
    return any(f.holds(params) for f in space.forbidden)


def test_the_split_is_fixed_by_data_set_and_by_function():
    suite = SUITES["conditional"]
    assert suite.dev == ("cond-cash-breast_cancer", "cond-cash-moons", "cond-cash-diabetes",
                         "cond-cash-friedman1", "cond-cash-linear-reg", "cond-tree-depth3",
                         "cond-forbidden-1")
    assert suite.test == ("cond-cash-wine", "cond-cash-digits-3v8", "cond-cash-informative",
                          "cond-cash-sparse-reg", "cond-jenatton", "cond-forbidden-2")
    assert not set(conditional.CASH_DEV) & set(conditional.CASH_TEST)
    for s in SPECS:
        assert s["budget"] == 50 and isinstance(s["space"], Space) and s["space"].constrained
        assert family_of(s["name"]) == s["family"]
        assert (s["optimum"] is None) == s["name"].startswith("cond-cash-")
    families = {split: {s["family"] for s in SPECS if s["split"] == split}
                for split in ("dev", "test")}
    assert families["dev"] == families["test"] == {"cash-classification", "cash-regression",
                                                   "cond-tree", "cond-forbidden"}


def test_the_problems_are_the_same_every_time():
    again = conditional.specs()
    assert [s["name"] for s in again] == [s["name"] for s in SPECS]
    assert [s["space"].to_json() for s in again] == [s["space"].to_json() for s in SPECS]
    assert [s["split"] for s in again] == [s["split"] for s in SPECS]
    params = {"preprocessing": "pca", "pca_share": 0.5, "model": "knn", "knn_k": 7,
              "knn_weights": "distance"}
    first = CashObjective("moons")(params)
    assert np.isfinite(first) and 0 <= first <= 1
    assert CashObjective("moons")(params) == first == get_problem("cond-cash-moons")(**params)


@pytest.mark.parametrize("name", [s["name"] for s in SPECS])
def test_every_configuration_of_every_space_is_valid(name):
    space = get_problem(name)._space
    U = space.sample(300, np.random.default_rng(0))
    configurations = space.from_unit(U)
    for params in configurations:
        assert space.validate(params) == params
        assert list(params) == _active_names(space, params) and not _forbidden(space, params)
    # every level of every categorical is proposed somewhere
    for n, dim in space.dimensions.items():
        if hasattr(dim, "choices"):
            assert {p[n] for p in configurations if n in p} == set(dim.choices), n


@pytest.mark.parametrize("task", ["classification", "regression"])
def test_the_cash_space_activates_each_family_s_own_parameters(task):
    space = cash_space(task)
    linear = {"classification": "logreg_C", "regression": "ridge_alpha"}[task]
    base = {"preprocessing": "none"}
    assert space.validate({**base, "model": "linear", linear: 1.0}) == {**base,
                                                                        "model": "linear",
                                                                        linear: 1.0}
    svm = {**base, "model": "svm", "svm_C": 1.0, "svm_kernel": "linear",
           **({"svm_epsilon": 0.1} if task == "regression" else {})}
    space.validate(svm)
    with pytest.raises(ValueError, match="svm_gamma"):  # inactive for the linear kernel
        space.validate({**svm, "svm_gamma": 0.1})
    with pytest.raises(ValueError, match="missing.*svm_degree"):  # active for poly
        space.validate({**svm, "svm_kernel": "poly", "svm_gamma": 0.1})
    trees = {"trees_n": 10, "trees_depth": 5, "trees_features": 0.5, "trees_min_leaf": 2}
    space.validate({**base, "model": "et", **trees})
    with pytest.raises(ValueError, match="missing.*rf_bootstrap"):
        space.validate({**base, "model": "rf", **trees})
    with pytest.raises(ValueError, match="pca_share"):
        space.validate({**base, "pca_share": 0.5, "model": "linear", linear: 1.0})


@pytest.mark.parametrize("model", ["linear", "svm", "knn", "rf", "et", "hgb"])
def test_each_cash_family_fits_with_its_parameters(model):
    space = cash_space("classification")
    rng = np.random.default_rng(1)
    params = next(p for p in space.from_unit(space.sample(200, rng))
                  if p["model"] == model and p["preprocessing"] == "pca")
    objective = CashObjective("moons")
    pipeline = objective.estimator(params)
    names = [step[0] for step in pipeline.steps]
    assert names[:2] == ["standardscaler", "pca"]
    assert pipeline.named_steps["pca"].n_components == max(1, round(params["pca_share"] * 2))
    fitted = pipeline[-1].get_params()
    for key, name in {"svm_C": "C", "knn_k": "n_neighbors", "trees_n": "n_estimators",
                      "hgb_lr": "learning_rate", "logreg_C": "C"}.items():
        if key in params:
            assert fitted[name] == params[key]
    assert 0 <= objective(params) <= 1


def test_the_regression_cash_loss_is_the_scaled_mean_squared_error():
    objective = CashObjective("diabetes")
    params = {"preprocessing": "standard", "model": "linear", "ridge_alpha": 1.0}
    X, y = objective.load()._data
    assert y.std() == pytest.approx(1.0) and abs(y.mean()) < 1e-12
    from sklearn.linear_model import Ridge
    from sklearn.model_selection import cross_val_score
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    expected = -cross_val_score(make_pipeline(StandardScaler(), Ridge(alpha=1.0)), X, y, cv=3,
                                scoring="neg_mean_squared_error").mean()
    assert objective(params) == pytest.approx(expected, rel=1e-12)


def test_the_features_keep_their_own_scales_so_scaling_matters():
    X, _ = CashObjective("breast_cancer").load()._data
    spread = X.std(axis=0)
    assert spread.max() / spread.min() > 1e4
    X38, y38 = CashObjective("digits-3v8").load()._data
    assert X38.shape == (357, 64) and set(y38.tolist()) == {3, 8}


@pytest.mark.parametrize("name", sorted(SYNTHETIC))
def test_each_synthetic_function_reaches_its_optimum_and_no_allowed_point_is_lower(name):
    space, f, optimum = SYNTHETIC[name]
    problem = get_problem(name)
    assert problem.optimum == optimum
    argmin = {"cond-jenatton": {"x1": 0, "x2": 0, "x4": 0.0, "r8": 0.0},
              "cond-tree-depth3": {"b": 1, "b1": 0, "b10": 1, "x101": 1.5 / 7, "r1": 0.3},
              "cond-forbidden-1": {"mode": "b", "x": 0.45, "y": 0.6, "u": 0.55, "v": 0.55},
              "cond-forbidden-2": {"mode": "b", "x": 0.4, "y": 0.7, "u": 0.55, "v": 0.55}}[name]
    assert space.validate(argmin) == argmin
    assert problem(**argmin) == pytest.approx(optimum, abs=1e-15)
    values = [f(p) for p in space.from_unit(space.sample(20_000, np.random.default_rng(2)))]
    assert min(values) >= optimum - 1e-15
    assert min(values) < optimum + 0.1  # the sample comes near it


def test_the_jenatton_function_is_its_published_definition():
    assert jenatton({"x1": 0, "x2": 0, "x4": 0.5, "r8": 0.25}) == 0.25 + 0.1 + 0.25
    assert jenatton({"x1": 0, "x2": 1, "x5": 0.5, "r8": 0.25}) == 0.25 + 0.2 + 0.25
    assert jenatton({"x1": 1, "x3": 0, "x6": 0.5, "r9": 0.5}) == 0.25 + 0.3 + 0.5
    assert jenatton({"x1": 1, "x3": 1, "x7": 1.0, "r9": 0.0}) == 1.0 + 0.4
    # nine dimensions, a binary tree of depth two: four active at once
    assert len(JENATTON_SPACE) == 9
    assert all(len(p) == 4 for p in JENATTON_SPACE.from_unit(
        JENATTON_SPACE.sample(50, np.random.default_rng(0))))


def test_the_deep_tree_has_one_leaf_per_path_each_with_its_offset():
    tree = DeepTree()
    space = tree.space
    assert len(space) == 17
    for leaf in range(8):
        path = format(leaf, "03b")
        b = int(path[0])
        params = {"b": b, f"b{b}": int(path[1]), f"b{path[:2]}": int(path[2]),
                  f"x{path}": tree.centre(leaf), f"r{b}": tree.SHARED_CENTRES[b]}
        assert space.validate(params) == params
        assert tree(params) == tree.OFFSETS[leaf]
        assert tree({**params, f"x{path}": tree.centre(leaf) + 0.5}) == pytest.approx(
            tree.OFFSETS[leaf] + 0.25)
    assert min(tree.OFFSETS) == tree.optimum == tree.OFFSETS[5]


@pytest.mark.parametrize("instance", [FORBIDDEN_1, FORBIDDEN_2], ids=["1", "2"])
def test_the_forbidden_minimum_is_the_exact_minimum_over_a_grid_of_allowed_points(instance):
    space = instance.space
    grid = np.round(np.linspace(0.0, 1.0, 101), 10)
    (cx, cy), (cu, cv) = instance.centre_xy, instance.centre_uv
    # mode b is a sum of a term in (x, y) and one in (u, v), each with its own forbidden region
    xy = min((x - cx) ** 2 + (y - cy) ** 2 for x in grid for y in grid
             if not _forbidden(space, {"mode": "b", "x": x, "y": y, "u": 0.0, "v": 0.0}))
    uv = min((u - cu) ** 2 + (v - cv) ** 2 for u in grid for v in grid
             if not _forbidden(space, {"mode": "b", "x": 0.0, "y": 0.0, "u": u, "v": v}))
    assert xy + uv == pytest.approx(instance.optimum, abs=1e-12)
    assert instance.offset_a > instance.optimum  # mode a's best is worse
    centre = {"mode": "b", "x": cx, "y": cy, "u": cu, "v": cv}
    assert _forbidden(space, centre)
    with pytest.raises(ValueError, match="forbidden"):
        space.validate(centre)


def test_a_forbidden_or_inactive_configuration_is_refused_unevaluated():
    seen = []
    problem = dataclasses.replace(get_problem("cond-forbidden-1"),
                                  objective=lambda p: seen.append(p) or 0.0)
    with pytest.raises(ValueError, match="forbidden"):
        problem(mode="b", x=0.45, y=0.5, u=0.1, v=0.9)
    with pytest.raises(ValueError, match="inactive"):
        problem(mode="a", x=0.1, y=0.1, w=0.5, u=0.2)
    assert problem(mode="a", x=0.1, y=0.1, w=0.5) == 0.0
    assert seen == [{"mode": "a", "x": 0.1, "y": 0.1, "w": 0.5}]


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="dataset"):
        CashObjective("mnist")
    with pytest.raises(ValueError, match="task"):
        cash_space("ranking")
    with pytest.raises(ValueError, match="op"):
        ForbiddenRegions((0.5, 0.5), ((0.1, 0.9), (0.1, 0.9)), (0.8, 0.3), "<=", 1.0, 0.0)
    with pytest.raises(ValueError, match="centre_uv"):
        ForbiddenRegions((0.5, 0.5), ((0.1, 0.9), (0.1, 0.9)), (0.2, 0.3), ">", 1.0, 0.0)
