"""The benchmark harness: grid problems, methods, resumable runs, report, ``mfbo bench``."""

import dataclasses
import json
import multiprocessing
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import mfbo
from benchmarks import bench, data, methods, report
from benchmarks.results_file import ResultsFileError
from tests.support import run_mfbo
from benchmarks.problems import PROBLEMS, get_problem

REQUIRED = {"problem", "method", "seed", "budget", "best", "trace", "optimizer_time_s",
            "values", "grid", "wall_s", "versions", "continuous", "target", "reached",
            "evals_to_target"}


def _table(name):
    try:
        return data.fetch_file(name, download=False)
    except FileNotFoundError:
        pytest.skip(f"{name} not found: set MFBO_DATA_DIR to a directory holding it "
                    "(CI uses ../shared/data)")


def _have(name):
    try:
        data.fetch_file(name, download=False)
        return True
    except FileNotFoundError:
        return False


# -- problems ---------------------------------------------------------------------------------
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


def test_unknown_names_are_clear_errors(tmp_path):
    out = tmp_path / "r.jsonl"
    with pytest.raises(ValueError, match="unknown problem 'nope'.*branin-grid"):
        bench.run("nope", "random", budget=3, seeds=1, out=out)
    with pytest.raises(ValueError, match="unknown method 'nope'.*mondrian"):
        bench.run("branin", "random,nope", budget=3, seeds=1, out=out)
    assert not out.exists()
    missing = methods.Method("fake", "", None, ("surely-not-installed-xyz",))
    with pytest.raises(methods.PeerUnavailable, match=r"mfbo\[peers\]"):
        missing.check_available()


# -- runs, resume, report -----------------------------------------------------------------------
def test_run_records_and_resume_skips_finished_runs(tmp_path, monkeypatch):
    out = tmp_path / "r.jsonl"
    calls = []
    real = methods.run_method

    def counting(method, problem, budget, seed):
        calls.append((problem.name, method.name, seed))
        return real(method, problem, budget, seed)

    monkeypatch.setattr(methods, "run_method", counting)
    recs = bench.run("branin", "random", budget=5, seeds=2, out=out, progress=False)
    assert len(calls) == 2 and len(out.read_text().splitlines()) == 2
    for r in recs:
        assert REQUIRED <= set(r)
        assert r["n_evals"] == len(r["values"]) == len(r["trace"]) == 5
        assert r["trace"] == list(np.minimum.accumulate(r["values"]))
        assert r["best"] == min(r["values"]) and r["optimizer_time_s"] >= 0
    # the same call again: nothing runs, the records come from the file
    again = bench.run("branin", "random", budget=5, seeds=2, out=out, progress=False)
    assert len(calls) == 2 and again == recs
    # a line cut off by a kill is ignored; a new run starts on a fresh line
    with open(out, "a") as f:
        f.write('{"problem": "branin", "meth')
    with pytest.warns(UserWarning, match="not a complete result line"):
        more = bench.run("branin", "random", budget=5, seeds=3, out=out, progress=False)
    assert len(calls) == 3 and [r["seed"] for r in more] == [0, 1, 2]
    lines = out.read_text().splitlines()
    assert len(lines) == 4 and json.loads(lines[-1])["seed"] == 2
    # another budget is another run
    with pytest.warns(UserWarning, match="not a complete result line"):
        bench.run("branin", "random", budget=4, seeds=1, out=out, progress=False)
    assert len(calls) == 4


def _keys(path):
    return [bench.record_key(json.loads(line)) for line in Path(path).read_text().splitlines()]


def _bench_worker(out, calls, barrier, seeds, result):
    """One of several processes running the same benchmark into one file.

    Every evaluation of a job is logged to ``calls``; the first job of each process waits at
    ``barrier`` until the other processes are inside a job too, so they surely overlap."""
    real = methods.run_method
    first = []

    def logged(method, problem, budget, seed):
        with open(calls, "a") as f:
            f.write(json.dumps([problem.name, method.name, seed, budget]) + "\n")
        if not first:
            first.append(True)
            barrier.wait(timeout=120)
        return real(method, problem, budget, seed)

    methods.run_method = logged
    recs = bench.run("branin", "random", budget=3, seeds=seeds, out=out, progress=False)
    Path(result).write_text(json.dumps([bench.record_key(r) for r in recs]))


def test_concurrent_runs_on_one_file_do_every_job_once(tmp_path):
    ctx = multiprocessing.get_context("spawn")
    out, calls, seeds = tmp_path / "r.jsonl", tmp_path / "calls.jsonl", 6
    barrier = ctx.Barrier(2)
    procs = [ctx.Process(target=_bench_worker,
                         args=(out, calls, barrier, seeds, tmp_path / f"result{i}.json"))
             for i in range(2)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=300)
    assert [p.exitcode for p in procs] == [0, 0]
    expected = [("branin", "random", s, 3) for s in range(seeds)]
    ran = [tuple(json.loads(line)) for line in calls.read_text().splitlines()]
    assert sorted(ran) == expected  # every job run once, by one process or the other
    assert sorted(_keys(out)) == expected  # and written once
    for i in range(2):  # each call returns every record, its own and the other's
        got = json.loads((tmp_path / f"result{i}.json").read_text())
        assert [tuple(k) for k in got] == expected


def _crashing_worker(out, seeds):
    """A benchmark process killed in the middle of the job of seed 1."""
    real = methods.run_method

    def crash(method, problem, budget, seed):
        if seed == 1:
            os._exit(3)
        return real(method, problem, budget, seed)

    methods.run_method = crash
    bench.run("branin", "random", budget=3, seeds=seeds, out=out, progress=False)


def test_the_job_of_a_killed_run_is_taken_over(tmp_path):
    out = tmp_path / "r.jsonl"
    proc = multiprocessing.get_context("spawn").Process(target=_crashing_worker,
                                                         args=(out, 3))
    proc.start()
    proc.join(timeout=300)
    assert proc.exitcode == 3 and _keys(out) == [("branin", "random", 0, 3)]
    # its claim on seed 1 died with it: a new run does seeds 1 and 2, nothing twice
    recs = bench.run("branin", "random", budget=3, seeds=3, out=out, progress=False)
    assert [r["seed"] for r in recs] == [0, 1, 2]
    assert sorted(_keys(out)) == [("branin", "random", s, 3) for s in range(3)]


def test_a_line_left_open_by_another_writer_does_not_swallow_the_next_record(tmp_path,
                                                                             monkeypatch):
    out = tmp_path / "r.jsonl"
    real = methods.run_method

    def interleaved(method, problem, budget, seed):
        if seed == 1:  # another writer dies halfway through its line while this job runs
            with open(out, "a") as f:
                f.write('{"problem": "branin", "meth')
        return real(method, problem, budget, seed)

    monkeypatch.setattr(methods, "run_method", interleaved)
    with pytest.warns(UserWarning, match=r"r\.jsonl:2: not a complete result line"):
        recs = bench.run("branin", "random", budget=3, seeds=3, out=out, progress=False)
    assert [r["seed"] for r in recs] == [0, 1, 2]
    lines = out.read_text().splitlines()
    assert len(lines) == 4 and lines[1] == '{"problem": "branin", "meth'
    with pytest.warns(UserWarning, match=r"r\.jsonl:2: not a complete result line"):
        assert [r["seed"] for r in bench.read_records(out)] == [0, 1, 2]


def _unwritable(tmp_path, how):
    if how == "directory":
        (tmp_path / "r.jsonl").mkdir()
        return tmp_path / "r.jsonl"
    if how == "under a file":
        (tmp_path / "file").write_text("")
        return tmp_path / "file" / "r.jsonl"
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        pytest.skip("root may write into a read-only directory")
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o555)
    return ro / "r.jsonl"


@pytest.mark.parametrize("how", ["directory", "under a file", "read-only directory"])
def test_unwritable_out_fails_before_anything_runs(tmp_path, monkeypatch, capsys, how):
    out = _unwritable(tmp_path, how)
    calls = []
    monkeypatch.setattr(methods, "run_method", lambda *a: calls.append(a))
    with pytest.raises(ResultsFileError, match="cannot write the results file"):
        bench.run("branin", "random", budget=3, seeds=2, out=out, progress=False)
    assert bench.main(["--method", "random", "--budget", "3", "--seeds", "2", "--out",
                       str(out), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert f"--out {str(out)!r} is not writable" in err and "Traceback" not in err
    assert calls == []


def _record(method, seed, best, hit, problem="toy", budget=3, optimum=0.0):
    trace = [best + 1.0] * (budget - 1) + [best]
    return {"problem": problem, "method": method, "seed": seed, "budget": budget,
            "best": best, "optimum": optimum, "target": optimum, "trace": trace,
            "values": trace, "evals_to_target": hit, "optimizer_time_s": 0.5,
            "continuous": False, "kind": "table", "grid": None}


def test_report_statistics(tmp_path):
    recs = [_record("a", s, b, h) for s, (b, h) in enumerate([(0.0, 3), (0.0, 1), (2.0, None)])]
    recs += [_record("b", s, b, h) for s, (b, h) in enumerate([(0.0, 2), (1.0, None)])]
    s = report.summarize(recs[:3])
    assert s["n"] == 3 and s["reached"] == 2 and s["median_evals"] == 3
    assert s["best_mean"] == pytest.approx(2 / 3) and s["best_sd"] == pytest.approx(
        np.std([0, 0, 2], ddof=1))
    assert report.summarize(recs[3:])["median_evals"] == np.inf  # half never reach it
    text = report.to_markdown(recs)
    assert "| a | 3 | 0.666667 ± 1.15 | 2/3 | 3 | 0.5 |" in text
    assert "| b | 2 | 0.5 ± 0.707 | 1/2 | — | 0.5 |" in text
    # optimizer time per evaluation: 0.5 s over the trace's 3 evaluations, or over n_evals
    assert s["ms_per_eval"] == pytest.approx(500 / 3) and "| 0.5 | 167 |" in text
    assert report.ms_per_eval(dict(recs[0], n_evals=2)) == pytest.approx(250)
    assert report.ms_per_eval(dict(recs[0], n_evals=0, trace=[])) is None
    timed = [dict(r, optimizer_time_s=t) for r, t in zip(recs[:3], (0.3, 0.03, 3.0))]
    assert report.summarize(timed)["ms_per_eval"] == pytest.approx(100)  # the median run
    with pytest.raises(TypeError, match="n_evals"):
        report.check_record(dict(recs[0], n_evals="3"))
    # a run found in two files counts once, the later one
    f1, f2 = tmp_path / "1.jsonl", tmp_path / "2.jsonl"
    f1.write_text("".join(json.dumps(r) + "\n" for r in recs))
    f2.write_text(json.dumps(_record("b", 1, 0.0, 3)) + "\n")
    assert report.summarize([r for r in report.load_records([f1, f2])
                             if r["method"] == "b"])["reached"] == 2
    with pytest.raises(FileNotFoundError):
        report.load_records(tmp_path / "none.jsonl")


def test_report_skips_a_malformed_record_naming_file_and_line(tmp_path, capsys):
    bad = json.dumps({"problem": "toy", "method": "a", "seed": 5, "budget": 3})
    path = tmp_path / "r.jsonl"
    path.write_text(json.dumps(_record("a", 0, 1.0, None)) + "\n" + bad + "\n")
    with pytest.warns(UserWarning, match=r"r\.jsonl:2: .*no field 'best'"):
        recs = report.load_records(path)
    assert [r["seed"] for r in recs] == [0]
    # a file of nothing but that line: a clear error, not a KeyError
    path.write_text(bad + "\n")
    with pytest.warns(UserWarning, match=r"r\.jsonl:1"):
        assert report.main([str(path), "--out", str(tmp_path / "rep"), "--no-plots"]) == 2
    assert "no complete run" in capsys.readouterr().err
    wrong = dict(_record("a", 0, 1.0, None), trace="oops")
    path.write_text(json.dumps(wrong) + "\n")
    with pytest.warns(UserWarning, match=r"r\.jsonl:1: .*trace is not a list"):
        assert report.load_records(path) == []


def _cli(*args, cwd):
    return run_mfbo(*args, cwd=cwd, timeout=300)


def test_mfbo_bench_and_report_commands(tmp_path):
    problems = "branin,lda-grid" if _have("lda_on_grid.csv") else "branin"
    n_problems = len(problems.split(","))
    res = _cli("bench", "--problem", problems, "--method", "mondrian,random", "--budget", "6",
               "--seeds", "2", "--out", "r.jsonl", "--no-progress", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    lines = (tmp_path / "r.jsonl").read_text().splitlines()
    assert len(lines) == n_problems * 2 * 2
    for line in lines:
        r = json.loads(line)
        assert REQUIRED <= set(r) and r["budget"] == 6 and len(r["trace"]) == 6
        assert r["method"] in ("mondrian", "random") and r["seed"] in (0, 1)
    # resumed: nothing more to run, the file is unchanged
    before = (tmp_path / "r.jsonl").read_bytes()
    res = _cli("bench", "--problem", problems, "--method", "mondrian,random", "--budget", "6",
               "--seeds", "2", "--out", "r.jsonl", "--no-progress", cwd=tmp_path)
    assert res.returncode == 0 and (tmp_path / "r.jsonl").read_bytes() == before

    assert report.main([str(tmp_path / "r.jsonl"),
                        "--out", str(tmp_path / "rep")]) == 0
    md = (tmp_path / "rep" / "report.md").read_text()
    assert "## branin, 6 evaluations" in md and "| mondrian | 2 |" in md
    assert (tmp_path / "rep" / "branin.png").stat().st_size > 5_000


def test_cli_errors_are_clear(tmp_path):
    res = _cli("bench", "--problem", "nope", "--method", "random", "--out", "r.jsonl",
               cwd=tmp_path)
    assert res.returncode == 2 and "unknown problem 'nope'" in res.stderr
    assert "Traceback" not in res.stderr and not (tmp_path / "r.jsonl").exists()
    assert bench.main(["--method", "nope", "--out", str(tmp_path / "r.jsonl")]) == 2
    assert report.main([str(tmp_path / "missing.jsonl"), "--out", str(tmp_path)]) == 2


# -- peers (only when installed) ---------------------------------------------------------------
PEERS = {"smac": "smac", "optuna": "optuna", "optuna-mv": "optuna", "optuna-indep": "optuna", "skopt-forest": "skopt",
         "skopt-gp": "skopt"}


@pytest.mark.parametrize("name", sorted(PEERS))
def test_peer_on_a_random_grid_searches_the_box_and_on_a_table_the_cells(name):
    pytest.importorskip(PEERS[name])
    r = methods.run_method(name, get_problem("branin-grid"), 5, 0)
    assert len(r.values) == 5 and None not in r.values
    assert r.continuous and r.grid is None and r.optimizer_time_s >= 0
    if _have("lda_on_grid.csv"):
        lda = get_problem("lda-grid")
        r = methods.run_method(name, lda, 5, 1)
        # every proposal was a table cell (an off-grid point would have failed the look-up)
        assert len(r.values) == 5 and None not in r.values and not r.continuous
        assert set(r.values) <= set(lda.values.tolist())


@pytest.mark.parametrize("name", sorted(PEERS))
def test_peer_on_a_mixed_problem_proposes_integers_and_levels(name):
    pytest.importorskip(PEERS[name])
    problem = get_problem("mixed-ackley-7d")  # reals, integers and a categorical of 4 levels

    class Recording:  # the problem, keeping what the peer proposed
        seen = []

        def __getattr__(self, name):
            return getattr(problem, name)

        def __call__(self, **params):
            self.seen.append(params)
            return problem(**params)  # rejects a non-integral integer or an unknown level

    r = methods.run_method(name, Recording(), 5, 0)
    assert len(r.values) == 5 and None not in r.values and r.continuous
    assert len(Recording.seen) == 5
    assert all(isinstance(p["z1"], int) and p["c1"] in problem.space["c1"].choices
               for p in Recording.seen)


def test_smac_ends_a_run_when_a_small_space_is_exhausted():
    pytest.importorskip("smac")
    problem = get_problem("sklearn-kNN-iris-acc")  # 25 x 4 = 100 configurations
    r = methods.run_method("smac", problem, 120, 0)
    assert 0 < len(r.values) <= 100 and None not in r.values


def test_optuna_mv_asks_for_the_multivariate_tpe(monkeypatch):
    optuna = pytest.importorskip("optuna")
    made = []
    real = optuna.samplers.TPESampler

    def sampler(**kwargs):
        made.append(kwargs)
        return real(**kwargs)

    monkeypatch.setattr(optuna.samplers, "TPESampler", sampler)
    methods.run_method("optuna-mv", get_problem("branin"), 3, 4)
    methods.run_method("optuna", get_problem("branin"), 3, 4)
    assert made == [{"seed": 4, "multivariate": True, "group": False}, {"seed": 4}]


def test_bart_method_runs_the_bart_surrogate(tmp_path):
    assert methods.optimizer_settings("bart")["surrogate"] == "bart"
    (rec,) = bench.run("branin", "bart", budget=12, seeds=1, out=tmp_path / "b.jsonl",
                       progress=False)
    assert rec["method"] == "bart" and rec["n_evals"] == 12
    assert all(np.isfinite(rec["values"])) and rec["best"] == min(rec["values"])


@pytest.mark.parametrize("method, posterior", [("mondrian-bp", "bp"),
                                               ("mondrian-empirical", "empirical"),
                                               ("mondrian", "alternating")])
def test_mondrian_methods_run_their_posterior(tmp_path, monkeypatch, method, posterior):
    import mfbo.proposal.models

    made = []
    real = mfbo.proposal.models.MondrianModel.__init__

    def init(self, *args, **kwargs):
        made.append(kwargs.get("posterior"))
        real(self, *args, **kwargs)

    monkeypatch.setattr(mfbo.proposal.models.MondrianModel, "__init__", init)
    (rec,) = bench.run("branin", method, budget=14, seeds=1, out=tmp_path / "b.jsonl",
                       progress=False)
    assert made == [posterior] and rec["n_evals"] == 14 and rec["best"] == min(rec["values"])


def test_the_kappa_cycle_method_is_the_default_recipe_with_kappa_2_then_1(tmp_path):
    from mfbo.proposal.recipes import get_recipe

    settings = methods.optimizer_settings("mondrian-kappa21")
    assert settings["surrogate"] == dataclasses.replace(get_recipe("mondrian"), kappa=(2.0, 1.0))
    assert settings["acquisition"] is None and "kappa" not in settings  # the recipe's cycle
    (rec,) = bench.run("branin", "mondrian-kappa21", budget=14, seeds=1,
                       out=tmp_path / "k.jsonl", progress=False)
    assert rec["n_evals"] == 14 and rec["best"] == min(rec["values"])


def test_the_plateau_kappa_method_is_the_default_recipe_with_plateau_kappa_2(tmp_path):
    from mfbo.proposal.recipes import get_recipe

    settings = methods.optimizer_settings("mondrian-plateaukappa2")
    assert settings["surrogate"] == dataclasses.replace(get_recipe("mondrian"),
                                                        plateau_kappa=2.0)
    # Branin's loss never repeats: the run is the default's, evaluation for evaluation
    runs = [bench.run("branin", m, budget=14, seeds=1, out=tmp_path / f"{m}.jsonl",
                      progress=False)[0] for m in ("mondrian", "mondrian-plateaukappa2")]
    assert runs[0]["values"] == runs[1]["values"]


def test_the_repeat_raw_method_switches_the_default_forest_to_raw_losses(tmp_path):
    settings = methods.optimizer_settings("mondrian-repeatraw")
    assert settings["surrogate"] == "mondrian"
    assert settings["surrogate_options"] == {"repeat_y_transform": "raw"}
    # Branin's loss never repeats: the run is the default's, evaluation for evaluation
    runs = [bench.run("branin", m, budget=14, seeds=1, out=tmp_path / f"{m}.jsonl",
                      progress=False)[0] for m in ("mondrian", "mondrian-repeatraw")]
    assert runs[0]["values"] == runs[1]["values"]


def test_the_noparzen_method_is_the_default_recipe_without_parzen_steps(tmp_path):
    from mfbo.proposal.recipes import get_recipe

    settings = methods.optimizer_settings("mondrian-noparzen")
    assert settings["surrogate"] == dataclasses.replace(get_recipe("mondrian"), parzen_every=0,
                                                        parzen_when_converged=False)
    # the same initial design and first model-based proposal as the default, then its own
    runs = [bench.run("branin", m, budget=14, seeds=1, out=tmp_path / f"{m}.jsonl",
                      progress=False)[0] for m in ("mondrian", "mondrian-noparzen")]
    n0 = min(5 * 2, 14 // 4)  # minimize's initial design at 14 calls (D = 2)
    assert runs[0]["values"][:n0 + 1] == runs[1]["values"][:n0 + 1]
    assert runs[0]["values"][n0 + 1] != runs[1]["values"][n0 + 1]


def test_the_noconvparzen_method_is_the_default_without_parzen_steps_when_converged(
        tmp_path):
    from mfbo.proposal.recipes import get_recipe

    assert get_recipe("mondrian").parzen_when_converged
    settings = methods.optimizer_settings("mondrian-noconvparzen")
    assert settings["surrogate"] == dataclasses.replace(get_recipe("mondrian"),
                                                        parzen_when_converged=False)
    # on Branin at 14 evaluations no local step has converged: the default's run
    runs = [bench.run("branin", m, budget=14, seeds=1, out=tmp_path / f"{m}.jsonl",
                      progress=False)[0] for m in ("mondrian", "mondrian-noconvparzen")]
    assert runs[0]["values"] == runs[1]["values"]
