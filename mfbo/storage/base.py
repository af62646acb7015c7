"""The interface of a study journal, and the JSON form of its events.

A journal is an append-only sequence of events per study, each a JSON document (never a
pickle); the optimizer's state is a replay of them.  A backend also keeps one heartbeat per
open optimizer (its owner token and when it last showed it was alive), kept apart from the
events: heartbeats are frequent and say nothing about the trials.
"""

from __future__ import annotations

import contextlib
import json
import math
import time
from typing import Any, Iterator

import numpy as np

__all__ = ["Storage", "StorageUnavailable", "read_in_pages", "StorageLocked", "retrying", "to_json",
           "check_same_space", "check_heartbeat", "DEFAULT_HEARTBEAT_INTERVAL",
           "DEFAULT_GRACE_PERIOD", "HEARTBEAT_KEEP_GRACES", "PendingOwners", "stale_owners"]

#: seconds between two heartbeats of an open optimizer
DEFAULT_HEARTBEAT_INTERVAL = 10.0
#: seconds without a heartbeat after which an owner's pending trials are asked again: six
#: missed heartbeats, so that a busy machine or a slow database does not lose a live worker's
#: trial, while a dead worker's is handed out again within about a minute
DEFAULT_GRACE_PERIOD = 60.0
#: a heartbeat row whose owner holds no pending trial is deleted once the owner has closed, or
#: has not beaten for this many grace periods (see :func:`stale_owners`)
HEARTBEAT_KEEP_GRACES = 10

# Pruning the heartbeats.  Every optimizer opened on a durable storage writes a row, so rows
# would pile up with every run; a backend deletes some when it writes a beat (at most once a
# grace period per study and handle; PostgreSQL in a savepoint of the beat's transaction,
# SQLite in a transaction of its own right after it).  A row is needed only to judge its
# owner's pending trials, but its absence does not mean "dead": an owner of another host
# without a row is taken to be alive (as in studies written before heartbeats), so deleting
# the row of a silent remote owner that still holds a pending trial would keep that trial
# from ever being asked again.  Hence a row is deleted only when both hold:
#   * its owner holds no pending trial of the study (asked none, told them, or others claimed
#     them), read from the journal's ask, claim and tell events (incrementally, by
#     :class:`PendingOwners`, and under the study's lock, so no event is being written);
#   * its owner closed, or its last beat is older than HEARTBEAT_KEEP_GRACES times the longer
#     of the pruner's grace period and the owner's own interval: every reader judges it dead
#     already (their limit is the longer of their grace period and 3 intervals), and a worker
#     that is merely stopped has had ten grace periods to go on.
# The beating owner's own row is never deleted.  A stopped owner whose row went and that goes
# on writes its row again at its next beat; what is left unguarded is that owner asking a trial
# and its host dying in the moment before that beat.


class StorageUnavailable(ConnectionError):
    """The storage could not be reached (a database server restarting, a dropped connection).
    Nothing of the transaction in progress was recorded; it may be tried again."""


class StorageLocked(StorageUnavailable, TimeoutError):
    """A study's lock was held by another process for longer than the storage waits (that
    process is probably stopped or paused inside a transaction).  Nothing of the transaction
    in progress was recorded; it may be tried again."""


def retrying(fn, timeout: float):
    """``fn()``, called again while it raises :class:`StorageUnavailable`, for up to
    ``timeout`` seconds after the first failure (waits doubling from 0.05 s to 2 s); then the
    last error is raised."""
    # the time counts from the first failure, not from the first call: a process that was
    # stopped or paused inside ``fn`` for longer than ``timeout`` still tries again once it
    # goes on (its transaction was rolled back meanwhile)
    deadline = None
    wait = 0.05
    while True:
        try:
            return fn()
        except StorageUnavailable:
            now = time.monotonic()
            if deadline is None:
                deadline = now + timeout
            if now >= deadline:
                raise
        time.sleep(wait)
        wait = min(2.0, wait * 2)


#: events decoded at a time by :func:`read_in_pages`
PAGE = 2000


def read_in_pages(storage: "Storage", study: str, after: int = 0, page: int | None = None):
    """An iterator over the events of ``study`` after id ``after``, as :meth:`Storage.read`
    gives them, read ``page`` (default :data:`PAGE`) at a time: each page starts after the
    last id of the one before, so none is skipped or read twice, and a long journal is never
    decoded whole at once."""
    page = PAGE if page is None else int(page)
    while True:
        rows = storage.read(study, after, limit=page)
        yield from rows
        if len(rows) < page:
            return
        after = rows[-1][0]


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


def _dimension_text(spec) -> str:
    """A dimension's JSON form as the constructor that makes it (``Real(0.0, 1.0)``), or as
    JSON where it is not one this version knows."""
    try:
        from ..space import Space
        (dimension,) = Space.from_json({"d": spec}).dimensions.values()
        return repr(dimension)
    except Exception:  # noqa: BLE001 - only for a message
        return to_json(spec)


def _names(kind: str, names: list) -> str:
    return f"{kind} dimension{'s' if len(names) > 1 else ''} {names}"


def check_same_space(name: str, stored, space) -> None:
    """Refuse ``space`` (JSON form) for study ``name`` unless it is the ``stored`` one, the
    same dimensions in the same order (the journal's unit points are in that order); the
    ``ValueError`` names each difference."""
    stored, given = json.loads(to_json(stored)), json.loads(to_json(space))
    if stored == given and list(stored) == list(given):
        return
    missing = [n for n in stored if n not in given]
    extra = [n for n in given if n not in stored]
    differences = [_names("missing", missing)] if missing else []
    if extra:
        differences.append(_names("extra", extra))
    differences += [f"dimension {n!r}: stored {_dimension_text(stored[n])}, given "
                    f"{_dimension_text(given[n])}" for n in stored
                    if n in given and stored[n] != given[n]]
    order = [n for n in stored if n in given], [n for n in given if n in stored]
    if order[0] != order[1]:
        differences.append(f"{'same' if not differences else 'common'} dimensions in another "
                           f"order: stored {order[0]}, given {order[1]}")
    raise ValueError(f"study {name!r} already exists in this storage with a different space: "
                     f"{'; '.join(differences)}.  Give the space it was created with "
                     f"(Study.open reads it from the storage), or use another study_name or "
                     f"storage.")


class PendingOwners:
    """The owner of each pending trial of one study, kept up to date from the study's
    ``ask``, ``claim`` and ``tell`` events, read incrementally (``last``: the id of the latest
    event read)."""

    KINDS = ("ask", "claim", "tell")

    def __init__(self):
        self.last = 0
        self._owner: dict[int, str | None] = {}  # pending trial id -> its owner

    def update(self, events) -> None:
        """Take in ``(id, kind, payload)`` events newer than ``last``, in order; a malformed
        one raises (``KeyError``/``TypeError``/``ValueError``), after the ones before it."""
        for eid, kind, payload in events:
            if not isinstance(payload, dict):
                raise ValueError(f"event {eid} is not a JSON object")
            if kind in ("ask", "claim"):
                self._owner[int(payload["id"])] = payload.get("owner")
            elif kind == "tell":
                self._owner.pop(int(payload["id"]), None)
            self.last = eid

    def holders(self) -> set:
        """The owners that hold a pending trial."""
        return set(self._owner.values())


def stale_owners(rows, grace: float) -> list[str]:
    """The owners among ``rows`` (``(owner, age, interval)``; age ``inf``: it closed) that
    closed or whose last beat is older than :data:`HEARTBEAT_KEEP_GRACES` times the longer of
    ``grace`` and their own interval: those whose rows may be deleted if they hold no pending
    trial."""
    return [owner for owner, age, interval in rows
            if age > HEARTBEAT_KEEP_GRACES * max(grace, interval)]


def check_heartbeat(interval, grace) -> tuple[float, float]:
    """``(heartbeat_interval, grace_period)`` as floats, checked: positive, finite, and a
    grace period longer than the interval (else a live owner would look dead between two
    beats)."""
    for name, value in (("heartbeat_interval", interval), ("grace_period", grace)):
        if isinstance(value, bool) or not isinstance(value, (int, float)) \
                or not math.isfinite(value) or value <= 0:
            raise ValueError(f"{name} must be a positive number of seconds, got {value!r}.")
    if grace <= interval:
        raise ValueError(f"grace_period ({grace}) must be longer than heartbeat_interval "
                         f"({interval}).")
    return float(interval), float(grace)


class Storage:
    """Interface of a study journal.

    Attributes
    ----------
    heartbeat_interval : float or None
        Seconds between the heartbeats an open optimizer writes (from a background thread);
        ``None``: this storage keeps no heartbeats (a study in one process's memory).
    grace_period : float
        Seconds without a heartbeat after which an owner's pending trials are asked again.
    retry_timeout : float
        How long a transaction that failed because the storage could not be reached is tried
        again before :class:`StorageUnavailable` reaches the caller.
    """

    heartbeat_interval: float | None = None
    grace_period: float = DEFAULT_GRACE_PERIOD
    retry_timeout: float = 0.0

    def open_study(self, name: str, space: dict, config: dict) -> dict:
        """Create the study or check that an existing one has the same space; returns the
        stored config (which wins for settings that must not change on resume)."""
        raise NotImplementedError

    @contextlib.contextmanager
    def transaction(self, study: str | None = None) -> Iterator[None]:
        """Exclusive section for ``study`` (None: the whole storage): reads inside see every
        committed event; appends are committed when it ends, or dropped if it raises."""
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

    def read(self, study: str, after: int, limit: int | None = None
             ) -> list[tuple[int, str, dict]]:
        """``(id, kind, payload)`` of the events of ``study`` with an id greater than ``after``,
        in the order they were committed (the first ``limit`` of them; None: all).  Ids grow
        with the commit order within a study, so a reader that has seen id ``n`` has seen every
        event of the study committed before it (none is skipped when transactions commit out
        of order)."""
        raise NotImplementedError

    def beat(self, study: str, owner: str, alive: bool = True) -> None:
        """Record that ``owner`` is alive now and beats every ``heartbeat_interval`` seconds
        (``alive=False``: it has closed and will tell nothing more)."""

    def heartbeats(self, study: str) -> dict[str, tuple[float, float]]:
        """``{owner: (age, interval)}`` of the owners of ``study`` that beat: seconds since the
        last beat (``inf`` for one that closed) and the interval it beats at."""
        return {}

    def _prune_due(self, study: str) -> bool:
        """Whether a beat for ``study`` is to prune its heartbeats: the first of this handle,
        then at most one a grace period (and marks it done)."""
        pruned = self.__dict__.setdefault("_pruned_at", {})
        now = time.monotonic()
        if study in pruned and now - pruned[study] < self.grace_period:
            return False
        pruned[study] = now
        return True

    def close(self) -> None:
        pass
