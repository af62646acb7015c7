"""One study shared by independent worker processes through PostgreSQL (and SQLite).

Starts a throwaway local PostgreSQL server (:mod:`benchmarks.harness.postgres_server`, with
PostgreSQL's durable defaults: ``fsync`` and synchronous commits on) and measures:

* ``workers``: 4 worker processes x 50 trials on one study; the same with one worker SIGKILLed
  in the middle of an evaluation (it records another host name, so the others can only learn
  of its death by its heartbeat: its trial must be asked again within the grace period and one
  ask); the same with the server restarted once mid-study.  Each run is checked from the
  journal: distinct finished trials, none lost, none told twice, no configuration asked twice.
* ``overhead``: the median time of one ``tell`` (a storage transaction: lock, read, append,
  commit) on PostgreSQL beside SQLite's, with the random surrogate so that no model time is
  counted.
* ``throughput``: 16 worker processes x 100 trials of a cheap objective: trials per second,
  lock waits, duplicates.

``python -m benchmarks.experiments.shared_study --out results/shared_study`` (``--quick``:
smaller, for a smoke test).  Writes ``report.md`` and ``results.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import tempfile
import time
from pathlib import Path

from benchmarks.harness.postgres_server import PostgresServer, unavailable
from mfbo.storage.sql import SQLAlchemyStorage
from benchmarks.harness.shared_workers import (SPACE, journal_check, kill_in_first_evaluation,
                                       make_storage, start_worker)


def _collect(procs, timeout=3600):
    logs = []
    for p in procs:
        text, _ = p.communicate(timeout=timeout)
        if p.returncode not in (0, -signal.SIGKILL):
            raise RuntimeError(f"a worker exited with {p.returncode}")
        logs.append([json.loads(line) for line in text.splitlines() if line.startswith("{")])
    return logs


def run_workers(url, study, n_workers, per_worker, sleep, surrogate="mondrian", kill=False,
                restart=None, interval=2.0, grace=10.0):
    """``n_workers`` processes until ``n_workers * per_worker`` trials are finished; ``kill``:
    one more worker, of another host, SIGKILLed in its first evaluation; ``restart``: a
    :class:`PostgresServer` restarted once when a third of the trials are told."""
    target = n_workers * per_worker
    start = time.time()
    out = {}
    if kill:  # the victim asks first: the others could otherwise finish before it asks
        victim = start_worker(url, study, target, sleep, 99, surrogate, interval, grace,
                              slow_first=3600, host="another-host")
        out["killed_trial"], killed_at = kill_in_first_evaluation(victim)
    procs = [start_worker(url, study, target, sleep, seed, surrogate, interval, grace)
             for seed in range(n_workers)]
    if restart is not None:
        storage = make_storage(url)
        while sum(1 for _, k, _ in storage.read(study, 0) if k == "tell") < target // 3:
            time.sleep(0.05)
        t0 = time.time()
        restart.restart()
        out["restart_seconds"] = round(time.time() - t0, 2)
        storage.close()
    logs = _collect(procs)
    out["seconds"] = round(time.time() - start, 2)
    out["throughput"] = round(target / out["seconds"], 2)
    out["lock_waits"] = sum(r.get("lock_waits") or 0 for log in logs for r in log
                            if r["event"] == "done")
    if kill:
        again = [r for log in logs for r in log
                 if r["event"] == "ask" and r["trial"] == out["killed_trial"]]
        out["reasked_after_s"] = round(again[0]["time"] - killed_at, 2) if again else None
    storage = make_storage(url)
    out.update(journal_check(storage, study))
    storage.close()
    return out


def tell_overhead(storage, n):
    """Median milliseconds of ``Optimizer.tell`` (random surrogate: storage cost only), and of
    ``ask``."""
    from mfbo import Optimizer
    opt = Optimizer(SPACE, surrogate="random", storage=storage, study_name="overhead",
                    random_state=0)
    tells, asks = [], []
    for _ in range(n):
        t0 = time.perf_counter()
        trial = opt.ask()
        t1 = time.perf_counter()
        opt.tell(trial, 1.0)
        t2 = time.perf_counter()
        asks.append(t1 - t0)
        tells.append(t2 - t1)
    opt.close()
    return {"tell_ms": round(1e3 * statistics.median(tells), 3),
            "ask_ms": round(1e3 * statistics.median(asks), 3), "n": n}


def fsync_ms(directory, n=50):
    """Median milliseconds to write 4 KiB to a file in ``directory`` and ``os.fsync`` it: what
    one durable commit costs on this disk at least."""
    path = os.path.join(directory, "fsync.probe")
    times = []
    with open(path, "wb") as fh:
        for _ in range(n):
            t0 = time.perf_counter()
            fh.write(b"\0" * 4096)
            fh.flush()
            os.fsync(fh.fileno())
            times.append(time.perf_counter() - t0)
    os.remove(path)
    return round(1e3 * statistics.median(times), 3)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", default="results/shared_study")
    p.add_argument("--quick", action="store_true", help="small sizes (a smoke test)")
    p.add_argument("--only", choices=["workers", "overhead", "throughput"], action="append")
    a = p.parse_args(argv)
    reason = unavailable()
    if reason:
        raise SystemExit(f"cannot run: {reason}")
    only = set(a.only or ["workers", "overhead", "throughput"])
    per, big_n, big_per, n_tell = (5, 4, 5, 30) if a.quick else (50, 16, 100, 300)
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    results = {}
    lines = ["# One study shared by worker processes", ""]
    with PostgresServer(durable=True, max_connections=200) as pg:
        if "workers" in only:
            rows = {"4 workers": run_workers(pg.new_database(), "s", 4, per, 0.02),
                    "4 workers, one SIGKILLed": run_workers(pg.new_database(), "s", 4, per,
                                                            0.02, kill=True),
                    "4 workers, server restarted": run_workers(pg.new_database(), "s", 4, per,
                                                               0.02, restart=pg)}
            results["workers"] = rows
            lines += [f"## 4 worker processes x {per} trials, PostgreSQL (heartbeat 2 s, grace "
                      f"10 s)", "",
                      "| run | finished | pending | told twice | asked twice | claims | "
                      "re-asked after (s) | seconds |", "|---|---|---|---|---|---|---|---|"]
            for name, r in rows.items():
                lines.append(f"| {name} | {r['finished']} | {r['pending']} | "
                             f"{len(r['told_twice'])} | {r['asked_twice']} | {r['claims']} | "
                             f"{r.get('reasked_after_s', '')} | {r['seconds']} |")
            lines.append("")
        if "overhead" in only:
            rows = {"SQLite (WAL, synchronous=FULL)": [],
                    "PostgreSQL (local, durable commits)": [],
                    "PostgreSQL, synchronous_commit=off": [], "fsync of 4 KiB": []}
            relaxed = {"connect_args": {"options": "-c synchronous_commit=off"}}
            for _ in range(3):  # alternated: the disk's fsync time drifts
                with tempfile.TemporaryDirectory() as tmp:
                    rows["SQLite (WAL, synchronous=FULL)"].append(
                        tell_overhead(make_storage(str(Path(tmp) / "o.db")), n_tell))
                    rows["fsync of 4 KiB"].append(fsync_ms(tmp))
                rows["PostgreSQL (local, durable commits)"].append(
                    tell_overhead(make_storage(pg.new_database()), n_tell))
                rows["PostgreSQL, synchronous_commit=off"].append(
                    tell_overhead(SQLAlchemyStorage(pg.new_database(),
                                                    engine_options=relaxed), n_tell))
            results["overhead"] = rows
            lines += [f"## Per-tell overhead (median of {n_tell} ask/tell, random surrogate; "
                      f"three alternated runs)", "",
                      "| storage | tell (ms), runs 1 / 2 / 3 | ask (ms), runs 1 / 2 / 3 |",
                      "|---|---|---|"]
            for name, runs in rows.items():
                if name.startswith("fsync"):
                    lines.append(f"| {name} (the disk) | "
                                 f"{' / '.join(str(r) for r in runs)} | |")
                else:
                    lines.append(f"| {name} | {' / '.join(str(r['tell_ms']) for r in runs)} | "
                                 f"{' / '.join(str(r['ask_ms']) for r in runs)} |")
            lines.append("")
        if "throughput" in only:
            rows = {s: run_workers(pg.new_database(), "t", big_n, big_per, 0.0, surrogate=s)
                    for s in ("random", "mondrian")}
            results["throughput"] = rows
            lines += [f"## {big_n} worker processes x {big_per} trials, cheap objective", "",
                      "| surrogate | trials/s | seconds | lock waits | finished | told twice | "
                      "asked twice |", "|---|---|---|---|---|---|---|"]
            for s, r in rows.items():
                lines.append(f"| {s} | {r['throughput']} | {r['seconds']} | {r['lock_waits']} "
                             f"| {r['finished']} | {len(r['told_twice'])} | "
                             f"{r['asked_twice']} |")
            lines.append("")
    report = "\n".join(lines)
    (out / "results.json").write_text(json.dumps(results, indent=2))
    (out / "report.md").write_text(report)
    print(report)
    return results


if __name__ == "__main__":
    main()
