"""Where a study's journal lives: every ask and tell as an append-only sequence of events.

Backends with one small interface (:class:`Storage`; Optuna's storage idea, journal style):

* :class:`InMemoryStorage` for a study that lives in one process (the default);
* :class:`SQLiteStorage`: one file, durable, shared by the processes of one host;
* :class:`SQLAlchemyStorage`: a PostgreSQL database, shared by processes on many hosts
  (``pip install "mfbo[rdb]"``).

Every open optimizer of a durable storage writes a heartbeat every ``heartbeat_interval``
seconds (default 10) from a background thread; a pending trial whose owner has not beaten for
``grace_period`` seconds (default 60), or whose process on this host has ended, is asked again
by the next worker that asks, on any host.
"""

from __future__ import annotations

import os

from .base import (DEFAULT_GRACE_PERIOD, DEFAULT_HEARTBEAT_INTERVAL, Storage, StorageLocked,
                   StorageUnavailable, to_json)
from .memory import InMemoryStorage
from .sqlite import SQLiteStorage

__all__ = ["Storage", "StorageUnavailable", "StorageLocked", "InMemoryStorage", "SQLiteStorage",
           "SQLAlchemyStorage", "as_storage", "to_json", "DEFAULT_HEARTBEAT_INTERVAL",
           "DEFAULT_GRACE_PERIOD"]


def __getattr__(name):
    if name == "SQLAlchemyStorage":  # imported on first use: SQLAlchemy is optional
        from .sql import SQLAlchemyStorage
        return SQLAlchemyStorage
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def as_storage(storage, create: bool = True, **options) -> Storage:
    """The storage ``storage`` names.

    ``None`` → in memory; a path (``str``/``PathLike``, e.g. ``"study.db"``) or a
    ``sqlite:///path`` URL → :class:`SQLiteStorage`; a PostgreSQL URL
    (``postgresql://user@host/db``, any SQLAlchemy form of it) → :class:`SQLAlchemyStorage`;
    a :class:`Storage` is used as it is.  ``options`` (e.g. ``heartbeat_interval``,
    ``grace_period``) go to the constructor of the backend a path or URL names.

    ``create`` (default True): a path or URL whose file or tables are missing is created.
    ``create=False`` opens an existing study storage only, to inspect it: a missing file
    raises ``FileNotFoundError`` ("no study file ..."), a file or database without mfbo's
    tables ``ValueError``, and nothing is created; a :class:`Storage` or ``None`` is taken as
    it is."""
    if not isinstance(create, bool):
        raise TypeError(f"create must be True or False, got {create!r}.")
    if storage is None or isinstance(storage, Storage):
        if options:
            raise TypeError(f"storage options {sorted(options)} apply to a path or URL, not "
                            f"to {'None' if storage is None else type(storage).__name__}.")
        return InMemoryStorage() if storage is None else storage
    if isinstance(storage, (str, os.PathLike)):
        path = os.fspath(storage)
        if isinstance(path, bytes):
            path = os.fsdecode(path)
        options["create"] = create
        if path.startswith("sqlite:///"):
            return SQLiteStorage(path[len("sqlite:///"):], **options)
        scheme = path.split("://", 1)[0] if "://" in path else ""
        if scheme and scheme.replace("+", "").replace("-", "").replace(".", "").isalnum() \
                and not scheme.startswith("file"):
            from .sql import SQLAlchemyStorage
            return SQLAlchemyStorage(path, **options)
        return SQLiteStorage(path, **options)
    raise TypeError(f"storage must be None, a file path, a database URL or a Storage, got "
                    f"{type(storage).__name__}.")
