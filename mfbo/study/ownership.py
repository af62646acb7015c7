"""Who may still tell a pending trial: owner tokens, whether their process is alive, and the
heartbeat that keeps an open optimizer's trials its own.

Every optimizer (every open :class:`~mfbo.study.Study`) has an owner token
``host:pid:start:token``; a pending trial records the owner that asked it.  A pending trial
whose owner is gone is an orphan, asked again by the next process that needs a trial.  An
owner is gone when it was closed, when its process on this host has ended, or when its last
heartbeat (:class:`Heartbeat`) is older than the storage's grace period, on any host.

The host name is ``socket.gethostname()``, or the environment variable ``MFBO_HOST`` where
that is set (for machines whose host names are not unique, such as containers sharing one).

The heartbeat is a daemon thread that tells the storage, every few seconds, that the trials
this owner asked are still being evaluated.  It writes on its own schedule, not only on ask
and tell, because one evaluation may take far longer than the grace period.  A failed write
(a database restarting) is tried again at the next beat; the grace period is several beats
long so that one missed beat loses nothing.
"""

from __future__ import annotations

import os
import socket
import threading
import uuid

__all__ = ["Heartbeat", "new_owner", "release", "owner_alive", "owner_host"]

_LIVE_OWNERS: set[str] = set()
HOST = os.environ.get("MFBO_HOST") or socket.gethostname()


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _process_start(pid: int) -> str:
    """When process ``pid`` started (clock ticks since boot, from ``/proc``), or ``""`` where
    that is unknown.  With the pid it names one process: pids are reused, start times not."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            stat = fh.read()
        return stat[stat.rindex(b")") + 2:].split()[19].decode()
    except (OSError, ValueError, IndexError):
        return ""


def new_owner() -> str:
    """A fresh owner token of this process, alive until :func:`release`."""
    owner = f"{HOST}:{os.getpid()}:{_process_start(os.getpid())}:{uuid.uuid4().hex[:12]}"
    _LIVE_OWNERS.add(owner)
    return owner


def release(owner: str) -> None:
    """The owner will tell no more trials: its pending ones become orphans."""
    _LIVE_OWNERS.discard(owner)


def _parts(owner: str) -> tuple[str, str, str] | None:
    """``(host, pid, start)`` of an owner token, read from the right (a host name may hold
    colons: an IPv6 address, ``node:1``), or None for a token of no known form.  A token
    ``host:pid:token`` of a study written before start times were recorded has ``start``
    ``""``."""
    parts = owner.rsplit(":", 3)
    if len(parts) == 4 and parts[1].isdigit():
        return parts[0], parts[1], parts[2]
    parts = owner.rsplit(":", 2)
    if len(parts) == 3 and parts[1].isdigit():
        return parts[0], parts[1], ""
    return None


def owner_host(owner: str | None) -> str | None:
    """The host an owner token names (None for no owner)."""
    if not owner:
        return None
    parts = _parts(owner)
    return owner.split(":", 1)[0] if parts is None else parts[0]


def owner_alive(owner: str | None, age: float | None = None,
                grace_period: float | None = None) -> bool:
    """Whether the optimizer that asked a pending trial may still tell it.

    An owner is ``host:pid:start:token`` (``host:pid:token`` in older studies); ``age`` is the
    seconds since its last heartbeat (``inf``: it closed; None: it never beat, as in studies
    written before heartbeats).  In this process it is alive while that optimizer is open.
    Elsewhere it is dead once its heartbeat is older than ``grace_period``; on this host also
    as soon as its process has ended.  An owner on another host that never beat is assumed
    alive."""
    if not owner:
        return False
    parts = _parts(owner)
    if parts is None:
        return False
    host, pid, started = parts[0], int(parts[1]), parts[2]
    if host == HOST and pid == os.getpid():
        return owner in _LIVE_OWNERS
    if age is not None and grace_period is not None and age > grace_period:
        return False
    if host != HOST:
        return True
    if not _pid_alive(pid):
        return False
    return not started or _process_start(pid) in ("", started)

#: seconds :meth:`Heartbeat.stop` waits for a beat under way to finish
JOIN_TIMEOUT = 2.0


class Heartbeat:
    """Beats for ``owner`` in ``study`` of ``storage`` every ``storage.heartbeat_interval``
    seconds, from the first call of :meth:`start` until :meth:`stop`."""

    def __init__(self, storage, study: str, owner: str):
        self.storage, self.study, self.owner = storage, study, owner
        self.interval = storage.heartbeat_interval
        self._stopped = threading.Event()
        self._thread: threading.Thread | None = None
        self.failures = 0  # beats that could not be written

    def start(self) -> None:
        """Beat once now (so that the owner is known before it asks anything), then keep
        beating from a daemon thread; nothing for a storage opened read-only, which writes
        nothing."""
        if self._thread is not None or self.interval is None \
                or getattr(self.storage, "read_only", False):
            return
        self.storage.beat(self.study, self.owner)
        self._thread = threading.Thread(target=self._run, name=f"mfbo-heartbeat-{self.owner}",
                                        daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stopped.wait(self.interval):
            try:
                self.storage.beat(self.study, self.owner)
            except Exception:  # noqa: BLE001 - the next beat tries again
                self.failures += 1

    def stop(self, closed: bool = True) -> None:
        """Stop beating; with ``closed``, record that the owner tells nothing more, so that
        its pending trials are asked again at once rather than after the grace period."""
        thread = self._thread
        if thread is None:
            return
        self._stopped.set()
        self._thread = None
        if thread is not threading.current_thread():
            # a beat under way finishes first: it must neither overwrite the closed marker
            # written below nor use a connection the caller closes next.  Bounded, because the
            # beat may be waiting for a storage lock this thread holds (a finalizer run inside
            # a transaction); the marker is then at worst overwritten by one late beat
            thread.join(JOIN_TIMEOUT)
        if closed:
            try:
                self.storage.beat(self.study, self.owner, alive=False)
            except Exception:  # noqa: BLE001 - the grace period frees its trials anyway
                pass
