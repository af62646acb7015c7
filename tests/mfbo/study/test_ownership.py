"""Owners and heartbeats: liveness of an owner token, heartbeats on the SQLite journal, its
schema version, orphans of other hosts and reused process ids."""

import json
import os
import socket
import sqlite3
import time
import warnings

import pytest

import mfbo
from benchmarks.harness.shared_workers import (SPACE as WORKER_SPACE, journal_check,
                                               kill_in_first_evaluation, start_worker)
from mfbo import Optimizer, SQLiteStorage
from mfbo.storage import as_storage
from mfbo.study.ownership import HOST, owner_alive
from tests.support import BOX as S, SPACE, box_quad as f


def test_owner_alive_rules():
    remote = "far-host:123:1:tok"
    assert owner_alive(remote)  # another host that never beat: assumed alive
    assert owner_alive(remote, 5.0, 60.0)
    assert not owner_alive(remote, 61.0, 60.0)
    assert not owner_alive(remote, float("inf"), 60.0)  # it closed
    dead_here = f"{HOST}:999999999:1:tok"  # no such process on this host
    assert not owner_alive(dead_here) and not owner_alive(dead_here, 1.0, 60.0)
    assert not owner_alive(None) and not owner_alive("garbage")


def test_sqlite_heartbeats_and_schema_version(tmp_path):
    db = str(tmp_path / "h.db")
    storage = SQLiteStorage(db, heartbeat_interval=0.1, grace_period=0.5)
    opt = Optimizer(SPACE, storage=storage, random_state=0)
    beats = storage.heartbeats("default")
    assert list(beats) == [opt.owner] and beats[opt.owner][0] < 0.5
    assert beats[opt.owner][1] == 0.1
    time.sleep(0.35)
    assert storage.heartbeats("default")[opt.owner][0] < 0.3  # the thread keeps beating
    opt.close()
    assert storage.heartbeats("default")[opt.owner][0] == float("inf")
    conn = sqlite3.connect(db)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == 1
    conn.execute("PRAGMA user_version=7")
    conn.close()
    with pytest.raises(ValueError, match="newer mfbo"):
        SQLiteStorage(db)


@pytest.mark.parametrize("interval, grace", [(0, 60), (10, 10), (float("nan"), 60), ("1", 60),
                                             (True, 60)])
def test_bad_heartbeat_settings_are_refused(tmp_path, interval, grace):
    with pytest.raises(ValueError, match="heartbeat_interval|grace_period"):
        SQLiteStorage(str(tmp_path / "x.db"), heartbeat_interval=interval, grace_period=grace)


def test_a_killed_worker_of_another_host_is_replaced_after_the_grace_period(tmp_path):
    db = str(tmp_path / "k.db")
    grace = 1.0
    victim = start_worker(db, "k", 8, 0.0, 9, surrogate="random", heartbeat_interval=0.1,
                          grace_period=grace, slow_first=600, host="another-host")
    # opened before the kill: the grace period is timed from it, and a first optimizer of a
    # process spends a while importing what proposals need
    storage = SQLiteStorage(db, heartbeat_interval=0.1, grace_period=grace)
    opt = Optimizer(WORKER_SPACE, storage=storage, study_name="k", surrogate="random",
                    random_state=1)
    trial, killed_at = kill_in_first_evaluation(victim)
    t = opt.ask()
    assert t.id != trial  # within the grace period it is taken to be running
    wait = grace - (time.time() - killed_at) + 0.2
    time.sleep(max(0.0, wait))
    assert opt.ask().id == trial  # asked again after the grace period
    assert journal_check(storage, "k")["claims"] == 1


def check_read_only_handles_write_no_heartbeat(storage, open_reader, rows):
    """A study of ``storage`` read through ``open_reader()`` (the same journal, opened
    read-only once it exists) leaves its heartbeat rows (``rows()``) as they were: neither
    beats nor closing write."""
    from mfbo.study.study import Study
    opt = Optimizer(SPACE, storage=storage, random_state=0)
    t = opt.ask()
    opt.tell(t, 1.0)
    before = rows()
    reader = open_reader()
    reader.beat("default", "far:1:1:reader")
    reader.beat("default", "far:1:1:reader", alive=False)
    study = Study.open(reader, "default")
    assert study.n_finished == 1
    time.sleep(0.2)
    study.close()
    assert rows() == before
    opt.close()


def test_read_only_handles_write_no_heartbeat(tmp_path):
    db = str(tmp_path / "r.db")

    def rows():
        with sqlite3.connect(db) as conn:
            return conn.execute("SELECT * FROM heartbeats ORDER BY owner").fetchall()

    check_read_only_handles_write_no_heartbeat(
        db, lambda: SQLiteStorage(db, read_only=True, heartbeat_interval=0.05,
                                  grace_period=0.2), rows)


def remote_ask(opt, owner, unit):
    """A pending trial asked by ``owner`` (another worker), appended to ``opt``'s study."""
    params = opt.space.from_unit([unit])[0]
    with opt.study.transaction():
        opt.study.refresh()
        opt.study._append("ask", {"id": opt.study.n_trials, "params": params,
                                  "unit": opt.space.to_unit([params])[0].tolist(),
                                  "candidate": None, "owner": owner, "time": time.time()})


def check_heartbeat_rows_are_pruned(where):
    """Optimizers opened and closed on storage ``where`` leave no heartbeat row behind, and
    the row of a silent owner of another host is kept while it holds a pending trial, which
    is then asked again."""
    interval, grace = 0.05, 0.15  # rows older than 10 grace periods (1.5 s) may go

    def storage():
        return as_storage(where, heartbeat_interval=interval, grace_period=grace)

    opt = Optimizer(SPACE, storage=storage(), surrogate="random", random_state=0)
    for seed in range(30):
        other = Optimizer(SPACE, storage=storage(), surrogate="random", random_state=seed)
        if seed % 3 == 0:  # some tell a trial before they close
            t = other.ask()
            other.tell(t, 1.0)
        other.close()
    # two workers of another host beat, then fell silent: one holds a pending trial
    busy, idle = "elsewhere:4242:1:busy", "elsewhere:4243:1:idle"
    remote_ask(opt, busy, [0.5, 0.5])
    silent = opt.study.n_trials - 1
    for owner in (busy, idle):
        storage().beat("default", owner)
    time.sleep(1.7)
    for _ in range(3):
        other = Optimizer(SPACE, storage=storage(), surrogate="random")
        other.close()
    rows = set(opt.storage.heartbeats("default"))
    assert rows - {other.owner} == {opt.owner, busy}
    # the silent worker's trial is asked again (its row was kept), then its row can go
    t = opt.ask()
    assert t.id == silent
    opt.tell(t, 1.0)
    Optimizer(SPACE, storage=storage(), surrogate="random").close()
    rows = set(opt.storage.heartbeats("default"))
    assert opt.owner in rows and busy not in rows and len(rows) <= 2
    opt.close()


def test_heartbeat_rows_are_pruned_and_a_silent_owner_is_still_reclaimed(tmp_path):
    check_heartbeat_rows_are_pruned(str(tmp_path / "p.db"))


def check_pruning_never_fails_a_beat(where):
    """A journal that cannot be read leaves every heartbeat row (the study's replay reports
    it), and the beat is written all the same."""
    def storage():
        return as_storage(where, heartbeat_interval=0.05, grace_period=0.15)

    first = storage()
    first.open_study("default", {"x": {"type": "real", "low": 0.0, "high": 1.0, "log": False}},
                     {})
    first.beat("default", "far:1:1:closed", alive=False)
    first.append("default", "ask", [1, 2])  # not an event a study writes
    storage().beat("default", "far:2:1:other")  # a new handle prunes at its first beat
    assert set(first.heartbeats("default")) == {"far:1:1:closed", "far:2:1:other"}


def test_pruning_never_fails_a_beat(tmp_path):
    check_pruning_never_fails_a_beat(str(tmp_path / "d.db"))


def _journal_ask(db, owner, params):
    """Append a raw ``ask`` event as another process would have written it."""
    space = mfbo.Space(S)
    conn = sqlite3.connect(db)
    n = conn.execute("SELECT COUNT(*) FROM events WHERE kind = 'ask'").fetchone()[0]
    payload = {"id": n, "params": params, "unit": space.to_unit([params])[0].tolist(),
               "candidate": None, "owner": owner, "time": 0.0}
    conn.execute("INSERT INTO events (study, kind, payload, time) VALUES (?, ?, ?, 0)",
                 ("default", "ask", json.dumps(payload)))
    conn.commit()
    conn.close()


@pytest.mark.skipif(not os.path.exists("/proc/self/stat"), reason="needs /proc")
def test_a_reused_pid_does_not_keep_an_orphan_alive(tmp_path):
    db = str(tmp_path / "o.db")
    Optimizer(S, storage=db).close()
    # the pid is alive (this process) but it started at another time: the asker is gone
    _journal_ask(db, f"{socket.gethostname()}:{os.getppid()}:1:abc", {"x": 1.0, "y": 2.0})
    opt = Optimizer(S, storage=db, random_state=0)
    t = opt.ask()
    assert t.id == 0 and t.params == {"x": 1.0, "y": 2.0}  # reclaimed
    # an owner that is this very process's parent with its real start time stays alive
    from mfbo.study.ownership import _process_start
    _journal_ask(db, f"{socket.gethostname()}:{os.getppid()}:{_process_start(os.getppid())}:x",
                 {"x": 2.0, "y": 3.0})
    assert opt.ask().id == 2


def test_orphans_of_other_hosts_are_reported(tmp_path):
    db = str(tmp_path / "h.db")
    mfbo.minimize(f, S, n_calls=4, storage=db, random_state=0, progress_bar=False)
    _journal_ask(db, "elsewhere-host:123:456:tok", {"x": 1.0, "y": 2.0})
    with pytest.warns(UserWarning, match="other hosts .elsewhere-host"):
        Optimizer(S, storage=db)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        r = mfbo.minimize(f, S, n_calls=6, storage=db, random_state=0, progress_bar=False)
    text = " ".join(str(w.message) for w in caught)
    assert "other hosts" in text and "pending trial(s) [4]" in text
    assert sum(t.state != "pending" for t in r.trials) == 5


def test_owner_tokens_of_hosts_with_colons(monkeypatch):
    from mfbo.study import ownership as liveness

    for host in ("::1", "node:1", "fe80::1%eth0"):
        monkeypatch.setattr(liveness, "HOST", host)
        owner = liveness.new_owner()
        assert liveness.owner_host(owner) == host
        assert liveness.owner_alive(owner)  # this process's open owner
        liveness.release(owner)
        assert not liveness.owner_alive(owner)
        parent = os.getppid()  # another live process of this host
        assert liveness.owner_alive(f"{host}:{parent}:{liveness._process_start(parent)}:abc")
        assert not liveness.owner_alive(f"{host}:{parent}:999999999:abc")  # a reused pid
        assert liveness.owner_alive(f"other:{host}:{parent}::abc")  # another host, no beat
    # ... and older tokens without a start time, and tokens of no known form
    assert liveness.owner_host("box:12:abcdef") == "box"
    assert not liveness.owner_alive("no-pid-here")


def test_a_host_name_with_colons_does_not_make_every_owner_look_dead(tmp_path, python_run):
    # MFBO_HOST="::1" used to make every owner look dead: the same pending trial was claimed
    # again and again and minimize(n_workers=3) never returned
    db = str(tmp_path / "h.db")
    proc = python_run(f"""
        import mfbo
        from tests.support import quad, SPACE
        mfbo.minimize(quad, SPACE, n_calls=9, n_workers=3, storage={db!r}, random_state=0,
                      surrogate="random", progress_bar=False)
        from mfbo import SQLiteStorage
        events = SQLiteStorage({db!r}).read("default", 0)
        print(sum(k == "claim" for _, k, _ in events), sum(k == "tell" for _, k, _ in events))
    """, 300, MFBO_HOST="::1")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.split() == ["0", "9"]
