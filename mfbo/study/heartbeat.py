"""The heartbeat of an open optimizer: a daemon thread that tells the storage, every few
seconds, that the trials this owner asked are still being evaluated.

It writes on its own schedule, not only on ask and tell, because one evaluation may take far
longer than the grace period.  A failed write (a database restarting) is tried again at the
next beat; the grace period is several beats long so that one missed beat loses nothing.
"""

from __future__ import annotations

import threading

__all__ = ["Heartbeat"]


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
