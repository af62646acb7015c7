"""The problem registry: the HPOlib grids and random grids, the suites' registration and
dev / test splits, spaces, deterministic evaluation, checked configurations and suite names."""

import argparse
import dataclasses
import json
import math
import zlib

import numpy as np
import pandas as pd
import pytest

import mfbo
from benchmarks.harness import bench
from benchmarks.problems import data, sklearn_tune
from benchmarks.problems.problems import (PROBLEMS, SUITES, ConfigProblem, expand_problems,
                                          get_problem, split_of)
from tests.support import have_data


def _table(name):
    try:
        return data.fetch_file(name, download=False)
    except FileNotFoundError:
        pytest.skip(f"{name} not found: set MFBO_DATA_DIR to a directory holding it "
                    "(CI uses ../shared/data)")


SKLEARN = SUITES["sklearn-tune"].problems()
MIXED = SUITES["mixed"].problems()
#: the data file each non-bundled data set is read from, and whether it is here
_FILES = {"california": "cal_housing.data", "magic04": "magic04.data", "cpu_act": "cpu_act.csv"}
_HAVE = {dataset: have_data(file) for dataset, file in _FILES.items()}


def _needs_data(name):
    for dataset, file in _FILES.items():
        if f"-{dataset}-" in f"{name}-" and not _HAVE[dataset]:
            pytest.skip(f"{file} not found: set MFBO_DATA_DIR (CI uses ../shared/data)")


def _covering():
    """One sklearn-tune problem per (model, metric), the data sets taken in turn so each one
    is used several times (the objective's code path depends on the model, task and metric;
    the data set only changes the rows), and every mixed problem."""
    clf = [d for d, ds in sklearn_tune.DATASETS.items() if ds.task == "classification"]
    reg = [d for d, ds in sklearn_tune.DATASETS.items() if ds.task == "regression"]
    out = []
    for i, model in enumerate(sklearn_tune.MODELS):
        for j, metric in enumerate(("acc", "nll")):
            out.append(sklearn_tune.problem_name(model, clf[(i + j) % len(clf)], metric))
        for j, metric in enumerate(("mse", "mae")):
            out.append(sklearn_tune.problem_name(model, reg[(i + j) % len(reg)], metric))
    return out + MIXED


def test_lda_grid_is_an_exact_table_lookup():
    raw = pd.read_csv(_table("lda_on_grid.csv"))
    p = get_problem("lda-grid")
    assert p.optimum == 1266.167382 and p.budget == 50 and p.kind == "table"
    assert p(kappa=0.5, tau0=16, S=16384) == 1266.167382
    assert p(kappa=0.5, tau0=1024, S=64) == 1520.06445  # the source's duplicated key, later value
    got = p.f(raw[["kappa", "tau0", "S_minibatch"]].to_numpy(dtype=float))
    np.testing.assert_array_equal(got, raw["perplexity"].to_numpy())
    assert p.values.min() == p.optimum == p.target(0)
    with pytest.raises(ValueError, match="not a cell"):
        p(kappa=0.55, tau0=16, S=16384)
    cands, grid = p.candidate_set(3)
    assert grid is None and list(cands.columns) == ["kappa", "tau0", "S"] and len(cands) == 288


def test_svm_grid_is_error_in_percent():
    raw = pd.read_csv(_table("svm_on_grid.csv"))
    p = get_problem("svm-grid")
    assert p.optimum == 24.11 and p.budget == 100
    assert p(C=6000, alpha=0.1, epsilon=0.001) == 24.11
    got = p.f(raw[["C", "alpha", "epsilon"]].to_numpy(dtype=float))
    np.testing.assert_allclose(got, 100 * raw["error"].to_numpy(), rtol=0, atol=1e-9)
    assert p.values.min() == 24.11 and int((p.values == 24.11).sum()) == 1
    assert p(C=1e6, alpha=0.1, epsilon=0.1) == 50.0  # the failure plateau
    with pytest.raises(ValueError, match="not a cell"):
        p(C=6000, alpha=0.1, epsilon=0.002)


def test_grid_axes_named_log_scaled_are_log_scaled():
    lda, svm = get_problem("lda-grid"), get_problem("svm-grid")
    assert [d.log for d in lda.space.values()] == [False, True, True]
    assert [d.log for d in svm.space.values()] == [True, True, True]
    _table("lda_on_grid.csv")
    # tau0 = 1, 4, ..., 1024 and S = 1, 4, ..., 16384 are evenly spaced in the unit cube
    U = mfbo.Space(lda.space).array_to_unit(lda.cells)
    np.testing.assert_allclose(np.unique(U[:, 1]), np.linspace(0, 1, 6), atol=1e-12)
    np.testing.assert_allclose(np.unique(U[:, 2]), np.linspace(0, 1, 8), atol=1e-12)
    np.testing.assert_allclose(np.unique(U[:, 0]), np.linspace(0, 1, 6), atol=1e-12)
    assert {k: len(v) for k, v in lda.axes().items()} == {"kappa": 6, "tau0": 6, "S": 8}


def test_missing_table_says_where_to_put_it(tmp_path, monkeypatch):
    monkeypatch.setenv(data.ENV_VAR, str(tmp_path / "empty"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    fresh = dataclasses.replace(PROBLEMS["svm-grid"], _table=None)
    with pytest.raises(FileNotFoundError, match=data.ENV_VAR):
        fresh(C=6000, alpha=0.1, epsilon=0.001)


def test_random_grids_are_seed_mod_3_and_reproducible():
    p = get_problem("branin-grid")
    assert p.kind == "random-grid" and p.continuous is get_problem("branin")
    X0, g0 = p.candidate_set(0)
    X3, g3 = p.candidate_set(3)
    X1, g1 = p.candidate_set(1)
    assert (g0, g1, g3, p.candidate_set(5)[1]) == (0, 1, 0, 2)
    assert X0.shape == (250_000, 2) and X3 is X0 and not np.array_equal(X0, X1)
    np.testing.assert_array_equal(X0, get_problem("branin").random_grid(250_000, seed=0))
    fresh = dataclasses.replace(p, _grids={})  # built anew, same points
    np.testing.assert_array_equal(fresh.candidate_set(6)[0], X0)
    b = p.bounds()
    assert np.all((X1 >= b[:, 0]) & (X1 <= b[:, 1]))
    # the target is the easier of f* + 1e-3|f*| and the grid's own minimum
    grid_min = float(p.f(X1).min())
    assert p.target(1) == pytest.approx(max(grid_min, 0.397887 * (1 + 1e-3)), rel=1e-12)
    assert get_problem("hartmann6-grid").budget == 200


def test_suites_have_disjoint_dev_and_test_splits():
    tune = SUITES["sklearn-tune"]
    assert len(tune.dev) == 80 and len(tune.test) == 48
    n = len(sklearn_tune.MODELS) * 2 * len(sklearn_tune.DATASETS)
    assert len(SKLEARN) == len(set(SKLEARN)) == n == 128
    for name in tune.dev:
        assert name.split("-")[-2] in sklearn_tune.DEV_DATASETS
    for name in tune.test:
        assert name.split("-")[-2] in sklearn_tune.TEST_DATASETS
    assert "sklearn-DT-breast_cancer-acc" in tune.dev and "sklearn-kNN-diabetes-mse" in tune.dev
    assert "sklearn-MLP-sgd-california-mae" in tune.test
    assert "sklearn-DT-magic04-acc" in tune.dev and "sklearn-RF-cpu_act-mae" in tune.dev
    assert set(SUITES["mixed"].dev) == {"mixed-ackley-7d", "mixed-ackley-10d",
                                        "pressure-vessel", "mixed-pipeline-breast_cancer"}
    assert set(SUITES["mixed"].test) == {"mixed-ackley-12d", "speed-reducer",
                                         "mixed-pipeline-digits"}
    for suite in SUITES.values():
        assert not set(suite.dev) & set(suite.test)
        for name in suite.problems():  # those of a suite run by its own command are not here
            assert (name in PROBLEMS) != bool(suite.command)
            assert split_of(name)[0] == suite.name
    assert split_of("branin") is None and split_of("pressure-vessel") == ("mixed", "dev")


@pytest.mark.parametrize("name", SKLEARN + MIXED)
def test_every_problem_has_a_valid_space_and_its_data(name):
    p = get_problem(name)
    assert isinstance(p, ConfigProblem) and p.kind == "mixed" and p.budget in (100, 200)
    space = mfbo.Space(p.space)
    assert mfbo.Space.from_json(json.loads(json.dumps(space.to_json()))) == space
    assert space.names == p.names
    if name in SKLEARN or "pipeline" in name:
        assert p.optimum is None and p.target(0) is None
    else:
        assert p.optimum is not None and p.target(0) > p.optimum
    _needs_data(name)
    assert p.load() is p


def test_integer_and_categorical_dimensions_are_there():
    kinds = lambda name: {type(d).__name__ for d in get_problem(name).space.values()}
    assert kinds("sklearn-DT-iris-acc") == {"Integer", "Real"}
    assert kinds("sklearn-lasso-diabetes-mse") == {"Integer", "Real", "Categorical"}
    for name in MIXED:
        assert {"Integer", "Real"} <= kinds(name)
    assert sum(type(d).__name__ == "Categorical"
               for d in get_problem("mixed-pipeline-digits").space.values()) == 5
    # bayesmark's log-scaled reals are log-scaled here
    svm = get_problem("sklearn-SVM-wine-acc").space
    assert all(d.log for d in svm.values())
    assert get_problem("sklearn-ada-iris-nll").space["learning_rate"].log


@pytest.mark.parametrize("name", _covering())
def test_a_random_point_evaluates_twice_to_the_same_value(name):
    _needs_data(name)
    p = get_problem(name)
    space = mfbo.Space(p.space)
    params = space.from_unit(space.sample(1, np.random.default_rng(zlib.crc32(name.encode()))))[0]
    value = p(**params)
    assert isinstance(value, float) and math.isfinite(value)
    assert p(**params) == value
    if name in SKLEARN and name.endswith("-acc"):
        assert 0.0 <= value <= 1.0


def test_a_configuration_is_checked_and_integral_floats_are_integers():
    p = get_problem("sklearn-kNN-iris-acc")
    assert p(n_neighbors=5.0, p=2.0) == p(n_neighbors=5, p=2)
    with pytest.raises(TypeError, match="n_neighbors"):
        p(n_neighbors=5.5, p=2)
    with pytest.raises(ValueError, match="outside"):
        p(n_neighbors=26, p=2)
    with pytest.raises(ValueError, match="missing"):
        p(n_neighbors=5)
    with pytest.raises(ValueError, match="does not fit"):
        sklearn_tune.SklearnTuneObjective("kNN", "iris", "mse")


def test_suite_names_expand_to_their_problems():
    assert expand_problems("sklearn-tune") == SKLEARN
    assert expand_problems(["sklearn-tune:dev"]) == list(SUITES["sklearn-tune"].dev)
    assert expand_problems("mixed:test, branin,mixed-ackley-12d") == [
        *SUITES["mixed"].test, "branin"]
    with pytest.raises(ValueError, match="split must be"):
        expand_problems("mixed:train")
    with pytest.raises(ValueError, match="unknown problem 'nope'.*suite"):
        expand_problems("branin,nope")
    with pytest.raises(ValueError, match="is a suite"):
        get_problem("mixed")
    parser = bench.add_arguments(argparse.ArgumentParser())
    assert bench._problems_of(parser.parse_args([])) == ["branin"]
    args = parser.parse_args(["--problem", "branin", "--suite", "mixed:dev"])
    assert expand_problems(bench._problems_of(args)) == ["branin", *SUITES["mixed"].dev]
    with pytest.raises(ValueError, match="unknown suite"):
        bench._problems_of(parser.parse_args(["--suite", "branin"]))


def test_a_suite_run_by_its_own_command_is_listed_and_refused_with_the_command(tmp_path):
    from benchmarks.harness.cli import CommandError

    suite = SUITES["multi-fidelity"]
    assert suite.command.startswith("python -m benchmarks.harness.multi_fidelity ")
    assert [s.command for s in SUITES.values()].count("") == len(SUITES) - 1
    assert split_of("sgd-digits") == ("multi-fidelity", "test")
    wide = argparse.ArgumentParser(
        formatter_class=lambda prog: argparse.HelpFormatter(prog, width=10_000))
    assert "multi-fidelity (5 dev + 4 test; run by its own command" in " ".join(
        bench.add_arguments(wide).format_help().split())
    for names in ["multi-fidelity", "multi-fidelity:dev", "branin,sgd-digits"]:
        with pytest.raises(ValueError, match="mfbo bench does not run.*run it with: python -m "
                                             "benchmarks.harness.multi_fidelity"):
            expand_problems(names)
    with pytest.raises(ValueError, match="'branin-mf': mfbo bench does not run the multi-"):
        get_problem("branin-mf")
    parser = bench.add_arguments(argparse.ArgumentParser())
    args = parser.parse_args(["--suite", "multi-fidelity:test", "--out",
                              str(tmp_path / "r.jsonl")])
    with pytest.raises(CommandError, match="run it with: python -m benchmarks.harness"):
        bench.run_from_args(args)
