"""The SQLite journal: durability, resume, a real kill, several processes sharing a study;
damaged and read-only databases, and where a storage path leads."""

import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

import mfbo
from mfbo import Optimizer, SQLiteStorage
from tests.support import BOX as S, ROOT, SPACE, box_quad as f, quad, wait_until_stopped


def test_journal_is_json_and_resume_replays(tmp_path):
    db = str(tmp_path / "study.db")
    opt = Optimizer(SPACE, random_state=0, storage=db, n_random_candidates=128)
    for _ in range(8):
        t = opt.ask()
        opt.tell(t, {"loss": quad(**t.params), "note": "ok"})
    pending = opt.ask()
    opt.close()
    rows = sqlite3.connect(db).execute("SELECT kind, payload FROM events").fetchall()
    assert [k for k, _ in rows].count("tell") == 8
    for _, payload in rows:
        json.loads(payload)  # every event is plain JSON, never a pickle
    assert sqlite3.connect(db).execute("PRAGMA journal_mode").fetchone()[0] == "wal"

    again = Optimizer(SPACE, random_state=0, storage=db, n_random_candidates=128)
    assert again.n_finished == 8 and again.trials[3].extra == {"note": "ok"}
    assert again.model.forest.n_samples_seen_ == 8  # replayed into the surrogate
    # the pending trial of the closed optimizer is asked again, not lost
    t = again.ask()
    assert t.id == pending.id and t.params == pending.params
    again.tell(t, quad(**t.params))
    assert again.ask().id == 9


def test_other_space_is_refused(tmp_path):
    db = str(tmp_path / "s.db")
    Optimizer(SPACE, storage=db)
    with pytest.raises(ValueError, match="different space"):
        Optimizer({"x": (0.0, 1.0)}, storage=db)
    Optimizer({"x": (0.0, 1.0)}, storage=db, study_name="other")  # another study is fine
    assert SQLiteStorage(db).studies() == ["default", "other"]


def test_minimize_resumes_to_n_calls(tmp_path):
    db = str(tmp_path / "m.db")
    r1 = mfbo.minimize(quad, SPACE, n_calls=6, storage=db, random_state=0, progress_bar=False)
    r2 = mfbo.minimize(quad, SPACE, n_calls=10, storage=db, random_state=0, progress_bar=False)
    assert len(r1.trials) == 6 and len(r2.trials) == 10
    assert [t.params for t in r2.trials[:6]] == [t.params for t in r1.trials]


SCRIPT = textwrap.dedent("""
    import sys, time
    sys.path.insert(0, {root!r})
    import mfbo
    def f(x, y):
        time.sleep(0.15)
        return (x - 0.3) ** 2 + (y + 0.2) ** 2
    mfbo.minimize(f, {{"x": (-1.0, 1.0), "y": (-1.0, 1.0)}}, n_calls=200, storage={db!r},
                  random_state=0, progress_bar=False, n_random_candidates=128)
""")


def _count(db, kind):
    try:
        with sqlite3.connect(db, timeout=30) as c:
            return c.execute("SELECT COUNT(*) FROM events WHERE kind = ?", (kind,)).fetchone()[0]
    except sqlite3.OperationalError:
        return 0


def test_killed_process_loses_no_finished_trial(tmp_path):
    db = str(tmp_path / "kill.db")
    script = tmp_path / "run.py"
    script.write_text(SCRIPT.format(root=str(ROOT), db=db))
    proc = subprocess.Popen([sys.executable, str(script)])
    deadline = time.time() + 180
    while _count(db, "tell") < 6 and time.time() < deadline and proc.poll() is None:
        time.sleep(0.1)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    told = _count(db, "tell")
    assert told >= 6
    # a fresh process sees every finished trial and finishes the study
    r = mfbo.minimize(quad, SPACE, n_calls=told + 3, storage=db, random_state=0,
                      progress_bar=False, n_random_candidates=128)
    assert sum(t.state != "pending" for t in r.trials) == told + 3
    assert all(t.state != "pending" for t in r.trials)  # the killed one was re-asked


WORKER = textwrap.dedent("""
    import sys, time
    sys.path.insert(0, {root!r})
    import mfbo
    def f(x, y):
        time.sleep(0.05)
        return (x - 0.3) ** 2 + (y + 0.2) ** 2
    mfbo.minimize(f, {{"x": (-1.0, 1.0), "y": (-1.0, 1.0)}}, n_calls=24, storage={db!r},
                  random_state=int(sys.argv[1]), progress_bar=False, n_random_candidates=128)
""")


def test_two_processes_share_one_study_without_duplicates(tmp_path):
    db = str(tmp_path / "shared.db")
    script = tmp_path / "worker.py"
    script.write_text(WORKER.format(root=str(ROOT), db=db))
    procs = [subprocess.Popen([sys.executable, str(script), str(s)]) for s in (0, 0)]
    assert [p.wait(timeout=300) for p in procs] == [0, 0]
    opt = Optimizer(SPACE, storage=db)
    finished = [t for t in opt.trials if t.state != "pending"]
    assert len(finished) >= 24 and len(opt.trials) <= 25
    points = {tuple(t.params.values()) for t in opt.trials}
    assert len(points) == len(opt.trials)  # same seed in both processes, still no duplicate
    owners = {t.owner.split(":")[1] for t in opt.trials}
    assert len(owners) == 2  # both processes contributed


def _failing_opens(monkeypatch, errors):
    """Make ``SQLiteStorage._open_connection`` raise ``errors`` in turn before it opens; the
    number of calls so far is in the returned list."""
    calls = []
    real = SQLiteStorage._open_connection

    def opening(self, path):
        calls.append(time.monotonic())
        if len(calls) <= len(errors):
            raise errors[len(calls) - 1]
        return real(self, path)
    monkeypatch.setattr(SQLiteStorage, "_open_connection", opening)
    return calls


def test_a_database_that_answers_locked_at_once_is_retried_until_it_opens(tmp_path, monkeypatch):
    # what two processes creating the schema or switching to WAL together can get
    locked = [sqlite3.OperationalError("database is locked"),
              sqlite3.OperationalError("database table is locked"),
              sqlite3.OperationalError("database is busy")]
    calls = _failing_opens(monkeypatch, locked)
    storage = SQLiteStorage(str(tmp_path / "s.db"), timeout=30)
    assert len(calls) == 4
    opt = Optimizer(SPACE, random_state=0, storage=storage, n_random_candidates=64)
    t = opt.ask()
    opt.tell(t, quad(**t.params))
    assert opt.n_finished == 1


def test_a_lock_that_outlasts_the_timeout_or_another_error_is_a_clear_error(tmp_path,
                                                                            monkeypatch):
    from mfbo.storage import StorageLocked
    calls = _failing_opens(monkeypatch, [sqlite3.OperationalError("database is locked")] * 1000)
    start = time.monotonic()
    with pytest.raises(StorageLocked, match="another process has held the write lock.*"
                                            "timeout=0.3 s"):
        SQLiteStorage(str(tmp_path / "s.db"), timeout=0.3)
    assert 0.3 <= time.monotonic() - start < 10 and len(calls) > 1
    # any other error: at once, no retry
    calls = _failing_opens(monkeypatch, [sqlite3.OperationalError("disk I/O error")])
    with pytest.raises(ValueError, match="disk I/O error"):
        SQLiteStorage(str(tmp_path / "t.db"), timeout=30)
    assert len(calls) == 1


def test_a_study_waits_for_a_writer_that_holds_the_database(tmp_path):
    import threading

    path = str(tmp_path / "s.db")
    SQLiteStorage(path)  # the schema exists, in WAL mode
    holder = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    holder.execute("BEGIN EXCLUSIVE")
    release = threading.Timer(0.5, lambda: holder.execute("COMMIT"))
    release.start()
    try:
        start = time.monotonic()
        storage = SQLiteStorage(path, timeout=30)
        opt = Optimizer(SPACE, random_state=0, storage=storage, n_random_candidates=64)
        t = opt.ask()
        opt.tell(t, quad(**t.params))
        assert opt.n_finished == 1 and time.monotonic() - start >= 0.4
    finally:
        release.join()
        holder.close()


FROZEN_WRITER = textwrap.dedent("""
    import os, signal, sys
    sys.path.insert(0, {root!r})
    from mfbo import SQLiteStorage
    storage = SQLiteStorage({db!r})
    with storage.transaction("default"):
        storage.append("default", "enqueue", {{"number": 0, "params": {{"x": 0.5, "y": 0.5}},
                                               "time": 0}})
        print("locked", flush=True)
        os.kill(os.getpid(), signal.SIGSTOP)
""")


def test_a_writer_frozen_in_a_transaction_is_a_clear_error_within_the_timeout(tmp_path):
    from mfbo.storage import StorageLocked, StorageUnavailable
    db = str(tmp_path / "frozen.db")
    Optimizer(SPACE, storage=db).close()  # the study exists
    assert SQLiteStorage(db).timeout == 60.0  # the default
    script = tmp_path / "frozen.py"
    script.write_text(FROZEN_WRITER.format(root=str(ROOT), db=db))
    proc = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "locked"
        wait_until_stopped(proc.pid)
        start = time.monotonic()
        with pytest.raises(StorageLocked) as info:
            Optimizer(SPACE, storage=SQLiteStorage(db, timeout=0.5))
        waited = time.monotonic() - start
    finally:
        proc.kill()  # a stopped process is killed as well
        proc.send_signal(signal.SIGCONT) if proc.poll() is None else None
        proc.wait()
    assert 0.5 <= waited < 5
    assert isinstance(info.value, StorageUnavailable) and isinstance(info.value, TimeoutError)
    message = str(info.value)
    assert db in message and "0.5 s" in message and "timeout" in message
    assert f"process {proc.pid} (stopped)" in message and f"kill -CONT {proc.pid}" in message
    # the frozen transaction died with its process: nothing of it recorded, the study goes on
    opt = Optimizer(SPACE, storage=SQLiteStorage(db, timeout=5), random_state=0)
    assert opt.study.queued == []
    t = opt.ask()
    opt.tell(t, quad(**t.params))
    assert opt.n_finished == 1


def test_retrying_counts_its_time_from_the_first_failure():
    from mfbo.storage import StorageUnavailable
    from mfbo.storage.base import retrying
    calls = []

    def attempt():
        calls.append(time.monotonic())
        if len(calls) == 1:
            time.sleep(0.3)  # as a process stopped inside its transaction for longer
            raise StorageUnavailable("the server ended the session")
        return "done"

    assert retrying(attempt, 0.2) == "done" and len(calls) == 2

    def failing():
        calls.append(time.monotonic())
        raise StorageUnavailable("down")

    calls.clear()
    with pytest.raises(StorageUnavailable):
        retrying(failing, 0)  # no time: tried once
    assert len(calls) == 1


#: spaces that differ from ``{"a": (0.0, 1.0), "b": (0, 10)}``, and how the refusal names it
OTHER_SPACES = [
    ({"b": (0, 10), "a": (0.0, 1.0)},
     r"same dimensions in another order: stored \['a', 'b'\], given \['b', 'a'\]"),
    ({"a": (0.0, 2.0), "b": (0, 10)},
     r"dimension 'a': stored Real\(0.0, 1.0\), given Real\(0.0, 2.0\)"),
    ({"a": (0.0, 1.0), "b": ["u", "v"]},
     r"dimension 'b': stored Integer\(0, 10\), given Categorical\(\['u', 'v'\]\)"),
    ({"a": (0.0, 1.0)}, r"missing dimension \['b'\]"),
    ({"a": (0.0, 1.0), "b": (0, 10), "c": ["u", "v"], "d": (1, 2)},
     r"extra dimensions \['c', 'd'\]"),
    ({"b": (0, 10), "c": (0.0, 1.0)}, r"missing dimension \['a'\].*extra dimension \['c'\]"),
]


def check_other_spaces_are_named(storage):
    """Reopening a study of ``storage`` with another space names the difference."""
    opt = Optimizer({"a": (0.0, 1.0), "b": (0, 10)}, storage=storage, random_state=0)
    for _ in range(3):
        t = opt.ask()
        opt.tell(t, 1.0)
    opt.close()
    for space, message in OTHER_SPACES:
        with pytest.raises(ValueError, match="study 'default' already exists in this storage "
                                             "with a different space: " + message):
            Optimizer(space, storage=storage)
    assert Optimizer({"a": (0.0, 1.0), "b": (0, 10)}, storage=storage).n_finished == 3


def test_another_space_is_named_precisely(tmp_path):
    check_other_spaces_are_named(str(tmp_path / "space.db"))
    check_other_spaces_are_named(mfbo.storage.InMemoryStorage())


def test_create_false_opens_an_existing_study_file_only(tmp_path):
    import re
    from mfbo.storage import as_storage
    missing = tmp_path / "typo.db"
    opening = [lambda: SQLiteStorage(missing, create=False),
               lambda: SQLiteStorage(missing, create=False, read_only=True),
               lambda: as_storage(str(missing), create=False),
               lambda: as_storage(f"sqlite:///{missing}", create=False)]
    for open_it in opening:
        named = f"no study file {re.escape(repr(str(missing)))}"
        with pytest.raises(FileNotFoundError, match=named):
            open_it()
    with pytest.raises(FileNotFoundError, match="no study file"):
        as_storage(str(tmp_path / "no-such-dir" / "s.db"), create=False)
    assert list(tmp_path.iterdir()) == []  # nothing created
    # a database that holds no study is not made into one
    other = tmp_path / "other.db"
    with sqlite3.connect(other) as conn:
        conn.execute("CREATE TABLE t (x)")
    size = other.stat().st_size
    with pytest.raises(ValueError, match="holds no mfbo study"):
        as_storage(str(other), create=False)
    assert other.stat().st_size == size and sorted(p.name for p in tmp_path.iterdir()) == \
        ["other.db"]
    # an existing study opens, and a Storage (or None) is taken as it is
    db = str(tmp_path / "s.db")
    Optimizer(SPACE, storage=db).close()
    storage = as_storage(db, create=False)
    assert isinstance(storage, SQLiteStorage) and storage.studies() == ["default"]
    assert as_storage(storage, create=False) is storage
    assert as_storage(None, create=False).studies() == []


def check_reads_in_pages(storage):
    """``read(study, after, limit)`` returns the first ``limit`` events after ``after``, and
    :func:`read_in_pages` gives the whole journal, none skipped or read twice, whatever the
    page size."""
    from mfbo.storage.base import read_in_pages

    opt = Optimizer({"a": (0.0, 1.0)}, storage=storage, random_state=0, surrogate="random")
    for _ in range(7):
        opt.tell(opt.ask(), 1.0)
    store = opt.storage
    every = store.read("default", 0)
    assert len(every) == 14 and store.read("default", 0, limit=None) == every
    assert store.read("default", every[2][0], limit=3) == every[3:6]
    assert store.read("default", every[-1][0], limit=5) == []
    for page in (1, 3, 14, 100):
        assert list(read_in_pages(store, "default", page=page)) == every
    assert list(read_in_pages(store, "default", every[9][0], page=2)) == every[10:]
    opt.close()


def test_reads_in_pages(tmp_path):
    check_reads_in_pages(str(tmp_path / "pages.db"))
    check_reads_in_pages(mfbo.storage.InMemoryStorage())


def test_a_damaged_database_gives_a_clear_error(tmp_path):
    db = str(tmp_path / "d.db")
    mfbo.minimize(f, S, n_calls=40, storage=db, random_state=0, progress_bar=False)
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    data = open(db, "rb").read()
    for frac in (0.3, 0.6, 0.95):
        bad = str(tmp_path / f"t{frac}.db")
        with open(bad, "wb") as fh:
            fh.write(data[:int(len(data) * frac)])
        with pytest.raises(ValueError, match="damaged|not a readable"):
            Optimizer(S, storage=bad)
    rnd = str(tmp_path / "r.db")
    with open(rnd, "wb") as fh:
        fh.write(np.random.default_rng(0).bytes(5000))
    with pytest.raises(ValueError, match="not a readable mfbo study"):
        Optimizer(S, storage=rnd)


def test_storage_paths(tmp_path):
    with pytest.raises(ValueError, match="storage=None"):
        Optimizer(S, storage="")
    with pytest.raises(ValueError, match="is a directory"):
        Optimizer(S, storage=str(tmp_path))
    uri = "file:" + str(tmp_path / "u.db")
    opt = Optimizer(S, storage=uri, random_state=0)
    opt.tell(opt.ask(), 1.0)
    assert os.path.exists(tmp_path / "u.db") and not os.path.exists("file:")
    assert Optimizer(S, storage=str(tmp_path / "u.db")).n_finished == 1


def test_a_read_only_study_can_be_read(tmp_path):
    db = str(tmp_path / "r.db")
    mfbo.minimize(f, S, n_calls=5, storage=db, random_state=0, progress_bar=False)
    opt = Optimizer(S, storage=SQLiteStorage(db, read_only=True))
    assert opt.n_finished == 5 and opt.result().best_value == pytest.approx(
        min(t.value for t in opt.trials))
    with pytest.raises(PermissionError, match="read-only"):
        opt.ask()
    with pytest.raises(PermissionError, match="read-only"):
        Optimizer(S, storage=SQLiteStorage(db, read_only=True), study_name="new")
    assert Optimizer(S, storage=db).n_finished == 5  # the file is unchanged


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0,
                    reason="root can write read-only files")
def test_a_read_only_file_is_opened_read_only(tmp_path):
    db = str(tmp_path / "r.db")
    mfbo.minimize(f, S, n_calls=5, storage=db, random_state=0, progress_bar=False)
    os.chmod(db, 0o444)
    os.chmod(tmp_path, 0o555)
    try:
        opt = Optimizer(S, storage=db)
        assert opt.n_finished == 5
        with pytest.raises(PermissionError, match="read-only"):
            opt.ask()
    finally:
        os.chmod(tmp_path, 0o755)
