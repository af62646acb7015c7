"""The problem suites ``sklearn-tune`` and ``mixed``: registration and dev/test split, spaces,
deterministic evaluation, known optima, suite expansion, the report of unknown optima and of
suite summaries, and a smoke ``mfbo bench`` run."""

import argparse
import json
import math
import zlib

import numpy as np
import pytest

import mfbo
from benchmarks import bench, mixed, peers, report, sklearn_tune
from benchmarks.problems import (PROBLEMS, SUITES, ConfigProblem, expand_problems, get_problem,
                                 split_of)
from tests.support import have_data

SKLEARN = SUITES["sklearn-tune"].problems()
MIXED = SUITES["mixed"].problems()
#: the data file each non-bundled data set is read from, and whether it is here
_FILES = {"california": "cal_housing.data", "magic04": "magic04.data", "cpu_act": "cpu_act.csv"}
_HAVE = {dataset: have_data(file) for dataset, file in _FILES.items()}
HAVE_CAL = _HAVE["california"]


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


# -- registration --------------------------------------------------------------------------------
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
        for name in suite.problems():
            assert name in PROBLEMS and split_of(name)[0] == suite.name
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


# -- evaluation ------------------------------------------------------------------------------------
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


def test_holdout_loss_is_the_other_twenty_percent():
    obj = get_problem("sklearn-linear-wine-acc").objective
    params = {"C": 1.0, "intercept_scaling": 1.0}
    X, Xt, y, yt = obj.load()._split
    assert len(Xt) == 36 and len(X) == 142
    loss = obj.holdout_loss(params)
    assert 0.0 <= loss <= 1.0 and loss * 36 == pytest.approx(round(loss * 36))


def test_digits_is_subsampled_and_california_standardised():
    X, y = sklearn_tune.load_dataset("digits")
    assert X.shape == (1000, 64) and set(np.unique(y)) == set(range(10))
    if HAVE_CAL:
        X, y = sklearn_tune.load_dataset("california")
        assert X.shape == (2000, 8) and np.allclose(np.median(X, axis=0), 0.0)
        assert abs(np.median(y)) < 1e-12


@pytest.mark.skipif(not (_HAVE["magic04"] and _HAVE["cpu_act"]),
                    reason="magic04.data / cpu_act.csv not found: set MFBO_DATA_DIR "
                           "(CI uses ../shared/data)")
def test_magic04_and_cpu_act_are_subsampled_and_standardised():
    X, y = sklearn_tune.load_dataset("magic04")
    # 2,000 rows; the class letters g / h become labels 0 / 1, which are not standardised
    assert X.shape == (2000, 10) and y.dtype == np.int64 and set(np.unique(y)) == {0, 1}
    assert np.allclose(np.median(X, axis=0), 0.0)
    X, y = sklearn_tune.load_dataset("cpu_act")
    assert X.shape == (2000, 21) and abs(np.median(y)) < 1e-12
    # the same rows every time
    X2, y2 = sklearn_tune.load_dataset("cpu_act")
    assert np.array_equal(X, X2) and np.array_equal(y, y2)


def test_known_optima_of_the_mixed_problems():
    for name in ("mixed-ackley-7d", "mixed-ackley-10d", "mixed-ackley-12d"):
        p = get_problem(name)
        best = p.objective.optimum_params()
        assert p(**best) == pytest.approx(0.0, abs=1e-12)
        # another level of a categorical moves the centre and adds its offset
        other = dict(best, c1=next(c for c in p.space["c1"].choices if c != best["c1"]))
        assert p(**other) >= 0.5
        assert p(**dict(best, z1=best["z1"] + 1 if best["z1"] < 10 else 9)) > 0.1
    pv = get_problem("pressure-vessel")
    at = dict(Ts_16ths=13, Th_16ths=7, R=42.09844559585492, L=176.63659584243945)
    assert pv(**at) == pytest.approx(mixed.PRESSURE_VESSEL_OPTIMUM, abs=1e-6)
    assert pv(**dict(at, Ts_16ths=12)) > pv(**at) + 1000  # shell too thin: penalised
    sr = get_problem("speed-reducer")
    at = dict(x1=3.5, x2=0.7, x3=17, x4=7.3, x5=7.7153199115, x6=3.3502146661, x7=5.2866544650)
    assert sr(**at) == pytest.approx(mixed.SPEED_REDUCER_OPTIMUM, abs=1e-5)
    assert sr(**dict(at, x6=3.2)) > sr(**at) + 1000  # shaft 1 too thin: penalised


# -- expansion and the command line ------------------------------------------------------------
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


def test_mfbo_bench_smoke_run_writes_records_the_report_reads(tmp_path, capsys):
    out = tmp_path / "r.jsonl"
    problems = "sklearn-kNN-iris-acc,pressure-vessel"
    assert bench.main(["--problem", problems, "--method", "mondrian,random", "--seeds", "1",
                       "--budget", "6", "--out", str(out), "--no-progress"]) == 0
    recs = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(recs) == 4 and {r["kind"] for r in recs} == {"mixed"}
    for r in recs:
        assert r["n_evals"] == 6 and r["n_failed"] == 0 and len(r["trace"]) == 6
    tune = [r for r in recs if r["problem"] == "sklearn-kNN-iris-acc"]
    assert all(r["optimum"] is None and r["target"] is None and r["reached"] is None
               for r in tune)
    assert all(r["optimum"] == mixed.PRESSURE_VESSEL_OPTIMUM for r in recs if r not in tune)
    assert report.main([str(out), "--out", str(tmp_path / "rep")]) == 0
    md = (tmp_path / "rep" / "report.md").read_text()
    best = min(r["best"] for r in tune)
    assert "## sklearn-kNN-iris-acc, 6 evaluations" in md and "## pressure-vessel, 6" in md
    assert f"Optimum unknown; f* = {report._fmt(best, 10)}" in md
    assert "## Summary: sklearn-tune (dev split), 1 problem" in md
    assert "## Summary: mixed (dev split), 1 problem" in md
    assert (tmp_path / "rep" / "sklearn-kNN-iris-acc.png").stat().st_size > 5_000


# -- the report ------------------------------------------------------------------------------------
def _rec(problem, method, seed, trace, optimum=None):
    return {"problem": problem, "method": method, "seed": seed, "budget": len(trace),
            "best": trace[-1], "optimum": optimum, "target": optimum, "trace": trace,
            "values": trace, "evals_to_target": None, "reached": None,
            "optimizer_time_s": 0.1, "continuous": True, "kind": "mixed", "grid": None}


def test_an_unknown_optimum_is_the_best_value_found_and_suites_are_summarised():
    a, b = SUITES["sklearn-tune"].test[:2]
    recs = [_rec(a, "mondrian", 0, [0.5, 0.2, 0.1]), _rec(a, "mondrian", 1, [0.4, 0.3, 0.3]),
            _rec(a, "random", 0, [0.6, 0.5, 0.4]), _rec(a, "random", 1, [0.5, 0.5, 0.5]),
            _rec(a, "rf-smac", 0, [0.3, 0.3, 0.3]), _rec(a, "rf-smac", 1, [0.3, 0.3, 0.3]),
            _rec(b, "mondrian", 0, [2.0, 1.0, 1.0]), _rec(b, "random", 0, [3.0, 3.0, 3.0])]
    for r in recs:
        report.check_record(r)  # a null optimum and target are allowed
    methods, estimated = report._with_reference(report._groups(recs)[(a, 3)])
    assert estimated and all(r["optimum"] == 0.1 for rs in methods.values() for r in rs)
    assert [r["evals_to_target"] for r in methods["mondrian"]] == [3, None]
    assert report.summarize(methods["mondrian"])["reached"] == 1
    md = report.to_markdown(recs)
    assert f"## {a}, 3 evaluations" in md and "Optimum unknown; f* = 0.1, the best" in md
    assert "| mondrian | 2 | 0.2 ± 0.141 | 1/2 | — | 0.1 |" in md
    # mean bests on a: mondrian 0.2, rf-smac 0.3, random 0.45; on b: mondrian 1, random 3
    rows = report.suite_summary({k: v for k, v in report._groups(recs).items()})
    assert rows["mondrian"]["mean_rank"] == 1.0 and rows["random"]["mean_rank"] == 2.5
    assert rows["rf-smac"]["problems"] == 1 and rows["rf-smac"]["mean_rank"] == 2.0
    assert rows["rf-smac"]["mean_regret"] == pytest.approx(0.1 / 0.25)
    assert rows["random"]["mean_regret"] == 1.0 and rows["mondrian"]["worst_regret"] == 0.0
    assert "## Summary: sklearn-tune (test split), 2 problems" in md
    assert "| mondrian | 2 | 1.00 | 0 | 0 |" in md and "| rf-smac | 1 | 2.00 | 0.4 | 0.4 |" in md
    # beside quality, the median optimizer time per evaluation over the split's runs
    assert rows["mondrian"]["ms_per_eval"] == pytest.approx(100 / 3)
    assert "optimizer ms/eval" in md and "seed 1: 0.4 | 33.3 |" in md
    slow = [dict(r, optimizer_time_s=0.9) if r["method"] == "random" and r["problem"] == b
            else r for r in recs]
    assert report.suite_summary(report._groups(slow))["random"]["ms_per_eval"] == \
        pytest.approx(100 / 3)  # median of 33.3, 33.3 and 300 ms
    with pytest.raises(TypeError, match="optimum"):
        report.check_record(dict(recs[0], optimum="x"))


# -- peers' view of a mixed space ------------------------------------------------------------------
def test_peers_see_integers_and_categoricals():
    kind, dims = peers.peer_space(get_problem("sklearn-lasso-diabetes-mse"))
    assert kind == "mixed"
    assert dims["alpha"] == ("real", 1e-2, 1e2, True)
    assert dims["max_iter"] == ("int", 10, 5000, True)
    assert dims["fit_intercept"] == ("cat", [False, True])
    assert peers._level(dims["fit_intercept"], "True") is True
    assert peers.peer_space(get_problem("branin"))[0] == "box"
