"""The commands ``mfbo bench`` and ``mfbo report`` end to end, and their clear errors."""

import json

from benchmarks.harness import bench, report
from benchmarks.problems import data
from tests.support import run_mfbo

REQUIRED = {"problem", "method", "seed", "budget", "best", "trace", "optimizer_time_s",
            "values", "grid", "wall_s", "versions", "continuous", "target", "reached",
            "evals_to_target"}


def _have(name):
    try:
        data.fetch_file(name, download=False)
        return True
    except FileNotFoundError:
        return False


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
