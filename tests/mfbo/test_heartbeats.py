"""Heartbeats and liveness on the SQLite journal, its schema version, and the warning for a
file on a network file system."""

import sqlite3
import time

import pytest

from mfbo import Optimizer, SQLiteStorage
from mfbo.study.ownership import HOST, owner_alive
from mfbo.storage import as_storage, filesystems

from benchmarks.harness.shared_workers import (SPACE as WORKER_SPACE, journal_check,
                                               kill_in_first_evaluation, start_worker)
from tests.support import SPACE


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


MOUNTINFO = """\
22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw
40 22 0:35 / /mnt/shared rw,relatime shared:20 - nfs4 server:/export rw,vers=4.2
41 40 0:36 / /mnt/shared/local\\040disk rw shared:21 - xfs /dev/sdb1 rw
42 22 0:37 / /scratch rw - lustre 10.0.0.1@tcp:/fs rw
"""


def test_filesystem_type_from_the_mount_table():
    assert filesystems.filesystem_type("/home/me", MOUNTINFO) == "ext4"
    assert filesystems.filesystem_type("/mnt/shared/run", MOUNTINFO) == "nfs4"
    assert filesystems.filesystem_type("/mnt/shared/local disk/x", MOUNTINFO) == "xfs"
    assert filesystems.filesystem_type("/mnt/sharedness", MOUNTINFO) == "ext4"
    assert filesystems.filesystem_type("/scratch", MOUNTINFO) == "lustre"


def test_a_sqlite_file_on_a_network_file_system_warns(tmp_path, monkeypatch):
    monkeypatch.setattr("mfbo.storage.sqlite.network_filesystem", lambda path: "nfs4")
    with pytest.warns(UserWarning, match="network file system \\(nfs4\\).*postgresql://"):
        storage = SQLiteStorage(str(tmp_path / "n.db"))
    assert storage.studies() == []  # a warning, not an error
    monkeypatch.undo()
    assert filesystems.network_filesystem(str(tmp_path / "n.db")) is None  # a local disk


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
