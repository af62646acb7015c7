"""The ``bbob`` suite: names and their parsing, the dev/test split by instance, families, the
lazy ``cocoex`` import and its error, ``f - f_opt`` against COCO's own optimum, pickling, the
``kD+c`` budget rule, and a smoke ``mfbo bench`` + ``mfbo report`` run with the paired tests."""

import ast
import json
import pickle
import sys
from pathlib import Path

import numpy as np
import pytest

from benchmarks.harness import bench, report
from benchmarks.problems import bbob
from benchmarks.problems.problems import (PROBLEMS, SUITES, BBOBProblem, expand_problems, family_of,
                                 get_problem, split_of)

NO_COCOEX = "COCO's cocoex is not installed: pip install coco-experiment (or mfbo[bbob])"


@pytest.fixture
def cocoex():
    return pytest.importorskip("cocoex", reason=NO_COCOEX)


# -- names, splits, families (no cocoex needed) ---------------------------------------------
def test_suite_lists_24_functions_4_dimensions_10_instances_split_by_instance():
    suite = SUITES["bbob"]
    assert len(suite.dev) == len(suite.test) == 24 * 4 * 5
    for split, instances in (("dev", range(1, 6)), ("test", range(6, 11))):
        names = suite.problems(split)
        parsed = [bbob.parse_name(n) for n in names]
        assert {p[0] for p in parsed} == set(range(1, 25))
        assert {p[1] for p in parsed} == {2, 5, 10, 20}
        assert {p[2] for p in parsed} == set(instances)
        assert all(split_of(n) == ("bbob", split) for n in names[:50])
    assert suite.dev[:2] == ("bbob-f01-d02-i01", "bbob-f01-d02-i02")
    assert expand_problems("bbob:test")[0] == "bbob-f01-d02-i06"
    p = PROBLEMS["bbob-f24-d20-i10"]
    assert isinstance(p, BBOBProblem) and p.kind == "continuous"
    assert p.optimum == 0.0 and p.budget == 20 * 20 + 20 and p.target(0) == 1e-3
    assert p.names == [f"x{j}" for j in range(1, 21)]
    assert np.array_equal(p.bounds(), np.tile([-5.0, 5.0], (20, 1)))


def test_names_parse_and_any_bbob_problem_can_be_named():
    assert bbob.parse_name("bbob-f03-d05-i07") == (3, 5, 7)
    assert bbob.problem_name(3, 5, 7) == "bbob-f03-d05-i07"
    assert bbob.parse_name("branin") is None and bbob.parse_name("bbob") is None
    for name, f, d, i in [("bbob-f03-d05-i07", 3, 5, 7), ("bbob-f24-d40-i15", 24, 40, 15),
                          ("bbob-f01-d03-i11", 1, 3, 11), ("bbob-f12-d02-i101", 12, 2, 101)]:
        p = get_problem(name)
        assert p.name == name and isinstance(p, BBOBProblem)
        assert (p.f.function, p.f.dimension, p.f.instance) == (f, d, i)
        assert p.budget == 20 * d + 20 and len(p.space) == d
    assert split_of("bbob-f03-d05-i07") == ("bbob", "test")
    assert split_of("bbob-f03-d03-i02") is None and split_of("bbob-f03-d05-i11") is None
    assert expand_problems("bbob-f24-d40-i15,branin") == ["bbob-f24-d40-i15", "branin"]
    for bad, match in [("bbob-f25-d02-i01", "function must be 1..24"),
                       ("bbob-f00-d02-i01", "function must be 1..24"),
                       ("bbob-f01-d04-i01", "dimension must be one of"),
                       ("bbob-f01-d02-i00", "instance must be 1..999"),
                       ("bbob-f3-d5-i7", "write 'bbob-f03-d05-i07'"),
                       ("bbob-f03-d05", "not of the form")]:
        with pytest.raises(ValueError, match=match):
            get_problem(bad)
    with pytest.raises(ValueError, match="dimension"):
        bbob.BBOBFunction(1, 4, 1)


def test_family_of_drops_the_data_set_or_instance():
    assert family_of("bbob-f03-d05-i07") == "bbob-f03-d05" == family_of("bbob-f03-d05-i01")
    assert family_of("bbob-f03-d03-i07") == "bbob-f03-d03"  # not in the suite
    assert family_of("sklearn-DT-breast_cancer-acc") == "sklearn-DT-acc"
    assert family_of("sklearn-MLP-sgd-california-mae") == "sklearn-MLP-sgd-mae"
    assert family_of("mixed-ackley-7d") == family_of("mixed-ackley-12d") == "mixed-ackley"
    assert family_of("pressure-vessel") == family_of("speed-reducer") == "engineering-design"
    assert family_of("mixed-pipeline-digits") == "mixed-pipeline"
    assert family_of("branin") == "branin"
    for suite in SUITES.values():  # every family has problems on both sides of the split
        dev = {family_of(n) for n in suite.dev}
        assert dev == {family_of(n) for n in suite.test}


def test_the_module_imports_cocoex_only_when_evaluating():
    tree = ast.parse(Path(bbob.__file__).read_text(encoding="utf-8"))
    top = [n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))]
    names = {a.name for n in top for a in n.names} | {n.module for n in top
                                                      if isinstance(n, ast.ImportFrom)}
    assert "cocoex" not in names


@pytest.fixture
def without_cocoex(monkeypatch):
    monkeypatch.setitem(sys.modules, "cocoex", None)  # import cocoex now raises ImportError
    bbob._coco_problem.cache_clear()
    yield
    bbob._coco_problem.cache_clear()


def test_a_missing_cocoex_is_a_clear_error(without_cocoex, tmp_path, capsys):
    p = get_problem("bbob-f01-d02-i01")  # naming and listing need no cocoex
    with pytest.raises(bbob.CocoexUnavailable, match="pip install coco-experiment"):
        p.load()
    with pytest.raises(ImportError, match=r"mfbo\[bbob\]"):
        p(x1=0.0, x2=0.0)
    out = tmp_path / "r.jsonl"
    assert bench.main(["--problem", "bbob-f01-d02-i01", "--method", "random", "--seeds", "1",
                       "--out", str(out), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "pip install coco-experiment" in err and "Traceback" not in err
    assert not out.exists() or out.read_text() == ""


# -- values (cocoex) ----------------------------------------------------------------------------
def test_f_opt_is_cocos_value_at_cocos_own_optimum(cocoex, tmp_path, monkeypatch):
    # cocoex writes its optimum's location to a file in the working directory
    monkeypatch.chdir(tmp_path)
    assert bbob.optimal_value(1, 1) == 79.48  # f1's first instance, BBOB 2009's table
    for function in range(1, 25):
        for dimension, instance in ((2, 1), (5, 7), (10, 15), (3, 103)):
            suite = cocoex.Suite("bbob", f"instances: {instance}",
                                 f"dimensions: {dimension} function_indices: {function}")
            problem = suite[0]
            problem._best_parameter("print")
            x = np.atleast_1d(np.loadtxt(tmp_path / "._bbob_problem_best_parameter.txt"))
            f = bbob.BBOBFunction(function, dimension, instance)
            assert abs(f(x)[0]) < 1e-9, (function, dimension, instance)
            assert problem(x) == pytest.approx(f.optimum, abs=1e-9)


def test_values_are_nonnegative_and_match_cocoex(cocoex):
    rng = np.random.default_rng(0)
    for function in range(1, 25):
        for dimension in (2, 10):
            p = get_problem(bbob.problem_name(function, dimension, 1 + function % 10))
            X = rng.uniform(-5.0, 5.0, size=(50, dimension))
            values = p.f(X)
            assert values.shape == (50,) and np.all(values >= 0.0)
            raw = cocoex.Suite("bbob", f"instances: {p.f.instance}",
                               f"dimensions: {dimension} function_indices: {function}")[0]
            assert values[0] == raw(X[0]) - p.f.optimum
            params = dict(zip(p.names, X[1]))
            assert p(**params) == values[1]
    with pytest.raises(ValueError, match="X must have 2 columns"):
        get_problem("bbob-f01-d02-i01").f(np.zeros((3, 5)))
    with pytest.raises(ValueError, match="NaN"):
        get_problem("bbob-f01-d02-i01").f([[np.nan, 0.0]])


def test_the_sphere_optimum_found_from_values_is_zero_and_cocos_final_target(cocoex):
    # f1 = |x - x_opt|^2 + f_opt: central differences at 0 give x_opt exactly
    p = get_problem("bbob-f01-d05-i03")
    E = np.eye(5)
    x_opt = (p.f(-E) - p.f(E)) / 4.0
    assert p.f(x_opt)[0] == pytest.approx(0.0, abs=1e-9)
    assert p.f(x_opt + 0.1 * E[0])[0] == pytest.approx(0.01, abs=1e-9)
    _, raw = bbob._coco_problem(1, 5, 3)
    assert raw.final_target_hit  # COCO: f_opt + 1e-8 was reached


def test_a_problem_pickles_and_evaluates_the_same_elsewhere(cocoex):
    p = get_problem("bbob-f15-d05-i08")
    X = np.random.default_rng(1).uniform(-5, 5, (4, 5))
    before = p.f(X)  # COCO's problem is cached now: it must not travel with the pickle
    q = pickle.loads(pickle.dumps(p))
    assert q == p and q.f == bbob.BBOBFunction(15, 5, 8)
    assert np.array_equal(q.f(X), before)
    assert len(pickle.dumps(p.f)) < 300


# -- budgets and the command line ------------------------------------------------------------------
def test_the_budget_rule_scales_with_the_dimension():
    p5, p20 = get_problem("bbob-f01-d05-i01"), get_problem("bbob-f01-d20-i01")
    assert bench.budget_of(p5) == 120 and bench.budget_of(p20) == 420
    assert bench.budget_of(p5, "100D") == 500 and bench.budget_of(p20, bbob.LARGE_BUDGET) == 2000
    assert bench.budget_of(p5, "20D+20") == 120 == bench.budget_of(p5, "20 * d + 20")
    assert bench.budget_of(p5, "7") == 7 == bench.budget_of(p5, 7)
    assert bench.budget_of(get_problem("branin"), "10D") == 20
    for bad in ("D", "0D", "x", "-3", 0, 2.5, True):
        with pytest.raises(ValueError, match="budget must be"):
            bench.budget_of(p5, bad)


def test_mfbo_bench_runs_bbob_and_the_report_tests_pairs(cocoex, tmp_path):
    out = tmp_path / "r.jsonl"
    problems = "bbob-f01-d02-i01,bbob-f01-d02-i02"
    assert bench.main(["--problem", problems, "--method", "mondrian,random", "--seeds", "2",
                       "--budget", "3D", "--out", str(out), "--no-progress"]) == 0
    recs = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(recs) == 8
    for r in recs:
        assert r["budget"] == 6 and r["n_evals"] == 6 and r["n_failed"] == 0
        assert r["optimum"] == 0.0 and r["best"] >= 0.0 and r["kind"] == "continuous"
    assert report.main([str(out), "--out", str(tmp_path / "rep"), "--no-plots"]) == 0
    md = (tmp_path / "rep" / "report.md").read_text()
    assert "## Summary: bbob (dev split), 2 problems" in md
    assert "### Paired tests: bbob (dev split), mondrian against each method" in md
    assert "| method | pairs | mondrian wins | ties | mondrian losses | p (Wilcoxon) | " \
           "significant at 0.05 |" in md
    assert "| random | 4 |" in md and "| bbob-f01-d02 |" in md
    assert "significantly worse than random search (dev split)" in md
    assert "## bbob-f01-d02-i01, 6 evaluations (bbob dev split)" in md
