"""Threads and processes sharing one study, checked against its journal.

Hypothesis writes a schedule: rounds of worker processes started together (each with one to
three threads sharing one Optimizer, going through ask(k), tell, a failed tell and enqueue,
and reopening its Optimizer between phases, leaving its untold trials behind or not); in a
round one process may be SIGKILLed in the middle of its evaluations (once its first thread, or
all of them, are evaluating); a later round resumes the study in new processes, and at the end
a new Optimizer in this process drains it with several threads.  Every read of the journal
while the workers run, and the whole journal after every round, is replayed by an independent
model (``tests/mfbo/journal_checks.py``), then held to what the workers reported: nothing they
were handed or told is lost or changed, nothing is told twice, a killed worker's trials go to
others, and what every live handle read, and a fresh replay, are states the journal went
through.

Workers are separate interpreters started with :mod:`subprocess`, so a kill is a real SIGKILL
(a process killed inside a transaction, its heartbeat cut off).  Most use random proposals,
which keeps the schedules cheap; the Mondrian forest's compiled kernels run in threads sharing
one Optimizer under ``NUMBA_BOUNDSCHECK=1`` (an index out of bounds raises ``IndexError``
instead of corrupting memory: threads sharing an Optimizer once wrote past a node array in
``extend_trees_parallel``), with a private numba cache compiled once for the session.

The grace period is drawn too: a short one (1 s) lets the heartbeats decide, so that a live
worker whose heartbeat is late on a loaded machine may lose a trial, which must then be told
once only (its own tell refused as told already); a long one (60 s) leaves only the process
checks of this host, and then only killed or closed owners may lose trials.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
import warnings

import pytest
from hypothesis import HealthCheck, Phase, event, example, given, settings
from hypothesis import strategies as st

from mfbo import Optimizer
from mfbo.study.study import Study, TrialFinished
from tests.mfbo.study.journal_checks import (JournalViolation, check_finished, check_reports,
                                             replay, signature)
from tests.support import ROOT, SPACE, checkout_env, quad

STUDY = "shared"
HEARTBEAT_INTERVAL = 0.2
#: the longest a round may take before its workers are killed and the test fails (it never
#: comes near: this only keeps a hung worker from hanging the test run)
ROUND_TIMEOUT = 900.0
#: small proposals: the point is the journal, not the quality of the search
OPTIONS = dict(n_initial=3, n_random_candidates=64)


def objective(params: dict) -> float:
    return quad(**params)


# One worker process.  It reports every act as one JSON line, written only once the act has
# returned (so a reported ask or tell is one the storage committed), under a lock so that the
# lines of its threads never interleave.  After opening the study it says "ready" and waits
# for "go" on stdin, so that the workers of a round start their operations together.  A
# worker marked "hang" ends its last phase by asking one more trial per thread and never
# telling it: it is killed while "evaluating".
WORKER = r"""
import faulthandler, json, sys, threading, time, traceback

faulthandler.enable()  # a crash (SIGSEGV in compiled code) leaves every thread's stack in the log

spec = json.loads(sys.argv[1])
name = spec["name"]
_out = threading.Lock()


def say(event, **fields):
    line = json.dumps({"worker": name, "event": event, **fields})
    with _out:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()


def objective(p):
    return (p["x"] - 0.3) ** 2 + (p["y"] + 0.2) ** 2


def storage():
    s = spec["storage"]
    if s["kind"] == "sqlite":
        from mfbo.storage import SQLiteStorage
        return SQLiteStorage(s["path"], heartbeat_interval=s["heartbeat_interval"],
                             grace_period=s["grace_period"])
    from mfbo.storage.sql import SQLAlchemyStorage
    return SQLAlchemyStorage(s["url"], heartbeat_interval=s["heartbeat_interval"],
                             grace_period=s["grace_period"])


def main():
    import warnings
    from mfbo import Optimizer
    from mfbo.study import TrialFinished
    warnings.simplefilter("ignore")  # other surrogates, other hosts: said, and expected here
    failed = False
    phases = spec["phases"]
    for number, phase in enumerate(phases):
        store = storage()
        opt = Optimizer({"x": (-1.0, 1.0), "y": (-1.0, 1.0)}, surrogate=spec["surrogate"],
                        storage=store, study_name=spec["study"],
                        random_state=spec["seed"] + number, **spec["options"])
        say("open", owner=opt.owner, phase=number)
        if number == 0:
            say("ready")
            if sys.stdin.readline().strip() != "go":
                return 3
        hang = spec["hang"] and number == len(phases) - 1
        start = threading.Barrier(len(phase["threads"]))
        errors = []

        def tell(t, fail):
            value = None if fail else objective(t.params)
            try:
                if fail:
                    told = opt.tell(t, error="the evaluation failed", worker=name)
                else:
                    told = opt.tell(t, value, worker=name)
            except TrialFinished:  # claimed from this worker and told by the claimer first
                say("lost", id=t.id, owner=opt.owner)
                return
            say("tell", id=t.id, value=value, state=told.state)

        def run(i, ops):
            mine = []
            try:
                start.wait()
                for op in ops:
                    if op[0] == "ask":
                        got = opt.ask() if op[1] is None else opt.ask(op[1])
                        for t in [got] if op[1] is None else got:
                            mine.append(t)
                            say("ask", id=t.id, params=t.params, owner=opt.owner, thread=i)
                    elif op[0] == "tell":
                        if mine:
                            time.sleep(op[2])  # the evaluation: others ask meanwhile
                            tell(mine.pop(0), op[1])
                    else:
                        n = opt.enqueue(op[1])
                        say("enqueue", configs=op[1], n=n)
                if hang:
                    t = opt.ask()
                    say("ask", id=t.id, params=t.params, owner=opt.owner, thread=i)
                    say("evaluating", id=t.id, thread=i)
                    threading.Event().wait()  # until SIGKILL
                if not phase["abandon"]:
                    while mine:
                        tell(mine.pop(0), False)
            except BaseException:
                errors.append(i)
                say("error", thread=i, text=traceback.format_exc())

        threads = [threading.Thread(target=run, args=(i, ops))
                   for i, ops in enumerate(phase["threads"])]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        opt.refresh()
        numba = sys.modules.get("numba")  # imported by the first forest, if any
        say("view", trials=[[t.id, t.state, t.value] for t in opt.trials],
            boundscheck=None if numba is None else numba.config.BOUNDSCHECK)
        opt.close()  # its untold trials (abandon) are now anyone's to ask again
        store.close()
        say("closed", owner=opt.owner, phase=number)
        failed = failed or bool(errors)
    say("done")
    return 1 if failed else 0


try:
    code = main()
except BaseException:
    say("error", thread=None, text=traceback.format_exc())
    code = 2
sys.exit(code)
"""


def make_storage(spec: dict):
    if spec["kind"] == "sqlite":
        from mfbo.storage import SQLiteStorage
        return SQLiteStorage(spec["path"], heartbeat_interval=spec["heartbeat_interval"],
                             grace_period=spec["grace_period"])
    from mfbo.storage.sql import SQLAlchemyStorage
    return SQLAlchemyStorage(spec["url"], heartbeat_interval=spec["heartbeat_interval"],
                             grace_period=spec["grace_period"])


class Worker:
    """A worker process and the records it printed (read by a thread of its own, so that a
    full pipe never stops it)."""

    def __init__(self, spec: dict, env: dict, log_path: str):
        self.name, self.spec, self.log_path = spec["name"], spec, log_path
        self.records: list[dict] = []
        self.garbled: list[str] = []
        self.killed = False
        self._cond = threading.Condition()
        with open(log_path, "w") as log:
            self.proc = subprocess.Popen(
                [sys.executable, "-c", WORKER, json.dumps(spec)], cwd=ROOT,
                env=checkout_env(**env), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=log, text=True)
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            try:
                record = json.loads(line)
            except ValueError:
                # a line cut short by SIGKILL is no report; any other is a defect
                with self._cond:
                    self.garbled.append(line)
                continue
            with self._cond:
                self.records.append(record)
                self._cond.notify_all()

    def count(self, kind: str) -> int:
        with self._cond:
            return sum(1 for r in self.records if r["event"] == kind)

    def wait_ready(self, deadline: float) -> None:
        with self._cond:
            while not any(r["event"] == "ready" for r in self.records):
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    raise AssertionError(f"worker {self.name} did not open the study (exit "
                                         f"code {self.proc.poll()}):\n{self.stderr()}")
                self._cond.wait(0.1)

    def kill(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()  # reaped: its pid is gone, as a dead owner's must be
        self.killed = True

    def finish(self) -> list[dict]:
        self._reader.join(60)
        if not self.killed:
            assert self.proc.returncode == 0 and not self.garbled, (
                f"worker {self.name} ended with exit code {self.proc.returncode} "
                f"(garbled output {self.garbled}):\n{self.records[-3:]}\n{self.stderr()}")
        return self.records

    def stderr(self) -> str:
        with open(self.log_path) as fh:
            return fh.read()[-6000:]


class Scenario:
    """One study driven through a schedule, and checked after every step."""

    def __init__(self, storage: dict, workdir: str, env: dict, live_claims: bool):
        self.storage, self.workdir, self.env = storage, workdir, env
        self.live_claims = live_claims
        self.reports: list[dict] = []
        self.surrogates: dict[str, str] = {}  # worker -> its surrogate
        self.killed: set[str] = set()
        self.planned: list[dict] = []  # what killed workers were to enqueue
        self.killed_elsewhere_at: float | None = None
        self.prefix_checks = 0
        self.counts: dict = {}
        self.reader = make_storage(storage)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            # a live handle that only reads: it creates the study and follows it throughout
            self.observer = Optimizer(SPACE, surrogate="random", storage=make_storage(storage),
                                      study_name=STUDY, random_state=0, **OPTIONS)

    def check_prefix(self) -> None:
        """The journal as committed so far obeys the rules (every prefix must)."""
        replay(self.reader.read(STUDY, 0))
        self.prefix_checks += 1

    def run_round(self, number: int, rnd: dict) -> None:
        victim = None if rnd["kill"] is None else rnd["kill"] % len(rnd["procs"])
        workers = []
        try:
            for i, proc in enumerate(rnd["procs"]):
                spec = {"name": f"r{number}p{i}", "study": STUDY, "storage": self.storage,
                        "surrogate": proc["surrogate"], "seed": proc["seed"],
                        "phases": proc["phases"], "hang": i == victim, "options": OPTIONS}
                self.surrogates[spec["name"]] = proc["surrogate"]
                env = dict(self.env)
                if i == victim and rnd.get("elsewhere"):
                    env["MFBO_HOST"] = "another-host"  # known to the others by its heartbeat
                workers.append(Worker(spec, env, os.path.join(self.workdir,
                                                              f"{spec['name']}.log")))
            deadline = time.monotonic() + ROUND_TIMEOUT
            for w in workers:
                w.wait_ready(deadline)
            for w in workers:
                w.proc.stdin.write("go\n")
                w.proc.stdin.close()
            while any(w.proc.poll() is None for w in workers):
                self.check_prefix()
                if victim is not None and not workers[victim].killed:
                    v = workers[victim]
                    need = 1 if rnd["kill_when"] == "first" else \
                        len(v.spec["phases"][-1]["threads"])
                    # a victim that raised is killed too (its error fails the test); one
                    # that ended by itself (a crash) is not: its exit code fails the test
                    if (v.count("evaluating") >= need or v.count("error")) \
                            and v.proc.poll() is None:
                        v.kill()
                        self.killed.add(v.name)
                        self.planned += [c for phase in v.spec["phases"]
                                         for ops in phase["threads"] for op in ops
                                         if op[0] == "enqueue" for c in op[1]]
                        if rnd.get("elsewhere"):
                            self.killed_elsewhere_at = time.monotonic()
                assert time.monotonic() < deadline, "the round did not end"
                time.sleep(0.1)
        finally:
            for w in workers:
                if w.proc.poll() is None:
                    w.kill()
        for w in workers:
            self.reports += w.finish()
        self.check(final=False)

    def drain(self, n_threads: int) -> None:
        """Resume the study in a new Optimizer of this process, whose threads ask and tell
        until no trial is pending and nothing is queued: the trials of dead owners are claimed
        first (a killed worker on another host only once its heartbeat is older than the
        grace period)."""
        if self.killed_elsewhere_at is not None:
            wait = self.killed_elsewhere_at + self.storage["grace_period"] + 1.5 \
                - time.monotonic()
            time.sleep(max(0.0, wait))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            opt = Optimizer(SPACE, surrogate="random", storage=make_storage(self.storage),
                            study_name=STUDY, random_state=1, **OPTIONS)
        reports = [{"worker": "drain", "event": "open", "owner": opt.owner}]
        errors = []
        limit = opt.n_trials + 3 * len(opt.queued) + 50

        def run():
            try:
                for _ in range(limit):
                    opt.refresh()
                    orphans = [t for t in opt.pending if t.owner != opt.owner]
                    if not orphans and not opt.queued:
                        return
                    t = opt.ask()
                    reports.append({"worker": "drain", "event": "ask", "id": t.id,
                                    "params": t.params, "owner": opt.owner})
                    try:
                        told = opt.tell(t, objective(t.params), worker="drain")
                    except TrialFinished:
                        reports.append({"worker": "drain", "event": "lost", "id": t.id})
                        continue
                    reports.append({"worker": "drain", "event": "tell", "id": t.id,
                                    "value": told.value, "state": told.state})
                errors.append(f"pending trials of dead owners were not asked again: "
                              f"{[(t.id, t.owner) for t in opt.pending]}")
            except Exception as exc:  # noqa: BLE001 - reported, and the test fails on it
                errors.append(repr(exc))

        threads = [threading.Thread(target=run) for _ in range(n_threads)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        opt.refresh()
        reports.append({"worker": "drain", "event": "view",
                        "trials": [[t.id, t.state, t.value] for t in opt.trials]})
        opt.close()
        reports.append({"worker": "drain", "event": "closed", "owner": opt.owner})
        self.reports += reports
        assert not errors, errors
        self.check(final=True)

    def check(self, final: bool) -> None:
        """The whole journal, the workers' reports, the live observer and a fresh replay."""
        model = replay(self.reader.read(STUDY, 0))
        if final:
            check_finished(model)
        self.counts = check_reports(model, self.reports, objective, killed=self.killed,
                                    planned_enqueues=self.planned,
                                    live_claims=self.live_claims, final=final)
        self.observer.refresh()
        assert signature(self.observer.trials) == model.history[-1]
        fresh = Study.open(make_storage(self.storage), STUDY)
        try:
            assert signature(fresh.trials) == model.history[-1]
        finally:
            fresh.close()

    def close(self) -> None:
        self.observer.close()
        self.reader.close()


def drive(schedule: dict, storage: dict, workdir: str, env: dict) -> Scenario:
    """Run ``schedule`` on a new study in ``storage``; every step is checked."""
    scenario = Scenario(storage, workdir, env, live_claims=storage["grace_period"] < 10)
    try:
        for number, rnd in enumerate(schedule["rounds"]):
            scenario.run_round(number, rnd)
        scenario.drain(schedule["drain_threads"])
    finally:
        scenario.close()
    assert scenario.prefix_checks > 0
    return scenario


def _tally(scenario: Scenario) -> None:
    """What the example went through, for ``--hypothesis-show-statistics``."""
    if scenario.killed:
        event("a worker was killed mid-evaluation; its trials were claimed and told by others")
    if scenario.counts.get("claims", 0) > scenario.counts.get("claims of live owners", 0):
        event("trials of dead or closed owners were claimed")
    if scenario.counts.get("claims of live owners"):
        event("a live worker lost a trial to a late heartbeat; told once only")


# -- schedules ----------------------------------------------------------------------------------

CONFIGS = st.fixed_dictionaries({"x": st.floats(-1.0, 1.0), "y": st.floats(-1.0, 1.0)})
#: seconds an evaluation takes: long enough, often, for the other workers to ask meanwhile
EVALUATION = st.sampled_from([0.0, 0.02, 0.1])
OPS = st.one_of(
    st.tuples(st.just("ask"), st.sampled_from([None, 1, 2, 3])),
    # tell the thread's oldest untold trial (True: as failed) after evaluating it
    st.tuples(st.just("tell"), st.sampled_from([False, False, False, True]), EVALUATION),
    st.tuples(st.just("tell"), st.just(False), EVALUATION),
    st.tuples(st.just("enqueue"), st.lists(CONFIGS, min_size=1, max_size=2)),
).map(list)
PHASES = st.fixed_dictionaries({
    "threads": st.lists(st.lists(OPS, min_size=1, max_size=5), min_size=1, max_size=3),
    "abandon": st.booleans()})


@st.composite
def schedules(draw, surrogates=("random",), elsewhere=False):
    """Rounds of one to three processes (at most four processes in all: each costs an
    interpreter start), the process to kill, when to kill it, and the grace period."""
    grace = draw(st.sampled_from([1.0, 60.0]))
    rounds = []
    budget = 4
    for _ in range(draw(st.integers(1, 2))):
        if budget == 0:
            break
        n = draw(st.integers(1, min(3, budget)))
        budget -= n
        procs = [{"seed": draw(st.integers(0, 999)),
                  "surrogate": draw(st.sampled_from(surrogates)),
                  "phases": draw(st.lists(PHASES, min_size=1, max_size=2))} for _ in range(n)]
        rounds.append({"procs": procs, "kill": draw(st.none() | st.integers(0, 2)),
                       "kill_when": draw(st.sampled_from(["first", "all"])),
                       # a worker on "another host" is found dead by its heartbeat alone
                       "elsewhere": elsewhere and grace < 10 and draw(st.booleans())})
    return {"grace": grace, "rounds": rounds, "drain_threads": draw(st.integers(1, 3))}


def _proc(seed, surrogate, *phases):
    return {"seed": seed, "surrogate": surrogate,
            "phases": [{"threads": threads, "abandon": abandon} for threads, abandon in phases]}


def key_schedule(surrogate: str, grace: float, elsewhere: bool = False) -> dict:
    """The path every run must take whatever Hypothesis draws: threads asking batches and
    enqueuing, a process reopening its Optimizer and leaving trials behind, a second process
    killed while all its threads evaluate, and a round that resumes the study."""
    q = [{"x": 0.25, "y": -0.5}, {"x": -0.75, "y": 0.125}]
    first = [
        _proc(11, surrogate,
              ([[["ask", 2], ["tell", False, 0.1], ["enqueue", q]],
                [["ask", None], ["ask", 3], ["tell", True, 0.1]]], True),
              ([[["ask", 1], ["tell", False, 0.1]], [["ask", None]]], False)),
        _proc(12, surrogate,
              ([[["ask", 3], ["tell", False, 0.1], ["enqueue", [{"x": 0.5, "y": 0.5}]]],
                [["ask", 2], ["tell", False, 0.1]]], False))]
    second = [_proc(13, surrogate,
                    ([[["ask", 2], ["tell", False, 0.1], ["tell", False, 0.1]],
                      [["ask", None], ["tell", False, 0.1]], [["ask", 2]]], False))]
    return {"grace": grace, "drain_threads": 2, "rounds": [
        {"procs": first, "kill": 1, "kill_when": "all", "elsewhere": elsewhere},
        {"procs": second, "kill": None, "kill_when": "first", "elsewhere": False}]}


def _sqlite(directory, grace: float) -> dict:
    return {"kind": "sqlite", "path": os.path.join(directory, "study.db"),
            "heartbeat_interval": HEARTBEAT_INTERVAL, "grace_period": grace}


SETTINGS = dict(deadline=None, derandomize=True, database=None,
                # a failing schedule is printed whole; shrinking it would rerun processes
                # whose interleaving differs each time
                phases=[Phase.explicit, Phase.generate],
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


# -- the properties -------------------------------------------------------------------------------

@settings(max_examples=7, **SETTINGS)
@example(key_schedule("random", 60.0))
@given(schedule=schedules())
def test_sqlite_workers_threads_kills_and_resumes(tmp_path_factory, schedule):
    workdir = str(tmp_path_factory.mktemp("sqlite-study"))
    _tally(drive(schedule, _sqlite(workdir, schedule["grace"]), workdir, {}))


@pytest.fixture(scope="session")
def bounds_checked_numba(tmp_path_factory, boundscheck_cache):
    """The environment of a worker whose compiled kernels check every index
    (``NUMBA_BOUNDSCHECK=1``), with a numba cache of its own (machine code compiled without
    the checks is never reused) compiled once for the session, by one worker of a small
    study of its own, which is checked like the others (threads sharing an Optimizer, batch
    asks).  Yields the environment and the seconds the compilation took."""
    env = {"NUMBA_BOUNDSCHECK": "1", "NUMBA_CACHE_DIR": str(boundscheck_cache)}
    workdir = str(tmp_path_factory.mktemp("numba-warmup"))
    tell = ["tell", False, 0.0]
    ops = [["ask", 2], tell, tell, ["ask", 3], tell, ["ask", None], tell, tell, ["ask", 2]]
    warm = {"grace": 60.0, "drain_threads": 1, "rounds": [{
        "procs": [_proc(0, "mondrian", ([ops, ops[::-1]], False))], "kill": None,
        "kill_when": "first"}]}
    start = time.monotonic()
    _bounds_checked(drive(warm, _sqlite(workdir, 60.0), workdir, env))
    return env, time.monotonic() - start


def _bounds_checked(scenario: Scenario) -> Scenario:
    """Every worker that ran the forest ran its kernels with bounds checks (its numba read
    ``NUMBA_BOUNDSCHECK``)."""
    for r in scenario.reports:
        if r["event"] == "view" and scenario.surrogates.get(r["worker"]) == "mondrian":
            assert r["boundscheck"] == 1, r
    return scenario


@settings(max_examples=4, **SETTINGS)
@example(key_schedule("mondrian", 60.0))
@given(schedule=schedules(surrogates=("mondrian", "mondrian", "random")))
def test_sqlite_mondrian_workers_under_numba_boundscheck(tmp_path_factory, bounds_checked_numba,
                                                         schedule):
    env, _ = bounds_checked_numba
    workdir = str(tmp_path_factory.mktemp("mondrian-study"))
    storage = _sqlite(workdir, schedule["grace"])
    _tally(_bounds_checked(drive(schedule, storage, workdir, env)))


def _postgres_unavailable() -> str | None:
    from benchmarks.harness import postgres_server
    return postgres_server.unavailable()


PG_REASON = _postgres_unavailable()


@pytest.fixture(scope="module")
def postgres():
    from benchmarks.harness import postgres_server
    with postgres_server.PostgresServer() as pg:
        yield pg


@pytest.mark.skipif(PG_REASON is not None, reason=f"no PostgreSQL server: {PG_REASON}")
@settings(max_examples=4, **SETTINGS)
@example(key_schedule("random", 1.0, elsewhere=True))
@given(schedule=schedules(surrogates=("random", "random", "mondrian"), elsewhere=True))
def test_postgres_workers_threads_kills_and_resumes(tmp_path_factory, postgres,
                                                    bounds_checked_numba, schedule):
    env, _ = bounds_checked_numba
    workdir = str(tmp_path_factory.mktemp("postgres-study"))
    storage = {"kind": "postgresql", "url": postgres.new_database(),
               "heartbeat_interval": HEARTBEAT_INTERVAL, "grace_period": schedule["grace"]}
    _tally(_bounds_checked(drive(schedule, storage, workdir, env)))


# -- a storage closed right after its study -------------------------------------------------------

#: what every worker above does at the end of a phase (``opt.close(); store.close()``), as fast
#: as it goes: the heartbeat thread, signalled to stop but not waited for, may still be writing
#: a beat on the storage's one sqlite3 connection when ``close`` closes it from the other thread
CLOSE_RIGHT_AFTER = """
import faulthandler, random, sys, time
faulthandler.enable()
from mfbo.study.ownership import Heartbeat
from mfbo.storage import SQLiteStorage
path = sys.argv[1]
SQLiteStorage(path).open_study("s", {"x": 1}, {})
end = time.monotonic() + 10.0
while time.monotonic() < end:
    storage = SQLiteStorage(path, heartbeat_interval=0.001, grace_period=1.0)
    beat = Heartbeat(storage, "s", "host:1:1:owner")  # what an open Study beats with
    beat.start()
    time.sleep(random.random() * 0.005)
    beat.stop()      # Study.close()
    storage.close()
print("no crash")
"""


def test_closing_a_sqlite_storage_right_after_its_study_does_not_crash(tmp_path):
    """A crash here is a process lost mid-study (it showed as a worker ending with SIGSEGV in
    the schedules above, once in a few dozen); this loop hits the window in seconds."""
    done = subprocess.run([sys.executable, "-c", CLOSE_RIGHT_AFTER, str(tmp_path / "c.db")],
                          cwd=ROOT, env=checkout_env(), capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0 and "no crash" in done.stdout, (
        f"exit code {done.returncode}:\n{done.stderr[-3000:]}")


# -- the checker catches what it is meant to catch ------------------------------------------------

A, B, C = "host:1:1:a", "host:2:1:b", "host:3:1:c"
P = [{"x": 0.1 * i, "y": -0.1 * i} for i in range(6)]


def _ask(eid, i, owner=A, params=None, enqueued=None):
    payload = {"id": i, "params": P[i] if params is None else params, "owner": owner}
    if enqueued is not None:
        payload["enqueued"] = enqueued
    return eid, "ask", payload


def _tell(eid, i, worker="w1", value=None, state="complete"):
    value = objective(P[i]) if value is None and state == "complete" else value
    return eid, "tell", {"id": i, "state": state, "value": value, "worker": worker}


def _claim(eid, i, owner):
    return eid, "claim", {"id": i, "owner": owner}


def _enqueue(eid, n, params):
    return eid, "enqueue", {"number": n, "params": params}


GOOD = [_ask(1, 0), _enqueue(2, 0, P[1]), _ask(3, 1, enqueued=0), _tell(5, 0),
        _claim(6, 1, B), _tell(7, 1, worker="w2"), _ask(9, 2, owner=B), _tell(10, 2, "w2")]


def _r(worker, event, **fields):
    return {"worker": worker, "event": event, **fields}


def _told(worker, i):
    return _r(worker, "tell", id=i, value=objective(P[i]), state="complete")


def _reports():
    """What two workers reported of ``GOOD``: w1 (owner A) asked trials 0 and 1 (the enqueued
    one), told 0 and was killed while evaluating 1; w2 (owner B) claimed 1 and told it, then
    asked and told 2, and read the study once."""
    return [_r("w1", "open", owner=A), _r("w2", "open", owner=B),
            _r("w1", "ask", id=0, params=P[0], owner=A),
            _r("w1", "enqueue", configs=[P[1]]),
            _r("w1", "ask", id=1, params=P[1], owner=A), _told("w1", 0),
            _r("w1", "evaluating", id=1),
            _r("w2", "ask", id=1, params=P[1], owner=B), _told("w2", 1),
            _r("w2", "ask", id=2, params=P[2], owner=B), _told("w2", 2),
            _r("w2", "view", trials=[[0, "complete", objective(P[0])], [1, "pending", None]])]


def _without(*events_of):
    """The reports of ``GOOD`` without those matching ``(worker, event, id)``."""
    return [r for r in _reports() if (r["worker"], r["event"], r.get("id")) not in events_of]


def _check(events, reports=None, **kw):
    model = replay(events)
    kw = {"killed": {"w1"}, "live_claims": False, "final": True, **kw}
    if kw["final"]:
        check_finished(model)
    return check_reports(model, _reports() if reports is None else reports, objective, **kw)


def test_checker_accepts_a_valid_journal():
    counts = _check(GOOD)
    assert counts == {"claims": 1, "lost tells": 0}
    model = replay(GOOD)
    assert model.history[-1] == (("complete", objective(P[0])), ("complete", objective(P[1])),
                                 ("complete", objective(P[2])))
    assert model.trials[1].owners == [A, B] and model.trials[1].enqueued == 0
    # every prefix of a valid journal is valid; a killed worker's trial may be pending then
    for n in range(len(GOOD)):
        replay(GOOD[:n])
    _check(GOOD[:5], _without(("w2", "ask", 1), ("w2", "tell", 1), ("w2", "ask", 2),
                              ("w2", "tell", 2)), final=False)
    # the enqueue a killed worker committed and never reported was one it was to make
    _check(GOOD, _without(("w1", "enqueue", None)), planned_enqueues=[P[1]])
    # with a short grace period a live owner may lose a trial; its tell is then refused
    lost = [_r("w1", "open", owner=A), _r("w2", "open", owner=B),
            _r("w1", "ask", id=0, params=P[0], owner=A),
            _r("w2", "ask", id=0, params=P[0], owner=B), _told("w2", 0),
            _r("w1", "lost", id=0)]
    assert _check([_ask(1, 0), _claim(2, 0, B), _tell(3, 0, "w2")], lost, killed=set(),
                  live_claims=True) == {"claims": 1, "claims of live owners": 1,
                                        "lost tells": 1}


@pytest.mark.parametrize("events,match", [
    (GOOD + [_tell(11, 2)], "trial 2 is not pending.*told twice"),
    ([_ask(1, 0), _ask(2, 2)], r"trial id 2, expected 1"),
    ([_ask(1, 1)], r"trial id 1, expected 0"),
    ([_ask(1, 0), _tell(2, 0), _claim(3, 0, B)], "trial 0 is not pending"),
    ([_ask(1, 0), _claim(2, 0, A)], "claimed by the owner that holds it"),
    ([_ask(1, 0), _claim(2, 3, B)], "no trial 3 has been asked"),
    ([_ask(2, 0), _ask(2, 1)], "not strictly increasing"),
    ([_ask(3, 0), _ask(2, 1)], "not strictly increasing"),
    ([_enqueue(1, 0, P[0]), _ask(2, 0, enqueued=0), _ask(3, 1, params=P[0], enqueued=0)],
     "asked already"),
    ([_enqueue(1, 0, P[0]), _enqueue(2, 1, P[1]), _ask(3, 0, params=P[1], enqueued=1)],
     "before 0"),
    ([_enqueue(1, 0, P[0]), _ask(2, 0, params=P[1], enqueued=0)], "differ"),
    ([_enqueue(1, 0, P[0]), _ask(2, 0, params=P[1])], "while configurations"),
    ([_enqueue(1, 1, P[0])], "enqueue number 1, expected 0"),
    ([_ask(1, 0), (2, "tell", {"id": 0, "state": "complete", "value": None})], "value None"),
    ([_ask(1, 0), _tell(2, 0, value=1.0, state="failed")], "failed with value 1.0"),
    ([(1, "bogus", {})], "unknown kind"),
])
def test_checker_refuses_a_broken_journal(events, match):
    with pytest.raises(JournalViolation, match=match):
        replay(events)


def test_checker_refuses_an_unfinished_study():
    with pytest.raises(JournalViolation, match=r"trials \[0\] are still pending"):
        check_finished(replay([_ask(1, 0)]))
    with pytest.raises(JournalViolation, match=r"configurations \[0\] were never asked"):
        check_finished(replay([_enqueue(1, 0, P[0])]))


def _with(i, **fields):
    """The reports of ``GOOD`` with record ``i`` changed."""
    out = _reports()
    out[i] = {**out[i], **fields}
    return out


@pytest.mark.parametrize("events,reports,kw,match", [
    # a trial a worker was handed is not in the journal: lost
    (GOOD[:-2], None, {"final": False}, "trial 2, which is not in the journal"),
    # a worker was handed other params than the journal's
    (GOOD, _with(2, params=P[4]), {}, "was handed params"),
    # a worker was handed a trial the journal never made its own
    (GOOD, _with(9, owner=C), {}, "never made its owner"),
    # what a worker told is not what the journal holds
    (GOOD, _with(8, value=9.0), {}, "told it complete with value 9.0"),
    (GOOD, _with(8, worker="w1"), {}, "told by w2"),
    # a live worker's tell in the journal that it never reported
    (GOOD, _without(("w2", "tell", 2)), {}, "never reported telling it"),
    # a tell by a worker that never owned the trial
    ([_ask(1, 0, owner=B), _tell(2, 0, "w1")],
     [_r("w1", "open", owner=A), _r("w2", "open", owner=B)], {}, "never owned it"),
    # a tell by a former owner after another had claimed the trial (long grace period)
    ([_ask(1, 0), _claim(2, 0, B), _tell(3, 0, "w1")],
     [_r("w1", "open", owner=A), _r("w2", "open", owner=B), _told("w1", 0)],
     {"killed": set(), "final": False}, "after owner .* had claimed it"),
    # a value that is not the objective's
    ([_ask(1, 0), _tell(2, 0, value=5.0)], [_r("w1", "open", owner=A)], {},
     "not the objective's"),
    # a trial a killed worker was evaluating: told by it, or never claimed by another
    ([_ask(1, 0), _tell(2, 0), _ask(3, 1), _tell(4, 1, "w1")],
     _without(("w1", "enqueue", None), ("w2", "ask", 1), ("w2", "tell", 1), ("w2", "ask", 2),
              ("w2", "tell", 2), ("w2", "view", None)), {}, "killed while evaluating it"),
    ([_ask(1, 0), _tell(2, 0), _ask(3, 1)],
     _without(("w1", "enqueue", None), ("w2", "ask", 1), ("w2", "tell", 1), ("w2", "ask", 2),
              ("w2", "tell", 2), ("w2", "view", None)), {"live_claims": True},
     "was not claimed and told"),
    # a live owner's trial claimed, where the grace period should have kept it
    (GOOD, None, {"killed": set()}, "neither killed nor closed"),
    # a worker refused its tell as told already, of a trial nobody claimed from it
    (GOOD, _reports() + [_r("w2", "lost", id=2)], {}, "refused its tell"),
    # what a worker read was no state of the journal
    (GOOD, _with(11, trials=[[0, "complete", 1.0]]), {}, "no state the journal"),
    # an enqueue reported and not in the journal, one in the journal reported by nobody
    (GOOD, _reports() + [_r("w2", "enqueue", configs=[P[3]])], {},
     "not in the journal's queue"),
    (GOOD, _without(("w1", "enqueue", None)), {}, "no worker reported enqueuing"),
    # a worker's error (an IndexError of a bounds-checked kernel, say)
    (GOOD, _reports() + [_r("w2", "error", text="IndexError: index 7 is out of bounds")],
     {}, "w2 raised"),
])
def test_checker_refuses_reports_the_journal_contradicts(events, reports, kw, match):
    model = replay(events)
    kw = {"killed": {"w1"}, "live_claims": False, "final": True, **kw}
    with pytest.raises(JournalViolation, match=match):
        check_reports(model, _reports() if reports is None else reports, objective, **kw)
