"""The PostgreSQL journal, against a real server started for the test session: the journal's
semantics, several worker processes, a worker killed with SIGKILL, a server restart mid-study,
studies kept apart, heartbeat expiry, lock waits and commit order."""

import json
import os
import pickle
import signal
import subprocess
import sys
import textwrap
import threading
import time

import pytest

import mfbo
from mfbo import Optimizer
from mfbo.study.study import Study

from benchmarks.harness import postgres_server
from benchmarks.harness.shared_workers import journal_check, kill_in_first_evaluation, start_worker
from tests.mfbo.study.test_ownership import remote_ask
from tests.support import SPACE, checkout_env, quad, wait_until_stopped

REASON = postgres_server.unavailable()
pytestmark = pytest.mark.skipif(REASON is not None, reason=f"no PostgreSQL server: {REASON}")


@pytest.fixture(scope="module")
def server():
    with postgres_server.PostgresServer() as pg:
        yield pg


@pytest.fixture
def url(server):
    return server.new_database()


def _storage(url, **options):
    from mfbo.storage.sql import SQLAlchemyStorage
    return SQLAlchemyStorage(url, **options)


def _finish(procs, timeout=240):
    out = []
    for p in procs:
        text, _ = p.communicate(timeout=timeout)
        assert p.returncode == 0
        out.append([json.loads(line) for line in text.splitlines()])
    return out


def test_url_forms_and_journal_semantics(url):
    from mfbo.storage import as_storage
    from mfbo.storage.sql import SQLAlchemyStorage, normalise_url
    plain = url.replace("postgresql+psycopg://", "postgresql://")
    assert normalise_url(plain).startswith("postgresql+psycopg://")  # no psycopg2 here
    assert normalise_url("postgres://u@h/db") == "postgresql+psycopg://u@h/db"
    with pytest.raises(ValueError, match="only PostgreSQL"):
        as_storage("mysql://u@h/db")
    storage = as_storage(plain)
    assert isinstance(storage, SQLAlchemyStorage)
    opt = Optimizer(SPACE, random_state=0, storage=storage, n_random_candidates=128)
    for _ in range(6):
        t = opt.ask()
        opt.tell(t, {"loss": quad(**t.params), "note": "ok"})
    pending = opt.ask()
    opt.close()
    # the events are JSON documents in commit order
    events = storage.read("default", 0)
    assert [e for e, _, _ in events] == list(range(1, len(events) + 1))
    again = Optimizer(SPACE, random_state=0, storage=plain, n_random_candidates=128)
    assert again.n_finished == 6 and again.trials[2].extra == {"note": "ok"}
    assert again.model.forest.n_samples_seen_ == 6
    t = again.ask()  # the closed optimizer's pending trial is asked again
    assert t.id == pending.id and t.params == pending.params
    # the storage pickles by its URL and reads the same study
    copy = pickle.loads(pickle.dumps(storage))
    assert copy.read("default", 0) == storage.read("default", 0)


def test_same_trials_as_sqlite(url, tmp_path):
    runs = []
    for storage in (url, str(tmp_path / "s.db")):
        opt = Optimizer(SPACE, random_state=3, storage=storage, n_random_candidates=256)
        for _ in range(14):
            t = opt.ask()
            opt.tell(t, quad(**t.params))
        runs.append([t.params for t in opt.trials])
        opt.close()
    assert runs[0] == runs[1]


def test_reports_rungs_and_pruned_trials_as_in_sqlite(url, tmp_path):
    from tests.mfbo.study.test_study import pruning_run

    replayed, held = pruning_run(url)
    assert replayed == held == pruning_run(str(tmp_path / "s.db"))[0]


def test_studies_kept_apart_and_other_space_refused(url):
    a = Optimizer(SPACE, storage=url, study_name="a", random_state=0)
    b = Optimizer({"z": (0.0, 1.0)}, storage=url, study_name="b", random_state=0)
    for opt, f in ((a, quad), (b, lambda z: z)):
        for _ in range(3):
            t = opt.ask()
            opt.tell(t, f(**t.params))
    t = b.ask()
    b.tell(t, 0.5)
    assert a.storage.studies() == ["a", "b"]
    assert Study.open(url, "a").n_finished == 3 and Study.open(url, "b").n_finished == 4
    with pytest.raises(ValueError, match="different space"):
        Optimizer({"z": (0.0, 2.0)}, storage=url, study_name="b")
    with pytest.raises(ValueError, match="no study named 'c'"):
        Study.open(url, "c")


def test_schema_version_is_checked(url):
    import sqlalchemy
    storage = _storage(url)
    engine = sqlalchemy.create_engine(url)
    with engine.begin() as conn:
        assert conn.execute(sqlalchemy.text("SELECT version FROM mfbo_version")).scalar() == 1
        conn.execute(sqlalchemy.text("UPDATE mfbo_version SET version = 99"))
    engine.dispose()
    storage.close()
    with pytest.raises(ValueError, match="newer mfbo"):
        _storage(url)


def test_minimize_resumes_with_a_url(url):
    r1 = mfbo.minimize(quad, SPACE, n_calls=6, storage=url, random_state=0, progress_bar=False)
    r2 = mfbo.minimize(quad, SPACE, n_calls=9, storage=url, random_state=0, progress_bar=False)
    assert len(r1.trials) == 6 and len(r2.trials) == 9
    assert [t.params for t in r2.trials[:6]] == [t.params for t in r1.trials]


def test_study_command_reads_a_url(url, capsys):
    from mfbo.cli.main import main
    mfbo.minimize(quad, SPACE, n_calls=5, storage=url, study_name="cli", random_state=0,
                  progress_bar=False)
    main(["study", "show", url])
    out = capsys.readouterr().out
    assert "cli" in out and "5" in out
    main(["study", "best", url, "--study", "cli"])
    assert set(json.loads(capsys.readouterr().out)) == set(SPACE)
    assert main(["study", "show", url, "--study", "nope"]) == 2
    assert "no study named 'nope'" in capsys.readouterr().err


def test_read_only_storage_refuses_writes(url):
    opt = Optimizer(SPACE, storage=url, random_state=0)
    t = opt.ask()
    opt.tell(t, 1.0)
    reader = _storage(url, read_only=True)
    study = Study.open(reader, "default")
    assert study.n_finished == 1
    with pytest.raises(Exception):
        reader.append("default", "enqueue", {"number": 0, "params": {}, "time": 0})
    assert Study.open(url, "default").n_trials == 1


def test_heartbeat_expiry_with_a_short_grace_period(url):
    storage = _storage(url, heartbeat_interval=0.1, grace_period=0.6)
    opt = Optimizer(SPACE, storage=storage, random_state=0, n_initial=20)
    # a worker on another host asked a trial and beat once at 0.1 s intervals
    remote = "elsewhere:4242:1:abcdef"
    remote_ask(opt, remote, [0.5, 0.5])
    storage.beat("default", remote)
    other = _storage(url, heartbeat_interval=0.1, grace_period=0.6)
    other.beat("default", remote)  # its own interval is recorded with the beat
    t = opt.ask()
    assert t.id == 1  # alive: not taken
    time.sleep(0.8)
    t = opt.ask()
    assert t.id == 0  # its heartbeat is older than the grace period: asked again
    events = storage.read("default", 0)
    assert [k for _, k, _ in events].count("claim") == 1


def test_a_closed_owner_is_dead_at_once_and_slow_beaters_are_not_lost(url):
    storage = _storage(url, heartbeat_interval=0.1, grace_period=0.5)
    opt = Optimizer(SPACE, storage=storage, random_state=0, n_initial=20)
    for owner in ("far:1:1:closed", "far:2:1:slow"):
        remote_ask(opt, owner, [0.1, 0.2])
    _storage(url, heartbeat_interval=0.1, grace_period=0.5).beat("default", "far:1:1:closed",
                                                                 alive=False)
    _storage(url, heartbeat_interval=5.0, grace_period=20.0).beat("default", "far:2:1:slow")
    time.sleep(0.7)
    # the closed owner's trial is taken; the one that beats every 5 s is alive for 3 beats
    assert opt.ask().id == 0
    assert opt.ask().id == 2


def test_lock_waits_are_counted_and_proposals_serialised(url):
    a, b = _storage(url), _storage(url)
    a.open_study("s", {"x": 1}, {})
    entered = threading.Event()

    def hold():
        with a.transaction("s"):
            entered.set()
            a.append("s", "enqueue", {"n": 1})
            time.sleep(0.5)

    thread = threading.Thread(target=hold)
    thread.start()
    entered.wait()
    start = time.monotonic()
    with b.transaction("s"):
        waited = time.monotonic() - start
        seen = b.read("s", 0)
        b.append("s", "enqueue", {"n": 2})
    thread.join()
    assert b.lock_waits == 1 and waited > 0.3
    assert [p for _, _, p in seen] == [{"n": 1}]  # it saw the other transaction's event
    assert [e for e, _, _ in b.read("s", 0)] == [1, 2]
    # another study is not locked by it
    with a.transaction("s"):
        with b.transaction("other"):
            pass
    assert b.lock_waits == 1


def test_a_lost_connection_records_nothing_and_the_optimizer_retries(url):
    import sqlalchemy
    from mfbo.storage import StorageUnavailable
    storage = _storage(url)
    storage.open_study("s", {"x": 1}, {})
    killer = sqlalchemy.create_engine(url, isolation_level="AUTOCOMMIT")
    with pytest.raises(StorageUnavailable):
        with storage.transaction("s"):
            storage.append("s", "enqueue", {"n": 1})
            pid = storage._conn.execute(sqlalchemy.text("SELECT pg_backend_pid()")).scalar()
            with killer.connect() as conn:
                conn.execute(sqlalchemy.text("SELECT pg_terminate_backend(:p)"), {"p": pid})
            storage.append("s", "enqueue", {"n": 2})
    killer.dispose()
    assert storage.read("s", 0) == []
    storage.append("s", "enqueue", {"n": 3})  # the storage reconnects
    assert [p for _, _, p in storage.read("s", 0)] == [{"n": 3}]


def test_four_workers_share_one_study(url):
    procs = [start_worker(url, "shared", 24, 0.0, seed, surrogate="mondrian")
             for seed in range(4)]
    logs = _finish(procs)
    check = journal_check(_storage(url), "shared")
    assert check == {"trials": 24, "finished": 24, "pending": 0, "told_twice": [],
                     "asked_twice": 0, "claims": 0, "contiguous": True}
    asked = [r["trial"] for log in logs for r in log if r["event"] == "ask"]
    assert sorted(asked) == list(range(24))  # no trial handed to two workers


def test_conditional_workers_share_one_study(url):
    from benchmarks.harness.shared_workers import conditional_objective, conditional_space
    procs = [start_worker(url, "cond", 14, 0.0, seed, surrogate="mondrian", conditional=True)
             for seed in range(2)]
    _finish(procs)
    check = journal_check(_storage(url), "cond")
    assert check["finished"] == 14 and check["pending"] == 0 and check["asked_twice"] == 0
    opt = Optimizer(conditional_space(), storage=_storage(url), study_name="cond")
    for t in opt.trials:  # active parameters only, allowed, told their branch's value
        assert conditional_space().validate(t.params) == t.params
        assert t.value == pytest.approx(conditional_objective(**t.params))
    assert {t.params["branch"] for t in opt.trials} == {"plain", "shifted"}


def test_a_worker_killed_mid_evaluation_on_another_host(url):
    grace = 2.0
    # random proposals: no compilation holding the interpreter (and the heartbeat thread) for
    # longer than this short grace period on a loaded machine
    options = dict(surrogate="random", heartbeat_interval=0.25, grace_period=grace)
    # the victim asks first (the others could otherwise finish the study before it asks)
    victim = start_worker(url, "k", 16, 0.02, 9, slow_first=600, host="another-host", **options)
    trial, killed_at = kill_in_first_evaluation(victim)
    procs = [start_worker(url, "k", 16, 0.02, seed, **options) for seed in range(2)]
    logs = _finish(procs)
    check = journal_check(_storage(url), "k")
    assert check["finished"] == 16 and check["pending"] == 0 and check["told_twice"] == []
    assert check["claims"] >= 1 and check["asked_twice"] == 0
    taken = [r for log in logs for r in log if r["event"] == "ask" and r["trial"] == trial]
    assert len(taken) == 1 and taken[0]["time"] - killed_at > grace - 0.5


def test_a_server_restart_mid_study_loses_and_duplicates_nothing(server, url):
    procs = [start_worker(url, "r", 30, 0.05, seed) for seed in range(3)]
    storage = _storage(url)
    deadline = time.time() + 120
    while time.time() < deadline:
        study = storage.read("r", 0)
        if sum(1 for _, k, _ in study if k == "tell") >= 10:
            break
        time.sleep(0.1)
    server.restart()
    _finish(procs)
    check = journal_check(storage, "r")
    assert check == {"trials": 30, "finished": 30, "pending": 0, "told_twice": [],
                     "asked_twice": 0, "claims": 0, "contiguous": True}


# a worker that stops itself (SIGSTOP) inside its first ask's transaction, after recording
# the ask and before committing it, then, once continued, goes on as if nothing happened
FROZEN_WORKER = textwrap.dedent("""
    import json, os, signal, sys
    from mfbo import Optimizer
    from mfbo.storage.sql import SQLAlchemyStorage
    storage = SQLAlchemyStorage(sys.argv[1], idle_in_transaction_timeout=1.0)
    append, frozen = storage.append, []
    def freezing_append(study, kind, payload):
        seq = append(study, kind, payload)
        if kind == "ask" and not frozen:
            frozen.append(payload["id"])
            print(json.dumps({"event": "frozen", "trial": payload["id"]}), flush=True)
            os.kill(os.getpid(), signal.SIGSTOP)
        return seq
    storage.append = freezing_append
    opt = Optimizer({"x": (-1.0, 1.0), "y": (-1.0, 1.0)}, storage=storage, study_name="f",
                    surrogate="random", random_state=0)
    t = opt.ask()
    opt.tell(t, 1.0)
    print(json.dumps({"event": "told", "trial": t.id}), flush=True)
    opt.close()
""")


def test_a_worker_frozen_inside_a_transaction_does_not_block_the_others(url):
    storage = _storage(url)
    opt = Optimizer(SPACE, storage=storage, study_name="f", surrogate="random", random_state=1)
    proc = subprocess.Popen([sys.executable, "-c", FROZEN_WORKER, url], stdout=subprocess.PIPE,
                            text=True, env=checkout_env())
    try:
        assert json.loads(proc.stdout.readline())["event"] == "frozen"
        wait_until_stopped(proc.pid)
        start = time.monotonic()
        # waits for the study's lock until the server ends the frozen worker's session, which
        # has sat idle in its transaction for 1 s
        t = opt.ask()
        opt.tell(t, quad(**t.params))
        waited = time.monotonic() - start
    finally:
        os.kill(proc.pid, signal.SIGCONT)
    out, _ = proc.communicate(timeout=120)
    assert proc.returncode == 0
    assert t.id == 0 and waited < 6
    # the frozen worker found its transaction rolled back and asked again, after the other's
    assert [json.loads(line)["trial"] for line in out.splitlines()] == [1]
    check = journal_check(storage, "f")
    assert check == {"trials": 2, "finished": 2, "pending": 0, "told_twice": [],
                     "asked_twice": 0, "claims": 0, "contiguous": True}


def test_session_limits_default_and_are_set_on_every_connection(url):
    import sqlalchemy
    storage = _storage(url)
    assert (storage.idle_in_transaction_timeout, storage.lock_timeout) == (60.0, 120.0)
    with storage.transaction("s"):
        conn = storage._conn
        assert conn.execute(sqlalchemy.text("SHOW idle_in_transaction_session_timeout")
                            ).scalar() == "1min"
        assert conn.execute(sqlalchemy.text("SHOW lock_timeout")).scalar() == "2min"
    short = _storage(url, idle_in_transaction_timeout=0.25, lock_timeout=0.5, read_only=True)
    with short.transaction("s"):
        assert short._conn.execute(sqlalchemy.text("SHOW idle_in_transaction_session_timeout")
                                   ).scalar() == "250ms"
    for name, bad in (("idle_in_transaction_timeout", 0), ("lock_timeout", -1.0),
                      ("lock_timeout", float("nan")), ("idle_in_transaction_timeout", "60")):
        with pytest.raises(ValueError, match=name):
            _storage(url, **{name: bad})


def test_a_lock_held_too_long_is_retried_then_reported(url):
    import sqlalchemy
    from mfbo.storage import StorageLocked
    from mfbo.storage.base import retrying
    from mfbo.storage.sql import _lock_key
    storage = _storage(url, lock_timeout=0.3)
    storage.open_study("s", {"x": 1}, {})
    # a session of another program, not bound by this storage's limits, holds the lock
    holder = sqlalchemy.create_engine(url)
    locked, release = threading.Event(), threading.Event()

    def hold():
        with holder.begin() as conn:
            conn.execute(sqlalchemy.text("SELECT pg_advisory_xact_lock(:k)"),
                         {"k": _lock_key("s")})
            locked.set()
            release.wait(30)

    thread = threading.Thread(target=hold)
    thread.start()
    locked.wait(30)
    try:
        start = time.monotonic()
        with pytest.raises(StorageLocked, match="study .s. .*locked.*lock_timeout=0.3 s"):
            with storage.transaction("s"):
                pass
        assert 0.3 <= time.monotonic() - start < 3
        # tried again, as a lost connection is, it gets the lock once the holder lets it go
        threading.Timer(1.0, release.set).start()

        def write():
            with storage.transaction("s"):
                return storage.append("s", "enqueue", {"n": 1})

        start = time.monotonic()
        assert retrying(write, 30) == 1
        assert time.monotonic() - start >= 0.7 and storage.lock_waits >= 3
    finally:
        release.set()
        thread.join()
        holder.dispose()


def test_a_missing_database_role_or_password_is_a_clear_error_at_once(server):
    from mfbo.storage.sql import SQLAlchemyStorage
    role = server.new_role(password="right")
    cases = [(server.url("no_such_db", password="secret"),
              "database 'no_such_db' does not exist"),
             (server.url("postgres", "no_such_role", "secret"),
              "role 'no_such_role' does not exist"),
             (server.url("postgres", role, "secret"), f"password of role '{role}'")]
    for url, message in cases:
        start = time.monotonic()
        with pytest.raises(ValueError, match=message) as info:
            SQLAlchemyStorage(url)  # the default retry_timeout: not tried again
        assert time.monotonic() - start < 3
        assert "secret" not in str(info.value) and "***" in str(info.value)
    # the right password logs in (then the role, without privileges, may not create tables)
    with pytest.raises(PermissionError, match=f"role '{role}' cannot write"):
        SQLAlchemyStorage(server.url(server.new_database().rsplit("/", 1)[1], role, "right"))


def test_a_role_that_may_only_read_gets_a_permission_error_and_reads_read_only(server, url):
    import sqlalchemy
    opt = Optimizer(SPACE, storage=url, random_state=0)
    t = opt.ask()
    opt.tell(t, 1.0)
    opt.close()
    reader = server.new_role()
    engine = sqlalchemy.create_engine(url, isolation_level="AUTOCOMMIT")
    with engine.connect() as conn:
        conn.execute(sqlalchemy.text(f"GRANT SELECT ON ALL TABLES IN SCHEMA public TO {reader}"))
    engine.dispose()
    reader_url = server.url(url.rsplit("/", 1)[1], reader)
    with pytest.raises(PermissionError, match=f"role '{reader}' cannot write.*read_only=True"):
        Optimizer(SPACE, storage=reader_url, random_state=0)  # its first heartbeat
    storage = _storage(reader_url)
    with pytest.raises(PermissionError, match="cannot write.*mfbo_events"):
        storage.append("default", "enqueue", {"number": 0, "params": {}, "time": 0})
    study = Study.open(_storage(reader_url, read_only=True), "default")
    assert study.n_finished == 1
    # a database without the tables: the role cannot create them
    empty = server.url(server.new_database().rsplit("/", 1)[1], reader)
    with pytest.raises(PermissionError, match=f"role '{reader}' cannot write"):
        _storage(empty)


def test_another_space_is_named_precisely(url):
    from tests.mfbo.storage.test_sqlite import check_other_spaces_are_named
    check_other_spaces_are_named(url)


def test_create_false_opens_an_existing_study_database_only(url):
    import sqlalchemy
    from mfbo.storage import as_storage
    with pytest.raises(ValueError, match="holds no mfbo study"):
        as_storage(url, create=False)
    engine = sqlalchemy.create_engine(url)
    with engine.connect() as conn:  # nothing was created
        found = conn.execute(sqlalchemy.text("SELECT to_regclass('mfbo_version')")).scalar()
    assert found is None
    engine.dispose()
    Optimizer(SPACE, storage=url).close()
    assert as_storage(url, create=False).studies() == ["default"]


def test_read_only_handles_write_no_heartbeat(url):
    import sqlalchemy
    from tests.mfbo.study.test_ownership import check_read_only_handles_write_no_heartbeat
    engine = sqlalchemy.create_engine(url)

    def rows():
        with engine.connect() as conn:
            return conn.execute(sqlalchemy.text("SELECT study_id, owner, time, interval FROM "
                                                "mfbo_heartbeats ORDER BY owner")).fetchall()

    check_read_only_handles_write_no_heartbeat(
        url, lambda: _storage(url, read_only=True, heartbeat_interval=0.05, grace_period=0.2),
        rows)
    engine.dispose()


def test_heartbeat_rows_are_pruned_and_a_silent_owner_is_still_reclaimed(url):
    from tests.mfbo.study.test_ownership import check_heartbeat_rows_are_pruned
    check_heartbeat_rows_are_pruned(url)


def test_pruning_never_fails_a_beat(url):
    from tests.mfbo.study.test_ownership import check_pruning_never_fails_a_beat
    check_pruning_never_fails_a_beat(url)


def test_study_command_names_a_role_that_may_not_read(server, url):
    from tests.support import run_mfbo
    opt = Optimizer(SPACE, storage=url, random_state=0)
    opt.tell(opt.ask(), 1.0)
    opt.close()
    stranger = server.new_role()  # no privilege on mfbo's tables
    proc = run_mfbo("study", "show", server.url(url.rsplit("/", 1)[1], stranger), timeout=120)
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr and stranger in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


def test_reads_in_pages(url):
    from tests.mfbo.storage.test_sqlite import check_reads_in_pages
    check_reads_in_pages(url)


def test_several_objectives_and_constraints_on_the_server(url):
    from tests.mfbo.optimize.test_multi_objective import SPACE as SQUARE, TWO, two_objectives

    res = mfbo.minimize(two_objectives, SQUARE, n_calls=10, random_state=0, directions=TWO,
                        constraints=["mem"], storage=url, n_workers=2, progress_bar=False)
    assert sum(t.state == "complete" for t in res.trials) == 10
    again = Optimizer(SQUARE, storage=url, directions=TWO, constraints=["mem"], random_state=0)
    assert [t.values for t in again.trials] == [t.values for t in res.trials]
    assert [t.constraints for t in again.trials] == [t.constraints for t in res.trials]
    assert [t.id for t in again.best_trials] == [t.id for t in res.best_trials]
    again.close()
    with pytest.raises(ValueError, match="created with objectives"):
        Optimizer(SQUARE, storage=url, directions=TWO)
    study = Study.open(_storage(url))
    assert study.objectives.constraints == ("mem",) and study.objectives.k == 2


def test_constraint_functions_on_the_server(url):
    from tests.mfbo.optimize.test_multi_objective import CALLS, LIMIT, SPACE as SQUARE, TWO, \
        two_with_raw_memory

    res = mfbo.minimize(two_with_raw_memory, SQUARE, n_calls=10, random_state=0,
                        directions=TWO, constraints=LIMIT, storage=url, n_workers=2,
                        progress_bar=False)
    assert sum(t.state == "complete" for t in res.trials) == 10
    CALLS.clear()
    again = Optimizer(SQUARE, storage=url, directions=TWO, constraints=LIMIT, random_state=0)
    assert not CALLS  # the old trials are read as told
    assert [t.constraints for t in again.trials] == [t.constraints for t in res.trials]
    again.close()
    study = Study.open(_storage(url))
    assert study.objectives.constraints == ("mem_limit",)


def test_failures_modelled_as_infeasible_on_the_server(url):
    from tests.mfbo.optimize.test_multi_objective import SPACE as SQUARE, crashing

    res = mfbo.minimize(crashing, SQUARE, n_calls=12, random_state=0, on_failure="infeasible",
                        constraints=["c"], storage=url, n_workers=2, progress_bar=False)
    assert res.n_failed and sum(t.state == "complete" for t in res.trials) + res.n_failed == 12
    again = Optimizer(SQUARE, storage=url, constraints=["c"], on_failure="infeasible",
                      random_state=0)
    Y = again.study.obs.Y
    assert Y.shape[1] == 3 and set(Y[:, 2]) <= {1.0, -1.0}
    assert (Y[:, 2] == -1).sum() == sum(t.state == "complete" for t in again.trials)
    assert again.ask().origin == "outcomes"
