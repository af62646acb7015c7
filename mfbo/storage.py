"""The study journal: every ask and tell of a study as an append-only sequence of events.

Two backends with one small interface (Optuna's storage idea, journal style):

* :class:`InMemoryStorage` for a study that lives in one process;
* :class:`SQLiteStorage` (stdlib ``sqlite3``, WAL mode, ``synchronous=FULL``): each event is
  committed before :meth:`Optimizer.ask`/``tell`` return, as a JSON document (never a pickle),
  so a process killed at any moment loses no finished trial.  Several processes that open the
  same file share one study: proposals are made inside a write transaction after reading the
  other processes' events, so two workers never receive the same trial or the same candidate.

Events: ``ask`` (a new trial: number, params, unit-cube point, candidate row, owner, time, and
the queued configuration it takes, if any), ``claim`` (a pending trial whose owner died is
handed to a new owner), ``tell`` (state, value as told, extra fields, error text, times,
worker) and ``enqueue`` (a configuration to be asked before any proposal).  The optimizer's
state is a replay of them.  A study's space and settings (surrogate, direction, candidate
count) are recorded once, when it is created.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import threading
import time
import urllib.parse
from typing import Any, Iterator

import numpy as np

__all__ = ["Storage", "InMemoryStorage", "SQLiteStorage", "as_storage", "to_json"]


def _plain(obj):
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, (set, tuple)):
        return list(obj)
    return repr(obj)


def to_json(obj: Any) -> str:
    """JSON text of ``obj``; numpy values become plain numbers, anything else its ``repr``.

    Non-finite floats are kept (``NaN``/``Infinity``, as Python's json module writes them)."""
    return json.dumps(obj, default=_plain, allow_nan=True, separators=(",", ":"))


class Storage:
    """Interface of a study journal."""

    def open_study(self, name: str, space: dict, config: dict) -> dict:
        """Create the study or check that an existing one has the same space; returns the
        stored config (which wins for settings that must not change on resume)."""
        raise NotImplementedError

    @contextlib.contextmanager
    def transaction(self) -> Iterator[None]:
        """Exclusive section: reads inside see every committed event; appends are committed
        when it ends."""
        raise NotImplementedError
        yield  # pragma: no cover

    def append(self, study: str, kind: str, payload: dict) -> int:
        raise NotImplementedError

    def studies(self) -> list[str]:
        """Names of the studies in this storage, oldest first."""
        raise NotImplementedError

    def stored_study(self, name: str) -> tuple[dict, dict] | None:
        """``(space, config)`` as recorded when study ``name`` was created, or None when the
        storage has no such study; creates nothing."""
        raise NotImplementedError

    def read(self, study: str, after: int) -> list[tuple[int, str, dict]]:
        """Events of ``study`` with id greater than ``after``, in order."""
        raise NotImplementedError

    def close(self) -> None:
        pass


class InMemoryStorage(Storage):
    """A journal that lives as long as the process (the default)."""

    def __init__(self):
        self._studies: dict[str, tuple[dict, dict]] = {}
        self._events: list[tuple[int, str, str, dict]] = []
        self._lock = threading.RLock()
        self._depth = 0

    def open_study(self, name, space, config):
        with self._lock:
            if name in self._studies:
                stored_space, stored_config = self._studies[name]
                _check_same_space(name, stored_space, space)
                return stored_config
            self._studies[name] = (json.loads(to_json(space)), json.loads(to_json(config)))
            return self._studies[name][1]

    @contextlib.contextmanager
    def transaction(self):
        """As SQLite's: the events appended inside are dropped again if it raises."""
        with self._lock:
            start = len(self._events)
            self._depth += 1
            try:
                yield
            except BaseException:
                if self._depth == 1:
                    del self._events[start:]
                raise
            finally:
                self._depth -= 1

    def append(self, study, kind, payload):
        with self._lock:
            eid = len(self._events) + 1
            self._events.append((eid, study, kind, json.loads(to_json(payload))))
            return eid

    def read(self, study, after):
        with self._lock:
            return [(e, k, p) for e, s, k, p in self._events[after:] if s == study]

    def studies(self):
        with self._lock:
            return list(self._studies)

    def stored_study(self, name):
        with self._lock:
            record = self._studies.get(name)
            return None if record is None else json.loads(to_json(record))


def _check_same_space(name, stored, space):
    if json.loads(to_json(stored)) != json.loads(to_json(space)):
        raise ValueError(f"study {name!r} already exists in this storage with a different space: "
                         f"stored {stored}, given {space}. Use another study_name or storage.")


class SQLiteStorage(Storage):
    """A durable journal in one SQLite file (WAL mode), shareable between processes."""

    def __init__(self, path: str | os.PathLike, timeout: float = 600.0, read_only: bool = False):
        self.path = os.fspath(path)
        if not isinstance(self.path, str) or not self.path or self.path == ":memory:":
            raise ValueError(f"storage must name a database file, got {path!r} (use "
                             f"storage=None for a study kept in memory).")
        self.timeout = float(timeout)
        #: open the study to read it only (also chosen when the file cannot be written)
        self.read_only = bool(read_only)
        self._read_only_asked = self.read_only
        self._conn = None
        self._pid = None
        self._depth = 0
        self._lock = threading.RLock()
        self._connect()

    def __getstate__(self):
        return {"path": self.path, "timeout": self.timeout, "read_only": self._read_only_asked}

    def __setstate__(self, state):
        self.__init__(state["path"], state["timeout"], state.get("read_only", False))

    def _file(self) -> str:
        """The database file's path (``file:`` URIs name it after the scheme)."""
        if self.path.startswith("file:"):
            return urllib.parse.unquote(urllib.parse.urlsplit(self.path).path)
        return self.path

    def _connect(self) -> sqlite3.Connection:
        if self._conn is not None and self._pid == os.getpid():
            return self._conn
        path = self._file()
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
        try:
            if self.read_only:
                conn = self._connect_read_only(path)
            else:
                conn = sqlite3.connect(self.path, uri=self.path.startswith("file:"),
                                       timeout=self.timeout, isolation_level=None,
                                       check_same_thread=False)
            conn.execute("PRAGMA busy_timeout=%d" % int(self.timeout * 1000))
            if not self.read_only:
                conn.execute("PRAGMA journal_mode=WAL")
                conn.execute("PRAGMA synchronous=FULL")
                conn.execute("CREATE TABLE IF NOT EXISTS studies (name TEXT PRIMARY KEY, space "
                             "TEXT NOT NULL, config TEXT NOT NULL, created REAL NOT NULL)")
                conn.execute("CREATE TABLE IF NOT EXISTS events (id INTEGER PRIMARY KEY "
                             "AUTOINCREMENT, study TEXT NOT NULL, kind TEXT NOT NULL, payload "
                             "TEXT NOT NULL, time REAL NOT NULL)")
                conn.execute("CREATE INDEX IF NOT EXISTS events_study ON events (study, id)")
            conn.execute("SELECT name FROM studies LIMIT 1").fetchall()
        except sqlite3.DatabaseError as exc:
            raise ValueError(f"storage {self.path!r} is not a readable mfbo study database "
                             f"({exc}).") from None
        self._conn, self._pid = conn, os.getpid()
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
        with self.transaction(read=True):
            row = self._connect().execute("SELECT space, config FROM studies WHERE name = ?",
                                          (name,)).fetchone()
            if row is not None:
                stored_space, stored_config = (self._decode(x, f"study {name!r}") for x in row)
                _check_same_space(name, stored_space, space)
                return stored_config
            self._writable()
            self._connect().execute("INSERT INTO studies VALUES (?, ?, ?, ?)",
                                    (name, to_json(space), to_json(config), time.time()))
            return json.loads(to_json(config))

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
    def transaction(self, read: bool = False):
        with self._lock:
            conn = self._connect()
            outer = self._depth == 0
            if outer:
                conn.execute("BEGIN" if read and self.read_only else "BEGIN IMMEDIATE")
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

    def read(self, study, after):
        with self._lock:
            try:
                rows = self._connect().execute(
                    "SELECT id, kind, payload FROM events WHERE study = ? AND id > ? ORDER BY "
                    "id", (study, int(after))).fetchall()
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
        if self._conn is not None and self._pid == os.getpid():
            self._conn.close()
        self._conn = None


def as_storage(storage) -> Storage:
    """``None`` → in memory; a path (``str``/``PathLike``, e.g. ``"study.db"``) → SQLite;
    a :class:`Storage` is used as it is."""
    if storage is None:
        return InMemoryStorage()
    if isinstance(storage, Storage):
        return storage
    if isinstance(storage, (str, os.PathLike)):
        path = os.fspath(storage)
        if isinstance(path, bytes):
            path = os.fsdecode(path)
        if path.startswith("sqlite:///"):
            path = path[len("sqlite:///"):]
        return SQLiteStorage(path)
    raise TypeError(f"storage must be None, a file path or a Storage, got {type(storage).__name__}.")
