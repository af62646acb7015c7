"""How a trial handle in a worker process reaches the study: a :class:`ReportServer` thread in
the process that runs the study answers the :class:`ReportClient` of each worker's handle, over
a local socket (``multiprocessing.connection``, authenticated with a random key).  Each request
is a call of :meth:`mfbo.Optimizer.report` or :meth:`mfbo.Optimizer.should_prune` on the
study's optimizer, which serialises them with its other calls."""

from __future__ import annotations

import os
import threading
from multiprocessing.connection import Client, Listener

__all__ = ["ReportServer", "ReportClient"]

#: the optimizer's methods a client may call
CALLS = ("report", "should_prune")


class ReportServer:
    """Answers the trial handles of worker processes on this host for ``optimizer``, from a
    daemon thread (one more per connected worker) until :meth:`close`."""

    def __init__(self, optimizer):
        self._optimizer = optimizer
        self._authkey = os.urandom(32)
        self._listener = Listener(authkey=self._authkey)
        self._closed = False
        threading.Thread(target=self._serve, name="mfbo-report-server", daemon=True).start()

    def client(self) -> "ReportClient":
        """What a handle in a worker process calls (picklable)."""
        return ReportClient(self._listener.address, self._authkey)

    def _serve(self) -> None:
        while True:
            try:
                conn = self._listener.accept()
            except (OSError, EOFError):  # closed, or a peer that failed to authenticate
                if self._closed:
                    return
                continue
            if self._closed:
                conn.close()
                return
            threading.Thread(target=self._answer, args=(conn,), daemon=True).start()

    def _answer(self, conn) -> None:
        with conn:
            while True:
                try:
                    name, args = conn.recv()
                except (EOFError, OSError):
                    return
                try:
                    if name not in CALLS:
                        raise ValueError(f"unknown request {name!r}")
                    reply = ("ok", getattr(self._optimizer, name)(*args))
                except Exception as exc:  # raised again in the worker, as the caller's error
                    reply = ("error", exc)
                try:
                    conn.send(reply)
                except Exception as exc:  # noqa: BLE001 - an exception that cannot be pickled
                    conn.send(("error", RuntimeError(f"{type(exc).__name__}: {exc}")))

    def close(self) -> None:
        """Stop accepting workers (those connected are answered until they hang up)."""
        if self._closed:
            return
        self._closed = True
        try:  # wake the thread blocked in accept
            Client(self._listener.address, authkey=self._authkey).close()
        except OSError:
            pass
        self._listener.close()


class ReportClient:
    """The worker's side of a :class:`ReportServer`: :meth:`report` and :meth:`should_prune`
    as the optimizer's, called in the study's process.  Connects on first use; pickles
    without its connection."""

    def __init__(self, address, authkey: bytes):
        self._address = address
        self._authkey = bytes(authkey)
        self._conn = None

    def __getstate__(self):
        return {"_address": self._address, "_authkey": self._authkey, "_conn": None}

    def _call(self, name: str, *args):
        if self._conn is None:
            try:
                self._conn = Client(self._address, authkey=self._authkey)
            except OSError as exc:
                raise RuntimeError(f"the trial handle cannot reach the process running the "
                                   f"study ({exc}); report and should_prune work in worker "
                                   f"processes of the same host only.") from None
        self._conn.send((name, args))
        status, value = self._conn.recv()
        if status == "error":
            raise value
        return value

    def report(self, trial_id: int, step, value) -> None:
        self._call("report", trial_id, step, value)

    def should_prune(self, trial_id: int) -> bool:
        return self._call("should_prune", trial_id)

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None
