"""The runner: records, resume, unknown names, an unwritable results file, and a smoke
``mfbo bench`` run on the suites that the report reads."""

import json
import os

import numpy as np
import pytest

from benchmarks.harness import bench, methods, report
from benchmarks.harness.results_file import ResultsFileError
from benchmarks.problems import mixed

REQUIRED = {"problem", "method", "seed", "budget", "best", "trace", "optimizer_time_s",
            "values", "grid", "wall_s", "versions", "continuous", "target", "reached",
            "evals_to_target"}


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


def test_the_help_names_the_command_of_a_suite_it_does_not_run():
    import argparse
    import re
    wide = argparse.ArgumentParser(
        formatter_class=lambda prog: argparse.HelpFormatter(prog, width=10_000))
    text = re.sub(r"\s+", " ", bench.add_arguments(wide).format_help())
    assert "multi-fidelity (5 dev + 4 test; run by its own command: python -m " \
           "benchmarks.harness.multi_fidelity)" in text
    assert "conditional (7 dev + 6 test)," in text
