"""A durable study journal in one SQLite file, shared by the processes of one host.

SQLite's standard library module, WAL mode, ``synchronous=FULL``: each event is committed
before :meth:`Optimizer.ask`/``tell`` return, as a JSON document (never a pickle), so a process
killed at any moment loses no finished trial.  Several processes that open the same file share
one study: proposals are made inside a write transaction after reading the other processes'
events, so two workers never receive the same trial or the same candidate.

Events: ``ask`` (a new trial: number, params, unit-cube point, candidate row, owner, time, and
the queued configuration it takes, if any), ``claim`` (a pending trial whose owner died is
handed to a new owner), ``tell`` (state, value as told, extra fields, error text, times,
worker) and ``enqueue`` (a configuration to be asked before any proposal).  A study's space and
settings (surrogate, direction, candidate count) are recorded once, when it is created.

WAL mode needs memory shared by the processes, so it works on one computer only; on a network
file system (NFS, SMB/CIFS, Lustre, ...) SQLite's locks are not reliable either.  Opening a
file there warns and names the storage to use instead (PostgreSQL, see
:class:`~mfbo.storage.sql.SQLAlchemyStorage`).
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import sqlite3
import sys
import threading
import time
import urllib.parse
import warnings

from .base import (DEFAULT_GRACE_PERIOD, DEFAULT_HEARTBEAT_INTERVAL, PendingOwners, Storage,
                   StorageLocked, check_heartbeat, check_same_space, stale_owners, to_json)
from .filesystems import network_filesystem

__all__ = ["SQLiteStorage", "SCHEMA_VERSION", "DEFAULT_TIMEOUT"]

#: the layout of the tables this version writes (``PRAGMA user_version``; 0 in files written
#: before it was recorded, which have the same tables but the heartbeats)
SCHEMA_VERSION = 1
#: seconds a process waits for the write lock that another one holds.  A transaction holds it
#: for one ask or tell (the proposals of one ask), so a minute of waiting, even behind a queue
#: of workers, means that the holder is stopped or paused inside its transaction; nothing can
#: take the lock from it, so the waiter says so
DEFAULT_TIMEOUT = 60.0
# where SQLite's WAL mode takes its write lock: a POSIX lock on this byte of the "-shm" file
# (WALINDEX_LOCK_OFFSET + WAL_WRITE_LOCK in SQLite's wal.c); read to name the holder
_WAL_WRITE_LOCK_BYTE = 120
_PROCESS_STATES = {"T": "stopped", "t": "stopped by a debugger", "D": "waiting for a disk",
                   "Z": "ended, not yet reaped"}


def _busy(exc: Exception) -> bool:
    """Whether ``exc`` says that another connection holds a lock SQLite waited for."""
    return isinstance(exc, sqlite3.OperationalError) and ("locked" in str(exc) or
                                                          "busy" in str(exc))


def _write_lock_holder(path: str) -> tuple[int, str] | None:
    """``(pid, state)`` of the process holding the write lock of the WAL database ``path``
    (state: "stopped", "running", ... from ``/proc``), or None where that cannot be told
    (not Linux, no lock seen)."""
    if not sys.platform.startswith("linux"):
        return None
    import fcntl
    import struct
    try:
        fd = os.open(path + "-shm", os.O_RDONLY)
    except OSError:
        return None
    try:
        # struct flock of Linux: l_type, l_whence (short), l_start, l_len (off_t), l_pid
        query = struct.pack("hhqqi", fcntl.F_WRLCK, os.SEEK_SET, _WAL_WRITE_LOCK_BYTE, 1, 0)
        kind, _, _, _, pid = struct.unpack("hhqqi", fcntl.fcntl(fd, fcntl.F_GETLK, query))
    except (OSError, struct.error):
        return None
    finally:
        os.close(fd)
    if kind == fcntl.F_UNLCK or pid <= 0:
        return None
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            code = fh.read().rsplit(b")", 1)[1].split()[0].decode()
    except (OSError, IndexError, UnicodeDecodeError):
        return pid, "state unknown"
    return pid, _PROCESS_STATES.get(code, "running")


class SQLiteStorage(Storage):
    """A durable journal in one SQLite file (WAL mode), shareable between the processes of
    one host.

    Parameters
    ----------
    path : str or path-like
        The database file (created if missing, unless ``create=False``), or a ``file:`` URI.
    timeout : float, default=60
        Seconds to wait for the write lock while another process holds it.  A transaction
        holds it for the time of one ask or tell (a tenth of a second; under a second for a
        batch), so a longer wait means that the holder is stopped or paused inside its
        transaction (SIGSTOP, a suspended job or virtual machine): no other process can take
        the lock from it, so then :class:`~mfbo.storage.base.StorageLocked` is raised, naming
        the process.
    read_only : bool, default=False
        Open the study to read it only (also chosen when the file cannot be written).
    heartbeat_interval : float, default=10
        Seconds between the heartbeats each open optimizer writes from a background thread.
    grace_period : float, default=60
        Seconds without a heartbeat after which an owner's pending trials are asked again
        (an owner on this host whose process has ended is recognised at once).
    create : bool, default=True
        Create the file and its tables where they are missing.  ``False`` opens an existing
        study file only (to inspect a study): a missing file raises ``FileNotFoundError``
        ("no study file ..."), a database without mfbo's tables ``ValueError``; nothing is
        created at a mistyped path.
    """

    def __init__(self, path: str | os.PathLike, timeout: float = DEFAULT_TIMEOUT,
                 read_only: bool = False,
                 heartbeat_interval: float = DEFAULT_HEARTBEAT_INTERVAL,
                 grace_period: float = DEFAULT_GRACE_PERIOD, create: bool = True):
        self.path = os.fspath(path)
        if not isinstance(self.path, str) or not self.path or self.path == ":memory:":
            raise ValueError(f"storage must name a database file, got {path!r} (use "
                             f"storage=None for a study kept in memory).")
        self.heartbeat_interval, self.grace_period = check_heartbeat(heartbeat_interval,
                                                                     grace_period)
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) \
                or not 0 <= timeout < math.inf:
            raise ValueError(f"timeout must be a non-negative number of seconds, got "
                             f"{timeout!r}.")
        self.timeout = float(timeout)
        #: open the study to read it only (also chosen when the file cannot be written)
        self.read_only = bool(read_only)
        #: create the file and its tables where they are missing
        self.create = bool(create)
        self._read_only_asked = self.read_only
        self._conn = None
        self._pid = None
        self._depth = 0
        self._lock = threading.RLock()
        self._pending: dict[str, PendingOwners] = {}  # study -> owners of pending trials
        self._connect()
        fs = network_filesystem(self._file())
        if fs is not None:
            warnings.warn(
                f"storage {self.path!r} is on a network file system ({fs}): SQLite's locks are "
                f"not reliable there and its WAL mode works on one computer only, so processes "
                f"on several machines can corrupt the study.  Keep the file on a local disk, "
                f"or share the study through PostgreSQL (storage=\"postgresql://user@host/db\"), "
                f"or run the workers from one driver (minimize(..., executor=...)).",
                UserWarning, stacklevel=3)

    def __getstate__(self):
        return {"path": self.path, "timeout": self.timeout, "read_only": self._read_only_asked,
                "heartbeat_interval": self.heartbeat_interval,
                "grace_period": self.grace_period, "create": self.create}

    def __setstate__(self, state):
        self.__init__(state["path"], state["timeout"], state.get("read_only", False),
                      state.get("heartbeat_interval", DEFAULT_HEARTBEAT_INTERVAL),
                      state.get("grace_period", DEFAULT_GRACE_PERIOD),
                      state.get("create", True))

    def _file(self) -> str:
        """The database file's path (``file:`` URIs name it after the scheme)."""
        if self.path.startswith("file:"):
            return urllib.parse.unquote(urllib.parse.urlsplit(self.path).path)
        return self.path

    def _connect(self) -> sqlite3.Connection:
        if self._conn is not None and self._pid == os.getpid():
            return self._conn
        path = self._file()
        if not self.create and not os.path.exists(path):
            raise FileNotFoundError(f"no study file {self.path!r} (the storage was opened with "
                                    f"create=False, to open an existing study only).")
        directory = os.path.dirname(os.path.abspath(path))
        if not os.path.isdir(directory):
            raise ValueError(f"storage directory {directory!r} does not exist.")
        if os.path.isdir(path):
            raise ValueError(f"storage {self.path!r} is a directory, not a database file.")
        exists = os.path.exists(path)
        # a study whose file (or directory) cannot be written is opened to be read only
        self.read_only = self._read_only_asked or (exists and not os.access(path, os.W_OK)) \
            or (not exists and not os.access(directory, os.W_OK))
        if self.read_only and not exists:
            raise ValueError(f"storage {self.path!r} does not exist and cannot be created "
                             f"(read-only, or directory {directory!r} not writable).")
        # a busy database (another process creating the schema or switching it to WAL at
        # the same moment can answer "locked" at once, without waiting) is retried until
        # the timeout; any other error means the file is not a study database
        start = time.monotonic()
        while True:
            try:
                conn = self._open_connection(path)
                break
            except sqlite3.DatabaseError as exc:
                if not _busy(exc):
                    raise ValueError(f"storage {self.path!r} is not a readable mfbo study "
                                     f"database ({exc}).") from None
                if time.monotonic() - start >= self.timeout:
                    raise self._locked(time.monotonic() - start) from None
                time.sleep(0.05)
        self._conn, self._pid = conn, os.getpid()
        return conn

    def _open_connection(self, path: str) -> sqlite3.Connection:
        """A new connection to the database, its schema created or checked (closed again if
        that fails)."""
        if self.read_only:
            conn = self._connect_read_only(path)
        else:
            conn = sqlite3.connect(self.path, uri=self.path.startswith("file:"),
                                   timeout=self.timeout, isolation_level=None,
                                   check_same_thread=False)
        try:
            conn.execute("PRAGMA busy_timeout=%d" % int(self.timeout * 1000))
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            if version > SCHEMA_VERSION:
                raise ValueError(f"storage {self.path!r} was written by a newer mfbo (schema "
                                 f"version {version}, this one reads up to {SCHEMA_VERSION}); "
                                 f"upgrade mfbo to open it.")
            if not self.create and conn.execute(
                    "SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'studies'"
            ).fetchone() is None:
                raise ValueError(f"storage {self.path!r} holds no mfbo study (it was opened "
                                 f"with create=False, to open an existing study only).")
            if not self.read_only:
                conn.execute("PRAGMA journal_mode=WAL")
                conn.execute("PRAGMA synchronous=FULL")
                conn.execute("CREATE TABLE IF NOT EXISTS studies (name TEXT PRIMARY KEY, space "
                             "TEXT NOT NULL, config TEXT NOT NULL, created REAL NOT NULL)")
                conn.execute("CREATE TABLE IF NOT EXISTS events (id INTEGER PRIMARY KEY "
                             "AUTOINCREMENT, study TEXT NOT NULL, kind TEXT NOT NULL, payload "
                             "TEXT NOT NULL, time REAL NOT NULL)")
                conn.execute("CREATE INDEX IF NOT EXISTS events_study ON events (study, id)")
                conn.execute("CREATE TABLE IF NOT EXISTS heartbeats (study TEXT NOT NULL, owner "
                             "TEXT NOT NULL, time REAL NOT NULL, interval REAL NOT NULL, PRIMARY KEY (study, "
                             "owner))")
                if version < SCHEMA_VERSION:
                    conn.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
            conn.execute("SELECT name FROM studies LIMIT 1").fetchall()
        except BaseException:
            conn.close()
            raise
        return conn

    def _connect_read_only(self, path: str) -> sqlite3.Connection:
        """A connection that never writes.  A WAL database needs its shared-memory file to be
        read; where it cannot be made (a read-only directory) the file is read as immutable."""
        base = "file:" + urllib.parse.quote(os.path.abspath(path))

        def connect(flags):
            conn = sqlite3.connect(base + flags, uri=True, timeout=self.timeout,
                                   isolation_level=None, check_same_thread=False)
            conn.execute("SELECT name FROM studies LIMIT 1").fetchall()
            return conn

        try:
            return connect("?mode=ro")
        except sqlite3.OperationalError:
            return connect("?immutable=1")

    def open_study(self, name, space, config):
        with self.transaction(name, read=True):
            row = self._connect().execute("SELECT space, config FROM studies WHERE name = ?",
                                          (name,)).fetchone()
            if row is not None:
                stored_space, stored_config = (self._decode(x, f"study {name!r}") for x in row)
                check_same_space(name, stored_space, space)
                return stored_config
            self._writable()
            self._connect().execute("INSERT INTO studies VALUES (?, ?, ?, ?)",
                                    (name, to_json(space), to_json(config), time.time()))
            return json.loads(to_json(config))

    def _locked(self, waited: float) -> StorageLocked:
        """The error of a wait for the write lock that outlasted the timeout."""
        holder = _write_lock_holder(os.path.abspath(self._file()))
        who = "another process" if holder is None else \
            f"another process, process {holder[0]} ({holder[1]}),"
        resume = "" if holder is None else f" (kill -CONT {holder[0]})"
        return StorageLocked(
            f"storage {self.path!r}: {who} has held the write lock of the study file for "
            f"{waited:.1f} s, longer than this storage waits (timeout={self.timeout:g} s); it is "
            f"probably stopped or paused inside a transaction (SIGSTOP, Ctrl-Z, a suspended "
            f"virtual machine).  Resume it{resume} or end it, then try again (nothing of this "
            f"transaction was recorded); if transactions may legitimately take that long, "
            f"open the storage with a longer timeout.")

    def _writable(self) -> None:
        if self.read_only:
            raise PermissionError(f"storage {self.path!r} is read-only: its study can be read "
                                  f"but not changed.")

    def _decode(self, text: str, what: str):
        try:
            return json.loads(text)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"storage {self.path!r}: {what} is not valid JSON ({exc}); the "
                             f"file is damaged.") from None

    @contextlib.contextmanager
    def transaction(self, study: str | None = None, read: bool = False):
        """One write transaction on the whole file (``BEGIN IMMEDIATE``: SQLite has one writer
        at a time, so events get ids in commit order); ``read`` on a read-only storage."""
        with self._lock:
            conn = self._connect()
            outer = self._depth == 0
            if outer:
                start = time.monotonic()
                try:
                    conn.execute("BEGIN" if read and self.read_only else "BEGIN IMMEDIATE")
                except sqlite3.OperationalError as exc:
                    if _busy(exc):  # the busy timeout passed
                        raise self._locked(time.monotonic() - start) from None
                    raise
            self._depth += 1
            try:
                yield
            except BaseException:
                self._depth -= 1
                if outer:
                    conn.execute("ROLLBACK")
                raise
            self._depth -= 1
            if outer:
                conn.execute("COMMIT")

    def append(self, study, kind, payload):
        self._writable()
        with self.transaction():
            cur = self._connect().execute(
                "INSERT INTO events (study, kind, payload, time) VALUES (?, ?, ?, ?)",
                (study, kind, to_json(payload), time.time()))
            return int(cur.lastrowid)

    def read(self, study, after, limit=None):
        with self._lock:
            try:
                rows = self._connect().execute(
                    "SELECT id, kind, payload FROM events WHERE study = ? AND id > ? ORDER BY "
                    "id LIMIT ?", (study, int(after), -1 if limit is None else int(limit))
                ).fetchall()
            except sqlite3.DatabaseError as exc:
                raise ValueError(f"storage {self.path!r} cannot be read ({exc}); the file is "
                                 f"damaged.") from None
        return [(int(i), k, self._decode(p, f"event {i}")) for i, k, p in rows]

    def studies(self) -> list[str]:
        """Names of the studies in this file."""
        with self._lock:
            return [r[0] for r in self._connect().execute("SELECT name FROM studies ORDER BY created")]

    def stored_study(self, name):
        with self._lock:
            row = self._connect().execute("SELECT space, config FROM studies WHERE name = ?",
                                          (name,)).fetchone()
        if row is None:
            return None
        return tuple(self._decode(x, f"study {name!r}") for x in row)

    def close(self):
        # under the lock: a heartbeat thread may be using the connection
        with self._lock:
            if self._conn is not None and self._pid == os.getpid():
                self._conn.close()
            self._conn = None

    def beat(self, study, owner, alive=True):
        """Record the beat (nothing on a read-only storage) and, at most once a grace period,
        delete the rows no longer needed (see :func:`~mfbo.storage.base.stale_owners`)."""
        if self.read_only:
            return
        with self.transaction(study):
            self._connect().execute(
                "INSERT OR REPLACE INTO heartbeats VALUES (?, ?, ?, ?)",
                (study, owner, time.time() if alive else -math.inf, self.heartbeat_interval))
        if self._prune_due(study):
            self._prune(study, owner)

    def _prune(self, study: str, owner: str) -> None:
        """Delete the heartbeat rows of ``study`` (but ``owner``'s) whose owners are stale and
        hold no pending trial, in a write transaction, so that every event is there.  It is
        housekeeping, in a transaction of its own: any failure (a damaged file, which SQLite
        then refuses to commit anything to, left for the study's replay to report) keeps every
        row and does not fail the beat."""
        try:
            with self.transaction(study):
                conn = self._connect()
                now = time.time()
                rows = conn.execute("SELECT owner, time, interval FROM heartbeats WHERE study = "
                                    "? AND owner != ?", (study, owner)).fetchall()
                stale = stale_owners([(o, now - t, i) for o, t, i in rows], self.grace_period)
                if not stale:
                    return
                pending = self._pending.setdefault(study, PendingOwners())
                events = conn.execute(
                    "SELECT id, kind, payload FROM events WHERE study = ? AND id > ? AND kind "
                    "IN (?, ?, ?) ORDER BY id", (study, pending.last, *PendingOwners.KINDS)
                ).fetchall()
                pending.update((i, k, json.loads(p)) for i, k, p in events)
                holders = pending.holders()
                conn.executemany("DELETE FROM heartbeats WHERE study = ? AND owner = ?",
                                 [(study, o) for o in stale if o not in holders])
        except Exception:  # noqa: BLE001 - see above
            pass

    def heartbeats(self, study):
        with self._lock:
            try:
                rows = self._connect().execute(
                    "SELECT owner, time, interval FROM heartbeats WHERE study = ?",
                    (study,)).fetchall()
            except sqlite3.OperationalError:  # a file written before heartbeats, read only
                return {}
        now = time.time()
        return {owner: (max(0.0, now - t), interval) for owner, t, interval in rows}
