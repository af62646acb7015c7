"""The results file shared by concurrent runs: every job once, a killed run's job taken over,
a line left open by another writer."""

import json
import multiprocessing
import os
from pathlib import Path

import pytest

from benchmarks.harness import bench, methods


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


def _crashing_worker(out, seeds):
    """A benchmark process killed in the middle of the job of seed 1."""
    real = methods.run_method

    def crash(method, problem, budget, seed):
        if seed == 1:
            os._exit(3)
        return real(method, problem, budget, seed)

    methods.run_method = crash
    bench.run("branin", "random", budget=3, seeds=seeds, out=out, progress=False)


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
