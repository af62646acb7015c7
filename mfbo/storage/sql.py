"""A study journal in a PostgreSQL database, shared by processes on many machines.

The same journal as :class:`~mfbo.storage.sqlite.SQLiteStorage` (one JSON document per event,
replayed; never a pickle), in four tables through SQLAlchemy: ``mfbo_version`` (the schema
version, checked when a process connects), ``mfbo_studies``, ``mfbo_events`` and
``mfbo_heartbeats``.  Several studies share one database and are kept apart by their names.

Ordering.  The write transactions of one study are serialised by a PostgreSQL advisory lock
on the study (``pg_advisory_xact_lock``, taken when the transaction starts, released when it
commits), so proposals are made from every event committed before, and two workers never get
the same point.  Each event gets the next position of its study (``seq``, the primary key with
the study), assigned under that lock: positions are committed in order, with no gap, so a
reader that has seen position ``n`` has seen every earlier event (plain sequence ids could be
committed out of order and be skipped by a reader).

Stopped workers.  A worker stopped or paused inside a transaction (SIGSTOP, a suspended virtual
machine, a network partition) would hold its study's lock for ever: every connection asks the
server to end its session once it has sat idle inside a transaction for
``idle_in_transaction_timeout`` seconds, which rolls the transaction back and frees the lock,
and bounds every wait for a lock by ``lock_timeout`` seconds, after which the transaction is
tried again (a lock held longer comes from a session without that limit).  The stopped worker,
when it goes on, finds its connection closed and tries its whole transaction again, as after
a lost connection.

Connection loss.  A transaction interrupted by a lost connection (a server restart, a network
failure) is rolled back by the server; :class:`~mfbo.storage.base.StorageUnavailable` tells
the caller, which tries the whole transaction again (the optimizer does, for up to
``retry_timeout`` seconds).  If the connection is lost while committing, the storage looks up
whether the commit happened (each transaction marks its events with a random token) before
saying either.  Reads are retried the same way.

Heartbeats are written with the server's clock and their ages computed by the server, so the
clocks of the workers' machines do not matter.  The rows no longer needed are deleted by the
beats (see :func:`~mfbo.storage.base.stale_owners`).
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import json
import math
import os
import re
import threading
import time
import uuid

from .base import (DEFAULT_GRACE_PERIOD, DEFAULT_HEARTBEAT_INTERVAL, PendingOwners, Storage,
                   StorageLocked, StorageUnavailable, check_heartbeat, check_same_space,
                   retrying, stale_owners, to_json)

__all__ = ["SQLAlchemyStorage", "SCHEMA_VERSION", "normalise_url", "DEFAULT_RETRY_TIMEOUT",
           "DEFAULT_IDLE_IN_TRANSACTION_TIMEOUT", "DEFAULT_LOCK_TIMEOUT"]

#: the layout of the tables this version writes (recorded in ``mfbo_version``)
SCHEMA_VERSION = 1
#: seconds a transaction or a read is tried again while the database cannot be reached
DEFAULT_RETRY_TIMEOUT = 300.0
#: seconds a session may sit idle inside a transaction before the server ends it.  Proposals
#: are computed inside the transaction, between two statements, one trial at a time (each is
#: recorded as it is proposed, also in a batch), so a pause lasts one proposal.  A minute
#: leaves a wide margin over that (a loaded machine, a larger study, a model compiled on first
#: use) and still frees a stopped worker's study within one default grace period
DEFAULT_IDLE_IN_TRANSACTION_TIMEOUT = 60.0
#: seconds a statement waits for a lock before the transaction is tried again: twice the idle
#: limit, since a stopped holder is ended by the server within that limit and a live one holds
#: the lock for a proposal only, so a longer wait comes from a session without that limit
DEFAULT_LOCK_TIMEOUT = 120.0
# a constant advisory-lock key for creating the tables (two processes creating them at once
# would otherwise collide in PostgreSQL's catalogue)
_SCHEMA_LOCK = 0x6D66626F  # "mfbo"

_TABLES = (
    "CREATE TABLE IF NOT EXISTS mfbo_version (version INTEGER NOT NULL)",
    "CREATE TABLE IF NOT EXISTS mfbo_studies (id SERIAL PRIMARY KEY, name TEXT NOT NULL UNIQUE, "
    "space TEXT NOT NULL, config TEXT NOT NULL, created DOUBLE PRECISION NOT NULL)",
    "CREATE TABLE IF NOT EXISTS mfbo_events (study_id INTEGER NOT NULL REFERENCES "
    "mfbo_studies (id), seq BIGINT NOT NULL, kind TEXT NOT NULL, payload TEXT NOT NULL, "
    "time DOUBLE PRECISION NOT NULL, txn TEXT NOT NULL, PRIMARY KEY (study_id, seq))",
    "CREATE TABLE IF NOT EXISTS mfbo_heartbeats (study_id INTEGER NOT NULL REFERENCES "
    "mfbo_studies (id), owner TEXT NOT NULL, time DOUBLE PRECISION NOT NULL, "
    "interval DOUBLE PRECISION NOT NULL, PRIMARY KEY (study_id, owner))",
)
_NOW = "extract(epoch from clock_timestamp())"
# SQLSTATEs: lock_not_available (lock_timeout passed), idle_in_transaction_session_timeout,
# insufficient_privilege
_LOCK_NOT_AVAILABLE = "55P03"
_IDLE_IN_TRANSACTION = "25P03"
_INSUFFICIENT_PRIVILEGE = "42501"
# A refused login is reported by libpq as text only, without its SQLSTATE: the server's
# (English) messages of the refusals that trying again cannot mend, told apart from a server
# that is down, starting or full, which is worth waiting for
_REFUSED_LOGINS = (
    ("database", re.compile(r'database "(?P<name>[^"]*)" does not exist')),  # 3D000
    ("role", re.compile(r'role "(?P<name>[^"]*)" does not exist')),  # 28000
    ("password", re.compile(r'password authentication failed for user "(?P<name>[^"]*)"|'
                            r'no password supplied')),  # 28P01
    ("login", re.compile(r'role "(?P<name>[^"]*)" is not permitted to log in|'
                         r'no pg_hba\.conf entry for|authentication failed for user '
                         r'"(?P<user>[^"]*)"')),  # 28000
    ("connect", re.compile(r'permission denied for database "(?P<name>[^"]*)"')),  # 42501
)


def _sqlstate(exc) -> str | None:
    """The SQLSTATE of a database error (psycopg 3 or 2), or None."""
    orig = getattr(exc, "orig", exc)
    return getattr(orig, "sqlstate", None) or getattr(orig, "pgcode", None)


def _seconds(value, name: str) -> float:
    """``value`` as a positive, finite number of seconds; a ``ValueError`` names ``name``."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) \
            or not 0 < value < math.inf:
        raise ValueError(f"{name} must be a positive number of seconds, got {value!r}.")
    return float(value)


def _milliseconds(seconds: float) -> str:
    return str(max(1, round(seconds * 1000)))


def normalise_url(url: str) -> str:
    """``url`` with a PostgreSQL driver that is installed: a bare ``postgresql://`` (or
    ``postgres://``) names psycopg 2 in SQLAlchemy; psycopg 3 (``mfbo[rdb]``) is used when
    psycopg 2 is missing.  Other databases are refused."""
    if not isinstance(url, str) or "://" not in url:
        raise ValueError(f"storage must be a database URL such as "
                         f"'postgresql://user@host/db', got {url!r}.")
    scheme, rest = url.split("://", 1)
    dialect = scheme.split("+", 1)[0]
    if dialect == "postgres":
        dialect = scheme = "postgresql"
    if dialect != "postgresql":
        raise ValueError(f"storage URL {url!r}: only PostgreSQL databases are supported "
                         f"(postgresql://...); a SQLite file is given as a path or "
                         f"'sqlite:///path'.")
    if scheme == "postgresql" and importlib.util.find_spec("psycopg2") is None \
            and importlib.util.find_spec("psycopg") is not None:
        scheme = "postgresql+psycopg"
    return f"{scheme}://{rest}"


def _lock_key(study: str) -> int:
    """A signed 64-bit advisory-lock key of a study name."""
    return int.from_bytes(hashlib.sha256(study.encode()).digest()[:8], "big", signed=True)


def _masked(url: str) -> str:
    try:
        from sqlalchemy.engine import make_url
        return make_url(url).render_as_string(hide_password=True)
    except Exception:  # noqa: BLE001 - only for messages
        return url


class SQLAlchemyStorage(Storage):
    """A study journal in a PostgreSQL database, for workers on several machines.

    Parameters
    ----------
    url : str
        A SQLAlchemy URL of a PostgreSQL database, e.g. ``"postgresql://user@host/db"`` or
        ``"postgresql+psycopg://user:password@host:5432/db"``.  The tables are created on first
        use.  Needs ``pip install "mfbo[rdb]"`` (SQLAlchemy and psycopg).
    heartbeat_interval : float, default=10
        Seconds between the heartbeats each open optimizer writes from a background thread.
    grace_period : float, default=60
        Seconds without a heartbeat after which an owner's pending trials are asked again, by
        any worker on any host.
    retry_timeout : float, default=300
        Seconds a transaction or a read is tried again while the database cannot be reached
        (a restart); after that :class:`~mfbo.storage.base.StorageUnavailable` is raised.
    read_only : bool, default=False
        Open every transaction read-only (the server refuses writes) and write no heartbeats:
        to inspect a study.
    idle_in_transaction_timeout : float, default=60
        Seconds a session may sit idle inside a transaction (its process computing a
        proposal, or stopped, paused, cut off by the network) before the server ends it,
        rolling the transaction back and freeing the study's lock for the other workers.  A
        proposal takes about a tenth of a second between two statements; raise it if
        proposals take far longer.  The worker whose session was ended tries its transaction
        again.
    create : bool, default=True
        Create mfbo's tables where the database has none.  ``False`` opens an existing study
        storage only (to inspect a study): a database without them raises ``ValueError``.
    lock_timeout : float, default=120
        Seconds a transaction waits for its study's lock (or any other) before
        :class:`~mfbo.storage.base.StorageLocked` ends it, to be tried again for up to
        ``retry_timeout`` seconds: a holder of this storage is ended by the server after its
        ``idle_in_transaction_timeout``, so only a session without that limit holds a lock
        for longer.
    engine_options : dict, optional
        Further keyword arguments of :func:`sqlalchemy.create_engine`.

    Attributes
    ----------
    lock_waits : int
        How many transactions of this process found their study locked by another and waited.
    """

    def __init__(self, url: str, heartbeat_interval: float = DEFAULT_HEARTBEAT_INTERVAL,
                 grace_period: float = DEFAULT_GRACE_PERIOD,
                 retry_timeout: float = DEFAULT_RETRY_TIMEOUT, read_only: bool = False,
                 idle_in_transaction_timeout: float = DEFAULT_IDLE_IN_TRANSACTION_TIMEOUT,
                 lock_timeout: float = DEFAULT_LOCK_TIMEOUT, create: bool = True,
                 engine_options: dict | None = None):
        self.url = normalise_url(url)
        self.heartbeat_interval, self.grace_period = check_heartbeat(heartbeat_interval,
                                                                     grace_period)
        if isinstance(retry_timeout, bool) or not isinstance(retry_timeout, (int, float)) \
                or not retry_timeout >= 0:
            raise ValueError(f"retry_timeout must be a non-negative number of seconds, got "
                             f"{retry_timeout!r}.")
        self.retry_timeout = float(retry_timeout)
        self.read_only = bool(read_only)
        self.idle_in_transaction_timeout = _seconds(idle_in_transaction_timeout,
                                                    "idle_in_transaction_timeout")
        self.lock_timeout = _seconds(lock_timeout, "lock_timeout")
        self.create = bool(create)
        self.engine_options = dict(engine_options or {})
        self.lock_waits = 0
        self._lock = threading.RLock()
        self._engine_lock = threading.Lock()
        self._engine = None
        self._pid = None
        self._ids: dict[str, int] = {}
        self._conn = None  # the connection of the transaction in progress
        self._depth = 0
        self._pending: dict[str, PendingOwners] = {}  # study -> owners of pending trials
        self._prune_lock = threading.Lock()
        self._retrying(self._prepare)

    @property
    def path(self) -> str:
        """The database URL, password hidden (for messages)."""
        return _masked(self.url)

    def __repr__(self):
        return f"SQLAlchemyStorage({self.path!r})"

    def __getstate__(self):
        return {"url": self.url, "heartbeat_interval": self.heartbeat_interval,
                "grace_period": self.grace_period, "retry_timeout": self.retry_timeout,
                "read_only": self.read_only,
                "idle_in_transaction_timeout": self.idle_in_transaction_timeout,
                "lock_timeout": self.lock_timeout, "create": self.create,
                "engine_options": self.engine_options}

    def __setstate__(self, state):
        self.__init__(**state)

    # -- connections ---------------------------------------------------------------------------
    def _get_engine(self):
        with self._engine_lock:
            if self._engine is None or self._pid != os.getpid():
                self._engine = self._create_engine()
                self._pid = os.getpid()
            return self._engine

    def _create_engine(self):
        try:
            import sqlalchemy
        except ImportError:
            raise ImportError('a database storage needs SQLAlchemy and psycopg: pip install '
                              '"mfbo[rdb]"') from None
        # no ping before each use of a pooled connection (a round trip per transaction): a
        # connection that went stale fails its first statement, which is tried again
        options = dict(self.engine_options)
        if self.read_only:
            args = dict(options.pop("connect_args", {}))
            args["options"] = (args.get("options", "") +
                               " -c default_transaction_read_only=on").strip()
            options["connect_args"] = args
        try:
            # a pool made before a fork belongs to the parent: the child opens its own
            engine = sqlalchemy.create_engine(self.url, **options)
        except ImportError as exc:
            raise ImportError(f'the database driver for {self.path!r} is missing ({exc}): pip '
                              f'install "mfbo[rdb]"') from None
        sqlalchemy.event.listen(engine, "connect", self._limit_session)
        return engine

    def _limit_session(self, dbapi_connection, _record) -> None:
        """Set the session limits of a new connection: its idle time inside a transaction and
        its waits for locks (one statement, once per connection of the pool)."""
        # set outside a transaction, so that the settings hold for the session
        autocommit = dbapi_connection.autocommit
        dbapi_connection.autocommit = True
        try:
            cursor = dbapi_connection.cursor()
            cursor.execute("SELECT set_config('idle_in_transaction_session_timeout', %s, false), "
                           "set_config('lock_timeout', %s, false)",
                           (_milliseconds(self.idle_in_transaction_timeout),
                            _milliseconds(self.lock_timeout)))
            cursor.close()
        finally:
            dbapi_connection.autocommit = autocommit

    def _unavailable(self, exc) -> bool:
        """Whether ``exc`` says the database could not be reached (worth trying again)."""
        from sqlalchemy import exc as sa_exc
        if self._refused(exc) is not None:
            return False
        if isinstance(exc, sa_exc.DBAPIError) and exc.connection_invalidated:
            return True
        return isinstance(exc, (sa_exc.OperationalError, sa_exc.InterfaceError)) and \
            not isinstance(exc, sa_exc.IntegrityError)

    def _refused(self, exc) -> Exception | None:
        """The error to raise in place of ``exc`` when the server refused the login or a
        privilege (a ``ValueError`` or ``PermissionError`` saying what to mend: trying again
        would not help), else None."""
        from sqlalchemy import exc as sa_exc
        from sqlalchemy.engine import make_url
        if not isinstance(exc, sa_exc.DBAPIError):
            return None
        said = str(exc.orig).strip()
        url = make_url(self.url)
        user = url.username or "(the default role)"
        if _sqlstate(exc) == _INSUFFICIENT_PRIVILEGE:
            said = said.splitlines()[0]
            if self.read_only:
                return PermissionError(
                    f"storage {self.path!r}: role {user!r} may not read the studies of this "
                    f"database ({said}); grant it SELECT on the mfbo_ tables.")
            return PermissionError(
                f"storage {self.path!r}: role {user!r} cannot write the study ({said}); open "
                f"the storage with read_only=True to inspect it, or grant the role SELECT, "
                f"INSERT, UPDATE and DELETE on the mfbo_ tables and USAGE on their sequence "
                f"(and CREATE on the schema, for a database without them).")
        if not isinstance(exc, sa_exc.OperationalError):
            return None
        said = said.replace("connection failed: ", "")
        for kind, pattern in _REFUSED_LOGINS:
            found = pattern.search(said)
            if found is None:
                continue
            name = found.groupdict().get("name") or user
            if kind == "database":
                return ValueError(f"storage {self.path!r}: database {name!r} does not exist on "
                                  f"that server; create it (CREATE DATABASE {name}) or correct "
                                  f"the URL.")
            if kind == "role":
                return ValueError(f"storage {self.path!r}: role {name!r} does not exist on that "
                                  f"server; create it (CREATE ROLE {name} LOGIN PASSWORD ...) "
                                  f"or correct the user name of the URL.")
            if kind == "password":
                return ValueError(f"storage {self.path!r}: the server refused the password of "
                                  f"role {user!r} (wrong, or none given); correct it in the URL "
                                  f"or in the password file (~/.pgpass).")
            if kind == "connect":
                return PermissionError(f"storage {self.path!r}: role {user!r} may not connect "
                                       f"to database {name!r}; grant it CONNECT on it.")
            return ValueError(f"storage {self.path!r}: the server does not let role {user!r} "
                              f"log in ({said.splitlines()[-1].strip()}).")
        return None

    def _translated(self, exc) -> Exception | None:
        """What to raise in place of the database error ``exc``: a clear error for a refused
        login or privilege, :class:`StorageUnavailable` for a database that cannot be reached,
        None to raise ``exc`` itself."""
        refused = self._refused(exc)
        if refused is not None:
            return refused
        return self._unreachable(exc) if self._unavailable(exc) else None

    def _unreachable(self, exc) -> StorageUnavailable:
        if _sqlstate(exc) == _IDLE_IN_TRANSACTION:
            return StorageUnavailable(
                f"storage {self.path!r}: the server ended this transaction, which sat idle "
                f"for longer than idle_in_transaction_timeout="
                f"{self.idle_in_transaction_timeout:g} s (the process was stopped or paused, or "
                f"computed that long between two statements); nothing of it was recorded.  If "
                f"proposals take that long, open the storage with a longer "
                f"idle_in_transaction_timeout.")
        return StorageUnavailable(f"storage {self.path!r} cannot be reached: {exc}")

    def _once(self, fn):
        """``fn(connection)`` in a transaction of its own; a lost connection raises
        :class:`StorageUnavailable`."""
        try:
            with self._get_engine().begin() as conn:
                return fn(conn)
        except Exception as exc:
            translated = self._translated(exc)
            if translated is not None:
                raise translated from exc
            raise

    def _retrying(self, fn):
        """:meth:`_once`, tried again while the database cannot be reached, for up to
        ``retry_timeout`` seconds."""
        return retrying(lambda: self._once(fn), self.retry_timeout)

    def _prepare(self, conn) -> None:
        from sqlalchemy import text
        exists = conn.execute(text("SELECT to_regclass('mfbo_version') IS NOT NULL")).scalar()
        if not exists:
            if self.read_only or not self.create:
                raise ValueError(f"storage {self.path!r} holds no mfbo study (no mfbo tables in "
                                 f"that database).")
            conn.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": _SCHEMA_LOCK})
            for statement in _TABLES:
                conn.execute(text(statement))
            if conn.execute(text("SELECT count(*) FROM mfbo_version")).scalar() == 0:
                conn.execute(text("INSERT INTO mfbo_version VALUES (:v)"), {"v": SCHEMA_VERSION})
        version = conn.execute(text("SELECT max(version) FROM mfbo_version")).scalar()
        if version is None or version > SCHEMA_VERSION:
            raise ValueError(f"storage {self.path!r} was written by a newer mfbo (schema version "
                             f"{version}, this one reads up to {SCHEMA_VERSION}); upgrade mfbo "
                             f"to open it.")

    def _study_id(self, conn, name: str) -> int | None:
        if name not in self._ids:
            from sqlalchemy import text
            sid = conn.execute(text("SELECT id FROM mfbo_studies WHERE name = :n"),
                               {"n": name}).scalar()
            if sid is None:
                return None
            self._ids[name] = int(sid)
        return self._ids[name]

    def _known_id(self, conn, name: str) -> int:
        sid = self._study_id(conn, name)
        if sid is None:
            raise ValueError(f"no study named {name!r} in storage {self.path!r}.")
        return sid

    def _writable(self) -> None:
        if self.read_only:
            raise PermissionError(f"storage {self.path!r} is read-only: its study can be read "
                                  f"but not changed.")

    # -- studies -------------------------------------------------------------------------------
    def open_study(self, name, space, config):
        from sqlalchemy import exc as sa_exc, text

        def open_or_create(conn):
            row = conn.execute(text("SELECT space, config FROM mfbo_studies WHERE name = :n"),
                               {"n": name}).fetchone()
            if row is not None:
                stored_space, stored_config = (json.loads(x) for x in row)
                check_same_space(name, stored_space, space)
                return stored_config
            self._writable()
            conn.execute(text("INSERT INTO mfbo_studies (name, space, config, created) VALUES "
                              "(:n, :s, :c, " + _NOW + ")"),
                         {"n": name, "s": to_json(space), "c": to_json(config)})
            return json.loads(to_json(config))

        try:
            return self._retrying(open_or_create)
        except sa_exc.IntegrityError:  # another worker created it at the same moment
            return self._retrying(open_or_create)

    def studies(self):
        from sqlalchemy import text
        return self._retrying(lambda conn: [r[0] for r in conn.execute(
            text("SELECT name FROM mfbo_studies ORDER BY id"))])

    def stored_study(self, name):
        from sqlalchemy import text
        row = self._retrying(lambda conn: conn.execute(
            text("SELECT space, config FROM mfbo_studies WHERE name = :n"),
            {"n": name}).fetchone())
        return None if row is None else tuple(json.loads(x) for x in row)

    # -- events --------------------------------------------------------------------------------
    @contextlib.contextmanager
    def transaction(self, study=None):
        """A database transaction holding ``study``'s advisory lock from its start: reads
        inside see every event committed before; appends are committed when it ends.  A lost
        connection raises :class:`StorageUnavailable` (nothing recorded)."""
        with self._lock:
            if self._depth > 0:
                if study is not None:
                    self._lock_study(study)
                self._depth += 1
                try:
                    yield
                finally:
                    self._depth -= 1
                return
            try:
                conn = self._get_engine().connect()
                trans = conn.begin()
            except Exception as exc:
                translated = self._translated(exc)
                if translated is not None:
                    raise translated from exc
                raise
            self._conn, self._locked, self._written = conn, set(), None
            self._token = uuid.uuid4().hex
            self._depth = 1
            try:
                try:
                    if study is not None:
                        self._lock_study(study)
                    yield
                except BaseException as exc:
                    with contextlib.suppress(Exception):
                        trans.rollback()
                    translated = self._translated(exc) if isinstance(exc, Exception) else None
                    if translated is not None:
                        raise translated from exc
                    raise
                try:
                    trans.commit()
                except Exception as exc:
                    if not self._unavailable(exc):
                        refused = self._refused(exc)
                        if refused is not None:
                            raise refused from exc
                        raise
                    if not self._committed():
                        raise self._unreachable(exc) from exc
            finally:
                self._depth = 0
                self._conn = None
                with contextlib.suppress(Exception):
                    conn.close()

    def _lock_study(self, study: str) -> None:
        from sqlalchemy import text
        if study in self._locked:
            return
        key = _lock_key(study)
        if not self._conn.execute(text("SELECT pg_try_advisory_xact_lock(:k)"),
                                  {"k": key}).scalar():
            self.lock_waits += 1
            try:
                self._conn.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": key})
            except Exception as exc:
                if _sqlstate(exc) != _LOCK_NOT_AVAILABLE:
                    raise
                raise StorageLocked(
                    f"study {study!r} in storage {self.path!r} stayed locked by another "
                    f"session for longer than lock_timeout={self.lock_timeout:g} s; the "
                    f"transaction is tried again for up to retry_timeout={self.retry_timeout:g} "
                    f"s.  A worker of this storage stopped inside its transaction is ended by "
                    f"the server after its idle_in_transaction_timeout, so the holder is a "
                    f"session without that limit (see pg_locks, locktype 'advisory', and "
                    f"pg_stat_activity).") from exc
        self._locked.add(study)

    def _committed(self) -> bool:
        """Whether the transaction whose commit lost its connection was committed (it was
        if its first event is there)."""
        if self._written is None:
            return False  # it wrote no event: nothing is lost by doing it again
        from sqlalchemy import text
        sid, seq = self._written
        return bool(self._retrying(lambda conn: conn.execute(
            text("SELECT count(*) FROM mfbo_events WHERE study_id = :s AND seq = :q AND "
                 "txn = :t"), {"s": sid, "q": seq, "t": self._token}).scalar()))

    def append(self, study, kind, payload):
        from sqlalchemy import text
        self._writable()
        with self.transaction(study):
            conn = self._conn
            sid = self._known_id(conn, study)
            seq = conn.execute(text(
                "INSERT INTO mfbo_events (study_id, seq, kind, payload, time, txn) SELECT :s, "
                "COALESCE(MAX(seq), 0) + 1, :k, :p, :t, :x FROM mfbo_events WHERE study_id = :s "
                "RETURNING seq"), {"s": sid, "k": kind, "p": to_json(payload),
                                   "t": time.time(), "x": self._token}).scalar()
            if self._written is None:
                self._written = (sid, int(seq))
            return int(seq)

    def read(self, study, after, limit=None):
        from sqlalchemy import text

        def rows(conn):
            sid = self._study_id(conn, study)
            if sid is None:
                return []
            return conn.execute(text("SELECT seq, kind, payload FROM mfbo_events WHERE "
                                     "study_id = :s AND seq > :a ORDER BY seq LIMIT :n"),
                                {"s": sid, "a": int(after),
                                 "n": None if limit is None else int(limit)}).fetchall()

        with self._lock:
            if self._depth > 0:
                found = rows(self._conn)
            else:
                found = self._retrying(rows)
        return [(int(i), k, json.loads(p)) for i, k, p in found]

    # -- heartbeats ----------------------------------------------------------------------------
    def beat(self, study, owner, alive=True):
        """Record the beat (nothing on a read-only storage) and, at most once a grace period,
        delete the rows no longer needed (see :func:`~mfbo.storage.base.stale_owners`)."""
        if self.read_only:
            return
        from sqlalchemy import text

        def write(conn):
            sid = self._known_id(conn, study)
            conn.execute(text(
                "INSERT INTO mfbo_heartbeats (study_id, owner, time, interval) VALUES (:s, :o, " +
                (_NOW if alive else "'-Infinity'::float8") + ", :i) ON CONFLICT (study_id, "
                "owner) DO UPDATE SET time = EXCLUDED.time, interval = EXCLUDED.interval"),
                {"s": sid, "o": owner, "i": self.heartbeat_interval})
            if self._prune_lock.acquire(blocking=False):  # another thread is pruning: later
                try:
                    if self._prune_due(study):
                        self._prune(conn, study, sid, owner)
                finally:
                    self._prune_lock.release()

        # its own connection, never the transaction in progress: a heartbeat must not wait
        # for a proposal, nor be rolled back with one; tried once (the next beat tries again)
        self._once(write)

    def _prune(self, conn, study: str, sid: int, owner: str) -> None:
        """Delete the heartbeat rows of ``study`` (but ``owner``'s) whose owners are stale and
        hold no pending trial, in the beat's transaction."""
        from sqlalchemy import exc as sa_exc, text
        rows = conn.execute(text("SELECT owner, " + _NOW + " - time, interval FROM "
                                 "mfbo_heartbeats WHERE study_id = :s AND owner <> :o"),
                            {"s": sid, "o": owner}).fetchall()
        stale = stale_owners([(o, float(age), float(i)) for o, age, i in rows], self.grace_period)
        if not stale:
            return
        # only with the study's lock, taken if it is free at once: then no transaction of the
        # study is under way and every event is there to read; a beat never waits for a
        # proposal, so a busy study is pruned at a later beat.  In a savepoint, so that a
        # failure (a role that may not delete) loses the pruning only, not the beat.
        savepoint = conn.begin_nested()
        try:
            if not conn.execute(text("SELECT pg_try_advisory_xact_lock(:k)"),
                                {"k": _lock_key(study)}).scalar():
                savepoint.commit()
                return
            pending = self._pending.setdefault(study, PendingOwners())
            events = conn.execute(text(
                "SELECT seq, kind, payload FROM mfbo_events WHERE study_id = :s AND seq > :a "
                "AND kind IN ('ask', 'claim', 'tell') ORDER BY seq"),
                {"s": sid, "a": pending.last}).fetchall()
            try:
                pending.update((int(i), k, json.loads(p)) for i, k, p in events)
            except Exception:  # noqa: BLE001 - any damage: left for the study's replay
                savepoint.commit()
                return  # a damaged journal: keep every row (the study's replay reports it)
            holders = pending.holders()
            for other in stale:
                if other not in holders:
                    conn.execute(text("DELETE FROM mfbo_heartbeats WHERE study_id = :s AND "
                                      "owner = :o"), {"s": sid, "o": other})
            savepoint.commit()
        except sa_exc.DBAPIError as exc:
            if exc.connection_invalidated:
                raise
            savepoint.rollback()

    def heartbeats(self, study):
        from sqlalchemy import text

        def ages(conn):
            sid = self._study_id(conn, study)
            if sid is None:
                return []
            return conn.execute(text("SELECT owner, " + _NOW + " - time, interval FROM "
                                     "mfbo_heartbeats WHERE study_id = :s"),
                                {"s": sid}).fetchall()

        with self._lock:
            found = ages(self._conn) if self._depth > 0 else self._retrying(ages)
        return {owner: (max(0.0, float(age)), float(interval)) for owner, age, interval in found}

    def close(self):
        # under the lock: a heartbeat thread may be using a connection
        with self._lock:
            if self._engine is not None and self._pid == os.getpid():
                self._engine.dispose()
            self._engine = None
